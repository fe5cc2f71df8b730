"""SQLiteStore survives SIGKILL mid-edit: nothing half-written, nothing acknowledged lost.

A writer subprocess edits a few articles in a loop, journaling each key
(with its arguments) to a file just before sending it ("send") and just
after its result came back ("done"). Once it has applied its first edit (so it opened the crashed
file and carried on without any repair) it is killed with SIGKILL at a
random moment, over and over (alternately with synchronous FULL, the
default, and NORMAL). After every kill: ``PRAGMA integrity_check``
and FTS5's own integrity check pass; every edit is wholly present (event,
idempotency record, content and search index) or wholly absent; every edit
the writer saw acknowledged is present. An idempotency record keeps only a
digest of its arguments, so the arguments come from the journal.
"""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

import kbsim
from kbsim import SQLiteStore, parse_version
from kbsim.store import arguments_digest
from kbsim.store.bm25 import tokenize
from kbsim.store.sqlite import TITLE_WEIGHT

KB = "kb"
ARTICLES = ["art-000001", "art-000002", "art-000003"]
KILLS = 36

WRITER = """
import json, random, sys
from kbsim import SQLiteStore

path, run, journal, synchronous = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
articles = sys.argv[5:]
store = SQLiteStore(path, synchronous=synchronous)
client = store.client({"kb"}, clock=lambda: 0.0)
rng = random.Random(run)
words = [f"w{n}" for n in range(300)]
sent = []
with open(journal, "a", buffering=1) as log:
    for i in range(10**9):
        article_id = rng.choice(articles)
        read = client.call(
            "read_knowledge_article", {"knowledge_base_id": "kb", "article_id": article_id}
        )
        key = f"run{run}-{i}"
        arguments = {
            "knowledge_base_id": "kb",
            "article_id": article_id,
            "content": key + " " + " ".join(rng.choices(words, k=400)),
            "expected_version": read["updated_at"],
            "idempotency_key": key,
        }
        if i % 4 == 0:
            arguments["title"] = f"title {key}"
        log.write(f"send {key} {json.dumps(arguments)}\\n")
        result = client.call("edit_knowledge_article", arguments)
        assert result["replayed"] is False
        log.write(f"done {key}\\n")
        sent.append(arguments)
        if i % 5 == 4:  # an identical call again: replayed, writes nothing
            again = client.call("edit_knowledge_article", rng.choice(sent))
            assert again["replayed"] is True
        if i == 0:
            print("ready", flush=True)
"""


def journal_lines(journal: Path) -> tuple[list[str], str]:
    """A journal's whole lines, and what the kill cut short after the last of them.

    A write is not atomic against SIGKILL: the kernel stops copying it at a page
    boundary once the signal is pending, so the last line can end anywhere ("done "
    with no key has been seen). A cut "send" line was never sent (the call comes after
    the write); a cut "done" line is an acknowledgement, which the caller counts.
    """
    *lines, torn = journal.read_text().split("\n")
    return lines, torn


