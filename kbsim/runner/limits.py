"""What a run costs, estimated from its parameters, and the limits kbsim holds inputs to.

Two kinds of limit:

* **hard**: what cannot run at all (a seed that does not fit the tables' int64 column, a
  simulated clock past the year 9999, a run that would need more memory than any ordinary
  machine has, a seed list or sweep too long to list). The config is refused when it is
  validated, with a :class:`~kbsim.runner.config.ConfigError` naming the key.
* **confirm**: an experiment big enough to deserve a second look (many runs, hours of CPU,
  gigabytes of results, a run needing gigabytes of memory). ``kbsim run`` prints the
  estimate and runs it only with ``--yes`` (``run_experiment(..., yes=True)``).

The estimates are rough, within a factor of a few of the reference day on an ordinary
laptop core; they exist to catch orders of magnitude before anything is allocated, not to
plan a cluster. Only parameters go in, so they cost microseconds per sweep point.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import UTC, datetime

from kbsim.params import DayParams
from kbsim.runner.grid import MAX_SEED, MAX_SEEDS
from kbsim.store import DAY_START
from kbsim.units import format_bytes, format_duration

__all__ = [
    "CONFIRM_CPU_S",
    "CONFIRM_DISK_BYTES",
    "CONFIRM_RUNS",
    "CONFIRM_RUN_MEMORY_BYTES",
    "MAX_NAME_CHARS",
    "MAX_RUNS",
    "MAX_RUN_MEMORY_BYTES",
    "MAX_SEED",
    "MAX_SEEDS",
    "MAX_TIMELINE_S",
    "ExperimentEstimate",
    "Limit",
    "RunEstimate",
    "estimate_experiment",
    "estimate_run",
]

#: Runs (scenario x sweep point x seed) in one experiment.
MAX_RUNS = 1_000_000
#: Simulated seconds a run may reach: versions are RFC 3339 times, which end with the year 9999.
MAX_TIMELINE_S = (datetime(9999, 12, 31, tzinfo=UTC) - DAY_START).total_seconds()
#: Characters in an experiment's name: it names the results folder, and a file name holds at
#: most 255 bytes (the name is ASCII), with room for kbsim's own suffixes.
MAX_NAME_CHARS = 100
#: Estimated memory of one run above which it is refused outright.
MAX_RUN_MEMORY_BYTES = 64e9

#: Above any of these, ``kbsim run`` prints the estimate and needs ``--yes``.
CONFIRM_RUNS = 10_000
CONFIRM_CPU_S = 2 * 3600.0
CONFIRM_DISK_BYTES = 5e9
CONFIRM_RUN_MEMORY_BYTES = 2e9

# Rough costs, measured on the reference day and its variants, and checked against the
# scale benchmark (benchmarks/RESULTS.md: 1x to 250x within a factor of 2). Memory in
# bytes of the worker process, CPU in seconds.
_PROCESS_BYTES = 150e6  # interpreter, numpy, pandas, pyarrow, simpy
_BYTES_PER_ARTICLE_WORD = 170.0  # the stored article and its search index
_BYTES_PER_VOCABULARY_WORD = 100.0
_BYTES_PER_SAVE = 400.0  # plus 10 per body word: the new content and its postings
_BYTES_PER_QUESTION = 200.0  # plus 500 per citation
_BYTES_PER_CHECK = 3_000.0  # three strategies' records and what they flag
_BYTES_PER_METRIC_HOUR = 600.0
_CPU_BASE_S = 0.025
_CPU_PER_ARTICLE_WORD_S = 1e-6
_CPU_PER_SAVE_WORD_S = 2e-6
_CPU_PER_QUESTION_S = 1.5e-4  # times a search factor: a search costs more in a larger corpus
_CPU_PER_CHECKED_CITATION_S = 3.5e-5  # per check and distinct citation held
_CPU_PER_METRIC_HOUR_CITATION_S = 5e-8
_DISK_PER_RUN_BYTES = 50e3  # five Parquet files' fixed cost, run.json
_DISK_PER_ROW_BYTES = 25.0
_MANIFEST_BYTES_PER_RUN = 160.0


@dataclass(frozen=True)
class Limit:
    """A hard limit a run's parameters break: the parameter(s) to blame and what is wrong."""

    keys: tuple[str, ...]  # dotted DayParams names, the likeliest culprit first
    problem: str


