"""Estimates of a day from a log, each with its 95% interval over the log's days.

The unit of replication is the day, as the seed is the study's (:mod:`kbsim.stats.intervals`):
saves within a day are not independent trials (bursts, a busy morning), days are.

- sums over days (saves and questions per day, each hour's rate, the save mix, the
  share of saves in bursts, the dispersion index) take the package's own estimators
  (:func:`kbsim.stats.intervals.estimate`: a mean, or a ratio of sums, linearised);
- fitted quantities (the Zipf exponents, the rank correlation, the busiest hour's
  share) take the jackknife over days (:func:`kbsim.stats.intervals.jackknife`).

With one day there is no interval (the spread between days is unknown) and the fit says so.

:func:`fit_log` also judges what the analytic model (:mod:`kbsim.model.analytic`) needs:
saves that are not bursty, a flat profile over the day, a Zipf law that fits, and the
same ranking for saves and questions. What it finds decides what
:mod:`kbsim.fit.fitted_config` writes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from kbsim.fit import popularity as pop
from kbsim.fit.day_kinds import DayKinds, find_day_kinds
from kbsim.fit.logs import SAVE_KINDS, Activity, Log
from kbsim.stats.intervals import Contrast, Estimate, contrast, estimate, jackknife, prediction

__all__ = [
    "BURST_RATIO",
    "BURST_WINDOW_S",
    "PEAK_RATIO",
    "Burstiness",
    "DaySums",
    "Fit",
    "Popularity",
    "Profile",
    "day_sums",
    "fit_log",
    "max_articles",
]

#: Saves within this many seconds of a save of the same article belong to one burst.
BURST_WINDOW_S = 300.0
#: Saves are bursty when the share in bursts is at least this many times a Poisson day's
#: (and its interval above 1).
BURST_RATIO = 1.5
#: A profile is far from flat when its busiest hour has at least this many times the mean
#: hourly rate of the day (and a test of a flat profile rejects at 1%).
PEAK_RATIO = 1.5
#: Shuffles of each day's articles over its save times that give the Poisson reference.
SHUFFLES = 10
#: Logs drawn for each goodness-of-fit test.
REPLICATES = 199
#: Rows worked out at a time where a whole column of temporaries is not needed.
_ROWS_AT_ONCE = 1 << 20


def max_articles(replicates: int = REPLICATES, memory_bytes: int | None = None) -> int:
    """The most articles a fit holds in half of ``memory_bytes`` (default: this machine's
    memory): the goodness-of-fit test keeps ``replicates`` logs of every article's count,
    four arrays of 8-byte numbers each."""
    import os

    if memory_bytes is None:
        try:
            memory_bytes = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        except (ValueError, OSError, AttributeError):
            memory_bytes = 8 << 30
    return max(3, int(memory_bytes / 2 // (4 * 8 * (replicates + 1))))


def _over_days(result: Estimate) -> Estimate:
    return replace(result, method=result.method.replace("seeds", "days"))


def _mean(values) -> Estimate:
    return _over_days(estimate("mean", values))


def _share(successes, trials) -> Estimate:
    return _over_days(estimate("proportion", successes, trials))


def _ratio(numerators, denominators) -> Estimate:
    return _over_days(estimate("ratio", numerators, denominators))


@dataclass(frozen=True)
class Popularity:
    """The popularity of saves or of questions.

    ``exponent`` is the estimate :func:`fit_log` uses: the maximum-likelihood one
    (``mle``) for independent events, the cross-day moment one (``moment``) for bursty
    ones (:mod:`kbsim.fit.popularity`); ``method`` says which. ``counts`` are the events
    per article of :attr:`Log.articles`.
    """

    what: str
    exponent: Estimate
    chosen: str
    mle: Estimate
    moment: Estimate | None
    gof: pop.GoodnessOfFit
    counts: np.ndarray
    #: the chosen estimate without each day in turn (empty with too few days)
    leave_one_out: tuple[float, ...] = ()

    @property
    def fits(self) -> bool:
        """Whether the goodness-of-fit test keeps the fitted Zipf law (p >= 0.05)."""
        return self.gof.fits


@dataclass(frozen=True)
class Burstiness:
    """How clustered in time the events of one article are, against a Poisson day.

    ``share``: events following an event of the same article within the burst window
    (a ratio over days); ``poisson_share``: the same for the day's articles shuffled over
    its times (what independent events with the same profile and popularity give);
    ``ratio``: the two paired by day. ``dispersion``: Pearson's chi-square over its degrees
    of freedom in each day's article-by-hour table (1 for a Poisson day, whatever the
    popularity and the profile); ``poisson_dispersion``: the shuffled days'.
    """

    what: str
    window_s: float
    share: Estimate
    poisson_share: Estimate
    ratio: Contrast
    dispersion: Estimate
    poisson_dispersion: Estimate

    @property
    def bursty(self) -> bool:
        """At least :data:`BURST_RATIO` times a Poisson day's share, the paired interval above 1
        (with one day, the ratio alone)."""
        if math.isnan(self.ratio.value):
            return False
        low = self.ratio.low if not math.isnan(self.ratio.low) else self.ratio.value
        return self.ratio.value >= BURST_RATIO and low > 1.0


@dataclass(frozen=True)
class Profile:
    """Hourly rates of saves or questions (events per hour at each local hour, over days),
    and whether they are flat over the day's active hours.

    ``statistic``, ``p_value`` and ``test_method``: the test of the hypothesis that every
    active hour has the same rate; ``peak``: the busiest active hour's rate over the mean
    active hour's.
    """

    what: str
    hourly: pd.DataFrame
    window: tuple[int, int]
    statistic: float
    p_value: float
    test_method: str
    peak: Estimate

    @property
    def far_from_flat(self) -> bool:
        """A flat profile rejected at 1%, and a busiest hour at :data:`PEAK_RATIO` times the mean or more."""
        return bool(self.p_value < 0.01 and self.peak.value >= PEAK_RATIO)


@dataclass(frozen=True)
class Fit:
    """Everything :func:`fit_log` estimated from a log (see the module doc)."""

    log: Log
    window_s: float
    saves_per_day: Estimate
    questions_per_day: Estimate | None
    profiles: dict[str, Profile]
    popularity: dict[str, Popularity]
    rank_correlation: Estimate | None
    mix: dict[str, Estimate]
    burstiness: dict[str, Burstiness]
    notes: tuple[str, ...] = field(default=())
    #: a future day's saves (and questions): the prediction interval, where the interval of
    #: ``saves_per_day`` is the mean day's (:func:`kbsim.stats.intervals.prediction`)
    saves_future: Estimate | None = None
    questions_future: Estimate | None = None
    #: the log's kinds of day (:mod:`kbsim.fit.day_kinds`; ``found`` False: one kind)
    day_kinds: DayKinds | None = None

    @property
    def window(self) -> tuple[int, int]:
        """The hours of the day the log covers: ``(first hour, end hour)``, local time."""
        return self.log.window()

    @property
    def day_hours(self) -> float:
        """The length of the day the log covers, in hours (its window)."""
        first, end = self.window
        return float(end - first)

    def replay_reasons(self) -> list[str]:
        """Why a synthetic day cannot stand for this log (each a phrase; empty: it can)."""
        reasons = []
        for what, burst in self.burstiness.items():
            if burst.bursty:
                reasons.append(
                    f"{what} come in bursts: {_pct(burst.share.value)} follow one of the same article within "
                    f"{_minutes(self.window_s)}, {burst.ratio.value:.1f} times a Poisson day's "
                    f"{_pct(burst.poisson_share.value)}")
        for what, profile in self.profiles.items():
            if profile.far_from_flat:
                reasons.append(f"the {what}' profile is far from flat: the busiest hour has {profile.peak.value:.1f} "
                               f"times the mean hour's rate (test of a flat profile: p = {_p(profile.p_value)})")
        for what, popularity in self.popularity.items():
            if not popularity.fits:
                reasons.append(f"a Zipf law does not fit the {what}' popularity (p = {_p(popularity.gof.p_value)}): "
                               "use the empirical popularity")
        saves, questions = self.popularity.get("saves"), self.popularity.get("questions")
        if saves is not None and questions is not None and _apart(saves.exponent, questions.exponent):
            reasons.append(f"saves and questions have different Zipf exponents ({saves.exponent.value:.2f} and "
                           f"{questions.exponent.value:.2f}); a day takes one")
        return reasons

    def model_gaps(self) -> list[str]:
        """What the analytic model assumes that this log does not do (empty: it holds)."""
        gaps = self.replay_reasons()
        rho = self.rank_correlation
        if rho is not None and not math.isnan(rho.value):
            high = rho.high if not math.isnan(rho.high) else rho.value
            if high < 0.95:
                gaps.append(f"saves follow the questions' ranking only in part (rank correlation {rho.value:.2f}); "
                            "the model takes them to share it")
        return gaps

    def empirical_popularity(self) -> pd.DataFrame:
        """Every article the log names: its saves and questions, their shares and ranks,
        most asked (else most saved) first."""
        saves = self.popularity["saves"].counts
        questions = self.popularity["questions"].counts if "questions" in self.popularity else np.zeros_like(saves)
        frame = pd.DataFrame({"article": list(self.log.articles), "saves": saves.astype(int),
                              "questions": questions.astype(int)})
        frame["save_share"] = frame["saves"] / max(1, frame["saves"].sum())
        frame["question_share"] = frame["questions"] / max(1, frame["questions"].sum())
        frame = frame.sort_values(["questions", "saves"], ascending=False, kind="stable").reset_index(drop=True)
        return frame

    def rank_frequency(self) -> pd.DataFrame:
        """The rank-frequency curves for the figure: per ``what`` and rank (1 = the most counted),
        the ``observed`` count, the fitted law's ``expected`` sorted count with its 5th to 95th
        percentile (``low``, ``high``: what logs drawn from the law give), and the law itself,
        ``law = N w_r``."""
        rows = []
        for what, p in self.popularity.items():
            n = self.log.n_articles
            observed = np.zeros(n)
            observed[: len(p.counts)] = p.counts
            observed = np.sort(observed)[::-1]
            law = observed.sum() * pop.zipf_weights(n, p.exponent.value)
            rows.append(pd.DataFrame({
                "what": what, "rank": np.arange(1, n + 1), "observed": observed, "expected": p.gof.expected,
                "low": p.gof.low, "high": p.gof.high, "law": law, "exponent": p.exponent.value,
                "p_value": p.gof.p_value, "estimator": p.chosen}))
        return pd.concat(rows, ignore_index=True)

    def hourly_profile(self) -> pd.DataFrame:
        """Hourly rates (events per hour, mean over days, with 95% intervals) of saves and
        questions, at each local hour of the log's active window."""
        first, end = self.window
        frames = []
        for what, prof in self.profiles.items():
            rows = prof.hourly[(prof.hourly["hour"] >= first) & (prof.hourly["hour"] < end)].copy()
            rows.insert(0, "what", what)
            frames.append(rows)
        return pd.concat(frames, ignore_index=True)

    def to_dict(self) -> dict:
        """The fit as plain JSON-able values (``kbsim fit --json``)."""
        log = self.log
        out: dict[str, Any] = {
            "log": {
                "saves": log.origin.get("saves"), "questions": log.origin.get("questions") or None,
                "days": log.days, "dates": [d.isoformat() for d in log.dates], "timezone": log.timezone,
                "articles": log.n_articles, "articles_from": log.n_source, "articles_named": len(log.articles),
                "saves_total": len(log.saves), "questions_total": 0 if log.questions is None else len(log.questions),
                "active_hours": list(self.window), "notes": list(log.notes) + list(self.notes),
            },
            "unit_of_replication": "day",
            "saves_per_day": _est(self.saves_per_day),
            "questions_per_day": None if self.questions_per_day is None else _est(self.questions_per_day),
            "saves_on_a_future_day": None if self.saves_future is None else _est(self.saves_future),
            "questions_on_a_future_day": None if self.questions_future is None else _est(self.questions_future),
            "day_kinds": self._day_kinds_dict(),
            "save_mix": {kind: _est(value) for kind, value in self.mix.items()},
            "popularity": {},
            "rank_correlation": None if self.rank_correlation is None else _est(self.rank_correlation),
            "burstiness": {},
            "profile": {},
            "model_gaps": self.model_gaps(),
            "replay": bool(self.replay_reasons()),
        }
        for what, p in self.popularity.items():
            out["popularity"][what] = {
                "zipf_exponent": _est(p.exponent), "estimator": p.chosen, "mle": _est(p.mle),
                "moment": None if p.moment is None else _est(p.moment),
                "goodness_of_fit": {"statistic": _finite(p.gof.statistic), "p_value": _finite(p.gof.p_value),
                                    "method": p.gof.method, "fits": p.fits},
                "empirical_top": [
                    {"article": name, "count": int(count)}
                    for name, count in sorted(zip(log.articles, p.counts, strict=True), key=lambda x: -x[1])[:20]
                ],
            }
        for what, b in self.burstiness.items():
            out["burstiness"][what] = {
                "window_s": b.window_s, "share_in_bursts": _est(b.share), "poisson_share": _est(b.poisson_share),
                "ratio": {"value": _finite(b.ratio.value), "low": _finite(b.ratio.low), "high": _finite(b.ratio.high),
                          "method": b.ratio.method},
                "dispersion_index": _est(b.dispersion), "poisson_dispersion_index": _est(b.poisson_dispersion),
                "bursty": b.bursty,
            }
        for what, prof in self.profiles.items():
            out["profile"][what] = {
                "hourly": [{k: _finite(v) for k, v in row.items()} for row in prof.hourly.to_dict("records")],
                "flat_test": {"statistic": _finite(prof.statistic), "p_value": _finite(prof.p_value),
                              "method": prof.test_method},
                "peak_ratio": _est(prof.peak), "far_from_flat": prof.far_from_flat,
            }
        return out

    def _day_kinds_dict(self) -> dict | None:
        found = self.day_kinds
        if found is None:
            return None
        test = found.test
        first, end = self.window
        return {
            "dispersion_test": None if test is None else {
                "index": _finite(test.index), "statistic": _finite(test.statistic), "dof": test.dof,
                "p_value": _finite(test.p_value), "over_dispersed": test.over_dispersed,
                "method": "daily saves against Poisson: (days - 1) x variance / mean, chi-square(days - 1)"},
            "found": found.found,
            "reason": found.reason,
            "kinds": [{
                "name": kind.name, "description": kind.description,
                "dates": [d.isoformat() for d in kind.dates],
                "saves_per_day": _est(kind.saves_per_day), "saves_on_a_future_day": _est(kind.saves_future),
                "questions_per_day": None if kind.questions_per_day is None else _est(kind.questions_per_day),
                "questions_on_a_future_day": None if kind.questions_future is None else _est(kind.questions_future),
                "saves_per_hour": {f"{h:02d}": _finite(float(kind.hourly_saves[h])) for h in range(first, end)},
            } for kind in found.kinds],
        }

    def day_kind_lines(self) -> list[str]:
        """The kinds of day as text: the dispersion test, then each kind's rates (empty: no test)."""
        found = self.day_kinds
        if found is None:
            return []
        out = [f"Kinds of day: {found.reason}."]
        for kind in found.kinds:
            days = ", ".join(d.isoformat() for d in kind.dates[:4]) + (", ..." if len(kind.dates) > 4 else "")
            out.append(f"  {kind.name} ({kind.description}; {len(kind.days)} day{'s' if len(kind.days) != 1 else ''}:"
                       f" {days})")
            out.append(_line("    saves on its mean day", kind.saves_per_day, "count"))
            out.append(_line("    saves on a future such day", kind.saves_future, "count"))
            if kind.questions_per_day is not None and kind.questions_future is not None:
                out.append(_line("    questions on its mean day", kind.questions_per_day, "count"))
                out.append(_line("    questions on a future such day", kind.questions_future, "count"))
        return out

    def lines(self, notes: bool = True) -> list[str]:
        """The estimates as text, one quantity a line, with the interval and its method; then,
        with ``notes``, the notes on the log (days without activity, ...)."""
        log = self.log
        first, end = self.window
        lines = [
            f"Log: {len(log.saves):,} saves"
            + ("" if log.questions is None else f" and {len(log.questions):,} questions")
            + f" over {log.days} day{'s' if log.days != 1 else ''} ({log.dates[0]} to {log.dates[-1]}, "
            f"{log.timezone}); active {first:02d}:00 to {end:02d}:00; {log.n_articles:,} articles "
            f"(from {log.n_source.split(' (')[0]}), {len(log.articles):,} of them named.",
            "Estimates with 95% intervals; the unit of replication is the day"
            + (" (one day: no interval)." if log.days < 2 else "."),
        ]
        lines.append(_line("saves per day (the log's mean day)", self.saves_per_day, "count"))
        if self.saves_future is not None:
            lines.append(_line("saves on a future day", self.saves_future, "count"))
        if self.questions_per_day is not None:
            lines.append(_line("questions per day (the log's mean day)", self.questions_per_day, "count"))
        if self.questions_future is not None:
            lines.append(_line("questions on a future day", self.questions_future, "count"))
        for kind, value in self.mix.items():
            lines.append(_line(f"save mix: {kind}", value, "share"))
        for what, p in self.popularity.items():
            lines.append(_line(f"Zipf exponent of {what}", p.exponent, "exponent"))
            if p.chosen == "moment":
                lines.append(f"  ({what} are bursty: the cross-day moment; the likelihood, which takes them to be "
                             f"independent, gives {p.mle.value:.3f})")
            verdict = "fits" if p.fits else "does NOT fit: use the empirical popularity (the config replays the log)"
            lines.append(f"  goodness of fit: statistic {p.gof.statistic:.2f}, p = {_p(p.gof.p_value)}; "
                         f"the law {verdict}")
        if self.rank_correlation is not None:
            lines.append(_line("rank correlation, saves to questions", self.rank_correlation, "exponent"))
        for what, b in self.burstiness.items():
            lines.append(_line(f"{what} within {_minutes(b.window_s)} of one of the same article", b.share, "share"))
            if math.isnan(b.ratio.value):
                lines.append(f"  a Poisson day gives {_pct(b.poisson_share.value)}; no ratio: on the shuffled days no "
                             f"{what[:-1]} follows one of the same article within {_minutes(b.window_s)}")
            else:
                lines.append(f"  a Poisson day gives {_pct(b.poisson_share.value)}; ratio {_value(b.ratio.value)} "
                             f"{_bracket(b.ratio.low, b.ratio.high)}" + (": BURSTY" if b.bursty else ""))
            label = f"dispersion index of {what} per article-hour"
            if math.isnan(b.dispersion.value):
                lines.append(f"{label:<46} cannot be estimated: {_no_table(self.log, what)}")
            else:
                lines.append(_line(label, b.dispersion, "exponent")
                             + f" (Poisson: {_value(b.poisson_dispersion.value)})")
        for what, prof in self.profiles.items():
            active = prof.hourly[(prof.hourly["hour"] >= first) & (prof.hourly["hour"] < end)]
            rates = ", ".join(f"{int(h):02d} {r:.3g}" for h, r in zip(active["hour"], active["rate"], strict=True))
            lines.append(f"{what} per hour (local hour, mean over days): {rates}")
            peak = "n/a (no event in the active hours)" if math.isnan(prof.peak.value) else f"{prof.peak.value:.2f}"
            lines.append(f"  busiest hour / mean hour {peak} {_bracket(prof.peak.low, prof.peak.high)}; "
                         f"flat profile: p = {_p(prof.p_value)} ({prof.test_method})"
                         + ("; FAR FROM FLAT" if prof.far_from_flat else ""))
        lines += self.day_kind_lines()
        gaps = self.model_gaps()
        if gaps:
            lines.append("The analytic model's assumptions do not hold for this log:")
            lines += [f"  - {gap}" for gap in gaps]
        else:
            lines.append("The analytic model's assumptions hold for this log (Poisson saves, flat profile, a Zipf "
                         "law, one ranking).")
        if notes:
            lines += [f"Note: {note}" for note in (*log.notes, *self.notes)]
        return lines


