"""Kinds of day, bursts against unpublishing, and advice for the design day: measured on logs of known days.

Four measurements, each on logs from :class:`kbsim.fit.synthetic.KnownDays` (400 articles, 300
saves and 120 questions a weekday over 8 office hours, the save mix 85/10/5), fitted as
``kbsim fit`` fits them (:func:`kbsim.fit.fit_log`; no goodness-of-fit replicates, which no
figure here reads):

1. **Kinds found where there are some**: 14 calendar days with weekends at 20% of a weekday's
   saves and questions and one release day (a weekday, cycling) at 5 times the saves; saves one
   by one or in sessions of 3; half the logs with unpublished articles getting no more saves
   that day. A log passes when the fit finds exactly the weekday, weekend and peak kinds, with
   the release day as the one peak day.
2. **No kinds claimed where there are none**: 14 calendar days all alike, and 10 weekdays.
3. **Coverage, kind by kind**: on the logs of 1, each kind's mean-day interval against its true
   rate (saves: only the logs without the unpublish rule, whose true rate is the generator's),
   its future-day interval against a fresh day of that kind drawn from the same generator, and
   the pooled Zipf exponent of questions.
4. **False bursts**: Poisson saves (no bursts), unpublished articles getting no more saves that
   day, Zipf 1.2 and 1.4: the share of logs called bursty by the burst test as it is, and by the
   test before it respected unpublish times (its shuffles moved saves past their article's
   unpublish), on the same logs.
5. **Advice against simulation, kind by kind**: one 14-day log of the kinds of 1 with a
   morning-peaked profile and the unpublish rule, replayed day by day. For each kind, ``kbsim
   advise --design-day KIND``'s safe edit delay (the analytic model on that kind's busy hours, at
   the upper end of their save rate's future-day interval), the same at the busy hours' mean rate
   (the advice before it allowed for a future day) and the pooled day's are simulated on the
   kind's days, each day with enough seeds that a kind has at least ``--advice-days`` simulated
   days (80: 9 weekdays x 9 seeds, 4 weekend days x 20, the peak kind's one day x 80; each day of
   the log under each seed is one unit): the conflict rate at each with its 95% interval, against
   the 5% target. A grid of delays around them, one seed a day, gives the simulated safe delay.

    python validation/fit_day_kinds.py                 # 100 logs a cell, about 10 minutes on 2 cores
    python validation/fit_day_kinds.py --studies 20    # rougher
    python validation/fit_day_kinds.py --only advice   # step 5 alone: rewrites its part of the section

Writes its section of validation/FIT.md (between its markers; ``validation/fit.py`` keeps it).
"""

from __future__ import annotations

import argparse
import math
import platform
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

from kbsim.fit import estimates, fit_log
from kbsim.fit.synthetic import KnownDays, generate_log

ROOT = Path(__file__).resolve().parents[1]
START = "<!-- day-kinds:start (rewritten by `python validation/fit_day_kinds.py`) -->"
END = "<!-- day-kinds:end -->"
#: Where step 5's part of the section begins (``--only advice`` rewrites from here to END).
ADVICE = "<!-- day-kinds:advice (step 5; `python validation/fit_day_kinds.py --only advice` rewrites from here) -->"
BASE = KnownDays(articles=400, days=14, saves_per_day=300.0, questions_per_day=120.0, hours=(9, 17),
                 weekdays_only=False, session_gap_s=90.0, zipf_s=0.9)
WEEKDAY_INDICES = (0, 1, 2, 3, 4, 7, 8, 9, 10, 11)  # of 14 days from a Monday
ARRIVALS = {"Poisson saves": 1.0, "sessions of 3": 3.0}
EXPONENTS = (0.8, 0.9, 1.0, 1.2)
PROFILE = (0.5, 1.2, 1.5, 1.4, 0.7, 0.9, 1.3, 1.2, 0.9, 0.4)
TARGET_CONFLICTS = 0.05
EDIT_GRID_S = (15.0, 30.0, 60.0, 120.0, 300.0, 600.0)
#: Simulated days per kind, at least, in step 5 (each day of the kind's gets the seeds to reach it).
ADVICE_DAYS = 80


