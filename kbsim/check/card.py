"""The report card: one verdict per property, grouped by the write-up's five pieces of advice,
rendered as a terminal table, JSON and Markdown (for a pull request).

A :class:`Verdict` is what one property module found in one history: it holds, it is
violated (with the ids of the calls that show it), or it is not observable (and why).
:func:`combine` sets the verdicts of several histories side by side: a property is violated
if any day shows it, holds if some day observed it and none violated it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

from kbsim.files import atomic_write_text

__all__ = ["ADVICE", "Evidence", "ReportCard", "Verdict", "combine", "write_card"]

Status = Literal["holds", "violated", "not observable"]

#: The write-up's advice, by number: what a builder is told.
ADVICE = {
    1: "Versions: one value cited and compared, strictly rising",
    2: "The log: gapless, one event per write, resumable",
    3: "Published only: unpublished is gone, and its going is an event",
    4: "Compare-and-swap and idempotency keys",
    5: "Marking: read-only tools say so, the edit is destructive and open-world",
}
#: How many call ids a verdict shows (all are counted).
SHOWN_CALLS = 12


class Evidence(BaseModel):
    """The calls that show a violation: which history (0, 1, ... as given) and their ids."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    history: int = 0
    call_ids: list[int]


class Verdict(BaseModel):
    """One property's verdict.

    Attributes:
        property: its id, ``versions.unique`` ...
        advice: the advice (1 to 5) it belongs to.
        title: what it says, in a line.
        status: holds, violated or not observable.
        observed: how many observations bore on it (pairs, pages, reads ...).
        detail: the evidence or the reason, in a line.
        evidence: the calls that show a violation.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    property: str
    advice: int
    title: str
    status: Status
    observed: int = 0
    detail: str = ""
    evidence: list[Evidence] = []

    def call_ids(self) -> list[int]:
        """Every call id of the evidence (of all histories), in order."""
        return [call_id for item in self.evidence for call_id in item.call_ids]


class ReportCard(BaseModel):
    """The verdicts of one or more histories of one server."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kbsim_version: str
    server: str
    histories: list[str]
    calls: int
    verdicts: list[Verdict]

    @property
    def violated(self) -> list[Verdict]:
        """The violated properties."""
        return [verdict for verdict in self.verdicts if verdict.status == "violated"]

    def table(self) -> str:
        """The card as a plain-text table for a terminal."""
        rows = [("advice", "property", "verdict", "evidence")]
        for verdict in self.verdicts:
            rows.append((str(verdict.advice), verdict.property, verdict.status,
                         _evidence_text(verdict, len(self.histories) > 1)))
        widths = [max(len(row[i]) for row in rows) for i in range(3)]
        lines = [f"kbsim check {self.kbsim_version}: {self.server} ({len(self.histories)} "
                 f"histor{'y' if len(self.histories) == 1 else 'ies'}, {self.calls} calls)"]
        for number, row in enumerate(rows):
            lines.append("  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row[:3])) + "  " + row[3])
            if number == 0:
                lines.append("  ".join("-" * w for w in widths) + "  " + "-" * 8)
        return "\n".join(lines) + "\n"

    def markdown(self) -> str:
        """The card as Markdown: a table per advice, to paste into a pull request."""
        lines = [f"### kbsim check: {_md(self.server)}", "",
                 f"kbsim {self.kbsim_version}; {len(self.histories)} driven "
                 f"{'day' if len(self.histories) == 1 else 'days'}, {self.calls} calls.", ""]
        lines += ["| advice | property | verdict | evidence |", "|---|---|---|---|"]
        marks = {"holds": "holds", "violated": "**violated**", "not observable": "not observable"}
        for verdict in self.verdicts:
            lines.append(f"| {verdict.advice}. {_md(ADVICE[verdict.advice].split(':')[0])} | "
                         f"`{verdict.property}`: {_md(verdict.title)} | {marks[verdict.status]} | "
                         f"{_md(_evidence_text(verdict, len(self.histories) > 1))} |")
        return "\n".join(lines) + "\n"

    def json_text(self) -> str:
        """The card as JSON."""
        return json.dumps(self.model_dump(mode="json"), indent=1, ensure_ascii=False) + "\n"


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _evidence_text(verdict: Verdict, days: bool = False) -> str:
    if verdict.status != "violated":
        return verdict.detail
    ids = []
    for item in verdict.evidence:
        prefix = f"day {item.history + 1}: " if days else ""
        ids += [f"{prefix}{call_id}" for call_id in item.call_ids]
    shown = ", ".join(ids[:SHOWN_CALLS]) + (f" (+{len(ids) - SHOWN_CALLS})" if len(ids) > SHOWN_CALLS else "")
    return f"{verdict.detail}; calls {shown}"


def combine(per_history: Sequence[Sequence[Verdict]]) -> list[Verdict]:
    """The verdicts of several histories as one per property (in the first history's order)."""
    out = []
    for group in zip(*per_history, strict=True):
        first = group[0]
        violated = [(i, v) for i, v in enumerate(group) if v.status == "violated"]
        holding = [v for v in group if v.status == "holds"]
        observed = sum(v.observed for v in group)
        if violated:
            evidence = [Evidence(history=i, call_ids=item.call_ids) for i, v in violated for item in v.evidence]
            out.append(first.model_copy(update={
                "status": "violated", "observed": observed, "evidence": evidence,
                "detail": violated[0][1].detail}))
        elif holding:
            detail = (f"{observed} observations in {len(holding)} of {len(group)} days" if len(group) > 1
                      else holding[0].detail)
            out.append(first.model_copy(update={"status": "holds", "observed": observed, "detail": detail}))
        else:
            out.append(first.model_copy(update={"observed": 0}))
    return out


def write_card(card: ReportCard, json_path: str | Path | None, markdown_path: str | Path | None) -> None:
    """Write the card as JSON and/or Markdown, each file atomically."""
    if json_path is not None:
        atomic_write_text(json_path, card.json_text())
    if markdown_path is not None:
        atomic_write_text(markdown_path, card.markdown())
