"""Run an experiment's days on a local process pool or a Dask cluster, resumably.

Every scenario x sweep point x seed is one run of :func:`kbsim.sim.run_day`.
A run's id hashes its validated parameters and its seed, so rerunning a
config finds the runs already done and computes only the missing ones.
Results live under ``<out>/<experiment>/``::

    manifest.json                    config, fingerprint, run list (written first)
    runs/<run_id>/<table>.parquet    citations, checks, edits, ... and metrics
    runs/<run_id>/run.json           written last: the run is complete once it exists
    errors/<run_id>.json             a failed run's parameters and traceback
    summary.csv                      estimate and 95% interval per scenario x sweep point x metric

Every file is written to a temporary name in the same directory and moved
into place with ``os.replace``, by the parent process only, so an interrupt
(Ctrl-C, SIGTERM, even SIGKILL) loses at most the batches in flight and
never leaves a half-written file.
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
import shutil
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

from kbsim.config import ConfigError, ExperimentConfig, RunSpec, config_from_dict, load_config
from kbsim.params import DayParams

__all__ = [
    "DEFAULT_RUN_DAY",
    "EXECUTORS",
    "ExperimentResult",
    "Interrupted",
    "ResultsConflictError",
    "RunFailure",
    "SchedulerUnavailable",
    "load_results",
    "run_batch",
    "run_experiment",
]

#: Import path of the function that simulates one day.
DEFAULT_RUN_DAY = "kbsim.sim:run_day"
EXECUTORS = ("local", "dask")
MANIFEST = "manifest.json"
DONE = "run.json"
SUMMARY = "summary.csv"
_OWNED = {MANIFEST, SUMMARY, "runs", "errors", ".lock"}
_MAX_BATCH = 16


class ResultsConflictError(ConfigError):
    """The results directory holds another config's runs (rerun with ``fresh=True``)."""


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
    batch_size: int = 0
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
    front: dict[str, pd.Series] = {
        "scenario": pd.Series([job["scenario"]] * n, dtype="str"),
        "run_id": pd.Series([job["run_id"]] * n, dtype="str"),
    }
    if with_seed:
        front["seed"] = pd.Series([job["seed"]] * n, dtype="int64")
    for column, value, dtype in job["columns"]:
        front[column] = pd.Series([value] * n, dtype=dtype)
    rest = frame.drop(columns=[c for c in front if c in frame.columns]).reset_index(drop=True)
    return pd.concat([pd.DataFrame(front), rest], axis=1)




def run_files(job: dict, tables: dict[str, pd.DataFrame], day_s: float) -> tuple[dict[str, bytes], list[tuple]]:
    """What a worker ships for one run: each table and the run's metrics, tidy, as Parquet
    bytes; and the metric rows themselves, which the parent pools into the summary without
    decoding the bytes again."""
    from kbsim.stats.metrics import COLUMNS, run_metrics

    bad = [name for name in tables if not str(name).isidentifier() or name == "metrics"]
    if bad:
        raise ValueError(f"run_day returned tables with unusable names: {bad}")
    files = {name: _parquet_bytes(_tidy(df, job)) for name, df in tables.items()}
    metrics = run_metrics(tables, day_s=day_s)  # "end" = the day's end
    files["metrics"] = _parquet_bytes(_tidy(metrics, job, with_seed=True))
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
        context.set_forkserver_preload(["__main__", "kbsim.runner", "kbsim.sim", "kbsim.metrics"])
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


# ------------------------------------------------------------------ file I/O


def _atomic_write(path: Path, data: bytes) -> None:
    """Write to a temporary file beside ``path`` then ``os.replace`` it into place."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as handle:
            handle.write(data)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _json_bytes(obj: Any) -> bytes:
    return (json.dumps(obj, indent=2, sort_keys=False) + "\n").encode()


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


@contextlib.contextmanager
def _exclusive(directory: Path) -> Iterator[None]:
    """Refuse a second concurrent run writing into the same results directory."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover (not POSIX)
        yield
        return
    with open(directory / ".lock", "a+") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise ResultsConflictError(
                str(directory), "", "another kbsim run is writing these results; wait for it"
            ) from None
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _clear(directory: Path) -> None:
    """Delete a previous experiment's results (only what the runner itself writes)."""
    foreign = [
        p.name for p in directory.iterdir() if p.name not in _OWNED and not p.name.endswith(".tmp")
    ]
    if foreign:
        raise ResultsConflictError(
            str(directory),
            "",
            f"holds files kbsim did not write ({', '.join(sorted(foreign)[:5])}); "
            "expected a kbsim results directory, refusing to delete it",
        )
    (directory / MANIFEST).unlink(missing_ok=True)  # first: a half-cleared dir is not resumable
    for name in ("runs", "errors"):
        shutil.rmtree(directory / name, ignore_errors=True)
    for path in directory.iterdir():
        if path.name != ".lock":
            path.unlink()


