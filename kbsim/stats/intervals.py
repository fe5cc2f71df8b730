"""The one interval method of kbsim: linearisation over seeds, t on (seeds - 1) df.

The unit of replication is the seed: one simulated day. A day's citations are
not independent trials (they share the day's hot articles and its saves), so
every estimate is a function of per-seed totals and its standard error comes
from how those totals vary between seeds, never from counting citations as
Bernoulli trials.

Each estimator is *linearised*: seed ``i`` gets an influence value ``u_i``
such that ``estimate - truth ~ mean(u)``; the standard error is
``sd(u) / sqrt(n)`` over the ``n`` seeds, and the interval uses Student's t on
``n - 1`` degrees of freedom. The same values give paired contrasts (the
difference of two estimates' influence values, seed by seed) and unpaired ones.

- **proportion** (a share pooled over the runs of a point: summed successes
  over summed trials, e.g. stale citations / citations held): the ratio
  estimator ``R = sum(y) / sum(x)`` with ``u_i = (y_i - R x_i) / mean(x)``
  (the delta method for a ratio over clusters). The interval is formed on the
  logit scale, ``logit(R) +- t * se / (R (1 - R))``, and mapped back, so it
  stays inside [0, 1] and is asymmetric near the edges, where a share of a few
  stale citations per day is skewed. At 0% or 100% (or when every seed gives
  the same share) the spread between seeds says nothing, and the interval is
  Wilson's on the pooled counts with the same t quantile: a design effect of 1,
  the only defensible guess when no seed differs.
- **ratio** (a ratio of sums that is not a share of counts, e.g. mean detection
  latency = summed latencies / detected citations): the same linearisation on
  the raw scale, floored at 0.
- **mean** (a per-run value averaged over runs, e.g. calls per check): the
  t-interval over runs, ``u_i = v_i - mean(v)``, floored at 0 when no run's value is
  negative (a count, a size, a duration): ``calls_per_check 3.9 [0.0, 9.1]`` over 2 seeds,
  never ``[-1.3, 9.1]``.
- **invariant** (must hold in every run, e.g. a replay returns the first result;
  a violation stops the run): the observed share, no interval.

- **jackknife** (an estimate that is no sum over seeds, e.g. a Zipf exponent fitted by
  maximum likelihood to a log's pooled counts, or a correlation): leave each unit out in
  turn, ``u_i = (n - 1) (estimate - estimate without i)``, the jackknife's linearisation
  of the same estimator (its variance is the jackknife variance), then the same t
  interval, on the raw, log or logit scale. ``kbsim fit`` uses it with the log's days as
  the units (``validation/FIT.md`` measures its coverage).

Why this method and not a bootstrap over seeds: with the 3 to 20 seeds a study
uses, a percentile or BCa bootstrap over seeds undercovers (it has no
small-sample t correction and BCa's acceleration is unstable), while the
linearised interval's coverage is measured at 93 to 97% with 5 seeds by
``validation/coverage.py`` (results in ``validation/COVERAGE.md``).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

KINDS = ("proportion", "ratio", "mean", "invariant")
#: The scales a jackknife interval may be formed on (and mapped back from).
SCALES = ("raw", "log", "logit")
CONFIDENCE = 0.95

#: The method names written into every summary row (``method`` column).
METHODS = {
    "proportion": "ratio over seeds, logit-linearised, t(seeds-1)",
    "proportion_edge": "Wilson on pooled counts, t(seeds-1) (no spread between seeds)",
    "ratio": "ratio over seeds, linearised, t(seeds-1)",
    "mean": "mean over seeds, t(seeds-1)",
    "invariant": "invariant: held in every run, no interval",
    "jackknife": "jackknife over seeds, linearised, t(seeds-1)",
}


def method_over(kind: str, unit: str) -> str:
    """The method text of ``kind`` with its unit of replication named (``days`` for a log's
    days): the same method, replicated over another unit than the seed."""
    text = METHODS[kind]
    return text if unit == "seeds" else text.replace("seeds", unit)


@dataclass(frozen=True)
class Estimate:
    """A point estimate with its 95% interval and what the interval rests on."""

    value: float
    low: float
    high: float
    se: float
    seeds: int
    method: str


def no_interval(units: float | None, unit: str = "seed") -> str:
    """What an undefined interval is written as: ``n/a (1 seed)`` where one unit of replication
    leaves nothing to vary (the interval needs two), else ``n/a``. JSON keeps ``null``."""
    if units is not None and units == units and int(units) == 1:
        return f"n/a (1 {unit})"
    return "n/a"


def t_quantile(df: float, confidence: float = CONFIDENCE) -> float:
    """Student's t quantile for a two-sided ``confidence`` interval on ``df`` degrees of freedom."""
    # scipy.special.stdtrit is what scipy.stats.t.ppf calls, without importing scipy.stats (0.5 s)
    from scipy.special import stdtrit

    return float(stdtrit(df, 0.5 + confidence / 2))


