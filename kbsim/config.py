"""Deprecated: ``kbsim.config`` moved to :mod:`kbsim.experiment.config`; this alias goes in the next release."""

import warnings

from kbsim.experiment import config as _moved

warnings.warn("kbsim.config is deprecated: import kbsim.experiment.config", DeprecationWarning, stacklevel=2)


def __getattr__(name: str):
    return getattr(_moved, name)
