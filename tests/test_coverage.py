"""A quick version of validation/coverage.py: do the package's 95% intervals still hold?

150 seeds of a tiny day per scenario and edit setting; 30 disjoint studies of
5 seeds per metric. Pooled over every metric and scenario, the intervals must
cover the truth (the estimate from all 150 seeds) at least 90% of the time,
and no single metric below 80% (30 studies measure one coverage to about
+-4 points). The full measurement, on the reference day, is
validation/COVERAGE.md.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pandas as pd
import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "validation" / "coverage.py"


def _coverage_module():
    spec = importlib.util.spec_from_file_location("kbsim_coverage", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
@pytest.mark.xdist_group("coverage")
def test_five_seed_intervals_cover_at_least_90_percent():
    coverage = _coverage_module()
    per_run, citations = coverage.per_run_metrics("tiny", seeds=150, workers=1)
    day_s = coverage.day_params("tiny", "zipf", None).day_s
    table = pd.concat(
        [coverage.coverage(per_run, sizes=(5,)), coverage.survival_coverage(citations, day_s, sizes=(5,))],
        ignore_index=True,
    )
    assert len(table) == 2 * len(coverage.TARGETS) + 4  # every target, both scenarios, two Kaplan-Meier ages
    assert (table["studies"] == 30).all()
    pooled = table["coverage"].mean()
    worst = table.loc[table["coverage"].idxmin()]
    assert pooled >= 0.90, f"pooled 5-seed coverage {pooled:.1%}"
    assert worst["coverage"] >= 0.80, f"{worst['metric']} ({worst['scenario']}) covers {worst['coverage']:.0%}"
