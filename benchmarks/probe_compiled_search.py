"""Probe of a design not built: the index's searches compiled with numba, over postings in arrays.

Usage: python benchmarks/probe_compiled_search.py [--scale 250] [--queries 20000] [--seed 1]

Not part of ``make bench``, not a kbsim code path, and numba is not a kbsim dependency:
install it beside kbsim first (``pip install numba``). It measures what the searches of a
day could cost if postings were arrays and the scoring loop compiled, to support (or not)
that design as the next step of the speed work. On the starting knowledge base of
``--scale`` times the reference corpus (seed ``--seed``), it takes ``--queries`` article
titles (the title check's queries) and the first four words of each (a question's), and
times three ways of ranking the top 10 of each:

- ``BM25Index.search_many`` as the title check calls it (a score table for small
  indexes, query by query past 20,000 documents);
- ``BM25Index.search`` query by query, as a question calls it;
- a numba loop over the same postings laid out as arrays (each term's documents and
  counts, as a frozen index holds them), one dense accumulator, every score summed in
  query-term order by the expression ``search`` uses, and the top 10 by score then id.

The compiled rankings are checked equal to ``search_many``'s, query for query, before any
time is printed. The postings here do not change; a day's saves would need them mutable
(for example appended per term, with each posting stamped by its document's version so
that search skips stale ones), which this probe does not build or time. For the saves it
times only the part that would stay in Python: tokenizing a new body and title and
counting their terms, against ``BM25Index.add`` of the same texts (on a fresh copy of the
index each time). Every timing is the median of three.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_day import scaled  # noqa: E402

from kbsim.sim.day import KB_ID, starting_knowledge_base  # noqa: E402
from kbsim.store.tokens import tokenize  # noqa: E402

try:
    import numba
except ImportError:  # pragma: no cover - a probe's own requirement
    sys.exit("probe_compiled_search: needs numba (pip install numba); it is not a kbsim dependency")

LIMIT = 10


@numba.njit(cache=False)
def _rank_all(query_starts, query_rows, starts, slots, tfs, weights, doc_len, base, per_len, id_rank, limit):
    """Top ``limit`` slots of every query (best first, ties by id rank) and how many each has."""
    n_docs = doc_len.size
    n_queries = query_starts.size - 1
    scores = np.zeros(n_docs)
    seen = np.zeros(n_docs, dtype=np.bool_)
    touched = np.empty(n_docs, dtype=np.int64)
    best = np.full((n_queries, limit), -1, dtype=np.int64)
    found = np.zeros(n_queries, dtype=np.int64)
    top_score = np.empty(limit)
    top_rank = np.empty(limit, dtype=np.int64)
    top_slot = np.empty(limit, dtype=np.int64)
    for q in range(n_queries):
        n_touched = 0
        for k in range(query_starts[q], query_starts[q + 1]):
            row = query_rows[k]
            weight = weights[row]
            for entry in range(starts[row], starts[row + 1]):
                d = slots[entry]
                tf = tfs[entry]
                contribution = weight * tf / ((tf + base) + per_len * doc_len[d])
                if seen[d]:
                    scores[d] = scores[d] + contribution
                else:
                    seen[d] = True
                    scores[d] = contribution
                    touched[n_touched] = d
                    n_touched += 1
        # the top `limit` by (score descending, id rank ascending): an insertion into a short sorted list
        kept = 0
        for i in range(n_touched):
            d = touched[i]
            score, rank = scores[d], id_rank[d]
            if kept == limit and (score < top_score[kept - 1]
                                  or (score == top_score[kept - 1] and rank > top_rank[kept - 1])):
                continue
            at = kept if kept < limit else limit - 1
            while at > 0 and (top_score[at - 1] < score or (top_score[at - 1] == score and top_rank[at - 1] > rank)):
                if at < limit:
                    top_score[at], top_rank[at], top_slot[at] = top_score[at - 1], top_rank[at - 1], top_slot[at - 1]
                at -= 1
            top_score[at], top_rank[at], top_slot[at] = score, rank, d
            if kept < limit:
                kept += 1
        for i in range(kept):
            best[q, i] = top_slot[i]
        found[q] = kept
        for i in range(n_touched):
            seen[touched[i]] = False
    return best, found


def arrays_of(index):
    """The index's postings as arrays: a row per term (its documents and counts), each
    term's weight as ``search`` computes it, the documents' lengths and id ranks."""
    terms = list(index._postings)
    row_of = {term: row for row, term in enumerate(terms)}
    buckets = [index._postings[term] for term in terms]
    lengths = np.fromiter(map(len, buckets), dtype=np.int64, count=len(buckets))
    starts = np.zeros(len(buckets) + 1, dtype=np.int64)
    np.cumsum(lengths, out=starts[1:])
    slots = np.fromiter((d for bucket in buckets for d in bucket), dtype=np.int64, count=int(starts[-1]))
    tfs = np.fromiter((tf for bucket in buckets for tf in bucket.values()), dtype=np.float64, count=int(starts[-1]))
    weights = np.array([index._weight(int(df)) for df in lengths.tolist()])
    doc_len = np.array(index._doc_len, dtype=np.float64)
    return row_of, starts, slots, tfs, weights, doc_len


def encoded(queries, row_of):
    """Each query's distinct terms, in order, as rows (terms no document has are dropped)."""
    rows, query_starts = [], [0]
    for query in queries:
        rows += [row_of[term] for term in dict.fromkeys(tokenize(query)) if term in row_of]
        query_starts.append(len(rows))
    return np.array(query_starts, dtype=np.int64), np.array(rows, dtype=np.int64)


