"""What should my agent do? A check policy and an edit delay for a day, from the analytic model.

:func:`advise` takes a day (:func:`day_params`: articles, saves and questions per day,
popularity skew) and a target (:class:`Target`: a mean or p90 detection latency, or a
stale exposure) and answers from :mod:`kbsim.model.analytic`, in well under a second:

- the cheapest exact strategy (re-read, poll or subscribe) and check interval that meets
  the target, with its predicted calls and bytes per hour;
- the runner-up (the cheapest option with another exact strategy), each other exact
  strategy's cheapest option, and what the title check would miss at the chosen interval;
- which of the day's strategies (``checks.strategies``) the model has no cost for: those
  are answered by simulation (``kbsim advise --config``, :mod:`kbsim.runner.simulated_advice`);
- the largest delay between reading an article and editing it that keeps the share of
  edits rejected as a version conflict under a target (5% by default).

Every number an answer gives is finite and means what its label says, or the question
is refused with the reason (an :class:`AdviceError` naming the flag): a day whose
knowledge base empties (its unpublishes use up the articles) has nothing left to cite,
and a ``--min-interval`` implying more than :data:`MAX_CHECKS` checks a day is more work
than the model does at once. A day without saves has nothing to detect: its answer says
so instead of giving a latency. ``--json`` leaves out what the model does not give (the
title check's p90, a missing runner-up) rather than writing null.

:func:`verify_config` turns an answer into an experiment config (the chosen and the
runner-up's day, and an edit day at the safe delay) for :func:`kbsim.runner.run.run_experiment`,
and :func:`compare` puts its summary beside the predictions. ``kbsim advise`` is the
command line (:mod:`kbsim.cli.advise_cmd`), which also reads its options' text
(durations, shares, counts) into the numbers this module takes.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import asdict, dataclass, field

import numpy as np
import pandas as pd

from kbsim.errors import UsageError
from kbsim.model import analytic
from kbsim.params import DayParams
from kbsim.sim.strategies import DEFAULT, Strategy, resolve, strategy_named
from kbsim.sim.strategies.subscribe import STRATEGY as SUBSCRIBE
from kbsim.stats.intervals import no_interval
from kbsim.units import format_bytes, format_duration

#: Check intervals an answer chooses among (seconds): round durations a builder would
#: configure, from 1 minute to a day; those longer than the day are left out and the
#: day itself is added.
CANDIDATE_INTERVALS_S = (
    60, 120, 180, 300, 600, 900, 1200, 1800, 2700, 3600, 5400, 7200, 10800, 14400, 21600,
    28800, 43200, 86400,
)
#: What a target may bound, and the CLI flag that sets it.
TARGETS = {
    "detection_latency_s": "--max-latency",
    "detection_latency_p90_s": "--max-latency",
    "stale_exposure": "--max-exposure",
}
COSTS = ("calls", "bytes")
#: The strategies a day of :func:`day_params` is advised among: the study's three and the
#: subscription to each cited article (MCP's ``resources/subscribe``), as
#: ``experiments/check_policy.yaml`` compares them. A day from a config keeps its own.
ADVISED_STRATEGIES: tuple[str, ...] = (*DEFAULT, SUBSCRIBE.name)
#: Bounds on a day that the model answers instantly (and a simulation could still run).
MAX_DAY_HOURS = 168.0
#: The most checks a day the model follows for one interval (``--min-interval``): the work
#: grows with checks x articles; 20,000 is one a minute for a week, one every 1.44 s for 8 hours.
MAX_CHECKS = 20_000


class AdviceError(UsageError):
    """An input that cannot be answered; ``flag`` names the command-line option to blame."""

    def __init__(self, flag: str, problem: str) -> None:
        self.flag = flag
        self.problem = problem
        super().__init__(f"{flag}: {problem}")


def knowledge_base_left_s(params: DayParams) -> float:
    """When the knowledge base is expected to hold fewer than one published article: people's
    unpublishes (their share of the saves) use up the articles at a steady rate, since every
    save picks a published article while there is one. ``inf`` when nothing is unpublished."""
    unpublishes_per_s = params.saves.mix.unpublish * params.saves.count / params.day_s
    if unpublishes_per_s <= 0:
        return math.inf
    return (params.corpus.articles - 1) / unpublishes_per_s


def _by_hour(seconds: float) -> str:
    return f"by hour {seconds / 3600:.1f}" if seconds >= 360 else f"within {format_duration(max(seconds, 1e-3))}"


def format_count(value: float) -> str:
    """A count for the advice's text: thousands separated from 100 up, three digits below."""
    return "n/a" if math.isnan(value) else f"{value:,.0f}" if value >= 100 else f"{value:.3g}"


