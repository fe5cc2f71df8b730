"""The arena index held to the plain reference, :class:`BM25Index`, call for call.

Random indexes built by random saves, re-saves and removals (ties of identical documents,
ids that do not rise with their slots, non-ASCII and punctuation, long queries), their
copies changed independently, first fills from words and from texts, and whole days on
each index: every ranking, score, count and table must be the reference's exactly. The
arena's thresholds (the log's size, the loop's, the pruning's, a batch's, compaction's) are
set low and high so that every path is taken.
"""

from __future__ import annotations

import contextlib
import random

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kbsim.store.arena as arena
from kbsim.params import DayParams
from kbsim.sim import run_day
from kbsim.store import MemoryStore
from kbsim.store.arena import ArenaIndex
from kbsim.store.bm25 import BM25Index

WORDS = [f"w{i}" for i in range(40)] + ["alpha", "beta", "gamma", "naïve", "ÉTÉ", "x9"]
#: Words a content is written from by add_words (a word twice; some no text above has).
VOCABULARY = [f"w{i}" for i in range(30, 60)] + ["alpha", "w31", "x9"]
COMMON = ["alpha", "beta", "gamma"]
LIMITS = (1, 3, 10, 20)

#: (log cells, loop cells, long postings, batch term cells, batch cells, compaction floor)
SETTINGS = [
    (
        arena._LOG_CELLS, arena._LOOP_CELLS, arena._LONG_POSTINGS,
        arena._BATCH_TERM_CELLS, arena._BATCH_CELLS, arena._COMPACT_MIN,
    ),
    (1, 0, 3, 4, 16, 0),  # every save merged, numpy scoring, prune and rank alone early, tiny batches
    (16, 10**9, 10**9, 10**9, 10**9, 64),  # the scoring loop always, never pruned, one batch
    (64, 8, 6, 10**9, 40, 0),
]


@contextlib.contextmanager
def thresholds(log, loop, long, term_cells, batch_cells, compact):
    names = ("_LOG_CELLS", "_LOOP_CELLS", "_LONG_POSTINGS", "_BATCH_TERM_CELLS", "_BATCH_CELLS", "_COMPACT_MIN")
    saved = [getattr(arena, name) for name in names]
    try:
        for name, value in zip(names, (log, loop, long, term_cells, batch_cells, compact), strict=True):
            setattr(arena, name, value)
        yield
    finally:
        for name, value in zip(names, saved, strict=True):
            setattr(arena, name, value)


def text(rng: random.Random, words: int) -> str:
    body = rng.choices(COMMON, k=rng.randint(0, 5)) + rng.choices(WORDS, k=words)
    return rng.choice([" ", ", ", " ... "]).join(body) + rng.choice(["", ".", "!"])


def plain_postings(index: BM25Index) -> dict:
    return {term: {index._doc_ids[slot]: tf for slot, tf in bucket.items()} for term, bucket in index._postings.items()}


def random_queries(rng: random.Random, titles: list[str], count: int) -> list[str]:
    queries = []
    for _ in range(count):
        kind = rng.random()
        if kind < 0.5 and titles:
            queries.append(rng.choice(titles))
        elif kind < 0.85:
            queries.append(" ".join(rng.choices(WORDS + COMMON * 4, k=rng.randint(1, 16))))  # long queries too
        else:
            queries.append(rng.choice(["zz qq", "", "twin", "Gamma, TWIN!", "naïve été", "alpha alpha beta"]))
    return queries


def assert_same(arena_index: ArenaIndex, plain: BM25Index, queries: list[str]) -> None:
    """The two indexes hold the same postings and answer every query alike."""
    assert len(arena_index) == len(plain)
    assert arena_index.total_length == plain._total_len
    assert arena_index.postings() == plain_postings(plain)
    for doc_id in plain._slot_of:
        assert (doc_id in arena_index) == (doc_id in plain)
    for limit in LIMITS:
        for query in queries:
            assert arena_index.search(query, limit) == plain.search(query, limit), (query, limit)
        assert arena_index.search_many(queries, limit) == plain.search_many(queries, limit), limit
        assert arena_index.search_many_flat(queries, limit) == plain.search_many_flat(queries, limit), limit


