"""The error of a config that cannot be run, and of several at once.

Kept apart from the experiment model (:mod:`kbsim.runner.config`) so that what only reads
configs (``kbsim experiments``, :mod:`kbsim.runner.grid`) raises them without pydantic.
"""

from __future__ import annotations

from kbsim.errors import UsageError

__all__ = ["MAX_REPORTED", "ConfigError", "ConfigErrors", "all_errors"]


class ConfigError(UsageError):
    """A config that cannot be run: names the file, the key path and what was expected."""

    def __init__(self, source: str, key_path: str, problem: str) -> None:
        self.source = str(source)
        self.key_path = key_path
        self.problem = problem
        where = f"{self.source}: {key_path}" if key_path else self.source
        super().__init__(f"{where}: {problem}")


class ConfigErrors(ConfigError):
    """Several problems in one config, reported at once (at most :data:`MAX_REPORTED` of them),
    on one line: the first as a :class:`ConfigError` says it, then each other's key path."""

    def __init__(self, errors: list[ConfigError]) -> None:
        self.errors = list(errors)
        first, rest = self.errors[0], self.errors[1:MAX_REPORTED]
        more = len(self.errors) - MAX_REPORTED
        others = "; ".join(
            f"{'' if error.source == first.source else error.source + ': '}{error.key_path}: {error.problem}"
            for error in rest
        )
        problem = first.problem + (f"; and {len(self.errors) - 1} more: {others}" if rest else "")
        problem += f"; ... and {more} more not shown" if more > 0 else ""
        super().__init__(first.source, first.key_path, problem)


#: The most problems of one config that :class:`ConfigErrors` reports.
MAX_REPORTED = 10


def all_errors(errors: list[ConfigError]) -> ConfigError:
    """One error for ``errors``: itself when there is one, else a :class:`ConfigErrors`."""
    flat = [inner for error in errors for inner in (error.errors if isinstance(error, ConfigErrors) else [error])]
    return flat[0] if len(flat) == 1 else ConfigErrors(flat)
