"""The day's variants for the write-up's open choices: how rankings relate, steady state, exact edit share."""

from __future__ import annotations

import numpy as np
import pytest
from pydantic import ValidationError
from scipy import stats as scipy_stats

from kbsim.params import DayParams
from kbsim.sim import run_day
from kbsim.sim.popularity import correlated_ranking

SMALL = {"day_hours": 4, "corpus": {"articles": 120}, "questions": {"count": 60}, "saves": {"count": 150}}


def small(**overrides) -> DayParams:
    data = {**SMALL, **overrides}
    for key in ("saves", "edit"):
        if key in overrides:
            data[key] = {**SMALL.get(key, {}), **overrides[key]}
    return DayParams.model_validate(data)


def test_correlated_ranking_spans_identical_to_independent():
    ranking = np.random.default_rng(1).permutation(400)
    same = correlated_ranking(ranking, 1.0, np.random.default_rng(2))
    assert (same == ranking).all()
    taus = []
    for rho in (0.0, 0.5, 0.9):
        other = correlated_ranking(ranking, rho, np.random.default_rng(3))
        assert sorted(other) == sorted(ranking)  # a ranking of the same articles
        position = {article: r for r, article in enumerate(other)}
        taus.append(scipy_stats.kendalltau(range(400), [position[a] for a in ranking]).statistic)
    assert abs(taus[0]) < 0.1 < taus[1] < taus[2] < 1


def test_rank_correlation_one_is_the_zipf_day_and_zero_saves_elsewhere():
    zipf = run_day(small(edit={"delay_s": None}), 1)
    again = run_day(small(saves={"rank_correlation": 1.0}, edit={"delay_s": None}), 1)
    assert zipf["saves"].equals(again["saves"])
    independent = run_day(small(saves={"rank_correlation": 0.0}, edit={"delay_s": None}), 1)
    # the questions are the same; the saves no longer fall on the popular (cited) articles
    assert zipf["citations"]["asked_s"].equals(independent["citations"]["asked_s"])
    people = [t["saves"].query("actor == 'people'") for t in (zipf, independent)]
    assert people[1]["popularity_rank"].median() > 3 * people[0]["popularity_rank"].median()
    with pytest.raises(ValidationError, match="rank_correlation applies to Zipf saves"):
        small(saves={"popularity": "uniform", "rank_correlation": 0.5})


def test_ranking_by_id_makes_the_first_articles_the_most_popular():
    tables = run_day(small(ranking="by_id", edit={"delay_s": None}), 2)
    cited = tables["citations"]
    assert (cited["popularity_rank"] == cited["article_id"].str[4:].astype(int) - 1).all()


def test_a_steady_state_day_replaces_every_unpublished_article():
    params = small(saves={"mix": {"content": 0.5, "content_and_title": 0.1, "unpublish": 0.4}},
                   edit={"delay_s": None})
    steady = params.model_copy(update={"saves": params.saves.model_copy(update={"replace_unpublished": True})})
    draining, replaced = run_day(params, 3)["saves"], run_day(steady, 3)["saves"]
    unpublished = (replaced["kind"] == "unpublish").sum()
    assert unpublished > 10 and (replaced["kind"] == "publish").sum() == unpublished
    new = replaced[replaced["kind"] == "publish"]
    gone = replaced[replaced["kind"] == "unpublish"]
    assert list(new["popularity_rank"]) == list(gone["popularity_rank"])  # the new one takes its rank
    assert (new["time_s"].to_numpy() == gone["time_s"].to_numpy()).all()
    assert not (draining["kind"] == "publish").any()
    # without replacement the popular articles drain away: saves move down the ranking
    late = lambda saves: saves[saves["time_s"] > 3 * 3600]["popularity_rank"].median()  # noqa: E731
    assert late(replaced) < late(draining)


def test_an_exact_share_edits_every_fourth_answer():
    params = small(edit={"delay_s": 60, "share": 0.25, "exact_share": True})
    edits = run_day(params, 4)["edits"]
    assert sorted(edits["answer_id"]) == list(range(3, 60, 4))
    random_share = run_day(small(edit={"delay_s": 60, "share": 0.25}), 4)["edits"]
    assert sorted(random_share["answer_id"]) != sorted(edits["answer_id"])