def _no_table(log: Log, what: str) -> str:
    """Why no day of ``what`` has an article-by-hour table to test (its dispersion index)."""
    activity = log.saves if what == "saves" else log.questions
    articles = len(np.unique(activity.article)) if activity is not None else 0
    if articles < 2:
        return f"every one of the {what} is of one article, so there is no article to compare with another"
    return (f"no day has {what} of two articles in two different hours (one active hour, or one article a day), "
            "so there is no article-by-hour table")


def _apart(a: Estimate, b: Estimate) -> bool:
    if any(math.isnan(x) for x in (a.low, a.high, b.low, b.high)):
        return False
    return a.high < b.low or b.high < a.low


def _finite(value):
    if isinstance(value, (float, np.floating)):
        value = float(value)
        return None if not math.isfinite(value) else value
    if isinstance(value, np.integer):
        return int(value)
    return value


def _est(value: Estimate) -> dict:
    return {"value": _finite(value.value), "low": _finite(value.low), "high": _finite(value.high),
            "days": value.seeds, "method": value.method}


def _pct(value: float) -> str:
    return "n/a" if math.isnan(value) else f"{100 * value:.1f}%"


def _p(value: float) -> str:
    if math.isnan(value):
        return "n/a"
    return "< 0.001" if value < 0.001 else f"{value:.3f}"


