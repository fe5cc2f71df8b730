"""``kbsim serve --http`` through the official MCP client's Streamable HTTP transport.

Each server is ``python -m kbsim serve --http 127.0.0.1:0`` in its own process: the
OS picks a free port, which the server prints before taking requests. A blocking
portal gives the async ``ClientSession`` a synchronous face, as tests/test_serve.py
does for stdio; every wait is bounded, and every server is stopped with SIGINT (then
killed, if it has not stopped in time).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import drive_servers
import httpx2
import pytest
from anyio.from_thread import start_blocking_portal
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from kbsim.cli import main
from kbsim.serve.http import HttpAddress, parse_http_address, transport_security
from kbsim.serve.server import ServeConfigError
from kbsim.serve.shapes import output_schema
from kbsim.store.schema import tools_document
from kbsim.version import __version__

pytestmark = pytest.mark.xdist_group("serve-http")

REPO = Path(__file__).resolve().parents[1]
KB = "kb-1"
INITIALIZE = {
    "jsonrpc": "2.0", "id": 1, "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "test", "version": "1"}},
}
MCP_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


def http_server(errlog: Path, *args: str):
    """``kbsim serve --http`` in a bare environment, which must stop cleanly (exit 130) on SIGINT."""
    return drive_servers.http_server(errlog, *args, env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"},
                                     expect_clean_stop=True)


@contextmanager
def in_process_http(articles: int = 30, middleware=None) -> Iterator[tuple[str, object]]:
    """``kbsim serve --http`` in a thread of this process on a free port: the endpoint's URL and
    the session registry it reports closed sessions to. ``middleware`` is appended to the
    server's own (after kbsim's), to slow a handler down, say."""
    import functools
    import threading

    from kbsim.params import DayParams
    from kbsim.serve.http import run_http
    from kbsim.serve.server import serve

    stop, ready, seen = threading.Event(), threading.Event(), {}

    def transport(server, on_session_closed, **_):
        seen["sessions"] = on_session_closed.__self__
        if middleware is not None:
            server.middleware.append(middleware)

        def listening(endpoint: str) -> None:
            seen["url"] = endpoint
            ready.set()

        run_http(server, HttpAddress("127.0.0.1", 0), on_listening=listening, stop=stop,
                 on_session_closed=on_session_closed)

    day = DayParams.model_validate({"corpus": {"articles": articles}})
    thread = threading.Thread(target=functools.partial(serve, day, transport=transport), daemon=True)
    thread.start()
    try:
        assert ready.wait(60), "the server did not start"
        yield seen["url"], seen["sessions"]
    finally:
        stop.set()
        thread.join(30)


@contextmanager
def client_session(url: str) -> Iterator[tuple]:
    """An initialized SDK ``ClientSession`` over Streamable HTTP, with the portal that drives it."""
    with start_blocking_portal() as portal:
        with portal.wrap_async_context_manager(streamable_http_client(url)) as (read_stream, write_stream):
            with portal.wrap_async_context_manager(ClientSession(read_stream, write_stream)) as session:
                initialized = portal.call(session.initialize)
                yield portal, session, initialized


@pytest.fixture(scope="module")
def url(tmp_path_factory) -> Iterator[str]:
    """The endpoint of one server: the shipped sample help desk, seed 1, not live."""
    with http_server(tmp_path_factory.mktemp("serve-http") / "stderr.log") as endpoint:
        yield endpoint


def call(portal, session, name: str, arguments: dict) -> tuple[dict, bool]:
    """One tool call: ``(payload, is_error)``, after checking the text and structured content agree."""
    result = portal.call(session.call_tool, name, arguments)
    payload = json.loads(result.content[0].text)
    assert result.structured_content == payload
    return payload, result.is_error


def test_the_http_server_is_the_stdio_server_with_the_four_tools(url):
    assert re.fullmatch(r"http://127\.0\.0\.1:\d+/mcp", url)
    with client_session(url) as (portal, session, initialized):
        assert (initialized.server_info.name, initialized.server_info.version) == ("kbsim", __version__)
        assert "simulated knowledge base (kb-1" in initialized.instructions
        listed = [tool.model_dump(by_alias=True, exclude_none=True, mode="json")
                  for tool in portal.call(session.list_tools).tools]
        portal.call(session.send_ping)
    assert listed == [
        {**{key: tool[key] for key in ("name", "description", "inputSchema", "annotations")},
         "outputSchema": output_schema(tool["name"])}
        for tool in tools_document()["tools"]
    ]


def test_search_read_edit_conflict_and_poll_over_http(url):
    with client_session(url) as (portal, session, _):
        article = "art-000007"
        read, is_error = call(portal, session, "read_knowledge_article",
                              {"knowledge_base_id": KB, "article_id": article})
        assert not is_error and read["citation"]["article_id"] == article
        hits, _ = call(portal, session, "search_knowledge_base", {"knowledge_base_id": KB, "query": read["title"]})
        assert hits["results"][0]["article_id"] == article
        edit = {"knowledge_base_id": KB, "article_id": article, "content": "Rewritten over HTTP.",
                "expected_version": read["updated_at"], "idempotency_key": "http-1"}
        applied, is_error = call(portal, session, "edit_knowledge_article", edit)
        assert not is_error and applied["replayed"] is False
        stale, is_error = call(portal, session, "edit_knowledge_article", {**edit, "idempotency_key": "http-2"})
        assert is_error and stale["code"] == "version_conflict"
        refused, is_error = call(portal, session, "read_knowledge_article",
                                 {"knowledge_base_id": "kb-2", "article_id": article})
        assert is_error and refused["code"] == "not_found"  # not granted answers like missing
    # a second session sees the first one's edit: one store behind every session
    with client_session(url) as (portal, session, _):
        page, _ = call(portal, session, "poll_resource_events",
                       {"resource_type": "knowledge_base", "resource_id": KB, "after_sequence": 400})
        assert [(e["type"], e["article_id"]) for e in page["events"]] == [("article.updated", article)]


def test_foreign_hosts_and_origins_are_refused(url):
    """DNS-rebinding protection: a page's own name or origin never reaches the tools."""
    port = url.split(":")[2].split("/")[0]
    with httpx2.Client(timeout=10) as http:
        def post(**headers):
            return http.post(url, json=INITIALIZE, headers={**MCP_HEADERS, **headers})

        assert post().status_code == 200
        assert post(Origin=f"http://localhost:{port}").status_code == 200
        assert post(Origin="http://evil.example").status_code == 403
        assert post(Origin=f"http://localhost:{int(port) + 1}").status_code == 403
        assert post(Host=f"evil.example:{port}").status_code == 421
        assert post(Host=f"localhost:{port}").status_code == 200


