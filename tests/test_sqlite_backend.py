"""SQLiteStore against MemoryStore: the same operations give the same answers and state.

The same seeded script of people's saves and agent tool calls (including
every error path) runs on both backends; every result, every error
(code, message, details) and the final ``snapshot()`` must be equal,
search results included, in order: SQLiteStore re-weights FTS5's bm25()
to rank exactly as the in-memory BM25 does. A query made of an article's
title must put that article first on both. Also here: reopening a file, the
bad-file and busy-timeout errors, and a missing FTS5.
"""

from __future__ import annotations

import pickle
import sqlite3
import threading
from typing import Any

import numpy as np
import pytest

import kbsim
from kbsim import MemoryStore, SQLiteStore, ToolError, format_version
from kbsim.store import sqlite as sqlite_backend
from kbsim.store.bm25 import BM25Index
from kbsim.store.sqlite import SCHEMA_VERSION, StoreBusyError, StoreFileError

WORDS = [f"{syllable}{n}" for syllable in ("ka", "lo", "mi", "ru", "te") for n in range(40)]


def _outcome(fn, *args, **kwargs) -> Any:
    """The result, or the error as a comparable dict."""
    try:
        return fn(*args, **kwargs)
    except ToolError as exc:
        return ("error", exc.to_dict())


def run_script(store, seed: int, steps: int = 400) -> list[Any]:
    """A seeded mix of every people's and agent's operation; returns every outcome."""
    rng = np.random.default_rng(seed)
    log: list[Any] = []
    now = [0.0]
    store.create_knowledge_base("kb-a")
    store.create_knowledge_base("kb-b")
    log.append(_outcome(store.create_knowledge_base, "kb-a"))
    log.append(_outcome(store.create_knowledge_base, ""))
    ids = {"kb-a": [], "kb-b": []}
    for kb_id, count in (("kb-a", 25), ("kb-b", 8)):
        for _ in range(count):
            title = " ".join(rng.choice(WORDS, 3))
            content = " ".join(rng.choice(WORDS, 40))
            ids[kb_id].append(store.publish_article(kb_id, title=title, content=content, at=0.0))
    client = store.client({"kb-a", "kb-b"}, clock=lambda: now[0])
    outsider = store.client({"kb-a"}, clock=lambda: now[0])
    cursors = {"kb-a": 0, "kb-b": 0}
    last_read: dict[str, dict] = {}
    keys: list[tuple[str, dict]] = []
    for step in range(steps):
        # Saves often share an instant, so versions must step by one microsecond.
        now[0] += float(rng.choice([0.0, 0.0, 0.5, 7.25]))
        kb_id = "kb-a" if rng.random() < 0.8 else "kb-b"
        article_id = str(rng.choice(ids[kb_id] + ["art-999999"]))
        op = int(rng.integers(0, 12))
        if op == 0:
            log.append(_outcome(store.save_article, kb_id, article_id, at=now[0],
                                content=f"person {step} " + " ".join(rng.choice(WORDS, 20))))
        elif op == 1:
            log.append(_outcome(store.save_article, kb_id, article_id, at=now[0],
                                title=" ".join(rng.choice(WORDS, 2))))
        elif op == 2 and rng.random() < 0.3:
            log.append(_outcome(store.unpublish_article, kb_id, article_id, at=now[0]))
        elif op == 3:
            query = " ".join(rng.choice(WORDS, int(rng.integers(1, 4))))
            limit = int(rng.integers(1, 21))
            args = {"knowledge_base_id": kb_id, "query": query, "limit": limit}
            log.append(_outcome(client.call, "search_knowledge_base", args))
        elif op in (4, 5):
            args = {"knowledge_base_id": kb_id, "article_id": article_id}
            result = _outcome(client.call, "read_knowledge_article", args)
            if isinstance(result, dict):
                last_read[article_id] = result
            log.append(result)
        elif op in (6, 7) and article_id in last_read:
            args = {
                "knowledge_base_id": kb_id,
                "article_id": article_id,
                "content": f"agent {step}",
                "expected_version": last_read[article_id]["updated_at"],
                "idempotency_key": f"key-{step}",
            }
            if rng.random() < 0.3:
                args["title"] = f"agent title {step}"
            keys.append((kb_id, args))
            log.append(_outcome(client.call, "edit_knowledge_article", args))
        elif op == 8 and keys:
            _, args = keys[int(rng.integers(len(keys)))]
            if rng.random() < 0.5:  # the same call again: a replay, or its first error again
                log.append(_outcome(client.call, "edit_knowledge_article", dict(args)))
            else:  # the same key with other arguments
                log.append(_outcome(client.call, "edit_knowledge_article",
                                    {**args, "content": "something else"}))
        elif op == 9:
            args = {"resource_type": "knowledge_base", "resource_id": kb_id,
                    "after_sequence": cursors[kb_id], "limit": int(rng.integers(1, 30))}
            result = _outcome(client.call, "poll_resource_events", args)
            if isinstance(result, dict):
                cursors[kb_id] = result["next_sequence"]
            log.append(result)
        elif op == 10:
            log.append(_outcome(outsider.call, "read_knowledge_article",
                                {"knowledge_base_id": "kb-b", "article_id": ids["kb-b"][0]}))
            log.append(_outcome(client.call, "poll_resource_events",
                                {"resource_type": "knowledge_base", "resource_id": kb_id,
                                 "after_sequence": 10**6}))
        else:
            log.append((store.current_version(kb_id, article_id) if article_id != "art-999999"
                        else None, store.latest_sequence(kb_id),
                        store.published_article_ids(kb_id)))
    return log


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_same_script_gives_same_results_and_state(tmp_path, seed):
    memory, sqlite_store = MemoryStore(), SQLiteStore(tmp_path / "kb.db")
    expected = run_script(memory, seed)
    actual = run_script(sqlite_store, seed)
    assert len(actual) == len(expected)
    for step, (want, got) in enumerate(zip(expected, actual, strict=True)):
        assert got == want, f"outcome {step} differs"
    assert sqlite_store.snapshot() == memory.snapshot()
    # The script exercises every tool outcome, not only the happy paths.
    codes = {o[1]["code"] for o in expected if isinstance(o, tuple) and o and o[0] == "error"}
    assert {"not_found", "version_conflict", "idempotency_key_reused",
            "invalid_argument"} <= codes
    assert any(isinstance(o, dict) and o.get("replayed") is True for o in expected)


