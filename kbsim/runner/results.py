"""A results directory: how a run's files are written, verified and read back.

``<out>/<experiment>/`` holds::

    manifest.json                    the config last run here and its run list
    runs/<run_id>/<table>.parquet    citations, checks, edits, saves and metrics
    runs/<run_id>/run.json           written last: each file's size and sha256, the layout
    errors/<run_id>.json             a failed run's parameters and traceback
    summary.csv                      the current config's runs, summarised

A run's id hashes its parameters and seed, so runs are shared by every config that
asks for them: adding seeds or sweep points reuses what exists. A run counts as done
only if its ``run.json`` parses, was written by this kbsim with this
:func:`results_layout` under the labels (scenario name, swept columns) the config gives
it, and every file it lists has the recorded size and sha256. Anything else is
recomputed; :func:`load_results` refuses it with a message saying what to run.

Every file is written under a temporary name beside its place and moved there with
``os.replace`` (:func:`kbsim.files.atomic_write_bytes`), so a crash leaves either the old
file or the new one, never half of one. Nothing is fsynced: after a power cut a file may be
torn, and its checksum catches it.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import re
import shutil
from collections.abc import Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from kbsim.errors import UsageError
from kbsim.files import FileReadError, FileWriteError, atomic_write_bytes, read_regular
from kbsim.inputs.safe_read import MAX_DATA_FILE_BYTES, json_loads
from kbsim.runner.config import ConfigError
from kbsim.sim.strategies import DEFAULT as DEFAULT_STRATEGIES
from kbsim.sim.tables import schema_digest
from kbsim.sim.world import STREAMS
from kbsim.stats.metrics import COLUMNS, METRICS
from kbsim.version import __version__

__all__ = [
    "DONE",
    "MANIFEST",
    "SUMMARY",
    "CONTRASTS",
    "SUMMARY_KEY",
    "DamagedResultsError",
    "ResultsConflictError",
    "ResultsDirectory",
    "ResultsError",
    "ResultsWriteError",
    "RunCheck",
    "atomic_write",
    "check_run",
    "load_results",
    "results_layout",
]

MANIFEST = "manifest.json"
DONE = "run.json"
SUMMARY = "summary.csv"
CONTRASTS = "contrasts.csv"
#: What ``summary.csv`` and ``contrasts.csv`` were computed from (the runs' metrics, the
#: manifest, the summarising code) and their sha256: a later session reuses them unread.
SUMMARY_KEY = "summary.key"
MANIFEST_FORMAT = 2
#: The most bytes a run's ``run.json`` (or its error record) may hold when read back: it
#: lists the run's files, parameters and columns, a few kB; a larger one is damaged.
MAX_RUN_JSON_BYTES = 1 << 24
_OWNED = {MANIFEST, SUMMARY, CONTRASTS, SUMMARY_KEY, "runs", "errors", ".lock"}
_TABLE_FILE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\.parquet")


class ResultsError(UsageError):
    """A results directory that cannot be used as it is: names the path and the problem."""

    def __init__(self, path: str | Path, problem: str) -> None:
        self.path = str(path)
        self.problem = problem
        super().__init__(f"{self.path}: {problem}")


class DamagedResultsError(ResultsError):
    """Results whose files are truncated, corrupt or from another kbsim (rerun to recompute)."""


class ResultsWriteError(ResultsError):
    """Results that cannot be written: a read-only folder, a full disk, a file in the way."""

    @classmethod
    def from_os_error(cls, exc: OSError, path: str | Path, doing: str = "cannot write") -> ResultsWriteError:
        """The error for ``exc``, naming the file it names (else ``path``) and what failed."""
        where = exc.filename or path
        return cls(where, f"{doing}: {exc.strerror or exc}")


class ResultsConflictError(ConfigError):
    """The results directory is in use by another run, or holds files kbsim did not write."""


def atomic_write(path: Path, data: bytes) -> None:
    """Write to a temporary file beside ``path`` then ``os.replace`` it into place, unsynced
    (:func:`kbsim.files.atomic_write_bytes` with ``fsync=False``: a torn file after a power
    cut fails its checksum and the run is recomputed).

    Raises:
        FileWriteError: naming ``path``; the previous file is intact.
    """
    atomic_write_bytes(path, data, fsync=False)


def json_bytes(obj: Any) -> bytes:
    return (json.dumps(obj, indent=2, sort_keys=False) + "\n").encode()


def results_layout() -> str:
    """The layout of what a run writes, as a short hash: runs of another layout are recomputed.

    Computed, never bumped by hand, from what shapes a run's files for the same parameters
    and seed: the day's tables (names, columns and their types,
    :func:`kbsim.sim.tables.schema_digest`), the metrics (each registered metric's name and
    kind, the columns of a metric row), the default check strategies (each has rows in
    the checks, detections and metrics tables; a day that names others has other
    parameters, and so another run id) and the random streams. Adding a metric, a column
    or a default strategy changes it. (Layouts 1 to 4 were integers, bumped by hand.) The
    tables only a day with the design switches writes
    (:data:`kbsim.sim.tables.SWITCHED_TABLES`) are not in it: adding them would change the
    layout, and so void every stored result.
    """
    parts = {
        "tables": schema_digest(),
        "metrics": [[metric.name, metric.kind] for metric in METRICS.values()],
        "metric_columns": list(COLUMNS),
        "strategies": list(DEFAULT_STRATEGIES),
        "streams": list(STREAMS),
    }
    return hashlib.sha256(json.dumps(parts, separators=(",", ":")).encode()).hexdigest()[:12]


def _file_entry(data: bytes) -> dict:
    return {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}


# ------------------------------------------------------------------ one run


DONE_STATE = "done"
MISSING = "missing"  # never finished (no run.json): computed without a word
DAMAGED = "damaged"  # a file is truncated, corrupt or gone: one line per run
STALE = "stale"  # written by another kbsim or results layout
RELABELLED = "relabelled"  # stored under another config's scenario name or swept columns


@dataclass(frozen=True)
class RunCheck:
    """What :func:`check_run` found: the state, why (unless done), and the run.json."""

    state: str
    reason: str = ""
    marker: dict | None = None
    files: dict[str, bytes] | None = None  # the verified bytes, when asked to keep them

    @property
    def done(self) -> bool:
        """Whether the run is complete and verified, so it can be reused."""
        return self.state == DONE_STATE


def run_marker(record: dict, files: dict[str, bytes], **extra: Any) -> dict:
    """The ``run.json`` of a run: its labels, this kbsim and layout, each file's size and sha256."""
    return {
        "layout": results_layout(),
        "kbsim_version": __version__,
        **record,
        "tables": sorted(name.removesuffix(".parquet") for name in files),
        "files": {name: _file_entry(data) for name, data in sorted(files.items())},
        **extra,
    }


