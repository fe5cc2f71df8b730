"""Model against measured: driven days beside the same days simulated in process.

Each history :func:`kbsim.drive.day.drive_day` wrote holds the driven day's tables and,
under ``model/``, the in-process twin's (same seed, corpus and parameters). Both go
through the one metric path (:func:`kbsim.stats.metrics.run_metrics`) and the one
interval method (:func:`kbsim.stats.summary.summarize`, the seed as the unit), so every
figure is set beside its model with its interval over the driven days. Partial days are
never counted.
"""

from __future__ import annotations

import json
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
from kbsim.store import Client, MemoryStore

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


#: Each checking strategy's tool, whose results a check's bytes count.
CHECK_TOOLS = {"title": "search_knowledge_base", "reread": "read_knowledge_article", "poll": "poll_resource_events"}


def model_result_fields() -> dict[str, frozenset[str]]:
    """The top-level fields of each check tool's successful result from kbsim's own store, the
    model's: asked of a one-article store, so this follows the store as it is."""
    store = MemoryStore()
    (article_id,) = store.create_knowledge_base("kb", [("A title to find", "Some content.")], at=0.0)
    client = Client(store, {"kb"}, lambda: 0.0)
    results = {
        "search_knowledge_base": client.call("search_knowledge_base", {"knowledge_base_id": "kb", "query": "title"}),
        "read_knowledge_article": client.call("read_knowledge_article",
                                              {"knowledge_base_id": "kb", "article_id": article_id}),
        "poll_resource_events": client.call("poll_resource_events",
                                            {"resource_type": "knowledge_base", "resource_id": "kb"}),
    }
    return {tool: frozenset(result) for tool, result in results.items()}


def extra_result_bytes(calls: pd.DataFrame, checks: pd.DataFrame,
                       model_fields: dict[str, frozenset[str]]) -> dict[str, tuple[tuple[str, ...], float]]:
    """What a server's check results carry beyond the model's, per strategy: the fields (sorted)
    and their bytes per check (``"name":value,`` in compact JSON), from the day's calls (each
    call against the model's result of its own tool: a poll check also reads).

    Only strategies whose results carry such fields are in the answer.
    """
    found: dict[str, tuple[tuple[str, ...], float]] = {}
    for strategy in CHECK_TOOLS:
        rows = calls[(calls["actor"] == f"check:{strategy}") & calls["ok"] & calls["result"].notna()]
        fields: set[str] = set()
        extra = 0
        for tool, text in zip(rows["tool"], rows["result"], strict=True):
            result = json.loads(text) if tool in model_fields else None
            if not isinstance(result, dict):
                continue
            for name in result.keys() - model_fields[tool]:
                fields.add(name)
                extra += len(json.dumps({name: result[name]}, separators=(",", ":"), ensure_ascii=False)) - 1
        n_checks = int((checks["strategy"] == strategy).sum()) if "strategy" in checks else 0
        if fields and n_checks:
            found[strategy] = (tuple(sorted(fields)), extra / n_checks)
    return found


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
    extras: dict[str, list[float]] = {}
    extra_fields: dict[str, set[str]] = {}
    model_fields = model_result_fields()
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
        for strategy, (fields, per_check) in extra_result_bytes(calls, history.tables["checks"], model_fields).items():
            extras.setdefault(strategy, []).append(per_check)
            extra_fields.setdefault(strategy, set()).update(fields)
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
    # bytes per check a server's results add beyond the model's fields, the days' mean per strategy
    notes["extra_bytes"] = {strategy: (sorted(extra_fields[strategy]), float(np.mean(values)))
                            for strategy, values in extras.items()}
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
    lines += _differences(table, notes)
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


def _differences(table: pd.DataFrame, notes: dict[str, Any]) -> list[str]:
    """Why a figure measured differs from the model's, where the history shows it: the fields a
    server's results carry beyond the model's, and how many of the bytes they are."""
    lines: list[str] = []
    for row in table.itertuples():
        if math.isclose(row.model, row.measured, rel_tol=1e-9, abs_tol=1e-12):
            continue
        strategy = row.name.partition("[")[2].rstrip("]")
        if row.name.startswith("bytes_per_check[") and strategy in notes.get("extra_bytes", {}):
            fields, per_check = notes["extra_bytes"][strategy]
            difference = row.measured - row.model
            share = per_check / difference if difference else math.nan
            named = ", ".join(f"`{field}`" for field in fields)
            lines.append(
                f"{row.figure}: measured {difference:+,.1f} bytes per check against the model. The server's "
                f"check results carry {named}, which the model's store does not return: "
                f"{per_check:,.1f} bytes per check in the days' calls, {share:.0%} of the difference.")
        else:
            lines.append(f"{row.figure}: measured {row.measured - row.model:+,.4g} against the model; the history "
                         "shows no field of the server's that explains it.")
    if lines:
        unequal = sum(1 for row in table.itertuples()
                      if not math.isclose(row.model, row.measured, rel_tol=1e-9, abs_tol=1e-12))
        lines = ["", f"Where the measured figure is not the model's ({unequal} of {len(table)}):", "",
                 *(f"- {line}" for line in lines)]
        if unequal < len(table):
            lines += ["", "Every other figure measured equals the model's exactly: the days made the same calls "
                      "in the same order, and the server answered as the model's store does."]
    return lines
