"""The statistics layer: what each metric is, how one run computes it, how seeds are pooled.

- :mod:`kbsim.stats.metrics`: every metric's definition (:data:`METRICS`) and
  :func:`run_metrics`, the one computation of a run's metrics;
- :mod:`kbsim.stats.intervals`: the one interval method (linearisation over seeds);
- :mod:`kbsim.stats.summary`: :func:`summarize` per point and :func:`contrasts`
  between points, paired on common seeds;
- :mod:`kbsim.stats.survival`: time from citation to staleness (Kaplan-Meier).
"""

from kbsim.stats.intervals import Contrast, Estimate, contrast, estimate
from kbsim.stats.metrics import METRICS, Metric, metrics_by_run, run_metrics
from kbsim.stats.summary import ContrastSpec, MetricSelector, contrasts, summarize, underpowered

__all__ = [
    "METRICS",
    "Contrast",
    "ContrastSpec",
    "Estimate",
    "Metric",
    "MetricSelector",
    "contrast",
    "contrasts",
    "estimate",
    "metrics_by_run",
    "run_metrics",
    "summarize",
    "underpowered",
]
