"""The poll: page the knowledge base's event log from a cursor kept between checks, and
re-read only the cited articles that moved. Exact while every change writes an event
(``events.log_unpublish``); its cost grows with the saves, not with what is held."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kbsim.params import DayParams
from kbsim.sim import checks  # called through the module: a test may swap a check for a broken one
from kbsim.sim.checks import CheckOutcome, PollState
from kbsim.sim.records import CitationRecord
from kbsim.sim.strategies import CheckScope, Strategy

__all__ = ["STRATEGY", "poll_check", "poll_model", "poll_start"]


def poll_start(scope: CheckScope) -> PollState:
    """The poll's state when a checker starts: a cursor at the latest sequence."""
    return PollState(cursor=scope.day.store.latest_sequence(scope.kb_id))


def poll_check(scope: CheckScope, held: Sequence[CitationRecord], state: PollState) -> CheckOutcome:
    """:func:`~kbsim.sim.checks.check_by_polling` at a check, from (and advancing) its
    ``state`` (by text without versions)."""
    page_size = scope.params.checks.poll_page_size
    if scope.cited_text is not None:
        return checks.poll_by_text(scope.client, scope.kb_id, held, scope.cited_text, state, page_size)
    return checks.check_by_polling(scope.client, scope.kb_id, held, state, page_size)


def poll_model(policy: Any) -> dict[str, float]:
    """The model's poll: the expected pages of the interval's events at every check, and a
    read of every cited article that moved."""
    poll_calls = policy.checks * policy.pages + policy.moved
    poll_bytes = (policy.checks * (policy.pages * policy.sizes.page_bytes + policy.events * policy.sizes.event_bytes)
                  + policy.moved_bytes)
    return {
        **policy.exact_detection,
        "calls_per_hour": poll_calls / policy.hours,
        "bytes_per_hour": poll_bytes / policy.hours,
    }


def _logs_unpublish(params: DayParams) -> bool:
    """A poll sees an unpublish only when it writes an event."""
    return params.events.log_unpublish


STRATEGY = Strategy(
    "poll", "poll events", exact=True, check=poll_check, colour="#9467bd", start=poll_start,
    exact_on=_logs_unpublish, model=poll_model,
    model_checked=("detection_latency_s", "detection_latency_p90_s", "stale_exposure", "calls_per_hour",
                   "bytes_per_hour"),
    reads_event_log=True,
)
