"""Summaries over seeds: one function per point (:func:`summarize`) and per comparison
(:func:`contrasts`), both with the one interval method of :mod:`kbsim.stats.intervals`.

``summary.csv``, the terminal table of ``kbsim run``, every figure band, the
README results block, ``docs/results.md`` and the notebooks all read
:func:`summarize`'s frame.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from kbsim.stats.intervals import contrast, estimate
from kbsim.stats.metrics import METRICS

#: Structure columns of a metric row (with ``metric``) and the summary's value columns.
STRUCTURE = ("metric", "at_s", "at_end", "strategy", "subset")
SUMMARY_VALUES = ("name", "value", "ci_low", "ci_high", "se", "seeds", "n", "successes", "trials", "method")
#: Columns of per-run metric rows that are neither run keys nor structure.
_ROW_COLUMNS = {"seed", "run_id", "name", "value", "successes", "trials", *STRUCTURE}


def kind_of(metric: str, trials: np.ndarray) -> str:
    """A defined metric's kind; an unknown one is a mean unless it carries trials."""
    if metric in METRICS:
        return METRICS[metric].kind
    return "mean" if np.isnan(trials).all() else "proportion"


def run_keys(per_run: pd.DataFrame) -> list[str]:
    """The run keys of per-run metric rows: scenario and swept parameters (not the seed)."""
    return [c for c in per_run.columns if c not in _ROW_COLUMNS]