def test_allow_origin_admits_one_more_origin(tmp_path):
    with http_server(tmp_path / "stderr.log", "--allow-origin", "http://localhost:5173") as endpoint:
        with httpx2.Client(timeout=10) as http:
            def status(origin: str) -> int:
                return http.post(endpoint, json=INITIALIZE, headers={**MCP_HEADERS, "Origin": origin}).status_code

            assert status("http://localhost:5173") == 200
            assert status("http://localhost:5174") == 403


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--http", "0.0.0.0:8000"], "0.0.0.0 is not a loopback address"),
        (["--http", "example.com:80"], "pass --allow-remote"),
        (["--http", "http://127.0.0.1:8000"], "expected [HOST:]PORT"),
        (["--http", "70000"], "port from 0 to 65535"),
        (["--http", "::1:8000"], "IPv6 address in brackets"),
        (["--allow-remote"], "--allow-remote needs --http"),
        (["--allow-origin", "http://localhost:1"], "--allow-origin needs --http"),
        (["--http", "0", "--allow-origin", "localhost:5173"], "expected an origin as a browser sends it"),
    ],
)
def test_bad_http_options_are_one_line_and_exit_2(capsys, args, message):
    assert main(["serve", *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("kbsim serve: ") and message in err and len(err.strip().splitlines()) == 1


def test_an_address_in_use_is_named(tmp_path, capsys):
    with http_server(tmp_path / "stderr.log") as endpoint:
        port = endpoint.split(":")[2].split("/")[0]
        assert main(["serve", "--http", f"127.0.0.1:{port}"]) == 2
    err = capsys.readouterr().err
    assert f"--http 127.0.0.1:{port}: " in err and "in use" in err


def test_addresses_parse_and_the_security_settings_name_this_server():
    assert parse_http_address("8000") == HttpAddress("127.0.0.1", 8000)
    assert parse_http_address("localhost:0") == HttpAddress("localhost", 0)
    assert parse_http_address("[::1]:9") == HttpAddress("::1", 9)
    assert parse_http_address("127.1.2.3:9").url() == "http://127.1.2.3:9/mcp"
    assert parse_http_address("[::1]:9").url(10) == "http://[::1]:10/mcp"
    assert parse_http_address("0.0.0.0:9", allow_remote=True) == HttpAddress("0.0.0.0", 9)
    with pytest.raises(ServeConfigError, match="--allow-remote"):
        parse_http_address("192.168.1.5:80")
    settings = transport_security(HttpAddress("0.0.0.0", 0), 8123, ["kb.example", "kb.example:9000"],
                                  ["https://agent.example"])
    assert settings.enable_dns_rebinding_protection
    assert settings.allowed_hosts == ["127.0.0.1:8123", "localhost:8123", "[::1]:8123", "0.0.0.0:8123",
                                      "kb.example:8123", "kb.example:9000"]
    assert settings.allowed_origins == ["http://127.0.0.1:8123", "http://localhost:8123", "http://[::1]:8123",
                                        "https://agent.example"]
