"""SQLiteStore under real concurrency: 8 threads and 4 processes on one file.

Every worker races compare-and-swap edits on a few hot articles: it reads,
edits with the version it read, and on ``version_conflict`` re-reads and
retries. Every worker also sends the same sequence of "shared" edits, with
identical arguments and idempotency keys, so most shared keys arrive from
several workers at once. Afterwards the log must hold every applied edit
exactly once, gapless; replaying the log (each event's content comes from
its idempotency record) must give the final contents; and each key must have
been applied once, every other sender getting the first result replayed.
"""

from __future__ import annotations

import multiprocessing
import random
import threading
import time
from collections import Counter
from typing import Any

import pytest

from kbsim import SQLiteStore, ToolError, format_version, parse_version

KB = "kb"
HOT = ["art-000001", "art-000002", "art-000003"]
SHARED = "art-000004"
THREADS = 8
PROCESSES = 4
EDITS_PER_WORKER = 200  # applied hot edits each; several thousand attempts in all
SHARED_ROUNDS = 60


def shared_arguments(round_no: int) -> dict[str, str]:
    """The shared article's round-``round_no`` edit, the same from every worker.

    The clock stands still, so the shared article's n-th applied edit has
    version n microseconds: a worker sends round n only after round n-1 was
    applied (by anyone), so round n either applies or is replayed, never conflicts.
    """
    return {
        "knowledge_base_id": KB,
        "article_id": SHARED,
        "content": f"shared round {round_no}",
        "expected_version": format_version(round_no),
        "idempotency_key": f"shared-{round_no}",
    }


def edit_worker(store: SQLiteStore, worker: str, seed: int, start: Any) -> dict[str, Any]:
    """Race CAS edits and shared edits; returns what this worker saw."""
    client = store.client({KB}, clock=lambda: 0.0)
    rng = random.Random(seed)
    attempts = conflicts = 0
    applied: list[tuple[str, str, str, str]] = []  # key, article, content, updated_at
    shared: list[tuple[str, bool, str]] = []  # key, replayed, updated_at
    rounds_at = set(rng.sample(range(EDITS_PER_WORKER), SHARED_ROUNDS))
    next_round = 0
    start.wait()
    for i in range(EDITS_PER_WORKER):
        article_id = rng.choice(HOT)
        key = content = f"{worker}/{i}"
        while True:
            read = client.call(
                "read_knowledge_article", {"knowledge_base_id": KB, "article_id": article_id}
            )
            attempts += 1
            # A moment between reading and editing (an agent thinks), so that other
            # workers get in between: SQLite's busy handler otherwise lets one writer
            # run many edits in a row while the others sleep.
            time.sleep(rng.random() * 0.002)
            try:
                result = client.call(
                    "edit_knowledge_article",
                    {
                        "knowledge_base_id": KB,
                        "article_id": article_id,
                        "content": content,
                        "expected_version": read["updated_at"],
                        "idempotency_key": key,
                    },
                )
            except ToolError as exc:
                if exc.code != "version_conflict":
                    raise
                conflicts += 1
                continue
            assert result["replayed"] is False
            applied.append((key, article_id, content, result["updated_at"]))
            break
        if i in rounds_at:
            result = client.call("edit_knowledge_article", shared_arguments(next_round))
            shared.append((f"shared-{next_round}", result["replayed"], result["updated_at"]))
            next_round += 1
    return {"attempts": attempts, "conflicts": conflicts, "applied": applied, "shared": shared}


def hot_articles_store(path: str) -> SQLiteStore:
    """A new store file with KB holding the hot articles and the shared one (art-000001..4)."""
    store = SQLiteStore(path)
    store.create_knowledge_base(KB)
    for name in HOT + [SHARED]:
        store.publish_article(KB, title=f"hot {name}", content="initial", at=0.0)
    return store


def process_main(path: str, worker: str, seed: int, start: Any, results: Any) -> None:
    with SQLiteStore(path, busy_timeout_s=60.0) as store:
        results.put(edit_worker(store, worker, seed, start))


