"""The analytic freshness model: closed forms, limits, and agreement with the simulation."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from kbsim.model import analytic
from kbsim.params import DayParams
from kbsim.report import frames
from kbsim.sim import run_day
from kbsim.stats import metrics_by_run, run_metrics, summarize


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
    tables = frames.day_tables({seed: run_day(params, seed) for seed in SEEDS}, scenario=scenario)
    return summarize(metrics_by_run(tables, day_s=params.day_s), ["scenario"])


@pytest.mark.slow
def test_analytic_curves_lie_inside_the_simulations_95_percent_ci():
    """30 seeds of the reference day (Poisson arrivals, no edits), Zipf and control,
    and 30 seeds of a day with edits after 30 min: at least 90% of the analytic points
    inside the simulation's 95% intervals (over seeds: a day's citations share its
    saves, so they are not independent trials)."""
    base = {"arrivals": "poisson"}
    inside, total, misses = 0, 0, []
    for scenario, overrides in (("zipf", {}), ("control", {"saves": {"popularity": "uniform"}})):
        params = DayParams.model_validate({**base, **overrides})
        observed = frames.staleness_by_hour(_simulated(params, scenario))
        predicted = analytic.predict_staleness(params).set_index("hour")
        for kind, column in (
            ("citations", "stale_citation_share"),
            ("answers", "stale_answer_share"),
        ):
            rows = observed[observed["kind"] == kind].sort_values("hour")
            model = predicted.loc[rows["hour"], column].to_numpy()
            hits = frames.inside_ci(rows, model)
            inside, total = inside + hits.sum(), total + len(hits)
            misses += [
                (scenario, kind, h) for h, ok in zip(rows["hour"], hits, strict=True) if not ok
            ]
    for delay in (1800.0,):
        params = DayParams.model_validate({**base, "edit": {"delay_s": delay}})
        summary = _simulated(params, f"edit{delay:g}")
        predicted = analytic.predict_edit_outcomes(params, [delay]).iloc[0]
        for metric in ("rejection_rate", "gone_rate", "retry_success"):
            row = frames.select(summary, metric)
            ok = bool(frames.inside_ci(row, [predicted[metric]])[0])
            inside, total = inside + ok, total + 1
            misses += [] if ok else [(delay, metric)]
    assert total == 35
    assert inside / total >= 0.9, f"analytic outside the 95% CI at {misses}"


def test_blind_overwrites_lose_each_save_of_the_window_in_closed_form():
    """Uniform saves at ``l`` per article, nothing unpublished: a blind edit ``d`` after its
    read replaces ``l d`` saves on average, and compare-and-swap would refuse it with
    probability ``1 - exp(-l d)``."""
    model = _plain_model()
    per_article = model.saves_per_s / len(model.save_weights)
    frame = model.blind_overwrite_losses([60.0, 3600.0]).set_index("delay_s")
    for d in (60.0, 3600.0):
        assert frame.loc[d, "lost_per_edit"] == pytest.approx(per_article * d, rel=1e-9)
        assert frame.loc[d, "conflict_rate"] == pytest.approx(-math.expm1(-per_article * d), rel=1e-9)


@pytest.mark.slow
def test_lost_updates_under_blind_overwrite_lie_inside_the_simulations_interval():
    """20 seeds of the reference day with blind overwrites after 1 min and 10 min: the
    predicted ``lost_update_share`` inside the simulation's 95% interval (over seeds)."""
    seeds = range(1, 21)
    for delay in (60.0, 600.0):
        params = DayParams.model_validate({"edit": {"delay_s": delay, "compare_and_swap": False}})
        # the switched day's own tables (``intents``) are not among the stacked day tables:
        # each seed's metrics are computed from its whole day
        per_run = pd.concat(
            [run_metrics(run_day(params, seed), params.day_s).assign(scenario="blind", seed=seed) for seed in seeds]
        )
        lost = per_run[(per_run["metric"] == "lost_update_share") & (per_run["subset"] == "")]
        row = frames.select(summarize(lost, ["scenario"]), "lost_update_share")
        predicted = analytic.predict_lost_updates(params, [delay]).iloc[0]["lost_update_share"]
        assert row["value"].iloc[0] > 0
        assert bool(frames.inside_ci(row, [predicted])[0]), (delay, predicted, row[["value", "ci_low", "ci_high"]])


