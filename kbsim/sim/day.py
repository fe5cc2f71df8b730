"""One simulated day: a :class:`Day` (the world its actors share), its sources of
activity, a store, run, tabulated.

:func:`run_day` is the whole of it. Its parts can be swapped by passing them in:
the store (``store=`` a factory of an empty backend), people's saves and
questions (``saves=``, ``questions=``: synthetic arrivals or a replayed log,
:mod:`kbsim.sim.activity`). ``kbsim serve`` builds its served day from the
same parts (:func:`open_day` over its own store).
"""

from __future__ import annotations

import gc
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from operator import attrgetter
from statistics import NormalDist
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
import simpy

from kbsim.params import CorpusParams, DayParams
from kbsim.sim.activity import QuestionSource, SaveSource
from kbsim.sim.checks import STRATEGIES
from kbsim.sim.corpus import Corpus, TextCorpus
from kbsim.sim.popularity import Popularity, correlated_ranking
from kbsim.sim.processes import Answer, agent_edit, asker, checker, editor
from kbsim.sim.records import CheckRecord, CitationRecord, DayLog, DetectionRecord, EditRecord, SaveRecord
from kbsim.sim.replay import activity_sources
from kbsim.store import Client, MemoryStore, Store, StoreFactory, parse_version
from kbsim.store.written import WrittenArticles

if TYPE_CHECKING:
    from kbsim.inputs import LoadedCorpus

__all__ = [
    "KB_ID",
    "STREAMS",
    "Day",
    "StartingKnowledgeBase",
    "day_store",
    "open_day",
    "run_day",
    "simulate_day",
    "starting_knowledge_base",
    "streams",
    "tabulate",
]

KB_ID = "kb-1"
#: Named random streams, spawned in this order (a new stream goes last, so the others keep
#: their numbers). ``save_targets`` and ``question_draws`` hand each save and question its
#: own block of uniforms (see :meth:`Popularity.draw`); ``save_ranking`` is the noise of a
#: save ranking correlated with the question ranking (``saves.rank_correlation``).
STREAMS = ("corpus", "editors", "askers", "agent", "tail", "save_targets", "question_draws", "save_ranking")
_STANDARD_NORMAL = NormalDist()


def streams(seed: int) -> dict[str, np.random.Generator]:
    """One independent generator per named stream, all from ``SeedSequence(seed)``."""
    children = np.random.SeedSequence(seed).spawn(len(STREAMS))
    return {name: np.random.default_rng(child) for name, child in zip(STREAMS, children, strict=True)}


# -- the knowledge base a day starts from -------------------------------------------------


@dataclass(frozen=True, eq=False)
class StartingKnowledgeBase:
    """A seed's knowledge base at time 0: the corpus that writes people's text, the
    articles in publication order, and their popularity ranking.

    ``ranking[r]`` is the index into ``article_ids`` of the article at popularity
    rank ``r`` (0 = most popular): a seeded shuffle, or the order of ``weights`` (a
    corpus from files with a popularity column). ``template`` holds every article
    published at 0; it is copied for each day, never changed.
    """

    corpus: Corpus | TextCorpus
    article_ids: tuple[str, ...]
    ranking: np.ndarray
    template: MemoryStore
    weights: np.ndarray | None = None
    #: the corpus's own ids of the articles (a corpus from files that has them), or None
    source_ids: tuple[str, ...] | None = None

    def articles(self) -> Iterator[tuple[str, str]]:
        """``(title, content)`` of every article, in publication order."""
        for article_id in self.article_ids:
            article = self.template.article_state(KB_ID, article_id)
            yield article.title, article.content

    def popularity(self, s: float) -> Popularity:
        """Zipf popularity with exponent ``s`` over the ranking (``s = 0``: uniform)."""
        return Popularity(list(self.article_ids), self.ranking, s)


def starting_knowledge_base(corpus_params: CorpusParams, seed: int) -> StartingKnowledgeBase:
    """The corpus, the published knowledge base and the popularity ranking of a seed.

    Built once per ``(corpus params, seed)`` in a process and copied for each
    day (the days of a sweep share their seed's corpus); never mutated. A corpus
    from files is read once per version of the files (:func:`kbsim.inputs.load_corpus`)
    and published once, whatever the seed; only its ranking is the seed's.
    """
    if corpus_params.source is None:
        return _synthetic_knowledge_base(corpus_params, seed)
    from kbsim.inputs import load_corpus

    return _knowledge_base_from(load_corpus(corpus_params.source), seed)


