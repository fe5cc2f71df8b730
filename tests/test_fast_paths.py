"""The fast paths held to their plain references, call for call and table for table.

Each fast path (a batch of a check's searches ranked together, the remembered valid
arguments and a batch's validation, the article copy, the JSON sizes, the popularity
fallback, a frozen starting index, a first fill built in bulk, the vocabulary built by
syllable products) keeps a plain path; these tests run both on random indexes, stores and
days and require identical answers, sizes, counts, states and tables.
"""

from __future__ import annotations

import bisect
import copy
import dataclasses
import random

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kbsim.sim.checks as checks
import kbsim.store.bm25 as bm25
import kbsim.store.bulk as bulk
import kbsim.store.memory as memory_module
from kbsim import SQLiteStore
from kbsim.params import DayParams
from kbsim.sim import simulate_day
from kbsim.sim.corpus import _SYLLABLES, Corpus, make_vocabulary, vocabulary_word
from kbsim.sim.popularity import ATTEMPTS, UNIFORMS_PER_DRAW, Popularity
from kbsim.sim.world import streams
from kbsim.store import ArticleWords, BM25Index, MemoryStore, ToolError, validate_arguments
from kbsim.store import schema as schema_module
from kbsim.store.arena import ArenaIndex
from kbsim.store.rules import (
    Article,
    article_not_found,
    error_json_size,
    hit_json_size,
    json_size,
    json_text_size,
    read_json_size,
    read_result,
    search_hit,
)

WORDS = [f"w{i}" for i in range(60)] + ["alpha", "beta", "gamma", "naïve", "ÉTÉ"]


