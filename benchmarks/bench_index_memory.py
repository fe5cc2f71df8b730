"""What the in-memory search index costs per posting, the figure behind the 1 GiB target at 100k.

Usage: python benchmarks/bench_index_memory.py [--articles 10000]

Builds the synthetic starting knowledge base of that many articles, then, under tracemalloc,
builds its BM25 index again from the articles (the whole index: postings, each document's
terms, the term strings) and copies it (what each simulated day pays), and divides each by
the postings.
Writes the "Search index memory" section of benchmarks/RESULTS.md.
"""

from __future__ import annotations

import argparse
import sys
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from results_file import machine_line, write_section  # noqa: E402

from kbsim.params import DayParams  # noqa: E402
from kbsim.sim.day import KB_ID, starting_knowledge_base  # noqa: E402
from kbsim.store import BM25Index  # noqa: E402


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
""",
    )
    print(
        f"whole index {built / postings:.1f} bytes per posting; a copy {per_posting:.1f} "
        f"({at_100k:.0f} MiB per index copy at 100k articles)"
    )


if __name__ == "__main__":
    main()
