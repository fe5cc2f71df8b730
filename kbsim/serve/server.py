"""``kbsim serve``: the simulated knowledge base as an MCP server, over stdio or Streamable HTTP.

The server lists exactly the four tools of ``kbsim/spec/tools.json`` and runs
every call through ``store.client(grants, clock).call(name, arguments)``, the
same entry point the simulation uses, so no rule is implemented twice. With
``live=True`` the people of a simulated day keep saving articles in
accelerated wall-clock time (SimPy's real-time environment, in a background
thread), so an attached agent sees its citations go stale and its edits
collide. Over stdio, stdout carries the protocol; logs go to stderr.

What it promises (docs/serve.md, "What the server guarantees"): every
request gets an answer (:mod:`kbsim.serve.stdio` answers the lines the SDK
cannot parse), a refused call is a tool error with a documented code, and a
knowledge base is served only whole (filled in one transaction, and a file is
checked when it is opened). With ``live``, a person's save the store cannot apply
(an agent may have set a title people's edits cannot rework) is logged, recorded and
skipped; should the live day stop all the same, every client is told, each call
is answered with an internal error naming why, and the server exits with a
one-line error instead of serving a frozen knowledge base.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import logging
import math
import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from kbsim.errors import UsageError, first_problem
from kbsim.inputs import InputError
from kbsim.inputs.resolve import unsearchable_warnings
from kbsim.params import DayParams
from kbsim.serve.admin import ADMIN_TOOLS, admin_call, admin_tool_list
from kbsim.serve.sessions import OpenSessions
from kbsim.serve.shapes import json_text, output_schema, served_payload, unicode_only
from kbsim.sim.activity import repeating_saves
from kbsim.sim.day import open_day
from kbsim.sim.processes import editor
from kbsim.sim.records import DayLog
from kbsim.sim.world import starting_knowledge_base
from kbsim.store import MemoryStore, SQLiteStore, StoreFileError, ToolError, tool_definitions
from kbsim.store.timefmt import MAX_VERSION_US, MIN_VERSION_US, written_version_us
from kbsim.version import __version__

log = logging.getLogger("kbsim.serve")

DEFAULT_KB_ID = "kb-1"
DEFAULT_SEED = 1
DEFAULT_SPEED = 60.0
#: The fastest served day: a simulated day per wall-clock second.
MAX_SPEED = 86_400.0
DEFAULT_BUSY_TIMEOUT_S = 5.0
#: People's saves in a row the live day may skip before it counts as stopped.
MAX_SKIPPED_SAVES_IN_A_ROW = 100
#: The served clock stops a day short of the last time an updated_at can write
#: (9999-12-31), so that versions can still step by a microsecond after it.
LAST_CLOCK_S = MAX_VERSION_US / 1_000_000 - 86_400.0
FIRST_CLOCK_S = MIN_VERSION_US / 1_000_000


class ServeConfigError(UsageError):
    """Options or a database that cannot be served (names the option or the file)."""


# -- configuration and the served store ------------------------------------------------


def check_speed(speed: float) -> float:
    """``--speed``: simulated seconds per wall-clock second, in (0, MAX_SPEED]."""
    if not 0 < speed <= MAX_SPEED:  # nan fails too
        raise ServeConfigError(
            f"--speed must be > 0 and at most {MAX_SPEED:g} (a simulated day per second), "
            f"got {speed:g}"
        )
    return float(speed)


def check_served(seed: Any, kb_id: Any, grants: Iterable[str] | None = None) -> None:
    """``--seed``, ``--kb-id`` and ``--grant``, before anything is read or built: a seed
    ``numpy`` can seed (0 to 2**63 - 1, as a run's), and ids the tools can carry (the rule of
    an article's own id, :func:`kbsim.store.rules.article_id_problem`: a knowledge base id
    travels in every call, citation and log line, so no control character reaches a
    terminal through it)."""
    from kbsim.store.rules import article_id_problem

    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**63:
        raise ServeConfigError(f"--seed: expected a whole number from 0 to 2**63 - 1, got {seed!r}")
    for flag, value in (("--kb-id", kb_id), *(("--grant", grant) for grant in grants or ())):
        problem = article_id_problem(value)
        if problem is not None:
            raise ServeConfigError(f"{flag}: {problem.replace('the id', 'the knowledge base id')}")


def check_busy_timeout(busy_timeout_s: float) -> float:
    """``--busy-timeout``: seconds a write waits for another process's lock, finite > 0."""
    if not 0 < busy_timeout_s < math.inf:
        raise ServeConfigError(
            f"--busy-timeout must be a number of seconds > 0, got {busy_timeout_s:g}"
        )
    return float(busy_timeout_s)


