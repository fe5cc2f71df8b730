"""The driver's MCP tool client (kbsim.drive.client) against ``kbsim serve`` over Streamable
HTTP and stdio: every request recorded, refusals as kbsim's ToolError, and each way of not
answering (unreachable, 401/403, silent) one TransportFailure naming it."""

from __future__ import annotations

import json
import os
import threading

import pytest
from drive_servers import http_server, serve_command, silent_server, status_server

from kbsim.drive.client import DriveError, McpConnection, ServerAddress, TransportFailure
from kbsim.drive.history import CallRecorder
from kbsim.store import ToolError
from kbsim.store.schema import tools_document

pytestmark = pytest.mark.xdist_group("drive-client")

KB = "kb-1"
READ = {"knowledge_base_id": KB, "article_id": "art-000007"}


@pytest.fixture(scope="module")
def url(tmp_path_factory):
    with http_server(tmp_path_factory.mktemp("drive-client") / "stderr.log") as endpoint:
        yield endpoint


def _exercise(connection: McpConnection) -> list:
    agent, people = connection.session("agent"), connection.session("people")
    listed = agent.list_tools()
    read = agent.call("read_knowledge_article", READ, actor="ask_read")
    edit = {**READ, "content": "Rewritten by the driver test.", "expected_version": read["updated_at"],
            "idempotency_key": f"drive-client-{os.getpid()}-{connection.address.transport}"}
    applied, size = people.call_sized("edit_knowledge_article", edit, actor="person_save")
    with pytest.raises(ToolError) as conflict:
        agent.call("edit_knowledge_article", {**edit, "idempotency_key": edit["idempotency_key"] + "-b"},
                   actor="agent_edit")
    assert conflict.value.code == "version_conflict"
    assert size == len(json.dumps(applied, separators=(",", ":")).encode())
    return listed


@pytest.mark.parametrize("transport", ["http", "stdio"])
def test_calls_over_either_transport_are_answered_and_recorded(url, transport):
    address = ServerAddress.http(url) if transport == "http" else ServerAddress.stdio(serve_command())
    recorder = CallRecorder()
    with McpConnection(address, recorder, timeout_s=30) as connection:
        listed = _exercise(connection)
        assert connection.server_info["name"] == "kbsim"
    assert [tool["name"] for tool in listed] == [tool["name"] for tool in tools_document()["tools"]]
    assert [tool["inputSchema"] for tool in listed] == [tool["inputSchema"] for tool in tools_document()["tools"]]
    calls = recorder.frame()
    assert calls[["client", "actor", "tool", "ok", "error_code"]].astype(object).fillna("-").values.tolist() == [
        ["agent", "probe", "tools/list", True, "-"],
        ["agent", "ask_read", "read_knowledge_article", True, "-"],
        ["people", "person_save", "edit_knowledge_article", True, "-"],
        ["agent", "agent_edit", "edit_knowledge_article", False, "version_conflict"],
    ]
    assert "Rewritten" not in "".join(calls["arguments"]) and '"content":"sha256:' in calls["arguments"][2]
    assert (calls["bytes_sent"] > 0).all() and (calls["bytes_received"] > 0).all()
    assert (calls["ended_s"] >= calls["started_s"]).all()


def test_racing_threads_share_one_connection(url):
    recorder = CallRecorder()
    with McpConnection(ServerAddress.http(url), recorder, timeout_s=30) as connection:
        sessions = [connection.session(f"race-{i}") for i in range(4)]
        answers = []

        def read(session) -> None:
            for _ in range(5):
                answers.append(session.call("read_knowledge_article", READ)["article_id"])

        threads = [threading.Thread(target=read, args=(session,)) for session in sessions]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
    assert answers == ["art-000007"] * 20
    assert sorted(recorder.frame()["client"].unique()) == [f"race-{i}" for i in range(4)]
    assert recorder.frame()["call_id"].tolist() == list(range(20))


def test_an_unreachable_url_is_one_line():
    with pytest.raises(TransportFailure, match=r"http://127\.0\.0\.1:9/mcp: cannot connect") as failed:
        with McpConnection(ServerAddress.http("http://127.0.0.1:9/mcp"), CallRecorder(),
                           timeout_s=5, connect_timeout_s=5) as connection:
            connection.session("agent")
    assert failed.value.kind == "connect" and "\n" not in str(failed.value)


