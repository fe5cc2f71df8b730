"""What a worker does with a batch of runs: plain data in, Parquet bytes out, nothing written.

A job is the plain-data form of one :class:`~kbsim.runner.config.RunSpec`
(:func:`make_job`): its id, scenario, seed, its validated parameters (the frozen
:class:`~kbsim.params.DayParams`, sized to its corpus: validated and sized once, on the
way down, never again in the worker), and the swept values with the dtype each column
gets in every run's tables (:func:`column_dtypes`). Both executors
(:mod:`kbsim.runner.executors`) ship :func:`run_batch` to their workers with a list of
jobs; it simulates each day (:func:`kbsim.sim.day.run_day`, imported: the data path
``runner -> sim.day``), makes every table tidy (the run's labels on every row) and
encodes it as Parquet, and returns the bytes for the parent to write.
"""

from __future__ import annotations

import importlib
import io
import json
import time
import traceback
from collections.abc import Callable

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from kbsim.drive.configured import server_day_store
from kbsim.params import SERVER_STORE_BACKEND, DayParams
from kbsim.runner.config import RunSpec
from kbsim.sim import day
from kbsim.sim.strategies import Strategy, resolve
from kbsim.stats.metrics import COLUMNS, run_metrics

__all__ = ["DEFAULT_RUN_DAY", "column_dtypes", "error_outcome", "make_job", "run_batch", "run_files"]

#: The function that simulates one day (a caller may hand another, or its import path).
DEFAULT_RUN_DAY: Callable[..., dict[str, pd.DataFrame]] = day.run_day


def column_dtypes(swept: list[str], runs: list[RunSpec]) -> dict[str, str | None]:
    """One dtype per swept parameter, so every run's column concatenates cleanly."""
    dtypes: dict[str, str | None] = {}
    for column in swept:
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


def make_job(run: RunSpec, dtypes: dict[str, str | None]) -> dict:
    """The plain data a worker needs to compute ``run`` and label its tables."""
    return {
        "run_id": run.run_id,
        "scenario": run.scenario,
        "seed": run.seed,
        "params": run.params,
        "columns": [(column, run.point[column], dtypes[column]) for column in run.point],
    }


def _import_function(path: str | Callable) -> Callable:
    """The function ``path`` names (``"module:function"``), or ``path`` itself when it is one."""
    if callable(path):
        return path
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
        self._job, self._with_seed = job, with_seed
        one = pa.Table.from_pandas(pd.DataFrame(_front_columns(job, 1, with_seed)), preserve_index=False)
        self._fields = list(one.schema)
        self._names = set(one.schema.names)
        self._values = [column[0] for column in one.columns]
        self._metadata = json.loads(one.schema.metadata[b"pandas"])["columns"]

    def parquet_bytes(self, frame: pd.DataFrame) -> bytes:
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


def run_files(
    job: dict, tables: dict[str, pd.DataFrame], day_s: float, strategies: tuple[Strategy, ...] | None = None
) -> tuple[dict[str, bytes], list[tuple]]:
    """What a worker ships for one run: each table and the run's metrics, tidy, as Parquet
    bytes; and the metric rows themselves, which the parent pools into the summary without
    decoding the bytes again. ``strategies`` are the day's (its ``checks.strategies``)."""
    bad = [name for name in tables if not str(name).isidentifier() or name == "metrics"]
    if bad:
        raise ValueError(f"run_day returned tables with unusable names: {bad}")
    writer = _TidyWriter(job, with_seed=False)
    files = {name: writer.parquet_bytes(df) for name, df in tables.items()}
    metrics = run_metrics(tables, day_s=day_s, strategies=strategies)  # "end" = the day's end
    files["metrics"] = _TidyWriter(job, with_seed=True).parquet_bytes(metrics)
    return files, list(metrics[list(COLUMNS)].itertuples(index=False, name=None))


def error_outcome(job: dict, exc: BaseException, trace: str) -> dict:
    """The outcome of a job that raised (in the day, or in shipping its batch)."""
    return {"run_id": job["run_id"], "error": f"{type(exc).__name__}: {exc}", "traceback": trace}


def run_batch(jobs: list[dict], run_day: Callable | str = DEFAULT_RUN_DAY) -> list[dict]:
    """Run a batch of days in this process; each outcome holds Parquet bytes or an error.

    This is the task both executors ship to their workers: plain data in,
    plain data out, nothing written here. ``run_day`` simulates a day, ``run_day(params,
    seed)``: :func:`kbsim.sim.day.run_day` (which is told the parameters were validated,
    sized and checked already), another function, or its import path. The day's
    strategies are resolved here, from their names in the parameters (a strategy of one's
    own is imported from its path in each worker).
    """
    simulate = _import_function(run_day)
    checked = simulate is day.run_day
    outcomes = []
    for job in jobs:
        started = time.perf_counter()
        try:
            params = job["params"]
            if not isinstance(params, DayParams):  # a job made by hand, as JSON
                params = DayParams.model_validate(params)
            strategies = resolve(params.checks.strategies)
            if params.store.backend == SERVER_STORE_BACKEND:  # a live server: kbsim drive's store and clock
                if not checked:
                    raise ValueError(f"store.backend 'server' runs kbsim's own day, not {run_day!r}")
                with server_day_store(params, job["seed"]) as (backend, env):
                    tables = simulate(params, job["seed"], checked=True, store=backend, env=env)
            else:
                tables = simulate(params, job["seed"], checked=True) if checked else simulate(params, job["seed"])
            files, metric_rows = run_files(job, tables, params.day_s, strategies)
            outcomes.append(
                {
                    "run_id": job["run_id"],
                    "files": files,
                    "metrics": metric_rows,
                    "wall_s": time.perf_counter() - started,
                }
            )
        except Exception as exc:
            interrupt = _interrupt_behind(exc)
            if interrupt is not None:  # Ctrl-C inside a library that wrapped it (pydantic does)
                raise interrupt from None
            outcomes.append(error_outcome(job, exc, traceback.format_exc()))
    return outcomes


def _interrupt_behind(exc: BaseException) -> KeyboardInterrupt | None:
    """The KeyboardInterrupt an exception was raised from, if any: run in this process
    (``workers=1``), a Ctrl-C during a day is the sweep's interrupt, not the run's failure."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, KeyboardInterrupt):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None
