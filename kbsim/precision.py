"""Deprecated: ``kbsim.precision`` moved to :mod:`kbsim.experiment.precision`; this alias goes in the next release."""

import warnings

from kbsim.experiment import precision as _moved

warnings.warn("kbsim.precision is deprecated: import kbsim.experiment.precision", DeprecationWarning, stacklevel=2)


def __getattr__(name: str):
    return getattr(_moved, name)
