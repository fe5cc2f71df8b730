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
* A target's further citations are lexical neighbours, not fresh draws: a
  question about target ``j`` cites one of a few fixed neighbours of ``j``
  (:data:`NEIGHBOUR_PATTERNS`), each an average published article. This matters
  only for how many *distinct* articles are cited (what a check reads), not
  for staleness per citation.
* Detection and exposure (:meth:`FreshnessModel.check_policy`) follow every
  held citation through three states: fresh, stale but invisible to a title
  lookup (content changed only), stale and visible to it (retitled or
  unpublished). Re-read and poll flag a stale citation at the first check
  after it went stale; the title check at the first check after its article
  was retitled or unpublished, which is reasonable but not exact (a search
  that misses a live article would flag it early). Days without agent edits only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd

from kbsim.params import DayParams
from kbsim.sim.strategies import Strategy, resolve

_NODES, _WEIGHTS = np.polynomial.legendre.leggauss(96)

#: How a target's questions spread over its lexical neighbours (the article each query
#: ranks second), as ``(share of targets, shares of its questions per neighbour)``. A
#: question's query is 3 of the target's 4 title words, so there are 4 queries; a target
#: usually shares one title word with one other article, which the 3 queries holding that
#: word rank second, and the fourth query ranks another. Measured on the synthetic corpus
#: at 400 articles (at 2,000, 92% of targets are (3, 1)).
NEIGHBOUR_PATTERNS = (
    (0.61, (0.75, 0.25)),
    (0.22, (0.5, 0.5)),
    (0.17, (0.5, 0.25, 0.25)),
)
#: Cells of the time grid the detection model integrates on (each cell is solved exactly
#: for constant rates, so the grid only needs to follow the slow drift of the rates).
_CELLS = 480
#: Snapshots of the per-article cited exposure kept for the cost of checks.
_SNAPSHOTS = 96


def zipf_weights(n: int, s: float) -> np.ndarray:
    """Zipf probabilities over ranks 1..n with exponent ``s`` (``s = 0``: uniform)."""
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n!r}")
    weights = np.arange(1, n + 1, dtype=float) ** -float(s)
    return weights / weights.sum()


def rank_groups(n: int, singles: int = 500, groups: int = 1500) -> np.ndarray:
    """How many consecutive popularity ranks each entry of a grouped model stands for.

    The first ``singles`` ranks alone, the rest in about ``groups`` log-spaced runs: a
    Zipf weight changes by under 0.3% within a run at 20,000 articles, so the model
    treats the run's articles alike at a fraction of the cost.
    """
    if n <= singles + groups:
        return np.ones(n, dtype=int)
    edges = np.unique(np.round(np.geomspace(singles, n, groups + 1)).astype(int))
    return np.concatenate([np.ones(singles, dtype=int), np.diff(edges)])


