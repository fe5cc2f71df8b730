"""``kbsim serve`` through the official MCP client, against the real server process.

Each server is ``python -m kbsim serve ...`` started by the SDK's
``stdio_client``; a blocking portal gives the async ``ClientSession`` a
synchronous face so plain tests and hypothesis can share one session.
"""

from __future__ import annotations

import copy
import json
import string
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from anyio.from_thread import start_blocking_portal
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import ClientSession, StdioServerParameters, stdio_client

from kbsim.serve.shapes import output_schema
from kbsim.store import ERROR_CODES
from kbsim.store.schema import tools_document

pytestmark = pytest.mark.xdist_group("serve")

REPO = Path(__file__).resolve().parents[1]
KB = "kb-1"
DAY_START_VERSION = "2026-01-05T09:00:00.000000Z"  # every corpus article's first version
EVENT_TYPES = {"article.published", "article.updated", "article.unpublished"}


class McpServer:
    """A served knowledge base seen through the SDK client, with a poll cursor."""

    def __init__(self, portal, session: ClientSession) -> None:
        self.portal = portal
        self.session = session
        self.cursor = 0

    def list_tools(self):
        return self.portal.call(self.session.list_tools)

    def call(self, name: str, arguments: dict[str, Any] | None) -> tuple[dict[str, Any], bool]:
        """One tool call; returns ``(payload, is_error)`` after checking the result's shape."""
        result = self.portal.call(self.session.call_tool, name, arguments)
        assert len(result.content) == 1 and result.content[0].type == "text"
        payload = json.loads(result.content[0].text)
        assert result.structured_content == payload
        if result.is_error:
            assert payload["code"] in ERROR_CODES and isinstance(payload["message"], str)
        return payload, result.is_error

    def ok(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        payload, is_error = self.call(name, arguments)
        assert not is_error, payload
        return payload

    def error(self, name: str, arguments: dict[str, Any] | None) -> dict[str, Any]:
        payload, is_error = self.call(name, arguments)
        assert is_error, payload
        return payload

    def poll(self, after: int, limit: int = 100) -> dict[str, Any]:
        return self.ok(
            "poll_resource_events",
            {"resource_type": "knowledge_base", "resource_id": KB, "after_sequence": after,
             "limit": limit},
        )

    def drain(self) -> list[dict[str, Any]]:
        """Every event after the cursor (the cursor moves to the latest sequence)."""
        events: list[dict[str, Any]] = []
        while True:
            page = self.poll(self.cursor)
            events += page["events"]
            self.cursor = page["next_sequence"]
            if not page["has_more"]:
                return events


@contextmanager
def running_server(errlog: Path, *args: str) -> Iterator[McpServer]:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "kbsim", "serve", *args],
        env={"PYTHONPATH": str(REPO)},
        cwd=str(REPO),
    )
    with errlog.open("w") as err, start_blocking_portal() as portal:
        with portal.wrap_async_context_manager(stdio_client(params, errlog=err)) as streams:
            with portal.wrap_async_context_manager(ClientSession(*streams)) as session:
                portal.call(session.initialize)
                yield McpServer(portal, session)


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[McpServer]:
    """The reference server: default config, seed 1, not live."""
    with running_server(tmp_path_factory.mktemp("serve") / "stderr.log") as mcp:
        yield mcp


def test_tools_list_equals_tools_json(server):
    listed = [
        tool.model_dump(by_alias=True, exclude_none=True, mode="json")
        for tool in server.list_tools().tools
    ]
    expected = [
        {**{key: tool[key] for key in ("name", "description", "inputSchema", "annotations")},
         "outputSchema": output_schema(tool["name"])}
        for tool in tools_document()["tools"]
    ]
    # names, descriptions, required arguments, bounds, the enum and annotations, and the
    # outputSchema of each result (kbsim/spec/results.json), nothing else
    assert listed == expected


