"""Articles written from a vocabulary's words, and store copies that share their articles.

A knowledge base created from words (contents rendered when read, sizes counted from the
words' lengths, the vocabulary checked once) holds what one created from the rendered texts
holds; copies of a store share article objects until one of them changes an article, and
each then holds what a store given only its own changes holds.
"""

from __future__ import annotations

import copy
import random

import numpy as np
import pytest

import kbsim.sim.corpus as corpus_module
from kbsim.params import DayParams
from kbsim.sim.corpus import Corpus, TextCorpus
from kbsim.sim.world import streams
from kbsim.store import MemoryStore, ToolError
from kbsim.store.arena import ArenaIndex
from kbsim.store.bm25 import BM25Index
from kbsim.store.rules import SNIPPET_CHARS, hit_json_size, json_size, read_json_size, read_result, search_hit
from kbsim.store.written import WrittenArticle, WrittenArticles, WrittenText, content_text, snippet_text, title_text


def written_at_random(seed: int) -> WrittenArticles:
    rng = np.random.default_rng(seed)
    vocabulary = [f"w{i}" for i in range(int(rng.integers(2, 30)))] + ["9lives", "w1"]  # a word twice
    n = int(rng.integers(0, 60))
    title = rng.integers(len(vocabulary), size=(n, int(rng.integers(1, 5))))
    content = rng.integers(len(vocabulary), size=(n, int(rng.integers(1, 70))))  # past the snippet
    return WrittenArticles(vocabulary, title.astype(np.int32), content.astype(np.int32))


@pytest.mark.parametrize("index", [ArenaIndex, BM25Index])
@pytest.mark.parametrize("seed", range(6))
def test_a_knowledge_base_written_from_words_holds_what_its_texts_give(seed, index):
    written = written_at_random(seed)
    texts = [(title, written.content_of(i)) for i, title in enumerate(written.titles())]
    plain, from_words = MemoryStore(index=index), MemoryStore(index=index)
    assert plain.create_knowledge_base("kb-1", texts, at=3.0) == from_words.create_knowledge_base_written(
        "kb-1", written, at=3.0
    )
    for article_id in plain.published_article_ids("kb-1"):
        made = from_words._kbs["kb-1"].articles[article_id]
        assert isinstance(made, WrittenArticle) == (index is ArenaIndex)  # kept as words on the arena only
        # the sizes counted from the words, before the content is ever rendered
        reference = plain.article_state("kb-1", article_id)
        assert made.hit_size("kb-1") == hit_json_size("kb-1", reference) == json_size(search_hit("kb-1", reference))
        assert made.read_size("kb-1") == read_json_size("kb-1", reference) == json_size(read_result("kb-1", reference))
    assert from_words.snapshot() == plain.snapshot()
    queries = [title for title, _ in texts[:10]] + ["w1 w2 w3", "9lives"]
    for query in queries:
        assert from_words.tool_search("kb-1", query, 10) == plain.tool_search("kb-1", query, 10)
    for article_id in plain.published_article_ids("kb-1")[:5]:
        assert from_words.tool_read("kb-1", article_id) == plain.tool_read("kb-1", article_id)


def test_the_written_texts_are_the_corpus_format():
    vocabulary = ["ab", "cd", "9e"]
    assert title_text(vocabulary, [1, 0]) == "Cd ab" and title_text(vocabulary, [2]) == "9e"
    assert content_text(vocabulary, [0, 0, 2]) == "ab ab 9e."
    written = WrittenArticles(vocabulary, np.array([[1, 0]]), np.array([[0, 0, 2]]))
    assert written.titles() == ["Cd ab"] and written.content_of(0) == "ab ab 9e."
    assert written.content_lengths().tolist() == [len("ab ab 9e.")]


