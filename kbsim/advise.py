"""Deprecated: ``kbsim.advise`` moved to :mod:`kbsim.model.advise`; this alias goes in the next release."""

import warnings

from kbsim.model import advise as _moved

warnings.warn("kbsim.advise is deprecated: import kbsim.model.advise", DeprecationWarning, stacklevel=2)


def __getattr__(name: str):
    return getattr(_moved, name)
