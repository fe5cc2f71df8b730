"""One simulated day: wire the store, the actors and the random streams, run, tabulate."""

from __future__ import annotations

import math
from collections.abc import Iterator
from functools import lru_cache
from statistics import NormalDist

import numpy as np
import pandas as pd
import simpy

from kbsim.params import CorpusParams, DayParams
from kbsim.sim.checks import STRATEGIES
from kbsim.sim.corpus import Corpus
from kbsim.sim.popularity import UNIFORMS_PER_DRAW, Popularity
from kbsim.sim.processes import Answer, agent_edit, asker, checker, editor
from kbsim.sim.records import CheckRecord, CitationRecord, DayLog, DetectionRecord, EditRecord, SaveRecord
from kbsim.store import MemoryStore, parse_version

KB_ID = "kb-1"
SAVE_KINDS = ("content", "content_and_title", "unpublish")
#: Named random streams, spawned in this order (a new stream goes last, so the others keep
#: their numbers). ``save_targets`` and ``question_draws`` hand each save and question its
#: own block of uniforms (see :meth:`Popularity.draw`).
STREAMS = ("corpus", "editors", "askers", "agent", "tail", "save_targets", "question_draws")
_STANDARD_NORMAL = NormalDist()


def streams(seed: int) -> dict[str, np.random.Generator]:
    """One independent generator per named stream, all from ``SeedSequence(seed)``."""
    children = np.random.SeedSequence(seed).spawn(len(STREAMS))
    return {name: np.random.default_rng(child) for name, child in zip(STREAMS, children, strict=True)}


def arrival_times(rng: np.random.Generator, count: int, day_s: float, model: str) -> np.ndarray:
    """``count`` uniform times in the day, or a Poisson process with that mean count."""
    if model == "uniform":
        return np.sort(rng.uniform(0.0, day_s, size=count))
    n = rng.poisson(count)
    return np.sort(rng.uniform(0.0, day_s, size=n))


def day_save_arrivals(params: DayParams, rng: np.random.Generator, offset_s: float = 0.0):
    """One day of people's saves as ``(time_s, kind)``, times shifted by ``offset_s``."""
    saves = params.saves
    times = arrival_times(rng, saves.count, params.day_s, params.arrivals)
    kinds = rng.choice(len(SAVE_KINDS), size=len(times), p=save_shares(params))
    for time_s, kind in zip(times, kinds, strict=True):
        yield offset_s + float(time_s), SAVE_KINDS[kind]


def save_shares(params: DayParams) -> list[float]:
    mix = params.saves.mix
    return [mix.content, mix.content_and_title, mix.unpublish]


def _save_arrivals(params: DayParams, rngs) -> Iterator[tuple[float, str]]:
    """The day's saves, then (only when edits run past the day) Poisson saves at the same rate."""
    yield from day_save_arrivals(params, rngs["editors"])
    if not params.edit.enabled or params.saves.count == 0:
        return
    tail = rngs["tail"]
    rate = params.saves.count / params.day_s
    shares = save_shares(params)
    time_s = params.day_s
    while True:
        time_s += float(tail.exponential(1.0 / rate))
        yield time_s, SAVE_KINDS[int(tail.choice(len(SAVE_KINDS), p=shares))]


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


def run_day(
    params: DayParams, seed: int, *, trace: bool = False, env: simpy.Environment | None = None
) -> dict[str, pd.DataFrame]:
    """Simulate one day; returns the tidy tables ``citations``, ``checks``, ``detections``,
    ``edits`` and ``saves``.

    The same ``(params, seed)`` gives identical tables. Random streams are
    spawned from ``SeedSequence(seed)`` alone, so days that differ only in
    parameters share common random numbers.
    """
    tables, _ = simulate_day(params, seed, trace=trace, env=env)
    return tables


@lru_cache(maxsize=8)
def starting_knowledge_base(corpus_params: CorpusParams, seed: int):
    """The corpus, the published knowledge base and the popularity ranking of a seed.

    Built once per ``(corpus params, seed)`` in a process and copied for each
    day (the days of a sweep share their seed's corpus); never mutated.
    """
    rng = streams(seed)["corpus"]
    corpus = Corpus.build(corpus_params)
    store = MemoryStore()
    store.create_knowledge_base(KB_ID)
    article_ids = [
        store.publish_article(KB_ID, title=title, content=body, at=0.0) for title, body in corpus.articles(rng)
    ]
    ranking = rng.permutation(len(article_ids))
    return corpus, store, article_ids, ranking


