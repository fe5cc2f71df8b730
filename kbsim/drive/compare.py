"""Model against measured: driven days beside the same days simulated in process.

Each history :func:`kbsim.drive.day.drive_day` wrote holds the driven day's tables and,
under ``model/``, the in-process twin's (same seed, corpus and parameters). Both go
through the one metric path (:func:`kbsim.stats.metrics.run_metrics`) and the one
interval method (:func:`kbsim.stats.summary.summarize`, the seed as the unit), so every
figure is set beside its model with its interval over the driven days. Partial days are
never counted.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from kbsim.drive.client import DriveError
from kbsim.drive.history import read_history
from kbsim.sim.tables import DAY_TABLES
from kbsim.stats.metrics import run_metrics
from kbsim.stats.summary import summarize

__all__ = ["COMPARED", "against_model", "model_page"]

#: The figures set side by side, in the page's order: (metric name, what it is).
COMPARED = (
    ("stale_citation_share@end", "stale citations at end of day"),
    ("title_recall@end", "title-check recall"),
    ("calls_per_check[title]", "calls per check, title"),
    ("calls_per_check[reread]", "calls per check, re-read"),
    ("calls_per_check[poll]", "calls per check, poll"),
    ("bytes_per_check[title]", "bytes per check, title"),
    ("bytes_per_check[reread]", "bytes per check, re-read"),
    ("bytes_per_check[poll]", "bytes per check, poll"),
    ("rejection_rate", "edit rejections (version conflicts)"),
    ("replay_success", "replays that answered replayed and wrote nothing"),
)


def _tables(folder: Path) -> dict[str, pd.DataFrame]:
    try:
        return {name: pd.read_parquet(folder / "model" / f"{name}.parquet") for name in DAY_TABLES}
    except (OSError, ValueError):
        raise DriveError(f"{folder}: no model tables (model/*.parquet): not written by kbsim drive") from None


def against_model(histories: Iterable[str | Path]) -> tuple[pd.DataFrame, dict[str, Any]]:
    """The model-against-measured table of complete driven days, and notes on them.

    Returns:
        ``(table, notes)``: one row per figure of :data:`COMPARED` present, with the model's
        and the measured value, each with its 95% interval over the days (the seed is the
        unit), and whether the intervals overlap; notes count the days used and skipped,
        and sum the calls' latency and the days' lateness.

    Raises:
        DriveError: no complete day among ``histories``, or a folder that is not a history.
    """
    per_run: list[pd.DataFrame] = []
    notes: dict[str, Any] = {"days": 0, "partial": [], "seeds": [], "latency_ms": {},
                          "without_unpublishes": False, "servers": set()}
    latencies = []
    for folder in map(Path, histories):
        history = read_history(folder)
        if not history.complete:
            notes["partial"].append(f"{folder} ({history.meta['stopped_because']})")
            continue
        seed, day_s = int(history.meta["seed"]), float(history.meta["params"]["day_hours"]) * 3600.0
        for source, tables in (("measured", history.tables), ("model", _tables(folder))):
            metrics = run_metrics(tables, day_s)
            metrics.insert(0, "source", source)
            metrics.insert(0, "seed", seed)
            per_run.append(metrics)
        calls = history.calls
        day_calls = calls[calls["actor"] != "probe"]
        latencies.append((day_calls["ended_s"] - day_calls["started_s"]).to_numpy())
        notes["days"] += 1
        notes["seeds"].append(seed)
        lateness = history.tables.get("lateness")
        if lateness is not None and len(lateness):
            notes["lag_max_s"] = max(notes.get("lag_max_s", 0.0), float(lateness["lag_s"].max()))
            notes["lag_p99_s"] = max(notes.get("lag_p99_s", 0.0), float(np.percentile(lateness["lag_s"], 99)))
        server = history.meta["server"]
        notes["servers"].add(f"{server.get('name', '?')} {server.get('version', '')} over {server['transport']}")
        mix = history.meta["params"]["saves"]["mix"]
        notes["without_unpublishes"] |= mix["unpublish"] == 0
    if not per_run:
        raise DriveError(f"no complete driven day among the histories given ({len(notes['partial'])} partial)")
    lat = np.concatenate(latencies) * 1000.0
    notes["latency_ms"] = {"calls": len(lat), "p50": float(np.percentile(lat, 50)),
                           "p99": float(np.percentile(lat, 99))}
    notes["servers"] = sorted(notes["servers"])
    summary = summarize(pd.concat(per_run, ignore_index=True), by=["source"])
    rows = []
    for name, label in COMPARED:
        pair = {source: summary[(summary["source"] == source) & (summary["name"] == name)]
                for source in ("model", "measured")}
        if any(frame.empty for frame in pair.values()):
            continue
        model, measured = (pair[s].iloc[0] for s in ("model", "measured"))
        rows.append({
            "name": name, "figure": label,
            "model": model["value"], "model_low": model["ci_low"], "model_high": model["ci_high"],
            "measured": measured["value"], "measured_low": measured["ci_low"], "measured_high": measured["ci_high"],
            "days": int(measured["seeds"]),
            "agree": _overlap(model, measured),
        })
    return pd.DataFrame(rows), notes


def _overlap(a: pd.Series, b: pd.Series) -> bool:
    """Whether two estimates' intervals overlap (equal values agree whatever their intervals)."""
    if math.isclose(a["value"], b["value"], rel_tol=1e-9, abs_tol=1e-12):
        return True
    lows = (a["ci_low"], b["ci_low"])
    highs = (a["ci_high"], b["ci_high"])
    if any(math.isnan(x) for x in (*lows, *highs)):
        return False
    return max(lows) <= min(highs)


