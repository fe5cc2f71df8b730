"""Zipf popularity over a seeded ranking of articles."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Iterable, Sequence
from statistics import NormalDist

import numpy as np

#: Rejection attempts a draw makes before its exact fallback.
ATTEMPTS = 8
#: Uniforms one draw consumes, whatever happens: the attempts and one for the fallback.
UNIFORMS_PER_DRAW = ATTEMPTS + 1


class Popularity:
    """Draws articles with probability proportional to ``rank ** -s``, or to given weights.

    Args:
        article_ids: every article, in any order.
        ranking: ``ranking[r]`` is the index into ``article_ids`` of the article
            at popularity rank ``r`` (0 = most popular), a seeded shuffle.
        s: the Zipf exponent; ``s = 0`` is uniform.
        weights: each article's weight (page views, say), in ``article_ids`` order,
            used in place of the Zipf law; the ranking should then sort them.
    """

    def __init__(self, article_ids: list[str], ranking, s: float, weights: np.ndarray | None = None) -> None:
        self.by_rank = [article_ids[i] for i in ranking]
        self.rank_of = {article_id: r for r, article_id in enumerate(self.by_rank)}
        if weights is None:
            weights = np.arange(1, len(self.by_rank) + 1, dtype=float) ** -s
        else:
            weights = np.asarray(weights, dtype=float)[np.asarray(ranking)]
        self.probabilities = weights / weights.sum()
        cdf = np.cumsum(self.probabilities)
        # bisect over a list of floats: the same answer as np.searchsorted, without its per-call cost
        self._cdf = cdf.tolist()
        self._total = float(cdf[-1])

    def replace(self, old_id: str, new_id: str) -> None:
        """``new_id`` takes ``old_id``'s rank (a new article replacing an unpublished one)."""
        rank = self.rank_of.pop(old_id)
        self.by_rank[rank] = new_id
        self.rank_of[new_id] = rank

    def draw(
        self,
        uniforms: Sequence[float],
        is_eligible: Callable[[str], bool],
        ineligible_ids: Callable[[], Iterable[str]] | None = None,
    ) -> str | None:
        """One article among the eligible ones, or None if none is, from exactly
        :data:`UNIFORMS_PER_DRAW` uniforms.

        Each of the first :data:`ATTEMPTS` uniforms is one inverse-CDF draw over every
        article, accepted if eligible (rejection sampling); if all are refused, the last
        uniform draws exactly from the eligible articles' renormalised weights. Either way
        the result follows the popularity restricted to eligible articles, and a draw
        never uses another draw's uniforms: every question or save has its own block, so
        one refused article (unpublished in one scenario, say) shifts nothing after it.

        ``ineligible_ids``, when given, returns every ranked article ``is_eligible``
        refuses, at once (ids it does not rank are ignored): the fallback then marks those
        few instead of asking ``is_eligible`` for every article. Why: once the most popular
        articles are unpublished, a few draws in a thousand fall back (about a hundred in
        the 100,000-article day), and each then tested all 100,000 ranked articles, where
        the ineligible ones are the few a day has unpublished.
        """
        last = len(self.by_rank) - 1
        for u in uniforms[:ATTEMPTS]:
            article_id = self.by_rank[min(bisect_right(self._cdf, u * self._total), last)]
            if is_eligible(article_id):
                return article_id
        if ineligible_ids is None:
            mask = np.fromiter(map(is_eligible, self.by_rank), dtype=bool, count=len(self.by_rank))
        else:
            mask = np.ones(len(self.by_rank), dtype=bool)
            rank_of = self.rank_of
            mask[[rank_of[a] for a in ineligible_ids() if a in rank_of]] = False
        ranks = np.flatnonzero(mask)
        if not ranks.size:
            return None
        # the eligible articles' probabilities in rank order, summed one after the other
        cdf = np.cumsum(self.probabilities[ranks])
        if not cdf[-1] > 0:  # only articles of weight 0 are left
            return None
        index = int(np.searchsorted(cdf, uniforms[ATTEMPTS] * cdf[-1], side="right"))
        return self.by_rank[int(ranks[min(index, ranks.size - 1)])]


def correlated_ranking(ranking: np.ndarray, rho: float, rng: np.random.Generator) -> np.ndarray:
    """A second ranking whose ranks follow ``ranking``'s with rank correlation set by ``rho``.

    A Gaussian copula: the article at rank ``r`` gets the normal score of its rank
    (high for the popular), mixed with independent noise, ``rho * z + sqrt(1 - rho^2) * e``;
    the new ranking orders the articles by that score. ``rho = 1`` is ``ranking`` itself,
    ``rho = 0`` an independent shuffle.
    """
    n = len(ranking)
    scores = np.array([NormalDist().inv_cdf(1 - (r + 0.5) / n) for r in range(n)])
    noise = rng.standard_normal(n)
    order = np.argsort(-(rho * scores + np.sqrt(max(0.0, 1 - rho * rho)) * noise), kind="stable")
    return np.asarray(ranking)[order]