def random_changes(rng: random.Random, indexes, steps: int, titles: list[str]) -> None:
    """``steps`` saves, re-saves and removals, each made to every index of ``indexes`` alike."""
    ids: list[str] = []
    for step in range(steps):
        roll = rng.random()
        if roll < 0.55 or not ids:
            # new documents: ids rising, or drawn at random (so slots and id order differ)
            doc_id = f"art-{rng.randrange(10**6):06d}" if rng.random() < 0.3 else f"art-{900_000 + step:06d}"
            title = " ".join(rng.sample(WORDS + COMMON, rng.randint(1, 5)))
            change = ("add", doc_id, title, text(rng, rng.randint(0, 30)))
            ids.append(doc_id)
            titles.append(title)
        elif roll < 0.7:
            change = ("remove", rng.choice(ids + ["never-added"]))
        elif roll < 0.8:  # identical documents: exact ties
            change = ("add", rng.choice(ids), "gamma twin", "beta beta twin")
        elif roll < 0.88:  # a content written from vocabulary words (some new to the index)
            words = np.array([rng.randrange(len(VOCABULARY)) for _ in range(rng.randint(0, 20))], dtype=np.int32)
            change = ("add_words", rng.choice(ids), rng.choice(titles), VOCABULARY, words)
        else:
            change = ("add", rng.choice(ids), rng.choice(titles), text(rng, rng.randint(1, 25)))
        for index in indexes:
            getattr(index, change[0])(*change[1:])


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 10**6),
    steps=st.sampled_from([0, 1, 5, 40, 200, 600]),
    which=st.sampled_from(range(len(SETTINGS))),
)
def test_random_indexes_rank_exactly_as_the_plain_index(seed, steps, which):
    rng = random.Random(seed)
    with thresholds(*SETTINGS[which]):
        titles: list[str] = []
        fast, plain = ArenaIndex(), BM25Index()
        random_changes(rng, (fast, plain), steps, titles)
        assert_same(fast, plain, random_queries(rng, titles, 40))


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10**6), which=st.sampled_from(range(len(SETTINGS))))
def test_copies_change_independently_and_rank_as_the_plain_index(seed, which):
    """An index, its copy and a copy of the copy, each changed on its own (the changes
    interleaved), against plain indexes given the same changes: no state is shared."""
    rng = random.Random(seed)
    with thresholds(*SETTINGS[which]):
        titles: list[str] = []
        fast, plain = ArenaIndex(), BM25Index()
        random_changes(rng, (fast, plain), rng.choice([20, 150]), titles)
        pairs = [(fast, plain), (fast.copy(), plain.copy())]
        pairs.append((pairs[1][0].copy(), pairs[1][1].copy()))
        for _ in range(12):
            random_changes(rng, rng.choice(pairs), rng.randint(1, 20), titles)
        queries = random_queries(rng, titles, 25)
        for fast_index, plain_index in pairs:
            assert_same(fast_index, plain_index, queries)


def plain_of(docs) -> BM25Index:
    plain = BM25Index()
    for doc in docs:
        plain.add(*doc)
    return plain


def assert_same_terms(index: ArenaIndex, plain: BM25Index) -> None:
    """Each indexed document's terms and counts are the plain index's."""
    postings = plain_postings(plain)
    for doc_id, slot in plain._slot_of.items():
        terms = plain._doc_terms[slot]
        expected = None if terms is None else {term: postings[term][doc_id] for term in terms}
        assert index.document_terms(doc_id) == expected, doc_id


