"""From a builder's logs to a day kbsim can run: ``kbsim fit``.

A layer above :mod:`kbsim.stats` and :mod:`kbsim.inputs` (it imports params, store, inputs,
sim and stats, never the model, the experiments, the report, the server or the CLI):

- :mod:`kbsim.fit.logs`: reading saves and questions from kbsim's traces, generic CSV or
  JSONL with a column mapping, the event log, split into days in a time zone;
- :mod:`kbsim.fit.popularity`: the Zipf exponent over ranks with the number of articles
  known, its goodness of fit, the rank correlation between saves and questions;
- :mod:`kbsim.fit.estimates`: every estimate with its 95% interval over days, and what the
  analytic model needs that the log does not do;
- :mod:`kbsim.fit.fitted_config`: the experiment config (and traces) a fit writes;
- :mod:`kbsim.fit.synthetic`: logs from known days, for validation and the shipped example.
"""

from kbsim.fit.estimates import Fit, fit_log
from kbsim.fit.logs import Columns, FitInputError, Log, read_log

__all__ = ["Columns", "Fit", "FitInputError", "Log", "fit_log", "read_log"]