def served_corpus(params: DayParams, corpus: str | None, language: str | None = None) -> DayParams:
    """The day parameters with ``--corpus`` and ``--language`` applied: a folder or file
    path, ``kbsim:sample``, ``kbsim:sample-de``, ``kbsim:sample-hi``, or ``synthetic`` (the
    seeded synthetic corpus); a language code for the corpus's analyzer. Without
    ``--corpus``, a config that sets nothing under ``corpus`` serves the shipped sample help
    desk. A served corpus from files revises its articles' own text when people save
    (``corpus.edits: revise``) unless the config says otherwise, the English sample too."""
    from kbsim.inputs import SAMPLE

    # only what was given: a count left unset stays unset, so the day is sized to the corpus
    # (DayParams.sized_to) exactly as kbsim run sizes it
    data = params.model_dump(mode="json", exclude_unset=True)
    data.setdefault("corpus", {})
    if corpus is not None or "corpus" not in params.model_fields_set:
        corpus = SAMPLE if corpus is None else corpus
        if corpus == "synthetic":
            data["corpus"].pop("source", None)
        else:
            source = corpus if corpus.startswith("kbsim:") else os.path.abspath(Path(corpus).expanduser())
            data["corpus"] = {"source": source}
    if data["corpus"].get("source") is not None:
        data["corpus"].setdefault("edits", "revise")
        if language is not None:
            data["corpus"]["language"] = language
    elif language is not None:
        raise ServeConfigError(f"--language {language!r}: the synthetic corpus has no language; serve a corpus "
                               "from files (--corpus) to choose one")
    try:
        return DayParams.model_validate(data)
    except ValueError as exc:
        problem = first_problem(exc)
        blamed = language is not None and (corpus is None or problem.startswith("corpus: language"))
        option = f"--language {language!r}" if blamed else f"--corpus {corpus!r}"
        raise ServeConfigError(f"{option}: {problem}") from None


def open_backend(params: DayParams, db: str | Path | None,
                 busy_timeout_s: float = DEFAULT_BUSY_TIMEOUT_S):
    """An empty or persisted store: in memory, or SQLite at ``db``.

    A SQLite file shares its clock among the servers using it (``shared_clock``):
    no version is earlier than the knowledge base's latest event.
    """
    if db is None:
        return MemoryStore(event_retention_s=params.event_retention_s)
    try:
        return SQLiteStore(db, event_retention_s=params.event_retention_s,
                            busy_timeout_s=busy_timeout_s, shared_clock=True)
    except (OSError, RuntimeError, ValueError, ToolError) as exc:
        raise ServeConfigError(f"--db {str(db)!r}: {exc}") from None


def corpus_articles(params: DayParams, seed: int) -> Iterator[tuple[str, str]]:
    """``(title, content)`` of the simulated day's starting articles for this seed, in order."""
    return starting_knowledge_base(params.corpus, seed).articles()


