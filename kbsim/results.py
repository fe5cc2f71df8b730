"""Deprecated: ``kbsim.results`` moved to :mod:`kbsim.runner.results`; this alias goes in the next release."""

import warnings

from kbsim.runner import results as _moved

warnings.warn("kbsim.results is deprecated: import kbsim.runner.results", DeprecationWarning, stacklevel=2)


def __getattr__(name: str):
    return getattr(_moved, name)
