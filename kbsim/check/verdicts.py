"""The verdict builders every property module uses, and the properties' table."""

from __future__ import annotations

from collections.abc import Iterable

from kbsim.check.card import Evidence, Verdict

__all__ = ["PROPERTIES", "holds", "not_observable", "violated"]

#: Every property: id -> (advice, what it says). The card lists them in this order.
PROPERTIES: dict[str, tuple[int, str]] = {
    "versions.round_trip": (1, "a cited version is what the edit takes; cut to milliseconds it matches or is "
                               "refused clearly, never a conflict forever"),
    "versions.unique": (1, "each save makes an article's version strictly larger; no two saves share one"),
    "log.sequence": (2, "sequences gapless, rising by one; a resumed cursor neither repeats nor misses"),
    "log.one_event_per_write": (2, "every applied save and edit has exactly one event; no event lacks its save"),
    "log.event_visible": (2, "a read after an event returns that event's version or a later one"),
    "published.unpublish_event": (3, "an unpublish is an event"),
    "published.hidden": (3, "an unpublished article is neither searchable nor readable from then on"),
    "cas.stale_refused": (4, "no edit succeeds with a stale expected version"),
    "cas.no_lost_save": (4, "an acknowledged save is what reads return until the next write"),
    "keys.replay": (4, "a replay returns the first result, even racing; the key with other arguments is refused"),
    "marking.annotations": (5, "search, read and poll are read-only; the edit is destructive and open-world"),
}


def _make(prop: str, status, observed: int, detail: str, evidence: list[Evidence] | None = None) -> Verdict:
    advice, title = PROPERTIES[prop]
    return Verdict(property=prop, advice=advice, title=title, status=status, observed=observed, detail=detail,
                   evidence=evidence or [])


def holds(prop: str, observed: int, what: str) -> Verdict:
    """``prop`` held over ``observed`` observations (``what`` names them)."""
    return _make(prop, "holds", observed, f"{observed} {what}")


def violated(prop: str, observed: int, detail: str, call_ids: Iterable[int]) -> Verdict:
    """``prop`` violated; ``call_ids`` show it (sorted, each once)."""
    ids = sorted({int(call_id) for call_id in call_ids})
    return _make(prop, "violated", observed, detail, [Evidence(history=0, call_ids=ids)])


def not_observable(prop: str, why: str) -> Verdict:
    """``prop`` could not be observed in the history, because ``why``."""
    return _make(prop, "not observable", 0, why)
