"""Deprecated: ``kbsim.config`` moved to :mod:`kbsim.runner.config` (the model),
:mod:`kbsim.runner.config_keys`, :mod:`kbsim.runner.load` (reading and validating) and
:mod:`kbsim.cli.config_args` (the argparse helpers); this alias goes in the next release."""

import warnings

from kbsim.cli import config_args as _args
from kbsim.runner import config as _config
from kbsim.runner import config_keys as _schema
from kbsim.runner import load as _load

warnings.warn("kbsim.config is deprecated: import kbsim.runner.config", DeprecationWarning, stacklevel=2)

_MOVED = (_config, _schema, _load, _args)


def __getattr__(name: str):
    for module in _MOVED:
        if hasattr(module, name):
            return getattr(module, name)
    raise AttributeError(f"module 'kbsim.config' has no attribute {name!r}")