def check_run(
    run_dir: Path,
    labels: dict,
    keep: bool = False,
    only: Collection[str] | None = None,
    *,
    layout: str | None = None,
) -> RunCheck:
    """Verify one run against the labels the caller expects (keys of its run.json).

    ``labels`` holds ``run_id``, ``scenario``, ``point``, ``seed`` and, from the runner,
    ``columns`` (each swept column's value and dtype). With ``keep`` the verified bytes
    of every file are returned, so a reader need not read them twice. ``only`` names the
    files to verify (and keep), for a reader that reads no others; by default, all.
    ``layout``: :func:`results_layout`, computed once by a caller that checks many runs
    (it costs more than a small run's checks); by default computed here.
    """
    try:
        raw = read_regular(run_dir / DONE, MAX_RUN_JSON_BYTES, what=DONE)
    except FileReadError as exc:
        if exc.errno == errno.ENOENT:
            return RunCheck(MISSING)
        return RunCheck(DAMAGED, f"{DONE} cannot be read ({_read_problem(exc)})")
    try:
        marker = json_loads(raw)
    except ValueError as exc:
        return RunCheck(DAMAGED, f"{DONE} is not valid JSON ({_json_problem(exc)})")
    if not isinstance(marker, dict):
        return RunCheck(DAMAGED, f"{DONE} holds {type(marker).__name__}, expected an object")
    stored, version = marker.get("layout", 1), marker.get("kbsim_version")
    current = results_layout() if layout is None else layout
    if stored != current or version != __version__:
        return RunCheck(
            STALE,
            f"written by kbsim {version or '(unknown)'} with results layout {stored} "
            f"(this is kbsim {__version__} with layout {current})",
        )
    files = marker.get("files")
    if not isinstance(files, dict) or "metrics.parquet" not in files:
        return RunCheck(DAMAGED, f"{DONE} does not list the run's files")
    odd = [name for name in files if not _TABLE_FILE.fullmatch(str(name))]
    if odd:
        return RunCheck(DAMAGED, f"{DONE} lists {odd[0]!r}, expected <table>.parquet names")
    for key, expected in labels.items():
        if marker.get(key) != expected:
            state = RELABELLED if key in ("scenario", "point", "columns") else DAMAGED
            return RunCheck(state, f"{DONE} gives {key} {marker.get(key)!r}, expected {expected!r}")
    kept: dict[str, bytes] = {}
    for name, entry in files.items():
        if only is not None and name not in only:
            continue
        path = run_dir / name
        recorded = entry.get("bytes") if isinstance(entry, dict) else entry
        if not isinstance(recorded, int) or isinstance(recorded, bool) or recorded < 0:
            return RunCheck(DAMAGED, f"{DONE} records no size for {name} (got {recorded!r})")
        try:  # at most the bytes run.json records: a file grown (a sparse one, /dev/zero) is never read whole
            data = read_regular(path, recorded, what=name)
        except FileReadError as exc:
            if exc.errno == errno.ENOENT:
                return RunCheck(DAMAGED, f"{name} is missing")
            if exc.errno is None and path.is_file():  # over the recorded size
                return RunCheck(DAMAGED, f"{name} is {path.stat().st_size} bytes, {DONE} recorded {recorded}")
            return RunCheck(DAMAGED, f"{name} cannot be read ({_read_problem(exc)})")
        if len(data) != recorded:
            return RunCheck(DAMAGED, f"{name} is {len(data)} bytes, {DONE} recorded {recorded}")
        if hashlib.sha256(data).hexdigest() != entry.get("sha256"):
            return RunCheck(DAMAGED, f"{name} does not match its sha256 in {DONE} (corrupt)")
        if keep:
            kept[name] = data
    return RunCheck(DONE_STATE, marker=marker, files=kept if keep else None)