@pytest.mark.parametrize("block_tokens", [1, 7, arena._BLOCK_TOKENS])
@pytest.mark.parametrize("which", range(len(SETTINGS)))
@pytest.mark.parametrize("seed", range(4))
def test_first_fills_hold_what_adding_one_by_one_holds(monkeypatch, seed, which, block_tokens):
    """fill() from word indices (a vocabulary with a word twice) and fill_texts() from texts
    (an empty content and an empty title among them; blocks of a token or a few), then
    changed and searched, against the plain index given the documents one by one."""
    rng = np.random.default_rng(seed)
    vocabulary = [f"w{i}" for i in range(int(rng.integers(3, 40)))] + ["w1", "w2", "zz9"]
    n, body, title = int(rng.integers(0, 80)), int(rng.integers(1, 30)), int(rng.integers(1, 5))
    content = rng.integers(len(vocabulary), size=(n, body)) // rng.integers(1, 4)  # skewed: repeats
    titles = rng.integers(len(vocabulary), size=(n, title))
    ids = [f"art-{i:06d}" for i in range(n)]
    written = [(ids[i], " ".join(vocabulary[w] for w in titles[i]), " ".join(vocabulary[w] for w in content[i]) + ".")
               for i in range(n)]
    texts = list(written)
    if n > 2:
        texts[1], texts[2] = (ids[1], texts[1][1], ""), (ids[2], "", texts[2][2] + " Naïve ÉTÉ, x-9!")
    monkeypatch.setattr(arena, "_BLOCK_TOKENS", block_tokens)
    queries = [" ".join(rng.choice(vocabulary, size=3).tolist()) for _ in range(10)] + [t for _, t, _ in texts[:5]]
    with thresholds(*SETTINGS[which]):
        from_texts, plain_texts = ArenaIndex(), plain_of(texts)
        from_texts.fill_texts(texts)
        from_words, plain_words = ArenaIndex(), plain_of(written)
        from_words.fill(ids, vocabulary, content, titles)
        for index, plain in ((from_texts, plain_texts), (from_words, plain_words)):
            assert_same(index, plain, queries)
            assert_same_terms(index, plain)
            random_changes(random.Random(seed), (index, plain), 60, [])
            assert_same(index, plain, queries)
            assert_same_terms(index, plain)
        with pytest.raises(ValueError, match="empty index"):
            from_words.fill(ids, vocabulary, content, titles)
        if n > 1:
            with pytest.raises(ValueError, match="repeats"):
                ArenaIndex().fill([ids[0], *ids[:-1]], vocabulary, content, titles)
            with pytest.raises(ValueError, match="repeats"):
                ArenaIndex().fill_texts([texts[0], *texts[:-1]])
            with pytest.raises(ValueError, match="outside the vocabulary"):
                ArenaIndex().fill(ids, vocabulary, content + len(vocabulary), titles)


def test_ties_are_broken_by_id_whatever_the_slots():
    """Documents scoring exactly alike straddle the limit, added in an order unlike their ids'."""
    fast, plain = ArenaIndex(), BM25Index()
    for index in (fast, plain):
        for i in (7, 3, 12, 1, 9, 5, 30, 2):
            index.add(f"art-{i:06d}", "same words", "alpha beta")
        index.add("art-000004", "same words words", "alpha beta")
    queries = ["words", "alpha", "same alpha"]
    for limit in (1, 2, 4, 9):
        assert fast.search("words", limit) == plain.search("words", limit)
        assert fast.search_many(queries, limit) == plain.search_many(queries, limit)
    assert [doc_id for doc_id, _ in fast.search("words", 4)] == ["art-000004", "art-000001", "art-000002", "art-000003"]


def test_an_empty_index_answers_as_the_plain_one():
    fast, plain = ArenaIndex(), BM25Index()
    assert fast.search("alpha", 5) == plain.search("alpha", 5) == []
    assert fast.search_many(["alpha beta"], 5) == [[]] and fast.search_many([], 5) == []
    fast.add("a", "alpha", "beta")
    fast.remove("a")
    fast.remove("never")
    assert len(fast) == 0 and "a" not in fast and fast.search("alpha", 5) == [] and fast.postings() == {}


#: Days of different shapes (edits, retention, replaced articles, the sample corpus from files,
#: a larger KB, several agents over a lossy transport, the German sample through its Unicode
#: analyzer) on the two indexes.
DAYS = [
    (1, {"edit": {"delay_s": 60}}),
    (2, {"saves": {"popularity": "uniform"}, "checks": {"title_search_limit": 1, "interval_s": 900}}),
    (3, {"saves": {"replace_unpublished": True, "count": 900}}),
    (4, {"corpus": {"source": "kbsim:sample"}, "edit": {"delay_s": 600}}),
    (5, {"event_retention_s": 1800, "corpus": {"articles": 1200}, "saves": {"count": 1500}}),
    (6, {"agents": {"count": 3}, "transport": {"loss_rate": 0.2}, "edit": {"delay_s": 60},
         "citation": {"carries_version": False}, "events": {"log_unpublish": False},
         "saves": {"replace_unpublished": True}}),
    (7, {"corpus": {"source": "kbsim:sample-de"}, "edit": {"delay_s": 600}}),
]


@pytest.mark.parametrize("seed, overrides", DAYS)
def test_a_day_on_the_arena_gives_the_tables_of_a_day_on_the_plain_index(seed, overrides):
    """The day's store built afresh on each index (every article published at time 0, as a
    day's store factory does), and the default day (a copy of the cached template): every
    table is identical."""
    params = DayParams.model_validate(overrides)
    default = run_day(params, seed)
    for index in (BM25Index, ArenaIndex):
        tables = run_day(params, seed, store=lambda retention, index=index: MemoryStore(retention, index=index))
        assert tables.keys() == default.keys()
        for name, frame in default.items():
            pd.testing.assert_frame_equal(tables[name], frame, check_exact=True)