def test_a_written_content_is_rendered_once_read_and_copies_keep_it_unrendered():
    written = WrittenArticles(["ab", "cd"], np.array([[0]]), np.array([[1, 0]]))
    (article,) = written.articles(["art-000001"], 0, "kb-1")
    twin = copy.copy(article)  # what article_state returns: not rendered by the copy
    with pytest.raises(AttributeError):
        WrittenArticle.__mro__[1].__dict__["content"].__get__(twin)
    assert twin.content == "cd ab." and article.content == "cd ab."
    assert twin == article and type(copy.copy(twin)) is WrittenArticle
    twin.content = "replaced"
    assert twin.content == "replaced" and article.content == "cd ab."


@pytest.mark.parametrize("seed", range(20))
def test_a_snippet_is_the_contents_first_characters_written_from_its_first_words(seed):
    rng = np.random.default_rng(seed)
    # words of 1 to 12 letters: a snippet from 14 to 160 words, the content shorter or longer
    vocabulary = ["".join("abcdefghijkl"[: int(n)]) + str(i) for i, n in enumerate(rng.integers(0, 12, size=40))]
    for n_words in [0, 1, 5, 31, 32, 33, int(rng.integers(1, 200))]:
        words = rng.integers(len(vocabulary), size=n_words).astype(np.int32)
        full = content_text(vocabulary, words.tolist())
        assert snippet_text(vocabulary, words) == full[:SNIPPET_CHARS]
        text = WrittenText(vocabulary, words, len(full))
        assert text.snippet_of() == full[:SNIPPET_CHARS]
    written = written_at_random(seed)
    for i in range(len(written)):
        assert written.snippet_of(i) == written.content_of(i)[:SNIPPET_CHARS]


def test_a_search_hit_writes_an_unrendered_snippet_and_keeps_no_text():
    written = WrittenArticles(["ab", "cd"], np.array([[0]]), np.array([[1, 0] * 60]))
    (article,) = written.articles(["art-000001"], 0, "kb-1")
    hit = search_hit("kb-1", article)
    assert hit["snippet"] == content_text(["ab", "cd"], [1, 0] * 60)[:SNIPPET_CHARS]
    assert json_size(hit) == article.hit_size("kb-1")
    with pytest.raises(AttributeError):  # still unrendered
        WrittenArticle.__mro__[1].__dict__["content"].__get__(article)
    article.content = "rendered " * 30  # a rendered content: the snippet is its own
    assert article.snippet() == article.content[:SNIPPET_CHARS]


def test_a_vocabulary_whose_words_are_not_tokens_is_refused_and_nothing_is_created():
    for vocabulary in (["ab", "C"], ["a b", "c"], ["", "c"], ["é", "c"], ["a.", "c"]):
        store = MemoryStore()
        with pytest.raises(ToolError, match="written.vocabulary"):
            store.create_knowledge_base_written("kb-1", WrittenArticles(vocabulary, np.array([[0]]), np.array([[1]])))
        assert store.knowledge_base_ids() == []


def store_changes(rng: random.Random, store: MemoryStore, steps: int, tag: str) -> None:
    """Saves (content, title, both), agent edits, unpublishing and publishing, at random."""
    client = store.client({"kb-1"}, clock=lambda: 50.0)
    for step in range(steps):
        ids = store.published_article_ids("kb-1")
        roll = rng.random()
        at = 10.0 + step
        if roll < 0.3 and ids:
            store.save_article("kb-1", rng.choice(ids), at=at, content=f"saved {tag} {step} w1")
        elif roll < 0.45 and ids:
            store.save_article("kb-1", rng.choice(ids), at=at, title=f"Retitled {tag} {step}")
        elif roll < 0.6 and ids:
            article_id = rng.choice(ids)
            current = client.call("read_knowledge_article", {"knowledge_base_id": "kb-1", "article_id": article_id})
            client.call("edit_knowledge_article", {
                "knowledge_base_id": "kb-1", "article_id": article_id, "content": current["content"] + " edited",
                "title": f"Edited {tag} {step}", "expected_version": current["updated_at"],
                "idempotency_key": f"{tag}-{step}",
            })
        elif roll < 0.75 and ids:
            store.unpublish_article("kb-1", rng.choice(ids), at=at)
        else:
            store.publish_article("kb-1", title=f"New {tag} {step}", content="w2 w3", at=at)


