"""The study's figures: which experiment feeds which figure, and how each is drawn.

Each ``figure_*`` function takes loaded experiments (:mod:`kbsim.report.experiments`),
selects summary rows, adds the analytic model's predictions (:mod:`kbsim.model.analytic`)
and hands both to :mod:`kbsim.report.plots`, the only module that draws. The
registry :data:`FIGURES` says which experiments each figure reads.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from kbsim.model import analytic
from kbsim.params import DayParams
from kbsim.report import frames
from kbsim.report.experiments import (
    ANNOTATIONS,
    ROLE_LABELS,
    Experiment,
    match,
    prefer_quiet,
    staleness_days,
    sweep_frame,
    sweep_points,
)
from kbsim.sim.strategies import Strategy
from kbsim.sim.strategies.poll import STRATEGY as POLL
from kbsim.sim.strategies.reread import STRATEGY as REREAD
from kbsim.stats.summary import MetricSelector
from kbsim.units import format_duration

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def _edits_note(params: DayParams) -> str:
    if not params.edit.enabled:
        return "Days without agent edits."
    assert params.edit.delay_s is not None  # a day with edits has a delay
    return (
        f"These days include the edit experiment ({params.edit.share:.0%} of answers edited after "
        f"{format_duration(params.edit.delay_s, 'page')}); the model includes the agent's edits."
    )


def figure_staleness_over_day(exps: dict[str, Experiment]):
    """Staleness over the day, Zipf against control, with the model's curves (``reference`` and ``control``)."""
    from kbsim.report import plots

    days = staleness_days([exps["reference"], exps["control"]])
    observed, models, labels, used = [], {}, {}, []
    for name in ("zipf", "control"):
        if name not in days:
            continue
        keys, params, experiment = days[name]
        rows = frames.staleness_by_hour(match(experiment.summary, keys))
        rows["role"] = name
        observed.append(rows)
        models[name] = analytic.predict_staleness(params)
        labels[name] = ROLE_LABELS[name].format(s=params.zipf_s)
        used.append(experiment)
    caption = used[0].caption(
        "staleness_over_day",
        _edits_note(days["zipf"][1])
        + " Dashed: Poisson/Zipf freshness model."
        + (
            ""
            if len(used) < 2 or used[1] is used[0]
            else f" Control from experiments/{used[1].name}.yaml."
        ),
    )
    return plots.staleness_over_day(pd.concat(observed), models, caption, "role", labels)


def _age_frames(exps: dict[str, Experiment]):
    """The Kaplan-Meier shares stale by age of the Zipf day and the control (no agent edits):
    the frame, the lines' labels, the experiments used and the days."""
    from kbsim.stats.survival import survival_by

    days = staleness_days([exps["reference"], exps["control"]])
    frames, labels, used = [], {}, []
    for name in ("zipf", "control"):
        if name not in days:
            continue
        keys, params, experiment = days[name]
        citations = match(experiment.tables["citations"], keys)
        ages = np.linspace(0.0, params.day_s, 49)[1:]
        frame = survival_by(citations.assign(role=name), ["role"], ages, params.day_s)
        frames.append(frame)
        labels[name] = ROLE_LABELS[name].format(s=params.zipf_s)
        used.append(experiment)
    return pd.concat(frames), labels, used, days


def figure_staleness_by_age(exps: dict[str, Experiment]):
    """How soon a citation goes stale (Kaplan-Meier by age), Zipf against control."""
    from kbsim.report import plots

    frame, labels, used, days = _age_frames(exps)
    caption = used[0].caption(
        "staleness_by_age",
        _edits_note(days["zipf"][1])
        + " Steps: the Kaplan-Meier estimate at each age of the grid (every "
        + format_duration(days["zipf"][1].day_s / 48, "page")
        + "). Censored at the end of the day: few citations are followed to old ages, so the bands widen.",
    )
    return plots.staleness_by_age(frame, caption, "role", labels, days["zipf"][1].day_hours)


def _end_model(experiment: Experiment, key: str) -> pd.DataFrame:
    rows = []
    for _, point in sweep_points(experiment, key).iterrows():
        prediction = analytic.predict_end_staleness(point["params"])
        rows.append({key: point[key], **prediction.drop("time_s").to_dict()})
    return pd.DataFrame(rows)


def _day_hours(experiment: Experiment) -> float:
    return experiment.points["params"].iloc[0].day_hours


def _sweep_note(experiment: Experiment, key: str) -> str:
    params = sweep_points(experiment, key).iloc[0]["params"]
    return _edits_note(params)


def _end_staleness_figure(
    exps: dict[str, Experiment], name: str, experiment_name: str, key: str, control_note: str, **style
):
    """End-of-day staleness against one swept parameter, with the control and the model."""
    from kbsim.report import plots

    experiment = exps[experiment_name]
    control = sweep_frame(experiment, key, "uniform")
    return plots.end_staleness_vs(
        sweep_frame(experiment, key),
        key,
        _end_model(experiment, key),
        experiment.caption(name, _sweep_note(experiment, key) + f" Dashed: analytic model. Dotted: {control_note}."),
        control=control if len(control) else None,
        **style,
    )


def figure_staleness_vs_zipf(exps: dict[str, Experiment]):
    """The share stale at the end of the day against the Zipf exponent (``zipf_sweep``)."""
    return _end_staleness_figure(
        exps,
        "staleness_vs_zipf",
        "zipf_sweep",
        "zipf_s",
        "control (saves uniform, questions Zipf)",
        xlabel="Zipf exponent s of popularity (0 = uniform)",
        title="Stale at end of day against popularity skew",
    )


