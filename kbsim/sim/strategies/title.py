"""The title check: search each cited title again, and flag the citations whose article the
search no longer finds under its cited title (retitled or gone). Cheap, and blind to a
change of content."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kbsim.sim import checks  # called through the module: a test may swap a check for a broken one
from kbsim.sim.checks import CheckOutcome
from kbsim.sim.records import CitationRecord
from kbsim.sim.strategies import CheckScope, Strategy

__all__ = ["STRATEGY", "title_check", "title_model"]


def title_check(scope: CheckScope, held: Sequence[CitationRecord], state: None) -> CheckOutcome:
    """:func:`~kbsim.sim.checks.check_by_title` at a check, with the day's ``checks.title_search_limit``."""
    return checks.check_by_title(scope.client, scope.kb_id, held, scope.params.checks.title_search_limit)


def title_model(policy: Any) -> dict[str, float]:
    """The model's title check: one search per distinct cited (article, title), the titles
    of retitled articles counted roughly, and its detection of what a title shows."""
    searches = policy.cited_reads + policy.retitled
    return {
        **policy.title_detection,
        "calls_per_hour": searches / policy.hours,
        "bytes_per_hour": searches * policy.sizes.search_bytes / policy.hours,
    }


STRATEGY = Strategy(
    "title", "title lookup", exact=False, check=title_check, colour="#7f7f7f", short_label="title", model=title_model,
    model_checked=("detected_share", "detection_latency_s", "stale_exposure", "calls_per_hour"),
    recall_metric="title_recall", advice_role="blind",
)
