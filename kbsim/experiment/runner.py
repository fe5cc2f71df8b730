"""Run an experiment's days on a local process pool or a Dask cluster, resumably.

Every scenario x sweep point x seed is one run of :func:`kbsim.sim.run_day`.
A run's id hashes its validated parameters and its seed, so rerunning a config
finds the runs already done and computes only the missing ones, and a config
with more seeds or sweep points extends the results instead of starting anew.
The results directory (its layout, how a run is verified before it is reused,
how it is read back) is :mod:`kbsim.experiment.results`; this module executes.

Only the parent process writes, each file atomically (see :mod:`kbsim.experiment.results`),
so an interrupt (Ctrl-C, SIGTERM, even SIGKILL) loses at most the batches in
flight, and a full disk stops the sweep with one line and leaves it resumable.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import json
import logging
import math
import multiprocessing
import os
import signal
import sys
import threading
import time
import traceback
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

import kbsim.experiment.results
from kbsim.experiment.config import ConfigError, ExperimentConfig, RunSpec, config_from_dict, load_config
from kbsim.experiment.limits import ExperimentEstimate
from kbsim.experiment.results import (
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
from kbsim.params import DayParams
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
    "SchedulerUnavailable",
    "TooLargeError",
    "load_results",
    "run_batch",
    "run_experiment",
]

#: Import path of the function that simulates one day.
DEFAULT_RUN_DAY = "kbsim.sim:run_day"
EXECUTORS = ("local", "dask")
_MAX_BATCH = 16


class TooLargeError(ConfigError):
    """An experiment above :mod:`kbsim.experiment.limits`' confirmation thresholds, run without ``yes``."""


class SchedulerUnavailable(ConnectionError):
    """The Dask scheduler given by address cannot be reached."""


class Interrupted(KeyboardInterrupt):
    """SIGINT or SIGTERM arrived; every completed run is safely on disk."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


@dataclass(frozen=True)
class RunFailure:
    """A run that raised: recorded under ``errors/`` while the sweep goes on."""

    run_id: str
    scenario: str
    point: dict[str, Any]
    seed: int
    error: str
    traceback: str


@dataclass
class ExperimentResult:
    """What :func:`run_experiment` did and where the results are."""

    config: ExperimentConfig
    directory: Path
    runs_total: int
    runs_reused: int
    runs_computed: int
    failures: list[RunFailure]
    summary: pd.DataFrame
    wall_time_s: float
    executor: str
    workers: int
    contrasts: pd.DataFrame = field(default_factory=pd.DataFrame)
    batch_size: int = 0
    runs_recomputed: int = 0  # found damaged, stale or relabelled, and computed again
    estimate: ExperimentEstimate | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.failures

    def tables(self) -> dict[str, pd.DataFrame]:
        """Every run's tables, concatenated (see :func:`load_results`)."""
        return load_results(self.directory)


# ------------------------------------------------------------------ the worker


def _import_function(path: str) -> Callable:
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)


def _parquet_bytes(frame: pd.DataFrame) -> bytes:
    buffer = io.BytesIO()
    frame.to_parquet(buffer, index=False, engine="pyarrow")
    return buffer.getvalue()


def _tidy(frame: pd.DataFrame, job: dict, with_seed: bool = False) -> pd.DataFrame:
    """The table with ``scenario``, ``run_id`` (``seed``) and the swept values on every row."""
    n = len(frame)
    front = _front_columns(job, n, with_seed)
    rest = frame.drop(columns=[c for c in front if c in frame.columns]).reset_index(drop=True)
    return pd.concat([pd.DataFrame(front), rest], axis=1)