def figure_staleness_vs_saves(exps: dict[str, Experiment]):
    """The share stale at the end of the day against the day's saves (``save_volume_sweep``)."""
    return _end_staleness_figure(
        exps,
        "staleness_vs_saves",
        "save_volume_sweep",
        "saves.count",
        "control (saves uniform)",
        xlabel=f"saves by people per {_day_hours(exps['save_volume_sweep']):g}-hour day (log scale)",
        title="Stale at end of day against save volume",
        logx=True,
    )


def _held_model(params: DayParams, by_held: pd.DataFrame) -> pd.DataFrame:
    """Analytic calls per check at each check time, placed at the expected citations held."""
    model = analytic.FreshnessModel.from_params(params)
    cost = model.check_cost(
        params.checks.interval_s,
        page_size=params.checks.poll_page_size,
        retention_s=params.event_retention_s,
    )
    held = by_held.drop_duplicates("check_index").set_index("check_index")["held"]
    cost["held"] = cost["check_index"].map(held)
    return cost.dropna(subset=["held"])


def figure_check_cost(exps: dict[str, Experiment]):
    """What each strategy's checks cost against save volume, and per hourly check of the reference day."""
    from kbsim.report import plots

    volume, key = exps["save_volume_sweep"], "saves.count"
    by_saves = sweep_frame(volume, key)
    model_saves = pd.DataFrame(
        [
            {key: point[key], **analytic.predict_check_cost(point["params"]).to_dict()}
            for _, point in sweep_points(volume, key).iterrows()
        ]
    )
    days = staleness_days([exps["reference"]])
    keys, params, reference = days["zipf"]
    checks = match(reference.tables["checks"], keys)
    by_held = frames.cost_by_citations_held(checks)
    caption = volume.caption(
        "check_cost",
        f"Right: each hourly check of the Zipf no-edit day of experiments/{reference.name}.yaml "
        f"({reference.seeds} seeds). Dashed: analytic calls (no analytic bytes or title line). "
        + _sweep_note(volume, key).replace("These days", "Left: the days"),
    )
    return plots.check_cost(
        by_saves, key, by_held, caption, model_saves, _held_model(params, by_held), volume.strategies
    )


def figure_edit_rejections(exps: dict[str, Experiment]):
    """The agent's edits refused against the read-to-write delay (``edit_delay_sweep``), with the model."""
    from kbsim.report import plots

    experiment, key = exps["edit_delay_sweep"], "edit.delay_s"
    if key not in experiment.swept:
        raise KeyError(f"experiment {experiment.name!r} does not sweep {key!r}")
    edits = experiment.summary[experiment.summary["edits"].astype(bool)]
    summary = edits[edits["save_popularity"] == "zipf"]
    control = edits[(edits["save_popularity"] != "zipf") & (edits["metric"] == "rejection_rate")]
    points = experiment.points[
        experiment.points["edits"] & (experiment.points["save_popularity"] == "zipf")
    ]
    params = points.iloc[0]["params"]
    delays = np.geomspace(summary[key].min(), summary[key].max(), 60)
    model = analytic.predict_edit_outcomes(params, delays)
    caption = experiment.caption(
        "edit_rejections",
        f"{params.edit.share:.0%} of answers edit their first citation; "
        "a retry waits a new approval "
        "delay. Left: a log scale, so that rates under 1% can be read; a rate of 0 has no place on it "
        f"and is not drawn. Right: a delay is drawn where at least {plots.MIN_RETRIES} retries (over all "
        "seeds) back it, as a point with its 95% interval; n = its retries. Dashed: analytic model (Zipf day).",
    )
    return plots.edit_rejections(summary, key, model, caption, control if len(control) else None)


def figure_retention_cost(exps: dict[str, Experiment]):
    """What an expired poll cursor costs against the event log's retention (``retention_sweep``)."""
    from kbsim.report import plots

    experiment = exps["retention_sweep"]
    retention, interval = "event_retention_s", "checks.interval_s"
    for key in (retention, interval):
        if key not in experiment.swept:
            raise KeyError(f"experiment {experiment.name!r} does not sweep {key!r}")
    points = prefer_quiet(experiment.points)
    points = points[points["save_popularity"] == "zipf"]
    summary = experiment.summary[
        experiment.summary["edits"].astype(bool).isin(set(points["edits"]))
    ]
    summary = summary[summary["save_popularity"] == "zipf"]
    rows = []
    for _, point in points.iterrows():
        cost = analytic.predict_check_cost(point["params"])
        rows.append({retention: point[retention], interval: point[interval], **cost.to_dict()})
    reread = summary[MetricSelector("calls_per_check", strategy=REREAD.name).mask(summary)]
    caption = experiment.caption(
        "retention_cost",
        "An expired cursor makes the poll fall back to re-reading every live cited article. "
        "One line per check interval, darker for longer intervals; dotted, with its band: re-read's calls "
        "per check over the same intervals. Dashed: analytic model. " + _edits_note(points.iloc[0]["params"]),
    )
    return plots.retention_cost(summary, retention, interval, caption, pd.DataFrame(rows), reread, poll=POLL,
                                reread_strategy=REREAD)


