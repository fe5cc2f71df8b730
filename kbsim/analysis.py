"""Deprecated: ``kbsim.analysis`` moved to :mod:`kbsim.report.frames`; this alias goes in the next release."""

import warnings

from kbsim.report import frames as _moved

warnings.warn("kbsim.analysis is deprecated: import kbsim.report.frames", DeprecationWarning, stacklevel=2)


def __getattr__(name: str):
    return getattr(_moved, name)