def _front_columns(job: dict, n: int, with_seed: bool) -> dict[str, pd.Series]:
    """The columns :func:`_tidy` puts in front of a table of ``n`` rows."""
    front: dict[str, pd.Series] = {
        "scenario": pd.Series([job["scenario"]] * n, dtype="str"),
        "run_id": pd.Series([job["run_id"]] * n, dtype="str"),
    }
    if with_seed:
        front["seed"] = pd.Series([job["seed"]] * n, dtype="int64")
    for column, value, dtype in job["columns"]:
        front[column] = pd.Series([value] * n, dtype=dtype)
    return front


class _TidyWriter:
    """``_parquet_bytes(_tidy(frame, job, with_seed))``, byte for byte, without building the
    tidy frame.

    Why it exists: building each table's tidy frame in pandas and converting it to Arrow
    took 14 of the 23 ms a worker spent on a reference run besides simulating it
    (metrics, tidy tables, Parquet). Here pyarrow converts a one-row frame of the front
    columns once per run; each table is converted without them, and the front columns
    are that row repeated, their fields and pandas metadata put in front. It relies on
    ``DataFrame.to_parquet`` being ``Table.from_pandas`` then ``write_table`` with snappy;
    tests/test_runner.py holds the bytes to the plain path's, so a pandas or pyarrow
    that writes otherwise fails there.
    """

    def __init__(self, job: dict, with_seed: bool) -> None:
        import pyarrow as pa

        self._job, self._with_seed = job, with_seed
        one = pa.Table.from_pandas(pd.DataFrame(_front_columns(job, 1, with_seed)), preserve_index=False)
        self._fields = list(one.schema)
        self._names = set(one.schema.names)
        self._values = [column[0] for column in one.columns]
        self._metadata = json.loads(one.schema.metadata[b"pandas"])["columns"]

    def parquet_bytes(self, frame: pd.DataFrame) -> bytes:
        import pyarrow as pa
        import pyarrow.parquet as pq

        if frame.attrs:  # pandas writes attrs into the metadata too: the plain path knows how
            return _parquet_bytes(_tidy(frame, self._job, self._with_seed))
        rest = pa.Table.from_pandas(frame.drop(columns=[c for c in frame.columns if c in self._names]),
                                    preserve_index=False)  # fmt: skip
        pandas_metadata = json.loads(rest.schema.metadata[b"pandas"])
        pandas_metadata["columns"] = self._metadata + pandas_metadata["columns"]
        schema = pa.schema(
            [*self._fields, *rest.schema], metadata={b"pandas": json.dumps(pandas_metadata).encode("utf8")}
        )
        n = len(frame)
        table = pa.Table.from_arrays([*(pa.repeat(value, n) for value in self._values), *rest.columns], schema=schema)
        buffer = io.BytesIO()
        pq.write_table(table, buffer, compression="snappy")
        return buffer.getvalue()


def run_files(job: dict, tables: dict[str, pd.DataFrame], day_s: float) -> tuple[dict[str, bytes], list[tuple]]:
    """What a worker ships for one run: each table and the run's metrics, tidy, as Parquet
    bytes; and the metric rows themselves, which the parent pools into the summary without
    decoding the bytes again."""
    from kbsim.stats.metrics import COLUMNS, run_metrics

    bad = [name for name in tables if not str(name).isidentifier() or name == "metrics"]
    if bad:
        raise ValueError(f"run_day returned tables with unusable names: {bad}")
    writer = _TidyWriter(job, with_seed=False)
    files = {name: writer.parquet_bytes(df) for name, df in tables.items()}
    metrics = run_metrics(tables, day_s=day_s)  # "end" = the day's end
    files["metrics"] = _TidyWriter(job, with_seed=True).parquet_bytes(metrics)
    return files, list(metrics[list(COLUMNS)].itertuples(index=False, name=None))


