"""Probe of a design not built: the index's searches compiled with numba, over postings in arrays.

Usage: python benchmarks/probe_compiled_search.py [--scales 1,250] [--queries 20000] [--seed 1]

Not part of ``make bench``, not a kbsim code path, and numba is not a kbsim dependency:
install it beside kbsim first (``pip install numba``). It measures what the index's work in
a day could cost if postings were arrays and the scoring loop compiled, to support (or not)
that design as the next step of the speed work. On the starting knowledge base of each of
``--scales`` times the reference corpus (seed ``--seed``), it takes ``--queries`` article
titles (the title check's queries) and the first ``questions.query_words`` words of each
(a question's query), and ranks the top 10 of each:

- the titles in one batch by ``BM25Index.search_many``, as the title check asks them (a
  score table for small indexes, query by query past 20,000 documents), and by a numba
  loop over the same postings laid out as arrays (each term's documents and counts, as a
  frozen index holds them, as term blocks of the layout below with every posting
  current): one dense accumulator, every score summed in query-term order by the
  expression ``search`` uses, the top 10 by score then id;
- the questions one call each, by ``BM25Index.search`` and by the numba loop.

The compiled rankings are checked equal to kbsim's, query for query, before any time is
kept.

Then the saves. A day's saves need the postings mutable, so the probe also builds one such
layout: each term's postings a block of one arena with room to grow (a quarter more than
it holds at the start; a full block moves to the arena's end with twice the room); each
posting stamped with its document's version (a save bumps the version and appends the new
postings; search skips a posting whose stamp is not its document's version); each term's
document frequency kept as postings go stale or are added. It replays the same fresh
bodies (as many as the day at that scale has saves, at most 20,000) onto random articles
through it (tokenizing and counting in Python, the postings
written by a compiled function) and through ``BM25Index.add`` on a fresh copy, then ranks
the title queries again in both: the rankings must be equal. It prints µs per save for
both, the part of the compiled save spent tokenizing and counting, and the compiled
search's µs per query over the postings with the stale ones in place. Nothing compacts
the stale postings here. Every timing is the median of three. Writes the "A compiled index
(probe, not in make bench)" section of benchmarks/RESULTS.md.
"""

from __future__ import annotations

import argparse
import functools
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_day import scaled  # noqa: E402
from results_file import machine_line, write_section  # noqa: E402

from kbsim.params import DayParams  # noqa: E402
from kbsim.sim.world import KB_ID, starting_knowledge_base  # noqa: E402
from kbsim.store.tokens import tokenize  # noqa: E402

try:
    import numba
except ImportError:  # pragma: no cover - a probe's own requirement
    sys.exit("probe_compiled_search: needs numba (pip install numba); it is not a kbsim dependency")

LIMIT = 10


@numba.njit(cache=False)
def _apply_save(slot, terms, counts, old_terms, doc_stamp, arena_slots, arena_tfs, arena_stamps, arena_end,
                term_start, term_cap, fill, df):
    """One save: the document's version bumped, its old terms' frequencies down, its new
    postings appended to their terms' blocks (a full block moves to the arena's end with
    twice the room) and their terms' frequencies up. Returns False, changing nothing, when
    the arena has no room for the moves (the caller grows it and calls again)."""
    needed = 0
    for i in range(terms.size):
        t = terms[i]
        if fill[t] == term_cap[t]:
            needed += max(4, 2 * term_cap[t])
    if arena_end[0] + needed > arena_slots.size:
        return False
    stamp = doc_stamp[slot] + 1
    doc_stamp[slot] = stamp
    for i in range(old_terms.size):
        df[old_terms[i]] -= 1
    for i in range(terms.size):
        t = terms[i]
        n = fill[t]
        if n == term_cap[t]:
            start, moved = term_start[t], arena_end[0]
            for e in range(n):
                arena_slots[moved + e] = arena_slots[start + e]
                arena_tfs[moved + e] = arena_tfs[start + e]
                arena_stamps[moved + e] = arena_stamps[start + e]
            term_start[t] = moved
            term_cap[t] = max(4, 2 * n)
            arena_end[0] = moved + term_cap[t]
        at = term_start[t] + n
        arena_slots[at] = slot
        arena_tfs[at] = counts[i]
        arena_stamps[at] = stamp
        fill[t] = n + 1
        df[t] += 1
    return True