def _frontier_frame(summary: pd.DataFrame, key: str, volume: str, strategies: tuple[Strategy, ...]) -> pd.DataFrame:
    """Per save volume, strategy and interval: calls per hour, mean detection latency and
    stale exposure with their intervals, and whether each point is Pareto-optimal."""
    from kbsim.model.advise import pareto_optimal

    measures = {"calls": "calls_per_hour", "latency": "detection_latency_s", "exposure": "stale_exposure"}
    frames = []
    for strategy in (s.name for s in strategies):
        parts = []
        for short, metric in measures.items():
            rows = summary[MetricSelector(metric, strategy=strategy).mask(summary)]
            rows = rows[[volume, key, "value", "ci_low", "ci_high"]].rename(
                columns={"value": short, "ci_low": f"{short}_low", "ci_high": f"{short}_high"}
            )
            parts.append(rows.set_index([volume, key]))
        frames.append(pd.concat(parts, axis=1).reset_index().assign(strategy=strategy))
    frame = pd.concat(frames, ignore_index=True)
    for short in ("latency", "exposure"):
        frame[f"pareto_{short}"] = False
        for _, group in frame.groupby(volume):
            frame.loc[group.index, f"pareto_{short}"] = pareto_optimal(group["calls"], group[short])
    return frame


def figure_check_frontier(exps: dict[str, Experiment]):
    """Each strategy's cost against its detection latency over check intervals, and the Pareto
    front (``check_policy``)."""
    from kbsim.report import plots

    experiment = exps["check_policy"]
    key, volume = "checks.interval_s", "saves.count"
    for name in (key, volume):
        if name not in experiment.swept:
            raise KeyError(f"experiment {experiment.name!r} does not sweep {name!r}")
    points = sweep_points(experiment, key)
    summary = sweep_frame(experiment, key)
    # at the swept intervals: between two of them the last check's place jumps (floor)
    intervals = sorted(points[key].unique())
    models = []
    for saves, group in points.groupby(volume):
        params = group.iloc[0]["params"]
        models.append(analytic.predict_check_policy(params, intervals).assign(**{volume: saves}))
    detected = _detected_shares(summary, volume, experiment.strategies)
    inexact = [s for s in experiment.strategies if not s.exact]
    title_note = "".join(
        f" The {s.label}'s latency is the mean over the stale citations it detects: "
        + " and ".join(f"{detected[(v, s.name)]:.0%} of them at {v:,.0f} saves a day"
                       for v in sorted(points[volume].unique()) if (v, s.name) in detected)
        + "; it never sees a change of content alone."
        for s in inexact
    )
    caption = experiment.caption(
        "check_frontier",
        "Zipf day without agent edits (its control is in the same experiment). One point per check "
        f"interval, {format_duration(points[key].min(), 'page')} (right) to "
        f"{format_duration(points[key].max(), 'page')} "
        "(left); bars: 95% intervals in both directions. Rings: Pareto-optimal (nothing cheaper "
        "detects sooner). Dashed: analytic model; dotted: its rough title-check model." + title_note,
        bands=False,
    )
    strategies = experiment.strategies
    return plots.check_frontier(_frontier_frame(summary, key, volume, strategies), pd.concat(models), caption, key,
                                volume, strategies, detected)


def _detected_shares(summary: pd.DataFrame, volume: str, strategies: tuple[Strategy, ...]) -> dict:
    """(volume, strategy name) -> the mean over the swept intervals of the share of stale citations
    that each strategy that is not exact detects (``detected_share``): what its latency is taken over."""
    shares = {}
    for strategy in strategies:
        if strategy.exact:
            continue
        rows = summary[MetricSelector("detected_share", strategy=strategy.name).mask(summary)]
        for saves, group in rows.groupby(volume):
            shares[(saves, strategy.name)] = float(group["value"].mean())
    return shares


#: Conflict rates the safe-edit-delay figure finds the largest delay for.
CONFLICT_TARGETS = (0.01, 0.05, 0.10)


def figure_safe_edit_delay(exps: dict[str, Experiment]):
    """The largest safe edit delay against save volume, simulated and modelled (``edit_delay_by_saves``)."""
    from kbsim.model.advise import largest_delay_below
    from kbsim.report import plots

    experiment = exps["edit_delay_by_saves"]
    key, volume = "edit.delay_s", "saves.count"
    for name in (key, volume):
        if name not in experiment.swept:
            raise KeyError(f"experiment {experiment.name!r} does not sweep {name!r}")
    summary = experiment.summary
    summary = summary[summary["edits"].astype(bool) & (summary["save_popularity"] == "zipf")]
    rates = summary[MetricSelector("rejection_rate").mask(summary)]
    rows = []
    for saves, group in rates.groupby(volume):
        for target in CONFLICT_TARGETS:
            rows.append(
                {
                    volume: saves,
                    "target": target,
                    "delay_s": largest_delay_below(group[key], group["value"], target),
                    # the upper end of the rate's interval crosses first: the delay's lower end
                    "low": largest_delay_below(group[key], group["ci_high"], target),
                    "high": largest_delay_below(group[key], group["ci_low"], target),
                    "shortest": group[key].min(),
                    "longest": group[key].max(),
                }
            )
    points = experiment.points[experiment.points["edits"] & (experiment.points["save_popularity"] == "zipf")]
    params = points.iloc[0]["params"]
    models = []
    for saves in np.geomspace(rates[volume].min(), rates[volume].max(), 12):
        day = params.model_copy(update={"saves": params.saves.model_copy(update={"count": int(round(saves))})})
        models.append(analytic.predict_safe_edit_delay(day, CONFLICT_TARGETS).assign(**{volume: saves}))
    caption = experiment.caption(
        "safe_edit_delay",
        f"Zipf day, {params.edit.share:.0%} of answers edit their first citation. Points: where the "
        "simulated conflict rate crosses the target, interpolated between swept delays; bars: where "
        "its 95% interval does. Dashed: analytic model.",
        bands=False,
    )
    return plots.safe_edit_delay(pd.DataFrame(rows), volume, pd.concat(models), caption)


