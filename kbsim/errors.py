"""The one base of every error a user's input or environment causes: :class:`UsageError`.

A config, a results folder, an input file, an advice question, a serve option, a
run to export: when kbsim refuses one, it raises a subclass of :class:`UsageError`
whose message names the file, key or option at fault and what was expected. The
command line turns any such error that escapes a command into one line on stderr
and exit status 2, in one place (:func:`kbsim.cli.main`); a library caller can
catch them all with ``except UsageError``.

It is a ``ValueError``, so code that caught the subclasses as ``ValueError``
(as :class:`~kbsim.experiment.config.ConfigError` and
:class:`~kbsim.inputs.InputError` always were) keeps working.

This module imports nothing of kbsim's: every layer may raise its errors.
"""

from __future__ import annotations

__all__ = ["UsageError"]


class UsageError(ValueError):
    """Something the user gave (a file, a key, an option) that kbsim cannot use.

    The message is one line that names what is at fault and what was expected;
    the subclasses add the structured fields (``source`` and ``key_path``,
    ``path``, ``flag``, ...) their callers read.
    """
