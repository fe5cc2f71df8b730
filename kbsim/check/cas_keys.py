"""Advice 4, compare-and-swap and idempotency keys.

- ``cas.stale_refused``: no edit is applied whose expected version is older than a write
  of that article acknowledged before the edit was sent.
- ``cas.no_lost_save``: a read that starts after a write was acknowledged returns that
  write's version (and, for an edit, its content) or a later one; a version shared by two
  writes (``versions.unique``'s business) is not held against a read.
- ``keys.replay``: the calls of one idempotency key with the same arguments, from the first
  one applied on (racing it or after it), are all answered with the first one's version;
  and one key is never applied with two different sets of arguments.
"""

from __future__ import annotations

import pandas as pd

from kbsim.check.card import Verdict
from kbsim.check.observe import Observed
from kbsim.check.verdicts import holds, not_observable, violated
from kbsim.drive.remote import EDIT, READ

__all__ = ["no_lost_save", "replay", "stale_refused"]


def _latest_write_before(calls: pd.DataFrame, writes: pd.DataFrame) -> pd.DataFrame:
    """``calls`` (sorted by start) with the latest write of their article acknowledged before
    each started: columns ``w_call``, ``w_kind``, ``w_version``, ``w_us``, ``w_content``, ``w_shared``."""
    writes = writes.assign(w_shared=writes.duplicated(["article", "version"], keep=False))
    right = writes.rename(columns={"call_id": "w_call", "kind": "w_kind", "version": "w_version",
                                   "version_us": "w_us", "content": "w_content", "ended_s": "w_ended_s"})
    right = right[["article", "w_ended_s", "w_call", "w_kind", "w_version", "w_us", "w_content", "w_shared"]]
    right = right.dropna(subset=["article"]).sort_values("w_ended_s")
    right = right.astype({"article": "object"})
    left = calls.dropna(subset=["article"]).sort_values("started_s").astype({"article": "object"})
    matched = pd.merge_asof(left, right, left_on="started_s", right_on="w_ended_s", by="article",
                            direction="backward", allow_exact_matches=False)
    return matched.dropna(subset=["w_call"])


def stale_refused(observed: Observed) -> Verdict:
    """``cas.stale_refused`` (see the module)."""
    prop = "cas.stale_refused"
    if not observed.has_tool(EDIT):
        return not_observable(prop, f"the server lacks {EDIT}")
    edits = observed.edits[observed.edits["answered"]].dropna(subset=["expected_us"])
    writes = observed.writes()
    matched = _latest_write_before(edits, writes)
    stale = matched[matched["expected_us"] < matched["w_us"]]
    if stale.empty:
        return not_observable(prop, "no edit was sent with a version older than an acknowledged write")
    accepted = stale[stale["call_id"].isin(writes["call_id"])]  # applied, not a replay of an earlier edit
    if len(accepted):
        return violated(prop, len(stale), f"{len(accepted)} edits were applied with an expected version older than "
                                          "an acknowledged write of the article", list(accepted["call_id"])
                        + [int(c) for c in accepted["w_call"]])
    return holds(prop, len(stale), "edits with a stale expected version, all refused")


def no_lost_save(observed: Observed) -> Verdict:
    """``cas.no_lost_save`` (see the module)."""
    prop = "cas.no_lost_save"
    if not (observed.has_tool(EDIT) and observed.has_tool(READ)):
        return not_observable(prop, f"the server lacks {EDIT if not observed.has_tool(EDIT) else READ}")
    reads = observed.reads[observed.reads["ok"]]
    matched = _latest_write_before(reads, observed.writes())
    matched = matched[(matched["w_kind"] != "unpublish") & ~matched["w_shared"].astype(bool)]
    if matched.empty:
        return not_observable(prop, "no read came after an acknowledged write of its article")
    older = matched[matched["version_us"] < matched["w_us"]]
    same = matched[(matched["version"] == matched["w_version"]) & matched["w_content"].notna()]
    other_text = same[same["content"] != same["w_content"]]
    if len(older) or len(other_text):
        parts = []
        if len(older):
            parts.append(f"{len(older)} reads returned a version older than an acknowledged write")
        if len(other_text):
            parts.append(f"{len(other_text)} reads returned another text under the write's version")
        bad = pd.concat([older, other_text])
        return violated(prop, len(matched), "; ".join(parts), list(bad["call_id"]) + [int(c) for c in bad["w_call"]])
    return holds(prop, len(matched), "reads after an acknowledged write, each returning it or a later one")


def replay(observed: Observed) -> Verdict:
    """``keys.replay`` (see the module)."""
    prop = "keys.replay"
    if not observed.has_tool(EDIT):
        return not_observable(prop, f"the server lacks {EDIT}")
    edits = observed.edits[observed.edits["answered"]].dropna(subset=["key"])
    repeated = edits[edits.duplicated("key", keep=False)]
    if repeated.empty:
        return not_observable(prop, "no idempotency key was sent twice")
    bad: list[int] = []
    notes = []
    # one key applied with two sets of arguments
    applied = repeated[repeated["ok"]]
    arg_sets = applied.groupby("key")["args"].nunique()
    reused = applied[applied["key"].isin(arg_sets[arg_sets > 1].index)]
    if len(reused):
        bad += list(reused["call_id"])
        notes.append(f"{reused['key'].nunique()} keys were applied with different arguments")
    # the same key and arguments: from the first applied on, every answer is the first's version
    first = (applied.sort_values("started_s").drop_duplicates(["key", "args"])
             .set_index(["key", "args"])[["call_id", "started_s", "version"]]
             .rename(columns={"call_id": "first_call", "started_s": "first_s", "version": "first_version"}))
    same = repeated.join(first, on=["key", "args"], how="inner")
    later = same[(same["call_id"] != same["first_call"]) & (same["ended_s"] > same["first_s"])]
    wrong = later[~later["ok"] | (later["version"] != later["first_version"])]
    if len(wrong):
        bad += list(wrong["call_id"]) + list(wrong["first_call"])
        notes.append(f"{len(wrong)} replays were refused or answered another version than the first call")
    observations = int(repeated["key"].nunique())
    if bad:
        return violated(prop, observations, "; ".join(notes), bad)
    return holds(prop, observations, f"keys sent more than once ({len(later)} replays answered as the first)")
