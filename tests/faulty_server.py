"""A faulty knowledge-base MCP server, to prove that ``kbsim check`` can fail: the test fixture
of issue 36 (never part of the package).

``python tests/faulty_server.py --fault NAME`` serves kbsim's in-memory store (a small
synthetic corpus, the admin tools on) over stdio on the official MCP SDK's low-level server,
with one fault switched on (``--fault none``: a clean server). Every fault wraps the store's
own tool calls; none changes the store's code:

- ``blind_edit``: the edit ignores ``expected_version`` (it is replaced by the current one);
- ``no_idempotency``: the edit ignores ``idempotency_key`` (each call gets a fresh one);
- ``replay_second_event``: a replay answers the first result but saves again (a second event);
- ``log_gap``: the log's sequence numbers skip one after every fifth event;
- ``event_before_visible``: an edit's event is listed at once, but reads return the old
  article for a moment and the edit is acknowledged only after that;
- ``second_versions``: versions are shown cut to whole seconds (and compared so);
- ``millisecond_versions``: versions are shown cut to milliseconds but compared to the
  microsecond, so an edit with a cited version conflicts forever;
- ``unpublish_without_event``: an unpublish writes no event;
- ``drafts_searchable``: an unpublished article is still listed by searches;
- ``wrong_annotation``: the search tool is not marked read-only.
"""

from __future__ import annotations

import argparse
import copy
import json
import queue
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

FAULTS = ("none", "blind_edit", "no_idempotency", "replay_second_event", "log_gap", "event_before_visible",
          "second_versions", "millisecond_versions", "unpublish_without_event", "drafts_searchable",
          "wrong_annotation")
#: The property each fault violates (kbsim.check.PROPERTIES).
FAULT_PROPERTY = {
    "blind_edit": "cas.stale_refused",
    "no_idempotency": "keys.replay",
    "replay_second_event": "log.one_event_per_write",
    "log_gap": "log.sequence",
    "event_before_visible": "log.event_visible",
    "second_versions": "versions.unique",
    "millisecond_versions": "versions.round_trip",
    "unpublish_without_event": "published.unpublish_event",
    "drafts_searchable": "published.hidden",
    "wrong_annotation": "marking.annotations",
}
KB_ID = "kb-1"
EDIT, READ, SEARCH, POLL = ("edit_knowledge_article", "read_knowledge_article", "search_knowledge_base",
                            "poll_resource_events")
#: How long an edit's new state stays invisible to reads after its event is written.
HIDDEN_S = 0.3
#: One sequence number is skipped after this many (log_gap).
GAP_EVERY = 5


def gap_out(sequence: int) -> int:
    """The sequence number shown for the store's ``sequence`` (log_gap)."""
    return sequence + sequence // GAP_EVERY


def gap_in(shown: int) -> int:
    """The store's cursor for a shown cursor: the last store sequence shown at or before it."""
    block, rest = divmod(shown, GAP_EVERY + 1)
    return block * GAP_EVERY + min(rest, GAP_EVERY - 1)


