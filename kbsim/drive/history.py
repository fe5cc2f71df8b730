"""A driven day's history: every MCP request the driver made, and the day's tables.

The format is fixed (``HISTORY_SCHEMA.md`` of the lead's brief, restated in
docs/drive.md): one folder holding ``history.json`` (the meta), ``calls.parquet`` (one
row per request, in start order) and the day tables :mod:`kbsim.sim.tables` names, as
Parquet. :class:`CallRecorder` collects the rows (thread-safe: several MCP sessions may
call at once), :func:`write_history` writes the folder file by file atomically (the meta
last, so a folder without ``history.json`` was never finished), and :func:`read_history`
reads it back, refusing in one line a folder of any other format or version.

No credential is ever recorded: arguments are the tool arguments (a ``content`` value as
its digest), results the server's answers, and the server's address is kept without any
``user:password@`` part.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple
from urllib.parse import urlsplit, urlunsplit

import pandas as pd

from kbsim.errors import UsageError
from kbsim.files import FileReadError, atomic_write_bytes, atomic_write_text, read_regular
from kbsim.version import __version__

__all__ = [
    "CALL_COLUMNS",
    "FORMAT",
    "FORMAT_VERSION",
    "CallRecord",
    "CallRecorder",
    "History",
    "HistoryError",
    "canonical_json",
    "digest_content",
    "read_history",
    "redacted_url",
    "write_history",
]

FORMAT = "kbsim-history"
FORMAT_VERSION = 1
META_FILE = "history.json"
CALLS_FILE = "calls.parquet"
#: The most bytes of ``history.json`` a reader takes (its tool list is a few kB).
MAX_META_BYTES = 16 * 1024 * 1024
#: The meta's keys, in the order they are written.
META_KEYS = ("format", "format_version", "kbsim_version", "complete", "stopped_because", "server", "tools",
             "field_map", "seed", "speed", "params", "started_utc", "ended_utc", "calls")

#: The calls table's columns and their pandas dtypes.
CALL_COLUMNS: dict[str, str] = {
    "call_id": "int64",
    "client": "string",
    "actor": "string",
    "tool": "string",
    "arguments": "string",
    "started_s": "float64",
    "ended_s": "float64",
    "sim_s": "float64",
    "ok": "bool",
    "error_code": "string",
    "result": "string",
    "bytes_sent": "int64",
    "bytes_received": "int64",
}


class HistoryError(UsageError):
    """A history folder that cannot be read or written: names it and what is wrong."""


def digest_content(value: Any) -> Any:
    """``value`` with every ``content`` string (at any depth) replaced by ``"sha256:<hex>"``
    of its UTF-8, so a history holds no article text but can tell two texts apart."""
    if isinstance(value, Mapping):
        return {
            key: (f"sha256:{hashlib.sha256(item.encode('utf-8', 'surrogatepass')).hexdigest()}"
                  if key == "content" and isinstance(item, str) else digest_content(item))
            for key, item in value.items()
        }
    if isinstance(value, (list, tuple)):
        return [digest_content(item) for item in value]
    return value


def canonical_json(value: Any) -> str:
    """``value`` as canonical JSON: sorted keys, no spaces, ``content`` digested."""
    return json.dumps(digest_content(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def redacted_url(url: str) -> str:
    """``url`` without any ``user:password@`` part (the rest is kept as given)."""
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port is not None else host
    return urlunsplit(parts._replace(netloc=netloc))


class CallRecord(NamedTuple):
    """One MCP request the driver made: a row of ``calls.parquet`` (columns as
    :data:`CALL_COLUMNS`; ``arguments`` and ``result`` already canonical JSON)."""

    call_id: int
    client: str
    actor: str
    tool: str
    arguments: str
    started_s: float
    ended_s: float
    sim_s: float
    ok: bool
    error_code: str | None
    result: str | None
    bytes_sent: int
    bytes_received: int


class CallRecorder:
    """Collects :class:`CallRecord` rows from any thread, numbered in start order.

    :meth:`begin` takes the next ``call_id`` and the start time (seconds since the
    recorder's ``t0``, ``time.monotonic`` based); :meth:`finish` stores the row.
    ``sim_clock`` (optional) gives the SimPy clock at a call's start (NaN outside a day).
    """

    def __init__(self, sim_clock=None) -> None:
        self.t0 = time.monotonic()
        self.started_utc = _utc_now()
        self.sim_clock = sim_clock
        self._lock = threading.Lock()
        self._next_id = 0
        self._rows: dict[int, CallRecord] = {}

    def now_s(self) -> float:
        """Wall seconds since the recorder started."""
        return time.monotonic() - self.t0

    def begin(self) -> tuple[int, float, float]:
        """``(call_id, started_s, sim_s)`` of a call about to be sent."""
        sim_s = math.nan
        if self.sim_clock is not None:
            sim_s = float(self.sim_clock())
        with self._lock:
            call_id = self._next_id
            self._next_id += 1
            return call_id, self.now_s(), sim_s

    def finish(self, call_id: int, started_s: float, sim_s: float, *, client: str, actor: str, tool: str,
               arguments: Any, ok: bool, error_code: str | None, result: Any | None,
               bytes_sent: int, bytes_received: int) -> CallRecord:
        """Store the row of a call that ended (answered, refused or failed) now."""
        row = CallRecord(call_id, client, actor, tool, canonical_json(arguments), started_s, self.now_s(), sim_s,
                         bool(ok), error_code, None if result is None else canonical_json(result),
                         int(bytes_sent), int(bytes_received))
        with self._lock:
            self._rows[call_id] = row
        return row

    def __len__(self) -> int:
        with self._lock:
            return len(self._rows)

    def records(self) -> list[CallRecord]:
        """The rows so far, by ``call_id`` (a call begun but not finished is absent)."""
        with self._lock:
            return [self._rows[key] for key in sorted(self._rows)]

    def frame(self) -> pd.DataFrame:
        """The rows so far as the calls table."""
        return calls_frame(self.records())


def calls_frame(records: list[CallRecord]) -> pd.DataFrame:
    """``records`` as the calls table, with :data:`CALL_COLUMNS`' dtypes."""
    frame = pd.DataFrame.from_records(records, columns=list(CALL_COLUMNS))
    return frame.astype(CALL_COLUMNS)


def _utc_now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


@dataclass(frozen=True)
class History:
    """A history folder as read back: its meta, its calls and its day tables."""

    meta: dict[str, Any]
    calls: pd.DataFrame
    tables: dict[str, pd.DataFrame]

    @property
    def complete(self) -> bool:
        """Whether the day ran to its end (a partial day is never counted as one)."""
        return bool(self.meta["complete"])


def history_meta(*, complete: bool, stopped_because: str | None, server: Mapping[str, Any], tools: list,
                 field_map: Mapping[str, Any], seed: int, speed: float, params: Mapping[str, Any],
                 started_utc: str, calls: int, ended_utc: str | None = None) -> dict[str, Any]:
    """The meta of ``history.json``, keys in the schema's order."""
    server = dict(server)
    if isinstance(server.get("url"), str):
        server["url"] = redacted_url(server["url"])
    return {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "kbsim_version": __version__,
        "complete": bool(complete),
        "stopped_because": stopped_because,
        "server": server,
        "tools": list(tools),
        "field_map": dict(field_map),
        "seed": int(seed),
        "speed": float(speed),
        "params": dict(params),
        "started_utc": started_utc,
        "ended_utc": ended_utc or _utc_now(),
        "calls": int(calls),
    }


def _parquet_bytes(frame: pd.DataFrame) -> bytes:
    buffer = io.BytesIO()
    frame.to_parquet(buffer, index=False)
    return buffer.getvalue()


def write_history(folder: str | Path, meta: Mapping[str, Any], calls: pd.DataFrame,
                  tables: Mapping[str, pd.DataFrame]) -> Path:
    """Write a history folder: each file atomically, ``history.json`` last.

    A folder holding an earlier history is overwritten file by file; its ``history.json``
    is removed first, so a write that fails midway leaves no meta pointing at a mixture.

    Raises:
        HistoryError: ``meta`` is not of this format, or a file could not be written.
    """
    folder = Path(folder)
    if meta.get("format") != FORMAT or meta.get("format_version") != FORMAT_VERSION:
        raise HistoryError(f"{folder}: refusing to write a meta that is not {FORMAT} version {FORMAT_VERSION}")
    missing = [column for column in CALL_COLUMNS if column not in calls.columns]
    if missing:
        raise HistoryError(f"{folder}: the calls table lacks column(s) {', '.join(missing)}")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / META_FILE).unlink(missing_ok=True)
        atomic_write_bytes(folder / CALLS_FILE, _parquet_bytes(calls[list(CALL_COLUMNS)]))
        for name, table in tables.items():
            atomic_write_bytes(folder / f"{name}.parquet", _parquet_bytes(table))
        text = json.dumps({key: meta[key] for key in META_KEYS}, indent=1, ensure_ascii=False) + "\n"
        atomic_write_text(folder / META_FILE, text)
    except (OSError, UsageError) as exc:
        raise HistoryError(f"{folder}: cannot write the history: {exc}") from None
    return folder