def build_store(params: DayParams, seed: int, db: str | Path | None = None,
                kb_id: str = DEFAULT_KB_ID, busy_timeout_s: float = DEFAULT_BUSY_TIMEOUT_S,
                corpus_given: bool = False):
    """The store to serve: knowledge base ``kb_id`` holding the day's corpus (the
    config's ``corpus.source``, or the seeded synthetic corpus).

    The articles are those the simulated day starts with for the same corpus
    parameters and seed (same ids, titles and bodies), published at simulated
    time 0, all in one transaction: a fill cut short (a kill, Ctrl-C) leaves
    no knowledge base, and the next start fills it again. A SQLite file that
    already holds ``kb_id`` is served as it is (its articles and events
    persist across restarts), and the log says plainly that the corpus is not
    used (a warning when ``corpus_given``: ``--corpus`` or ``--language`` was asked
    for); when another server filled it meanwhile, that whole knowledge base is served.
    """
    try:
        starting = starting_knowledge_base(params.corpus, seed)
    except InputError as exc:
        raise ServeConfigError(f"the corpus: {exc}") from None
    store = open_backend(params, db, busy_timeout_s)
    try:
        if store.has_knowledge_base(kb_id):
            analyzer = getattr(store, "analyzer_name", lambda _: "ascii")(kb_id)
            (log.warning if corpus_given else log.info)(
                "%s already holds the knowledge base %s (%d published articles, analyzer %s): serving "
                "the file's knowledge base as it is; the corpus %s is not used (delete the file to fill it "
                "from the corpus)", db, kb_id, len(store.published_article_ids(kb_id)), analyzer,
                params.corpus.source or "synthetic")
            _warn_if_unlike(store, kb_id, len(starting.article_ids), db)
            return store
        articles = list(starting.articles())
        log.info("filling %s with %d articles (seed %d, analyzer %s)%s", kb_id, len(articles), seed,
                 starting.analyzer.name, f" in {db}" if db is not None else "")
        if starting.loaded is not None:  # as kbsim corpus check warns
            for warning in unsearchable_warnings(starting.loaded, starting.analyzer):
                log.warning("the corpus %s: %s", params.corpus.source, warning)
        own: dict[str, Any] = {} if starting.source_ids is None else {"article_ids": starting.source_ids}
        if not starting.analyzer.is_default:
            own["analyzer"] = starting.analyzer
        try:
            store.create_knowledge_base(kb_id, articles, at=0.0, **own)
        except ToolError as exc:
            if exc.code == "busy" or not store.has_knowledge_base(kb_id):
                raise
            log.info("another server filled %s in %s meanwhile: serving that", kb_id, db)
    except (ToolError, StoreFileError) as exc:
        close = getattr(store, "close", None)
        if close is not None:
            close()
        raise ServeConfigError(f"{_source(db, kb_id)}: {exc}") from None
    return store


def _source(db: str | Path | None, kb_id: str) -> str:
    """What a start-up error is about: the --db file, or (in memory) the --kb-id."""
    return f"--db {str(db)!r}" if db is not None else f"--kb-id {kb_id!r}"


def _warn_if_unlike(store, kb_id: str, corpus_articles: int, db) -> None:
    """Say so when a never-edited knowledge base does not hold the config's corpus."""
    held = store.latest_sequence(kb_id)
    if len(store.published_article_ids(kb_id)) == held != corpus_articles:
        log.warning(
            "%s in %s holds %d articles and no edits, but the config's corpus has %d: "
            "serving the file as it is (delete it to fill it from the config)",
            kb_id, db, held, corpus_articles,
        )


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
    return written_version_us(page["events"][-1]["updated_at"]) / 1_000_000


class DayClock:
    """Simulated seconds since the served day began, at ``speed`` x wall-clock time.

    ``speed`` is at most :data:`MAX_SPEED`, and the clock stops at
    :data:`LAST_CLOCK_S`, a day before the last time an ``updated_at`` can
    write: it never produces a time the store must refuse.
    """

    def __init__(self, speed: float, start_s: float = 0.0) -> None:
        if not 0 < speed <= MAX_SPEED:
            raise ValueError(f"speed must be > 0 and at most {MAX_SPEED:g}, got {speed!r}")
        if not FIRST_CLOCK_S <= start_s <= LAST_CLOCK_S:
            raise ValueError(
                f"start_s must be within {FIRST_CLOCK_S:g} and {LAST_CLOCK_S:g}, got {start_s!r}"
            )
        self.speed = speed
        self.start_s = start_s
        self._wall_start = time.monotonic()

    def __call__(self) -> float:
        """The simulated time now, in seconds: the wall time since start, sped up, stopped at the last."""
        return min(self.start_s + (time.monotonic() - self._wall_start) * self.speed, LAST_CLOCK_S)


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


def live_people(env, store, lock: threading.Lock, kb_id: str, params: DayParams, seed: int,
                log_to: DayLog):
    """The simulated day's people, saving the served store from ``env.now`` on, day after day.

    The served day is built from the simulation's own parts (:func:`~kbsim.sim.day.open_day`):
    people pick published articles by the day's save popularity and save through the
    store's own save path with the day's ``editor`` process, each store call under
    ``lock``; their first day makes exactly the saves of ``run_day(params, seed)``'s people.
    """
    day = open_day(params, seed, LockedStore(store, lock), env=env, kb_id=kb_id, log=log_to)
    return editor(day, repeating_saves(day))