def with_kinds(arrivals: str, index: int) -> KnownDays:
    """The ``index``-th log with weekends and a release day."""
    return replace(BASE, weekend_rate=0.2, peak_days=(WEEKDAY_INDICES[index % len(WEEKDAY_INDICES)],),
                   peak_rate=5.0, session_saves=ARRIVALS[arrivals], zipf_s=EXPONENTS[index % len(EXPONENTS)],
                   unpublish_ends_day=bool(index % 2))


def without_kinds(arrivals: str, index: int, weekdays_only: bool) -> KnownDays:
    return replace(BASE, days=10 if weekdays_only else 14, weekdays_only=weekdays_only,
                   session_saves=ARRIVALS[arrivals], zipf_s=EXPONENTS[index % len(EXPONENTS)],
                   unpublish_ends_day=bool(index % 2))


def _seed(cell: int, arrivals: str, index: int) -> int:
    return 3_000_000 + 100_000 * cell + 10_000 * list(ARRIVALS).index(arrivals) + index


def kinds_study(case: tuple[str, int]) -> dict:
    """One log with kinds: what the fit found, and each interval against its truth."""
    arrivals, index = case
    known = with_kinds(arrivals, index)
    seed = _seed(1, arrivals, index)
    fit = fit_log(generate_log(known, seed), replicates=0)
    truth_kinds = known.day_kind()
    found = fit.day_kinds
    assert found is not None
    names = [k.name for k in found.kinds]
    exact = names == ["weekday", "weekend", "peak"] and all(
        found.kind_of_day(d) == truth_kinds[d] for d in range(known.days))
    row: dict = {"arrivals": arrivals, "unpublish_rule": known.unpublish_ends_day, "found": found.found,
                 "exact": exact, "kinds": "+".join(names), "bursty": fit.burstiness["saves"].bursty}
    # a fresh log of the same days: its days of each kind are the "future day" the prediction interval is for
    fresh = generate_log(known, seed + 500_000)
    fresh_saves = np.bincount(fresh.saves.day, minlength=known.days)
    fresh_questions = np.bincount(fresh.questions.day, minlength=known.days) if fresh.questions is not None else None
    rate = {"weekday": 1.0, "weekend": known.weekend_rate, "peak": known.peak_rate}
    question_rate = {"weekday": 1.0, "weekend": known.weekend_rate, "peak": 1.0}
    if exact:
        for kind in found.kinds:
            fresh_day = next(d for d in range(known.days) if truth_kinds[d] == kind.name)
            checks = {
                f"{kind.name}: questions, mean day": (kind.questions_per_day, known.questions_per_day
                                                      * question_rate[kind.name]),
                f"{kind.name}: saves, a future day": (kind.saves_future, fresh_saves[fresh_day]),
            }
            if fresh_questions is not None:
                checks[f"{kind.name}: questions, a future day"] = (kind.questions_future, fresh_questions[fresh_day])
            if not known.unpublish_ends_day:
                checks[f"{kind.name}: saves, mean day"] = (kind.saves_per_day, known.saves_per_day * rate[kind.name])
            for name, (value, truth) in checks.items():
                if value is None or math.isnan(value.low):
                    row[name] = None
                else:
                    row[name] = bool(value.low <= truth <= value.high)
    zipf = fit.popularity["questions"].exponent
    row["Zipf exponent of questions (pooled)"] = bool(zipf.low <= known.zipf_s <= zipf.high)
    return row


def none_study(case: tuple[str, int, bool]) -> dict:
    arrivals, index, weekdays_only = case
    known = without_kinds(arrivals, index, weekdays_only)
    fit = fit_log(generate_log(known, _seed(2 if weekdays_only else 3, arrivals, index)), replicates=0)
    assert fit.day_kinds is not None
    return {"arrivals": arrivals, "weekdays_only": weekdays_only, "found": fit.day_kinds.found,
            "over_dispersed": fit.day_kinds.test is not None and fit.day_kinds.test.over_dispersed,
            "bursty": fit.burstiness["saves"].bursty}


