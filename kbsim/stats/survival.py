"""How long a citation stays fresh: Kaplan-Meier over citation age, seeds as clusters.

A citation given at ``asked_s`` goes stale at ``first_stale_s`` (its age then is
the event time) or is still fresh at the end of the day (censored at age
``day_s - asked_s``). The end-of-day share mixes citations of every age; the
Kaplan-Meier curve separates age from the time of day: ``stale_within(a)`` is the
probability that a citation is stale within ``a`` seconds of being given.

Its interval is kbsim's one method (:mod:`kbsim.stats.intervals`): the estimator
is linearised (the Nelson-Aalen influence of each citation, summed per seed, as
for clustered survival data), the standard error comes from how those per-seed
totals vary, and the interval is formed on the logit scale with t on
(seeds - 1) degrees of freedom.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from kbsim.stats.intervals import interval

METHOD = "Kaplan-Meier, linearised over seeds, logit, t(seeds-1)"


def _ages(citations: pd.DataFrame, day_s: float) -> tuple[np.ndarray, np.ndarray]:
    """Each citation's age when it went stale (event) or at the end of the day (censored)."""
    asked = citations["asked_s"].to_numpy(dtype=float)
    stale_at = citations["first_stale_s"].to_numpy(dtype=float)
    event = stale_at <= day_s
    age = np.where(event, stale_at, day_s) - asked
    return np.maximum(age, 0.0), event


def stale_within(
    citations: pd.DataFrame, ages_s, day_s: float, seed_column: str = "seed"
) -> pd.DataFrame:
    """The share of citations stale within each age (Kaplan-Meier), with 95% intervals.

    ``citations`` hold one point's citations over its seeds (``seed_column`` names the
    cluster). Returns columns ``age_s``, ``value``, ``ci_low``, ``ci_high``, ``se``,
    ``seeds``, ``at_risk`` (citations followed to that age), ``method``.
    """
    ages = np.asarray(ages_s, dtype=float)
    age, event = _ages(citations, day_s)
    seeds, cluster = np.unique(citations[seed_column].to_numpy(), return_inverse=True)
    times = np.unique(age[event])  # distinct event ages
    d = np.bincount(np.searchsorted(times, age[event]), minlength=len(times)).astype(float)
    n = (len(age) - np.searchsorted(np.sort(age), times, side="left")).astype(float)  # at risk: age >= t
    step = 1.0 - d / n
    survival = np.cumprod(step)
    cumulative = np.cumsum(d / n**2)  # the Nelson-Aalen variance increments
    upto = np.searchsorted(times, ages, side="right")  # event times <= each age
    s_at = np.where(upto > 0, survival[np.maximum(upto - 1, 0)], 1.0)
    rows = []
    for k, a in enumerate(ages):
        # influence of citation i on S(a):
        #   -S(a) * (1/n at its own event age if <= a, minus the sum of d_j/n_j^2 over t_j <= min(a, T_i))
        own = np.zeros(len(age))
        hit = event & (age <= a)
        own[hit] = 1.0 / n[np.searchsorted(times, age[hit])]
        reach = np.searchsorted(times, np.minimum(age, a), side="right")
        compensator = np.where(reach > 0, cumulative[np.maximum(reach - 1, 0)], 0.0)
        influence = -s_at[k] * (own - compensator)
        per_seed = np.bincount(cluster, weights=influence, minlength=len(seeds)) * len(seeds)
        share = 1.0 - s_at[k]
        at_risk = int((age >= a).sum())
        stale = int(hit.sum())
        result = interval("proportion", share, -per_seed, edge=(stale, stale + at_risk))
        rows.append((a, share, result.low, result.high, result.se, len(seeds), at_risk, METHOD))
    return pd.DataFrame(rows, columns=["age_s", "value", "ci_low", "ci_high", "se", "seeds", "at_risk", "method"])


def survival_by(
    citations: pd.DataFrame, by: list[str], ages_s, day_s: float | dict
) -> pd.DataFrame:
    """:func:`stale_within` per point (``by`` keys); ``day_s`` may map a scenario to its day."""
    frames = []
    for key, group in citations.groupby(by, sort=False, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        length = day_s[key[0]] if isinstance(day_s, dict) else day_s
        frame = stale_within(group, ages_s, length)
        for column, value in zip(by, key, strict=True):
            frame[column] = value
        frames.append(frame[[*by, *frame.columns[: -len(by)]]])
    return pd.concat(frames, ignore_index=True)
