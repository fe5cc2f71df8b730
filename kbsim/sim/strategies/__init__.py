"""The check strategies, passed to a day by name as Ciw passes ``node_class``.

A day runs the strategies its parameters name (``checks.strategies``; by default
:data:`DEFAULT`, the study's three, in the order every table has always kept them). Each is
a :class:`Strategy`: what it is called, how it checks, and what every layer above asks of it
(its label and colour in figures and advice, whether it must be exact, and its analytic
cost, if the model has one). Nothing outside a strategy's own module spells its name.

A name is one of two things, resolved by :func:`resolve` in whichever process runs the
day (a pool's worker started by forkserver or spawn resolves it again, from the name in
its parameters; nothing is registered on import):

- a word, ``poll``: the strategy ``STRATEGY`` of the module ``kbsim.sim.strategies.poll``
  (a new built-in strategy is one module here);
- an import path, ``mypkg.mod:my_strategy``: the :class:`Strategy` named ``my_strategy``
  in the module ``mypkg.mod``, importable where the day runs (on ``sys.path`` or
  ``PYTHONPATH``; a local pool's workers start with the parent's ``sys.path``).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from kbsim.errors import UsageError
from kbsim.sim.checks import CheckOutcome
from kbsim.sim.records import CitationRecord
from kbsim.store import Client

if TYPE_CHECKING:
    from kbsim.params import DayParams
    from kbsim.sim.world import Day

__all__ = [
    "DEFAULT",
    "CheckScope",
    "Strategy",
    "StrategyError",
    "default_strategies",
    "resolve",
    "strategy_named",
]

#: The strategies a day runs unless its parameters name others, in the order every check
#: runs and records them (each a module of this package).
DEFAULT: tuple[str, ...] = ("title", "reread", "poll")


@dataclass(frozen=True, eq=False)
class CheckScope:
    """What one strategy's check reads at one check: the day, the client its calls go
    through, and the cited text when citations carry no version.

    The day's own checks go through the day's checking client (a shared consumer on a day
    of several agents); each agent's own checks of its own citations through its own client.
    """

    day: Day
    client: Client
    #: citation index -> (title, content) as cited, when the check must compare text
    #: (citations without versions); None: compare versions
    cited_text: Mapping[int, tuple[str, str]] | None = None

    @property
    def kb_id(self) -> str:
        """The knowledge base the day's agent checks."""
        return self.day.kb_id

    @property
    def now(self) -> float:
        """The simulated time of the check, in seconds."""
        return self.day.env.now

    @property
    def params(self) -> DayParams:
        """The day's parameters."""
        return self.day.params


#: ``check(scope, held, state)``: what a strategy flagged among the citations held, and its cost.
Check = Callable[[CheckScope, Sequence[CitationRecord], Any], CheckOutcome]


