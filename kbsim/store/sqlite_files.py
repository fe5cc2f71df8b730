"""What :class:`~kbsim.store.sqlite.SQLiteStore` checks on a file before it uses it.

Opening an existing file changes nothing until these checks pass
(:class:`StoreFileError` names the file and the problem otherwise):

- the header: a kbsim database of a schema this kbsim reads or migrates;
- the write-ahead log: a ``-shm`` index that records committed log frames not
  yet copied into the database, while the ``-wal`` file holding them is gone,
  means confirmed changes were lost (the file is refused rather than served
  as it was before them);
- ``PRAGMA quick_check``: every page and B-tree is sound;
- the tables agree with each other: article and event counts, sequences,
  the search index, and each article's version against its latest event
  (what a checkpoint cut short without its log, or a copy taken mid-write,
  leaves behind).

The two errors a file can raise while open, :class:`StoreFileError` and
:class:`StoreBusyError`, are defined here too, with the helpers that turn a
``sqlite3`` error into one of them.
"""

from __future__ import annotations

import sqlite3
import struct
from pathlib import Path

from kbsim.files import path_problem
from kbsim.store.errors import ToolError
from kbsim.store.sqlite_schema import APPLICATION_ID, SCHEMA_VERSION, can_migrate, decode_text

# The -shm file's layout (https://sqlite.org/walformat.html): two copies of the
# wal-index header (mxFrame, the last valid log frame, at byte 16), then the
# checkpoint info (nBackfill, the frames already copied into the database, at 96).
_SHM_HEADER = struct.Struct("=IIIBBHI")
_SHM_BACKFILL = struct.Struct("=I")
_WAL_INDEX_VERSION = 3007000


class StoreFileError(RuntimeError):
    """The file cannot be used: not a kbsim database, of a newer kbsim, damaged, missing
    its write-ahead log, read-only or on a full disk. The message names the file; a
    refused file was left untouched, and a failed change changed nothing."""


class StoreBusyError(ToolError, RuntimeError):
    """Another connection held the database's write lock for longer than ``busy_timeout_s``.

    A ``ToolError`` with code ``busy``: nothing was changed, and the same call
    may simply be retried (an edit with the same ``idempotency_key``).
    """

    def __init__(self, message: str) -> None:
        super().__init__("busy", message)


def is_busy(exc: sqlite3.Error) -> bool:
    """Whether a ``sqlite3`` error means another connection held the lock too long."""
    name = getattr(exc, "sqlite_errorname", "")
    return name.startswith("SQLITE_BUSY") or "database is locked" in str(exc)


def busy_error(path: str, busy_timeout_s: float) -> StoreBusyError:
    """The retryable error for ``path`` staying locked beyond ``busy_timeout_s``."""
    return StoreBusyError(
        f"SQLite database {path!r} stayed locked by another connection for longer "
        f"than busy_timeout_s={busy_timeout_s:g}; nothing was changed: retry the "
        "same call (kbsim serve's --busy-timeout sets how long it waits)"
    )


def file_error(path: str, exc: sqlite3.Error) -> StoreFileError:
    """The error for a change to ``path`` that SQLite refused for the file's sake."""
    return StoreFileError(
        f"SQLite database {path!r} failed: {exc}; nothing was changed (is the file "
        "damaged, read-only, or its disk full?)"
    )


