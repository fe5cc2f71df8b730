"""Probe of a design not built: re-indexing a save with postings found by vocabulary index.

Usage: python benchmarks/probe_reindex_by_word.py [--scale 250] [--saves 20000]

Not part of ``make bench`` and not a kbsim code path: it measures how much of a person's
save the index's string lookups cost, to support (or not) the next design step of the
speed work. On the reference corpus at ``--scale`` (400 articles per unit), filled as the
day's starting index is (``BM25Index.fill``), it replays the same ``--saves`` fresh bodies
onto random articles two ways, each in a fresh copy of the index, and prints µs per save:

- by term string: ``BM25Index.add`` itself (it tokenizes the body and the title, counts
  their terms, drops the postings of the terms the article no longer has and sets the
  others, each term's postings found in the dict of every term);
- by vocabulary index: the same counts from the words' indices as the corpus drew them,
  each term's postings dict found in a list by index, an article's old terms kept as
  indices too.

Both leave the same postings (checked at the end); the second skips tokenizing and every
lookup in the dict of terms.
"""

from __future__ import annotations

import argparse
import time
from sys import intern

import numpy as np

from kbsim.params import CorpusParams
from kbsim.sim.corpus import Corpus
from kbsim.store.bm25 import BM25Index


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=int, default=250)
    parser.add_argument("--saves", type=int, default=20_000)
    args = parser.parse_args()
    if args.scale < 1 or args.saves < 1:
        parser.error("--scale and --saves: expected at least 1")
    corpus = Corpus.build(CorpusParams(articles=400 * args.scale))
    rng = np.random.default_rng(1)
    pairs, body_words, title_words = corpus.articles_and_words(rng)
    vocabulary = corpus.vocabulary
    template = BM25Index()
    template.fill([f"art-{i:06d}" for i in range(len(pairs))], vocabulary, body_words, title_words)
    size = len(vocabulary)
    # the same string may stand at two indices: each index's term is the first index of its string
    first: dict[str, int] = {}
    canonical = np.array([first.setdefault(word, i) for i, word in enumerate(vocabulary)])
    length = corpus.params.body_words
    picks = [  # bodies drawn as Corpus.body draws them, kept as indices
        canonical[np.minimum(np.searchsorted(corpus.body_weights, rng.random(length), side="right"), size - 1)]
        for _ in range(args.saves)
    ]
    bodies = [" ".join(map(vocabulary.__getitem__, p.tolist())) + "." for p in picks]
    slots = rng.integers(len(pairs), size=args.saves).tolist()
    titles = [title for title, _ in pairs]
    title_picks = [canonical[row].tolist() for row in title_words]
    by_string, after_string = replay_by_string(template.copy(), slots, bodies, titles)
    by_index, after_index = replay_by_index(template.copy(), vocabulary, slots, picks, title_picks)
    assert after_string == after_index, "the two replays left different postings"
    print(f"{len(pairs):,} articles, {args.saves:,} saves: {by_string:.1f} µs a save by term string, "
          f"{by_index:.1f} µs by vocabulary index")


def replay_by_string(index: BM25Index, slots: list[int], bodies: list[str], titles: list[str]) -> tuple[float, dict]:
    """The saves through :meth:`BM25Index.add` itself."""
    index.search("warm", 1)  # thaws a frozen index outside the timing
    doc_ids = index._doc_ids
    start = time.perf_counter()
    for slot, body in zip(slots, bodies, strict=True):
        index.add(doc_ids[slot], titles[slot], body)
    return (time.perf_counter() - start) / len(slots) * 1e6, index._postings


def replay_by_index(index: BM25Index, vocabulary: list[str], slots: list[int], picks: list,
                    title_picks: list[list[int]]) -> tuple[float, dict]:
    """The same saves with each term's postings found by vocabulary index."""
    index.search("warm", 1)
    postings, doc_terms = index._postings, index._doc_terms
    weight = index.title_weight
    terms = [intern(word) for word in vocabulary]
    index_of: dict[str, int] = {}
    for i, term in enumerate(terms):
        index_of.setdefault(term, i)
    # set up outside the timing: each term's postings by index, each article's terms as indices
    buckets = [postings.get(term) for term in terms]
    doc_words = [None if t is None else tuple(index_of[term] for term in t) for t in doc_terms]
    start = time.perf_counter()
    for slot, words in zip(slots, picks, strict=True):
        counts: dict[int, int] = {}
        get = counts.get
        for word in words.tolist():
            counts[word] = get(word, 0) + 1
        for word in title_picks[slot]:
            counts[word] = get(word, 0) + weight
        for word in [word for word in doc_words[slot] if word not in counts]:
            bucket = buckets[word]
            del bucket[slot]
            if not bucket:
                del postings[terms[word]]
                buckets[word] = None
        for word, tf in counts.items():
            bucket = buckets[word]
            if bucket is None:
                bucket = buckets[word] = postings[terms[word]] = {}
            bucket[slot] = tf
        doc_words[slot] = tuple(counts)
    return (time.perf_counter() - start) / len(slots) * 1e6, postings


if __name__ == "__main__":
    main()
