"""Traces: logs of people's saves and questions, read to replay a day and written to export one.

``saves.csv``, one save a row, in time order:

- ``time``: seconds from the start of the day, or an ISO 8601 date and time with a time
  zone (counted from ``day_start``);
- ``article``: the article's id (kbsim's ``art-000001``, or the corpus's own id) or its
  exact current title;
- ``kind``: ``content``, ``content_and_title`` or ``unpublish``;
- optionally ``title`` (the new title of a ``content_and_title`` save), ``content``
  (the new content) or ``length`` (the new content's length in characters: the day
  writes text of that length). What a row leaves out, the day writes.

``questions.csv``, one question a row, in time order: ``time``, and ``article`` (what
the question is about: the agent searches with words of its title), ``query`` (the
words the agent searches with), or both.

Every row is checked before anything runs; a bad one is an
:class:`~kbsim.inputs.errors.InputError` naming the file, the line and the column. Other
columns are ignored. Nothing here knows about SimPy: rows in, rows out.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from kbsim.errors import brief
from kbsim.files import atomic_write_text
from kbsim.inputs import safe_read
from kbsim.inputs.errors import InputError, decode_utf8
from kbsim.store.rules import MAX_CONTENT_CHARS, QUERY_CHARS, title_problem

__all__ = [
    "QUERY_CHARS",
    "QUESTION_COLUMNS",
    "SAVE_COLUMNS",
    "SAVE_KINDS",
    "ArticleIndex",
    "QuestionRow",
    "SaveRow",
    "read_questions_trace",
    "read_saves_trace",
    "write_questions_trace",
    "write_saves_trace",
]

SAVE_KINDS = ("content", "content_and_title", "unpublish")
SAVE_COLUMNS = ("time", "article", "kind", "title", "content", "length")
QUESTION_COLUMNS = ("time", "article", "query")


@dataclass(frozen=True, slots=True)
class SaveRow:
    """One replayed save (``title``, ``content``, ``length``: None when the trace leaves them to the day)."""

    time_s: float
    article_id: str
    kind: str
    title: str | None = None
    content: str | None = None
    length: int | None = None


@dataclass(frozen=True, slots=True)
class QuestionRow:
    """One replayed question: about ``article_id``, or searching ``query``, or both."""

    time_s: float
    article_id: str | None
    query: str | None


class ArticleIndex:
    """How a trace names articles: kbsim's id, the corpus's own id, or the exact title.

    Args:
        article_ids: kbsim's ids, in publication order.
        titles: each article's title at the start of the day.
        source_ids: the corpus's own ids in the same order, or None.
    """

    def __init__(self, article_ids: Sequence[str], titles: Sequence[str],
                 source_ids: Sequence[str] | None = None) -> None:
        self.by_id = {article_id: article_id for article_id in article_ids}
        if source_ids is not None:
            for article_id, source_id in zip(article_ids, source_ids, strict=True):
                self.by_id.setdefault(source_id, article_id)
        self.title_of = dict(zip(article_ids, titles, strict=True))
        self.by_title: dict[str, list[str]] = {}
        for article_id, title in zip(article_ids, titles, strict=True):
            self.by_title.setdefault(title, []).append(article_id)

    def copy(self) -> ArticleIndex:
        """A copy whose titles can change without changing this index's (the ids are shared)."""
        twin = object.__new__(ArticleIndex)
        twin.by_id = self.by_id
        twin.title_of = self.title_of
        twin.by_title = {title: list(ids) for title, ids in self.by_title.items()}
        return twin

    def resolve(self, reference: str) -> str:
        """The kbsim id of the article ``reference`` names; ValueError says why none."""
        if reference in self.by_id:
            return self.by_id[reference]
        found = self.by_title.get(reference, [])
        if len(found) == 1:
            return found[0]
        if found:
            raise ValueError(f"{brief(reference)} is the title of {len(found)} articles ({', '.join(found[:3])}); "
                             "name the article by its id")
        raise ValueError(f"unknown article {brief(reference)}: no article has this id or (current) title")

    def retitle(self, article_id: str, old: str | None, new: str | None) -> None:
        """Record that ``article_id``'s title changed from ``old`` to ``new`` (None: no title)."""
        if old is not None and article_id in self.by_title.get(old, []):
            self.by_title[old].remove(article_id)
        if new is not None:
            self.by_title.setdefault(new, []).append(article_id)