def check_existing_file(path: str, busy_timeout_s: float) -> None:
    """Refuse, without writing anything, a file that is not a kbsim database we can use.

    A path that does not exist yet (in a directory that does) or an empty file
    passes: the store creates its schema there.

    Raises:
        StoreFileError: ``path`` is a directory, in a missing directory, not a
            kbsim database, of a newer or unmigratable schema, damaged, or
            missing its write-ahead log.
        StoreBusyError: another process held its lock beyond ``busy_timeout_s``.
    """
    file = Path(path)
    if file.is_dir():
        raise StoreFileError(f"path {path!r} is a directory, not a kbsim database")
    problem = path_problem(file, "file")
    if problem is not None and (problem.startswith("is ") or "loop" in problem):
        # a FIFO, a device or a link loop: SQLite would say only "disk I/O error" (or hang on a FIFO)
        raise StoreFileError(f"path {path!r} {problem}" if problem.startswith("is ") else f"path {path!r}: {problem}")
    if not file.exists() and not file.absolute().parent.is_dir():
        raise StoreFileError(
            f"cannot create {path!r}: directory {str(file.absolute().parent)!r} does not exist"
        )
    if not file.exists() or file.stat().st_size == 0:
        return
    _check_log(path, file)
    # Read-only, so that a foreign file is left as it is; but a file a crash left with
    # a hot journal needs SQLite's own recovery first, which a read-only probe cannot run.
    for mode in ("?mode=ro", ""):
        try:
            probe = sqlite3.connect(f"{file.absolute().as_uri()}{mode}", uri=True, timeout=busy_timeout_s)
        except sqlite3.Error as exc:
            raise StoreFileError(f"cannot open {path!r} to check it: {exc}") from exc
        try:
            try:
                empty = check_header(probe, path)
            except sqlite3.DatabaseError as exc:
                if is_busy(exc):
                    raise busy_error(path, busy_timeout_s) from exc
                if mode and getattr(exc, "sqlite_errorname", "").startswith("SQLITE_READONLY"):
                    continue
                raise StoreFileError(
                    f"{path!r} is not a kbsim database (SQLite: {exc}); it was left unchanged"
                ) from exc
            if not empty:
                _check_contents(probe, path, busy_timeout_s)
            return
        finally:
            probe.close()


def check_header(conn: sqlite3.Connection, path: str) -> bool:
    """True if ``conn`` holds an empty database (to be initialised), False if a current one.

    Raises StoreFileError, naming ``path``, for anything else.
    """
    application_id = conn.execute("PRAGMA application_id").fetchone()[0]
    user_version = conn.execute("PRAGMA user_version").fetchone()[0]
    objects = conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
    if application_id == 0 and user_version == 0 and objects == 0:
        return True
    if application_id != APPLICATION_ID:
        raise StoreFileError(
            f"{path!r} is a SQLite database but not a kbsim database "
            f"(application_id {application_id:#x}, expected {APPLICATION_ID:#x}); "
            "it was left unchanged"
        )
    if user_version > SCHEMA_VERSION:
        raise StoreFileError(
            f"{path!r} has kbsim schema version {user_version}, newer than the "
            f"version {SCHEMA_VERSION} this kbsim reads; upgrade kbsim to open it "
            "(the file was left unchanged)"
        )
    if user_version < SCHEMA_VERSION and not can_migrate(user_version):
        raise StoreFileError(
            f"{path!r} has kbsim schema version {user_version}, which this kbsim "
            f"cannot migrate to version {SCHEMA_VERSION}; it was left unchanged"
        )
    return False


def _check_log(path: str, file: Path) -> None:
    """Refuse a file whose write-ahead log, still owed to the database, is gone.

    The ``-shm`` index outlives a killed process; if it records committed
    frames beyond those copied into the database (``mxFrame > nBackfill``)
    while the ``-wal`` file is missing, those transactions are lost, and
    SQLite would silently open the database as it was before them.
    """
    wal, shm = Path(f"{file}-wal"), Path(f"{file}-shm")
    if wal.exists() or not shm.exists():
        return
    try:
        with shm.open("rb") as index:
            header = index.read(_SHM_BACKFILL.size + 96)
    except OSError:
        return
    if len(header) < 96 + _SHM_BACKFILL.size or wal.exists():  # a writer started meanwhile
        return
    version, _, _, is_init, _, _, last_frame = _SHM_HEADER.unpack_from(header)
    (copied,) = _SHM_BACKFILL.unpack_from(header, 96)
    if version != _WAL_INDEX_VERSION or not is_init or last_frame <= copied:
        return
    raise StoreFileError(
        f"{path!r}: its write-ahead log {str(wal)!r} is missing, but {str(shm)!r} "
        f"records {last_frame - copied} committed log frame(s) that were never copied into "
        "the database: changes confirmed to clients are lost. The file was left unchanged. "
        "If no process is using it, restore it from a backup, or delete the -shm file to "
        "open the database as it was before those changes."
    )