def linearise(kind: str, numerators, denominators=None) -> tuple[float, np.ndarray]:
    """The estimate and one influence value per seed (``estimate - truth ~ mean(u)``).

    ``proportion``/``ratio``/``invariant``: ``numerators`` and ``denominators`` are
    per-seed sums (successes and trials). ``mean``: ``numerators`` are per-seed values.
    Seeds whose value is NaN (a mean over nothing) are dropped; a seed with zero trials
    stays, contributing nothing, as a cluster of a ratio estimator does.
    """
    y = np.asarray(numerators, dtype=float)
    if kind == "mean":
        y = y[~np.isnan(y)]
        if len(y) == 0:
            return math.nan, y
        value = float(y.mean())
        return value, y - value
    x = np.asarray(denominators, dtype=float)
    total = x.sum()
    if total <= 0:
        return math.nan, np.zeros(len(x))
    value = float(y.sum() / total)
    return value, (y - value * x) / x.mean()


def _se(u: np.ndarray) -> float:
    return float(np.std(u, ddof=1) / math.sqrt(len(u))) if len(u) > 1 else math.nan


def _wilson(successes: float, trials: float, z: float) -> tuple[float, float]:
    p = successes / trials
    denominator = 1.0 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denominator
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denominator
    low = 0.0 if successes <= 0 else max(0.0, centre - half)
    high = 1.0 if successes >= trials else min(1.0, centre + half)
    return low, high


def estimate(kind: str, numerators, denominators=None, confidence: float = CONFIDENCE) -> Estimate:
    """The estimate of one metric at one point, from its per-seed values (see the module doc).

    With one seed there is no interval (NaN bounds); the caller warns.
    """
    if kind not in KINDS:
        raise ValueError(f"kind: expected one of {KINDS}, got {kind!r}")
    value, u = linearise(kind, numerators, denominators)
    edge = None
    if kind in ("proportion", "invariant") and len(u):
        edge = (float(np.sum(numerators)), float(np.sum(denominators)))
    found = interval(kind, value, u, edge, confidence)
    if kind == "mean" and found.low < 0 and _never_negative(numerators):  # a count cannot be below 0
        return dataclasses.replace(found, low=0.0)
    return found


def _never_negative(values) -> bool:
    """Whether every (defined) value is at least 0: a mean of them cannot be negative."""
    array = np.asarray(values, dtype=float)
    return bool(np.all(array[~np.isnan(array)] >= 0))


