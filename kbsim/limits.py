"""Deprecated: ``kbsim.limits`` moved to :mod:`kbsim.experiment.limits`; this alias goes in the next release."""

import warnings

from kbsim.experiment import limits as _moved

warnings.warn("kbsim.limits is deprecated: import kbsim.experiment.limits", DeprecationWarning, stacklevel=2)


def __getattr__(name: str):
    return getattr(_moved, name)