@dataclass(frozen=True)
class Harm:
    """One paired comparison of the ablation study: ``scenario`` against ``baseline`` on
    ``metric`` (the harm of turning a piece of advice off, or of the other approval mode)."""

    label: str
    metric: str
    scenario: str
    baseline: str = "default"
    strategy: str = ""


@dataclass(frozen=True)
class Advice:
    """A piece of the write-up's advice, the panel that shows it and the harms it measures.

    ``x`` is the swept key the panel plots against; ``at`` fixes the other swept key
    (the table reads every harm at ``at`` and the first value of ``x`` ... unless
    ``table_x`` names the value, for harms that need the sweep, such as a lossy wire).
    """

    number: int
    advice: str
    panel: str
    harms: tuple[Harm, ...]
    x: str
    at: tuple[tuple[str, float], ...]
    table_x: float | None = None


LOSS, AGENTS = "transport.loss_rate", "agents.count"

#: The five pieces of advice as the ablation study measures them (experiments/ablation.yaml).
ADVICE: tuple[Advice, ...] = (
    Advice(
        1,
        "put a version in the citation",
        "Versions in citations: bytes per check",
        (
            Harm("poll, bytes per check", "bytes_per_check", "no_version", strategy=POLL.name),
            Harm("re-read, bytes per check", "bytes_per_check", "no_version", strategy=REREAD.name),
        ),
        AGENTS,
        ((LOSS, 0.0),),
    ),
    Advice(
        3,
        "answer only from published content, and log unpublishing as an event",
        "Unpublish events: gone citations",
        (
            Harm("gone taken for changed (poll)", "gone_as_changed_share", "no_unpublish_event", strategy=POLL.name),
            Harm("gone flagged as gone (poll)", "gone_flagged_share", "no_unpublish_event", strategy=POLL.name),
        ),
        AGENTS,
        ((LOSS, 0.0),),
    ),
    Advice(
        4,
        "make edits compare-and-swap",
        "Compare-and-swap: lost updates",
        (
            Harm("per-call approval (10 min)", "lost_update_share", "no_compare_and_swap"),
            Harm("session permission (1 s)", "lost_update_share", "session_blind", "session_permission"),
        ),
        AGENTS,
        ((LOSS, 0.0),),
    ),
    Advice(
        4,
        "... with a required idempotency key",
        "Idempotency keys: duplicate writes",
        (Harm("edits applied twice", "duplicate_write_share", "no_idempotency_key"),),
        LOSS,
        ((AGENTS, 1),),
        table_x=0.05,
    ),
    Advice(
        5,
        "keep a per-call approval (against a session-wide permission)",
        "Approval mode",
        (
            Harm("conflicts, with compare-and-swap", "rejection_rate", "session_permission"),
            Harm("lost updates, blind overwrites", "lost_update_share", "session_blind", "no_compare_and_swap"),
        ),
        AGENTS,
        ((LOSS, 0.0),),
    ),
)


def design_contrasts(experiment: Experiment) -> pd.DataFrame:
    """Every :data:`ADVICE` harm at every point of the ablation study, paired on common seeds.

    One row per harm and point: the :func:`kbsim.stats.contrasts` columns (``value`` is the
    scenario minus its baseline, with its paired 95% interval) plus ``advice`` (the
    :data:`ADVICE` index), ``harm`` (its label) and ``unit``.
    """
    from kbsim.stats import METRICS, ContrastSpec, contrasts

    for key in (LOSS, AGENTS):
        if key not in experiment.swept:
            raise KeyError(f"experiment {experiment.name!r} does not sweep {key!r} (sweeps {experiment.swept})")
    keys = ["scenario", *experiment.swept]
    per_run = experiment.per_run.drop(columns=[c for c in ANNOTATIONS if c in experiment.per_run])
    out = []
    for index, advice in enumerate(ADVICE):
        for harm in advice.harms:
            spec = ContrastSpec(
                MetricSelector(harm.metric, strategy=harm.strategy),
                baseline={"scenario": harm.baseline},
                where={"scenario": harm.scenario},
            )
            frame = contrasts(per_run, [spec], keys)
            out.append(frame.assign(advice=index, harm=harm.label, unit=METRICS[harm.metric].unit))
    return pd.concat(out, ignore_index=True)


def figure_design_choices(exps: dict[str, Experiment]):
    """What turning each piece of the write-up's advice off costs, seed by seed against the default
    day (``ablation``)."""
    from kbsim.report import plots

    experiment = exps["ablation"]
    frame = design_contrasts(experiment)
    caption = experiment.caption(
        "design_choices",
        "Each point: the scenario with the advice turned off minus the default day, seed by seed "
        "(common random numbers); bars: paired 95% intervals. Edits after 10 min (per-call approval) "
        "unless marked session permission (1 s).",
        bands=False,
    )
    return plots.design_choices(frame, ADVICE, caption)


@dataclass(frozen=True)
class Counterfactual:
    """One row of what each piece of advice buys (issue 37): the advice turned off as what the
    system then lacks, measured on what the advice protects.

    ``value = metric(scenario) - metric(baseline)``, paired on common seeds: the effect of
    turning the advice off, shown times ``scale`` in ``unit``. ``instead_of`` names a
    strategy the scenario checks with in place of ``strategy`` on the same day (no event log:
    the re-read in place of the poll). ``precision`` is the half-width (in the metric's own
    units) under which a row whose interval holds zero is called negligible.
    """

    number: int
    advice: str
    lacks: str
    effect: str
    metric: str
    scenario: str
    baseline: str = "default"
    strategy: str = ""
    instead_of: str = ""
    unit: str = "pp"
    scale: float = 100.0
    precision: float = 0.005
    headline: bool = False