def interval(
    kind: str,
    value: float,
    u: np.ndarray,
    edge: tuple[float, float] | None = None,
    confidence: float = CONFIDENCE,
) -> Estimate:
    """The interval of an estimate from its per-seed influence values ``u``.

    ``edge`` is ``(successes, trials)`` pooled, for a share's interval at 0% or 100%
    (or when no seed differs); any linearised estimator of a share can use this, the
    Kaplan-Meier one included (:mod:`kbsim.stats.survival`).
    """
    seeds = len(u)
    if kind == "invariant":
        return Estimate(value, math.nan, math.nan, math.nan, seeds, METHODS["invariant"])
    if math.isnan(value) or seeds < 2:
        return Estimate(value, math.nan, math.nan, math.nan, seeds, METHODS[kind])
    se = _se(u)
    t = t_quantile(seeds - 1, confidence)
    if kind == "mean":
        return Estimate(value, value - t * se, value + t * se, se, seeds, METHODS["mean"])
    if kind == "ratio":
        return Estimate(value, max(0.0, value - t * se), value + t * se, se, seeds, METHODS["ratio"])
    if 0.0 < value < 1.0 and se > 0:
        centre, half = math.log(value / (1 - value)), t * se / (value * (1 - value))
        low, high = 1 / (1 + math.exp(-(centre - half))), 1 / (1 + math.exp(-(centre + half)))
        return Estimate(value, low, high, se, seeds, METHODS["proportion"])
    if edge is None or edge[1] <= 0:
        return Estimate(value, math.nan, math.nan, se, seeds, METHODS["proportion_edge"])
    low, high = _wilson(edge[0], edge[1], t)
    return Estimate(value, low, high, se, seeds, METHODS["proportion_edge"])


@dataclass(frozen=True)
class Contrast:
    """A difference (or ratio) of two estimates, with its paired and unpaired intervals."""

    value: float
    low: float
    high: float
    se: float
    unpaired_low: float
    unpaired_high: float
    unpaired_se: float
    seeds: int
    method: str

    @property
    def width_ratio(self) -> float:
        """Unpaired width over paired width: how much pairing narrows the interval."""
        paired = self.high - self.low
        unpaired = self.unpaired_high - self.unpaired_low
        return unpaired / paired if paired > 0 else math.nan


def contrast(
    kind: str,
    numerators_a,
    denominators_a,
    numerators_b,
    denominators_b,
    compare: str = "difference",
    confidence: float = CONFIDENCE,
) -> Contrast:
    """A minus B (or A over B), seed by seed: the per-seed arrays are aligned on common seeds.

    Paired: the difference of the two influence values per seed, t on (seeds - 1) df.
    Unpaired: the two standard errors combined, Welch-Satterthwaite df. Both on the raw
    scale for a difference and on the log scale for a ratio. A difference of two shares is
    held to [-1, 1]: with few seeds, t's interval can pass it (2 seeds gave -108.8 to
    +208.8 points), and clipping to the values a difference can take never excludes one.
    """
    if compare not in ("difference", "ratio"):
        raise ValueError(f"compare: expected 'difference' or 'ratio', got {compare!r}")
    if kind == "mean":  # drop seeds where either side is undefined, keeping them paired
        a, b = np.asarray(numerators_a, dtype=float), np.asarray(numerators_b, dtype=float)
        keep = ~(np.isnan(a) | np.isnan(b))
        numerators_a, numerators_b = a[keep], b[keep]
    value_a, u_a = linearise(kind, numerators_a, denominators_a)
    value_b, u_b = linearise(kind, numerators_b, denominators_b)
    seeds = len(u_a)
    method = f"paired over seeds, linearised, t(seeds-1); {compare}"
    if compare == "ratio":
        method += " on the log scale"
    nan = math.nan
    if compare == "ratio":
        if not (value_a > 0 and value_b > 0):
            return Contrast(nan, nan, nan, nan, nan, nan, nan, seeds, method)
        value = value_a / value_b
        u_a, u_b, centre = u_a / value_a, u_b / value_b, math.log(value)
    else:
        value = value_a - value_b
        centre = value
    if math.isnan(value) or seeds < 2:
        return Contrast(value, nan, nan, nan, nan, nan, nan, seeds, method)
    se = _se(u_a - u_b)
    t = t_quantile(seeds - 1, confidence)
    se_a, se_b = _se(u_a), _se(u_b)
    unpaired_se = math.sqrt(se_a**2 + se_b**2)
    if unpaired_se > 0:
        df = unpaired_se**4 / ((se_a**4 + se_b**4) / (seeds - 1))
        t_unpaired = t_quantile(df, confidence)
    else:
        t_unpaired = t
    bounds = [centre - t * se, centre + t * se, centre - t_unpaired * unpaired_se, centre + t_unpaired * unpaired_se]
    if compare == "ratio":
        bounds = [math.exp(b) for b in bounds]
    elif kind == "proportion":  # a difference of two shares lies in [-1, 1], whatever t gives
        bounds = [min(1.0, max(-1.0, b)) for b in bounds]
    return Contrast(value, bounds[0], bounds[1], se, bounds[2], bounds[3], unpaired_se, seeds, method)