def _shown(value: float, low: float, high: float, name: str) -> str:
    share = name.split("[")[0].split("@")[0] in ("stale_citation_share", "title_recall", "rejection_rate",
                                                 "replay_success")
    if share:
        text = f"{value:.1%}"
        return text if math.isnan(low) else f"{text} [{low:.1%}, {high:.1%}]"
    text = f"{value:,.1f}"
    return text if math.isnan(low) else f"{text} [{low:,.1f}, {high:,.1f}]"


def model_page(table: pd.DataFrame, notes: dict[str, Any], command: str) -> str:
    """The page "your server against the model": the table and what it rests on (Markdown)."""
    lines = [
        "# Your server against the model",
        "",
        f"Regenerate with `{command}`.",
        "",
        f"{notes['days']} driven day(s) (seeds {', '.join(map(str, notes['seeds']))}) against "
        f"{', '.join(notes['servers'])}, each beside the same day simulated in process (same seed, corpus and "
        "parameters). Each figure is the estimate over the days with its 95% interval (the seed is the unit; "
        "kbsim.stats' one interval method); *agree* means the two intervals overlap.",
        "",
        "| figure | model | measured | agree |",
        "|---|---|---|---|",
    ]
    for row in table.itertuples():
        lines.append(f"| {row.figure} (`{row.name}`) | {_shown(row.model, row.model_low, row.model_high, row.name)} "
                     f"| {_shown(row.measured, row.measured_low, row.measured_high, row.name)} "
                     f"| {'yes' if row.agree else '**no**'} |")
    same = [math.isclose(row.model, row.measured, rel_tol=1e-9, abs_tol=1e-12) for row in table.itertuples()]
    if same and all(same):
        lines += ["", "Every figure measured equals the model's, not only within its interval: the days "
                  "made the same calls in the same order and the server answered as the model's store does (the "
                  "lag of the real-time clock changes no event's order or simulated time)."]
    lat = notes["latency_ms"]
    lines += [
        "",
        f"Calls during the days: {lat['calls']:,}, each answered in p50 {lat['p50']:.1f} ms, p99 {lat['p99']:.1f} ms "
        "(wall time through the MCP client).",
    ]
    if "lag_max_s" in notes:
        lines.append(f"Events started late by at most {notes['lag_max_s']:.2f} s wall (worst day's p99 "
                     f"{notes['lag_p99_s']:.2f} s).")
    if notes["without_unpublishes"]:
        lines.append("The server had no admin tools: the days ran without unpublishes (the model too).")
    if notes["partial"]:
        lines.append(f"Not counted (partial days): {'; '.join(notes['partial'])}.")
    return "\n".join(lines) + "\n"