def run_batch(jobs: list[dict], run_day: str = DEFAULT_RUN_DAY) -> list[dict]:
    """Run a batch of days in this process; each outcome holds Parquet bytes or an error.

    This is the task both executors ship to their workers: plain data in,
    plain data out, nothing written here.
    """
    simulate = _import_function(run_day)
    outcomes = []
    for job in jobs:
        started = time.perf_counter()
        try:
            params = DayParams.model_validate(job["params"])
            files, metric_rows = run_files(job, simulate(params, job["seed"]), params.day_s)
            outcomes.append(
                {
                    "run_id": job["run_id"],
                    "files": files,
                    "metrics": metric_rows,
                    "wall_s": time.perf_counter() - started,
                }
            )
        except Exception as exc:
            outcomes.append(_error_outcome(job, exc, traceback.format_exc()))
    return outcomes


def _error_outcome(job: dict, exc: BaseException, trace: str) -> dict:
    return {"run_id": job["run_id"], "error": f"{type(exc).__name__}: {exc}", "traceback": trace}


def _process_alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie counts as dead: its parent may be waiting on our pipes)."""
    if os.path.isdir("/proc/self"):
        try:
            with open(f"/proc/{pid}/stat") as handle:
                state = handle.read().rpartition(")")[2].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            return False
        return state not in ("Z", "X")
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _worker_init(sweep_pid: int) -> None:
    """Pool workers leave Ctrl-C to the sweep process and exit if it dies (even by SIGKILL).

    The parent is watched by pid, not via ``getppid``: under forkserver a
    worker's parent is the fork server, which itself lives until its workers exit.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)

    def watch() -> None:
        while _process_alive(sweep_pid):
            time.sleep(0.25)
        os._exit(1)

    threading.Thread(target=watch, name="kbsim-orphan-watch", daemon=True).start()


# ------------------------------------------------------------------- executors


def in_seed_order(runs: list[RunSpec]) -> list[RunSpec]:
    """The runs to compute, those of one seed next to each other (config order within a seed).

    The days of one seed share its starting knowledge base, which ``run_day`` builds once per
    process and caches, so a worker given neighbouring runs builds it once instead of once per
    run. Results do not depend on the order runs are computed in.
    """
    return sorted(runs, key=lambda run: run.seed)


def _batches(jobs: list[dict], workers: int, batch_size: int | None) -> list[list[dict]]:
    if batch_size is None:
        batch_size = max(1, min(_MAX_BATCH, math.ceil(len(jobs) / (4 * workers))))
    return [jobs[i : i + batch_size] for i in range(0, len(jobs), batch_size)]


def _execute_local(
    jobs: list[dict],
    workers: int,
    batch_size: int | None,
    run_day: str,
    handle: Callable[[list[dict]], None],
) -> tuple[int, int]:
    """A process pool with an explicit start-method context (nothing global is set)."""
    if "forkserver" in multiprocessing.get_all_start_methods():
        context = multiprocessing.get_context("forkserver")
        # Import the simulation once in the fork server, not once per worker. This only
        # affects a fork server started from now on; the start method stays untouched.
        context.set_forkserver_preload(["__main__", "kbsim.experiment.runner", "kbsim.sim", "kbsim.stats.metrics"])
    else:
        context = multiprocessing.get_context("spawn")
    batches = _batches(jobs, workers, batch_size)
    before = set(multiprocessing.active_children())
    pool = ProcessPoolExecutor(
        max_workers=workers,
        mp_context=context,
        initializer=_worker_init,
        initargs=(os.getpid(),),
    )
    try:
        futures = {pool.submit(run_batch, batch, run_day): batch for batch in batches}
        for future in as_completed(futures):
            batch = futures.pop(future)
            try:
                outcomes = future.result()
            except Exception as exc:  # a worker died (BrokenProcessPool) or could not unpickle
                outcomes = [_error_outcome(job, exc, traceback.format_exc()) for job in batch]
            handle(outcomes)
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        for process in set(multiprocessing.active_children()) - before:
            process.terminate()
        raise
    finally:
        pool.shutdown(wait=True)
    return workers, len(batches[0]) if batches else 0


