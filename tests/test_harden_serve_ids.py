"""``kbsim serve --http`` answers each request with its own reply (issue 40, defect 1).

The MCP SDK files a request's reply channel under ``str(id)``: two POSTs in one
session with the same id overwrote each other's, and one got the other's reply while
the other hung. kbsim's middleware now refuses a request whose id is in flight in its
session (400, -32600) and lets every other through.
"""

from __future__ import annotations

import json
import random
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import httpx2
import pytest
from test_serve_http import INITIALIZE, MCP_HEADERS, http_server

from kbsim.serve.http import InFlightIds

pytestmark = pytest.mark.xdist_group("harden-serve-ids")

SESSIONS = 6
REQUESTS_PER_SESSION = 40
IDS_PER_SESSION = 4  # few ids, many requests at once: ids are reused while in flight
ANSWER_WITHIN_S = 20.0  # only reached when a request is never answered
READ_TIMEOUT_S = 40.0  # the server pings an open SSE stream every 15 s


def open_session(http: httpx2.Client, url: str) -> dict[str, str]:
    """Initialize one MCP session over raw HTTP; its request headers."""
    opened = http.post(url, json=INITIALIZE, headers=MCP_HEADERS)
    assert opened.status_code == 200, opened.text
    headers = {**MCP_HEADERS, "mcp-session-id": opened.headers["mcp-session-id"],
               "mcp-protocol-version": "2025-06-18"}
    assert http.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"},
                     headers=headers).status_code == 202
    return headers


def read_article(request_id: int | str, article: str) -> dict:
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
            "params": {"name": "read_knowledge_article",
                       "arguments": {"knowledge_base_id": "kb-1", "article_id": article}}}


def exchange(http: httpx2.Client, url: str, body: dict, headers: dict[str, str]) -> tuple[int, dict | None]:
    """POST ``body``: the status and the one JSON-RPC message it was answered with (a JSON body,
    or the first message on the SSE stream), None if none came within ANSWER_WITHIN_S (an SSE
    stream kept open by pings, with no message, is a request never answered)."""
    deadline = time.monotonic() + ANSWER_WITHIN_S
    with http.stream("POST", url, json=body, headers=headers) as response:
        if not response.headers.get("content-type", "").startswith("text/event-stream"):
            response.read()
            return response.status_code, response.json()
        for line in response.iter_lines():
            if line.startswith("data:") and line[5:].strip():
                return response.status_code, json.loads(line[5:])
            if time.monotonic() > deadline:
                break
    return response.status_code, None


def test_inflight_ids_are_keyed_as_the_sdk_keys_them():
    """7 and "7" share the SDK transport's key, 7 and "07" its dispatcher's; "_GET_stream" is a GET's."""
    ids = InFlightIds()
    with ids.holding("s", ids.keys(7)):
        assert ids.held("s", ids.keys(7)) and ids.held("s", ids.keys("7")) and ids.held("s", ids.keys("07"))
        assert not ids.held("s", ids.keys(8)) and not ids.held("s", ids.keys("seven"))
        assert not ids.held("other session", ids.keys(7))
    assert not ids.held("s", ids.keys(7)) and ids._held == {}  # released, nothing kept per session
    get_stream = (("transport", "_GET_stream"),)
    with ids.holding("s", get_stream), ids.holding("s", get_stream):
        assert ids.held("s", ids.keys("_GET_stream"))
    assert ids._held == {}


