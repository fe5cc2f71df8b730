"""A log's rows as columns: what :mod:`kbsim.fit.logs` keeps of each row, in a few bytes.

A row of a log becomes five numbers (:class:`EventTable`): its instant and its local
offset in microseconds, its article (a code into the file's distinct names), its kind
and its line. Memory then grows by about 30 bytes a row, and with the article names
and the days, not with the text of the rows.

:func:`csv_table` reads a CSV log with pyarrow's streaming CSV reader, a block at a
time, and parses its times, articles and kinds a column at a time. It takes only what
it can read exactly as the row-by-row reader of :mod:`kbsim.fit.logs` reads it (times
in seconds, or ISO 8601 as ``2026-01-05T09:00:00.5+01:00``, ``Z`` or naive with a time
zone; one row a line), and returns None for anything else, whole: the row-by-row
reader then reads the file and names any bad row by its line and column. The two
readers give the same table for every file the fast one takes (tests/test_fit_reading.py).
"""

from __future__ import annotations

import codecs
import csv
import io
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone, tzinfo
from pathlib import Path

import numpy as np

__all__ = ["KIND_QUESTION", "EventTable", "TableBuilder", "csv_table", "utc_offsets_us"]

#: The kind code of a question (a save's is its index in the kinds, ``publish`` last).
KIND_QUESTION = -1
_US = 1_000_000
_DAY_US = 86_400 * _US
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
#: Rows pyarrow parses at a time (bytes of CSV a block).
_BLOCK_BYTES = 16 << 20
#: A line longer than this (no newline in as many bytes) sends the file to the row reader.
_LONGEST_LINE_BYTES = 64 << 20
#: Characters Python's ``str.strip`` and pyarrow's trimming disagree on, and the U+FDD0 kbsim reserves:
#: a file holding any is read row by row.
_ODD_BYTES = (b"\x0b", b"\x0c", b"\x1c", b"\x1d", b"\x1e", b"\x1f", "\ufdd0".encode())
_SECONDS = r"^[ \t]*[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?[ \t]*$"
_ISO = (r"^[ \t]*(?P<y>\d{4})-(?P<mo>\d{2})-(?P<d>\d{2})[T ](?P<h>\d{2}):(?P<mi>\d{2})"
        r"(?::(?P<s>\d{2})(?:\.(?P<f>\d{1,6}))?)?(?P<z>Z|[+-]\d{2}:\d{2})?[ \t]*$")
#: Seconds from the day start beyond which a time is read row by row (where the calendar ends).
_MAX_SECONDS = 1e10


@dataclass(frozen=True)
class EventTable:
    """The rows of one log file, a column each.

    Attributes:
        instant_us: the POSIX instant of each row, in microseconds.
        offset_us: its local time minus its instant (the local wall clock is ``instant + offset``).
        article: a code into ``names``.
        names: the distinct article names (stripped), in the order first read.
        kind: a save's kind code (index into the kinds, publish included), or :data:`KIND_QUESTION`.
        line: the line (or event number) each row came from.
    """

    instant_us: np.ndarray
    offset_us: np.ndarray
    article: np.ndarray
    names: list[str]
    kind: np.ndarray
    line: np.ndarray

    def __len__(self) -> int:
        return len(self.instant_us)

    def take(self, keep: np.ndarray) -> EventTable:
        """The rows ``keep`` selects (a mask or indices), names kept."""
        return EventTable(self.instant_us[keep], self.offset_us[keep], self.article[keep], self.names,
                          self.kind[keep], self.line[keep])

    @staticmethod
    def concatenate(tables: list[EventTable]) -> EventTable:
        """One table of ``tables``' rows, in order, their names merged."""
        names: dict[str, int] = {}
        articles = []
        for table in tables:
            recode = np.array([names.setdefault(name, len(names)) for name in table.names], dtype=np.int32)
            articles.append(recode[table.article] if len(table.names) else table.article)
        return EventTable(
            np.concatenate([t.instant_us for t in tables]), np.concatenate([t.offset_us for t in tables]),
            np.concatenate(articles).astype(np.int32), list(names), np.concatenate([t.kind for t in tables]),
            np.concatenate([t.line for t in tables]))


