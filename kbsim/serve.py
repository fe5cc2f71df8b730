"""``kbsim serve``: the simulated knowledge base as a stdio MCP server.

The server lists exactly the four tools of ``kbsim/spec/tools.json`` and runs
every call through ``store.client(grants, clock).call(name, arguments)``, the
same entry point the simulation uses, so no rule is implemented twice. With
``live=True`` the people of a simulated day keep saving articles in
accelerated wall-clock time (SimPy's real-time environment, in a background
thread), so an attached agent sees its citations go stale and its edits
collide. stdout carries the protocol; logs go to stderr.
"""

from __future__ import annotations

import copy
import functools
import itertools
import json
import logging
import threading
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import yaml
from pydantic import ValidationError

import kbsim
from kbsim.params import DayParams
from kbsim.sim import streams
from kbsim.sim.day import KB_ID as SIM_KB_ID
from kbsim.sim.day import day_save_arrivals, starting_knowledge_base
from kbsim.sim.popularity import UNIFORMS_PER_DRAW, Popularity
from kbsim.sim.processes import editor
from kbsim.sim.records import DayLog
from kbsim.store import MemoryStore, ToolError, parse_version, tool_definitions

log = logging.getLogger("kbsim.serve")

DEFAULT_KB_ID = "kb-1"
DEFAULT_SEED = 1
DEFAULT_SPEED = 60.0


class ServeConfigError(ValueError):
    """A config file that cannot be served (names the file and the bad key)."""


# -- configuration and the served store ------------------------------------------------


def load_day_params(path: str | Path | None) -> DayParams:
    """The day parameters of a YAML config file (defaults when ``path`` is None).

    Kept as one small function so the project's config loader can replace it.
    """
    if path is None:
        return DayParams()
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise ServeConfigError(f"config {str(path)!r}: {exc}") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ServeConfigError(
            f"config {str(path)!r}: the top level must be a mapping, got {type(data).__name__}"
        )
    try:
        return DayParams.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in error['loc']) or '(top level)'}: {error['msg']}"
            for error in exc.errors()
        )
        raise ServeConfigError(f"config {str(path)!r}: {problems}") from None


def open_backend(params: DayParams, db: str | Path | None):
    """An empty or persisted store: in memory, or SQLite at ``db``."""
    if db is None:
        return MemoryStore(event_retention_s=params.event_retention_s)
    sqlite_store = getattr(kbsim, "SQLiteStore", None)
    if sqlite_store is None:
        raise ServeConfigError(
            f"--db {str(db)!r}: this kbsim has no SQLite backend (kbsim.SQLiteStore)"
        )
    try:
        return sqlite_store(db, event_retention_s=params.event_retention_s)
    except (OSError, RuntimeError, ValueError) as exc:
        raise ServeConfigError(f"--db {str(db)!r}: {exc}") from None


def build_store(params: DayParams, seed: int, db: str | Path | None = None,
                kb_id: str = DEFAULT_KB_ID):
    """The store to serve: knowledge base ``kb_id`` holding the seeded corpus.

    The articles are those the simulated day starts with for the same corpus
    parameters and seed (same ids, titles and bodies), published at simulated
    time 0. A SQLite file that already holds ``kb_id`` is served as it is (its
    articles and events persist across restarts).
    """
    store = open_backend(params, db)
    if store.has_knowledge_base(kb_id):
        log.info("serving the existing knowledge base %s from %s", kb_id, db)
        return store
    store.create_knowledge_base(kb_id)
    # the simulated day's starting knowledge base for this seed, published under kb_id
    _, template, article_ids, _ = starting_knowledge_base(params.corpus, seed)
    for article_id in article_ids:
        article = template.article_state(SIM_KB_ID, article_id)
        store.publish_article(kb_id, title=article.title, content=article.content, at=0.0)
    return store


# -- time ------------------------------------------------------------------------------


