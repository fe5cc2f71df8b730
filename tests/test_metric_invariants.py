"""Every share a run reports is a share: 0 <= successes <= trials, on the days the study runs.

A proportion whose numerator can outgrow its denominator (the title check flags more
citations "gone" than are gone, a retitled article it no longer finds) breaks the
interval method downstream (a Wilson interval of 19 in 14), so it is held here on days
of the Zipf sweep where that happens."""

import pytest

from kbsim.params import DayParams
from kbsim.sim import run_day
from kbsim.stats.metrics import METRICS, run_metrics


@pytest.mark.parametrize("zipf_s", [0.0, 0.9, 1.5])
def test_every_proportion_row_is_a_share(zipf_s):
    params = DayParams.model_validate({"zipf_s": zipf_s})
    for seed in (1, 3, 6):
        metrics = run_metrics(run_day(params, seed), params.day_s)
        shares = metrics[metrics["metric"].map(lambda name: METRICS[name].kind in ("proportion", "invariant"))]
        counted = shares[shares["trials"] > 0]
        bad = counted[(counted["successes"] < 0) | (counted["successes"] > counted["trials"])]
        assert bad.empty, bad[["metric", "strategy", "subset", "successes", "trials"]].to_string()