@numba.njit(cache=False)
def _rank(query_starts, query_rows, arena_slots, arena_tfs, arena_stamps, term_start, fill, doc_stamp,
          weights, doc_len, base, per_len, id_rank, limit, scores, seen, touched):
    """Top ``limit`` slots of every query (best first, ties by id rank) and how many each has,
    over term blocks of an arena (term ``t``'s postings at ``term_start[t]``, ``fill[t]`` of
    them), skipping a posting whose stamp is not its document's. ``scores``, ``seen`` and
    ``touched`` are scratch arrays of a slot each, kept between calls (``seen`` all False,
    as each query leaves it)."""
    n_queries = query_starts.size - 1
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
            for entry in range(term_start[row], term_start[row] + fill[row]):
                d = arena_slots[entry]
                if arena_stamps[entry] != doc_stamp[d]:
                    continue
                tf = arena_tfs[entry]
                contribution = weight * tf / ((tf + base) + per_len * doc_len[d])
                if seen[d]:
                    scores[d] = scores[d] + contribution
                else:
                    seen[d] = True
                    scores[d] = contribution
                    touched[n_touched] = d
                    n_touched += 1
        kept = 0
        for i in range(n_touched):
            d = touched[i]
            score, rank = scores[d], id_rank[d]
            if kept == limit and (score < top_score[kept - 1]
                                  or (score == top_score[kept - 1] and rank > top_rank[kept - 1])):
                continue
            at = kept if kept < limit else limit - 1
            while at > 0 and (top_score[at - 1] < score or (top_score[at - 1] == score and top_rank[at - 1] > rank)):
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


