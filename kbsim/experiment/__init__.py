"""The experiment layer: configs in, tidy results out.

:mod:`~kbsim.experiment.config` reads and validates experiment YAML into runs;
:mod:`~kbsim.experiment.limits` estimates what they cost before anything starts;
:mod:`~kbsim.experiment.runner` executes them (a local pool or Dask);
:mod:`~kbsim.experiment.results` owns the results folder;
:mod:`~kbsim.experiment.precision` adds seeds until intervals are narrow enough.
"""
