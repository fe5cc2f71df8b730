"""Resumable streams over ``kbsim serve --http`` (issue 38): every SSE event has an id, a
stream opens with a priming event stating ``retry``, and a client that lost a stream gets
what it missed by reconnecting with ``Last-Event-ID``."""

from __future__ import annotations

import asyncio
import json

import httpx2
import pytest

from kbsim.serve.events import RecentEvents
from tests.test_serve_http import MCP_HEADERS, http_server

pytestmark = pytest.mark.xdist_group("serve-streams")

VERSION = "2025-11-25"  # the first protocol version with priming events (SEP-1699)


def sse_events(text: str) -> list[dict[str, str]]:
    """The events of an SSE body: each a dict of its fields (``id``, ``retry``, ``data``...)."""
    events = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        fields: dict[str, str] = {}
        for line in block.splitlines():
            name, _, value = line.partition(":")
            if name:
                fields[name] = fields.get(name, "") + value.removeprefix(" ")
        if fields:
            events.append(fields)
    return events


def test_a_dropped_tool_call_stream_is_resumed_with_last_event_id(tmp_path):
    with http_server(tmp_path / "stderr.log") as url, httpx2.Client(timeout=10) as http:
        opened = http.post(url, headers=MCP_HEADERS, json={
            "jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": VERSION, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
        session = {**MCP_HEADERS, "mcp-session-id": opened.headers["mcp-session-id"], "mcp-protocol-version": VERSION}
        http.post(url, headers=session, json={"jsonrpc": "2.0", "method": "notifications/initialized"})
        call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "read_knowledge_article", "arguments": {"knowledge_base_id": "kb-1", "article_id": "art-000005"}}}
        answered = http.post(url, headers=session, json=call)
        assert answered.headers["content-type"].startswith("text/event-stream")
        priming, *rest = sse_events(answered.text)
        assert priming["id"] and priming.get("data", "") == "" and priming["retry"] == "1000"
        result = rest[-1]
        assert result["id"] and json.loads(result["data"])["id"] == 2
        # the client lost the stream after the priming event: it reconnects and gets the result
        with http.stream("GET", url, headers={**session, "Accept": "text/event-stream",
                                              "Last-Event-ID": priming["id"]}) as replayed:
            assert replayed.status_code == 200
            text = ""
            for chunk in replayed.iter_text():  # the stream stays open for what comes next: read what is due
                text += chunk
                if any(event.get("id") == result["id"] and "data" in event for event in sse_events(text)):
                    break
        again = [event for event in sse_events(text) if event.get("data")][:1]
        assert [(event["id"], json.loads(event["data"])) for event in again] == [
            (result["id"], json.loads(result["data"]))]


def test_recent_events_keep_the_latest_and_replay_one_stream_in_order():
    sent = []

    async def send(message) -> None:
        sent.append((message.event_id, message.message))

    async def scenario():
        events = RecentEvents(kept=4)
        ids = [await events.store_event(stream, message) for stream, message in
               (("a", None), ("a", "a1"), ("b", "b1"), ("a", "a2"), ("a", "a3"))]
        assert ids == ["1", "2", "3", "4", "5"] and events.held == 4 and events
        assert await events.replay_events_after("2", send) == "a"
        assert await events.replay_events_after("1", send) is None  # dropped: the oldest of five
        assert await events.replay_events_after("not a number", send) is None

    asyncio.run(scenario())
    assert sent == [("4", "a2"), ("5", "a3")]


def _replayed(http: httpx2.Client, url: str, session: dict[str, str], last_event_id: str) -> list[dict]:
    """The data events a ``GET`` with ``Last-Event-ID`` is sent within a second (the stream stays
    open for what comes next, so reading stops at the deadline)."""
    import time

    text, deadline = "", time.monotonic() + 1.0
    try:
        with http.stream("GET", url, headers={**session, "Accept": "text/event-stream",
                                              "Last-Event-ID": last_event_id},
                         timeout=httpx2.Timeout(10, read=1.0)) as replayed:
            for chunk in replayed.iter_text():
                text += chunk
                if time.monotonic() > deadline:
                    break
    except httpx2.ReadTimeout:
        pass
    return [json.loads(event["data"]) for event in sse_events(text) if event.get("data")]


def test_a_resumed_stream_is_sent_only_its_own_sessions_events(tmp_path):
    """The SDK gives every session's transport one event store and names a request's stream by
    its JSON-RPC id alone: session A, resuming its stream of id 2, was also sent session B's reply
    to its own id 2 (another caller's answer, read as A's). Events are kept per session now, and
    an event id of another session is unknown to A."""
    with http_server(tmp_path / "stderr.log") as url, httpx2.Client(timeout=10) as http:
        sessions, replies = [], []
        for article in ("art-000005", "art-000006"):
            opened = http.post(url, headers=MCP_HEADERS, json={
                "jsonrpc": "2.0", "id": 1, "method": "initialize",
                "params": {"protocolVersion": VERSION, "capabilities": {},
                           "clientInfo": {"name": "t", "version": "1"}}})
            session = {**MCP_HEADERS, "mcp-session-id": opened.headers["mcp-session-id"],
                       "mcp-protocol-version": VERSION}
            http.post(url, headers=session, json={"jsonrpc": "2.0", "method": "notifications/initialized"})
            answered = http.post(url, headers=session, json={
                "jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
                    "name": "read_knowledge_article",
                    "arguments": {"knowledge_base_id": "kb-1", "article_id": article}}})
            sessions.append(session)
            replies.append(sse_events(answered.text))
        (a_priming, *a_rest), (b_priming, *b_rest) = replies
        a_reply, b_reply = json.loads(a_rest[-1]["data"]), json.loads(b_rest[-1]["data"])
        assert a_reply["result"] != b_reply["result"]
        assert _replayed(http, url, sessions[0], a_priming["id"]) == [a_reply]
        assert _replayed(http, url, sessions[0], b_priming["id"]) == []  # B's event: not A's to resume
        assert _replayed(http, url, sessions[1], b_priming["id"]) == [b_reply]
