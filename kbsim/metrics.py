"""Headline metrics of a run, and their summary over seeds with 95% intervals.

``run_metrics`` turns one run's tables into long rows (metric, value,
successes, trials); ``summarize`` pools rows over seeds: proportions get a
Wilson interval on the pooled counts, means a t-interval over runs.
Metric names are flat strings: ``stale_citation_share@h3``,
``calls_per_check[poll]``.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

Z95 = 1.959963984540054
STRATEGIES = ("title", "reread", "poll")


def wilson_interval(successes: float, trials: float, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval for a binomial proportion (NaNs when no trials)."""
    if trials <= 0:
        return math.nan, math.nan
    p = successes / trials
    denom = 1.0 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denom
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denom
    low, high = centre - half, centre + half
    # At p = 0 or 1 the bound is exactly 0 or 1; floating point leaves ~1e-18 of noise.
    return (0.0 if successes == 0 else max(0.0, low)), (1.0 if successes == trials else min(1.0, high))


def t_interval(values: np.ndarray, confidence: float = 0.95) -> tuple[float, float]:
    """The t-interval for the mean of ``values`` (NaNs with fewer than two)."""
    values = np.asarray(values, dtype=float)
    values = values[~np.isnan(values)]
    if len(values) < 2:
        return math.nan, math.nan
    mean = values.mean()
    sem = values.std(ddof=1) / math.sqrt(len(values))
    if sem == 0:
        return mean, mean
    # Student's t quantile, the function scipy.stats.t.ppf calls, from the much lighter
    # scipy.special (scipy.stats takes about 0.5 s to import); imported here, as runs never need it.
    from scipy.special import stdtrit

    half = stdtrit(len(values) - 1, 0.5 + confidence / 2) * sem
    return mean - half, mean + half


def _proportion(rows: list, metric: str, successes: float, trials: float) -> None:
    value = successes / trials if trials else math.nan
    rows.append((metric, value, float(successes), float(trials)))


def _mean(rows: list, metric: str, value: float) -> None:
    rows.append((metric, float(value), math.nan, math.nan))


def run_metrics(tables: dict[str, pd.DataFrame], day_s: float | None = None) -> pd.DataFrame:
    """One row per headline metric of one run (columns: metric, value, successes, trials).

    ``day_s`` defaults to the time of the last check (the end of the day with
    the default check interval).
    """
    citations, checks, edits = tables["citations"], tables["checks"], tables["edits"]
    if day_s is None:
        day_s = float(checks["time_s"].max()) if len(checks) else 0.0
    rows: list = []
    asked = citations["asked_s"].to_numpy(dtype=float)
    stale_at = citations["first_stale_s"].to_numpy(dtype=float)
    # each citation's answer as 0..n_answers-1, to count per answer with bincount
    answer_ids, answer = np.unique(citations["answer_id"].to_numpy(), return_inverse=True)
    n_answers = len(answer_ids)
    hours = range(1, int(math.floor(day_s / 3600.0 + 1e-9)) + 1)
    for label, t in [*((f"h{h}", h * 3600.0) for h in hours), ("end", day_s)]:
        held = asked <= t
        stale = held & (stale_at <= t)
        _proportion(rows, f"stale_citation_share@{label}", stale.sum(), held.sum())
        answers_given = np.bincount(answer, weights=held, minlength=n_answers) > 0
        answers_stale = np.bincount(answer, weights=stale, minlength=n_answers) > 0
        _proportion(rows, f"stale_answer_share@{label}", answers_stale.sum(), answers_given.sum())
    gone = citations["gone_s"].to_numpy(dtype=float) <= day_s
    _proportion(rows, "gone_citation_share@end", gone.sum(), len(gone))

    if len(checks):
        by_strategy = {name: group for name, group in checks.groupby("strategy", sort=False)}
        empty = checks.iloc[:0]
        title = by_strategy.get("title", empty)
        _proportion(rows, "title_recall", title["true_positives"].sum(), title["true_stale"].sum())
        for strategy in STRATEGIES:
            mine = by_strategy.get(strategy, empty)
            _mean(rows, f"calls_per_check[{strategy}]", mine["calls"].mean())
            _mean(rows, f"bytes_per_check[{strategy}]", mine["bytes"].mean())
        polls = by_strategy.get("poll", empty)
        _proportion(rows, "cursor_expired_rate", polls["cursor_expired"].sum(), len(polls))

    _mean(rows, "edits_made", len(edits))

    if len(edits):
        n = len(edits)
        outcome = edits["outcome"]
        _proportion(rows, "rejection_rate", (outcome == "conflict").sum(), n)
        _proportion(rows, "gone_rate", (outcome == "gone").sum(), n)
        retried = edits[edits["retries"] > 0]
        _proportion(rows, "retry_success", (retried["retry_outcome"] == "applied").sum(), len(retried))
        applied = edits["replay_ok"].notna()
        _proportion(rows, "replay_success", (edits.loc[applied, "replay_ok"] == True).sum(), applied.sum())  # noqa: E712
    return pd.DataFrame(rows, columns=["metric", "value", "successes", "trials"])


