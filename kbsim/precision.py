"""Deprecated: ``kbsim.precision`` moved to :mod:`kbsim.runner.precision`; this alias goes in the next release."""

import warnings

from kbsim.runner import precision as _moved

warnings.warn("kbsim.precision is deprecated: import kbsim.runner.precision", DeprecationWarning, stacklevel=2)


def __getattr__(name: str):
    return getattr(_moved, name)
