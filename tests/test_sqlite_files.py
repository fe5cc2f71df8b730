"""What SQLiteStore verifies when it opens a file, its schema migration, and its shared clock.

A damaged page, tables that disagree with each other (what a checkpoint cut
short without its log leaves), and a write-ahead log deleted while a server
ran are each refused with a ``StoreFileError`` naming the file, and the file
is left as it was. A schema-1 file (idempotency records holding the full
arguments) is migrated in place and keeps working. Stores with clocks of
their own sharing one file never write an event dated before the previous one.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

import kbsim
from kbsim import SQLiteStore, StoreFileError, parse_version
from kbsim.store import arguments_digest
from kbsim.store.sqlite import SCHEMA_VERSION

KB = "kb"


def filled_file(path: Path, articles: int = 3, edits: int = 2) -> None:
    """A healthy, closed (fully checkpointed) kbsim file."""
    with SQLiteStore(path) as store:
        store.create_knowledge_base(KB)
        for n in range(articles):
            store.publish_article(KB, title=f"title {n}", content=f"body {n} " * 20, at=0.0)
        client = store.client({KB}, clock=lambda: 1.0)
        for n in range(edits):
            article = {"knowledge_base_id": KB, "article_id": "art-000002"}
            read = client.call("read_knowledge_article", article)
            client.call("edit_knowledge_article", {
                **article, "content": f"edit {n}", "expected_version": read["updated_at"],
                "idempotency_key": f"edit-{n}"})
    assert not Path(f"{path}-wal").exists()


def test_a_damaged_page_is_refused_naming_the_file(tmp_path):
    path = tmp_path / "damaged.db"
    filled_file(path, articles=300)
    raw = sqlite3.connect(path)
    page_size = raw.execute("PRAGMA page_size").fetchone()[0]
    (root,) = raw.execute("SELECT rootpage FROM sqlite_master WHERE name = 'articles'").fetchone()
    pages = raw.execute("PRAGMA page_count").fetchone()[0]
    raw.close()
    assert 1 < root < pages  # a page in the middle of the file
    with path.open("r+b") as file:
        file.seek((root - 1) * page_size)
        file.write(bytes(range(256)) * (page_size // 256))
    before = path.read_bytes()
    with pytest.raises(StoreFileError, match="is damaged") as info:
        SQLiteStore(path)
    assert str(path) in str(info.value) and "left unchanged" in str(info.value)
    assert path.read_bytes() == before


TORN = {  # what a checkpoint cut short can leave: tables that disagree
    "article_count": ("UPDATE knowledge_bases SET article_count = article_count + 1", "counts"),
    "published": ("UPDATE articles SET published = 0 WHERE article_rowid = 3", "counts"),
    "event_missing": ("DELETE FROM events WHERE sequence = 4", "event log"),
    "last_event_missing": ("DELETE FROM events WHERE sequence = 5", "event log"),
    "version": ("UPDATE articles SET version_us = version_us + 1 WHERE article_rowid = 2",
                "latest event"),
    "index": ("DELETE FROM fts_1 WHERE rowid = 1", "search index"),
    "publishes": ("UPDATE events SET type = 'article.updated' WHERE sequence = 1", "publishes"),
}


@pytest.mark.parametrize("damage", sorted(TORN))
def test_tables_that_disagree_are_refused_naming_the_file(tmp_path, damage):
    path = tmp_path / "torn.db"
    filled_file(path)
    statement, words = TORN[damage]
    raw = sqlite3.connect(path)
    raw.execute(statement)
    raw.commit()
    raw.close()
    before = path.read_bytes()
    with pytest.raises(StoreFileError, match=words) as info:
        SQLiteStore(path)
    message = str(info.value)
    assert str(path) in message and "inconsistent" in message and "'kb'" in message
    assert path.read_bytes() == before


def test_a_healthy_file_opens(tmp_path):
    path = tmp_path / "healthy.db"
    filled_file(path, articles=300, edits=5)
    with SQLiteStore(path) as store:
        assert store.latest_sequence(KB) == 305


HOT_JOURNAL_WRITER = """
import os, signal, sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("PRAGMA cache_size = 1")  # spill into the file: the journal is then hot
conn.execute("BEGIN IMMEDIATE")
conn.execute("UPDATE articles SET content = zeroblob(3000)")
os.kill(os.getpid(), signal.SIGKILL)
"""


def test_a_file_a_crash_left_with_a_hot_journal_is_recovered_not_called_foreign(tmp_path):
    """A kill in a rollback-journal transaction (a file's first moments, before it is in
    WAL mode) leaves a hot journal that a read-only check cannot roll back."""
    path = tmp_path / "hot.db"
    filled_file(path, articles=50, edits=0)
    raw = sqlite3.connect(path)
    assert raw.execute("PRAGMA journal_mode = DELETE").fetchone() == ("delete",)
    raw.close()
    subprocess.run([sys.executable, "-c", HOT_JOURNAL_WRITER, str(path)], check=False)
    assert Path(f"{path}-journal").stat().st_size > 0
    with SQLiteStore(path) as store:  # SQLite's own recovery rolls the transaction back
        assert len(store.published_article_ids(KB)) == 50
        assert store.article_state(KB, "art-000001").content == "body 0 " * 20


WRITER = """
import sys
from kbsim import SQLiteStore

