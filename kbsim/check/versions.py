"""Advice 1, versions: the value a citation carries is the one the edit compares, and each
save makes it strictly larger.

- ``versions.round_trip``: an edit sent with the version its client had just read (exactly,
  or cut to fewer fraction digits, as a JavaScript ``Date`` cuts it), with no other write
  of that article around it, must not be refused as a ``version_conflict``: the version is
  current, and a re-read would give the same value again, so the client would conflict
  forever. Answering it, or refusing the cut one with another code (kbsim's
  ``version_not_exact``), holds.
- ``versions.unique``: no two acknowledged writes of an article share a version, and the
  log's events of one article carry strictly rising versions.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from kbsim.check.card import Verdict
from kbsim.check.observe import Observed, overlapping, previous_call, reference_log
from kbsim.check.verdicts import holds, not_observable, violated
from kbsim.drive.remote import EDIT, READ

__all__ = ["round_trip", "unique"]


def _fraction_digits(versions: pd.Series) -> pd.Series:
    """Fraction digits of each RFC 3339 version (0 for whole seconds; NaN when not a time)."""
    digits = versions.astype("object").map(lambda v: v if isinstance(v, str) else "").str.extract(
        r"T\d\d:\d\d:\d\d(?:\.(\d+))?", expand=False)
    return digits.fillna("").str.len().astype("float64")


def round_trip(observed: Observed) -> Verdict:
    """``versions.round_trip`` (see the module): edits sent with a just-read, quiet version."""
    prop = "versions.round_trip"
    if not (observed.has_tool(EDIT) and observed.has_tool(READ)):
        return not_observable(prop, f"the server lacks {EDIT if not observed.has_tool(EDIT) else READ}")
    edits = observed.edits[observed.edits["answered"]]
    previous = previous_call(observed)
    edits = edits.assign(previous=previous.reindex(edits["call_id"].to_numpy()).to_numpy())
    reads = observed.reads[observed.reads["ok"]][["call_id", "started_s", "article", "version", "version_us"]]
    pairs = edits.merge(reads.rename(columns={"call_id": "previous", "started_s": "read_s", "article": "read_article",
                                              "version": "read_version", "version_us": "read_us"}), on="previous")
    pairs = pairs[pairs["article"] == pairs["read_article"]]
    exact = pairs["expected"] == pairs["read_version"]
    digits = _fraction_digits(pairs["expected"])
    step = np.power(10.0, 6 - np.minimum(digits.to_numpy(), 6))
    read_us = pairs["read_us"].to_numpy()
    cut = (~exact & (_fraction_digits(pairs["read_version"]) > digits)
           & (np.floor(read_us / step) * step == pairs["expected_us"].to_numpy()))
    pairs = pairs[exact | cut].assign(cut=cut[exact | cut])
    if pairs.empty:
        return not_observable(prop, "no edit sent the version its client had just read")
    # quiet: no other write call on the article between the read's start and the edit's end
    writes = pd.concat([observed.edits[["article", "started_s", "ended_s"]],
                        observed.unpublishes[["article", "started_s", "ended_s"]]], ignore_index=True)
    quiet = np.zeros(len(pairs), dtype=bool)
    for article, index in pairs.groupby("article").indices.items():
        mine = writes[writes["article"] == article]
        rows = pairs.iloc[index]
        around = overlapping(mine["started_s"].to_numpy(), mine["ended_s"].to_numpy(), rows["read_s"].to_numpy(),
                             rows["ended_s"].to_numpy())
        quiet[index] = around <= 1  # the edit itself
    pairs = pairs[quiet]
    if pairs.empty:
        return not_observable(prop, "every edit sent with a just-read version had another write around it")
    bad = pairs[pairs["error_code"] == "version_conflict"]
    if len(bad):
        what = "cut to milliseconds" if bad["cut"].all() else "exactly as read"
        return violated(prop, len(pairs), f"{len(bad)} edits sent the current version ({what}, nothing else "
                                          "writing) and were refused as a version_conflict: they would conflict "
                                          "forever", np.concatenate([bad["call_id"], bad["previous"]]))
    cut_pairs = int(pairs["cut"].sum())
    return holds(prop, len(pairs), f"edits with a just-read version ({cut_pairs} cut to fewer digits) answered "
                                   "or clearly refused")


def unique(observed: Observed) -> Verdict:
    """``versions.unique`` (see the module): acknowledged writes' versions, and the log's."""
    prop = "versions.unique"
    writes = observed.writes().dropna(subset=["version"])
    shared = writes[writes.duplicated(["article", "version"], keep=False)]
    log = reference_log(observed).dropna(subset=["version_us"])
    log = log.sort_values("sequence")
    before = log.groupby("article", sort=False)["version_us"].shift(1)
    not_rising = log[(log["version_us"] <= before).to_numpy()]
    observations = len(writes) + len(log)
    if observations == 0:
        return not_observable(prop, "no write was acknowledged and no event listed")
    if len(shared) or len(not_rising):
        ids = list(shared["call_id"]) + list(not_rising["first_call"])
        parts = []
        if len(shared):
            parts.append(f"{len(shared)} acknowledged writes share a version with another write of the same article")
        if len(not_rising):
            parts.append(f"{len(not_rising)} events carry a version not above the article's previous event's")
        return violated(prop, observations, "; ".join(parts), ids)
    return holds(prop, observations, "writes and events, every version distinct and rising")
