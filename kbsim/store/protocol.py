"""What a store backend must do: the :class:`Store` protocol.

Both :class:`~kbsim.store.memory.MemoryStore` and
:class:`~kbsim.store.sqlite.SQLiteStore` satisfy it, and so must any new
backend. :class:`~kbsim.store.client.Client` (validation, grants, dispatch),
the simulated day and ``kbsim serve`` use nothing else. The rules every
backend shares (argument checks, refusals, ids, result shapes) are in
:mod:`kbsim.store.rules`; ``tests/test_store_conformance.py`` holds a backend
to them.

Three members are optional and looked up with ``getattr``: ``result_size(name,
result)`` (a faster ``json_size`` of a result the store just returned),
``analyzer_name(kb_id)`` (the knowledge base's analyzer) and ``close()`` (release
files or connections).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from kbsim.store.analyzer import ASCII, Analyzer
from kbsim.store.rules import Article

if TYPE_CHECKING:
    from kbsim.store.client import Client, Clock


@runtime_checkable
class Store(Protocol):
    """Knowledge bases of articles, each with an event log and idempotent edits.

    Time comes in as simulated seconds (``at``) or microseconds (``now_us``),
    never from a clock of the store's own. Every method checks its arguments
    first and either fully applies or raises :class:`~kbsim.store.errors.ToolError`
    having changed nothing.
    """

    # -- people's side: publishing and saving, outside the agent's tools --------------

    def create_knowledge_base(
        self, kb_id: str, articles: Iterable[tuple[str, str]] = (), *, at: float = 0.0,
        article_ids: Iterable[str] | None = None, analyzer: Analyzer = ASCII,
    ) -> list[str]:
        """A new knowledge base holding ``(title, content)`` articles, all or nothing:
        ids ``article_ids`` (else ``art-000001``, ...), search terms by ``analyzer``.

        Callers pass the two keywords only when they differ from the defaults, so a
        backend without them still serves the synthetic corpus.
        """
        ...

    def knowledge_base_ids(self) -> list[str]:
        """Every knowledge base's id, in creation order."""
        ...

    def publish_article(self, kb_id: str, *, title: str, content: str, at: float) -> str:
        """Publish a new article at simulated second ``at``; returns its id."""
        ...

    def save_article(
        self, kb_id: str, article_id: str, *, at: float, content: str | None = None,
        title: str | None = None,
    ) -> str:
        """A person's save of a published article (new content, title or both); returns the new ``updated_at``."""
        ...

    def unpublish_article(self, kb_id: str, article_id: str, *, at: float, log_event: bool = True) -> str:
        """Take an article out of search and reads; returns its final ``updated_at``. ``log_event=False``
        writes no ``article.unpublished`` event."""
        ...

    # -- ground truth ----------------------------------------------------------------

    def current_version(self, kb_id: str, article_id: str) -> str | None:
        """The article's ``updated_at`` if it is published, else None."""
        ...

    def article_state(self, kb_id: str, article_id: str) -> Article:
        """A copy of one article's full state, published or not."""
        ...

    def published_article_ids(self, kb_id: str) -> list[str]:
        """Every published article's id, in publication order."""
        ...

    def unpublished_article_ids(self, kb_id: str) -> list[str]:
        """Every unpublished article's id, sorted."""
        ...

    def latest_sequence(self, kb_id: str) -> int:
        """The sequence number of the knowledge base's latest event (0 before any)."""
        ...

    def snapshot(self) -> dict[str, Any]:
        """Every piece of state as plain, comparable data: what the conformance tests compare backends by."""
        ...

    # -- the agent's side: what Client dispatches to ------------------------------------

    def client(self, grants: set[str] | frozenset[str], clock: Clock) -> Client:
        """The agent's view: tool calls limited to ``grants``, timed by ``clock()``."""
        ...

    def has_knowledge_base(self, kb_id: str) -> bool:
        """Whether a knowledge base ``kb_id`` exists."""
        ...

    def tool_search(self, kb_id: str, query: str, limit: int) -> dict[str, Any]:
        """``search_knowledge_base``: the ``limit`` best-ranked published articles for ``query``."""
        ...

    def tool_read(self, kb_id: str, article_id: str) -> dict[str, Any]:
        """``read_knowledge_article``: a published article's title, content and version."""
        ...

    def tool_edit(self, arguments: dict[str, Any], now_us: int) -> dict[str, Any]:
        """``edit_knowledge_article``: apply the agent's edit, or replay the result its idempotency key recorded."""
        ...

    def tool_poll(self, kb_id: str, after_sequence: int, limit: int, now_us: int) -> dict[str, Any]:
        """``poll_resource_events``: up to ``limit`` events after ``after_sequence`` still kept at ``now_us``."""
        ...


class SearchIndex(Protocol):
    """What :class:`~kbsim.store.memory.MemoryStore` asks of a knowledge base's search index:
    :class:`~kbsim.store.arena.ArenaIndex` (the store's) and
    :class:`~kbsim.store.bm25.BM25Index` (the plain reference) answer alike."""

    #: How the index's documents and queries become terms.
    analyzer: Analyzer

    def __len__(self) -> int: ...

    def __contains__(self, doc_id: str) -> bool: ...

    def add(self, doc_id: str, title: str, content: str) -> None:
        """Index (or re-index) one document."""
        ...

    def add_words(self, doc_id: str, title: str, vocabulary: Sequence[str], words) -> None:
        """:meth:`add` of the content written from ``vocabulary``'s ``words`` (vocabulary indices)."""
        ...

    def remove(self, doc_id: str) -> None:
        """Drop one document; a missing one is ignored."""
        ...

    def fill(self, doc_ids: list[str], vocabulary: Sequence[str], content_words, title_words) -> None:
        """Index documents into an empty index from their words as vocabulary indices, as :meth:`add`
        would one by one."""
        ...

    def fill_texts(self, docs: list[tuple[str, str, str]]) -> None:
        """:meth:`fill` from ``(doc_id, title, content)`` texts."""
        ...

    def search(self, query: str, limit: int) -> list[tuple[str, float]]:
        """The ``limit`` best ``(doc_id, score)`` pairs, best first, ties by id."""
        ...

    def search_many(self, queries: list[str], limit: int) -> list[list[str]]:
        """The doc ids :meth:`search` ranks first for each query (best first), all found at once."""
        ...

    def search_many_flat(self, queries: list[str], limit: int) -> tuple[list[int], list[str]]:
        """:meth:`search_many`'s rankings laid end to end: how many doc ids each query has, and all of them."""
        ...

    def copy(self) -> SearchIndex:
        """An independent copy."""
        ...


#: Builds an empty store with the given event retention window (seconds, or None to keep
#: every event): how a simulated day is handed a backend (``run_day(..., store=factory)``).
StoreFactory = Callable[[float | None], Store]