# -- reading --------------------------------------------------------------------------------------


def _rows(path: Path, required: Sequence[str], known: Sequence[str],
          one_of: Sequence[str] = ()) -> Iterable[tuple[int, dict[str, str]]]:
    """``(line, {column: value})`` of each data row; the header must name every ``required``
    column and one at least of ``one_of``."""
    data = safe_read.newlines_as_lf(safe_read.read_input(path, safe_read.MAX_DATA_FILE_BYTES, "trace"))
    records = safe_read.csv_records(path, decode_utf8(path, data))
    header = [name.strip() for name in next(records, (1, []))[1]]
    for column in required:
        if column not in header:
            raise InputError(path, f"missing column {column!r}; expected a header row naming "
                             f"{', '.join(required)} (optionally {', '.join(c for c in known if c not in required)})",
                             line=1, column=column)
    if one_of and not any(column in header for column in one_of):
        raise InputError(path, f"missing column {one_of[0]!r} (or {', '.join(map(repr, one_of[1:]))}); expected "
                         f"{', '.join(required)} and {' or '.join(one_of)} or both", line=1, column=one_of[0])
    index = {column: header.index(column) for column in known if column in header}
    for line, row in records:
        if not any(cell.strip() for cell in row):
            continue
        if len(row) != len(header):
            raise InputError(path, f"{len(row)} values where the header names {len(header)} columns", line=line)
        yield line, {column: row[i] for column, i in index.items() if row[i] != ""}


def _time(path: Path, line: int, text: str, day_s: float, start: datetime, previous: float) -> float:
    def error(problem: str) -> InputError:
        return InputError(path, problem, line=line, column="time")

    try:
        time_s = float(text)
    except ValueError:
        time_s = None
    if time_s is None:
        try:
            instant = datetime.fromisoformat(text.strip())
        except ValueError:
            raise error(f"{brief(text)} is neither seconds from the start of the day nor an ISO 8601 time") from None
        if instant.tzinfo is None:
            raise error(f"{brief(text)} has no time zone; add Z or an offset such as +01:00")
        time_s = (instant - start).total_seconds()
    if not math.isfinite(time_s):
        raise error(f"{brief(text)} is not a finite time")
    if not 0 <= time_s <= day_s:
        raise error(f"{brief(text)} is outside the day: {time_s:g} s from its start {start.isoformat()}, expected 0 "
                    f"to {day_s:g} s (set day_start, or day_hours, to move or widen the day)")
    if time_s < previous:
        raise error(f"{brief(text)} is earlier than the row before ({previous:g} s); the file must be sorted by time")
    return time_s


