"""Trace-driven days: replay logs of saves and questions, and export a day as such logs.

:class:`ReplayedSaves` and :class:`ReplayedQuestions` are sources of activity
(:mod:`kbsim.sim.activity`) built from the rows of a trace: each arrival names its
article and happens at exactly its recorded time. The day runs its checks and the
agent's edits over them as over synthetic arrivals, from the same random streams:
every replayed save and question still draws its block of uniforms, and when edits
run past the end of the day people keep saving at the trace's rate (``tail`` stream).

:func:`export_day` turns a simulated day into the rows that replay it, and
:func:`export_run` does so for a run of a results directory (``kbsim trace export``):
exported and replayed, a day gives identical tables.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from kbsim.errors import UsageError
from kbsim.files import read_regular
from kbsim.inputs.traces import (
    ArticleIndex,
    QuestionRow,
    SaveRow,
    read_questions_trace,
    read_saves_trace,
    write_questions_trace,
    write_saves_trace,
)
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
from kbsim.sim.records import DayLog
from kbsim.store import DAY_START, article_id_for

if TYPE_CHECKING:
    from kbsim.sim.day import Day

__all__ = [
    "ReplayedQuestions",
    "ReplayedSaves",
    "activity_sources",
    "article_index",
    "check_inputs",
    "export_day",
    "export_run",
    "input_digests",
    "load_traces",
]


@dataclass(frozen=True, eq=False)
class ReplayedSaves:
    """People's saves from a trace, then (edits running past the day) Poisson saves at its rate."""

    rows: tuple[SaveRow, ...]

    def __call__(self, day: Day) -> Iterator[SaveArrival]:
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
        from kbsim.inputs import load_corpus

        loaded = load_corpus(params.corpus.source)
        return _file_index(loaded)
    from kbsim.sim.day import starting_knowledge_base

    starting = starting_knowledge_base(params.corpus, seed)
    return ArticleIndex(starting.article_ids, [title for title, _ in starting.articles()])


@lru_cache(maxsize=4)
def _file_index(loaded) -> ArticleIndex:
    ids = [article_id_for(number) for number in range(1, len(loaded) + 1)]
    return ArticleIndex(ids, loaded.titles, loaded.ids)


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
    out = []
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
    from kbsim.inputs import load_corpus

    return load_corpus(params.corpus.source).digest


def check_inputs(params: DayParams, seeds: list[int]) -> None:
    """Read every input file ``params`` names (corpus, traces), so that a bad one is refused
    before anything runs. Traces on the synthetic corpus are checked for every seed (its
    titles are the seed's); on a corpus from files once.

    Raises:
        InputError: naming the file, and the line and column where there is one.
    """
    if params.corpus.source is not None:
        from kbsim.inputs import load_corpus

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


# -- export ----------------------------------------------------------------------------------------


def export_day(log: DayLog, day_s: float) -> tuple[list[SaveRow], list[QuestionRow]]:
    """The rows that replay a day kept with ``keep_activity``: people's saves within the day
    (with the text they wrote) and every question (time, article, query)."""
    if log.save_texts is None or log.questions is None:
        raise ValueError("the day did not keep its activity: simulate it with keep_activity=True")
    if any(save.kind == "publish" for save in log.saves):
        raise ValueError("a day whose people publish new articles (saves.replace_unpublished) cannot be "
                         "exported as traces: a trace names only the articles the day starts with")
    people = [save for save in log.saves if save.actor == "people"]
    saves = [
        SaveRow(save.time_s, save.article_id, save.kind, title, content)
        for save, (title, content) in zip(people, log.save_texts, strict=True)
        if save.time_s <= day_s
    ]
    questions = [QuestionRow(time_s, article_id, query) for time_s, article_id, query in log.questions]
    return saves, questions


class ExportError(UsageError, RuntimeError):
    """A run that cannot be exported: names the run directory and why."""


def export_run(run_dir: str | Path, out_dir: str | Path, *, overwrite: bool = False) -> tuple[Path, Path]:
    """Write ``saves.csv`` and ``questions.csv`` that replay the run in ``run_dir``.

    The run's day is simulated again from its ``run.json`` (parameters and seed), with
    its activity kept, and its tables must equal the run's own: what is written is
    exactly what that run did.
    """
    from kbsim.sim.day import simulate_day

    run_dir, out_dir = Path(run_dir), Path(out_dir)
    try:
        marker = json.loads(read_regular(run_dir / "run.json", 1 << 24, what="run.json"))
        params, seed = DayParams.model_validate(marker["params"]), int(marker["seed"])
    except (OSError, ValueError, KeyError, TypeError, RecursionError) as exc:
        raise ExportError(f"{run_dir}: not a completed run of a results directory (run.json: {exc})") from None
    targets = (out_dir / "saves.csv", out_dir / "questions.csv")
    existing = [str(path) for path in targets if path.exists()]
    if existing and not overwrite:
        raise ExportError(f"{existing[0]} exists; choose another --out or pass --force")
    blocking = next((p for p in (out_dir, *out_dir.parents) if p.exists() and not p.is_dir()), None)
    if blocking is not None:  # refused before the day is simulated again
        raise ExportError(f"{blocking}: is a file; expected a folder for saves.csv and questions.csv (--out)")
    if params.saves.replace_unpublished:
        raise ExportError(f"{run_dir}: a day with saves.replace_unpublished cannot be exported as traces "
                          "(a trace names only the articles the day starts with)")
    tables, log = simulate_day(params, seed, keep_activity=True)
    for name in ("saves", "citations"):
        stored = pd.read_parquet(run_dir / f"{name}.parquet")
        columns = list(tables[name].columns)
        if list(stored.columns[-len(columns):]) != columns or not stored[columns].reset_index(drop=True).equals(
                tables[name]):
            raise ExportError(
                f"{run_dir}: this kbsim simulates a different {name} table for the run's parameters and seed; "
                "export it with the kbsim that wrote it")
    saves, questions = export_day(log, params.day_s)
    try:  # then each file is written atomically: a failure leaves the previous one whole (FileWriteError)
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        problem = "is a file; expected a folder" if out_dir.is_file() else f"cannot create it: {exc.strerror or exc}"
        raise ExportError(f"{out_dir}: {problem} for saves.csv and questions.csv (--out)") from None
    return write_saves_trace(targets[0], saves), write_questions_trace(targets[1], questions)
