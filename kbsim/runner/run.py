"""Run an experiment's days on a local process pool or a Dask cluster, resumably.

Every scenario x sweep point x seed is one run of :func:`kbsim.sim.run_day`.
A run's id hashes its validated parameters and its seed, so rerunning a config
finds the runs already done and computes only the missing ones, and a config
with more seeds or sweep points extends the results instead of starting anew.

:func:`run_experiment` is a pipeline, each step below this module: the plan (the
config's runs, their jobs and manifest, listed once), the results folder
(:mod:`kbsim.runner.results`: its layout, how a run is verified before it is reused,
how it is read back), the execution (:mod:`kbsim.runner.executors` ship
:mod:`kbsim.runner.worker`'s batches), then the summary (:mod:`kbsim.stats`).

Only the parent process writes, each file atomically (see :mod:`kbsim.runner.results`),
so an interrupt (Ctrl-C, SIGTERM, even SIGKILL) loses at most the batches in
flight, and a full disk stops the sweep with one line and leaves it resumable.
"""

from __future__ import annotations

import collections
import contextlib
import functools
import hashlib
import json
import os
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

import kbsim.runner.results
from kbsim.runner import executors
from kbsim.runner.config import ExperimentConfig, Point, RunSpec, TooLargeError
from kbsim.runner.executors import EXECUTORS, Interrupted, SchedulerUnavailable, Signals
from kbsim.runner.limits import ExperimentEstimate
from kbsim.runner.load import config_from_dict, load_config
from kbsim.runner.results import (
    CONTRASTS,
    DAMAGED,
    DONE,
    DONE_STATE,
    MANIFEST,
    MANIFEST_FORMAT,
    MISSING,
    RELABELLED,
    STALE,
    SUMMARY,
    DamagedResultsError,
    ResultsConflictError,
    ResultsDirectory,
    ResultsError,
    ResultsWriteError,
    RunCheck,
    check_run,
    describe_run,
    load_results,
    read_parquet_bytes,
    run_marker,
    same_manifest,
)
from kbsim.runner.worker import DEFAULT_RUN_DAY, column_dtypes, make_job, run_batch
from kbsim.stats.metrics import COLUMNS
from kbsim.stats.summary import contrasts, summarize
from kbsim.version import __version__

__all__ = [
    "DEFAULT_RUN_DAY",
    "DONE",
    "EXECUTORS",
    "MANIFEST",
    "SUMMARY",
    "DamagedResultsError",
    "ExperimentResult",
    "Interrupted",
    "ResultsConflictError",
    "ResultsError",
    "ResultsWriteError",
    "RunFailure",
    "RunsFailedError",
    "SchedulerUnavailable",
    "TooLargeError",
    "load_results",
    "run_batch",
    "run_experiment",
]


@dataclass(frozen=True)
class RunFailure:
    """A run that raised: recorded under ``errors/`` while the sweep goes on."""

    run_id: str
    scenario: str
    point: dict[str, Any]
    seed: int
    error: str
    traceback: str


class RunsFailedError(RuntimeError):
    """Every run :func:`run_experiment` computed failed: the first failure is named, and
    ``result`` holds the rest (the errors are also under ``errors/`` in the results folder)."""

    def __init__(self, result: ExperimentResult) -> None:
        self.result = result
        first = result.failures[0]
        point = ", ".join(f"{key}={value}" for key, value in first.point.items())
        where = f"{first.scenario}{f' ({point})' if point else ''} seed {first.seed}"
        super().__init__(
            f"{result.config.name}: all {len(result.failures)} runs failed; the first, {where}, raised "
            f"{first.error} (tracebacks: {result.directory / 'errors'})"
        )


class _Summaries:
    """An experiment's summary and contrasts, given or computed on first use.

    Why: drawing the figures runs every experiment again to find nothing missing, and
    summarising every run's metrics was a quarter of its time; when ``summary.csv`` is
    current (:meth:`ResultsDirectory.summary_key_current`), nobody may need the frames.
    """

    def __init__(
        self,
        frames: tuple[pd.DataFrame, pd.DataFrame] | None = None,
        compute: Callable[[], tuple[pd.DataFrame, pd.DataFrame]] | None = None,
    ) -> None:
        self._frames = frames
        self._compute = compute

    def frames(self) -> tuple[pd.DataFrame, pd.DataFrame]:
        if self._frames is None:
            assert self._compute is not None  # one of the two is given
            self._frames, self._compute = self._compute(), None
        return self._frames


