"""One simulated day: a :class:`~kbsim.sim.world.Day` (the world its actors share), its
sources of activity, a store, run, tabulated.

:func:`run_day` is the whole of it. Its parts can be swapped by passing them in:
the store (``store=`` a factory of an empty backend), people's saves and
questions (``saves=``, ``questions=``: synthetic arrivals or a replayed log,
:mod:`kbsim.sim.activity`). ``kbsim serve`` builds its served day from the
same parts (:func:`open_day` over its own store). The world is in
:mod:`kbsim.sim.world`, the tables in :mod:`kbsim.sim.tables`.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import gc
import math
import threading
from collections.abc import Callable, Iterator, Mapping
from functools import lru_cache
from statistics import NormalDist
from typing import Any

import numpy as np
import pandas as pd
import simpy

from kbsim.inputs.resolve import refuse_crowded_titles
from kbsim.params import DayParams
from kbsim.sim.activity import QuestionSource, SaveSource
from kbsim.sim.popularity import Popularity, correlated_ranking
from kbsim.sim.processes import Answer, agent_edit, asker, checker, editor
from kbsim.sim.records import DayLog
from kbsim.sim.replay import activity_sources
from kbsim.sim.strategies import resolve
from kbsim.sim.tables import tabulate
from kbsim.sim.world import KB_ID, Agents, Day, StartingKnowledgeBase, day_store, starting_knowledge_base, streams
from kbsim.store import Store, StoreFactory

__all__ = ["agent_edits", "collector_threshold", "open_day", "prepared", "run_day", "simulate_day"]

_STANDARD_NORMAL = NormalDist()
#: A day of at least this many starting articles collects its garbage before its tables are
#: built, so its store (freed only by a collection) is not kept beside them; a smaller day's
#: store is small, and a collection would cost more than the day's tables (a few ms).
COLLECT_BEFORE_TABLES_FROM = 10_000


#: The collector's generation-2 threshold while a day runs (Python's default is 10): a full
#: collection after this many collections of generation 1, not ten. A large day's objects
#: live until it ends (its store's articles, its log's records), so each full collection
#: walked them all and freed next to nothing: at 250x, 11 of them took about 1.2 s.
DAY_GC_THRESHOLD_2 = 100

_threshold_lock = threading.Lock()
_threshold_depth = 0  # days running in this process (threads share the collector)
_threshold_saved: tuple[int, ...] = ()


@contextlib.contextmanager
def collector_threshold(generation_2: int = DAY_GC_THRESHOLD_2) -> Iterator[None]:
    """The garbage collector's generation-2 threshold raised to ``generation_2`` (never
    lowered) inside the block, and the caller's thresholds put back after it, also when it
    raises. Days running at once in threads of one process share the setting: the first
    to start raises it, the last to end puts it back.
    """
    global _threshold_depth, _threshold_saved
    with _threshold_lock:
        if _threshold_depth == 0:
            _threshold_saved = gc.get_threshold()
            first, second, third = _threshold_saved
            gc.set_threshold(first, second, max(third, generation_2))
        _threshold_depth += 1
    try:
        yield
    finally:
        with _threshold_lock:
            _threshold_depth -= 1
            if _threshold_depth == 0:
                gc.set_threshold(*_threshold_saved)


def release_free_memory() -> None:
    """Hand the allocator's free memory back to the system (glibc's ``malloc_trim``; nothing
    where there is none).

    Why: much of what a large day's store frees once the day is run lies in glibc's heap
    (arrays under its mmap threshold, which rises to 32 MiB once such arrays are freed),
    which glibc does not give back by itself, and the tables were built beside that free
    memory rather than in it. At 250x the resident set after the run fell from 686 to
    498 MiB with it.
    """
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@lru_cache(maxsize=1)
def _malloc_trim():
    """The C library's ``malloc_trim`` (glibc's), or None on one without it."""
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim
    except (OSError, AttributeError):
        return None


def open_day(
    params: DayParams,
    seed: int,
    store: Store,
    *,
    env: simpy.Environment | None = None,
    kb_id: str = KB_ID,
    log: DayLog | None = None,
    starting: StartingKnowledgeBase | None = None,
    checked: bool = False,
) -> Day:
    """A day over ``store``, which already holds the starting knowledge base as ``kb_id``.

    The agent's client is granted ``kb_id`` and timed by ``env.now``; the streams are
    ``streams(seed)``; question popularity is Zipf with ``zipf_s`` over the seed's
    ranking (or publication order, ``ranking: by_id``; or a corpus's own popularity
    weights), save popularity the same, a ranking correlated with it
    (``saves.rank_correlation`` below 1), or uniform (``saves.popularity: uniform``).
    ``params`` are sized to the corpus and its titles checked (:func:`prepared`) unless
    ``checked`` says that was done already.
    """
    starting = starting_knowledge_base(params.corpus, seed) if starting is None else starting
    if not checked:
        params = prepared(params, starting)
    env = simpy.Environment() if env is None else env
    rngs = streams(seed)
    weights = starting.weights
    # a corpus's own weights rank it; otherwise the seed's shuffle or publication order
    by_id = params.ranking == "by_id" and weights is None
    ranking = np.arange(len(starting.article_ids)) if by_id else starting.ranking
    articles = list(starting.article_ids)
    questions_by = Popularity(articles, ranking, params.zipf_s, weights=weights)
    saves = params.saves
    if saves.popularity == "uniform":
        saves_by = Popularity(articles, ranking, 0.0)
    elif saves.rank_correlation < 1.0:
        save_ranking = correlated_ranking(ranking, saves.rank_correlation, rngs["save_ranking"])
        save_weights = None
        if weights is not None:  # the same weights, by rank, over the correlated ranking
            save_weights = np.empty_like(weights)
            save_weights[save_ranking] = weights[ranking]
        saves_by = Popularity(articles, save_ranking, params.zipf_s, weights=save_weights)
    else:
        saves_by = questions_by
    return Day(
        env=env,
        store=store,
        client=store.client(grants={kb_id}, clock=lambda: env.now),
        kb_id=kb_id,
        params=params,
        streams=rngs,
        log=DayLog() if log is None else log,
        corpus=starting.corpus,
        questions_by=questions_by,
        saves_by=saves_by,
    )


def prepared(params: DayParams, starting: StartingKnowledgeBase) -> DayParams:
    """``params`` sized to the corpus the day starts from (:meth:`DayParams.sized_to`), its
    title check held to finding every article (a corpus from files), and its strategies
    resolved: what is done once on the way down to a day (the experiment layer does it
    once for every run of a config).

    Raises:
        InputError: the title check could not find some articles by their title.
        StrategyError: a strategy name that names none.
    """
    params = params.sized_to(len(starting.article_ids))  # a corpus from files: saves and questions per article
    if starting.loaded is not None:  # a day built without a config is held to it too
        refuse_crowded_titles(params, starting.loaded)
    resolve(params.checks.strategies)
    return params


def _approval_delays(params: DayParams, uniforms: np.ndarray) -> Iterator[float]:
    """Approval delays from pre-drawn uniforms (inverse CDF), so every delay
    distribution consumes the agent's stream identically."""
    edit = params.edit
    delay_s = edit.delay_s
    assert delay_s is not None  # a day with edits has a delay (params.py's EditParams)
    for u in uniforms:
        if edit.delay_distribution == "fixed":
            yield float(delay_s)
        elif edit.delay_distribution == "exponential":
            yield float(-delay_s * math.log1p(-u))
        else:
            yield float(delay_s * math.exp(edit.lognormal_sigma * _STANDARD_NORMAL.inv_cdf(u)))


