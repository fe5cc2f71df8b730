"""The simulated day: corpus, popularity, the SimPy actors, and the tables they produce.

:mod:`~kbsim.sim.world` is the world a day's actors share, :mod:`~kbsim.sim.strategies`
the check strategies a day is handed (by name, in its parameters), :mod:`~kbsim.sim.tables` the day's tables,
:mod:`~kbsim.sim.day` runs a day, :mod:`~kbsim.sim.replay` and :mod:`~kbsim.sim.export`
read and write it as traces.
"""

from kbsim.sim.checks import StalenessMismatch
from kbsim.sim.day import open_day, run_day, simulate_day
from kbsim.sim.processes import ReplayError
from kbsim.sim.strategies import CheckScope, Strategy, StrategyError
from kbsim.sim.world import KB_ID, Day, streams

__all__ = [
    "KB_ID",
    "CheckScope",
    "Day",
    "ReplayError",
    "StalenessMismatch",
    "Strategy",
    "StrategyError",
    "open_day",
    "run_day",
    "simulate_day",
    "streams",
]
