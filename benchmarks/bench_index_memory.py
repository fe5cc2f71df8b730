"""What the in-memory search index costs per posting, the figure behind the 1 GiB target at 100k.

Usage: python benchmarks/bench_index_memory.py [--articles 10000]

Builds the synthetic starting knowledge base of that many articles, then, under tracemalloc,
builds its BM25 index again from the articles (the whole index: postings, each document's
terms, the term strings) and copies it (what each simulated day pays), and divides each by
the postings. Then times, at 400 articles and at that many, building the index article by
article against in one batch (``BM25Index.fill_texts``), and a day's copy of it kept as dicts
against one kept frozen (the figures behind ``_BULK_FILL`` and ``_FREEZE_POSTINGS``).
Writes the "Search index memory" section of benchmarks/RESULTS.md.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from results_file import machine_line, write_section  # noqa: E402

import kbsim.store.bm25 as bm25  # noqa: E402
from kbsim.params import DayParams  # noqa: E402
from kbsim.sim.world import KB_ID, starting_knowledge_base  # noqa: E402
from kbsim.store import BM25Index  # noqa: E402


def median_of(fn, repeats: int) -> float:
    """The median seconds of ``repeats`` calls of ``fn``."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def timings(articles: int) -> dict[str, float]:
    """Seconds to index ``articles`` synthetic articles article by article and in one batch,
    and to copy the index kept as dicts and kept frozen."""
    corpus = starting_knowledge_base(DayParams(corpus={"articles": articles}).corpus, 1).template
    docs = [(a.article_id, a.title, a.content) for a in corpus._kbs[KB_ID].articles.values()]
    repeats = 5 if articles <= 1000 else 1

    def one_by_one() -> BM25Index:
        index = BM25Index()
        for doc in docs:
            index.add(*doc)
        return index

    def batch(frozen: bool) -> BM25Index:
        saved = bm25._FREEZE_POSTINGS
        bm25._FREEZE_POSTINGS = 0 if frozen else 2**62
        try:
            index = BM25Index()
            index.fill_texts(docs)
            return index
        finally:
            bm25._FREEZE_POSTINGS = saved

    as_dicts, frozen = batch(False), batch(True)
    return {
        "add": median_of(one_by_one, repeats),
        "fill": median_of(lambda: batch(False), repeats),
        "copy_dicts": median_of(as_dicts.copy, 5),
        "copy_frozen": median_of(frozen.copy, 5),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--articles", type=int, default=10_000)
    args = parser.parse_args()
    if args.articles < 1:
        parser.error("--articles: expected at least 1")
    template = starting_knowledge_base(DayParams(corpus={"articles": args.articles}).corpus, 1).template
    index = template._kbs[KB_ID].index  # the store's own index (frozen when large): what a day copies
    documents = [(a.article_id, a.title, a.content) for a in template._kbs[KB_ID].articles.values()]
    tracemalloc.start()
    rebuilt = BM25Index()
    for doc_id, title, content in documents:
        rebuilt.add(doc_id, title, content)
    built, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    postings = sum(len(bucket) for bucket in rebuilt._postings.values())
    tracemalloc.start()
    twin = index.copy()
    copied, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert len(twin) == len(index) and sum(len(bucket) for bucket in twin._postings.values()) == postings
    per_posting = copied / postings
    timed = {n: timings(n) for n in dict.fromkeys((400, args.articles))}
    time_rows = "\n".join(
        f"| {n:,} | {t['add'] * 1e3:.1f} ms | {t['fill'] * 1e3:.1f} ms | {t['copy_dicts'] * 1e3:.1f} ms | "
        f"{t['copy_frozen'] * 1e3:.1f} ms |"
        for n, t in timed.items()
    )
    at_100k = per_posting * postings * 100_000 / args.articles / 2**20
    write_section(
        "Search index memory",
        f"""{machine_line()} Command: `python benchmarks/bench_index_memory.py --articles {args.articles}`.

The BM25 index of the synthetic starting knowledge base ({args.articles:,} articles) under
tracemalloc: built from its articles (the whole index), and copied, as each simulated day copies
its seed's index (a copy shares the documents' term tuples and the term strings).

| articles | terms | postings | postings per article | whole index | per posting | index copy | per posting |
| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |
| {args.articles:,} | {len(twin._postings):,} | {postings:,} | {postings / args.articles:.1f} | \
{built / 2**20:.1f} MiB | {built / postings:.0f} B | {copied / 2**20:.1f} MiB | {per_posting:.0f} B |

At 100,000 articles that is about {at_100k:.0f} MiB per copy (the template and the day's copy are both
alive during a day). A posting held as a slot (int32) and a count (int16) in numpy arrays would take
6 bytes, {per_posting / 6:.0f}x less.

Indexing the articles article by article (`add`) and in one batch (`fill_texts`, what a first fill
of 1,000 articles or more does), and copying the index as a day does, from dicts and from a
frozen index (flat arrays, what a first fill of a million postings or more keeps); medians:

| articles | add, one by one | fill_texts, one batch | copy of dicts | copy of a frozen index |
| ---: | ---: | ---: | ---: | ---: |
{time_rows}
""",
    )
    print(
        f"whole index {built / postings:.1f} bytes per posting; a copy {per_posting:.1f} "
        f"({at_100k:.0f} MiB per index copy at 100k articles)"
    )


if __name__ == "__main__":
    main()
