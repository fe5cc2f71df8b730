"""A durable store backend on SQLite, with exactly the in-memory store's semantics.

``SQLiteStore(path)`` keeps knowledge bases, articles, event logs and
idempotency records in one SQLite file (or ``":memory:"``). It answers the
same people's methods and the same ``tool_*`` methods as
:class:`~kbsim.store.memory.MemoryStore`, so :class:`~kbsim.store.client.Client`
(validation, grants, dispatch) is shared, and ``snapshot()`` returns the same
structure so that tests can compare the two backends directly.

How it stays correct with several threads and processes on one file:

- every save (a person's or the agent's edit) is one ``BEGIN IMMEDIATE``
  transaction: lookup, compare-and-swap, update, search-index update, event
  append and idempotency record commit together or not at all;
- reads that need more than one statement run in one read transaction
  (WAL gives each a consistent snapshot, and readers never block the writer);
- each thread gets its own connection (an in-memory database, which a second
  connection could not see, has one connection behind a lock);
- a writer that waits longer than ``busy_timeout_s`` for the write lock gets
  :class:`StoreBusyError`, a ``ToolError`` with the retryable code ``busy``;
- with ``shared_clock=True`` (what ``kbsim serve --db`` uses) the time is
  shared through the file: a new version is never earlier than the knowledge
  base's latest event, so processes whose clocks disagree still write a log
  whose ``updated_at`` never goes back.

What it checks when it opens an existing file, before changing anything (the
header, the write-ahead log, ``PRAGMA quick_check``, the tables against each
other), and the errors it raises, are in :mod:`kbsim.store.sqlite_files`; the
tables, the schema version and its migrations are in
:mod:`kbsim.store.sqlite_schema`.

Search uses one FTS5 table per knowledge base and its ``bm25()`` ranking,
arranged so that both backends rank exactly alike (a simulated day gives the
same tables on either):

- the index holds the text as the knowledge base's analyzer splits it (recorded
  with the knowledge base; :mod:`kbsim.store.analyzer`), so both match exactly the
  same terms: the default ``ascii`` analyzer's terms are FTS5's ``unicode61``
  tokens, and any other analyzer's table uses FTS5's ``ascii`` tokenizer, which keeps
  every non-ASCII character inside its token, so each term is one token;
- the title column holds the title's terms ``TITLE_WEIGHT`` times, so that
  FTS5's term frequencies *and* document lengths are the in-memory index's
  title-weighted ones (``bm25()`` column weights would scale only the former);
- each query term is looked up on its own, and its ``bm25()`` score is
  re-weighted from FTS5's IDF, ``log((N - n + 0.5) / (n + 0.5))`` (floored at
  1e-6, so a term in half the articles counts for nothing), to the in-memory
  index's ``log(1 + (N - n + 0.5) / (n + 0.5))``; the per-term scores are summed.

Scores then equal the in-memory ones up to floating-point rounding (about
1e-15 relative); ties are broken by article id on both.

User strings are stored as UTF-8 BLOBs with ``surrogatepass``
(:func:`~kbsim.store.sqlite_schema.encode_text`), so any Python string the tool
schema admits, including a lone surrogate, round-trips exactly as it does in memory.
"""

from __future__ import annotations

import heapq
import json
import math
import numbers
import os
import sqlite3
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, nullcontext, suppress
from typing import Any, NamedTuple

from kbsim.store.analyzer import ASCII, Analyzer, analyzer_named
from kbsim.store.bm25 import BM25Index
from kbsim.store.client import Client, Clock
from kbsim.store.errors import ToolError
from kbsim.store.rules import (
    Article,
    arguments_digest,
    article_not_found,
    check_article_ids,
    check_at,
    check_count,
    check_edit_limits,
    check_expected_version,
    check_new_kb_id,
    check_next_version,
    check_now_us,
    check_optional_text,
    check_poll_cursor,
    check_replay,
    check_retention,
    check_save_changes,
    check_text,
    checked_articles,
    citation,
    kb_exists,
    kb_not_found,
    next_article_id,
    read_result,
    search_hit,
)
from kbsim.store.schema import validate_arguments
from kbsim.store.sqlite_files import (
    StoreBusyError,
    StoreFileError,
    busy_error,
    check_existing_file,
    check_header,
    file_error,
    is_busy,
)
from kbsim.store.sqlite_schema import (
    APPLICATION_ID,
    SCHEMA_VERSION,
    create_schema,
    decode_text,
    encode_text,
    migrate,
)
from kbsim.store.subscriptions import Subscribable
from kbsim.store.timefmt import MIN_VERSION_US, format_version, seconds_to_us