def burst_study(case: tuple[float, int, bool]) -> dict:
    s, index, before = case
    known = replace(BASE, weekend_rate=0.2, zipf_s=s, unpublish_ends_day=True,
                    mix=(0.85, 0.10, 0.05) if index % 2 else (0.80, 0.10, 0.10))
    log = generate_log(known, 4_000_000 + int(100 * s) * 1000 + index)
    original = estimates._unpublish_limits
    if before:  # the test as it was: shuffles free to move a save past its article's unpublish
        estimates._unpublish_limits = lambda *args: None
    try:
        fit = fit_log(log, replicates=0)
    finally:
        estimates._unpublish_limits = original
    return {"zipf_s": s, "method": "before (unconstrained shuffles)" if before else "now (unpublish respected)",
            "bursty": fit.burstiness["saves"].bursty, "ratio": fit.burstiness["saves"].ratio.value}


def advice_study(out: Path, workers: int, advice_days: int = ADVICE_DAYS) -> pd.DataFrame:
    """Part 5: each kind's design-day edit delay and the pooled one, simulated on the kind's days.

    Each of a kind's days of the log is replayed under ``ceil(advice_days / days)`` seeds; a day
    of the log under one seed is one simulated day, the unit of the intervals.
    """
    from kbsim.cli.day_config import load_day_config
    from kbsim.fit.design_day import design_day
    from kbsim.fit.fitted_config import write_config
    from kbsim.fit.from_config import model_day
    from kbsim.model import advise
    from kbsim.model.advise import Target, largest_delay_below
    from kbsim.runner.load import config_from_dict
    from kbsim.runner.results import load_results
    from kbsim.runner.run import run_experiment

    known = replace(with_kinds("Poisson saves", 3), hours=(8, 18), profile=PROFILE, unpublish_ends_day=True,
                    zipf_s=0.9)
    fit = fit_log(generate_log(known, 37), replicates=0)
    assert fit.day_kinds is not None and fit.day_kinds.found, fit.day_kinds
    written = write_config(fit, out / "day.yaml", command="python validation/fit_day_kinds.py", replay=True,
                           seeds=1)
    config = load_day_config(written.path)
    params = dict(config.params)
    scenarios = {name: dict(body) for name, body in config.scenarios.items()}
    target = Target("detection_latency_s", 900.0)
    pooled_day = model_day(params, fit)
    pooled = advise.advise(pooled_day, target, max_conflict_rate=TARGET_CONFLICTS)
    hours = fit.window[1] - fit.window[0]
    run_config = {**params, "checks": {"interval_s": pooled_day.day_s}, "edit": {"share": 0.25}}
    rows = []
    for kind in fit.day_kinds.kinds:
        design = design_day(fit, kind.name)
        computed: list[int] = []

        def answer_for(saves: int, design=design):
            day = pooled_day.model_copy(update={
                "saves": pooled_day.saves.model_copy(update={"count": saves}),
                "questions": pooled_day.questions.model_copy(update={"count": design.questions_count})})
            return advise.advise(day, target, max_conflict_rate=TARGET_CONFLICTS).edit.delay_s

        # the advice as it was (the busy hours' mean rate) and as it is (a future day's upper end)
        mean_saves = max(1, math.ceil(design.saves_per_busy_hour * hours))
        mean_s, advised_s = answer_for(mean_saves), answer_for(design.saves_count)
        measured = sorted({round(mean_s, 3), round(advised_s, 3), round(pooled.edit.delay_s, 3)})
        wanted = {d.isoformat() for d in design.dates}
        mine = {name: body for name, body in scenarios.items() if name[-10:] in wanted}

        def simulate(seeds: int, delays: list[float], mine=mine, kind=kind, computed=computed) -> pd.DataFrame:
            result = run_experiment(config_from_dict({
                "name": f"day-kinds-{kind.name}", "params": run_config, "scenarios": mine, "seeds": seeds,
                "sweep": {"edit.delay_s": delays}}), str(out / "results"), workers=workers, progress=False)
            computed.append(result.runs_computed)
            return load_results(result.directory, tables=["metrics"])["metrics"]

        # the grid, for the simulated safe delay: one seed a day (a kind of one day: 4 seeds)
        grid_runs = simulate(1 if len(mine) > 1 else 4, sorted({*EDIT_GRID_S, *measured}))
        grid_edits = _conflicts(grid_runs)
        safe = largest_delay_below(grid_edits["edit.delay_s"].to_numpy(float), grid_edits["value"].to_numpy(float),
                                   TARGET_CONFLICTS)
        # the delays measured with their intervals: every day of the kind under enough seeds
        seeds = math.ceil(advice_days / len(mine))
        measured_runs = simulate(seeds, measured)
        edits = _conflicts(measured_runs)
        grid = edits["edit.delay_s"].to_numpy(float)

        def at(delay: float, column: str = "value", edits: pd.DataFrame = edits, grid: np.ndarray = grid) -> float:
            match = edits[np.isclose(grid, round(delay, 3))]
            return float(match.iloc[0][column]) if len(match) else math.nan

        future = design.saves_busy_future
        row = {
            "kind": kind.name, "days": len(mine), "seeds": seeds,
            "unit": f"{len(mine)} days x {seeds} seeds" if len(mine) > 1 else f"its one day x {seeds} seeds",
            "simulated_days": int(edits["seeds"].min()), "busy_hours": design.hours_text(),
            "busy_rate": design.saves_per_busy_hour, "future_low": future.low if future else math.nan,
            "future_high": future.high if future else math.nan, "margin": design.margin,
            "mean_saves": mean_saves, "model_saves": design.saves_count, "day_saves": design.day_saves,
            "simulated_safe_s": safe,
            # no delay of the grid over the target: the safe delay is at least the longest simulated
            "safe_censored": not bool((grid_edits["value"] > TARGET_CONFLICTS).any()),
            "runs": len(set(grid_runs["run_id"]) | set(measured_runs["run_id"])), "computed": sum(computed),
        }
        for key, delay in (("at_mean", mean_s), ("at_advised", advised_s), ("at_pooled", pooled.edit.delay_s)):
            row[key.replace("at_", "") + "_s"] = delay
            row[key], row[f"{key}_low"], row[f"{key}_high"] = (at(delay, c) for c in ("value", "ci_low", "ci_high"))
        rows.append(row)
    return pd.DataFrame(rows)