def test_a_unicode_analyzer_ranks_as_the_plain_index_with_it():
    """The arena tokenizes documents and queries through its analyzer, as BM25Index does."""
    from kbsim.store.analyzer import analyzer_for

    analyzer = analyzer_for("unicode", "de")
    fast, plain = ArenaIndex(analyzer=analyzer), BM25Index(analyzer=analyzer)
    docs = [("a", "Häuser und Straßen", "Die Straße führt zu den Häusern"), ("b", "Drucker", "Der Drucker druckt"),
            ("c", "東京の天気", "東京は晴れ"), ("d", "STRASSE", "strasse")]
    for index in (fast, plain):
        for doc in docs:
            index.add(*doc)
    queries = ["Straße", "häuser", "東京", "drucken", "und"]
    for query in queries:
        assert fast.search(query, 5) == plain.search(query, 5)
    assert fast.search_many(queries, 3) == plain.search_many(queries, 3)
    assert fast.copy().analyzer is analyzer and fast.postings() == plain_postings(plain)
    assert "strass" in fast.postings()  # stemmed and folded terms, not the ASCII ones


def test_a_save_of_words_under_another_analyzer_is_the_save_of_its_text():
    """Words are counted as their own terms only under the ASCII analyzer; an index with a
    stemming one indexes the written text instead, as BM25Index does."""
    from kbsim.store.analyzer import analyzer_for
    from kbsim.store.written import content_text

    analyzer = analyzer_for("unicode", "en")
    vocabulary = ["running", "runs", "the", "printers", "printing"]
    words = np.array([0, 1, 2, 3, 4, 0], dtype=np.int32)
    by_words, by_text, plain = (ArenaIndex(analyzer=analyzer), ArenaIndex(analyzer=analyzer),
                                BM25Index(analyzer=analyzer))
    by_words.add("a", "Printer", "old")
    by_text.add("a", "Printer", "old")
    plain.add("a", "Printer", "old")
    by_words.add_words("a", "Printers", vocabulary, words)
    by_text.add("a", "Printers", content_text(vocabulary, words.tolist()))
    plain.add_words("a", "Printers", vocabulary, words)
    assert by_words.document_terms("a") == by_text.document_terms("a") == {"run": 3, "printer": 4, "print": 1}
    assert by_words.search("run printing", 3) == plain.search("run printing", 3)


def test_a_first_fill_of_texts_goes_through_the_analyzer():
    """fill_texts under a stemming analyzer holds what adding each text does."""
    from kbsim.store.analyzer import analyzer_for

    analyzer = analyzer_for("unicode", "de")
    docs = [("x-1", "Häuser bauen", "Die Häuser werden gebaut.\nStraßen auch."),
            ("x-0", "東京", "東京の天気"), ("x-2", "Leer", ""), ("x-3", "Straße", "STRASSE straße Strasse")]
    filled, added = ArenaIndex(analyzer=analyzer), ArenaIndex(analyzer=analyzer)
    filled.fill_texts(docs)
    for doc in docs:
        added.add(*doc)
    assert filled.postings() == added.postings() and filled.total_length == added.total_length
    for query in ("haus", "Straße", "東京", "bauen gebaut"):
        assert filled.search(query, 4) == added.search(query, 4)
@pytest.mark.parametrize("seed", range(3))
def test_copies_sharing_forward_cells_re_save_and_compact_them_apart(seed):
    """A filled index and copies of it (a copy of a copy too) each re-saved many times, longer
    contents and shorter ones (written in place of the last ones when they fit), until their
    forward cells are laid out afresh: each holds what a plain index given its saves holds."""
    rng = random.Random(seed)
    docs = [(f"art-{i:06d}", " ".join(rng.sample(WORDS, 3)), text(rng, rng.randint(0, 30))) for i in range(60)]
    fast = ArenaIndex()
    fast.fill_texts(docs)
    pairs = [(fast, plain_of(docs))]
    pairs.append((pairs[0][0].copy(), pairs[0][1].copy()))
    pairs.append((pairs[1][0].copy(), pairs[1][1].copy()))
    for step in range(400):
        index, plain = pairs[step % 3]
        doc_id = rng.choice(docs)[0]
        change = (doc_id, rng.choice(docs)[1], text(rng, rng.choice([1, 5, 40])))
        index.add(*change)
        plain.add(*change)
    queries = random_queries(rng, [title for _, title, _ in docs], 20)
    for index, plain in pairs:
        assert_same(index, plain, queries)
        assert_same_terms(index, plain)


