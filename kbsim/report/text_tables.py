"""Summaries as text: the reference study's table, the terminal table, and their formatting.

Every number comes from a :func:`kbsim.stats.summarize` frame; this module only
chooses rows and prints them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import pandas as pd

from kbsim.report.experiments import Experiment, match, role, staleness_days
from kbsim.sim.strategies import default_strategies
from kbsim.stats.intervals import no_interval
from kbsim.stats.metrics import METRICS
from kbsim.stats.summary import MetricSelector, underpowered
from kbsim.units import format_bytes, format_duration


@dataclass(frozen=True)
class Row:
    """One row of a results table: which metric row, its label, how to print it."""

    selector: MetricSelector
    label: str
    unit: str = "share"


def _row(metric: str, label: str, unit: str = "share", **selector) -> Row:
    return Row(MetricSelector(metric, **selector), label, unit)


#: The reference study's rows for the days without edits.
REFERENCE_ROWS = (
    _row("stale_citation_share", "Citations given in the first hour, stale at 1 h", at="1h"),
    _row("stale_citation_share", "Citations given by 4 h, stale at 4 h", at="4h"),
    _row("stale_citation_share", "Citations stale at end of day (every age)"),
    _row("stale_citation_share", "... first citation (the question's target)", subset="position 1"),
    _row("stale_citation_share", "... second citation (a lexical neighbour)", subset="position 2"),
    _row("stale_answer_share", "Answers with a stale citation at end of day"),
    _row("gone_citation_share", "Citations gone (unpublished) at end of day"),
    _row("title_recall", "Title-check recall, stale citations at the last check"),
    _row("title_recall", "... of citations gone (unpublished)", subset="gone"),
    _row("title_recall", "... of citations retitled", subset="retitled"),
    _row("title_recall", "... of citations changed in content only", subset="content"),
    *(_row("calls_per_check", f"Calls per check: {s.short_label}", "count", strategy=s.name)
      for s in default_strategies()),
    *(_row("bytes_per_check", f"Result size per check: {s.short_label}", "bytes", strategy=s.name)
      for s in default_strategies()),
)
#: The reference study's rows for the days with edits, one per delay.
EDIT_ROWS = (
    _row("rejection_rate", "Edits rejected (conflict)"),
    _row("gone_rate", "Edits finding the article gone"),
    _row("retry_success", "Retries that succeed"),
)
REPLAY_ROW = _row("replay_success", "Replays returning the first result and writing nothing")


def format_estimate(value: float, low: float, high: float, unit: str) -> str:
    """``value [low, high]`` as a percentage, a count, kilobytes or a duration."""
    if isinstance(value, float) and math.isnan(value):
        return "n/a"
    if unit == "share":
        text = f"{100 * value:.1f}%"
    elif unit == "bytes":
        text = format_bytes(value, "page")
    elif unit == "seconds":
        text = format_duration(value, "page")
    else:
        text = f"{value:.1f}"
    if any(isinstance(x, float) and math.isnan(x) for x in (low, high)):
        return text
    if unit == "share":
        return f"{text} [{100 * low:.1f}, {100 * high:.1f}]"
    if unit == "bytes":
        return f"{text} [{low / 1000:.1f}, {high / 1000:.1f}]"
    if unit == "seconds":
        return f"{text} [{format_duration(low, 'page')}, {format_duration(high, 'page')}]"
    return f"{text} [{low:.1f}, {high:.1f}]"


def format_invariant(row) -> str:
    """An invariant's summary row: how often it held."""
    if not row["trials"]:
        return "n/a (none)"
    held = "held" if row["successes"] == row["trials"] else "FAILED"
    return f"{held} in {row['successes']:,.0f} of {row['trials']:,.0f}"


def markdown_table(frame: pd.DataFrame) -> str:
    """A GitHub-flavoured markdown table (no extra dependency)."""
    header = "| " + " | ".join(str(c) for c in frame.columns) + " |"
    rule = "| " + " | ".join("---" for _ in frame.columns) + " |"
    body = ["| " + " | ".join(str(v) for v in row) + " |" for row in frame.itertuples(index=False)]
    return "\n".join([header, rule, *body]) + "\n"


def cell(summary: pd.DataFrame, row: Row) -> str:
    """One table cell: the row's estimate in ``summary`` (rows of one point), or n/a."""
    hit = summary[row.selector.mask(summary)]
    if not len(hit):
        return "n/a"
    first = hit.iloc[0]
    if METRICS[row.selector.metric].kind == "invariant":
        return format_invariant(first)
    return format_estimate(first["value"], first["ci_low"], first["ci_high"], row.unit)


#: Citation ages of the reference table's Kaplan-Meier rows.
SURVIVAL_AGES_S = (3600.0, 4 * 3600.0)