@pytest.mark.parametrize("index", [ArenaIndex, BM25Index])
@pytest.mark.parametrize("seed", range(6))
def test_copies_share_articles_until_they_change_them(seed, index):
    """A store, its copy and the copy's copy, each changed on its own (interleaved), hold what
    stores given only their own changes hold; the copies' articles start as the very objects."""
    written = written_at_random(seed + 1)

    def fresh() -> MemoryStore:
        store = MemoryStore(index=index)
        store.create_knowledge_base_written("kb-1", written, at=0.0)
        return store

    stores = [fresh()]
    stores.append(stores[0].copy())
    stores.append(stores[1].copy(event_retention_s=30.0))
    first = stores[0]._kbs["kb-1"].articles
    assert all(a is b for a, b in zip(first.values(), stores[2]._kbs["kb-1"].articles.values(), strict=True))
    rngs = [random.Random(seed * 10 + i) for i in range(3)]
    for round_ in range(4):
        for i, store in enumerate(stores):
            store_changes(rngs[i], store, 5, f"{i}.{round_}")
    rngs = [random.Random(seed * 10 + i) for i in range(3)]
    for i, store in enumerate(stores):
        alone = fresh() if i < 2 else fresh().copy(event_retention_s=30.0)
        for round_ in range(4):
            store_changes(rngs[i], alone, 5, f"{i}.{round_}")
        assert store.snapshot() == alone.snapshot(), i


@pytest.mark.parametrize("drawn_at_once", [1, 7, 64, 1 << 20])
def test_the_corpus_draws_its_articles_words_as_one_draw_would(monkeypatch, drawn_at_once):
    """article_words (the bodies drawn a block of rows at a time) and articles_and_words give
    the words of the texts a single draw of all the uniforms gives."""
    params = DayParams(corpus={"articles": 50, "body_words": 9}).corpus
    corpus = Corpus.build(params)
    rng = streams(3)["corpus"]
    title = rng.integers(len(corpus.vocabulary), size=(50, params.title_words))
    assert not any(len(set(row)) < len(row) for row in title.tolist())  # no redraw in this seed
    body = np.searchsorted(corpus.body_weights, rng.random((50, 9)), side="right")
    body = np.minimum(body, len(corpus.vocabulary) - 1)
    monkeypatch.setattr(corpus_module, "_DRAWN_AT_ONCE", drawn_at_once)
    got_title, got_body = corpus.article_words(streams(3)["corpus"])
    assert np.array_equal(got_title, title) and np.array_equal(got_body, body)
    pairs, body_words, title_words = corpus.articles_and_words(streams(3)["corpus"])
    assert np.array_equal(body_words, body) and np.array_equal(title_words, title)
    first = [corpus.vocabulary[w] for w in title[0]]
    first[0] = first[0].capitalize()  # the corpus's titles, as it wrote them before words were kept
    assert pairs[0] == (" ".join(first), " ".join(corpus.vocabulary[w] for w in body[0]) + ".")