def _conflicts(per_run: pd.DataFrame) -> pd.DataFrame:
    """The conflict rate (edits rejected) at each delay, with its 95% interval over the simulated
    days: one unit per day of the log under one seed (the same pair at every delay)."""
    from kbsim.stats.summary import summarize

    pairs = per_run["scenario"].astype(str) + "/" + per_run["seed"].astype(str)
    codes = {pair: i for i, pair in enumerate(sorted(pairs.unique()))}
    per_run = per_run.assign(seed=pairs.map(codes))
    summary = summarize(per_run.drop(columns=["scenario", "run_id"]), by=["edit.delay_s"])
    return summary[summary["metric"] == "rejection_rate"].sort_values("edit.delay_s")


def _pct(value: float | None) -> str:
    return "n/a" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{100 * value:.0f}%"


def _share(value: float) -> str:
    return "n/a" if math.isnan(value) else f"{100 * value:.1f}%"


def _interval(row: dict, key: str) -> str:
    low, high = row[f"{key}_low"], row[f"{key}_high"]
    if math.isnan(low) or math.isnan(high):
        return f"{_share(row[key])} [no interval]"
    return f"{_share(row[key])} [{_share(low)}, {_share(high)}]"


def _minutes(seconds: float) -> str:
    return "n/a" if math.isnan(seconds) else f"{seconds / 60:.2f} min"


