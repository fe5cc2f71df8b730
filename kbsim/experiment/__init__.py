"""The experiment layer: configs in, tidy results out.

:mod:`~kbsim.experiment.config` is the model of an experiment, its sweep grid and run ids;
:mod:`~kbsim.experiment.schema` declares a config file's top-level keys and checks them;
:mod:`~kbsim.experiment.paths` checks and nests the dotted parameter names a config uses;
:mod:`~kbsim.experiment.load` reads YAML into a validated config (``extends``, ``--set``);
:mod:`~kbsim.experiment.limits` estimates what the runs cost before anything starts;
:mod:`~kbsim.experiment.runner` runs them: a plan, the results folder, execution, the summary;
:mod:`~kbsim.experiment.worker` computes a batch of runs into Parquet bytes;
:mod:`~kbsim.experiment.executors` ships batches to a local pool or Dask, and holds signals;
:mod:`~kbsim.experiment.results` owns the results folder;
:mod:`~kbsim.experiment.precision` adds seeds until intervals are narrow enough.
"""
