"""The runner layer: experiment configs in, tidy results out.

:mod:`~kbsim.runner.config` is the model of an experiment, its sweep grid and run ids;
:mod:`~kbsim.runner.config_keys` declares a config file's top-level keys and checks them;
:mod:`~kbsim.runner.paths` checks and nests the dotted parameter names a config uses;
:mod:`~kbsim.runner.load` reads YAML into a validated config (``extends``, ``--set``);
:mod:`~kbsim.runner.limits` estimates what the runs cost before anything starts;
:mod:`~kbsim.runner.run` runs them: a plan, the results folder, execution, the summary;
:mod:`~kbsim.runner.worker` computes a batch of runs into Parquet bytes;
:mod:`~kbsim.runner.executors` ships batches to a local pool or Dask, and holds signals;
:mod:`~kbsim.runner.results` owns the results folder;
:mod:`~kbsim.runner.precision` adds seeds until intervals are narrow enough.
"""