@dataclass
class ExperimentResult:
    """What :func:`run_experiment` did and where the results are."""

    config: ExperimentConfig
    directory: Path
    runs_total: int
    runs_reused: int
    runs_computed: int
    failures: list[RunFailure]
    wall_time_s: float
    executor: str
    workers: int
    summaries: _Summaries = field(default_factory=lambda: _Summaries((pd.DataFrame(), pd.DataFrame())), repr=False)
    batch_size: int = 0
    runs_recomputed: int = 0  # found damaged, stale or relabelled, and computed again
    estimate: ExperimentEstimate | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def summary(self) -> pd.DataFrame:
        """:func:`kbsim.summarize` per scenario and sweep point, as ``summary.csv`` holds it
        (computed when first asked for if the stored files were current)."""
        return self.summaries.frames()[0]

    @property
    def contrasts(self) -> pd.DataFrame:
        """The config's declared contrasts, as ``contrasts.csv`` holds them (empty when none)."""
        return self.summaries.frames()[1]

    @property
    def ok(self) -> bool:
        """Whether every run was computed (none failed)."""
        return not self.failures

    def tables(self) -> dict[str, pd.DataFrame]:
        """Every run's tables, concatenated (see :func:`load_results`)."""
        return load_results(self.directory)


def run_experiment(
    config: ExperimentConfig | str | Path | dict,
    out_dir: str | Path = "results",
    *,
    executor: str = "local",
    workers: int | None = None,
    scheduler: str | None = None,
    fresh: bool = False,
    progress: bool = True,
    batch_size: int | None = None,
    run_day: Callable | str = DEFAULT_RUN_DAY,
    log: Callable[[str], None] | None = None,
    yes: bool = False,
) -> ExperimentResult:
    """Run every missing run of ``config`` and summarise all of its runs into ``summary.csv``.

    Results are extended, never mixed up: runs are stored by id (a hash of their
    parameters and seed) under ``out_dir/<experiment name>/``, so more seeds, new sweep
    points or a changed parameter compute only the runs not yet there and reuse every
    other, while the manifest, ``summary.csv`` and :func:`load_results` cover exactly
    this config's runs. Runs of other configs stay on disk (``fresh`` discards them).
    Nothing is refused as "a different config": the experiment's name picks the folder,
    and a folder holding files kbsim did not write, without a manifest, is refused.

    A stored run is reused only if :func:`kbsim.runner.results.check_run` verifies it (sizes,
    sha256, this kbsim and :func:`~kbsim.runner.results.results_layout`, this config's labels);
    otherwise it is recomputed, with one line per damaged run. A read-only folder is
    fine as long as nothing needs writing.

    Args:
        config: an :class:`ExperimentConfig`, a YAML path, or a config dict.
        out_dir: results go to ``out_dir/<experiment name>/``.
        executor: ``"local"`` (a process pool) or ``"dask"``.
        workers: pool size or LocalCluster workers (default ``os.cpu_count()``).
        scheduler: a Dask scheduler address (``tcp://host:port``); implies ``"dask"``.
        fresh: discard existing results of this experiment instead of resuming.
        progress: show a progress bar (only when stderr is a terminal).
        batch_size: runs per task (default: about four tasks per worker, at most 4 runs; 1 run in this process).
        run_day: the day simulation (default :func:`kbsim.sim.day.run_day`), or its import path
            ``"module:function"``.
        log: called with one-line status messages (the CLI prints them).
        yes: run an experiment above :mod:`kbsim.runner.limits`' confirmation thresholds.

    Returns:
        An :class:`ExperimentResult`: the runs total, reused, computed and failed, the
        ``summary`` (:func:`kbsim.summarize` per scenario and sweep point, as written to
        ``summary.csv``), the declared ``contrasts`` and the results ``directory``.

    Example:
        >>> import kbsim
        >>> config = {"name": "tiny", "params": {"day_hours": 2, "corpus": {"articles": 30},
        ...           "saves": {"count": 30}, "questions": {"count": 20}},
        ...           "sweep": {"edit.delay_s": [None, "1min"]}, "seeds": 2}
        >>> result = kbsim.run_experiment(config, "results", workers=1, progress=False)
        >>> result.runs_total, result.ok
        (4, True)
        >>> kbsim.run_experiment(config, "results", workers=1, progress=False).runs_reused
        4

    Raises:
        RunsFailedError: every run there was to compute failed (the first failure is named;
        ``error.result`` is what would have been returned).
        ConfigError: a bad config; TooLargeError (a ConfigError) when it is above the
        thresholds and ``yes`` is not given; ResultsConflictError: another run writes
        the folder, or it holds foreign files; ResultsWriteError: the folder cannot be
        written (read-only, full disk, a file in the way). Interrupted (a
        KeyboardInterrupt) on SIGINT/SIGTERM, after the completed runs are on disk.
    """
    execution = _Execution.checked(executor, workers, scheduler, batch_size, run_day, log)
    say = log or (lambda message: None)
    plan = _plan(_load_config(config, yes), yes)
    results = ResultsDirectory(Path(out_dir) / plan.config.name)
    started = time.perf_counter()
    _refuse_foreign_files(results, fresh)
    results.create()
    if not fresh:
        with results.read_lock() as writable:  # shared: notebooks and figures read one folder at once
            reused = _reuse(results, plan, started, execution, say if writable else lambda line: None)
        if reused is not None:
            return reused
    with contextlib.ExitStack() as stack:
        read_only = _lock(stack, results)
        signals = stack.enter_context(Signals())
        checks, notes, old_manifest = _open_folder(results, plan, fresh, read_only, say)
        todo = in_seed_order([run for run in plan.runs if not checks[run.run_id].done])
        if read_only is not None:
            return _read_only_result(
                read_only, results, plan, checks, todo, notes, old_manifest, started, execution.name
            )
        for note in notes:
            say(note)
        if not same_manifest(old_manifest, plan.manifest):
            results.write_manifest(plan.manifest)
        computed = _compute(results, plan, todo, signals, execution, progress, say)
        done = {run_id for run_id, check in checks.items() if check.done} | computed.metrics.keys()
        inputs = _summary_inputs(plan, checks, computed.metric_sha256)
        if results.summary_key_current(inputs):
            summaries = _Summaries(compute=functools.partial(_summarize, results, plan, {}, done))
        else:
            summary, contrast_rows = _summarize(results, plan, computed.metrics, done)
            written = (
                results.sync_csv(results.summary_path, summary),
                results.sync_csv(results.contrasts_path, contrast_rows),
            )
            results.write_summary_key(inputs, *written)
            summaries = _Summaries((summary, contrast_rows))
    result = ExperimentResult(
        config=plan.config,
        directory=results.path,
        runs_total=len(plan.runs),
        runs_reused=len(plan.runs) - len(todo),
        runs_computed=len(todo) - len(computed.failures),
        failures=computed.failures,
        summaries=summaries,
        wall_time_s=time.perf_counter() - started,
        executor=execution.name,
        workers=computed.workers,
        batch_size=computed.batch_size,
        runs_recomputed=sum(check.state not in (DONE_STATE, MISSING) for check in checks.values()),
        estimate=plan.estimate,
    )
    if todo and len(computed.failures) == len(todo):
        raise RunsFailedError(result)
    return result


