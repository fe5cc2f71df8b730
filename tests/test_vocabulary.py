"""A packed vocabulary (its words as rows of one bytes array) holds what the list of its words
holds, and every use of it gives what the list gives: texts, lengths, checks, term numbers,
an index filled from it, a store's articles and searches, and a day's tables."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import numpy as np
import pytest

import kbsim.sim.corpus as corpus_module
import kbsim.sim.world as world
from kbsim.params import DayParams
from kbsim.sim import run_day
from kbsim.sim.corpus import Corpus, make_vocabulary, packed_vocabulary
from kbsim.store import MemoryStore, ToolError
from kbsim.store.arena import ArenaIndex
from kbsim.store.vocabulary import PackedVocabulary, VocabularyTermIds, VocabularyTerms
from kbsim.store.written import WrittenArticles, check_vocabulary, content_text, snippet_text, title_text, word_lengths

ROOT = Path(__file__).resolve().parents[1]

WORDS = make_vocabulary(20_000)  # two-syllable words, some of them twice, then three
PACKED = packed_vocabulary(len(WORDS))


def test_a_packed_vocabulary_reads_as_the_list_of_its_words():
    assert len(PACKED) == len(WORDS)
    assert list(PACKED) == WORDS
    at = (0, 118, 119, 19_999, -1, -20_000)
    assert [PACKED[i] for i in at] == [WORDS[i] for i in at]
    assert PACKED[5:40:7] == WORDS[5:40:7]
    with pytest.raises(IndexError):
        PACKED[20_000]
    with pytest.raises(IndexError):
        PACKED[-20_001]
    assert PACKED.lengths().tolist() == [len(word) for word in WORDS]
    assert word_lengths(PACKED).tolist() == word_lengths(WORDS).tolist()
    assert list(pickle.loads(pickle.dumps(PACKED))) == WORDS


def test_texts_written_from_a_packed_vocabulary_are_the_lists():
    rng = np.random.default_rng(3)
    for n in (0, 1, 4, 31, 32, 33, 60):
        words = rng.integers(len(WORDS), size=n).astype(np.int32)
        assert content_text(PACKED, words) == content_text(WORDS, words.tolist())
        assert content_text(PACKED, words.tolist()) == content_text(WORDS, words.tolist())
        assert title_text(PACKED, words) == title_text(WORDS, words.tolist())
        assert snippet_text(PACKED, words) == snippet_text(WORDS, words)
    titles = rng.integers(len(WORDS), size=(300, 4)).astype(np.int32)
    bodies = rng.integers(len(WORDS), size=(300, 9)).astype(np.int32)
    packed, listed = WrittenArticles(PACKED, titles, bodies), WrittenArticles(WORDS, titles, bodies)
    assert packed.titles() == listed.titles()
    assert [packed.content_of(i) for i in range(300)] == [listed.content_of(i) for i in range(300)]
    assert packed.content_lengths().tolist() == listed.content_lengths().tolist()


def test_a_word_is_found_at_its_first_index_and_numbered_as_a_dict_numbers_it():
    first: dict[str, int] = {}
    for i, word in enumerate(WORDS):
        first.setdefault(word, i)
    assert len(first) < len(WORDS)  # the vocabulary repeats some words
    assert all(PACKED.find(word) == i for word, i in first.items())
    for absent in ("", "zzzzzzzzzz", "Boba", "bo ba", "é", "x" * 100):
        assert PACKED.find(absent) == -1
    number: dict[str, int] = {}
    numbers = [number.setdefault(word, len(number)) for word in WORDS]
    canonical, firsts = PACKED.first_numbers()
    assert canonical.tolist() == numbers
    assert firsts.tolist() == list(first.values())
    ids, terms = VocabularyTermIds(PACKED, canonical), VocabularyTerms(PACKED, firsts)
    assert all(ids.get(word) == n for word, n in number.items()) and ids.get("xq9") is None
    assert list(terms) == list(number) and len(terms) == len(number)
    # terms set after the vocabulary's: numbered on, and a copy's own
    twin_ids, twin_terms = ids.copy(), terms.copy()
    twin_ids["xq9"] = len(twin_terms)
    twin_terms.append("xq9")
    assert twin_ids["xq9"] == len(number) and twin_terms[-1] == "xq9" and "xq9" in twin_ids
    assert "xq9" not in ids and len(terms) == len(number)
    with pytest.raises(ValueError):
        twin_ids[WORDS[0]] = 5  # a vocabulary word has its number


def test_a_packed_vocabulary_is_checked_as_a_list_is():
    check_vocabulary(PACKED)
    for bad in (["ok", "Up"], ["ok", "a-b"], ["ok", ""]):
        packed = PackedVocabulary.from_words(bad, 8)
        with pytest.raises(ToolError, match="vocabulary"):
            check_vocabulary(packed)
        with pytest.raises(ToolError, match="vocabulary"):
            check_vocabulary(bad)
    with pytest.raises(ValueError):
        PackedVocabulary.from_words(["fine", "two words"], 16)
    with pytest.raises(ValueError):
        PackedVocabulary.from_words(["toolong"], 7)  # a row holds the word and a space


def test_an_index_filled_from_a_packed_vocabulary_is_the_lists():
    words = make_vocabulary(3_000)  # some words twice
    packed_words = packed_vocabulary(len(words))
    rng = np.random.default_rng(5)
    n = 600
    titles = rng.integers(len(words), size=(n, 4)).astype(np.int32)
    bodies = rng.integers(len(words) // 10, size=(n, 30)).astype(np.int32)
    saved = [rng.integers(len(words), size=25) for _ in range(40)]
    ids = [f"art-{i:06d}" for i in range(1, n + 1)]
    packed, listed = ArenaIndex(), ArenaIndex()
    packed.fill(ids, packed_words, bodies, titles)
    listed.fill(ids, words, bodies, titles)
    assert packed.postings() == listed.postings()
    queries = [title_text(words, row) for row in titles[:100].tolist()] + ["Never seen words", words[7]]
    assert [packed.search(q, 10) for q in queries] == [listed.search(q, 10) for q in queries]
    # a day's copy and its saves: from words (titles with new terms), from text, a new document
    packed, listed = packed.copy(), listed.copy()
    for index, vocabulary in ((packed, packed_words), (listed, words)):
        for k, new in enumerate(saved):
            index.add_words(ids[k * 7], f"Fresh{k} {words[k]} title", vocabulary, new)
        index.add("art-999999", "A zzz newterm", f"{words[3]} newterm {words[2_000]}")
    assert packed.postings() == listed.postings()
    assert packed.document_terms("art-999999") == listed.document_terms("art-999999")
    queries += ["fresh3 title", "newterm zzz"]
    assert [packed.search(q, 10) for q in queries] == [listed.search(q, 10) for q in queries]
    assert packed.search_many_flat(queries, 5) == listed.search_many_flat(queries, 5)


def test_a_store_from_a_packed_vocabulary_answers_as_from_the_list():
    corpus = Corpus.build(DayParams(corpus={"articles": 1_200}).corpus)
    packed_corpus = Corpus(packed_vocabulary(len(corpus.vocabulary)), corpus.body_weights, corpus.params)
    assert list(packed_corpus.vocabulary) == list(corpus.vocabulary)
    stores = []
    for one in (corpus, packed_corpus):
        titles, bodies = one.article_words(np.random.default_rng(9))
        store = MemoryStore()
        ids = store.create_knowledge_base_written("kb", WrittenArticles(one.vocabulary, titles, bodies))
        day = store.copy()
        rng = np.random.default_rng(11)
        for k in range(30):
            day.save_article_words("kb", ids[k * 13], at=1.0 + k, vocabulary=one.vocabulary,
                                   words=one.rewrite_words(rng))
        stores.append((day, ids))
    (packed, ids), (listed, _) = stores[1], stores[0]
    for article_id in ids[:60:3]:
        assert packed.tool_read("kb", article_id) == listed.tool_read("kb", article_id)
    queries = [listed.tool_read("kb", article_id)["title"] for article_id in ids[:40]]
    for query in queries:
        assert packed.tool_search("kb", query, 10) == listed.tool_search("kb", query, 10)


def test_the_scaled_fingerprint_day_is_unchanged_with_its_vocabulary_packed(monkeypatch):
    """The 10x day of benchmarks/fingerprint_days.py, its vocabulary (16,000 words) packed as a
    1,000,000-article day's is: its tables hash as recorded."""
    import sys

    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        from fingerprint_days import days, table_digest
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    recorded = json.loads((ROOT / "benchmarks" / "fingerprints.json").read_text())
    name, params, seed = next(day for day in days() if day[0] == "scale=10x seed=1")
    monkeypatch.setattr(corpus_module, "PACKED_VOCABULARY_FROM", 0)
    world._synthetic_knowledge_base.cache_clear()  # a template made with the list is cached by params
    try:
        assert isinstance(world.starting_knowledge_base(params.corpus, seed).corpus.vocabulary, PackedVocabulary)
        assert table_digest(run_day(params, seed)) == recorded[name]
    finally:
        world._synthetic_knowledge_base.cache_clear()