def _read_problem(exc: FileReadError) -> str:
    """A read refusal's reason, without the path (the caller names the file)."""
    return exc.problem.removeprefix("cannot read it: ")


def _read_owned(path: Path, limit: int = MAX_DATA_FILE_BYTES) -> bytes | None:
    """The bytes of a file of the results folder (bounded: never a FIFO, a device or a file
    over ``limit``), or None if it cannot be read so."""
    try:
        return read_regular(path, limit, what=path.name)
    except FileReadError:
        return None


def _json_problem(exc: ValueError) -> str:
    if isinstance(exc, json.JSONDecodeError):
        return f"{exc.msg} at line {exc.lineno}, column {exc.colno}; truncated?"
    return str(exc)


def describe_run(record: dict) -> str:
    """``run 1a2b3c4d5e6f (zipf, edit.delay_s=60, seed 2)``."""
    point = ", ".join(f"{key}={value}" for key, value in record["point"].items())
    where = ", ".join(part for part in (record["scenario"], point, f"seed {record['seed']}") if part)
    return f"run {record['run_id']} ({where})"


# -------------------------------------------------------------- the directory


class ResultsDirectory:
    """The files of one experiment's results, written only through here.

    Every write failure (a read-only folder, a full disk) is raised as a
    :class:`ResultsWriteError` naming the file.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.manifest_path = self.path / MANIFEST
        self.summary_path = self.path / SUMMARY
        self.contrasts_path = self.path / CONTRASTS
        self.summary_key_path = self.path / SUMMARY_KEY
        self.runs_path = self.path / "runs"
        self.errors_path = self.path / "errors"

    def run_dir(self, run_id: str) -> Path:
        """The folder of run ``run_id``'s files."""
        return self.runs_path / run_id

    # -- reading

    def read_manifest(self) -> dict | None:
        """The manifest, or None if there is none; :class:`DamagedResultsError` if unreadable."""
        try:
            raw = read_regular(self.manifest_path, MAX_DATA_FILE_BYTES, what=MANIFEST)
        except FileReadError as exc:
            if exc.errno == errno.ENOENT:
                return None
            raise DamagedResultsError(self.manifest_path, f"cannot be read ({_read_problem(exc)})") from None
        try:
            manifest = json_loads(raw)
        except ValueError as exc:
            raise DamagedResultsError(
                self.manifest_path, f"is not valid JSON ({_json_problem(exc)})"
            ) from None
        if not isinstance(manifest, dict) or not isinstance(manifest.get("runs"), list):
            raise DamagedResultsError(self.manifest_path, "expected an object with a list of runs")
        for i, record in enumerate(manifest["runs"]):
            if not (
                isinstance(record, dict)
                and isinstance(record.get("run_id"), str)
                and isinstance(record.get("scenario"), str)
                and isinstance(record.get("point"), dict)
                and isinstance(record.get("seed"), int)
            ):
                raise DamagedResultsError(
                    self.manifest_path, f"runs[{i}]: expected run_id, scenario, point and seed, got {record!r}"
                )
        return manifest

    def foreign_files(self) -> list[str]:
        """Names in the directory that kbsim does not write (it never deletes those)."""
        if not self.path.is_dir():
            return []
        return sorted(
            p.name for p in self.path.iterdir() if p.name not in _OWNED and not p.name.endswith(".tmp")
        )

    def run_ids_on_disk(self) -> set[str]:
        """The ids of the run folders present, complete or not."""
        if not self.runs_path.is_dir():
            return set()
        return {p.name for p in self.runs_path.iterdir() if p.is_dir()}

    def summary_bytes(self) -> bytes | None:
        """``summary.csv``'s bytes, or None when there is none."""
        return _read_owned(self.summary_path)

    def contrasts_bytes(self) -> bytes | None:
        """``contrasts.csv``'s bytes, or None when there is none."""
        return _read_owned(self.contrasts_path)

    # -- writing

    def _write(self, path: Path, data: bytes) -> None:
        try:
            atomic_write(path, data)
        except FileWriteError as exc:
            raise ResultsWriteError(exc.path, exc.problem) from exc
        except OSError as exc:
            raise ResultsWriteError.from_os_error(exc, path) from exc

    def create(self) -> None:
        """Create the directory (and its parents), or say why it cannot be."""
        for parent in (self.path, *self.path.parents):
            if parent.exists():
                if not parent.is_dir():
                    raise ResultsWriteError(parent, "is a file; expected a folder for the results")
                break
        try:
            self.path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ResultsWriteError.from_os_error(exc, self.path, "cannot create the results folder") from exc

    @contextlib.contextmanager
    def lock(self) -> Iterator[None]:
        """Hold ``.lock`` exclusively, the writer's lock: a second kbsim writing the same
        results is refused at once; readers (:meth:`read_lock`) are waited for, as they
        hold it only while they verify the runs.

        Raises :class:`ResultsWriteError` if the lock file cannot be opened for writing
        (a read-only folder); the caller may still read.
        """
        try:
            import fcntl
        except ImportError:  # pragma: no cover (not POSIX)
            yield
            return
        try:
            handle = open(self.path / ".lock", "a+")  # noqa: SIM115 (closed below)
        except OSError as exc:
            raise ResultsWriteError(self.path, f"cannot write the results folder: {exc.strerror}") from exc
        with handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                try:  # held: shared means readers only (a writer's exclusive lock refuses this)
                    fcntl.flock(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
                except BlockingIOError:
                    raise ResultsConflictError(
                        str(self.path), "", "another kbsim run is writing these results; wait for it"
                    ) from None
                fcntl.flock(handle, fcntl.LOCK_UN)
                fcntl.flock(handle, fcntl.LOCK_EX)  # the readers verify, then let go
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    @contextlib.contextmanager
    def read_lock(self) -> Iterator[bool]:
        """Hold ``.lock`` shared, a reader's lock: readers share it, a writer (:meth:`lock`)
        excludes them, and a reader waits for a writer to finish. Yields whether this
        process could write the folder (it could open the lock file for writing). In a
        folder where the lock file can be neither made nor opened (read-only, never
        written), no lock is taken: no kbsim can write there either."""
        try:
            import fcntl
        except ImportError:  # pragma: no cover (not POSIX)
            yield True
            return
        writable = True
        try:
            handle = open(self.path / ".lock", "a+")  # noqa: SIM115 (closed below)
        except OSError:
            writable = False
            try:
                handle = open(self.path / ".lock")  # noqa: SIM115 (closed below)
            except OSError:
                yield writable
                return
        with handle:
            fcntl.flock(handle, fcntl.LOCK_SH)
            try:
                yield writable
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def clear(self) -> None:
        """Delete a previous experiment's results (only what the runner itself writes)."""
        foreign = self.foreign_files()
        if foreign:
            raise ResultsConflictError(
                str(self.path),
                "",
                f"holds files kbsim did not write ({', '.join(foreign[:5])}); "
                "expected a kbsim results directory, refusing to delete it",
            )
        try:
            self.manifest_path.unlink(missing_ok=True)  # first: a half-cleared dir is not resumable
            for path in (self.runs_path, self.errors_path):
                if path.exists():
                    shutil.rmtree(path)
            for path in self.path.iterdir():
                if path.name != ".lock":
                    path.unlink()
        except OSError as exc:
            raise ResultsWriteError.from_os_error(exc, self.path, "cannot delete the old results") from exc

    def prepare(self) -> None:
        """Remove temporary files an interrupted writer left, and make sure ``runs/`` exists."""
        try:
            for path in self.path.rglob(".*.tmp"):
                path.unlink(missing_ok=True)
            self.runs_path.mkdir(exist_ok=True)
        except OSError as exc:
            raise ResultsWriteError.from_os_error(exc, self.path) from exc

    def write_manifest(self, manifest: dict) -> None:
        """Write the manifest (the config's runs and labels), atomically."""
        self._write(self.manifest_path, json_bytes(manifest))

    def sync_csv(self, path: Path, frame: pd.DataFrame) -> bytes | None:
        """Write ``frame`` to ``path`` as CSV when its bytes changed (``summary.csv``,
        ``contrasts.csv``); with no rows, remove an older file instead. The bytes the file
        now holds (None: no file)."""
        if frame.empty:
            try:
                path.unlink(missing_ok=True)
            except OSError as exc:
                raise ResultsWriteError.from_os_error(exc, path) from exc
            return None
        data = frame.to_csv(index=False).encode()
        if _read_owned(path) != data:
            self._write(path, data)
        return data

    def summary_key_current(self, inputs: str) -> bool:
        """Whether ``summary.csv`` and ``contrasts.csv`` are what ``inputs`` (a digest of what
        they are computed from) gives: ``summary.key`` names these inputs, and each file (or
        its absence) matches the sha256 recorded beside them. A file rewritten since, torn or
        missing fails the check, so nothing half-written is reused."""
        raw = _read_owned(self.summary_key_path, MAX_RUN_JSON_BYTES)
        try:
            key = json_loads(raw) if raw is not None else None
        except ValueError:
            return False
        if not isinstance(key, dict) or key.get("inputs") != inputs:
            return False
        for name, path in ((SUMMARY, self.summary_path), (CONTRASTS, self.contrasts_path)):
            data = _read_owned(path) if path.exists() else None
            if key.get(name) != (None if data is None else hashlib.sha256(data).hexdigest()):
                return False
        return True

    def write_summary_key(self, inputs: str, summary: bytes | None, contrasts: bytes | None) -> None:
        """Record that ``summary.csv`` and ``contrasts.csv``, as they now hold ``summary`` and
        ``contrasts`` (None: no file), were computed from ``inputs``; written after them."""
        files = {
            name: None if data is None else hashlib.sha256(data).hexdigest()
            for name, data in ((SUMMARY, summary), (CONTRASTS, contrasts))
        }
        self._write(self.summary_key_path, json_bytes({"inputs": inputs, **files}))

    def write_run(self, run_id: str, files: dict[str, bytes], marker: dict) -> None:
        """The run's files, then its ``run.json`` (which makes it count as done)."""
        run_dir = self.run_dir(run_id)
        try:
            run_dir.mkdir(exist_ok=True)
        except OSError as exc:
            raise ResultsWriteError.from_os_error(exc, run_dir) from exc
        for name, data in files.items():
            self._write(run_dir / name, data)
        self._write(run_dir / DONE, json_bytes(marker))
        self.remove_failure(run_id)

    def write_failure(self, run_id: str, record: dict) -> None:
        """Record run ``run_id``'s failure under ``errors/``, atomically."""
        try:
            self.errors_path.mkdir(exist_ok=True)
        except OSError as exc:
            raise ResultsWriteError.from_os_error(exc, self.errors_path) from exc
        self._write(self.errors_path / f"{run_id}.json", json_bytes(record))

    def remove_failure(self, run_id: str) -> None:
        """Remove run ``run_id``'s failure record, if any (the run has succeeded)."""
        path = self.errors_path / f"{run_id}.json"
        try:
            path.unlink(missing_ok=True)
        except OSError as exc:
            raise ResultsWriteError.from_os_error(exc, path) from exc


def same_manifest(a: dict | None, b: dict) -> bool:
    """Whether two manifests describe the same runs of the same config (the config's
    ``source``, the path it was read from, aside)."""
    if a is None:
        return False

    def core(manifest: dict) -> dict:
        config = {k: v for k, v in (manifest.get("config") or {}).items() if k != "source"}
        return {**manifest, "config": config}

    return core(a) == core(b)


# ------------------------------------------------------------------ reading


def _rerun_hint(directory: Path, manifest: dict | None) -> str:
    source = ((manifest or {}).get("config") or {}).get("source")
    config = source or "the experiment's config"
    return (
        f"rerun `kbsim run {config} --out {directory.parent}` to recompute what is damaged "
        "(every intact run is reused)"
    )


def read_parquet_bytes(data: bytes, columns: list[str] | None = None):
    """One run's parquet file, already read, as a pyarrow Table.

    Why not ``pq.read_table``: its dataset machinery and thread pool cost about 2 ms a
    file, four times the parse itself, and drawing the figures reads tens of thousands of
    these small files. The table is the same, schema metadata included
    (tests/test_results.py holds the two to each other).
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    return pq.ParquetFile(pa.BufferReader(data), pre_buffer=False).read(columns=columns, use_threads=False)


def load_results(directory: str | Path, tables: Iterable[str] | None = None) -> dict[str, pd.DataFrame]:
    """Every completed run's tables under ``directory`` (``<out>/<experiment>``), concatenated.

    Keys: each table (``citations``, ``checks``, ``edits``, ...), ``metrics``
    (per run), ``runs`` (one row per run with its status), ``timings`` (each done run's
    worker time, ``wall_s``: not a result, it varies from one computation to the next) and ``errors``
    (failed runs, possibly empty). Rows are in the manifest's run order; only the
    runs of the config last run into ``directory`` are read. ``tables`` names the tables
    to read (by default, every one); each file read is verified against its run's record.

    Args:
        directory: an experiment's results folder, ``<out>/<experiment name>`` (what
            :func:`kbsim.run_experiment` returns as ``result.directory``).
        tables: the tables to read (``["metrics"]``); by default every one.

    Returns:
        Table name -> one DataFrame of every done run's rows, each row carrying
        ``scenario``, ``run_id``, the swept parameters and ``seed``.

    Example:
        >>> import kbsim
        >>> result = kbsim.run_experiment({"name": "tiny", "params": {"day_hours": 2,
        ...     "corpus": {"articles": 30}, "saves": {"count": 30}, "questions": {"count": 20}},
        ...     "seeds": 2}, "results", workers=1, progress=False)
        >>> tables = kbsim.load_results(result.directory)
        >>> sorted(tables["runs"]["seed"].tolist())
        [1, 2]
        >>> list(kbsim.load_results(result.directory, tables=["metrics"]))[:1]
        ['metrics']

    Raises:
        FileNotFoundError: no such directory, or no manifest in it. DamagedResultsError:
        the manifest or a run recorded as done is damaged or from another kbsim; the
        message says which and what to run.
    """
    import pyarrow as pa

    directory = Path(directory)
    if not directory.exists():
        raise FileNotFoundError(f"results directory {str(directory)!r} does not exist")
    results = ResultsDirectory(directory)
    only = None if tables is None else {f"{name}.parquet" for name in tables}
    if not results.manifest_path.exists():
        raise FileNotFoundError(f"{results.manifest_path}: no manifest; expected an experiment's results")
    try:
        manifest = results.read_manifest()
    except DamagedResultsError as exc:
        raise DamagedResultsError(exc.path, f"{exc.problem}; {_rerun_hint(directory, None)}") from None
    assert manifest is not None  # its file exists (checked above)
    pieces: dict[str, list] = {}
    index_rows, error_rows, damaged, timing_rows = [], [], [], []
    layout = results_layout()
    for record in manifest["runs"]:
        labels = {key: record[key] for key in ("run_id", "scenario", "point", "seed")}
        check = check_run(results.run_dir(record["run_id"]), labels, keep=True, only=only, layout=layout)
        status = "done" if check.done else "missing"
        if check.done:
            assert check.files is not None  # kept (keep=True)
            for name, data in check.files.items():
                table = read_parquet_bytes(data)
                pieces.setdefault(name.removesuffix(".parquet"), []).append(table)
        elif check.state != MISSING:
            damaged.append(f"{describe_run(record)}: {check.reason}")
        else:
            error_path = results.errors_path / f"{record['run_id']}.json"
            error = _read_error(error_path)
            if error is not None:
                status = "failed"
                error_rows.append(
                    {
                        "run_id": record["run_id"],
                        "scenario": record["scenario"],
                        **record["point"],
                        "seed": record["seed"],
                        "error": error.get("error", ""),
                        "traceback": error.get("traceback", ""),
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
        if check.done:  # the worker's time for the run (simulation and tables)
            timing_rows.append({"run_id": record["run_id"], "wall_s": (check.marker or {}).get("wall_s")})
    if damaged:
        more = f" (and {len(damaged) - 1} more)" if len(damaged) > 1 else ""
        raise DamagedResultsError(
            results.runs_path, f"{damaged[0]}{more}; {_rerun_hint(directory, manifest)}"
        )
    # one chunk per column: pandas string columns stay backed by Arrow, and a column of
    # one chunk per run makes every later take (a filter, a group) cost a pass per run
    tables = {
        name: pa.concat_tables(parts, promote_options="permissive").combine_chunks().to_pandas()
        for name, parts in pieces.items()
    }
    tables["runs"] = pd.DataFrame(index_rows)
    tables["timings"] = pd.DataFrame(timing_rows, columns=["run_id", "wall_s"])
    tables["errors"] = pd.DataFrame(
        error_rows, columns=None if error_rows else ["run_id", "scenario", "seed", "error"]
    )
    return tables


class ResultTables(Mapping):
    """:func:`load_results` of one experiment, read table by table when first asked for.

    Why: a report needs every run's ``metrics`` but the other tables of a few
    experiments only; reading (and verifying) each run's seven files for every
    experiment was most of the time of drawing the figures from cached results. Each
    table is verified as :func:`load_results` verifies it when it is read. Keys: the
    tables the runs hold, ``runs``, ``timings`` and ``errors``; with ``keep``, only
    those of them named there.
    """

    def __init__(self, directory: str | Path, keep: Iterable[str] | None = None) -> None:
        self.directory = Path(directory)
        self._loaded = load_results(self.directory, tables=["metrics"])
        runs = self._loaded["runs"]
        done = runs.loc[runs["status"] == "done", "run_id"] if len(runs) else None
        names: list[str] = []
        if done is not None and len(done):  # the tables a run holds, from its run.json (checked, no file read)
            first = check_run(ResultsDirectory(self.directory).run_dir(done.iloc[0]), {}, only=())
            names = list((first.marker or {}).get("tables", []))
        names = list(dict.fromkeys([*names, *self._loaded]))
        if keep is not None:
            wanted = set(keep)
            names = [name for name in names if name in wanted]
        self._names = tuple(names)

    def __getitem__(self, name: str) -> pd.DataFrame:
        if name not in self._names:
            raise KeyError(name)
        if name not in self._loaded:
            self._loaded[name] = load_results(self.directory, tables=[name])[name]
        return self._loaded[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)


def _read_error(path: Path) -> dict | None:
    """A failed run's record; a damaged one still says that the run failed."""
    raw = _read_owned(path, MAX_RUN_JSON_BYTES)
    if raw is None:
        return None
    try:
        record = json_loads(raw)
    except ValueError as exc:
        return {"error": f"(the error record is damaged: {_json_problem(exc)})", "traceback": ""}
    return record if isinstance(record, dict) else {"error": repr(record), "traceback": ""}