def reference_table(
    days: Mapping[str, pd.DataFrame],
    columns: Mapping[str, str],
    edits: Mapping[str, pd.DataFrame] | None = None,
    delay_column: str = "edit_delay_s",
    survival: Mapping[str, pd.DataFrame] | None = None,
) -> pd.DataFrame:
    """The reference study's table: a row per metric, a column per day.

    Args:
        days: column key -> the summary rows of its day without edits.
        columns: column key -> heading, in display order.
        edits: column key -> the summary rows of its days with edits (a ``delay_column``
            per delay), added as one row per metric and delay, then the replay invariant.
        delay_column: the column of ``edits`` holding the edit delay (seconds).
        survival: column key -> its :func:`kbsim.stats.survival.stale_within` frame at
            :data:`SURVIVAL_AGES_S`, shown after the first two rows.
    """
    rows = [{"metric": row.label, **{columns[k]: cell(days[k], row) for k in columns}} for row in REFERENCE_ROWS]
    if survival:
        by_age = []
        for age in SURVIVAL_AGES_S:
            line = {"metric": f"Citations stale within {format_duration(age, 'page')} of being given (Kaplan-Meier)"}
            for key, heading in columns.items():
                frame = survival.get(key)
                hit = frame[frame["age_s"] == age] if frame is not None else ()
                first = hit.iloc[0] if len(hit) else None
                line[heading] = "n/a" if first is None else format_estimate(
                    first["value"], first["ci_low"], first["ci_high"], "share"
                )
            by_age.append(line)
        rows[2:2] = by_age
    if edits:
        delays = sorted({d for frame in edits.values() for d in frame[delay_column].dropna().unique()})
        for row in EDIT_ROWS:
            for delay in delays:
                line = {"metric": f"{row.label}, delay {format_duration(delay, 'page')}"}
                for key, heading in columns.items():
                    frame = edits.get(key)
                    line[heading] = "" if frame is None else cell(frame[frame[delay_column] == delay], row)
                rows.append(line)
        line = {"metric": REPLAY_ROW.label}
        for key, heading in columns.items():
            frame = edits.get(key)
            if frame is None:
                line[heading] = ""
                continue
            replays = frame[REPLAY_ROW.selector.mask(frame)]
            totals = {"successes": replays["successes"].sum(), "trials": replays["trials"].sum()}
            line[heading] = format_invariant(totals)
        rows.append(line)
    return pd.DataFrame(rows)


def reference_results(exps: Mapping[str, Experiment]) -> pd.DataFrame:
    """The reference study table: Zipf and control days without edits, edit outcomes per delay."""
    from kbsim.stats.survival import stale_within

    found = staleness_days([exps["reference"], exps["control"]])
    days, columns, survival = {}, {}, {}
    for name, heading in (("zipf", "Zipf saves (s = {s:g})"), ("control", "Control: uniform saves")):
        if name not in found:
            continue
        keys, params, experiment = found[name]
        days[name] = match(experiment.summary, keys)
        columns[name] = heading.format(s=params.zipf_s)
        ages = [a for a in SURVIVAL_AGES_S if a < params.day_s]
        survival[name] = stale_within(match(experiment.tables["citations"], keys), ages, params.day_s)
    reference = exps["reference"].summary
    with_edits = reference[reference["edits"].astype(bool)]
    edits = {name: with_edits[with_edits["save_popularity"].map(role) == name] for name in columns}
    return reference_table(days, columns, {k: v for k, v in edits.items() if len(v)}, survival=survival)


# -- the terminal -----------------------------------------------------------------------------

def headline_rows(strategies: list[str] | None = None) -> tuple[Row, ...]:
    """The rows ``kbsim run`` prints, by their readable names, each strategy's cost among
    them (the default ones, then any other of ``strategies``, a summary's); every metric,
    per hour too, is in summary.csv."""
    names = [strategy.name for strategy in default_strategies()]
    names += [name for name in strategies or () if name and name not in names]
    return (
        _row("stale_citation_share", "stale_citation_share@end"),
        _row("stale_answer_share", "stale_answer_share@end"),
        _row("gone_citation_share", "gone_citation_share@end"),
        _row("title_recall", "title_recall@end"),
        *(_row("calls_per_check", f"calls_per_check[{s}]", "count", strategy=s) for s in names),
        *(_row("bytes_per_check", f"bytes_per_check[{s}]", "bytes", strategy=s) for s in names),
        _row("rejection_rate", "rejection_rate"),
        _row("gone_rate", "gone_rate"),
        _row("retry_success", "retry_success"),
        _row("replay_success", "replay_success"),
    )


def point_label(row, keys: list[str]) -> str:
    """A point as text: its key values, ``none`` for a missing one (``zipf none``)."""
    return " ".join(_label(row[k]) for k in keys) or "all"


