"""Intervals and the terminal summary."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy import stats

from kbsim.metrics import format_summary, summarize, t_interval, wilson_interval


def test_wilson_matches_the_closed_form_and_pins_the_edges():
    low, high = wilson_interval(30, 100)
    z = stats.norm.ppf(0.975)
    p, n = 0.3, 100
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    assert math.isclose(low, centre - half) and math.isclose(high, centre + half)
    assert wilson_interval(0, 50)[0] == 0.0 and wilson_interval(50, 50)[1] == 1.0
    assert all(math.isnan(v) for v in wilson_interval(0, 0))


def test_t_interval_matches_scipy():
    values = np.array([1.0, 2.0, 4.0, 7.0])
    low, high = t_interval(values)
    ref = stats.t.interval(0.95, len(values) - 1, loc=values.mean(), scale=stats.sem(values))
    assert np.allclose((low, high), ref)


def test_summarize_pools_proportions_and_averages_means():
    rows = pd.DataFrame(
        {
            "scenario": ["a", "a", "a", "a"],
            "metric": ["share", "share", "cost", "cost"],
            "value": [0.5, 0.25, 10.0, 20.0],
            "successes": [5.0, 5.0, math.nan, math.nan],
            "trials": [10.0, 20.0, math.nan, math.nan],
        }
    )
    out = summarize(rows, ["scenario"]).set_index("metric")
    assert out.loc["share", "value"] == 10 / 30  # pooled, not the mean of 0.5 and 0.25
    assert out.loc["cost", "value"] == 15.0
    assert (out["n"] == 2).all()


def test_format_summary_shows_headlines_with_intervals():
    summary = pd.DataFrame(
        {
            "scenario": ["zipf", "zipf", "control"],
            "edit.delay_s": [None, None, None],
            "metric": ["stale_citation_share@end", "stale_citation_share@h1", "stale_citation_share@end"],
            "value": [0.39, 0.1, 0.33],
            "ci_low": [0.36, 0.05, 0.31],
            "ci_high": [0.42, 0.15, 0.36],
            "n": [5, 5, 5],
        }
    )
    text = format_summary(summary)
    assert "zipf none" in text and "control none" in text
    assert "0.39 [0.36, 0.42]" in text
    assert "@h1" not in text  # per-hour rows stay in summary.csv
