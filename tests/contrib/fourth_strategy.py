"""A fourth check strategy, written as a contributor would: this one module, outside kbsim.

A config names it by its import path (``fourth_strategy:STRATEGY``, with this folder on
``sys.path`` or ``PYTHONPATH``); nothing in kbsim is edited or registered. It re-reads only
the articles cited in the hour before each check, and flags every held citation of those
whose version moved: cheaper than the full re-read, and blind to older citations, so it is
not exact. Without versions in the citations it compares the text cited instead.
"""

from __future__ import annotations

from collections.abc import Sequence

from kbsim.sim import CheckScope, Strategy
from kbsim.sim.checks import CheckOutcome, flag_citations, reread_articles, reread_by_text
from kbsim.sim.records import CitationRecord

HOUR_S = 3600.0


def recent_check(scope: CheckScope, held: Sequence[CitationRecord], state: dict) -> CheckOutcome:
    """Re-read the articles cited in the last hour; count the checks in its own state."""
    state["checks"] += 1
    recent = dict.fromkeys(cited.article_id for cited in held if cited.asked_s > scope.now - HOUR_S)
    if scope.cited_text is not None:
        mine = [cited for cited in held if cited.article_id in recent]
        text = {i: scope.cited_text[index] for i, (index, cited) in enumerate(
            (index, cited) for index, cited in enumerate(held) if cited.article_id in recent)}
        found = reread_by_text(scope.client, scope.kb_id, mine, text)
        indices = [index for index, cited in enumerate(held) if cited.article_id in recent]
        found.flagged = {indices[i]: label for i, label in found.flagged.items()}
        return found
    outcome = CheckOutcome()
    outcome.flagged = flag_citations(held, reread_articles(outcome, scope.client, scope.kb_id, recent))
    return outcome


STRATEGY = Strategy(
    "recent", "re-read the last hour's", exact=False, check=recent_check, colour="#e377c2",
    start=lambda scope: {"checks": 0},
)

#: The same check claimed exact: the day holds it to the truth, and it misses older citations.
CLAIMED_EXACT = Strategy("recent_exact", "last hour, claimed exact", exact=True, check=recent_check,
                         start=lambda scope: {"checks": 0})
