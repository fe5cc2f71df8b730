"""The BM25 index against a brute-force scan of every document, common words included."""

from __future__ import annotations

import math
import random
import re
from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kbsim.store.bm25 import BM25Index, tokenize


def brute_force(docs: dict[str, tuple[str, str]], query: str, limit: int, k1=1.2, b=0.75, title_weight=3):
    """Okapi BM25 by scanning every document, summing terms in query order."""
    counts = {}
    for doc_id, (title, content) in docs.items():
        c = Counter(tokenize(content))
        for term in tokenize(title):
            c[term] += title_weight
        counts[doc_id] = c
    n = len(docs)
    total = sum(sum(c.values()) for c in counts.values())
    base, per_len = k1 * (1 - b), k1 * b * n / total
    scores = {}
    for term in dict.fromkeys(tokenize(query)):
        df = sum(1 for c in counts.values() if term in c)
        if not df:
            continue
        weight = math.log(1.0 + (n - df + 0.5) / (df + 0.5)) * (k1 + 1.0)
        for doc_id, c in counts.items():
            if term in c:
                tf = c[term]
                part = weight * tf / (tf + base + per_len * sum(c.values()))
                scores[doc_id] = part if doc_id not in scores else scores[doc_id] + part
    return sorted(((d, s) for d, s in scores.items()), key=lambda x: (-x[1], x[0]))[:limit]


@pytest.mark.parametrize("seed", [1, 2])
def test_search_equals_a_full_scan_even_when_long_postings_are_pruned(seed):
    rng = random.Random(seed)
    common = ["alpha", "beta", "gamma"]  # in nearly every document: postings far over the pruning length
    rare = [f"w{i}" for i in range(400)]
    docs = {}
    for i in range(900):
        title = " ".join(rng.sample(rare, 3) + rng.sample(common, 1))
        body = " ".join(rng.choices(rare, k=20) + rng.choices(common, k=rng.randint(1, 6)))
        docs[f"art-{i:06d}"] = (title, body)
    index = BM25Index()
    for doc_id, (title, body) in docs.items():
        index.add(doc_id, title, body)
    # Unpublish and re-save a few so slots are reused and lengths change.
    for doc_id in rng.sample(sorted(docs), 50):
        index.remove(doc_id)
        del docs[doc_id]
    for doc_id in rng.sample(sorted(docs), 50):
        docs[doc_id] = (docs[doc_id][0], docs[doc_id][1] + " alpha alpha")
        index.add(doc_id, *docs[doc_id])
    # Re-save others with a new body and title: some terms kept (updated in place), some dropped.
    for doc_id in rng.sample(sorted(docs), 80):
        title = " ".join(rng.sample(rare, 3))
        body = " ".join(rng.choices(rare, k=rng.randint(5, 30)) + rng.choices(common, k=rng.randint(0, 4)))
        docs[doc_id] = (title, body)
        index.add(doc_id, title, body)
    for _ in range(120):
        query = " ".join(rng.sample(rare, rng.randint(1, 3)) + rng.sample(common, rng.randint(0, 3)))
        limit = rng.choice([1, 2, 10, 20])
        assert index.search(query, limit) == brute_force(docs, query, limit), query
    assert len(index) == len(docs)


def test_ties_at_the_cut_are_broken_by_id():
    """Documents scoring exactly alike straddle the limit: the lowest ids make it."""
    index = BM25Index()
    docs = {f"art-{i:06d}": ("same words", "alpha beta") for i in (7, 3, 12, 1, 9, 5, 30, 2)}
    docs["art-000004"] = ("same words words", "alpha beta")  # scores higher: ranked first
    for doc_id, (title, body) in docs.items():
        index.add(doc_id, title, body)
    top = index.search("words", 4)
    assert [doc_id for doc_id, _ in top] == ["art-000004", "art-000001", "art-000002", "art-000003"]
    assert top == brute_force(docs, "words", 4)
    assert top[1][1] == top[2][1] == top[3][1] < top[0][1]


@given(st.text() | st.text(alphabet=st.characters(max_codepoint=127)))
def test_tokenize_is_the_runs_of_lowercase_letters_and_digits(text):
    """The fast ASCII path and the regex path agree with the definition on any text."""
    assert tokenize(text) == re.findall(r"[a-z0-9]+", text.lower())