# ------------------------------------------------------------------- the plan


@dataclass(frozen=True)
class _Plan:
    """A config's runs and everything derived from them, listed once."""

    config: ExperimentConfig
    points: list[Point]
    estimate: ExperimentEstimate
    runs: list[RunSpec]
    dtypes: dict[str, str | None]  # one per swept column
    jobs: dict[str, dict]  # run id -> what a worker needs (kbsim.runner.worker)
    manifest: dict


def _load_config(config: ExperimentConfig | str | Path | dict, yes: bool = True) -> ExperimentConfig:
    if isinstance(config, ExperimentConfig):
        return config
    if isinstance(config, dict):
        return config_from_dict(config)
    return load_config(config, yes=yes)


def _plan(config: ExperimentConfig, yes: bool) -> _Plan:
    """The config's runs; refused with :class:`TooLargeError`, before they are listed, when the
    estimate is above the confirmation thresholds and ``yes`` is not given."""
    points = config.points()
    estimate = config.estimate(points)
    reasons = estimate.reasons_to_confirm()
    if reasons and not yes:
        raise TooLargeError(
            config.source or config.name,
            "",
            f"{estimate}: {' and '.join(reasons)}; pass --yes (yes=True) to run it anyway",
        )
    runs = config.runs(points)
    dtypes = column_dtypes(config.swept, runs)
    jobs = {run.run_id: make_job(run, dtypes) for run in runs}
    return _Plan(config, points, estimate, runs, dtypes, jobs, _manifest(config, runs))


