"""The simulation against the analytic model, as tables the notebooks show.

Each function puts a simulated summary (value and 95% interval over seeds) beside
the prediction of :mod:`kbsim.model.analytic` and says whether the prediction lies
inside the interval.
"""

from __future__ import annotations

import pandas as pd

from kbsim.model import analytic
from kbsim.report import experiments as _experiments
from kbsim.report import frames
from kbsim.report.experiments import (
    ANNOTATIONS,
    Experiment,
    match,
    staleness_days,
    sweep_frame,
    sweep_points,
)
from kbsim.stats.summary import ContrastSpec, MetricSelector, contrasts
from kbsim.units import format_duration


def staleness_model_check(exps: dict[str, Experiment]) -> pd.DataFrame:
    """Simulated stale shares by hour (with CI) beside the analytic model, with and
    without unpublished articles leaving the day, for the Zipf and control days."""
    rows = []
    for role, (keys, params, experiment) in staleness_days(
        [exps["reference"], exps["control"]]
    ).items():
        observed = frames.staleness_by_hour(match(experiment.summary, keys))
        models = {
            "model": analytic.predict_staleness(params).set_index("hour"),
            "model_no_unpublish": analytic.predict_staleness(params, unpublish=False).set_index(
                "hour"
            ),
        }
        for _, row in observed.iterrows():
            column = "stale_citation_share" if row["kind"] == "citations" else "stale_answer_share"
            rows.append(
                {
                    "day": role,
                    "kind": row["kind"],
                    "hour": row["hour"],
                    "simulated": row["share"],
                    "ci_low": row["ci_low"],
                    "ci_high": row["ci_high"],
                    **{name: frame.loc[row["hour"], column] for name, frame in models.items()},
                }
            )
    frame = pd.DataFrame(rows)
    frame["model_inside_ci"] = frames.inside_ci(frame, frame["model"])
    return frame


def edit_model_check(exps: dict[str, Experiment]) -> pd.DataFrame:
    """Simulated rejection, gone and retry-success rates per delay beside the model (Zipf days)."""
    experiment, key = exps["edit_delay_sweep"], "edit.delay_s"
    summary = experiment.summary[
        experiment.summary["edits"].astype(bool) & (experiment.summary["save_popularity"] == "zipf")
    ]
    params = experiment.points[experiment.points["edits"]].iloc[0]["params"]
    delays = sorted(summary[key].unique())
    model = analytic.predict_edit_outcomes(params, delays).set_index("delay_s")
    rows = []
    for metric in ("rejection_rate", "gone_rate", "retry_success"):
        for delay in delays:
            hit = summary[(summary[key] == delay) & (summary["metric"] == metric)]
            if not len(hit) or hit["value"].isna().all():  # e.g. no retries at this delay
                continue
            value, low, high = hit[["value", "ci_low", "ci_high"]].iloc[0]
            rows.append(
                {
                    "metric": metric,
                    "delay": format_duration(delay, "page"),
                    "delay_s": delay,
                    "simulated": value,
                    "ci_low": low,
                    "ci_high": high,
                    "model": model.loc[delay, metric],
                }
            )
    frame = pd.DataFrame(rows)
    frame["model_inside_ci"] = frames.inside_ci(frame, frame["model"])
    return frame


#: The ablation study's blind-overwrite scenarios (one agent, no loss): name -> what to call it.
BLIND_SCENARIOS = {"no_compare_and_swap": "per-call approval", "session_blind": "session permission"}


def lost_update_model_check(exps: dict[str, Experiment]) -> pd.DataFrame:
    """Simulated lost updates of the ablation study's blind overwrites (one agent, a perfect
    wire) beside :func:`kbsim.model.analytic.predict_lost_updates`, one row per edit delay."""
    experiment = exps["ablation"]
    at = {"transport.loss_rate": 0.0, "agents.count": 1}
    summary = experiment.summary[MetricSelector("lost_update_share").mask(experiment.summary)]
    rows = []
    for scenario, approval in BLIND_SCENARIOS.items():
        points = match(experiment.points, {"scenario": scenario, **at})
        hit = match(summary, {"scenario": scenario, **at})
        if points.empty or hit.empty:
            continue
        params = points.iloc[0]["params"]
        delay = params.edit.delay_s
        model = analytic.predict_lost_updates(params, [delay]).iloc[0]
        value, low, high = hit[["value", "ci_low", "ci_high"]].iloc[0]
        rows.append(
            {
                "scenario": scenario,
                "approval": approval,
                "delay": format_duration(delay, "page"),
                "delay_s": delay,
                "simulated": value,
                "ci_low": low,
                "ci_high": high,
                "model": model["lost_update_share"],
                "conflict_rate_model": model["conflict_rate"],
            }
        )
    frame = pd.DataFrame(rows)
    if len(frame):
        frame["model_inside_ci"] = frames.inside_ci(frame, frame["model"])
    return frame


