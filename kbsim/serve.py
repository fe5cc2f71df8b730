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
import json
import logging
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import yaml
from pydantic import ValidationError

import kbsim
from kbsim.params import CorpusParams, DayParams
from kbsim.store import MemoryStore, ToolError, tool_definitions

log = logging.getLogger("kbsim.serve")

DEFAULT_KB_ID = "kb-1"
DEFAULT_SEED = 1
DEFAULT_SPEED = 60.0

#: Named random streams, one child of ``SeedSequence(seed)`` each (in this order).
STREAMS = ("corpus", "ranking", "people")

#: The kinds of a person's save, in the order of ``SaveMix``'s fields.
SAVE_KINDS = ("content", "content_and_title", "unpublish")


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


def random_streams(seed: int) -> dict[str, np.random.Generator]:
    """One generator per named stream, spawned from ``SeedSequence(seed)``."""
    children = np.random.SeedSequence(seed).spawn(len(STREAMS))
    return {
        name: np.random.default_rng(child) for name, child in zip(STREAMS, children, strict=True)
    }


_ONSETS = ("b", "d", "f", "g", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z", "br", "st", "tr")
_VOWELS = ("a", "e", "i", "o", "u", "ai", "ou")


@dataclass(frozen=True)
class Corpus:
    """A seeded synthetic corpus: pronounceable words, uniform titles, Zipf-like bodies.

    A stand-in with the interface of the simulation's corpus generator; titles
    are mostly rare words, so a query made of a title finds its article first.
    """

    vocabulary: tuple[str, ...]
    body_cdf: np.ndarray
    params: CorpusParams

    @classmethod
    def build(cls, params: CorpusParams) -> Corpus:
        size = max(params.min_vocabulary, int(params.vocabulary_per_article * params.articles))
        syllables = [onset + vowel for onset in _ONSETS for vowel in _VOWELS]
        n = len(syllables)
        # two-syllable-or-longer words, i written in base n (distinct by construction)
        words = []
        for i in range(n, n + size):
            digits, value = [], i
            while value:
                digits.append(syllables[value % n])
                value //= n
            words.append("".join(reversed(digits)))
        weights = 1.0 / np.arange(1, size + 1, dtype=float)
        return cls(tuple(words), np.cumsum(weights / weights.sum()), params)

    def title(self, rng: np.random.Generator) -> str:
        picks = rng.choice(len(self.vocabulary), size=self.params.title_words, replace=False)
        words = [self.vocabulary[i] for i in picks]
        return " ".join([words[0].capitalize(), *words[1:]])

    def body(self, rng: np.random.Generator) -> str:
        picks = np.searchsorted(self.body_cdf, rng.random(self.params.body_words), side="right")
        picks = np.minimum(picks, len(self.vocabulary) - 1)
        return " ".join(self.vocabulary[i] for i in picks) + "."

    def retitle(self, title: str, rng: np.random.Generator) -> str:
        """The title with one word replaced."""
        words = title.split()
        position = int(rng.integers(len(words)))
        word = self.vocabulary[int(rng.integers(len(self.vocabulary)))]
        words[position] = word.capitalize() if position == 0 else word
        return " ".join(words)

    def articles(self, rng: np.random.Generator) -> list[tuple[str, str]]:
        return [(self.title(rng), self.body(rng)) for _ in range(self.params.articles)]


def open_backend(params: DayParams, db: str | Path | None):
    """An empty or persisted store: in memory, or SQLite at ``db``."""
    if db is None:
        return MemoryStore(event_retention_s=params.event_retention_s)
    sqlite_store = getattr(kbsim, "SQLiteStore", None)
    if sqlite_store is None:
        raise ServeConfigError(
            f"--db {str(db)!r}: this kbsim has no SQLite backend (kbsim.SQLiteStore) yet"
        )
    return sqlite_store(db)


def build_store(params: DayParams, seed: int, db: str | Path | None = None,
                kb_id: str = DEFAULT_KB_ID):
    """The store to serve: knowledge base ``kb_id`` holding the seeded corpus.

    A SQLite file that already holds ``kb_id`` is served as it is (its articles
    and events persist across restarts); otherwise the corpus is published at
    simulated time 0.
    """
    store = open_backend(params, db)
    if store.has_knowledge_base(kb_id):
        log.info("serving the existing knowledge base %s from %s", kb_id, db)
        return store
    store.create_knowledge_base(kb_id)
    corpus = Corpus.build(params.corpus)
    for title, content in corpus.articles(random_streams(seed)["corpus"]):
        store.publish_article(kb_id, title=title, content=content, at=0.0)
    return store


# -- time ------------------------------------------------------------------------------


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


class PeopleSave(NamedTuple):
    """One save a person made while the server was live."""

    time_s: float
    kind: str
    article_id: str
    updated_at: str


class Popularity:
    """Zipf popularity (``rank ** -s``) over a seeded ranking of articles."""

    def __init__(self, article_ids: list[str], ranking: np.ndarray, s: float) -> None:
        self.by_rank = [article_ids[i] for i in ranking]
        weights = np.arange(1, len(self.by_rank) + 1, dtype=float) ** -s
        self.probabilities = weights / weights.sum()

    def draw(self, rng: np.random.Generator, eligible: Callable[[str], bool]) -> str | None:
        """One eligible article by popularity, or None when none is eligible."""
        mask = np.array([eligible(a) for a in self.by_rank])
        if not mask.any():
            return None
        weights = np.where(mask, self.probabilities, 0.0)
        return self.by_rank[int(rng.choice(len(weights), p=weights / weights.sum()))]


def save_times(rng: np.random.Generator, params: DayParams) -> np.ndarray:
    """Offsets (simulated seconds from the day's start) of people's saves, sorted."""
    count, day_s = params.saves.count, params.day_s
    if params.arrivals == "uniform":
        return np.sort(rng.uniform(0.0, day_s, count))
    gaps = rng.exponential(day_s / count, size=4 * count + 16) if count else np.empty(0)
    times = np.cumsum(gaps)
    return times[times < day_s]


def people(env, store, lock: threading.Lock, kb_id: str, rng: np.random.Generator,
           params: DayParams, popularity: Popularity, corpus: Corpus, saves: list[PeopleSave]):
    """People saving articles through the store's own save path for one day.

    Each save picks a published article by popularity and a kind by the save
    mix (content, content and title, unpublish); ``lock`` serialises it with
    the agent's tool calls.
    """
    mix = params.saves.mix
    shares = np.array([mix.content, mix.content_and_title, mix.unpublish])
    start = env.now
    for offset in save_times(rng, params):
        yield env.timeout(max(0.0, start + float(offset) - env.now))
        kind = SAVE_KINDS[int(rng.choice(len(SAVE_KINDS), p=shares / shares.sum()))]
        with lock:
            published = set(store.published_article_ids(kb_id))
            article_id = popularity.draw(rng, published.__contains__)
            if article_id is None:
                continue
            at = env.now
            if kind == "unpublish":
                updated_at = store.unpublish_article(kb_id, article_id, at=at)
            else:
                title = None
                if kind == "content_and_title":
                    title = corpus.retitle(store.article_state(kb_id, article_id).title, rng)
                updated_at = store.save_article(
                    kb_id, article_id, at=at, content=corpus.body(rng), title=title
                )
        saves.append(PeopleSave(at, kind, article_id, updated_at))


def start_live_day(served: ServedKnowledgeBase, params: DayParams, seed: int) -> threading.Thread:
    """Run one day of people's saves against ``served`` in a daemon thread.

    The real-time environment starts at the served clock's current time and
    runs at its speed, so people's ``at`` and the agent's clock agree.
    ``strict=False``: a late step is taken late rather than aborting the day.
    """
    import simpy.rt

    streams = random_streams(seed)
    corpus = Corpus.build(params.corpus)
    with served.lock:
        article_ids = served.store.published_article_ids(served.kb_id)
    ranking = streams["ranking"].permutation(len(article_ids))
    s = params.zipf_s if params.saves.popularity == "zipf" else 0.0
    popularity = Popularity(article_ids, ranking, s)
    saves: list[PeopleSave] = []
    clock = served.clock

    def run() -> None:
        env = simpy.rt.RealtimeEnvironment(
            initial_time=clock(), factor=1.0 / clock.speed, strict=False
        )
        end = env.now + params.day_s
        env.process(
            people(env, served.store, served.lock, served.kb_id, streams["people"], params,
                   popularity, corpus, saves)
        )
        log.info("live: people start saving (%d saves over %.1f simulated hours, "
                 "%.0fx wall-clock)", params.saves.count, params.day_hours, clock.speed)
        try:
            env.run(until=end)
        except Exception:
            log.exception("live: the people process failed after %d saves", len(saves))
            return
        log.info("live: the day is over after %d saves; the knowledge base stays served",
                 len(saves))

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
    served = ServedKnowledgeBase(store, kb_id, grants or [kb_id], DayClock(clock_speed))
    log.info("serving %s (%d published articles, seed %d) to grants %s over stdio",
             kb_id, len(store.published_article_ids(kb_id)), seed, sorted(served.client.grants))
    if live:
        start_live_day(served, params, seed)
    anyio.run(_serve_stdio, build_server(served, live=live))
