"""Subscriptions to articles: who hears of an article's change, the same on every backend.

A subscriber (any name: an MCP session, a simulated agent) subscribes to published articles;
each change the store commits to one of them afterwards (a save, an edit, an unpublish) is
handed to every listener with the subscribers it concerns, once the change is whole. An
unpublished article cannot change again, so its subscriptions end with it. Plain synchronous
code with no clock, thread or SimPy of its own: the MCP server turns a change into
``notifications/resources/updated``, a simulated agent into a check.

Subscriptions live with the store object (in memory), not in a SQLite file: a change made by
another process sharing the file is in the event log (``poll_resource_events``), not heard here.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import quote, unquote

from kbsim.store.errors import ToolError, echoed
from kbsim.store.rules import check_text
from kbsim.store.timefmt import format_version

__all__ = ["URI_TEMPLATE", "ArticleChange", "Listener", "Subscribable", "Subscriptions", "article_uri",
           "parse_article_uri"]

#: How a subscriber names an article (MCP's resource URI, ``kbsim serve``'s): both ids
#: percent-encoded (RFC 6570's simple expansion), so an id with ``/`` stays one segment.
URI_TEMPLATE = "kbsim://knowledge-bases/{knowledge_base_id}/articles/{article_id}"
_URI = re.compile(r"kbsim://knowledge-bases/([^/]+)/articles/([^/]+)")


def article_uri(kb_id: str, article_id: str) -> str:
    """The URI of an article."""
    return URI_TEMPLATE.format(knowledge_base_id=quote(kb_id, safe=""), article_id=quote(article_id, safe=""))


def parse_article_uri(uri: str) -> tuple[str, str] | None:
    """``(knowledge_base_id, article_id)`` of an article's URI, or None if ``uri`` is not one.

    Raises:
        UnicodeDecodeError: a percent-encoded id that is not UTF-8.
    """
    match = _URI.fullmatch(uri)
    if match is None:
        return None
    return unquote(match.group(1), errors="strict"), unquote(match.group(2), errors="strict")


@dataclass(frozen=True, slots=True)
class ArticleChange:
    """One committed change of a subscribed article, as its event says it."""

    knowledge_base_id: str
    article_id: str
    #: ``article.updated`` or ``article.unpublished`` (an unpublish is heard even when
    #: ``events.log_unpublish`` is off and no event is logged)
    type: str
    #: the article's new version (its final one, for an unpublish)
    updated_at: str


#: ``listener(change, subscribers)``: called once per change, with who subscribed to it.
Listener = Callable[[ArticleChange, frozenset[str]], None]


class Subscriptions:
    """Who subscribed to which article, and the listeners told of each change."""

    def __init__(self) -> None:
        self._by_article: dict[tuple[str, str], set[str]] = {}
        self._listeners: dict[object, Listener] = {}

    def add(self, subscriber: str, kb_id: str, article_id: str) -> None:
        """Subscribe ``subscriber`` to the article (again is the same as once)."""
        self._by_article.setdefault((kb_id, article_id), set()).add(subscriber)

    def remove(self, subscriber: str, kb_id: str, article_id: str) -> bool:
        """End one subscription; whether there was one."""
        held = self._by_article.get((kb_id, article_id))
        if held is None or subscriber not in held:
            return False
        held.discard(subscriber)
        if not held:
            del self._by_article[(kb_id, article_id)]
        return True

    def remove_all(self, subscriber: str) -> int:
        """End every subscription of ``subscriber`` (a session that closed); how many ended."""
        ended = [key for key, held in self._by_article.items() if subscriber in held]
        for kb_id, article_id in ended:
            self.remove(subscriber, kb_id, article_id)
        return len(ended)

    def subscribers(self, kb_id: str, article_id: str) -> frozenset[str]:
        """Who is subscribed to the article."""
        return frozenset(self._by_article.get((kb_id, article_id), ()))

    def subscribed(self, subscriber: str) -> list[tuple[str, str]]:
        """``(kb_id, article_id)`` of each of ``subscriber``'s subscriptions, sorted."""
        return sorted(key for key, held in self._by_article.items() if subscriber in held)

    def listen(self, listener: Listener) -> Callable[[], None]:
        """Call ``listener`` for each change from now on; returns what stops it."""
        token = object()
        self._listeners[token] = listener
        return lambda: self._listeners.pop(token, None) and None

    def changed(self, kb_id: str, article_id: str, kind: str, version_us: int) -> None:
        """A backend committed a change of the article: tell the listeners, if anyone subscribed."""
        key = (kb_id, article_id)
        held = self._by_article.get(key)
        if not held:
            return
        subscribers = frozenset(held)
        if kind == "article.unpublished":
            del self._by_article[key]
        change = ArticleChange(kb_id, article_id, kind, format_version(version_us))
        for listener in list(self._listeners.values()):
            listener(change, subscribers)


class Subscribable:
    """A backend's subscription methods: :class:`~kbsim.store.memory.MemoryStore` and
    :class:`~kbsim.store.sqlite.SQLiteStore` inherit them and call :meth:`_article_changed`
    once a change is committed. Nothing is kept until the first subscription or listener, so
    a simulated day that subscribes to nothing pays one attribute test per save."""

    _subscriptions: Subscriptions | None = None
    #: the backend's own ``current_version`` (an annotation only: the backend defines it)
    current_version: Callable[[str, str], str | None]

    @property
    def subscriptions(self) -> Subscriptions:
        """The store's subscriptions (made on first use)."""
        if self._subscriptions is None:
            self._subscriptions = Subscriptions()
        return self._subscriptions

    def subscribe_article(self, subscriber: str, kb_id: str, article_id: str) -> str:
        """Subscribe ``subscriber`` to a published article; returns its current ``updated_at``.

        Raises:
            ToolError: ``not_found``, the article is not published (or the knowledge base
                does not exist).
        """
        subscriber = check_text(subscriber, "subscriber")
        version = self.current_version(kb_id, article_id)
        if version is None:
            raise ToolError("not_found", f"article_id {echoed(article_id)} not found")
        self.subscriptions.add(subscriber, kb_id, article_id)
        return version

    def unsubscribe_article(self, subscriber: str, kb_id: str, article_id: str) -> bool:
        """End a subscription; whether there was one."""
        check_text(subscriber, "subscriber")
        check_text(kb_id, "kb_id")
        check_text(article_id, "article_id")
        return self._subscriptions is not None and self._subscriptions.remove(subscriber, kb_id, article_id)

    def listen(self, listener: Listener) -> Callable[[], None]:
        """Hear every change of a subscribed article from now on; returns what stops it."""
        if not callable(listener):
            raise ToolError("invalid_argument", f"listener: expected a function, got {type(listener).__name__}")
        return self.subscriptions.listen(listener)

    def _article_changed(self, kb_id: str, article_id: str, kind: str, version_us: int) -> None:
        subscriptions = self._subscriptions
        if subscriptions is not None:
            subscriptions.changed(kb_id, article_id, kind, version_us)