def _sized_note(params: DayParams, articles: int) -> str:
    """How a corpus from files sized the day's saves, for the start-up line."""
    if params.corpus.source is None:
        return ""
    return (f" (corpus {params.corpus.source}: {articles} articles; a count not given is 0.75 saves per "
            "article a day, set saves.count to choose)")


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
        try:
            day = open_day(params, seed, LockedStore(served.store, served.lock), env=env,
                           kb_id=served.kb_id, log=day_log)
            arrivals, in_a_row = iter(repeating_saves(day)), 0
            while True:  # one editor process until a save fails; then the next arrival
                done = len(day_log.saves)
                env.process(editor(day, arrivals))
                try:
                    env.run()
                    return
                except Exception as exc:  # noqa: BLE001 - a save the store cannot apply
                    in_a_row = 1 if len(day_log.saves) > done else in_a_row + 1
                    served.skipped_saves.append((env.now, f"{type(exc).__name__}: {exc}"))
                    log.warning("live: skipped a person's save at %.1f s that could not be applied (%s: %s)",
                                env.now, type(exc).__name__, exc)
                    if in_a_row >= MAX_SKIPPED_SAVES_IN_A_ROW:
                        raise RuntimeError(f"{in_a_row} saves in a row could not be applied, the last: {exc}") from exc
        except BaseException as exc:  # noqa: BLE001 - reported to the clients and the exit status
            served.stop_live(f"the live day stopped at simulated {env.now:.1f} s after {len(day_log.saves)} saves "
                             f"({type(exc).__name__}: {exc}); restart the server")

    thread = threading.Thread(target=run, name="kbsim-live-people", daemon=True)
    thread.start()
    return thread


# -- the MCP face -----------------------------------------------------------------------


class ServedKnowledgeBase:
    """A store, the knowledge base it serves, the agent's client and the lock they share."""

    def __init__(self, store, kb_id: str, grants: Iterable[str], clock: DayClock, *,
                 admin_tools: bool = False) -> None:
        self.store = store
        #: whether the opt-in admin tools (publish, unpublish; kbsim.serve.admin) are served
        self.admin_tools = admin_tools
        self.kb_id = kb_id
        self.clock = clock
        self.lock = threading.Lock()
        self.client = store.client(grants=frozenset(grants), clock=clock)
        #: ``(simulated time, why)`` of each live save skipped because it could not be applied
        self.skipped_saves: list[tuple[float, str]] = []
        #: Why the live day stopped (set once, by its thread), else None
        self.live_failure: str | None = None
        self.live_stopped = threading.Event()
        #: Set once every open session was told that the live day stopped (or could not be):
        #: the transports stop serving then
        self.clients_told = threading.Event()

    def stop_live(self, why: str) -> None:
        """Record that the live day stopped: calls are refused from now on, the server stops."""
        log.error("live: %s", why)
        self.live_failure = why
        self.live_stopped.set()

    def call(self, name: str, arguments: dict[str, Any] | None) -> tuple[dict[str, Any], bool]:
        """Run one tool call; returns ``(payload, is_error)``.

        A ``ToolError`` becomes its ``to_dict()`` (code, message, details);
        absent arguments are an empty object, so missing ones are named.
        """
        try:
            with self.lock:
                if self.admin_tools and name in ADMIN_TOOLS:
                    return admin_call(self.store, self.client.grants, name, arguments or {}, self.clock()), False
                return self.client.call(name, {} if arguments is None else arguments), False
        except ToolError as exc:
            return exc.to_dict(), True


def tool_list() -> list[Any]:
    """The four tools as MCP ``Tool`` objects, straight from ``tools.json``, each with the
    ``outputSchema`` of its ``structuredContent`` (``kbsim/spec/results.json``)."""
    from mcp import types

    return [
        types.Tool(
            name=definition.name,
            description=definition.description,
            input_schema=copy.deepcopy(definition.input_schema),
            output_schema=output_schema(definition.name),
            annotations=types.ToolAnnotations.model_validate(definition.annotations),
        )
        for definition in tool_definitions().values()
    ]


def tool_result(payload: dict[str, Any], is_error: bool):
    """A payload as an MCP tool result: compact JSON text plus structured content."""
    from mcp import types

    payload = unicode_only(payload)
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=json_text(payload))],
        structured_content=payload,
        is_error=is_error,
    )