def test_event_retention_matches_memory(tmp_path):
    """Time-based retention: same dropped events, same cursor_expired details."""
    outcomes = []
    for store in (MemoryStore(event_retention_s=60.0),
                  SQLiteStore(tmp_path / "kb.db", event_retention_s=60.0)):
        log = []
        store.create_knowledge_base("kb")
        ids = [store.publish_article("kb", title=f"t{i}", content="c", at=0.0) for i in range(5)]
        for minute in range(1, 6):
            for article_id in ids[:3]:
                store.save_article("kb", article_id, at=minute * 30.0, content=f"m{minute}")
        for after, at in ((0, 140.0), (8, 150.0), (15, 150.0), (18, 400.0)):
            client = store.client({"kb"}, clock=lambda at=at: at)
            log.append(_outcome(client.call, "poll_resource_events",
                                {"resource_type": "knowledge_base", "resource_id": "kb",
                                 "after_sequence": after}))
        outcomes.append((log, store.snapshot()))
    (memory_log, memory_state), (sqlite_log, sqlite_state) = outcomes
    assert sqlite_log == memory_log
    assert sqlite_state == memory_state
    expired = [o for o in memory_log if isinstance(o, tuple)]
    assert expired and all(o[1]["code"] == "cursor_expired" for o in expired)
    assert {"oldest_available_sequence", "latest_sequence"} <= expired[0][1].keys()
    assert memory_state["kbs"]["kb"]["first_seq"] > 1  # saves really dropped old events


def _titled_corpus(store, seed: int, count: int = 60) -> list[tuple[str, str]]:
    rng = np.random.default_rng(seed)
    store.create_knowledge_base("kb")
    articles = []
    for _ in range(count):
        title = " ".join(rng.choice(WORDS, 3, replace=False))
        content = " ".join(rng.choice(WORDS, 6))
        articles.append((store.publish_article("kb", title=title, content=content, at=0.0), title))
    return articles