def simulate_day(params: DayParams, seed: int, *, trace: bool = False, env: simpy.Environment | None = None):
    """Like :func:`run_day`, also returning the :class:`DayLog` (with the trace if asked).

    ``env`` lets a caller supply its own (fresh) environment, e.g. one that
    counts scheduled events for a benchmark.
    """
    rngs = streams(seed)
    corpus, template, article_ids, ranking = starting_knowledge_base(params.corpus, seed)
    store = template.copy(event_retention_s=params.event_retention_s)
    questions_by = Popularity(article_ids, ranking, params.zipf_s)
    saves_by = (
        questions_by if params.saves.popularity == "zipf" else Popularity(article_ids, ranking, 0.0)
    )

    def is_published(article_id: str) -> bool:
        return store.current_version(KB_ID, article_id) is not None

    log = DayLog(trace=[] if trace else None)
    env = simpy.Environment() if env is None else env
    client = store.client(grants={KB_ID}, clock=lambda: env.now)

    rng_editors, rng_askers, rng_agent = rngs["editors"], rngs["askers"], rngs["agent"]
    rng_save_targets = rngs["save_targets"]
    save_arrivals = _save_arrivals(params, rngs)
    question_times = arrival_times(rng_askers, params.questions.count, params.day_s, params.arrivals)

    edit_processes = []
    retries_per_edit = 1 + params.edit.max_retries

    def on_answer(answer: Answer) -> None:
        # Drawn for every answer, edits on or off, so the same answers are edited
        # (after the same uniform delays) in every day of a sweep.
        chosen = rng_agent.random() < params.edit.share
        uniforms = rng_agent.random(retries_per_edit)
        if params.edit.enabled and chosen and answer.citations:
            delays = _approval_delays(params, uniforms)
            edit_processes.append(
                env.process(agent_edit(env, client, store, KB_ID, answer, delays, params, log))
            )

    env.process(
        editor(
            env,
            store,
            KB_ID,
            save_arrivals,
            lambda: saves_by.draw(rng_save_targets.random(UNIFORMS_PER_DRAW).tolist(), is_published),
            corpus,
            rng_editors,
            log,
        )
    )
    asking = env.process(
        asker(
            env,
            client,
            store,
            KB_ID,
            question_times,
            lambda uniforms: questions_by.draw(uniforms, is_published),
            questions_by.rank_of,
            params,
            rngs["question_draws"],
            log,
            on_answer,
        )
    )
    checking = env.process(checker(env, client, store, KB_ID, params, log))
    env.run(until=simpy.AllOf(env, [asking, checking]))
    if edit_processes:
        env.run(until=simpy.AllOf(env, edit_processes))
    return tabulate(log, params, seed), log


def tabulate(log: DayLog, params: DayParams, seed: int) -> dict[str, pd.DataFrame]:
    """The day's records as tidy tables, one row per record, ``seed`` on every row."""
    staleness = _staleness_columns(log.citations, log.saves, params.day_s)
    return {
        "citations": _frame(log.citations, CitationRecord, seed, staleness),
        "checks": _frame(log.checks, CheckRecord, seed),
        "detections": _frame(_detections(log), DetectionRecord, seed),
        "edits": _frame(log.edits, EditRecord, seed),
        "saves": _frame(log.saves, SaveRecord, seed),
    }


def _detections(log: DayLog) -> list[DetectionRecord]:
    """One record per citation and strategy: its first flag and the last check's verdict.

    Empty when the day had no check (every citation is then censored at time 0).
    """
    if log.last_check_s is None:
        return []
    records = []
    for strategy in STRATEGIES:
        first = log.first_flags.get(strategy, {})
        last = log.last_flags.get(strategy, {})
        for index, cited in enumerate(log.citations):
            flagged_s, label = first.get(index, (math.nan, ""))
            records.append(
                DetectionRecord(
                    cited.answer_id, cited.position, strategy, flagged_s, label, index in last, log.last_check_s
                )
            )
    return records


def _frame(records: list, record_type, seed: int, extra: dict[str, pd.Series] | None = None) -> pd.DataFrame:
    """Built column by column: ``seed``, the record's fields, then ``extra``."""
    fields = list(record_type.__dataclass_fields__)
    columns: dict = {"seed": pd.Series(seed, index=range(len(records)), dtype="int64")}
    for name in fields:
        values = [getattr(r, name) for r in records]
        columns[name] = values if records else pd.Series(dtype=object)
    return pd.DataFrame({**columns, **(extra or {})})


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
