"""The in-memory store: knowledge bases, articles, event logs, idempotency records.

Plain synchronous code with no notion of simulated time beyond the ``at``
values passed in, so the simulation, the tests and the MCP server all share
it. Every public method checks its arguments first (:mod:`kbsim.store.rules`),
and every mutator either fully applies or raises ``ToolError`` having changed
nothing.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from itertools import chain
from typing import Any

import numpy as np

from kbsim.store.analyzer import ASCII, Analyzer
from kbsim.store.arena import ArenaIndex
from kbsim.store.bm25 import BM25Index
from kbsim.store.bulk import ArticleWords, check_words
from kbsim.store.client import Client, Clock
from kbsim.store.errors import ToolError, echoed
from kbsim.store.protocol import SearchIndex
from kbsim.store.rules import (
    Article,
    arguments_digest,
    article_id_for,
    article_not_found,
    check_article_ids,
    check_at,
    check_count,
    check_edit_limits,
    check_expected_version,
    check_new_kb_id,
    check_next_version,
    check_now_us,
    check_optional_text,
    check_poll_cursor,
    check_replay,
    check_retention,
    check_save_changes,
    check_text,
    check_texts,
    checked_articles,
    citation,
    error_json_size,
    json_size,
    kb_exists,
    kb_not_found,
    next_article_id,
    read_result,
    search_hit,
    shown,
)
from kbsim.store.schema import TOOL_NAMES, validate_arguments
from kbsim.store.subscriptions import Subscribable
from kbsim.store.timefmt import format_version, seconds_to_us
from kbsim.store.written import (
    WrittenArticles,
    WrittenText,
    check_vocabulary,
    content_text,
    word_lengths,
    write_content,
)


@dataclass(slots=True)
class KnowledgeBase:
    """One knowledge base's state: its articles, search index, event log and counters."""
    kb_id: str
    articles: dict[str, Article] = field(default_factory=dict)
    index: SearchIndex = field(default_factory=ArenaIndex)
    # the contents of articles written from words are kept as their words (an arena index's
    # knowledge base), rather than written out
    keeps_words: bool = False
    # (sequence, type, article_id, version_us); events[i].sequence == first_seq + i
    events: list[tuple[int, str, str, int]] = field(default_factory=list)
    first_seq: int = 1
    next_seq: int = 1
    # ids of the articles unpublished (an unpublished article is never published again)
    unpublished: set[str] = field(default_factory=set)
    # the articles this knowledge base has made its own since it was last copied (it shares
    # the others' objects with its copies, and copies one before changing it); None: all
    owned: set[str] | None = None


_EMPTY_SEARCH_LEN = len('{"results":[]}')
#: A first fill of at least this many articles is indexed in one batch (``fill_texts``);
#: smaller ones are faster article by article (benchmarks/bench_index_memory.py times both).
_BULK_FILL = 1_000
#: A knowledge base created with at least this many articles holds the arena index (and keeps
#: contents written from words as their words); a smaller one the plain dict index, which
#: ranks alike and is faster on a few postings a term (numpy's cost per call is more than a
#: dict's on them: the reference day of 400 articles took 7% longer on the arena, and from
#: 1,000 articles on 1-4% less, in ad-hoc interleaved runs).
ARENA_FROM = 1_000


#: dtype -> whether it is an integer dtype (``np.issubdtype(dtype, np.integer)``), for the
#: saves' checks of their words: the test costs a microsecond a save, the look-up nothing.
_INTEGER_DTYPES: dict[np.dtype, bool] = {}


def _is_integer(dtype: np.dtype) -> bool:
    """``np.issubdtype(dtype, np.integer)``, remembered per dtype."""
    known = _INTEGER_DTYPES.get(dtype)
    if known is None:
        known = _INTEGER_DTYPES[dtype] = bool(np.issubdtype(dtype, np.integer))
    return known


def _json_copy(value: Any) -> Any:
    """``copy.deepcopy`` of a JSON-shaped value (dicts, lists, strings, numbers, booleans,
    None): new containers, the same immutable leaves. Several times faster than deepcopy's
    generic protocol, on the edit results the idempotency records keep and replay; any other
    value goes to ``copy.deepcopy``."""
    kind = type(value)
    if kind is dict:
        return {key: _json_copy(item) for key, item in value.items()}
    if kind is list:
        return [_json_copy(item) for item in value]
    if kind in (str, int, float, bool) or value is None:
        return value
    return copy.deepcopy(value)