def build_server(served: ServedKnowledgeBase, *, live: bool = False, sessions: OpenSessions | None = None):
    """A low-level MCP ``Server`` publishing the exact schemas of ``tools.json``, the published
    articles as resources (:mod:`kbsim.serve.resources`) and logging (:mod:`kbsim.serve.sessions`).

    The low-level server does not validate arguments against the input
    schema, so every bad argument reaches the store's validator and comes back
    as a tool error with the store's ``invalid_argument`` code. While it runs (its lifespan)
    it tells subscribers of each change the store commits, and every session when the live
    day stops. ``sessions`` is the list of open sessions it keeps (a new one by default); over
    HTTP the transport tells it when a session has closed (:meth:`OpenSessions.forget`).
    """
    import warnings

    from mcp import types
    from mcp.server.lowlevel import Server
    from mcp.shared.exceptions import MCPDeprecationWarning

    from kbsim.serve.resources import ArticleResources
    tools = tool_list() + (admin_tool_list() if served.admin_tools else [])
    granted = ", ".join(sorted(served.client.grants))
    sessions = OpenSessions() if sessions is None else sessions
    articles = ArticleResources(served, sessions)

    async def on_list_tools(ctx, params) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def on_call_tool(ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
        if served.live_failure is not None:  # never answer from a knowledge base that stopped living
            from mcp.shared.exceptions import MCPError

            raise MCPError(types.INTERNAL_ERROR, served.live_failure)
        try:
            payload, is_error = served.call(params.name, params.arguments)
        except StoreFileError as exc:  # the file failed under us: a JSON-RPC internal error
            from mcp.shared.exceptions import MCPError

            log.error("%s: %s", params.name, exc)
            raise MCPError(types.INTERNAL_ERROR, str(exc)) from None
        if is_error:
            log.info("%s -> %s: %s", params.name, payload["code"], payload["message"])
        return tool_result(payload if is_error else served_payload(params.name, payload), is_error)

    instructions = (
        f"A simulated knowledge base ({served.kb_id}; granted: {granted}). "
        + ("People keep editing it while you work: citations go stale and edits can conflict. "
           if live else "")
        + "Errors come back as JSON {code, message}. Published articles are also resources; "
        "subscribe to one to hear when it changes."
    )
    with warnings.catch_warnings():  # logging is deprecated from protocol 2026-07-28 on; clients of 2025 use it
        warnings.simplefilter("ignore", MCPDeprecationWarning)
        server = Server(
            "kbsim",
            version=__version__,
            instructions=instructions,
            lifespan=_lifespan(served, sessions, articles),
            on_list_tools=on_list_tools,
            on_call_tool=on_call_tool,
            on_list_resources=articles.on_list,
            on_list_resource_templates=articles.on_list_templates,
            on_read_resource=articles.on_read,
            on_subscribe_resource=articles.on_subscribe,
            on_unsubscribe_resource=articles.on_unsubscribe,
            on_completion=articles.on_complete,
            on_set_logging_level=sessions.on_set_level,
        )
    server.middleware.append(sessions.middleware)
    return server


def _lifespan(served: ServedKnowledgeBase, sessions, articles):
    """The server's lifespan: while it serves, subscribers hear of each change the store
    commits (whichever thread commits it), and every session hears when the live day stops."""

    @contextlib.asynccontextmanager
    async def lifespan(_server):
        import asyncio

        import anyio

        loop = asyncio.get_running_loop()
        send, receive = anyio.create_memory_object_stream[tuple[Any, frozenset[str]]](math.inf)

        def queue(item) -> None:
            with contextlib.suppress(anyio.ClosedResourceError):
                send.send_nowait(item)

        def heard(change, subscribers) -> None:  # in the thread that committed the change
            with contextlib.suppress(RuntimeError):  # the loop has closed: the server is stopping
                loop.call_soon_threadsafe(queue, (change, subscribers))

        with served.lock:
            stop_listening = served.store.listen(heard)
        try:
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(articles.deliver, receive)
                tasks.start_soon(_tell_when_live_stops, served, sessions)
                try:
                    yield {}
                finally:
                    tasks.cancel_scope.cancel()
        finally:
            send.close()
            with served.lock:
                stop_listening()

    return lifespan


async def _tell_when_live_stops(served: ServedKnowledgeBase, sessions) -> None:
    """Once the live day stops: a ``critical`` log notification naming why to every open
    session (over stdio and HTTP alike), then :attr:`ServedKnowledgeBase.clients_told`."""
    import anyio

    while not served.live_stopped.is_set():
        await anyio.sleep(0.1)
    with anyio.move_on_after(2):
        told = await sessions.log("critical", served.live_failure)
        log.info("live: told %d of %d open sessions that the live day stopped", told, len(sessions))
    served.clients_told.set()


async def _serve_stdio(server, served: ServedKnowledgeBase | None = None) -> None:
    """Serve until the client disconnects, or (``served`` live) until its live day stops:
    then the client gets a ``notifications/message`` naming why (the server's lifespan sends
    it), and serving ends."""
    import anyio

    from kbsim.serve.stdio import answering_stdio_server

    async with answering_stdio_server() as (read_stream, write_stream):
        async with anyio.create_task_group() as tasks:

            async def watch_live(live: ServedKnowledgeBase) -> None:
                waited = 0.0
                while not live.clients_told.is_set() and waited < 5.0:
                    await anyio.sleep(0.1)
                    waited = waited + 0.1 if live.live_stopped.is_set() else 0.0
                tasks.cancel_scope.cancel()

            if served is not None:
                tasks.start_soon(watch_live, served)
            await server.run(read_stream, write_stream, server.create_initialization_options())
            tasks.cancel_scope.cancel()


def serve_stdio(server, served: ServedKnowledgeBase | None = None) -> None:
    """Serve ``server`` over stdin and stdout until the client disconnects (the default transport),
    or (``served`` live) until its live day stops, which the clients are told."""
    import anyio

    log.info("over stdio: stdout carries the protocol")
    anyio.run(_serve_stdio, server, served)


def serve(params: DayParams, *, seed: int = DEFAULT_SEED, db: str | Path | None = None,
          kb_id: str = DEFAULT_KB_ID, grants: Iterable[str] | None = None, live: bool = False,
          speed: float = DEFAULT_SPEED,
          busy_timeout_s: float = DEFAULT_BUSY_TIMEOUT_S, corpus_given: bool = False,
          admin_tools: bool = False, transport: Callable[..., None] = serve_stdio) -> None:
    """Build the store and serve it until the transport returns.

    ``transport`` runs the MCP server :func:`build_server` makes: :func:`serve_stdio` (until
    the client disconnects) or ``functools.partial(kbsim.serve.http.run_http, address)``
    (Streamable HTTP, until SIGINT or SIGTERM). Either way the same tools and store.
    """
    from kbsim.extras import require

    require("serve", "mcp", "kbsim serve")
    check_served(seed, kb_id, grants)
    clock_speed = check_speed(float(speed))
    busy_timeout_s = check_busy_timeout(float(busy_timeout_s))
    store = build_store(params, seed, db=db, kb_id=kb_id, busy_timeout_s=busy_timeout_s,
                        corpus_given=corpus_given)
    articles = len(starting_knowledge_base(params.corpus, seed).article_ids)
    sized = params.sized_to(articles)
    try:
        start_s = latest_event_time_s(store, kb_id)
        published = len(store.published_article_ids(kb_id))
        if not FIRST_CLOCK_S <= start_s <= LAST_CLOCK_S:
            raise ServeConfigError(
                f"{_source(db, kb_id)}: {kb_id}'s latest event is at {start_s:g} s, outside the "
                f"served clock's range ({FIRST_CLOCK_S:g} to {LAST_CLOCK_S:g} s)"
            )
    except (ToolError, StoreFileError, ServeConfigError) as exc:
        close = getattr(store, "close", None)
        if close is not None:
            close()
        if isinstance(exc, ServeConfigError):
            raise
        raise ServeConfigError(f"{_source(db, kb_id)}: {exc}") from None
    clock = DayClock(clock_speed, start_s=start_s)
    served = ServedKnowledgeBase(store, kb_id, grants or [kb_id], clock, admin_tools=admin_tools)
    log.info("serving %s (%d published articles, seed %d, day clock from %.1f s) to grants %s",
             kb_id, published, seed, clock.start_s, sorted(served.client.grants))
    if live:
        log.info("live: people save %d times per %g simulated hours%s, %gx wall-clock time",
                 sized.saves.count, sized.day_hours, _sized_note(params, articles), clock.speed)
        start_live_people(served, sized, seed)
    try:
        sessions = OpenSessions()
        if transport is serve_stdio:  # ends when the live day stops, once the client was told
            serve_stdio(build_server(served, live=live, sessions=sessions), served if live else None)
        else:  # over HTTP a session ends by DELETE or expiry: forgotten, its subscriptions ended
            stop = {"stop": served.clients_told} if live else {}  # live: every session is told, then it stops
            transport(build_server(served, live=live, sessions=sessions), on_session_closed=sessions.forget, **stop)
    finally:
        close = getattr(store, "close", None)
        if close is not None:
            with served.lock:
                close()
    if served.live_failure is not None:
        raise ServeConfigError(f"--live: {served.live_failure}")
