"""Resumable streams for ``kbsim serve --http``: the latest SSE events, kept in memory.

The SDK's Streamable HTTP transport numbers every event it sends on an SSE stream when it is
given an ``EventStore`` (and opens each stream with a priming event), so that a client whose
connection dropped reconnects with ``Last-Event-ID`` and is sent what it missed on that
stream. :class:`RecentEvents` keeps the latest :data:`KEPT_EVENTS` events of all streams; a
client that reconnects after more have gone by is sent nothing it missed and should read
again (its tool calls are safe to repeat: reads are reads, an edit is idempotent by its key).

Events are kept per MCP session. The SDK (``mcp`` 2.3) gives every session's transport the
one event store and names a request's stream by its JSON-RPC id alone (and each session's
GET stream ``"_GET_stream"``), so a store keyed by stream sent a session resuming its stream
of id 2 the other sessions' events of their own id 2: another caller's reply, read as its
own. The store learns whose an event is from :data:`CURRENT_SESSION`, which kbsim's HTTP
middleware (:class:`kbsim.serve.http.AnsweredBodies`) sets for every request it passes on.
The SDK runs a session's message router (which stores its replies and notifications) in a
task started while its ``initialize`` request is served, so the router sees that request's
:class:`SessionOf`, filled in once the SDK names the session in its answer.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any

from mcp.server.streamable_http import EventCallback, EventId, EventMessage, EventStore, StreamId
from mcp.types import JSONRPCError, JSONRPCResponse

#: How many of the latest events (of all streams) a client can resume from.
KEPT_EVENTS = 10_000


class SessionOf:
    """The MCP session a request belongs to: its ``mcp-session-id``, or None until the SDK
    names it (an ``initialize`` request's session is named in its answer's headers)."""

    __slots__ = ("id",)

    def __init__(self, session_id: str | None) -> None:
        self.id = session_id


#: The session of the HTTP request being served, and of every task started while serving it.
CURRENT_SESSION: ContextVar[SessionOf | None] = ContextVar("kbsim_serve_session", default=None)


def _session_id(of: SessionOf | None) -> str | None:
    return None if of is None else of.id


class RecentEvents(EventStore):
    """An ``EventStore`` holding the latest ``kept`` events, numbered 1, 2, 3... across streams
    and sessions; a replay sends only the events of the resumed event's session and stream."""

    def __init__(self, kept: int = KEPT_EVENTS,
                 on_reply: Callable[[str | None, Any], None] | None = None) -> None:
        """``on_reply(session, id)`` is called as each reply (a JSON-RPC response or error) is
        stored: the SDK stores a reply just before it looks up the reply's channel."""
        if kept < 1:
            raise ValueError(f"kept must be at least 1, got {kept!r}")
        self.kept = kept
        self.on_reply = on_reply
        self._events: OrderedDict[int, tuple[SessionOf | None, StreamId, Any]] = OrderedDict()
        self._last = 0

    @property
    def held(self) -> int:
        """How many events are kept now.

        Not ``__len__``: the SDK tests an event store's truth, and an empty one must count.
        """
        return len(self._events)

    async def store_event(self, stream_id: StreamId, message: Any) -> EventId:
        """Keep ``message`` (None: a stream's priming event) as the next event of ``stream_id``."""
        self._last += 1
        of = CURRENT_SESSION.get()
        self._events[self._last] = (of, stream_id, message)
        while len(self._events) > self.kept:
            self._events.popitem(last=False)
        if self.on_reply is not None and isinstance(message, JSONRPCResponse | JSONRPCError) \
                and message.id is not None:
            self.on_reply(_session_id(of), message.id)
        return str(self._last)

    async def replay_events_after(self, last_event_id: EventId, send_callback: EventCallback) -> StreamId | None:
        """Send the events of ``last_event_id``'s stream and session that came after it; returns
        that stream, or None when the event is unknown, no longer kept, or another session's."""
        try:
            after = int(last_event_id)
        except ValueError:
            return None
        found = self._events.get(after)
        session = _session_id(CURRENT_SESSION.get())
        if found is None or _session_id(found[0]) != session:
            return None
        stream_id = found[1]
        for number, (of, stream, message) in list(self._events.items()):
            if number > after and stream == stream_id and message is not None and _session_id(of) == session:
                await send_callback(EventMessage(message, str(number)))
        return stream_id