class MemoryStore(Subscribable):
    """One or more knowledge bases held in memory.

    Args:
        event_retention_s: keep events for this many simulated seconds after
            they were written; ``None`` (the default) keeps everything. A poll
            from a cursor older than the oldest kept event gets
            ``cursor_expired``.
        index: makes each knowledge base's empty search index, called with the
            knowledge base's ``analyzer=``; by default the arena index
            (:class:`~kbsim.store.arena.ArenaIndex`) for a knowledge base created with
            :data:`ARENA_FROM` articles or more, else
            :class:`~kbsim.store.bm25.BM25Index`, the plain reference it ranks exactly as.
    """

    def __init__(
        self, event_retention_s: float | None = None, *, index: Callable[..., SearchIndex] | None = None
    ) -> None:
        event_retention_s = check_retention(event_retention_s)
        self._new_index = index
        # the vocabularies checked for save_article_words (shared with copies), and each one's
        # words' lengths
        self._vocabularies: list[tuple[Any, Any]] = []
        self.event_retention_us = (
            None if event_retention_s is None else seconds_to_us(event_retention_s)
        )
        self._kbs: dict[str, KnowledgeBase] = {}
        # idempotency_key -> (digest of the validated arguments, first result)
        self._idempotency: dict[str, tuple[str, dict[str, Any]]] = {}
        # kb_id -> (the knowledge base, its state's stamp, {(query, article_id, limit): answer}):
        # search_titles' answers for one state of a knowledge base (see _title_answers)
        self._title_cache: dict[str, tuple[KnowledgeBase, tuple[int, int], dict]] = {}

    # -- people's side -------------------------------------------------------

    def create_knowledge_base(
        self, kb_id: str, articles: Iterable[tuple[str, str]] = (), *, at: float = 0.0,
        article_ids: Iterable[str] | None = None, analyzer: Analyzer = ASCII,
    ) -> list[str]:
        """Create a knowledge base, its id new, holding ``articles`` published at ``at``.

        All or nothing: the knowledge base appears with every one of the
        ``(title, content)`` pairs, or (an error, or an interruption while
        ``articles`` is consumed) not at all. The state is that of publishing
        them one by one. Returns the articles' ids: ``article_ids`` (the source's own,
        one per article, each one the tools can carry), else ``art-000001``,
        ``art-000002``, ... ``analyzer`` makes the knowledge base's search terms (its
        documents' and its queries'), for as long as it exists.
        """
        return self._create(kb_id, articles, at, article_ids=article_ids, analyzer=analyzer)

    def create_knowledge_base_from_words(
        self, kb_id: str, articles: Iterable[tuple[str, str]], words: ArticleWords, *, at: float = 0.0
    ) -> list[str]:
        """:meth:`create_knowledge_base`, given also the articles' tokens as vocabulary
        indices (a synthetic corpus knows them): the same state, the search index built from
        them in bulk (:meth:`BM25Index.fill`) instead of article by article.

        Why it exists: publishing 100,000 synthetic articles one by one took 11 s, most of
        it counting terms and inserting postings. Each article's words are first checked
        against its text; words that are not the texts' tokens are refused, naming the first
        article that differs, and nothing is created.
        """
        return self._create(kb_id, articles, at, words, from_words=True)

    def create_knowledge_base_written(self, kb_id: str, written: WrittenArticles, *, at: float = 0.0) -> list[str]:
        """:meth:`create_knowledge_base` of the articles ``written`` from a vocabulary's words:
        the state of publishing their texts (:func:`~kbsim.store.written.title_text`,
        :func:`~kbsim.store.written.content_text`), built from the words. Nothing is created
        if the vocabulary or the words are refused (:meth:`WrittenArticles.check`).

        Why it exists: building a 100,000-article starting knowledge base from its texts took
        7 s (writing every text, checking each one's words, sizing each one's results). Here
        the vocabulary is checked once (its words are then the texts' tokens), the search
        index is filled from the words, the sizes are counted from the words' lengths, and
        each content is rendered only when first read.
        """
        check_new_kb_id(kb_id)
        at_us = check_at(at)
        if kb_id in self._kbs:
            raise kb_exists(kb_id)
        if not isinstance(written, WrittenArticles):
            raise ToolError("invalid_argument", f"written must be WrittenArticles, got {type(written).__name__}")
        written.check()
        self._checked(written.vocabulary)
        kb = self._knowledge_base(kb_id, len(written))
        if kb.keeps_words:
            ids = [article_id_for(number) for number in range(1, len(written) + 1)]
            kb.articles = dict(zip(ids, written.articles(ids, at_us, kb_id), strict=True))
            kb.events = [(seq, "article.published", article_id, at_us) for seq, article_id in enumerate(ids, 1)]
            kb.next_seq = len(ids) + 1
        else:  # written out: a few articles on the plain index
            texts = [(title, written.content_of(i)) for i, title in enumerate(written.titles())]
            ids = self._publish_all(kb, texts, at_us)
        kb.index.fill(ids, written.vocabulary, written.content, written.title)
        self._kbs[kb_id] = kb
        return ids

    def _create(self, kb_id: str, articles, at: float, words=None, *, from_words: bool = False,
                article_ids=None, analyzer: Analyzer = ASCII) -> list[str]:
        """The two creations: every article (and, ``from_words``, the words) checked before
        anything is made, then indexed from the words, in one batch from the texts
        (:data:`_BULK_FILL` articles or more: the same index), or article by article."""
        check_new_kb_id(kb_id)
        at_us = check_at(at)
        if kb_id in self._kbs:
            raise kb_exists(kb_id)
        pairs = list(checked_articles(articles))
        if from_words:
            check_words(words, pairs)
        if not isinstance(analyzer, Analyzer):
            raise ToolError("invalid_argument", f"analyzer must be an Analyzer, got {type(analyzer).__name__}")
        own_ids = None if article_ids is None else check_article_ids(article_ids, len(pairs))
        kb = self._knowledge_base(kb_id, len(pairs), analyzer)
        ids = self._publish_all(kb, pairs, at_us, own_ids)
        if from_words:
            kb.index.fill(ids, list(words.vocabulary), words.content, words.title)
        elif len(pairs) >= _BULK_FILL:
            kb.index.fill_texts([(article_id, *pair) for article_id, pair in zip(ids, pairs, strict=True)])
        else:
            for article_id, (title, content) in zip(ids, pairs, strict=True):
                kb.index.add(article_id, title, content)
        self._kbs[kb_id] = kb
        return ids

    def copy(self, event_retention_s: float | None = None) -> MemoryStore:
        """An independent copy of every knowledge base, with its own retention window.

        Cheaper than publishing a corpus again: the simulation builds each seed's starting
        knowledge base once and copies it for every day. The copy and the original share
        their article objects, each copying one before it first changes it (an article's
        cached JSON sizes, the same for all that share it, are filled in place); the search
        index is copied.
        """
        twin = MemoryStore(event_retention_s=check_retention(event_retention_s), index=self._new_index)
        for kb_id, kb in self._kbs.items():
            kb.owned = set()
            twin._kbs[kb_id] = KnowledgeBase(
                kb_id,
                keeps_words=kb.keeps_words,
                articles=dict(kb.articles),
                index=kb.index.copy(),
                events=list(kb.events),
                first_seq=kb.first_seq,
                next_seq=kb.next_seq,
                unpublished=set(kb.unpublished),
                owned=set(),
            )
        twin._idempotency = copy.deepcopy(self._idempotency)
        twin._vocabularies = self._vocabularies
        return twin

    def knowledge_base_ids(self) -> list[str]:
        """Every knowledge base's id, in creation order."""
        return list(self._kbs)

    def analyzer_name(self, kb_id: str) -> str:
        """The :attr:`~kbsim.store.analyzer.Analyzer.name` of the knowledge base's analyzer."""
        return self._kb(kb_id).index.analyzer.name

    def publish_article(self, kb_id: str, *, title: str, content: str, at: float) -> str:
        """Publish a new article; returns its id."""
        kb = self._kb(kb_id)
        check_text(title, "title")
        check_text(content, "content")
        article_id = self._publish(kb, title, content, check_at(at))
        kb.index.add(article_id, title, content)
        return article_id

    def save_article(
        self,
        kb_id: str,
        article_id: str,
        *,
        at: float,
        content: str | None = None,
        title: str | None = None,
    ) -> str:
        """A person's save of a published article; returns the new ``updated_at``."""
        check_text(kb_id, "kb_id")
        check_text(article_id, "article_id")
        at_us = check_at(at)
        check_optional_text(content, "content")
        check_optional_text(title, "title")
        check_save_changes(content, title)
        article = self._published(kb_id, article_id)
        return self._apply_update(self._kbs[kb_id], article, at_us, content, title)

    def save_article_words(
        self, kb_id: str, article_id: str, *, at: float, vocabulary, words, title: str | None = None
    ) -> str:
        """:meth:`save_article` with the content written from ``vocabulary``'s ``words``
        (:func:`~kbsim.store.written.content_text`): the same state, the content kept as its
        words (rendered when first read) and indexed from them.

        Why it exists: a synthetic day's saves write each new body from vocabulary words; a
        save of the text tokenized it, counted it and looked every term up again (and wrote
        it, where most saved bodies are never read). The vocabulary is checked once (its
        words are then the text's tokens); each save checks only that its words index it.

        A subclass that overrides :meth:`save_article` (a backend wrapping this store, say,
        counting saves) has this save made through its ``save_article``, with the text.
        """
        check_text(kb_id, "kb_id")
        check_text(article_id, "article_id")
        at_us = check_at(at)
        check_optional_text(title, "title")
        lengths = self._checked(vocabulary)
        if not isinstance(words, np.ndarray) or words.ndim != 1 or not _is_integer(words.dtype):
            raise ToolError("invalid_argument", f"words must be a 1-D integer array, got {shown(words)}")
        if words.size and (words.min() < 0 or words.max() >= len(vocabulary)):
            raise ToolError("invalid_argument", "words holds an index outside the vocabulary")
        if type(self).save_article is not MemoryStore.save_article:
            return self.save_article(kb_id, article_id, at=at, content=content_text(vocabulary, words.tolist()),
                                     title=title)
        article = self._published(kb_id, article_id)
        kb = self._kbs[kb_id]
        if not kb.keeps_words:  # written out, on the plain index
            return self._apply_update(kb, article, at_us, content_text(vocabulary, words.tolist()), title)
        words = words.astype(np.int32, copy=False)  # kept with the article: 4 bytes a word
        text = WrittenText(vocabulary, words, int(lengths[words].sum()) + max(words.size, 1))
        return self._apply_update(kb, article, at_us, None, title, text)

    def _knowledge_base(self, kb_id: str, articles: int, analyzer: Analyzer = ASCII) -> KnowledgeBase:
        """A new, empty knowledge base that ``articles`` articles will be published into: its
        index this store's kind, or by their number (:data:`ARENA_FROM`), terms by ``analyzer``."""
        if self._new_index is not None:
            index = self._new_index(analyzer=analyzer)
        else:
            index = (ArenaIndex if articles >= ARENA_FROM else BM25Index)(analyzer=analyzer)
        return KnowledgeBase(kb_id, index=index, keeps_words=isinstance(index, ArenaIndex))

    def _checked(self, vocabulary) -> np.ndarray:
        """The words' lengths of ``vocabulary``, checked (:func:`check_vocabulary`) the
        first time this store or one it was copied from sees it."""
        for known, lengths in self._vocabularies:
            if known is vocabulary:
                return lengths
        check_vocabulary(vocabulary)
        lengths = word_lengths(vocabulary)
        self._vocabularies.append((vocabulary, lengths))
        return lengths

    def unpublish_article(self, kb_id: str, article_id: str, *, at: float, log_event: bool = True) -> str:
        """Take an article out of search and reads; returns its final ``updated_at``.

        ``log_event=False`` writes no ``article.unpublished`` event: the article simply stops
        being readable (``events.log_unpublish: false``, issue 27).
        """
        check_text(kb_id, "kb_id")
        check_text(article_id, "article_id")
        at_us = check_at(at)
        article = self._published(kb_id, article_id)
        version_us = check_next_version(max(at_us, article.version_us + 1), article_id)
        kb = self._kbs[kb_id]
        article = self._own(kb, article)
        article.set_version(version_us)
        article.published = False
        kb.unpublished.add(article_id)
        kb.index.remove(article_id)
        if log_event:
            self._append_event(kb, "article.unpublished", article_id, article.version_us)
        self._article_changed(kb_id, article_id, "article.unpublished", article.version_us)
        return article.updated_at

    # -- ground truth (never through the agent's tools) ------------------------

    def current_version(self, kb_id: str, article_id: str) -> str | None:
        """The article's ``updated_at`` if it is published, else ``None``."""
        # (people's draws ask it of every candidate article: plain strings looked up at once)
        kb = self._kbs.get(kb_id) if type(kb_id) is str else None
        if kb is None:
            kb = self._kb(kb_id)
        if type(article_id) is not str:
            check_text(article_id, "article_id")
        article = kb.articles.get(article_id)
        if article is None or not article.published:
            return None
        return article.updated_at

    def article_state(self, kb_id: str, article_id: str) -> Article:
        """A copy of one article's full state, published or not."""
        article = self._kb(kb_id).articles.get(check_text(article_id, "article_id"))
        if article is None:
            raise article_not_found(kb_id, article_id)
        return copy.copy(article)

    def published_article_ids(self, kb_id: str) -> list[str]:
        """Every published article's id, in publication order."""
        return [a.article_id for a in self._kb(kb_id).articles.values() if a.published]

    def unpublished_article_ids(self, kb_id: str) -> list[str]:
        """Every unpublished article's id, sorted: the few a day unpublishes, without a
        pass over every article as :meth:`published_article_ids` makes."""
        return sorted(self._kb(kb_id).unpublished)

    def latest_sequence(self, kb_id: str) -> int:
        """The sequence number of the knowledge base's latest event (0 before any)."""
        return self._kb(kb_id).next_seq - 1

    def snapshot(self) -> dict[str, Any]:
        """A deep, comparable copy of every piece of state (for tests)."""
        return {
            "kbs": {
                kb_id: {
                    "articles": [
                        (a.article_id, a.title, a.content, a.published, a.version_us)
                        for a in kb.articles.values()
                    ],
                    "events": list(kb.events),
                    "first_seq": kb.first_seq,
                    "next_seq": kb.next_seq,
                    "index_docs": len(kb.index),
                }
                for kb_id, kb in self._kbs.items()
            },
            "idempotency": copy.deepcopy(self._idempotency),
        }

    # -- the agent's side ------------------------------------------------------

    def client(self, grants: set[str] | frozenset[str], clock: Clock) -> Client:
        """The agent's view: tool calls limited to ``grants``, timed by ``clock()``."""
        return Client(self, grants, clock)

    def has_knowledge_base(self, kb_id: str) -> bool:
        """Whether a knowledge base ``kb_id`` exists."""
        return check_text(kb_id, "kb_id") in self._kbs

    def tool_search(self, kb_id: str, query: str, limit: int) -> dict[str, Any]:
        """``search_knowledge_base``: the ``limit`` best-ranked published articles for ``query``."""
        kb = self._kb(kb_id)
        check_text(query, "query")
        limit = check_count(limit, "limit", 1)
        articles = kb.articles
        return {
            "results": [
                search_hit(kb_id, articles[article_id]) for article_id, _score in kb.index.search(query, limit)
            ]
        }

    def search_many(
        self, kb_id: str, queries: list[str], limit: int
    ) -> list[tuple[list[tuple[str, str]], int]]:
        """For each query, the ``(article_id, title)`` of the hits ``tool_search`` would return,
        in its order, and ``json_size`` of that result, without building the hits.

        Why it exists: the agent's title check makes one search per cited title at one
        instant; :meth:`BM25Index.search_many` ranks them together, and each hit's JSON size
        is the article version's cached one (as :meth:`result_size` sums it). The
        plain path, ``tool_search`` and ``result_size`` call by call, is what the tests hold
        it to.
        """
        kb = self._kb(kb_id)
        queries = check_texts(queries, "queries")
        limit = check_count(limit, "limit", 1)
        articles = kb.articles
        ranked_lists = kb.index.search_many(queries, limit)
        pair_of, size_of = {}, {}
        for article_id in set(chain.from_iterable(ranked_lists)):
            article = articles[article_id]
            pair_of[article_id] = (article_id, article.title)
            size_of[article_id] = article.hit_size(kb_id)
        answers = []
        for ranked in ranked_lists:
            hits = list(map(pair_of.__getitem__, ranked))
            size = _EMPTY_SEARCH_LEN
            if ranked:  # the hits, comma-separated, inside '{"results":[]}'
                size += len(ranked) - 1 + sum(map(size_of.__getitem__, ranked))
            answers.append((hits, size))
        return answers

    def search_titles(
        self, kb_id: str, queries: list[str], article_ids: list[str], limit: int
    ) -> list[tuple[str | None, int]]:
        """For each query, the title of ``article_ids[i]``'s hit among those ``tool_search``
        would return (None when it is not among them), and ``json_size`` of that result,
        without building the hits.

        Why it exists: the agent's title check searches every cited title at one instant and
        looks only at the cited article's hit; at 100,000 articles that is tens of thousands
        of searches a check. The searches not yet answered in the knowledge base's present
        state (:meth:`_title_answers`) are ranked all at once (:meth:`_rank_titles`); the
        others are answered as before, since an answer, its size included, depends on that
        state alone. A day checked every minute meets the same state at about half its checks
        with 300 saves, and asks again every citation it asked before. The plain path,
        ``tool_search`` and ``result_size`` call by call, is what the tests hold it to.
        """
        kb = self._kb(kb_id)
        queries = check_texts(queries, "queries")
        article_ids = check_texts(article_ids, "article_ids")
        if len(article_ids) != len(queries):
            raise ToolError(
                "invalid_argument", f"article_ids has {len(article_ids)} items, queries {len(queries)}: one a query"
            )
        limit = check_count(limit, "limit", 1)
        answers = self._title_answers(kb)
        keys = [(query, article_id, limit) for query, article_id in zip(queries, article_ids, strict=True)]
        missing = [key for key in dict.fromkeys(keys) if key not in answers]
        if missing:
            ranked = self._rank_titles(
                kb, [query for query, _, _ in missing], [article_id for _, article_id, _ in missing], limit
            )
            answers.update(zip(missing, ranked, strict=True))
        return list(map(answers.__getitem__, keys))

    def _title_answers(self, kb: KnowledgeBase) -> dict[tuple[str, str, int], tuple[str | None, int]]:
        """:meth:`search_titles`' answers given in ``kb``'s present state, by (query, article,
        limit); emptied when the state has changed since they were given.

        The state's stamp is the next event sequence and the number of unpublished articles:
        every change of an article or of the search index (a publish, a save, an edit) appends
        an event, and an unpublish (whose event may not be logged) adds an unpublished article;
        neither count ever goes back, and a refused call changes nothing.
        """
        stamp = (kb.next_seq, len(kb.unpublished))
        cached = self._title_cache.get(kb.kb_id)
        if cached is not None and cached[0] is kb and cached[1] == stamp:
            return cached[2]
        answers: dict[tuple[str, str, int], tuple[str | None, int]] = {}
        self._title_cache[kb.kb_id] = (kb, stamp, answers)
        return answers

    def _rank_titles(
        self, kb: KnowledgeBase, queries: list[str], article_ids: list[str], limit: int
    ) -> list[tuple[str | None, int]]:
        """:meth:`search_titles` for checked arguments, every query ranked: the index ranks
        them all at once and hands the hits over end to end (:meth:`ArenaIndex.search_many_flat`);
        each result's size is its hits' cached sizes summed with numpy (whole numbers, exact in
        any order), and the cited article is looked for among them with one comparison of
        arrays."""
        kb_id = kb.kb_id
        counts, hits = kb.index.search_many_flat(queries, limit)
        articles = kb.articles
        size_of = {}
        for article_id in set(hits):  # a size already counted read as it is: no call (0.5 µs a hit)
            article = articles[article_id]
            size = article.hit_json_len
            size_of[article_id] = article.hit_size(kb_id) if size is None else size
        n = np.array(counts, dtype=np.int64)
        query_of = np.repeat(np.arange(n.size), n)
        hit_sizes = np.fromiter(map(size_of.__getitem__, hits), dtype=np.float64, count=len(hits))
        # the hits, comma-separated, inside '{"results":[]}'
        sizes = _EMPTY_SEARCH_LEN + np.bincount(query_of, weights=hit_sizes, minlength=n.size) + np.maximum(n - 1, 0)
        cited = np.repeat(np.array(article_ids, dtype=object), n) == np.array(hits, dtype=object)
        found = np.bincount(query_of[cited], minlength=n.size).astype(bool).tolist()
        return [
            (articles[article_id].title if present else None, size)
            for article_id, present, size in zip(article_ids, found, sizes.astype(np.int64).tolist(), strict=True)
        ]

    def read_many(self, kb_id: str, article_ids: list[str]) -> list[tuple[str | None, int]]:
        """For each article, the ``updated_at`` ``tool_read`` would return and ``json_size``
        of that result, or, when it would refuse with ``not_found``, None and the size of
        that error as an agent receives it (``{"error": ...}``).

        Why it exists: the re-read and poll checks read a hundred articles at one instant
        and look only at ``updated_at``; the result's size is the version's cached one (as
        :meth:`result_size` gives it), so no result dict is built. The plain path,
        ``tool_read`` and ``result_size`` call by call, is what the tests hold it to.
        """
        articles = self._kb(kb_id).articles
        answers: list[tuple[str | None, int]] = []
        for article_id in check_texts(article_ids, "article_ids"):
            article = articles.get(article_id)
            if article is None or not article.published:
                answers.append((None, error_json_size(article_not_found(kb_id, article_id))))
            else:
                answers.append((article.updated_at, article.read_size(kb_id)))
        return answers

    def tool_read(self, kb_id: str, article_id: str) -> dict[str, Any]:
        """``read_knowledge_article``: a published article's title, content and version."""
        return read_result(kb_id, self._published(kb_id, check_text(article_id, "article_id")))

    def result_size(self, name: str, result: dict[str, Any]) -> int:
        """``json_size(result)`` for a result this store just returned, without re-encoding
        search hits and reads: their sizes are cached per article version."""
        if not isinstance(name, str) or name not in TOOL_NAMES:
            raise ToolError(
                "invalid_argument", f"name must be one of {', '.join(TOOL_NAMES)}, got {echoed(name)}"
            )
        if not isinstance(result, dict):
            raise ToolError("invalid_argument", f"result must be a dict, got {type(result).__name__}")
        try:
            return self._cached_size(name, result)
        except (KeyError, TypeError, AttributeError, IndexError):  # not a result of this store's
            try:
                return json_size(result)
            except (TypeError, ValueError) as exc:
                raise ToolError("invalid_argument", f"result is not JSON: {exc}") from None

    def _cached_size(self, name: str, result: dict[str, Any]) -> int:
        if name == "search_knowledge_base":
            hits = result["results"]
            if not hits:
                return _EMPTY_SEARCH_LEN
            kb_id = hits[0]["citation"]["knowledge_base_id"]
            articles = self._kbs[kb_id].articles
            total = _EMPTY_SEARCH_LEN + len(hits) - 1
            for hit in hits:
                total += articles[hit["article_id"]].hit_size(kb_id)
            return total
        if name == "read_knowledge_article":
            kb_id = result["citation"]["knowledge_base_id"]
            return self._kbs[kb_id].articles[result["article_id"]].read_size(kb_id)
        return json_size(result)

    def tool_edit(self, arguments: dict[str, Any], now_us: int) -> dict[str, Any]:
        """``edit_knowledge_article``: apply the agent's edit, or replay the result its idempotency key recorded."""
        arguments = validate_arguments("edit_knowledge_article", arguments)
        check_edit_limits(arguments)
        now_us = check_now_us(now_us)
        kb_id = arguments["knowledge_base_id"]
        self._kb(kb_id)
        key = arguments["idempotency_key"]
        previous = self._idempotency.get(key)
        if previous is not None:
            first_digest, first_result = previous
            check_replay(key, first_digest, arguments)
            return {**_json_copy(first_result), "replayed": True}
        article_id = arguments["article_id"]
        article = self._published(kb_id, article_id)
        check_expected_version(arguments, article.version_us)
        kb = self._kbs[kb_id]
        updated_at = self._apply_update(kb, article, now_us, arguments["content"], arguments.get("title"))
        result = {
            "article_id": article_id,
            "title": kb.articles[article_id].title,  # its own copy's, changed
            "updated_at": updated_at,
            "citation": citation(kb_id, article_id, updated_at),
            "replayed": False,
        }
        self._idempotency[key] = (arguments_digest(arguments), _json_copy(result))
        return result

    def tool_poll(self, kb_id: str, after_sequence: int, limit: int, now_us: int) -> dict[str, Any]:
        """``poll_resource_events``: up to ``limit`` events after ``after_sequence`` still kept at ``now_us``."""
        kb = self._kb(kb_id)
        after_sequence = check_count(after_sequence, "after_sequence", 0)
        limit = check_count(limit, "limit", 1)
        now_us = check_now_us(now_us)
        # A poll is a read: it only hides what the window has dropped by now_us and
        # leaves the dropping itself to the next save, so it never changes state.
        oldest = kb.first_seq + self._expired_count(kb, now_us)
        latest = kb.next_seq - 1
        check_poll_cursor(after_sequence, oldest, latest)
        start = after_sequence + 1 - kb.first_seq
        chunk = kb.events[start : start + limit]
        events = [
            {
                "sequence": seq,
                "type": kind,
                "article_id": article_id,
                "updated_at": format_version(version),
            }
            for seq, kind, article_id, version in chunk
        ]
        next_sequence = chunk[-1][0] if chunk else after_sequence
        has_more = next_sequence < latest
        return {"events": events, "next_sequence": next_sequence, "has_more": has_more}

    # -- internals --------------------------------------------------------------

    def _kb(self, kb_id: str) -> KnowledgeBase:
        kb = self._kbs.get(check_text(kb_id, "kb_id"))
        if kb is None:
            raise kb_not_found(kb_id)
        return kb

    def _published(self, kb_id: str, article_id: str) -> Article:
        article = self._kb(kb_id).articles.get(check_text(article_id, "article_id"))
        if article is None or not article.published:
            raise article_not_found(kb_id, article_id)
        return article

    def _apply_update(
        self,
        kb: KnowledgeBase,
        article: Article,
        at_us: int,
        content: str | None,
        title: str | None,
        written: WrittenText | None = None,
    ) -> str:
        """Apply a save: a new version, the new content (a text, or ``written``) and title."""
        version_us = check_next_version(max(at_us, article.version_us + 1), article.article_id)
        article = self._own(kb, article)
        article.set_version(version_us)
        if content is not None:
            article.content = content
        if title is not None:
            article.title = title
        if written is None:
            kb.index.add(article.article_id, article.title, article.content)
        else:
            article = kb.articles[article.article_id] = write_content(article, written)
            kb.index.add_words(article.article_id, article.title, written.vocabulary, written.words)
        self._append_event(kb, "article.updated", article.article_id, article.version_us)
        self._article_changed(kb.kb_id, article.article_id, "article.updated", article.version_us)
        return article.updated_at

    def _own(self, kb: KnowledgeBase, article: Article) -> Article:
        """``kb``'s own ``article``, to change: a copy, the first time since ``kb`` was copied."""
        if kb.owned is None or article.article_id in kb.owned:
            return article
        article = kb.articles[article.article_id] = article.__copy__()  # what copy.copy calls
        kb.owned.add(article.article_id)
        return article

    def _publish_all(self, kb: KnowledgeBase, pairs: list[tuple[str, str]], at_us: int,
                     own_ids: list[str] | None = None) -> list[str]:
        """Articles published into the new ``kb``, all at ``at_us``, as ``own_ids`` (else
        ``art-000001``, ...), not yet in its search index: the state of :meth:`_publish` for
        each in turn (nothing expires: every event is at ``at_us``), with one version string
        for them all."""
        ids = own_ids if own_ids is not None else [article_id_for(number) for number in range(1, len(pairs) + 1)]
        updated_at = format_version(at_us)
        articles = kb.articles
        for article_id, (title, content) in zip(ids, pairs, strict=True):
            article = Article.__new__(Article)
            article.article_id, article.title, article.content = article_id, title, content
            article.published, article.version_us, article.updated_at = True, at_us, updated_at
            article.hit_json_len = article.read_json_len = None
            articles[article_id] = article
        kb.events = [(sequence, "article.published", article_id, at_us) for sequence, article_id in enumerate(ids, 1)]
        kb.next_seq = len(ids) + 1
        return ids

    def _publish(self, kb: KnowledgeBase, title: str, content: str, at_us: int,
                 article_id: str | None = None) -> str:
        """One article published into ``kb`` (as ``article_id``, else the next ``art-NNNNNN``
        no article holds), not yet in its search index."""
        if article_id is None:
            article_id = next_article_id(len(kb.articles), kb.articles.__contains__)
        kb.articles[article_id] = Article(article_id, title, content, True, at_us)
        if kb.owned is not None:
            kb.owned.add(article_id)
        self._append_event(kb, "article.published", article_id, at_us)
        return article_id

    def _append_event(self, kb: KnowledgeBase, kind: str, article_id: str, version_us: int) -> None:
        kb.events.append((kb.next_seq, kind, article_id, version_us))
        kb.next_seq += 1
        self._compact(kb, version_us)

    def _expired_count(self, kb: KnowledgeBase, now_us: int) -> int:
        """How many of the kept events are outside the retention window at ``now_us``."""
        if self.event_retention_us is None:
            return 0
        horizon = now_us - self.event_retention_us
        events = kb.events
        expired = 0
        while expired < len(events) and events[expired][3] < horizon:  # (sequence, type, id, version_us)
            expired += 1
        return expired

    def _compact(self, kb: KnowledgeBase, now_us: int) -> None:
        """Drop events older than the retention window (no-op when keeping all)."""
        drop = self._expired_count(kb, now_us)
        if drop:
            del kb.events[:drop]
            kb.first_seq += drop