def check_after_kill(path: Path, journals: list[Path]) -> tuple[int, bool | None]:
    """Assert the file is whole; returns (applied edits, whether the in-flight edit applied)."""
    raw = sqlite3.connect(path, isolation_level=None)
    try:
        assert raw.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        raw.execute("INSERT INTO fts_1 (fts_1) VALUES ('integrity-check')")
        indexed = dict(
            raw.execute(
                "SELECT a.article_id, f.title || '|' || f.body FROM fts_1 AS f "
                "JOIN articles AS a ON a.article_rowid = f.rowid"
            ).fetchall()
        )
    finally:
        raw.close()
    with SQLiteStore(path) as store:
        state = store.snapshot()
    kb = state["kbs"][KB]
    events = kb["events"]
    assert [e[0] for e in events] == list(range(1, len(events) + 1))
    assert kb["next_seq"] == len(events) + 1
    updates = [(e[2], e[3]) for e in events if e[1] == "article.updated"]
    sent_arguments = {}
    for journal in journals:
        for line in journal_lines(journal)[0]:
            if line.startswith("send "):
                key, arguments = line[len("send "):].split(" ", 1)
                sent_arguments[key] = json.loads(arguments)
    records = {}
    for key, (digest, result) in state["idempotency"].items():
        arguments = sent_arguments[key]
        assert digest == arguments_digest(arguments)
        records[key] = (arguments, (arguments["article_id"], parse_version(result["updated_at"])))
    # Event <-> idempotency record, one to one.
    assert sorted(updates) == sorted(at for _, at in records.values())
    by_event = {at: arguments for arguments, at in records.values()}
    # Content, title, version and search index are those of each article's last edit.
    for article_id, title, content, published, version in kb["articles"]:
        last = [at for at in updates if at[0] == article_id]
        assert published
        if last:
            arguments = by_event[last[-1]]
            assert content == arguments["content"] and version == last[-1][1]
            titled = [by_event[at] for at in last if "title" in by_event[at]]
            assert title == (titled[-1]["title"] if titled else f"title {article_id}")
        key_bytes = article_id.encode()
        index_title = " ".join(tokenize(title) * TITLE_WEIGHT)
        assert indexed[key_bytes] == index_title + "|" + " ".join(tokenize(content))

    for journal in journals:
        lines, torn = journal_lines(journal)
        sent = [line.split()[1] for line in lines if line.startswith("send ")]
        done = {line.split()[1] for line in lines if line.startswith("done ")}
        if torn.startswith("d"):  # "done" cut short: the last edit sent came back
            done.add(sent[-1])
        assert done <= records.keys(), f"an acknowledged edit of {journal.name} was lost"
    # The killed writer's last journal: at most one edit was in flight.
    in_flight = [key for key in sent if key not in done]
    assert len(in_flight) <= 1
    return len(records), (in_flight[0] in records) if in_flight else None


@pytest.mark.slow
def test_sigkill_mid_edit_leaves_every_edit_whole(tmp_path, record_property):
    path = tmp_path / "crash.db"
    journals: list[Path] = []
    with SQLiteStore(path) as store:
        store.create_knowledge_base(KB)
        for article_id in ARTICLES:
            assert store.publish_article(
                KB, title=f"title {article_id}", content="initial", at=0.0
            ) == article_id
    env = dict(os.environ)
    package_root = str(Path(kbsim.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join([package_root, env.get("PYTHONPATH", "")])
    rng = random.Random(20261130)
    in_flight_applied = in_flight_absent = between_edits = 0
    applied = 0
    for run in range(KILLS):
        journals.append(tmp_path / f"journal-{run}.txt")
        writer = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(path), str(run), str(journals[-1]),
             # FULL (the default) spends most of an edit in fsync after the commit is
             # written; NORMAL kills land inside the transaction more often.
             "FULL" if run % 2 else "NORMAL", *ARTICLES],
            stdout=subprocess.PIPE,
            env=env,
        )
        try:
            # "ready" comes after the first applied edit: the writer opened the file
            # the last kill left and went on without repair.
            assert writer.stdout.readline() == b"ready\n", f"writer {run} did not start"
            signal_at = rng.uniform(0.0, 0.04)
            try:
                writer.wait(timeout=signal_at)
            except subprocess.TimeoutExpired:
                pass
            assert writer.poll() is None, f"writer {run} stopped by itself"
            os.kill(writer.pid, signal.SIGKILL)
        finally:
            writer.kill()
            writer.wait()
            writer.stdout.close()
        assert writer.returncode == -signal.SIGKILL
        applied, in_flight = check_after_kill(path, journals)
        if in_flight is None:
            between_edits += 1
        elif in_flight:
            in_flight_applied += 1
        else:
            in_flight_absent += 1

    # Both outcomes of a kill during an edit really happened, not only kills between edits.
    assert in_flight_absent > 0
    assert applied >= KILLS
    for name, value in (
        ("kills_survived", KILLS),
        ("edits_applied", applied),
        ("kills_during_edit_applied", in_flight_applied),
        ("kills_during_edit_absent", in_flight_absent),
        ("kills_between_edits", between_edits),
    ):
        record_property(name, value)