@dataclass(frozen=True)
class Strategy:
    """One way the agent finds its stale citations, with all that any layer asks of it.

    Attributes:
        name: the ``strategy`` column's value in every table (a word: ``poll``).
        label: what a reader sees in figures and advice (``poll events``).
        exact: whether it must flag exactly the truly stale citations: the checker raises
            :class:`~kbsim.sim.checks.StalenessMismatch` at the first check it does not
            (on the days ``exact_on`` accepts). An exact strategy is also what each of
            several agents runs over its own citations, and what a day without versions
            holds to the text cited.
        check: runs it at one check, ``check(scope, held, state) -> CheckOutcome``, over the
            citations held so far (:class:`CheckScope`; the outcome counts its calls and bytes).
        colour: its colour in every figure (a matplotlib colour).
        short_label: its name in a table's row label (``Calls per check: re-read``); the
            name when empty.
        start: the state it keeps between the checks of one day, made when a checker starts
            (``start(scope)``); None for a strategy that keeps none (``state`` is None).
        exact_on: the days it is held exact on (``exact_on(params)``); None: every day.
        model: its analytic row at one check interval, ``model(policy) -> dict`` with
            ``calls_per_hour``, ``bytes_per_hour`` and the detection metrics, from the
            quantities of :class:`kbsim.model.analytic.PolicyQuantities`; None: the model has
            none, and ``kbsim advise`` answers for it by simulation.
        model_checked: the metrics of ``model`` that the model checks hold to simulation.
        reads_event_log: it follows the knowledge base's event log with a cursor (its checks
            give the cursor-expiry rate, what a missing unpublish event costs, and what one
            shared consumer saves several agents).
        recall_metric: the metric its recall by cause (gone, retitled, content) is recorded as.
        advice_role: what the advice says of it beside the choice, where it is not a choice
            itself (``"blind"``: the cheap check that misses what the exact ones find).
    """

    name: str
    label: str
    exact: bool
    check: Check
    colour: str = "#17becf"
    short_label: str = ""
    start: Callable[[CheckScope], Any] | None = None
    exact_on: Callable[[DayParams], bool] | None = None
    model: Callable[[Any], dict[str, float]] | None = None
    model_checked: tuple[str, ...] = ()
    reads_event_log: bool = False
    recall_metric: str | None = None
    advice_role: str | None = None

    def __post_init__(self) -> None:
        if not self.name.isidentifier():
            raise ValueError(f"name: a strategy's name must be a word (letters, digits, _), got {self.name!r}")
        if not self.short_label:
            object.__setattr__(self, "short_label", self.name)

    def held_exact(self, params: DayParams) -> bool:
        """Whether the checker holds it to the truth on a day of ``params``."""
        return self.exact and (self.exact_on is None or self.exact_on(params))


class StrategyError(UsageError):
    """A strategy name that names no strategy (an unknown word, or an import path that fails)."""


def _load(spec: str) -> Strategy:
    module_name, _, attribute = spec.partition(":")
    if not attribute:
        module_name, attribute = f"{__name__}.{spec}", "STRATEGY"
    if not spec.replace(".", "").replace(":", "").replace("_", "").isalnum():
        raise StrategyError(f"strategy {spec!r}: expected a word (poll) or an import path (mypkg.mod:my_strategy)")
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        if ":" not in spec:
            known = ", ".join(DEFAULT)
            raise StrategyError(f"strategy {spec!r}: no built-in strategy of that name (built in: {known}; "
                                "name one of your own by its import path, mypkg.mod:my_strategy)") from None
        raise StrategyError(f"strategy {spec!r}: cannot import {module_name!r} ({error}); is it on "
                            "sys.path or PYTHONPATH where the day runs?") from None
    found = getattr(module, attribute, None)
    if not isinstance(found, Strategy):
        raise StrategyError(f"strategy {spec!r}: {module_name}.{attribute} is "
                            f"{'missing' if found is None else type(found).__name__}, not a kbsim Strategy")
    return found


@lru_cache(maxsize=64)
def _resolve(specs: tuple[str, ...]) -> tuple[Strategy, ...]:
    found = tuple(_load(spec) for spec in specs)
    names = [strategy.name for strategy in found]
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        raise StrategyError(f"strategies: {', '.join(twice)} named twice (a strategy's name labels its rows)")
    if not found:
        raise StrategyError("strategies: name at least one")
    return found


def resolve(specs: Iterable[str] | None = None) -> tuple[Strategy, ...]:
    """The strategies ``specs`` name (words or import paths, see the module), in order;
    None: :data:`DEFAULT`.

    Raises:
        StrategyError: a name that names no strategy, or two strategies of one name.
    """
    return _resolve(DEFAULT if specs is None else tuple(specs))


def default_strategies() -> tuple[Strategy, ...]:
    """The strategies of :data:`DEFAULT`, in order."""
    return resolve(DEFAULT)


def strategy_named(name: str, among: Sequence[Strategy] | None = None) -> Strategy:
    """The strategy whose ``name`` is ``name``: one of ``among`` (a day's strategies), else a
    built-in one.

    Raises:
        StrategyError: none of that name.
    """
    for strategy in among or ():
        if strategy.name == name:
            return strategy
    if name.isidentifier():
        return _load(name)
    raise StrategyError(f"strategy {name!r}: not a strategy's name")
