"""The straightforward design: the reference day in the standard library and SQLite.

A deliberately plain rebuild of the simulated day as a first implementation
would write it from the model's description (docs/model.md): one in-memory
SQLite database (articles, events, idempotency keys), search as a SQL ``LIKE``
scan ranked by how many query words an article matches (title matches first),
the people, the agent's questions, its three hourly checks and its delayed edits
as one time-ordered event loop with ``random`` and ``heapq``. No index, no
caches, no SimPy, no numpy.

It is the yardstick of the speed targets in benchmarks/RESULTS.md (``bench_day.py``
times it beside ``run_day`` on the same days); it is not part of kbsim and shares
no code with it, so that it measures the design, not a copy of kbsim's.

    python benchmarks/straightforward.py --seeds 1,2 --delays none,5,60,600,3600
"""

from __future__ import annotations

import argparse
import heapq
import itertools
import json
import random
import sqlite3
import time
from datetime import UTC, datetime, timedelta

START = datetime(2026, 1, 5, 9, 0, 0, tzinfo=UTC)
SYLLABLES = [o + v for o in "b d f g k l m n p r s t v z br st tr".split() for v in "a e i o u ai ou".split()]


def version(seconds: float) -> str:
    return (START + timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def word(i: int) -> str:
    return SYLLABLES[i // len(SYLLABLES) % len(SYLLABLES)] + SYLLABLES[i % len(SYLLABLES)]


class KnowledgeBase:
    """Articles and an event log in SQLite; the four tools as methods."""

    def __init__(self) -> None:
        self.db = sqlite3.connect(":memory:")
        self.db.executescript(
            """
            CREATE TABLE articles (id TEXT PRIMARY KEY, title TEXT, content TEXT, published INTEGER,
                                   updated_at TEXT);
            CREATE TABLE events (sequence INTEGER PRIMARY KEY, type TEXT, article_id TEXT, updated_at TEXT);
            CREATE TABLE keys (key TEXT PRIMARY KEY, arguments TEXT, result TEXT);
            """
        )

    def _next_version(self, article_id: str, at: float) -> str:
        row = self.db.execute("SELECT updated_at FROM articles WHERE id = ?", (article_id,)).fetchone()
        new = version(at)
        if row and new <= row[0]:
            new = (datetime.strptime(row[0], "%Y-%m-%dT%H:%M:%S.%fZ") + timedelta(microseconds=1)).strftime(
                "%Y-%m-%dT%H:%M:%S.%fZ"
            )
        return new

    def _event(self, kind: str, article_id: str, updated_at: str) -> None:
        self.db.execute(
            "INSERT INTO events (type, article_id, updated_at) VALUES (?, ?, ?)", (kind, article_id, updated_at)
        )

    def publish(self, article_id: str, title: str, content: str, at: float) -> None:
        stamp = version(at)
        self.db.execute("INSERT INTO articles VALUES (?, ?, ?, 1, ?)", (article_id, title, content, stamp))
        self._event("article.published", article_id, stamp)

    def save(self, article_id: str, at: float, content: str | None, title: str | None) -> str:
        stamp = self._next_version(article_id, at)
        if title is not None:
            self.db.execute("UPDATE articles SET title = ? WHERE id = ?", (title, article_id))
        if content is not None:
            self.db.execute("UPDATE articles SET content = ? WHERE id = ?", (content, article_id))
        self.db.execute("UPDATE articles SET updated_at = ? WHERE id = ?", (stamp, article_id))
        self._event("article.updated", article_id, stamp)
        return stamp

    def unpublish(self, article_id: str, at: float) -> None:
        stamp = self._next_version(article_id, at)
        self.db.execute("UPDATE articles SET published = 0, updated_at = ? WHERE id = ?", (stamp, article_id))
        self._event("article.unpublished", article_id, stamp)

    def published(self, article_id: str) -> bool:
        row = self.db.execute("SELECT published FROM articles WHERE id = ?", (article_id,)).fetchone()
        return bool(row and row[0])

    # -- the agent's tools: JSON text in, JSON text out (what an agent pays for)

    def search(self, query: str, limit: int = 10) -> str:
        words = query.split()
        # LIKE is case-insensitive for ASCII; a title match counts three times a body match
        score = " + ".join(["3 * (title LIKE ?) + (content LIKE ?)"] * len(words))
        parameters = [p for w in words for p in (f"%{w}%", f"%{w}%")]
        rows = self.db.execute(
            f"SELECT * FROM (SELECT id, title, substr(content, 1, 160), updated_at, {score} AS s "
            f"FROM articles WHERE published = 1) WHERE s > 0 ORDER BY s DESC, id LIMIT ?",
            [*parameters, limit],
        ).fetchall()
        return json.dumps(
            {"results": [{"article_id": a, "title": t, "snippet": c, "updated_at": u,
                          "citation": {"knowledge_base_id": "kb-1", "article_id": a, "updated_at": u}}
                         for a, t, c, u, _ in rows]},
            separators=(",", ":"),
        )

    def read(self, article_id: str) -> str:
        row = self.db.execute(
            "SELECT id, title, content, updated_at FROM articles WHERE id = ? AND published = 1", (article_id,)
        ).fetchone()
        if row is None:
            return json.dumps({"error": {"code": "not_found"}})
        a, t, c, u = row
        return json.dumps({"article_id": a, "title": t, "content": c, "updated_at": u,
                           "citation": {"knowledge_base_id": "kb-1", "article_id": a, "updated_at": u}},
                          separators=(",", ":"))

    def poll(self, after: int, limit: int = 100) -> str:
        rows = self.db.execute(
            "SELECT sequence, type, article_id, updated_at FROM events WHERE sequence > ? ORDER BY sequence LIMIT ?",
            (after, limit),
        ).fetchall()
        latest = self.db.execute("SELECT max(sequence) FROM events").fetchone()[0]
        last = rows[-1][0] if rows else after
        return json.dumps({"events": [{"sequence": s, "type": k, "article_id": a, "updated_at": u}
                                      for s, k, a, u in rows],
                           "next_sequence": last, "has_more": last < latest}, separators=(",", ":"))

    def edit(self, article_id: str, content: str, expected: str, key: str, at: float) -> str:
        arguments = json.dumps([article_id, content, expected])
        row = self.db.execute("SELECT arguments, result FROM keys WHERE key = ?", (key,)).fetchone()
        if row is not None:
            if row[0] != arguments:
                return json.dumps({"error": {"code": "idempotency_key_reused"}})
            return json.dumps({**json.loads(row[1]), "replayed": True})
        current = self.db.execute(
            "SELECT updated_at FROM articles WHERE id = ? AND published = 1", (article_id,)
        ).fetchone()
        if current is None:
            return json.dumps({"error": {"code": "not_found"}})
        if current[0] != expected:
            return json.dumps({"error": {"code": "version_conflict"}})
        stamp = self.save(article_id, at, content, None)
        result = json.dumps({"article_id": article_id, "updated_at": stamp, "replayed": False})
        self.db.execute("INSERT INTO keys VALUES (?, ?, ?)", (key, arguments, result))
        return result


def zipf_choice(rng: random.Random, ranked: list[str], cumulative: list[float], ok) -> str | None:
    for _ in range(1000):
        article = ranked[min(len(ranked) - 1, bisect(cumulative, rng.random() * cumulative[-1]))]
        if ok(article):
            return article
    return None


def bisect(values: list[float], x: float) -> int:
    lo, hi = 0, len(values)
    while lo < hi:
        mid = (lo + hi) // 2
        if values[mid] <= x:
            lo = mid + 1
        else:
            hi = mid
    return lo


def simulate_day(seed: int, delay_s: float | None, articles: int = 400, questions: int = 120, saves: int = 300,
                 day_s: float = 8 * 3600.0, zipf_s: float = 0.9, edit_share: float = 0.25) -> dict:
    """One day; returns counts (stale citations at the end, check calls, edit outcomes)."""
    rng = random.Random(seed)
    kb = KnowledgeBase()
    vocabulary = [word(i) for i in range(max(600, 4 * articles))]
    ids = [f"art-{i + 1:06d}" for i in range(articles)]
    for article_id in ids:
        title = " ".join(rng.sample(vocabulary, 4)).capitalize()
        kb.publish(article_id, title, " ".join(rng.choices(vocabulary, k=60)) + ".", 0.0)
    ranked = ids[:]
    rng.shuffle(ranked)
    cumulative = list(itertools.accumulate((r + 1) ** -zipf_s for r in range(articles)))
    queue: list = []
    order = itertools.count()
    for t in sorted(rng.uniform(0, day_s) for _ in range(saves)):
        kind = rng.choices(["content", "content_and_title", "unpublish"], [0.85, 0.10, 0.05])[0]
        heapq.heappush(queue, (t, next(order), "save", kind))
    for t in sorted(rng.uniform(0, day_s) for _ in range(questions)):
        heapq.heappush(queue, (t, next(order), "ask", None))
    for hour in range(1, int(day_s // 3600) + 1):
        heapq.heappush(queue, (hour * 3600.0, next(order), "check", None))
    citations: list[tuple[str, str, str]] = []  # (article id, cited version, cited title)
    cursor, known = kb.db.execute("SELECT max(sequence) FROM events").fetchone()[0], {}
    outcome = {"calls": 0, "applied": 0, "conflict": 0, "gone": 0, "retry_applied": 0}
    answer = 0
    while queue:
        now, _, what, detail = heapq.heappop(queue)
        if what == "save":
            target = zipf_choice(rng, ranked, cumulative, kb.published)
            if target is None:
                continue
            if detail == "unpublish":
                kb.unpublish(target, now)
            else:
                title = " ".join(rng.sample(vocabulary, 4)).capitalize() if detail == "content_and_title" else None
                kb.save(target, now, " ".join(rng.choices(vocabulary, k=60)) + ".", title)
        elif what == "ask":
            target = zipf_choice(rng, ranked, cumulative, kb.published)
            if target is None:
                continue
            title = json.loads(kb.read(target))["title"].split()
            query = " ".join(rng.sample(title, 3))
            hits = json.loads(kb.search(query))["results"][:2]
            cited = []
            for hit in hits:
                read = json.loads(kb.read(hit["article_id"]))
                cited.append((read["article_id"], read["updated_at"], read["title"], read["content"]))
                citations.append((read["article_id"], read["updated_at"], read["title"]))
            if delay_s is not None and cited and rng.random() < edit_share:
                heapq.heappush(queue, (now + delay_s, next(order), "edit", (answer, cited[0])))
            answer += 1
        elif what == "edit":
            number, (article_id, cited_version, _, content) = detail
            key = f"a{number}"
            result = json.loads(kb.edit(article_id, content + " note", cited_version, key, now))
            code = result.get("error", {}).get("code", "applied")
            outcome[code] = outcome.get(code, 0) + 1
            if code == "applied":
                kb.edit(article_id, content + " note", cited_version, key, now)  # the replay
            elif code == "version_conflict":
                read = json.loads(kb.read(article_id))
                if "error" not in read:
                    retry = json.loads(kb.edit(article_id, read["content"] + " note", read["updated_at"],
                                               key + "r", now))
                    outcome["retry_applied"] += "error" not in retry
        elif what == "check":
            for _, title in dict.fromkeys((c[0], c[2]) for c in citations):  # title, once per cited title
                kb.search(title[:200])
                outcome["calls"] += 1
            for article_id in dict.fromkeys(c[0] for c in citations):  # re-read
                kb.read(article_id)
                outcome["calls"] += 1
            moved = set()  # poll
            while True:
                page = json.loads(kb.poll(cursor))
                outcome["calls"] += 1
                moved |= {e["article_id"] for e in page["events"]}
                cursor = page["next_sequence"]
                if not page["has_more"]:
                    break
            for article_id in moved & {c[0] for c in citations}:
                read = json.loads(kb.read(article_id))
                known[article_id] = read.get("updated_at")
                outcome["calls"] += 1
    stale = sum(1 for a, v, _ in citations if known.get(a, v) != v)
    return {"citations": len(citations), "stale": stale, **outcome}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", default="1,2")
    parser.add_argument("--delays", default="none,5,60,600,3600")
    args = parser.parse_args(argv)
    seeds = [int(s) for s in args.seeds.split(",")]
    delays = [None if d == "none" else float(d) for d in args.delays.split(",")]
    started = time.perf_counter()
    for seed in seeds:
        for delay in delays:
            print(seed, delay, simulate_day(seed, delay))
    days = len(seeds) * len(delays)
    print(f"{days} days in {time.perf_counter() - started:.2f} s: "
          f"{1000 * (time.perf_counter() - started) / days:.0f} ms a day")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