def read_saves_trace(path: str | Path, articles: ArticleIndex, day_s: float, start: datetime) -> tuple[SaveRow, ...]:
    """The saves of ``path``, every row checked: a missing column, an unknown article, one
    already unpublished, a time outside the day or before the previous row's, an unknown
    kind, text over the content limit each raise :class:`InputError`."""
    path = Path(path)
    index = articles.copy()
    gone: dict[str, int] = {}
    titles: dict[str, str | None] = {}
    rows: list[SaveRow] = []
    previous = 0.0
    for line, row in _rows(path, ("time", "article", "kind"), SAVE_COLUMNS):
        def error(problem: str, column: str, line: int = line) -> InputError:
            return InputError(path, problem, line=line, column=column)

        if "time" not in row:
            raise error("no time", "time")
        previous = time_s = _time(path, line, row["time"], day_s, start, previous)
        if "article" not in row:
            raise error("no article", "article")
        try:
            article_id = index.resolve(row["article"])
        except ValueError as exc:
            raise error(str(exc), "article") from None
        if article_id in gone:
            raise error(f"article {brief(row['article'])} was unpublished at line {gone[article_id]}; nothing can "
                        "save it after that", "article")
        kind = row.get("kind", "").strip()
        if kind not in SAVE_KINDS:
            raise error(f"unknown kind {brief(row.get('kind', ''))}; expected one of {', '.join(SAVE_KINDS)}", "kind")
        title, content, length_text = row.get("title"), row.get("content"), row.get("length")
        if title is not None and kind != "content_and_title":
            raise error(f"a new title is for content_and_title saves, not {kind}", "title")
        problem = None if title is None else title_problem(title.strip())
        if problem:
            # the day searches for titles (the title check, questions about the article)
            raise error(problem, "title")
        if kind == "unpublish" and (content is not None or length_text is not None):
            raise error("an unpublish save has no new content", "content" if content is not None else "length")
        if content is not None and length_text is not None:
            raise error("give the new content or its length, not both", "length")
        if content is not None and len(content) > MAX_CONTENT_CHARS:
            raise error(f"content of {len(content):,} characters is over the limit of {MAX_CONTENT_CHARS:,}",
                        "content")
        length: int | None = None
        if length_text is not None:
            try:
                length = int(length_text)
            except ValueError:
                raise error(f"length {brief(length_text)} is not a whole number of characters", "length") from None
            if not 0 <= length <= MAX_CONTENT_CHARS:
                raise error(f"length {length} is outside 0 to {MAX_CONTENT_CHARS:,} characters", "length")
        if kind == "unpublish":
            gone[article_id] = line
        if kind == "content_and_title":
            old = titles.get(article_id, articles.title_of[article_id])
            index.retitle(article_id, old, title)
            titles[article_id] = title
        rows.append(SaveRow(time_s, article_id, kind, title, content, length))
    return tuple(rows)


def read_questions_trace(path: str | Path, articles: ArticleIndex, day_s: float,
                         start: datetime) -> tuple[QuestionRow, ...]:
    """The questions of ``path``, every row checked (a missing column, an unknown article, a
    query the search tool would refuse, a time outside the day or out of order)."""
    path = Path(path)
    rows: list[QuestionRow] = []
    previous = 0.0
    for line, row in _rows(path, ("time",), QUESTION_COLUMNS, one_of=("article", "query")):
        if "time" not in row:
            raise InputError(path, "no time", line=line, column="time")
        previous = time_s = _time(path, line, row["time"], day_s, start, previous)
        article_id = query = None
        if "article" in row:
            try:
                article_id = articles.resolve(row["article"])
            except ValueError as exc:
                raise InputError(path, str(exc), line=line, column="article") from None
        if "query" in row:
            query = row["query"]
            if not QUERY_CHARS[0] <= len(query) <= QUERY_CHARS[1]:
                raise InputError(path, f"query of {len(query)} characters; the search tool takes "
                                 f"{QUERY_CHARS[0]} to {QUERY_CHARS[1]}", line=line, column="query")
        if article_id is None and query is None:
            raise InputError(path, "neither an article nor a query: give one or both", line=line, column="article")
        rows.append(QuestionRow(time_s, article_id, query))
    return tuple(rows)


# -- writing --------------------------------------------------------------------------------------


def write_saves_trace(path: str | Path, rows: Iterable[SaveRow]) -> Path:
    """Write ``rows`` as a saves trace (times as exact decimal floats), for :func:`read_saves_trace`.

    Written atomically (:func:`kbsim.files.atomic_write_text`): a failure leaves the previous
    file as it was and raises :class:`~kbsim.files.FileWriteError` naming ``path``.
    """
    handle = io.StringIO(newline="")
    writer = csv.writer(handle)
    writer.writerow(("time", "article", "kind", "title", "content"))
    for row in rows:
        writer.writerow((repr(row.time_s), row.article_id, row.kind, _cell(row.title), _cell(row.content)))
    return atomic_write_text(path, handle.getvalue())


def write_questions_trace(path: str | Path, rows: Iterable[QuestionRow]) -> Path:
    """Write ``rows`` as a questions trace, for :func:`read_questions_trace` (atomically, as
    :func:`write_saves_trace`)."""
    handle = io.StringIO(newline="")
    writer = csv.writer(handle)
    writer.writerow(QUESTION_COLUMNS)
    for row in rows:
        writer.writerow((repr(row.time_s), _cell(row.article_id), _cell(row.query)))
    return atomic_write_text(path, handle.getvalue())


def _cell(value: str | None) -> str:
    return "" if value is None else value