def format_share(value: float) -> str:
    """A share as a percentage for the advice's text (two digits under 10%)."""
    if math.isnan(value):
        return "n/a"
    return f"{100 * value:.2g}%" if value < 0.1 else f"{100 * value:.1f}%"


# -- the question ------------------------------------------------------------------------------


def day_params(
    *,
    articles: int,
    saves_per_day: float,
    questions_per_day: float,
    zipf: float,
    day_hours: float = 8.0,
    citations_per_answer: int = 2,
    saves_popularity: str = "zipf",
    edit_share: float = 0.25,
    strategies: tuple[str, ...] = ADVISED_STRATEGIES,
) -> DayParams:
    """The simulated day of a builder's numbers (every other parameter the reference day's),
    checked by ``strategies`` (default :data:`ADVISED_STRATEGIES`).

    Raises:
        AdviceError: naming the flag of the first input out of bounds.
    """
    checks = (
        ("--articles", articles, 3, 10_000_000, True),
        ("--saves-per-day", saves_per_day, 0, 100_000_000, True),
        ("--questions-per-day", questions_per_day, 1, 100_000_000, True),
        ("--citations-per-answer", citations_per_answer, 1, 20, True),
    )
    for flag, value, low, high, integral in checks:
        if not (isinstance(value, (int, float)) and math.isfinite(value)):
            raise AdviceError(flag, f"expected a number, got {value!r}")
        if integral and float(value) != int(value):
            raise AdviceError(flag, f"expected a whole number, got {value!r}")
        if not low <= value <= high:
            raise AdviceError(flag, f"expected {low:,} to {high:,}, got {value:,}")
    if not (math.isfinite(zipf) and 0 <= zipf <= 5):
        raise AdviceError("--zipf", f"expected an exponent from 0 (uniform) to 5, got {zipf!r}")
    if not (math.isfinite(day_hours) and 0 < day_hours <= MAX_DAY_HOURS):
        raise AdviceError("--day-hours", f"expected more than 0 and at most {MAX_DAY_HOURS:g} hours, got {day_hours!r}")
    if not (math.isfinite(edit_share) and 0 < edit_share <= 1):
        raise AdviceError("--edit-share", f"expected a share in (0, 1], got {edit_share!r}")
    if saves_popularity not in ("zipf", "uniform"):
        raise AdviceError("--saves-popularity", f"expected zipf or uniform, got {saves_popularity!r}")
    return DayParams.model_validate(
        {
            "day_hours": float(day_hours),
            "zipf_s": float(zipf),
            "corpus": {"articles": int(articles)},
            "saves": {"count": int(saves_per_day), "popularity": saves_popularity},
            "questions": {"count": int(questions_per_day), "citations_per_answer": int(citations_per_answer)},
            "edit": {"share": float(edit_share)},
            "checks": {"strategies": list(strategies)},
        }
    )