#: The experiment that turns each piece of advice off (experiments/advice.yaml).
ADVICE_EXPERIMENT = "advice"
#: The seeds a row may use, in order: the sequential rule stops at the first that is enough.
SEED_STEPS = (5, 10, 20, 40)

#: Each piece of the write-up's advice turned off, one row per harm (experiments/advice.yaml).
COUNTERFACTUALS: tuple[Counterfactual, ...] = (
    Counterfactual(1, "put a version in the citation", "citation {kb, article}; edits overwrite the current text",
                   "lost updates", "lost_updates_per_edit", "no_version_overwrite",
                   unit="per 100 agent edits", headline=True),
    Counterfactual(1, "put a version in the citation", "... edits re-read just before the edit call",
                   "lost updates", "lost_updates_per_edit", "no_version_reread",
                   unit="per 100 agent edits"),
    Counterfactual(1, "put a version in the citation", "... checks compare the text kept (re-read)",
                   "result size per check", "bytes_per_check", "no_version_overwrite", strategy=REREAD.name,
                   unit="kB", scale=0.001, precision=100.0),
    Counterfactual(2, "keep an event log with a cursor", "no event log: re-read every cited article",
                   "calls per check (both exact)", "calls_per_check", "default", strategy=POLL.name,
                   instead_of=REREAD.name, unit="calls", scale=1.0, precision=0.5, headline=True),
    Counterfactual(2, "keep an event log with a cursor", "no event log: re-read every cited article",
                   "result size per check (both exact)", "bytes_per_check", "default", strategy=POLL.name,
                   instead_of=REREAD.name, unit="kB", scale=0.001, precision=100.0),
    Counterfactual(3, "answer only from published content", "the agent answers from people's pending drafts",
                   "answers citing text no person had published", "draft_answer_share", "answer_from_drafts",
                   baseline="drafts", headline=True),
    Counterfactual(3, "log unpublishing as an event", "an unpublish writes no event",
                   "gone citations the poll takes for changed", "gone_as_changed_share", "no_unpublish_event",
                   strategy=POLL.name),
    Counterfactual(3, "log unpublishing as an event", "an unpublish writes no event",
                   "gone citations the poll flags gone", "gone_flagged_share", "no_unpublish_event",
                   strategy=POLL.name),
    Counterfactual(4, "make edits compare-and-swap", "edits overwrite the current text",
                   "lost updates", "lost_updates_per_edit", "no_compare_and_swap",
                   unit="per 100 agent edits", headline=True),
    Counterfactual(4, "... with a required idempotency key", "a resend carries a fresh key (5% loss)",
                   "duplicate writes", "duplicates_per_retried_edit", "no_idempotency_key",
                   baseline="lossy", unit="per 100 resent edits"),
    Counterfactual(5, "keep a per-call approval", "a session-wide permission (1 s, no review)",
                   "wrong edits landed", "wrong_landed_per_edit", "approval_session",
                   baseline="approval_per_call", unit="per 100 agent edits", headline=True),
    Counterfactual(5, "keep a per-call approval", "a session-wide permission (1 s, no review)",
                   "conflicts", "rejection_rate", "approval_session",
                   baseline="approval_per_call", unit="per 100 agent edits"),
)


def _counterfactual_runs(per_run: pd.DataFrame, row: Counterfactual) -> tuple[pd.DataFrame, dict, dict]:
    """The per-run rows a counterfactual compares, and its scenario and baseline keys. A row
    with ``instead_of`` compares two strategies of one day: the ``instead_of`` rows are
    relabelled as a scenario of their own, checking as ``strategy``, on the same seeds."""
    if not row.instead_of:
        return per_run, {"scenario": row.scenario}, {"scenario": row.baseline}
    day = per_run[per_run["scenario"] == row.scenario]
    instead = day[day["strategy"] == row.instead_of].assign(scenario="without", strategy=row.strategy)
    return pd.concat([day, instead], ignore_index=True), {"scenario": "without"}, {"scenario": row.scenario}


def advice_effects(experiment: Experiment) -> pd.DataFrame:
    """Every :data:`COUNTERFACTUALS` row's effect of turning the advice off, paired on common
    seeds, with its seeds chosen by precision.

    The sequential rule: a row uses the first 5, 10, 20 or 40 of the experiment's seeds
    (:data:`SEED_STEPS`, up to those run), the fewest whose paired 95% interval excludes
    zero or has a half-width of at most the row's ``precision``; failing both at the cap,
    the cap. Columns: ``row`` (index into :data:`COUNTERFACTUALS`), ``value``, ``ci_low``,
    ``ci_high`` (times the row's ``scale``), ``seeds``, ``verdict`` (``"excludes zero"``,
    ``"negligible"`` or ``"undecided"``), ``bound`` (the largest size the interval allows).
    """
    from kbsim.stats import ContrastSpec, contrasts

    per_run = experiment.per_run.drop(columns=[c for c in ANNOTATIONS if c in experiment.per_run])
    seeds = sorted(pd.unique(per_run["seed"]))
    steps = [n for n in SEED_STEPS if n < len(seeds)] + [len(seeds)]
    out = []
    for index, row in enumerate(COUNTERFACTUALS):
        runs, where, baseline = _counterfactual_runs(per_run, row)
        found = None
        for n in steps:
            mine = runs[runs["seed"].isin(seeds[:n])]
            spec = ContrastSpec(MetricSelector(row.metric, strategy=row.strategy), baseline=baseline, where=where)
            frame = contrasts(mine, [spec], ["scenario"])
            if frame.empty:
                break
            found = frame.iloc[0]
            low, high = float(found["ci_low"]), float(found["ci_high"])
            if low > 0 or high < 0 or (high - low) / 2 <= row.precision:
                break
        if found is None:
            continue
        low, high, value = float(found["ci_low"]), float(found["ci_high"]), float(found["value"])
        if low > 0 or high < 0:
            verdict = "excludes zero"
        elif (high - low) / 2 <= row.precision:
            verdict = "negligible"
        else:
            verdict = "undecided"
        out.append({"row": index, "number": row.number, "value": value * row.scale, "ci_low": low * row.scale,
                    "ci_high": high * row.scale, "seeds": int(found["seeds"]), "verdict": verdict,
                    "bound": max(abs(low), abs(high)) * row.scale, "headline": row.headline})
    return pd.DataFrame(out)