def _value(value: float) -> str:
    return "n/a" if math.isnan(value) else f"{value:.3g}"


def _minutes(seconds: float) -> str:
    return f"{seconds / 60:g} min"


def _bracket(low: float, high: float, share: bool = False) -> str:
    if math.isnan(low) or math.isnan(high):
        return "[no interval]"
    if share:
        return f"[{100 * low:.1f}%, {100 * high:.1f}%]"
    return f"[{low:.3g}, {high:.3g}]"


def _line(label: str, value: Estimate, unit: str) -> str:
    if math.isnan(value.value):  # never a bare nan: what a caller can say more precisely, it says itself
        return f"{label:<46} cannot be estimated from this log"
    if unit == "share":
        shown = f"{_pct(value.value)} {_bracket(value.low, value.high, share=True)}"
    elif unit == "count":
        shown = f"{value.value:,.1f} {_bracket(value.low, value.high)}"
    elif unit == "exponent":
        shown = f"{value.value:.3f} {_bracket(value.low, value.high)}"
    else:
        shown = f"{_value(value.value)} {_bracket(value.low, value.high)}"
    return f"{label:<46} {shown:<28} {value.method}"


# -- the per-day statistics ---------------------------------------------------------------------


@dataclass(frozen=True)
class DaySums:
    """One activity's per-day sums, from which every estimate and its leave-one-out are cut
    (:func:`day_sums`)."""

    totals: np.ndarray  # events per day
    counts: np.ndarray  # days x named articles
    hourly: np.ndarray  # days x 24 hours
    follows: np.ndarray  # per day: events following one of the same article within the window
    poisson_follows: np.ndarray  # the same, expected over shuffles
    chi_square: np.ndarray  # per day: Pearson chi-square of the article-by-hour table
    dof: np.ndarray  # its degrees of freedom
    poisson_chi_square: np.ndarray  # the shuffled days' mean
    run_sizes: np.ndarray  # sizes of the runs of events of one article (bursts; 1 for a lone event)
    kinds: np.ndarray | None  # days x save kinds