def test_exact_title_queries_find_the_article_first_and_the_same_ranking():
    memory, sqlite_store = MemoryStore(), SQLiteStore(":memory:")
    articles = _titled_corpus(memory, seed=7)
    assert _titled_corpus(sqlite_store, seed=7) == articles
    clients = [s.client({"kb"}, clock=lambda: 1.0) for s in (memory, sqlite_store)]
    for article_id, title in articles:
        args = {"knowledge_base_id": "kb", "query": title, "limit": 20}
        memory_hits, sqlite_hits = (c.call("search_knowledge_base", args)["results"]
                                    for c in clients)
        assert len(memory_hits) < 20, "corpus too dense: the sets would be truncated"
        assert memory_hits[0]["article_id"] == article_id
        assert sqlite_hits == memory_hits


def test_memory_bm25_uses_the_parameters_fts5_fixes():
    """SQLiteStore can rank exactly like MemoryStore only while BM25Index keeps
    FTS5's k1 and b (and indexes titles TITLE_WEIGHT times)."""
    index = BM25Index()
    assert (index.k1, index.b, index.title_weight) == (1.2, 0.75, sqlite_backend.TITLE_WEIGHT)


def test_search_skips_unpublished_and_sees_new_titles():
    store = SQLiteStore(":memory:")
    store.create_knowledge_base("kb")
    first = store.publish_article("kb", title="alpha beta", content="gamma", at=0.0)
    second = store.publish_article("kb", title="delta", content="alpha " * 200, at=0.0)
    client = store.client({"kb"}, clock=lambda: 1.0)

    def hits(query):
        args = {"knowledge_base_id": "kb", "query": query}
        results = client.call("search_knowledge_base", args)["results"]
        return sorted(hit["article_id"] for hit in results)

    assert hits("alpha") == [first, second]
    store.save_article("kb", first, at=1.0, title="omega")
    assert hits("alpha") == [second] and hits("omega") == [first]
    store.unpublish_article("kb", second, at=2.0)
    assert hits("alpha") == [] and hits("!!") == []
    assert store.snapshot()["kbs"]["kb"]["index_docs"] == 1


def test_reopened_file_has_the_same_state_and_goes_on(tmp_path):
    path = tmp_path / "kb.db"
    with SQLiteStore(path) as store:
        run_script(store, seed=4, steps=150)
        before = store.snapshot()
    reopened = SQLiteStore(path)
    assert reopened.snapshot() == before
    article_id = reopened.published_article_ids("kb-a")[0]
    old = reopened.current_version("kb-a", article_id)
    new = reopened.save_article("kb-a", article_id, at=0.0, content="after reopening")
    assert kbsim.parse_version(new) == kbsim.parse_version(old) + 1
    assert reopened.latest_sequence("kb-a") == before["kbs"]["kb-a"]["next_seq"]


def test_a_file_store_pickles_as_its_path(tmp_path):
    store = SQLiteStore(tmp_path / "kb.db", event_retention_s=30.0)
    store.create_knowledge_base("kb")
    store.publish_article("kb", title="t", content="c", at=0.0)
    copy = pickle.loads(pickle.dumps(store))
    assert copy.path == store.path and copy.event_retention_s == 30.0
    assert copy.snapshot() == store.snapshot()
    with pytest.raises(TypeError, match="in-memory"):
        pickle.dumps(SQLiteStore(":memory:"))


