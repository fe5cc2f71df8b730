"""SQLiteStore against MemoryStore, measured in the same run: tool calls and one day.

Store micro-benchmark: median µs per ``client.call`` of read, edit, poll and
search on the simulation's corpus of 400 articles, for MemoryStore and for
SQLiteStore on a file (default ``synchronous=FULL``: every applied edit is
on disk before the call returns), on a file with ``synchronous=NORMAL``, and
in memory (``":memory:"``). One day: the median wall time of the reference
day with edits (``run_day``), on MemoryStore and on SQLiteStore, the latter
by handing the day a factory of an empty SQLiteStore (``run_day(...,
store=factory)``, as tests/test_sqlite_day.py does), which the day fills.

Writes the "SQLite backend" section of benchmarks/RESULTS.md (that section
only; the others are kept).

Usage: python benchmarks/bench_sqlite.py [--calls 2000] [--days 5] [--seed 1]
"""

from __future__ import annotations

import argparse
import shlex
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_store import median_us  # noqa: E402
from results_file import machine_line, write_section  # noqa: E402

import kbsim  # noqa: E402
from kbsim.params import DayParams  # noqa: E402
from kbsim.sim import run_day  # noqa: E402
from kbsim.sim.corpus import Corpus  # noqa: E402
from kbsim.sim.world import starting_knowledge_base  # noqa: E402
from kbsim.store import StoreFactory  # noqa: E402

KB = "kb-bench"
TITLE = "SQLite backend"
TOOLS = ("read", "edit", "poll", "search")


def bench_store(store, calls: int, seed: int) -> dict[str, float]:
    """Median µs per call of each tool on a fresh copy of the 400-article corpus."""
    params = DayParams()
    corpus_rng, picks_rng = (np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(2))
    corpus = Corpus.build(params.corpus)
    articles = corpus.articles(corpus_rng)
    store.create_knowledge_base(KB)
    for title, body in articles:
        store.publish_article(KB, title=title, content=body, at=0.0)
    client = store.client(grants={KB}, clock=lambda: 3600.0)
    picks = [int(i) for i in picks_rng.integers(0, len(articles), calls + 20)]
    ids = [kbsim.store.article_id_for(i + 1) for i in picks]
    queries = [" ".join(articles[i][0].split()[:3]) for i in picks]
    bodies = [corpus.body(picks_rng) for _ in range(64)]

    result = {}
    result["read"] = median_us(
        lambda aid: client.call(
            "read_knowledge_article", {"knowledge_base_id": KB, "article_id": aid}
        ),
        ids,
    )
    result["search"] = median_us(
        lambda query: client.call(
            "search_knowledge_base", {"knowledge_base_id": KB, "query": query}
        ),
        queries,
    )
    versions = {aid: store.current_version(KB, aid) for aid in ids}
    edits = iter(range(10**9))

    def edit(aid: str) -> None:
        n = next(edits)
        out = client.call(
            "edit_knowledge_article",
            {
                "knowledge_base_id": KB,
                "article_id": aid,
                "content": bodies[n % len(bodies)],
                "expected_version": versions[aid],
                "idempotency_key": f"bench-{n}",
            },
        )
        versions[aid] = out["updated_at"]

    result["edit"] = median_us(edit, ids)
    latest = store.latest_sequence(KB)
    cursors = [int(c) for c in picks_rng.integers(0, max(latest - 100, 1), calls + 20)]
    result["poll"] = median_us(
        lambda cursor: client.call(
            "poll_resource_events",
            {
                "resource_type": "knowledge_base",
                "resource_id": KB,
                "after_sequence": cursor,
                "limit": 100,
            },
        ),
        cursors,
    )
    return result


def day_seconds(params: DayParams, seeds: list[int], open_store: StoreFactory | None = None) -> float:
    """Median wall time of ``run_day`` over ``seeds``, on memory or on ``open_store``'s stores."""
    times = []
    for seed in seeds:
        starting_knowledge_base(params.corpus, seed)  # the corpus cache is warm for every backend
        start = time.perf_counter()
        run_day(params, seed, store=open_store)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def section(tools: dict[str, dict[str, float]], days: dict[str, float], calls: int,
            n_days: int, command: str) -> str:
    backends = list(tools)
    header = "| | " + " | ".join(backends) + " |"
    rows = [header, "| --- |" + " ---: |" * len(backends)]
    for tool in TOOLS:
        base = tools["memory"][tool]
        cells = [f"{base:,.1f} µs"] + [
            f"{tools[b][tool]:,.1f} µs ({tools[b][tool] / base:.1f}x)" for b in backends[1:]
        ]
        rows.append(f"| {tool} | " + " | ".join(cells) + " |")
    base = days["memory"]
    cells = [f"{base * 1e3:,.0f} ms"] + [
        f"{days[b] * 1e3:,.0f} ms ({days[b] / base:.1f}x)" for b in backends[1:]
    ]
    rows.append("| one day | " + " | ".join(cells) + " |")
    return "\n".join(
        [
            f"{machine_line()} SQLite {sqlite3.sqlite_version}. Command: `{command}`.",
            "",
            f"Median µs per `client.call`, {calls:,} calls per tool, on the simulation's corpus",
            "of 400 articles (read: a random article; search: 3 words of a random title, limit",
            "10; poll: a page of up to 100 events from a random cursor; edit: a random article",
            "with its current version). One day: median wall time of `run_day` over",
            f"{n_days} seeds, the reference day with edits (delay 60 s), the KB copy included.",
            "Ratios are SQLite / memory, measured in the same run.",
            "",
            *rows,
            "",
            "- file (FULL) is the default: each applied save is fsynced before the call",
            "  returns, so edit FULL - NORMAL is this disk's fsync; NORMAL also survives a",
            "  killed process (tests/test_sqlite_crash.py) but may lose the last saves on a",
            "  power cut. Reads, searches and polls never write, so the modes tie there.",
            "- SQLite search looks up each query term in FTS5 and re-weights its bm25() to",
            "  the in-memory BM25, so both backends rank identically (tests/test_sqlite_day.py).",
        ]
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2_000)
    parser.add_argument("--days", type=int, default=5)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        paths = iter(Path(tmp, f"bench-{n}.db") for n in range(10**6))
        openers = {
            "memory": None,
            "SQLite file (FULL)": lambda r: kbsim.SQLiteStore(next(paths), r),
            "SQLite file (NORMAL)": lambda r: kbsim.SQLiteStore(
                next(paths), r, synchronous="NORMAL"
            ),
            "SQLite :memory:": lambda r: kbsim.SQLiteStore(":memory:", r),
        }
        tools = {
            name: bench_store(
                kbsim.MemoryStore() if opener is None else opener(None), args.calls, args.seed
            )
            for name, opener in openers.items()
        }
        params = DayParams.model_validate({"edit": {"delay_s": 60.0}})
        seeds = list(range(1, args.days + 1))
        days = {name: day_seconds(params, seeds, opener) for name, opener in openers.items()}
    command = "python " + shlex.join(["benchmarks/bench_sqlite.py", *sys.argv[1:]])
    text = section(tools, days, args.calls, args.days, command)
    write_section(TITLE, text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