# -- detection, exposure and the cost of a check policy -----------------------------------------


def _plain_model(**fields):
    """Uniform popularity, nothing unpublished: the closed forms below hold exactly."""
    weights = analytic.zipf_weights(200, 0.0)
    return analytic.FreshnessModel(
        save_weights=weights,
        question_weights=weights,
        saves_per_s=150 / (4 * 3600.0),
        questions_per_s=60 / (4 * 3600.0),
        day_s=4 * 3600.0,
        unpublish=False,
        **fields,
    )


def _closed_form_detection(model, interval_s):
    """Exact strategies from the closed-form rate of citations going stale,
    ``rho(s) = q k (1 - exp(-l s))`` (uniform saves at ``l`` per article), by quadrature."""
    from scipy import integrate

    day, k = model.day_s, model.citations_per_answer
    rate, per_article = model.questions_per_s, model.saves_per_s / len(model.save_weights)

    def rho(s):
        return rate * k * -math.expm1(-per_article * s)

    checks = interval_s * np.arange(1, int(math.floor(day / interval_s + 1e-9)) + 1)
    last, starts = checks[-1], np.concatenate([[0.0], checks[:-1]])
    stale = integrate.quad(rho, 0, last)[0]
    waited = sum(integrate.quad(lambda s, c=c: (c - s) * rho(s), a, c)[0] for a, c in zip(starts, checks, strict=True))
    tail = integrate.quad(lambda s: (day - s) * rho(s), last, day)[0] if last < day else 0.0
    return waited / stale, (waited + tail) / (rate * k * day**2 / 2)


@pytest.mark.parametrize("interval_s", [60.0, 1000.0, 3600.0, 5 * 3600.0 / 2, 4 * 3600.0])
def test_exact_strategies_match_the_closed_form_for_any_interval(interval_s):
    """Intervals that do not divide the day (1000 s, 2.5 h) end with a last check before
    the end of the day; the citations stale after it are exposed until the end."""
    model = _plain_model()
    got = model.check_policy([interval_s]).set_index("strategy")
    latency, exposure = _closed_form_detection(model, interval_s)
    for strategy in ("reread", "poll"):
        assert got.loc[strategy, "detected_share"] == 1.0
        assert got.loc[strategy, "detection_latency_s"] == pytest.approx(latency, rel=2e-3)
        assert got.loc[strategy, "stale_exposure"] == pytest.approx(exposure, rel=2e-3)
        p90 = got.loc[strategy, "detection_latency_p90_s"]
        assert latency < p90 <= 0.9 * interval_s
        if interval_s <= 1000:  # many checks: waits nearly uniform on (0, interval)
            assert p90 > 0.85 * interval_s


def test_title_check_sees_only_title_changes_and_unpublishing():
    intervals = [600.0, 3600.0]
    every_save_visible = _plain_model(retitle_share=1.0).check_policy(intervals)
    exact = every_save_visible[every_save_visible["strategy"] == "reread"].reset_index(drop=True)
    title = every_save_visible[every_save_visible["strategy"] == "title"].reset_index(drop=True)
    columns = ["detected_share", "detection_latency_s", "stale_exposure"]
    pd.testing.assert_frame_equal(title[columns], exact[columns], rtol=1e-6)

    blind = _plain_model().check_policy(intervals).set_index(["strategy", "interval_s"])
    np.testing.assert_allclose(blind.loc["title", "detected_share"], 0.0, atol=1e-12)
    # never flagged: exposed from going stale to the end of the day, whatever the interval
    never = _closed_form_detection(_plain_model(), 4 * 3600.0)[1]
    np.testing.assert_allclose(blind.loc["title", "stale_exposure"], never, rtol=2e-3)

    some = _plain_model(retitle_share=0.15).check_policy(intervals).set_index(["strategy", "interval_s"])
    share = some.loc["title", "detected_share"]
    assert ((share > 0.15) & (share < 0.3)).all()  # the first save, or a later one, retitles
    assert (some.loc["title", "detection_latency_s"] > some.loc["reread", "detection_latency_s"]).all()