def _check_contents(conn: sqlite3.Connection, path: str, busy_timeout_s: float) -> None:
    """Refuse a damaged file: SQLite's quick_check, then the tables against each other."""
    try:
        conn.execute("BEGIN")
        try:
            problems = [" ".join(row[0].split()) for row in conn.execute("PRAGMA quick_check(3)")]
            if problems != ["ok"]:
                raise StoreFileError(
                    f"{path!r} is damaged (SQLite quick_check: {'; '.join(problems)}); "
                    "it was left unchanged: restore it from a backup, or delete it (with "
                    "its -wal and -shm files) to start again"
                )
            disagreement = _disagreement(conn)
        finally:
            conn.execute("ROLLBACK")
    except sqlite3.DatabaseError as exc:
        if is_busy(exc):
            raise busy_error(path, busy_timeout_s) from exc
        raise StoreFileError(
            f"{path!r} is damaged (SQLite: {exc}); it was left unchanged: restore it "
            "from a backup, or delete it (with its -wal and -shm files) to start again"
        ) from exc
    if disagreement is not None:
        raise StoreFileError(
            f"{path!r} is inconsistent: {disagreement}. A lost -wal file, or a copy "
            "taken while it was being written, leaves such a file. It was left unchanged: "
            "restore it from a backup, or delete it (with its -wal and -shm files) to "
            "start again"
        )


def _disagreement(conn: sqlite3.Connection) -> str | None:
    """What the tables of a kbsim file disagree on, or None when they agree.

    Each change updates several tables in one transaction, so in a whole file
    they always agree: counts, the gapless log, the search index, and every
    article's version equal to that of its latest kept event.
    """
    for kb_rowid, kb_id, article_count, published, first_seq, next_seq in conn.execute(
        "SELECT kb_rowid, kb_id, article_count, published, first_seq, next_seq "
        "FROM knowledge_bases ORDER BY kb_rowid"
    ).fetchall():
        kb = f"knowledge base {decode_text(kb_id)!r}"
        held, held_published = conn.execute(
            "SELECT count(*), coalesce(sum(published), 0) FROM articles WHERE kb_rowid = ?",
            (kb_rowid,),
        ).fetchone()
        if (held, held_published) != (article_count, published):
            return (
                f"{kb} counts {article_count} articles ({published} published) but holds "
                f"{held} ({held_published} published)"
            )
        events, low, high = conn.execute(
            "SELECT count(*), min(sequence), max(sequence) FROM events WHERE kb_rowid = ?",
            (kb_rowid,),
        ).fetchone()
        if events != next_seq - first_seq or (events and (low, high) != (first_seq, next_seq - 1)):
            return (
                f"{kb}'s event log should hold sequences {first_seq} to {next_seq - 1} but "
                f"holds {events} events ({low} to {high})"
            )
        indexed = conn.execute(f"SELECT count(*) FROM fts_{kb_rowid}").fetchone()[0]
        if indexed != published:
            return f"{kb}'s search index holds {indexed} articles, not its {published} published"
        differing, first = conn.execute(
            "SELECT count(*), min(e.article_id) FROM (SELECT article_id, max(version_us) AS "
            "version_us FROM events WHERE kb_rowid = ? GROUP BY article_id) AS e "
            "LEFT JOIN articles AS a ON a.kb_rowid = ? AND a.article_id = e.article_id "
            "WHERE a.version_us IS NOT e.version_us",
            (kb_rowid, kb_rowid),
        ).fetchone()
        if differing:
            return (
                f"{differing} article(s) of {kb} (the first {decode_text(first)!r}) are missing or "
                "not at the version of their latest event in the log"
            )
        if first_seq == 1:
            publishes = conn.execute(
                "SELECT count(*) FROM events WHERE kb_rowid = ? AND type = 'article.published'",
                (kb_rowid,),
            ).fetchone()[0]
            if publishes != article_count:
                return f"{kb}'s log publishes {publishes} articles, not its {article_count}"
    return None
