"""Zipf popularity over a seeded ranking of articles."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable

import numpy as np


class Popularity:
    """Draws articles with probability proportional to ``rank ** -s``.

    Args:
        article_ids: every article, in any order.
        ranking: ``ranking[r]`` is the index into ``article_ids`` of the article
            at popularity rank ``r`` (0 = most popular), a seeded shuffle.
        s: the Zipf exponent; ``s = 0`` is uniform.
    """

    def __init__(self, article_ids: list[str], ranking: np.ndarray, s: float) -> None:
        self.by_rank = [article_ids[i] for i in ranking]
        self.rank_of = {article_id: r for r, article_id in enumerate(self.by_rank)}
        weights = np.arange(1, len(self.by_rank) + 1, dtype=float) ** -s
        self.probabilities = weights / weights.sum()
        cdf = np.cumsum(self.probabilities)
        # bisect over a list of floats: the same answer as np.searchsorted, without its per-call cost
        self._cdf = cdf.tolist()
        self._total = float(cdf[-1])

    def draw(self, rng: np.random.Generator, is_eligible: Callable[[str], bool]) -> str | None:
        """One article among the eligible ones (rejection sampling), or None if none is."""
        for _ in range(10_000):
            r = bisect_right(self._cdf, rng.random() * self._total)
            article_id = self.by_rank[min(r, len(self.by_rank) - 1)]
            if is_eligible(article_id):
                return article_id
        eligible = [a for a in self.by_rank if is_eligible(a)]
        if not eligible:
            return None
        weights = np.array([self.probabilities[self.rank_of[a]] for a in eligible])
        return eligible[int(rng.choice(len(eligible), p=weights / weights.sum()))]