class TableBuilder:
    """Rows added one at a time (the row-by-row reader), kept as columns every few thousand."""

    CHUNK = 1 << 16

    def __init__(self) -> None:
        self.names: dict[str, int] = {}
        self.parts: list[tuple[np.ndarray, ...]] = []
        self.rows: list[tuple[int, int, int, int, int]] = []

    def add(self, instant: datetime, local: datetime, article: str, kind: int, line: int) -> None:
        """One row: its aware instant, its naive local time, its article, kind code and line."""
        instant_us = (instant - _EPOCH) // timedelta(microseconds=1)
        offset_us = (local - instant.astimezone(UTC).replace(tzinfo=None)) // timedelta(microseconds=1)
        self.rows.append((instant_us, offset_us, self.names.setdefault(article, len(self.names)), kind, line))
        if len(self.rows) >= self.CHUNK:
            self._flush()

    def _flush(self) -> None:
        if self.rows:
            columns = list(zip(*self.rows, strict=True))
            self.parts.append((np.array(columns[0], dtype=np.int64), np.array(columns[1], dtype=np.int64),
                               np.array(columns[2], dtype=np.int32), np.array(columns[3], dtype=np.int8),
                               np.array(columns[4], dtype=np.int32)))
            self.rows = []

    def table(self) -> EventTable:
        """Every row added, as columns."""
        self._flush()
        if not self.parts:
            empty = np.zeros(0, dtype=np.int64)
            return EventTable(empty, empty, empty.astype(np.int32), [], empty.astype(np.int8), empty)
        instant, offset, article, kind, line = (np.concatenate(part) for part in zip(*self.parts, strict=True))
        return EventTable(instant, offset, article, list(self.names), kind, line)