def test_check_cost_per_hour_reread_reads_distinct_cited_articles_poll_pages_and_moves():
    model = _plain_model()
    got = model.check_policy([600.0, 3600.0]).set_index(["strategy", "interval_s"])
    # reread: every check reads each distinct cited article, 1 - exp(-q k t / n) of them
    n, hours = len(model.save_weights), model.day_s / 3600
    for interval in (600.0, 3600.0):
        checks = interval * np.arange(1, int(model.day_s / interval) + 1)
        distinct = n * -np.expm1(-model.questions_per_s * 2 * checks / n)
        assert got.loc[("reread", interval), "calls_per_hour"] == pytest.approx(distinct.sum() / hours, rel=2e-3)
        assert got.loc[("title", interval), "calls_per_hour"] == got.loc[("reread", interval), "calls_per_hour"]
    # lexical neighbours repeat: fewer distinct articles than fresh draws
    neighbours = _plain_model(neighbour_patterns=analytic.NEIGHBOUR_PATTERNS).check_policy([600.0])
    assert (neighbours.set_index("strategy")["calls_per_hour"].loc["reread"]
            < got.loc[("reread", 600.0), "calls_per_hour"])
    # poll: at least one page per check, then one read per cited article that moved
    poll = got.loc["poll"]
    assert (poll["calls_per_hour"] >= 3600 / poll.index).all()
    assert (poll["calls_per_hour"] < got.loc["reread", "calls_per_hour"]).all()
    assert (got["bytes_per_hour"] > got["calls_per_hour"] * 50).all()


def test_subscribe_costs_a_subscription_and_a_read_of_each_new_article_and_a_read_of_each_held_one_told_of():
    """The subscription's model in closed form (uniform saves, nothing unpublished, fresh
    draws): at each check, two calls for each article first cited since the check before,
    one read for each article cited by the check before and saved since, and a notification
    for every such save; its detection is the exact strategies'."""
    from kbsim.sim.strategies import resolve
    from kbsim.sim.strategies.subscribe import STRATEGY as SUBSCRIBE
    from kbsim.sim.strategies.subscribe import notification_bytes, subscribe_bytes
    from kbsim.sim.world import KB_ID

    model = _plain_model()
    n, hours, sizes = len(model.save_weights), model.day_s / 3600, model.sizes
    per_article = model.saves_per_s / n
    got = model.check_policy([600.0, 5000.0], resolve(["poll", SUBSCRIBE.name])).set_index(["strategy", "interval_s"])
    for interval in (600.0, 5000.0):  # 5000 s: the last check before the end of the day
        checks = interval * np.arange(1, int(model.day_s / interval) + 1)
        distinct = n * -np.expm1(-model.questions_per_s * 2 * np.concatenate([[0.0], checks]) / n)
        held = distinct[:-1]  # cited by the check before
        moved = (held * -np.expm1(-per_article * interval)).sum()
        told = (held * per_article * interval).sum()
        row = got.loc[(SUBSCRIBE.name, interval)]
        assert row["calls_per_hour"] == pytest.approx((2 * distinct[-1] + moved) / hours, rel=2e-3)
        sent = (distinct[-1] * (subscribe_bytes(KB_ID, "art-000001") + sizes.read_bytes) + moved * sizes.read_bytes
                + told * notification_bytes(KB_ID, "art-000001"))
        assert row["bytes_per_hour"] == pytest.approx(sent / hours, rel=2e-3)
        for metric in ("detected_share", "detection_latency_s", "detection_latency_p90_s", "stale_exposure"):
            assert row[metric] == got.loc[("poll", interval), metric]