# The schema's version and the file errors are part of this module's API, as before the split.
__all__ = [
    "APPLICATION_ID",
    "SCHEMA_VERSION",
    "TITLE_WEIGHT",
    "SQLiteStore",
    "StoreBusyError",
    "StoreFileError",
    "fts5_available",
]

#: How many body occurrences one title occurrence counts as (MemoryStore's BM25Index
#: default). FTS5's bm25() fixes k1=1.2 and b=0.75, which are BM25Index's defaults too.
TITLE_WEIGHT = BM25Index().title_weight

_SYNCHRONOUS = ("OFF", "NORMAL", "FULL", "EXTRA")


class _ArticleRow(NamedTuple):
    """A published article as one transaction read it."""

    kb_rowid: int
    article_rowid: int
    article_id: str
    title: bytes
    content: bytes
    version_us: int


def _lookup(value: Any) -> bytes | None:
    """An id as bound in a lookup; a non-string matches nothing, as a dict lookup would."""
    return encode_text(value) if isinstance(value, str) else None


def _indexed(title: str, content: str, analyzer: Analyzer = ASCII) -> tuple[str, str]:
    """The (title, body) the FTS5 index holds: the terms ``analyzer`` finds, the title's
    ``TITLE_WEIGHT`` times."""
    tokenize = analyzer.tokenize
    return " ".join(tokenize(title) * TITLE_WEIGHT), " ".join(tokenize(content))


def _fts_options(analyzer: Analyzer) -> str:
    """The FTS5 table's options: ``unicode61`` (FTS5's default) splits the ``ascii``
    analyzer's terms as it does; any other analyzer's terms are kept whole by FTS5's
    ``ascii`` tokenizer (spaces separate them; no term holds an ASCII separator)."""
    return "" if analyzer.is_default else ", tokenize = 'ascii'"


def fts5_available() -> bool:
    """Whether this Python's SQLite library was built with FTS5."""
    probe = sqlite3.connect(":memory:")
    try:
        probe.execute("CREATE VIRTUAL TABLE probe USING fts5(text)")
    except sqlite3.OperationalError:
        return False
    finally:
        probe.close()
    return True


