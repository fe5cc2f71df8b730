"""The parameters of one simulated day, validated and frozen.

Every field has the reference study's default (docs/model.md, "The simulated day"), so
``DayParams()`` is the reference Zipf day without edits. Nested groups are
their own models so that sweeps can address them by dotted name
(``saves.zipf_s``, ``edit.delay_s``). Unknown keys are rejected.
"""

from __future__ import annotations

import math
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class CorpusParams(_Frozen):
    """The synthetic corpus: titles and bodies drawn from a seeded vocabulary."""

    articles: int = Field(400, ge=3, description="articles published at the start of the day")
    vocabulary_per_article: float = Field(
        4.0, gt=0, description="distinct vocabulary words per article (Heaps-style growth)"
    )
    min_vocabulary: int = Field(600, ge=50, description="vocabulary floor for small corpora")
    title_words: int = Field(4, ge=2, le=12)
    body_words: int = Field(60, ge=5, le=2000)


class SaveMix(_Frozen):
    """Shares of people's saves by kind; they must sum to 1."""

    content: float = Field(0.85, ge=0, le=1)
    content_and_title: float = Field(0.10, ge=0, le=1)
    unpublish: float = Field(0.05, ge=0, le=1)

    @model_validator(mode="after")
    def _sums_to_one(self) -> SaveMix:
        total = self.content + self.content_and_title + self.unpublish
        if not math.isclose(total, 1.0, abs_tol=1e-9):
            raise ValueError(f"save mix shares must sum to 1, got {total:g}")
        return self


class SaveParams(_Frozen):
    """People editing the knowledge base."""

    count: int = Field(300, ge=0, description="saves by people in the day")
    popularity: Literal["zipf", "uniform"] = Field(
        "zipf", description="'uniform' spreads saves evenly over articles (the control)"
    )
    mix: SaveMix = SaveMix()
    rank_correlation: float = Field(
        1.0,
        ge=0,
        le=1,
        description="Zipf saves only: how closely the save ranking follows the question ranking "
        "(a Gaussian copula of the two): 1 = the same ranking, 0 = independent",
    )
    replace_unpublished: bool = Field(
        False,
        description="a steady-state knowledge base: each article people unpublish is replaced at once "
        "by a new article that takes its popularity",
    )

    @model_validator(mode="after")
    def _correlation_needs_zipf(self) -> SaveParams:
        if self.popularity == "uniform" and self.rank_correlation != 1.0:
            raise ValueError("rank_correlation applies to Zipf saves; uniform saves have no ranking")
        return self


class QuestionParams(_Frozen):
    """People asking; the agent answers each with cited articles."""

    count: int = Field(120, ge=0, description="questions in the day")
    query_words: int = Field(3, ge=1, le=12, description="title words used as the query")
    citations_per_answer: int = Field(2, ge=1, le=20, description="top hits read and cited")
    search_limit: int = Field(10, ge=1, le=20)


class CheckParams(_Frozen):
    """The agent re-checking every citation it has given."""

    interval_s: float = Field(3600.0, gt=0, description="time between checks")
    poll_page_size: int = Field(100, ge=1, le=100)
    title_search_limit: int = Field(10, ge=1, le=20)


class EditParams(_Frozen):
    """The edit experiment: edit the first cited article some time after answering.

    ``delay_s`` is ``None`` for a day without edits; otherwise it is the fixed
    delay, the mean (exponential) or the median (lognormal).
    """

    share: float = Field(0.25, ge=0, le=1, description="share of answers followed by an edit")
    delay_s: float | None = Field(None, ge=0)
    delay_distribution: Literal["fixed", "exponential", "lognormal"] = "fixed"
    lognormal_sigma: float = Field(1.0, gt=0, description="spread of the lognormal delay")
    max_retries: int = Field(1, ge=0, le=10, description="re-read-and-retry rounds after a conflict")
    retry_waits_approval: bool = Field(
        True, description="a retry waits a fresh approval delay, as every write call does"
    )
    exact_share: bool = Field(
        False,
        description="edit exactly the share of answers (every fourth for 0.25) instead of each with "
        "that probability",
    )

    @property
    def enabled(self) -> bool:
        return self.delay_s is not None and self.share > 0


class DayParams(_Frozen):
    """One simulated day (defaults: the reference study's Zipf day, no edits)."""

    day_hours: float = Field(8.0, gt=0)
    zipf_s: float = Field(0.9, ge=0, le=5, description="Zipf exponent of article popularity")
    ranking: Literal["shuffled", "by_id"] = Field(
        "shuffled",
        description="popularity ranks: a seeded shuffle of the articles, or their publication order "
        "(the first article the most popular)",
    )
    arrivals: Literal["uniform", "poisson"] = Field(
        "uniform",
        description="'uniform': exactly `count` arrivals at uniform times; 'poisson': a Poisson number of them",
    )
    event_retention_s: float | None = Field(None, gt=0, description="None keeps every event")
    corpus: CorpusParams = CorpusParams()
    saves: SaveParams = SaveParams()
    questions: QuestionParams = QuestionParams()
    checks: CheckParams = CheckParams()
    edit: EditParams = EditParams()

    @property
    def day_s(self) -> float:
        return self.day_hours * 3600.0