def test_a_handled_request_holds_its_id_until_its_reply_is_stored_or_it_is_cancelled(monkeypatch):
    """The server side of the hold (``InFlightIds.while_handled``): a handler that returns or
    raises holds its id until the event store sees its reply (or a grace period ends with no
    reply); a cancelled handler, which MCP never answers, lets go at once."""
    import asyncio
    from types import SimpleNamespace

    from kbsim.serve.events import CURRENT_SESSION, RecentEvents, SessionOf

    async def scenario() -> None:
        ids = InFlightIds()
        events = RecentEvents(on_reply=ids.answered)
        CURRENT_SESSION.set(SessionOf("s"))

        async def returns(ctx):
            assert ids.held("s", ids.keys(ctx.request_id))  # held while the handler runs
            return {}

        async def raises(ctx):
            raise ValueError("answered with an error reply")

        async def cancelled(ctx):
            raise asyncio.CancelledError

        from mcp.types import JSONRPCError, JSONRPCResponse
        await ids.while_handled(SimpleNamespace(request_id=1), returns)
        with pytest.raises(ValueError):
            await ids.while_handled(SimpleNamespace(request_id="2"), raises)
        with pytest.raises(asyncio.CancelledError):
            await ids.while_handled(SimpleNamespace(request_id=3), cancelled)
        assert ids.held("s", ids.keys(1)) and ids.held("s", ids.keys(2)) and not ids.held("s", ids.keys(3))
        assert not ids.held("other", ids.keys(1))
        await events.store_event("1", JSONRPCResponse(jsonrpc="2.0", id=1, result={}))
        assert not ids.held("s", ids.keys(1)) and ids.held("s", ids.keys(2))
        await events.store_event("2", JSONRPCError(jsonrpc="2.0", id="2", error={"code": -1, "message": "x"}))
        assert ids._held == {} and ids._answering == {}
        # a handler whose reply is never stored lets go after the grace period
        await ids.while_handled(SimpleNamespace(request_id=4), returns)
        assert ids.held("s", ids.keys(4))
        monkeypatch.setattr(InFlightIds, "ANSWER_GRACE_S", 0.0)
        await ids.while_handled(SimpleNamespace(request_id=5), returns)
        assert not ids.held("s", ids.keys(5)) and ids.held("s", ids.keys(4))
        # a request of no session (initialize) or a notification is not held
        CURRENT_SESSION.set(SessionOf(None))
        await ids.while_handled(SimpleNamespace(request_id=6), lambda ctx: asyncio.sleep(0))
        assert not ids.held("s", ids.keys(6))

    asyncio.run(scenario())


def test_many_sessions_with_reused_ids_in_flight_each_get_their_own_reply_or_a_refusal(tmp_path):
    """Every request gets its own reply (its id, its article) or a 400 -32600 refusal naming its id."""
    rng = random.Random(40)
    outcomes: list[tuple[str, str]] = []
    lock = threading.Lock()
    timeout = httpx2.Timeout(READ_TIMEOUT_S)
    limits = httpx2.Limits(max_connections=SESSIONS * 8, max_keepalive_connections=SESSIONS * 8)
    with http_server(tmp_path / "stderr.log") as url, httpx2.Client(timeout=timeout, limits=limits) as http:
        sessions = [open_session(http, url) for _ in range(SESSIONS)]
        plan = [(headers, rng.randrange(IDS_PER_SESSION), f"art-{rng.randrange(1, 400):06d}")
                for headers in sessions for _ in range(REQUESTS_PER_SESSION)]
        rng.shuffle(plan)

        def post(headers: dict[str, str], request_id: int, article: str) -> None:
            status, reply = exchange(http, url, read_article(request_id, article), headers)
            if reply is None:
                outcome = "no answer"
            elif status == 400:
                error = reply.get("error", {})
                assert (reply["id"], error.get("code")) == (request_id, -32600), reply
                assert "already in flight" in error["message"], reply
                outcome = "refused"
            else:
                assert status == 200, (status, reply)
                payload = json.loads(reply["result"]["content"][0]["text"]) if "result" in reply else reply
                outcome = ("own reply" if reply["id"] == request_id and payload.get("article_id") == article
                           else f"wrong reply: asked {article} as id {request_id}, got {reply}")
            with lock:
                outcomes.append((outcome, article))

        with ThreadPoolExecutor(max_workers=SESSIONS * 8) as pool:
            for future in [pool.submit(post, *step) for step in plan]:
                future.result()
        # once answered, an id is free again in its session
        status, again = exchange(http, url, read_article(0, "art-000001"), sessions[0])
        assert status == 200 and again["id"] == 0
    counts = {kind: sum(1 for outcome, _ in outcomes if outcome == kind) for kind in ("own reply", "refused")}
    wrong = [outcome for outcome, _ in outcomes if outcome not in counts]
    assert wrong == [] and sum(counts.values()) == SESSIONS * REQUESTS_PER_SESSION, (counts, wrong[:5])
    assert counts["own reply"] > 0 and counts["refused"] > 0, counts  # ids really were reused in flight


