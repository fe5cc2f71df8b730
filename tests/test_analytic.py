"""The analytic freshness model: closed forms, limits, and agreement with the simulation."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from kbsim import analysis, analytic
from kbsim.params import DayParams
from kbsim.sim import run_day
from kbsim.stats import metrics_by_run, summarize


def _uniform_model(saves_per_day=300.0, day_s=8 * 3600.0, n=400, unpublish=False, share=0.05):
    weights = analytic.zipf_weights(n, 0.0)
    return analytic.FreshnessModel(
        save_weights=weights,
        question_weights=weights,
        saves_per_s=saves_per_day / day_s,
        questions_per_s=120 / day_s,
        day_s=day_s,
        unpublish_share=share,
        unpublish=unpublish,
    )


def test_zipf_weights_are_probabilities_and_zero_exponent_is_uniform():
    weights = analytic.zipf_weights(50, 1.2)
    assert math.isclose(weights.sum(), 1.0)
    assert np.all(np.diff(weights) < 0)
    assert np.allclose(analytic.zipf_weights(7, 0.0), 1 / 7)
    with pytest.raises(ValueError, match="n must be"):
        analytic.zipf_weights(0, 1.0)


def test_uniform_popularity_matches_the_cho_garcia_molina_closed_form():
    model = _uniform_model()
    lam = model.saves_per_s / 400
    times = np.array([600.0, 3600.0, 5 * 3600.0, 8 * 3600.0])
    got = model.staleness(times)
    citation = 1 - (1 - np.exp(-lam * times)) / (lam * times)
    answer = 1 - (1 - np.exp(-2 * lam * times)) / (2 * lam * times)
    np.testing.assert_allclose(got["stale_citation_share"], citation, rtol=1e-9)
    np.testing.assert_allclose(got["stale_answer_share"], answer, rtol=1e-9)


def test_edit_outcomes_limits_and_closed_form():
    model = _uniform_model()
    lam = model.saves_per_s / 400
    delays = np.array([0.0, 60.0, 3600.0, 4 * 3600.0])
    got = model.edit_outcomes(delays, agent_edits=False)
    np.testing.assert_allclose(
        got["rejection_rate"], 1 - np.exp(-lam * delays), rtol=1e-9, atol=1e-12
    )
    assert (got["gone_rate"] == 0).all()
    # retry waits another delay: succeeds when that window has no save
    np.testing.assert_allclose(got["retry_success"].iloc[1:], np.exp(-lam * delays[1:]), rtol=1e-9)

    skewed = analytic.FreshnessModel.from_params(DayParams())
    zipf = skewed.edit_outcomes(delays)
    assert zipf["rejection_rate"].is_monotonic_increasing
    assert zipf["gone_rate"].is_monotonic_increasing
    np.testing.assert_allclose(
        zipf[["rejection_rate", "gone_rate", "applied_rate"]].sum(axis=1), 1.0
    )
    # popular articles are both cited and saved more: rejections beat the uniform day's
    assert (zipf["rejection_rate"].iloc[1:] > got["rejection_rate"].iloc[1:]).all()


def test_unpublishing_moves_rates_onto_the_survivors():
    with_unpublish = _uniform_model(unpublish=True, share=0.2)
    clock = with_unpublish.save_clock([0.0, 3600.0, 8 * 3600.0])
    plain = with_unpublish.saves_per_s * np.array([0.0, 3600.0, 8 * 3600.0])
    assert clock[0] == 0.0 and (clock[1:] > plain[1:]).all()
    alive = with_unpublish.published([8 * 3600.0])[0]
    # 300 saves, 20% unpublish, over 400 articles: exp(-60/400 * A/plain) of them left
    assert 0.8 < alive.mean() < 0.9


def test_poll_cost_pages_and_expired_cursors():
    assert analytic._expected_pages(0.0, 100) == 1.0
    assert math.isclose(analytic._expected_pages(1e-9, 100), 1.0)
    assert abs(analytic._expected_pages(1000.0, 100) - 10.5) < 0.6
    model = analytic.FreshnessModel.from_params(DayParams())
    keep_all = model.check_cost(3600.0)
    assert (keep_all["cursor_expired_rate"] == 0).all()
    assert (keep_all["poll_calls"] < keep_all["reread_calls"]).all()
    short = model.check_cost(3600.0, retention_s=600.0)
    assert (short["cursor_expired_rate"] > 0.99).all()
    assert (short["poll_calls"] > keep_all["poll_calls"]).all()
    with pytest.raises(ValueError, match="interval_s"):
        model.check_cost(0.0)
    with pytest.raises(ValueError, match="page_size"):
        model.check_cost(60.0, page_size=0)


# -- agreement with the simulation ------------------------------------------------------------

SEEDS = range(1, 31)


def _simulated(params: DayParams, scenario: str) -> pd.DataFrame:
    tables = analysis.day_tables({seed: run_day(params, seed) for seed in SEEDS}, scenario=scenario)
    return summarize(metrics_by_run(tables, day_s=params.day_s), ["scenario"])


def test_analytic_curves_lie_inside_the_simulations_95_percent_ci():
    """30 seeds of the reference day (Poisson arrivals, no edits), Zipf and control,
    and 30 seeds of a day with edits after 30 min: at least 90% of the analytic points
    inside the simulation's 95% intervals (over seeds: a day's citations share its
    saves, so they are not independent trials)."""
    base = {"arrivals": "poisson"}
    inside, total, misses = 0, 0, []
    for scenario, overrides in (("zipf", {}), ("control", {"saves": {"popularity": "uniform"}})):
        params = DayParams.model_validate({**base, **overrides})
        observed = analysis.staleness_by_hour(_simulated(params, scenario))
        predicted = analytic.predict_staleness(params).set_index("hour")
        for kind, column in (
            ("citations", "stale_citation_share"),
            ("answers", "stale_answer_share"),
        ):
            rows = observed[observed["kind"] == kind].sort_values("hour")
            model = predicted.loc[rows["hour"], column].to_numpy()
            hits = analysis.inside_ci(rows, model)
            inside, total = inside + hits.sum(), total + len(hits)
            misses += [
                (scenario, kind, h) for h, ok in zip(rows["hour"], hits, strict=True) if not ok
            ]
    for delay in (1800.0,):
        params = DayParams.model_validate({**base, "edit": {"delay_s": delay}})
        summary = _simulated(params, f"edit{delay:g}")
        predicted = analytic.predict_edit_outcomes(params, [delay]).iloc[0]
        for metric in ("rejection_rate", "gone_rate", "retry_success"):
            row = analysis.select(summary, metric)
            ok = bool(analysis.inside_ci(row, [predicted[metric]])[0])
            inside, total = inside + ok, total + 1
            misses += [] if ok else [(delay, metric)]
    assert total == 35
    assert inside / total >= 0.9, f"analytic outside the 95% CI at {misses}"
