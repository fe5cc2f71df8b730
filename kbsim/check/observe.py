"""What a history shows, as tidy tables: the calls of each tool, their arguments and answers
parsed once, in the server's own field names (the history's ``field_map``).

Every property module (:mod:`kbsim.check.versions`, ...) reads an :class:`Observed`, never
the raw calls: the JSON of ``arguments`` and ``result`` is parsed here, one pass over the
calls, and each tool's rows become one frame whose columns the checks compare with pandas.
Versions are also parsed as RFC 3339 times (``*_us``, NaN where a server's version is not a
time), since "strictly larger" and "older" are questions about times.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from kbsim.drive.history import History
from kbsim.drive.remote import ADMIN_PUBLISH, ADMIN_UNPUBLISH, EDIT, POLL, READ, SEARCH, FieldMap

__all__ = ["Observed", "observe", "version_us"]

#: The columns every per-call frame carries, from the calls table.
CALL_KEYS = ["call_id", "client", "actor", "started_s", "ended_s", "ok", "error_code"]


def version_us(versions: pd.Series) -> pd.Series:
    """Versions as RFC 3339 times in microseconds since the epoch (float, exact to the
    microsecond until the year 2255; NaN where a version is not such a time): how versions are
    ordered, ``...05Z`` and ``...05.000Z`` alike."""
    text = pd.Series(versions, dtype="object").where(lambda v: v.map(lambda x: isinstance(x, str)), None)
    parsed = pd.to_datetime(text, utc=True, errors="coerce", format="ISO8601")
    out = parsed.dt.as_unit("us").astype("int64").astype("float64")  # the unit pandas inferred may be coarser
    out[parsed.isna().to_numpy()] = np.nan
    return out.set_axis(versions.index)


def _loads(text: Any) -> Any:
    if not isinstance(text, str):
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None


def _get(value: Any, key: str) -> Any:
    return value.get(key) if isinstance(value, dict) else None


@dataclass(frozen=True)
class Observed:
    """One history's calls, by tool, parsed.

    Attributes:
        calls: the calls table as recorded.
        tools: the tool list the server gave (``history.json``'s ``tools``).
        listed: the ids of the ``tools/list`` calls.
        edits: one row per edit call: ``article``, ``expected``, ``key``, ``args`` (the
            canonical arguments), ``content`` (its digest), ``version`` (answered),
            ``replayed``, ``answered`` (False: no answer came), ``expected_us``, ``version_us``.
        reads: one row per read: ``article``, ``version``, ``content``, ``version_us``.
        hits: one row per article a search listed: ``call_id``, ``article``, times.
        searches: one row per search call.
        pages: one row per answered poll: ``after``, ``events`` (how many), ``next_sequence``.
        events: one row per event a poll listed: ``call_id`` (the poll), ``seen_s`` (the poll's
            end), ``after``, ``position`` (1, 2, ... in the page), ``sequence``, ``type``,
            ``article``, ``version``, ``version_us``.
        unpublishes, publishes: one row per admin call: ``article``, ``version``.
    """

    calls: pd.DataFrame
    tools: list[dict[str, Any]]
    listed: list[int]
    edits: pd.DataFrame
    reads: pd.DataFrame
    hits: pd.DataFrame
    searches: pd.DataFrame
    pages: pd.DataFrame
    events: pd.DataFrame
    unpublishes: pd.DataFrame
    publishes: pd.DataFrame

    def has_tool(self, name: str) -> bool:
        """Whether the server listed ``name`` or the history holds a call of it."""
        return any(_get(tool, "name") == name for tool in self.tools) or bool((self.calls["tool"] == name).any())

    def writes(self) -> pd.DataFrame:
        """The writes the server acknowledged as applied: each edit once (the first answer
        of its key and arguments that was not a replay), every publish and unpublish.
        Columns ``call_id, kind, article, version, version_us, content, started_s, ended_s``."""
        edits = self.edits[self.edits["ok"] & ~self.edits["replayed"]]
        edits = edits.sort_values("started_s").drop_duplicates(["key", "args"], keep="first")
        parts = [edits.assign(kind="edit")]
        for frame, kind in ((self.unpublishes, "unpublish"), (self.publishes, "publish")):
            parts.append(frame[frame["ok"]].assign(kind=kind, content=None))
        columns = ["call_id", "client", "kind", "article", "version", "version_us", "content", "started_s", "ended_s"]
        return pd.concat([part[columns] for part in parts], ignore_index=True).sort_values("call_id")


def _frame(rows: pd.DataFrame, extra: dict[str, list]) -> pd.DataFrame:
    frame = rows[CALL_KEYS].reset_index(drop=True)
    for name, values in extra.items():
        frame[name] = pd.Series(values, dtype="object") if len(values) else pd.Series([], dtype="object")
    return frame


def observe(history: History) -> Observed:
    """The history's calls parsed into per-tool frames (see :class:`Observed`)."""
    calls = history.calls.sort_values("call_id").reset_index(drop=True)
    fields = FieldMap.model_validate(history.meta.get("field_map") or {})
    calls = calls.assign(ok=calls["ok"].astype(bool))
    for column in ("client", "actor", "tool", "arguments", "error_code", "result"):  # plain objects, None for null
        values = calls[column].astype("object")
        calls[column] = values.where(values.notna(), None)
    by_tool = {name: calls[calls["tool"] == name] for name in (EDIT, READ, SEARCH, POLL, ADMIN_PUBLISH,
                                                               ADMIN_UNPUBLISH)}

    rows = by_tool[EDIT]
    args = [_loads(text) for text in rows["arguments"]]
    results = [_loads(text) for text in rows["result"]]
    edits = _frame(rows, {
        "article": [_get(a, "article_id") for a in args],
        "expected": [_get(a, "expected_version") for a in args],
        "key": [_get(a, "idempotency_key") for a in args],
        "args": list(rows["arguments"]),
        "content": [_get(a, "content") for a in args],
        "version": [_get(r, fields.edit_version) if ok else None for r, ok in zip(results, rows["ok"], strict=True)],
        "replayed": [bool(_get(r, fields.edit_replayed)) if ok else False
                     for r, ok in zip(results, rows["ok"], strict=True)],
    })
    edits["replayed"] = edits["replayed"].astype(bool)
    edits["answered"] = ~edits["error_code"].fillna("").str.startswith("transport:")
    edits["expected_us"] = version_us(edits["expected"])
    edits["version_us"] = version_us(edits["version"])

    rows = by_tool[READ]
    args = [_loads(text) for text in rows["arguments"]]
    results = [_loads(text) if ok else None for text, ok in zip(rows["result"], rows["ok"], strict=True)]
    reads = _frame(rows, {
        "article": [_get(a, "article_id") for a in args],
        "version": [_get(r, fields.citation_version) for r in results],
        "content": [_get(r, fields.read_content) for r in results],
    })
    reads["version_us"] = version_us(reads["version"])

    rows = by_tool[SEARCH]
    searches = _frame(rows, {"query": [_get(_loads(a), "query") for a in rows["arguments"]]})
    hit_rows = []
    for call_id, started, ended, ok, text in zip(rows["call_id"], rows["started_s"], rows["ended_s"], rows["ok"],
                                                 rows["result"], strict=True):
        hits = _get(_loads(text), fields.search_results) if ok else None
        for hit in hits if isinstance(hits, list) else []:
            hit_rows.append((call_id, started, ended, _get(hit, fields.hit_article_id)))
    hits_frame = pd.DataFrame(hit_rows, columns=["call_id", "started_s", "ended_s", "article"])

    rows = by_tool[POLL]
    page_rows, event_rows = [], []
    for call_id, client, started, ended, ok, arg_text, text in zip(
            rows["call_id"], rows["client"], rows["started_s"], rows["ended_s"], rows["ok"], rows["arguments"],
            rows["result"], strict=True):
        if not ok:
            continue
        result = _loads(text)
        after = _get(_loads(arg_text), "after_sequence")
        events = _get(result, fields.poll_events)
        events = events if isinstance(events, list) else []
        page_rows.append((call_id, client, started, ended, after, len(events),
                          _get(result, fields.poll_next_sequence), bool(_get(result, fields.poll_has_more))))
        for position, event in enumerate(events, 1):
            event_rows.append((call_id, ended, after, position, _get(event, fields.event_sequence),
                               _get(event, "type"), _get(event, fields.event_article),
                               _get(event, fields.citation_version)))
    pages = pd.DataFrame(page_rows, columns=["call_id", "client", "started_s", "ended_s", "after", "events",
                                             "next_sequence", "has_more"])
    events = pd.DataFrame(event_rows, columns=["call_id", "seen_s", "after", "position", "sequence", "type",
                                               "article", "version"])
    events["version_us"] = version_us(events["version"])

    admin = {}
    for name, role in ((ADMIN_UNPUBLISH, "unpublish"), (ADMIN_PUBLISH, "publish")):
        rows = by_tool[name]
        args = [_loads(text) for text in rows["arguments"]]
        results = [_loads(text) if ok else None for text, ok in zip(rows["result"], rows["ok"], strict=True)]
        article = ([_get(a, "article_id") for a in args] if role == "unpublish"
                   else [_get(r, fields.published_article_id) for r in results])
        frame = _frame(rows, {"article": article, "version": [_get(r, "updated_at") for r in results]})
        frame["version_us"] = version_us(frame["version"])
        admin[role] = frame
    listed = calls.loc[calls["tool"] == "tools/list", "call_id"].astype(int).tolist()
    tools = [tool for tool in history.meta.get("tools") or [] if isinstance(tool, dict)]
    return Observed(calls, tools, listed, edits, reads, hits_frame, searches, pages, events,
                    admin["unpublish"], admin["publish"])


def reference_log(observed: Observed) -> pd.DataFrame:
    """The log as the polls saw it: one row per sequence number (its first sighting), sorted.

    Columns as :attr:`Observed.events`, plus ``first_call`` (the poll that first listed it)
    and ``seen_s`` its end. Two polls listing one sequence number differently are
    :mod:`kbsim.check.log`'s business; here the first sighting stands.
    """
    events = observed.events.dropna(subset=["sequence"])
    events = events[events["sequence"].map(lambda s: isinstance(s, (int, np.integer)) and not isinstance(s, bool))]
    events = events.sort_values(["seen_s", "call_id", "position"])
    first = events.drop_duplicates("sequence", keep="first").rename(columns={"call_id": "first_call"})
    first = first.astype({"sequence": "int64"})
    return first.sort_values("sequence").reset_index(drop=True)


def previous_call(observed: Observed) -> pd.Series:
    """Each call's id -> the id of the same client's call just before it (-1 for its first)."""
    calls = observed.calls[["call_id", "client"]].sort_values("call_id")
    previous = calls.groupby("client", sort=False)["call_id"].shift(1).fillna(-1).astype("int64")
    return pd.Series(previous.to_numpy(), index=calls["call_id"].to_numpy())


def overlapping(starts: np.ndarray, ends: np.ndarray, window_start: np.ndarray, window_end: np.ndarray) -> np.ndarray:
    """How many of the intervals ``[starts, ends]`` overlap each window (vectorised: sorted
    starts and ends, two binary searches per window)."""
    starts, ends = np.sort(starts), np.sort(ends)
    begun = np.searchsorted(starts, window_end, side="left")  # started before the window ended
    over = np.searchsorted(ends, window_start, side="right")  # ended before (or as) the window started
    return begun - over
