"""A lossy wire between an agent and the store (``transport.*``, issue 27).

Each tool call can lose its request before the store sees it, or its reply after the
store applied it, each with probability ``loss_rate`` (one uniform a call: below
``loss_rate`` the request is lost, below twice it the reply). The agent notices only a
missing reply: it waits ``timeout_s``, then a backoff doubling from ``backoff_s`` (up to
:data:`MAX_BACKOFF_S`), and sends again.

:class:`LossyClient` wraps the agent's :class:`~kbsim.store.Client` with the same four
methods. Read-only tools (search, read, poll) are simply repeated until a reply arrives,
at the same instant: the wait is counted (``wait_s``), not spent, so the day's other
actors keep their times. A read-only call is given up after :data:`MAX_SENDS` sends
without a reply and counted as undelivered (:attr:`TransportLedger.undelivered`); the
loss rates ``transport.loss_rate`` accepts make that rarer than once in 10^15 calls
(:data:`kbsim.params.MAX_LOSS_RATE`). Edits are where a loss matters; the edit process in
:func:`kbsim.sim.processes.agent_edit` sends them one try at a time (:meth:`LossyClient.loss`) and
spends the waits in simulated time. Plain code, no SimPy.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from kbsim.params import TransportParams
from kbsim.store import Client, ToolError, json_size

__all__ = [
    "MAX_BACKOFF_S",
    "MAX_SENDS",
    "REPLY_LOST",
    "REQUEST_LOST",
    "LossyClient",
    "TransportLedger",
    "TransportRecord",
    "backoff_s",
]

REQUEST_LOST = "request"
REPLY_LOST = "reply"
#: The longest backoff: the doubling stops at a day (at 1 s, from the 18th retry on).
MAX_BACKOFF_S = 86_400.0
#: Sends of one read-only call before it is given up as undelivered. At the highest loss
#: rate accepted (0.49) a send gets its reply 2 times in 100, and 2,000 sends all fail
#: with probability 0.98^2000, about 3e-18.
MAX_SENDS = 2000


@dataclass(frozen=True, slots=True)
class TransportRecord:
    """What one agent's calls of one tool cost the wire in a day (the ``transport`` table)."""

    agent: str  # "0", "1", ... or "desk" (the questions' searches and reads)
    tool: str
    calls: int  # calls the agent meant to make
    sends: int  # requests sent, retries included
    lost_requests: int
    lost_replies: int
    retry_bytes: int  # bytes of replies sent and lost (the re-sent reply is the call's own)
    wait_s: float  # timeouts and backoffs waited


def backoff_s(params: TransportParams, retry: int) -> float:
    """The wait before retry number ``retry`` (1 = the first): the timeout, then the backoff,
    doubling each retry up to :data:`MAX_BACKOFF_S` (never an overflow, however many retries)."""
    doublings = min(max(retry - 1, 0), 64)  # 2^64 s outlasts any cap; past it 2.0 ** n would only grow
    return params.timeout_s + min(params.backoff_s * 2.0 ** doublings, max(params.backoff_s, MAX_BACKOFF_S))


class TransportLedger:
    """Counts per tool, turned into :class:`TransportRecord` rows at the end of the day."""

    def __init__(self, agent: str) -> None:
        self.agent = agent
        self.counts: dict[str, list[float]] = {}
        #: read-only calls per tool given up after :data:`MAX_SENDS` sends without a reply
        #: (kept beside the rows, not as a column, so the ``transport`` table keeps its shape)
        self.undelivered: dict[str, int] = {}

    def add(self, tool: str, *, calls=0, sends=0, lost_requests=0, lost_replies=0, retry_bytes=0, wait_s=0.0):
        """Add the given counts to ``tool``'s row (created at zero on first use)."""
        row = self.counts.setdefault(tool, [0, 0, 0, 0, 0, 0.0])
        for i, value in enumerate((calls, sends, lost_requests, lost_replies, retry_bytes, wait_s)):
            row[i] += value

    def records(self) -> list[TransportRecord]:
        """One :class:`TransportRecord` per tool this agent called, sorted by tool."""
        return [
            TransportRecord(self.agent, tool, int(c), int(s), int(q), int(r), int(b), float(w))
            for tool, (c, s, q, r, b, w) in sorted(self.counts.items())
        ]