def in_seed_order(runs: list[RunSpec]) -> list[RunSpec]:
    """The runs to compute, those of one seed next to each other (config order within a seed).

    The days of one seed share its starting knowledge base, which ``run_day`` builds once per
    process and caches, so a worker given neighbouring runs builds it once instead of once per
    run. Results do not depend on the order runs are computed in.
    """
    return sorted(runs, key=lambda run: run.seed)


def _run_record(run: RunSpec) -> dict:
    return {"run_id": run.run_id, "scenario": run.scenario, "point": run.point, "seed": run.seed}


def _labels(run: RunSpec, job: dict) -> dict:
    """What a stored run must say about itself to be reused by this config (as JSON reads back)."""
    return json.loads(json.dumps({**_run_record(run), "columns": job["columns"]}))


def _manifest(config: ExperimentConfig, runs: list[RunSpec]) -> dict:

    return {
        "format": MANIFEST_FORMAT,
        "layout": kbsim.runner.results.results_layout(),
        "experiment": config.name,
        "fingerprint": config.fingerprint(runs),
        "kbsim_version": __version__,
        "config": config.model_dump(mode="json"),
        "swept": config.swept,
        "runs": [_run_record(run) for run in runs],
    }


# ------------------------------------------------------------ the results folder


def _refuse_foreign_files(results: ResultsDirectory, fresh: bool) -> None:
    """A folder with files kbsim did not write is not written into without a manifest, nor
    cleared: it may be someone's work under the experiment's name."""
    foreign = results.foreign_files()
    if not foreign:
        return
    if fresh:
        results.clear()  # refuses, naming the files
    if not results.manifest_path.exists():
        raise ResultsConflictError(
            str(results.path),
            "",
            f"holds files kbsim did not write ({', '.join(foreign[:5])}) and no {MANIFEST}; "
            "expected a kbsim results folder or a new one (choose another --out)",
        )


def _lock(stack: contextlib.ExitStack, results: ResultsDirectory) -> ResultsWriteError | None:
    """Hold the folder's lock for the rest of ``stack``; the write error if it cannot be taken
    (reading is still fine, if nothing needs writing)."""
    try:
        stack.enter_context(results.lock())
    except ResultsWriteError as exc:
        return exc
    return None


def _open_folder(
    results: ResultsDirectory, plan: _Plan, fresh: bool, read_only: ResultsWriteError | None, say: Callable
) -> tuple[dict[str, RunCheck], list[str], dict | None]:
    """Clear the folder if ``fresh``, prepare it (unless read-only), and check every run of the
    plan on disk: ``(checks, notes on what was found, the manifest there was)``."""
    if fresh:
        if read_only:
            raise read_only
        results.clear()
    old_manifest = _previous_manifest(results, say if not read_only else None)
    if read_only is None:
        results.prepare()
    checks, notes = _verify(results, plan)
    return checks, notes, old_manifest


def _reuse(
    results: ResultsDirectory, plan: _Plan, started: float, execution: _Execution, say: Callable[[str], None]
) -> ExperimentResult | None:
    """The result when nothing is to write (under the folder's read lock): the manifest is
    this config's, every run is done and verified, and the summary files are current
    (:meth:`ResultsDirectory.summary_key_current`); else None, and the caller writes.
    ``say`` takes what a writer would say (a read-only folder is read quietly, as before)."""
    try:
        old_manifest = results.read_manifest()
    except DamagedResultsError:
        return None
    if not same_manifest(old_manifest, plan.manifest):
        return None
    checks, notes = _verify(results, plan)
    if not all(check.done for check in checks.values()):
        return None
    if not results.summary_key_current(_summary_inputs(plan, checks, {})):
        return None
    runs, name = plan.runs, plan.config.name
    for note in notes:  # runs on disk that the config does not ask for
        say(note)
    say(f"{name}: {len(runs)} runs, {len(runs)} already done, 0 to run ({execution.name}) -> {results.path}")
    summaries = _Summaries(compute=functools.partial(_summarize, results, plan, {}, set(checks)))
    return _all_reused(results, plan, summaries, started, execution.name, execution.workers, plan.estimate)