def test_an_id_named_like_the_sdks_get_stream_is_refused_while_the_stream_is_open(tmp_path):
    """The SDK keeps a session's GET stream under "_GET_stream": a POST with that id took its place,
    and once answered left the session with no stream for the server's own messages (a second GET
    was then let in). Now it is refused while the stream is open, and answered once it is closed."""
    accept_sse = {"Accept": "text/event-stream"}
    with http_server(tmp_path / "stderr.log") as url, httpx2.Client(timeout=httpx2.Timeout(READ_TIMEOUT_S)) as http:
        headers = open_session(http, url)
        with http.stream("GET", url, headers={**headers, **accept_sse}) as stream:
            assert stream.status_code == 200
            status, refused = exchange(http, url, read_article("_GET_stream", "art-000002"), headers)
            assert status == 400 and refused["error"]["code"] == -32600, (status, refused)
            assert exchange(http, url, read_article("get", "art-000002"), headers)[1]["id"] == "get"
            with http.stream("GET", url, headers={**headers, **accept_sse}) as second:
                assert second.status_code == 409, second.status_code  # the first is still the session's stream
        deadline = time.monotonic() + READ_TIMEOUT_S  # once the server has seen the stream close
        while (answered := exchange(http, url, read_article("_GET_stream", "art-000002"), headers))[0] == 400:
            assert time.monotonic() < deadline, answered
            time.sleep(0.05)
        assert answered[0] == 200 and answered[1]["id"] == "_GET_stream"


#: In the test below, how long the server takes over reading each of these articles.
SLOW_READS_S = {"art-000003": 1.5, "art-000007": 2.5}


def test_a_dropped_request_holds_its_id_until_its_tool_has_answered(tmp_path):
    """A client that drops its POST while the tool still runs, and reuses the id, was given the
    dropped call's late reply as the new call's answer (the SDK files replies under the id, and
    kbsim let the id go when the POST ended). Now the id stays in flight until the tool has
    answered: the second POST is refused, and once the first is answered the id is free again."""
    import functools

    import anyio

    from kbsim.params import DayParams
    from kbsim.serve.http import HttpAddress, run_http
    from kbsim.serve.server import serve

    stop, ready, seen = threading.Event(), threading.Event(), {}

    async def slow_reads(ctx, call_next):
        arguments = (ctx.params or {}).get("arguments") or {}
        if ctx.method == "tools/call" and arguments.get("article_id") in SLOW_READS_S:
            await anyio.sleep(SLOW_READS_S[arguments["article_id"]])
        return await call_next(ctx)

    def transport(server, on_session_closed, **_):
        server.middleware.append(slow_reads)

        def listening(endpoint: str) -> None:
            seen["url"] = endpoint
            ready.set()

        run_http(server, HttpAddress("127.0.0.1", 0), on_listening=listening, stop=stop,
                 on_session_closed=on_session_closed)

    day = DayParams.model_validate({"corpus": {"articles": 30}})
    thread = threading.Thread(target=functools.partial(serve, day, transport=transport), daemon=True)
    thread.start()
    try:
        assert ready.wait(60), "the server did not start"
        url = seen["url"]
        with httpx2.Client(timeout=httpx2.Timeout(READ_TIMEOUT_S)) as http:
            headers = open_session(http, url)
            started = time.monotonic()
            with http.stream("POST", url, json=read_article(9, "art-000003"), headers=headers) as dropped:
                assert dropped.status_code == 200
                time.sleep(0.3)  # the tool is running: drop the POST
            dropped_at = time.monotonic() - started
            status, reply = exchange(http, url, read_article(9, "art-000007"), headers)
            assert dropped_at < SLOW_READS_S["art-000003"], "too late to show anything"
            assert (status, reply["error"]["code"]) == (400, -32600), (status, reply)
            assert "already in flight" in reply["error"]["message"]
            deadline = time.monotonic() + 20  # once the dropped call has answered, 9 is free again
            while (answered := exchange(http, url, read_article(9, "art-000007"), headers))[0] == 400:
                assert time.monotonic() < deadline, answered
                time.sleep(0.1)
            status, reply = answered
            assert status == 200 and reply["id"] == 9, answered
            assert json.loads(reply["result"]["content"][0]["text"])["article_id"] == "art-000007", reply
    finally:
        stop.set()
        thread.join(30)