def _remove_stale_tmp(directory: Path) -> None:
    for path in directory.rglob(".*.tmp"):
        path.unlink(missing_ok=True)


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


def _manifest(config: ExperimentConfig, runs: list[RunSpec]) -> dict:
    from kbsim import __version__

    return {
        "format": 1,
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
) -> ExperimentResult:
    """Run every missing run of ``config`` and summarise all of them into ``summary.csv``.

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

    Raises:
        ConfigError: a bad config; ResultsConflictError: the directory holds
        another config's results. Interrupted (a KeyboardInterrupt) on
        SIGINT/SIGTERM, after the completed runs are on disk.
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
    config = _load_config(config)
    runs = config.runs()
    manifest = _manifest(config, runs)
    directory = Path(out_dir) / config.name
    manifest_path = directory / MANIFEST

    if manifest_path.exists() and not fresh:
        old = json.loads(manifest_path.read_text())
        if old.get("fingerprint") != manifest["fingerprint"]:
            raise ResultsConflictError(
                str(manifest_path),
                "fingerprint",
                f"{directory} holds results of a different config "
                f"({old.get('fingerprint')} != {manifest['fingerprint']}); expected the same "
                "config to resume; pass --fresh (fresh=True) to discard them and start anew",
            )
    elif directory.exists() and any(p.name != ".lock" for p in directory.iterdir()) and not fresh:
        raise ResultsConflictError(
            str(directory), "", "exists without a manifest.json; pass --fresh to start anew"
        )

    started = time.perf_counter()
    directory.mkdir(parents=True, exist_ok=True)
    with _exclusive(directory), _Signals() as signals:
        if fresh:
            _clear(directory)
        _remove_stale_tmp(directory)
        if not manifest_path.exists():
            _atomic_write(manifest_path, _json_bytes(manifest))
        (directory / "runs").mkdir(exist_ok=True)

        todo = in_seed_order([run for run in runs if not (directory / "runs" / run.run_id / DONE).exists()])
        by_id = {run.run_id: run for run in todo}
        dtypes = _column_dtypes(config, runs)
        jobs = [_job(run, dtypes) for run in todo]
        failures: list[RunFailure] = []
        reused = len(runs) - len(todo)
        if log:
            log(
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
                with signals.deferred():
                    failure = _store_outcome(directory, by_id[outcome["run_id"]], outcome)
                if failure is not None:
                    failures.append(failure)
                    bar.set_postfix(failed=len(failures))
                else:
                    computed_metrics[outcome["run_id"]] = outcome["metrics"]
                bar.update(1)

        used_workers, used_batch = workers, 0
        try:
            if jobs and executor == "local":
                used_workers, used_batch = _execute_local(
                    jobs, workers, batch_size, run_day, handle
                )
            elif jobs:
                used_workers, used_batch = _execute_dask(
                    jobs, workers, batch_size, run_day, handle, scheduler, log
                )
        finally:
            bar.close()

        summary = _summarize(directory, config, runs, computed_metrics)
        if not summary.empty:
            _atomic_write(directory / SUMMARY, summary.to_csv(index=False).encode())
    return ExperimentResult(
        config=config,
        directory=directory,
        runs_total=len(runs),
        runs_reused=reused,
        runs_computed=len(todo) - len(failures),
        failures=failures,
        summary=summary,
        wall_time_s=time.perf_counter() - started,
        executor=executor,
        workers=used_workers,
        batch_size=used_batch,
    )


def _store_outcome(directory: Path, run: RunSpec, outcome: dict) -> RunFailure | None:
    """Write one run's files (tables first, the ``run.json`` marker last) or its error."""
    error_path = directory / "errors" / f"{run.run_id}.json"
    if "error" in outcome:
        failure = RunFailure(
            run.run_id, run.scenario, run.point, run.seed, outcome["error"], outcome["traceback"]
        )
        error_path.parent.mkdir(exist_ok=True)
        record = {
            **_run_record(run),
            "params": run.params.model_dump(mode="json"),
            "error": failure.error,
            "traceback": failure.traceback,
        }
        _atomic_write(error_path, _json_bytes(record))
        return failure
    run_dir = directory / "runs" / run.run_id
    run_dir.mkdir(exist_ok=True)
    for name, data in outcome["files"].items():
        _atomic_write(run_dir / f"{name}.parquet", data)
    marker = {
        **_run_record(run),
        "params": run.params.model_dump(mode="json"),
        "tables": sorted(outcome["files"]),
        "wall_s": round(outcome["wall_s"], 6),
    }
    _atomic_write(run_dir / DONE, _json_bytes(marker))
    error_path.unlink(missing_ok=True)
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
    directory: Path, config: ExperimentConfig, runs: list[RunSpec], computed: dict[str, list[tuple]]
) -> pd.DataFrame:
    """Every completed run's metrics summarised per scenario x sweep point (kbsim.stats).

    ``computed`` holds the metric rows of the runs computed just now; the others done
    (earlier sessions) are read back from their ``metrics.parquet``.
    """
    from kbsim.stats.metrics import COLUMNS
    from kbsim.stats.summary import summarize

    point_of: dict[str, int] = {}
    seen: dict[tuple, int] = {}
    for run in runs:
        key = (run.scenario, json.dumps(run.point, sort_keys=True))
        point_of[run.run_id] = seen.setdefault(key, len(seen))
    rows: list[tuple] = []
    for run in runs:
        metric_rows = computed.get(run.run_id)
        if metric_rows is None and (directory / "runs" / run.run_id / DONE).exists():
            path = directory / "runs" / run.run_id / "metrics.parquet"
            metric_rows = pd.read_parquet(path, columns=list(COLUMNS)).itertuples(index=False, name=None)
        if metric_rows is not None:
            point = point_of[run.run_id]
            rows.extend((point, run.seed, *row) for row in metric_rows)
    if not rows:
        return pd.DataFrame()
    metrics = pd.DataFrame(rows, columns=["point", "seed", *COLUMNS])
    pooled = summarize(metrics, by=["point"])
    points = _points_frame(config, runs).rename_axis("point").reset_index()
    summary = points.merge(pooled, on="point", how="inner", sort=False)
    summary = summary.sort_values("point", kind="stable")
    return summary.drop(columns="point").reset_index(drop=True)