@dataclass(frozen=True)
class Target:
    """What the agent must achieve: ``metric`` (a key of :data:`TARGETS`) at most ``limit``."""

    metric: str
    limit: float

    def __post_init__(self) -> None:
        if self.metric not in TARGETS:
            raise ValueError(f"metric: expected one of {list(TARGETS)}, got {self.metric!r}")
        if not (math.isfinite(self.limit) and self.limit > 0):
            raise AdviceError(self.flag, f"expected a positive limit, got {self.limit!r}")

    @property
    def flag(self) -> str:
        """The ``kbsim advise`` option that sets this target (``--max-latency``, ...)."""
        return TARGETS[self.metric]

    def describe(self, value: float | None = None) -> str:
        """The target in words (``stale exposure at most 2%``), or ``value`` of its metric in words."""
        what = {
            "detection_latency_s": "mean detection latency",
            "detection_latency_p90_s": "90th-percentile detection latency",
            "stale_exposure": "stale exposure",
        }[self.metric]
        shown = show_value(self.metric, self.limit if value is None else value)
        return f"{what} {shown}" if value is not None else f"{what} at most {shown}"


def show_value(metric: str, value: float | None) -> str:
    """``value`` of ``metric`` as advise prints it: a share, a duration, bytes or calls an hour,
    and ``n/a`` for a value the model or the simulation does not give."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    if metric in ("stale_exposure", "detected_share", "rejection_rate", "gone_rate"):
        return format_share(value)
    if metric.endswith("_s"):
        return format_duration(value)
    if metric == "bytes_per_hour":
        return format_bytes(value) + "/h"
    return format_count(value) + "/h"


# -- the answer --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Option:
    """One strategy at one check interval, as the model predicts it."""

    strategy: str
    interval_s: float
    detected_share: float
    detection_latency_s: float
    detection_latency_p90_s: float
    stale_exposure: float
    calls_per_hour: float
    bytes_per_hour: float

    def describe(self, among: tuple[Strategy, ...] = ()) -> str:
        """``re-read every 1 h``: the strategy's label (one of ``among``, else a built-in one) and interval."""
        return f"{strategy_named(self.strategy, among).label} every {format_duration(self.interval_s)}"


@dataclass(frozen=True)
class EditAdvice:
    """The largest read-to-write delay keeping the conflict rate at or under ``max_conflict_rate``.

    ``longest``: no delay the model considers (up to ten days, or until the knowledge base
    empties) reaches the rate; ``delay_s`` is then that longest delay: any shorter one is safe.
    """

    max_conflict_rate: float
    delay_s: float
    gone_rate: float
    edit_share: float
    longest: bool = False


