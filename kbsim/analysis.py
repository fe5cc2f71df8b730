"""Results as tidy frames: load runs, compute per-run metrics, summarise with 95% CIs.

The runner writes each experiment under ``results/<experiment>/``, every
table carrying ``scenario``, ``run_id``, the swept parameters (by dotted name)
and ``seed``. This module turns those tables into the frames the figures and
notebooks use. It computes, it never plots (see :mod:`kbsim.plots`).

Intervals come from :mod:`kbsim.metrics`: Wilson on pooled counts for
proportions, a t-interval over runs for means.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import fields
from pathlib import Path

import numpy as np
import pandas as pd

from kbsim import metrics
from kbsim.sim.records import CheckRecord, CitationRecord, EditRecord, SaveRecord

Tables = Mapping[str, pd.DataFrame]

#: Columns a day writes itself; any other column of a result table is a run key.
NATIVE_COLUMNS = frozenset(
    {
        f.name
        for record in (CitationRecord, CheckRecord, EditRecord, SaveRecord)
        for f in fields(record)
    }
    | {"first_stale_s", "gone_s", "stale_at_end", "gone_at_end", "seed", "run_id"}
)
#: The tables a day writes (``run_day``'s output).
DAY_TABLES = ("citations", "checks", "edits", "saves")
#: The tables of a results directory this module reads (the day's and the runner's metrics).
TABLE_NAMES = (*DAY_TABLES, "metrics")
STRATEGY_LABELS = {"title": "title", "reread": "re-read", "poll": "poll"}


def load_results(path: str | Path) -> dict[str, pd.DataFrame]:
    """All tables of one experiment's results directory (the runner's layout)."""
    from kbsim.runner import load_results as runner_load

    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"results directory {str(path)!r} does not exist")
    return runner_load(path)


def day_tables(tables_by_seed: Mapping[int, Tables], **keys) -> dict[str, pd.DataFrame]:
    """Stack ``run_day`` outputs of several seeds into result-style tables.

    ``keys`` (for example ``scenario="zipf"``) are added as columns on every
    row, as the runner adds the scenario and the swept parameters. Lets
    notebooks and tests analyse days run directly, without the runner.
    """
    out: dict[str, list[pd.DataFrame]] = {}
    for seed, tables in tables_by_seed.items():
        for name, table in tables.items():
            table = table.copy()
            for column, value in keys.items():
                table[column] = value
            if "run_id" not in table:
                table["run_id"] = f"{_key_label(keys)}seed{seed}"
            out.setdefault(name, []).append(table)
    return {name: pd.concat(frames, ignore_index=True) for name, frames in out.items()}


def concat_tables(*many: Tables) -> dict[str, pd.DataFrame]:
    """Stack result tables of several experiments or scenarios, table by table."""
    names = dict.fromkeys(name for tables in many for name in tables)
    return {
        name: pd.concat([t[name] for t in many if name in t], ignore_index=True) for name in names
    }


def _key_label(keys: Mapping) -> str:
    return "".join(f"{k}={v}/" for k, v in keys.items())


def key_columns(table: pd.DataFrame) -> list[str]:
    """The run keys of a result table: scenario and swept parameters (not the seed)."""
    return [c for c in table.columns if c not in NATIVE_COLUMNS]


def _runs(tables: Tables) -> tuple[list[str], pd.DataFrame]:
    """Key columns and one row per run (keys, seed, run_id) found in any table."""
    frames = [t for name, t in tables.items() if len(t) and name in DAY_TABLES]
    if not frames:
        raise ValueError("no rows in any result table")
    keys = key_columns(frames[0])
    for table in frames[1:]:
        keys += [c for c in key_columns(table) if c not in keys]
    cols = [*keys, "seed", "run_id"]
    runs = pd.concat([t[[c for c in cols if c in t]] for t in frames], ignore_index=True)
    return keys, runs.drop_duplicates("run_id").reset_index(drop=True)


def run_metrics(
    tables: Tables,
    day_s: float | Mapping[str, float] | None = None,
) -> pd.DataFrame:
    """Headline metrics of every run (:func:`kbsim.metrics.run_metrics`), long format.

    Columns: the run keys (scenario, swept parameters), ``seed``, ``run_id``,
    ``metric``, ``value``, ``successes``, ``trials``.

    Args:
        tables: result tables (from :func:`load_results` or :func:`day_tables`).
        day_s: the day length; a mapping gives it per scenario. ``None``
            takes the time of each run's last check.
    """
    keys, runs = _runs(tables)
    tables = {name: t for name, t in tables.items() if name in DAY_TABLES}
    split = {name: dict(tuple(t.groupby("run_id", sort=False))) for name, t in tables.items()}
    empty = {name: t.iloc[0:0] for name, t in tables.items()}
    rows = []
    for run in runs.to_dict("records"):
        mine = {name: split[name].get(run["run_id"], empty[name]) for name in tables}
        for name in ("citations", "checks", "edits"):
            mine.setdefault(name, pd.DataFrame())
        length = day_s.get(run.get("scenario"), None) if isinstance(day_s, Mapping) else day_s
        frame = metrics.run_metrics(mine, length)
        for column in [*keys, "seed", "run_id"]:
            frame[column] = run.get(column)
        rows.append(frame)
    out = pd.concat(rows, ignore_index=True)
    return out[[*keys, "seed", "run_id", "metric", "value", "successes", "trials"]]


def stored_run_metrics(tables: Tables) -> pd.DataFrame:
    """Like :func:`run_metrics`, but from the ``metrics`` table the runner saved with each run.

    Much faster for large sweeps (no per-run recomputation); the runner computes
    ``@end`` at the end of each run's day.
    """
    stored = tables["metrics"]
    keys = [
        c
        for c in stored.columns
        if c not in ("seed", "run_id", "metric", "value", "successes", "trials")
    ]
    return stored[[*keys, "seed", "run_id", "metric", "value", "successes", "trials"]].reset_index(drop=True)


def summarize(
    per_run: pd.DataFrame, by: Iterable[str] | None = None, interval: str = "pooled"
) -> pd.DataFrame:
    """Pool per-run metrics over seeds with 95% CIs.

    ``interval="pooled"`` (the default, as in ``summary.csv``) is
    :func:`kbsim.metrics.summarize`: Wilson on the pooled counts for
    proportions, a t-interval over runs for means. ``interval="seeds"``
    treats each run as one observation for every metric: the mean of the
    per-run values with a t-interval. Citations of one day share its saves
    (the same popular article unpublished early, say), so they are not
    independent trials; the per-seed interval accounts for that and is the
    one to test a model against. For proportions the interval is widened to
    also cover the pooled Wilson interval (which stays sensible when every
    run shows 0%) and clipped to [0, 1].

    ``by`` defaults to every run key present (scenario and swept parameters).
    """
    if by is None:
        by = [
            c
            for c in per_run.columns
            if c not in ("seed", "run_id", "metric", "value", "successes", "trials")
        ]
    by = list(by)
    if interval == "pooled":
        return metrics.summarize(per_run, by=by)
    if interval != "seeds":
        raise ValueError(f"interval must be 'pooled' or 'seeds', got {interval!r}")
    out = []
    for key, group in per_run.groupby([*by, "metric"], sort=False, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        values = group["value"].to_numpy(dtype=float)
        values = values[~np.isnan(values)]
        low, high = metrics.t_interval(values)
        if group["trials"].notna().all() and group["trials"].sum() > 0:
            wilson = metrics.wilson_interval(group["successes"].sum(), group["trials"].sum())
            low = max(0.0, min(wilson[0], low if not math.isnan(low) else wilson[0]))
            high = min(1.0, max(wilson[1], high if not math.isnan(high) else wilson[1]))
        out.append((*key, values.mean() if len(values) else math.nan, low, high, len(values)))
    return pd.DataFrame(out, columns=[*by, "metric", "value", "ci_low", "ci_high", "n"])


def summary(
    tables: Tables, day_s=None, by: Iterable[str] | None = None, interval: str = "pooled"
) -> pd.DataFrame:
    """:func:`run_metrics` then :func:`summarize`: one row per group and metric."""
    return summarize(run_metrics(tables, day_s), by, interval)


def select(summary_frame: pd.DataFrame, metric: str, **where) -> pd.DataFrame:
    """Rows of one metric (and given key values), with the metric column dropped."""
    mask = summary_frame["metric"] == metric
    for column, value in where.items():
        mask &= summary_frame[column] == value
    return summary_frame[mask].drop(columns="metric").reset_index(drop=True)


def staleness_by_hour(summary_frame: pd.DataFrame) -> pd.DataFrame:
    """Per-hour stale shares, tidy: keys, ``kind`` (citations/answers), ``hour``,
    ``share``, ``ci_low``, ``ci_high``, ``n``."""
    frame = summary_frame[summary_frame["metric"].str.match(r"stale_(citation|answer)_share@h\d+$")]
    frame = frame.copy()
    parts = frame["metric"].str.extract(r"stale_(citation|answer)_share@h(\d+)$")
    frame["kind"] = parts[0].map({"citation": "citations", "answer": "answers"})
    frame["hour"] = parts[1].astype(int)
    frame = frame.rename(columns={"value": "share"}).drop(columns="metric")
    keys = [
        c for c in frame.columns if c not in ("kind", "hour", "share", "ci_low", "ci_high", "n")
    ]
    return (
        frame[[*keys, "kind", "hour", "share", "ci_low", "ci_high", "n"]]
        .sort_values([*keys, "kind", "hour"])
        .reset_index(drop=True)
    )


def wide(summary_frame: pd.DataFrame, metrics_wanted: Iterable[str], on: str) -> pd.DataFrame:
    """Chosen metrics against one swept key, one row per (key value, metric)."""
    frame = summary_frame[summary_frame["metric"].isin(list(metrics_wanted))]
    return frame.sort_values([on, "metric"]).reset_index(drop=True)


def cost_by_citations_held(checks: pd.DataFrame) -> pd.DataFrame:
    """Mean calls and bytes per check against the citations held, per strategy.

    One point per check of the day (``check_index``): ``held`` is the mean
    citations held at that check over runs, ``value`` the mean cost with a
    t-interval over runs. Columns: ``strategy``, ``check_index``, ``held``,
    ``measure`` (calls/bytes), ``value``, ``ci_low``, ``ci_high``, ``n``.
    """
    if checks.empty:
        raise ValueError("checks table is empty")
    rows = []
    for (strategy, index), group in checks.groupby(["strategy", "check_index"]):
        for measure in ("calls", "bytes"):
            values = group[measure].to_numpy(dtype=float)
            low, high = metrics.t_interval(values)
            rows.append(
                (
                    strategy,
                    index,
                    group["citations_held"].mean(),
                    measure,
                    values.mean(),
                    low,
                    high,
                    len(values),
                )
            )
    return pd.DataFrame(
        rows,
        columns=["strategy", "check_index", "held", "measure", "value", "ci_low", "ci_high", "n"],
    )


def cited_articles_by_held(citations: pd.DataFrame, checks: pd.DataFrame) -> pd.DataFrame:
    """Distinct cited articles against citations held at each check (the re-read cost)."""
    rows = []
    for (run_id, time_s, held), _ in checks.groupby(["run_id", "time_s", "citations_held"]):
        mine = citations[(citations["run_id"] == run_id) & (citations["asked_s"] <= time_s)]
        rows.append((run_id, time_s, held, mine["article_id"].nunique()))
    return pd.DataFrame(rows, columns=["run_id", "time_s", "citations_held", "distinct_articles"])


def inside_ci(observed: pd.DataFrame, predicted: pd.Series | np.ndarray) -> np.ndarray:
    """Whether each prediction lies inside the observed row's [ci_low, ci_high]."""
    predicted = np.asarray(predicted, dtype=float)
    return (observed["ci_low"].to_numpy() <= predicted) & (
        predicted <= observed["ci_high"].to_numpy()
    )