def figure_advice_effects(exps: dict[str, Experiment]):
    """The forest plot of what turning each piece of advice off does (``advice``): each
    advice's headline row, point and paired 95% interval."""
    from kbsim.report import plots

    experiment = exps[ADVICE_EXPERIMENT]
    effects = advice_effects(experiment)
    caption = experiment.caption(
        "advice_effects",
        "Each row: one piece of advice turned off as what the system then lacks, minus the day that "
        "follows it, seed by seed (common random numbers); bars: paired 95% intervals, with the seeds the "
        "row needed to exclude zero.",
        bands=False,
    )
    return plots.advice_forest(effects, COUNTERFACTUALS, caption)


def _end_value(experiment: Experiment, metric: str, keys: dict, **selector) -> float:
    rows = match(experiment.summary, keys)
    return float(rows[MetricSelector(metric, **selector).mask(rows)]["value"].iloc[0])


def alt_staleness_over_day(exps: dict[str, Experiment]) -> str:
    """Alt text with the end-of-day stale shares of the Zipf day and the control."""
    days = staleness_days([exps["reference"], exps["control"]])
    (zk, _, ze), (ck, _, ce) = days["zipf"], days["control"]
    zipf, control = _end_value(ze, "stale_citation_share", zk), _end_value(ce, "stale_citation_share", ck)
    return (
        "Line chart of the share of citations and of answers stale at each hour of the day, Zipf saves "
        f"against the uniform control, with 95% bands and dashed model lines: by the end of the day {zipf:.0%} "
        f"of the Zipf day's citations are stale against {control:.0%} of the control's."
    )


def alt_check_cost(exps: dict[str, Experiment]) -> str:
    """Alt text with the calls per check of re-read and poll at the fewest and most saves."""
    volume, key = exps["save_volume_sweep"], "saves.count"
    rows = sweep_frame(volume, key)
    calls = {name: rows[MetricSelector("calls_per_check", strategy=name).mask(rows)].set_index(key)["value"]
             for name in (REREAD.name, POLL.name)}
    reread, poll = calls[REREAD.name], calls[POLL.name]
    low, high = poll.index.min(), poll.index.max()
    return (
        "Four log-scale panels: tool calls (top) and result bytes (bottom) per check of the title lookup, "
        "re-read and poll, against saves per day (left) and against the citations held (right). Re-read "
        f"stays near {reread.loc[low]:.0f} to {reread.loc[high]:.0f} calls per check while "
        f"polling rises from {poll.loc[low]:.1f} at {low:,.0f} saves a day to "
        f"{poll.loc[high]:.1f} at {high:,.0f}."
    )


def alt_edit_rejections(exps: dict[str, Experiment]) -> str:
    """Alt text with the conflict rate at the shortest and longest delays and the retries drawn."""
    from kbsim.report import plots

    experiment, key = exps["edit_delay_sweep"], "edit.delay_s"
    summary = experiment.summary
    rows = summary[summary["edits"].astype(bool) & (summary["save_popularity"] == "zipf")]
    conflicts = rows[MetricSelector("rejection_rate").mask(rows)].set_index(key)["value"].sort_index()
    retries = rows[MetricSelector("retry_success").mask(rows)]
    drawn = retries[retries["trials"] >= plots.MIN_RETRIES].set_index(key)["value"].sort_index()
    text = (
        "Two panels against the delay between reading a version and editing with it (log scale). Left, on a "
        f"log scale of shares: first tries rejected as conflicts rise from {conflicts.iloc[0]:.1%} at "
        f"{format_duration(conflicts.index[0], 'page')} to {conflicts.iloc[-1]:.0%} at "
        f"{format_duration(conflicts.index[-1], 'page')} on the Zipf day, above the control and beside the "
        "share finding the article gone."
    )
    if len(drawn):
        text += (
            f" Right: retries that succeed, points with 95% bars at the {len(drawn)} delays with at least "
            f"{plots.MIN_RETRIES} retries, fall from {drawn.iloc[0]:.0%} to {drawn.iloc[-1]:.0%}."
        )
    return text


def alt_retention_cost(exps: dict[str, Experiment]) -> str:
    """Alt text saying what the retention window does to the poll, per check interval."""
    experiment = exps["retention_sweep"]
    intervals = sorted(experiment.points["checks.interval_s"].unique())
    return (
        "Two panels against the event retention window (log scale, the grey band: every event kept), one "
        f"line per check interval ({', '.join(format_duration(i, 'page') for i in intervals)}), in shades of the "
        "poll's purple. Left: the poll's tool calls per check, which jump to the dotted green re-read band when "
        "the window is shorter than the interval; right: the share of polls whose cursor had expired, near 100% "
        "there and 0% beyond."
    )