@dataclass(frozen=True)
class Advice:
    """The model's answer for one day and target (:func:`advise`)."""

    params: DayParams
    target: Target
    cost: str
    choice: Option
    runner_up: Option | None
    title: Option | None  # the day's blind check (advice_role "blind") at the chosen interval, if it has one
    edit: EditAdvice
    options: pd.DataFrame = field(repr=False)
    #: the day's strategies (``checks.strategies``)
    strategies: tuple[Strategy, ...] = field(default=(), repr=False)
    #: each other exact strategy's cheapest option that meets the target (neither the
    #: choice's nor the runner-up's strategy), cheapest first
    others: tuple[Option, ...] = ()

    @property
    def unmodelled(self) -> tuple[Strategy, ...]:
        """The day's strategies the model has no cost for: answered by simulation only."""
        return tuple(strategy for strategy in self.strategies if strategy.model is None)

    def to_dict(self) -> dict:
        """The answer as plain JSON-able values (``kbsim advise --json``)."""
        p = self.params
        return {
            "day": {
                "articles": p.corpus.articles,
                "saves_per_day": p.saves.count,
                "questions_per_day": p.questions.count,
                "zipf": p.zipf_s,
                "day_hours": p.day_hours,
                "citations_per_answer": p.questions.citations_per_answer,
                "saves_popularity": p.saves.popularity,
            },
            "target": {"metric": self.target.metric, "limit": self.target.limit},
            "cost": self.cost,
            "choice": _finite(asdict(self.choice)),
            **({} if self.runner_up is None else {"runner_up": _finite(asdict(self.runner_up))}),
            **({"others": [_finite(asdict(option)) for option in self.others]} if self.others else {}),
            **({} if self.title is None else {
                "title_check": _finite({**asdict(self.title), "misses_share": 1.0 - self.title.detected_share})}),
            "edit": _finite(asdict(self.edit)),
            "source": "analytic model (kbsim.model.analytic)",
            **({"simulation_only": [strategy.name for strategy in self.unmodelled]} if self.unmodelled else {}),
        }

    def lines(self) -> list[str]:
        """The answer in a few lines of text."""
        c, t = self.choice, self.title
        stale = math.isfinite(c.detection_latency_s)  # False: no saves, nothing ever goes stale
        latency = (f"mean latency {format_duration(c.detection_latency_s)} (p90 "
                   f"{format_duration(c.detection_latency_p90_s)})" if stale else
                   "no citation goes stale (no saves), so there is nothing to detect")
        among = self.strategies
        lines = [
            f"Target: {self.target.describe()} (cheapest in {self.cost} per hour).",
            f"Do: {c.describe(among)}: {format_count(c.calls_per_hour)} calls/h, "
            f"{format_bytes(c.bytes_per_hour)}/h; {latency}, stale exposure {format_share(c.stale_exposure)}.",
        ]
        if self.runner_up is not None:
            r = self.runner_up
            latency = f"mean latency {format_duration(r.detection_latency_s)}, " if stale else ""
            lines.append(
                f"Runner-up: {r.describe(among)}: {format_count(r.calls_per_hour)} calls/h, "
                f"{format_bytes(r.bytes_per_hour)}/h; {latency}exposure {format_share(r.stale_exposure)}."
            )
        for o in self.others:
            latency = f"mean latency {format_duration(o.detection_latency_s)}, " if stale else ""
            lines.append(
                f"Also meets it: {o.describe(among)}: {format_count(o.calls_per_hour)} calls/h, "
                f"{format_bytes(o.bytes_per_hour)}/h; {latency}exposure {format_share(o.stale_exposure)}."
            )
        if t is not None:
            misses = (f"it would miss {format_share(1.0 - t.detected_share)} of the citations stale by the last "
                      "check (it cannot see a change of content alone), " if stale else "")
            lines.append(
                f"Title check every {format_duration(t.interval_s)} instead: {misses}leave "
                f"{format_share(t.stale_exposure)} exposure, and cost "
                f"{format_count(t.calls_per_hour)} searches/h ({format_bytes(t.bytes_per_hour)}/h)."
            )
        if self.unmodelled:
            names = ", ".join(strategy.label for strategy in self.unmodelled)
            lines.append(f"The model has no cost for {names}: that is answered by simulation only "
                         "(kbsim advise --config DAY.yaml simulates it).")
        e = self.edit
        if e.longest:
            edit_line = f"any delay up to {format_duration(e.delay_s)} (the longest considered)"
        else:
            edit_line = f"at most {format_duration(e.delay_s)}"
        lines.append(
            f"Edits: wait {edit_line} between reading an article and editing it to keep version "
            f"conflicts under {format_share(e.max_conflict_rate)} ({format_share(e.edit_share)} of answers "
            f"edited; {format_share(e.gone_rate)} would find the article unpublished)."
        )
        return lines


def _finite(mapping: dict) -> dict:
    """``mapping`` without the values the model does not give (NaN): JSON has no number for them."""
    return {key: value for key, value in mapping.items() if not (isinstance(value, float) and math.isnan(value))}


def _check_answer(advice: Advice) -> Advice:
    """Every number the answer gives finite (an infinity or a NaN where a value is due would
    be nonsense stated confidently), or the question refused with the reason. Only a day
    without saves has no latency and no detected share (nothing goes stale), and the title
    check never has a p90."""
    due = ["interval_s", "stale_exposure", "calls_per_hour", "bytes_per_hour"]
    if advice.params.saves.count > 0:
        due += ["detected_share", "detection_latency_s", "detection_latency_p90_s"]
    checked: list[tuple[str, Option | EditAdvice, list[str]]] = [("choice", advice.choice, due)]
    if advice.title is not None:
        checked.append(("title check", advice.title, [name for name in due if name != "detection_latency_p90_s"]))
    if advice.runner_up is not None:
        checked.append(("runner-up", advice.runner_up, due))
    checked.append(("edit advice", advice.edit, ["delay_s", "gone_rate"]))
    for what, option, names in checked:
        for name in names:
            value = getattr(option, name)
            if not math.isfinite(value):
                raise AdviceError(advice.target.flag, f"the model gives no finite {name} for the {what} on this "
                                  "day, so it cannot advise on it; check the day's numbers")
    return advice