def random_index(rng: random.Random, n_docs: int, live: dict | None = None) -> tuple[BM25Index, list[str]]:
    """An index with re-saved, removed and duplicated documents (exact score ties); ``live``,
    when given, is filled with each live document's last ``(title, body)``."""
    index = BM25Index()
    live = {} if live is None else live
    titles = []

    def add(doc_id: str, title: str, body: str) -> None:
        index.add(doc_id, title, body)
        live.pop(doc_id, None)  # its last text (the order of live documents does not matter)
        live[doc_id] = (title, body)

    for i in range(n_docs):
        title = " ".join(rng.sample(WORDS, rng.randint(1, 5)))
        body = " ".join(rng.choices(WORDS[:8], k=rng.randint(0, 6)) + rng.choices(WORDS, k=rng.randint(1, 30)))
        add(f"art-{rng.randrange(10**6):06d}" if i % 7 == 0 else f"art-{i:06d}", title, body)
        titles.append(title)
    ids = list(index._slot_of)
    for doc_id in rng.sample(ids, len(ids) // 10):
        index.remove(doc_id)
        live.pop(doc_id, None)
    for doc_id in rng.sample(ids, len(ids) // 5):
        add(doc_id, rng.choice(titles), " ".join(rng.choices(WORDS, k=rng.randint(1, 20))))
    twin_title, twin_body = "gamma twin", "beta beta twin"
    for doc_id in ("art-999999", "art-500000", "art-000000"):  # identical documents: exact ties
        add(doc_id, twin_title, twin_body)
    return index, titles


def frozen_index(monkeypatch, live: dict) -> BM25Index:
    """The documents of ``live`` filled into a new index that stays frozen, whatever its size."""
    monkeypatch.setattr(bm25, "_FREEZE_POSTINGS", 0)
    index = BM25Index()
    index.fill_texts([(doc_id, title, body) for doc_id, (title, body) in live.items()])
    assert index._frozen is not None
    return index


def random_queries(rng: random.Random, titles: list[str], count: int) -> list[str]:
    queries = []
    for _ in range(count):
        kind = rng.random()
        if kind < 0.5:
            queries.append(rng.choice(titles))
        elif kind < 0.8:
            queries.append(" ".join(rng.choices(WORDS, k=rng.randint(1, 14))))  # long queries too
        else:
            queries.append(rng.choice(["zz qq", "", "twin", "Gamma, TWIN!", "naïve été"]))
    return queries


@pytest.mark.parametrize("table_always", [False, True])
@pytest.mark.parametrize("seed", range(8))
def test_search_many_ranks_exactly_as_search_does(monkeypatch, seed, table_always):
    if table_always:  # the score table even where it would be mostly empty
        monkeypatch.setattr(bm25, "_CELLS_PER_POSTING", 10**9)
    rng = random.Random(seed)
    index, titles = random_index(rng, rng.choice([5, 40, 300]))
    queries = random_queries(rng, titles, rng.choice([1, 7, 150]))
    for limit in (1, 3, 10, 20):
        expected = [[doc_id for doc_id, _ in index.search(query, limit)] for query in queries]
        assert index.search_many(queries, limit) == expected
    assert index.copy().search_many(queries, 10) == index.search_many(queries, 10)


def test_search_many_on_an_empty_index_and_past_its_table_size(monkeypatch):
    assert BM25Index().search_many(["alpha beta"], 5) == [[]]
    assert BM25Index().search_many([], 5) == []
    rng = random.Random(3)
    index, titles = random_index(rng, 50)
    queries = random_queries(rng, titles, 30)
    monkeypatch.setattr(bm25, "_CELLS_PER_POSTING", 10**9)
    fast = index.search_many(queries, 10)
    monkeypatch.setattr(bm25, "_TABLE_CELLS", 100)  # in chunks of two queries
    assert index.search_many(queries, 10) == fast
    monkeypatch.setattr(bm25, "_TABLE_CELLS", 1)  # one query at a time
    assert index.search_many(queries, 10) == fast
    monkeypatch.setattr(bm25, "_TABLE_DOCS", 10)  # query by query
    assert index.search_many(queries, 10) == fast


def test_ties_cut_by_id_in_search_many():
    index = BM25Index()
    for i in (7, 3, 12, 1, 9, 5, 30, 2):
        index.add(f"art-{i:06d}", "same words", "alpha beta")
    index.add("art-000004", "same words words", "alpha beta")
    assert index.search_many(["words", "alpha"], 4) == [
        ["art-000004", "art-000001", "art-000002", "art-000003"],
        [doc_id for doc_id, _ in index.search("alpha", 4)],
    ]


def store_and_titles(seed: int) -> tuple[MemoryStore, list[str]]:
    rng = random.Random(seed)
    store = MemoryStore()
    pairs = [(" ".join(rng.sample(WORDS, 4)), " ".join(rng.choices(WORDS, k=rng.randint(1, 40)))) for _ in range(80)]
    ids = store.create_knowledge_base("kb-1", pairs, at=0.0)
    for i, article_id in enumerate(rng.sample(ids, 30)):
        if i % 5 == 0:
            store.unpublish_article("kb-1", article_id, at=10.0 + i)
        else:
            store.save_article("kb-1", article_id, at=10.0 + i, content="alpha " * i, title=rng.choice(pairs)[0])
    return store, [title for title, _ in pairs]


@pytest.mark.parametrize("seed", range(4))
def test_store_and_client_search_many_answer_as_each_call_would(seed):
    store, titles = store_and_titles(seed)
    client = store.client({"kb-1"}, clock=lambda: 100.0)
    queries = random_queries(random.Random(seed), titles, 60)
    queries = [q for q in queries if len(q) >= 2]
    for limit in (1, 10, 20):
        expected = []
        for query in queries:
            result, size = client.call_sized(
                "search_knowledge_base", {"knowledge_base_id": "kb-1", "query": query, "limit": limit}
            )
            expected.append(([(hit["article_id"], hit["title"]) for hit in result["results"]], size))
        assert store.search_many("kb-1", queries, limit) == expected
        assert client.search_many("kb-1", queries, limit) == expected


@pytest.mark.parametrize("seed", range(4))
def test_store_and_client_search_titles_answer_as_each_call_would(seed):
    """The cited article's title among each search's hits (None when it is not there) and
    the result's size, as the calls give them: queries of titles, of other articles' titles
    (so the article is often missing), of unpublished and retitled articles."""
    store, titles = store_and_titles(seed)
    client = store.client({"kb-1"}, clock=lambda: 100.0)
    rng = random.Random(seed)
    queries = [q for q in random_queries(rng, titles, 60) if len(q) >= 2]
    ids = []
    for query in queries:  # often the top hit (there at every limit), else any article
        top = store.tool_search("kb-1", query, 1)["results"]
        ids.append(top[0]["article_id"] if top and rng.random() < 0.5 else f"art-{rng.randrange(1, 85):06d}")
    for limit in (1, 10, 20):
        expected = []
        for query, article_id in zip(queries, ids, strict=True):
            result, size = client.call_sized(
                "search_knowledge_base", {"knowledge_base_id": "kb-1", "query": query, "limit": limit}
            )
            expected.append(({hit["article_id"]: hit["title"] for hit in result["results"]}.get(article_id), size))
        assert any(title is None for title, _ in expected) and any(title for title, _ in expected)
        assert store.search_titles("kb-1", queries, ids, limit) == expected
        assert client.search_titles("kb-1", queries, ids, limit) == expected
    assert client.search_titles("kb-1", [], [], 10) == []
    with pytest.raises(ToolError) as error:
        client.search_titles("kb-1", ["alpha"], [], 10)
    assert error.value.code == "invalid_argument" and "article_ids" in error.value.message
    with pytest.raises(ToolError) as error:
        client.search_titles("kb-2", ["alpha"], ["art-000001"], 10)
    assert error.value.code == "not_found"
    sqlite = SQLiteStore(":memory:")  # a store without search_titles: the client searches call by call
    articles = [store.article_state("kb-1", i) for i in store.published_article_ids("kb-1")]
    sqlite.create_knowledge_base("kb-1", [(a.title, a.content) for a in articles], at=0.0)
    plain = sqlite.client({"kb-1"}, clock=lambda: 0.0)
    answers = plain.search_many("kb-1", queries, 5)
    assert plain.search_titles("kb-1", queries, ids, 5) == [
        (dict(hits).get(article_id), size) for article_id, (hits, size) in zip(ids, answers, strict=True)
    ]


def test_client_search_many_errors_as_the_first_failing_call():
    store, _ = store_and_titles(0)
    client = store.client({"kb-1"}, clock=lambda: 0.0)
    cases = [
        ("kb-1", ["alpha", "x"], 10),  # a query shorter than the schema allows
        ("kb-1", ["alpha"], 0),  # a limit out of range
        ("kb-2", ["alpha"], 10),  # not granted: answers like a missing knowledge base
    ]
    for kb_id, queries, limit in cases:
        with pytest.raises(ToolError) as many:
            client.search_many(kb_id, queries, limit)
        with pytest.raises(ToolError) as one:
            for query in queries:
                client.call("search_knowledge_base", {"knowledge_base_id": kb_id, "query": query, "limit": limit})
        assert many.value.to_dict() == one.value.to_dict()
    assert client.search_many("kb-1", [], 10) == []


def test_client_search_many_on_a_store_without_it():
    memory, titles = store_and_titles(1)
    sqlite = SQLiteStore(":memory:")
    articles = [memory.article_state("kb-1", i) for i in memory.published_article_ids("kb-1")]
    sqlite.create_knowledge_base("kb-1", [(a.title, a.content) for a in articles], at=0.0)
    client = sqlite.client({"kb-1"}, clock=lambda: 0.0)
    queries = titles[:20]
    expected = []
    for query in queries:
        arguments = {"knowledge_base_id": "kb-1", "query": query, "limit": 5}
        result, size = client.call_sized("search_knowledge_base", arguments)
        expected.append(([(h["article_id"], h["title"]) for h in result["results"]], size))
    assert client.search_many("kb-1", queries, 5) == expected


DAYS = [
    (1, {"edit": {"delay_s": 60}}),
    (2, {"saves": {"popularity": "uniform"}, "edit": {"delay_s": 5}}),
    (3, {"checks": {"title_search_limit": 1, "interval_s": 900}, "saves": {"replace_unpublished": True}}),
    (4, {"corpus": {"source": "kbsim:sample"}, "edit": {"delay_s": 600}}),
    (5, {"event_retention_s": 1800, "corpus": {"articles": 60}, "saves": {"count": 600}}),
]


@pytest.mark.parametrize("seed, overrides", DAYS)
def test_every_title_check_of_a_day_equals_the_per_call_check(monkeypatch, seed, overrides):
    """At every check of random days, the batched title check and the call-by-call one
    flag the same citations with the same calls and bytes."""
    compared = []
    batched = checks.check_by_title

    def both(client, kb_id, citations, limit):
        fast = batched(client, kb_id, citations, limit)
        plain = checks.check_by_title_per_call(client, kb_id, citations, limit)
        assert dataclasses.asdict(fast) == dataclasses.asdict(plain)
        compared.append(plain.calls)
        return fast

    monkeypatch.setattr(checks, "check_by_title", both)
    simulate_day(DayParams.model_validate(overrides), seed)
    assert compared and sum(compared) > 0


@pytest.mark.parametrize("seed, overrides", DAYS)
def test_a_day_gives_the_same_tables_on_the_plain_call_by_call_paths(monkeypatch, seed, overrides):
    """Title searches, re-reads and the poll's re-reads made call by call through
    ``client.call``: every table (calls and bytes of each check included) is identical."""
    params = DayParams.model_validate(overrides)
    fast, _ = simulate_day(params, seed)
    monkeypatch.setattr(checks, "check_by_title", checks.check_by_title_per_call)
    monkeypatch.setattr(checks, "reread_articles", checks.reread_articles_per_call)
    plain, _ = simulate_day(params, seed)
    assert fast.keys() == plain.keys()
    for name in fast:
        pd.testing.assert_frame_equal(fast[name], plain[name], check_exact=True)


def test_store_and_client_read_many_answer_as_each_call_would():
    store, _ = store_and_titles(2)
    ids = [f"art-{i:06d}" for i in range(0, 90)]  # published, unpublished and never published
    client = store.client({"kb-1"}, clock=lambda: 0.0)

    def per_call(client, kb_id):
        outcome = checks.CheckOutcome()
        current = checks.reread_articles_per_call(outcome, client, kb_id, ids)
        return current, outcome.calls, outcome.bytes

    def batched(client, kb_id):
        outcome = checks.CheckOutcome()
        current = checks.reread_articles(outcome, client, kb_id, ids)
        return current, outcome.calls, outcome.bytes

    expected = per_call(client, "kb-1")
    assert None in expected[0].values() and any(expected[0].values())
    assert batched(client, "kb-1") == expected
    answers = store.read_many("kb-1", ids)
    assert [version for version, _ in answers] == list(expected[0].values())
    assert sum(size for _, size in answers) == expected[2]
    for kb_id in ("kb-2", "kb-1"):  # not granted, then granted
        other = store.client({"kb-2"}, clock=lambda: 0.0)
        assert batched(other, kb_id) == per_call(other, kb_id)
    with pytest.raises(ToolError) as error:
        client.read_many("kb-1", ["art-000001", 5])
    assert error.value.code == "invalid_argument"
    assert client.read_many("kb-1", []) == []


ARGUMENT_SETS = [
    ("search_knowledge_base", {"knowledge_base_id": "kb-1", "query": "alpha beta", "limit": 5}),
    ("search_knowledge_base", {"knowledge_base_id": "kb-1", "query": "alpha beta", "limit": True}),
    ("search_knowledge_base", {"knowledge_base_id": "kb-1", "query": "alpha beta", "limit": 5.0}),
    ("search_knowledge_base", {"knowledge_base_id": "kb-1", "query": "a", "limit": 5}),
    ("search_knowledge_base", {"knowledge_base_id": "kb-1", "query": "alpha", "limit": 21}),
    ("search_knowledge_base", {"knowledge_base_id": "kb-1", "query": "alpha", "extra": 1}),
    ("search_knowledge_base", {"knowledge_base_id": 1, "query": "alpha"}),
    ("search_knowledge_base", {"query": "alpha"}),
    ("read_knowledge_article", {"knowledge_base_id": "kb-1", "article_id": "art-000001"}),
    ("read_knowledge_article", {"knowledge_base_id": "kb-1", "article_id": ["art-000001"]}),
    ("poll_resource_events", {"resource_type": "knowledge_base", "resource_id": "kb-1", "after_sequence": 3}),
    ("poll_resource_events", {"resource_type": "knowledge_base", "resource_id": "kb-1", "after_sequence": -1}),
    ("poll_resource_events", {"resource_type": "nothing", "resource_id": "kb-1"}),
    ("edit_knowledge_article", {"knowledge_base_id": "kb-1"}),
    ("no_such_tool", {"knowledge_base_id": "kb-1"}),
]


def outcome_of(function, name, arguments):
    try:
        result = function(name, arguments)
    except ToolError as error:
        return "error", error.to_dict()
    return "ok", result is arguments, result


def test_remembered_valid_arguments_validate_exactly_as_the_schema(monkeypatch):
    monkeypatch.setattr(schema_module, "_valid", set())
    for _ in range(3):  # a first time (remembered when valid), then from memory
        for name, arguments in ARGUMENT_SETS:
            again = copy.deepcopy(arguments)
            assert outcome_of(validate_arguments, name, again) == outcome_of(schema_module._validate, name, again)
    # the valid poll, never an error (the valid search and read pass the plain check first)
    assert len(schema_module._valid) == 1
    monkeypatch.setattr(schema_module, "_valid", set())
    monkeypatch.setattr(schema_module, "_REMEMBERED_MAX", 2)
    for name, arguments in ARGUMENT_SETS:
        outcome_of(validate_arguments, name, arguments)
    assert len(schema_module._valid) <= 2


def plain_argument_sets(seed: int, count: int):
    """Random flat argument sets for the search and the read: names of theirs and others,
    values of every plain type (and bools and floats), at and past each bound."""
    rng = random.Random(seed)
    names = ["knowledge_base_id", "query", "limit", "article_id", "extra"]
    values = [
        lambda: "x" * rng.choice([0, 1, 2, 3, 199, 200, 201]),
        lambda: "é" * rng.choice([1, 2, 200, 201]),
        lambda: rng.choice([-1, 0, 1, 2, 19, 20, 21, 10**20]),
        lambda: rng.choice([True, False, 1.0, 5.0, None]),
    ]
    for _ in range(count):
        tool = rng.choice(["search_knowledge_base", "read_knowledge_article"])
        own = ["knowledge_base_id", "query", "limit"] if tool == "search_knowledge_base" else names[0::3]
        chosen = rng.sample(names, rng.randint(0, 4)) if rng.random() < 0.3 else own[: rng.randint(1, len(own))]
        yield tool, {name: rng.choice(values)() for name in chosen}


def test_the_plain_check_accepts_only_what_the_schema_accepts():
    accepted = 0
    for tool, arguments in plain_argument_sets(3, 4000):
        if schema_module._plainly_valid(tool, arguments):
            accepted += 1
            assert schema_module._validate(tool, copy.deepcopy(arguments)) == arguments
        assert outcome_of(validate_arguments, tool, copy.deepcopy(arguments)) == outcome_of(
            schema_module._validate, tool, copy.deepcopy(arguments)
        )
    assert accepted > 50  # the check is exercised, not only refused


def test_the_plain_check_takes_only_plain_schemas():
    assert schema_module._plain_schema("poll_resource_events") is None  # an enum
    assert schema_module._plain_schema("edit_knowledge_article") is None
    required, fields = schema_module._plain_schema("search_knowledge_base")
    assert required == {"knowledge_base_id", "query"} and fields["query"] == (str, 2, 200)


def test_an_article_copy_copies_every_field():
    article = Article("art-000001", "Title", "Content", True, 1_000_000)
    article.hit_size("kb-1")
    twin = copy.copy(article)
    assert twin is not article and type(twin) is Article
    for field in dataclasses.fields(Article):
        assert getattr(twin, field.name) == getattr(article, field.name), field.name
    twin.title = "Other"
    assert article.title == "Title"


def test_the_idempotency_records_copy_results_as_deepcopy_does():
    from kbsim.store.memory import _json_copy

    value = {"a": "x", "citation": {"k": "kb-1", "n": [1, 2.5, None, True, {"z": []}]}, "t": (1, 2)}
    twin = _json_copy(value)
    assert twin == copy.deepcopy(value)
    assert twin["citation"] is not value["citation"] and twin["citation"]["n"][4] is not value["citation"]["n"][4]
    twin["citation"]["k"] = "changed"
    assert value["citation"]["k"] == "kb-1"


def index_state(index: BM25Index) -> dict:
    """What an index holds, as plain data: each live document's postings and the totals."""
    postings = {
        term: {index._doc_ids[slot]: tf for slot, tf in bucket.items()} for term, bucket in index._postings.items()
    }
    return {"postings": postings, "docs": len(index), "total_len": index._total_len}


def starting_index(seed: int) -> tuple[random.Random, BM25Index, list[str]]:
    rng = random.Random(seed)
    index, titles = random_index(rng, rng.choice([15, 80]))
    return rng, index, titles


@pytest.mark.parametrize("frozen", [False, True])
@pytest.mark.parametrize("seed", range(6))
def test_an_index_and_its_copy_change_independently(monkeypatch, seed, frozen):
    """After a copy, and a copy of the copy, each index changed on its own (the changes
    interleaved) holds exactly what an index never copied holds after the same changes, and
    ranks as it does: no postings are shared between copies. ``frozen``: the original is
    frozen first (its copy is built from the arrays; its own first change thaws it)."""
    rng = random.Random(seed)
    live: dict = {}
    original, titles = random_index(rng, rng.choice([15, 80]), live)
    if frozen:  # the same documents, filled in bulk and left frozen
        original = frozen_index(monkeypatch, live)
    indexes = [original, original.copy()]
    indexes.append(indexes[1].copy())
    changes: list[list[tuple]] = [[] for _ in indexes]
    for step in range(60):
        which = rng.randrange(len(indexes))  # the changes interleave between the indexes
        index = indexes[which]
        live = [doc_id for doc_id in index._slot_of if doc_id in index]
        roll = rng.random()
        if roll < 0.5 and live:
            change = ("add", rng.choice(live), rng.choice(titles), " ".join(rng.choices(WORDS, k=rng.randint(1, 25))))
        elif roll < 0.75 and live:
            change = ("remove", rng.choice(live))
        else:
            change = ("add", f"new-{which}-{step}", rng.choice(titles), "alpha beta " * rng.randint(1, 3))
        getattr(index, change[0])(*change[1:])
        changes[which].append(change)
    queries = random_queries(rng, titles, 25)
    for which, index in enumerate(indexes):
        _, reference, _ = starting_index(seed)  # the same documents, never copied
        for change in changes[which]:
            getattr(reference, change[0])(*change[1:])
        assert index_state(index) == index_state(reference), which
        assert index.search_many(queries, 5) == reference.search_many(queries, 5)
        for query in queries:
            assert index.search(query, 5) == reference.search(query, 5)


def _plain_fallback_draw(popularity, uniforms, is_eligible):
    """Popularity.draw as first written: every article asked in turn, a list cumulated."""
    last = len(popularity.by_rank) - 1
    for u in uniforms[:ATTEMPTS]:
        article_id = popularity.by_rank[min(bisect.bisect_right(popularity._cdf, u * popularity._total), last)]
        if is_eligible(article_id):
            return article_id
    eligible = [a for a in popularity.by_rank if is_eligible(a)]
    if not eligible:
        return None
    cdf = np.cumsum([popularity.probabilities[popularity.rank_of[a]] for a in eligible])
    if not cdf[-1] > 0:
        return None
    index = int(np.searchsorted(cdf, uniforms[ATTEMPTS] * cdf[-1], side="right"))
    return eligible[min(index, len(eligible) - 1)]


@pytest.mark.parametrize("seed", range(6))
def test_a_draw_given_every_ineligible_id_at_once_equals_the_plain_draw(seed):
    """The fallback asked once for the ineligible ids picks exactly as asking each article."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 300))
    ids = [f"a{i}" for i in range(n)]
    weights = None if seed % 2 else rng.pareto(1.0, n) * (rng.random(n) < 0.9)
    popularity = Popularity(ids, rng.permutation(n), float(rng.uniform(0, 1.5)), weights=weights)
    replaced = []
    for old in rng.choice(n, size=min(n, 5), replace=False).tolist():
        popularity.replace(ids[old], f"new{old}")  # a replacement takes the old one's rank
        replaced.append(ids[old])
    fallbacks = 0
    for _ in range(300):
        # few articles eligible (at times none, or only the least popular), so that many
        # draws reach the fallback
        keep = rng.uniform(0.0, 0.5)
        eligible = {a for r, a in enumerate(popularity.by_rank) if rng.random() < keep * r / n}
        uniforms = rng.random(UNIFORMS_PER_DRAW).tolist()
        expected = _plain_fallback_draw(popularity, uniforms, eligible.__contains__)
        # every ranked id refused, and ids it does not rank (the replaced ones), in any order
        ineligible = [a for a in popularity.by_rank if a not in eligible] + replaced
        rng.shuffle(ineligible)
        assert popularity.draw(uniforms, eligible.__contains__, lambda ids=ineligible: ids) == expected
        assert popularity.draw(uniforms, eligible.__contains__) == expected
        attempts = [
            popularity.by_rank[min(bisect.bisect_right(popularity._cdf, u * popularity._total), n - 1)]
            for u in uniforms[:ATTEMPTS]
        ]
        fallbacks += not any(a in eligible for a in attempts)
    assert fallbacks >= 20  # the fallback itself was exercised, not only the attempts


def test_a_store_copy_keeps_its_own_unpublished_ids():
    """unpublished_article_ids (what a day's fallback draws ask) are the articles
    current_version refuses, in a copy and in its original independently."""
    store = MemoryStore()
    ids = store.create_knowledge_base("kb", [(f"title {i}", f"body {i}") for i in range(6)])
    store.unpublish_article("kb", ids[4], at=1.0)
    twin = store.copy()
    twin.unpublish_article("kb", ids[1], at=2.0)
    twin.publish_article("kb", title="new", content="new body", at=3.0)
    for held, gone in ((store, [ids[4]]), (twin, sorted([ids[1], ids[4]]))):
        assert held.unpublished_article_ids("kb") == gone
        refused = [a for a in held.snapshot()["kbs"]["kb"]["articles"] if held.current_version("kb", a[0]) is None]
        assert sorted(a[0] for a in refused) == gone


_TEXT = st.text(max_size=300) | st.sampled_from(
    ['a "quoted" title', "back\\slash", "tab\tnew\nline", "naïve été", "\x00\x1f", "del\x7f"]
)


@settings(max_examples=300, deadline=None)
@given(kb_id=_TEXT, article_id=_TEXT, title=_TEXT, content=_TEXT | st.text(min_size=150, max_size=400),
       version_us=st.integers(0, 10**15))
def test_hit_read_and_refusal_sizes_equal_the_encoded_json(kb_id, article_id, title, content, version_us):
    article = Article(article_id, title, content, True, version_us)
    assert hit_json_size(kb_id, article) == json_size(search_hit(kb_id, article))
    assert read_json_size(kb_id, article) == json_size(read_result(kb_id, article))
    assert article.hit_size(kb_id) == json_size(search_hit(kb_id, article))
    error = article_not_found(kb_id, article_id)
    assert error_json_size(error) == json_size({"error": error.to_dict()})
    detailed = ToolError("cursor_expired", title, latest_sequence=3)
    assert error_json_size(detailed) == json_size({"error": detailed.to_dict()})
    assert json_text_size(title) == json_size(title)


def test_a_size_of_text_json_cannot_encode_fails_as_json_size_does():
    for text in ("\ud800", "ok \udfff"):  # lone surrogates: no UTF-8 for them
        with pytest.raises(UnicodeEncodeError):
            json_size(text)
        with pytest.raises(UnicodeEncodeError):
            json_text_size(text)


@pytest.mark.parametrize("chunk", [None, 1, 7])
def test_a_frozen_index_copies_and_searches_as_before(monkeypatch, chunk):
    monkeypatch.setattr(bm25, "_FREEZE_POSTINGS", 0)
    if chunk is not None:  # thawed a few postings (or one term) at a time
        monkeypatch.setattr(bm25, "_THAW_CHUNK", chunk)
    rng = random.Random(11)
    live: dict = {}
    plain, titles = random_index(rng, 120, live)
    queries = random_queries(rng, titles, 40)
    expected = [plain.search(query, 7) for query in queries]
    index = frozen_index(monkeypatch, live)
    thawed = _index_order_state(index)  # the arrays as dicts, without thawing the index
    twin = index.copy()  # from the arrays: the same postings, each term's in the same order
    assert _index_order_state(twin) == thawed
    assert index._frozen is not None and index._postings == {}  # the copy left it frozen
    assert [twin.search(query, 7) for query in queries] == expected
    slot_objects = {id(slot) for slot in index._slot_of.values()}
    assert all(id(slot) in slot_objects for bucket in twin._postings.values() for slot in bucket)
    assert index.search_many(queries, 7) == [[d for d, _ in hits] for hits in expected]  # thaws it
    assert index._frozen is None and index_state(index) == index_state(plain)
    assert _index_order_state(index) == thawed
    monkeypatch.setattr(bm25, "_FREEZE_POSTINGS", 10**12)
    small = BM25Index()
    small.fill_texts([(doc_id, title, body) for doc_id, (title, body) in live.items()])
    assert small._frozen is None  # under the threshold: filled as dicts


def test_a_day_on_a_frozen_plain_index_gives_the_same_tables(monkeypatch):
    """A day whose store is a BM25Index filled in bulk and left frozen (thawed by the day's
    first search or save) gives the default day's tables."""
    params = DayParams(corpus={"articles": 1200}, saves={"count": 300}, questions={"count": 60})
    expected = simulate_day(params, 4)[0]
    monkeypatch.setattr(bm25, "_FREEZE_POSTINGS", 0)
    frozen = []

    def plain_store(retention):
        store = MemoryStore(retention, index=BM25Index)
        original = store.create_knowledge_base

        def create(*args, **kwargs):
            ids = original(*args, **kwargs)
            frozen.extend(kb.index._frozen is not None for kb in store._kbs.values())
            return ids

        store.create_knowledge_base = create
        return store

    tables = simulate_day(params, 4, store=plain_store)[0]
    assert frozen == [True]
    for name, frame in expected.items():
        pd.testing.assert_frame_equal(tables[name], frame)


_VALUES = st.one_of(
    st.text(max_size=205), st.integers(-3, 30), st.none(), st.booleans(), st.floats(allow_nan=False), st.just([])
)


@settings(max_examples=200, deadline=None)
@given(kb_id=_VALUES, limit=_VALUES, values=st.lists(_VALUES, max_size=6))
def test_a_batch_validates_each_call_as_the_call_would(kb_id, limit, values):
    """validate_each raises what the first failing call would raise, or nothing when none fails."""
    for name, base, field in (
        ("search_knowledge_base", {"knowledge_base_id": kb_id, "limit": limit}, "query"),
        ("read_knowledge_article", {"knowledge_base_id": kb_id}, "article_id"),
    ):
        expected = None
        for value in values:
            expected = outcome_of(schema_module._validate, name, {**base, field: value})
            if isinstance(expected, tuple) and expected[0] == "error":
                break
        else:
            expected = None
        try:
            schema_module.validate_each(name, base, field, values)
            got = None
        except ToolError as error:
            got = ("error", error.to_dict())
        assert got == expected


def _index_order_state(index: BM25Index) -> tuple:
    """Everything an index holds, orders included (its postings thawed if frozen)."""
    postings = index._thawed_postings() if index._frozen is not None else index._postings
    return (
        list(index._slot_of.items()),
        index._doc_ids,
        [(term, list(bucket.items())) for term, bucket in postings.items()],
        index._doc_terms,
        index._doc_len,
        index._n_docs,
        index._total_len,
    )


def index_view(index) -> tuple:
    """What an index of either kind holds: the plain one's every order included, the
    arena's postings and totals."""
    if isinstance(index, BM25Index):
        return _index_order_state(index)
    return index.postings(), len(index), index.total_length


@pytest.mark.parametrize("freeze", [False, True])
@pytest.mark.parametrize("seed", range(6))
def test_an_index_filled_from_word_indices_equals_one_added_document_by_document(monkeypatch, seed, freeze):
    """fill() gives add()'s state exactly: postings and their order, each document's terms,
    lengths; a vocabulary may hold the same string twice; frozen or not."""
    monkeypatch.setattr(bm25, "_FREEZE_POSTINGS", 0 if freeze else 10**12)
    rng = np.random.default_rng(seed)
    vocabulary = [f"w{i}" for i in range(int(rng.integers(3, 40)))] + ["w1", "w2", "zz9"]  # w1, w2 twice
    n, body, title = int(rng.integers(0, 60)), int(rng.integers(1, 30)), int(rng.integers(1, 5))
    content = rng.integers(len(vocabulary), size=(n, body)) // rng.integers(1, 4)  # skewed: repeats
    titles = rng.integers(len(vocabulary), size=(n, title))
    ids = [f"art-{i:06d}" for i in range(n)]
    plain = BM25Index()
    for i in range(n):
        plain.add(ids[i], " ".join(vocabulary[w] for w in titles[i]), " ".join(vocabulary[w] for w in content[i]) + ".")
    filled = BM25Index()
    filled.fill(ids, vocabulary, content, titles)
    assert (filled._frozen is not None) == (freeze and n > 0)
    assert _index_order_state(filled) == _index_order_state(plain)
    queries = [" ".join(rng.choice(vocabulary, size=3).tolist()) for _ in range(10)]
    assert [filled.search(q, 5) for q in queries] == [plain.search(q, 5) for q in queries]
    with pytest.raises(ValueError):
        filled.fill(ids, vocabulary, content, titles)  # only into an empty index
    if n > 1:
        empty = BM25Index()
        with pytest.raises(ValueError, match="repeats"):
            empty.fill([ids[0], *ids[:-1]], vocabulary, content, titles)
        assert len(empty) == 0 and empty._postings == {}
    if n:
        for bad in (-1, len(vocabulary)):
            wrong = content.copy()
            wrong[0, 0] = bad
            for words in (wrong, list(wrong)):  # as an array, and as ragged rows
                empty = BM25Index()
                with pytest.raises(ValueError, match="outside the vocabulary"):
                    empty.fill(ids, vocabulary, words, titles if isinstance(words, np.ndarray) else list(titles))
                assert len(empty) == 0 and empty._frozen is None and empty._postings == {}


def test_a_knowledge_base_from_its_words_equals_one_from_its_texts():
    corpus = Corpus.build(DayParams(corpus={"articles": 300}).corpus)
    articles, body, title = corpus.articles_and_words(streams(5)["corpus"])
    assert articles == Corpus.build(DayParams(corpus={"articles": 300}).corpus).articles(streams(5)["corpus"])
    words = ArticleWords(corpus.vocabulary, body, title)
    for index in (BM25Index, ArenaIndex):
        plain, from_words = MemoryStore(index=index), MemoryStore(index=index)
        assert plain.create_knowledge_base("kb-1", articles, at=1.0) == from_words.create_knowledge_base_from_words(
            "kb-1", articles, words, at=1.0
        )
        assert from_words.snapshot() == plain.snapshot()
        assert index_view(from_words._kbs["kb-1"].index) == index_view(plain._kbs["kb-1"].index)


def test_words_that_are_not_the_texts_tokens_are_refused_and_nothing_is_created():
    vocabulary = ["alpha", "beta", "gamma", "Delta"]
    articles = [("Alpha beta", "gamma gamma."), ("Beta gamma", "alpha, ALPHA")]
    good = ArticleWords(vocabulary, np.array([[2, 2], [0, 0]]), np.array([[0, 1], [1, 2]]))
    assert len(MemoryStore().create_knowledge_base_from_words("kb-1", articles, good)) == 2
    cases = {
        "not ArticleWords": (vocabulary, good.content, good.title),
        "a wrong word": ArticleWords(vocabulary, np.array([[2, 1], [0, 0]]), good.title),
        "a row too few": ArticleWords(vocabulary, good.content[:1], good.title),
        "outside the vocabulary": ArticleWords(vocabulary, np.array([[2, 9], [0, 0]]), good.title),
        "floats": ArticleWords(vocabulary, good.content.astype(float), good.title),
        "ragged": ArticleWords(vocabulary, [[2, 2], [0]], good.title),
        "not a vocabulary": ArticleWords(5, good.content, good.title),
        "an upper-case token": ArticleWords(vocabulary, good.content, np.array([[0, 1], [1, 3]])),
    }
    for label, words in cases.items():
        store = MemoryStore()
        with pytest.raises(ToolError) as refused:
            store.create_knowledge_base_from_words("kb-1", articles, words)
        assert refused.value.code == "invalid_argument" and "words" in refused.value.message, label
        assert store.knowledge_base_ids() == [], label


def test_the_two_pass_stable_argsort_equals_numpys():
    rng = np.random.default_rng(2)
    for high in (3, 1 << 16, 1 << 31, 1 << 40):
        keys = rng.integers(0, high, size=5000)
        assert np.array_equal(bulk.stable_argsort(keys), np.argsort(keys, kind="stable"))
    assert bulk.stable_argsort(np.zeros(0, dtype=np.int64)).size == 0


@pytest.mark.parametrize("seed", range(5))
def test_an_index_filled_from_texts_equals_one_added_document_by_document(monkeypatch, seed):
    """fill_texts() (a first fill in bulk) gives add()'s state: ragged documents, empty ones,
    non-ASCII and punctuation, blocks of a few documents or one."""
    rng = random.Random(seed)
    monkeypatch.setattr(bulk, "_BLOCK_CELLS", rng.choice([1, 40, 1 << 20]))
    docs = []
    for i in range(rng.randint(0, 70)):
        title = " ".join(rng.choices(WORDS, k=rng.randint(0, 5)))
        content = ", ".join(rng.choices(WORDS, k=rng.randint(0, 40))) + rng.choice(["", ".", "!? ÉTÉ"])
        docs.append((f"art-{i:06d}", title, content))
    plain = BM25Index()
    for doc in docs:
        plain.add(*doc)
    filled = BM25Index()
    filled.fill_texts(docs)
    assert _index_order_state(filled) == _index_order_state(plain)


def test_a_large_first_fill_is_indexed_in_bulk_as_article_by_article(monkeypatch):
    rng = random.Random(4)
    articles = [(" ".join(rng.sample(WORDS, 3)), " ".join(rng.choices(WORDS, k=rng.randint(0, 30)))) for _ in range(50)]
    for index in (BM25Index, ArenaIndex):
        stores = {}
        for bulk_from in (10**9, 1):
            monkeypatch.setattr(memory_module, "_BULK_FILL", bulk_from)
            stores[bulk_from] = MemoryStore(index=index)
            stores[bulk_from].create_knowledge_base("kb-1", articles, at=0.0)
        plain, bulk = stores[10**9], stores[1]
        assert bulk.snapshot() == plain.snapshot()
        assert index_view(bulk._kbs["kb-1"].index) == index_view(plain._kbs["kb-1"].index)


def test_the_vocabulary_is_its_words_one_by_one():
    """make_vocabulary's products against vocabulary_word, across every change of length:
    one syllable (with its second), two, three and four."""
    n = len(_SYLLABLES)
    for size in (0, 1, n - 1, n, n + 1, n * n - 1, n * n + 1, 3000):
        assert make_vocabulary(size) == [vocabulary_word(i) for i in range(size)], size
    words = make_vocabulary(n**3 + 3)
    for i in (*range(n * n - 3, n * n + 3), 250_000, *range(n**3 - 3, n**3 + 3)):
        assert words[i] == vocabulary_word(i), i
    assert len(words) == n**3 + 3


def counted_title_ranking(monkeypatch) -> list[int]:
    """How many searches each ranking of MemoryStore.search_titles made, appended as it ranks."""
    ranked: list[int] = []
    plain = MemoryStore._rank_titles

    def counted(self, kb, queries, article_ids, limit):
        ranked.append(len(queries))
        return plain(self, kb, queries, article_ids, limit)

    monkeypatch.setattr(MemoryStore, "_rank_titles", counted)
    return ranked


def test_search_titles_answers_again_only_in_the_state_it_answered(monkeypatch):
    """search_titles keeps its answers for one state of the knowledge base: after every kind
    of change (a save, a retitle, an agent's edit, a publish, an unpublish with and without
    its event) and after calls that change nothing (a replayed edit, a conflict, a read, a
    poll), its answers, asked twice and with repeated keys, are those of the calls."""
    store, titles = store_and_titles(5)
    rng = random.Random(5)
    clock = [200.0]
    client = store.client({"kb-1"}, clock=lambda: clock[0])
    queries = [q for q in random_queries(rng, titles, 40) if len(q) >= 2]
    ids = [f"art-{rng.randrange(1, 86):06d}" for _ in queries]
    queries, ids = queries + queries[:5], ids + ids[:5]  # keys asked twice in one call
    ranked = counted_title_ranking(monkeypatch)

    def expected(limit):
        answers = []
        for query, article_id in zip(queries, ids, strict=True):
            result, size = client.call_sized(
                "search_knowledge_base", {"knowledge_base_id": "kb-1", "query": query, "limit": limit}
            )
            answers.append(({hit["article_id"]: hit["title"] for hit in result["results"]}.get(article_id), size))
        return answers

    def edit(article_id, key):
        version = client.call("read_knowledge_article", {"knowledge_base_id": "kb-1", "article_id": article_id})
        arguments = {"knowledge_base_id": "kb-1", "article_id": article_id, "content": "gamma " * 7,
                     "title": "twin w3", "expected_version": version["updated_at"], "idempotency_key": key}
        client.call("edit_knowledge_article", arguments)
        return arguments

    published = store.published_article_ids("kb-1")
    changes = [
        lambda: store.save_article("kb-1", published[0], at=clock[0], content="alpha beta " * 3),
        lambda: store.save_article("kb-1", published[1], at=clock[0], title=titles[7]),
        lambda: edit(published[2], "k-1"),
        lambda: store.publish_article("kb-1", title=titles[3], content="w1 w2 w3", at=clock[0]),
        lambda: store.unpublish_article("kb-1", published[3], at=clock[0]),
        lambda: store.unpublish_article("kb-1", published[4], at=clock[0], log_event=False),
    ]
    unchanged = [
        lambda: client.call("edit_knowledge_article", edit_arguments),  # a replay
        lambda: pytest.raises(ToolError, client.call, "edit_knowledge_article",
                              {**edit_arguments, "idempotency_key": "k-2"}),  # a stale version: a conflict
        lambda: client.call("poll_resource_events", {"resource_type": "knowledge_base", "resource_id": "kb-1",
                                                     "after_sequence": 0}),
    ]
    for step, change in enumerate(changes + unchanged + changes[:2]):
        clock[0] += 10.0
        outcome = change()
        if step == 2:
            edit_arguments = outcome
        changed = step < len(changes) or step >= len(changes) + len(unchanged)
        for limit in (1, 10):
            ranked.clear()
            first = store.search_titles("kb-1", queries, ids, limit)
            assert store.search_titles("kb-1", queries, ids, limit) == first == expected(limit)
            # each distinct key ranked once in a new state, at each limit; none in the same state
            assert ranked == ([len(set(zip(queries, ids, strict=True)))] if changed else [])


@pytest.mark.parametrize("seed, overrides", [
    (1, {"checks": {"interval_s": 60}, "edit": {"delay_s": None}}),
    (2, {"checks": {"interval_s": 60}, "saves": {"count": 1200}, "edit": {"delay_s": 60}}),
])
def test_a_day_gives_the_same_tables_with_and_without_the_title_answers_kept(monkeypatch, seed, overrides):
    """A day checked every minute meets one state of the store at many checks; with
    search_titles' answers never kept (a new dict at every check) its tables are identical."""
    params = DayParams.model_validate(overrides)
    ranked = counted_title_ranking(monkeypatch)
    kept, _ = simulate_day(params, seed)
    kept_ranked = sum(ranked)
    ranked.clear()
    monkeypatch.setattr(MemoryStore, "_title_answers", lambda self, kb: {})
    plain, _ = simulate_day(params, seed)
    assert kept_ranked < sum(ranked)  # the day did answer searches again
    assert kept.keys() == plain.keys()
    for name in kept:
        pd.testing.assert_frame_equal(kept[name], plain[name], check_exact=True)


def test_validate_each_checks_a_batch_of_plain_strings_at_once_and_the_rest_one_by_one(monkeypatch):
    """A batch of plain strings within the query's lengths never reaches the field's compiled
    validator; a batch holding a value too short, too long or not a string is checked value by
    value and refused as the call with that value would be, every time."""
    compiled = []
    real = schema_module._field_validator

    def counting(name, field):
        check = real(name, field)

        def counted(value):
            compiled.append(value)
            return check(value)
        return counted

    monkeypatch.setattr(schema_module, "_field_validator", counting)
    base = {"knowledge_base_id": "kb-1", "limit": 5}
    schema_module.validate_each("search_knowledge_base", base, "query", ["alpha beta", "gamma"])
    assert compiled == []
    for values in (["alpha beta", "x"], ["gamma", "y" * 201], ["alpha beta", 7]):
        compiled.clear()
        with pytest.raises(ToolError) as error:
            schema_module.validate_each("search_knowledge_base", base, "query", values)
        assert error.value.to_dict() == outcome_of(schema_module._validate, "search_knowledge_base",
                                                   {**base, "query": values[1]})[1]
        assert compiled == values
