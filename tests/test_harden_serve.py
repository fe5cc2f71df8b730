"""``kbsim serve`` answers every line and never dies (issue 24, part 2).

Real ``python -m kbsim serve`` processes spoken to in raw JSON lines (the helpers of
``test_serve_hardening``): a line nested thousands deep, requests whose ``id`` is
``null`` or an object, edits over the documented limits, and a live day whose people
meet a title they cannot rework. Every request with an id gets an answer, the
knowledge base survives, and a live day never stops silently.
"""

from __future__ import annotations

import json
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_serve_hardening import KB, PATIENCE_S, RawServer, events, raw_server, read, small_config, wait_for

from kbsim.serve.stdio import line_error
from kbsim.store.rules import MAX_CONTENT_CHARS, MAX_TITLE_CHARS

pytestmark = pytest.mark.xdist_group("harden-serve")

SEARCH = ('{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"search_knowledge_base",'
          '"arguments":{"knowledge_base_id":"kb-1","query":%s}}}')


def test_deep_brackets_null_and_object_ids_are_answered_and_the_server_lives_on(tmp_path):
    with raw_server(tmp_path / "stderr.log", "--config", str(small_config(tmp_path))) as server:
        before = events(server)
        # a 2 KB line of nested brackets inside tools/call (RecursionError in line_error before)
        server.send_line((SEARCH % (7, "[" * 1000 + "]" * 1000)).encode())
        reply = server.reply()
        assert reply["id"] == 7 and reply["error"]["code"] == -32600, reply
        assert "nested deeper" in reply["error"]["message"]
        server.send_line(b"[" * 200_000)  # not even JSON, and far deeper than Python parses
        reply = server.reply()
        assert reply["id"] is None and reply["error"]["code"] in (-32600, -32700), reply
        # ids JSON-RPC does not allow: the SDK would take them for notifications and stay silent
        for wrong in ("null", '{"a": 1}', "[1]", "true", "1.5"):
            server.send_line(f'{{"jsonrpc":"2.0","id":{wrong},"method":"tools/list"}}'.encode())
            reply = server.reply()
            assert reply["id"] is None and reply["error"]["code"] == -32600, (wrong, reply)
            assert "id is" in reply["error"]["message"]
        # a notification (no id at all) still gets no answer: the next reply is the next request's
        server.send_line(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
        hit = server.ok("search_knowledge_base", {"knowledge_base_id": KB, "query": "anything at all"})
        assert set(hit) == {"results"}
        assert events(server) == before  # nothing was written, nothing lost
    assert server.proc.returncode == 0


def test_edits_over_the_documented_limits_are_tool_errors_that_change_nothing(tmp_path):
    with raw_server(tmp_path / "stderr.log", "--config", str(small_config(tmp_path))) as server:
        article = read(server, "art-000001")
        for content, title in [("x" * (MAX_CONTENT_CHARS + 1), None), ("x" * 3_000_000, None),
                               ("fine", "t" * (MAX_TITLE_CHARS + 1)), ("fine", "t" * 5_000_000)]:
            arguments = {"knowledge_base_id": KB, "article_id": "art-000001", "content": content,
                         "expected_version": article["updated_at"], "idempotency_key": f"k{len(content)}"}
            if title is not None:
                arguments["title"] = title
            payload, is_error = server.call("edit_knowledge_article", arguments)
            assert is_error and payload["code"] == "invalid_argument", payload
            assert "over the limit" in payload["message"] and len(payload["message"]) < 300
        assert read(server, "art-000001") == article
        payload, is_error = server.call("edit_knowledge_article", {
            "knowledge_base_id": KB, "article_id": "art-000001", "content": "x" * MAX_CONTENT_CHARS,
            "title": "t" * MAX_TITLE_CHARS, "expected_version": article["updated_at"], "idempotency_key": "max"})
        assert not is_error, payload  # the limits themselves are allowed


def _live_config(tmp_path, retitles: float, articles: int = 3):
    config = tmp_path / "live.yaml"
    # 20,000 saves an hour at 60x: 333 a wall second, so a hundred failing in a row take a third of one
    config.write_text(f"corpus: {{articles: {articles}}}\nday_hours: 1\nsaves:\n  count: 20000\n  mix: "
                      f"{{content: {1 - retitles}, content_and_title: {retitles}, unpublish: 0.0}}\n")
    return config


def _empty_title(server: RawServer, article_id: str) -> None:
    """The agent sets the title to "" (tools.json allows it): a retitle by people has no word
    to replace. The live day moves fast, so retry until the version read is current."""
    for attempt in range(500):
        version = read(server, article_id)["updated_at"]
        payload, is_error = server.call("edit_knowledge_article", {
            "knowledge_base_id": KB, "article_id": article_id, "content": "emptied", "title": "",
            "expected_version": version, "idempotency_key": f"empty-{article_id}-{attempt}"})
        if not is_error:
            return
        assert payload["code"] == "version_conflict", payload
    raise AssertionError("could not empty a title")


def test_a_live_save_that_cannot_be_applied_is_recorded_and_skipped(tmp_path):
    stderr = tmp_path / "stderr.log"
    args = ("--config", str(_live_config(tmp_path, 0.5, articles=40)), "--live", "--speed", "60")
    with raw_server(stderr, *args) as server:
        for number in range(1, 41, 2):
            _empty_title(server, f"art-{number:06d}")
        wait_for(lambda: "skipped a person's save" in stderr.read_text(errors="replace"),
                 "a skipped save", server.proc)
        seen = len(events(server))
        wait_for(lambda: len(events(server)) > seen + 20, "people saving on after the skip", server.proc)
        assert server.proc.poll() is None
    assert server.proc.returncode == 0


def test_a_live_day_that_stops_tells_the_clients_and_exits_non_zero(tmp_path):
    stderr = tmp_path / "stderr.log"
    args = ("--config", str(_live_config(tmp_path, 1.0)), "--live", "--speed", "60")
    server = RawServer(stderr, *args).initialize()
    try:
        for number in (1, 2, 3):
            _empty_title(server, f"art-{number:06d}")
        # every save is now a retitle no article can take: the live day stops, and says so
        deadline = time.monotonic() + PATIENCE_S
        notes = []
        while time.monotonic() < deadline and server.proc.poll() is None:
            try:
                line = server._lines.get(timeout=0.05)
            except Exception:  # noqa: BLE001 - queue.Empty
                continue
            notes.append(json.loads(line))
        server.proc.wait(timeout=PATIENCE_S)
        while not server._lines.empty():
            notes.append(json.loads(server._lines.get()))
    finally:
        server.close()
    assert server.proc.returncode == 2
    critical = [n for n in notes if n.get("method") == "notifications/message"]
    assert critical and critical[0]["params"]["level"] == "critical", notes
    assert "the live day stopped" in critical[0]["params"]["data"]
    last = stderr.read_text(errors="replace").strip().splitlines()[-1]
    assert last.startswith("kbsim serve: --live: the live day stopped at simulated"), last


@settings(max_examples=60, deadline=2000, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(
    st.binary(max_size=3000),
    st.integers(1, 20_000).map(lambda depth: (SEARCH % (1, "[" * depth + "]" * depth)).encode()),
    st.integers(1, 20_000).map(lambda depth: ('{"jsonrpc":"2.0","id":{"a":' + "[" * depth).encode()),
    st.recursive(st.none() | st.booleans() | st.floats() | st.text(max_size=20) | st.integers(),
                 lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
                 max_leaves=40).map(lambda value: json.dumps({"jsonrpc": "2.0", "id": value, "method": "tools/list",
                                                                "params": value}).encode()),
))
def test_line_error_answers_any_line_without_raising(line):
    """Whatever a client writes, checking the line returns an answer or hands it to the SDK:
    it never raises (a raise would stop the server)."""
    error = line_error(line)
    assert error is None or error.error.code in (-32700, -32600, -32602)