def candidate_intervals(day_s: float, min_interval_s: float = 60.0) -> np.ndarray:
    """The check intervals an answer considers: :data:`CANDIDATE_INTERVALS_S` from
    ``min_interval_s`` up to the day, and the day itself."""
    values = {float(v) for v in CANDIDATE_INTERVALS_S if min_interval_s - 1e-9 <= v <= day_s + 1e-9}
    values |= {float(min_interval_s), float(day_s)} if min_interval_s <= day_s else set()
    return np.array(sorted(values))


def pareto_optimal(cost, value) -> np.ndarray:
    """Whether each (cost, value) point is Pareto-optimal: no other point is at most as
    costly and at most as bad, and strictly better in one (lower is better in both)."""
    cost, value = np.asarray(cost, dtype=float), np.asarray(value, dtype=float)
    best = np.ones(len(cost), dtype=bool)
    for i in range(len(cost)):
        if np.isnan(cost[i]) or np.isnan(value[i]):
            best[i] = False
            continue
        dominated = (cost <= cost[i]) & (value <= value[i]) & ((cost < cost[i]) | (value < value[i]))
        best[i] = not dominated.any()
    return best


def largest_delay_below(delays, rates, target: float) -> float:
    """The largest delay before ``rates`` (rising with the delay) first exceed ``target``,
    interpolated on a log delay scale; the last delay if none does, NaN if the first does."""
    delays, rates = np.asarray(delays, dtype=float), np.asarray(rates, dtype=float)
    order = np.argsort(delays)
    delays, rates = delays[order], rates[order]
    keep = ~np.isnan(rates)
    delays, rates = delays[keep], rates[keep]
    above = np.flatnonzero(rates > target)
    if not len(delays):
        return math.nan
    if not len(above):
        return float(delays[-1])
    i = above[0]
    if i == 0:
        return math.nan
    x0, x1 = math.log(delays[i - 1]), math.log(delays[i])
    y0, y1 = rates[i - 1], rates[i]
    return float(math.exp(x0 + (target - y0) / (y1 - y0) * (x1 - x0)))


