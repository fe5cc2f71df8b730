"""A quick version of validation/fit.py: do ``kbsim fit``'s 95% intervals still hold?

40 logs of 3 known days with Poisson saves and 40 with saves in sessions, the exponents
and rank correlations cycling through validation/fit.py's grid, each fitted as ``kbsim fit``
does. Pooled over the targeted estimates (saves and questions per day, the two Zipf
exponents), the intervals must hold the truth at least 90% of the time, and no single
estimate below 80% (80 logs measure one coverage to about +-2.5 points). The full
measurement, with 1 to 14 days, is validation/FIT.md.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pandas as pd
import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "validation" / "fit.py"
TARGETED = ("saves_per_day", "questions_per_day", "zipf_saves", "zipf_questions")


def _validation_module():
    spec = importlib.util.spec_from_file_location("kbsim_fit_validation", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
@pytest.mark.xdist_group("coverage")
def test_three_day_intervals_of_the_fit_cover_at_least_90_percent():
    validation = _validation_module()
    rows = [row for arrivals in validation.ARRIVALS for index in range(40)
            for row in validation.study((arrivals, 3, index))]
    frame = pd.DataFrame(rows)
    table = validation.coverage_table(frame)
    targeted = table[table["estimate"].isin(TARGETED)]
    assert len(targeted) == 2 * len(TARGETED) and (targeted["logs"] == 40).all()
    pooled = targeted["coverage"].mean()
    worst = targeted.loc[targeted["coverage"].idxmin()]
    assert pooled >= 0.90, f"pooled 3-day coverage {pooled:.1%}"
    assert worst["coverage"] >= 0.80, f"{worst['estimate']} ({worst['arrivals']}) covers {worst['coverage']:.0%}"
    # bursty saves take the cross-day moment, which bursts do not bias
    sessions = frame[(frame["estimate"] == "zipf_saves") & (frame["arrivals"] == "saves in sessions")]
    assert abs((sessions["value"] - sessions["truth"]).mean()) < 0.05
