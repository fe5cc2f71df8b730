"""The popularity of a log: a Zipf exponent over ranks with the number of articles known, the
goodness of that law, and the rank correlation between what people save and what they ask.

A log does not say which article holds which popularity rank: it gives counts. Ranking
the articles by their own counts and fitting the law to that ranking (the textbook
rank-frequency fit) overstates the skew, because the noise of the counts is sorted into
the ranking (by 0.03 to 0.08 at 300 saves a day over 400 articles; validation/FIT.md).
So the likelihood here is **marginal over the ranking**: each article's count is Poisson
with the rate of a rank drawn at random among the ``n`` ranks,
``P(c) = (1/n) sum_r Poisson(c; N w_r(s))``, ``w_r = r^-s / sum_q q^-s``, and the
exponent maximises ``sum_i log P(c_i)`` over every article, the never-named ones (count
0) included: that is why ``n`` must be known.

That likelihood takes saves to be independent. When they come in bursts (several saves
of one article within minutes), the counts are overdispersed and it reads the bursts as
extra skew (by 0.2 to 0.5 at three saves a burst). The **cross-day moment** estimator
does not: the expected product of one article's counts on two different days is
``N_d N_e w^2`` whatever happens within a day, so
``sum_i sum_{d != e} c_id c_ie / sum_{d != e} N_d N_e`` estimates ``sum_r w_r(s)^2``,
which fixes ``s``. It needs two days at least. :func:`kbsim.fit.estimates.fit_log` uses
the likelihood on independent saves and the moment on bursty ones, and says which.

The rank correlation is kbsim's ``saves.rank_correlation``: the Gaussian copula a day
draws the save ranking from (:func:`kbsim.sim.popularity.correlated_ranking`). It is
fitted the same way, by a cross moment: ``sum_i c^save_i c^question_i / (N^save
N^question)`` estimates the overlap ``sum_i w^save_i w^question_i`` of the two
popularities (saves and questions being independent given the popularity, however
bursty either is). The fitted correlation is the one at which kbsim's copula gives
that overlap on average: the knowledge base's own correlation, in the units of
``saves.rank_correlation``. (One knowledge base is one draw of the copula; a day of
kbsim draws its own around it, seed by seed.)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

__all__ = [
    "CopulaTable",
    "GoodnessOfFit",
    "bursts",
    "copula_table",
    "cross_overlap",
    "goodness_of_fit",
    "log_zipf_weights",
    "mle_exponent",
    "moment_exponent",
    "expected_overlaps",
    "rank_correlation",
    "stable_order",
    "zipf_weights",
]

#: The exponents a fit may return (kbsim's ``zipf_s`` takes 0 to 5).
EXPONENT_RANGE = (0.0, 5.0)
#: The grid the likelihood is first evaluated on before a local search refines its best point.
GRID_STEP = 0.05
#: How far from a nearby fit (``near``) the grid of :func:`mle_exponent` reaches.
NEAR = 0.15
#: Runs of events the goodness-of-fit test draws one at a time; above, each replicate draws the
#: runs of each size as one multinomial over the ranks (the same law, in time that grows with the
#: articles, not the events: a log of ten million saves).
MAX_RUNS_DRAWN_ONE_BY_ONE = 200_000
#: Ranks fitted one by one; above, runs of ranks of nearly equal weight are fitted as one.
SINGLE_RANKS = 500
_GROUPS = 1500
#: ``exp(x)`` is 0.0 exactly below this (the smallest double, 2**-1074, is exp(-744.4)).
_EXP_IS_ZERO = -746.0
#: Counts whose likelihood terms are worked out together (a block of counts x rank groups in cache).
_COUNTS_AT_ONCE = 32


def log_zipf_weights(n: int, s: float) -> np.ndarray:
    """``log w_r`` of the Zipf law over ranks ``1..n`` with exponent ``s``."""
    log_ranks = np.log(np.arange(1, n + 1, dtype=float))
    scores = -s * log_ranks
    return scores - _logsumexp(scores)


def zipf_weights(n: int, s: float) -> np.ndarray:
    """Zipf probabilities over ranks ``1..n`` (``s = 0``: uniform)."""
    return np.exp(log_zipf_weights(n, s))


def _logsumexp(values: np.ndarray, axis=None):
    """``log(sum(exp(values)))`` along ``axis``, without overflow (scipy's, without its checks)."""
    top = np.max(values, axis=axis, keepdims=True)
    total = np.log(np.sum(np.exp(values - top), axis=axis, keepdims=True)) + top
    return total.item() if axis is None else np.squeeze(total, axis=axis)


@lru_cache(maxsize=16)
def _rank_groups(n: int) -> tuple[np.ndarray, np.ndarray]:
    """``(representative log rank, how many ranks)`` of each group of consecutive ranks: the
    first :data:`SINGLE_RANKS` alone, the rest in about 1,500 log-spaced runs (a Zipf weight
    changes by under 0.3% within a run at 20,000 articles)."""
    if n <= SINGLE_RANKS + _GROUPS:
        return np.log(np.arange(1, n + 1, dtype=float)), np.ones(n)
    edges = np.unique(np.round(np.geomspace(SINGLE_RANKS, n, _GROUPS + 1)).astype(int))
    sizes = np.concatenate([np.ones(SINGLE_RANKS), np.diff(edges)])
    starts = np.concatenate([np.arange(1, SINGLE_RANKS + 1), edges[:-1] + 1]).astype(float)
    ends = starts + sizes - 1
    # the geometric middle of each run: its log rank is the mean of the ends' logs
    return 0.5 * (np.log(starts) + np.log(ends)), sizes


def _with_zeros(counts: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Distinct counts and how many articles have each, the ``n - len(counts)`` articles the
    log never names counted with 0."""
    counts = np.asarray(counts, dtype=float)
    if len(counts) > n:
        raise ValueError(f"{len(counts)} counted articles for n = {n}")
    values, how_many = np.unique(counts, return_counts=True)
    missing = n - len(counts)
    if missing:
        if values.size and values[0] == 0:
            how_many[0] += missing
        else:
            values, how_many = np.concatenate([[0.0], values]), np.concatenate([[missing], how_many])
    return values, how_many.astype(float)


def mle_exponent(counts, n: int, *, near: float | None = None) -> float:
    """The Zipf exponent maximising the likelihood of per-article ``counts`` marginal over the
    ranking (module doc), with ``n`` articles in all (those absent from ``counts`` have 0).

    NaN when there is nothing to fit (no event). Bounded to :data:`EXPONENT_RANGE`. The
    likelihood has local maxima (a large count is caught by one rank or the next as the
    exponent moves), so it is evaluated on a grid of :data:`GRID_STEP` first, over the
    whole range or, given ``near`` (a fit of nearly the same counts, as a leave-one-out
    is), within :data:`NEAR` of it, then refined between the best point's neighbours.
    """
    from scipy.optimize import minimize_scalar
    from scipy.special import gammaln

    values, how_many = _with_zeros(counts, n)
    total = float(np.dot(values, how_many))
    if total <= 0:
        return math.nan
    log_rank, sizes = _rank_groups(n)
    log_sizes = np.log(sizes)
    log_total = math.log(total)
    base = -gammaln(values + 1.0)
    work = (np.empty((_COUNTS_AT_ONCE, len(log_rank))), np.empty((_COUNTS_AT_ONCE, len(log_rank)), dtype=bool))

    def negative_log_likelihood(exponents: np.ndarray) -> np.ndarray:
        out = np.empty(len(exponents))
        # a few exponents at a time, as when each batch held exponents x counts x ranks (the product with
        # how_many below is then the same matrix, so the same floats)
        step = max(1, int(4_000_000 // (len(values) * len(log_rank))))
        for i in range(0, len(exponents), step):
            s = exponents[i : i + step, None]
            log_w = -s * log_rank[None, :]
            log_w = log_w - _logsumexp(log_w + log_sizes[None, :], axis=1)[:, None]
            rates = np.exp(log_total + log_w)
            scaled = log_total + log_w
            mixture = np.empty((len(s), len(values)))
            for e in range(len(s)):
                for v in range(0, len(values), _COUNTS_AT_ONCE):
                    mixture[e, v : v + _COUNTS_AT_ONCE] = _log_mixture(
                        values[v : v + _COUNTS_AT_ONCE], base[v : v + _COUNTS_AT_ONCE], scaled[e], rates[e],
                        log_sizes, work) - math.log(n)
            out[i : i + step] = -(mixture @ how_many)
        return out

    low, high = EXPONENT_RANGE
    if near is not None and math.isfinite(near):
        low, high = max(low, near - NEAR), min(high, near + NEAR)
    grid = np.linspace(low, high, int(round((high - low) / GRID_STEP)) + 1)
    best = int(np.argmin(negative_log_likelihood(grid)))
    bracket = (float(grid[max(0, best - 1)]), float(grid[min(len(grid) - 1, best + 1)]))
    result = minimize_scalar(lambda x: float(negative_log_likelihood(np.array([x]))[0]), bounds=bracket,
                             method="bounded", options={"xatol": 1e-6})
    return float(result.x)


def _log_mixture(values: np.ndarray, base: np.ndarray, scaled: np.ndarray, rates: np.ndarray,
                 log_sizes: np.ndarray, work: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """``log sum_r exp(log_pmf[v, r])`` for a few counts at one exponent: the Poisson terms of each
    count at each rank group, ``v (log N + log w_r) - N w_r - log v! + log size_r``, added in the
    order the expression adds them, then a log-sum-exp over the ranks, in ``work`` (a block of counts
    that stays in the processor's cache; a row's terms and sums are the same floats at any block).

    Terms whose exp underflows (below :data:`_EXP_IS_ZERO`: most of them, a count far from a rank's
    rate) are written as 0.0 without calling exp, whose underflowing inputs are its slowest.
    """
    terms, kept = work[0][: len(values)], work[1][: len(values)]
    np.multiply(values[:, None], scaled[None, :], out=terms)
    terms -= rates[None, :]
    terms += base[:, None]
    terms += log_sizes[None, :]
    top = np.max(terms, axis=1, keepdims=True)
    terms -= top
    np.greater_equal(terms, _EXP_IS_ZERO, out=kept)
    np.exp(terms, out=terms, where=kept)
    np.copyto(terms, 0.0, where=~kept)
    return (np.log(np.sum(terms, axis=1, keepdims=True)) + top)[:, 0]


def collision(day_counts: np.ndarray) -> float:
    """``sum_i sum_{d != e} c_id c_ie / sum_{d != e} N_d N_e``: an unbiased estimate of the
    popularity's ``sum_i w_i^2`` from two days or more, whatever happens within a day."""
    day_counts = np.asarray(day_counts, dtype=float)
    totals = day_counts.sum(axis=1)
    pairs = totals.sum() ** 2 - np.dot(totals, totals)
    if day_counts.shape[0] < 2 or pairs <= 0:
        return math.nan
    per_article = day_counts.sum(axis=0)
    same_day = np.einsum("di,di->", day_counts, day_counts)
    return float((np.dot(per_article, per_article) - same_day) / pairs)


def moment_exponent(day_counts, n: int) -> float:
    """The Zipf exponent whose ``sum_r w_r^2`` equals the cross-day :func:`collision` of the
    per-day, per-article counts (days as rows; ``n`` articles in all). NaN with one day."""
    from scipy.optimize import brentq

    target = collision(day_counts)
    if math.isnan(target):
        return math.nan
    low, high = EXPONENT_RANGE

    def excess(s: float) -> float:
        return float(np.exp(_logsumexp(2 * log_zipf_weights(n, s)))) - target

    if excess(low) >= 0:
        return low
    if excess(high) <= 0:
        return high
    return float(brentq(excess, low, high, xtol=1e-7))


# -- bursts and goodness of fit --------------------------------------------------------------------


def bursts(day: np.ndarray, time_s: np.ndarray, article: np.ndarray, window_s: float) -> tuple[np.ndarray, np.ndarray]:
    """``(follows, run_sizes)``: whether each event follows an event of the same article on the
    same day within ``window_s`` seconds, and the sizes of the runs such events make (a
    run: an event that follows none, and every event that follows it, one after another)."""
    in_order = len(time_s) > 1 and bool(np.all(time_s[1:] >= time_s[:-1]))
    if in_order and bool(np.all(day[1:] >= day[:-1])):
        # times in order and each day a block of rows (as a log's rows are): a day at a time, so the
        # sort's arrays are a day's, not the log's; a run never crosses days, so the runs come day by day
        follows = np.zeros(len(time_s), dtype=bool)
        edges = [0, *(np.flatnonzero(day[1:] != day[:-1]) + 1).tolist(), len(time_s)]
        runs = []
        for start, end in zip(edges[:-1], edges[1:], strict=True):
            follows[start:end], sizes = _bursts_in_order(time_s[start:end], article[start:end], window_s)
            runs.append(sizes)
        return follows, np.concatenate(runs)
    if in_order:
        # times in order: by day and article, ties kept in place, is the same order
        order = stable_order(article, day)
    else:
        order = np.lexsort((time_s, article, day))
    same = np.zeros(len(order), dtype=bool)
    if len(order) > 1:
        a, d, t = article[order], day[order], time_s[order]
        same[1:] = (a[1:] == a[:-1]) & (d[1:] == d[:-1]) & (t[1:] - t[:-1] <= window_s)
    follows = np.zeros(len(order), dtype=bool)
    follows[order] = same
    run_sizes = np.bincount(np.cumsum(~same) - 1).astype(float) if len(order) else np.zeros(0)
    return follows, run_sizes


def _bursts_in_order(time_s: np.ndarray, article: np.ndarray, window_s: float) -> tuple[np.ndarray, np.ndarray]:
    """:func:`bursts` of one day's events, their times in order."""
    order = stable_order(article)
    a, t = article[order], time_s[order]
    same = np.zeros(len(order), dtype=bool)
    same[1:] = (a[1:] == a[:-1]) & (t[1:] - t[:-1] <= window_s)
    follows = np.zeros(len(order), dtype=bool)
    follows[order] = same
    return follows, np.bincount(np.cumsum(~same) - 1).astype(float)


def stable_order(*keys: np.ndarray) -> np.ndarray:
    """The indices that sort by the last of ``keys`` (non-negative integers), then the one before,
    ..., ties kept in index order: ``np.lexsort(keys)``, as stable sorts of 16 bits at a time, least
    significant first (numpy sorts 16-bit integers stably by radix, in time that grows with the
    events, where lexsort compares)."""
    order = np.arange(len(keys[0]) if keys else 0)
    for key in keys:
        bits = max(1, int(key.max()).bit_length()) if len(key) else 1
        for shift in range(0, bits, 16):
            digit = (key[order] >> shift) & 0xFFFF if bits > 16 else key[order]
            order = order[np.argsort(digit.astype(np.uint16), kind="stable")]
    return order


@dataclass(frozen=True)
class GoodnessOfFit:
    """How well the Zipf law fits a log's rank-frequency curve.

    ``statistic``: the squared distance between the sorted square-rooted counts and
    their mean over logs drawn from the fitted law; ``p_value``: the share of those logs
    at least as far from it. ``expected``: the mean sorted counts under the law, and
    ``low``/``high`` their 5th and 95th percentiles, by rank (for the figure).
    """

    statistic: float
    p_value: float
    replicates: int
    method: str
    expected: np.ndarray
    low: np.ndarray
    high: np.ndarray

    @property
    def fits(self) -> bool:
        """False only when the test rejects the law at 5% (an untested law is not rejected)."""
        return not self.p_value < 0.05


def goodness_of_fit(counts, run_sizes: np.ndarray, n: int, s: float, *, replicates: int = 199,
                    seed: int = 0) -> GoodnessOfFit:
    """Test the Zipf law with exponent ``s`` against per-article ``counts`` (``n`` articles in
    all), by a parametric bootstrap that keeps the log's bursts: each run of events of one
    article (:func:`bursts`) is given to an article drawn by the fitted law over a fresh
    random ranking. The replicates are not refitted, which makes the test conservative
    (its p-values are if anything too large; validation/FIT.md measures its size).
    Deterministic for a given ``seed``."""
    observed = np.zeros(n)
    observed[: len(counts)] = counts
    if replicates < 1:  # no test asked for (a study that measures other things)
        nan = np.full(n, np.nan)
        return GoodnessOfFit(math.nan, math.nan, 0, "not tested", nan, nan, nan)
    rng = np.random.default_rng(seed)
    cdf = np.cumsum(zipf_weights(n, s))
    cdf /= cdf[-1]
    sorted_roots = np.empty((replicates, n))
    by_size = len(run_sizes) > MAX_RUNS_DRAWN_ONE_BY_ONE
    if by_size:
        sizes, runs_of_size = np.unique(run_sizes, return_counts=True)
        weights = np.diff(np.concatenate([[0.0], cdf]))  # the law, as the draws by its cdf give it
    for b in range(replicates):
        if by_size:
            # the same law, drawn a rank count at a time: the runs of each size are multinomial over ranks
            drawn: np.ndarray = np.zeros(n)
            for size, count in zip(sizes, runs_of_size, strict=True):
                drawn += size * rng.multinomial(count, weights)
        else:
            ranking = rng.permutation(n)
            ranks = np.minimum(np.searchsorted(cdf, rng.random(len(run_sizes)), side="right"), n - 1)
            drawn = np.bincount(ranking[ranks], weights=run_sizes, minlength=n)
        sorted_roots[b] = np.sqrt(np.sort(drawn)[::-1])
    centre = sorted_roots.mean(axis=0)
    observed_roots = np.sqrt(np.sort(observed)[::-1])
    statistic = float(np.sum((observed_roots - centre) ** 2))
    # each replicate's distance from the mean of the others, as the observed log's is from all of them
    others = (centre[None, :] * replicates - sorted_roots) / (replicates - 1)
    distances = np.sum((sorted_roots - others) ** 2, axis=1)
    p_value = float((1 + np.sum(distances >= statistic)) / (replicates + 1))
    squares = sorted_roots ** 2
    method = (f"parametric bootstrap, {replicates} logs from the fitted law keeping the log's bursts "
              "(not refitted: conservative)")
    return GoodnessOfFit(statistic, p_value, replicates, method, squares.mean(axis=0),
                         np.quantile(squares, 0.05, axis=0), np.quantile(squares, 0.95, axis=0))


# -- the rank correlation ------------------------------------------------------------------------

#: The copula correlations the overlap is tabulated at (interpolated between).
RHO_GRID = np.linspace(0.0, 1.0, 41)


@dataclass(frozen=True)
class CopulaTable:
    """Save ranks drawn from kbsim's copula at each of :data:`RHO_GRID`: ``ranks[j, m, r]`` is
    the save rank (0 = most saved) of the article at question rank ``r`` in draw ``m``
    at correlation ``RHO_GRID[j]`` (common random numbers across the grid)."""

    n: int
    ranks: np.ndarray


@lru_cache(maxsize=4)
def copula_table(n: int, draws: int | None = None, seed: int = 0) -> CopulaTable:
    """The copula's save ranks for ``n`` articles, as :func:`kbsim.sim.popularity.correlated_ranking`
    draws them: each article's normal score of its question rank mixed with noise,
    ``rho z + sqrt(1 - rho^2) e``, ordered. ``draws`` defaults to as many as keep the
    table under a few tens of megabytes (100 at 400 articles)."""
    from scipy.special import ndtri

    if draws is None:
        draws = int(max(8, min(100, 100_000 // n)))
    scores = ndtri(1 - (np.arange(n) + 0.5) / n)
    noise = np.random.default_rng(seed).standard_normal((draws, n))
    ranks = np.empty((len(RHO_GRID), draws, n), dtype=np.int32)
    for j, rho in enumerate(RHO_GRID):
        mixed = rho * scores[None, :] + math.sqrt(max(0.0, 1 - rho * rho)) * noise
        order = np.argsort(-mixed, axis=1, kind="stable")
        inverse = np.empty_like(order)
        np.put_along_axis(inverse, order, np.arange(n)[None, :].repeat(draws, axis=0), axis=1)
        ranks[j] = inverse
    return CopulaTable(n, ranks)


def _overlap_at(table: CopulaTable, j: int, w_save: np.ndarray, w_question: np.ndarray) -> float:
    """The mean over draws of ``sum_r w^question_r w^save_(save rank of r)`` at ``RHO_GRID[j]``."""
    return float(np.mean(w_save[table.ranks[j]] @ w_question))


def expected_overlaps(n: int, s_save: float, s_question: float) -> np.ndarray:
    """The overlap ``sum_r w^question_r w^save_(save rank of r)`` a kbsim day gives on average
    at each correlation of :data:`RHO_GRID`."""
    table, w_save, w_question = copula_table(n), zipf_weights(n, s_save), zipf_weights(n, s_question)
    return np.array([_overlap_at(table, j, w_save, w_question) for j in range(len(RHO_GRID))])


def cross_overlap(save_counts, question_counts) -> float:
    """``sum_i c^save_i c^question_i / (N^save N^question)``: unbiased for ``sum_i w^save_i w^question_i``
    when saves and questions are independent given the popularity."""
    save_counts, question_counts = np.asarray(save_counts, float), np.asarray(question_counts, float)
    total = save_counts.sum() * question_counts.sum()
    return float(np.dot(save_counts, question_counts) / total) if total > 0 else math.nan


def rank_correlation(overlap: float, n: int, s_save: float, s_question: float) -> float:
    """The copula correlation at which kbsim's day gives, on average over its draws of the save
    ranking, the overlap ``overlap`` (0 or 1 at the ends): the knowledge base's own
    correlation, in the units of ``saves.rank_correlation``.

    The expected overlap rises with the correlation; it is evaluated only at the grid
    points a bisection visits, then interpolated linearly between the two around ``overlap``.
    """
    if any(math.isnan(v) for v in (overlap, s_save, s_question)):
        return math.nan
    table, w_save, w_question = copula_table(n), zipf_weights(n, s_save), zipf_weights(n, s_question)
    cache: dict[int, float] = {}

    def at(j: int) -> float:
        if j not in cache:
            cache[j] = _overlap_at(table, j, w_save, w_question)
        return cache[j]

    low, high = 0, len(RHO_GRID) - 1
    if overlap <= at(low):
        return 0.0
    if overlap >= at(high):
        return 1.0
    while high - low > 1:
        middle = (low + high) // 2
        if at(middle) <= overlap:
            low = middle
        else:
            high = middle
    a, b = at(low), at(high)
    share = (overlap - a) / (b - a) if b > a else 0.5
    return float(RHO_GRID[low] + share * (RHO_GRID[high] - RHO_GRID[low]))
