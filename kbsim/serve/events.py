"""Resumable streams for ``kbsim serve --http``: the latest SSE events, kept in memory.

The SDK's Streamable HTTP transport numbers every event it sends on an SSE stream when it is
given an ``EventStore`` (and opens each stream with a priming event), so that a client whose
connection dropped reconnects with ``Last-Event-ID`` and is sent what it missed on that
stream. :class:`RecentEvents` keeps the latest :data:`KEPT_EVENTS` events of all streams; a
client that reconnects after more have gone by is sent nothing it missed and should read
again (its tool calls are safe to repeat: reads are reads, an edit is idempotent by its key).
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from mcp.server.streamable_http import EventCallback, EventId, EventMessage, EventStore, StreamId

#: How many of the latest events (of all streams) a client can resume from.
KEPT_EVENTS = 10_000


class RecentEvents(EventStore):
    """An ``EventStore`` holding the latest ``kept`` events, numbered 1, 2, 3... across streams."""

    def __init__(self, kept: int = KEPT_EVENTS) -> None:
        if kept < 1:
            raise ValueError(f"kept must be at least 1, got {kept!r}")
        self.kept = kept
        self._events: OrderedDict[int, tuple[StreamId, Any]] = OrderedDict()
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
        self._events[self._last] = (stream_id, message)
        while len(self._events) > self.kept:
            self._events.popitem(last=False)
        return str(self._last)

    async def replay_events_after(self, last_event_id: EventId, send_callback: EventCallback) -> StreamId | None:
        """Send the events of ``last_event_id``'s stream that came after it; returns that stream,
        or None when the event is unknown or no longer kept."""
        try:
            after = int(last_event_id)
        except ValueError:
            return None
        found = self._events.get(after)
        if found is None:
            return None
        stream_id = found[0]
        for number, (stream, message) in list(self._events.items()):
            if number > after and stream == stream_id and message is not None:
                await send_callback(EventMessage(message, str(number)))
        return stream_id