def test_search_read_edit_replay_and_poll_end_to_end(server):
    article = "art-000042"
    first = server.ok("read_knowledge_article", {"knowledge_base_id": KB, "article_id": article})

    # search by the article's title finds it first, with the same citation as a read
    hits = server.ok("search_knowledge_base", {"knowledge_base_id": KB, "query": first["title"]})
    assert hits["results"][0]["article_id"] == article
    assert len(hits["results"]) > 1
    top = hits["results"][0]
    read = server.ok("read_knowledge_article", {"knowledge_base_id": KB, "article_id": article})
    assert read["citation"] == top["citation"] == first["citation"] == {
        "knowledge_base_id": KB, "article_id": article, "updated_at": top["updated_at"]}

    server.drain()
    edit = {"knowledge_base_id": KB, "article_id": article, "content": "Rewritten by the agent.",
            "expected_version": read["updated_at"], "idempotency_key": "e2e-edit-1"}
    applied = server.ok("edit_knowledge_article", edit)
    assert applied["replayed"] is False and applied["updated_at"] > read["updated_at"]
    assert server.drain() == [{"sequence": server.cursor, "type": "article.updated",
                               "article_id": article, "updated_at": applied["updated_at"]}]
    reread = server.ok("read_knowledge_article", {"knowledge_base_id": KB, "article_id": article})
    assert reread["content"] == "Rewritten by the agent."
    assert reread["citation"] == applied["citation"]

    # the citation's version is stale now: rejected, no content leaked, nothing written
    stale = server.error("edit_knowledge_article", {**edit, "idempotency_key": "e2e-edit-2"})
    assert stale["code"] == "version_conflict" and "content" not in stale

    # the same key and arguments replay the first result; other arguments are refused
    replay = server.ok("edit_knowledge_article", edit)
    assert replay == {**applied, "replayed": True}
    reused = server.error("edit_knowledge_article", {**edit, "content": "something else"})
    assert reused["code"] == "idempotency_key_reused" and "idempotency_key" in reused["message"]
    assert server.drain() == []

    # poll from 0 pages through the corpus's publishes, then resumes from a cursor
    page = server.poll(0)
    assert [e["sequence"] for e in page["events"]] == list(range(1, 101))
    assert {e["type"] for e in page["events"]} == {"article.published"}
    assert page["next_sequence"] == 100 and page["has_more"] is True
    resumed = server.poll(page["next_sequence"], limit=7)
    assert [e["sequence"] for e in resumed["events"]] == list(range(101, 108))
    assert resumed["next_sequence"] == 107
    at_end = server.poll(server.cursor)
    assert at_end == {"events": [], "last_sequence": server.cursor, "next_sequence": server.cursor, "has_more": False}


# -- bad arguments ---------------------------------------------------------------

VALID_ARGS = {  # valid calls that change nothing
    "search_knowledge_base": {"knowledge_base_id": KB, "query": "xy"},
    "read_knowledge_article": {"knowledge_base_id": KB, "article_id": "art-999999"},
    "edit_knowledge_article": {"knowledge_base_id": KB, "article_id": "art-999999",
                               "content": "c", "expected_version": DAY_START_VERSION,
                               "idempotency_key": "bounds"},
    "poll_resource_events": {"resource_type": "knowledge_base", "resource_id": KB},
}


def bound_cases() -> list[tuple[str, str, Any, bool]]:
    """``(tool, argument, value, valid)`` just inside and just outside every bound."""
    cases = []
    for tool in tools_document()["tools"]:
        for argument, schema in tool["inputSchema"]["properties"].items():
            def case(value, valid, tool=tool["name"], argument=argument):
                cases.append((tool, argument, value, valid))
            if "minLength" in schema:
                case("q" * schema["minLength"], True)
                case("q" * (schema["minLength"] - 1), False)
            if "maxLength" in schema:
                case("q" * schema["maxLength"], True)
                case("q" * (schema["maxLength"] + 1), False)
            if "minimum" in schema:
                case(schema["minimum"], True)
                case(schema["minimum"] - 1, False)
            if "maximum" in schema:
                case(schema["maximum"], True)
                case(schema["maximum"] + 1, False)
            for value in schema.get("enum", ()):
                case(value, True)
            if "enum" in schema:
                case("KNOWLEDGE_BASE", False)
            if schema.get("format") == "date-time":
                case("2026-01-05T09:00:00Z", True)
                case("yesterday", False)
            case("1" if schema["type"] == "integer" else 1, False)  # wrong type
            case(None, False)
    return cases


