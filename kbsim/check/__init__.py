"""Check a knowledge-base MCP server against the write-up's advice: ``kbsim check``.

From the history of a driven day (:mod:`kbsim.drive.history`), one small module per
piece of advice (:mod:`~kbsim.check.versions`, :mod:`~kbsim.check.log`,
:mod:`~kbsim.check.published`, :mod:`~kbsim.check.cas_keys`, :mod:`~kbsim.check.marking`)
gives each property a verdict: holds, violated (with the calls that show it) or not
observable (and why). :mod:`kbsim.check.day` drives a short, targeted day of racing clients
and probes to record such a history. This layer sits on top of :mod:`kbsim.drive`, which
never imports it.
"""

from kbsim.check.card import ADVICE, Evidence, ReportCard, Verdict, combine, write_card
from kbsim.check.checker import CHECKS, check_folders, check_history, check_observed
from kbsim.check.observe import Observed, observe
from kbsim.check.verdicts import PROPERTIES

__all__ = [
    "ADVICE",
    "CHECKS",
    "PROPERTIES",
    "Evidence",
    "Observed",
    "ReportCard",
    "Verdict",
    "check_folders",
    "check_history",
    "check_observed",
    "combine",
    "observe",
    "write_card",
]