def alt_check_frontier(exps: dict[str, Experiment]) -> str:
    """Alt text naming the strategies of the Pareto-optimal points."""
    experiment = exps["check_policy"]
    key, volume = "checks.interval_s", "saves.count"
    frame = _frontier_frame(sweep_frame(experiment, key), key, volume, experiment.strategies)
    ringed = frame[frame["pareto_latency"] | frame["pareto_exposure"]]
    volumes = " and ".join(f"{v:,.0f}" for v in sorted(frame[volume].unique()))
    text = (
        "Four log-log panels, one column per save volume (" + volumes + " saves a day): tool calls per hour "
        "against mean detection latency (top) and stale exposure (bottom), one curve per strategy across check "
        "intervals, with labels naming some intervals; the Pareto-optimal points, ringed, are "
    )
    others = ringed[ringed["strategy"] != POLL.name]
    if others.empty or POLL.name not in set(ringed["strategy"]):
        return text + f"all {' and '.join(sorted(set(ringed['strategy'])))}."
    calls = frame.set_index([volume, key, "strategy"])["calls"]
    said = []
    for _, point in others.sort_values([volume, key]).iterrows():
        at = (point[volume], point[key])
        said.append(f"{point['strategy']} every {format_duration(point[key], 'page')} at {point[volume]:,.0f} saves a "
                    f"day ({point['calls']:,.0f} calls an hour against the poll's {calls.get((*at, POLL.name)):,.0f})")
    return text + "the poll's but for " + "; ".join(said) + "."


def alt_staleness_by_age(exps: dict[str, Experiment]) -> str:
    """Alt text with the share stale within an hour and within the day, Zipf day and control."""
    frame, _, _, _ = _age_frames(exps)

    def at(role: str, hours: float) -> float:
        rows = frame[frame["role"] == role].sort_values("age_s")
        return float(rows[rows["age_s"] <= hours * 3600.0 + 1e-6]["value"].iloc[-1])

    last = float(frame["age_s"].max()) / 3600.0
    return (
        "Step chart of the share of citations stale within each age since they were given (Kaplan-Meier, "
        "95% bands), Zipf saves against the uniform control: within 1 h "
        f"{at('zipf', 1):.0%} of the Zipf day's citations are stale against {at('control', 1):.0%} of the "
        f"control's; within {last:g} h, {at('zipf', last):.0%} against {at('control', last):.0%}."
    )


def _alt_end_staleness(exps: dict[str, Experiment], name: str, key: str, what: str, show) -> str:
    experiment = exps[name]
    text = [
        f"Two panels: the share of citations (left) and of answers (right) stale at the end of the day against "
        f"{what}, the Zipf day simulated with 95% bands and the analytic model dashed, the uniform-saves "
        "control dotted."
    ]
    for metric, kind in (("stale_citation_share", "citations"), ("stale_answer_share", "answers")):
        rows = sweep_frame(experiment, key)
        values = rows[MetricSelector(metric).mask(rows)].set_index(key)["value"].sort_index()
        control = sweep_frame(experiment, key, "uniform")
        control = control[MetricSelector(metric).mask(control)]["value"]
        sentence = (f" Stale {kind} rise from {values.iloc[0]:.0%} at {show(values.index[0])} to "
                    f"{values.iloc[-1]:.0%} at {show(values.index[-1])}")
        if len(control):
            sentence += f"; the control's lie between {control.min():.0%} and {control.max():.0%}"
        text.append(sentence + ".")
    return "".join(text)


def alt_staleness_vs_zipf(exps: dict[str, Experiment]) -> str:
    """Alt text with the end-of-day shares at the least and most skew, and the control's range."""
    return _alt_end_staleness(exps, "zipf_sweep", "zipf_s", "the Zipf exponent of popularity",
                              lambda s: f"s = {s:g}")


def alt_staleness_vs_saves(exps: dict[str, Experiment]) -> str:
    """Alt text with the end-of-day shares at the fewest and most saves, and the control's range."""
    return _alt_end_staleness(exps, "save_volume_sweep", "saves.count", "the saves per day (log scale)",
                              lambda n: f"{n:,.0f} saves a day")


def alt_safe_edit_delay(exps: dict[str, Experiment]) -> str:
    """Alt text with the largest delay keeping conflicts under 5% at the fewest and most saves."""
    from kbsim.model.advise import largest_delay_below

    experiment = exps["edit_delay_by_saves"]
    summary = experiment.summary
    summary = summary[summary["edits"].astype(bool) & (summary["save_popularity"] == "zipf")]
    rates = summary[MetricSelector("rejection_rate").mask(summary)]
    delays = {saves: largest_delay_below(group["edit.delay_s"], group["value"], 0.05)
              for saves, group in rates.groupby("saves.count")}
    (fewest, first), (most, last) = min(delays.items()), max(delays.items())

    def show(delay: float) -> str:
        return "less than the shortest delay swept" if not np.isfinite(delay) else format_duration(delay, "page")

    return (
        "Log-log chart of the largest delay between reading and editing an article that keeps edit conflicts "
        f"under {', '.join(f'{t:.0%}' for t in CONFLICT_TARGETS)}, against saves per day, simulated with 95% "
        f"bars and the analytic model dashed, in shades of red: under 5%, an edit may wait {show(first)} at "
        f"{fewest:,.0f} saves a day and {show(last)} at {most:,.0f}."
    )