def day_sums(activity: Activity, days: int, articles: int, window_s: float, seed: int = 0) -> DaySums:
    """The per-day sums of ``activity`` over ``days`` and ``articles`` (named ones), its bursts
    within ``window_s``, and the Poisson reference from :data:`SHUFFLES` shuffles per day
    (seeded: the same log, the same reference)."""
    totals = np.bincount(activity.day, minlength=days).astype(float)
    counts = activity.counts(articles, days)
    hour_bin = np.empty(len(activity), dtype=np.int8)  # a million rows at a time: no column of temporaries
    follows_each, run_sizes = pop.bursts(activity.day, activity.time_s, activity.article, window_s)
    follows = np.zeros(days)
    for at in range(0, len(activity), _ROWS_AT_ONCE):
        block = slice(at, at + _ROWS_AT_ONCE)
        hour_bin[block] = np.minimum(activity.hour[block].astype(int), 23)
        follows += np.bincount(activity.day[block], weights=follows_each[block], minlength=days)  # whole numbers
    del follows_each
    hourly = np.zeros((days, 24))
    np.add.at(hourly, (activity.day, hour_bin), 1.0)
    rng = np.random.default_rng(seed)
    poisson_follows = np.zeros(days)
    chi_square, dof, poisson_chi = np.zeros(days), np.zeros(days), np.zeros(days)
    in_order = len(activity.time_s) < 2 or bool(np.all(activity.time_s[1:] >= activity.time_s[:-1]))
    for d in range(days):
        mine = np.flatnonzero(activity.day == d)
        if not len(mine):
            continue
        time_s, article, hours = activity.time_s[mine], activity.article[mine], hour_bin[mine]
        # a shuffle moves the articles, not which articles and hours the day has: the table's rows
        # and columns are found once, and a shuffle of the articles is the same shuffle of their rows
        _, rows = np.unique(article, return_inverse=True)
        _, cols = np.unique(hours, return_inverse=True)
        chi_square[d], dof[d] = _pearson_coded(rows, cols)
        shuffled_follows, shuffled_chi = 0.0, 0.0
        zeros = np.zeros(len(mine), dtype=int)
        limits = None if activity.kind is None else _unpublish_limits(rows, activity.kind[mine], time_s)
        for _ in range(SHUFFLES):
            shuffled = rng.permutation(rows) if limits is None else _shuffle_within(rows, limits, rng)
            if in_order:  # times already in order: sorting by article alone, stably, keeps them so
                shuffled_follows += _follows_in_order(time_s, shuffled, window_s)
            else:
                shuffled_follows += pop.bursts(zeros, time_s, shuffled, window_s)[0].sum()
            shuffled_chi += _pearson_coded(shuffled, cols)[0]
        poisson_follows[d] = shuffled_follows / SHUFFLES
        poisson_chi[d] = shuffled_chi / SHUFFLES
    kinds = None
    if activity.kind is not None:
        kinds = np.zeros((days, len(SAVE_KINDS)))
        np.add.at(kinds, (activity.day, activity.kind), 1.0)
    return DaySums(totals, counts, hourly, follows, poisson_follows, chi_square, dof, poisson_chi, run_sizes, kinds)