@dataclass(frozen=True)
class RunEstimate:
    """The size of one run, from its parameters alone."""

    saves: float  # in the day, plus those after it while edits wait
    questions: int
    citations: int
    checks: int
    timeline_s: float  # the simulated clock's last second
    memory_bytes: float
    cpu_s: float
    disk_bytes: float
    memory_by_key: tuple[tuple[tuple[str, ...], str, float], ...]  # (keys, what, bytes)
    edit_tail_s: float = 0.0  # how long edits wait past the day's end

    @property
    def _timeline_keys(self) -> tuple[str, ...]:
        """The parameters to blame for the clock's reach: the larger share first (edits that
        wait 1e300 s, not the day they wait past)."""
        day_s = self.timeline_s - self.edit_tail_s
        return ("edit.delay_s", "day_hours") if self.edit_tail_s > day_s else ("day_hours", "edit.delay_s")

    def limits(self) -> list[Limit]:
        """The hard limits this run breaks (empty when it can run)."""
        found = []
        if self.timeline_s > MAX_TIMELINE_S:
            found.append(
                Limit(
                    self._timeline_keys,
                    f"the simulated clock would reach {self.timeline_s:.3g} s, past the year 9999 "
                    f"that versions can name (at most {MAX_TIMELINE_S:.3g} s)",
                )
            )
        if self.memory_bytes > MAX_RUN_MEMORY_BYTES:
            keys, what, _ = max(self.memory_by_key, key=lambda item: item[2])
            found.append(
                Limit(
                    keys,
                    f"{what}: one run would need about {format_bytes(self.memory_bytes, 'estimate')} of memory, "
                    f"more than the {format_bytes(MAX_RUN_MEMORY_BYTES, 'estimate')} kbsim allows a run; "
                    "expected a smaller value",
                )
            )
        return found


def _checks(params: DayParams) -> int:
    """The checker's rounds: at 0, interval, 2 x interval, ... up to the day's end."""
    return int(math.floor(params.day_s / params.checks.interval_s + 1e-9)) + 1


def _edit_tail_s(params: DayParams, edits: float) -> float:
    """How long the last edit may wait past the day's end (a high quantile of the delays)."""
    edit = params.edit
    delay_s = edit.delay_s
    if delay_s is None or not edit.enabled or edits <= 0:  # (an enabled edit has a delay)
        return 0.0
    rounds = 1 + (edit.max_retries if edit.retry_waits_approval else 0)
    n = max(2.0, edits * rounds)
    if edit.delay_distribution == "fixed":
        longest = delay_s
    elif edit.delay_distribution == "exponential":
        longest = delay_s * (math.log(n) + 1.0)
    else:
        longest = delay_s * math.exp(edit.lognormal_sigma * math.sqrt(2.0 * math.log(n)))
    return rounds * longest