def check_cost_model_check(exps: dict[str, Experiment]) -> pd.DataFrame:
    """Simulated calls per check of the exact strategies (re-read and poll) per save volume
    beside the model."""
    experiment, key = exps["save_volume_sweep"], "saves.count"
    summary = sweep_frame(experiment, key)
    rows = []
    for _, point in sweep_points(experiment, key).iterrows():
        model = analytic.predict_check_cost(point["params"])
        for strategy in (s.name for s in experiment.strategies if s.exact and f"{s.name}_calls" in model):
            mine = summary[MetricSelector("calls_per_check", strategy=strategy).mask(summary)]
            hit = mine[mine[key] == point[key]]
            value, low, high = hit[["value", "ci_low", "ci_high"]].iloc[0]
            rows.append(
                {
                    "saves_per_day": point[key],
                    "strategy": strategy,
                    "simulated": value,
                    "ci_low": low,
                    "ci_high": high,
                    "model": model[f"{strategy}_calls"],
                }
            )
    frame = pd.DataFrame(rows)
    frame["model_inside_ci"] = frames.inside_ci(frame, frame["model"])
    return frame


def agent_edit_effect(exps: dict[str, Experiment], experiment: str = "reference") -> pd.DataFrame:
    """End-of-day citation staleness on the days with agent edits beside the same days without.

    The reference study runs every seed of each scenario (Zipf saves and the uniform control)
    once without agent edits and once per edit delay, so both kinds of day exist and share
    their random streams: the agent's own edits are saves too, and each row says how much
    staler they leave its citations, paired seed by seed (:func:`kbsim.stats.contrasts`),
    beside the analytic model's end-of-day share with and without the edits.

    Returns one row per scenario and edit delay: ``scenario``, ``saves`` (``zipf`` or
    ``control``), ``delay`` and ``delay_s``, ``edited_share`` (the answers followed by an
    edit), ``without_edits`` and ``with_edits`` (simulated, with ``with_low``/``with_high``),
    ``difference`` with its paired ``difference_low``/``difference_high``, ``seeds``, and
    ``model_without``/``model_with``.
    """
    exp = exps[experiment]
    key = "edit.delay_s"
    if key not in exp.swept:
        raise KeyError(f"experiment {exp.name!r} does not sweep {key!r} (sweeps {exp.swept})")
    if exp.points["edits"].astype(bool).all() or not exp.points["edits"].astype(bool).any():
        raise ValueError(f"experiment {exp.name!r} needs days both with and without agent edits")
    selector = MetricSelector("stale_citation_share")
    keys = ["scenario", *exp.swept]
    per_run = exp.per_run.drop(columns=[c for c in ANNOTATIONS if c in exp.per_run])
    paired = contrasts(per_run, [ContrastSpec(selector, baseline={key: None})], keys)
    summary = exp.summary[selector.mask(exp.summary)]
    rows = []
    for _, point in exp.points[exp.points["edits"].astype(bool)].iterrows():
        at = {"scenario": point["scenario"], **{k: point[k] for k in exp.swept}}
        quiet = {**at, key: None}
        quiet_point = match(exp.points, quiet).iloc[0]
        mine, theirs, diff = match(summary, at), match(summary, quiet), match(paired, at)
        params = point["params"]
        rows.append(
            {
                "scenario": point["scenario"],
                "saves": _experiments.role(point["save_popularity"]),
                "delay": format_duration(params.edit.delay_s, "page"),
                "delay_s": params.edit.delay_s,
                "edited_share": params.edit.share,
                "without_edits": theirs["value"].iloc[0],
                "with_edits": mine["value"].iloc[0],
                "with_low": mine["ci_low"].iloc[0],
                "with_high": mine["ci_high"].iloc[0],
                "difference": diff["value"].iloc[0],
                "difference_low": diff["ci_low"].iloc[0],
                "difference_high": diff["ci_high"].iloc[0],
                "seeds": int(diff["seeds"].iloc[0]),
                "model_without": analytic.predict_end_staleness(quiet_point["params"])["stale_citation_share"],
                "model_with": analytic.predict_end_staleness(params)["stale_citation_share"],
            }
        )
    return pd.DataFrame(rows).sort_values(["saves", "delay_s"], ascending=[False, True], ignore_index=True)


def check_policy_model_check(exps: dict[str, Experiment]) -> pd.DataFrame:
    """Simulated detection, exposure and cost per hour of each strategy at each check
    interval and save volume (Zipf and control days) beside :func:`kbsim.model.analytic.predict_check_policy`:
    each strategy's ``model_checked`` metrics, the day's last strategy first (the order the
    page has always listed them). Re-read's detection is poll's (both exact), so it is listed once."""
    experiment = exps["check_policy"]
    key, volume = "checks.interval_s", "saves.count"
    summary = experiment.summary
    rows = []
    for _, point in experiment.points[~experiment.points["edits"].astype(bool)].iterrows():
        mine = summary[(summary["scenario"] == point["scenario"]) & (summary[volume] == point[volume])]
        mine = mine[mine[key] == point[key]]
        model = analytic.predict_check_policy(point["params"]).set_index("strategy")
        for strategy, metrics in ((s.name, s.model_checked) for s in reversed(experiment.strategies) if s.model):
            for metric in metrics:
                hit = mine[MetricSelector(metric, strategy=strategy).mask(mine)]
                if hit.empty:
                    continue
                value, low, high = hit[["value", "ci_low", "ci_high"]].iloc[0]
                rows.append(
                    {
                        "day": point["save_popularity"],
                        "saves_per_day": point[volume],
                        "interval": format_duration(point[key], "page"),
                        "interval_s": point[key],
                        "strategy": strategy,
                        "metric": metric,
                        "simulated": value,
                        "ci_low": low,
                        "ci_high": high,
                        "model": model.loc[strategy, metric],
                    }
                )
    frame = pd.DataFrame(rows)
    frame["model_inside_ci"] = frames.inside_ci(frame, frame["model"])
    return frame