def test_every_bound_comes_back_as_a_tool_error(server):
    cases = bound_cases()
    assert len(cases) >= 30
    server.drain()
    for tool, argument, value, valid in cases:
        payload, is_error = server.call(tool, {**VALID_ARGS[tool], argument: value})
        if valid:
            assert not is_error or payload["code"] != "invalid_argument", (tool, argument, payload)
        else:
            assert is_error and payload["code"] == "invalid_argument", (tool, argument, value)
            assert argument in payload["message"], payload
    for tool, arguments in VALID_ARGS.items():
        for required in tools_document()["tools"][list(VALID_ARGS).index(tool)]["inputSchema"][
            "required"
        ]:
            missing = {k: v for k, v in arguments.items() if k != required}
            payload = server.error(tool, missing)
            assert payload["code"] == "invalid_argument" and required in payload["message"]
        payload = server.error(tool, {**arguments, "surplus": 1})
        assert payload["code"] == "invalid_argument" and "surplus" in payload["message"]
    assert server.error("search_knowledge_base", None)["code"] == "invalid_argument"
    assert server.error("no_such_tool", {})["code"] == "invalid_argument"
    assert server.drain() == []  # nothing was written
    assert server.ok("search_knowledge_base", {"knowledge_base_id": KB, "query": "still up"})


@pytest.mark.parametrize("resource_type", ["channel", "note", "record", "session"])
def test_other_resource_types_are_unsupported(server, resource_type):
    payload = server.error(
        "poll_resource_events", {"resource_type": resource_type, "resource_id": KB}
    )
    assert payload["code"] == "unsupported" and resource_type in payload["message"]


def test_a_knowledge_base_not_granted_answers_like_a_missing_one(tmp_path):
    # serves kb-1 but grants only kb-2, which does not exist
    with running_server(tmp_path / "stderr.log", "--grant", "kb-2") as mcp:
        for kb in ("kb-1", "kb-2"):
            calls = {
                "search_knowledge_base": {"knowledge_base_id": kb, "query": "anything"},
                "read_knowledge_article": {"knowledge_base_id": kb, "article_id": "art-000001"},
                "edit_knowledge_article": {
                    "knowledge_base_id": kb, "article_id": "art-000001", "content": "x",
                    "expected_version": DAY_START_VERSION, "idempotency_key": f"k-{kb}"},
                "poll_resource_events": {"resource_type": "knowledge_base", "resource_id": kb},
            }
            for tool, arguments in calls.items():
                payload = mcp.error(tool, arguments)
                argument = "resource_id" if tool == "poll_resource_events" else "knowledge_base_id"
                assert payload == {"code": "not_found", "message": f"{argument} {kb!r} not found"}


def test_live_server_shows_people_saving_within_a_second(tmp_path):
    config = tmp_path / "day.yaml"
    # 3000 saves over 100 simulated hours at 3600x: about 30 saves per wall second
    config.write_text("day_hours: 100\nsaves:\n  count: 3000\ncorpus:\n  articles: 60\n")
    args = ("--config", str(config), "--seed", "3", "--live", "--speed", "3600")
    with running_server(tmp_path / "stderr.log", *args) as mcp:
        mcp.drain()
        before = mcp.cursor
        time.sleep(1.0)
        events = mcp.drain()
        assert events, "no people's saves in a second of live serving"
        assert [e["sequence"] for e in events] == list(range(before + 1, mcp.cursor + 1))
        assert {e["type"] for e in events} <= {"article.updated", "article.unpublished"}
        hit = mcp.ok("search_knowledge_base", {"knowledge_base_id": KB, "query": "anything at all"})
        assert set(hit) == {"results"}



def test_raw_json_rpc_envelope_errors_do_not_stop_the_server():
    """Non-object ``arguments`` breaks the MCP envelope itself: the SDK answers a JSON-RPC
    invalid-params error (a conforming client cannot send it); the tool schema is ours."""
    import subprocess

    proc = subprocess.Popen(
        [sys.executable, "-m", "kbsim", "serve"], cwd=REPO, env={"PYTHONPATH": str(REPO)},
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )

    def send(message: dict[str, Any]) -> dict[str, Any] | None:
        proc.stdin.write(json.dumps(message) + "\n")
        proc.stdin.flush()
        return json.loads(proc.stdout.readline()) if "id" in message else None

    try:
        assert send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"}}})["result"]
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        envelope = send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "read_knowledge_article", "arguments": "not an object"}})
        assert envelope["error"]["code"] == -32602
        absent = send({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                       "params": {"name": "read_knowledge_article"}})["result"]
        assert absent["isError"] is True
        assert absent["structuredContent"]["code"] == "invalid_argument"
        assert "article_id" in absent["structuredContent"]["message"]
        read = send({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {
            "name": "read_knowledge_article",
            "arguments": {"knowledge_base_id": KB, "article_id": "art-000001"}}})["result"]
        assert read["isError"] is False and read["structuredContent"]["article_id"] == "art-000001"
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)
        proc.stdout.close()

