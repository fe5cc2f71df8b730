"""The statistics layer: the one interval method, summaries, contrasts, survival, metric definitions."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats as scipy_stats

from kbsim.params import DayParams
from kbsim.report.text_tables import format_summary, seed_warnings
from kbsim.sim import run_day
from kbsim.sim.popularity import ATTEMPTS, UNIFORMS_PER_DRAW, Popularity
from kbsim.stats import ContrastSpec, MetricSelector, contrast, contrasts, estimate, run_metrics, summarize
from kbsim.stats.survival import stale_within

# -- the interval method -------------------------------------------------------------------


def test_a_share_is_the_ratio_of_sums_with_a_logit_linearised_t_interval():
    y, x = np.array([3.0, 5.0, 2.0, 6.0, 4.0]), np.array([30.0, 28.0, 31.0, 29.0, 32.0])
    result = estimate("proportion", y, x)
    r = y.sum() / x.sum()
    u = (y - r * x) / x.mean()
    se = u.std(ddof=1) / math.sqrt(5)
    half = scipy_stats.t.ppf(0.975, 4) * se / (r * (1 - r))
    logit = math.log(r / (1 - r))
    assert result.value == pytest.approx(r)
    assert result.se == pytest.approx(se)
    assert result.low == pytest.approx(1 / (1 + math.exp(-(logit - half))))
    assert result.high == pytest.approx(1 / (1 + math.exp(-(logit + half))))
    assert result.seeds == 5 and "logit" in result.method


def test_seeds_that_disagree_widen_the_interval_where_pooled_counts_could_not_tell():
    """The same pooled 60 of 300, as five similar days or as five very different ones."""
    steady = estimate("proportion", [12, 12, 12, 11, 13], [60] * 5)
    lumpy = estimate("proportion", [2, 30, 5, 20, 3], [60] * 5)
    assert steady.value == lumpy.value == pytest.approx(0.2)
    assert (lumpy.high - lumpy.low) > 5 * (steady.high - steady.low)


def test_edges_zero_and_all_and_few_seeds():
    none = estimate("proportion", [0, 0, 0, 0, 0], [30, 30, 30, 30, 30])
    assert none.value == 0 and none.low == 0 and 0 < none.high < 0.1 and "Wilson" in none.method
    every = estimate("proportion", [30] * 5, [30] * 5)
    assert every.value == 1 and every.high == 1 and 0.9 < every.low < 1
    one = estimate("proportion", [3], [30])
    assert one.value == 0.1 and math.isnan(one.low) and math.isnan(one.high)
    two = estimate("proportion", [3, 5], [30, 30])
    five = estimate("proportion", [3, 5, 3, 5, 4], [30] * 5)
    assert 0 < two.low < five.low < five.high < two.high < 1  # t on 1 df is honest about 2 seeds
    no_trials = estimate("proportion", [0, 0], [0, 0])
    assert math.isnan(no_trials.value)


def test_a_mean_over_seeds_is_scipys_t_interval():
    values = np.array([11.0, 12.0, 14.0, 17.0])  # (1, 2, 4, 7) would reach below 0: floored, as a count is
    result = estimate("mean", values)
    low, high = scipy_stats.t.interval(0.95, 3, loc=values.mean(), scale=scipy_stats.sem(values))
    assert (result.low, result.high) == (pytest.approx(low), pytest.approx(high))
    assert estimate("mean", [np.nan, 3.0, 5.0]).seeds == 2  # a seed with nothing to average is dropped


def test_a_ratio_is_floored_at_zero_and_an_invariant_has_no_interval():
    ratio = estimate("ratio", [10.0, 0.0, 0.0], [1.0, 1.0, 1.0])
    assert ratio.value == pytest.approx(10 / 3) and ratio.low == 0.0
    held = estimate("invariant", [7, 9], [7, 9])
    assert held.value == 1.0 and math.isnan(held.low) and "invariant" in held.method
    with pytest.raises(ValueError, match="kind"):
        estimate("bootstrap", [1.0], [1.0])


def test_pairing_narrows_a_contrast_when_the_seeds_move_together():
    rng = np.random.default_rng(3)
    common = rng.normal(0, 6, 10)
    a = np.clip(30 + common + rng.normal(0, 1, 10), 0, 100)
    b = np.clip(25 + common + rng.normal(0, 1, 10), 0, 100)
    x = np.full(10, 100.0)
    result = contrast("proportion", a, x, b, x)
    assert result.value == pytest.approx(a.sum() / x.sum() - b.sum() / x.sum())
    assert result.width_ratio > 3
    assert result.low < result.value < result.high
    same = contrast("proportion", a, x, a, x)
    assert same.value == 0 and same.se == 0
    ratio = contrast("proportion", a, x, b, x, compare="ratio")
    assert ratio.value == pytest.approx(a.sum() / b.sum()) and ratio.low < ratio.value < ratio.high
    with pytest.raises(ValueError, match="compare"):
        contrast("proportion", a, x, b, x, compare="quotient")


# -- summaries ---------------------------------------------------------------------------------


def _rows(**columns) -> pd.DataFrame:
    n = len(next(iter(columns.values())))
    base = {"metric": ["stale_citation_share"] * n, "at_s": [3600.0] * n, "at_end": [False] * n,
            "strategy": [""] * n, "subset": [""] * n, "name": ["stale_citation_share@h1"] * n}
    return pd.DataFrame({**base, **columns})


def test_summarize_pools_per_seed_and_treats_runs_of_one_seed_as_one_cluster():
    rows = _rows(
        scenario=["a"] * 4,
        seed=[1, 1, 2, 3],
        run_id=["r1", "r2", "r3", "r4"],
        value=[0.5, 0.25, 0.1, 0.2],
        successes=[5.0, 5.0, 1.0, 2.0],
        trials=[10.0, 20.0, 10.0, 10.0],
    )
    out = summarize(rows, ["scenario"]).iloc[0]
    assert out["value"] == pytest.approx(13 / 50)
    assert out["seeds"] == 3 and out["n"] == 4
    assert (out["successes"], out["trials"]) == (13, 50)
    expected = estimate("proportion", [10, 1, 2], [30, 10, 10])
    assert (out["ci_low"], out["ci_high"]) == (pytest.approx(expected.low), pytest.approx(expected.high))


def test_metric_selector_names_what_it_refuses():
    with pytest.raises(ValueError, match="unknown 'stale_share'"):
        MetricSelector("stale_share")
    with pytest.raises(ValueError, match="strategy"):
        MetricSelector("calls_per_check", strategy="two words")
    with pytest.raises(ValueError, match="'Nh'"):
        MetricSelector("stale_citation_share", at="soon")
    assert MetricSelector("stale_citation_share", at="4h").label == "stale_citation_share@4h"


# -- the metrics of a real day -------------------------------------------------------------------

SMALL = {"day_hours": 4, "corpus": {"articles": 120}, "questions": {"count": 60}, "saves": {"count": 150}}


def _day(seed: int, **overrides) -> dict[str, pd.DataFrame]:
    data = {**SMALL, **overrides}
    data["saves"] = {**SMALL["saves"], **overrides.get("saves", {})}
    return run_day(DayParams.model_validate(data), seed)


@pytest.fixture(scope="module")
def days():
    return {
        (scenario, seed): _day(seed, **overrides)
        for scenario, overrides in (("zipf", {}), ("control", {"saves": {"popularity": "uniform"}}))
        for seed in (1, 2, 3, 4)
    }


def _metrics(days) -> pd.DataFrame:
    frames = []
    for (scenario, seed), tables in days.items():
        frame = run_metrics(tables, 4 * 3600.0)
        frame.insert(0, "seed", seed)
        frame.insert(0, "scenario", scenario)
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)


def test_title_recall_counts_each_stale_citation_once_and_splits_by_cause(days):
    tables = days[("zipf", 1)]
    rows = run_metrics(tables, 4 * 3600.0).set_index("name")
    citations = tables["citations"]
    stale_at_last = (citations["first_stale_s"] <= 4 * 3600.0).sum()
    assert rows.loc["title_recall@end", "trials"] == stale_at_last <= len(citations)
    causes = [rows.loc[f"title_recall@end{{{c}}}", "trials"] for c in ("gone", "retitled", "content")]
    assert sum(causes) == stale_at_last
    assert rows.loc["title_recall@end{gone}", "value"] == 1.0  # a gone article never comes back
    assert rows.loc["title_recall@end{content}", "value"] == 0.0  # the cited title still matches


def test_exact_strategies_detect_everything_at_the_next_check_and_leave_less_exposure(days):
    rows = run_metrics(days[("zipf", 2)], 4 * 3600.0).set_index("name")
    for strategy in ("reread", "poll"):
        assert rows.loc[f"detected_share@end[{strategy}]", "value"] == 1.0
        assert 0 < rows.loc[f"detection_latency_s[{strategy}]", "value"] <= 3600.0
        assert rows.loc[f"detection_latency_p90_s[{strategy}]", "value"] <= 3600.0
    assert rows.loc["detected_share@end[title]", "value"] < 1.0
    exposure = {s: rows.loc[f"stale_exposure[{s}]", "value"] for s in ("title", "reread", "poll")}
    assert exposure["reread"] == exposure["poll"] < exposure["title"]
    assert rows.loc["calls_per_hour[poll]", "value"] == pytest.approx(rows.loc["calls_per_check[poll]", "value"])


def test_staleness_by_position_adds_up_to_all_citations(days):
    rows = run_metrics(days[("zipf", 3)], 4 * 3600.0).set_index("name")
    first, second = rows.loc["stale_citation_share@end{position 1}"], rows.loc["stale_citation_share@end{position 2}"]
    whole = rows.loc["stale_citation_share@end"]
    assert first["successes"] + second["successes"] == whole["successes"]
    assert first["trials"] + second["trials"] == whole["trials"]


def test_declared_contrasts_pair_zipf_and_control_on_common_seeds(days):
    per_run = _metrics(days)
    per_run = per_run[~((per_run["scenario"] == "control") & (per_run["seed"] == 4))]  # one seed unpaired
    spec = ContrastSpec(MetricSelector("stale_citation_share"), baseline={"scenario": "control"})
    out = contrasts(per_run, [spec], ["scenario"])
    assert len(out) == 1
    row = out.iloc[0]
    assert row["scenario"] == "zipf" and row["baseline"] == "scenario=control" and row["seeds"] == 3
    summary = summarize(per_run[per_run["seed"] <= 3], ["scenario"])
    end = summary[summary["name"] == "stale_citation_share@end"].set_index("scenario")["value"]
    assert row["value"] == pytest.approx(end["zipf"] - end["control"])
    assert row["ci_low"] < row["value"] < row["ci_high"]
    assert row["unpaired_ci_low"] < row["value"] < row["unpaired_ci_high"]


def test_each_question_draws_its_own_uniforms_so_one_refusal_shifts_nothing():
    popularity = Popularity(["a", "b", "c"], np.array([0, 1, 2]), 1.0)
    uniforms = [0.01] * ATTEMPTS + [0.99]  # every attempt lands on "a"
    assert popularity.draw(uniforms, lambda article: True) == "a"
    # "a" refused: the exact fallback draws from "b" and "c" with the last uniform only
    assert popularity.draw(uniforms, lambda article: article != "a") == "c"
    assert popularity.draw(uniforms, lambda article: False) is None
    assert UNIFORMS_PER_DRAW == ATTEMPTS + 1


def test_zipf_and_control_ask_about_mostly_the_same_articles(days):
    """Common random numbers: the scenarios differ in saves, not in which questions are asked."""
    same = total = 0
    for seed in (1, 2, 3, 4):
        zipf, control = (days[(s, seed)]["citations"] for s in ("zipf", "control"))
        targets = [d[d["position"] == 0].set_index("answer_id")["target_article_id"] for d in (zipf, control)]
        common = targets[0].index.intersection(targets[1].index)
        same += int((targets[0][common] == targets[1][common]).sum())
        total += len(targets[0])
        assert zipf["asked_s"].equals(control["asked_s"])
    assert same / total > 0.75


# -- survival ---------------------------------------------------------------------------------


def test_kaplan_meier_is_the_empirical_share_without_censoring_and_greenwood_like_alone():
    rng = np.random.default_rng(5)
    n = 2000
    asked = np.zeros(n)
    stale = rng.exponential(3000.0, n)
    frame = pd.DataFrame(
        {"asked_s": asked, "first_stale_s": np.where(stale <= 1e6, stale, np.nan), "seed": np.arange(n)}
    )
    out = stale_within(frame, [1000.0, 3000.0], 1e6).set_index("age_s")
    for age in (1000.0, 3000.0):
        share = (stale <= age).mean()
        assert out.loc[age, "value"] == pytest.approx(share)
        # each citation its own cluster: the binomial standard error
        assert out.loc[age, "se"] == pytest.approx(math.sqrt(share * (1 - share) / n), rel=0.02)


def test_kaplan_meier_of_a_day_counts_censored_citations_as_at_risk(days):
    citations = pd.concat([days[("zipf", s)]["citations"] for s in (1, 2, 3, 4)], ignore_index=True)
    out = stale_within(citations, [600.0, 3600.0, 7200.0], 4 * 3600.0)
    assert list(out["seeds"]) == [4, 4, 4]
    assert out["value"].is_monotonic_increasing
    assert ((out["ci_low"] <= out["value"]) & (out["value"] <= out["ci_high"])).all()
    assert out["at_risk"].is_monotonic_decreasing


# -- the terminal -------------------------------------------------------------------------------


def test_terminal_summary_shows_names_with_intervals_and_warns_below_the_needed_seeds(days):
    per_run = _metrics(days)
    summary = summarize(per_run, ["scenario"])
    text = format_summary(summary, ["scenario"])
    assert "stale_citation_share@end" in text and "zipf" in text and "control" in text
    assert "@h1" not in text  # per-hour rows stay in summary.csv
    assert "%" in text and "[" in text
    # 4 seeds: enough where coverage was measured (2), too few for metrics it was not (5)
    warnings = seed_warnings(summary)
    assert len(warnings) == 1  # every metric short of seeds, said once
    assert warnings[0].startswith("warning: 4 seeds at some points, fewer than the 5 from which the 95% intervals of ")
    assert "bytes_per_check" in warnings[0] and "stale_citation_share" not in warnings[0]
    alone = seed_warnings(summary.assign(seeds=1))
    assert len(alone) == 1 and alone[0].startswith("warning: 1 seed at some points: no 95% interval there for ")
    assert "stale_citation_share" in alone[0] and "more" in alone[0]
    assert not seed_warnings(summary.assign(seeds=20))


def test_every_metric_is_defined_in_the_model_docs():
    from pathlib import Path

    from kbsim.stats import METRICS

    text = (Path(__file__).resolve().parents[1] / "docs" / "model.md").read_text()
    missing = [name for name in METRICS if f"`{name}`" not in text]
    assert not missing, f"docs/model.md does not define {missing}"


def test_a_difference_of_shares_is_held_to_the_values_it_can_take():
    # two seeds that disagree wildly: t(1) = 12.7 puts the raw interval far past +-100 points
    a, b, x = np.array([90.0, 10.0]), np.array([5.0, 95.0]), np.full(2, 100.0)
    result = contrast("proportion", a, x, b, x)
    assert result.value == pytest.approx(0.0)
    assert result.low == -1.0 and result.high == 1.0
    assert result.unpaired_low == -1.0 and result.unpaired_high == 1.0
    spread = contrast("mean", a, None, b, None)  # a mean has no such bound
    assert spread.low < -1 and spread.high > 1


def test_an_interval_for_a_count_never_crosses_zero():
    """Issue 39: with 2 seeds, calls_per_check[poll] printed 3.9 [-1.3, 9.1]. A mean of values that
    are never negative is floored at 0; a mean of signed values keeps its t-interval."""
    from kbsim.stats.intervals import estimate

    floored = estimate("mean", [1.0, 6.8])
    assert floored.low == 0.0 and floored.value == pytest.approx(3.9) and floored.high > 9.1
    signed = estimate("mean", [-1.0, 6.8])
    assert signed.low < 0
    narrow = estimate("mean", [4.0, 4.2, 3.9])
    assert 0 < narrow.low < narrow.value < narrow.high
