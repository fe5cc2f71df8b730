"""The simulation against the analytic model, as tables the notebooks show.

Each function puts a simulated summary (value and 95% interval over seeds) beside
the prediction of :mod:`kbsim.model.analytic` and says whether the prediction lies
inside the interval.
"""

from __future__ import annotations

import pandas as pd

from kbsim.model import analytic
from kbsim.report import frames
from kbsim.report.experiments import Experiment, match, staleness_days, sweep_frame, sweep_points
from kbsim.sim.strategies import strategy_names
from kbsim.stats.summary import MetricSelector
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
        for strategy in strategy_names(exact=True):
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


def agent_edit_effect(exps: dict[str, Experiment], key: str = "zipf_s") -> pd.DataFrame:
    """Analytic end-of-day staleness along the Zipf sweep, Zipf and control saves, with and
    without the agent's own edits: how much of the sweep's staleness the agent causes itself."""
    rows = []
    for _, point in exps["zipf_sweep"].points.iterrows():
        params = point["params"]
        for label, day in (
            ("with agent edits", params),
            (
                "without agent edits",
                params.model_copy(
                    update={"edit": params.edit.model_copy(update={"delay_s": None})}
                ),
            ),
        ):
            end = analytic.predict_end_staleness(day)
            rows.append(
                {
                    key: point[key],
                    "saves": point["save_popularity"],
                    "agent": label,
                    "stale_citations": end["stale_citation_share"],
                }
            )
    frame = pd.DataFrame(rows).drop_duplicates([key, "saves", "agent"])
    return frame.pivot_table(index=key, columns=["saves", "agent"], values="stale_citations")


#: What :func:`check_policy_model_check` compares, per strategy.
CHECK_POLICY_METRICS = {
    "poll": ("detection_latency_s", "detection_latency_p90_s", "stale_exposure", "calls_per_hour", "bytes_per_hour"),
    "reread": ("calls_per_hour", "bytes_per_hour"),
    "title": ("detected_share", "detection_latency_s", "stale_exposure", "calls_per_hour"),
}


def check_policy_model_check(exps: dict[str, Experiment]) -> pd.DataFrame:
    """Simulated detection, exposure and cost per hour of each strategy at each check
    interval and save volume (Zipf and control days) beside :func:`kbsim.model.analytic.predict_check_policy`.
    Re-read's detection is poll's (both exact), so it is listed once."""
    experiment = exps["check_policy"]
    key, volume = "checks.interval_s", "saves.count"
    summary = experiment.summary
    rows = []
    for _, point in experiment.points[~experiment.points["edits"].astype(bool)].iterrows():
        mine = summary[(summary["scenario"] == point["scenario"]) & (summary[volume] == point[volume])]
        mine = mine[mine[key] == point[key]]
        model = analytic.predict_check_policy(point["params"]).set_index("strategy")
        for strategy, metrics in CHECK_POLICY_METRICS.items():
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