def markdown(kinds: pd.DataFrame, none: pd.DataFrame, bursts: pd.DataFrame, args, seconds: float) -> str:
    """Steps 1 to 4's part of the section: from its start marker to step 5's."""
    out = [START, "", "## Kinds of day, bursts against unpublishing, and advice for the design day", "",
           f"Command: `python validation/fit_day_kinds.py --studies {args.studies} --workers {args.workers}`. "
           f"Date: {time.strftime('%Y-%m-%d')}. Machine: {platform.system()} {platform.machine()}, Python "
           f"{platform.python_version()}; {seconds:.0f} s. The script's docstring says how each log is made.", ""]
    out += ["### Kinds of day found", "",
            "| logs | arrivals | logs | kinds found (any) | exactly weekday, weekend and the release day |",
            "| --- | --- | ---: | ---: | ---: |"]
    for arrivals, group in kinds.groupby("arrivals", sort=False):
        out.append(f"| 14 days, weekends at 20%, a release day at 5x | {arrivals} | {len(group)} | "
                   f"{_pct(group['found'].mean())} | {_pct(group['exact'].mean())} |")
    out.append(f"| (all of them) | both | {len(kinds)} | {_pct(kinds['found'].mean())} | "
               f"{_pct(kinds['exact'].mean())} |")
    out += ["", "| logs without kinds | arrivals | logs | no kinds claimed | daily totals over-dispersed |",
            "| --- | --- | ---: | ---: | ---: |"]
    for (weekdays, arrivals), group in none.groupby(["weekdays_only", "arrivals"], sort=False):
        label = "10 weekdays" if weekdays else "14 days all alike"
        out.append(f"| {label} | {arrivals} | {len(group)} | {_pct(1 - group['found'].mean())} | "
                   f"{_pct(group['over_dispersed'].mean())} |")
    out.append(f"| (all of them) | both | {len(none)} | {_pct(1 - none['found'].mean())} | "
               f"{_pct(none['over_dispersed'].mean())} |")
    out += ["", "Target: kinds found in at least 95% of the logs with weekends; none claimed in at least 95% of "
            "those without. Sessions make daily totals over-dispersed with one kind of day; the rule claims a "
            "kind only where a weekend or a peak day explains the spread.", ""]
    coverage_columns = [c for c in kinds.columns if ":" in c or c.startswith("Zipf")]
    out += ["### Coverage of each kind's intervals", "",
            "On the logs whose kinds were found exactly. Mean day: the interval against the kind's true rate; a "
            "future day: against a fresh day of that kind from the same generator (what a prediction interval "
            "promises). Saves' mean day only on the logs without the unpublish rule (with it, the true rate is "
            "not the generator's parameter).", "",
            "| interval | logs | coverage |", "| --- | ---: | ---: |"]
    for column in coverage_columns:
        values = kinds[column].dropna().astype(bool) if column in kinds else pd.Series(dtype=bool)
        out.append(f"| {column} | {len(values)} | {_pct(values.mean() if len(values) else math.nan)} |")
    out += ["", "The peak kind has one day a log, so no interval of its own (`kbsim fit` says so); it is not in "
            "the table.", ""]
    out += ["### False bursts where unpublished articles stop getting saves", "",
            "Poisson saves (no bursts), with weekends; an article unpublished gets no more saves that day.", "",
            "| Zipf s | burst test | logs | called bursty | mean ratio to the shuffled days |",
            "| ---: | --- | ---: | ---: | ---: |"]
    for (s, method), group in bursts.groupby(["zipf_s", "method"], sort=False):
        out.append(f"| {s:g} | {method} | {len(group)} | {_pct(group['bursty'].mean())} | "
                   f"{group['ratio'].mean():.2f} |")
    now = bursts[bursts["method"].str.startswith("now")]["bursty"]
    poisson = pd.concat([now, kinds[kinds["arrivals"] == "Poisson saves"]["bursty"],
                         none[none["arrivals"] == "Poisson saves"]["bursty"]])
    out += ["", f"Every log without bursts here (these, and the Poisson logs of the two tables of kinds): "
            f"{int(poisson.sum())} of {len(poisson)} called bursty ({_share(float(poisson.mean()))}), "
            f"{int(now.sum())} of {len(now)} of those where unpublished articles stop getting saves. "
            "Target: at most 5%.", ""]
    return "\n".join(out) + "\n"


def _safe(row: dict) -> str:
    at_least = "at least " if row["safe_censored"] else ""
    return f"{at_least}{_minutes(row['simulated_safe_s'])}"


def _ratio(row: dict, key: str) -> str:
    if not row["simulated_safe_s"] > 0:
        return "n/a"
    return f"{'at most ' if row['safe_censored'] else ''}{row[key] / row['simulated_safe_s']:.2f}"


def _verdict(row: dict, key: str) -> str:
    if row[f"{key}_high"] <= TARGET_CONFLICTS:
        return "yes"
    return "point under, interval reaches over" if row[key] <= TARGET_CONFLICTS else "no"