_UNPUBLISH = SAVE_KINDS.index("unpublish")


def _unpublish_limits(rows: np.ndarray, kinds: np.ndarray, time_s: np.ndarray) -> np.ndarray | None:
    """For one day's events (``rows``: article codes), ``[their places in time order, limits]``: the
    place (in time order) before which each event must stay in a shuffle: its article's unpublish
    when that unpublish ends the article's day (no save of it follows) and the article has saves
    before it; -1 for that unpublish itself (it stays where it is); ``len(rows)`` for the others.
    None: no event is limited.

    A shuffle that moved saves past their article's unpublish would count, as a Poisson day, a day
    the log cannot have had: an article unpublished at noon is saved only in the morning, so its saves
    are closer together than saves spread over the whole day, which is no burst.
    """
    place = np.argsort(time_s, kind="stable")
    ordered_rows, ordered_kinds = rows[place], kinds[place]
    last = np.full(int(rows.max()) + 1, -1)
    last[ordered_rows] = np.arange(len(ordered_rows))  # the last assignment of each code wins: its last event
    count = np.bincount(ordered_rows, minlength=len(last))
    ends = (last >= 0) & (count >= 2)
    ends[ends] = ordered_kinds[last[ends]] == _UNPUBLISH
    if not ends.any():
        return None
    limit_ordered = np.where(ends[ordered_rows], last[ordered_rows], len(rows))
    fixed = ends[ordered_rows] & (np.arange(len(rows)) == last[ordered_rows])
    limit_ordered[fixed] = -1
    return np.stack([place, limit_ordered])  # the shuffle works in time order