def _all_reused(
    results: ResultsDirectory,
    plan: _Plan,
    summaries: _Summaries,
    started: float,
    executor: str,
    workers: int,
    estimate: ExperimentEstimate | None = None,
) -> ExperimentResult:
    """The result of an experiment whose every run was reused: none computed, none failed."""
    return ExperimentResult(
        config=plan.config,
        directory=results.path,
        runs_total=len(plan.runs),
        runs_reused=len(plan.runs),
        runs_computed=0,
        failures=[],
        summaries=summaries,
        wall_time_s=time.perf_counter() - started,
        executor=executor,
        workers=workers,
        estimate=estimate,
    )


def _previous_manifest(results: ResultsDirectory, log: Callable[[str], None] | None) -> dict | None:
    """The manifest on disk, if any; a damaged one is rebuilt from the config (run ids are
    hashes of parameters and seed, so nothing else is lost)."""
    try:
        return results.read_manifest()
    except DamagedResultsError as exc:
        if log:
            log(f"{exc}: rebuilding it from the config")
        return None


def _verify(results: ResultsDirectory, plan: _Plan) -> tuple[dict[str, RunCheck], list[str]]:
    """Check every run of the config on disk; also the lines that say what was found:
    one per damaged run (the first 20), one for runs of another kbsim, layout or labels,
    one for the runs on disk that the config does not ask for."""
    name, runs, jobs = plan.config.name, plan.runs, plan.jobs
    layout = kbsim.runner.results.results_layout()
    checks = {
        run.run_id: check_run(results.run_dir(run.run_id), _labels(run, jobs[run.run_id]), layout=layout)
        for run in runs
    }
    records = {run.run_id: _run_record(run) for run in runs}
    damaged = [(i, c) for i, c in checks.items() if c.state == DAMAGED]
    notes = [f"{name}: {describe_run(records[i])} is damaged: {c.reason}; recomputing it" for i, c in damaged[:20]]
    if len(damaged) > 20:
        notes.append(f"{name}: ... and {len(damaged) - 20} more damaged runs; recomputing them")
    stale = collections.Counter(c.reason for c in checks.values() if c.state == STALE)
    for reason, count in stale.most_common():  # one line per kbsim and layout that wrote them
        notes.append(f"{name}: {count} run{'s were' if count > 1 else ' was'} {reason}; recomputing "
                     f"{'them' if count > 1 else 'it'}")
    relabelled = sum(c.state == RELABELLED for c in checks.values())
    if relabelled:
        notes.append(
            f"{name}: {relabelled} runs were stored under another config's scenario names or swept "
            "columns; recomputing them with this config's"
        )
    others = len(results.run_ids_on_disk() - jobs.keys())
    if others:
        notes.append(
            f"{name}: {others} runs on disk are not in this config: kept, not summarised (--fresh discards them)"
        )
    return checks, notes


def _read_only_result(
    read_only: ResultsWriteError,
    results: ResultsDirectory,
    plan: _Plan,
    checks: dict[str, RunCheck],
    todo: list[RunSpec],
    notes: list[str],
    old_manifest: dict | None,
    started: float,
    executor: str,
) -> ExperimentResult:
    """Every run is done and verified in a folder kbsim cannot write: summarise, write nothing.

    Raises the write error, with what would need writing, when something does."""
    runs = plan.runs
    done = {run.run_id for run in runs} - {run.run_id for run in todo}
    summaries = _Summaries(compute=functools.partial(_summarize, results, plan, {}, done))
    if todo:
        needed = f"{len(todo)} of {len(runs)} runs are to compute"
    elif not same_manifest(old_manifest, plan.manifest):
        needed = f"{MANIFEST} is to rewrite for this config"
    elif results.summary_key_current(_summary_inputs(plan, checks, {})):
        needed = ""
    else:
        summary, contrast_rows = summaries.frames()
        if not summary.empty and results.summary_bytes() != summary.to_csv(index=False).encode():
            needed = f"{SUMMARY} is to rewrite"
        elif not contrast_rows.empty and results.contrasts_bytes() != contrast_rows.to_csv(index=False).encode():
            needed = f"{CONTRASTS} is to rewrite"
        else:
            needed = ""
    if needed:
        why = f" ({notes[0]})" if notes else ""
        raise ResultsWriteError(
            read_only.path, f"{read_only.problem}, and {needed}{why}; expected a writable results folder"
        ) from read_only.__cause__
    return _all_reused(results, plan, summaries, started, executor, workers=0)