# -- fuzz ---------------------------------------------------------------------------

PROPERTIES = sorted({p for t in tools_document()["tools"] for p in t["inputSchema"]["properties"]})
TOOL_NAMES = [t["name"] for t in tools_document()["tools"]]
CURRENT = "<current version of art-000001>"
FUZZ_STATS: Counter[str] = Counter()

_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)
_values = st.one_of(
    st.sampled_from([KB, "kb-2", "", "art-000001", "art-000002", "art-999999", "knowledge_base",
                     "channel", "fz-1", "fz-2", DAY_START_VERSION, CURRENT, "not a date",
                     "x" * 201, "ok query"]),
    _text,
    st.integers(min_value=-3, max_value=1000),
    st.integers(),
    st.floats(allow_nan=False, allow_infinity=False),
    st.booleans(),
    st.none(),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(string.ascii_lowercase, max_size=3), st.integers(), max_size=2),
)
_kb = st.sampled_from([KB, KB, KB, "kb-2"])
_sensible = {  # plausible values per argument, so that many calls get past validation
    "knowledge_base_id": _kb,
    "resource_id": _kb,
    "resource_type": st.sampled_from(["knowledge_base"] * 4 + ["channel", "note", "session"]),
    "article_id": st.sampled_from(["art-000001", "art-000002", "art-999999"]),
    "query": st.sampled_from(["ok query", "xy"]) | st.text(min_size=2, max_size=30),
    "limit": st.integers(min_value=0, max_value=101),
    "after_sequence": st.integers(min_value=-1, max_value=1000),
    "content": _text,
    "title": _text,
    "expected_version": st.sampled_from(
        [CURRENT, CURRENT, DAY_START_VERSION, "2026-01-05T09:00:00+00:00"]),
    "idempotency_key": st.sampled_from(["fz-1", "fz-2"]) | _text,
}


def _plausible_call(tool: dict[str, Any]):
    schema = tool["inputSchema"]
    optional = [p for p in schema["properties"] if p not in schema["required"]]
    arguments = st.fixed_dictionaries(
        {p: _sensible[p] for p in schema["required"]},
        optional={p: _sensible[p] for p in optional},
    )
    mutation = st.none() | st.tuples(st.sampled_from([*PROPERTIES, "bogus"]), _values)

    def call(args: dict[str, Any], change: tuple[str, Any] | None):
        return tool["name"], args if change is None else {**args, change[0]: change[1]}

    return st.builds(call, arguments, mutation)


_calls = st.one_of(
    # anything at all, mostly refused by validation
    st.tuples(st.sampled_from([*TOOL_NAMES, "bogus_tool"]),
              st.dictionaries(st.sampled_from([*PROPERTIES, "bogus"]), _values, max_size=7)),
    *[_plausible_call(tool) for tool in tools_document()["tools"]],
)


