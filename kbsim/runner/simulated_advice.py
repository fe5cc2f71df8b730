"""Advice by simulation: the frontier search of :mod:`kbsim.model.advise`, on simulated points.

When a day is not what the analytic model assumes (bursty saves, a profile far from
flat, saves that follow the questions' ranking only in part: :meth:`kbsim.fit.Fit.model_gaps`),
its answer is found by simulating the day instead: the model's candidate check intervals
(:func:`kbsim.model.advise.candidate_intervals`) outwards from its answer until the
cheapest one meeting the target is bracketed, each day checked by all of the day's
strategies at once (those the model has no cost for are answered here alone), and
edits after a grid of delays (one check at the end of the day).
Each point's value comes with its 95% interval, the unit of replication being the day:
a day of the log when the config replays one (its seeds are pooled into it), else a seed.
The cheapest exact strategy and interval whose simulated value meets the target is the
answer; the largest delay whose simulated conflict rate stays under the target is the
edit delay, with the delays where the interval's ends cross it as its interval.

:func:`compare_with_model` then says, quantity by quantity, where the model's answer
falls outside what the simulation gives. Both run through
:func:`kbsim.runner.run.run_experiment`, so asking again reuses every run.
"""

from __future__ import annotations

import hashlib
import json
import math
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from kbsim.model import analytic
from kbsim.model.advise import (
    Advice,
    Target,
    candidate_intervals,
    format_share,
    largest_delay_below,
    show_value,
)
from kbsim.params import DayParams
from kbsim.runner.load import config_from_dict
from kbsim.runner.results import load_results
from kbsim.runner.run import run_experiment
from kbsim.sim.strategies import resolve, strategy_named
from kbsim.stats.intervals import no_interval
from kbsim.stats.summary import summarize
from kbsim.units import format_duration

__all__ = ["EDIT_DELAYS_S", "SimulatedAdvice", "compare_with_model", "simulate_advice"]

#: Delays between reading and editing the simulation tries (seconds), besides the model's answer.
EDIT_DELAYS_S = (15.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1200.0, 1800.0, 3600.0)
#: The quantities compared for the advised strategy.
QUANTITIES = ("detection_latency_s", "detection_latency_p90_s", "stale_exposure", "calls_per_hour", "bytes_per_hour")
_SWEPT_INTERVAL = "checks.interval_s"
_SWEPT_DELAY = "edit.delay_s"