def jackknife(
    full: float,
    leave_one_out,
    *,
    scale: str = "raw",
    bounds: tuple[float, float] = (-math.inf, math.inf),
    unit: str = "seeds",
    confidence: float = CONFIDENCE,
) -> Estimate:
    """The interval of an estimate computed from every unit (``full``) and again without each
    unit in turn (``leave_one_out``, one value per unit).

    The influence values ``u_i = (n - 1) (h(full) - h(without i))`` linearise the estimator
    on the scale ``h`` (``raw``, ``log`` or ``logit``); the interval is ``h(full) +- t se``
    on ``n - 1`` degrees of freedom, mapped back and kept within ``bounds``. With fewer
    than two units, or a value the scale cannot take (0 on the log scale, 0 or 1 on the
    logit scale), the bounds are NaN: the spread between units says nothing there.
    """
    if scale not in SCALES:
        raise ValueError(f"scale: expected one of {SCALES}, got {scale!r}")
    values = np.asarray(leave_one_out, dtype=float)
    units = len(values)
    method = method_over("jackknife", unit)
    if scale != "raw":
        method += f", on the {scale} scale"
    nan = math.nan
    if math.isnan(full) or units < 2 or np.isnan(values).any():
        return Estimate(full, nan, nan, nan, units, method)
    forward, back = _scale(scale)
    with np.errstate(divide="ignore", invalid="ignore"):
        centre, moved = forward(np.float64(full)), forward(values)
    if not (np.isfinite(centre) and np.isfinite(moved).all()):
        return Estimate(full, nan, nan, nan, units, method)
    u = (units - 1) * (centre - moved)
    se = _se(u)
    t = t_quantile(units - 1, confidence)
    low, high = float(back(centre - t * se)), float(back(centre + t * se))
    low, high = min(max(low, bounds[0]), bounds[1]), min(max(high, bounds[0]), bounds[1])
    return Estimate(full, low, high, se, units, method)


def _scale(scale: str):
    if scale == "log":
        return np.log, np.exp
    if scale == "logit":
        return (lambda p: np.log(p / (1 - p))), (lambda x: 1 / (1 + np.exp(-x)))
    return (lambda x: x), (lambda x: x)


def prediction(values, confidence: float = CONFIDENCE, unit: str = "days") -> Estimate:
    """The interval for one more unit (a future day) of per-unit ``values``: their mean
    ``+- t(n-1) sd sqrt(1 + 1/n)``, floored at 0 when no value is negative.

    The same t method as :func:`estimate`'s mean, for a different question: the mean's
    interval says where the mean of such units lies (it narrows as units accrue), this one
    where a single new unit will fall (it does not). With fewer than two units, NaN bounds.
    """
    y = np.asarray(values, dtype=float)
    y = y[~np.isnan(y)]
    method = f"prediction for one more of the {unit}: mean +- t({unit}-1) sd sqrt(1 + 1/{unit})"
    if len(y) == 0:
        return Estimate(math.nan, math.nan, math.nan, math.nan, 0, method)
    value = float(y.mean())
    if len(y) < 2:
        return Estimate(value, math.nan, math.nan, math.nan, len(y), method)
    spread = float(np.std(y, ddof=1) * math.sqrt(1.0 + 1.0 / len(y)))
    t = t_quantile(len(y) - 1, confidence)
    low = value - t * spread
    if low < 0 and _never_negative(y):
        low = 0.0
    return Estimate(value, low, value + t * spread, spread, len(y), method)