class MutablePostings:
    """The index's postings in the mutable layout (see the module docstring): every term's
    block in one arena of slots, counts and stamps, with what a save changes besides them
    (each document's terms and length, the total length)."""

    def __init__(self, index, arrays: dict) -> None:
        """From :func:`arrays_of` the index: each term's block copied, with room to spare."""
        self.index = index
        self.row_of = dict(arrays["row_of"])
        self.fill = arrays["fill"].copy()
        self.term_cap = self.fill + self.fill // 4 + 4  # room for a quarter more before a block moves
        self.term_start = np.zeros(self.fill.size, dtype=np.int64)
        np.cumsum(self.term_cap[:-1], out=self.term_start[1:])
        end = int(self.term_cap.sum())
        self.arena_slots = np.zeros(2 * end, dtype=np.int64)
        self.arena_tfs = np.zeros(2 * end)
        self.arena_stamps = np.zeros(2 * end, dtype=np.int64)
        # posting i of term t moves from arrays' block start to this layout's
        at = np.repeat(self.term_start - arrays["term_start"], self.fill) + np.arange(int(self.fill.sum()))
        self.arena_slots[at] = arrays["slots"]
        self.arena_tfs[at] = arrays["tfs"]
        self.arena_end = np.array([end], dtype=np.int64)
        self.df = self.fill.copy()
        self.doc_stamp = np.zeros(len(index._doc_ids), dtype=np.int64)
        self.doc_terms = [np.array([self.row_of[t] for t in terms_of or ()], dtype=np.int64)
                          for terms_of in index._doc_terms]  # fmt: skip
        self.doc_len = arrays["doc_len"].copy()
        self.total_len = index._total_len
        self.slot_of = index._slot_of

    def _new_row(self, term: str) -> int:
        """A term no document had: a new row with an empty block (the per-term arrays, kept with
        room to spare, doubled in Python when full)."""
        row = self.row_of[term] = len(self.row_of)
        if row == self.fill.size:
            self.fill, self.df, self.term_cap, self.term_start = (
                np.concatenate([a, np.zeros(a.size, dtype=a.dtype)])
                for a in (self.fill, self.df, self.term_cap, self.term_start)
            )
        self.term_start[row] = self.arena_end[0]
        return row

    def save(self, doc_id: str, title: str, content: str) -> None:
        slot = self.slot_of[doc_id]
        counts = _counts(title, content, self.index.title_weight)
        rows = list(map(self.row_of.get, counts))
        if None in rows:
            rows = [self._new_row(term) if row is None else row for term, row in zip(counts, rows, strict=True)]
        terms = np.array(rows, dtype=np.int64)
        tfs = np.fromiter(counts.values(), dtype=np.float64, count=len(counts))
        while not _apply_save(slot, terms, tfs, self.doc_terms[slot], self.doc_stamp, self.arena_slots,
                              self.arena_tfs, self.arena_stamps, self.arena_end, self.term_start, self.term_cap,
                              self.fill, self.df):  # fmt: skip
            grown = 2 * self.arena_slots.size
            self.arena_slots, self.arena_tfs, self.arena_stamps = (
                np.concatenate([a, np.zeros(grown - a.size, dtype=a.dtype)])
                for a in (self.arena_slots, self.arena_tfs, self.arena_stamps)
            )
        length = sum(counts.values())
        self.total_len += length - int(self.doc_len[slot])
        self.doc_len[slot] = length
        self.doc_terms[slot] = terms

    def rank(self, queries: list[str]) -> list[list[str]]:
        index = self.index
        k1, b = index.k1, index.b
        base, per_len = k1 * (1.0 - b), k1 * b * index._n_docs / self.total_len
        query_starts, query_rows = encoded(queries, self.row_of)
        weights = np.zeros(self.df.size)
        used = np.unique(query_rows)  # each queried term's weight as search() computes it, from its live postings
        weights[used] = [index._weight(df) for df in self.df[used].tolist()]
        best, found = _rank(query_starts, query_rows, self.arena_slots, self.arena_tfs, self.arena_stamps,
                             self.term_start, self.fill, self.doc_stamp, weights, self.doc_len, base, per_len,
                             index._id_ranks(), LIMIT, *scratch(self.doc_len.size))  # fmt: skip
        doc_ids = index._doc_ids
        return [[doc_ids[d] for d in row[:n]] for row, n in zip(best.tolist(), found.tolist(), strict=True)]


def _replay_mutable(index, arrays: dict, texts) -> tuple[float, MutablePostings]:
    """Seconds for the mutable layout's saves of each text (its build, before, not timed)."""
    postings = MutablePostings(index, arrays)
    start = time.perf_counter()
    for text in texts:
        postings.save(*text)
    return time.perf_counter() - start, postings


def arrays_of(index) -> dict:
    """The index's postings as term blocks of arrays (a row per term: its documents and
    counts, every posting stamped 0 and every document at version 0), each term's weight as
    ``search`` computes it, and the documents' lengths."""
    terms = list(index._postings)
    buckets = [index._postings[term] for term in terms]
    lengths = np.fromiter(map(len, buckets), dtype=np.int64, count=len(buckets))
    starts = np.zeros(len(buckets), dtype=np.int64)
    np.cumsum(lengths[:-1], out=starts[1:])
    total = int(lengths.sum())
    return {
        "row_of": {term: row for row, term in enumerate(terms)},
        "slots": np.fromiter((d for bucket in buckets for d in bucket), dtype=np.int64, count=total),
        "tfs": np.fromiter((tf for bucket in buckets for tf in bucket.values()), dtype=np.float64, count=total),
        "stamps": np.zeros(total, dtype=np.int64),
        "term_start": starts,
        "fill": lengths,
        "doc_stamp": np.zeros(len(index._doc_len), dtype=np.int64),
        "weights": np.array([index._weight(int(df)) for df in lengths.tolist()]),
        "doc_len": np.array(index._doc_len, dtype=np.float64),
    }


