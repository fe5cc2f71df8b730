"""Deprecated: ``kbsim.limits`` moved to :mod:`kbsim.runner.limits`; this alias goes in the next release."""

import warnings

from kbsim.runner import limits as _moved

warnings.warn("kbsim.limits is deprecated: import kbsim.runner.limits", DeprecationWarning, stacklevel=2)


def __getattr__(name: str):
    return getattr(_moved, name)
