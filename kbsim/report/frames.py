"""Results as tidy frames: load and stack runs' tables, and the derived frames figures draw.

The runner writes each experiment under ``results/<experiment>/``, every
table carrying ``scenario``, ``run_id``, the swept parameters (by dotted name)
and ``seed``. This module turns those tables into the frames the figures and
notebooks use. It computes, it never plots (see :mod:`kbsim.report.plots`).
Metrics and their intervals come from :mod:`kbsim.stats`, and only from there.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from kbsim.sim.tables import DAY_TABLES, NATIVE_COLUMNS, key_columns
from kbsim.stats.intervals import estimate
from kbsim.stats.summary import STRUCTURE, SUMMARY_VALUES

__all__ = [
    "DAY_TABLES",
    "NATIVE_COLUMNS",
    "TABLE_NAMES",
    "concat_tables",
    "cost_by_citations_held",
    "day_tables",
    "inside_ci",
    "key_columns",
    "select",
    "staleness_by_hour",
]

Tables = Mapping[str, pd.DataFrame]

#: The tables of a results directory this module reads (the day's, :data:`DAY_TABLES` of
#: :mod:`kbsim.sim.tables`, and the runner's metrics).
TABLE_NAMES = (*DAY_TABLES, "metrics")


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


def select(summary_frame: pd.DataFrame, metric: str, **where) -> pd.DataFrame:
    """Summary rows of one metric by its readable name (``stale_citation_share@end``,
    ``calls_per_check[poll]``) and given key values, the structure columns dropped."""
    mask = summary_frame["name"] == metric
    for column, value in where.items():
        mask &= summary_frame[column] == value
    return summary_frame[mask].drop(columns=["metric", "name"]).reset_index(drop=True)


def staleness_by_hour(summary_frame: pd.DataFrame) -> pd.DataFrame:
    """Stale shares at each whole hour of the day, tidy: keys, ``kind`` (citations/answers),
    ``hour``, ``share``, ``ci_low``, ``ci_high``, ``seeds``.

    The end of the day is included when it falls on a whole hour.
    """
    kinds = {"stale_citation_share": "citations", "stale_answer_share": "answers"}
    at = summary_frame["at_s"].to_numpy(dtype=float)
    whole_hour = np.isclose(at / 3600.0, np.round(at / 3600.0)) & (at > 0)
    mask = summary_frame["metric"].isin(list(kinds)) & (summary_frame["subset"] == "") & whole_hour
    frame = summary_frame[mask].copy()
    frame["kind"] = frame["metric"].map(kinds)
    frame["hour"] = np.round(frame["at_s"] / 3600.0).astype(int)
    frame = frame.rename(columns={"value": "share"})
    keys = [c for c in summary_frame.columns if c not in (*STRUCTURE, *SUMMARY_VALUES)]
    return (
        frame[[*keys, "kind", "hour", "share", "ci_low", "ci_high", "seeds"]]
        .sort_values([*keys, "kind", "hour"])
        .reset_index(drop=True)
    )


def cost_by_citations_held(checks: pd.DataFrame) -> pd.DataFrame:
    """Mean calls and bytes per check against the citations held, per strategy.

    One point per check of the day (``check_index``): ``held`` is the mean
    citations held at that check over runs, ``value`` the mean cost with its
    interval over seeds (:func:`kbsim.stats.estimate`, kind ``mean``). Columns:
    ``strategy``, ``check_index``, ``held``, ``measure`` (calls/bytes), ``value``,
    ``ci_low``, ``ci_high``, ``seeds``.
    """
    if checks.empty:
        raise ValueError("checks table is empty")
    rows = []
    for (strategy, index), group in checks.groupby(["strategy", "check_index"]):
        for measure in ("calls", "bytes"):
            per_seed = group.groupby("seed")[measure].mean().to_numpy(dtype=float)
            result = estimate("mean", per_seed)
            rows.append(
                (strategy, index, group["citations_held"].mean(), measure, result.value, result.low, result.high,
                 result.seeds)
            )
    return pd.DataFrame(
        rows,
        columns=["strategy", "check_index", "held", "measure", "value", "ci_low", "ci_high", "seeds"],
    )


def inside_ci(observed: pd.DataFrame, predicted: pd.Series | np.ndarray) -> np.ndarray:
    """Whether each prediction lies inside the observed row's [ci_low, ci_high]."""
    predicted = np.asarray(predicted, dtype=float)
    return (observed["ci_low"].to_numpy() <= predicted) & (
        predicted <= observed["ci_high"].to_numpy()
    )