@dataclass(frozen=True)
class SimulatedAdvice:
    """The answer found on simulated points (:func:`simulate_advice`).

    ``points``: per ``strategy`` and ``interval_s``, each metric's ``value``, ``ci_low``,
    ``ci_high`` (columns ``<metric>``, ``<metric>_low``, ``<metric>_high``), and ``meets``.
    ``edits``: per ``delay_s``, the rejection rate and its interval. ``choice`` and
    ``runner_up`` are rows of ``points`` (None when nothing meets the target).
    """

    target: Target
    cost: str
    points: pd.DataFrame
    edits: pd.DataFrame
    choice: dict | None
    runner_up: dict | None
    edit_delay_s: float
    edit_delay_low_s: float
    edit_delay_high_s: float
    max_conflict_rate: float
    units: int
    unit: str
    runs: int
    directories: tuple[str, ...]
    comparison: pd.DataFrame = field(default_factory=pd.DataFrame)
    #: the day's strategies' labels, by name
    labels: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict:
        """The simulated advice as plain JSON values (``--json``). What the simulation does not
        give is left out, never null: an interval over one seed (NaN), a runner-up there is none of."""

        def clean(row: dict) -> dict:
            return {k: v for k, v in row.items()
                    if v is not None and not (isinstance(v, float) and not math.isfinite(v))}

        return {
            "source": f"simulation: {self.units} {self.unit} per point, {self.runs} runs (kbsim.runner.run)",
            **{name: clean(row) for name, row in (("choice", self.choice), ("runner_up", self.runner_up))
               if row is not None},
            "edit": {"max_conflict_rate": self.max_conflict_rate,
                     **clean({"delay_s": self.edit_delay_s, "low_s": self.edit_delay_low_s,
                              "high_s": self.edit_delay_high_s})},
            "model_vs_simulation": [clean(row) for row in self.comparison.to_dict("records")],
            "directories": list(self.directories),
        }

    def _bracket(self, metric: str, low: float, high: float, show=None) -> str:
        """``[low, high]``, or ``[n/a (1 seed)]`` where the interval is undefined (one unit)."""
        if any(v is None or (isinstance(v, float) and math.isnan(v)) for v in (low, high)):
            return f"[{no_interval(self.units, self.unit.removesuffix('s'))}]"
        show = show or (lambda value: show_value(metric, value))
        return f"[{show(low)}, {show(high)}]"

    def lines(self) -> list[str]:
        """What ``kbsim advise`` prints of the simulated answer, one line each."""
        column = f"{self.cost}_per_hour"
        metric = self.target.metric
        out = []
        if self.choice is None:
            best = self.points.loc[self.points[metric].fillna(0.0).idxmin()]
            out.append(f"Simulated: no interval meets the target; the best, {_describe(best, self.labels)}, gives "
                       f"{self.target.describe(best[metric])}.")
        else:
            c = self.choice
            holds = "its whole interval meets the target" if c[f"{metric}_high"] <= self.target.limit * (1 + 1e-9) \
                else "the target is inside its interval: more days would tell"
            out.append(
                f"Simulated: {_describe(c, self.labels)}: {show_value(column, c[column])} "
                f"{self._bracket(column, c[column + '_low'], c[column + '_high'])}; {self.target.describe(c[metric])} "
                f"{self._bracket(metric, c[metric + '_low'], c[metric + '_high'])} ({holds}).")
        if self.runner_up is not None:
            r = self.runner_up
            out.append(f"  runner-up: {_describe(r, self.labels)}: {show_value(column, r[column])}, "
                       f"{self.target.describe(r[metric])}.")
        delay = self.edit_delay_s
        if math.isnan(delay):
            out.append(f"  edits: conflicts exceed {format_share(self.max_conflict_rate)} at every delay simulated.")
        else:
            bracket = self._bracket("delay_s", self.edit_delay_low_s, self.edit_delay_high_s, format_duration)
            if self.units != 1 and (math.isnan(self.edit_delay_low_s) or math.isnan(self.edit_delay_high_s)):
                bracket = f"[{self._edit_gap()}]"
            out.append(f"  edits: wait at most {format_duration(delay)} {bracket} between reading and editing to keep "
                       f"conflicts under {format_share(self.max_conflict_rate)}.")
        return out

    def _edit_gap(self) -> str:
        """Why the edit delay has no interval over more than one unit: ``n/a: <reason>``."""
        rows = self.edits.sort_values("delay_s")
        if rows["rejection_rate_high"].isna().all() or rows["rejection_rate_low"].isna().all():
            return (f"n/a: the conflict rate has no interval at any delay (too few edits in the {self.units} "
                    f"{self.unit} to tell their spread)")
        limit = format_share(self.max_conflict_rate)
        if math.isnan(self.edit_delay_low_s):
            first = rows.iloc[0]
            return (f"n/a: even at the shortest delay simulated, {format_duration(float(first['delay_s']))}, the "
                    f"conflict rate may reach {format_share(float(first['rejection_rate_high']))}, above {limit}: "
                    "no delay is sure to keep under it")
        return f"n/a: the conflict rate's lower bound exceeds {limit} at the shortest delay simulated"

    def comparison_lines(self) -> list[str]:
        """The model's answer beside the simulation, quantity by quantity."""
        if self.comparison.empty:
            return []
        out = ["Model against simulation, at the model's answer (95% intervals over "
               f"{self.units} {self.unit}):"]
        for _, row in self.comparison.iterrows():
            metric = row["metric"]
            simulated = f"{show_value(metric, row['simulated'])} {self._bracket(metric, row['ci_low'], row['ci_high'])}"
            mark = {True: "agrees", False: "DISAGREES", None: "-"}[row["agrees"]]
            out.append(f"  {row['option']:<28} {metric:<24} model {show_value(metric, row['predicted']):>11}   "
                       f"simulated {simulated:<32} {mark}")
        scored = self.comparison[self.comparison["agrees"].notna()]
        wrong = scored[~scored["agrees"].astype(bool)]
        if wrong.empty:
            out.append(f"The model's answer agrees with the simulation on all {len(scored)} quantities.")
        else:
            named = "; ".join(f"{r['option']}: {r['metric']}" for _, r in wrong.iterrows())
            out.append(f"The model and the simulation DISAGREE on {len(wrong)} of {len(scored)} quantities ({named}); "
                       "the simulated answer above is the one to follow.")
        return out


