"""The on-disk layout of a kbsim SQLite file: its tables, its version, and the migrations.

:class:`~kbsim.store.sqlite.SQLiteStore` creates this schema in an empty file
and upgrades an older one in place, inside its opening transaction;
:mod:`kbsim.store.sqlite_files` reads the header this module defines to tell a
kbsim file of a readable version from anything else.

User strings (knowledge-base ids, titles, contents, keys) are stored as UTF-8
BLOBs with ``surrogatepass`` (:func:`encode_text`, :func:`decode_text`), so any
Python string the tool schema admits, a lone surrogate included, round-trips.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable

from kbsim.store.rules import arguments_digest

#: Version of the on-disk layout, kept in ``PRAGMA user_version``. A later
#: version adds an entry to ``_MIGRATIONS`` that upgrades a file in place.
#: 2: idempotency records keep a SHA-256 of the arguments, not the arguments.
#: 3: each knowledge base records its analyzer (``ascii`` for the files before).
SCHEMA_VERSION = 3
#: ``PRAGMA application_id`` of a kbsim file ("kbsi"): tells it from other SQLite files.
APPLICATION_ID = 0x6B627369

_SCHEMA = """
CREATE TABLE knowledge_bases (
    kb_rowid      INTEGER PRIMARY KEY,
    kb_id         BLOB NOT NULL UNIQUE,
    article_count INTEGER NOT NULL DEFAULT 0,
    published     INTEGER NOT NULL DEFAULT 0,
    first_seq     INTEGER NOT NULL DEFAULT 1,
    next_seq      INTEGER NOT NULL DEFAULT 1,
    analyzer      TEXT NOT NULL DEFAULT 'ascii'
);
CREATE TABLE articles (
    article_rowid INTEGER PRIMARY KEY,
    kb_rowid      INTEGER NOT NULL REFERENCES knowledge_bases (kb_rowid),
    article_id    BLOB NOT NULL,
    title         BLOB NOT NULL,
    content       BLOB NOT NULL,
    published     INTEGER NOT NULL,
    version_us    INTEGER NOT NULL,
    UNIQUE (kb_rowid, article_id)
);
CREATE TABLE events (
    kb_rowid   INTEGER NOT NULL REFERENCES knowledge_bases (kb_rowid),
    sequence   INTEGER NOT NULL,
    type       TEXT NOT NULL,
    article_id BLOB NOT NULL,
    version_us INTEGER NOT NULL,
    PRIMARY KEY (kb_rowid, sequence)
) WITHOUT ROWID;
CREATE TABLE idempotency (
    recorded         INTEGER PRIMARY KEY,
    idempotency_key  BLOB NOT NULL UNIQUE,
    arguments_sha256 TEXT NOT NULL,
    result           TEXT NOT NULL
);
"""


def encode_text(text: str) -> bytes:
    """A user string as the file stores it (UTF-8, lone surrogates kept)."""
    return text.encode("utf-8", "surrogatepass")


def decode_text(data: bytes) -> str:
    """A user string back from the file, exactly as it was saved."""
    return data.decode("utf-8", "surrogatepass")


def _digest_stored_arguments(arguments: str) -> str:
    return arguments_digest(json.loads(arguments))


def _migrate_1_to_2(conn: sqlite3.Connection) -> None:
    """Idempotency records: the arguments' digest replaces the arguments."""
    conn.create_function("kbsim_arguments_sha256", 1, _digest_stored_arguments, deterministic=True)
    conn.execute(
        "CREATE TABLE idempotency_2 (recorded INTEGER PRIMARY KEY, "
        "idempotency_key BLOB NOT NULL UNIQUE, arguments_sha256 TEXT NOT NULL, "
        "result TEXT NOT NULL)"
    )
    conn.execute(
        "INSERT INTO idempotency_2 SELECT recorded, idempotency_key, "
        "kbsim_arguments_sha256(arguments), result FROM idempotency"
    )
    conn.execute("DROP TABLE idempotency")
    conn.execute("ALTER TABLE idempotency_2 RENAME TO idempotency")


def _migrate_2_to_3(conn: sqlite3.Connection) -> None:
    """Knowledge bases record their analyzer: every earlier one is ``ascii``."""
    columns = [row[1] for row in conn.execute("PRAGMA table_info(knowledge_bases)")]
    if "analyzer" not in columns:
        conn.execute("ALTER TABLE knowledge_bases ADD COLUMN analyzer TEXT NOT NULL DEFAULT 'ascii'")


# from_version -> the change (inside the opening transaction) to from_version + 1.
_MIGRATIONS: dict[int, Callable[[sqlite3.Connection], None]] = {1: _migrate_1_to_2, 2: _migrate_2_to_3}


def can_migrate(user_version: int) -> bool:
    """Whether a file of schema ``user_version`` (older than this one) can be upgraded."""
    return all(v in _MIGRATIONS for v in range(user_version, SCHEMA_VERSION))


def create_schema(conn: sqlite3.Connection) -> None:
    """Create the tables and stamp the header, inside the caller's transaction."""
    # One statement at a time: executescript() would COMMIT first.
    for statement in _SCHEMA.split(";"):
        if statement.strip():
            conn.execute(statement)
    conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")


def migrate(conn: sqlite3.Connection) -> None:
    """Upgrade a kbsim file of an older schema, one version at a time, in the caller's
    transaction (a file :func:`can_migrate` refused never gets here)."""
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    for from_version in range(version, SCHEMA_VERSION):
        _MIGRATIONS[from_version](conn)
        conn.execute(f"PRAGMA user_version = {from_version + 1}")
