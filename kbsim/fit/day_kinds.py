"""Kinds of day in a log: weekdays, weekends and peak days, each with its own rates.

A log's daily totals of saves are tested against Poisson first: with one kind of day, a
day's total varies about as much as its mean (the dispersion index, variance over mean,
is near 1; ``(days - 1) x index`` is chi-square on ``days - 1`` under Poisson). When they
vary much more, the days are grouped by a rule a reader can check by hand:

1. **Peak days**: within weekdays, and within weekend days, a day whose total is at least
   :data:`PEAK_DAY_RATIO` times its group's median *and* whose robust z-score
   (``0.6745 (total - median) / MAD``, Iglewicz and Hoaglin's modified z) is at least
   :data:`PEAK_DAY_Z` is flagged as a peak day (a release, an incident). The MAD is floored
   at a Poisson day's (``0.6745 sqrt(median)``), so that a group of near-equal days does not
   flag ordinary noise.
2. **Weekends**: the other Saturdays and Sundays (local dates) are a kind of their own when
   their mean differs from the other weekdays' by a Welch t-test at 1% *and* by at least
   :data:`WEEKEND_EFFECT` either way; otherwise they join the weekdays.

The kinds found (``weekday``, ``weekend``, ``peak``; ``ordinary`` for the non-peak days when
the log has no weekend of its own) each get their rates over their own days, with two
intervals named for what they are: the **mean day** of that kind in the log (the mean's
t-interval over its days, which narrows as days accrue) and **a future day** of that kind
(the prediction interval, which does not). With one kind of day (no over-dispersion, or
none the rule explains) the log has no kinds, and says so.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import date

import numpy as np

from kbsim.stats.intervals import Estimate, estimate, prediction

__all__ = [
    "DISPERSION_ALPHA",
    "KIND_NAMES",
    "PEAK_DAY_RATIO",
    "PEAK_DAY_Z",
    "WEEKEND_EFFECT",
    "DayKind",
    "DayKinds",
    "DispersionTest",
    "dispersion_test",
    "find_day_kinds",
    "kind_of_scenario",
]

#: Daily totals are over-dispersed when the Poisson test rejects at this level.
DISPERSION_ALPHA = 0.01
#: A peak day has at least this many times its group's median total ...
PEAK_DAY_RATIO = 1.5
#: ... and at least this robust (median and MAD) z-score.
PEAK_DAY_Z = 3.5
#: Weekends are their own kind when their mean is below 1 / this or above this times the weekdays'
#: (and a Welch test rejects at :data:`DISPERSION_ALPHA`).
WEEKEND_EFFECT = 1.25
#: The kinds of day, in the order they are listed.
KIND_NAMES = ("weekday", "ordinary", "weekend", "peak")
_DESCRIBE = {"weekday": "Monday to Friday", "ordinary": "every day not a peak day", "weekend": "Saturday and Sunday",
             "peak": "days flagged as outliers (at least {ratio:g} times their group's median, robust z >= {z:g})"}


@dataclass(frozen=True)
class DispersionTest:
    """The test of daily totals against Poisson: the index (variance over mean), the
    statistic ``(days - 1) x index``, chi-square on ``days - 1`` under one Poisson kind of day."""

    index: float
    statistic: float
    dof: int
    p_value: float

    @property
    def over_dispersed(self) -> bool:
        """Whether the test rejects one Poisson kind of day at :data:`DISPERSION_ALPHA`."""
        return bool(self.p_value < DISPERSION_ALPHA)


@dataclass(frozen=True)
class DayKind:
    """One kind of day of a log: its days and its rates over them.

    ``saves_per_day`` is the mean day of this kind in the log (its interval: where that mean
    lies); ``saves_future`` a future day of this kind (its interval: where one more such day's
    total will fall). ``hourly_saves`` and ``hourly_questions``: events per hour at each local
    hour (24 values), mean over the kind's days.
    """

    name: str
    days: tuple[int, ...]
    dates: tuple[date, ...]
    saves_per_day: Estimate
    saves_future: Estimate
    questions_per_day: Estimate | None
    questions_future: Estimate | None
    hourly_saves: np.ndarray
    hourly_questions: np.ndarray | None

    @property
    def description(self) -> str:
        """What days the kind holds, in words."""
        return _DESCRIBE[self.name].format(ratio=PEAK_DAY_RATIO, z=PEAK_DAY_Z)


@dataclass(frozen=True)
class DayKinds:
    """What :func:`find_day_kinds` found: the dispersion test and the kinds (empty: one kind of day)."""

    test: DispersionTest | None
    kinds: tuple[DayKind, ...]
    reason: str

    @property
    def found(self) -> bool:
        """Whether the log has more than one kind of day."""
        return len(self.kinds) > 1

    def kind(self, name: str) -> DayKind:
        """The kind named ``name`` (KeyError naming the kinds there are)."""
        for kind in self.kinds:
            if kind.name == name:
                return kind
        raise KeyError(f"{name!r}: the log's kinds of day are {', '.join(k.name for k in self.kinds) or 'none'}")

    def busiest(self) -> DayKind:
        """The kind with the most saves on its mean day."""
        return max(self.kinds, key=lambda kind: kind.saves_per_day.value)

    def kind_of_day(self, day: int) -> str | None:
        """The name of the kind day ``day`` belongs to (None without kinds)."""
        for kind in self.kinds:
            if day in kind.days:
                return kind.name
        return None


def dispersion_test(totals) -> DispersionTest | None:
    """Test daily ``totals`` against Poisson (None with fewer than 3 days or no events)."""
    from scipy.stats import chi2

    y = np.asarray(totals, dtype=float)
    if len(y) < 3 or y.mean() <= 0:
        return None
    index = float(y.var(ddof=1) / y.mean())
    statistic = (len(y) - 1) * index
    return DispersionTest(index, statistic, len(y) - 1, float(chi2.sf(statistic, len(y) - 1)))


def _peaks(totals: np.ndarray, members: np.ndarray) -> np.ndarray:
    """The members of one calendar group flagged as peak days (see the module doc)."""
    if len(members) < 3:
        return np.array([], dtype=int)
    values = totals[members]
    median = float(np.median(values))
    mad = max(float(np.median(np.abs(values - median))), 0.6745 * math.sqrt(max(median, 1.0)))
    z = 0.6745 * (values - median) / mad
    return members[(values >= PEAK_DAY_RATIO * median) & (z >= PEAK_DAY_Z)]


def _weekend_apart(totals: np.ndarray, weekdays: np.ndarray, weekends: np.ndarray) -> bool:
    if len(weekdays) < 2 or len(weekends) < 2:
        return False
    from scipy.stats import ttest_ind

    a, b = totals[weekdays], totals[weekends]
    if a.mean() <= 0:
        return False
    ratio = b.mean() / a.mean()
    if 1 / WEEKEND_EFFECT < ratio < WEEKEND_EFFECT:
        return False
    if np.all(a == a[0]) and np.all(b == b[0]):
        return True
    return bool(ttest_ind(a, b, equal_var=False).pvalue < DISPERSION_ALPHA)


def find_day_kinds(dates, save_hourly: np.ndarray, question_hourly: np.ndarray | None = None) -> DayKinds:
    """The kinds of day of a log whose days are ``dates`` (local), from its saves per day and
    hour (``save_hourly``, days x 24) and questions (the same, or None): see the module doc.
    """
    dates = tuple(dates)
    totals = save_hourly.sum(axis=1)
    test = dispersion_test(totals)
    if test is None:
        return DayKinds(None, (), "fewer than 3 days: no test of kinds of day")
    if not test.over_dispersed:
        return DayKinds(test, (), f"daily totals vary as a Poisson day's would (index {test.index:.2f}, "
                        f"p = {_p(test.p_value)}): one kind of day")
    weekend = np.array([d.weekday() >= 5 for d in dates])
    days = np.arange(len(dates))
    peaks = np.concatenate([_peaks(totals, days[~weekend]), _peaks(totals, days[weekend])])
    is_peak = np.isin(days, peaks)
    weekdays, weekends = days[~weekend & ~is_peak], days[weekend & ~is_peak]
    groups: list[tuple[str, np.ndarray]]
    if _weekend_apart(totals, weekdays, weekends):
        groups = [("weekday", weekdays), ("weekend", weekends)]
    else:
        groups = [("ordinary", days[~is_peak])]
    if is_peak.any():
        groups.append(("peak", days[is_peak]))
    groups = [(name, members) for name, members in groups if len(members)]
    if len(groups) < 2:
        return DayKinds(test, (), f"daily totals vary more than a Poisson day's (index {test.index:.1f}, "
                        f"p = {_p(test.p_value)}), but no weekend and no peak day explains it: one kind of day, "
                        "its spread taken as day-to-day noise")
    kinds = tuple(_kind(name, members, dates, save_hourly, question_hourly) for name, members in groups)
    named = "; ".join(f"{k.name}: {len(k.days)} day{'s' if len(k.days) != 1 else ''}" for k in kinds)
    return DayKinds(test, kinds, f"daily totals vary {test.index:.1f} times as much as a Poisson day's "
                    f"(p = {_p(test.p_value)}): {named}")


def _kind(name: str, members: np.ndarray, dates, save_hourly: np.ndarray,
          question_hourly: np.ndarray | None) -> DayKind:
    saves = save_hourly[members].sum(axis=1)
    questions = None if question_hourly is None else question_hourly[members].sum(axis=1)
    return DayKind(
        name=name,
        days=tuple(int(d) for d in members),
        dates=tuple(dates[int(d)] for d in members),
        saves_per_day=_over_days(estimate("mean", saves)),
        saves_future=prediction(saves),
        questions_per_day=None if questions is None else _over_days(estimate("mean", questions)),
        questions_future=None if questions is None else prediction(questions),
        hourly_saves=save_hourly[members].mean(axis=0),
        hourly_questions=None if question_hourly is None else question_hourly[members].mean(axis=0),
    )


def kind_of_scenario(name: str) -> str | None:
    """The kind of day a fitted config's scenario stands for (``weekend``, ``peak-2025-03-13``),
    or None for a scenario that names none."""
    head = name.split("-", 1)[0]
    return head if head in KIND_NAMES else None


def _over_days(result: Estimate) -> Estimate:
    from dataclasses import replace

    return replace(result, method=result.method.replace("seeds", "days"))


def _p(value: float) -> str:
    return "< 0.001" if value < 0.001 else f"{value:.3f}"