def _describe(row, labels: dict[str, str] | None = None) -> str:
    label = (labels or {}).get(row["strategy"]) or strategy_named(row["strategy"]).label
    return f"{label} every {format_duration(float(row['interval_s']))}"


def _digest(obj) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=str).encode()).hexdigest()[:10]


def _pooled(directory, swept: str, unit: str) -> pd.DataFrame:
    """Per swept value and metric, the estimate over units (days of the log: every seed of a
    scenario pooled into it; or seeds)."""
    per_run = load_results(directory, tables=["metrics"])["metrics"]
    if unit == "days":
        codes = {name: i for i, name in enumerate(sorted(per_run["scenario"].unique()))}
        per_run = per_run.assign(seed=per_run["scenario"].map(codes))
    return summarize(per_run.drop(columns=["scenario", "run_id"]), by=[swept])


def simulate_advice(
    day: dict,
    advice: Advice,
    *,
    out_dir: str = "results",
    seeds: int | Sequence[int] = 2,
    unit: str = "days",
    workers: int | None = None,
    log: Callable[[str], None] | None = None,
    yes: bool = False,
    intervals: list[float] | None = None,
    delays: list[float] | None = None,
) -> SimulatedAdvice:
    """The frontier search of ``advice``'s question (its target, cost, shortest interval and
    conflict target) on simulated points of ``day``.

    The check intervals are the model's candidates (:func:`kbsim.model.advise.candidate_intervals`),
    simulated outwards from the model's answer: two either side of it first, then more
    below while none meets the target, or more above while the longest simulated one does
    (the cheapest exact option is at the longest interval that meets it), so the shortest,
    costliest intervals are simulated only when the answer needs them. Every run is kept:
    asking again, or a wider search, reuses them.

    Args:
        day: ``{"params": ..., "scenarios": ...}`` of the day (an experiment config's), the
            scenarios being the log's days when it replays one.
        advice: the analytic model's answer to the same question.
        seeds: simulated days per scenario: a count N (seeds 1 to N) or the seeds themselves.
        unit: ``"days"`` (the scenarios are days of a log: each one unit, its seeds pooled
            into it) or ``"seeds"`` (each seed of the one day a unit).
        out_dir: the results folder the simulated runs are kept in.
        workers: processes (default: the CPU count).
        log: where progress lines go (default: nowhere).
        yes: run a simulation above kbsim's size limits.
        intervals: the check intervals to simulate, all of them (default: the search above).
        delays: the edit delays to simulate (default: :data:`EDIT_DELAYS_S` with the model's safe delay).

    Raises:
        ConfigError: the day cannot be simulated; TooLargeError above the size limits
            without ``yes``; ResultsError: the results folder cannot be used;
            RuntimeError: some simulated days failed.
    """
    params = DayParams.model_validate(day.get("params") or {})
    strategies = resolve(params.checks.strategies)
    exact_names = [strategy.name for strategy in strategies if strategy.exact]
    scenarios = day.get("scenarios") or {"default": {}}
    base = dict(day.get("params") or {})
    if delays is None:
        delays = [d for d in EDIT_DELAYS_S if d <= params.day_s]
        if math.isfinite(advice.edit.delay_s) and advice.edit.delay_s > 0:
            delays.append(round(advice.edit.delay_s, 3))
        delays = sorted(set(delays))
    seeds = int(seeds) if isinstance(seeds, (int, np.integer)) else [int(seed) for seed in seeds]
    name = f"advise-sim-{_digest([base, scenarios, seeds])}"

    def run(config: dict):
        with warnings.catch_warnings():
            # tqdm.auto looks for ipywidgets inside a kernel; no bar is shown there anyway
            warnings.filterwarnings("ignore", message="IProgress not found")
            result = run_experiment(config_from_dict(config), out_dir, workers=workers, progress=log is not None,
                                    log=log, yes=yes)
        if result.failures:
            raise RuntimeError(f"{len(result.failures)} simulated days failed; see {result.directory}/errors")
        return result

    def checks(values: list[float]):
        return run({
            "name": name,
            "description": "kbsim advise: the check policy's frontier, simulated",
            "params": {**base, "edit": {**(base.get("edit") or {}), "delay_s": None}},
            "scenarios": scenarios,
            "seeds": seeds,
            "sweep": {_SWEPT_INTERVAL: [float(v) for v in values]},
        })

    target, cost = advice.target, advice.cost
    column = f"{cost}_per_hour"
    candidates = [float(v) for v in candidate_intervals(params.day_s, float(advice.options["interval_s"].min()))]
    runs = 0
    if intervals is not None:
        result = checks(list(intervals))
        points = _points(_pooled(result.directory, _SWEPT_INTERVAL, unit))
    else:
        start = int(np.argmin([abs(math.log(c / advice.choice.interval_s)) for c in candidates]))
        low, high = max(0, start - 2), min(len(candidates) - 1, start + 2)
        while True:
            result = checks(candidates[low : high + 1])
            points = _points(_pooled(result.directory, _SWEPT_INTERVAL, unit))
            meets = points[points["strategy"].isin(exact_names)]
            meets = meets[meets[target.metric].fillna(0.0) <= target.limit * (1 + 1e-9)]
            if meets.empty and low > 0:
                low = max(0, low - 3)
            elif len(meets) and meets["interval_s"].max() >= candidates[high] and high < len(candidates) - 1:
                high = min(len(candidates) - 1, high + 3)
            else:
                break
    runs += result.runs_total
    directories = [str(result.directory)]
    achieved = points[target.metric].fillna(0.0)
    points["meets"] = achieved <= target.limit * (1 + 1e-9)
    exact = points[points["strategy"].isin(exact_names) & points["meets"]]
    ranked = exact.sort_values([column, "interval_s"], ascending=[True, False], kind="stable")
    choice = ranked.iloc[0].to_dict() if len(ranked) else None
    runner_up = None
    if choice is not None:
        others = ranked[ranked["strategy"] != choice["strategy"]]
        runner_up = others.iloc[0].to_dict() if len(others) else None
    edit_share = advice.edit.edit_share
    edits = run({
        "name": f"advise-sim-edits-{_digest([base, scenarios, seeds, edit_share])}",
        "description": "kbsim advise: conflicts against the edit delay, simulated",
        "params": {**base, "checks": {**(base.get("checks") or {}), "interval_s": params.day_s},
                   "edit": {**(base.get("edit") or {}), "share": edit_share}},
        "scenarios": scenarios,
        "seeds": seeds,
        "sweep": {_SWEPT_DELAY: [float(v) for v in delays]},
    })
    runs += edits.runs_total
    directories.append(str(edits.directory))
    edit_rows = _edit_rows(_pooled(edits.directory, _SWEPT_DELAY, unit))
    rate = advice.edit.max_conflict_rate
    delay = largest_delay_below(edit_rows["delay_s"], edit_rows["rejection_rate"], rate)
    low_delay = largest_delay_below(edit_rows["delay_s"], edit_rows["rejection_rate_high"], rate)
    high_delay = largest_delay_below(edit_rows["delay_s"], edit_rows["rejection_rate_low"], rate)
    units = len(scenarios) if unit == "days" else (seeds if isinstance(seeds, int) else len(seeds))
    simulated = SimulatedAdvice(target, cost, points, edit_rows, choice, runner_up, delay, low_delay, high_delay,
                                rate, units, unit, runs, tuple(directories),
                                labels={strategy.name: strategy.label for strategy in strategies})
    return compare_with_model(simulated, advice)


