"""What the in-memory search index costs per posting: the arena index (the store's) and the plain one.

Usage: python benchmarks/bench_index_memory.py [--articles 10000]

Builds the synthetic starting knowledge base of that many articles, then, under tracemalloc,
builds each index from the articles' texts as a first fill does (``fill_texts``: the arena
index, ``ArenaIndex``, and the plain reference, ``BM25Index``) and copies it (what each
simulated day pays), and divides by the postings; a copy's growth of the resident set is
measured too (the arena's copy has room for a day's saves that is memory only once written).
Then times, at 400 articles and at that many, building each index article by article and in
one batch, and copying it. Writes the "Search index memory" section of benchmarks/RESULTS.md.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from results_file import machine_line, write_section  # noqa: E402

from kbsim.params import DayParams  # noqa: E402
from kbsim.sim.world import KB_ID, starting_knowledge_base  # noqa: E402
from kbsim.store.arena import ArenaIndex  # noqa: E402
from kbsim.store.bm25 import BM25Index  # noqa: E402

KINDS = {"arena (the store's)": ArenaIndex, "plain (BM25Index)": BM25Index}


def median_of(fn, repeats: int) -> float:
    """The median CPU seconds of ``repeats`` calls of ``fn`` (CPU time: the machine is shared,
    and other load disturbs it far less than wall time)."""
    times = []
    for _ in range(repeats):
        start = time.process_time()
        fn()
        times.append(time.process_time() - start)
    return statistics.median(times)


def documents(articles: int) -> list[tuple[str, str, str]]:
    template = starting_knowledge_base(DayParams(corpus={"articles": articles}).corpus, 1).template
    return [(a.article_id, a.title, a.content) for a in template._kbs[KB_ID].articles.values()]


def postings_of(index) -> int:
    if isinstance(index, ArenaIndex):
        return int(index._df.sum())
    return sum(len(bucket) for bucket in index._postings.values())


def resident_bytes() -> int:
    with open(f"/proc/{os.getpid()}/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def filled(kind, docs):
    index = kind()
    index.fill_texts(docs)
    return index


def timings(kind, articles: int) -> dict[str, float]:
    """Seconds to index ``articles`` synthetic articles article by article and in one batch,
    and to copy the index."""
    docs = documents(articles)
    repeats = 5 if articles <= 1000 else 1

    def one_by_one():
        index = kind()
        for doc in docs:
            index.add(*doc)

    index = filled(kind, docs)
    return {
        "add": median_of(one_by_one, repeats),
        "fill": median_of(lambda: filled(kind, docs), repeats),
        "copy": median_of(index.copy, 5),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--articles", type=int, default=10_000)
    args = parser.parse_args()
    if args.articles < 1:
        parser.error("--articles: expected at least 1")
    docs = documents(args.articles)
    rows, per_copy = [], {}
    for label, kind in KINDS.items():
        tracemalloc.start()
        index = filled(kind, docs)
        built, _ = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        postings = postings_of(index)
        resident = resident_bytes()
        tracemalloc.start()
        twin = index.copy()
        copied, _ = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        grown = resident_bytes() - resident
        assert len(twin) == len(index) and postings_of(twin) == postings
        per_copy[label] = grown / postings
        rows.append(
            f"| {label} | {postings:,} | {built / 2**20:.1f} MiB | {built / postings:.0f} B | "
            f"{copied / 2**20:.1f} MiB | {copied / postings:.0f} B | "
            f"{grown / 2**20:.1f} MiB | {grown / postings:.0f} B |"
        )
        del index, twin
    sizes = dict.fromkeys((400, args.articles))
    timed = {(label, n): timings(kind, n) for label, kind in KINDS.items() for n in sizes}
    time_rows = "\n".join(
        f"| {label} | {n:,} | {t['add'] * 1e3:.1f} ms | {t['fill'] * 1e3:.1f} ms | {t['copy'] * 1e3:.1f} ms |"
        for (label, n), t in timed.items()
    )
    write_section(
        "Search index memory",
        f"""{machine_line()} Command: `python benchmarks/bench_index_memory.py --articles {args.articles}`.

The synthetic starting knowledge base's {args.articles:,} articles indexed from their texts as a first fill
does (`fill_texts`) under tracemalloc, and the index copied as each simulated day copies its seed's:
the arena index (the store's: postings as int32 cells in numpy arrays, each document's terms as
forward cells) and the plain reference (`BM25Index`: dicts of postings). A copy of the arena
index allocates room for a day's saves that is memory only once written; the resident set's
growth is what it costs at once.

| index | postings | whole index | per posting | copy, allocated | per posting | copy, resident | per posting |
| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |
{chr(10).join(rows)}

Indexing the articles article by article (`add`) and in one batch (`fill_texts`, what a first fill
of 1,000 articles or more does), and copying the index as a day does; medians:

| index | articles | add, one by one | fill_texts, one batch | copy |
| --- | ---: | ---: | ---: | ---: |
{time_rows}
""",
    )
    print(", ".join(f"{label}: a copy {b:.1f} resident bytes per posting" for label, b in per_copy.items()))


if __name__ == "__main__":
    main()
