"""Deprecated: ``kbsim.runner`` moved to :mod:`kbsim.experiment.runner`; this alias goes in the next release."""

import warnings

from kbsim.experiment import runner as _moved

warnings.warn("kbsim.runner is deprecated: import kbsim.experiment.runner", DeprecationWarning, stacklevel=2)


def __getattr__(name: str):
    return getattr(_moved, name)
