"""A closed-form companion to the simulation: Poisson saves over Zipf popularity.

Freshness in the sense of Cho and Garcia-Molina: an article saved as a Poisson
process of rate ``lambda_i`` stays unchanged for a time ``tau`` with
probability ``exp(-lambda_i * tau)``. Here ``lambda_i`` is the day's save rate
times the article's save popularity, so a citation of article ``i`` made at
time ``u`` is stale at ``t`` with probability ``1 - exp(-lambda_i (t - u))``.

What the model assumes, and what it leaves out (the notebooks show the gaps):

* Saves and questions arrive as Poisson processes at a constant rate (the
  simulation's default draws a *fixed* count at uniform times instead).
* Position 0 of an answer is the question's target (drawn by question
  popularity); every further citation is modelled as an *average* article,
  uniform over the published ones. The simulation's second hit is a lexical
  neighbour of the target, whose popularity rank is close to uniform.
* ``unpublish=True`` (the default) follows unpublished articles out of the
  day in a mean-field way: article ``i`` stays published with probability
  ``exp(-mu * p_i * A(u))`` where ``mu`` is the unpublish share of saves and
  ``A`` solves ``dA/du = saves_per_s / Z(A)``, ``Z`` being the save
  popularity still published (people's saves and questions are drawn among
  published articles only, so the survivors' rates rise). With
  ``unpublish=False`` the model is the plain Cho & Garcia-Molina freshness.
* The agent's own edits are saves too. On edit days they add a hazard
  ``questions_per_s * edit_share * q_i`` to article ``i`` during
  ``[d, day + d]`` (edits of answers at ``v`` land at ``v + d``; conflicts
  and retries are ignored), and an edited answer's first citation is stale
  from ``u + d`` on. Days without edits isolate people's saves.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from kbsim.params import DayParams

_NODES, _WEIGHTS = np.polynomial.legendre.leggauss(96)


def zipf_weights(n: int, s: float) -> np.ndarray:
    """Zipf probabilities over ranks 1..n with exponent ``s`` (``s = 0``: uniform)."""
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n!r}")
    weights = np.arange(1, n + 1, dtype=float) ** -float(s)
    return weights / weights.sum()


def _gauss(lo: float, hi: float) -> tuple[np.ndarray, np.ndarray]:
    """Gauss-Legendre nodes and weights on [lo, hi] (weights sum to hi - lo)."""
    half = 0.5 * (hi - lo)
    return lo + half * (_NODES + 1.0), half * _WEIGHTS


@dataclass(frozen=True)
class FreshnessModel:
    """The analytic day. Build it with :meth:`from_params`.

    Attributes:
        save_weights: save popularity per article (rank order), sums to 1.
        question_weights: question-target popularity per article, sums to 1.
        saves_per_s: people's save rate.
        questions_per_s: question rate.
        day_s: day length.
        unpublish_share: share of people's saves that unpublish.
        citations_per_answer: citations kept per answer.
        unpublish: follow unpublished articles out of the day (mean field).
        edit_share: share of answers the agent edits (0: a day without edits).
        edit_delay_s: the delay before each edit (the mean, for a distribution).
    """

    save_weights: np.ndarray
    question_weights: np.ndarray
    saves_per_s: float
    questions_per_s: float
    day_s: float
    unpublish_share: float = 0.0
    citations_per_answer: int = 2
    unpublish: bool = True
    edit_share: float = 0.0
    edit_delay_s: float | None = None

    @classmethod
    def from_params(cls, params: DayParams, *, unpublish: bool = True) -> FreshnessModel:
        """The model of a simulated day with these parameters."""
        n = params.corpus.articles
        questions = zipf_weights(n, params.zipf_s)
        saves = questions if params.saves.popularity == "zipf" else zipf_weights(n, 0.0)
        return cls(
            save_weights=saves,
            question_weights=questions,
            saves_per_s=params.saves.count / params.day_s,
            questions_per_s=params.questions.count / params.day_s,
            day_s=params.day_s,
            unpublish_share=params.saves.mix.unpublish,
            citations_per_answer=params.questions.citations_per_answer,
            unpublish=unpublish,
            edit_share=params.edit.share if params.edit.enabled else 0.0,
            edit_delay_s=params.edit.delay_s if params.edit.enabled else None,
        )

    # -- the save clock ------------------------------------------------------------

    @property
    def _mu(self) -> float:
        return self.unpublish_share if self.unpublish else 0.0

    def save_clock(self, times_s) -> np.ndarray:
        """``A(t)``: the cumulative save intensity per unit of save popularity.

        Article ``i`` receives ``p_i * (A(t2) - A(t1))`` saves on average in
        ``(t1, t2]`` while published. Without unpublishing ``A(t) = saves_per_s * t``.
        """
        times = np.asarray(times_s, dtype=float)
        if self._mu == 0.0 or self.saves_per_s == 0.0:
            return self.saves_per_s * times
        return self._clock_solution(float(np.max(times, initial=0.0)))(times)

    def _clock_solution(self, horizon_s: float):
        p, mu, rate = self.save_weights, self._mu, self.saves_per_s

        def slope(_t, a):
            return [rate / float(np.dot(p, np.exp(-mu * p * a[0])))]

        from scipy import integrate  # here, not at import: every `kbsim` command imports this module

        solution = integrate.solve_ivp(
            slope, (0.0, max(horizon_s, 1.0)), [0.0], dense_output=True, rtol=1e-9, atol=1e-9
        )

        def clock(t):
            return solution.sol(np.clip(t, 0.0, None))[0]

        return clock

    def published(self, times_s) -> np.ndarray:
        """Probability that each article (columns, rank order) is still published at each time."""
        clock = self.save_clock(np.atleast_1d(times_s))
        return np.exp(-self._mu * np.outer(clock, self.save_weights))

    def _citation_weights(self, times_s) -> tuple[np.ndarray, np.ndarray]:
        """Per time: who the first citation (the target) and a further citation cite."""
        alive = self.published(times_s)
        target = self.question_weights * alive
        target /= target.sum(axis=1, keepdims=True)
        other = alive / alive.sum(axis=1, keepdims=True)
        return target, other

    # -- (a) staleness -------------------------------------------------------------

    def _agent_edit_hazard(self, start_s, end_s) -> np.ndarray:
        """Expected agent edits of each article (columns) in ``(start, end]`` (rows).

        An answer at ``v`` is edited at ``v + d`` with probability ``edit_share``,
        so edits land at rate ``questions_per_s * edit_share * q_i`` during
        ``[d, day + d]``.
        """
        start, end = np.atleast_1d(start_s).astype(float), np.atleast_1d(end_s).astype(float)
        if not self.edit_share or self.edit_delay_s is None:
            return np.zeros((len(start), len(self.question_weights)))
        d = self.edit_delay_s
        overlap = np.clip(np.minimum(end, self.day_s + d) - np.maximum(start, d), 0.0, None)
        return np.outer(overlap, self.questions_per_s * self.edit_share * self.question_weights)

    def staleness(self, times_s) -> pd.DataFrame:
        """Expected share of held citations, and of answers, stale at each time.

        Citations held at ``t`` were asked at ``u ~ U(0, t)`` (Poisson
        questions); each is stale with probability ``1 - exp(-p_i (A(t) - A(u)))``.
        An answer is stale when any of its citations is (citations independent).
        On a day with edits, the agent's edits add to the save hazard, and the
        first citation of an edited answer is stale from ``u + d`` on.
        """
        rows = []
        k = self.citations_per_answer
        for t in np.atleast_1d(np.asarray(times_s, dtype=float)):
            if t <= 0:
                rows.append((t, 0.0, 0.0))
                continue
            u, w = _gauss(0.0, t)
            clock = self.save_clock(np.append(u, t))
            hazard = np.outer(clock[-1] - clock[:-1], self.save_weights)
            fresh = np.exp(-hazard - self._agent_edit_hazard(u, np.full_like(u, t)))
            target, other = self._citation_weights(u)
            fresh_target = (target * fresh).sum(axis=1)
            if self.edit_share and self.edit_delay_s is not None:
                fresh_target = fresh_target * (1.0 - self.edit_share * (t - u >= self.edit_delay_s))
            fresh_other = (other * fresh).sum(axis=1)
            citation = 1.0 - np.dot(w, (fresh_target + (k - 1) * fresh_other) / k) / t
            answer = 1.0 - np.dot(w, fresh_target * fresh_other ** (k - 1)) / t
            rows.append((t, citation, answer))
        return pd.DataFrame(rows, columns=["time_s", "stale_citation_share", "stale_answer_share"])

    def staleness_by_hour(self, hours=None) -> pd.DataFrame:
        """:meth:`staleness` at each whole hour of the day (column ``hour``)."""
        if hours is None:
            hours = np.arange(1, int(math.floor(self.day_s / 3600.0 + 1e-9)) + 1)
        frame = self.staleness(np.asarray(hours, dtype=float) * 3600.0)
        frame.insert(0, "hour", np.asarray(hours, dtype=float))
        return frame

    # -- (b) edit rejections -------------------------------------------------------

    def edit_outcomes(
        self,
        delays_s,
        *,
        edit_share: float = 0.25,
        agent_edits: bool = True,
        retry_waits_approval: bool = True,
    ) -> pd.DataFrame:
        """Expected outcome shares of an edit of the target, ``d`` seconds after the read.

        Over question times ``u ~ U(0, day)`` and targets ``i``: gone when an
        unpublish falls in ``(u, u + d]``, applied when nothing does, conflict
        otherwise. ``retry_success`` is the chance that the re-read-and-retry
        after a conflict (after another approval delay) meets no save.
        """
        rows = []
        q = self.question_weights
        agent_rate = self.questions_per_s * edit_share * q if agent_edits else 0.0 * q
        day = self.day_s
        u, w = _gauss(0.0, day)
        for d in np.atleast_1d(np.asarray(delays_s, dtype=float)):
            retry_d = d if retry_waits_approval else 0.0
            clock = self.save_clock(np.concatenate([u, u + d, u + d + retry_d]))
            a0, a1, a2 = clock[: len(u)], clock[len(u) : 2 * len(u)], clock[2 * len(u) :]
            target, _ = self._citation_weights(u)
            # the agent's other edits land at (their question time + d), in [d, day + d]
            overlap1 = np.clip(np.minimum(u + d, day + d) - np.maximum(u, d), 0.0, None)
            overlap2 = np.clip(
                np.minimum(u + d + retry_d, day + d) - np.maximum(u + d, d), 0.0, None
            )
            people1 = np.outer(a1 - a0, self.save_weights)
            people2 = np.outer(a2 - a1, self.save_weights)
            gone = 1.0 - np.exp(-self._mu * people1)
            fresh = np.exp(-people1 - np.outer(overlap1, agent_rate))
            conflict = 1.0 - gone - fresh
            retry_fresh = np.exp(-people2 - np.outer(overlap2, agent_rate))
            p_gone = np.dot(w, (target * gone).sum(axis=1)) / day
            p_conflict = np.dot(w, (target * conflict).sum(axis=1)) / day
            p_retry = np.dot(w, (target * conflict * retry_fresh).sum(axis=1)) / day
            retry_success = p_retry / p_conflict if p_conflict > 0 else math.nan
            rows.append((d, p_conflict, p_gone, 1.0 - p_conflict - p_gone, retry_success))
        return pd.DataFrame(
            rows,
            columns=["delay_s", "rejection_rate", "gone_rate", "applied_rate", "retry_success"],
        )

    # -- (c) check cost ------------------------------------------------------------

    def cited_probability(self, t: float) -> np.ndarray:
        """Probability that each article has been cited at least once by time ``t``."""
        if t <= 0:
            return np.zeros_like(self.save_weights)
        u, w = _gauss(0.0, t)
        target, other = self._citation_weights(u)
        per_question = target + (self.citations_per_answer - 1) * other
        return 1.0 - np.exp(-self.questions_per_s * (w @ per_question))

    def check_cost(
        self,
        interval_s: float,
        *,
        page_size: int = 100,
        retention_s: float | None = None,
    ) -> pd.DataFrame:
        """Expected tool calls of each check (rows) for re-read and poll.

        Re-read reads every distinct cited article. Poll pages through the
        events since the last check (``max(1, ceil(X / page_size))`` pages for
        ``X ~ Poisson`` events) and re-reads the cited articles that moved. A
        retention window shorter than the interval expires the cursor when an
        event fell before the window; the poll then re-reads every live cited
        article.
        """
        if interval_s <= 0:
            raise ValueError(f"interval_s must be > 0, got {interval_s!r}")
        if page_size < 1:
            raise ValueError(f"page_size must be >= 1, got {page_size!r}")
        rows = []
        checks = int(math.floor(self.day_s / interval_s + 1e-9))
        edits_per_s = (
            self.questions_per_s * self.edit_share if self.edit_delay_s is not None else 0.0
        )
        events = (self.saves_per_s + edits_per_s) * interval_s
        pages = _expected_pages(events, page_size)
        lost = 0.0 if retention_s is None else max(0.0, interval_s - retention_s)
        p_expired = 1.0 - math.exp(-(self.saves_per_s + edits_per_s) * lost)
        for index in range(1, checks + 1):
            t = index * interval_s
            cited = self.cited_probability(t)
            clock = self.save_clock(np.array([t - interval_s, t]))
            alive_before = self.published(t - interval_s)[0]
            agent = self._agent_edit_hazard(t - interval_s, t)[0]
            people = 1.0 - np.exp(-self.save_weights * (clock[1] - clock[0]))
            # a person's save matters if the article is cited; the agent edits only what it cited
            moved_prob = alive_before * (1.0 - (1.0 - cited * people) * np.exp(-agent))
            reread = cited.sum()
            moved = float(moved_prob.sum())
            live = float(np.dot(cited, alive_before))
            poll = (1.0 - p_expired) * (pages + moved) + p_expired * (1.0 + live)
            rows.append((index, t, reread, poll, pages, moved, p_expired))
        return pd.DataFrame(
            rows,
            columns=[
                "check_index",
                "time_s",
                "reread_calls",
                "poll_calls",
                "poll_pages",
                "poll_rereads",
                "cursor_expired_rate",
            ],
        )

    def mean_check_cost(self, interval_s: float, **kwargs) -> pd.Series:
        """:meth:`check_cost` averaged over the day's checks."""
        return self.check_cost(interval_s, **kwargs).drop(columns=["check_index", "time_s"]).mean()