def summarize(metrics: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """Pool per-run metric rows over seeds, per group of ``by`` columns.

    Returns columns ``*by, metric, value, ci_low, ci_high, n`` where ``n`` is
    the number of runs pooled. Proportions: value is the pooled proportion,
    the interval is Wilson's on the pooled counts. Means: value is the mean
    over runs, the interval a t-interval.
    """
    keys = [*by, "metric"]
    out = []
    for key, group in metrics.groupby(keys, sort=False, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        if group["trials"].notna().all():
            successes, trials = group["successes"].sum(), group["trials"].sum()
            value = successes / trials if trials else math.nan
            low, high = wilson_interval(successes, trials)
        else:
            value = group["value"].mean()
            low, high = t_interval(group["value"].to_numpy())
        out.append((*key, value, low, high, len(group)))
    return pd.DataFrame(out, columns=[*keys, "value", "ci_low", "ci_high", "n"])


#: Metrics a terminal summary shows; the full set (per hour too) is in summary.csv.
HEADLINE_METRICS = (
    "stale_citation_share@end",
    "stale_answer_share@end",
    "gone_citation_share@end",
    "title_recall",
    "calls_per_check[title]",
    "calls_per_check[reread]",
    "calls_per_check[poll]",
    "bytes_per_check[title]",
    "bytes_per_check[reread]",
    "bytes_per_check[poll]",
    "rejection_rate",
    "gone_rate",
    "retry_success",
    "replay_success",
)


def format_summary(summary: pd.DataFrame, max_columns: int = 10) -> str:
    """The headline metrics as text: a metric per row, a scenario x sweep point per column,
    ``value [ci_low, ci_high]``. Falls back to long form when there are many points."""
    head = summary[summary["metric"].isin(HEADLINE_METRICS)].copy()
    if head.empty:
        return "(no metrics)"
    group_columns = [c for c in head.columns if c not in ("metric", "value", "ci_low", "ci_high", "n")]

    def number(value: float) -> str:
        return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.3g}"

    def cell(row) -> str:
        if pd.isna(row["value"]):
            return "n/a"
        if pd.isna(row["ci_low"]):
            return number(row["value"])
        return f"{number(row['value'])} [{number(row['ci_low'])}, {number(row['ci_high'])}]"

    head["cell"] = head.apply(cell, axis=1)
    def label(value) -> str:
        if value is None or (isinstance(value, float) and math.isnan(value)):
            return "none"
        if isinstance(value, float) and value.is_integer():
            return str(int(value))
        return str(value)

    head["group"] = [
        " ".join(label(v) for v in row) or "all" for row in head[group_columns].itertuples(index=False)
    ]
    order = {m: i for i, m in enumerate(HEADLINE_METRICS)}
    if head["group"].nunique() <= max_columns:
        wide = head.pivot(index="metric", columns="group", values="cell")
        wide = wide[list(dict.fromkeys(head["group"]))]
        wide = wide.loc[sorted(wide.index, key=order.get)].fillna("-")
        wide.columns.name = " ".join(group_columns)
        blocks = []
        # Split into blocks of columns that fit a terminal.
        columns = list(wide.columns)
        for start in range(0, len(columns), 4):
            blocks.append(wide[columns[start : start + 4]].to_string())
        return "\n\n".join(blocks)
    long = head.sort_values(["group", "metric"], key=lambda s: s.map(order) if s.name == "metric" else s)
    return long[[*group_columns, "metric", "cell"]].rename(columns={"cell": "value [95% CI]"}).to_string(index=False)