@pytest.mark.parametrize("status", [401, 403])
def test_a_refused_credential_is_one_line_and_never_shown(monkeypatch, status):
    monkeypatch.setenv("KBSIM_TEST_TOKEN", "Bearer s3cr3t-value")
    with status_server(status) as endpoint:
        address = ServerAddress.http(endpoint, ["Authorization=KBSIM_TEST_TOKEN"])
        assert "s3cr3t" not in repr(address) and "s3cr3t" not in json.dumps(address.describe())
        with pytest.raises(TransportFailure, match=f"answered HTTP {status}") as failed:
            with McpConnection(address, CallRecorder(), timeout_s=5, connect_timeout_s=5) as connection:
                connection.session("agent")
    assert failed.value.kind == f"http_{status}" and "s3cr3t" not in str(failed.value)


def test_a_silent_server_times_out_in_one_line():
    with silent_server() as endpoint:
        with pytest.raises(TransportFailure, match=r"no answer within 1 s \(connecting") as failed:
            with McpConnection(ServerAddress.http(endpoint), CallRecorder(), timeout_s=1,
                               connect_timeout_s=1) as connection:
                connection.session("agent")
    assert failed.value.kind == "timeout"


def test_a_header_from_an_unset_variable_or_a_bad_spec_is_refused(monkeypatch):
    monkeypatch.delenv("KBSIM_UNSET_TOKEN", raising=False)
    with pytest.raises(DriveError, match="environment variable KBSIM_UNSET_TOKEN is not set"):
        ServerAddress.http("http://127.0.0.1:1/mcp", ["Authorization=KBSIM_UNSET_TOKEN"])
    with pytest.raises(DriveError, match="expected HEADER=ENV_VARIABLE"):
        ServerAddress.http("http://127.0.0.1:1/mcp", ["Authorization"])
    with pytest.raises(DriveError, match="expected an http:// or https:// URL"):
        ServerAddress.http("127.0.0.1:1/mcp")
    with pytest.raises(DriveError, match="no such command"):
        ServerAddress.stdio(["kbsim-no-such-command-anywhere"])


def test_admin_tools_are_served_only_with_the_flag():
    """kbsim serve --admin-tools lists and answers publish/unpublish; without it they are neither
    listed nor answered (refused as any unknown tool)."""
    unpublish = {"knowledge_base_id": KB, "article_id": "art-000003"}
    with McpConnection(ServerAddress.stdio(serve_command()), CallRecorder()) as connection:
        session = connection.session("admin")
        assert [tool["name"] for tool in session.list_tools()] == [t["name"] for t in tools_document()["tools"]]
        with pytest.raises(ToolError, match="unknown tool 'unpublish_knowledge_article'"):
            session.call("unpublish_knowledge_article", unpublish)
    with McpConnection(ServerAddress.stdio(serve_command("--admin-tools")), CallRecorder()) as connection:
        session = connection.session("admin")
        assert [tool["name"] for tool in session.list_tools()][4:] == ["publish_knowledge_article",
                                                                       "unpublish_knowledge_article"]
        gone = session.call("unpublish_knowledge_article", unpublish)
        assert gone["unpublished"] is True and gone["article_id"] == "art-000003"
        with pytest.raises(ToolError) as missing:
            session.call("read_knowledge_article", unpublish)
        assert missing.value.code == "not_found"
        new = session.call("publish_knowledge_article", {"knowledge_base_id": KB, "title": "A new one",
                                                         "content": "Its text."})
        assert session.call("read_knowledge_article", {"knowledge_base_id": KB, "article_id": new["article_id"]})[
            "updated_at"] == new["updated_at"]
        with pytest.raises(ToolError) as refused:
            session.call("publish_knowledge_article", {"knowledge_base_id": "kb-2", "title": "T", "content": "C"})
        assert refused.value.code == "not_found"
        with pytest.raises(ToolError) as refused:
            session.call("publish_knowledge_article", {"knowledge_base_id": KB, "title": 3, "content": "C"})
        assert refused.value.code == "invalid_argument"