def _points(summary: pd.DataFrame) -> pd.DataFrame:
    """One row per strategy and interval, each metric with its interval (end-of-day values)."""
    rows = summary[summary["strategy"] != ""]
    wanted = (*QUANTITIES, "detected_share")
    out: dict[tuple[str, float], dict[str, Any]] = {}
    for _, row in rows[rows["metric"].isin(wanted)].iterrows():
        key = (row["strategy"], float(row[_SWEPT_INTERVAL]))
        entry = out.setdefault(key, {"strategy": row["strategy"], "interval_s": key[1]})
        entry[row["metric"]] = float(row["value"])
        entry[row["metric"] + "_low"] = float(row["ci_low"])
        entry[row["metric"] + "_high"] = float(row["ci_high"])
    frame = pd.DataFrame(list(out.values()))
    for metric in wanted:
        for suffix in ("", "_low", "_high"):
            if metric + suffix not in frame:
                frame[metric + suffix] = math.nan
    return frame.sort_values(["strategy", "interval_s"], kind="stable").reset_index(drop=True)


def _edit_rows(summary: pd.DataFrame) -> pd.DataFrame:
    rows = summary[summary["metric"] == "rejection_rate"]
    return pd.DataFrame({
        "delay_s": rows[_SWEPT_DELAY].astype(float).to_numpy(),
        "rejection_rate": rows["value"].to_numpy(float),
        "rejection_rate_low": rows["ci_low"].to_numpy(float),
        "rejection_rate_high": rows["ci_high"].to_numpy(float),
    }).sort_values("delay_s").reset_index(drop=True)