def load_results(directory: str | Path) -> dict[str, pd.DataFrame]:
    """Every completed run's tables under ``directory`` (``<out>/<experiment>``), concatenated.

    Keys: each table (``citations``, ``checks``, ``edits``, ...), ``metrics``
    (per run), ``runs`` (one row per run with its status) and ``errors``
    (failed runs, possibly empty). Rows are in the manifest's run order.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    directory = Path(directory)
    manifest_path = directory / MANIFEST
    if not manifest_path.exists():
        raise FileNotFoundError(f"{manifest_path}: no manifest; expected an experiment's results")
    manifest = json.loads(manifest_path.read_text())
    pieces: dict[str, list] = {}
    index_rows, error_rows = [], []
    for record in manifest["runs"]:
        run_dir = directory / "runs" / record["run_id"]
        error_path = directory / "errors" / f"{record['run_id']}.json"
        status = "done" if (run_dir / DONE).exists() else "missing"
        if status == "done":
            marker = json.loads((run_dir / DONE).read_text())
            for name in marker["tables"]:
                pieces.setdefault(name, []).append(pq.read_table(run_dir / f"{name}.parquet"))
        elif error_path.exists():
            status = "failed"
            error = json.loads(error_path.read_text())
            error_rows.append(
                {
                    "run_id": record["run_id"],
                    "scenario": record["scenario"],
                    **record["point"],
                    "seed": record["seed"],
                    "error": error["error"],
                    "traceback": error["traceback"],
                }
            )
        index_rows.append(
            {
                "run_id": record["run_id"],
                "scenario": record["scenario"],
                **record["point"],
                "seed": record["seed"],
                "status": status,
            }
        )
    tables = {
        name: pa.concat_tables(parts, promote_options="permissive").to_pandas()
        for name, parts in pieces.items()
    }
    tables["runs"] = pd.DataFrame(index_rows)
    tables["errors"] = pd.DataFrame(
        error_rows, columns=None if error_rows else ["run_id", "scenario", "seed", "error"]
    )
    return tables