def agent_edits(day: Day, edit=agent_edit) -> Callable[[Answer], None]:
    """What the agent does after each answer: maybe edit its first citation (``on_answer``).

    Draws from the ``agent`` stream for every answer, edits on or off, so the same
    answers are edited (after the same uniform delays) in every day of a sweep.
    ``edit(day, answer, delays)`` is the edit process. Without versions in the citations,
    the answering agent first keeps the text it cited, which its checks compare.
    """
    params, rng = day.params, day.streams["agent"]
    retries_per_edit = 1 + params.edit.max_retries

    share = params.edit.share
    cited_text = day.cited_text

    def on_answer(answer: Answer) -> None:
        if cited_text is not None:
            start = len(day.log.citations) - len(answer.citations)
            for i, (cited, content) in enumerate(zip(answer.citations, answer.contents, strict=True)):
                cited_text[start + i] = (cited.cited_title, content)
        chosen = rng.random() < share
        if params.edit.exact_share:  # exactly that share: every fourth answer for 0.25
            chosen = math.floor((answer.answer_id + 1) * share) > math.floor(answer.answer_id * share)
        uniforms = rng.random(retries_per_edit)
        if params.edit.enabled and chosen and answer.citations:
            delays = _approval_delays(params, uniforms)
            day.edits.append(day.env.process(edit(day, answer, delays)))

    return on_answer