def latest_event_time_s(store, kb_id: str) -> float:
    """Simulated time of the knowledge base's latest event (0 for an empty log).

    A persisted knowledge base resumes its day from there, so versions written
    after a restart keep following the clock instead of creeping by 1 µs.
    """
    latest = store.latest_sequence(kb_id)
    if latest == 0:
        return 0.0
    client = store.client(grants={kb_id}, clock=lambda: 0.0)
    page = client.call("poll_resource_events", {
        "resource_type": "knowledge_base", "resource_id": kb_id,
        "after_sequence": latest - 1, "limit": 1})
    if not page["events"]:
        return 0.0
    return parse_version(page["events"][-1]["updated_at"]) / 1_000_000


class DayClock:
    """Simulated seconds since the served day began, at ``speed`` x wall-clock time."""

    def __init__(self, speed: float, start_s: float = 0.0) -> None:
        if not speed > 0:
            raise ValueError(f"speed must be > 0, got {speed!r}")
        self.speed = speed
        self.start_s = start_s
        self._wall_start = time.monotonic()

    def __call__(self) -> float:
        return self.start_s + (time.monotonic() - self._wall_start) * self.speed


# -- people saving, live ----------------------------------------------------------------


class LockedStore:
    """A store whose every method call holds ``lock``.

    The simulation's editor process calls the store directly; handing it this
    view serialises each of its store calls with the agent's tool calls.
    """

    def __init__(self, store, lock: threading.Lock) -> None:
        self._store = store
        self._lock = lock

    def __getattr__(self, name: str):
        attribute = getattr(self._store, name)
        if not callable(attribute):
            return attribute
        lock = self._lock

        @functools.wraps(attribute)
        def locked(*args, **kwargs):
            with lock:
                return attribute(*args, **kwargs)

        return locked


def people_arrivals(params: DayParams, rng: np.random.Generator,
                    start_s: float) -> Iterator[tuple[float, str]]:
    """People's saves as ``(time_s, kind)``, day after day from ``start_s``.

    Each day has the configured count, arrival model and mix; the first day
    draws exactly what the simulated day's people draw.
    """
    if params.saves.count == 0:
        return
    for day in itertools.count():
        yield from day_save_arrivals(params, rng, start_s + day * params.day_s)


def live_people(env, store, lock: threading.Lock, kb_id: str, params: DayParams, seed: int,
                log_to: DayLog):
    """The simulation's ``editor`` process wired to a served store, starting at ``env.now``.

    People pick published articles by the day's popularity (Zipf, or uniform
    for ``saves.popularity: uniform``) and save through the store's own save
    path, each store call under ``lock``.
    """
    corpus, _, article_ids, ranking = starting_knowledge_base(params.corpus, seed)
    s = params.zipf_s if params.saves.popularity == "zipf" else 0.0
    popularity = Popularity(article_ids, ranking, s)
    locked = LockedStore(store, lock)
    rngs = streams(seed)
    rng, targets = rngs["editors"], rngs["save_targets"]

    def is_published(article_id: str) -> bool:
        return locked.current_version(kb_id, article_id) is not None

    return editor(
        env,
        locked,
        kb_id,
        people_arrivals(params, rng, env.now),
        lambda: popularity.draw(targets.random(UNIFORMS_PER_DRAW).tolist(), is_published),
        corpus,
        rng,
        log_to,
    )


def start_live_people(served: ServedKnowledgeBase, params: DayParams,
                      seed: int) -> threading.Thread:
    """Run people's saves against ``served`` in accelerated wall-clock time (a daemon thread).

    The real-time environment starts at the served clock's current time and
    runs at its speed, so people's ``at`` and the agent's clock agree.
    ``strict=False``: a late step is taken late rather than failing the day.
    """
    import simpy.rt

    clock = served.clock
    day_log = DayLog()

    def run() -> None:
        env = simpy.rt.RealtimeEnvironment(
            initial_time=clock(), factor=1.0 / clock.speed, strict=False
        )
        env.process(
            live_people(env, served.store, served.lock, served.kb_id, params, seed, day_log)
        )
        log.info("live: people save %d times per %g simulated hours, %gx wall-clock time",
                 params.saves.count, params.day_hours, clock.speed)
        try:
            env.run()
        except Exception:
            log.exception("live: people stopped saving after %d saves", len(day_log.saves))

    thread = threading.Thread(target=run, name="kbsim-live-people", daemon=True)
    thread.start()
    return thread