def compiled(index, queries, arrays):
    row_of, starts, slots, tfs, weights, doc_len = arrays
    k1, b = index.k1, index.b
    base, per_len = k1 * (1.0 - b), k1 * b * index._n_docs / index._total_len
    query_starts, query_rows = encoded(queries, row_of)
    best, found = _rank_all(query_starts, query_rows, starts, slots, tfs, weights, doc_len,
                            base, per_len, index._id_ranks(), LIMIT)  # fmt: skip
    doc_ids = index._doc_ids
    return [[doc_ids[d] for d in row[:n]] for row, n in zip(best.tolist(), found.tolist(), strict=True)]


def _counts(title: str, content: str) -> dict[str, int]:
    """A save's term counts as ``BM25Index.add`` makes them (title terms weigh 3)."""
    counts: dict[str, int] = {}
    get = counts.get
    for term in tokenize(content):
        counts[term] = get(term, 0) + 1
    for term in tokenize(title):
        counts[term] = get(term, 0) + 3
    return counts


#: Each timing is the median of this many repetitions.
REPEATS = 3


def _replay(twin, texts) -> float:
    """Seconds for ``twin.add`` of each text (the copy made before is not timed)."""
    start = time.perf_counter()
    for text in texts:
        twin.add(*text)
    return time.perf_counter() - start


def per_query_us(fn, *args, count: int) -> tuple[float, object]:
    """Median µs per item of ``fn(*args)`` over :data:`REPEATS` calls, and its result."""
    times = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        result = fn(*args)
        times.append((time.perf_counter() - start) / count * 1e6)
    return statistics.median(times), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=int, default=250)
    parser.add_argument("--queries", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    if args.scale < 1 or args.queries < 1:
        parser.error("--scale and --queries: expected at least 1")
    starting = starting_knowledge_base(scaled(args.scale).corpus, args.seed)
    store = starting.template.copy()
    index = store._kbs[KB_ID].index
    index.search("warm", 1)  # thawed outside the timings
    rng = np.random.default_rng(args.seed)
    picked = rng.integers(len(starting.article_ids), size=args.queries).tolist()
    titles = [store.article_state(KB_ID, starting.article_ids[i]).title for i in picked]
    questions = [" ".join(title.split()[:4]) for title in titles]
    arrays = arrays_of(index)
    compiled(index, titles[:10], arrays)  # compiles
    lines = [f"{len(starting.article_ids):,} articles, {args.queries:,} queries of each kind, top {LIMIT}:"]
    for label, queries in (("titles", titles), ("question words", questions)):
        many_us, many = per_query_us(index.search_many, queries, LIMIT, count=len(queries))
        each_us, _ = per_query_us(lambda qs: [index.search(q, LIMIT) for q in qs], queries, count=len(queries))
        fast_us, fast = per_query_us(compiled, index, queries, arrays, count=len(queries))
        if fast != many:
            sys.exit(f"probe_compiled_search: the compiled rankings of the {label} differ from search_many's")
        lines.append(f"- {label}: search_many {many_us:.1f} µs a query, search {each_us:.1f}, "
                     f"compiled {fast_us:.1f} (the same rankings)")
    start = time.perf_counter()
    arrays_of(index)
    lines.append(f"- laying the postings out as arrays: {time.perf_counter() - start:.2f} s (once per index here)")
    saves = min(args.queries, 20_000)
    bodies = [starting.corpus.body(rng) for _ in range(saves)]
    targets = [starting.article_ids[i] for i in rng.integers(len(starting.article_ids), size=saves).tolist()]
    own = [store.article_state(KB_ID, target).title for target in targets]
    texts = list(zip(targets, own, bodies, strict=True))
    count_us, _ = per_query_us(lambda: [_counts(title, body) for _, title, body in texts], count=saves)
    add_us = statistics.median(_replay(index.copy(), texts) for _ in range(REPEATS)) / saves * 1e6
    lines.append(f"- a save ({saves:,}): tokenizing and counting its terms {count_us:.1f} µs, "
                 f"BM25Index.add {add_us:.1f} µs")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
