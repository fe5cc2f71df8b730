"""Check histories: every property module over each history, one report card for them all."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from kbsim.check import cas_keys, log, marking, published, versions
from kbsim.check.card import ReportCard, Verdict, combine
from kbsim.check.observe import Observed, observe
from kbsim.check.verdicts import PROPERTIES
from kbsim.drive.history import History, HistoryError, read_history
from kbsim.version import __version__

__all__ = ["CHECKS", "check_folders", "check_history", "check_observed"]

#: Each property's check, in the card's order.
CHECKS: dict[str, Callable[[Observed], Verdict]] = {
    "versions.round_trip": versions.round_trip,
    "versions.unique": versions.unique,
    "log.sequence": log.sequence,
    "log.one_event_per_write": log.one_event_per_write,
    "log.event_visible": log.event_visible,
    "published.unpublish_event": published.unpublish_event,
    "published.hidden": published.hidden,
    "cas.stale_refused": cas_keys.stale_refused,
    "cas.no_lost_save": cas_keys.no_lost_save,
    "keys.replay": cas_keys.replay,
    "marking.annotations": marking.tool_hints,
}
assert list(CHECKS) == list(PROPERTIES)


def check_observed(observed: Observed) -> list[Verdict]:
    """Every property's verdict over one history's observations, in the card's order."""
    return [check(observed) for check in CHECKS.values()]


def check_history(history: History) -> list[Verdict]:
    """Every property's verdict over one history.

    Raises:
        HistoryError: the history is partial (its day stopped before its end).
    """
    if not history.complete:
        raise HistoryError(f"a partial history (stopped: {history.meta.get('stopped_because')}): a partial day "
                           "is never checked; drive the day again")
    return check_observed(observe(history))


def _server(history: History) -> str:
    server = history.meta.get("server") or {}
    where = server.get("url") or " ".join(map(str, server.get("command") or [])) or "a server"
    name = f"{server.get('name', '')} {server.get('version', '')}".strip()
    return f"{name} at {where}" if name else str(where)


def check_folders(folders: Sequence[str | Path]) -> ReportCard:
    """The report card of the histories in ``folders`` (each read whole before any is checked).

    Raises:
        HistoryError: a folder is not a history of this format, was driven by another
            kbsim version, is damaged, or is partial: one line naming it.
    """
    histories = []
    for folder in folders:
        history = read_history(folder)
        written_by = history.meta.get("kbsim_version")
        if written_by != __version__:  # the driver's recording and mapping are its version's
            raise HistoryError(f"{folder}: a history driven by kbsim {written_by}; this is kbsim {__version__}, "
                               "which checks only its own version's histories: drive the day again")
        if not history.complete:
            raise HistoryError(f"{folder}: a partial history (stopped: {history.meta.get('stopped_because')}); "
                               "a partial day is never checked: drive it again")
        histories.append(history)
    per_history = [check_observed(observe(history)) for history in histories]
    return ReportCard(kbsim_version=__version__, server=_server(histories[0]),
                      histories=[str(folder) for folder in folders],
                      calls=sum(len(history.calls) for history in histories), verdicts=combine(per_history))