class LossyClient:
    """The agent's client behind a lossy wire; answers exactly as the wrapped client does.

    With ``loss_rate`` 0 it draws nothing (a day at the default never touches the
    ``transport`` stream).
    """

    def __init__(self, client: Client, rng: np.random.Generator, params: TransportParams, agent: str) -> None:
        self.client = client
        self.store, self.grants, self.clock = client.store, client.grants, client.clock
        self.rng = rng
        self.params = params
        self.ledger = TransportLedger(agent)

    def loss(self) -> str | None:
        """What happens to one send: :data:`REQUEST_LOST`, :data:`REPLY_LOST` or None."""
        p = self.params.loss_rate
        if p <= 0:
            return None
        u = self.rng.random()
        return REQUEST_LOST if u < p else REPLY_LOST if u < 2 * p else None

    def _deliver(self, tool: str, size: int) -> bool:
        """Draw sends until one reply arrives, or :data:`MAX_SENDS` sends were all lost,
        counting what the lost ones cost; whether a reply arrived (False: counted in
        :attr:`TransportLedger.undelivered`)."""
        retry = 0
        while True:
            if retry >= MAX_SENDS:
                self.ledger.undelivered[tool] = self.ledger.undelivered.get(tool, 0) + 1
                self.ledger.add(tool, calls=1)
                return False
            loss = self.loss()
            self.ledger.add(tool, sends=1)
            if loss is None:
                break
            retry += 1
            self.ledger.add(tool, wait_s=backoff_s(self.params, retry))
            if loss == REQUEST_LOST:
                self.ledger.add(tool, lost_requests=1)
            else:
                self.ledger.add(tool, lost_replies=1, retry_bytes=size)
        self.ledger.add(tool, calls=1)
        return True

    def call_sized(self, name: str, arguments: dict[str, Any]) -> tuple[dict[str, Any], int]:
        """Call tool ``name`` as :meth:`kbsim.store.Client.call_sized` does, counting the
        sends the wire needed; a tool error's reply is delivered (and can be lost) too."""
        try:
            result, size = self.client.call_sized(name, arguments)
        except ToolError as error:
            self._deliver(name, json_size({"error": error.to_dict()}))
            raise
        self._deliver(name, size)
        return result, size

    def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """Call tool ``name`` and return its answer (:meth:`call_sized` without the size)."""
        return self.call_sized(name, arguments)[0]

    def search_many(self, kb_id: str, queries: list[str], limit: int):
        """Search ``kb_id`` for each query as the wrapped client does; each answer is
        delivered over the wire separately."""
        answers = self.client.search_many(kb_id, queries, limit)
        for _, size in answers:
            self._deliver("search_knowledge_base", size)
        return answers

    def search_titles(self, kb_id: str, queries: list[str], article_ids: list[str], limit: int):
        """The cited articles' hit titles and each search's size, as the wrapped client's
        :meth:`~kbsim.store.Client.search_titles` gives them; each answer is delivered over
        the wire separately, in order, as :meth:`search_many` delivers its answers."""
        answers = self.client.search_titles(kb_id, queries, article_ids, limit)
        for _, size in answers:
            self._deliver("search_knowledge_base", size)
        return answers

    def read_many(self, kb_id: str, article_ids: list[str]):
        """Read each article of ``kb_id`` as the wrapped client does; each answer is
        delivered over the wire separately."""
        answers = self.client.read_many(kb_id, article_ids)
        for _, size in answers:
            self._deliver("read_knowledge_article", size)
        return answers
