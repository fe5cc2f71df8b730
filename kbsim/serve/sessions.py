"""The clients attached to ``kbsim serve``: their sessions, their log levels, and what the
server tells them unasked (``notifications/message``, ``notifications/resources/updated``).

The SDK's low-level server answers requests; it keeps no list of the sessions open. kbsim
needs one to tell every client that the live day stopped, and each subscriber that its
article changed, over stdio and Streamable HTTP alike. :class:`OpenSessions` notes each
session as its requests pass (a server middleware): over HTTP by its ``mcp-session-id``,
over stdio as the one session there is; the HTTP transport tells it when a session has
closed (:meth:`OpenSessions.forget`), so a long-running server keeps only the open ones.
Notifications go on a session's own standalone stream (over HTTP, the GET stream a client
opens after ``initialize``); a session that has closed drops them quietly, as the SDK does.

``logging/setLevel`` sets the least severe level a session is sent (RFC 5424's order, as
MCP's); until it is called a session gets ``info`` and above.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

log = logging.getLogger("kbsim.serve")

#: MCP's log levels, least severe first (RFC 5424's syslog severities).
LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
#: What a session is sent before it calls ``logging/setLevel``.
DEFAULT_LOG_LEVEL = "info"
#: The key of the one session over stdio, which has no session id.
STDIO_SESSION = "stdio"
#: The name every notification from kbsim gives as its logger.
LOGGER_NAME = "kbsim.serve"


def session_key(ctx: Any) -> str | None:
    """Which session a request context belongs to: its ``mcp-session-id`` over HTTP, the one
    stdio session otherwise; None for an HTTP request before its session has an id (the
    ``initialize`` request itself: the client's next message names the session)."""
    request = getattr(ctx, "request", None)
    if request is None:
        return STDIO_SESSION
    headers = getattr(request, "headers", None)
    return None if headers is None else headers.get("mcp-session-id")


class OpenSessions:
    """Every session that has sent a request, with its log level."""

    def __init__(self) -> None:
        self._sessions: dict[str, Any] = {}
        self._levels: dict[str, str] = {}
        #: called with a session's key once it has closed (its subscriptions end there)
        self.on_closed: list[Callable[[str], Any]] = []

    def __len__(self) -> int:
        return len(self._sessions)

    def keys(self) -> list[str]:
        """The keys of the sessions noted so far."""
        return list(self._sessions)

    def note(self, ctx: Any) -> str | None:
        """Remember the session of ``ctx`` (a ``ServerRequestContext``); returns its key."""
        key = session_key(ctx)
        if key is not None:
            self._sessions[key] = ctx.session
        return key

    def forget(self, key: str) -> bool:
        """Forget the session ``key``, which has closed (over HTTP: deleted by its client, or
        expired and answered 404); whether it was open. Every :attr:`on_closed` hears of it."""
        known = self._sessions.pop(key, None) is not None
        self._levels.pop(key, None)
        for closed in self.on_closed:
            closed(key)
        return known

    async def middleware(self, ctx: Any, call_next: Callable[[Any], Awaitable[Any]]) -> Any:
        """A server middleware (``Server.middleware``): note each request's session."""
        self.note(ctx)
        return await call_next(ctx)

    async def on_set_level(self, ctx: Any, params: Any):
        """``logging/setLevel``: from now on send this session ``params.level`` and above."""
        from mcp import types

        key = self.note(ctx)
        if key is not None:
            self._levels[key] = params.level
        return types.EmptyResult()

    def level(self, key: str) -> str:
        """The least severe level session ``key`` is sent."""
        return self._levels.get(key, DEFAULT_LOG_LEVEL)

    def wants(self, key: str, level: str) -> bool:
        """Whether a message at ``level`` goes to session ``key``."""
        return LOG_LEVELS.index(level) >= LOG_LEVELS.index(self.level(key))

    async def log(self, level: str, data: Any) -> int:
        """Send ``notifications/message`` at ``level`` to every session that wants it; how many."""
        from mcp import types

        sent = 0
        for key, session in list(self._sessions.items()):
            if not self.wants(key, level):
                continue
            note = types.LoggingMessageNotification(params=types.LoggingMessageNotificationParams(
                level=level, logger=LOGGER_NAME, data=data))
            try:
                await session.send_notification(note)
                sent += 1
            except Exception as exc:  # noqa: BLE001 - one closed session must not keep the others uninformed
                log.debug("could not notify session %s: %s", key, exc)
        return sent

    async def resource_updated(self, keys: frozenset[str] | set[str], uri: str) -> int:
        """Send ``notifications/resources/updated`` for ``uri`` to the sessions ``keys``; how many."""
        from mcp import types

        sent = 0
        for key in sorted(keys):
            session = self._sessions.get(key)
            if session is None:
                continue
            note = types.ResourceUpdatedNotification(params=types.ResourceUpdatedNotificationParams(uri=uri))
            try:
                await session.send_notification(note)
                sent += 1
            except Exception as exc:  # noqa: BLE001 - as in log()
                log.debug("could not notify session %s: %s", key, exc)
        return sent