def compare_with_model(simulated: SimulatedAdvice, advice: Advice) -> SimulatedAdvice:
    """``simulated`` with its ``comparison``: the model's prediction of each quantity at its own
    answer (the advised strategy and interval, the safe edit delay) beside the simulated
    value there, ``agrees`` when the prediction is inside the simulated 95% interval."""
    rows = []
    points = simulated.points
    for option in [advice.choice, *([] if advice.title is None else [advice.title])]:
        match = points[(points["strategy"] == option.strategy) & np.isclose(points["interval_s"], option.interval_s)]
        metrics = QUANTITIES if option is advice.choice else ("detected_share", "calls_per_hour")
        for metric in metrics:
            predicted = float(getattr(option, metric))
            if match.empty:
                value = low = high = math.nan
            else:
                row = match.iloc[0]
                value, low, high = (float(row[metric + suffix]) for suffix in ("", "_low", "_high"))
            rows.append((option.describe(advice.strategies), option.strategy, metric, predicted, value, low, high))
    edits = simulated.edits
    if math.isfinite(advice.edit.delay_s) and len(edits):
        at = edits[np.isclose(edits["delay_s"], round(advice.edit.delay_s, 3))]
        predicted = float(analytic.predict_edit_outcomes(
            advice.params.model_copy(update={"edit": advice.params.edit.model_copy(
                update={"delay_s": advice.edit.delay_s})}), [advice.edit.delay_s]).iloc[0]["rejection_rate"])
        if len(at):
            row = at.iloc[0]
            rows.append((f"edits after {format_duration(advice.edit.delay_s)}", "", "rejection_rate", predicted,
                         float(row["rejection_rate"]), float(row["rejection_rate_low"]),
                         float(row["rejection_rate_high"])))
    frame = pd.DataFrame(rows, columns=["option", "strategy", "metric", "predicted", "simulated", "ci_low", "ci_high"])
    tolerance = 1 + 1e-9
    inside = (frame["ci_low"] <= frame["predicted"] * tolerance) & (frame["predicted"] <= frame["ci_high"] * tolerance)
    unknown = frame[["predicted", "simulated", "ci_low", "ci_high"]].isna().any(axis=1)
    frame["agrees"] = [None if u else bool(i) for i, u in zip(inside, unknown, strict=True)]
    frame["ratio"] = frame["predicted"] / frame["simulated"]
    return SimulatedAdvice(**{**simulated.__dict__, "comparison": frame})