def _label(value) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA:
        return "none"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def summary_cells(summary: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """The headline rows as cells (``value [low, high]``), a metric per row, a point (``keys``)
    per column; a metric no point has is left out, a point none of the rows has too."""
    points = summary[keys].drop_duplicates() if keys else pd.DataFrame([{}])
    labels, cells = [], {}
    headline = headline_rows(list(pd.unique(summary["strategy"].astype(str))) if "strategy" in summary else None)
    for point in points.to_dict("records"):
        group = " ".join(_label(point[k]) for k in keys) or "all"
        mine = match(summary, point) if keys else summary
        column = {row.label: cell(mine, row) for row in headline}
        if all(text == "n/a" for text in column.values()):
            continue
        labels.append(group)
        cells[group] = column
    wide = pd.DataFrame({group: cells[group] for group in labels}, index=[row.label for row in headline])
    if labels:
        wide = wide[~(wide == "n/a").all(axis=1)]
    wide.columns.name = " ".join(keys)
    return wide


def format_summary(summary: pd.DataFrame, keys: list[str], max_columns: int = 10) -> str:
    """The headline rows as text: a metric per row, a point (``keys``) per column.

    Falls back to long form when there are more than ``max_columns`` points.
    """
    wide = summary_cells(summary, keys)
    labels = list(wide.columns)
    if not labels:
        return "(no metrics)"
    if len(labels) > max_columns:
        lines = [
            f"{group}: {label} {text}"
            for group in labels
            for label, text in wide[group].items()
            if text != "n/a"
        ]
        return "\n".join(lines)
    wide = wide.replace("n/a", "-")
    return "\n\n".join(wide[labels[i : i + 4]].to_string() for i in range(0, len(labels), 4))


def _named(metrics: list[str], most: int = 6) -> str:
    """``a, b and c``, or the first ``most`` and how many more."""
    if len(metrics) > most:
        return f"{', '.join(metrics[:most])} and {len(metrics) - most} more"
    return metrics[0] if len(metrics) == 1 else f"{', '.join(metrics[:-1])} and {metrics[-1]}"


def seed_warnings(summary: pd.DataFrame) -> list[str]:
    """The metrics whose intervals rest on fewer seeds than they need to hold, said once:
    one line for the metrics without an interval (one seed), one per number of seeds they
    were measured to need (validation/COVERAGE.md)."""
    if summary.empty:
        return []
    low = underpowered(summary)
    alone: list[str] = []
    groups: dict[tuple[int, int], list[str]] = {}
    for metric, rows in low.groupby("metric", sort=False):
        seeds = int(rows["seeds"].min())
        if seeds < 2:
            alone.append(metric)
        else:
            needed = METRICS[metric].min_seeds if metric in METRICS else 2
            groups.setdefault((seeds, needed), []).append(metric)
    lines = []
    if alone:
        lines.append(
            f"warning: 1 seed at some points: no 95% interval there for {_named(alone)} "
            "(an interval needs 2 seeds or more)"
        )
    for (seeds, needed), metrics in groups.items():
        lines.append(
            f"warning: {seeds} seeds at some points, fewer than the {needed} from which the 95% "
            f"interval{'s' if len(metrics) > 1 else ''} of {_named(metrics)} "
            f"{'were' if len(metrics) > 1 else 'was'} measured to hold (validation/COVERAGE.md)"
        )
    return lines


def format_contrast(row, unit: str) -> str:
    """One contrast: the difference (points for shares) or ratio with its paired interval, or
    ``[n/a (1 seed)]`` where one seed leaves it undefined."""
    if isinstance(row["value"], float) and math.isnan(row["value"]):
        return "n/a"
    if any(isinstance(row[k], float) and math.isnan(row[k]) for k in ("ci_low", "ci_high")):
        undefined = no_interval(row.get("seeds"))
        if row["compare"] == "ratio":
            return f"x{row['value']:.3g} [{undefined}]"
        if unit == "share":
            return f"{100 * row['value']:+.1f} pp [{undefined}]"
        return f"{row['value']:+.4g} [{undefined}]"
    if row["compare"] == "ratio":
        text = f"x{row['value']:.3g} [{row['ci_low']:.3g}, {row['ci_high']:.3g}]"
    elif unit == "share":
        text = f"{100 * row['value']:+.1f} pp [{100 * row['ci_low']:+.1f}, {100 * row['ci_high']:+.1f}]"
    else:
        text = f"{row['value']:+.4g} [{row['ci_low']:+.4g}, {row['ci_high']:+.4g}]"
    ratio = row["width_ratio"]
    if isinstance(ratio, float) and not math.isnan(ratio):
        text += f"; unpaired interval {ratio:.2f}x as wide"
    return text


def format_contrasts(frame: pd.DataFrame, keys: list[str]) -> str:
    """The declared contrasts as text, one line per point and contrast."""
    if frame.empty:
        return ""
    lines = []
    for _, row in frame.iterrows():
        point = point_label(row, keys)
        unit = METRICS[row["metric"]].unit if row["metric"] in METRICS else "count"
        seeds = "" if row["seeds"] == 1 else f" ({row['seeds']} seeds)"  # one seed: said in the interval
        lines.append(f"{row['name']} {point} vs {row['baseline']}: {format_contrast(row, unit)}{seeds}")
    return "\n".join(lines)