# -- the MCP face -----------------------------------------------------------------------


class ServedKnowledgeBase:
    """A store, the knowledge base it serves, the agent's client and the lock they share."""

    def __init__(self, store, kb_id: str, grants: Iterable[str], clock: DayClock) -> None:
        self.store = store
        self.kb_id = kb_id
        self.clock = clock
        self.lock = threading.Lock()
        self.client = store.client(grants=frozenset(grants), clock=clock)

    def call(self, name: str, arguments: dict[str, Any] | None) -> tuple[dict[str, Any], bool]:
        """Run one tool call; returns ``(payload, is_error)``.

        A ``ToolError`` becomes its ``to_dict()`` (code, message, details);
        absent arguments are an empty object, so missing ones are named.
        """
        try:
            with self.lock:
                return self.client.call(name, {} if arguments is None else arguments), False
        except ToolError as exc:
            return exc.to_dict(), True


def tool_list() -> list[Any]:
    """The four tools as MCP ``Tool`` objects, straight from ``tools.json``."""
    from mcp import types

    return [
        types.Tool(
            name=definition.name,
            description=definition.description,
            input_schema=copy.deepcopy(definition.input_schema),
            annotations=types.ToolAnnotations.model_validate(definition.annotations),
        )
        for definition in tool_definitions().values()
    ]


def tool_result(payload: dict[str, Any], is_error: bool):
    """A payload as an MCP tool result: compact JSON text plus structured content."""
    from mcp import types

    text = json.dumps(payload, separators=(",", ":"), ensure_ascii=False)
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)],
        structured_content=payload,
        is_error=is_error,
    )


def build_server(served: ServedKnowledgeBase, *, live: bool = False):
    """A low-level MCP ``Server`` publishing the exact schemas of ``tools.json``.

    The low-level server does not validate arguments against the input
    schema, so every bad argument reaches the store's validator and comes back
    as a tool error with the store's ``invalid_argument`` code.
    """
    from mcp import types
    from mcp.server.lowlevel import Server

    tools = tool_list()
    granted = ", ".join(sorted(served.client.grants))

    async def on_list_tools(ctx, params) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def on_call_tool(ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
        payload, is_error = served.call(params.name, params.arguments)
        if is_error:
            log.info("%s -> %s: %s", params.name, payload["code"], payload["message"])
        return tool_result(payload, is_error)

    instructions = (
        f"A simulated knowledge base ({served.kb_id}; granted: {granted}). "
        + ("People keep editing it while you work: citations go stale and edits can conflict. "
           if live else "")
        + "Errors come back as JSON {code, message}."
    )
    return Server(
        "kbsim",
        version=kbsim.__version__,
        instructions=instructions,
        on_list_tools=on_list_tools,
        on_call_tool=on_call_tool,
    )


async def _serve_stdio(server) -> None:
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def serve(params: DayParams, *, seed: int = DEFAULT_SEED, db: str | Path | None = None,
          kb_id: str = DEFAULT_KB_ID, grants: Iterable[str] | None = None, live: bool = False,
          speed: float = DEFAULT_SPEED) -> None:
    """Build the store and serve it over stdio until the client disconnects."""
    import anyio

    clock_speed = float(speed)
    if not clock_speed > 0:
        raise ServeConfigError(f"--speed must be > 0, got {speed!r}")
    store = build_store(params, seed, db=db, kb_id=kb_id)
    clock = DayClock(clock_speed, start_s=latest_event_time_s(store, kb_id))
    served = ServedKnowledgeBase(store, kb_id, grants or [kb_id], clock)
    log.info("serving %s (%d published articles, seed %d, day clock from %.1f s) to grants %s "
             "over stdio", kb_id, len(store.published_article_ids(kb_id)), seed, clock.start_s,
             sorted(served.client.grants))
    if live:
        start_live_people(served, params, seed)
    try:
        anyio.run(_serve_stdio, build_server(served, live=live))
    finally:
        close = getattr(store, "close", None)
        if close is not None:
            with served.lock:
                close()