@dataclass(frozen=True)
class FigureSpec:
    """A figure: its file name, what it shows, the experiments it reads, how it is drawn, the
    model its overlays draw (one line, for the caption) and how its alt text is made."""

    name: str
    shows: str
    experiments: tuple[str, ...]
    draw: Callable[[dict[str, Experiment]], Figure]
    model: str = "No model overlay."
    alt: Callable[[dict[str, Experiment]], str] | None = None

    def alt_text(self, exps: dict[str, Experiment]) -> str:
        """What the figure shows, for a reader who cannot see it (headline numbers from the data)."""
        return self.alt(exps) if self.alt is not None else self.shows


FIGURES: tuple[FigureSpec, ...] = (
    FigureSpec(
        "staleness_over_day",
        "Share of citations and of answers stale at each hour, "
        "Zipf saves against the uniform control, "
        "with the analytic model.",
        ("reference", "control"),
        figure_staleness_over_day,
        "Dashed: the Poisson/Zipf freshness model (Cho & Garcia-Molina freshness, each article saved "
        "at its Zipf share of the saves; kbsim.model.analytic.predict_staleness).",
        alt_staleness_over_day,
    ),
    FigureSpec(
        "staleness_by_age",
        "Share of citations stale within each age since they were given (Kaplan-Meier), "
        "Zipf saves against the uniform control.",
        ("reference", "control"),
        figure_staleness_by_age,
        alt=alt_staleness_by_age,
    ),
    FigureSpec(
        "staleness_vs_zipf",
        "Share of citations and answers stale at the end of the day against the Zipf exponent.",
        ("zipf_sweep",),
        figure_staleness_vs_zipf,
        "Dashed: the freshness model's end-of-day shares (kbsim.model.analytic.predict_end_staleness).",
        alt_staleness_vs_zipf,
    ),
    FigureSpec(
        "staleness_vs_saves",
        "Share of citations and answers stale at the end of the day against the saves per day.",
        ("save_volume_sweep",),
        figure_staleness_vs_saves,
        "Dashed: the freshness model's end-of-day shares (kbsim.model.analytic.predict_end_staleness).",
        alt_staleness_vs_saves,
    ),
    FigureSpec(
        "check_cost",
        "Tool calls and result bytes per check for title lookup, re-read and poll, "
        "against save volume "
        "and against citations held.",
        ("save_volume_sweep", "reference"),
        figure_check_cost,
        "Dashed: the model's calls per check (kbsim.model.analytic.predict_check_cost: re-read reads the "
        "expected distinct cited articles, poll pages the expected events and re-reads the cited articles that moved).",
        alt_check_cost,
    ),
    FigureSpec(
        "edit_rejections",
        "Share of edits rejected as conflicts, finding the article gone, and retries that succeed, "
        "against the delay since the read.",
        ("edit_delay_sweep",),
        figure_edit_rejections,
        "Dashed: the model's rates (kbsim.model.analytic.predict_edit_outcomes: an edit conflicts when a "
        "Poisson save of its article falls within its delay).",
        alt_edit_rejections,
    ),
    FigureSpec(
        "retention_cost",
        "Poll cost per check and share of expired cursors against the event retention window, "
        "per check interval.",
        ("retention_sweep",),
        figure_retention_cost,
        "Dashed: the model's poll cost and expired cursors (kbsim.model.analytic.predict_check_cost with "
        "the retention window).",
        alt_retention_cost,
    ),
    FigureSpec(
        "check_frontier",
        "Cost per hour against mean detection latency and stale exposure, one curve per strategy "
        "across check intervals (1 min to 8 h), Pareto-optimal points marked, with the analytic model.",
        ("check_policy",),
        figure_check_frontier,
        "Dashed: the model's latency, exposure and calls per hour of each strategy and interval "
        "(kbsim.model.analytic.predict_check_policy); dotted: its rough title-check model.",
        alt_check_frontier,
    ),
    FigureSpec(
        "safe_edit_delay",
        "The largest delay between reading and editing an article that keeps edit conflicts under "
        "1%, 5% and 10%, against saves per day, with the analytic model.",
        ("edit_delay_by_saves",),
        figure_safe_edit_delay,
        "Dashed: the largest delay whose model conflict rate stays under the target "
        "(kbsim.model.analytic.predict_safe_edit_delay).",
        alt_safe_edit_delay,
    ),
    FigureSpec(
        "design_choices",
        "What each piece of the write-up's advice buys: the harm of turning it off (lost updates, "
        "duplicate writes, gone citations taken for changed, bytes per check, conflicts by approval "
        "mode) against the default day, with paired 95% intervals.",
        ("ablation",),
        figure_design_choices,
        "No model overlay: paired differences of simulated days.",
    ),
    FigureSpec(
        "advice_effects",
        "What each piece of the write-up's advice buys, as a forest plot: the effect of turning it "
        "off as what the system then lacks (lost updates, calls per check, answers from drafts, "
        "wrong edits landed), with paired 95% intervals.",
        (ADVICE_EXPERIMENT,),
        figure_advice_effects,
        "No model overlay: paired differences of simulated days.",
    ),
)
FIGURE_NAMES = tuple(spec.name for spec in FIGURES)


def specs(only: Iterable[str] | None) -> list[FigureSpec]:
    """The figures to draw: all, or those named in ``only`` (refusing unknown names)."""
    if not only:
        return list(FIGURES)
    only = list(only)
    unknown = [name for name in only if name not in FIGURE_NAMES]
    if unknown:
        raise ValueError(f"--only: unknown figure(s) {unknown}; expected some of {list(FIGURE_NAMES)}")
    return [spec for spec in FIGURES if spec.name in only]


def draw(name: str, exps: dict[str, Experiment]):
    """Draw one figure (by :data:`FIGURE_NAMES` name) from loaded experiments."""
    return specs([name])[0].draw(exps)