@lru_cache(maxsize=8)
def _synthetic_knowledge_base(corpus_params: CorpusParams, seed: int) -> StartingKnowledgeBase:
    rng = streams(seed)["corpus"]
    corpus = Corpus.build(corpus_params)
    template = MemoryStore()
    title_words, body_words = corpus.article_words(rng)  # indexed from the words, written when read
    article_ids = template.create_knowledge_base_written(
        KB_ID, WrittenArticles(corpus.vocabulary, title_words, body_words), at=0.0
    )
    ranking = rng.permutation(len(article_ids))
    # the template lives as long as its seed's days: the collector need not walk it again
    gc.freeze()
    return StartingKnowledgeBase(corpus, tuple(article_ids), ranking, template)


@lru_cache(maxsize=8)
def _knowledge_base_from(loaded: LoadedCorpus, seed: int) -> StartingKnowledgeBase:
    """A corpus from files: its articles in file order; ranked by its popularity weights (ties
    in file order), or, without them, by the seed's shuffle as the synthetic corpus is."""
    template, text = _published(loaded)
    article_ids = tuple(template.published_article_ids(KB_ID))
    if loaded.weights is not None:
        ranking = np.argsort(-loaded.weights, kind="stable")
    else:
        ranking = streams(seed)["corpus"].permutation(len(article_ids))
    return StartingKnowledgeBase(text, article_ids, ranking, template, loaded.weights, loaded.ids)


@lru_cache(maxsize=2)
def _published(loaded: LoadedCorpus) -> tuple[MemoryStore, TextCorpus]:
    template = MemoryStore()
    template.create_knowledge_base(KB_ID, loaded.articles(), at=0.0)
    return template, TextCorpus.from_articles(loaded.titles, loaded.contents)


def day_store(starting: StartingKnowledgeBase, params: DayParams, store: StoreFactory | None = None) -> Store:
    """A store holding the starting knowledge base as ``KB_ID``, with the day's retention.

    ``store`` builds an empty backend from the retention window, which is then
    filled with every article at time 0 (one transaction); without it, the
    in-memory template is copied, which gives the same state faster.
    """
    if store is None:
        return starting.template.copy(event_retention_s=params.event_retention_s)
    backend = store(params.event_retention_s)
    ids = backend.create_knowledge_base(KB_ID, starting.articles(), at=0.0)
    if tuple(ids) != starting.article_ids:
        raise RuntimeError(
            f"{backend!r} numbered the starting articles {ids[:3]}..., not "
            f"{list(starting.article_ids[:3])}...: a backend must number articles in publication order"
        )
    return backend


# -- the day --------------------------------------------------------------------------------


@dataclass(eq=False)
class Day:
    """The world a day's actors share: ``editor(day, arrivals)``, ``asker(day, ...)``,
    ``checker(day)``, ``agent_edit(day, ...)`` read everything from it.

    ``questions_by`` and ``saves_by`` are the popularity people draw the article of a
    question and of a save by (when their arrival does not name it); ``corpus`` writes
    the text of people's saves.
    """

    env: simpy.Environment
    store: Store
    client: Client
    kb_id: str
    params: DayParams
    streams: dict[str, np.random.Generator]
    log: DayLog
    corpus: Corpus | TextCorpus
    questions_by: Popularity
    saves_by: Popularity
    #: agent edit processes started so far (the day runs until they are done)
    edits: list = field(default_factory=list)

    def is_published(self, article_id: str) -> bool:
        return self.store.current_version(self.kb_id, article_id) is not None

    def unpublished_ids(self) -> list[str]:
        """Every unpublished article's id: of the articles the day ranks (each one in its
        store), exactly those :meth:`is_published` refuses."""
        return self.store.unpublished_article_ids(self.kb_id)


def open_day(
    params: DayParams,
    seed: int,
    store: Store,
    *,
    env: simpy.Environment | None = None,
    kb_id: str = KB_ID,
    log: DayLog | None = None,
    starting: StartingKnowledgeBase | None = None,
) -> Day:
    """A day over ``store``, which already holds the starting knowledge base as ``kb_id``.

    The agent's client is granted ``kb_id`` and timed by ``env.now``; the streams are
    ``streams(seed)``; question popularity is Zipf with ``zipf_s`` over the seed's
    ranking (or publication order, ``ranking: by_id``; or a corpus's own popularity
    weights), save popularity the same, a ranking correlated with it
    (``saves.rank_correlation`` below 1), or uniform (``saves.popularity: uniform``).
    """
    starting = starting_knowledge_base(params.corpus, seed) if starting is None else starting
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


