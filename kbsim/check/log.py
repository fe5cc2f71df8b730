"""Advice 2, the log: gapless, one event per write, and each event visible to a read after it.

- ``log.sequence``: each page a poll answered starts right after its cursor and rises by one
  (so a client resuming from any cursor neither repeats nor misses an event), and no two
  polls list one sequence number as different events.
- ``log.one_event_per_write``: within the stretch of the log the polls read whole, each
  acknowledged write (edit, publish, unpublish) has exactly one event of its article and
  version, and no event lacks an acknowledged write (unless a write on that article went
  unanswered, which may have been applied).
- ``log.event_visible``: a read that starts after a poll listed an event of its article
  returns that event's version or a later one.
"""

from __future__ import annotations

import pandas as pd

from kbsim.check.card import Verdict
from kbsim.check.observe import Observed, reference_log
from kbsim.check.verdicts import holds, not_observable, violated
from kbsim.drive.remote import POLL, READ

__all__ = ["event_visible", "one_event_per_write", "sequence"]


def sequence(observed: Observed) -> Verdict:
    """``log.sequence`` (see the module): every answered page, and every sequence number."""
    prop = "log.sequence"
    if not observed.has_tool(POLL):
        return not_observable(prop, f"the server lacks {POLL}")
    events = observed.events
    if events.empty:
        return not_observable(prop, "no poll listed an event")
    expected = pd.to_numeric(events["after"], errors="coerce") + events["position"]
    got = pd.to_numeric(events["sequence"], errors="coerce")
    broken = events[(got != expected).to_numpy()]
    identity = events.assign(identity=events["type"].astype(str) + "|" + events["article"].astype(str) + "|"
                             + events["version"].astype(str))
    differing = identity.groupby("sequence")["identity"].transform("nunique") > 1
    changed = identity[differing.to_numpy()]
    pages = int((observed.pages["events"] > 0).sum())
    if len(broken) or len(changed):
        parts = []
        if len(broken):
            first = broken.iloc[0]
            parts.append(f"{broken['call_id'].nunique()} pages do not rise by one from their cursor (the first: "
                         f"after {first['after']} came {first['sequence']} at position {first['position']})")
        if len(changed):
            parts.append(f"{changed['sequence'].nunique()} sequence numbers listed as different events")
        return violated(prop, pages, "; ".join(parts), list(broken["call_id"]) + list(changed["call_id"]))
    listed = observed.pages[observed.pages["events"] > 0]
    resumed = int((pd.to_numeric(listed["after"], errors="coerce") > 0).sum())
    return holds(prop, pages, f"pages, each rising by one from its cursor ({resumed} resumed mid-log)")