def encoded(queries, row_of):
    """Each query's distinct terms, in order, as rows (terms no document has are dropped)."""
    rows, query_starts = [], [0]
    for query in queries:
        rows += [row_of[term] for term in dict.fromkeys(tokenize(query)) if term in row_of]
        query_starts.append(len(rows))
    return np.array(query_starts, dtype=np.int64), np.array(rows, dtype=np.int64)


@functools.lru_cache(maxsize=4)
def scratch(n_docs: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The compiled loops' scratch arrays for an index of ``n_docs`` slots, made once."""
    return np.zeros(n_docs), np.zeros(n_docs, dtype=np.bool_), np.empty(n_docs, dtype=np.int64)


def compiled(index, queries, arrays: dict) -> list[list[str]]:
    """The top 10 doc ids of each query, ranked by :func:`_rank` over :func:`arrays_of`."""
    k1, b = index.k1, index.b
    base, per_len = k1 * (1.0 - b), k1 * b * index._n_docs / index._total_len
    query_starts, query_rows = encoded(queries, arrays["row_of"])
    a = arrays
    best, found = _rank(query_starts, query_rows, a["slots"], a["tfs"], a["stamps"], a["term_start"], a["fill"],
                        a["doc_stamp"], a["weights"], a["doc_len"], base, per_len, index._id_ranks(), LIMIT,
                        *scratch(a["doc_len"].size))  # fmt: skip
    doc_ids = index._doc_ids
    return [[doc_ids[d] for d in row[:n]] for row, n in zip(best.tolist(), found.tolist(), strict=True)]


def _counts(title: str, content: str, title_weight: int) -> dict[str, int]:
    """A save's term counts as ``BM25Index.add`` makes them (a title term weighs ``title_weight``)."""
    counts: dict[str, int] = {}
    get = counts.get
    for term in tokenize(content):
        counts[term] = get(term, 0) + 1
    for term in tokenize(title):
        counts[term] = get(term, 0) + title_weight
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


def measure(scale: int, n_queries: int, seed: int) -> dict:
    """Every figure of one scale (see the module docstring); exits if rankings differ."""
    starting = starting_knowledge_base(scaled(scale).corpus, seed)
    store = starting.template.copy()
    index = store._kbs[KB_ID].index
    index.search("warm", 1)  # thawed outside the timings
    rng = np.random.default_rng(seed)
    picked = rng.integers(len(starting.article_ids), size=n_queries).tolist()
    titles = [store.article_state(KB_ID, starting.article_ids[i]).title for i in picked]
    words = DayParams().questions.query_words
    questions = [" ".join(title.split()[:words]) for title in titles]
    arrays = arrays_of(index)
    compiled(index, titles[:10], arrays)  # compiles
    row = {"articles": len(starting.article_ids), "queries": n_queries}
    row["title_many_us"], many = per_query_us(index.search_many, titles, LIMIT, count=n_queries)
    row["title_compiled_us"], fast = per_query_us(compiled, index, titles, arrays, count=n_queries)
    if fast != many:
        sys.exit("probe_compiled_search: the compiled rankings of the titles differ from search_many's")
    row["question_search_us"], each = per_query_us(
        lambda: [[d for d, _ in index.search(q, LIMIT)] for q in questions], count=n_queries
    )
    row["question_compiled_us"], one_by_one = per_query_us(
        lambda: [compiled(index, [q], arrays)[0] for q in questions], count=n_queries
    )
    if one_by_one != each:
        sys.exit("probe_compiled_search: the compiled rankings of the questions differ from search's")
    start = time.perf_counter()
    arrays_of(index)
    row["layout_s"] = time.perf_counter() - start
    saves = min(DayParams().saves.count * scale, 20_000)  # the day's saves at this scale, or 20,000
    bodies = [starting.corpus.body(rng) for _ in range(saves)]
    targets = [starting.article_ids[i] for i in rng.integers(len(starting.article_ids), size=saves).tolist()]
    own = [store.article_state(KB_ID, target).title for target in targets]
    texts = list(zip(targets, own, bodies, strict=True))
    row["saves"] = saves
    weight = index.title_weight
    row["count_us"], _ = per_query_us(lambda: [_counts(title, body, weight) for _, title, body in texts], count=saves)
    row["add_us"] = statistics.median(_replay(index.copy(), texts) for _ in range(REPEATS)) / saves * 1e6
    _replay_mutable(index, arrays, texts[:10])  # compiles
    replays = [_replay_mutable(index, arrays, texts) for _ in range(REPEATS)]
    row["mutable_us"] = statistics.median(seconds for seconds, _ in replays) / saves * 1e6
    postings = replays[-1][1]
    reference = index.copy()
    _replay(reference, texts)
    row["after_many_us"], after = per_query_us(reference.search_many, titles, LIMIT, count=n_queries)
    row["after_compiled_us"], live = per_query_us(postings.rank, titles, count=n_queries)
    if live != after:
        sys.exit("probe_compiled_search: after the saves, the mutable layout's rankings differ from the index's")
    row["stale"] = 1 - int(postings.df.sum()) / int(postings.fill.sum())
    return row


SECTION = "A compiled index (probe, not in make bench)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scales", default="1,250", help="comma-separated multiples of the reference corpus")
    parser.add_argument("--queries", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    try:
        scales = [int(part) for part in args.scales.split(",")]
    except ValueError:
        parser.error(f"--scales: expected comma-separated integers, got {args.scales!r}")
    if min(scales) < 1 or args.queries < 1:
        parser.error("--scales and --queries: expected at least 1")
    rows = [measure(scale, args.queries, args.seed) for scale in scales]
    command = f"python benchmarks/probe_compiled_search.py --scales {args.scales} --queries {args.queries}"
    lines = [
        f"Command: `{command}` (needs numba {numba.__version__}, installed beside kbsim for the probe; kbsim does "
        f"not depend on it). {machine_line()}",
        "",
        "A design not built, measured: the index's searches compiled with numba over postings in arrays, and",
        "mutable compiled postings for the saves (see the script's docstring). Every compiled ranking was",
        f"checked equal to kbsim's own before any time was kept; medians of {REPEATS}; top {LIMIT} of each query.",
        "",
        "| | " + " | ".join(f"{row['articles']:,} articles" for row in rows) + " |",
        "| --- |" + " ---: |" * len(rows),
    ]
    table = [
        ("title queries in one batch: `search_many`, µs a query", "title_many_us"),
        ("... compiled", "title_compiled_us"),
        (f"a question's {DayParams().questions.query_words} title words: `search`, µs a query", "question_search_us"),
        ("... compiled, one call a query", "question_compiled_us"),
        ("a save: `BM25Index.add`, µs", "add_us"),
        ("... mutable compiled postings, µs", "mutable_us"),
        ("... of which tokenizing and counting its terms (Python), µs", "count_us"),
        ("title queries after the saves: `search_many`, µs a query", "after_many_us"),
        ("... compiled over the saved postings, µs a query", "after_compiled_us"),
    ]
    for label, key in table:
        lines.append(f"| {label} | " + " | ".join(f"{row[key]:.1f}" for row in rows) + " |")
    lines.append("| share of the compiled postings stale after the saves | "
                 + " | ".join(f"{row['stale']:.0%}" for row in rows) + " |")
    layouts = " | ".join(f"{row['layout_s']:.2f}" for row in rows)
    lines.append(f"| laying the postings out as arrays, s | {layouts} |")
    saves = ", ".join(f"{row['saves']:,}" for row in rows)
    lines += ["", f"{rows[0]['queries']:,} queries of each kind at each scale; saves: {saves} (the day's saves at that"
              " scale, at most 20,000)."]
    write_section(SECTION, "\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
