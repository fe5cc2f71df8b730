"""Advice 3, published only: an unpublished article is gone, and its going is an event.

- ``published.unpublish_event``: each acknowledged unpublish has an event of its article
  (an ``*unpublish*`` type, or the version the unpublish answered), once a poll has read
  the log past it.
- ``published.hidden``: from the moment an unpublish is acknowledged (or a poll lists its
  event, if sooner), no search lists the article and no read answers it (a refusal tells a
  gone citation apart from a changed one, which a read still answers).

Both need an unpublish tool; kbsim's is ``unpublish_knowledge_article`` (``kbsim serve
--admin-tools``). Without one they are not observable.
"""

from __future__ import annotations

import pandas as pd

from kbsim.check.card import Verdict
from kbsim.check.observe import Observed, reference_log
from kbsim.check.verdicts import holds, not_observable, violated
from kbsim.drive.remote import ADMIN_UNPUBLISH, POLL

__all__ = ["hidden", "unpublish_event"]


def _unpublished(observed: Observed, prop: str) -> pd.DataFrame | str:
    if not observed.has_tool(ADMIN_UNPUBLISH):
        return f"the server lists no {ADMIN_UNPUBLISH} (kbsim serve --admin-tools has one)"
    done = observed.unpublishes[observed.unpublishes["ok"]].dropna(subset=["article"])
    if done.empty:
        return "no unpublish was acknowledged"
    return done


def unpublish_event(observed: Observed) -> Verdict:
    """``published.unpublish_event`` (see the module)."""
    prop = "published.unpublish_event"
    done = _unpublished(observed, prop)
    if isinstance(done, str):
        return not_observable(prop, done)
    if not observed.has_tool(POLL):
        return not_observable(prop, f"the server lacks {POLL}")
    log = reference_log(observed)
    pages = observed.pages
    read_to_end_s = pages.loc[~pages["has_more"], "started_s"].max() if len(pages) else float("nan")
    covered = done[done["ended_s"] < read_to_end_s]
    if covered.empty:
        return not_observable(prop, "no poll read the log after an unpublish")
    kinds = log["type"].astype(str).str.contains("unpublish")
    by_type = set(log.loc[kinds.to_numpy(), "article"])
    by_version = set(zip(log["article"], log["version"], strict=True))
    lacking = covered[[a not in by_type and (a, v) not in by_version
                       for a, v in zip(covered["article"], covered["version"], strict=True)]]
    if len(lacking):
        return violated(prop, len(covered), f"{len(lacking)} acknowledged unpublishes have no event in the log",
                        lacking["call_id"])
    return holds(prop, len(covered), "unpublishes, each an event")


def hidden(observed: Observed) -> Verdict:
    """``published.hidden`` (see the module)."""
    prop = "published.hidden"
    done = _unpublished(observed, prop)
    if isinstance(done, str):
        return not_observable(prop, done)
    gone_s = done.groupby("article")["ended_s"].min()
    log = reference_log(observed)
    if len(log):
        kinds = log["type"].astype(str).str.contains("unpublish").to_numpy()
        listed = log[kinds].groupby("article")["seen_s"].min()
        gone_s = pd.concat([gone_s, listed.reindex(gone_s.index)], axis=1).min(axis=1)
    hits = observed.hits.assign(gone_s=observed.hits["article"].map(gone_s))
    found = hits[hits["started_s"] > hits["gone_s"]]
    reads = observed.reads.assign(gone_s=observed.reads["article"].map(gone_s))
    after = reads[reads["started_s"] > reads["gone_s"]]
    answered = after[after["ok"]]
    searches_after = int(observed.searches.shape[0] and (observed.searches["started_s"] > gone_s.min()).sum())
    observations = len(after) + searches_after
    if observations == 0:
        return not_observable(prop, "no search or read came after an unpublish")
    if len(found) or len(answered):
        parts = []
        if len(found):
            parts.append(f"{found['call_id'].nunique()} searches listed an unpublished article")
        if len(answered):
            parts.append(f"{len(answered)} reads answered an unpublished article")
        return violated(prop, observations, "; ".join(parts), list(found["call_id"]) + list(answered["call_id"]))
    codes = ", ".join(sorted(set(after["error_code"].dropna()))) or "none"
    return holds(prop, observations, f"searches and reads after an unpublish, none finding it (reads refused: {codes})")