class FaultyKnowledgeBase:
    """The store's tools, with one fault."""

    def __init__(self, fault: str, articles: int = 12, admin: bool = True, seed: int = 1) -> None:
        from kbsim.params import DayParams
        from kbsim.serve.server import DayClock, build_store

        self.fault = fault
        #: whether the admin tools (publish, unpublish) are listed and served
        self.admin = admin
        params = DayParams.model_validate({"corpus": {"articles": articles}})
        self.store = build_store(params, seed, kb_id=KB_ID)
        self.clock = DayClock(1.0)
        self.client = self.store.client(grants={KB_ID}, clock=self.clock)
        self.hidden: dict[str, tuple[dict, float]] = {}
        self.drafts: dict[str, tuple[set[str], dict]] = {}
        self.rewritten: dict[str, tuple[str, dict]] = {}

    # -- versions ---------------------------------------------------------------------
    def _cut(self, version: str) -> str:
        from kbsim.store.timefmt import parse_version

        if self.fault == "second_versions":
            return version[:19] + "Z"
        if self.fault == "millisecond_versions":
            us = parse_version(version)
            return version[:19] + f".{(us % 1_000_000) // 1000:03d}Z" if us is not None else version
        return version

    def _shown(self, value: Any) -> Any:
        if self.fault not in ("second_versions", "millisecond_versions"):
            return value
        if isinstance(value, dict):
            return {k: (self._cut(v) if k == "updated_at" and isinstance(v, str) else self._shown(v))
                    for k, v in value.items()}
        if isinstance(value, list):
            return [self._shown(item) for item in value]
        return value

    def _once_per_key(self, arguments: dict, rewrite) -> dict:
        """The arguments rewritten the first time their key is seen; the same rewriting for a
        replay with the same arguments (so the store replays it)."""
        key = arguments.get("idempotency_key")
        original = json.dumps(arguments, sort_keys=True)
        seen = self.rewritten.get(key)
        if seen is not None and seen[0] == original:
            return seen[1]
        changed = rewrite(dict(arguments))
        if seen is None:
            self.rewritten[key] = (original, changed)
        return changed

    def _current(self, article_id: Any) -> str | None:
        try:
            return self.store.current_version(KB_ID, article_id)
        except Exception:  # noqa: BLE001 - an argument the store refuses: the edit will say so
            return None

    # -- tools --------------------------------------------------------------------------
    async def call(self, name: str, arguments: dict[str, Any]) -> tuple[dict[str, Any], bool]:
        from kbsim.store import ToolError

        try:
            return await self._call(name, arguments), False
        except ToolError as exc:
            if exc.code == "version_not_exact" and self.fault in ("second_versions", "millisecond_versions"):
                exc = ToolError("version_conflict", f"expected_version {arguments.get('expected_version')!r} is "
                                "not the current version")
            return exc.to_dict(), True

    async def _call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        import anyio

        fault = self.fault
        if name in ("unpublish_knowledge_article", "publish_knowledge_article") and not self.admin:
            from kbsim.store import ToolError

            raise ToolError("not_found", f"unknown tool {name}")
        if name == "unpublish_knowledge_article":
            article = arguments.get("article_id")
            if fault == "drafts_searchable":
                title = self.store.article_state(KB_ID, article).title
                hits = self.client.call(SEARCH, {"knowledge_base_id": KB_ID, "query": title, "limit": 10})["results"]
                hit = next((h for h in hits if h["article_id"] == article), None)
                if hit is not None:
                    self.drafts[article] = (set(title.lower().split()), hit)
            version = self.store.unpublish_article(KB_ID, article, at=self.clock(),
                                                   log_event=fault != "unpublish_without_event")
            return self._shown({"article_id": article, "unpublished": True, "updated_at": version})
        if name == "publish_knowledge_article":
            article = self.store.publish_article(KB_ID, title=arguments["title"], content=arguments["content"],
                                                 at=self.clock())
            return self._shown({"article_id": article, "updated_at": self.store.current_version(KB_ID, article)})
        if name == EDIT and isinstance(arguments, dict):
            return await self._edit(arguments, anyio)
        if name == READ and fault == "event_before_visible":
            old = self.hidden.get(arguments.get("article_id"))
            if old is not None and time.monotonic() < old[1]:
                return copy.deepcopy(old[0])
        if name == POLL and fault == "log_gap":
            arguments = {**arguments, "after_sequence": gap_in(arguments.get("after_sequence", 0))}
            page = self.client.call(name, arguments)
            return {**page, "events": [{**e, "sequence": gap_out(e["sequence"])} for e in page["events"]],
                    "next_sequence": gap_out(page["next_sequence"])}
        result = self.client.call(name, arguments)
        if name == SEARCH and fault == "drafts_searchable":
            words = set(str(arguments.get("query", "")).lower().split())
            result = {**result, "results": result["results"] + [hit for ws, hit in self.drafts.values() if ws & words]}
        return self._shown(result)

    async def _edit(self, arguments: dict[str, Any], anyio) -> dict[str, Any]:
        fault = self.fault
        if fault == "blind_edit":
            def blind(args: dict) -> dict:
                current = self._current(args.get("article_id"))
                return {**args, "expected_version": current} if current is not None else args
            arguments = self._once_per_key(arguments, blind)
        elif fault == "no_idempotency":
            arguments = {**arguments, "idempotency_key": f"{arguments.get('idempotency_key')}-{time.monotonic_ns()}"}
        elif fault == "second_versions":
            def matched(args: dict) -> dict:
                from kbsim.store.timefmt import parse_version

                current = self._current(args.get("article_id"))
                expected = args.get("expected_version")
                if current is not None and isinstance(expected, str) and \
                        parse_version(expected) == parse_version(self._cut(current)):
                    return {**args, "expected_version": current}
                return args
            arguments = self._once_per_key(arguments, matched)
        old = None
        if fault == "event_before_visible":
            try:
                old = self.client.call(READ, {"knowledge_base_id": KB_ID, "article_id": arguments.get("article_id")})
            except Exception:  # noqa: BLE001 - the edit itself will refuse it
                old = None
        result = self.client.call(EDIT, arguments)
        if fault == "replay_second_event" and result.get("replayed"):
            self.store.save_article(KB_ID, arguments["article_id"], at=self.clock(),
                                    content=arguments["content"] + " ")
        if old is not None and not result.get("replayed"):
            self.hidden[arguments["article_id"]] = (old, time.monotonic() + HIDDEN_S)
            await anyio.sleep(HIDDEN_S + 0.05)
        return self._shown(result)

    def tools(self) -> list[Any]:
        from mcp import types

        from kbsim.serve.admin import admin_tool_list
        from kbsim.serve.server import tool_list

        tools = tool_list() + (admin_tool_list() if self.admin else [])
        if self.fault == "wrong_annotation":
            tools = [tool.model_copy(update={"annotations": types.ToolAnnotations(read_only_hint=False)})
                     if tool.name == SEARCH else tool for tool in tools]
        return tools


