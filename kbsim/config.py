"""Deprecated: ``kbsim.config`` moved to :mod:`kbsim.experiment.config` (the model),
:mod:`kbsim.experiment.schema`, :mod:`kbsim.experiment.load` (reading and validating) and
:mod:`kbsim.cli.config_args` (the argparse helpers); this alias goes in the next release."""

import warnings

from kbsim.cli import config_args as _args
from kbsim.experiment import config as _config
from kbsim.experiment import load as _load
from kbsim.experiment import schema as _schema

warnings.warn("kbsim.config is deprecated: import kbsim.experiment.config", DeprecationWarning, stacklevel=2)

_MOVED = (_config, _schema, _load, _args)


def __getattr__(name: str):
    for module in _MOVED:
        if hasattr(module, name):
            return getattr(module, name)
    raise AttributeError(f"module 'kbsim.config' has no attribute {name!r}")