def advise(
    params: DayParams,
    target: Target,
    *,
    cost: str = "calls",
    min_interval_s: float = 60.0,
    max_conflict_rate: float = 0.05,
) -> Advice:
    """The cheapest exact strategy and interval meeting ``target`` for a day like ``params``.

    Raises:
        AdviceError: the target is met by no interval from ``min_interval_s`` to the day
            (naming the target's flag and what is feasible), or a bad ``min_interval_s``.
    """
    if cost not in COSTS:
        raise AdviceError("--cost", f"expected one of {', '.join(COSTS)}, got {cost!r}")
    if not (math.isfinite(min_interval_s) and min_interval_s > 0):
        raise AdviceError("--min-interval", f"expected a positive duration, got {min_interval_s!r}")
    if min_interval_s > params.day_s:
        raise AdviceError(
            "--min-interval",
            f"{format_duration(min_interval_s)} is longer than the day ({params.day_hours:g} h)",
        )
    if params.day_s / min_interval_s > MAX_CHECKS:
        raise AdviceError(
            "--min-interval",
            f"{format_duration(min_interval_s)} means {params.day_s / min_interval_s:,.0f} checks in the "
            f"{params.day_hours:g}-hour day; the model follows at most {MAX_CHECKS:,} (an interval of at least "
            f"{format_duration(params.day_s / MAX_CHECKS)})",
        )
    left_s = knowledge_base_left_s(params)
    if left_s <= params.day_s:
        unpublishes = params.saves.mix.unpublish * params.saves.count
        raise AdviceError(
            "--saves-per-day",
            f"the knowledge base empties {_by_hour(left_s)}: {format_share(params.saves.mix.unpublish)} of "
            f"the {params.saves.count:,} saves a day unpublish an article (about {unpublishes:,.0f}), and it holds "
            f"{params.corpus.articles:,}; after that no answer can cite anything. Give fewer --saves-per-day or "
            "more --articles",
        )
    strategies = resolve(params.checks.strategies)
    quiet = params.model_copy(update={"edit": params.edit.model_copy(update={"delay_s": None})})
    options = analytic.predict_check_policy(quiet, candidate_intervals(params.day_s, min_interval_s))
    if options.empty:
        raise AdviceError("--config", "the model has a cost for none of the day's strategies "
                          f"({', '.join(s.name for s in strategies)}); answer by simulation")
    column = f"{cost}_per_hour"
    # nothing stale (no saves): every interval meets a latency target
    achieved = options[target.metric].fillna(0.0)
    options["meets"] = achieved <= target.limit * (1 + 1e-9)
    options["pareto"] = False
    # the exact strategies an answer chooses among (the title check misses content changes)
    exact = options[options["strategy"].isin([strategy.name for strategy in strategies if strategy.exact])]
    options.loc[exact.index, "pareto"] = pareto_optimal(exact[column], exact[target.metric].fillna(0.0))
    feasible = exact[options.loc[exact.index, "meets"]]
    if feasible.empty and exact.empty:
        raise AdviceError(target.flag, "the model has a cost for no exact strategy of the day's; answer by simulation")
    if feasible.empty:
        best = exact.loc[exact[target.metric].idxmin()]
        raise AdviceError(
            target.flag,
            f"{show_value(target.metric, target.limit)} cannot be met by any feasible interval: checking "
            f"every {format_duration(best['interval_s'])}, the shortest considered (--min-interval), "
            f"gives {target.describe(best[target.metric])}",
        )
    # the cheapest; among equally cheap, the longer interval (fewer checks), then poll
    ranked = feasible.sort_values([column, "interval_s"], ascending=[True, False], kind="stable")
    choice = _option(ranked.iloc[0])
    # each other strategy at its cheapest: the runner-up first
    cheapest = ranked[ranked["strategy"] != choice.strategy].drop_duplicates("strategy")
    runner_up = _option(cheapest.iloc[0]) if len(cheapest) else None
    others = tuple(_option(row) for _, row in cheapest.iloc[1:].iterrows())
    blind = [strategy.name for strategy in strategies if strategy.advice_role == "blind" and strategy.model]
    title = None
    if blind:
        at_choice = options[(options["strategy"] == blind[0]) & (options["interval_s"] == choice.interval_s)]
        title = _option(at_choice.iloc[0])
    edit = _edit_advice(params, max_conflict_rate, left_s)
    return _check_answer(Advice(params, target, cost, choice, runner_up, title, edit, options, strategies, others))


def _edit_advice(params: DayParams, max_conflict_rate: float, left_s: float) -> EditAdvice:
    """The safe edit delay, within what the model considers: ten days, and no later than the
    knowledge base is expected to empty (edits past the day meet people saving on)."""
    longest = min(analytic.SAFE_DELAY_HORIZON_S, left_s - params.day_s)
    with np.errstate(all="ignore"):  # delays past the knowledge base's life are computed, then set aside
        delay = analytic.predict_safe_edit_delay(params, [max_conflict_rate]).iloc[0]
    delay_s, gone_rate = float(delay["delay_s"]), float(delay["gone_rate"])
    if delay_s <= longest:
        return EditAdvice(max_conflict_rate, delay_s, gone_rate, params.edit.share)
    day = params if params.edit.enabled else params.model_copy(
        update={"edit": params.edit.model_copy(update={"delay_s": 60.0})})
    with np.errstate(all="ignore"):
        gone_rate = float(analytic.predict_edit_outcomes(day, [longest]).iloc[0]["gone_rate"])
    return EditAdvice(max_conflict_rate, longest, gone_rate, params.edit.share, longest=True)