class SQLiteStore(Subscribable):
    """One or more knowledge bases in a SQLite file: durable and safe to share.

    Several threads, and several processes each opening the same path, may
    use one file at once; every rule of the in-memory store (compare-and-swap,
    gapless sequences, idempotent edits, event retention) holds across them.

    Args:
        path: a file path, or ``":memory:"`` for a private in-memory database.
        event_retention_s: keep events for this many simulated seconds after
            they were written; ``None`` (the default) keeps everything.
        busy_timeout_s: how long a writer waits for another connection's
            write lock before :class:`StoreBusyError`.
        synchronous: SQLite's ``PRAGMA synchronous``. ``"FULL"`` (the default)
            makes every applied save survive a power cut; ``"NORMAL"`` is
            several times faster per save and still survives a crash of the
            process (but may lose the latest saves on power loss).
        shared_clock: never date a change earlier than the knowledge base's
            latest event, so that processes with clocks of their own keep the
            log's ``updated_at`` in order (``kbsim serve --db`` turns it on).
            Off by default: versions then follow ``at`` exactly as in
            ``MemoryStore``.

    Raises:
        StoreFileError: ``path`` holds something other than a kbsim database,
            a kbsim database of a newer schema version, a damaged one, or one
            whose write-ahead log was lost; the file is not modified.
        StoreBusyError: another process held the file's write lock for longer
            than ``busy_timeout_s`` while it was opened.
        RuntimeError: this Python's SQLite lacks the FTS5 extension.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        event_retention_s: float | None = None,
        *,
        busy_timeout_s: float = 5.0,
        synchronous: str = "FULL",
        shared_clock: bool = False,
    ) -> None:
        event_retention_s = check_retention(event_retention_s)
        if (
            isinstance(busy_timeout_s, bool)
            or not isinstance(busy_timeout_s, numbers.Real)
            or not 0 < busy_timeout_s < math.inf
        ):
            raise ValueError(f"busy_timeout_s must be a finite number > 0, got {busy_timeout_s!r}")
        if str(synchronous).upper() not in _SYNCHRONOUS:
            raise ValueError(
                f"synchronous must be one of {', '.join(_SYNCHRONOUS)}, got {synchronous!r}"
            )
        self.path: str = os.fspath(path)
        if not self.path:
            raise ValueError("path must be a file path or ':memory:', got ''")
        if not fts5_available():
            raise RuntimeError(
                f"the SQLite library {sqlite3.sqlite_version} used by this Python was built "
                "without FTS5, which SQLiteStore needs for search; use a Python whose sqlite3 "
                "has FTS5 (the python.org and most Linux builds do) or MemoryStore"
            )
        self.event_retention_s: float | None = event_retention_s
        self.event_retention_us: int | None = (
            None if event_retention_s is None else seconds_to_us(event_retention_s)
        )
        self.busy_timeout_s: float = float(busy_timeout_s)
        self.synchronous: str = str(synchronous).upper()
        self.shared_clock: bool = bool(shared_clock)
        self._in_memory: bool = self.path == ":memory:"
        self._pid: int = os.getpid()
        self._local: threading.local = threading.local()
        self._connections: list[sqlite3.Connection] = []
        self._connections_lock: threading.Lock = threading.Lock()
        # An in-memory database lives in one connection, shared behind this lock.
        self._shared_lock: threading.RLock | None = threading.RLock() if self._in_memory else None
        self._kb_rowids: dict[str, int] = {}
        # kb_rowid -> its analyzer (recorded when the knowledge base was made; never changes)
        self._analyzers: dict[int, Analyzer] = {}
        self._closed: bool = False
        if not self._in_memory:
            check_existing_file(self.path, self.busy_timeout_s)
        self._initialise()

    # -- opening and closing -----------------------------------------------------

    def __repr__(self) -> str:
        return f"SQLiteStore({self.path!r})"

    def __reduce__(self):
        # A file store travels to another process as its path; each side opens its own
        # connections. A private in-memory database cannot be shared that way.
        if self._in_memory:
            raise TypeError("an in-memory SQLiteStore cannot be sent to another process")
        return (
            _reopen,
            (self.path, self.event_retention_s, self.busy_timeout_s, self.synchronous,
             self.shared_clock),
        )

    def __enter__(self) -> SQLiteStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        """Close every connection this store opened (in this process)."""
        with self._connections_lock:
            connections, self._connections = self._connections, []
        for conn in connections:
            conn.close()
        self._local = threading.local()
        self._closed = True

    def _initialise(self) -> None:
        """Create the schema in an empty database, or migrate an older one, atomically."""
        if not self._in_memory:
            # WAL before the schema: a second process opening the new file meanwhile
            # then only ever sees it in WAL mode, and never blocks the switch.
            with self._shared_lock or nullcontext():
                try:
                    mode = self._connection().execute("PRAGMA journal_mode = WAL").fetchone()[0]
                except sqlite3.DatabaseError as exc:
                    if is_busy(exc):
                        raise busy_error(self.path, self.busy_timeout_s) from exc
                    raise file_error(self.path, exc) from exc
            if mode.lower() != "wal":
                raise StoreFileError(f"{self.path!r} could not be switched to WAL mode ({mode})")
        with self._write() as conn:
            if check_header(conn, self.path):
                create_schema(conn)
            else:
                migrate(conn)

    def _connection(self) -> sqlite3.Connection:
        """This thread's connection (the shared one for an in-memory database)."""
        if os.getpid() != self._pid:
            # A connection must not cross fork(): a child opens its own and leaves the
            # parent's alone (closing them here could drop the parent's file locks).
            if self._in_memory:
                raise RuntimeError("an in-memory SQLiteStore cannot be used after fork()")
            self._pid = os.getpid()
            self._local = threading.local()
            self._connections = []
            self._connections_lock = threading.Lock()
        if self._closed:
            raise RuntimeError(f"{self!r} is closed")
        if self._in_memory and self._connections:
            return self._connections[0]
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(
                self.path,
                timeout=self.busy_timeout_s,
                isolation_level=None,  # we issue BEGIN / COMMIT ourselves
                check_same_thread=False,  # close() may run on another thread
            )
            conn.execute(f"PRAGMA synchronous = {self.synchronous}")
            self._local.conn = conn
            with self._connections_lock:
                self._connections.append(conn)
        return conn

    @contextmanager
    def _transaction(self, begin: str) -> Iterator[sqlite3.Connection]:
        with self._shared_lock or nullcontext():
            conn = None
            try:
                conn = self._connection()
                conn.execute(begin)
                try:
                    yield conn
                except BaseException:
                    if conn.in_transaction:
                        conn.execute("ROLLBACK")
                    raise
                conn.execute("COMMIT")
            except sqlite3.DatabaseError as exc:
                if conn is not None and conn.in_transaction:
                    with suppress(sqlite3.Error):
                        conn.execute("ROLLBACK")
                if is_busy(exc):
                    raise busy_error(self.path, self.busy_timeout_s) from exc
                if isinstance(exc, (sqlite3.IntegrityError, sqlite3.ProgrammingError,
                                    sqlite3.DataError)):
                    raise  # a kbsim bug or an oversized value, not the file's fault
                raise file_error(self.path, exc) from exc

    def _write(self):
        """One all-or-nothing write transaction holding the write lock from its start."""
        return self._transaction("BEGIN IMMEDIATE")

    def _read(self):
        """One read transaction: a consistent snapshot across its statements."""
        return self._transaction("BEGIN")

    # -- people's side -------------------------------------------------------------

    def create_knowledge_base(
        self, kb_id: str, articles: Iterable[tuple[str, str]] = (), *, at: float = 0.0,
        article_ids: Iterable[str] | None = None, analyzer: Analyzer = ASCII,
    ) -> list[str]:
        """Create a knowledge base, its id new, holding ``articles`` published at ``at``.

        One transaction: the knowledge base appears, to every process, with all
        of the ``(title, content)`` pairs, or (an error, a kill, Ctrl-C while
        ``articles`` is consumed) not at all. Returns the articles' ids:
        ``article_ids`` (the source's own), else ``art-000001``, ... ``analyzer`` is
        recorded with the knowledge base and makes its search terms from then on.
        """
        check_new_kb_id(kb_id)
        at_us = check_at(at)
        if not isinstance(analyzer, Analyzer):
            raise ToolError("invalid_argument", f"analyzer must be an Analyzer, got {type(analyzer).__name__}")
        if article_ids is not None:
            articles = list(checked_articles(articles))
            article_ids = check_article_ids(article_ids, len(articles))
        with self._write() as conn:
            if self._kb_row(conn, kb_id) is not None:
                raise kb_exists(kb_id)
            kb_rowid = conn.execute(
                "INSERT INTO knowledge_bases (kb_id, analyzer) VALUES (?, ?)", (encode_text(kb_id), analyzer.name)
            ).lastrowid
            conn.execute(f"CREATE VIRTUAL TABLE fts_{kb_rowid} USING fts5(title, body{_fts_options(analyzer)})")
            own = iter(article_ids) if article_ids is not None else None
            ids = [
                self._publish(conn, kb_rowid, n, title, content, at_us, analyzer,
                              None if own is None else next(own))
                for n, (title, content) in enumerate(checked_articles(articles))
            ]
        return ids

    def analyzer_name(self, kb_id: str) -> str:
        """The :attr:`~kbsim.store.analyzer.Analyzer.name` of the knowledge base's analyzer."""
        with self._read() as conn:
            return self._analyzer(conn, self._kb_rowid(conn, kb_id)).name

    def knowledge_base_ids(self) -> list[str]:
        """Every knowledge base's id, in creation order."""
        with self._read() as conn:
            rows = conn.execute("SELECT kb_id FROM knowledge_bases ORDER BY kb_rowid").fetchall()
        return [decode_text(kb_id) for (kb_id,) in rows]

    def publish_article(self, kb_id: str, *, title: str, content: str, at: float) -> str:
        """Publish a new article; returns its id."""
        check_text(kb_id, "kb_id")
        check_text(title, "title")
        check_text(content, "content")
        at_us = check_at(at)
        with self._write() as conn:
            kb_rowid, article_count, _, _ = self._kb(conn, kb_id)
            return self._publish(
                conn, kb_rowid, article_count, title, content, at_us, self._analyzer(conn, kb_rowid)
            )

    def save_article(
        self,
        kb_id: str,
        article_id: str,
        *,
        at: float,
        content: str | None = None,
        title: str | None = None,
    ) -> str:
        """A person's save of a published article; returns the new ``updated_at``."""
        check_text(kb_id, "kb_id")
        check_text(article_id, "article_id")
        at_us = check_at(at)
        check_optional_text(content, "content")
        check_optional_text(title, "title")
        check_save_changes(content, title)
        with self._write() as conn:
            row = self._published(conn, kb_id, article_id)
            version = self._apply_update(conn, row, at_us, content, title)
        self._article_changed(kb_id, article_id, "article.updated", version)  # once committed
        return format_version(version)

    def unpublish_article(self, kb_id: str, article_id: str, *, at: float, log_event: bool = True) -> str:
        """Take an article out of search and reads; returns its final ``updated_at``.

        ``log_event=False`` writes no ``article.unpublished`` event: the article simply stops
        being readable (``events.log_unpublish: false``, issue 27).
        """
        check_text(kb_id, "kb_id")
        check_text(article_id, "article_id")
        at_us = check_at(at)
        with self._write() as conn:
            row = self._published(conn, kb_id, article_id)
            version = check_next_version(
                max(at_us, row.version_us + 1, self._kb_clock(conn, row.kb_rowid)), article_id
            )
            conn.execute(
                "UPDATE articles SET published = 0, version_us = ? WHERE article_rowid = ?",
                (version, row.article_rowid),
            )
            conn.execute(f"DELETE FROM fts_{row.kb_rowid} WHERE rowid = ?", (row.article_rowid,))
            conn.execute(
                "UPDATE knowledge_bases SET published = published - 1 WHERE kb_rowid = ?",
                (row.kb_rowid,),
            )
            if log_event:
                self._append_event(conn, row.kb_rowid, "article.unpublished", article_id, version)
        self._article_changed(kb_id, article_id, "article.unpublished", version)
        return format_version(version)

    # -- ground truth (never through the agent's tools) ------------------------------

    def current_version(self, kb_id: str, article_id: str) -> str | None:
        """The article's ``updated_at`` if it is published, else ``None``."""
        check_text(article_id, "article_id")
        with self._read() as conn:
            kb_rowid = self._kb_rowid(conn, kb_id)
            row = conn.execute(
                "SELECT published, version_us FROM articles WHERE kb_rowid = ? AND article_id = ?",
                (kb_rowid, _lookup(article_id)),
            ).fetchone()
        if row is None or not row[0]:
            return None
        return format_version(row[1])

    def article_state(self, kb_id: str, article_id: str) -> Article:
        """A copy of one article's full state, published or not."""
        check_text(article_id, "article_id")
        with self._read() as conn:
            kb_rowid = self._kb_rowid(conn, kb_id)
            row = conn.execute(
                "SELECT title, content, published, version_us FROM articles "
                "WHERE kb_rowid = ? AND article_id = ?",
                (kb_rowid, _lookup(article_id)),
            ).fetchone()
        if row is None:
            raise article_not_found(kb_id, article_id)
        title, content, published, version = row
        return Article(article_id, decode_text(title), decode_text(content), bool(published), version)

    def published_article_ids(self, kb_id: str) -> list[str]:
        """Every published article's id, in publication order."""
        return self._article_ids(kb_id, published=True)

    def unpublished_article_ids(self, kb_id: str) -> list[str]:
        """Every unpublished article's id, sorted."""
        return sorted(self._article_ids(kb_id, published=False))

    def _article_ids(self, kb_id: str, *, published: bool) -> list[str]:
        """The ids of the KB's published (or unpublished) articles, in publication order."""
        with self._read() as conn:
            kb_rowid = self._kb_rowid(conn, kb_id)
            rows = conn.execute(
                "SELECT article_id FROM articles WHERE kb_rowid = ? AND (published != 0) = ? "
                "ORDER BY article_rowid",
                (kb_rowid, int(published)),
            ).fetchall()
        return [decode_text(article_id) for (article_id,) in rows]

    def latest_sequence(self, kb_id: str) -> int:
        """The sequence number of the knowledge base's latest event (0 before any)."""
        with self._read() as conn:
            return self._kb(conn, kb_id)[3] - 1

    def snapshot(self) -> dict[str, Any]:
        """Every piece of state, in the same structure as ``MemoryStore.snapshot()``."""
        with self._read() as conn:
            kbs = {}
            for kb_rowid, kb_id, first_seq, next_seq in conn.execute(
                "SELECT kb_rowid, kb_id, first_seq, next_seq FROM knowledge_bases "
                "ORDER BY kb_rowid"
            ).fetchall():
                articles = conn.execute(
                    "SELECT article_id, title, content, published, version_us FROM articles "
                    "WHERE kb_rowid = ? ORDER BY article_rowid",
                    (kb_rowid,),
                ).fetchall()
                events = conn.execute(
                    "SELECT sequence, type, article_id, version_us FROM events "
                    "WHERE kb_rowid = ? ORDER BY sequence",
                    (kb_rowid,),
                ).fetchall()
                index_docs = conn.execute(f"SELECT count(*) FROM fts_{kb_rowid}").fetchone()[0]
                kbs[decode_text(kb_id)] = {
                    "articles": [
                        (decode_text(a), decode_text(t), decode_text(c), bool(p), v)
                        for a, t, c, p, v in articles
                    ],
                    "events": [(s, kind, decode_text(a), v) for s, kind, a, v in events],
                    "first_seq": first_seq,
                    "next_seq": next_seq,
                    "index_docs": index_docs,
                }
            idempotency = {
                decode_text(key): (digest, json.loads(result))
                for key, digest, result in conn.execute(
                    "SELECT idempotency_key, arguments_sha256, result FROM idempotency "
                    "ORDER BY recorded"
                )
            }
        return {"kbs": kbs, "idempotency": idempotency}

    # -- the agent's side ----------------------------------------------------------

    def client(self, grants: set[str] | frozenset[str], clock: Clock) -> Client:
        """The agent's view: tool calls limited to ``grants``, timed by ``clock()``."""
        return Client(self, grants, clock)

    def has_knowledge_base(self, kb_id: str) -> bool:
        """Whether a knowledge base ``kb_id`` exists."""
        if check_text(kb_id, "kb_id") in self._kb_rowids:
            return True
        with self._read() as conn:
            return self._kb_row(conn, kb_id) is not None

    def tool_search(self, kb_id: str, query: str, limit: int) -> dict[str, Any]:
        """``search_knowledge_base``: the ``limit`` best-ranked published articles for ``query``."""
        check_text(kb_id, "kb_id")
        check_text(query, "query")
        limit = check_count(limit, "limit", 1)
        with self._read() as conn:
            kb_rowid = self._kb_rowid(conn, kb_id)
            best = self._rank(conn, kb_rowid, query, limit)
            rows = {}
            if best:
                marks = ", ".join("?" * len(best))
                for article_id, title, content, version in conn.execute(
                    "SELECT article_id, title, content, version_us FROM articles "
                    f"WHERE kb_rowid = ? AND article_id IN ({marks})",
                    (kb_rowid, *best),
                ):
                    rows[article_id] = (title, content, version)
        results = []
        for article_id in best:
            title, content, version = rows[article_id]
            article = Article(decode_text(article_id), decode_text(title), decode_text(content), True, version)
            results.append(search_hit(kb_id, article))
        return {"results": results}

    def tool_read(self, kb_id: str, article_id: str) -> dict[str, Any]:
        """``read_knowledge_article``: a published article's title, content and version."""
        check_text(kb_id, "kb_id")
        check_text(article_id, "article_id")
        with self._read() as conn:
            row = self._published(conn, kb_id, article_id)
        article = Article(
            article_id, decode_text(row.title), decode_text(row.content), True, row.version_us
        )
        return read_result(kb_id, article)

    def tool_edit(self, arguments: dict[str, Any], now_us: int) -> dict[str, Any]:
        """``edit_knowledge_article``: apply the agent's edit, or replay the result its idempotency key recorded."""
        arguments = validate_arguments("edit_knowledge_article", arguments)
        check_edit_limits(arguments)
        now_us = check_now_us(now_us)
        kb_id = arguments["knowledge_base_id"]
        key = arguments["idempotency_key"]
        with self._write() as conn:
            self._kb_rowid(conn, kb_id)
            previous = conn.execute(
                "SELECT arguments_sha256, result FROM idempotency WHERE idempotency_key = ?",
                (encode_text(key),),
            ).fetchone()
            if previous is not None:
                check_replay(key, previous[0], arguments)
                return {**json.loads(previous[1]), "replayed": True}
            article_id = arguments["article_id"]
            row = self._published(conn, kb_id, article_id)
            check_expected_version(arguments, row.version_us)
            title = arguments.get("title")
            version = self._apply_update(conn, row, now_us, arguments["content"], title)
            updated_at = format_version(version)
            result = {
                "article_id": article_id,
                "title": title if title is not None else decode_text(row.title),
                "updated_at": updated_at,
                "citation": citation(kb_id, article_id, updated_at),
                "replayed": False,
            }
            conn.execute(
                "INSERT INTO idempotency (idempotency_key, arguments_sha256, result) "
                "VALUES (?, ?, ?)",
                (encode_text(key), arguments_digest(arguments), json.dumps(result)),
            )
        self._article_changed(kb_id, article_id, "article.updated", version)
        return result

    def tool_poll(self, kb_id: str, after_sequence: int, limit: int, now_us: int) -> dict[str, Any]:
        """``poll_resource_events``: up to ``limit`` events after ``after_sequence`` still kept at ``now_us``."""
        check_text(kb_id, "kb_id")
        after_sequence = check_count(after_sequence, "after_sequence", 0)
        limit = check_count(limit, "limit", 1)
        now_us = check_now_us(now_us)
        with self._read() as conn:
            kb_rowid, _, first_seq, next_seq = self._kb(conn, kb_id)
            # A poll is a read: it hides what the window has dropped by now_us and leaves
            # the dropping itself to the next save.
            oldest = self._oldest_kept(conn, kb_rowid, first_seq, next_seq, now_us)
            latest = next_seq - 1
            check_poll_cursor(after_sequence, oldest, latest)
            rows = conn.execute(
                "SELECT sequence, type, article_id, version_us FROM events "
                "WHERE kb_rowid = ? AND sequence > ? ORDER BY sequence LIMIT ?",
                (kb_rowid, after_sequence, limit),
            ).fetchall()
        events = [
            {
                "sequence": seq,
                "type": kind,
                "article_id": decode_text(article_id),
                "updated_at": format_version(version),
            }
            for seq, kind, article_id, version in rows
        ]
        next_sequence = rows[-1][0] if rows else after_sequence
        return {
            "events": events,
            "next_sequence": next_sequence,
            "has_more": next_sequence < latest,
        }

    # -- internals (each runs inside the caller's transaction) --------------------------

    def _rank(
        self, conn: sqlite3.Connection, kb_rowid: int, query: str, limit: int
    ) -> list[bytes]:
        """The ``limit`` best article ids for ``query``, best first, ties by id (a query's
        compound words split against the index's terms, where the analyzer splits them)."""
        analyzer = self._analyzer(conn, kb_rowid)
        fts = f"fts_{kb_rowid}"
        if analyzer.splits_compounds:
            has = f"SELECT 1 FROM {fts} WHERE {fts} MATCH ? LIMIT 1"
            terms = dict.fromkeys(analyzer.query_terms(
                query, lambda term: conn.execute(has, (f'"{term}"',)).fetchone() is not None))
        else:
            terms = dict.fromkeys(analyzer.tokenize(query))
        if not terms:
            return []
        n_docs = conn.execute(
            "SELECT published FROM knowledge_bases WHERE kb_rowid = ?", (kb_rowid,)
        ).fetchone()[0]
        lookup = (
            f"SELECT a.article_id, bm25({fts}) FROM {fts} "
            f"JOIN articles AS a ON a.article_rowid = {fts}.rowid WHERE {fts} MATCH ?"
        )
        scores: dict[bytes, float] = {}
        get = scores.get
        for term in terms:
            hits = conn.execute(lookup, (f'"{term}"',)).fetchall()
            if not hits:
                continue
            ratio = (n_docs - len(hits) + 0.5) / (len(hits) + 0.5)
            fts5_idf = math.log(ratio)
            if fts5_idf <= 0.0:
                fts5_idf = 1e-6  # as FTS5 does
            # bm25() is minus idf times the term-frequency part: swap in our idf.
            factor = -math.log(1.0 + ratio) / fts5_idf
            for article_id, score in hits:
                scores[article_id] = get(article_id, 0.0) + score * factor
        ranked = [(-score, decode_text(article_id)) for article_id, score in scores.items()]
        best = sorted(ranked) if len(ranked) <= limit else heapq.nsmallest(limit, ranked)
        return [encode_text(article_id) for _, article_id in best]

    def _analyzer(self, conn: sqlite3.Connection, kb_rowid: int) -> Analyzer:
        """The knowledge base's analyzer, as recorded with it."""
        analyzer = self._analyzers.get(kb_rowid)
        if analyzer is None:
            (name,) = conn.execute(
                "SELECT analyzer FROM knowledge_bases WHERE kb_rowid = ?", (kb_rowid,)
            ).fetchone()
            try:
                analyzer = self._analyzers[kb_rowid] = analyzer_named(name)
            except ValueError as exc:
                raise StoreFileError(f"{self.path!r}: {exc}; a newer kbsim wrote it") from None
        return analyzer

    def _kb_row(self, conn: sqlite3.Connection, kb_id: str) -> tuple[int, int, int, int] | None:
        """(kb_rowid, article_count, first_seq, next_seq), or None if there is no such KB."""
        check_text(kb_id, "kb_id")
        row = conn.execute(
            "SELECT kb_rowid, article_count, first_seq, next_seq FROM knowledge_bases "
            "WHERE kb_id = ?",
            (_lookup(kb_id),),
        ).fetchone()
        if row is not None:
            self._kb_rowids[kb_id] = row[0]
        return row

    def _kb(self, conn: sqlite3.Connection, kb_id: str) -> tuple[int, int, int, int]:
        row = self._kb_row(conn, kb_id)
        if row is None:
            raise kb_not_found(kb_id)
        return row

    def _kb_rowid(self, conn: sqlite3.Connection, kb_id: str) -> int:
        # Knowledge bases are never deleted, so a rowid once seen stays right.
        kb_rowid = self._kb_rowids.get(check_text(kb_id, "kb_id"))
        return self._kb(conn, kb_id)[0] if kb_rowid is None else kb_rowid

    def _published(self, conn: sqlite3.Connection, kb_id: str, article_id: str) -> _ArticleRow:
        kb_rowid = self._kb_rowid(conn, kb_id)
        row = conn.execute(
            "SELECT article_rowid, title, content, version_us FROM articles "
            "WHERE kb_rowid = ? AND article_id = ? AND published",
            (kb_rowid, _lookup(article_id)),
        ).fetchone()
        if row is None:
            raise article_not_found(kb_id, article_id)
        return _ArticleRow(kb_rowid, row[0], article_id, row[1], row[2], row[3])

    def _apply_update(
        self,
        conn: sqlite3.Connection,
        row: _ArticleRow,
        at_us: int,
        content: str | None,
        title: str | None,
    ) -> int:
        version = check_next_version(
            max(at_us, row.version_us + 1, self._kb_clock(conn, row.kb_rowid)), row.article_id
        )
        new_title = row.title if title is None else encode_text(title)
        new_content = row.content if content is None else encode_text(content)
        conn.execute(
            "UPDATE articles SET title = ?, content = ?, version_us = ? WHERE article_rowid = ?",
            (new_title, new_content, version, row.article_rowid),
        )
        conn.execute(
            f"UPDATE fts_{row.kb_rowid} SET title = ?, body = ? WHERE rowid = ?",
            (*_indexed(decode_text(new_title), decode_text(new_content), self._analyzer(conn, row.kb_rowid)),
             row.article_rowid),
        )
        self._append_event(conn, row.kb_rowid, "article.updated", row.article_id, version)
        return version

    def _publish(
        self, conn: sqlite3.Connection, kb_rowid: int, article_count: int, title: str,
        content: str, at_us: int, analyzer: Analyzer, article_id: str | None = None,
    ) -> str:
        """Publish one more article in the knowledge base that holds ``article_count``, as
        ``article_id`` (else the next ``art-NNNNNN`` no article holds)."""
        if article_id is None:
            article_id = next_article_id(article_count, lambda candidate: conn.execute(
                "SELECT 1 FROM articles WHERE kb_rowid = ? AND article_id = ?",
                (kb_rowid, encode_text(candidate))).fetchone() is not None)
        version = max(at_us, self._kb_clock(conn, kb_rowid))
        article_rowid = conn.execute(
            "INSERT INTO articles (kb_rowid, article_id, title, content, published, "
            "version_us) VALUES (?, ?, ?, ?, 1, ?)",
            (kb_rowid, encode_text(article_id), encode_text(title), encode_text(content), version),
        ).lastrowid
        conn.execute(
            "UPDATE knowledge_bases SET article_count = ?, published = published + 1 "
            "WHERE kb_rowid = ?",
            (article_count + 1, kb_rowid),
        )
        conn.execute(
            f"INSERT INTO fts_{kb_rowid} (rowid, title, body) VALUES (?, ?, ?)",
            (article_rowid, *_indexed(title, content, analyzer)),
        )
        self._append_event(conn, kb_rowid, "article.published", article_id, version)
        return article_id

    def _kb_clock(self, conn: sqlite3.Connection, kb_rowid: int) -> int:
        """With ``shared_clock``, the version of the knowledge base's latest event (the
        earliest a new one may have); without it, or with no events, no floor at all."""
        if not self.shared_clock:
            return MIN_VERSION_US
        row = conn.execute(
            "SELECT e.version_us FROM knowledge_bases AS k JOIN events AS e "
            "ON e.kb_rowid = k.kb_rowid AND e.sequence = k.next_seq - 1 WHERE k.kb_rowid = ?",
            (kb_rowid,),
        ).fetchone()
        return MIN_VERSION_US if row is None else row[0]

    def _append_event(
        self, conn: sqlite3.Connection, kb_rowid: int, kind: str, article_id: str, version: int
    ) -> None:
        first_seq, next_seq = conn.execute(
            "SELECT first_seq, next_seq FROM knowledge_bases WHERE kb_rowid = ?", (kb_rowid,)
        ).fetchone()
        conn.execute(
            "INSERT INTO events (kb_rowid, sequence, type, article_id, version_us) "
            "VALUES (?, ?, ?, ?, ?)",
            (kb_rowid, next_seq, kind, encode_text(article_id), version),
        )
        next_seq += 1
        oldest = self._oldest_kept(conn, kb_rowid, first_seq, next_seq, version)
        if oldest > first_seq:
            conn.execute(
                "DELETE FROM events WHERE kb_rowid = ? AND sequence < ?", (kb_rowid, oldest)
            )
        conn.execute(
            "UPDATE knowledge_bases SET first_seq = ?, next_seq = ? WHERE kb_rowid = ?",
            (oldest, next_seq, kb_rowid),
        )

    def _oldest_kept(
        self, conn: sqlite3.Connection, kb_rowid: int, first_seq: int, next_seq: int, now_us: int
    ) -> int:
        """The first sequence the retention window keeps at ``now_us``.

        As in memory, the window drops the longest run of kept events, from the
        oldest, that were all written before the horizon.
        """
        if self.event_retention_us is None:
            return first_seq
        horizon = now_us - self.event_retention_us
        row = conn.execute(
            "SELECT sequence FROM events WHERE kb_rowid = ? AND version_us >= ? "
            "ORDER BY sequence LIMIT 1",
            (kb_rowid, horizon),
        ).fetchone()
        return next_seq if row is None else row[0]



def _reopen(
    path: str, event_retention_s: float | None, busy_timeout_s: float, synchronous: str,
    shared_clock: bool = False,
) -> SQLiteStore:
    return SQLiteStore(
        path, event_retention_s, busy_timeout_s=busy_timeout_s, synchronous=synchronous,
        shared_clock=shared_clock,
    )