def _execute_dask(
    jobs: list[dict],
    workers: int,
    batch_size: int | None,
    run_day: str,
    handle: Callable[[list[dict]], None],
    scheduler: str | None,
    log: Callable[[str], None] | None = None,
) -> tuple[int, int]:
    """Batched tasks on an existing cluster (``scheduler``) or a fresh LocalCluster."""
    from distributed import Client, LocalCluster
    from distributed import as_completed as dask_as_completed

    cluster = None
    if scheduler:
        try:
            client = Client(scheduler, timeout="30s")
        except OSError as exc:
            raise SchedulerUnavailable(
                f"scheduler: cannot connect to {scheduler!r} ({exc}); expected the address "
                "of a running Dask scheduler, e.g. tcp://host:8786"
            ) from None
    else:
        cluster = LocalCluster(
            n_workers=workers,
            threads_per_worker=1,
            processes=True,
            dashboard_address=":0",
            silence_logs=logging.ERROR,  # an interrupt's cancellations are expected, not news
        )
        client = Client(cluster)
        if log:
            log(f"dask LocalCluster with {workers} workers, dashboard {client.dashboard_link}")
    futures: dict = {}
    try:
        if scheduler:
            workers = max(1, len(client.scheduler_info().get("workers", {})))
        batches = _batches(jobs, workers, batch_size)
        token = uuid.uuid4().hex[:8]
        for i, batch in enumerate(batches):
            future = client.submit(
                run_batch, batch, run_day, key=f"kbsim-batch-{token}-{i}", pure=False
            )
            futures[future] = batch
        for future in dask_as_completed(list(futures)):
            batch = futures.pop(future)
            try:
                outcomes = future.result()
            except Exception as exc:  # the task itself failed, e.g. a worker was lost
                outcomes = [_error_outcome(job, exc, traceback.format_exc()) for job in batch]
            future.release()
            handle(outcomes)
    except BaseException:
        if futures:
            with contextlib.suppress(Exception):
                client.cancel(list(futures))
        raise
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
    return workers, len(batches[0]) if batches else 0


# ------------------------------------------------------------------ signals


class _Signals:
    """SIGINT/SIGTERM raise :class:`Interrupted`, except while a run's files are written."""

    def __init__(self) -> None:
        self._deferring = False
        self._pending: int | None = None
        self._previous: dict[int, Any] = {}

    def _handler(self, signum: int, frame: Any) -> None:
        if self._deferring:
            self._pending = signum
            return
        raise Interrupted(signum)

    def __enter__(self) -> _Signals:
        if threading.current_thread() is threading.main_thread():
            for signum in (signal.SIGINT, signal.SIGTERM):
                self._previous[signum] = signal.signal(signum, self._handler)
        return self

    def __exit__(self, *exc: Any) -> None:
        for signum, previous in self._previous.items():
            signal.signal(signum, previous)

    @contextlib.contextmanager
    def deferred(self) -> Iterator[None]:
        self._deferring = True
        try:
            yield
        finally:
            self._deferring = False
        if self._pending is not None:
            signum, self._pending = self._pending, None
            raise Interrupted(signum)


# ------------------------------------------------------------------ the sweep


def _column_dtypes(config: ExperimentConfig, runs: list[RunSpec]) -> dict[str, str | None]:
    """One dtype per swept parameter, so every run's column concatenates cleanly."""
    dtypes: dict[str, str | None] = {}
    for column in config.swept:
        values = [run.point[column] for run in runs]
        present = [v for v in values if v is not None]
        if present and all(isinstance(v, bool) for v in present):
            dtypes[column] = "boolean"
        elif present and all(isinstance(v, int) and not isinstance(v, bool) for v in present):
            dtypes[column] = "int64" if len(present) == len(values) else "Int64"
        elif all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in present):
            dtypes[column] = "float64"
        else:
            dtypes[column] = "str"
    return dtypes


def _job(run: RunSpec, dtypes: dict[str, str | None]) -> dict:
    return {
        "run_id": run.run_id,
        "scenario": run.scenario,
        "seed": run.seed,
        "params": run.params.model_dump(mode="json"),
        "columns": [(column, run.point[column], dtypes[column]) for column in run.point],
    }