def _expected_pages(mean_events: float, page_size: int) -> float:
    """``E[max(1, ceil(X / page_size))]`` for ``X ~ Poisson(mean_events)``."""
    if mean_events <= 0:
        return 1.0
    from scipy import stats  # here, not at import: every `kbsim` command imports this module

    top = int(stats.poisson.ppf(1 - 1e-12, mean_events)) + page_size
    x = np.arange(0, top + 1)
    pages = np.maximum(1, np.ceil(x / page_size))
    return float(np.dot(stats.poisson.pmf(x, mean_events), pages))


def predict_staleness(params: DayParams, hours=None, *, unpublish: bool = True) -> pd.DataFrame:
    """Expected stale shares of citations and answers at each hour of a day like ``params``."""
    return FreshnessModel.from_params(params, unpublish=unpublish).staleness_by_hour(hours)


def predict_end_staleness(params: DayParams, *, unpublish: bool = True) -> pd.Series:
    """Expected stale shares at the end of the day."""
    model = FreshnessModel.from_params(params, unpublish=unpublish)
    return model.staleness([params.day_s]).iloc[0]


def predict_edit_outcomes(params: DayParams, delays_s, *, unpublish: bool = True) -> pd.DataFrame:
    """Expected rejection, gone and retry-success rates at each delay for ``params``'s day."""
    model = FreshnessModel.from_params(params, unpublish=unpublish)
    return model.edit_outcomes(
        delays_s,
        edit_share=params.edit.share,
        retry_waits_approval=params.edit.retry_waits_approval,
    )


def predict_check_cost(params: DayParams, *, unpublish: bool = True) -> pd.Series:
    """Expected calls per check of re-read and poll (mean over the day's checks)."""
    model = FreshnessModel.from_params(params, unpublish=unpublish)
    return model.mean_check_cost(
        params.checks.interval_s,
        page_size=params.checks.poll_page_size,
        retention_s=params.event_retention_s,
    )
