"""Reading a builder's logs: saves and questions, from any of the formats kbsim knows, split into days.

A log is one file of saves (what people changed in the knowledge base) and, optionally,
one of questions (what the agent was asked about: the article it read and cited). Each
is read from:

- **a CSV file** with a header row: kbsim's own traces (``time``, ``article``, ``kind``;
  what ``kbsim trace export`` writes) or any CSV whose columns :class:`Columns` names
  (``--time-column``, ``--article-column``, ``--kind-column``);
- **a JSONL file**, one object a line with the same keys, or one event of the event log
  (``sequence``, ``type``, ``article_id``, ``updated_at``), or one page that
  ``poll_resource_events`` returned (``{"events": [...], ...}``);
- **a JSON file** holding such a page, or a list of pages or events;
- **a SQLite file** that ``kbsim serve --db`` wrote: its event log, read through the
  ``poll_resource_events`` tool.

A time is an ISO 8601 date and time (with ``Z`` or an offset; without one only when a
time zone is given) or a number of seconds from ``day_start`` (kbsim's traces). Each
event belongs to the calendar day of its local time: in ``timezone`` when one is
given, otherwise in the offset the log wrote it with. Calendar days without any save
or question (a weekend, a day the logging was off) are not days of the log.

Every row is checked; a bad one is an :class:`~kbsim.inputs.InputError` naming the
file, the line and the column. Nothing here estimates anything (:mod:`kbsim.fit.estimates`).
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta, timezone, tzinfo
from pathlib import Path
from typing import Any

import numpy as np

from kbsim.errors import UsageError
from kbsim.files import FileReadError, path_problem, read_regular, read_regular_chunks
from kbsim.fit.columnar import KIND_QUESTION, EventTable, TableBuilder, csv_table
from kbsim.inputs import InputError
from kbsim.inputs.errors import decode_utf8
from kbsim.inputs.safe_read import (
    MAX_DATA_FILE_BYTES,
    JSONDuplicateKeyError,
    JSONTooDeepError,
    csv_records,
    duplicate_key_error,
    json_unique_loads,
    newlines_as_lf,
    unique_header,
)
from kbsim.inputs.traces import ArticleIndex
from kbsim.store import DAY_START

__all__ = [
    "KIND_CODES",
    "KIND_NAMES",
    "SAVE_KINDS",
    "Activity",
    "Columns",
    "EventTable",
    "FitInputError",
    "Log",
    "RawEvent",
    "assemble_log",
    "build_log",
    "parse_timezone",
    "read_events",
    "read_log",
    "read_table",
    "raw_events",
]

SAVE_KINDS = ("content", "content_and_title", "unpublish")
#: How the kind of a save may be written, and which of :data:`SAVE_KINDS` it is. The event
#: log says ``article.updated`` for a change of content and of title alike; ``publish`` is
#: a new article, which a day starting from its corpus cannot replay (left out, counted).
KIND_NAMES = {
    "content": "content", "update": "content", "updated": "content", "edit": "content", "save": "content",
    "article.updated": "content",
    "content_and_title": "content_and_title", "retitle": "content_and_title", "rename": "content_and_title",
    "title": "content_and_title",
    "unpublish": "unpublish", "unpublished": "unpublish", "delete": "unpublish", "deleted": "unpublish",
    "archive": "unpublish", "article.unpublished": "unpublish",
    "publish": "publish", "published": "publish", "create": "publish", "article.published": "publish",
}
#: A save's kind as the columns hold it: its index in :data:`SAVE_KINDS`, ``publish`` after them.
KIND_CODES = {**{kind: i for i, kind in enumerate(SAVE_KINDS)}, "publish": len(SAVE_KINDS)}
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_EPOCH_DATE = date(1970, 1, 1)
_DAY_US = 86_400 * 1_000_000
#: File name endings read as a SQLite event log.
SQLITE_SUFFIXES = (".db", ".sqlite", ".sqlite3")
_EVENT_KEYS = ("type", "article_id", "updated_at")
#: Bytes of a CSV log read at a time.
_CHUNK_BYTES = 16 << 20
#: Rows worked out at a time where a whole column of temporaries is not needed.
_ROWS_AT_ONCE = 1 << 20


class FitInputError(UsageError):
    """An option of ``kbsim fit`` that cannot be used; ``option`` names it."""

    def __init__(self, option: str, problem: str) -> None:
        self.option = option
        self.problem = problem
        super().__init__(f"{option}: {problem}")


@dataclass(frozen=True)
class Columns:
    """Which columns (or JSON keys) of a generic log hold the time, the article and the kind."""

    time: str = "time"
    article: str = "article"
    kind: str = "kind"


@dataclass(frozen=True, slots=True)
class RawEvent:
    """One row of a log as read: its instant, its local wall-clock time, what it names."""

    instant: datetime  # aware
    local: datetime  # naive: the local date and time the day and the hour come from
    article: str
    kind: str | None  # one of SAVE_KINDS or "publish" for a save; None for a question
    line: int


def parse_timezone(text: str | None) -> tzinfo | None:
    """``Europe/Berlin``, ``UTC``, ``Z`` or a fixed offset ``+01:00`` (None: keep each time's own offset).

    Raises:
        FitInputError: naming ``--timezone``.
    """
    if text is None:
        return None
    raw = text.strip()
    if raw.upper() in ("Z", "UTC"):
        return UTC
    match = re.fullmatch(r"([+-])(\d{1,2}):?(\d{2})", raw)
    if match:
        sign, hours, minutes = match.groups()
        offset = timedelta(hours=int(hours), minutes=int(minutes))
        if offset >= timedelta(hours=24):
            raise FitInputError("--timezone", f"offset {text!r} is a day or more")
        return timezone(offset if sign == "+" else -offset)
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        return ZoneInfo(raw)
    except (ZoneInfoNotFoundError, ValueError):
        raise FitInputError(
            "--timezone", f"unknown time zone {text!r}; expected a name such as Europe/Berlin, UTC or an offset "
            "such as +01:00"
        ) from None


# -- reading one file ---------------------------------------------------------------------------


def read_events(
    path: str | Path,
    what: str = "saves",
    *,
    columns: Columns = Columns(),
    tz: tzinfo | None = None,
    day_start: datetime = DAY_START,
    kb_id: str = "kb-1",
) -> tuple[list[RawEvent], list[str]]:
    """The rows of one log file, each checked, and notes on what was assumed or left out
    (:func:`read_table`, one :class:`RawEvent` a row: for small logs and tests).

    Raises:
        InputError: naming the file, the line and the column of the first bad row.
    """
    table, notes = read_table(path, what, columns=columns, tz=tz, day_start=day_start, kb_id=kb_id)
    return raw_events(table), notes


def read_table(
    path: str | Path,
    what: str = "saves",
    *,
    columns: Columns = Columns(),
    tz: tzinfo | None = None,
    day_start: datetime = DAY_START,
    kb_id: str = "kb-1",
) -> tuple[EventTable, list[str]]:
    """The rows of one log file, each checked, as columns, and notes on what was assumed or left out.

    A CSV file is read a block at a time by pyarrow when it can be read exactly so
    (:func:`kbsim.fit.columnar.csv_table`), else row by row; either way memory grows by
    some 30 bytes a row, not by the row's text.

    Args:
        path: a CSV, JSONL, JSON or SQLite file (see the module doc).
        what: ``"saves"`` or ``"questions"``; questions have no kind.
        columns: the columns of a generic CSV or JSONL log.
        tz: the time zone days and hours are counted in (None: each time's own offset).
        day_start: what a time given as a number of seconds counts from.
        kb_id: the knowledge base of a SQLite event log.

    Raises:
        InputError: naming the file, the line and the column of the first bad row.
    """
    path = Path(path)
    if what not in ("saves", "questions"):
        raise ValueError(f"what: expected 'saves' or 'questions', got {what!r}")
    if path.is_dir():
        raise InputError(path, "is a folder; expected a CSV, JSONL, JSON or SQLite log file")
    if path.suffix.lower() in SQLITE_SUFFIXES:
        if what == "questions":
            raise InputError(path, "an event log holds saves, not questions; give the questions as CSV or JSONL")
        return _row_table(path, _sqlite_records(path, kb_id), what, columns, tz, day_start)
    suffix = path.suffix.lower()
    seen: set[str] = set()

    def kind_code(raw: str) -> int | None:
        key = raw.strip().lower()
        seen.add(key)
        kind = KIND_NAMES.get(key)
        return None if kind is None else KIND_CODES[kind]

    def read(source: bytes | Iterable[bytes]) -> tuple[EventTable, int] | None:
        return csv_table(path, source, columns.time, columns.article, columns.kind if what == "saves" else None,
                         kind_code, tz, day_start)

    try:
        if suffix not in (".jsonl", ".ndjson", ".json"):
            # a CSV file a run of lines at a time: its text is never held whole
            with contextlib.closing(read_regular_chunks(path, MAX_DATA_FILE_BYTES, what="log file",
                                                        chunk_bytes=_CHUNK_BYTES)) as chunks:
                fast = read(chunks)
            if fast is not None:
                table, no_kind = fast
                del fast
                return _canonical(table, in_place=True), _reading_notes(path, no_kind, seen)
            seen.clear()
        data = read_regular(path, MAX_DATA_FILE_BYTES, what="log file")
    except FileReadError as exc:
        raise InputError(path, exc.problem) from None
    except FileNotFoundError:
        raise InputError(path, "no such file") from None
    except OSError as exc:
        raise InputError(path, f"cannot read it: {exc.strerror}") from None
    if suffix in (".jsonl", ".ndjson", ".json"):
        text = decode_utf8(path, data)
        del data
        records = _jsonl_records(path, text) if suffix != ".json" else _json_records(path, text)
        return _row_table(path, records, what, columns, tz, day_start)
    lf = newlines_as_lf(data)
    if lf is not data:  # CR its only line ending (old Mac files): read as LF, a column at a time if it can be
        fast = read(lf)
        if fast is not None:
            del data, lf
            table, no_kind = fast
            del fast
            return _canonical(table, in_place=True), _reading_notes(path, no_kind, seen)
    return _row_table(path, _csv_records(path, decode_utf8(path, lf), columns), what, columns, tz, day_start)


def raw_events(table: EventTable) -> list[RawEvent]:
    """The rows of ``table``, one :class:`RawEvent` each (an instant in its own offset)."""
    events = []
    kinds = (*SAVE_KINDS, "publish")
    for instant_us, offset_us, article, kind, line in zip(
            table.instant_us.tolist(), table.offset_us.tolist(), table.article.tolist(), table.kind.tolist(),
            table.line.tolist(), strict=True):
        offset = timedelta(microseconds=offset_us)
        utc = _EPOCH + timedelta(microseconds=instant_us)
        events.append(RawEvent(utc.astimezone(timezone(offset)), (utc + offset).replace(tzinfo=None),
                               table.names[article], None if kind == KIND_QUESTION else kinds[kind], line))
    return events


def _csv_records(path: Path, text: str, columns: Columns) -> Iterator[tuple[int, dict[str, Any]]]:
    # kbsim's bounded CSV reading (kbsim.inputs.safe_read): values of any length, CR-only line
    # endings, and a quote never closed refused at its line instead of swallowing the rest
    records = csv_records(path, text)
    header = [name.strip() for name in next(records, (1, []))[1]]
    if not header:
        raise InputError(path, "empty file; expected a header row naming the columns", line=1)
    unique_header(path, header)
    for name, option in ((columns.time, "--time-column"), (columns.article, "--article-column")):
        if name not in header:
            raise InputError(path, f"missing column {name!r} (the header names {', '.join(map(repr, header))}); "
                             f"name the right one with {option}", line=1, column=name)
    for line, row in records:
        if not any(cell.strip() for cell in row):
            continue
        if len(row) != len(header):
            raise InputError(path, f"{len(row)} values where the header names {len(header)} columns", line=line)
        yield line, {name: value for name, value in zip(header, row, strict=True) if value != ""}


def _jsonl_records(path: Path, text: str) -> Iterator[tuple[int, dict[str, Any]]]:
    for line, raw in enumerate(io.StringIO(text, newline=None), start=1):
        if not raw.strip():
            continue
        try:
            value = json_unique_loads(raw)
        except JSONDuplicateKeyError as exc:
            raise duplicate_key_error(path, exc, line) from None
        except JSONTooDeepError as exc:
            raise InputError(path, f"not JSON ({exc})", line=line) from None
        except json.JSONDecodeError as exc:
            raise InputError(path, f"not JSON ({exc.msg} at column {exc.colno})", line=line) from None
        yield from ((line, record) for record in _unpack(path, value, line))


def _json_records(path: Path, text: str) -> Iterator[tuple[int, dict[str, Any]]]:
    try:
        value = json_unique_loads(text)
    except JSONDuplicateKeyError as exc:
        raise duplicate_key_error(path, exc, None) from None
    except JSONTooDeepError as exc:
        raise InputError(path, f"not JSON ({exc})") from None
    except json.JSONDecodeError as exc:
        raise InputError(path, f"not JSON ({exc.msg})", line=exc.lineno) from None
    # a JSON document has no line per record: events are numbered by their place in it
    yield from enumerate(_unpack(path, value, None), start=1)


def _unpack(path: Path, value: Any, line: int | None) -> Iterator[dict[str, Any]]:
    """The records of a JSON value: a row or an event (an object), a poll page, or a list of them."""
    if isinstance(value, list):
        for item in value:
            yield from _unpack(path, item, line)
    elif isinstance(value, dict) and isinstance(value.get("events"), list):
        yield from _unpack(path, value["events"], line)
    elif isinstance(value, dict):
        yield value
    else:
        raise InputError(path, f"expected an object (a row, an event or a poll page), got {json.dumps(value)[:60]}",
                         line=line)


def _sqlite_records(path: Path, kb_id: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """The event log of a ``kbsim serve --db`` file, paged through ``poll_resource_events``."""
    from kbsim.store import SQLiteStore, StoreBusyError, StoreFileError

    problem = path_problem(path, "SQLite file")
    if problem is not None:
        raise InputError(path, problem)
    try:
        store = SQLiteStore(path)
    except (StoreFileError, StoreBusyError) as exc:  # busy: another process holds the file's lock
        raise InputError(path, str(exc)) from None
    try:
        if not store.has_knowledge_base(kb_id):
            known = ", ".join(store.knowledge_base_ids()) or "none"
            raise InputError(path, f"holds no knowledge base {kb_id!r} (it holds: {known}); name one with --kb-id")
        client = store.client(grants={kb_id}, clock=lambda: 0.0)
        cursor, records = 0, []
        while True:
            page = client.call("poll_resource_events", {
                "resource_type": "knowledge_base", "resource_id": kb_id, "after_sequence": cursor, "limit": 100})
            records.extend(page["events"])
            cursor = page["next_sequence"]
            if not page["has_more"]:
                break
    except StoreBusyError as exc:  # locked while read
        raise InputError(path, str(exc)) from None
    finally:
        store.close()
    return ((int(event["sequence"]), event) for event in records)


def _is_event(record: dict[str, Any]) -> bool:
    return all(key in record for key in _EVENT_KEYS)


def _row_table(path: Path, records: Iterable[tuple[int, dict[str, Any]]], what: str, columns: Columns,
               tz: tzinfo | None, day_start: datetime) -> tuple[EventTable, list[str]]:
    """Every record checked, one at a time, and kept as columns (:class:`~kbsim.fit.columnar.TableBuilder`)."""
    rows = TableBuilder()
    kinds_seen: set[str] = set()
    no_kind = 0
    for line, record in records:
        event = _is_event(record)
        time_key, article_key, kind_key = (
            ("updated_at", "article_id", "type") if event else (columns.time, columns.article, columns.kind))
        where = "line" if path.suffix.lower() not in (".json", *SQLITE_SUFFIXES) else "event"

        def error(problem: str, column: str, line: int = line, where: str = where) -> InputError:
            if where == "line":
                return InputError(path, problem, line=line, column=column)
            return InputError(path, f"event {line}: {problem}", column=column)

        if time_key not in record:
            raise error(f"no {time_key!r}", time_key)
        instant, local = _instant(record[time_key], tz, day_start, lambda p, k=time_key: error(p, k))
        article = record.get(article_key)
        if article is None or (isinstance(article, str) and not article.strip()):
            raise error(f"no {article_key!r}: every row names the article it is about", article_key)
        if not isinstance(article, (str, int)) or isinstance(article, bool):
            raise error(f"expected an article id or title, got {article!r}", article_key)
        kind = KIND_QUESTION
        if what == "saves":
            raw_kind = record.get(kind_key)
            if raw_kind is None:
                no_kind += 1
                kind = KIND_CODES["content"]
            else:
                name = KIND_NAMES.get(str(raw_kind).strip().lower())
                if name is None:
                    raise error(f"unknown kind {raw_kind!r}; expected one of {', '.join(SAVE_KINDS)} (or "
                                f"{', '.join(sorted(set(KIND_NAMES) - set(SAVE_KINDS)))})", kind_key)
                kind = KIND_CODES[name]
                kinds_seen.add(str(raw_kind).strip().lower())
        rows.add(instant, local, str(article).strip(), kind, line)
    table = rows.table()
    if not len(table):
        raise InputError(path, f"holds no {what}")
    return _canonical(table, in_place=True), _reading_notes(path, no_kind, kinds_seen)


def _reading_notes(path: Path, no_kind: int, kinds_seen: set[str]) -> list[str]:
    notes = []
    if no_kind:
        notes.append(f"{path.name}: {no_kind:,} saves name no kind; counted as changes of content")
    if "article.updated" in kinds_seen:
        notes.append(f"{path.name}: the event log says 'article.updated' for a change of content and of title alike; "
                     "the save mix counts both as content")
    return notes


def _instant(value: Any, tz: tzinfo | None, day_start: datetime, error) -> tuple[datetime, datetime]:
    """``(aware instant, naive local time)`` of a time cell."""
    if isinstance(value, bool):
        raise error(f"expected a time, got {value!r}")
    seconds = None
    if isinstance(value, (int, float)):
        seconds = float(value)
    else:
        text = str(value).strip()
        try:
            seconds = float(text)
        except ValueError:
            seconds = None
    if seconds is not None:
        if not math.isfinite(seconds):
            raise error(f"{value!r} is not a finite time")
        try:
            instant = day_start + timedelta(seconds=seconds)
        except OverflowError:
            raise error(f"{value!r} seconds from {day_start.isoformat()} is outside the calendar") from None
    else:
        try:
            instant = datetime.fromisoformat(text)
        except ValueError:
            raise error(f"{value!r} is neither an ISO 8601 time nor a number of seconds") from None
        if instant.tzinfo is None:
            if tz is None:
                raise error(f"{value!r} has no time zone; add Z or an offset such as +01:00, or pass --timezone")
            instant = _localize(instant, tz)
    local = instant.astimezone(tz) if tz is not None else instant
    return instant, local.replace(tzinfo=None)


def _localize(naive: datetime, tz: tzinfo) -> datetime:
    return naive.replace(tzinfo=tz)


# -- the log ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Activity:
    """Saves or questions of a log, one entry per event, sorted by time.

    Attributes:
        time_s: seconds since the log's first day began (its local midnight), on the POSIX clock.
        day: index of the event's day in :attr:`Log.dates`.
        hour: local time of day in hours (0 to 24).
        article: index into :attr:`Log.articles`.
        kind: index into :data:`SAVE_KINDS` (saves), or None (questions).
        line: the row of the file each event came from.
    """

    time_s: np.ndarray
    day: np.ndarray
    hour: np.ndarray
    article: np.ndarray
    kind: np.ndarray | None
    line: np.ndarray
    source: str

    def __len__(self) -> int:
        return len(self.time_s)

    def counts(self, articles: int, days: int) -> np.ndarray:
        """Events per day (rows) and article (columns)."""
        table = np.zeros((days, articles))
        np.add.at(table, (self.day, self.article), 1.0)
        return table


@dataclass(frozen=True)
class Log:
    """A log of saves (and questions) over whole days, with the number of articles known.

    Attributes:
        dates: the calendar days of the log (local dates), in order.
        day_starts: each day's local midnight, as an aware instant.
        articles: the article names the log uses, one per article index (the kbsim id
            when a corpus resolved them); articles never named are not listed, but
            ``n_articles`` counts them.
        n_articles: how many articles the knowledge base holds.
        saves, questions: the events (questions None without a questions log).
        notes: what reading assumed or left out, for the reader of the fit.
        n_source: where ``n_articles`` came from.
    """

    dates: tuple[date, ...]
    day_starts: tuple[datetime, ...]
    articles: tuple[str, ...]
    n_articles: int
    saves: Activity
    questions: Activity | None
    notes: tuple[str, ...] = ()
    n_source: str = ""
    timezone: str = ""
    corpus_source: str | None = None
    origin: dict[str, str] = field(default_factory=dict)

    @property
    def days(self) -> int:
        """How many calendar days the log spans (each one replication)."""
        return len(self.dates)

    def window(self) -> tuple[int, int]:
        """The log's active hours ``(first, end)``: from the first whole hour holding an event on
        any day to the end of the last (``(8, 18)``: 08:00 to 18:00 local time)."""
        hours = [self.saves.hour] + ([self.questions.hour] if self.questions is not None else [])
        first, last = min(float(h.min()) for h in hours), max(float(h.max()) for h in hours)
        return int(math.floor(first)), min(24, int(math.floor(last)) + 1)



def read_log(
    saves: str | Path,
    questions: str | Path | None = None,
    *,
    articles: int | None = None,
    corpus: str | None = None,
    columns: Columns = Columns(),
    tz: tzinfo | None = None,
    day_start: datetime = DAY_START,
    kb_id: str = "kb-1",
) -> Log:
    """The log of ``saves`` (and ``questions``), split into days, with the number of articles.

    ``articles`` or ``corpus`` says how many articles the knowledge base holds (the Zipf
    fit needs it: an article nobody saved is a rank with a count of 0). With ``corpus``
    the log's article names must be the corpus's ids or exact titles; without either, the
    articles the log names are all there are (a note says what that costs).

    Raises:
        InputError: a bad row (file, line, column), or an article the corpus does not hold.
        FitInputError: ``articles`` and ``corpus`` both given, or too few articles.
    """
    if articles is not None and corpus is not None:
        raise FitInputError("--articles", "give --articles or --corpus, not both (a corpus knows its size)")
    save_rows, notes = read_table(saves, "saves", columns=columns, tz=tz, day_start=day_start, kb_id=kb_id)
    question_rows = None
    if questions is not None:
        question_rows, more = read_table(questions, "questions", columns=columns, tz=tz, day_start=day_start)
        notes += more
    return assemble_log(save_rows, question_rows, articles=articles, corpus=corpus, notes=notes,
                        sources=(str(saves), None if questions is None else str(questions)), tz=tz)


def build_log(
    saves: Sequence[RawEvent],
    questions: Sequence[RawEvent] | None,
    *,
    articles: int | None = None,
    corpus: str | None = None,
    notes: Sequence[str] = (),
    sources: tuple[str, str | None] = ("saves", None),
    tz: tzinfo | None = None,
) -> Log:
    """A :class:`Log` from rows already read (:func:`read_events`), or made in memory."""
    return assemble_log(_table_of(saves), None if questions is None else _table_of(questions), articles=articles,
                        corpus=corpus, notes=notes, sources=sources, tz=tz)


def _table_of(events: Sequence[RawEvent]) -> EventTable:
    rows = TableBuilder()
    for event in events:
        rows.add(event.instant, event.local, event.article,
                 KIND_QUESTION if event.kind is None else KIND_CODES[event.kind], event.line)
    return rows.table()


def assemble_log(
    saves: EventTable,
    questions: EventTable | None,
    *,
    articles: int | None = None,
    corpus: str | None = None,
    notes: Sequence[str] = (),
    sources: tuple[str, str | None] = ("saves", None),
    tz: tzinfo | None = None,
) -> Log:
    """A :class:`Log` from the rows of its files (:func:`read_table`).

    The rows are put in a canonical order first, by instant, local time, article name and
    kind, and the articles are indexed in the order that order first names them (saves,
    then questions): so the log, and every estimate of it, is the same whatever order the
    files list their rows in.
    """
    notes = list(notes)
    published = saves.kind == KIND_CODES["publish"]
    if published.any():
        notes.append(f"{int(published.sum()):,} saves publish a new article; a day starts from its corpus and cannot "
                     "replay them, so they are left out")
        saves = saves.take(~published)
    if not len(saves):
        raise InputError(sources[0], "holds no saves besides publications of new articles")
    saves = _canonical(saves)  # as read_table leaves them: no copy; rows made in memory are put in order here
    questions = None if questions is None else _canonical(questions)
    tables = [saves] + ([questions] if questions is not None else [])
    local_day = [_local_days(t) for t in tables]
    day_numbers = _distinct(local_day)
    dates = [_EPOCH_DATE + timedelta(days=int(n)) for n in day_numbers]
    # each day's midnight in the offset of its first event (saves before questions at one instant)
    starts = [_first_of_each(days) for days in local_day]
    firsts = []
    for number in day_numbers.tolist():
        candidates: list[tuple[int, int, int]] = []
        for table, first in zip(tables, starts, strict=True):
            if number in first:
                row = first[number]
                candidates.append((int(table.instant_us[row]), len(candidates), int(table.offset_us[row])))
        firsts.append(min(candidates)[2])
    day_starts = tuple(_local_midnight(day, offset, tz) for day, offset in zip(dates, firsts, strict=True))
    origin = day_starts[0].timestamp()  # POSIX seconds: exact across a change of offset (summer time)
    names, n_articles, n_source, codes = _article_names(saves, questions, articles, corpus, sources)

    def activity(table: EventTable, days: np.ndarray, code: np.ndarray, source: str, with_kind: bool) -> Activity:
        # a million rows at a time: the columns are held once, without column-sized temporaries
        time_s, hour = np.empty(len(table)), np.empty(len(table))
        day = np.empty(len(table), dtype=np.int32)
        for at in range(0, len(table), _ROWS_AT_ONCE):
            rows = slice(at, at + _ROWS_AT_ONCE)
            seconds = table.instant_us[rows] / 1e6
            seconds -= origin
            time_s[rows] = seconds
            # the local hour as datetime's fields give it, h + m / 60 + (s + us / 1e6) / 3600, a field at a time
            of_day = table.instant_us[rows] + table.offset_us[rows]
            of_day %= _DAY_US
            part = (of_day // 3_600_000_000).astype(float)
            part += (of_day // 60_000_000 % 60) / 60
            rest = (of_day % 1_000_000) / 1e6
            rest += of_day // 1_000_000 % 60
            rest /= 3600
            part += rest
            hour[rows] = part
            day[rows] = np.searchsorted(day_numbers, days[rows])
        kind = table.kind if with_kind else None
        return Activity(time_s, day, hour, code[table.article], kind, table.line, source)

    save_activity = activity(saves, local_day[0], codes[0], sources[0], True)
    question_activity = None if questions is None else activity(questions, local_day[1], codes[1],
                                                                 sources[1] or "questions", False)
    span = f"{dates[0].isoformat()} to {dates[-1].isoformat()}"
    calendar = (dates[-1] - dates[0]).days + 1
    if calendar > len(dates):
        notes.append(f"{calendar - len(dates)} calendar days from {span} hold no save and no question (a weekend, "
                     "or a day the logging was off) and are not days of the log")
    zone = "each time's own offset" if tz is None else str(tz)
    return Log(tuple(dates), day_starts, tuple(names), n_articles, save_activity, question_activity,
               tuple(notes), n_source, zone, corpus, {"saves": sources[0], "questions": sources[1] or ""})


def _canonical(table: EventTable, in_place: bool = False) -> EventTable:
    """``table``'s rows in the canonical order: instant, local time, article name, kind (rows
    alike in all four keep their order: nothing read from them differs but their lines).

    ``in_place``: ``table`` is the caller's own (just read): its columns are put in order one
    at a time, in place, so that the rows are never held twice.
    """
    if not len(table):
        return table
    name_rank = np.empty(len(table.names), dtype=np.int64)
    name_rank[np.argsort(np.array(table.names, dtype=object), kind="stable")] = np.arange(len(table.names))
    low = int(table.instant_us.min())
    span = int(table.instant_us.max()) - low
    rank_bits, kind_bits = max(1, len(table.names)).bit_length(), 3
    one_offset = bool(np.all(table.offset_us == table.offset_us[0]))
    if one_offset and span.bit_length() + rank_bits + kind_bits <= 62:
        # the four keys packed into one integer: one stable sort instead of a sort by each (worked out a
        # million rows at a time: no column-sized temporaries besides the key)
        key = np.empty(len(table), dtype=np.int64)
        for at in range(0, len(table), _ROWS_AT_ONCE):
            rows = slice(at, at + _ROWS_AT_ONCE)
            part = table.instant_us[rows] - low
            part <<= rank_bits + kind_bits
            part |= name_rank[table.article[rows]] << kind_bits
            part |= table.kind[rows].astype(np.int64) + 1
            key[rows] = part
        if bool(np.all(key[1:] >= key[:-1])):
            return table  # in order already (as read_table leaves it, or a log written in order)
        order = np.argsort(key, kind="stable")
        del key
    else:
        order = np.lexsort((table.kind, name_rank[table.article], table.offset_us, table.instant_us))
    if np.all(order[1:] > order[:-1]):
        return table  # in order already
    if not in_place:
        return table.take(order)
    for column in (table.instant_us, table.offset_us, table.article, table.kind, table.line):
        column[...] = column[order]
    return table


def _local_days(table: EventTable) -> np.ndarray:
    """The local calendar day of each row, as days since 1970-01-01 (a million rows at a time; every
    time a log can hold is within 5 million years of 1970)."""
    days = np.empty(len(table), dtype=np.int32)
    for at in range(0, len(table), _ROWS_AT_ONCE):
        rows = slice(at, at + _ROWS_AT_ONCE)
        local = table.instant_us[rows] + table.offset_us[rows]
        local //= _DAY_US
        days[rows] = local
    return days


def _distinct(columns: list[np.ndarray]) -> np.ndarray:
    """The distinct values of some integer columns, in order (``np.unique`` of their concatenation,
    counted instead of sorted when they span a few million values at most)."""
    present = [c for c in columns if len(c)]
    low, high = min(int(c.min()) for c in present), max(int(c.max()) for c in present)
    if high - low >= 1 << 22:
        return np.unique(np.concatenate(present))
    seen = np.zeros(high - low + 1, dtype=bool)
    for column in present:
        for at in range(0, len(column), _ROWS_AT_ONCE):
            seen[column[at: at + _ROWS_AT_ONCE] - low] = True
    return np.flatnonzero(seen) + low


def _first_of_each(values: np.ndarray) -> dict[int, int]:
    """Each distinct value's first row: found among the rows that start a run of equal values
    (few when the values come in runs, as a log's days do)."""
    if not len(values):
        return {}
    starts = np.flatnonzero(values[1:] != values[:-1]) + 1
    starts = np.concatenate([[0], starts])
    distinct, first = np.unique(values[starts], return_index=True)
    return dict(zip(distinct.tolist(), starts[first].tolist(), strict=True))


def _in_order_of_first_row(codes: np.ndarray, count: int) -> np.ndarray:
    """The codes (``0 .. count - 1``) that ``codes`` holds, in the order of their first row
    (``codes[np.sort(np.unique(codes, return_index=True)[1])]``, without sorting the rows)."""
    first = np.full(count, len(codes), dtype=np.int64)
    for at in range(0, len(codes), _ROWS_AT_ONCE):
        part = codes[at: at + _ROWS_AT_ONCE]
        np.minimum.at(first, part, np.arange(at, at + len(part)))
    held = np.flatnonzero(first < len(codes))
    return held[np.argsort(first[held], kind="stable")]


def _local_midnight(day: date, offset_us: int, tz: tzinfo | None) -> datetime:
    """The day's local midnight: in ``tz``, else in the offset its first event was written with."""
    midnight = datetime(day.year, day.month, day.day)
    if tz is not None:
        return midnight.replace(tzinfo=tz)
    return midnight.replace(tzinfo=timezone(timedelta(microseconds=offset_us)))


def _article_names(saves: EventTable, questions: EventTable | None, articles, corpus, sources):
    """The article list, ``n``, where ``n`` came from, and each table's code of its names
    (an array: the table's article code to the log's article index)."""
    tables = [saves] + ([questions] if questions is not None else [])
    if corpus is not None:
        from kbsim.inputs import load_corpus
        from kbsim.store import article_id_for

        loaded = load_corpus(corpus)
        ids = [article_id_for(number) for number in range(1, len(loaded) + 1)]
        index = ArticleIndex(ids, loaded.titles, loaded.ids)
        position = {article_id: i for i, article_id in enumerate(ids)}
        codes = []
        for table, source in zip(tables, sources, strict=False):
            code = np.full(len(table.names), -1, dtype=np.int64)
            unknown: dict[int, str] = {}
            for i, name in enumerate(table.names):
                try:
                    code[i] = position[index.resolve(name)]
                except ValueError as exc:
                    unknown[i] = f"{exc} in the corpus {corpus}"
            if unknown:  # the first row, in the file, naming an article the corpus does not hold
                bad = np.isin(table.article, np.fromiter(unknown, dtype=np.int64))
                first = int(np.argmin(np.where(bad, table.line.astype(np.int64), np.iinfo(np.int64).max)))
                raise InputError(source or "questions", unknown[int(table.article[first])],
                                 line=int(table.line[first]), column="article")
            codes.append(code.astype(np.int32))
        return ids, len(ids), f"the corpus {corpus}", codes
    named: dict[str, int] = {}
    codes = []
    for table in tables:
        # the names in the order the (canonically ordered) rows first name them
        for article in _in_order_of_first_row(table.article, len(table.names)).tolist():
            named.setdefault(table.names[article], len(named))
        codes.append(np.array([named.get(name, -1) for name in table.names], dtype=np.int32))
    if articles is None:
        n, n_source = len(named), "the articles the logs name (give --articles or --corpus: articles nobody " \
                                  "saved or asked about are missing, which flattens the fitted law)"
    else:
        if isinstance(articles, bool) or not isinstance(articles, int) or articles < 1:
            raise FitInputError("--articles", f"expected a whole number of articles, got {articles!r}")
        if articles < len(named):
            raise FitInputError("--articles", f"the logs name {len(named):,} distinct articles, more than "
                                f"--articles {articles:,}")
        n, n_source = articles, "--articles"
    if n < 3:
        raise FitInputError("--articles", f"a knowledge base of {n} articles has no popularity to fit; kbsim "
                            "needs at least 3")
    return list(named), n, n_source, codes