def test_a_grouped_large_corpus_matches_the_article_by_article_model():
    params = DayParams.model_validate(
        {"corpus": {"articles": 3000}, "saves": {"count": 900}, "questions": {"count": 600}}
    )
    grouped = analytic.FreshnessModel.from_params(params)
    assert grouped.article_counts is not None and len(grouped.save_weights) < 3000
    one_by_one = analytic.FreshnessModel.from_params(params, grouped=False)
    columns = ["detection_latency_s", "stale_exposure", "calls_per_hour", "bytes_per_hour"]
    a, b = grouped.check_policy([900.0]), one_by_one.check_policy([900.0])
    pd.testing.assert_frame_equal(a[columns], b[columns], rtol=1e-4)
    np.testing.assert_allclose(
        grouped.staleness([3600.0, params.day_s]).to_numpy(),
        one_by_one.staleness([3600.0, params.day_s]).to_numpy(),
        rtol=1e-4,
    )


def test_check_policy_refuses_bad_intervals_and_days_with_edits():
    model = analytic.FreshnessModel.from_params(DayParams())
    for bad in (0.0, -60.0, 9 * 3600.0, math.nan):
        with pytest.raises(ValueError, match="interval_s"):
            model.check_policy([bad])
    edits = analytic.FreshnessModel.from_params(DayParams.model_validate({"edit": {"delay_s": 60}}))
    with pytest.raises(ValueError, match="without agent edits"):
        edits.check_policy([600.0])
    # the prediction for a day's params switches its edits off
    assert len(analytic.predict_check_policy(DayParams.model_validate({"edit": {"delay_s": 60}}))) == 3


POLICY_DAY = {
    "day_hours": 2,
    "arrivals": "poisson",
    "corpus": {"articles": 100},
    "questions": {"count": 50},
    "saves": {"count": 150},
}
#: What the agreement test scores: for re-read, poll and subscribe (identical detection) and the title check.
POLICY_METRICS = {
    "reread": ("detection_latency_s", "detection_latency_p90_s", "stale_exposure", "calls_per_hour", "bytes_per_hour"),
    "poll": ("calls_per_hour", "bytes_per_hour"),
    "subscribe": ("calls_per_hour", "bytes_per_hour"),
    "title": ("detected_share", "detection_latency_s", "stale_exposure", "calls_per_hour"),
}


@pytest.mark.slow
def test_check_policy_model_lies_inside_the_simulations_95_percent_ci():
    """12 seeds of a small 2-hour day (Poisson arrivals, no edits), Zipf and control, at
    four intervals, two of which do not divide the day: at least 90% of the predicted
    detection, exposure and cost points inside the simulation's 95% intervals."""
    inside, total, misses = 0, 0, []
    for scenario, popularity in (("zipf", "zipf"), ("control", "uniform")):
        for interval in (300.0, 1000.0, 2500.0, 7200.0):
            params = DayParams.model_validate(
                {**POLICY_DAY, "saves": {**POLICY_DAY["saves"], "popularity": popularity},
                 "checks": {"interval_s": interval, "strategies": ["title", "reread", "poll", "subscribe"]}}
            )
            tables = frames.day_tables({seed: run_day(params, seed) for seed in range(1, 13)})
            summary = summarize(metrics_by_run(tables, day_s=params.day_s), [])
            predicted = analytic.predict_check_policy(params).set_index("strategy")
            for strategy, names in POLICY_METRICS.items():
                for metric in names:
                    row = summary[(summary["metric"] == metric) & (summary["strategy"] == strategy)]
                    ok = bool(frames.inside_ci(row, [predicted.loc[strategy, metric]])[0])
                    inside, total = inside + ok, total + 1
                    misses += [] if ok else [(scenario, interval, strategy, metric)]
    assert total == 2 * 4 * 13
    assert inside / total >= 0.9, f"model outside the 95% CI at {misses}"