def _option(row: pd.Series) -> Option:
    return Option(
        strategy=str(row["strategy"]),
        interval_s=float(row["interval_s"]),
        detected_share=float(row["detected_share"]),
        detection_latency_s=float(row["detection_latency_s"]),
        detection_latency_p90_s=float(row["detection_latency_p90_s"]),
        stale_exposure=float(row["stale_exposure"]),
        calls_per_hour=float(row["calls_per_hour"]),
        bytes_per_hour=float(row["bytes_per_hour"]),
    )


# -- checking the answer by simulation -----------------------------------------------------------

#: Metrics ``kbsim advise --verify`` compares for each checked strategy.
VERIFIED = ("detection_latency_s", "detection_latency_p90_s", "stale_exposure", "calls_per_hour", "bytes_per_hour")


def verify_config(advice: Advice, seeds: int = 20) -> dict:
    """An experiment config (for :func:`kbsim.runner.load.config_from_dict`) simulating the
    answer: the chosen interval's day, the runner-up's when its interval differs, and a
    day with edits after the safe delay (one check at its end). Its name hashes the day,
    so the same question reuses its runs."""
    p = advice.params
    day = {
        "day_hours": p.day_hours,
        "zipf_s": p.zipf_s,
        "corpus.articles": p.corpus.articles,
        "saves.count": p.saves.count,
        "saves.popularity": p.saves.popularity,
        "questions.count": p.questions.count,
        "questions.citations_per_answer": p.questions.citations_per_answer,
        **({} if p.checks.strategies is None else {"checks.strategies": list(p.checks.strategies)}),
    }
    scenarios = {"choice": {"checks.interval_s": advice.choice.interval_s}}
    if advice.runner_up is not None and advice.runner_up.interval_s != advice.choice.interval_s:
        scenarios["runner_up"] = {"checks.interval_s": advice.runner_up.interval_s}
    if not advice.edit.longest and advice.edit.delay_s > 0:
        scenarios["edits"] = {
            "checks.interval_s": p.day_s,
            "edit.delay_s": round(advice.edit.delay_s, 3),
            "edit.share": advice.edit.edit_share,
        }
    digest = hashlib.sha256(json.dumps([day, scenarios], sort_keys=True).encode()).hexdigest()[:10]
    return {
        "name": f"advise-{digest}",
        "description": "kbsim advise --verify: the advised check policy and edit delay, simulated",
        "params": day,
        "seeds": int(seeds),
        "scenarios": scenarios,
    }


def compare(advice: Advice, summary: pd.DataFrame) -> pd.DataFrame:
    """The simulated values (with 95% intervals, from ``summary``: :func:`kbsim.stats.summarize`
    per scenario) beside the predictions, one row per quantity, with ``agrees``: the
    prediction inside the interval."""
    from kbsim.stats.summary import MetricSelector

    def simulated(scenario: str, metric: str, strategy: str = ""):
        rows = summary[(summary["scenario"] == scenario) & MetricSelector(metric, strategy=strategy).mask(summary)]
        if rows.empty:
            return (math.nan, math.nan, math.nan)
        row = rows.iloc[0]
        return float(row["value"]), float(row["ci_low"]), float(row["ci_high"])

    checked: list[tuple[str, Option, tuple[str, ...]]] = [("choice", advice.choice, VERIFIED)]
    if advice.runner_up is not None:
        if advice.runner_up.interval_s == advice.choice.interval_s:
            # re-read and poll flag the same citations at the same checks: only the cost differs
            checked.append(("choice", advice.runner_up, ("calls_per_hour", "bytes_per_hour")))
        else:
            checked.append(("runner_up", advice.runner_up, VERIFIED))
    if advice.title is not None:
        title_metrics = ("detected_share", "detection_latency_s", "stale_exposure", "calls_per_hour")
        checked.append(("choice", advice.title, title_metrics))
    rows = []
    for scenario, option, metrics in checked:
        for metric in metrics:
            value, low, high = simulated(scenario, metric, option.strategy)
            rows.append((option.describe(advice.strategies), option.strategy, metric, getattr(option, metric), value,
                         low, high))
    if "edits" in set(summary["scenario"]):
        outcomes = analytic.predict_edit_outcomes(
            advice.params.model_copy(
                update={"edit": advice.params.edit.model_copy(update={"delay_s": advice.edit.delay_s})}
            ),
            [advice.edit.delay_s],
        ).iloc[0]
        for metric in ("rejection_rate", "gone_rate"):
            value, low, high = simulated("edits", metric)
            label = f"edits after {format_duration(advice.edit.delay_s)}"
            rows.append((label, "", metric, float(outcomes[metric]), value, low, high))
    frame = pd.DataFrame(rows, columns=["option", "strategy", "metric", "predicted", "simulated", "ci_low", "ci_high"])
    inside = (frame["ci_low"] <= frame["predicted"] * (1 + 1e-9)) & (
        frame["predicted"] <= frame["ci_high"] * (1 + 1e-9)
    )
    unknown = frame[["predicted", "simulated", "ci_low", "ci_high"]].isna().any(axis=1)
    frame["agrees"] = [None if u else bool(i) for i, u in zip(inside, unknown, strict=True)]
    return frame