store = SQLiteStore(sys.argv[1])
client = store.client({"kb"}, clock=lambda: 1.0)
article = {"knowledge_base_id": "kb", "article_id": "art-000001"}
for line in sys.stdin:
    n = int(line)
    read = client.call("read_knowledge_article", article)
    client.call("edit_knowledge_article", {**article, "content": f"edit {n}",
                "expected_version": read["updated_at"], "idempotency_key": f"key-{n}"})
    print(f"done {n}", flush=True)
"""


def test_a_write_ahead_log_lost_while_serving_is_detected(tmp_path):
    """The -wal file deleted while a writer runs, then the writer killed: refused, not
    served as it was before the confirmed edits."""
    path = tmp_path / "lost-wal.db"
    filled_file(path, edits=0)
    env = {**os.environ, "PYTHONPATH": str(Path(kbsim.__file__).resolve().parents[1])}
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(path)], env=env, text=True,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        for n in range(6):
            if n == 3:
                os.remove(f"{path}-wal")  # under the running writer
            writer.stdin.write(f"{n}\n")
            writer.stdin.flush()
            assert writer.stdout.readline() == f"done {n}\n"  # confirmed to the client
        os.kill(writer.pid, signal.SIGKILL)
    finally:
        writer.kill()
        writer.wait()
        writer.stdin.close()
        writer.stdout.close()
    before = path.read_bytes()
    with pytest.raises(StoreFileError, match="write-ahead log") as info:
        SQLiteStore(path)
    assert str(path) in str(info.value) and "lost" in str(info.value)
    assert path.read_bytes() == before
    # What SQLite alone does with such a file (the documented way out): it opens the
    # database as it was at its last checkpoint; all six confirmed edits are gone.
    os.remove(f"{path}-shm")
    with SQLiteStore(path) as store:
        assert store.latest_sequence(KB) == 3
        assert store.snapshot()["idempotency"] == {}


# -- schema 1 -> 2 ---------------------------------------------------------------------------

SCHEMA_1_IDEMPOTENCY = """
CREATE TABLE idempotency (
    recorded        INTEGER PRIMARY KEY,
    idempotency_key BLOB NOT NULL UNIQUE,
    arguments       TEXT NOT NULL,
    result          TEXT NOT NULL
)
"""


def test_a_schema_1_file_is_migrated_and_its_records_still_replay(tmp_path):
    path = tmp_path / "schema-1.db"
    arguments = {"knowledge_base_id": KB, "article_id": "art-000001", "content": "c \ud800",
                 "expected_version": "2026-01-05T09:00:00Z", "idempotency_key": "old-key"}
    with SQLiteStore(path) as store:
        store.create_knowledge_base(KB)
        store.publish_article(KB, title="title", content="body", at=0.0)
        first = store.client({KB}, clock=lambda: 1.0).call("edit_knowledge_article", arguments)
    # Make it the file kbsim wrote before schema 2: records holding the arguments.
    raw = sqlite3.connect(path)
    raw.execute("DROP TABLE idempotency")
    raw.execute(SCHEMA_1_IDEMPOTENCY)
    raw.execute("INSERT INTO idempotency (idempotency_key, arguments, result) VALUES (?, ?, ?)",
                (b"old-key", json.dumps(arguments), json.dumps(first)))
    raw.execute("PRAGMA user_version = 1")
    raw.commit()
    raw.close()

    with SQLiteStore(path) as store:
        client = store.client({KB}, clock=lambda: 2.0)
        assert client.call("edit_knowledge_article", arguments) == {**first, "replayed": True}
        with pytest.raises(kbsim.ToolError) as info:
            client.call("edit_knowledge_article", {**arguments, "content": "other"})
        assert info.value.code == "idempotency_key_reused"
        assert store.snapshot()["idempotency"] == {"old-key": (arguments_digest(arguments), first)}
    raw = sqlite3.connect(path)
    try:
        assert raw.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 3
        columns = [row[1] for row in raw.execute("PRAGMA table_info(idempotency)")]
        assert "arguments" not in columns
    finally:
        raw.close()


def test_a_schema_2_file_is_migrated_and_its_knowledge_bases_keep_the_ascii_analyzer(tmp_path):
    path = tmp_path / "schema-2.db"
    with SQLiteStore(path) as store:
        store.create_knowledge_base(KB, [("Reset a password", "Open the portal.")])
    # Make it the file kbsim wrote before schema 3: no analyzer recorded.
    raw = sqlite3.connect(path)
    raw.execute("ALTER TABLE knowledge_bases DROP COLUMN analyzer")
    raw.execute("PRAGMA user_version = 2")
    raw.commit()
    raw.close()
    with SQLiteStore(path) as store:
        assert store.analyzer_name(KB) == "ascii"
        client = store.client({KB}, clock=lambda: 1.0)
        hits = client.call("search_knowledge_base", {"knowledge_base_id": KB, "query": "password"})["results"]
        assert [hit["article_id"] for hit in hits] == ["art-000001"]
    raw = sqlite3.connect(path)
    try:
        assert raw.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert raw.execute("SELECT analyzer FROM knowledge_bases").fetchall() == [("ascii",)]
    finally:
        raw.close()


# -- one file, several clocks -------------------------------------------------------------------


def _edit(client, article_id: str, key: str) -> str:
    article = {"knowledge_base_id": KB, "article_id": article_id}
    read = client.call("read_knowledge_article", article)
    return client.call("edit_knowledge_article", {
        **article, "content": key, "expected_version": read["updated_at"],
        "idempotency_key": key})["updated_at"]


@pytest.mark.parametrize("shared_clock", [True, False])
def test_stores_with_their_own_clocks_keep_the_log_in_time_order(tmp_path, shared_clock):
    path = tmp_path / "two-clocks.db"
    filled_file(path, edits=0)
    ahead = SQLiteStore(path, shared_clock=shared_clock)
    behind = SQLiteStore(path, shared_clock=shared_clock)  # its own connection, like a process
    try:
        fast, slow = ahead.client({KB}, clock=lambda: 3600.0), behind.client({KB}, clock=lambda: 5.0)
        for n, (client, article_id) in enumerate(
            [(fast, "art-000001"), (slow, "art-000002"), (slow, "art-000002"),
             (fast, "art-000003"), (slow, "art-000001")]
        ):
            _edit(client, article_id, f"edit-{n}")
        events = behind.snapshot()["kbs"][KB]["events"][3:]
    finally:
        ahead.close()
        behind.close()
    versions = [version for _, _, _, version in events]
    per_article: dict[str, list[int]] = {}
    for _, _, article_id, version in events:
        per_article.setdefault(article_id, []).append(version)
    # Per article, versions always strictly increase, shared clock or not.
    assert all(a < b for seen in per_article.values() for a, b in zip(seen[:-1], seen[1:], strict=True))
    if shared_clock:
        assert versions == sorted(versions)
        assert versions[1] == parse_version("2026-01-05T10:00:00Z")  # not 09:00:05
    else:  # each store's own clock, as in memory: the log goes back in time
        assert versions[1] < versions[0]
