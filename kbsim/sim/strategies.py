"""The check strategies, declared once: what each is called, whether it must be exact, and
the function that runs it at a check.

The day's checker runs every registered strategy at every check, in registry order, and
holds each exact one to the store's ground truth; the day's ``checks`` and ``detections``
tables carry a row per strategy; :mod:`kbsim.stats.metrics` gives each its cost and
detection rows; the analytic model, advice, tables and figures read names, labels and
exactness from here. A new strategy is its check function plus one
:func:`register_strategy`; the three below come first, in this order, so every table
keeps its rows in the order they always had.

The registry is per process: a strategy a sweep's days should run is registered where
every worker runs the registration too, at the import of a module the day imports (the
module of a ``run_day`` import path, say), not once in the parent alone.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kbsim.sim.checks import CheckOutcome, poll_check, poll_start, reread_check, title_check
from kbsim.sim.records import CitationRecord

if TYPE_CHECKING:
    from kbsim.sim.world import Day

__all__ = [
    "Strategy",
    "get_strategy",
    "register_strategy",
    "strategies",
    "strategy_names",
    "unregister_strategy",
]

#: ``check(day, held, state)``: what a strategy flagged among the citations held, and its cost.
Check = Callable[["Day", Sequence[CitationRecord], Any], CheckOutcome]


@dataclass(frozen=True)
class Strategy:
    """One way the agent finds its stale citations.

    Attributes:
        name: the ``strategy`` column's value in every table (a word: ``poll``).
        label: what a reader sees in figures and advice (``poll events``).
        exact: whether it must flag exactly the truly stale citations: the checker raises
            :class:`~kbsim.sim.checks.StalenessMismatch` at the first check it does not.
        check: runs it at one check, ``check(day, held, state) -> CheckOutcome``, over the
            citations held so far (the day's :class:`~kbsim.sim.checks.CheckOutcome` counts
            its calls and bytes).
        start: the state it keeps between the checks of one day, made when the day's checker
            starts (``start(day)``); None for a strategy that keeps none (``state`` is None).
    """

    name: str
    label: str
    exact: bool
    check: Check
    start: Callable[[Day], Any] | None = None

    def __post_init__(self) -> None:
        if not self.name.isidentifier():
            raise ValueError(f"name: a strategy's name must be a word (letters, digits, _), got {self.name!r}")


#: The strategies the study is built on, in the order every check runs and records them.
BUILT_IN = (
    Strategy("title", "title lookup", exact=False, check=title_check),
    Strategy("reread", "re-read", exact=True, check=reread_check),
    Strategy("poll", "poll events", exact=True, check=poll_check, start=poll_start),
)
_REGISTRY: dict[str, Strategy] = {strategy.name: strategy for strategy in BUILT_IN}


def register_strategy(strategy: Strategy) -> Strategy:
    """Add ``strategy`` after those registered; every day started from now on runs it.

    Raises:
        ValueError: a strategy of that name is registered already.
    """
    if strategy.name in _REGISTRY:
        raise ValueError(f"strategy {strategy.name!r} is registered already")
    _REGISTRY[strategy.name] = strategy
    return strategy


def unregister_strategy(name: str) -> None:
    """Remove the strategy registered as ``name`` (the built-in three stay).

    Raises:
        ValueError: no strategy of that name is registered, or it is a built-in one.
    """
    if name not in _REGISTRY:
        raise ValueError(f"strategy: no strategy {name!r} is registered; registered: {', '.join(_REGISTRY)}")
    if any(strategy.name == name for strategy in BUILT_IN):
        raise ValueError(f"strategy {name!r} is built in and cannot be unregistered")
    del _REGISTRY[name]


def strategies(exact: bool | None = None) -> tuple[Strategy, ...]:
    """The registered strategies in registry order; only the exact ones (or the others) if asked."""
    return tuple(s for s in _REGISTRY.values() if exact is None or s.exact == exact)


def strategy_names(exact: bool | None = None) -> tuple[str, ...]:
    """The names of :func:`strategies`, in the same order."""
    return tuple(s.name for s in strategies(exact))


def get_strategy(name: str) -> Strategy:
    """The strategy registered as ``name``.

    Raises:
        KeyError: naming the unknown strategy and the registered ones.
    """
    try:
        return _REGISTRY[name]
    except KeyError:
        raise KeyError(f"strategy: no strategy {name!r} is registered; registered: {', '.join(_REGISTRY)}") from None