def _run_record(run: RunSpec) -> dict:
    return {"run_id": run.run_id, "scenario": run.scenario, "point": run.point, "seed": run.seed}


def _labels(run: RunSpec, job: dict) -> dict:
    """What a stored run must say about itself to be reused by this config (as JSON reads back)."""
    return json.loads(json.dumps({**_run_record(run), "columns": job["columns"]}))


def _manifest(config: ExperimentConfig, runs: list[RunSpec]) -> dict:

    return {
        "format": MANIFEST_FORMAT,
        "layout": kbsim.experiment.results.results_layout(),
        "experiment": config.name,
        "fingerprint": config.fingerprint(),
        "kbsim_version": __version__,
        "config": config.model_dump(mode="json"),
        "swept": config.swept,
        "runs": [_run_record(run) for run in runs],
    }


def _load_config(config: ExperimentConfig | str | Path | dict) -> ExperimentConfig:
    if isinstance(config, ExperimentConfig):
        return config
    if isinstance(config, dict):
        return config_from_dict(config)
    return load_config(config)


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
    run_day: str = DEFAULT_RUN_DAY,
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

    A stored run is reused only if :func:`kbsim.experiment.results.check_run` verifies it (sizes,
    sha256, this kbsim and :func:`~kbsim.experiment.results.results_layout`, this config's labels);
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
        batch_size: runs per task (default: about four tasks per worker, at most 16 runs).
        run_day: import path ``"module:function"`` of the day simulation.
        log: called with one-line status messages (the CLI prints them).
        yes: run an experiment above :mod:`kbsim.experiment.limits`' confirmation thresholds.

    Raises:
        ConfigError: a bad config; TooLargeError (a ConfigError) when it is above the
        thresholds and ``yes`` is not given; ResultsConflictError: another run writes
        the folder, or it holds foreign files; ResultsWriteError: the folder cannot be
        written (read-only, full disk, a file in the way). Interrupted (a
        KeyboardInterrupt) on SIGINT/SIGTERM, after the completed runs are on disk.
    """
    if scheduler and executor == "local":
        executor = "dask"
    if executor not in EXECUTORS:
        raise ValueError(f"executor: expected one of {EXECUTORS}, got {executor!r}")
    if workers is not None and workers < 1:
        raise ValueError(f"workers: expected at least 1, got {workers}")
    if batch_size is not None and batch_size < 1:
        raise ValueError(f"batch_size: expected at least 1, got {batch_size}")
    workers = workers or os.cpu_count() or 1
    say = log or (lambda message: None)
    config = _load_config(config)
    estimate = config.estimate()
    reasons = estimate.reasons_to_confirm()
    if reasons and not yes:
        raise TooLargeError(
            config.source or config.name,
            "",
            f"{estimate}: {' and '.join(reasons)}; pass --yes (yes=True) to run it anyway",
        )
    runs = config.runs()
    manifest = _manifest(config, runs)
    dtypes = _column_dtypes(config, runs)
    jobs = {run.run_id: _job(run, dtypes) for run in runs}
    results = ResultsDirectory(Path(out_dir) / config.name)
    directory = results.path

    started = time.perf_counter()
    _refuse_foreign_files(results, fresh)
    results.create()
    with contextlib.ExitStack() as stack:
        try:
            stack.enter_context(results.lock())
            read_only = None
        except ResultsWriteError as exc:
            read_only = exc  # reading is still fine, if nothing needs writing
        signals = stack.enter_context(_Signals())
        if fresh:
            if read_only:
                raise read_only
            results.clear()
        old_manifest = _previous_manifest(results, say if not read_only else None)
        if read_only is None:
            results.prepare()
        checks, notes = _verify(results, config.name, runs, jobs)
        todo = in_seed_order([run for run in runs if not checks[run.run_id].done])
        if read_only is not None:
            return _read_only_result(
                read_only, results, config, runs, todo, notes, old_manifest, manifest, started, executor
            )
        for note in notes:
            say(note)
        if not same_manifest(old_manifest, manifest):
            results.write_manifest(manifest)

        by_id = {run.run_id: run for run in todo}
        failures: list[RunFailure] = []
        reused = len(runs) - len(todo)
        say(
            f"{config.name}: {len(runs)} runs, {reused} already done, {len(todo)} to run "
            f"({executor}) -> {directory}"
        )

        from tqdm.auto import tqdm

        bar = tqdm(
            total=len(runs),
            initial=reused,
            unit="run",
            desc=config.name,
            disable=not (progress and sys.stderr.isatty()),
            dynamic_ncols=True,
            smoothing=0.1,
        )

        computed_metrics: dict[str, list[tuple]] = {}  # this session's runs: no need to read them back

        def handle(outcomes: list[dict]) -> None:
            for outcome in outcomes:
                run = by_id[outcome["run_id"]]
                with signals.deferred():
                    failure = _store_outcome(results, run, jobs[run.run_id], outcome)
                if failure is not None:
                    failures.append(failure)
                    bar.set_postfix(failed=len(failures))
                else:
                    computed_metrics[outcome["run_id"]] = outcome["metrics"]
                bar.update(1)

        todo_jobs = [jobs[run.run_id] for run in todo]
        used_workers, used_batch = workers, 0
        try:
            if todo_jobs and executor == "local":
                used_workers, used_batch = _execute_local(
                    todo_jobs, workers, batch_size, run_day, handle
                )
            elif todo_jobs:
                used_workers, used_batch = _execute_dask(
                    todo_jobs, workers, batch_size, run_day, handle, scheduler, log
                )
        finally:
            bar.close()

        done = {run_id for run_id, check in checks.items() if check.done} | computed_metrics.keys()
        summary, contrast_rows = _summarize(directory, config, runs, computed_metrics, done)
        results.sync_csv(results.summary_path, summary)
        results.sync_csv(results.contrasts_path, contrast_rows)
    return ExperimentResult(
        config=config,
        directory=directory,
        runs_total=len(runs),
        runs_reused=reused,
        runs_computed=len(todo) - len(failures),
        failures=failures,
        summary=summary,
        contrasts=contrast_rows,
        wall_time_s=time.perf_counter() - started,
        executor=executor,
        workers=used_workers,
        batch_size=used_batch,
        runs_recomputed=sum(check.state not in (DONE_STATE, MISSING) for check in checks.values()),
        estimate=estimate,
    )


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


def _previous_manifest(results: ResultsDirectory, log: Callable[[str], None] | None) -> dict | None:
    """The manifest on disk, if any; a damaged one is rebuilt from the config (run ids are
    hashes of parameters and seed, so nothing else is lost)."""
    try:
        return results.read_manifest()
    except DamagedResultsError as exc:
        if log:
            log(f"{exc}: rebuilding it from the config")
        return None


def _verify(
    results: ResultsDirectory, name: str, runs: list[RunSpec], jobs: dict[str, dict]
) -> tuple[dict[str, RunCheck], list[str]]:
    """Check every run of the config on disk; also the lines that say what was found:
    one per damaged run (the first 20), one for runs of another kbsim, layout or labels,
    one for the runs on disk that the config does not ask for."""
    checks = {run.run_id: check_run(results.run_dir(run.run_id), _labels(run, jobs[run.run_id])) for run in runs}
    records = {run.run_id: _run_record(run) for run in runs}
    damaged = [(i, c) for i, c in checks.items() if c.state == DAMAGED]
    notes = [f"{name}: {describe_run(records[i])} is damaged: {c.reason}; recomputing it" for i, c in damaged[:20]]
    if len(damaged) > 20:
        notes.append(f"{name}: ... and {len(damaged) - 20} more damaged runs; recomputing them")
    stale = [c.reason for c in checks.values() if c.state == STALE]
    if stale:
        notes.append(f"{name}: {len(stale)} runs were {stale[0]}; recomputing them")
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
    config: ExperimentConfig,
    runs: list[RunSpec],
    todo: list[RunSpec],
    notes: list[str],
    old_manifest: dict | None,
    manifest: dict,
    started: float,
    executor: str,
) -> ExperimentResult:
    """Every run is done and verified in a folder kbsim cannot write: summarise, write nothing.

    Raises the write error, with what would need writing, when something does."""
    done = {run.run_id for run in runs} - {run.run_id for run in todo}
    summary, contrast_rows = _summarize(results.path, config, runs, {}, done)
    if todo:
        needed = f"{len(todo)} of {len(runs)} runs are to compute"
    elif not same_manifest(old_manifest, manifest):
        needed = f"{MANIFEST} is to rewrite for this config"
    elif not summary.empty and results.summary_bytes() != summary.to_csv(index=False).encode():
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
    return ExperimentResult(
        config=config,
        directory=results.path,
        runs_total=len(runs),
        runs_reused=len(runs),
        runs_computed=0,
        failures=[],
        summary=summary,
        contrasts=contrast_rows,
        wall_time_s=time.perf_counter() - started,
        executor=executor,
        workers=0,
    )


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


# ------------------------------------------------------------------- results


def _points_frame(config: ExperimentConfig, runs: list[RunSpec]) -> pd.DataFrame:
    dtypes = _column_dtypes(config, runs)
    rows = [{"scenario": scenario, **point} for scenario, point, _ in config.points()]
    frame = pd.DataFrame(rows, columns=["scenario", *config.swept])
    for column, dtype in dtypes.items():
        frame[column] = frame[column].astype(dtype)
    return frame


def _summarize(
    directory: Path,
    config: ExperimentConfig,
    runs: list[RunSpec],
    computed: dict[str, list[tuple]],
    done: set[str],
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Every completed run's metrics summarised per scenario x sweep point (kbsim.stats),
    and the config's declared contrasts between points (empty when it declares none).

    ``computed`` holds the metric rows of the runs computed just now; the other ``done``
    runs (verified, from earlier sessions) are read back from their ``metrics.parquet``.
    """
    from kbsim.stats.metrics import COLUMNS
    from kbsim.stats.summary import contrasts, summarize

    point_of: dict[str, int] = {}
    seen: dict[tuple, int] = {}
    for run in runs:
        key = (run.scenario, json.dumps(run.point, sort_keys=True))
        point_of[run.run_id] = seen.setdefault(key, len(seen))
    rows: list[tuple] = []
    for run in runs:
        metric_rows = computed.get(run.run_id)
        if metric_rows is None and run.run_id in done:
            path = directory / "runs" / run.run_id / "metrics.parquet"
            table = read_parquet_bytes(path.read_bytes(), columns=list(COLUMNS))
            metric_rows = zip(*(column.to_pylist() for column in table.columns), strict=True)
        if metric_rows is not None:
            point = point_of[run.run_id]
            rows.extend((point, run.seed, *row) for row in metric_rows)
    if not rows:
        return pd.DataFrame(), pd.DataFrame()
    metrics = pd.DataFrame(rows, columns=["point", "seed", *COLUMNS])
    pooled = summarize(metrics, by=["point"])
    points = _points_frame(config, runs).rename_axis("point").reset_index()
    summary = points.merge(pooled, on="point", how="inner", sort=False)
    summary = summary.sort_values("point", kind="stable").drop(columns="point").reset_index(drop=True)
    specs = config.contrast_specs()
    if not specs:
        return summary, pd.DataFrame()
    per_run = points.merge(metrics, on="point", how="inner", sort=False).drop(columns="point")
    return summary, contrasts(per_run, specs, ["scenario", *config.swept])