def build(faulty: FaultyKnowledgeBase):
    """The low-level MCP server over ``faulty``."""
    from mcp import types
    from mcp.server.lowlevel import Server

    from kbsim.serve.server import tool_result
    from kbsim.serve.shapes import served_payload

    tools = faulty.tools()

    async def on_list_tools(ctx, params) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def on_call_tool(ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
        payload, is_error = await faulty.call(params.name, params.arguments or {})
        return tool_result(payload if is_error else served_payload(params.name, payload), is_error)

    return Server("kbsim-faulty", version=faulty.fault, on_list_tools=on_list_tools, on_call_tool=on_call_tool)


@contextmanager
def serving(fault: str, admin: bool = True, start_timeout_s: float = 30.0) -> Iterator[str]:
    """Serve ``fault`` (with the admin tools or without) over Streamable HTTP on a free port of
    127.0.0.1, in a thread of this process (no server process to start); yield its URL; always
    stop it."""
    from kbsim.serve.http import HttpAddress, run_http

    server = build(FaultyKnowledgeBase(fault, admin=admin))
    stop, listening = threading.Event(), queue.Queue()
    thread = threading.Thread(target=run_http, args=(server, HttpAddress("127.0.0.1", 0)),
                              kwargs={"on_listening": listening.put, "stop": stop}, daemon=True)
    thread.start()
    try:
        yield listening.get(timeout=start_timeout_s)
    finally:
        stop.set()
        thread.join(start_timeout_s)


def main(argv: list[str] | None = None) -> None:
    """Serve one fault over stdio until the client disconnects."""
    import anyio
    from mcp.server.stdio import stdio_server

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fault", choices=FAULTS, default="none")
    parser.add_argument("--articles", type=int, default=12, help="the synthetic corpus's articles (default 12)")
    parser.add_argument("--seed", type=int, default=1, help="the synthetic corpus's seed (default 1)")
    args = parser.parse_args(argv)
    server = build(FaultyKnowledgeBase(args.fault, articles=args.articles, seed=args.seed))

    async def run() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(run)


if __name__ == "__main__":
    main()