def utc_offsets_us(tz: tzinfo, instant_us: np.ndarray) -> np.ndarray:
    """The offset of ``tz`` (local minus UTC, microseconds) at each instant, as
    ``instant.astimezone(tz)`` gives it."""
    if isinstance(tz, timezone):
        return np.full(len(instant_us), tz.utcoffset(None) // timedelta(microseconds=1), dtype=np.int64)
    import pandas as pd

    utc = pd.DatetimeIndex(instant_us.astype("datetime64[us]")).tz_localize("UTC")
    return _naive_us(utc.tz_convert(tz).tz_localize(None)) - instant_us


def _naive_us(index) -> np.ndarray:
    """Microseconds since the epoch of a naive pandas index (whatever its unit)."""
    return index.to_numpy(dtype="datetime64[us]").astype(np.int64)


def _localized_us(naive_us: np.ndarray, tz: tzinfo) -> np.ndarray | None:
    """The instants of naive local times in ``tz``, as ``naive.replace(tzinfo=tz)`` gives them,
    or None when one falls in a change of offset (read row by row)."""
    if isinstance(tz, timezone):
        return naive_us - tz.utcoffset(None) // timedelta(microseconds=1)
    import pandas as pd

    local = pd.DatetimeIndex(naive_us.astype("datetime64[us]"))
    try:
        aware = local.tz_localize(tz, ambiguous="NaT", nonexistent="NaT")
    except Exception:  # noqa: BLE001 - pandas refuses what it cannot place; the row reader decides
        return None
    if aware.isna().any():
        return None
    return _naive_us(aware.tz_convert("UTC").tz_localize(None))


def csv_table(path: Path, data: bytes | Iterable[bytes], time_column: str, article_column: str,
              kind_column: str | None, kinds: Callable[[str], int | None], tz: tzinfo | None, day_start: datetime,
              ) -> tuple[EventTable, int] | None:
    """The rows of a CSV log read a column at a time, and how many named no kind; None when the
    file holds anything the row-by-row reader must judge (see the module doc).

    The file is taken a piece at a time (``data`` may be its chunks, as
    :func:`kbsim.files.read_regular_chunks` gives them): each run of whole lines is checked,
    parsed by pyarrow and reduced to the table's columns before the next is read, so the
    file's text is never held whole.

    Args:
        path: the file (for pyarrow's messages, never shown).
        data: its bytes, or its chunks in order; LF or CRLF line endings.
        time_column: the column of the time.
        article_column: the column of the article.
        kind_column: the column of a save's kind, or None (questions, or no such column).
        kinds: a kind as written to its code, or None if unknown.
        tz: the time zone days and hours are counted in (None: each time's own offset).
        day_start: what times in seconds count from.
    """
    if day_start.tzinfo is None or not isinstance(day_start.tzinfo, timezone):
        return None
    reader = _CsvColumns(time_column, article_column, kind_column, kinds, tz, day_start)
    pending = b""
    for chunk in ([data] if isinstance(data, bytes) else data):
        if not chunk:
            continue
        text = pending + chunk if pending else chunk
        cut = text.rfind(b"\n") + 1
        if not cut:  # no whole line yet
            if len(text) > _LONGEST_LINE_BYTES:
                return None  # CR its only line ending, or one huge line: read whole, as the row reader does
            pending = text
            continue
        pending = text[cut:]
        if not reader.add(text[:cut]):
            return None
    if (pending and not reader.add(pending)) or reader.header is None:
        return None
    return reader.table()


class _CsvColumns:
    """The columns of a CSV log built from runs of its whole lines, first to last (:func:`csv_table`)."""

    def __init__(self, time_column: str, article_column: str, kind_column: str | None,
                 kinds: Callable[[str], int | None], tz: tzinfo | None, day_start: datetime) -> None:
        self.time_column, self.article_column, self.kind_column = time_column, article_column, kind_column
        self.kinds, self.tz = kinds, tz
        self.day_start_us = (day_start - _EPOCH) // timedelta(microseconds=1)
        day_offset = day_start.utcoffset()
        assert day_offset is not None  # day_start's tzinfo is a timezone (checked by csv_table)
        self.start_offset_us = day_offset // timedelta(microseconds=1)
        self.header: list[str] | None = None
        self.lines_read = 0  # lines before the next run
        self.names: dict[str, int] = {}
        self.no_kind = 0
        self.parts: tuple[list[np.ndarray], ...] = ([], [], [], [], [])  # instant, offset, article, kind, line

    def add(self, text: bytes) -> bool:
        """Take the next run of whole lines (the last may lack its newline); False: the row reader judges."""
        import pyarrow as pa
        from pyarrow import csv as pa_csv

        if any(b in text for b in _ODD_BYTES) or not _utf8(text) or b'"' in text:
            return False  # pyarrow and Python's csv module read odd quoting and whitespace differently
        body = text
        if self.header is None:
            start = 3 if text.startswith(codecs.BOM_UTF8) else 0
            first_end = text.find(b"\n")
            header_text = text[start: first_end if first_end >= 0 else len(text)].decode("utf-8").rstrip("\r")
            if "\r" in header_text:  # CR as a line ending (the caller reads such a file as LF) or inside a name
                return False
            header = [name.strip() for name in next(csv.reader(io.StringIO(header_text)), [])]
            if not header or len(set(header)) != len(header) or self.time_column not in header \
                    or self.article_column not in header:
                return False
            self.header = header
            self.lines_read = 1
            body = text[first_end + 1:] if first_end >= 0 else b""
        lines = _line_numbers(body, self.lines_read + 1)
        self.lines_read += body.count(b"\n") + (1 if body and not body.endswith(b"\n") else 0)
        if not len(lines):
            return True
        header = self.header
        wanted = [c for c in (self.time_column, self.article_column, self.kind_column) if c is not None and c in header]
        try:
            # one thread (pyarrow's threads cost more processor time than they save here) and no UTF-8
            # check of its own: the text was checked above
            table = pa_csv.read_csv(
                pa.py_buffer(body),
                read_options=pa_csv.ReadOptions(column_names=header, block_size=_BLOCK_BYTES, use_threads=False),
                parse_options=pa_csv.ParseOptions(ignore_empty_lines=True),
                convert_options=pa_csv.ConvertOptions(column_types={name: pa.string() for name in header},
                                                      strings_can_be_null=False, quoted_strings_can_be_null=False,
                                                      include_columns=wanted, check_utf8=False))
        except (pa.ArrowInvalid, ValueError):
            return False
        if table.num_rows != len(lines):
            return False  # lines pyarrow skipped, joined or split: the row reader counts them
        done = 0
        for batch in table.to_batches():
            n = batch.num_rows
            if not n:
                continue
            columns = self._columns(batch)
            if columns is None:
                return False
            for part, values in zip(self.parts, (*columns, lines[done: done + n]), strict=True):
                part.append(values)
            done += n
        del table
        pa.default_memory_pool().release_unused()  # pyarrow's allocator keeps what it freed, run after run
        return True

    def _columns(self, batch) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
        """``(instant, offset, article, kind)`` of a batch of rows, or None."""
        import pyarrow as pa
        import pyarrow.compute as pc

        n = batch.num_rows
        times = batch.column(self.time_column)
        numeric = pc.match_substring_regex(times, _SECONDS)
        instant = np.empty(n, dtype=np.int64)
        offset = np.empty(n, dtype=np.int64)
        is_num = numeric.to_numpy(zero_copy_only=False)
        if is_num.any():
            try:
                seconds = pc.cast(pc.utf8_trim(pc.filter(times, numeric), " \t"), pa.float64()).to_numpy()
            except (pa.ArrowInvalid, ValueError):
                return None
            if not np.all(np.abs(seconds) <= _MAX_SECONDS):
                return None
            whole = np.trunc(seconds)
            instant[is_num] = self.day_start_us + whole.astype(np.int64) * _US + np.rint((seconds - whole) * 1e6) \
                .astype(np.int64)
            offset[is_num] = self.start_offset_us
        if not is_num.all():
            iso = _iso_us(pc.filter(times, pc.invert(numeric)), self.tz)
            if iso is None:
                return None
            instant[~is_num], offset[~is_num] = iso
        if self.tz is not None:
            offset = utc_offsets_us(self.tz, instant)
        article = _codes(batch.column(self.article_column), self.names)
        if article is None:
            return None
        assert self.header is not None
        if self.kind_column is not None and self.kind_column in self.header:
            kind, missing = _kinds(batch.column(self.kind_column), self.kinds)
            if kind is None:
                return None
            self.no_kind += missing
        elif self.kind_column is not None:
            kind = np.zeros(n, dtype=np.int8)
            self.no_kind += n
        else:
            kind = np.full(n, KIND_QUESTION, dtype=np.int8)
        return instant, offset, article, kind

    def table(self) -> tuple[EventTable, int] | None:
        """Every row taken, and how many named no kind; None without a row. Each column is joined
        and its parts let go before the next is joined: the columns are held once and a column twice."""
        if not self.parts[0]:
            return None
        joined = []
        for part in self.parts:
            joined.append(np.concatenate(part))
            part.clear()
        instant, offset, article, kind, line = joined
        return EventTable(instant, offset, article, list(self.names), kind, line), self.no_kind


def _utf8(data: bytes) -> bool:
    """Whether ``data`` is UTF-8, checked a few megabytes at a time (no copy of the whole as text)."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    step = 8 << 20
    try:
        for at in range(0, len(data), step):
            decoder.decode(data[at: at + step], final=at + step >= len(data))
    except UnicodeDecodeError:
        return False
    return True


def _line_numbers(text: bytes, first: int) -> np.ndarray:
    """The numbers of the lines of ``text`` that are not empty (pyarrow skips empty ones), its
    first line numbered ``first``; a line holding only CR (of a CRLF) is empty."""
    count = text.count(b"\n") + (1 if text and not text.endswith(b"\n") else 0)
    if not (text.startswith((b"\n", b"\r\n")) or b"\n\n" in text or b"\n\r\n" in text or text.endswith(b"\n\r")
            or text == b"\r"):
        return np.arange(first, first + count, dtype=np.int32)
    view = np.frombuffer(text, dtype=np.uint8)
    newline = np.flatnonzero(view == 10)
    # line i (from 0) runs from newline[i - 1] + 1 to newline[i]; a last line without a newline ends the text
    ends = newline if len(view) and view[-1] == 10 else np.append(newline, len(view))
    starts = np.empty_like(ends)
    starts[0:1] = 0
    starts[1:] = newline[: len(ends) - 1] + 1
    length = ends - starts
    empty = length == 0
    single = np.flatnonzero(length == 1)
    empty[single] = view[starts[single]] == 13  # a CRLF line with nothing on it
    return (np.flatnonzero(~empty) + first).astype(np.int32)


def _codes(column, names: dict[str, int]) -> np.ndarray | None:
    """The article codes of a column (stripped names added to ``names``); None if one is blank."""
    encoded = column.dictionary_encode().combine_chunks() if hasattr(column, "combine_chunks") \
        else column.dictionary_encode()
    recode = []
    for value in encoded.dictionary.to_pylist():
        name = value.strip()
        if not name:
            return None
        recode.append(names.setdefault(name, len(names)))
    return np.asarray(recode, dtype=np.int32)[encoded.indices.to_numpy(zero_copy_only=False)]


def _kinds(column, kinds: Callable[[str], int | None]) -> tuple[np.ndarray | None, int]:
    """The kind codes of a column (an empty cell: content, counted), or None if one is unknown."""
    encoded = column.dictionary_encode().combine_chunks() if hasattr(column, "combine_chunks") \
        else column.dictionary_encode()
    recode, blank = [], -1
    for i, value in enumerate(encoded.dictionary.to_pylist()):
        if value == "":
            recode.append(0)
            blank = i
            continue
        code = kinds(value)
        if code is None:
            return None, 0
        recode.append(code)
    indices = encoded.indices.to_numpy(zero_copy_only=False)
    return np.asarray(recode, dtype=np.int8)[indices], int(np.count_nonzero(indices == blank)) if blank >= 0 else 0


def _iso_us(times, tz: tzinfo | None) -> tuple[np.ndarray, np.ndarray] | None:
    """``(instant, offset)`` in microseconds of ISO 8601 times, or None if one is not of the
    plain form, not a valid date and time, or naive without a time zone."""
    import pyarrow.compute as pc

    parts = pc.extract_regex(times, _ISO)
    if parts.null_count:
        return None

    def field(name: str, default: int = 0) -> np.ndarray:
        values = pc.struct_field(parts, name)
        filled = pc.if_else(pc.equal(values, ""), str(default), values)
        return pc.cast(filled, "int64").to_numpy()

    year, month, day = field("y"), field("mo"), field("d")
    hour, minute, second = field("h"), field("mi"), field("s")
    fraction = pc.utf8_rpad(pc.struct_field(parts, "f"), 6, "0")
    micro = pc.cast(fraction, "int64").to_numpy()
    if not (np.all((year >= 1900) & (year <= 2200) & (month >= 1) & (month <= 12) & (day >= 1) & (hour < 24)
                   & (minute < 60) & (second < 60))):
        return None
    months = (year - 1970) * 12 + (month - 1)
    first = months.astype("datetime64[M]").astype("datetime64[D]").astype(np.int64)
    following = (months + 1).astype("datetime64[M]").astype("datetime64[D]").astype(np.int64)
    if not np.all(day <= following - first):
        return None
    naive = ((first + day - 1) * 86_400 + hour * 3600 + minute * 60 + second) * _US + micro
    zone = pc.struct_field(parts, "z").to_numpy(zero_copy_only=False)
    given = zone != ""
    offset = np.zeros(len(naive), dtype=np.int64)
    if given.any():
        values, inverse = np.unique(zone[given], return_inverse=True)
        if not all(z == "Z" or (int(z[1:3]) < 24 and int(z[4:6]) < 60) for z in values):
            return None
        explicit = [0 if z == "Z" else (1 if z[0] == "+" else -1) * (int(z[1:3]) * 3600 + int(z[4:6]) * 60)
                    for z in values]
        offset[given] = np.asarray(explicit, dtype=np.int64)[inverse] * _US
    instant = naive - offset
    if not given.all():
        if tz is None:
            return None
        localized = _localized_us(naive[~given], tz)
        if localized is None:
            return None
        instant[~given] = localized
        offset[~given] = naive[~given] - localized
    return instant, offset