def _per_seed(kind: str, seeds: np.ndarray, values: np.ndarray, successes: np.ndarray,
              trials: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """Per-seed numerators and denominators of one group's rows (several runs of one seed
    are one cluster: summed, or averaged for means)."""
    if len(np.unique(seeds)) != len(seeds):
        how = "mean" if kind == "mean" else "sum"
        rows = pd.DataFrame({"seed": seeds, "value": values, "successes": successes, "trials": trials})
        by_seed = rows.groupby("seed", sort=True)[["value", "successes", "trials"]].agg(how)
        values, successes, trials = (by_seed[c].to_numpy(dtype=float) for c in ("value", "successes", "trials"))
    if kind == "mean":
        return values, None
    return successes, trials


def summarize(per_run: pd.DataFrame, by: Iterable[str] | None = None) -> pd.DataFrame:
    """One row per point (``by`` keys) and metric: the estimate over seeds with its 95% interval.

    Columns: ``*by``, the structure (``metric``, ``at_s``, ``at_end``, ``strategy``,
    ``subset``), ``name``, ``value``, ``ci_low``, ``ci_high``, ``se``, ``seeds`` (seeds
    pooled), ``n`` (runs pooled), ``successes`` and ``trials`` (pooled sums; NaN for
    means) and ``method``. ``by`` defaults to every run key present.

    The groups are cut from numpy copies of the columns rather than from the frame:
    slicing a frame per group costs a pandas take per column and group, which made this
    the slowest step of drawing the figures (string columns read from many runs' files).

    Args:
        per_run: the per-run metrics, one row per run and metric: the ``metrics`` table of
            :func:`kbsim.load_results`, or :func:`kbsim.stats.metrics_by_run` of days run
            with :func:`kbsim.run_day`.
        by: the columns that make a point (``["scenario", "edit.delay_s"]``); the seeds
            within a point are pooled.

    Returns:
        One row per point and metric, with the columns above; an interval needs two seeds
        or more (with one, ``ci_low`` and ``ci_high`` are NaN).

    Example:
        >>> import kbsim
        >>> result = kbsim.run_experiment({"name": "tiny", "params": {"day_hours": 2,
        ...     "corpus": {"articles": 30}, "saves": {"count": 30}, "questions": {"count": 20}},
        ...     "seeds": 3}, "results", workers=1, progress=False)
        >>> summary = kbsim.summarize(kbsim.load_results(result.directory)["metrics"], by=["scenario"])
        >>> row = summary[summary["name"] == "stale_citation_share@end"].iloc[0]
        >>> int(row["seeds"]), bool(row["ci_low"] <= row["value"] <= row["ci_high"])
        (3, True)
    """
    by = run_keys(per_run) if by is None else list(by)
    keys = [*by, *STRUCTURE]
    seeds = per_run["seed"].to_numpy()
    names = per_run["name"].to_numpy(dtype=object)
    values, successes, trials = (per_run[c].to_numpy(dtype=float) for c in ("value", "successes", "trials"))
    out = []
    for key, index in per_run.groupby(keys, sort=False, dropna=False).indices.items():
        key = key if isinstance(key, tuple) else (key,)
        group_trials = trials[index]
        kind = kind_of(key[len(by)], group_trials)
        group_seeds = seeds[index]
        numerators, denominators = _per_seed(kind, group_seeds, values[index], successes[index], group_trials)
        result = estimate(kind, numerators, denominators)
        pooled = (math.nan, math.nan) if kind == "mean" else (numerators.sum(), denominators.sum())
        out.append(
            (*key, names[index[0]], result.value, result.low, result.high, result.se,
             len(np.unique(group_seeds)), len(index), *pooled, result.method)
        )
    frame = pd.DataFrame(out, columns=[*keys, *SUMMARY_VALUES])
    return frame.astype({"seeds": "int64", "n": "int64"})


def underpowered(summary: pd.DataFrame) -> pd.DataFrame:
    """Summary rows with fewer seeds than their metric needs for its interval to hold."""
    needed = summary["metric"].map(lambda m: METRICS[m].min_seeds if m in METRICS else 2)
    return summary[summary["seeds"] < needed]


# -- selecting a metric -------------------------------------------------------------------


@dataclass(frozen=True)
class MetricSelector:
    """One metric row per point: ``metric``, and optionally where (``at``), which strategy and
    which subset. ``at`` is ``"end"`` (the default for metrics measured over time), ``"Nh"``
    (N hours into the day) or a number of seconds."""

    metric: str
    at: str | float | None = None
    strategy: str = ""
    subset: str = ""

    def __post_init__(self) -> None:
        if self.metric not in METRICS:
            raise ValueError(f"metric: unknown {self.metric!r}; expected one of {', '.join(METRICS)}")
        if self.strategy and not self.strategy.isidentifier():
            raise ValueError(f"strategy: expected a strategy's name (a word: poll), got {self.strategy!r}")
        at_seconds(self.at)

    def mask(self, frame: pd.DataFrame) -> pd.Series:
        """The rows of a summary or metrics frame this selector picks."""
        mask = (frame["metric"] == self.metric) & (frame["strategy"] == self.strategy) & (
            frame["subset"] == self.subset
        )
        seconds = at_seconds(self.at)
        if seconds is None:  # the day's end, or no time at all
            return mask & (frame["at_s"].isna() | frame["at_end"].astype(bool))
        return mask & np.isclose(frame["at_s"].to_numpy(dtype=float), seconds)

    @property
    def label(self) -> str:
        """The selector as text: ``metric@at[strategy]{subset}``."""
        text = self.metric
        if self.at is not None and self.at != "end":
            text += f"@{self.at}"
        elif self.at == "end":
            text += "@end"
        if self.strategy:
            text += f"[{self.strategy}]"
        if self.subset:
            text += "{" + self.subset + "}"
        return text


def at_seconds(at: str | float | None) -> float | None:
    """``at`` in seconds; None for the end of the day."""
    if at is None or at == "end":
        return None
    if isinstance(at, bool):
        raise ValueError(f"at: expected 'end', 'Nh' or seconds, got {at!r}")
    if isinstance(at, (int, float)):
        if not (math.isfinite(at) and at > 0):
            raise ValueError(f"at: expected a positive number of seconds, got {at!r}")
        return float(at)
    text = str(at).strip()
    if text.endswith("h"):
        try:
            hours = float(text[:-1])
        except ValueError:
            hours = math.nan
        if math.isfinite(hours) and hours > 0:
            return hours * 3600.0
    raise ValueError(f"at: expected 'end', 'Nh' (e.g. '1h') or seconds, got {at!r}")


# -- paired contrasts -----------------------------------------------------------------------


@dataclass(frozen=True)
class ContrastSpec:
    """One declared comparison: every point matching ``where`` against its ``baseline``.

    A point's baseline is the same point with the ``baseline`` keys set to their values
    (``{scenario: control}``: the same sweep point in the control scenario), compared
    seed by seed over their common seeds.
    """

    selector: MetricSelector
    baseline: Mapping[str, Any]
    where: Mapping[str, Any] = field(default_factory=dict)
    compare: str = "difference"

    @property
    def label(self) -> str:
        """The comparison as text: the selector's label ``vs`` its baseline."""
        against = ", ".join(f"{k}={_show(v)}" for k, v in self.baseline.items())
        return f"{self.selector.label} vs {against}"


def _show(value) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "null"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _same(a, b) -> bool:
    a_missing = a is None or (isinstance(a, float) and math.isnan(a)) or a is pd.NA
    b_missing = b is None or (isinstance(b, float) and math.isnan(b)) or b is pd.NA
    if a_missing or b_missing:
        return a_missing and b_missing
    return a == b


CONTRAST_COLUMNS = (
    "contrast", "metric", "at_s", "strategy", "subset", "name", "compare", "baseline",
    "value", "ci_low", "ci_high", "se", "unpaired_ci_low", "unpaired_ci_high", "unpaired_se",
    "width_ratio", "seeds", "method",
)


def contrasts(per_run: pd.DataFrame, specs: Sequence[ContrastSpec], by: Iterable[str] | None = None) -> pd.DataFrame:
    """Every declared contrast at every point it applies to (columns :data:`CONTRAST_COLUMNS`
    after the point's ``by`` keys). ``width_ratio`` is the unpaired interval's width over the
    paired one's: above 1, pairing on common seeds narrowed the interval by that factor."""
    by = run_keys(per_run) if by is None else list(by)
    out = []
    points = per_run[by].drop_duplicates().to_dict("records") if by else [{}]
    for spec in specs:
        selected = per_run[spec.selector.mask(per_run)]
        if selected.empty:
            continue
        for point in points:
            if any(not _same(point.get(k), v) for k, v in spec.where.items()):
                continue
            if all(_same(point.get(k), v) for k, v in spec.baseline.items()):
                continue  # the baseline itself
            base = {**point, **spec.baseline}
            mine, theirs = _rows_at(selected, by, point), _rows_at(selected, by, base)
            if mine.empty or theirs.empty:
                continue
            kind = kind_of(spec.selector.metric, mine["trials"].to_numpy(dtype=float))
            a = _seed_table(kind, mine)
            b = _seed_table(kind, theirs)
            common = a.index.intersection(b.index)
            a, b = a.loc[common], b.loc[common]
            result = contrast(
                kind, a["y"].to_numpy(), a.get("x"), b["y"].to_numpy(), b.get("x"), compare=spec.compare
            )
            out.append(
                (*[point.get(k) for k in by], spec.label, spec.selector.metric, float(mine["at_s"].iloc[0]),
                 spec.selector.strategy, spec.selector.subset, mine["name"].iloc[0], spec.compare,
                 ", ".join(f"{k}={_show(v)}" for k, v in spec.baseline.items()),
                 result.value, result.low, result.high, result.se, result.unpaired_low, result.unpaired_high,
                 result.unpaired_se, result.width_ratio, result.seeds, result.method)
            )
    return pd.DataFrame(out, columns=[*by, *CONTRAST_COLUMNS])


def _rows_at(frame: pd.DataFrame, by: list[str], point: Mapping[str, Any]) -> pd.DataFrame:
    mask = np.ones(len(frame), dtype=bool)
    for key in by:
        value = point.get(key)
        column = frame[key]
        if value is None or (isinstance(value, float) and math.isnan(value)):
            mask &= column.isna().to_numpy()
        else:
            mask &= (column == value).fillna(False).to_numpy(dtype=bool)
    return frame[mask]


def _seed_table(kind: str, rows: pd.DataFrame) -> pd.DataFrame:
    """Per-seed ``y`` (and ``x`` for ratios), indexed by seed."""
    if kind == "mean":
        return rows.groupby("seed", sort=True)["value"].mean().to_frame("y")
    sums = rows.groupby("seed", sort=True)[["successes", "trials"]].sum()
    return sums.rename(columns={"successes": "y", "trials": "x"})