def _store_outcome(results: ResultsDirectory, run: RunSpec, job: dict, outcome: dict) -> RunFailure | None:
    """Write one run's files (tables first, the ``run.json`` marker last) or its error."""
    if "error" in outcome:
        failure = RunFailure(
            run.run_id, run.scenario, run.point, run.seed, outcome["error"], outcome["traceback"]
        )
        record = {
            **_run_record(run),
            "params": run.params.model_dump(mode="json"),
            "error": failure.error,
            "traceback": failure.traceback,
        }
        results.write_failure(run.run_id, record)
        return failure
    files = {f"{name}.parquet": data for name, data in outcome["files"].items()}
    record = {**_run_record(run), "columns": job["columns"], "params": run.params.model_dump(mode="json")}
    marker = run_marker(record, files, wall_s=round(outcome["wall_s"], 6))
    results.write_run(run.run_id, files, marker)
    return None


# ------------------------------------------------------------------ the execution


@dataclass(frozen=True)
class _Execution:
    """Where and how the runs to compute are computed (checked before the config is read)."""

    name: str  # one of EXECUTORS
    workers: int
    batch_size: int | None
    run_day: Callable | str
    scheduler: str | None
    log: Callable[[str], None] | None

    @classmethod
    def checked(
        cls,
        executor: str,
        workers: int | None,
        scheduler: str | None,
        batch_size: int | None,
        run_day: Callable | str,
        log: Callable[[str], None] | None,
    ) -> _Execution:
        if scheduler and executor == "local":
            executor = "dask"
        if executor not in EXECUTORS:
            raise ValueError(f"executor: expected one of {EXECUTORS}, got {executor!r}")
        if workers is not None and workers < 1:
            raise ValueError(f"workers: expected at least 1, got {workers}")
        if batch_size is not None and batch_size < 1:
            raise ValueError(f"batch_size: expected at least 1, got {batch_size}")
        return cls(executor, workers or os.cpu_count() or 1, batch_size, run_day, scheduler, log)

    def run(self, jobs: list[dict], handle: Callable[[list[dict]], None]) -> tuple[int, int]:
        """``(workers, runs per batch)`` as used, computing ``jobs`` (none: nothing starts)."""
        if not jobs:
            return self.workers, 0
        if self.name == "local":
            return executors.execute_local(jobs, self.workers, self.batch_size, self.run_day, handle)
        return executors.execute_dask(
            jobs, self.workers, self.batch_size, self.run_day, handle, self.scheduler, self.log
        )


@dataclass
class _Computed:
    """What this session computed: its failures, the metric rows of its runs, and how."""

    failures: list[RunFailure]
    metrics: dict[str, list[tuple]]  # run id -> metric rows: no need to read them back
    metric_sha256: dict[str, str] = field(default_factory=dict)  # run id -> its metrics.parquet's sha256
    workers: int = 0
    batch_size: int = 0


def _compute(
    results: ResultsDirectory,
    plan: _Plan,
    todo: list[RunSpec],
    signals: Signals,
    execution: _Execution,
    progress: bool,
    say: Callable[[str], None],
) -> _Computed:
    """Compute the runs to do, writing each one's files as it arrives (a signal waits until
    they are written), with a progress bar when stderr is a terminal."""
    from tqdm.auto import tqdm

    by_id = {run.run_id: run for run in todo}
    computed = _Computed([], {})
    reused = len(plan.runs) - len(todo)
    say(
        f"{plan.config.name}: {len(plan.runs)} runs, {reused} already done, {len(todo)} to run "
        f"({execution.name}) -> {results.path}"
    )
    bar = tqdm(
        total=len(plan.runs),
        initial=reused,
        unit="run",
        desc=plan.config.name,
        disable=not (progress and sys.stderr.isatty()),
        dynamic_ncols=True,
        smoothing=0.1,
    )

    def handle(outcomes: list[dict]) -> None:
        for outcome in outcomes:
            run = by_id[outcome["run_id"]]
            with signals.deferred():
                failure = _store_outcome(results, run, plan.jobs[run.run_id], outcome)
            if failure is not None:
                computed.failures.append(failure)
                bar.set_postfix(failed=len(computed.failures))
            else:
                computed.metrics[outcome["run_id"]] = outcome["metrics"]
                computed.metric_sha256[outcome["run_id"]] = hashlib.sha256(outcome["files"]["metrics"]).hexdigest()
            bar.update(1)

    try:
        computed.workers, computed.batch_size = execution.run([plan.jobs[run.run_id] for run in todo], handle)
    finally:
        bar.close()
    return computed