def base_bytes(index: ArenaIndex) -> list[bytes]:
    return [index._base_slot.tobytes(), index._base_tf.tobytes(), index._base_stamp.tobytes()]


@pytest.mark.parametrize("seed", range(3))
def test_copies_share_the_cells_and_never_write_them(seed):
    """A filled index's copies share its cells (the base) rather than laying them out again:
    two copies of one template saved apart, and a copy of a saved copy, each rank as a plain
    index given its saves; the template's rankings and the shared cells do not change."""
    rng = random.Random(seed)
    docs = [(f"art-{i:06d}", " ".join(rng.sample(WORDS, 3)), text(rng, rng.randint(0, 30))) for i in range(80)]
    titles = [title for _, title, _ in docs]
    template = ArenaIndex()
    template.fill_texts(docs)
    queries = random_queries(rng, titles, 30)
    before = [template.search_many(queries, limit) for limit in LIMITS]
    first, second = template.copy(), template.copy()
    assert first._base_slot.size and np.shares_memory(first._base_slot, template._base_slot)
    assert np.shares_memory(second._base_tf, first._base_tf) and first._cell_end == 0
    shared = base_bytes(template)
    plain_first, plain_second = plain_of(docs), plain_of(docs)
    for step in range(300):
        index, plain = (first, plain_first) if step % 2 else (second, plain_second)
        change = (rng.choice(docs)[0], rng.choice(titles), text(rng, rng.choice([1, 5, 30])))
        index.add(*change)
        plain.add(*change)
        if step % 37 == 0:
            doc_id = rng.choice(docs)[0]
            index.remove(doc_id)
            plain.remove(doc_id)
    assert base_bytes(template) == shared
    assert [template.search_many(queries, limit) for limit in LIMITS] == before
    assert_same(template, plain_of(docs), queries)
    third, plain_third = first.copy(), plain_first.copy()  # a copy of a copy with saves of its own
    for _ in range(60):
        change = (rng.choice(docs)[0], rng.choice(titles), text(rng, rng.choice([1, 5, 30])))
        third.add(*change)
        plain_third.add(*change)
    assert base_bytes(template) == shared
    pairs = ((first, plain_first), (second, plain_second), (third, plain_third), (template, plain_of(docs)))
    for index, plain in pairs:
        assert_same(index, plain, queries)
        assert_same_terms(index, plain)


@pytest.mark.parametrize("block_tokens", [1, 7, arena._BLOCK_TOKENS])
@pytest.mark.parametrize("seed", range(3))
def test_the_shared_cells_are_the_blocks_used_cells_and_no_room(seed, block_tokens, monkeypatch):
    """A copy's shared cells hold each term's used cells back to back, none of the room its
    block had (a copy trimmed a chunk of terms at a time, chunks of one cell and up): a filled
    template's, and one saved into (its own cells stale in part, then laid out with the ones
    it shared before) copied again; each copy and template still ranks as a plain index."""
    monkeypatch.setattr(arena, "_BLOCK_TOKENS", block_tokens)
    rng = random.Random(seed)
    docs = [(f"art-{i:06d}", " ".join(rng.sample(WORDS, 3)), text(rng, rng.randint(0, 30))) for i in range(70)]
    titles = [title for _, title, _ in docs]
    queries = random_queries(rng, titles, 30)
    template, plain = ArenaIndex(), plain_of(docs)
    template.fill_texts(docs)
    for _ in range(40):
        change = (rng.choice(docs)[0], rng.choice(titles), text(rng, rng.choice([1, 5, 30])))
        template.add(*change)
        plain.add(*change)
    copies = []
    for _ in range(2):
        held = template.postings()
        copies.append((template.copy(), plain.copy()))
        assert template._base_slot.size == int(template._base_used.sum())
        assert template.postings() == held and copies[-1][0].postings() == held
        ends = template._base_start[: len(template._terms)] + template._base_used[: len(template._terms)]
        assert (template._base_start[1 : len(template._terms)] == ends[:-1]).all()  # back to back
        for _ in range(30):
            change = (rng.choice(docs)[0], rng.choice(titles), text(rng, rng.choice([1, 5, 30])))
            template.add(*change)
            plain.add(*change)
    assert_same(template, plain, queries)
    assert_same_terms(template, plain)
    for twin, plain_then in copies:
        assert_same(twin, plain_then, queries)