@pytest.mark.parametrize("index", [ArenaIndex, BM25Index])
@pytest.mark.parametrize("seed", range(5))
def test_a_save_of_words_holds_what_a_save_of_their_text_holds(seed, index):
    """save_article_words against save_article of the text the words write: starting articles
    written from words, articles published as text (so not written), a copy of the store,
    with and without a new title, words no article had, an empty content."""
    written = written_at_random(seed + 20)
    rng = np.random.default_rng(seed)
    vocabulary = written.vocabulary
    words_store, text_store = MemoryStore(index=index), MemoryStore(index=index)
    for store in (words_store, text_store):
        store.create_knowledge_base_written("kb-1", written, at=0.0)
        store.publish_article("kb-1", title="Plain text", content="w1 w1 other", at=1.0)
    words_store, text_store = words_store.copy(), text_store.copy()
    ids = text_store.published_article_ids("kb-1")
    for step in range(40):
        article_id = ids[int(rng.integers(len(ids)))]
        words = rng.integers(len(vocabulary), size=int(rng.integers(0, 80))).astype(np.int32)
        title = None if rng.random() < 0.6 else f"Title {step} w2"
        at = 2.0 + step
        assert words_store.save_article_words(
            "kb-1", article_id, at=at, vocabulary=vocabulary, words=words, title=title
        ) == text_store.save_article("kb-1", article_id, at=at, content=content_text(vocabulary, words.tolist()),
                                     title=title)
        # sizes counted from the words, before any content is rendered
        assert words_store.search_titles("kb-1", ["w1 w2", "title"], [article_id, article_id], 20) == (
            text_store.search_titles("kb-1", ["w1 w2", "title"], [article_id, article_id], 20)
        )
        assert words_store.read_many("kb-1", [article_id]) == text_store.read_many("kb-1", [article_id])
    assert words_store.snapshot() == text_store.snapshot()
    for query in ["w1", "w3 w4 9lives", "plain text"]:
        assert words_store.tool_search("kb-1", query, 10) == text_store.tool_search("kb-1", query, 10)
    with pytest.raises(ToolError, match="vocabulary"):
        words_store.save_article_words("kb-1", ids[0], at=90.0, vocabulary=["Upper"], words=np.array([0]))
    for bad in (np.array([len(vocabulary)]), np.array([[0]]), np.array([0.5]), [0]):
        with pytest.raises(ToolError, match="words"):
            words_store.save_article_words("kb-1", ids[0], at=90.0, vocabulary=vocabulary, words=bad)


_BREAKS = ["\n", "\r", "\r\n", "\x0b", "\x0c", "\x1c", "\x85", "\u2028", ""]


def test_a_text_corpus_pools_the_lines_the_articles_split_into():
    """TextCorpus.from_articles (one splitting of the joined articles) keeps the lines, but
    blank ones and headings, that splitting each article gives: every kind of line break,
    at an article's end or start, blank and indented lines, headings, empty articles."""
    rng = random.Random(5)
    pieces = ["text", "  indented", "# heading", "   # indented heading", "", " ", "\t", "naïve été", "a#b"]
    for _ in range(300):
        contents = ["".join(rng.choice(pieces) + rng.choice(_BREAKS) for _ in range(rng.randint(0, 6)))
                    for _ in range(rng.randint(0, 6))]
        expected = [line for content in contents for line in content.splitlines()
                    if line.strip() and not line.lstrip().startswith("#")]
        pooled = TextCorpus.from_articles(["t"] * len(contents), contents).lines
        assert pooled == (expected or ["Updated."])


def test_a_knowledge_base_holds_the_arena_index_from_its_size_on():
    """By default a knowledge base created with ARENA_FROM articles or more holds the arena
    index and keeps contents written from words as words; a smaller one the plain index and texts."""
    import kbsim.store.memory as memory

    rng = np.random.default_rng(1)
    for n, kind in ((memory.ARENA_FROM - 1, BM25Index), (memory.ARENA_FROM, ArenaIndex)):
        written = WrittenArticles(["ab", "cd", "ef"], rng.integers(3, size=(n, 2)), rng.integers(3, size=(n, 5)))
        for create in ("written", "texts"):
            store = MemoryStore()
            if create == "written":
                store.create_knowledge_base_written("kb-1", written)
            else:
                texts = [(title, written.content_of(i)) for i, title in enumerate(written.titles())]
                store.create_knowledge_base("kb-1", texts)
            kb = store._kbs["kb-1"]
            assert type(kb.index) is kind and kb.keeps_words == (kind is ArenaIndex)
            assert type(store.copy()._kbs["kb-1"].index) is kind
