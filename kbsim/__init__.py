"""kbsim: how fast an agent's knowledge-base citations go stale, what noticing costs,
and how often its edits collide.

The public API is listed in ``__all__``; see README.md for a tour. The entry points a
notebook needs are here:

- :func:`run_day` simulates one day from its parameters and a seed, and returns its tables;
- :func:`run_experiment` runs an experiment config (scenarios x sweep x seeds), resumably;
- :func:`load_results` reads an experiment's results folder back as tables;
- :func:`summarize` estimates each metric over seeds, with its 95% interval;
- :func:`study` (and :class:`Study`) runs a shipped experiment or a config of yours where its
  runs are missing and answers with ``.summary()``, ``.tables``, ``.contrasts()`` and
  ``.figure(name)``, shown in Jupyter as a table with intervals;
- :func:`fit_log` estimates a day from your logs (read by :func:`read_log`), and :func:`advise`
  answers the cheapest check policy for a day (:func:`day_params`, :class:`Target`);
- :func:`walkthrough` (and :class:`Walkthrough`) is what each notebook under ``notebooks/`` reads:
  its experiments, and one call per section (a figure, a model check, prose from the results).

Example:
    >>> import kbsim
    >>> result = kbsim.run_experiment(
    ...     {"name": "tiny", "params": {"day_hours": 2, "corpus": {"articles": 30},
    ...      "saves": {"count": 30}, "questions": {"count": 20}}, "seeds": 2},
    ...     "results", workers=1, progress=False)
    >>> tables = kbsim.load_results(result.directory)
    >>> summary = kbsim.summarize(tables["metrics"], by=["scenario"])
    >>> int(summary["seeds"].max())
    2

Every name here is loaded when first used (module ``__getattr__``, :data:`_LAZY` says from
where): ``import kbsim``, and so every ``kbsim`` command (``kbsim --help``, ``kbsim tools``),
imports none of numpy, pandas, pyarrow, SimPy or scipy until one is asked for.
"""


from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from kbsim.version import __version__

if TYPE_CHECKING:  # what the lazy names below resolve to, for type checkers and readers
    from kbsim.fit import fit_log, read_log
    from kbsim.model.advise import Target, advise, day_params
    from kbsim.report.study import Study, study
    from kbsim.report.walkthrough import Walkthrough, walkthrough
    from kbsim.runner.results import load_results
    from kbsim.runner.run import RunsFailedError, run_experiment
    from kbsim.sim.day import run_day
    from kbsim.stats.summary import summarize
    from kbsim.store import (
        DAY_START,
        TOOL_NAMES,
        Client,
        MemoryStore,
        SQLiteStore,
        Store,
        StoreBusyError,
        StoreFileError,
        ToolDefinition,
        ToolError,
        format_version,
        json_size,
        parse_version,
        tool_definitions,
    )

#: Each public name and the module that defines it, imported when the name is first used.
_LAZY = {
    **dict.fromkeys(
        (
            "DAY_START", "TOOL_NAMES", "Client", "MemoryStore", "SQLiteStore", "Store", "StoreBusyError",
            "StoreFileError", "ToolDefinition", "ToolError", "format_version", "json_size", "parse_version",
            "tool_definitions",
        ),
        "kbsim.store",
    ),
    "run_day": "kbsim.sim.day",
    "run_experiment": "kbsim.runner.run",
    "RunsFailedError": "kbsim.runner.run",
    "load_results": "kbsim.runner.results",
    "summarize": "kbsim.stats.summary",
    "study": "kbsim.report.study",
    "Study": "kbsim.report.study",
    "walkthrough": "kbsim.report.walkthrough",
    "Walkthrough": "kbsim.report.walkthrough",
    "fit_log": "kbsim.fit",
    "read_log": "kbsim.fit",
    "advise": "kbsim.model.advise",
    "day_params": "kbsim.model.advise",
    "Target": "kbsim.model.advise",
}

__all__ = [
    "Client",
    "DAY_START",
    "MemoryStore",
    "RunsFailedError",
    "SQLiteStore",
    "Store",
    "StoreBusyError",
    "StoreFileError",
    "Study",
    "TOOL_NAMES",
    "Target",
    "ToolDefinition",
    "ToolError",
    "Walkthrough",
    "__version__",
    "advise",
    "day_params",
    "fit_log",
    "format_version",
    "json_size",
    "load_results",
    "parse_version",
    "read_log",
    "run_day",
    "run_experiment",
    "study",
    "summarize",
    "tool_definitions",
    "walkthrough",
]


def __getattr__(name: str) -> Any:
    """A public name of :data:`_LAZY`, imported from its module on first use."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'kbsim' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})
