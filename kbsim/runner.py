"""Deprecated: ``kbsim.runner`` moved to :mod:`kbsim.experiment.runner` (with the worker in
:mod:`kbsim.experiment.worker` and the executors in :mod:`kbsim.experiment.executors`); this
alias goes in the next release."""

import warnings

from kbsim.experiment import executors as _executors
from kbsim.experiment import runner as _runner
from kbsim.experiment import worker as _worker

warnings.warn("kbsim.runner is deprecated: import kbsim.experiment.runner", DeprecationWarning, stacklevel=2)

_MOVED = (_runner, _worker, _executors)


def __getattr__(name: str):
    for module in _MOVED:
        if hasattr(module, name):
            return getattr(module, name)
    raise AttributeError(f"module 'kbsim.runner' has no attribute {name!r}")
