"""The day to design for: a kind of day of the log (by default the busiest), or a percentile
of its days, and within it the busy hours.

Advice pooled over days that are not alike answers for none of them: a log of weekdays,
weekends at a fifth of the saves and a release day at five times gives a mean day that
no day resembles, and an edit delay that is too long on the days that matter. The design
day is the day the answer must hold on; and since the analytic model takes a day at one
rate, the design day runs at the rate of its **busy hours** (the active hours with at least
:data:`BUSY_SHARE` of its busiest hour's saves), all day: an answer that holds in the busy
hours holds in the quieter ones.

The answer must hold on a future day of the kind, not only on the log's mean one, and the log
knows that day only as well as its days show it. So a kind's design day takes its busy hours'
save rate at the **upper end of the future-day interval** (:func:`kbsim.stats.intervals.prediction`
over the kind's days, each day's busy-hours rate a value: the spread between days and the
uncertainty of their mean), not at their mean. A kind with one day has no such interval, and
its design day is that day's rate, with no margin (the output says so). A percentile is a day
the builder chose by its saves, and is taken as it is.

``--design-day`` chooses it (:func:`parse_design_day`): ``busiest`` (the default), a kind
(``weekday``, ``weekend``, ``peak``, ``ordinary``) or a percentile of the log's days by saves
(``p90`` or ``90%``: that day's saves, with the log's hourly profile scaled to them).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np

from kbsim.fit.day_kinds import KIND_NAMES, kind_of_scenario
from kbsim.fit.estimates import Fit
from kbsim.fit.from_config import merged, model_day
from kbsim.fit.logs import FitInputError
from kbsim.params import DayParams
from kbsim.stats.intervals import Estimate, prediction

__all__ = [
    "BUSY_SHARE",
    "DesignDay",
    "design_day",
    "design_lines",
    "design_model_day",
    "is_percentile",
    "parse_design_day",
]

#: An active hour is busy when it has at least this share of the busiest hour's saves.
BUSY_SHARE = 0.8


@dataclass(frozen=True)
class DesignDay:
    """The day advice is given for (:func:`design_day`).

    ``saves_count`` and ``questions_count`` are what a whole day at the busy hours' rates holds
    (the analytic model's day; its saves at ``saves_per_design_hour``); ``day_saves`` what the
    chosen day holds over its hours. ``saves_busy_future`` is the busy hours' save rate on a
    future day of the kind (the prediction interval over its days; None for a percentile or a
    config's scenario), whose upper end, when it has one, is ``saves_per_design_hour``.
    """

    choice: str  # "busiest", a kind's name, or "p90"
    kind: str  # the kind of day (or "p90 day", "every day")
    label: str
    dates: tuple  # the log's dates the design day stands for
    busy_hours: tuple[int, ...]
    saves_per_busy_hour: float
    saves_per_mean_hour: float
    questions_per_busy_hour: float | None
    day_saves: float
    saves_count: int
    questions_count: int | None
    saves_busy_future: Estimate | None = None

    @property
    def saves_per_design_hour(self) -> float:
        """The save rate the model's day runs at: the upper end of a future day's busy hours
        when there is one, else the busy hours' mean."""
        return _design_rate(self.saves_per_busy_hour, self.saves_busy_future)

    @property
    def margin(self) -> bool:
        """Whether the model's day runs above the busy hours' mean (a future day's upper end)."""
        return self.saves_per_design_hour > self.saves_per_busy_hour

    def hours_text(self) -> str:
        """The busy hours as ``09:00-12:00, 14:00-15:00``."""
        if not self.busy_hours:
            return "every hour alike (a flat day)"
        spans, start = [], self.busy_hours[0]
        previous = start
        for hour in (*self.busy_hours[1:], None):
            if hour is not None and hour == previous + 1:
                previous = hour
                continue
            spans.append(f"{start:02d}:00-{previous + 1:02d}:00")
            if hour is not None:
                start = previous = hour
        return ", ".join(spans)

    def to_dict(self) -> dict:
        """The design day as plain JSON values."""
        return {"choice": self.choice, "kind": self.kind, "label": self.label,
                "dates": [d.isoformat() for d in self.dates], "busy_hours": list(self.busy_hours),
                "saves_per_busy_hour": self.saves_per_busy_hour, "saves_per_mean_hour": self.saves_per_mean_hour,
                **({} if self.questions_per_busy_hour is None else
                   {"questions_per_busy_hour": self.questions_per_busy_hour}),
                **({} if self.saves_busy_future is None else {"saves_per_busy_hour_future": {
                    "value": self.saves_busy_future.value, "low": _finite(self.saves_busy_future.low),
                    "high": _finite(self.saves_busy_future.high), "days": self.saves_busy_future.seeds,
                    "method": self.saves_busy_future.method}}),
                "saves_per_design_hour": self.saves_per_design_hour,
                "day_saves": self.day_saves, "model_saves_per_day": self.saves_count,
                **({} if self.questions_count is None else {"model_questions_per_day": self.questions_count})}


def parse_design_day(text: str | None) -> str:
    """``busiest``, a kind's name or ``pNN`` from ``--design-day`` (``90%`` is read as ``p90``).

    Raises:
        FitInputError: naming ``--design-day``.
    """
    raw = "busiest" if text is None else str(text).strip().lower()
    if raw == "busiest" or raw in KIND_NAMES:
        return raw
    match = re.fullmatch(r"p(\d+(?:\.\d+)?)|(\d+(?:\.\d+)?)%", raw)
    if match:
        value = float(match.group(1) or match.group(2))
        if 0 < value <= 100:
            return f"p{value:g}"
    raise FitInputError("--design-day", f"expected busiest, {', '.join(KIND_NAMES)}, or a percentile of the "
                        f"log's days such as p90 or 90%, got {text!r}")


def is_percentile(choice: str) -> bool:
    """Whether a :func:`parse_design_day` value is a percentile (``p90``), not a kind."""
    return choice != "busiest" and choice not in KIND_NAMES


def design_day(fit: Fit, choice: str = "busiest") -> DesignDay:
    """The design day of ``fit``'s log for ``choice`` (:func:`parse_design_day`'s value).

    The model's day runs the busy hours' saves at the upper end of a future day's interval (the
    module doc says why); its questions at the busy hours' mean.

    Raises:
        FitInputError: naming ``--design-day``, for a kind the log does not have.
    """
    log = fit.log
    first, end = fit.window
    hours = end - first
    save_hourly = _hourly(log.saves, log.days)
    question_hourly = None if log.questions is None else _hourly(log.questions, log.days)
    kinds = fit.day_kinds
    if is_percentile(choice):
        percent = float(choice[1:])
        totals = save_hourly.sum(axis=1)
        day_saves = float(np.percentile(totals, percent))
        scale = day_saves / totals.mean() if totals.mean() > 0 else 0.0
        members = np.flatnonzero(totals >= day_saves - 1e-9)
        profile = save_hourly.mean(axis=0) * scale
        questions = None if question_hourly is None else question_hourly.mean(axis=0) * scale
        kind, label = f"{choice} day", (f"the {choice} day of the log by saves ({day_saves:,.0f} saves; "
                                        f"{len(members)} of its {log.days} days have as many or more)")
    else:
        if kinds is None or not kinds.found:
            if choice != "busiest":
                raise FitInputError("--design-day", f"the log has no kinds of day, so no {choice} day "
                                    f"({kinds.reason if kinds is not None else 'no test'}); give busiest or a "
                                    "percentile such as p90")
            members = np.arange(log.days)
            kind, label = "every day", f"every day of the log alike ({log.days} days: one kind of day)"
        else:
            try:
                chosen = kinds.busiest() if choice == "busiest" else kinds.kind(choice)
            except KeyError:
                raise FitInputError("--design-day", f"the log has no {choice} kind of day; its kinds are "
                                    f"{', '.join(k.name for k in kinds.kinds)}") from None
            members = np.asarray(chosen.days)
            kind = chosen.name
            count = f"{len(members)} day{'s' if len(members) != 1 else ''} of the log"
            label = (f"the busiest kind of day, {kind} ({count})" if choice == "busiest"
                     else f"the {kind} kind of day ({count})")
        profile = save_hourly[members].mean(axis=0)
        questions = None if question_hourly is None else question_hourly[members].mean(axis=0)
        day_saves = float(profile.sum())
    active = profile[first:end]
    peak = float(active.max()) if hours else 0.0
    busy = tuple(int(first + h) for h in np.flatnonzero(active >= BUSY_SHARE * peak)) if peak > 0 else ()
    busy_rate = float(np.mean(profile[list(busy)])) if busy else 0.0
    mean_rate = float(active.mean()) if hours else 0.0
    busy_questions = None if questions is None else (float(np.mean(questions[list(busy)])) if busy else 0.0)
    future = None
    if not is_percentile(choice) and busy:
        # each of the kind's days is one value: its busy hours' rate (their mean is busy_rate)
        future = prediction(save_hourly[members][:, np.asarray(busy, dtype=int)].mean(axis=1))
    saves_count = max(1, int(math.ceil(_design_rate(busy_rate, future) * hours)))
    questions_count = None if busy_questions is None else max(1, int(math.ceil(busy_questions * hours)))
    dates = tuple(log.dates[int(d)] for d in members)
    return DesignDay(choice, kind, label, dates, busy, busy_rate, mean_rate, busy_questions, day_saves,
                     saves_count, questions_count, future)


def _design_rate(busy_rate: float, future: Estimate | None) -> float:
    if future is None or not math.isfinite(future.high):
        return busy_rate
    return max(future.high, busy_rate)


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


def _hourly(activity, days: int) -> np.ndarray:
    table = np.zeros((days, 24))
    np.add.at(table, (activity.day, np.minimum(activity.hour.astype(int), 23)), 1.0)
    return table


def design_model_day(fit: Fit | None, params: dict, scenarios: dict, choice: str, pooled_day: DayParams,
                     edit_share: float) -> tuple[DesignDay | None, DayParams, dict]:
    """What ``kbsim advise --config`` answers for: ``(design day or None, the model's day for it,
    the scenarios that stand for it)``.

    A fitted log (a config that replays one, or ``--trace``) gives the design day from its days
    (:func:`design_day`); a synthetic config written with one scenario per
    kind of day gives the chosen kind's scenario (a flat day: no busy hours to find); any other
    config has one day, the pooled one (``pooled_day``, the model's day for every day alike).

    Args:
        fit: the log's fit (a replayed config's or ``--trace``'s), or None for a synthetic config.
        params: the config's parameters.
        scenarios: its scenarios (one per day of a replayed log, or one per kind of day).
        choice: :func:`parse_design_day`'s value.
        pooled_day: the model's day for the whole log or config as one mean day.
        edit_share: the share of answers the agent edits, set on a kind's own day.

    Raises:
        FitInputError: a kind or percentile the config cannot give (naming ``--design-day``).
    """

    def at(day, saves: int, questions: int | None):
        update = {"saves": day.saves.model_copy(update={"count": saves})}
        if questions is not None:
            update["questions"] = day.questions.model_copy(update={"count": questions})
        return day.model_copy(update=update)

    if fit is not None:
        design = design_day(fit, choice)
        wanted = {d.isoformat() for d in design.dates}
        chosen = {name: body for name, body in scenarios.items()
                  if name[-10:] in wanted or (kind_of_scenario(name) == name == design.kind)}
        return design, at(pooled_day, design.saves_count, design.questions_count), chosen
    kinds = {name: body for name, body in scenarios.items() if kind_of_scenario(name) == name}
    if not kinds:
        if choice != "busiest":
            raise FitInputError("--design-day", "this config has one kind of day (no scenario per kind, no log to "
                                f"find them in), so no {choice} day")
        return None, pooled_day, {}
    days = {name: model_day(merged(params, body), None) for name, body in kinds.items()}
    if is_percentile(choice):
        raise FitInputError("--design-day", "a percentile needs the log's days; this config has one scenario per "
                            "kind of day (give busiest or a kind, or the log with --trace)")
    if choice == "busiest":
        name = max(days, key=lambda n: days[n].saves.count)
    elif choice in days:
        name = choice
    else:
        raise FitInputError("--design-day", f"this config has no {choice} kind of day; its kinds are "
                            f"{', '.join(days)}")
    day = days[name].model_copy(update={"edit": days[name].edit.model_copy(update={"share": edit_share})})
    rate = day.saves.count / day.day_hours
    label = (f"the busiest kind of day, {name}" if choice == "busiest" else f"the {name} kind of day")
    design = DesignDay(choice, name, label + " (a scenario of the config)", (), (), rate, rate,
                       day.questions.count / day.day_hours, float(day.saves.count), day.saves.count,
                       day.questions.count)
    return design, day, {name: kinds[name]}


def design_lines(design: DesignDay, day: DayParams) -> list[str]:
    """What the design day is, which kind and which hours drive the answer (``day``: the model's day for it)."""
    lines = [f"Design day: {design.label}; {design.day_saves:,.0f} saves on it."]
    if design.busy_hours:
        future = design.saves_busy_future
        lines.append(f"  Its busy hours, {design.hours_text()}, run at {design.saves_per_busy_hour:.1f} saves/h "
                     f"(its mean active hour: {design.saves_per_mean_hour:.1f}); the answer holds there.")
        if design.margin and future is not None:
            lines.append(f"  A future day of this kind: {future.value:.1f} [{future.low:.1f}, {future.high:.1f}] "
                         f"saves/h in those hours (95% prediction interval over its {future.seeds} days); the answer "
                         f"must hold on such a day, so it is for the upper end, {design.saves_per_design_hour:.1f} "
                         "saves/h.")
        elif future is not None and future.seeds < 2:
            lines.append("  One day of this kind: no interval for a future day, so the answer is for this day's rate, "
                         "with no margin for a busier one.")
        lines.append(f"  The model takes a whole {day.day_hours:g}-hour day at {design.saves_per_design_hour:.1f} "
                     f"saves/h: {day.saves.count:,} saves and {day.questions.count:,} questions, "
                     f"{day.corpus.articles:,} articles, Zipf s = {day.zipf_s:.3g}.")
    else:
        lines.append(f"  A flat day of {day.saves.count:,} saves and {day.questions.count:,} questions over "
                     f"{day.day_hours:g} hours, {day.corpus.articles:,} articles, Zipf s = {day.zipf_s:.3g}.")
    return lines