# -- the reference study table ---------------------------------------------------

#: (metric, label, kind) rows of the reference study's summary table.
REFERENCE_ROWS = (
    ("stale_citation_share@h1", "Citations stale after 1 h", "share"),
    ("stale_citation_share@h4", "Citations stale after 4 h", "share"),
    ("stale_citation_share@end", "Citations stale at end of day", "share"),
    ("stale_answer_share@end", "Answers with a stale citation at end of day", "share"),
    ("gone_citation_share@end", "Citations gone (unpublished) at end of day", "share"),
    ("title_recall", "Title-check recall", "share"),
    ("calls_per_check[title]", "Calls per check: title", "count"),
    ("calls_per_check[reread]", "Calls per check: re-read", "count"),
    ("calls_per_check[poll]", "Calls per check: poll", "count"),
    ("bytes_per_check[title]", "kB per check: title", "kb"),
    ("bytes_per_check[reread]", "kB per check: re-read", "kb"),
    ("bytes_per_check[poll]", "kB per check: poll", "kb"),
)


def format_estimate(value: float, low: float, high: float, kind: str) -> str:
    """``value [low, high]`` as a percentage, a count or kilobytes."""
    if any(isinstance(x, float) and math.isnan(x) for x in (value, low, high)):
        return "n/a"
    if kind == "share":
        return f"{100 * value:.1f}% [{100 * low:.1f}, {100 * high:.1f}]"
    if kind == "kb":
        return f"{value / 1000:.1f} [{low / 1000:.1f}, {high / 1000:.1f}]"
    return f"{value:.1f} [{low:.1f}, {high:.1f}]"


