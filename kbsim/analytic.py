"""Deprecated: ``kbsim.analytic`` moved to :mod:`kbsim.model.analytic`; this alias goes in the next release."""

import warnings

from kbsim.model import analytic as _moved

warnings.warn("kbsim.analytic is deprecated: import kbsim.model.analytic", DeprecationWarning, stacklevel=2)


def __getattr__(name: str):
    return getattr(_moved, name)
