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
from kbsim.files import FileReadError, path_problem, read_regular
from kbsim.inputs import InputError
from kbsim.inputs.errors import decode_utf8
from kbsim.inputs.safe_read import MAX_DATA_FILE_BYTES, JSONTooDeepError, csv_records, json_loads, newlines_as_lf
from kbsim.inputs.traces import ArticleIndex
from kbsim.store import DAY_START

__all__ = [
    "KIND_NAMES",
    "SAVE_KINDS",
    "Activity",
    "Columns",
    "FitInputError",
    "Log",
    "RawEvent",
    "build_log",
    "parse_timezone",
    "read_events",
    "read_log",
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
#: File name endings read as a SQLite event log.
SQLITE_SUFFIXES = (".db", ".sqlite", ".sqlite3")
_EVENT_KEYS = ("type", "article_id", "updated_at")


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
    """The rows of one log file, each checked, and notes on what was assumed or left out.

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
        records = _sqlite_records(path, kb_id)
    else:
        try:
            data = read_regular(path, MAX_DATA_FILE_BYTES, what="log file")
        except FileReadError as exc:
            raise InputError(path, exc.problem) from None
        except FileNotFoundError:
            raise InputError(path, "no such file") from None
        except OSError as exc:
            raise InputError(path, f"cannot read it: {exc.strerror}") from None
        suffix = path.suffix.lower()
        text = decode_utf8(path, data if suffix in (".jsonl", ".ndjson", ".json") else newlines_as_lf(data))
        if suffix in (".jsonl", ".ndjson"):
            records = _jsonl_records(path, text)
        elif suffix == ".json":
            records = _json_records(path, text)
        else:
            records = _csv_records(path, text, columns)
    return _events(path, records, what, columns, tz, day_start)


def _csv_records(path: Path, text: str, columns: Columns) -> Iterator[tuple[int, dict[str, Any]]]:
    # kbsim's bounded CSV reading (kbsim.inputs.safe_read): values of any length, CR-only line
    # endings, and a quote never closed refused at its line instead of swallowing the rest
    records = csv_records(path, text)
    header = [name.strip() for name in next(records, (1, []))[1]]
    if not header:
        raise InputError(path, "empty file; expected a header row naming the columns", line=1)
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
    for line, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            value = json_loads(raw)
        except JSONTooDeepError as exc:
            raise InputError(path, f"not JSON ({exc})", line=line) from None
        except json.JSONDecodeError as exc:
            raise InputError(path, f"not JSON ({exc.msg} at column {exc.colno})", line=line) from None
        yield from ((line, record) for record in _unpack(path, value, line))


def _json_records(path: Path, text: str) -> Iterator[tuple[int, dict[str, Any]]]:
    try:
        value = json_loads(text)
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
    from kbsim.store import SQLiteStore, StoreFileError

    problem = path_problem(path, "SQLite file")
    if problem is not None:
        raise InputError(path, problem)
    try:
        store = SQLiteStore(path)
    except StoreFileError as exc:
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
    finally:
        store.close()
    return ((int(event["sequence"]), event) for event in records)


def _is_event(record: dict[str, Any]) -> bool:
    return all(key in record for key in _EVENT_KEYS)


def _events(path: Path, records: Iterable[tuple[int, dict[str, Any]]], what: str, columns: Columns,
            tz: tzinfo | None, day_start: datetime) -> tuple[list[RawEvent], list[str]]:
    events: list[RawEvent] = []
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
        kind = None
        if what == "saves":
            raw_kind = record.get(kind_key)
            if raw_kind is None:
                no_kind += 1
                kind = "content"
            else:
                kind = KIND_NAMES.get(str(raw_kind).strip().lower())
                if kind is None:
                    raise error(f"unknown kind {raw_kind!r}; expected one of {', '.join(SAVE_KINDS)} (or "
                                f"{', '.join(sorted(set(KIND_NAMES) - set(SAVE_KINDS)))})", kind_key)
                kinds_seen.add(str(raw_kind).strip().lower())
        events.append(RawEvent(instant, local, str(article).strip(), kind, line))
    notes = []
    if no_kind:
        notes.append(f"{path.name}: {no_kind:,} saves name no kind; counted as changes of content")
    if "article.updated" in kinds_seen:
        notes.append(f"{path.name}: the event log says 'article.updated' for a change of content and of title alike; "
                     "the save mix counts both as content")
    if not events:
        raise InputError(path, f"holds no {what}")
    return events, notes


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
        every = np.concatenate(hours)
        return int(math.floor(every.min())), min(24, int(math.floor(every.max())) + 1)



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
    save_events, notes = read_events(saves, "saves", columns=columns, tz=tz, day_start=day_start, kb_id=kb_id)
    question_events = None
    if questions is not None:
        question_events, more = read_events(questions, "questions", columns=columns, tz=tz, day_start=day_start)
        notes += more
    return build_log(save_events, question_events, articles=articles, corpus=corpus, notes=notes,
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
    notes = list(notes)
    published = [event for event in saves if event.kind == "publish"]
    if published:
        notes.append(f"{len(published):,} saves publish a new article; a day starts from its corpus and cannot "
                     "replay them, so they are left out")
        saves = [event for event in saves if event.kind != "publish"]
    if not saves:
        raise InputError(sources[0], "holds no saves besides publications of new articles")
    names, n_articles, n_source, resolve = _article_names(saves, questions, articles, corpus, sources)
    every = [*saves, *(questions or ())]
    dates = sorted({event.local.date() for event in every})
    day_index = {day: i for i, day in enumerate(dates)}
    first_of_day: dict[date, RawEvent] = {}
    for event in every:
        known = first_of_day.get(event.local.date())
        if known is None or event.instant < known.instant:
            first_of_day[event.local.date()] = event
    day_starts = tuple(_local_midnight(day, first_of_day[day], tz) for day in dates)
    origin = day_starts[0].timestamp()  # POSIX seconds: exact across a change of offset (summer time)

    def activity(events: Sequence[RawEvent], source: str, with_kind: bool) -> Activity:
        ordered = sorted(events, key=lambda event: event.instant)
        time_s = np.array([event.instant.timestamp() - origin for event in ordered])
        day = np.array([day_index[event.local.date()] for event in ordered], dtype=int)
        local = [event.local for event in ordered]
        hour = np.array([t.hour + t.minute / 60 + (t.second + t.microsecond / 1e6) / 3600 for t in local])
        article = np.array([resolve(event, source) for event in ordered], dtype=int)
        kind = np.array([SAVE_KINDS.index(event.kind) for event in ordered], dtype=int) if with_kind else None
        line = np.array([event.line for event in ordered], dtype=int)
        return Activity(time_s, day, hour, article, kind, line, source)

    save_activity = activity(saves, sources[0], True)
    question_activity = None if questions is None else activity(questions, sources[1] or "questions", False)
    span = f"{dates[0].isoformat()} to {dates[-1].isoformat()}"
    calendar = (dates[-1] - dates[0]).days + 1
    if calendar > len(dates):
        notes.append(f"{calendar - len(dates)} calendar days from {span} hold no save and no question (a weekend, "
                     "or a day the logging was off) and are not days of the log")
    zone = "each time's own offset" if tz is None else str(tz)
    return Log(tuple(dates), day_starts, tuple(names), n_articles, save_activity, question_activity,
               tuple(notes), n_source, zone, corpus, {"saves": sources[0], "questions": sources[1] or ""})


def _local_midnight(day: date, first: RawEvent, tz: tzinfo | None) -> datetime:
    """The day's local midnight: in ``tz``, else in the offset its first event was written with."""
    midnight = datetime(day.year, day.month, day.day)
    if tz is not None:
        return midnight.replace(tzinfo=tz)
    offset = first.instant.utcoffset() or timedelta(0)
    return midnight.replace(tzinfo=timezone(offset))


def _article_names(saves, questions, articles, corpus, sources):
    """The article list, ``n``, where ``n`` came from, and ``resolve(event, source) -> index``."""
    if corpus is not None:
        from kbsim.inputs import load_corpus
        from kbsim.store import article_id_for

        loaded = load_corpus(corpus)
        ids = [article_id_for(number) for number in range(1, len(loaded) + 1)]
        index = ArticleIndex(ids, loaded.titles, loaded.ids)
        position = {article_id: i for i, article_id in enumerate(ids)}

        def resolve(event: RawEvent, source: str) -> int:
            try:
                return position[index.resolve(event.article)]
            except ValueError as exc:
                raise InputError(source, f"{exc} in the corpus {corpus}", line=event.line, column="article") from None

        return ids, len(ids), f"the corpus {corpus}", resolve
    named: dict[str, int] = {}
    for event in [*saves, *(questions or ())]:
        named.setdefault(event.article, len(named))
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
    return list(named), n, n_source, lambda event, source: named[event.article]