def one_event_per_write(observed: Observed) -> Verdict:
    """``log.one_event_per_write`` (see the module)."""
    prop = "log.one_event_per_write"
    if not observed.has_tool(POLL):
        return not_observable(prop, f"the server lacks {POLL}")
    log = reference_log(observed)
    writes = observed.writes().dropna(subset=["version"])
    if writes.empty or log.empty:
        return not_observable(prop, "no acknowledged write, or no event listed")
    pages = observed.pages
    tails = pages[~pages["has_more"]]
    if tails.empty:
        return not_observable(prop, "no poll read the log to its end")
    read_to_end_s = tails["started_s"].max()
    # events listed before the first write began are the knowledge base's past, not the day's
    first_write_s = writes["started_s"].min()
    past = log.loc[log["seen_s"] < first_write_s, "sequence"]
    in_day = log[log["sequence"] > (int(past.max()) if len(past) else -1)]
    if in_day.empty:
        return not_observable(prop, "no poll listed an event after the first write")
    first, last = int(in_day["sequence"].min()), int(in_day["sequence"].max())
    holes = (last - first + 1) - len(in_day)
    # a save or edit that started after the day's first listed event existed, and ended before a poll
    # read the log to its end, has its event in the listed stretch (an unpublish is advice 3's)
    began_s = in_day["seen_s"].iloc[0]
    covered = writes[(writes["started_s"] > began_s) & (writes["ended_s"] < read_to_end_s)
                     & (writes["kind"] != "unpublish")]
    events = in_day.groupby(["article", "version"]).size().rename("events")
    missing = pd.concat([covered.groupby(["article", "version"]).size().rename("writes"), events],
                        axis=1).fillna(0)
    # a sequence number never listed may hold the event: then an absent event is not evidence
    missing = missing[(missing["writes"] > missing["events"]) & (holes == 0)]
    extra = pd.concat([writes.groupby(["article", "version"]).size().rename("writes"), events], axis=1).fillna(0)
    extra = extra[extra["events"] > extra["writes"]]
    # an event no write answered for is excused by an unanswered write on its article (it may have applied)
    unanswered = set(observed.edits.loc[~observed.edits["answered"], "article"])
    extra = extra[[article not in unanswered or count > 0 for (article, _), count in extra["writes"].items()]]
    observations = len(covered) + len(in_day)
    if len(missing) or len(extra):
        keyed = covered.set_index(["article", "version"])
        ids = list(keyed.loc[keyed.index.isin(missing.index), "call_id"])
        keyed = in_day.set_index(["article", "version"])
        ids += list(keyed.loc[keyed.index.isin(extra.index), "first_call"])
        parts = []
        if len(missing):
            parts.append(f"{len(missing)} acknowledged writes have no event of their version")
        if len(extra):
            parts.append(f"{int((extra['events'] - extra['writes']).sum())} events lack an acknowledged write "
                         "(or repeat one)")
        return violated(prop, observations, "; ".join(parts), ids)
    unjudged = f"; {holes} sequence numbers never listed, so absent events not judged" if holes else ""
    return holds(prop, observations, f"writes and events matched one to one (sequences {first} to {last}){unjudged}")


def event_visible(observed: Observed) -> Verdict:
    """``log.event_visible`` (see the module): reads started after a poll listed an event."""
    prop = "log.event_visible"
    if not (observed.has_tool(POLL) and observed.has_tool(READ)):
        return not_observable(prop, f"the server lacks {POLL if not observed.has_tool(POLL) else READ}")
    log = reference_log(observed).dropna(subset=["article"])
    reads = observed.reads[observed.reads["ok"]].dropna(subset=["version"])
    if log.empty or reads.empty:
        return not_observable(prop, "no event listed, or no read answered")
    # the latest (highest) sequence of each article seen by each moment
    seen = log.sort_values("seen_s")[["article", "seen_s", "sequence", "first_call"]].copy()
    seen["latest"] = seen.groupby("article")["sequence"].cummax()
    # each version's sequence (the highest event carrying it: a shared version is never held against a read)
    version_seq = log.groupby(["article", "version"])["sequence"].max().rename("read_sequence")
    reads = reads.join(version_seq, on=["article", "version"]).dropna(subset=["read_sequence"])
    reads = reads.sort_values("started_s")
    reads = reads.astype({"article": "object"})
    seen = seen.astype({"article": "object"})
    matched = pd.merge_asof(reads, seen[["article", "seen_s", "latest", "first_call"]], left_on="started_s",
                            right_on="seen_s", by="article", allow_exact_matches=False, direction="backward")
    matched = matched.dropna(subset=["latest"])
    if matched.empty:
        return not_observable(prop, "no read started after a poll listed an event of its article")
    kinds = log.set_index("sequence")["type"]
    unpublished = matched["latest"].map(kinds).astype(str).str.contains("unpublish")
    matched = matched[~unpublished.to_numpy()]
    stale = matched[matched["read_sequence"] < matched["latest"]]
    if len(stale):
        return violated(prop, len(matched), f"{len(stale)} reads returned a version older than an event a poll "
                                            "had already listed", list(stale["call_id"]) + list(stale["first_call"]))
    return holds(prop, len(matched), "reads after a listed event, each returning its version or a later one")