@pytest.mark.slow
def test_threads_and_processes_race_cas_edits(tmp_path, record_property):
    path = str(tmp_path / "race.db")
    store = hot_articles_store(path)

    ctx = multiprocessing.get_context("spawn")
    # Everyone starts editing together, once every process has opened the store.
    start = ctx.Barrier(THREADS + PROCESSES, timeout=120)
    results = ctx.Queue()
    processes = [
        ctx.Process(target=process_main, args=(path, f"p{n}", 100 + n, start, results))
        for n in range(PROCESSES)
    ]
    for process in processes:
        process.start()
    outcomes: list[dict[str, Any]] = []
    errors: list[BaseException] = []

    # The threads share one store object (as a server's thread pool would); each
    # thread gets its own connection. Each process opens the file itself.
    shared_store = SQLiteStore(path, busy_timeout_s=60.0)

    def thread_main(n: int) -> None:
        try:
            outcomes.append(edit_worker(shared_store, f"t{n}", n, start))
        except BaseException as exc:  # re-raised below, in the test's thread
            errors.append(exc)

    threads = [threading.Thread(target=thread_main, args=(n,)) for n in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    shared_store.close()
    outcomes += [results.get(timeout=120) for _ in processes]
    for process in processes:
        process.join(timeout=30)
        assert process.exitcode == 0
    assert not errors, errors

    state = store.snapshot()
    kb = state["kbs"][KB]
    events = kb["events"]
    articles = {a[0]: a for a in kb["articles"]}
    idempotency = state["idempotency"]
    applied = [edit for outcome in outcomes for edit in outcome["applied"]]
    attempts = sum(o["attempts"] for o in outcomes)
    conflicts = sum(o["conflicts"] for o in outcomes)

    # The sequence is gapless and nothing was compacted.
    assert [e[0] for e in events] == list(range(1, len(events) + 1))
    assert kb["first_seq"] == 1 and kb["next_seq"] == len(events) + 1
    updates = [e for e in events if e[1] == "article.updated"]
    assert len(updates) == len(applied) + SHARED_ROUNDS

    # Every applied edit appears exactly once in the log, as (article, version).
    logged = Counter((e[2], e[3]) for e in updates)
    assert all(count == 1 for count in logged.values())
    for _key, article_id, _content, updated_at in applied:
        assert logged[(article_id, parse_version(updated_at))] == 1
    assert attempts == len(applied) + conflicts

    # Replaying the log, with each event's content from its idempotency record (which
    # keeps a digest of the arguments: a key's content is known from the key), gives
    # every article's final content and version.
    sent = {key: content for key, _article_id, content, _ in applied}
    sent.update({f"shared-{r}": shared_arguments(r)["content"] for r in range(SHARED_ROUNDS)})
    content_of = {
        (result["article_id"], parse_version(result["updated_at"])): sent[key]
        for key, (_digest, result) in idempotency.items()
    }
    replayed = {}
    for _seq, _kind, article_id, version in updates:
        replayed[article_id] = (content_of[(article_id, version)], version)
    for article_id, (content, version) in replayed.items():
        assert articles[article_id][2] == content and articles[article_id][4] == version
    # ... and the final content is the last applied edit's, as the workers saw it.
    for article_id in HOT:
        last = max((e for e in applied if e[1] == article_id), key=lambda e: e[3])
        assert articles[article_id][2] == last[2]

    # Each idempotency key was applied once: one record per applied edit and per
    # shared round; every sender of a shared key got the same result, one fresh.
    assert len(idempotency) == len(applied) + SHARED_ROUNDS
    assert {key for key, *_ in applied} | {f"shared-{r}" for r in range(SHARED_ROUNDS)} == set(
        idempotency
    )
    shared = [s for outcome in outcomes for s in outcome["shared"]]
    assert len(shared) == (THREADS + PROCESSES) * SHARED_ROUNDS
    fresh = Counter(key for key, replayed_flag, _ in shared if not replayed_flag)
    assert fresh == Counter(f"shared-{r}" for r in range(SHARED_ROUNDS))
    for key, _, updated_at in shared:
        assert idempotency[key][1]["updated_at"] == updated_at
    assert articles[SHARED][2] == f"shared round {SHARED_ROUNDS - 1}"
    assert articles[SHARED][4] == SHARED_ROUNDS

    assert conflicts > 0, "no CAS race happened: the test proves nothing"
    for name, value in (
        ("attempts", attempts),
        ("conflicts", conflicts),
        ("applied_edits", len(applied)),
        ("shared_sends", len(shared)),
        ("shared_replays", len(shared) - SHARED_ROUNDS),
        ("events", len(events)),
    ):
        record_property(name, value)


def same_key_worker(path: str, rounds: int, barrier: Any, results: Any) -> None:
    """Send each shared round at the same instant as the other worker."""
    store = SQLiteStore(path, busy_timeout_s=60.0)
    client = store.client({KB}, clock=lambda: 0.0)
    seen = []
    for round_no in range(rounds):
        barrier.wait()
        result = client.call("edit_knowledge_article", shared_arguments(round_no))
        seen.append((f"shared-{round_no}", result["replayed"], result["updated_at"]))
    store.close()
    results.put(seen)


def test_two_workers_send_each_key_at_the_same_instant(tmp_path, record_property):
    path = str(tmp_path / "same-key.db")
    store = hot_articles_store(path)
    rounds = 40
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(2, timeout=120)
    results = ctx.Queue()
    workers = [
        ctx.Process(target=same_key_worker, args=(path, rounds, barrier, results))
        for _ in range(2)
    ]
    for worker in workers:
        worker.start()
    first, second = (results.get(timeout=120) for _ in workers)
    for worker in workers:
        worker.join(timeout=30)
        assert worker.exitcode == 0

    for (key, replayed_a, at_a), (key_b, replayed_b, at_b) in zip(first, second, strict=True):
        assert key == key_b and at_a == at_b
        assert replayed_a != replayed_b, f"{key} applied {2 - replayed_a - replayed_b} times"
    state = store.snapshot()
    updates = [e for e in state["kbs"][KB]["events"] if e[1] == "article.updated"]
    assert [(e[2], e[3]) for e in updates] == [(SHARED, r + 1) for r in range(rounds)]
    assert sorted(state["idempotency"]) == sorted(f"shared-{r}" for r in range(rounds))
    record_property("same_instant_keys", rounds)