def _group(weights: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Mean weight of each run of ``counts`` consecutive ranks."""
    ends = np.cumsum(counts)
    totals = np.add.reduceat(weights, ends - counts)
    return totals / counts


def _gauss(lo: float, hi: float) -> tuple[np.ndarray, np.ndarray]:
    """Gauss-Legendre nodes and weights on [lo, hi] (weights sum to hi - lo)."""
    half = 0.5 * (hi - lo)
    return lo + half * (_NODES + 1.0), half * _WEIGHTS


#: Fixed JSON bytes of a read result besides its title and content: keys, ids, two
#: timestamps and the citation (measured: 549 bytes for a 22-character title and a
#: 324-character body).
_READ_OVERHEAD_BYTES = 203.0
#: Mean characters of a title word (drawn uniformly from the vocabulary) and of a body
#: word (drawn Zipf-like, so short common words dominate), measured on the reference
#: corpus; a corpus of 20,000 articles has longer rare words (reads 6% larger).
_TITLE_WORD_CHARS = 4.73
_BODY_WORD_CHARS = 4.40
_SNIPPET_CHARS = 160


@dataclass(frozen=True)
class ResultSizes:
    """JSON bytes of the tool results a check pays for (compact UTF-8, as the day counts them).

    The defaults are the reference corpus's (4-word titles, 60-word bodies, 10 search
    hits); :meth:`from_params` scales them with the corpus's title and body lengths.
    """

    read_bytes: float = 549.0
    not_found_bytes: float = 101.0
    search_bytes: float = 3873.0
    page_bytes: float = 50.0
    event_bytes: float = 111.0

    @classmethod
    def from_params(cls, params: DayParams) -> ResultSizes:
        """The sizes for the corpus and title-search limit of ``params``."""
        corpus = params.corpus
        title = corpus.title_words * (_TITLE_WORD_CHARS + 1.0) - 1.0
        content = corpus.body_words * (_BODY_WORD_CHARS + 1.0)
        hit = _READ_OVERHEAD_BYTES + title + min(content, _SNIPPET_CHARS)
        hits = params.checks.title_search_limit
        return cls(
            read_bytes=_READ_OVERHEAD_BYTES + title + content,
            search_bytes=len('{"results":[]}') + hits * hit + (hits - 1),
        )


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
        retitle_share: share of people's saves that change the title too.
        neighbour_patterns: how a target's questions spread over its lexical neighbours
            (:data:`NEIGHBOUR_PATTERNS`); None models every further citation as a fresh
            average article.
        poll_page_size: events per poll page.
        sizes: JSON bytes of each tool result, for the bytes a check costs.
        article_counts: how many articles (of consecutive popularity ranks) each entry
            of the weights stands for, each with that weight; None: one each. Per-article
            results (``published``, ``cited_probability``) are then per entry.
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
    retitle_share: float = 0.0
    neighbour_patterns: tuple[tuple[float, tuple[float, ...]], ...] | None = None
    poll_page_size: int = 100
    sizes: ResultSizes = ResultSizes()
    article_counts: np.ndarray | None = None

    @classmethod
    def from_params(
        cls, params: DayParams, *, unpublish: bool = True, grouped: bool = True
    ) -> FreshnessModel:
        """The model of a simulated day with these parameters.

        ``grouped``: above 2,000 articles, treat runs of similar popularity alike
        (:func:`rank_groups`), which keeps a large corpus as fast as a small one.
        """
        n = params.corpus.articles
        questions = zipf_weights(n, params.zipf_s)
        saves = questions if params.saves.popularity == "zipf" else zipf_weights(n, 0.0)
        counts = rank_groups(n) if grouped else np.ones(n, dtype=int)
        if len(counts) < n:
            questions, saves = _group(questions, counts), _group(saves, counts)
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
            retitle_share=params.saves.mix.content_and_title,
            neighbour_patterns=NEIGHBOUR_PATTERNS,
            poll_page_size=params.checks.poll_page_size,
            sizes=ResultSizes.from_params(params),
            article_counts=counts if len(counts) < n else None,
        )

    # -- the save clock ------------------------------------------------------------

    @cached_property
    def _counts(self) -> np.ndarray:
        if self.article_counts is None:
            return np.ones(len(self.save_weights))
        return np.asarray(self.article_counts, dtype=float)

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
        horizon = max(float(np.max(times, initial=0.0)), self.day_s)
        solved = self._clocks
        if solved.get("horizon", -1.0) < horizon:
            # solved once per model, and again only for a longer horizon (edits past the day)
            longer = horizon if "horizon" not in solved else max(horizon, 2.0 * solved["horizon"])
            solved.update(horizon=longer, clock=self._clock_solution(longer))
        return solved["clock"](times)

    @cached_property
    def _clocks(self) -> dict:
        return {}

    def _clock_solution(self, horizon_s: float):
        p, mu, rate = self.save_weights, self._mu, self.saves_per_s
        mass = p * self._counts

        def slope(_t, a):
            return [rate / float(np.dot(mass, np.exp(-mu * p * a[0])))]

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
        target /= (target @ self._counts)[:, None]
        other = alive / (alive @ self._counts)[:, None]
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
            fresh_target = (target * fresh) @ self._counts
            if self.edit_share and self.edit_delay_s is not None:
                fresh_target = fresh_target * (1.0 - self.edit_share * (t - u >= self.edit_delay_s))
            fresh_other = (other * fresh) @ self._counts
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
        delays = np.atleast_1d(np.asarray(delays_s, dtype=float))
        retries = delays if retry_waits_approval else np.zeros_like(delays)
        # every clock reading at once: the read, the edit and the retry of each delay
        edits, retried = u[None, :] + delays[:, None], u[None, :] + (delays + retries)[:, None]
        readings = self.save_clock(np.concatenate([u, edits.ravel(), retried.ravel()]))
        a0 = readings[: len(u)]
        edit_clock = readings[len(u) : len(u) * (1 + len(delays))].reshape(len(delays), len(u))
        retry_clock = readings[len(u) * (1 + len(delays)) :].reshape(len(delays), len(u))
        target, _ = self._citation_weights(u)
        for d, retry_d, a1, a2 in zip(delays, retries, edit_clock, retry_clock, strict=True):
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
            counts = self._counts
            p_gone = np.dot(w, (target * gone) @ counts) / day
            p_conflict = np.dot(w, (target * conflict) @ counts) / day
            p_retry = np.dot(w, (target * conflict * retry_fresh) @ counts) / day
            retry_success = p_retry / p_conflict if p_conflict > 0 else math.nan
            rows.append((d, p_conflict, p_gone, 1.0 - p_conflict - p_gone, retry_success))
        return pd.DataFrame(
            rows,
            columns=["delay_s", "rejection_rate", "gone_rate", "applied_rate", "retry_success"],
        )

    def blind_overwrite_losses(self, delays_s) -> pd.DataFrame:
        """Expected people's saves an edit without compare-and-swap silently replaces.

        The same quadrature as :meth:`edit_outcomes`: a blind edit ``d`` seconds after its
        read applies whenever the target is still published, and then replaces every
        people's content save of ``(u, u + d]``, a Poisson count of mean
        ``(1 - unpublish_share) * p_i * (A(u + d) - A(u))``, kept when no unpublish falls in
        the same window. Columns ``delay_s``, ``lost_per_edit`` and ``conflict_rate`` (the
        share of edits that compare-and-swap would have refused over a person's save,
        :meth:`edit_outcomes`' rejection without the agent's own edits).
        """
        day = self.day_s
        u, w = _gauss(0.0, day)
        delays = np.atleast_1d(np.asarray(delays_s, dtype=float))
        readings = self.save_clock(np.concatenate([u, (u[None, :] + delays[:, None]).ravel()]))
        a0, edit_clock = readings[: len(u)], readings[len(u) :].reshape(len(delays), len(u))
        target, _ = self._citation_weights(u)
        content = 1.0 - self.unpublish_share
        rows = []
        for d, a1 in zip(delays, edit_clock, strict=True):
            people = np.outer(a1 - a0, self.save_weights)
            kept = np.exp(-self._mu * people)  # no unpublish in the window: the edit applies
            lost = np.dot(w, (target * content * people * kept) @ self._counts) / day
            conflict = np.dot(w, (target * (kept - np.exp(-people))) @ self._counts) / day
            rows.append((d, lost, conflict))
        return pd.DataFrame(rows, columns=["delay_s", "lost_per_edit", "conflict_rate"])

    # -- (c) check cost ------------------------------------------------------------

    def cited_probability(self, t: float) -> np.ndarray:
        """Probability that each article has been cited at least once by time ``t``.

        A target is cited by its own questions; a neighbour by the first question of each
        (target, neighbour) pair (:data:`NEIGHBOUR_PATTERNS`), each pair's neighbour an
        average published article.
        """
        if t <= 0:
            return np.zeros_like(self.save_weights)
        return self._flows.cited(np.array([min(float(t), self.day_s)]))[0]

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
            reread = float(cited @ self._counts)
            moved = float(moved_prob @ self._counts)
            live = float(np.dot(cited * self._counts, alive_before))
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

    # -- (d) detection, exposure and the cost of a check policy ---------------------

    @cached_property
    def _flows(self) -> _Flows:
        """The day's citations followed on a time grid: computed once per model."""
        return _day_flows(self)

    def check_policy(self, intervals_s, strategies: tuple[Strategy, ...] | None = None) -> pd.DataFrame:
        """Detection, exposure and cost per hour of each strategy at each check interval.

        One row per interval and strategy (``strategies``, default the study's three, that
        has a ``model``: each turns the day's :class:`PolicyQuantities` into its row), with the
        metrics of :mod:`kbsim.stats.metrics` as the day computes them: checks at every
        multiple of the interval up to the end of the day (the last at
        ``floor(day / interval) * interval``); ``detected_share`` and the latencies over
        the citations stale by the last check; ``stale_exposure`` the citation-time
        stale and not yet flagged (up to the end of the day) over the citation-time
        held; ``calls_per_hour`` and ``bytes_per_hour`` every check's cost over the
        day's hours. ``exact`` is the strategy's: False for the title check, whose model is reasonable
        rather than exact (its searches are the distinct cited (article, title) pairs, the
        extra titles of retitled articles counted roughly, and it has no p90).

        Raises:
            ValueError: an interval not in ``(0, day]``, or a day with agent edits.
        """
        if self.edit_share and self.edit_delay_s is not None:
            raise ValueError(
                "check_policy models days without agent edits; build the model from a day "
                "with edit.delay_s null"
            )
        modelled = [strategy for strategy in (resolve() if strategies is None else strategies)
                    if strategy.model is not None]
        rows = []
        for interval in np.atleast_1d(np.asarray(intervals_s, dtype=float)):
            if not (math.isfinite(interval) and 0.0 < interval <= self.day_s * (1 + 1e-9)):
                raise ValueError(
                    f"interval_s must be in (0, {self.day_s:g}] (the day), got {interval!r}"
                )
            quantities = self.policy_quantities(float(interval))
            for strategy in modelled:
                assert strategy.model is not None
                rows.append(
                    {
                        "interval_s": float(interval),
                        "strategy": strategy.name,
                        **strategy.model(quantities),
                        "exact": strategy.exact,
                    }
                )
        return pd.DataFrame(rows)

    def policy_quantities(self, interval_s: float) -> PolicyQuantities:
        """What the day's checks at every ``interval_s`` read and detect, summed over the
        day: the quantities each strategy's ``model`` turns into its row."""
        flows, sizes, p, counts = self._flows, self.sizes, self.save_weights, self._counts
        detection = flows.detection(interval_s)
        checks = interval_s * np.arange(1, int(math.floor(self.day_s / interval_s + 1e-9)) + 1)
        events = self.saves_per_s * interval_s
        pages = _expected_pages(events, self.poll_page_size)
        totals = dict.fromkeys(("reread_calls", "reread_bytes", "moved", "moved_bytes", "retitled", "moved_held",
                                "moved_held_bytes", "saves_of_held"), 0.0)
        chunk = max(1, 2_000_000 // len(p))
        for start in range(0, len(checks), chunk):
            at = checks[start : start + chunk]
            cited, gone = flows.cited(at), flows.cited_then_gone(at)
            # cited by the check before (nothing before the first check)
            held = np.where((at - interval_s > 0)[:, None], flows.cited(np.maximum(at - interval_s, 0.0)), 0.0)
            clock_now, clock_before = self.save_clock(at), self.save_clock(at - interval_s)
            alive_before = np.exp(-self._mu * np.outer(clock_before, p))
            saves = np.outer(clock_now - clock_before, p)
            moved = alive_before * cited * -np.expm1(-saves)
            moved_gone = alive_before * cited * -np.expm1(-self._mu * saves)
            moved_held = alive_before * held * -np.expm1(-saves)
            moved_held_gone = alive_before * held * -np.expm1(-self._mu * saves)
            totals["moved_held"] += (moved_held @ counts).sum()
            totals["moved_held_bytes"] += (
                ((moved_held - moved_held_gone) * sizes.read_bytes + moved_held_gone * sizes.not_found_bytes)
                @ counts
            ).sum()
            # every save of a held article until it is unpublished (the unpublish is the last)
            told = -np.expm1(-self._mu * saves) / self._mu if self._mu > 0 else saves
            totals["saves_of_held"] += ((alive_before * held * told) @ counts).sum()
            totals["reread_calls"] += (cited @ counts).sum()
            totals["retitled"] += (flows.recited_after_retitle(at) @ counts).sum()
            totals["reread_bytes"] += (
                ((cited - gone) * sizes.read_bytes + gone * sizes.not_found_bytes) @ counts
            ).sum()
            totals["moved"] += (moved @ counts).sum()
            totals["moved_bytes"] += (
                ((moved - moved_gone) * sizes.read_bytes + moved_gone * sizes.not_found_bytes)
                @ counts
            ).sum()
        # what was first cited between two checks, summed over them: what was cited by the last
        newly_cited = float((flows.cited(checks[-1:]) @ counts).sum())
        newly_gone = float((flows.cited_then_gone(checks[-1:]) @ counts).sum())
        return PolicyQuantities(
            hours=self.day_s / 3600.0,
            checks=len(checks),
            events=events,
            pages=pages,
            sizes=sizes,
            cited_reads=totals["reread_calls"],
            cited_read_bytes=totals["reread_bytes"],
            retitled=totals["retitled"],
            moved=totals["moved"],
            moved_bytes=totals["moved_bytes"],
            newly_cited=newly_cited,
            newly_cited_bytes=(newly_cited - newly_gone) * sizes.read_bytes + newly_gone * sizes.not_found_bytes,
            moved_held=totals["moved_held"],
            moved_held_bytes=totals["moved_held_bytes"],
            saves_of_held=totals["saves_of_held"],
            exact_detection=detection["exact"],
            title_detection=detection["visible"],
        )


@dataclass(frozen=True)
class PolicyQuantities:
    """What checks at one interval read and detect over a modelled day, for a strategy's
    ``model`` (:class:`kbsim.sim.strategies.Strategy`) to turn into calls, bytes and detection.

    Attributes:
        hours: the day's hours.
        checks: the day's checks.
        events: expected event-log entries written between two checks.
        pages: expected pages of the event log a poll of those events reads.
        sizes: the bytes of one answer of each tool (``read_bytes``, ``search_bytes``,
            ``page_bytes``, ``event_bytes``, ``not_found_bytes``).
        cited_reads: distinct cited articles, summed over the checks (a read of each).
        cited_read_bytes: the bytes of those reads (a gone article's is a not_found error).
        retitled: extra titles of retitled articles still cited, summed over the checks.
        moved: distinct cited articles saved since the check before, summed over the checks.
        moved_bytes: the bytes of reading those.
        exact_detection: detected share, latencies and exposure of a strategy that flags
            exactly what is stale at every check.
        title_detection: the same for one that sees only a retitle or an unpublish.
        newly_cited: distinct articles first cited since the check before, summed over the
            checks: the distinct articles cited by the last check (each read once when new).
        newly_cited_bytes: the bytes of reading those (a gone one's is a not_found error).
        moved_held: distinct articles already cited by the check before that were saved
            since, summed over the checks (what a strategy told of changes reads again).
        moved_held_bytes: the bytes of reading those.
        saves_of_held: saves of the articles cited by the check before, summed over the
            checks, every save counted (what a strategy told of every change is told).
    """

    hours: float
    checks: int
    events: float
    pages: float
    sizes: Any
    cited_reads: float
    cited_read_bytes: float
    retitled: float
    moved: float
    moved_bytes: float
    exact_detection: dict[str, float]
    title_detection: dict[str, float]
    newly_cited: float
    newly_cited_bytes: float
    moved_held: float
    moved_held_bytes: float
    saves_of_held: float


def _phi(x: np.ndarray) -> np.ndarray:
    """``(1 - exp(-x)) / x``, 1 at 0: the share of a uniform inflow over a cell still
    fresh at its end, for a hazard ``x`` over the cell."""
    x = np.asarray(x, dtype=float)
    small = x < 1e-8
    safe = np.where(small, 1.0, x)
    return np.where(small, 1.0 - 0.5 * x, -np.expm1(-safe) / safe)


@dataclass(frozen=True)
class _Flows:
    """A day's citations on a time grid (days without agent edits).

    Per cell: citations going stale (``stale``) and becoming visible to the title check
    (``visible``: retitled or unpublished since cited). At the grid points: the
    citation-time spent stale but invisible so far (``blind_time``) and the summed ages
    of the citations stale but invisible now (``blind_age``). At the snapshots: each
    article's cited exposures, whose sum gives the chance it has been cited.
    """

    times: np.ndarray
    stale: np.ndarray
    visible: np.ndarray
    blind_time: np.ndarray
    blind_age: np.ndarray
    held_s: float
    snapshot_times: np.ndarray
    cited_exposure: np.ndarray  # snapshots x articles
    cited_gone: np.ndarray  # snapshots x articles: cited, then unpublished
    citation_rate: np.ndarray  # per article, over the day
    retitle_rate: np.ndarray  # per article, over the day

    def recited_after_retitle(self, times_s) -> np.ndarray:
        """Expected extra (article, title) pairs of each article (columns) by each time
        (rows): retitles of an article already cited that a citation followed before the
        next retitle. Each is one more title the title check searches for. Retitles and
        citations are Poisson at the day's average rates (the title check's model is rough):
        ``h c / (h + c) * integral_0^t (1 - exp(-c r)) (1 - exp(-(h + c)(t - r))) dr``.
        """
        t = np.atleast_1d(np.asarray(times_s, dtype=float))[:, None]
        h, c = self.retitle_rate, self.citation_rate
        b = h + c
        integral = t * (1.0 - _phi(c * t) - _phi(b * t) + np.exp(-c * t) * _phi(h * t))
        return h * c / np.where(b > 0, b, 1.0) * integral

    def _at(self, snapshots: np.ndarray, times_s) -> np.ndarray:
        times = np.atleast_1d(np.asarray(times_s, dtype=float))
        grid = self.snapshot_times
        index = np.clip(np.searchsorted(grid, times, side="right") - 1, 0, len(grid) - 2)
        weight = ((times - grid[index]) / (grid[index + 1] - grid[index]))[:, None]
        return (1 - weight) * snapshots[index] + weight * snapshots[index + 1]

    def cited(self, times_s) -> np.ndarray:
        """Probability that each article (columns) has been cited by each time (rows)."""
        return -np.expm1(-self._at(self.cited_exposure, times_s))

    def cited_then_gone(self, times_s) -> np.ndarray:
        """Probability that each article (columns) was cited, then unpublished, by each time (rows)."""
        return self._at(self.cited_gone, times_s)

    def _moments(self, per_cell: np.ndarray, t) -> tuple[np.ndarray, np.ndarray]:
        """``(sum, time-weighted sum)`` of a per-cell flow up to each ``t`` (uniform within a cell)."""
        t = np.asarray(t, dtype=float)
        times = self.times
        width = times[1] - times[0]
        density = per_cell / width
        zeroth = np.concatenate([[0.0], np.cumsum(per_cell)])
        first = np.concatenate([[0.0], np.cumsum(per_cell * 0.5 * (times[1:] + times[:-1]))])
        index = np.clip(np.searchsorted(times, t, side="right") - 1, 0, len(per_cell) - 1)
        start = times[index]
        return (
            zeroth[index] + density[index] * (t - start),
            first[index] + density[index] * 0.5 * (t**2 - start**2),
        )

    def _waits(self, per_cell: np.ndarray, interval_s: float) -> tuple[float, float, float]:
        """For a flow of events: the events by the last check, their summed wait until the
        next check, and the summed wait until the first check or the end of the day of all."""
        day = self.times[-1]
        checks = interval_s * np.arange(0, int(math.floor(day / interval_s + 1e-9)) + 1)
        zeroth, first = self._moments(per_cell, checks)
        waited = float(np.sum(checks[1:] * np.diff(zeroth) - np.diff(first)))
        end0, end1 = self._moments(per_cell, np.array([day]))
        tail = float(day * (end0[0] - zeroth[-1]) - (end1[0] - first[-1]))
        return float(zeroth[-1]), waited, waited + tail

    def _quantile_wait(self, per_cell: np.ndarray, interval_s: float, q: float) -> float:
        """The ``q`` quantile of the wait from an event until the next check (events by the last check)."""
        day = self.times[-1]
        checks = interval_s * np.arange(1, int(math.floor(day / interval_s + 1e-9)) + 1)
        total = self._moments(per_cell, checks[-1:])[0][0]
        if total <= 0:
            return math.nan
        at_checks = self._moments(per_cell, checks)[0]
        lo, hi = 0.0, float(interval_s)
        for _ in range(50):
            wait = 0.5 * (lo + hi)
            within = at_checks - self._moments(per_cell, np.maximum(checks - wait, checks - interval_s))[0]
            if within.sum() / total < q:
                lo = wait
            else:
                hi = wait
        return 0.5 * (lo + hi)

    def detection(self, interval_s: float) -> dict[str, dict[str, float]]:
        """Detected share, mean and p90 latency, and stale exposure of a check that sees only
        a retitle or an unpublish (``visible``) and of an exact one (``exact``)."""
        stale, exact_wait, exact_exposed = self._waits(self.stale, interval_s)
        visible, title_wait, title_exposed = self._waits(self.visible, interval_s)
        day = self.times[-1]
        last = interval_s * math.floor(day / interval_s + 1e-9)
        blind_by_last = float(np.interp(last, self.times, self.blind_time))
        blind_now = float(np.interp(last, self.times, self.blind_age))
        # a day's p90 is np.quantile over its n detections: on average the quantile at
        # (0.9 (n - 1) + 1) / (n + 1) of the latencies (order statistics), a little below p90
        n = max(stale, 1.0)
        exact = {
            "detected_share": 1.0 if stale > 0 else math.nan,
            "detection_latency_s": exact_wait / stale if stale > 0 else math.nan,
            "detection_latency_p90_s": self._quantile_wait(
                self.stale, interval_s, (0.9 * (n - 1) + 1) / (n + 1)
            ),
            "stale_exposure": exact_exposed / self.held_s if self.held_s > 0 else math.nan,
        }
        # a title detection waited while the citation was stale but invisible, then for the check
        title_latency = blind_by_last - blind_now + title_wait
        title = {
            "detected_share": visible / stale if stale > 0 else math.nan,
            "detection_latency_s": title_latency / visible if visible > 0 else math.nan,
            "detection_latency_p90_s": math.nan,
            "stale_exposure": (float(self.blind_time[-1]) + title_exposed) / self.held_s
            if self.held_s > 0
            else math.nan,
        }
        # an exact strategy flags what is stale at every check, whichever it is
        return {"visible": title, "exact": exact}


def _day_flows(model: FreshnessModel) -> _Flows:
    """Follow the day's citations cell by cell: fresh, stale but invisible, visible.

    Each cell is solved exactly for constant rates: citations arrive uniformly in it at
    each article's citation rate, and an article's saves are a Poisson process of
    intensity ``p_i dA``; a share ``visible`` of saves retitles or unpublishes.
    """
    day, cells = model.day_s, _CELLS
    times = np.linspace(0.0, day, cells + 1)
    width = day / cells
    clock = model.save_clock(times)
    p, q, counts = model.save_weights, model.question_weights, model._counts
    rate, k = model.questions_per_s, model.citations_per_answer
    visible_share = min(1.0, model.retitle_share + model.unpublish_share)
    # a new (target, neighbour) pair: sum over patterns and neighbours of weight * share * P(unused)
    terms = [(weight * share, share) for weight, shares in model.neighbour_patterns or () for share in shares]
    # per cell (rows) and article (columns): published at the cell's middle, saves in the cell
    alive = np.exp(-model._mu * np.outer(0.5 * (clock[1:] + clock[:-1]), p))
    hazard = np.outer(np.diff(clock), p)
    target = q * alive
    target /= (target @ counts)[:, None]
    other = alive / (alive @ counts)[:, None]
    arriving = rate * width * (target + (k - 1) * other)
    survive, survive_visible = np.exp(-hazard), np.exp(-visible_share * hazard)
    arriving_fresh, arriving_blind = arriving * _phi(hazard), arriving * (
        _phi(visible_share * hazard) - _phi(hazard)
    )
    n = len(p)
    fresh, blind, blind_age = np.zeros(n), np.zeros(n), np.zeros(n)
    stale, visible = np.empty(cells), np.empty(cells)
    blind_mass, blind_ages = np.zeros(cells + 1), np.zeros(cells + 1)
    for cell in range(cells):
        fresh_end = fresh * survive[cell] + arriving_fresh[cell]
        kept_blind = blind * survive_visible[cell]
        blind_end = kept_blind + fresh * (survive_visible[cell] - survive[cell]) + arriving_blind[cell]
        stale[cell] = (fresh + arriving[cell] - fresh_end) @ counts
        visible[cell] = max(0.0, (fresh + arriving[cell] + blind - fresh_end - blind_end) @ counts)
        blind_age = (blind_age + blind * width) * survive_visible[cell] + (blind_end - kept_blind) * (
            0.5 * width
        )
        blind_ages[cell + 1] = blind_age @ counts
        blind_mass[cell + 1] = blind_end @ counts
        fresh, blind = fresh_end, blind_end
    blind_time = np.concatenate([[0.0], np.cumsum(0.5 * width * (blind_mass[1:] + blind_mass[:-1]))])
    # distinct cited articles: targets, and the neighbour of each (target, neighbour) pair
    target_exposure = np.cumsum(width * target, axis=0)
    before = np.vstack([np.zeros(n), target_exposure[:-1]])
    if terms:
        middle = before + 0.5 * width * target
        pair_rate = rate * sum(
            (target * coefficient * np.exp(-rate * share * middle)) @ counts for coefficient, share in terms
        )
    else:
        pair_rate = np.full(cells, rate)
    neighbour_exposure = np.cumsum((k - 1) * width * pair_rate[:, None] * other, axis=0)
    # cited, then unpublished: a re-read of it is a not-found error (an article unpublished
    # early is seldom cited, so this is well below cited * unpublished)
    cited_before = -np.expm1(-(rate * before + np.vstack([np.zeros(n), neighbour_exposure[:-1]])))
    gone_cited = np.cumsum(cited_before * alive * -np.expm1(-model._mu * hazard), axis=0)
    every = max(1, cells // _SNAPSHOTS)
    snapshot_cells = np.unique(np.append(np.arange(every, cells + 1, every), cells))
    exposure = rate * target_exposure[snapshot_cells - 1] + neighbour_exposure[snapshot_cells - 1]
    return _Flows(
        times=times,
        stale=stale,
        visible=visible,
        blind_time=blind_time,
        blind_age=blind_ages,
        held_s=rate * k * day**2 / 2.0,
        snapshot_times=np.concatenate([[0.0], times[snapshot_cells]]),
        cited_exposure=np.vstack([np.zeros(n), exposure]),
        cited_gone=np.vstack([np.zeros(n), gone_cited[snapshot_cells - 1]]),
        citation_rate=arriving.sum(axis=0) / day,
        retitle_rate=model.retitle_share * p * clock[-1] / day,
    )


def _expected_pages(mean_events: float, page_size: int) -> float:
    """``E[max(1, ceil(X / page_size))]`` for ``X ~ Poisson(mean_events)``.

    ``max(1, ceil(X / s))`` is ``1 + sum_{j >= 1} [X > j s]``, so the mean is one plus
    the Poisson tail at every multiple of the page size.
    """
    if mean_events <= 0:
        return 1.0
    # scipy.special, not scipy.stats: a fraction of the import time
    from scipy.special import pdtrc

    top = mean_events + 40.0 * math.sqrt(mean_events) + 40.0
    multiples = page_size * np.arange(1, int(top // page_size) + 2)
    return 1.0 + float(pdtrc(multiples, mean_events).sum())


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


def predict_lost_updates(params: DayParams, delays_s, *, unpublish: bool = True) -> pd.DataFrame:
    """Expected ``lost_update_share`` of a day like ``params`` with blind overwrites
    (``edit.compare_and_swap: false``), one agent and a perfect wire, at each delay.

    Each of the day's ``questions.count * edit.share`` edits replaces
    :meth:`FreshnessModel.blind_overwrite_losses`' ``lost_per_edit`` people's saves, over
    the day's people's content saves (``saves.count`` less its unpublishes). The model
    counts a save twice when two edits' windows both hold it (the simulation counts it
    once), so it is an upper bound when edits of one article crowd together. Columns
    ``delay_s``, ``lost_update_share``, ``lost_per_edit`` and ``conflict_rate``.
    """
    model = FreshnessModel.from_params(params, unpublish=unpublish)
    frame = model.blind_overwrite_losses(delays_s)
    edits = params.questions.count * params.edit.share
    content_saves = params.saves.count * (1.0 - params.saves.mix.unpublish)
    share = frame["lost_per_edit"] * edits / content_saves if content_saves else np.nan
    return frame.assign(lost_update_share=share)[["delay_s", "lost_update_share", "lost_per_edit", "conflict_rate"]]


def predict_check_cost(params: DayParams, *, unpublish: bool = True) -> pd.Series:
    """Expected calls per check of re-read and poll (mean over the day's checks)."""
    model = FreshnessModel.from_params(params, unpublish=unpublish)
    return model.mean_check_cost(
        params.checks.interval_s,
        page_size=params.checks.poll_page_size,
        retention_s=params.event_retention_s,
    )


def predict_check_policy(params: DayParams, intervals_s=None, *, unpublish: bool = True) -> pd.DataFrame:
    """:meth:`FreshnessModel.check_policy` for a day like ``params`` (its edits switched
    off), of the day's strategies that have a model; ``intervals_s`` defaults to the day's
    check interval."""
    if params.edit.enabled:
        params = params.model_copy(update={"edit": params.edit.model_copy(update={"delay_s": None})})
    intervals = [params.checks.interval_s] if intervals_s is None else intervals_s
    strategies = resolve(params.checks.strategies)
    return FreshnessModel.from_params(params, unpublish=unpublish).check_policy(intervals, strategies)


#: The longest read-to-edit delay :func:`predict_safe_edit_delay` considers: ten days.
SAFE_DELAY_HORIZON_S = 10 * 86400.0


def predict_safe_edit_delay(params: DayParams, targets=(0.01, 0.05, 0.10), *, unpublish: bool = True) -> pd.DataFrame:
    """The largest delay between reading an article and editing it that keeps the
    predicted share of edits rejected as a version conflict (:meth:`FreshnessModel.edit_outcomes`,
    ``rejection_rate``) at or below each target, for a day like ``params`` with its
    ``edit.share`` (its edits switched on if they are off). Columns ``target``,
    ``delay_s`` (inf when no delay up to ten days reaches the target) and the
    ``gone_rate`` at that delay.
    """
    if not params.edit.enabled:
        params = params.model_copy(update={"edit": params.edit.model_copy(update={"delay_s": 60.0})})
    model = FreshnessModel.from_params(params, unpublish=unpublish)

    # the rate rises with the delay, close to a power of it: interpolate log rate on log delay
    grid = np.geomspace(0.1, SAFE_DELAY_HORIZON_S, 121)
    outcomes = model.edit_outcomes(
        grid, edit_share=params.edit.share, retry_waits_approval=params.edit.retry_waits_approval
    )
    rates, gone = outcomes["rejection_rate"].to_numpy(), outcomes["gone_rate"].to_numpy()
    rows = []
    for target in np.atleast_1d(np.asarray(targets, dtype=float)):
        if not 0.0 < target < 1.0:
            raise ValueError(f"target must be a share in (0, 1), got {target!r}")
        above = np.flatnonzero(rates > target)
        if not len(above):
            rows.append((float(target), math.inf, math.nan))
            continue
        if above[0] == 0:
            rows.append((float(target), 0.0, 0.0))
            continue
        i = above[0]
        low, high = max(rates[i - 1], 1e-300), rates[i]
        weight = (math.log(target) - math.log(low)) / (math.log(high) - math.log(low))
        delay = math.exp(math.log(grid[i - 1]) + weight * (math.log(grid[i]) - math.log(grid[i - 1])))
        rows.append((float(target), delay, float(gone[i - 1] + weight * (gone[i] - gone[i - 1]))))
    return pd.DataFrame(rows, columns=["target", "delay_s", "gone_rate"])