def test_threads_share_an_in_memory_store():
    store = SQLiteStore(":memory:")
    store.create_knowledge_base("kb")
    article_id = store.publish_article("kb", title="t", content="c", at=0.0)

    def save(worker):
        for i in range(50):
            store.save_article("kb", article_id, at=0.0, content=f"{worker}-{i}")

    threads = [threading.Thread(target=save, args=(w,)) for w in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    events = store.snapshot()["kbs"]["kb"]["events"]
    assert [e[0] for e in events] == list(range(1, 202))
    assert [e[3] for e in events] == list(range(201))  # versions step by one microsecond


# -- bad files ---------------------------------------------------------------------


def _kbsim_file(path) -> None:
    with SQLiteStore(path) as store:
        store.create_knowledge_base("kb")
        store.publish_article("kb", title="t", content="c", at=0.0)


@pytest.mark.parametrize("kind", ["text", "other_sqlite", "newer_schema", "garbage_header"])
def test_bad_file_gets_a_clear_error_and_is_not_modified(tmp_path, kind):
    path = tmp_path / "not-ours.db"
    if kind == "text":
        path.write_text("name,score\nada,3\n" * 50)
        message = "not a kbsim database"
    elif kind == "garbage_header":
        path.write_bytes(b"SQLite format 3\x00" + bytes(range(256)) * 20)
        message = "not a kbsim database"
    elif kind == "other_sqlite":
        conn = sqlite3.connect(path)
        conn.execute("CREATE TABLE scores (name TEXT, score INTEGER)")
        conn.execute("INSERT INTO scores VALUES ('ada', 3)")
        conn.commit()
        conn.close()
        message = "SQLite database but not a kbsim database"
    else:
        _kbsim_file(path)
        conn = sqlite3.connect(path)
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
        conn.close()
        message = f"schema version {SCHEMA_VERSION + 1}, newer than"
    before = path.read_bytes()
    with pytest.raises(StoreFileError, match=message) as info:
        SQLiteStore(path)
    assert str(path) in str(info.value) and "left unchanged" in str(info.value)
    assert path.read_bytes() == before


def test_a_directory_is_refused(tmp_path):
    with pytest.raises(StoreFileError, match="is a directory"):
        SQLiteStore(tmp_path)


def test_a_missing_directory_is_named(tmp_path):
    with pytest.raises(StoreFileError, match="does not exist"):
        SQLiteStore(tmp_path / "nowhere" / "kb.db")


def test_an_empty_file_becomes_a_new_store(tmp_path):
    path = tmp_path / "empty.db"
    path.touch()
    store = SQLiteStore(path)
    store.create_knowledge_base("kb")
    assert store.has_knowledge_base("kb")


def test_missing_fts5_fails_at_open_without_creating_the_file(tmp_path, monkeypatch):
    monkeypatch.setattr(sqlite_backend, "fts5_available", lambda: False)
    path = tmp_path / "kb.db"
    with pytest.raises(RuntimeError, match="without FTS5"):
        SQLiteStore(path)
    assert not path.exists()


def test_busy_timeout_expiry_is_a_clear_error_and_changes_nothing(tmp_path):
    path = tmp_path / "kb.db"
    store = SQLiteStore(path, busy_timeout_s=0.2)
    store.create_knowledge_base("kb")
    article_id = store.publish_article("kb", title="t", content="c", at=0.0)
    version = store.current_version("kb", article_id)
    blocker = sqlite3.connect(path, isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")
    try:
        before = store.snapshot()  # reads are not blocked by a writer in WAL mode
        with pytest.raises(StoreBusyError, match=r"busy_timeout_s=0\.2"):
            store.save_article("kb", article_id, at=1.0, content="blocked")
        client = store.client({"kb"}, clock=lambda: 1.0)
        # A typed tool error with the retryable code every caller can branch on.
        with pytest.raises(ToolError, match="stayed locked") as info:
            client.call("edit_knowledge_article", {
                "knowledge_base_id": "kb", "article_id": article_id, "content": "x",
                "expected_version": version, "idempotency_key": "k"})
        assert isinstance(info.value, StoreBusyError) and info.value.code == "busy"
        assert info.value.to_dict() == {"code": "busy", "message": info.value.message}
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
    assert store.snapshot() == before
    assert store.save_article("kb", article_id, at=1.0, content="now") == format_version(1_000_000)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"event_retention_s": 0}, "event_retention_s"),
        ({"busy_timeout_s": 0}, "busy_timeout_s"),
        ({"synchronous": "sometimes"}, "synchronous"),
    ],
)
def test_bad_options_name_the_option(kwargs, message):
    with pytest.raises(ValueError, match=message):
        SQLiteStore(":memory:", **kwargs)


def test_a_closed_store_says_so(tmp_path):
    store = SQLiteStore(tmp_path / "kb.db")
    store.close()
    with pytest.raises(RuntimeError, match="closed"):
        store.create_knowledge_base("kb")