def estimate_run(params: DayParams) -> RunEstimate:
    """How big one day of ``params`` is: saves, checks, memory, CPU and disk, roughly."""
    corpus, q = params.corpus, params.questions
    day_s = params.day_s
    checks = _checks(params)
    citations = q.count * q.citations_per_answer
    edits = q.count * params.edit.share if params.edit.enabled else 0.0
    tail_s = _edit_tail_s(params, edits)
    tail_saves = params.saves.count * tail_s / day_s if params.saves.count else 0.0
    saves = params.saves.count + tail_saves
    hours = math.floor(day_s / 3600.0 + 1e-9) + 1
    article_words = corpus.articles * (corpus.title_words + corpus.body_words)
    vocabulary = max(corpus.min_vocabulary, corpus.vocabulary_per_article * corpus.articles)
    save_bytes = _BYTES_PER_SAVE + 10.0 * corpus.body_words
    memory_by_key = (
        (("corpus.articles",), f"corpus.articles {corpus.articles}", article_words * _BYTES_PER_ARTICLE_WORD),
        (
            ("corpus.vocabulary_per_article", "corpus.min_vocabulary"),
            f"a vocabulary of {vocabulary:.3g} words",
            vocabulary * _BYTES_PER_VOCABULARY_WORD,
        ),
        (("saves.count",), f"saves.count {params.saves.count}", params.saves.count * save_bytes),
        (
            ("edit.delay_s", "saves.count"),
            f"about {tail_saves:.3g} saves while edits wait up to {tail_s:.3g} s past the day",
            tail_saves * save_bytes,
        ),
        (
            ("questions.count", "questions.citations_per_answer"),
            f"questions.count {q.count}",
            q.count * (_BYTES_PER_QUESTION + 500.0 * q.citations_per_answer),
        ),
        (
            ("checks.interval_s", "day_hours"),
            f"day_hours {params.day_hours:g} / checks.interval_s {params.checks.interval_s:g} s "
            f"= {checks:.3g} checks",
            checks * _BYTES_PER_CHECK,
        ),
        (("day_hours",), f"day_hours {params.day_hours:g}", hours * _BYTES_PER_METRIC_HOUR),
    )
    memory = _PROCESS_BYTES + sum(item[2] for item in memory_by_key)
    search = max(1.0, corpus.articles / 400.0) ** 0.18  # a tool call: 2.6x slower at 250x the articles
    held = min(citations / 2.0, float(corpus.articles))
    cpu = (
        _CPU_BASE_S
        + article_words * _CPU_PER_ARTICLE_WORD_S
        + saves * corpus.body_words * _CPU_PER_SAVE_WORD_S
        + q.count * _CPU_PER_QUESTION_S * search
        + checks * held * _CPU_PER_CHECKED_CITATION_S * search
        + hours * citations * _CPU_PER_METRIC_HOUR_CITATION_S
    )
    rows = citations + saves + 3 * checks + edits + 3 * hours
    return RunEstimate(
        saves=saves,
        questions=q.count,
        citations=citations,
        checks=checks,
        timeline_s=day_s + tail_s,
        memory_bytes=memory,
        cpu_s=cpu,
        disk_bytes=_DISK_PER_RUN_BYTES + rows * _DISK_PER_ROW_BYTES,
        memory_by_key=memory_by_key,
        edit_tail_s=tail_s,
    )


@dataclass(frozen=True)
class ExperimentEstimate:
    """The size of an experiment: its runs, CPU time, results on disk and largest run."""

    runs: int
    points: int
    seeds: int
    cpu_s: float
    disk_bytes: float
    run_memory_bytes: float  # the largest run's

    def __str__(self) -> str:
        return (
            f"{self.runs} runs ({self.points} points x {self.seeds} seeds), about "
            f"{format_duration(self.cpu_s, 'estimate')} of CPU, {format_bytes(self.disk_bytes, 'estimate')} of results "
            f"and up to {format_bytes(self.run_memory_bytes, 'estimate')} of memory per run"
        )

    def reasons_to_confirm(self) -> list[str]:
        """Which confirmation thresholds this experiment passes (empty: it just runs)."""
        reasons = []
        if self.runs > CONFIRM_RUNS:
            reasons.append(f"more than {CONFIRM_RUNS} runs")
        if self.cpu_s > CONFIRM_CPU_S:
            reasons.append(f"more than {format_duration(CONFIRM_CPU_S, 'estimate')} of CPU")
        if self.disk_bytes > CONFIRM_DISK_BYTES:
            reasons.append(f"more than {format_bytes(CONFIRM_DISK_BYTES, 'estimate')} of results")
        if self.run_memory_bytes > CONFIRM_RUN_MEMORY_BYTES:
            reasons.append(f"more than {format_bytes(CONFIRM_RUN_MEMORY_BYTES, 'estimate')} of memory in a run")
        return reasons


def estimate_experiment(points: list[DayParams], seeds: int) -> ExperimentEstimate:
    """The size of running every one of ``points`` (validated day parameters) with ``seeds`` seeds."""
    runs = [estimate_run(params) for params in points]
    return ExperimentEstimate(
        runs=len(points) * seeds,
        points=len(points),
        seeds=seeds,
        cpu_s=seeds * sum(run.cpu_s for run in runs),
        disk_bytes=seeds * sum(run.disk_bytes + _MANIFEST_BYTES_PER_RUN for run in runs),
        run_memory_bytes=max((run.memory_bytes for run in runs), default=0.0),
    )