def read_history(folder: str | Path) -> History:
    """A history folder read back, its tables as written.

    Raises:
        HistoryError: no ``history.json`` (never finished, or not a history), a meta of
            another format or version, or a missing or unreadable table; one line.
    """
    folder = Path(folder)
    try:
        raw = read_regular(folder / META_FILE, MAX_META_BYTES)
    except FileReadError as exc:
        raise HistoryError(f"{folder}: not a kbsim history ({exc.problem})") from None
    try:
        meta = json.loads(raw)
    except ValueError:
        raise HistoryError(f"{folder / META_FILE}: not JSON") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise HistoryError(f"{folder / META_FILE}: not a {FORMAT} meta (format {_field(meta, 'format')})")
    if meta.get("format_version") != FORMAT_VERSION:
        raise HistoryError(
            f"{folder / META_FILE}: {FORMAT} format_version {_field(meta, 'format_version')} "
            f"(written by kbsim {_field(meta, 'kbsim_version')}); this kbsim reads version {FORMAT_VERSION} only"
        )
    absent = [key for key in META_KEYS if key not in meta]
    if absent:
        raise HistoryError(f"{folder / META_FILE}: lacks {', '.join(absent)}")
    tables: dict[str, pd.DataFrame] = {}
    try:
        calls = pd.read_parquet(folder / CALLS_FILE)
        for path in sorted(folder.glob("*.parquet")):
            if path.name != CALLS_FILE:
                tables[path.stem] = pd.read_parquet(path)
    except (OSError, ValueError) as exc:
        raise HistoryError(f"{folder}: cannot read a table: {type(exc).__name__}") from None
    missing = [column for column in CALL_COLUMNS if column not in calls.columns]
    if missing:
        raise HistoryError(f"{folder / CALLS_FILE}: lacks column(s) {', '.join(missing)}")
    return History(meta, calls, tables)


def _field(meta: Any, key: str) -> str:
    return repr(meta.get(key)) if isinstance(meta, dict) else "absent"
