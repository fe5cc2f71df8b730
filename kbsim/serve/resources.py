"""Published articles as MCP resources, with subscriptions: the MCP-native alternative to polling.

Each published article of a granted knowledge base is the resource
``kbsim://knowledge-bases/{knowledge_base_id}/articles/{article_id}`` (both ids percent-encoded,
RFC 6570's simple expansion, so an id with ``/`` or spaces stays one segment).

- ``resources/list`` lists them, knowledge base by knowledge base and article id by article
  id, :data:`PAGE_SIZE` at a time (``nextCursor`` continues after the last one listed);
- ``resources/templates/list`` gives the URI template, and ``completion/complete`` completes
  its two arguments from the granted knowledge bases and their published article ids;
- ``resources/read`` returns what ``read_knowledge_article`` returns (title, content,
  ``updated_at``, citation) as JSON text, through the same store call, so it is granted,
  refused and versioned exactly as the tool is;
- ``resources/subscribe`` subscribes the session to the article in the store
  (:mod:`kbsim.store.subscriptions`); each change the store commits to it afterwards (a
  person's save, an agent's edit, an unpublish) sends the session
  ``notifications/resources/updated`` with its URI. An unpublished article cannot change
  again: its subscriptions end with that last notification.

An article that is not published, or a knowledge base not granted, is "resource not found",
the same answer for both, as the tools give ``not_found``; a URI that is not kbsim's is
invalid params.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from kbsim.serve.sessions import OpenSessions
from kbsim.serve.shapes import json_text
from kbsim.store import ToolError
from kbsim.store.subscriptions import URI_TEMPLATE, article_uri, parse_article_uri

#: Articles per ``resources/list`` page.
PAGE_SIZE = 100
#: Completion values per ``completion/complete`` answer (MCP's limit).
MAX_COMPLETIONS = 100
#: MCP's "resource not found" (2025-06-18 and 2025-11-25); later versions answer invalid params.
RESOURCE_NOT_FOUND = -32002
MIME_TYPE = "application/json"


def _cursor(kb_id: str, article_id: str) -> str:
    return base64.urlsafe_b64encode(json.dumps([kb_id, article_id]).encode()).decode()


def _after(cursor: str) -> tuple[str, str]:
    try:
        kb_id, article_id = json.loads(base64.urlsafe_b64decode(cursor.encode("ascii")))
        if isinstance(kb_id, str) and isinstance(article_id, str):
            return kb_id, article_id
    except (ValueError, TypeError, UnicodeError):
        pass
    raise ValueError("not a cursor of this server")


class ArticleResources:
    """The resource handlers of one served knowledge base (``served``: a
    :class:`~kbsim.serve.server.ServedKnowledgeBase`), telling ``sessions`` of changes."""

    def __init__(self, served: Any, sessions: OpenSessions) -> None:
        self.served = served
        self.sessions = sessions
        sessions.on_closed.append(self.session_closed)

    def session_closed(self, key: str) -> int:
        """End every subscription of the session ``key``, which has closed; how many ended."""
        with self.served.lock:
            return self.served.store.subscriptions.remove_all(key)

    # -- helpers ------------------------------------------------------------------------

    def _granted_kbs(self) -> list[str]:
        store = self.served.store
        with self.served.lock:
            return sorted(kb for kb in self.served.client.grants if store.has_knowledge_base(kb))

    def _not_found(self, ctx: Any, uri: str):
        from mcp import types
        from mcp.shared.exceptions import MCPError

        modern = not str(getattr(ctx, "protocol_version", "")).startswith("2025")
        return MCPError(types.INVALID_PARAMS if modern else RESOURCE_NOT_FOUND, f"Resource not found: {uri}",
                        {"uri": uri})

    def _article(self, ctx: Any, uri: str) -> tuple[str, str]:
        from mcp import types
        from mcp.shared.exceptions import MCPError

        try:
            found = parse_article_uri(uri)
        except UnicodeError:
            found = None
        if found is None:
            raise MCPError(types.INVALID_PARAMS, f"not a kbsim article URI: {uri[:200]!r}; expected {URI_TEMPLATE}")
        if found[0] not in self.served.client.grants:
            raise self._not_found(ctx, uri)
        return found

    # -- the handlers -------------------------------------------------------------------

    async def on_list(self, ctx: Any, params: Any):
        """``resources/list``: the published articles of the granted knowledge bases, a page at a time."""
        from mcp import types
        from mcp.shared.exceptions import MCPError

        self.sessions.note(ctx)
        cursor = getattr(params, "cursor", None) if params is not None else None
        try:
            after = None if cursor is None else _after(cursor)
        except ValueError as exc:
            raise MCPError(types.INVALID_PARAMS, f"cursor: {exc}") from None
        store = self.served.store
        page: list[tuple[str, str]] = []
        more = False
        for kb_id in self._granted_kbs():
            if after is not None and kb_id < after[0]:
                continue
            with self.served.lock:
                ids = store.published_article_ids(kb_id)
            for article_id in ids:
                if after is not None and (kb_id, article_id) <= after:
                    continue
                if len(page) == PAGE_SIZE:
                    more = True
                    break
                page.append((kb_id, article_id))
            if more:
                break
        resources = []
        for kb_id, article_id in page:
            with self.served.lock:
                title = store.article_state(kb_id, article_id).title
            resources.append(types.Resource(uri=article_uri(kb_id, article_id), name=article_id, title=title,
                                            mime_type=MIME_TYPE,
                                            description=f"Article {article_id} of knowledge base {kb_id}"))
        return types.ListResourcesResult(resources=resources, next_cursor=_cursor(*page[-1]) if more else None)

    async def on_list_templates(self, ctx: Any, params: Any):
        """``resources/templates/list``: the one template, an article of a knowledge base."""
        from mcp import types

        return types.ListResourceTemplatesResult(resource_templates=[types.ResourceTemplate(
            uri_template=URI_TEMPLATE, name="article", title="A knowledge base article", mime_type=MIME_TYPE,
            description="One published article, as read_knowledge_article returns it (title, content, "
                        "updated_at, citation). Subscribe to hear when it changes or is unpublished.")])

    async def on_read(self, ctx: Any, params: Any):
        """``resources/read``: the article as ``read_knowledge_article`` returns it."""
        from mcp import types

        self.sessions.note(ctx)
        kb_id, article_id = self._article(ctx, params.uri)
        payload, is_error = self.served.call("read_knowledge_article",
                                             {"knowledge_base_id": kb_id, "article_id": article_id})
        if is_error:
            raise self._not_found(ctx, params.uri)
        text = json_text(payload)
        return types.ReadResourceResult(contents=[types.TextResourceContents(
            uri=params.uri, mime_type=MIME_TYPE, text=text)])

    async def on_subscribe(self, ctx: Any, params: Any):
        """``resources/subscribe``: this session hears of each change of the article."""
        from mcp import types

        key = self.sessions.note(ctx)
        kb_id, article_id = self._article(ctx, params.uri)
        if key is None:  # an HTTP request with no session (stateless): nowhere to send to
            from mcp.shared.exceptions import MCPError

            raise MCPError(types.INVALID_REQUEST, "resources/subscribe needs a session (mcp-session-id)")
        try:
            with self.served.lock:
                self.served.store.subscribe_article(key, kb_id, article_id)
        except ToolError:
            raise self._not_found(ctx, params.uri) from None
        return types.EmptyResult()

    async def on_unsubscribe(self, ctx: Any, params: Any):
        """``resources/unsubscribe``: stop hearing of the article (nothing to end is no error)."""
        from mcp import types

        key = self.sessions.note(ctx)
        kb_id, article_id = self._article(ctx, params.uri)
        if key is not None:
            with self.served.lock:
                self.served.store.unsubscribe_article(key, kb_id, article_id)
        return types.EmptyResult()

    async def on_complete(self, ctx: Any, params: Any):
        """``completion/complete``: the template's ``knowledge_base_id`` (granted ones) and
        ``article_id`` (published ids of the knowledge base given in the context, else of
        every granted one), by prefix, sorted."""
        from mcp import types
        from mcp.shared.exceptions import MCPError

        ref = params.ref
        if getattr(ref, "type", None) != "ref/resource" or ref.uri != URI_TEMPLATE:
            what = getattr(ref, "name", None) or getattr(ref, "uri", None)
            raise MCPError(types.INVALID_PARAMS, f"nothing to complete for {getattr(ref, 'type', '?')} {what!r}: "
                                                 f"kbsim completes the resource template {URI_TEMPLATE}")
        name, prefix = params.argument.name, params.argument.value
        kbs = self._granted_kbs()
        if name == "knowledge_base_id":
            values = [kb for kb in kbs if kb.startswith(prefix)]
        elif name == "article_id":
            given = ((params.context.arguments or {}) if params.context is not None else {}).get("knowledge_base_id")
            values = []
            for kb_id in ([given] if given in kbs else kbs):
                with self.served.lock:
                    values += [a for a in self.served.store.published_article_ids(kb_id) if a.startswith(prefix)]
            values = sorted(set(values))
        else:
            raise MCPError(types.INVALID_PARAMS, f"argument {name!r}: the template has knowledge_base_id "
                                                 "and article_id")
        return types.CompleteResult(completion=types.Completion(
            values=values[:MAX_COMPLETIONS], total=len(values), has_more=len(values) > MAX_COMPLETIONS))

    # -- changes to subscribers -----------------------------------------------------------

    async def deliver(self, changes) -> None:
        """Send each ``(change, subscribers)`` from the store's listener as
        ``notifications/resources/updated``, in the order the store committed them."""
        async for change, subscribers in changes:
            await self.sessions.resource_updated(subscribers, article_uri(change.knowledge_base_id,
                                                                          change.article_id))
