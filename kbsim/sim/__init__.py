"""The simulated day: corpus, popularity, the SimPy actors, and the tables they produce."""

from kbsim.sim.checks import StalenessMismatch
from kbsim.sim.day import KB_ID, Day, open_day, run_day, simulate_day, streams
from kbsim.sim.processes import ReplayError

__all__ = ["KB_ID", "Day", "ReplayError", "StalenessMismatch", "open_day", "run_day", "simulate_day", "streams"]