def run_day(
    params: DayParams | Mapping[str, Any],
    seed: int,
    *,
    trace: bool = False,
    env: simpy.Environment | None = None,
    store: StoreFactory | None = None,
    saves: SaveSource | None = None,
    questions: QuestionSource | None = None,
    checked: bool = False,
) -> dict[str, pd.DataFrame]:
    """Simulate one day and return its tidy tables.

    The same ``(params, seed)`` gives identical tables. Random streams are
    spawned from ``SeedSequence(seed)`` alone, so days that differ only in
    parameters share common random numbers. This is the day every run of
    :func:`kbsim.run_experiment` simulates, without the results folder.

    Args:
        params: the day: a :class:`~kbsim.params.DayParams`, or a mapping of its
            parameters as a config's ``params`` holds them (nested; durations in
            seconds or with a unit, ``{"edit": {"delay_s": "10min"}}``), validated.
        seed: the day's seed (0 to 2**63 - 1).
        trace: also keep the day's event trace (see :func:`simulate_day`).
        env: the day's environment (see :func:`simulate_day`).
        store: the day's backend (see :func:`simulate_day`).
        saves: the source of people's saves (see :func:`simulate_day`).
        questions: the source of the agent's questions (see :func:`simulate_day`).
        env, store, saves, questions: swap a part of the day (see :func:`simulate_day`).
        checked: ``params`` were sized to their corpus and checked on the way down
            (:func:`prepared`; the experiment layer does it once per config), so the day
            does not do it again.

    Returns:
        ``{"citations": ..., "checks": ..., "detections": ..., "edits": ..., "saves": ...}``,
        one DataFrame per record type, each row carrying the seed
        (:mod:`kbsim.sim.tables` lists the columns).

    Raises:
        pydantic.ValidationError: ``params`` is a mapping that is not a valid day.

    Example:
        >>> from kbsim import run_day
        >>> tables = run_day({"day_hours": 2, "corpus": {"articles": 30},
        ...                   "saves": {"count": 30}, "questions": {"count": 20}}, seed=1)
        >>> sorted(tables)
        ['checks', 'citations', 'detections', 'edits', 'saves']
        >>> int(tables["citations"]["seed"].iloc[0])
        1
    """
    if not isinstance(params, DayParams):
        params = DayParams.model_validate(dict(params), strict=True)
    tables, _ = simulate_day(params, seed, trace=trace, env=env, store=store, saves=saves, questions=questions,
                             checked=checked)
    return tables


def simulate_day(
    params: DayParams,
    seed: int,
    *,
    trace: bool = False,
    env: simpy.Environment | None = None,
    store: StoreFactory | None = None,
    saves: SaveSource | None = None,
    questions: QuestionSource | None = None,
    keep_activity: bool = False,
    checked: bool = False,
):
    """Like :func:`run_day`, also returning the :class:`DayLog` (with the trace if asked).

    Args:
        params: the day, validated.
        seed: the day's seed (0 to 2**63 - 1).
        trace: also keep the day's event trace in the log.
        env: a fresh environment of the caller's (e.g. one that counts scheduled
            events for a benchmark).
        store: builds the empty backend the day runs on, from the retention window
            (default: in memory); it is filled with the starting knowledge base.
        saves: the source of people's saves (default: what ``params`` says: the model's
            synthetic arrivals, or the trace it names, replayed).
        questions: the source of the agent's questions, as ``saves``.
        keep_activity: also keep each save's text and each question's query in the
            log (what :func:`kbsim.sim.export.export_day` writes).
        checked: as :func:`run_day`'s.

    The collector's generation-2 threshold is raised while the day runs
    (:func:`collector_threshold`) and the caller's put back after it.
    """
    with collector_threshold():
        return _simulate_day(params, seed, trace=trace, env=env, store=store, saves=saves, questions=questions,
                             keep_activity=keep_activity, checked=checked)


def _simulate_day(params: DayParams, seed: int, *, trace: bool, env: simpy.Environment | None,
                  store: StoreFactory | None, saves: SaveSource | None, questions: QuestionSource | None,
                  keep_activity: bool, checked: bool):
    """:func:`simulate_day`'s day, with the collector's thresholds already set."""
    starting = starting_knowledge_base(params.corpus, seed)
    if not checked:
        params = prepared(params, starting)
    log = DayLog(trace=[] if trace else None)
    if keep_activity:
        log.save_texts, log.questions = [], []
    day = open_day(params, seed, day_store(starting, params, store), env=env, log=log, starting=starting,
                   checked=True)
    if saves is None or questions is None:
        given_saves, given_questions = activity_sources(params, seed)
        saves = given_saves if saves is None else saves
        questions = given_questions if questions is None else questions
    env = day.env
    if params.uses_design_switches:  # issue 27's switches: the agents, each behind its wire
        day.agents = Agents.open(day)
        day.client = day.agents.desk
    on_answer, checks = agent_edits(day), checker(day)
    env.process(editor(day, saves(day)))
    asking = env.process(asker(day, questions(day), on_answer))
    checking = env.process(checks)
    env.run(until=simpy.AllOf(env, [asking, checking]))
    if day.edits:
        env.run(until=simpy.AllOf(env, day.edits))
    # The tables need only the log: the day's store (its search index is most of a large
    # day's memory) is let go before they are built, not beside them. The answer callback
    # and the checker hold the day too (in their closures), and the environment holds the
    # people's editor, still waiting for its next save, so they all go with it; the day's
    # objects refer to one another, so the store is freed by the next garbage collection,
    # which a large day makes at once (at 1,000,000 articles it frees gigabytes).
    if day.agents is not None:
        log.transport = day.agents.transport_records()
    del day, env, asking, checking, on_answer, checks
    if len(starting.article_ids) >= COLLECT_BEFORE_TABLES_FROM:
        gc.collect()
        release_free_memory()
    return tabulate(log, params, seed), log