def reference_table(
    summary_frame: pd.DataFrame,
    column: str,
    columns: Mapping[str, str],
    edit_summary: pd.DataFrame | None = None,
    delay_column: str = "edit.delay_s",
) -> pd.DataFrame:
    """The reference study's table: one row per headline metric, one column per scenario.

    Args:
        summary_frame: a :func:`summarize` frame holding the scenarios.
        column: the key column naming scenarios (usually ``scenario``).
        columns: scenario value -> column heading, in display order.
        edit_summary: optional summary of edit days (rejection rate per delay),
            appended as one row per metric and delay; filled per scenario when it
            has the ``column`` column, else in the first scenario's column only.
        delay_column: the key column holding the edit delay in ``edit_summary``.
    """
    rows = []
    for metric, label, kind in REFERENCE_ROWS:
        row = {"metric": label}
        for value, heading in columns.items():
            hit = summary_frame[
                (summary_frame[column] == value) & (summary_frame["metric"] == metric)
            ]
            row[heading] = (
                format_estimate(*hit[["value", "ci_low", "ci_high"]].iloc[0], kind)
                if len(hit)
                else "n/a"
            )
        rows.append(row)
    if edit_summary is not None and len(edit_summary):
        first = next(iter(columns))
        for metric, label in (
            ("rejection_rate", "Edits rejected (conflict)"),
            ("gone_rate", "Edits finding the article gone"),
            ("retry_success", "Retries that succeed"),
        ):
            for delay in sorted(edit_summary[delay_column].dropna().unique()):
                row = {"metric": f"{label}, delay {format_duration(delay)}"}
                for value, heading in columns.items():
                    mask = (edit_summary[delay_column] == delay) & (
                        edit_summary["metric"] == metric
                    )
                    if column in edit_summary:
                        mask &= edit_summary[column] == value
                    elif value != first:
                        mask &= False
                    hit = edit_summary[mask]
                    row[heading] = (
                        format_estimate(*hit[["value", "ci_low", "ci_high"]].iloc[0], "share")
                        if len(hit)
                        else ""
                    )
                rows.append(row)
    return pd.DataFrame(rows)


def format_duration(seconds: float) -> str:
    """5 s, 1 min, 10 min, 1 h, 2.5 h: a delay as a reader says it."""
    seconds = float(seconds)
    if seconds < 60:
        return f"{seconds:.3g} s"
    if seconds < 3600:
        return f"{seconds / 60:.3g} min"
    return f"{seconds / 3600:.3g} h"


def markdown_table(frame: pd.DataFrame) -> str:
    """A GitHub-flavoured markdown table (no extra dependency)."""
    header = "| " + " | ".join(str(c) for c in frame.columns) + " |"
    rule = "| " + " | ".join("---" for _ in frame.columns) + " |"
    body = ["| " + " | ".join(str(v) for v in row) + " |" for row in frame.itertuples(index=False)]
    return "\n".join([header, rule, *body]) + "\n"
