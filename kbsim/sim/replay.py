"""Trace-driven days: logs of saves and questions read into a day's sources of activity.

:class:`ReplayedSaves` and :class:`ReplayedQuestions` are sources of activity
(:mod:`kbsim.sim.activity`) built from the rows of a trace: each arrival names its
article and happens at exactly its recorded time. The day runs its checks and the
agent's edits over them as over synthetic arrivals, from the same random streams:
every replayed save and question still draws its block of uniforms, and when edits
run past the end of the day people keep saving at the trace's rate (``tail`` stream).

The other way, a simulated day written as such logs, is :mod:`kbsim.sim.export`:
exported and replayed, a day gives identical tables.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from kbsim.inputs import LoadedCorpus, load_corpus
from kbsim.inputs.traces import ArticleIndex, QuestionRow, SaveRow, read_questions_trace, read_saves_trace
from kbsim.params import DayParams
from kbsim.sim.activity import (
    QuestionArrival,
    QuestionSource,
    SaveArrival,
    SaveSource,
    synthetic_questions,
    synthetic_saves,
    tail_saves,
)
from kbsim.sim.world import starting_knowledge_base
from kbsim.store import DAY_START, article_id_for

if TYPE_CHECKING:
    from kbsim.sim.world import Day

__all__ = [
    "ReplayedQuestions",
    "ReplayedSaves",
    "activity_sources",
    "article_index",
    "check_inputs",
    "input_digests",
    "load_traces",
]


@dataclass(frozen=True, eq=False)
class ReplayedSaves:
    """People's saves from a trace, then (edits running past the day) Poisson saves at its rate."""

    rows: tuple[SaveRow, ...]

    def __call__(self, day: Day) -> Iterator[SaveArrival]:
        """The trace's saves, then, on a day with edits, synthetic saves after the trace ends."""
        for row in self.rows:
            yield SaveArrival(row.time_s, row.kind, row.article_id, row.content, row.length, row.title, exact=True)
        params = day.params
        if params.edit.enabled and self.rows:
            yield from tail_saves(day, params.day_s, len(self.rows) / params.day_s)


@dataclass(frozen=True, eq=False)
class ReplayedQuestions:
    """Questions from a trace, each about its article or asking its query."""

    rows: tuple[QuestionRow, ...]

    def __call__(self, day: Day) -> Iterator[QuestionArrival]:
        """The trace's questions, exactly as recorded."""
        return (QuestionArrival(row.time_s, row.article_id, row.query, exact=True) for row in self.rows)


def day_start(params: DayParams) -> datetime:
    """The instant ISO times in traces count from."""
    return DAY_START if params.day_start is None else datetime.fromisoformat(params.day_start)


def article_index(params: DayParams, seed: int) -> ArticleIndex:
    """How traces may name the starting articles: kbsim's ids, the corpus's own ids, titles.

    A corpus from files is indexed without being published (the same for every seed);
    the synthetic corpus's titles are the seed's.
    """
    if params.corpus.source is not None:
        return _file_index(load_corpus(params.corpus.source))
    starting = starting_knowledge_base(params.corpus, seed)
    return ArticleIndex(starting.article_ids, [title for title, _ in starting.articles()])


@lru_cache(maxsize=4)
def _file_index(loaded: LoadedCorpus) -> ArticleIndex:
    ids = loaded.ids or [article_id_for(number) for number in range(1, len(loaded) + 1)]
    return ArticleIndex(ids, loaded.titles)


def _signature(path: Path) -> tuple | None:
    try:
        stat = path.stat()
    except OSError:
        return None
    return (str(path.resolve()), stat.st_mtime_ns, stat.st_size, stat.st_ino)


_LOADED: dict[tuple, tuple] = {}


def load_traces(params: DayParams, seed: int) -> tuple[tuple[SaveRow, ...] | None, tuple[QuestionRow, ...] | None]:
    """``(save rows or None, question rows or None)`` of the traces ``params`` names, read
    once per process and version of the files (and, on the synthetic corpus, per seed).

    Raises:
        InputError: naming the file, the line and the column of the first bad row.
    """
    out: list[tuple | None] = []
    for kind, path in (("saves", params.saves.trace), ("questions", params.questions.trace)):
        if path is None:
            out.append(None)
            continue
        corpus_key = (params.corpus.source, _corpus_signature(params)) if params.corpus.source else (params.corpus,
                                                                                                      seed)
        key = (kind, path, _signature(Path(path)), corpus_key, params.day_s, params.day_start)
        if key not in _LOADED:
            read = read_saves_trace if kind == "saves" else read_questions_trace
            rows = read(Path(path), article_index(params, seed), params.day_s, day_start(params))
            if len(_LOADED) >= 8:
                _LOADED.pop(next(iter(_LOADED)))
            _LOADED[key] = rows
        out.append(_LOADED[key])
    return out[0], out[1]


def _corpus_signature(params: DayParams) -> str:
    return load_corpus(params.corpus.source).digest


def check_inputs(params: DayParams, seeds: list[int]) -> None:
    """Read every input file ``params`` names (corpus, traces), so that a bad one is refused
    before anything runs. Traces on the synthetic corpus are checked for every seed (its
    titles are the seed's); on a corpus from files once.

    Raises:
        InputError: naming the file, and the line and column where there is one.
    """
    if params.corpus.source is not None:
        load_corpus(params.corpus.source)
    if params.saves.trace is None and params.questions.trace is None:
        return
    for seed in seeds if params.corpus.source is None else seeds[:1]:
        load_traces(params, seed)


def input_digests(params: DayParams) -> dict[str, str]:
    """SHA-256 of each input file ``params`` names (none for a synthetic day), so that a run's
    id changes when its files do."""
    digests = {}
    if params.corpus.source is not None:
        digests["corpus"] = _corpus_signature(params)
    for kind, path in (("saves", params.saves.trace), ("questions", params.questions.trace)):
        if path is not None:
            digests[kind] = _file_digest(_signature(Path(path)), path)
    return digests


@lru_cache(maxsize=16)
def _file_digest(signature: tuple | None, path: str) -> str:
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return "unreadable"


def activity_sources(params: DayParams, seed: int) -> tuple[SaveSource, QuestionSource]:
    """The day's sources of activity as ``params`` gives them: replayed traces, or synthetic."""
    saves, questions = load_traces(params, seed)
    return (
        synthetic_saves if saves is None else ReplayedSaves(saves),
        synthetic_questions if questions is None else ReplayedQuestions(questions),
    )
