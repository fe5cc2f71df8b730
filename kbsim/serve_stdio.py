"""Deprecated: ``kbsim.serve_stdio`` moved to :mod:`kbsim.serve.stdio`; this alias goes in the next release."""

import warnings

from kbsim.serve import stdio as _moved

warnings.warn("kbsim.serve_stdio is deprecated: import kbsim.serve.stdio", DeprecationWarning, stacklevel=2)


def __getattr__(name: str):
    return getattr(_moved, name)
