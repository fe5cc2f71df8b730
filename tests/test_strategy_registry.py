"""A fourth check strategy, added the way a contributor would: its check function and one
registration. The day's checker runs it, the checks and detections tables carry its rows,
and run_metrics gives its cost and detection rows, with no other edit; the three built-in
strategies' rows stay exactly what they were without it."""

from __future__ import annotations

import pandas as pd
import pytest

from kbsim.params import DayParams
from kbsim.report.text_tables import headline_rows
from kbsim.sim import StalenessMismatch, run_day
from kbsim.sim.checks import CheckOutcome, flag_citations, reread_articles
from kbsim.sim.strategies import (
    Strategy,
    get_strategy,
    register_strategy,
    strategies,
    strategy_names,
    unregister_strategy,
)
from kbsim.stats import MetricSelector, run_metrics, summarize

HOUR_S = 3600.0
#: A small day with a check every half hour, so the last hour's citations are a part of those held.
PARAMS = DayParams.model_validate(
    {
        "day_hours": 4,
        "corpus": {"articles": 120},
        "questions": {"count": 60},
        "saves": {"count": 150},
        "checks": {"interval_s": 1800},
        "edit": {"delay_s": 600},
    }
)
SEED = 3


def reread_last_hour(day, held, state) -> CheckOutcome:
    """The toy strategy: re-read only the articles cited in the last hour, and flag every held
    citation of those articles whose version moved."""
    outcome = CheckOutcome()
    recent = dict.fromkeys(cited.article_id for cited in held if cited.asked_s > day.env.now - HOUR_S)
    outcome.flagged = flag_citations(held, reread_articles(outcome, day.client, day.kb_id, recent))
    return outcome


@pytest.fixture
def recent():
    """The toy strategy registered for one test, unregistered afterwards."""
    strategy = register_strategy(Strategy("recent", "re-read the last hour's", exact=False, check=reread_last_hour))
    yield strategy
    unregister_strategy("recent")


@pytest.fixture(scope="module")
def without_it():
    """The day's tables and metrics with the built-in strategies alone."""
    tables = run_day(PARAMS, SEED)
    return tables, run_metrics(tables, PARAMS.day_s)


def others(frame: pd.DataFrame) -> pd.DataFrame:
    return frame[frame["strategy"] != "recent"].reset_index(drop=True)


def test_the_built_in_strategies_come_first_in_their_order():
    assert strategy_names() == ("title", "reread", "poll")
    assert [(s.label, s.exact) for s in strategies()] == [
        ("title lookup", False),
        ("re-read", True),
        ("poll events", True),
    ]
    assert strategy_names(exact=True) == ("reread", "poll")
    assert get_strategy("poll").start is not None and get_strategy("title").start is None


def test_the_registry_refuses_a_second_name_an_unknown_one_and_the_built_ins(recent):
    assert strategy_names() == ("title", "reread", "poll", "recent")
    with pytest.raises(ValueError, match="'recent' is registered already"):
        register_strategy(Strategy("recent", "again", exact=False, check=reread_last_hour))
    with pytest.raises(ValueError, match="no strategy 'nope' is registered"):
        unregister_strategy("nope")
    with pytest.raises(ValueError, match="'poll' is built in"):
        unregister_strategy("poll")
    with pytest.raises(KeyError, match="no strategy 'nope' is registered"):
        get_strategy("nope")
    with pytest.raises(ValueError, match="must be a word"):
        Strategy("last hour", "x", exact=False, check=reread_last_hour)


def test_a_registered_strategy_is_checked_tabulated_and_measured(recent, without_it):
    tables = run_day(PARAMS, SEED)
    base_tables, base_metrics = without_it
    checks, citations = tables["checks"], tables["citations"]

    # the checker ran it at every check, after the three, and they did not change
    n_checks = checks["check_index"].nunique()
    assert n_checks == 8
    order = checks.groupby("check_index")["strategy"].agg(tuple)
    assert set(order) == {("title", "reread", "poll", "recent")}
    for name in ("checks", "detections", "citations", "edits", "saves"):
        frame = others(tables[name]) if "strategy" in tables[name] else tables[name]
        pd.testing.assert_frame_equal(frame, base_tables[name])

    # its calls: one read per distinct article cited in the hour before the check
    mine = checks[checks["strategy"] == "recent"].set_index("check_index")
    for _, row in mine.iterrows():
        asked = citations["asked_s"]
        last_hour = citations[(asked > row["time_s"] - HOUR_S) & (asked <= row["time_s"])]
        assert row["calls"] == last_hour["article_id"].nunique()
    assert (mine["bytes"] > 0).any()
    # a re-read is right about what it reads: everything it flags is stale, and it misses some
    assert (mine["flagged"] == mine["true_positives"]).all()
    assert (mine["flagged"] <= mine["true_stale"]).all() and (mine["flagged"] < mine["true_stale"]).any()

    # one detection row per citation, as for every strategy
    detections = tables["detections"]
    assert (detections["strategy"] == "recent").sum() == len(citations)

    # run_metrics: its cost and its detection, and every other row as before
    metrics = run_metrics(tables, PARAMS.day_s)
    pd.testing.assert_frame_equal(others(metrics), base_metrics)
    by_metric = metrics[metrics["strategy"] == "recent"].set_index("metric")["value"]
    assert list(by_metric.index) == [
        "calls_per_check",
        "bytes_per_check",
        "calls_per_hour",
        "bytes_per_hour",
        "detected_share",
        "detection_latency_s",
        "detection_latency_p90_s",
        "stale_exposure",
    ]
    assert by_metric["calls_per_check"] == pytest.approx(mine["calls"].mean())
    assert by_metric["calls_per_hour"] == pytest.approx(mine["calls"].sum() / 4)
    reread = metrics[(metrics["strategy"] == "reread")].set_index("metric")["value"]
    assert 0 < by_metric["detected_share"] < reread["detected_share"] == 1.0
    assert by_metric["calls_per_check"] < reread["calls_per_check"]

    # summarised and selected by name like the others, and printed by kbsim run
    summary = summarize(metrics.assign(scenario="day", seed=SEED, run_id="day-3"))
    assert len(summary[MetricSelector("stale_exposure", strategy="recent").mask(summary)]) == 1
    assert "calls_per_check[recent]" in [row.label for row in headline_rows()]


def test_an_exact_strategy_is_held_to_the_ground_truth():
    """Registered as exact, the last-hour re-read misses older stale citations: the checker stops."""
    register_strategy(Strategy("recent_exact", "last hour, claimed exact", exact=True, check=reread_last_hour))
    try:
        with pytest.raises(StalenessMismatch, match=r"check \d+: strategy 'recent_exact' disagrees"):
            run_day(PARAMS, SEED)
    finally:
        unregister_strategy("recent_exact")
    assert strategy_names() == ("title", "reread", "poll")


def test_a_strategy_keeps_its_own_state_between_the_checks_of_a_day():
    """``start`` makes the state once per day, and every check of that day gets it."""
    seen: list[tuple[int, float]] = []

    def counting(day, held, state):
        state["checks"] += 1
        seen.append((state["checks"], day.env.now))
        return CheckOutcome()

    register_strategy(Strategy("counted", "counts", exact=False, check=counting, start=lambda day: {"checks": 0}))
    try:
        run_day(PARAMS, SEED)
        run_day(PARAMS, SEED)
    finally:
        unregister_strategy("counted")
    one_day = [(i, 1800.0 * i) for i in range(1, 9)]
    assert seen == one_day + one_day