@settings(max_examples=200, derandomize=True, deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(call=_calls)
def test_fuzzed_arguments_never_crash_and_errors_change_nothing(server, call):
    name, arguments = call
    arguments = copy.deepcopy(arguments)
    if CURRENT in arguments.values():
        current = server.ok("read_knowledge_article",
                            {"knowledge_base_id": KB, "article_id": "art-000001"})["updated_at"]
        arguments = {k: current if v == CURRENT else v for k, v in arguments.items()}
    server.drain()
    payload, is_error = server.call(name, arguments)  # a protocol error would raise here
    written = server.drain()
    FUZZ_STATS["cases"] += 1
    FUZZ_STATS[payload["code"] if is_error else f"ok {name}"] += 1
    if is_error or name != "edit_knowledge_article" or payload["replayed"]:
        assert written == []
    else:
        assert written == [{"sequence": server.cursor, "type": "article.updated",
                            "article_id": payload["article_id"],
                            "updated_at": payload["updated_at"]}]


def test_server_still_serves_after_the_fuzz(server):
    # runs after the fuzz (file order); also a record of what the fuzz exercised
    print("fuzz outcomes:", dict(FUZZ_STATS))
    assert server.ok("search_knowledge_base", {"knowledge_base_id": KB, "query": "after fuzz"})
    assert len(server.list_tools().tools) == 4


# -- the pieces behind the server, without a subprocess ----------------------------------


def test_docs_snippets_start_a_valid_server():
    import re

    import yaml

    from kbsim.cli import build_parser
    from kbsim.params import DayParams

    text = (REPO / "docs" / "serve.md").read_text(encoding="utf-8")
    configs = [json.loads(block) for block in re.findall(r"```json\n(.*?)```", text, re.S)]
    assert configs
    for config in configs:
        for entry in config["mcpServers"].values():
            if "url" in entry:  # a Streamable HTTP client: the endpoint --http serves
                assert re.fullmatch(r"http://127\.0\.0\.1:\d+/mcp", entry["url"])
                continue
            args = entry["args"][entry["args"].index("serve"):]
            parsed = build_parser().parse_args(args)
            assert parsed.command == "serve" and parsed.speed > 0
    for block in re.findall(r"```yaml\n(.*?)```", text, re.S):
        DayParams.model_validate(yaml.safe_load(block))


def test_config_errors_name_the_file_and_the_key(tmp_path):
    """serve reads its config with the project's loader: nested or dotted keys, as run does."""
    from kbsim.runner.config import ConfigError
    from kbsim.runner.load import load_day_params

    path = tmp_path / "typo.yaml"
    for text in ("saves:\n  cont: 3\n", "saves.cont: 3\n"):
        path.write_text(text)
        with pytest.raises(ConfigError, match=r"typo\.yaml: saves\.cont: unknown parameter"):
            load_day_params(path)
    path.write_text("- 1\n")
    with pytest.raises(ConfigError, match="mapping"):
        load_day_params(path)
    path.write_text("zipf_s: 1.2\nsaves.count: 40\ncorpus: {articles: 9}\n")
    params = load_day_params(path)
    assert (params.zipf_s, params.saves.count, params.corpus.articles) == (1.2, 40, 9)
    path.write_text("day_hours: '8'\n")  # strictly, as run validates
    with pytest.raises(ConfigError, match="day_hours"):
        load_day_params(path)
    path.write_bytes(b"zipf_s: 1.0 # \xe9\n")
    with pytest.raises(ConfigError, match=r"typo\.yaml: not UTF-8 text \(byte 0xe9"):
        load_day_params(path)


def test_live_people_make_the_simulated_days_saves():
    """Without real time, the served people save exactly what the simulated day's people do."""
    import simpy

    from kbsim.params import DayParams
    from kbsim.serve.server import build_store, live_people
    from kbsim.sim import run_day
    from kbsim.sim.records import DayLog

    params = DayParams.model_validate({
        "day_hours": 1, "corpus": {"articles": 30}, "saves": {"count": 40},
        "questions": {"count": 3}})

    def served_day(seed: int, hours: float):
        store, day_log, env = build_store(params, seed), DayLog(), simpy.Environment()
        env.process(live_people(env, store, threading.Lock(), KB, params, seed, day_log))
        env.run(until=hours * 3600)
        return store, [(s.time_s, s.kind, s.article_id, s.version) for s in day_log.saves]

    store, saves = served_day(5, hours=1)
    simulated = run_day(params, 5)["saves"]
    people = simulated[simulated["actor"] == "people"]
    assert saves == list(people[["time_s", "kind", "article_id", "version"]].itertuples(
        index=False, name=None))
    assert len(saves) == 40 and store.latest_sequence(KB) == 30 + 40
    # the day repeats: people keep saving after the first day
    _, two_days = served_day(5, hours=2)
    assert two_days[:40] == saves and len(two_days) == 80
    assert min(t for t, *_ in two_days[40:]) >= 3600
    assert served_day(6, hours=1)[1] != saves


def test_db_serves_a_persistent_knowledge_base(tmp_path):
    """With kbsim.SQLiteStore: a restart serves the saved state and resumes its clock."""

    db = tmp_path / "kb.sqlite"
    article = {"knowledge_base_id": KB, "article_id": "art-000003"}
    with running_server(tmp_path / "first.log", "--db", str(db)) as mcp:
        read = mcp.ok("read_knowledge_article", article)
        first = mcp.ok("edit_knowledge_article", {
            **article, "content": "kept on disk", "expected_version": read["updated_at"],
            "idempotency_key": "db-1"})
    with running_server(tmp_path / "second.log", "--db", str(db)) as mcp:
        again = mcp.ok("read_knowledge_article", article)
        assert again["content"] == "kept on disk" and again["citation"] == first["citation"]
        assert [e["sequence"] for e in mcp.poll(399)["events"]] == [400, 401]
        second = mcp.ok("edit_knowledge_article", {
            **article, "content": "edited after a restart",
            "expected_version": again["updated_at"], "idempotency_key": "db-2"})
        # the clock resumed from the latest event rather than restarting the day at 0
        assert second["updated_at"] > first["updated_at"]
        assert mcp.ok("edit_knowledge_article", {
            **article, "content": "kept on disk", "expected_version": read["updated_at"],
            "idempotency_key": "db-1"}) == {**first, "replayed": True}


# -- real text: the shipped sample, and your own folder ----------------------------------------


def test_an_agent_finds_answers_in_the_sample_help_desk_in_plain_english(server):
    """Served by default, the sample help desk answers the questions people ask an IT desk."""
    expected = {
        "reset password": ("Reset your VPN password", "Reset your network password"),
        "my printer shows offline": ("Printer shows offline after a driver update",),
        "I lost my phone": ("Lost phone and cannot approve sign-in", "Lost or stolen phone"),
        "outlook keeps asking for my password": ("Outlook keeps asking for your password",),
        "emails stuck in outbox": ("Emails stuck in the Outbox",),
        "blue screen on my laptop": ("Blue screen error on Windows",),
        "share a file with someone outside the company": ("Share a file with someone outside the company",),
    }
    for query, relevant in expected.items():
        hits = server.ok("search_knowledge_base", {"knowledge_base_id": KB, "query": query, "limit": 3})["results"]
        assert hits[0]["title"] in relevant, (query, [h["title"] for h in hits])
        article = server.ok("read_knowledge_article", {"knowledge_base_id": KB, "article_id": hits[0]["article_id"]})
        assert article["content"].startswith(hits[0]["snippet"]) and "## " in article["content"]
        assert article["citation"] == hits[0]["citation"]


def test_serve_corpus_serves_your_own_folder(tmp_path):
    kb = tmp_path / "my-kb"
    kb.mkdir()
    (kb / "vpn.md").write_text("# Reset your VPN password\n\nOpen the VPN client and choose Reset.\n")
    (kb / "badge.md").write_text("# Badge does not open the door\n\nHold it flat against the reader.\n")
    with running_server(tmp_path / "stderr.log", "--corpus", str(kb)) as mcp:
        hits = mcp.ok("search_knowledge_base", {"knowledge_base_id": KB, "query": "door badge"})["results"]
        assert [h["title"] for h in hits] == ["Badge does not open the door"]
        assert hits[0]["article_id"] == "badge"  # the file's path in the folder
        assert mcp.ok("read_knowledge_article", {"knowledge_base_id": KB, "article_id": "vpn"})["title"] == (
            "Reset your VPN password")
        assert mcp.poll(0)["next_sequence"] == 2
    (kb / "vpn.md").write_bytes(b"# VPN \xff\n")
    refused = subprocess.run([sys.executable, "-m", "kbsim", "serve", "--corpus", str(kb)], cwd=REPO,
                             env={"PYTHONPATH": str(REPO)}, capture_output=True, text=True, timeout=60)
    assert refused.returncode == 2 and refused.stdout == ""
    assert f"{kb / 'vpn.md'}, line 1: bytes that are not UTF-8" in refused.stderr


# -- other languages: the German and Hindi samples, a Japanese folder, a file's own KB -----------------


def _plain_queries_find_their_articles(mcp: McpServer, expected: dict[str, str]) -> None:
    """Each query's article is at rank 1 or 2, and reads back by the id the hit carries."""
    for query, title in expected.items():
        hits = mcp.ok("search_knowledge_base", {"knowledge_base_id": KB, "query": query, "limit": 5})["results"]
        assert title in [hit["title"] for hit in hits[:2]], (query, [hit["title"] for hit in hits])
        hit = next(hit for hit in hits if hit["title"] == title)
        article = mcp.ok("read_knowledge_article", {"knowledge_base_id": KB, "article_id": hit["article_id"]})
        assert article["title"] == title and article["citation"] == hit["citation"]


def test_an_agent_finds_answers_in_the_german_and_hindi_samples_in_plain_words(tmp_path):
    german = {
        "Passwort vergessen": "Netzwerkpasswort zurücksetzen",
        "Drucker ist offline": "Drucker wird als offline angezeigt",
        "mein Laptop ist langsam": "Laptop ist sehr langsam",
        "Papier steckt im Drucker fest": "Papierstau im Drucker",
        "gelöschte Datei zurückholen": "Gelöschte Datei wiederherstellen",
    }
    with running_server(tmp_path / "de.log", "--corpus", "kbsim:sample-de") as mcp:
        _plain_queries_find_their_articles(mcp, german)
        hit = mcp.ok("search_knowledge_base", {"knowledge_base_id": KB, "query": "Passwörter"})["results"][0]
        assert hit["article_id"].startswith("konto/")  # the sample's own ids
    assert "analyzer unicode:de" in (tmp_path / "de.log").read_text()
    hindi = {
        "पासवर्ड भूल गया": "नेटवर्क पासवर्ड रीसेट करें",
        "प्रिंटर ऑफ़लाइन है": "प्रिंटर ऑफ़लाइन दिख रहा है",
        "लैपटॉप धीमा है": "लैपटॉप बहुत धीमा चल रहा है",
        "मिटाई हुई फ़ाइल वापस चाहिए": "मिटाई गई फ़ाइल वापस लाएँ",
        "वीपीएन बार-बार कट जाता है": "वीपीएन कनेक्शन बार-बार टूट जाता है",
    }
    with running_server(tmp_path / "hi.log", "--corpus", "kbsim:sample-hi") as mcp:
        _plain_queries_find_their_articles(mcp, hindi)


JAPANESE = {
    "printer.md": ("プリンターがオフラインになる", "ドライバーの更新後にプリンターがオフラインと表示されます。"
                   "プリンターを削除して、もう一度追加してください。"),
    "password.md": ("パスワードをリセットする", "パスワードを忘れた場合は、ポータルでリセットできます。"
                    "新しいパスワードは十四文字以上にしてください。"),
    "wifi.md": ("会社のWi-Fiに接続する", "社員用のネットワークを選び、会社のアカウントでサインインします。"),
    "mail.md": ("メールが送信できない", "添付ファイルが大きすぎると、メールは送信トレイに残ります。"),
}


def test_a_japanese_folder_is_served_with_bigrams(tmp_path):
    kb = tmp_path / "ja-kb"
    kb.mkdir()
    for name, (title, body) in JAPANESE.items():
        (kb / name).write_text(f"# {title}\n\n{body}\n", encoding="utf-8")
    with running_server(tmp_path / "ja.log", "--corpus", str(kb), "--language", "ja") as mcp:
        _plain_queries_find_their_articles(mcp, {
            "プリンターがオフライン": "プリンターがオフラインになる",
            "パスワードを忘れた": "パスワードをリセットする",
            "メールを送れない": "メールが送信できない",
        })
        hits = mcp.ok("search_knowledge_base", {"knowledge_base_id": KB, "query": "パスワード"})["results"]
        assert hits[0]["article_id"] == "password"


def test_db_with_another_corpus_says_plainly_the_file_is_served(tmp_path):
    db = tmp_path / "kb.sqlite"
    with running_server(tmp_path / "first.log", "--db", str(db), "--corpus", "kbsim:sample-de") as mcp:
        assert mcp.poll(0)["next_sequence"] == 52
    with running_server(tmp_path / "second.log", "--db", str(db), "--corpus", "kbsim:sample-hi") as mcp:
        hits = mcp.ok("search_knowledge_base", {"knowledge_base_id": KB, "query": "Drucker offline"})["results"]
        assert hits and hits[0]["article_id"].startswith("druck/")  # the file's German KB, its analyzer
    said = (tmp_path / "second.log").read_text()
    assert "serving the file's knowledge base as it is; the corpus kbsim:sample-hi is not used" in said
    assert "analyzer unicode:de" in said and "WARNING" in said