def _approval_delays(params: DayParams, uniforms: np.ndarray) -> Iterator[float]:
    """Approval delays from pre-drawn uniforms (inverse CDF), so every delay
    distribution consumes the agent's stream identically."""
    edit = params.edit
    for u in uniforms:
        if edit.delay_distribution == "fixed":
            yield float(edit.delay_s)
        elif edit.delay_distribution == "exponential":
            yield float(-edit.delay_s * math.log1p(-u))
        else:
            yield float(edit.delay_s * math.exp(edit.lognormal_sigma * _STANDARD_NORMAL.inv_cdf(u)))


def agent_edits(day: Day) -> Callable[[Answer], None]:
    """What the agent does after each answer: maybe edit its first citation (``on_answer``).

    Draws from the ``agent`` stream for every answer, edits on or off, so the same
    answers are edited (after the same uniform delays) in every day of a sweep.
    """
    params, rng = day.params, day.streams["agent"]
    retries_per_edit = 1 + params.edit.max_retries

    share = params.edit.share

    def on_answer(answer: Answer) -> None:
        chosen = rng.random() < share
        if params.edit.exact_share:  # exactly that share: every fourth answer for 0.25
            chosen = math.floor((answer.answer_id + 1) * share) > math.floor(answer.answer_id * share)
        uniforms = rng.random(retries_per_edit)
        if params.edit.enabled and chosen and answer.citations:
            delays = _approval_delays(params, uniforms)
            day.edits.append(day.env.process(agent_edit(day, answer, delays)))

    return on_answer


def run_day(
    params: DayParams,
    seed: int,
    *,
    trace: bool = False,
    env: simpy.Environment | None = None,
    store: StoreFactory | None = None,
    saves: SaveSource | None = None,
    questions: QuestionSource | None = None,
) -> dict[str, pd.DataFrame]:
    """Simulate one day; returns the tidy tables ``citations``, ``checks``, ``detections``,
    ``edits`` and ``saves``.

    The same ``(params, seed)`` gives identical tables. Random streams are
    spawned from ``SeedSequence(seed)`` alone, so days that differ only in
    parameters share common random numbers. ``store``, ``saves`` and
    ``questions`` swap a part of the day (see :func:`simulate_day`).
    """
    tables, _ = simulate_day(params, seed, trace=trace, env=env, store=store, saves=saves, questions=questions)
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
):
    """Like :func:`run_day`, also returning the :class:`DayLog` (with the trace if asked).

    Args:
        env: a fresh environment of the caller's (e.g. one that counts scheduled
            events for a benchmark).
        store: builds the empty backend the day runs on, from the retention window
            (default: in memory); it is filled with the starting knowledge base.
        saves, questions: sources of people's activity (default: what ``params``
            says: the model's synthetic arrivals, or the traces it names, replayed).
        keep_activity: also keep each save's text and each question's query in the
            log (what :func:`kbsim.sim.traces.export_day` writes).
    """
    starting = starting_knowledge_base(params.corpus, seed)
    log = DayLog(trace=[] if trace else None)
    if keep_activity:
        log.save_texts, log.questions = [], []
    day = open_day(params, seed, day_store(starting, params, store), env=env, log=log, starting=starting)
    if saves is None or questions is None:
        given_saves, given_questions = activity_sources(params, seed)
        saves = given_saves if saves is None else saves
        questions = given_questions if questions is None else questions
    env = day.env
    env.process(editor(day, saves(day)))
    asking = env.process(asker(day, questions(day), agent_edits(day)))
    checking = env.process(checker(day))
    env.run(until=simpy.AllOf(env, [asking, checking]))
    if day.edits:
        env.run(until=simpy.AllOf(env, day.edits))
    # The tables need only the log: the day's store (its search index is most of a large
    # day's memory) is let go before they are built, not beside them.
    del day, asking, checking
    return tabulate(log, params, seed), log


