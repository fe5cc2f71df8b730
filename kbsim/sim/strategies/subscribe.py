"""The subscription: MCP's own alternative to polling (``resources/subscribe``).

The agent subscribes to each article it cites; the store tells it of every change committed
to a subscribed article afterwards (``notifications/resources/updated``, which names the
article and nothing more), and at a check it re-reads only the subscribed articles it was
told of. A newly cited article is subscribed to and read once at the first check after it
is cited, since a subscription starts when it is made and says nothing of changes before.

Exact: every committed change of a subscribed article is heard (the store's subscriptions,
:mod:`kbsim.store.subscriptions`, the same on every backend), an unpublish too, whether or
not it writes an event. Its cost grows with what is cited and what of it moves, not with
every save of the knowledge base as the poll's does. Each subscription is one call (its
request's bytes), each notification its message's bytes; the store's subscription is made
at the check, in simulated time, with no delivery delay.

Its analytic cost (:func:`subscribe_model`): a subscription and a read of every distinct
article cited by the last check, a read of every article cited by the check before that
moved since, and a notification for every save of those. Its detection is the exact
strategies'. Run it by naming it in a day's ``checks.strategies``
(``[title, reread, poll, subscribe]``, as ``experiments/check_policy.yaml`` does).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from kbsim.params import DayParams
from kbsim.sim import checks  # called through the module: a test may swap a check for a broken one
from kbsim.sim.checks import CheckOutcome
from kbsim.sim.records import CitationRecord
from kbsim.sim.strategies import CheckScope, Strategy
from kbsim.sim.world import KB_ID
from kbsim.store import json_size
from kbsim.store.subscriptions import ArticleChange, Subscribable, article_uri

__all__ = [
    "STRATEGY",
    "SubscribeState",
    "notification_bytes",
    "subscribe_bytes",
    "subscribe_check",
    "subscribe_model",
    "subscribe_start",
]

#: What makes each checker's subscriber name its own (several agents each keep a state).
_SUBSCRIBERS = itertools.count(1)


def subscribe_bytes(kb_id: str, article_id: str) -> int:
    """Bytes of one ``resources/subscribe`` call: its request's params and its empty result."""
    return json_size({"uri": article_uri(kb_id, article_id)}) + json_size({})


def notification_bytes(kb_id: str, article_id: str) -> int:
    """Bytes of one ``notifications/resources/updated`` message's params."""
    return json_size({"uri": article_uri(kb_id, article_id)})


@dataclass
class SubscribeState:
    """One checker's subscriptions between checks."""

    subscriber: str
    #: the articles subscribed to
    subscribed: set[str] = field(default_factory=set)
    #: the articles the store told of since the last check, in the order told
    told: dict[str, None] = field(default_factory=dict)
    #: bytes of the notifications received since the last check
    told_bytes: int = 0
    #: each subscribed article's version as last read (None: gone), current at every check
    #: since every change of it since is told and read again
    known: dict[str, str | None] = field(default_factory=dict)

    def hear(self, change: ArticleChange, subscribers: frozenset[str]) -> None:
        """The store's listener: note a change of a subscribed article."""
        if self.subscriber in subscribers:
            self.told[change.article_id] = None
            self.told_bytes += notification_bytes(change.knowledge_base_id, change.article_id)


def _subscribable(store: object) -> Subscribable:
    """The day's store, which must keep subscriptions (both of kbsim's backends do)."""
    if not isinstance(store, Subscribable):
        raise TypeError(f"the subscribe strategy needs a store that keeps subscriptions "
                        f"(kbsim.store.subscriptions.Subscribable); {type(store).__name__} does not")
    return store


def subscribe_start(scope: CheckScope) -> SubscribeState:
    """The state when a checker starts: no subscriptions, listening to the day's store."""
    state = SubscribeState(subscriber=f"agent-{next(_SUBSCRIBERS)}")
    _subscribable(scope.day.store).listen(state.hear)
    return state


def subscribe_check(scope: CheckScope, held: Sequence[CitationRecord], state: SubscribeState) -> CheckOutcome:
    """Subscribe to each newly cited article and read it once; re-read each subscribed article
    the store told of since the last check; flag the citations whose article moved or went."""
    if scope.cited_text is not None:  # a notification says what changed, not the text: read again
        return checks.reread_by_text(scope.client, scope.kb_id, held, scope.cited_text)
    outcome = CheckOutcome(bytes=state.told_bytes)
    store, kb_id = scope.day.store, scope.kb_id
    fresh = list(dict.fromkeys(c.article_id for c in held if c.article_id not in state.subscribed))
    for article_id in fresh:
        state.subscribed.add(article_id)
        outcome.calls += 1
        outcome.bytes += subscribe_bytes(kb_id, article_id)
        if store.current_version(kb_id, article_id) is not None:  # the server refuses a gone one
            _subscribable(store).subscribe_article(state.subscriber, kb_id, article_id)
    moved = [article_id for article_id in state.told if article_id not in fresh]
    state.told.clear()
    state.told_bytes = 0
    state.known.update(checks.reread_articles(outcome, scope.client, kb_id, [*fresh, *moved]))
    outcome.flagged = checks.flag_citations(held, state.known)
    return outcome


#: An article id of the simulated day (``art-000001``: every id of a day below a million
#: articles has its length), for the bytes of a subscription and a notification in the model.
_MODEL_ARTICLE_ID = "art-000001"


def subscribe_model(policy: Any) -> dict[str, float]:
    """The model's subscription: at each check, a subscription and a read of every article
    first cited since the check before, and a read of every article cited by the check before
    that the store told of (saved since); a notification's bytes for every save of those.
    Detection is exact (every committed change of a subscribed article is told)."""
    calls = 2.0 * policy.newly_cited + policy.moved_held
    sent = (policy.newly_cited * subscribe_bytes(KB_ID, _MODEL_ARTICLE_ID) + policy.newly_cited_bytes
            + policy.moved_held_bytes + policy.saves_of_held * notification_bytes(KB_ID, _MODEL_ARTICLE_ID))
    return {
        **policy.exact_detection,
        "calls_per_hour": calls / policy.hours,
        "bytes_per_hour": sent / policy.hours,
    }


def _carries_version(params: DayParams) -> bool:
    """Exact when citations carry versions; without, it reads the cited text again as re-read does."""
    return params.citation.carries_version


STRATEGY = Strategy(
    "subscribe", "subscribe (MCP resources)", exact=True, check=subscribe_check, colour="#e377c2",
    start=subscribe_start, exact_on=_carries_version, model=subscribe_model,
    model_checked=("calls_per_hour", "bytes_per_hour"),
)