def _shuffle_within(rows: np.ndarray, limits: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A uniformly random reassignment of ``rows`` (article codes) to the day's events that keeps
    each article's terminal unpublish where it is and every other save of that article before it
    (:func:`_unpublish_limits`): the most limited saves choose first, each uniformly among the places
    still free before its limit (the places allowed are nested, so every valid assignment is equally
    likely), and the unlimited ones take the rest in a random order.

    The saves choose in order of their limits, so every place taken before a save chooses lies
    below that save's limit: the i-th to choose has the free places below its limit less i to
    choose from, known before any draw. The draws are then one call (the same numbers as one call
    a save) and the places they name are found by :func:`_take_in_turn`, in time that grows as
    ``m log^2 m`` for ``m`` limited saves (a save at a time, removing its place from the free
    ones, took ``m`` times the day's events).
    """
    place, limit = limits
    ordered = rows[place]
    out = ordered.copy()
    free = np.flatnonzero(limit >= 0)  # places in time order not held by a fixed unpublish
    limited = np.flatnonzero((limit >= 0) & (limit < len(rows)))
    limited = limited[np.argsort(limit[limited], kind="stable")]
    taken = np.zeros(0, dtype=np.int64)
    if len(limited):
        choices = np.searchsorted(free, limit[limited]) - np.arange(len(limited))
        taken = _take_in_turn(rng.integers(choices))
        out[free[taken]] = ordered[limited]
    available = np.delete(free, taken)
    rest = np.flatnonzero(limit >= len(rows))
    out[available] = ordered[rest][rng.permutation(len(rest))]
    result = np.empty_like(rows)
    result[place] = out
    return result


def _take_in_turn(picks: np.ndarray) -> np.ndarray:
    """Where each of a sequence of picks lands among ``0, 1, 2, ...`` when the i-th takes the
    ``picks[i]``-th (from 0) of the numbers the i before it left.

    Pairs of neighbouring runs of picks are merged, the runs doubling at each level: the picks of
    the right run, placed among what the left run left, move up by how many numbers the left run
    took at or below where they land (for the left run's taken numbers ``g_0 < g_1 < ...``, the
    ``y``-th number left is ``y`` plus how many ``g_k - k <= y``). Every run at a level is merged
    at once, keyed by its pair in the high bits.
    """
    where = picks.astype(np.int64)
    if len(where) and (int(where.max()) >= 1 << 31 or len(where) >= 1 << 31):
        raise ValueError("too many events in one day to shuffle")
    index = np.arange(len(where))
    size = 1
    while size < len(where):
        pair = index // (2 * size)
        right = (index // size) % 2 == 1
        left = np.sort((pair[~right] << 32) | where[~right])
        left_pair = left >> 32
        rank = np.arange(len(left)) - np.searchsorted(left_pair, left_pair)
        below = (left_pair << 32) | ((left & 0xFFFFFFFF) - rank)
        right_pair = pair[right]
        where[right] += np.searchsorted(below, (right_pair << 32) | where[right], side="right") \
            - np.searchsorted(left_pair, right_pair)
        size *= 2
    return where


def _follows_in_order(time_s: np.ndarray, article: np.ndarray, window_s: float) -> int:
    """How many events follow one of the same article within ``window_s`` (times in order): what
    :func:`kbsim.fit.popularity.bursts` counts, for one day."""
    order = pop.stable_order(article)
    a, t = article[order], time_s[order]
    return int(np.count_nonzero((a[1:] == a[:-1]) & (t[1:] - t[:-1] <= window_s)))


def _pearson_coded(rows: np.ndarray, cols: np.ndarray) -> tuple[float, float]:
    """:func:`_pearson` of an article-by-hour table whose rows and columns are coded from 0, each used."""
    r, c = int(rows.max()) + 1, int(cols.max()) + 1
    if r < 2 or c < 2:
        return 0.0, 0.0
    table = np.bincount(rows * c + cols, minlength=r * c).astype(float).reshape(r, c)
    expected = np.outer(table.sum(axis=1), table.sum(axis=0)) / table.sum()
    return float(((table - expected) ** 2 / expected).sum()), float((r - 1) * (c - 1))


# -- the fit ------------------------------------------------------------------------------------


def fit_log(log: Log, *, window_s: float = BURST_WINDOW_S, replicates: int = REPLICATES) -> Fit:
    """Estimate a day from ``log`` (see the module doc): rates, profiles, popularity, rank
    correlation, save mix and burstiness, each with its 95% interval over the log's days.

    ``replicates``: logs drawn for each goodness-of-fit test.
    """
    if not (math.isfinite(window_s) and window_s > 0):
        raise ValueError(f"window_s: expected a positive number of seconds, got {window_s!r}")
    days, named, n = log.days, len(log.articles), log.n_articles
    sums = {"saves": day_sums(log.saves, days, named, window_s)}
    if log.questions is not None:
        sums["questions"] = day_sums(log.questions, days, named, window_s, seed=1)
    window = log.window()
    notes = []
    if days < 2:
        notes.append("one day: no interval (days are the unit of replication; a second day gives the spread)")

    burstiness = {what: _burstiness(what, s, window_s) for what, s in sums.items()}
    profiles = {what: _profile(what, s, window, burstiness[what]) for what, s in sums.items()}
    popularity = {what: _popularity(what, s, n, burstiness[what].bursty, replicates) for what, s in sums.items()}
    rho = None
    if "questions" in sums:
        rho = _rank_correlation(sums["saves"], sums["questions"], n, popularity)
    kinds = sums["saves"].kinds
    assert kinds is not None  # the saves' sums count their kinds
    mix = {kind: _share(kinds[:, i], sums["saves"].totals) for i, kind in enumerate(SAVE_KINDS)}
    return Fit(
        log=log,
        window_s=float(window_s),
        saves_per_day=_mean(sums["saves"].totals),
        questions_per_day=_mean(sums["questions"].totals) if "questions" in sums else None,
        saves_future=prediction(sums["saves"].totals),
        questions_future=prediction(sums["questions"].totals) if "questions" in sums else None,
        day_kinds=find_day_kinds(log.dates, sums["saves"].hourly,
                                 sums["questions"].hourly if "questions" in sums else None),
        profiles=profiles,
        popularity=popularity,
        rank_correlation=rho,
        mix=mix,
        burstiness=burstiness,
        notes=tuple(notes),
    )


def _burstiness(what: str, s: DaySums, window_s: float) -> Burstiness:
    share = _share(s.follows, s.totals)
    poisson = _share(s.poisson_follows, s.totals)
    ratio = contrast("proportion", s.follows, s.totals, s.poisson_follows, s.totals, compare="ratio")
    ratio = replace(ratio, method=ratio.method.replace("seeds", "days"))
    return Burstiness(what, window_s, share, poisson, ratio, _ratio(s.chi_square, s.dof),
                      _ratio(s.poisson_chi_square, s.dof))


def _profile(what: str, s: DaySums, window: tuple[int, int], burst: Burstiness) -> Profile:
    from scipy import stats as scipy_stats

    rows = []
    for hour in range(24):
        rate = _mean(s.hourly[:, hour])
        rows.append({"hour": hour, "rate": rate.value, "low": rate.low, "high": rate.high})
    hourly = pd.DataFrame(rows)
    first, end = window
    active = s.hourly[:, first:end]
    days, hours = active.shape

    def peak_of(table: np.ndarray) -> float:
        means = table.mean(axis=0)
        return float(means.max() / means.mean()) if means.mean() > 0 else math.nan

    peak_full = peak_of(active)
    peak = jackknife(peak_full, [peak_of(np.delete(active, d, axis=0)) for d in range(days)] if days > 1 else [],
                     scale="log", bounds=(1.0, math.inf), unit="days")
    if hours < 2:
        return Profile(what, hourly, window, math.nan, 1.0, "one active hour: nothing to compare", peak)
    if days >= 2:
        # two-way analysis of variance, hours by days, days as blocks: F of the hour effect
        grand = active.mean()
        hour_effect = active.mean(axis=0) - grand
        day_effect = active.mean(axis=1) - grand
        residual = active - grand - hour_effect[None, :] - day_effect[:, None]
        ms_hour = days * np.sum(hour_effect ** 2) / (hours - 1)
        df_residual = (hours - 1) * (days - 1)
        ms_residual = np.sum(residual ** 2) / df_residual
        if ms_residual <= 0:
            statistic, p = (math.inf, 0.0) if ms_hour > 0 else (0.0, 1.0)
        else:
            statistic = float(ms_hour / ms_residual)
            p = float(scipy_stats.f.sf(statistic, hours - 1, df_residual))
        method = f"F test of the hour effect, days as blocks, F({hours - 1}, {df_residual})"
    else:
        # one day: the hours' chi-square against a flat rate, scaled by the dispersion index
        counts = active[0]
        expected = counts.sum() / hours
        dispersion = max(1.0, burst.dispersion.value if not math.isnan(burst.dispersion.value) else 1.0)
        statistic = float(np.sum((counts - expected) ** 2 / expected) / dispersion) if expected > 0 else 0.0
        p = float(scipy_stats.chi2.sf(statistic, hours - 1))
        method = f"chi-square against a flat rate over the dispersion index, chi2({hours - 1})"
    return Profile(what, hourly, window, statistic, p, method, peak)


def _popularity(what: str, s: DaySums, n: int, bursty: bool, replicates: int) -> Popularity:
    days = len(s.totals)
    pooled = s.counts.sum(axis=0)
    mle_full = pop.mle_exponent(pooled, n)
    mle_loo = [pop.mle_exponent(pooled - s.counts[d], n, near=mle_full) for d in range(days)] if days > 1 else []
    mle = jackknife(mle_full, mle_loo, bounds=pop.EXPONENT_RANGE, unit="days")
    mle = replace(mle, method="maximum likelihood over ranks, n known, marginal over the ranking; " + mle.method)
    moment, moment_loo = None, []
    if days >= 2:
        moment_loo = [pop.moment_exponent(np.delete(s.counts, d, axis=0), n) for d in range(days)] if days > 2 else []
        moment = jackknife(pop.moment_exponent(s.counts, n), moment_loo, bounds=pop.EXPONENT_RANGE, unit="days")
        if days == 2:  # leaving one of two days out leaves no pair of days
            moment = replace(moment, method="cross-day moment (sum of w^2 from pairs of days); no interval from two "
                             "days")
        else:
            moment = replace(moment, method="cross-day moment (sum of w^2 from pairs of days); " + moment.method)
    if bursty and moment is not None:
        chosen, exponent, loo = "moment", moment, moment_loo
    else:
        chosen, exponent, loo = "mle", mle, mle_loo
    # the replicates keep the log's bursts only when it has some: on independent events a "run" is a
    # coincidence, likelier the more popular the article, which a reassigned run would not be
    runs = s.run_sizes if bursty else np.ones(int(pooled.sum()))
    gof = pop.goodness_of_fit(pooled, runs, n, exponent.value, replicates=replicates)
    return Popularity(what, exponent, chosen, mle, moment, gof, pooled, tuple(loo))


def _rank_correlation(saves: DaySums, questions: DaySums, n: int, popularity: dict[str, Popularity]) -> Estimate:
    pooled_s, pooled_q = saves.counts.sum(axis=0), questions.counts.sum(axis=0)
    exponents_s, exponents_q = popularity["saves"], popularity["questions"]
    full = pop.rank_correlation(pop.cross_overlap(pooled_s, pooled_q), n, exponents_s.exponent.value,
                                exponents_q.exponent.value)
    days = len(saves.totals)
    loo = []
    if days > 1 and len(exponents_s.leave_one_out) == days and len(exponents_q.leave_one_out) == days:
        for d in range(days):
            overlap = pop.cross_overlap(pooled_s - saves.counts[d], pooled_q - questions.counts[d])
            loo.append(pop.rank_correlation(overlap, n, exponents_s.leave_one_out[d], exponents_q.leave_one_out[d]))
    result = jackknife(full, loo, bounds=(0.0, 1.0), unit="days")
    return replace(result, method="cross moment of save and question counts, as kbsim's copula gives it on average; "
                   + result.method)