@pytest.mark.parametrize(("repeats", "dtype"), [(5, np.uint8), (300, np.uint16), (70_000, np.int32)])
def test_the_shared_counts_are_as_narrow_as_they_fit_and_rank_alike(repeats, dtype):
    """The counts a copy shares (the cells' and the forward cells') are held in the narrowest
    of uint8, uint16 and int32 their largest fits (a word ``repeats`` times in one document);
    the template, its copy and the copy saved into rank as plain indexes, terms and counts alike."""
    rng = random.Random(repeats)
    docs = [(f"art-{i:06d}", " ".join(rng.sample(WORDS, 3)), text(rng, rng.randint(0, 30))) for i in range(60)]
    docs[7] = ("art-000007", "Many words", " ".join([WORDS[0]] * repeats + [WORDS[1]]))
    titles = [title for _, title, _ in docs]
    queries = [*random_queries(rng, titles, 20), WORDS[0], f"{WORDS[0]} {WORDS[1]}"]
    template = ArenaIndex()
    template.fill_texts(docs)
    twin = template.copy()
    assert twin._base_tf.dtype == dtype and twin._fwd_base_tf.dtype == dtype
    assert np.shares_memory(twin._base_tf, template._base_tf)
    plain = plain_of(docs)
    assert_same(template, plain, queries)
    assert_same(twin, plain, queries)
    assert_same_terms(twin, plain)
    plain_twin = plain.copy()
    for _ in range(40):
        change = (rng.choice(docs)[0], rng.choice(titles), " ".join([WORDS[0]] * rng.choice([1, min(repeats, 300)])))
        twin.add(*change)
        plain_twin.add(*change)
    assert_same(twin, plain_twin, queries)
    assert_same_terms(twin, plain_twin)
    assert_same(template, plain, queries)


def test_a_copy_whose_shared_cells_go_stale_lays_its_live_ones_out():
    """Once three in four of the shared cells are stale in a copy (its documents saved since),
    the copy lays its live cells out in an arena of its own and lets the shared ones go; the
    template keeps them, and both still rank as plain indexes."""
    rng = random.Random(7)
    docs = [(f"art-{i:06d}", " ".join(rng.sample(WORDS, 3)), text(rng, 20)) for i in range(60)]
    with thresholds(4, arena._LOOP_CELLS, arena._LONG_POSTINGS, arena._BATCH_TERM_CELLS, arena._BATCH_CELLS, 0):
        template = ArenaIndex()
        template.fill_texts(docs)
        day, plain = template.copy(), plain_of(docs)
        assert day._base_slot.size
        for doc_id, title, _ in docs:
            change = (doc_id, title, text(rng, 20))
            day.add(*change)
            plain.add(*change)
        assert day._base_slot.size == 0 and not day._in_base.any()
        assert template._base_slot.size
        queries = random_queries(rng, [title for _, title, _ in docs], 30)
        assert_same(day, plain, queries)
        assert_same(template, plain_of(docs), queries)


@pytest.mark.parametrize("name", ["unicode:de", "auto:de,en,hi"])
def test_compound_queries_split_alike_and_rank_as_the_plain_index(name):
    """A query's compound words split against the index's terms in both indexes alike,
    also once a part's last document is gone (then it splits no more), and copies."""
    from kbsim.store.analyzer import analyzer_named

    analyzer = analyzer_named(name)
    fast, plain = ArenaIndex(analyzer=analyzer), BM25Index(analyzer=analyzer)
    docs = [("a", "Reisekosten", "Die Abrechnung der Reisekosten"), ("b", "Urlaub", "Urlaub und Tage"),
            ("c", "Abrechnung", "Die Abrechnung im Monat"), ("d", "Password", "Reset the password")]
    queries = ["Reisekostenabrechnung", "Urlaubstage", "Monatsabrechnung", "passwordreset", "Tage"]
    for index in (fast, plain):
        for doc in docs:
            index.add(*doc)
    for step in range(3):
        for query in queries:
            assert fast.search(query, 5) == plain.search(query, 5), (step, query)
        assert fast.search_many(queries, 3) == plain.search_many(queries, 3)
        assert fast.copy().search_many(queries, 3) == plain.copy().search_many(queries, 3)
        for index in (fast, plain):
            index.remove("abc"[step])
    assert plain.search("Urlaubstage", 5) == []  # urlaub's and tag's article is gone