# ------------------------------------------------------------------- the summary


def _points_frame(plan: _Plan) -> pd.DataFrame:
    """One row per scenario x sweep point, in run order, the swept columns typed as in the tables."""
    rows = [{"scenario": scenario, **point} for scenario, point, _ in plan.points]
    frame = pd.DataFrame(rows, columns=["scenario", *plan.config.swept])
    for column, dtype in plan.dtypes.items():
        frame[column] = frame[column].astype(dtype)
    return frame


#: The modules whose code shapes summary.csv and contrasts.csv (besides the run's metrics).
_SUMMARY_CODE = ("kbsim.runner.run", "kbsim.stats.summary", "kbsim.stats.intervals", "kbsim.stats.metrics")


@functools.cache
def _summary_code() -> str:
    """A digest of the code and library versions that summarise runs: a changed summary
    (in a checkout, without a new version number) is not taken for the stored one."""
    import importlib

    import numpy
    import scipy

    digest = hashlib.sha256(f"{__version__} {pd.__version__} {numpy.__version__} {scipy.__version__}".encode())
    for name in _SUMMARY_CODE:
        module = importlib.import_module(name)
        digest.update(Path(module.__file__ or "").read_bytes() if module.__file__ else name.encode())
    return digest.hexdigest()


def _summary_inputs(plan: _Plan, checks: dict[str, RunCheck], computed: dict[str, str]) -> str:
    """A digest of everything ``summary.csv`` and ``contrasts.csv`` are computed from: the
    manifest (the config, its runs, this kbsim and results layout), the summarising code, and
    the sha256 of each done run's ``metrics.parquet`` (verified on disk, or ``computed`` now)."""
    manifest = {**plan.manifest, "config": {k: v for k, v in plan.manifest["config"].items() if k != "source"}}
    metrics = []
    for run in plan.runs:
        sha = computed.get(run.run_id)
        check = checks.get(run.run_id)
        if sha is None and check is not None and check.done:
            sha = ((check.marker or {}).get("files") or {}).get("metrics.parquet", {}).get("sha256")
        metrics.append(sha)
    payload = {"code": _summary_code(), "manifest": manifest, "metrics": metrics}
    return hashlib.sha256(json.dumps(payload, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def _summarize(
    results: ResultsDirectory, plan: _Plan, computed: dict[str, list[tuple]], done: set[str]
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Every completed run's metrics summarised per scenario x sweep point (kbsim.stats),
    and the config's declared contrasts between points (empty when it declares none).

    ``computed`` holds the metric rows of the runs computed just now; the other ``done``
    runs (verified, from earlier sessions) are read back from their ``metrics.parquet``.
    """
    config, runs = plan.config, plan.runs
    point_of: dict[str, int] = {}
    seen: dict[tuple, int] = {}
    for run in runs:
        key = (run.scenario, json.dumps(run.point, sort_keys=True))
        point_of[run.run_id] = seen.setdefault(key, len(seen))
    rows: list[tuple] = []
    for run in runs:
        metric_rows: Iterable[tuple] | None = computed.get(run.run_id)
        if metric_rows is None and run.run_id in done:
            path = results.run_dir(run.run_id) / "metrics.parquet"
            table = read_parquet_bytes(path.read_bytes(), columns=list(COLUMNS))
            metric_rows = zip(*(column.to_pylist() for column in table.columns), strict=True)
        if metric_rows is not None:
            point = point_of[run.run_id]
            rows.extend((point, run.seed, *row) for row in metric_rows)
    if not rows:
        return pd.DataFrame(), pd.DataFrame()
    metrics = pd.DataFrame(rows, columns=["point", "seed", *COLUMNS])
    pooled = summarize(metrics, by=["point"])
    points = _points_frame(plan).rename_axis("point").reset_index()
    summary = points.merge(pooled, on="point", how="inner", sort=False)
    summary = summary.sort_values("point", kind="stable").drop(columns="point").reset_index(drop=True)
    specs = config.contrast_specs()
    if not specs:
        return summary, pd.DataFrame()
    per_run = points.merge(metrics, on="point", how="inner", sort=False).drop(columns="point")
    return summary, contrasts(per_run, specs, ["scenario", *config.swept])