def tabulate(log: DayLog, params: DayParams, seed: int) -> dict[str, pd.DataFrame]:
    """The day's records as tidy tables, one row per record, ``seed`` on every row."""
    staleness = _staleness_columns(log.citations, log.saves, params.day_s)
    return {
        "citations": _frame(log.citations, CitationRecord, seed, staleness),
        "checks": _frame(log.checks, CheckRecord, seed),
        "detections": _columns_frame(_detection_columns(log), seed),
        "edits": _frame(log.edits, EditRecord, seed),
        "saves": _frame(log.saves, SaveRecord, seed),
    }


def _detection_columns(log: DayLog) -> dict[str, list]:
    """The detections table as columns: one row per citation and strategy, its first flag
    and the last check's verdict (the fields of :class:`DetectionRecord`).

    Empty when the day had no check (every citation is then censored at time 0).
    """
    fields = list(DetectionRecord.__dataclass_fields__)
    if log.last_check_s is None:
        return {name: [] for name in fields}
    answer_ids = [cited.answer_id for cited in log.citations]
    positions = [cited.position for cited in log.citations]
    n = len(answer_ids)
    columns: dict[str, list] = {name: [] for name in fields}
    missing = (math.nan, "")
    for strategy in STRATEGIES:
        first = log.first_flags.get(strategy, {})
        last = log.last_flags.get(strategy, {})
        firsts = [first.get(index, missing) for index in range(n)]
        columns["answer_id"] += answer_ids
        columns["position"] += positions
        columns["strategy"] += [strategy] * n
        columns["first_flagged_s"] += [flagged_s for flagged_s, _ in firsts]
        columns["first_label"] += [label for _, label in firsts]
        columns["flagged_at_last_check"] += [index in last for index in range(n)]
        columns["last_check_s"] += [log.last_check_s] * n
    return columns


def _frame(records: list, record_type, seed: int, extra: dict[str, pd.Series] | None = None) -> pd.DataFrame:
    """Built column by column: ``seed``, the record's fields, then ``extra``."""
    fields = list(record_type.__dataclass_fields__)
    rows = list(map(attrgetter(*fields), records)) if len(fields) > 1 else [(getattr(r, fields[0]),) for r in records]
    values = zip(*rows, strict=True) if records else ([] for _ in fields)
    return _columns_frame(dict(zip(fields, map(list, values), strict=True)), seed, extra)


def _columns_frame(columns: dict[str, list], seed: int, extra: dict[str, pd.Series] | None = None) -> pd.DataFrame:
    """``seed``, then the given columns (each a list, one value a row), then ``extra``."""
    n = len(next(iter(columns.values()), []))
    frame: dict = {"seed": pd.Series(seed, index=range(n), dtype="int64")}
    for name, values in columns.items():
        frame[name] = values if n else pd.Series(dtype=object)
    return pd.DataFrame({**frame, **(extra or {})})


def _staleness_columns(
    citations: list[CitationRecord], saves: list[SaveRecord], day_s: float
) -> dict[str, pd.Series]:
    """When each citation went stale (the first save after its version), when its article was
    first retitled after it, and when unpublished (NaN: not within the simulated time)."""
    version_us = lru_cache(maxsize=None)(parse_version)  # a cited version is usually a save's too
    by_article: dict[str, list[tuple[int, float, str]]] = {}
    for save in saves:
        by_article.setdefault(save.article_id, []).append((version_us(save.version), save.time_s, save.kind))
    first_stale, retitled_s, gone_s = [], [], []
    for cited in citations:
        cited_us = version_us(cited.cited_version)
        stale_at, retitled_at, gone_at = math.nan, math.nan, math.nan
        for save_us, time_s, kind in by_article.get(cited.article_id, ()):
            if save_us > cited_us:
                if math.isnan(stale_at):
                    stale_at = time_s
                if kind == "content_and_title" and math.isnan(retitled_at):
                    retitled_at = time_s
                if kind == "unpublish":
                    gone_at = time_s
                    break
        first_stale.append(stale_at)
        retitled_s.append(retitled_at)
        gone_s.append(gone_at)
    first_stale_s = pd.Series(first_stale, dtype=float)
    gone = pd.Series(gone_s, dtype=float)
    return {
        "first_stale_s": first_stale_s,
        "retitled_s": pd.Series(retitled_s, dtype=float),
        "gone_s": gone,
        "stale_at_end": first_stale_s <= day_s,
        "gone_at_end": gone <= day_s,
    }