def comparison_lines(frame: pd.DataFrame) -> list[str]:
    """The comparison as text: each quantity predicted and simulated, then a verdict."""
    lines = []
    for option, group in frame.groupby("option", sort=False):
        lines.append(f"{option}:")
        for _, row in group.iterrows():
            metric = row["metric"]
            if math.isnan(row["ci_low"]) or math.isnan(row["ci_high"]):
                bracket = f"[{no_interval(row.get('seeds'))}]"
            else:
                bracket = f"[{show_value(metric, row['ci_low'])}, {show_value(metric, row['ci_high'])}]"
            simulated = "n/a" if math.isnan(row["simulated"]) else f"{show_value(metric, row['simulated'])} {bracket}"
            mark = {True: "agrees", False: "DISAGREES", None: "-"}[row["agrees"]]
            lines.append(
                f"  {metric:<24} model {show_value(metric, row['predicted']):>12}   simulated {simulated:<34} {mark}"
            )
    scored = frame[frame["agrees"].notna()]
    disagree = scored[~scored["agrees"].astype(bool)]
    if disagree.empty:
        lines.append(f"Model and simulation agree on all {len(scored)} quantities (model inside the 95% interval).")
    else:
        named = "; ".join(f"{row['option']}: {row['metric']}" for _, row in disagree.iterrows())
        lines.append(
            f"Model and simulation DISAGREE on {len(disagree)} of {len(scored)} quantities ({named}): "
            "the prediction is outside the simulated 95% interval. Each interval misses the truth 1 "
            "time in 20 by chance, and a strategy's latency, p90 and exposure rest on the same stale "
            "citations, so they miss together; more --seeds tell chance from a real gap, and "
            "docs/model.md lists what the model leaves out."
        )
    return lines


def pooled_lines(pooled: Advice, answer: Advice, days: int | None) -> list[str]:
    """What the answer would have been for the pooled day (every day of the log alike), beside
    ``answer``, the design day's; ``days``: the log's, if a log gave them."""
    among = pooled.strategies
    p = pooled.params
    over = f"all {days} days of the log" if days else "every kind of day"
    same = (pooled.choice.strategy == answer.choice.strategy and pooled.choice.interval_s == answer.choice.interval_s
            and math.isclose(pooled.edit.delay_s, answer.edit.delay_s))
    return [f"Pooled over {over} as one mean day ({p.saves.count:,} saves, {p.questions.count:,} questions, flat), the "
            f"answer would have been: {pooled.choice.describe(among)}, and edits within "
            f"{format_duration(pooled.edit.delay_s)}" + (" (the same)." if same else _versus_design(pooled, answer))]


def _versus_design(pooled, answer) -> str:
    if pooled.edit.delay_s > answer.edit.delay_s * (1 + 1e-9):
        ratio = pooled.edit.delay_s / answer.edit.delay_s
        return f": its edit delay is {ratio:.1f} times the design day's, too long for the design day."
    return "."