def advice_markdown(advice: pd.DataFrame, args, seconds: float) -> str:
    """Step 5's part of the section: from its marker to the section's end marker."""
    which = "--only advice" if args.only else f"--studies {args.studies}"
    records = advice.to_dict("records")
    out = [ADVICE, "", "### The advice against simulation, kind by kind", "",
           f"Command: `python validation/fit_day_kinds.py {which}"
           f" --advice-days {args.advice_days} --workers {args.workers}` (this part: step 5 of the script). "
           f"Date: {time.strftime('%Y-%m-%d')}; {seconds:.0f} s, {int(advice['computed'].sum())} runs computed, the "
           "rest reused from `--runs`.", "",
           "One 14-day log (weekends at 20%, a release day at 5x, office hours 08:00 to 18:00 with a morning peak, "
           "Zipf 0.9, Poisson saves, unpublished articles getting no more saves that day), fitted and replayed day "
           "by day. For each kind, the analytic model's safe edit delay for `--design-day KIND`, which runs the "
           "kind's busy hours all day: **before**, at the busy hours' mean save rate over the kind's days; **now** "
           "(what `kbsim advise` answers), at the upper end of that rate's 95% interval for a future day of the "
           "kind (`kbsim.fit.design_day`: the prediction interval over the kind's days, each day's busy-hours "
           "rate one value; a kind of one day has none, so no margin); and the pooled mean day's. Each delay is "
           "simulated on the kind's days (25% of answers edited): the conflict rate there with its 95% interval "
           f"over the simulated days, each day of the kind's replayed under enough seeds for at least "
           f"{args.advice_days} (a day of the log under one seed is one simulated day, the unit; the seeds change "
           "the agent's choices and the text people write, the replayed saves and questions stay the log's, so the "
           "interval is for these days of the log). The simulated safe delay is the longest delay of a grid "
           f"({', '.join(f'{d:g}' for d in EDIT_GRID_S)} s and the delays above, one seed a day, a kind of one day "
           "4) whose conflict rate stays under 5%.", "",
           "| kind | simulated days | busy hours | their saves/h: mean [a future day] | model's day (saves): "
           "before, now | before: delay, conflicts | now: delay, conflicts | pooled: delay, conflicts | "
           "simulated safe delay | now within 5% by its interval |",
           "| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
    for row in records:
        future = ("no interval (one day)" if math.isnan(row["future_high"]) else
                  f"{row['future_low']:.1f}, {row['future_high']:.1f}")
        out.append(f"| {row['kind']} | {row['simulated_days']} ({row['unit']}) | {row['busy_hours']} | "
                   f"{row['busy_rate']:.1f} [{future}] | {row['mean_saves']:,}, {row['model_saves']:,} (the day: "
                   f"{row['day_saves']:,.0f}) | {_minutes(row['mean_s'])}: {_interval(row, 'at_mean')} | "
                   f"{_minutes(row['advised_s'])}: {_interval(row, 'at_advised')} | {_minutes(row['pooled_s'])}: "
                   f"{_interval(row, 'at_pooled')} | {_safe(row)} | "
                   f"{_verdict(row, 'at_advised')} |")
    out += ["", "Verdict, kind by kind (target: the conflict rate at the advised delay under 5% by its interval):", ""]
    for row in records:
        before, now = _verdict(row, "at_mean"), _verdict(row, "at_advised")
        line = (f"- **{row['kind']}** ({row['simulated_days']} simulated days): before "
                f"{_interval(row, 'at_mean')} at {_minutes(row['mean_s'])} ({before}); now "
                f"{_interval(row, 'at_advised')} at {_minutes(row['advised_s'])} ({now}).")
        if not row["margin"]:
            line += (" The kind has one day in the log, so no future-day interval and no margin: the advice is for "
                     "that day's busy hours as the log shows them, and a busier day of the kind is not allowed for.")
        if now != "yes":
            line += " The target is not met by its interval."
        out.append(line)
    out += ["", f"{int(advice['runs'].sum())} simulated days in all (each unit at each delay). The advised delay's "
            "ratio to the simulated safe delay (below 1: shorter, safer, than it need be), before and now: "
            + "; ".join(f"{r['kind']} {_ratio(r, 'mean_s')}, {_ratio(r, 'advised_s')}" for r in records)
            + (" (at most: the grid never went over 5%, so the safe delay is at least its longest delay)"
               if any(r["safe_censored"] for r in records) else "") + ".", ""]
    closest = {key: max(records, key=lambda r, key=key: r[f"{key}_high"]) for key in ("at_mean", "at_advised")}
    out += ["Why the margin: these intervals are for the log's own days, the days the advice was fitted to, while "
            "the advice is for a future day of the kind, whose busy hours vary as the log's days do; the "
            "future-day interval states that, the mean does not. Closest to the target before: "
            f"{closest['at_mean']['kind']}, upper end {100 * closest['at_mean']['at_mean_high']:.2f}%; now: "
            f"{closest['at_advised']['kind']}, upper end {100 * closest['at_advised']['at_advised_high']:.2f}%.",
            "", END]
    return "\n".join(out) + "\n"


def has_advice_part(text: str) -> bool:
    """Whether a page's text has step 5's part of the section (its marker, then the end marker)."""
    return ADVICE in text and END in text.split(ADVICE, 1)[1]


def write_section(path: Path, section: str, only_advice: bool = False) -> None:
    """Put ``section`` between its markers in ``path`` (appended when they are not there).

    With ``only_advice``, ``section`` is step 5's part (:func:`advice_markdown`) and replaces the
    page's, from its marker to the section's end marker (the page must have it:
    :func:`has_advice_part`).
    """
    from kbsim.files import atomic_write_text

    text = path.read_text(encoding="utf-8") if path.exists() else ""
    if only_advice:
        head, rest = text.split(ADVICE, 1)
        tail = rest.split(END, 1)[1].lstrip("\n")
        atomic_write_text(path, head + section + (("\n" + tail) if tail else ""))
        return
    if START in text and END in text:
        head, rest = text.split(START, 1)
        tail = rest.split(END, 1)[1].lstrip("\n")
        text = head + section + (("\n" + tail) if tail else "")
    else:
        text = text.rstrip("\n") + "\n\n" + section
    atomic_write_text(path, text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--studies", type=int, default=100, help="logs per cell (100)")
    parser.add_argument("--workers", type=int, default=2, help="processes (2)")
    parser.add_argument("--out", default=str(Path(__file__).with_name("FIT.md")), help="the page (FIT.md)")
    parser.add_argument("--runs", default=str(ROOT / "results" / "day-kinds"), help="where simulated runs go")
    parser.add_argument("--only", choices=["advice"], default=None,
                        help="advice: step 5 alone, rewriting its part of the section (steps 1 to 4's stay)")
    parser.add_argument("--advice-days", type=int, default=ADVICE_DAYS,
                        help=f"step 5: simulated days per kind, at least ({ADVICE_DAYS})")
    args = parser.parse_args(argv)
    if args.advice_days < 2:
        parser.error(f"--advice-days: expected at least 2 simulated days (an interval needs two), "
                     f"got {args.advice_days}")
    page = Path(args.out)
    if args.only and not has_advice_part(page.read_text(encoding="utf-8") if page.exists() else ""):
        parser.error(f"--only advice: {page} has no step 5 part to rewrite (no {ADVICE.split(' (')[0]} marker "
                     "before the section's end); run the whole script once")
    started = time.perf_counter()
    n = args.studies
    head = ""
    if args.only is None:
        with ProcessPoolExecutor(max_workers=args.workers) as pool:
            kinds = pd.DataFrame(pool.map(kinds_study, [(a, i) for a in ARRIVALS for i in range(n)], chunksize=4))
            none = pd.DataFrame(pool.map(none_study, [(a, i, w) for w in (False, True) for a in ARRIVALS
                                                      for i in range(n)], chunksize=4))
            bursts = pd.DataFrame(pool.map(burst_study, [(s, i, b) for s in (1.2, 1.4) for b in (False, True)
                                                         for i in range(n // 2)], chunksize=4))
        head = markdown(kinds, none, bursts, args, time.perf_counter() - started)
    advice_started = time.perf_counter()
    advice = advice_study(Path(args.runs), args.workers, args.advice_days)
    section = head + advice_markdown(advice, args, time.perf_counter() - advice_started)
    write_section(page, section, only_advice=args.only == "advice")
    print(section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
