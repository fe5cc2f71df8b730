"""The re-read: read every cited article by id at every check and compare its version (or,
for citations without a version, its text). Exact, and its cost grows with what is held."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kbsim.sim import checks  # called through the module: a test may swap a check for a broken one
from kbsim.sim.checks import CheckOutcome
from kbsim.sim.records import CitationRecord
from kbsim.sim.strategies import CheckScope, Strategy

__all__ = ["STRATEGY", "reread_check", "reread_model"]


def reread_check(scope: CheckScope, held: Sequence[CitationRecord], state: None) -> CheckOutcome:
    """:func:`~kbsim.sim.checks.check_by_rereading` at a check (by text without versions)."""
    if scope.cited_text is not None:
        return checks.reread_by_text(scope.client, scope.kb_id, held, scope.cited_text)
    return checks.check_by_rereading(scope.client, scope.kb_id, held)


def reread_model(policy: Any) -> dict[str, float]:
    """The model's re-read: one read of every distinct cited article at every check."""
    return {
        **policy.exact_detection,
        "calls_per_hour": policy.cited_reads / policy.hours,
        "bytes_per_hour": policy.cited_read_bytes / policy.hours,
    }


STRATEGY = Strategy(
    "reread", "re-read", exact=True, check=reread_check, colour="#2ca02c", short_label="re-read", model=reread_model,
    model_checked=("calls_per_hour", "bytes_per_hour"),
)
