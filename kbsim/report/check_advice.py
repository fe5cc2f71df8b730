"""The README's answer to "What should my agent do?", written from results by ``kbsim figures``.

Two blocks of README.md: what the check-policy sweep says of the strategies' costs
(``experiments/check_policy.yaml``), and what ``kbsim advise`` answers for the
reference day, with its ``--verify`` simulation (the same runs ``kbsim advise
--max-latency 15min --verify`` keeps under ``results/advise-<hash>/``). Every number in
them comes from those results or from :func:`kbsim.model.advise.advise`, so none of it
can go stale.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from kbsim.model import advise as model_advise
from kbsim.params import DayParams
from kbsim.report.experiments import Experiment
from kbsim.sim.strategies import strategy_named
from kbsim.sim.strategies.poll import STRATEGY as POLL
from kbsim.sim.strategies.reread import STRATEGY as REREAD
from kbsim.sim.strategies.subscribe import STRATEGY as SUBSCRIBE
from kbsim.sim.strategies.title import STRATEGY as TITLE
from kbsim.units import format_bytes, format_duration

#: The experiment of the check-policy paragraph.
EXPERIMENT = "check_policy"
#: The question the README asks ``kbsim advise`` for the reference day: a mean detection latency
#: of at most 15 minutes (``kbsim advise --max-latency 15min``), the README's example.
REFERENCE_TARGET = model_advise.Target("detection_latency_s", 900.0)
#: Seeds of the ``--verify`` simulation (the command's default).
VERIFY_SEEDS = 20
#: The check intervals whose re-read-to-poll cost ratio the paragraph states (shortest, the
#: advised half hour, the whole day).
RATIO_INTERVALS_S = (60.0, 1800.0, 28800.0)

CHECK_POLICY_BLOCK = "check-policy"
ADVICE_BLOCK = "advice"


def reference_advice() -> model_advise.Advice:
    """What ``kbsim advise --max-latency 15min`` answers: the reference day (every flag at its
    default) and :data:`REFERENCE_TARGET`."""
    day = DayParams()
    params = model_advise.day_params(
        articles=day.corpus.articles,
        saves_per_day=day.saves.count,
        questions_per_day=day.questions.count,
        zipf=day.zipf_s,
        day_hours=day.day_hours,
        citations_per_answer=day.questions.citations_per_answer,
    )
    return model_advise.advise(params, REFERENCE_TARGET)


def verify_reference_advice(
    answer: model_advise.Advice,
    results_dir: str | Path,
    *,
    workers: int | None = None,
    progress: bool = True,
    log: Callable[[str], None] | None = None,
) -> pd.DataFrame:
    """``kbsim advise --verify`` for ``answer``: its days simulated (or reused) under
    ``results_dir`` and set beside the model (:func:`kbsim.model.advise.compare`)."""
    from kbsim.runner.load import config_from_dict
    from kbsim.runner.run import run_experiment

    config = config_from_dict(model_advise.verify_config(answer, VERIFY_SEEDS))
    result = run_experiment(config, results_dir, workers=workers, progress=progress, log=log)
    if not result.ok:
        raise RuntimeError(f"{config.name}: {len(result.failures)} runs failed; see {result.directory}/errors")
    frame = model_advise.compare(answer, result.summary)
    frame.attrs["seeds"] = len(config.seeds)
    return frame


def _times(value: float) -> str:
    return "twice" if round(value, 1) == 2.0 else f"{value:.2g} times"


def pareto_points(summary: pd.DataFrame) -> pd.DataFrame:
    """The (save volume, check interval, strategy) points of a check-policy summary (one
    scenario) that are Pareto-optimal in calls per hour against mean detection latency or
    against stale exposure, at their save volume: the ringed points of ``check_frontier``."""
    wide = summary[summary["metric"].isin(["calls_per_hour", "detection_latency_s", "stale_exposure"])].pivot_table(
        index=["saves.count", "checks.interval_s", "strategy"], columns="metric", values="value"
    ).reset_index()
    best = np.zeros(len(wide), dtype=bool)
    for _, group in wide.groupby("saves.count"):
        for measure in ("detection_latency_s", "stale_exposure"):
            best[group.index] |= model_advise.pareto_optimal(group["calls_per_hour"], group[measure])
    return wide[best].reset_index(drop=True)


def _pareto_sentence(best: pd.DataFrame, saves: list[int]) -> str:
    """Which strategies own the Pareto-optimal points: the poll alone, or the poll but for
    the intervals where another strategy is cheaper."""
    others = best[best["strategy"] != POLL.name]
    if others.empty:
        return "polling the event log is the cheapest way to any detection latency or stale exposure: every " \
               "Pareto-optimal point is a poll."
    parts = []
    for name, rows in others.groupby("strategy", sort=False):
        by_volume = {int(v): tuple(sorted(r["checks.interval_s"])) for v, r in rows.groupby("saves.count")}
        every = lambda intervals: ", ".join(format_duration(i, "page") for i in intervals)  # noqa: E731
        if len(set(by_volume.values())) == 1 and len(by_volume) == len(saves):
            where = f"every {every(next(iter(by_volume.values())))} at {'both' if len(saves) == 2 else 'all'} " \
                    "save volumes"
        else:
            where = " and ".join(f"every {every(i)} at {v:,} saves a day" for v, i in by_volume.items())
        parts.append(f"checking {where}, where {strategy_named(name).label} is cheaper")
    return ("polling the event log is the cheapest way to almost any detection latency or stale exposure: "
            f"every Pareto-optimal point is a poll but those of {'; and '.join(parts)}.")


def check_policy_paragraph(experiment: Experiment) -> list[str]:
    """What the sweep of check intervals says: which strategy is cheapest for each detection
    latency (the Pareto-optimal points), what subscribing costs against polling, that
    re-reading costs a ratio more for the same detections, and that the title check misses
    content-only changes."""
    summary = experiment.summary
    summary = summary[summary["scenario"] == "zipf"]
    calls = summary[summary["metric"] == "calls_per_hour"].pivot_table(
        index=["saves.count", "checks.interval_s"], columns="strategy", values="value"
    )
    saves = sorted(int(s) for s in calls.index.get_level_values(0).unique())
    low, high = saves[0], saves[-1]
    intervals = sorted(calls.index.get_level_values(1).unique())

    def at(strategy: str, count: int) -> list[float]:
        ratio = calls[strategy] / calls[POLL.name]
        return [float(ratio.loc[(count, interval)]) for interval in RATIO_INTERVALS_S]

    shown = [format_duration(s, "page") for s in RATIO_INTERVALS_S]
    first, middle, last = at(REREAD.name, low)
    others = ", ".join(f"{r:.2g}" for r in at(REREAD.name, high))
    title = summary[(summary["metric"] == "detected_share") & (summary["strategy"] == TITLE.name)]
    missed = {count: 1.0 - float(title[title["saves.count"] == count]["value"].mean()) for count in saves}
    subscribing = ""
    if SUBSCRIBE.name in calls.columns:
        a, b, c = at(SUBSCRIBE.name, low)
        theirs = ", ".join(f"{r:.2g}" for r in at(SUBSCRIBE.name, high))
        subscribing = (
            " Subscribing to each cited article (MCP's `resources/subscribe`: a subscription and a read when an "
            "article is first cited, then a read of each one the server says has changed) detects the same "
            f"citations for {_times(a)} the poll's calls checking every {shown[0]}, {_times(b)} every {shown[1]}, "
            f"{_times(c)} every {shown[2]} ({low:,} saves a day; {theirs} times at {high:,}): it pays for every "
            "article cited, the poll for every save and for a page at every check, even an empty one."
        )
    return [
        "Checking more often finds a stale citation sooner and costs more. Across check intervals from "
        f"{format_duration(intervals[0], 'page')} to {format_duration(intervals[-1], 'page')} "
        f"(`experiments/{experiment.name}.yaml`, {experiment.seeds} seeds per point), "
        + _pareto_sentence(pareto_points(summary), saves) + subscribing
        + " Re-reading every cited article detects exactly the same citations for more "
        f"calls: {_times(first)} as many checking every {shown[0]}, {_times(middle)} every {shown[1]}, "
        f"{_times(last)} every {shown[2]} ({low:,} saves a day; {others} times at {high:,}, where polling "
        "pays for more events). The title lookup costs as much as re-reading and never sees a change of "
        f"content alone: it misses {100 * missed[low]:.0f}% of stale citations ({100 * missed[high]:.0f}% "
        f"at {high:,} saves a day). `kbsim advise` answers for your own day from the analytic model, at once:",
    ]


def _simulated(frame: pd.DataFrame, strategy: str, metric: str) -> str:
    rows = frame[(frame["strategy"] == strategy) & (frame["metric"] == metric)]
    if rows.empty or math.isnan(rows.iloc[0]["simulated"]):
        return "n/a"
    row = rows.iloc[0]
    show = model_advise.show_value
    value = show(metric, row["simulated"])
    if math.isnan(row["ci_low"]):
        return value
    return f"{value} [{show(metric, row['ci_low'])}, {show(metric, row['ci_high'])}]"


def advice_paragraph(answer: model_advise.Advice, verified: pd.DataFrame | None) -> list[str]:
    """What ``kbsim advise`` says for the reference day and, when ``verified`` is given, what
    its ``--verify`` simulation found."""
    p, c, t, e = answer.params, answer.choice, answer.title, answer.edit
    limit = format_duration(answer.target.limit, "page").replace(" min", "-minute")
    text = (
        f"For the reference day ({p.corpus.articles:,} articles, {p.saves.count:,} saves and "
        f"{p.questions.count:,} questions in {p.day_hours:g} hours, Zipf {p.zipf_s:g}) and a {limit} mean "
        f"detection latency it says: **{c.describe()}** ({c.calls_per_hour:.3g} calls and "
        f"{format_bytes(c.bytes_per_hour)} an hour; mean latency {format_duration(c.detection_latency_s)}, "
        f"p90 {format_duration(c.detection_latency_p90_s)}, {100 * c.stale_exposure:.1f}% of citation-time "
        "stale and unflagged)"
    )
    if answer.runner_up is not None:
        r = answer.runner_up
        text += f"; the runner-up is {r.describe()} ({r.calls_per_hour:.3g} calls an hour)"
    if t is not None:  # the day has a blind (title) check
        text += f"; a title check would miss {100 * (1 - t.detected_share):.0f}% of the stale citations"
    text += (
        "; and an "
        f"edit should follow its read within **{format_duration(e.delay_s)}** to keep version conflicts "
        f"under {100 * e.max_conflict_rate:g}%."
    )
    if verified is not None:
        scored = verified[verified["agrees"].notna()]
        agree = int(scored["agrees"].astype(bool).sum())
        verdict = (
            f"agreed on all {len(scored)} numbers" if agree == len(scored)
            else f"agreed on {agree} of {len(scored)} numbers"
        )
        conflicts = verified[verified["metric"] == "rejection_rate"]
        text += (
            f" `--verify` simulated it ({verified.attrs.get('seeds', VERIFY_SEEDS)} seeds) and {verdict}: "
            f"latency {_simulated(verified, c.strategy, 'detection_latency_s')}, "
            f"p90 {_simulated(verified, c.strategy, 'detection_latency_p90_s')}, "
            f"exposure {_simulated(verified, c.strategy, 'stale_exposure')}, "
            f"{_simulated(verified, c.strategy, 'calls_per_hour').replace('/h', '')} "
            f"{c.strategy} calls an hour"
        )
        if not conflicts.empty:
            text += f", conflicts after {format_duration(e.delay_s)} {_simulated(conflicts, '', 'rejection_rate')}"
        text += "."
    text += (
        " How long an edit may wait at other save volumes: "
        "[figures/safe_edit_delay.png](figures/safe_edit_delay.png); the walk-through: "
        "`notebooks/05_check_policy.ipynb`."
    )
    return [text]


def advice_blocks(
    exps: Mapping[str, Experiment], answer: model_advise.Advice, verified: pd.DataFrame | None
) -> dict[str, list[str]]:
    """The README blocks this module writes, by name (:func:`kbsim.report.pages.update_readme_blocks`)."""
    blocks = {ADVICE_BLOCK: advice_paragraph(answer, verified)}
    if EXPERIMENT in exps:
        blocks[CHECK_POLICY_BLOCK] = check_policy_paragraph(exps[EXPERIMENT])
    return blocks
