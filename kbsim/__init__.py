"""kbsim: how fast an agent's knowledge-base citations go stale, what noticing costs,
and how often its edits collide.

The public API is listed in ``__all__``; see README.md for a tour. The entry points a
notebook needs are here:

- :func:`run_day` simulates one day from its parameters and a seed, and returns its tables;
- :func:`run_experiment` runs an experiment config (scenarios x sweep x seeds), resumably;
- :func:`load_results` reads an experiment's results folder back as tables;
- :func:`summarize` estimates each metric over seeds, with its 95% interval.

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

Those four are loaded when first used (module ``__getattr__``): they bring pandas,
pyarrow and SimPy (about 0.6 s), which ``import kbsim``, and so every ``kbsim`` command
(``kbsim --help``, ``kbsim tools``), does not need. The store's API is imported at once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

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
from kbsim.version import __version__

if TYPE_CHECKING:  # what the lazy names below resolve to, for type checkers and readers
    from kbsim.runner.results import load_results
    from kbsim.runner.run import run_experiment
    from kbsim.sim.day import run_day
    from kbsim.stats.summary import summarize

__all__ = [
    "DAY_START",
    "TOOL_NAMES",
    "Client",
    "MemoryStore",
    "SQLiteStore",
    "Store",
    "StoreBusyError",
    "StoreFileError",
    "ToolDefinition",
    "ToolError",
    "__version__",
    "format_version",
    "json_size",
    "load_results",
    "parse_version",
    "run_day",
    "run_experiment",
    "summarize",
    "tool_definitions",
]

#: The entry points loaded on first use (:func:`__getattr__` says where each is defined).
_LAZY = ("load_results", "run_day", "run_experiment", "summarize")


def __getattr__(name: str) -> Any:
    """``kbsim.run_day`` and the other entry points of :data:`_LAZY`, imported on first use."""
    value: Any
    if name == "run_day":
        from kbsim.sim.day import run_day as value
    elif name == "run_experiment":
        from kbsim.runner.run import run_experiment as value
    elif name == "load_results":
        from kbsim.runner.results import load_results as value
    elif name == "summarize":
        from kbsim.stats.summary import summarize as value
    else:
        raise AttributeError(f"module 'kbsim' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})
