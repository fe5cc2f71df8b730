"""The one exception type every tool and store method raises."""

from __future__ import annotations

import reprlib
from typing import Any

_short = reprlib.Repr()
_short.maxstring = 40
_short.maxother = 40

#: The most characters of a caller's text an error message repeats (an id, a key, a
#: resource type): the tools' schemas let ids and idempotency keys be any length, and a
#: refusal must not echo a megabyte back. Longer text is shown cut short, with its length.
MAX_ECHOED_CHARS = 256


def cut_short(value: Any) -> str:
    """``value``'s repr, cut short at 40 characters (a string) or so (anything else)."""
    return _short.repr(value)


def shown(value: Any) -> str:
    """``value`` for an error message: its type and a repr cut short."""
    return f"{type(value).__name__} {_short.repr(value)}"


def echoed(value: Any) -> str:
    """``value`` (text a caller sent) quoted for an error message: as it is up to
    :data:`MAX_ECHOED_CHARS` characters, else cut short and its length said."""
    if not isinstance(value, str):
        return shown(value)
    if len(value) > MAX_ECHOED_CHARS:
        return f"{_short.repr(value)} ({len(value):,} characters)"
    return repr(value)


#: The stable error codes a caller can branch on. ``busy`` (a SQLite file whose
#: write lock another process held too long) is the one worth retrying as it is.
ERROR_CODES = frozenset(
    {
        "invalid_argument",
        "not_found",
        "version_conflict",
        "version_not_exact",
        "idempotency_key_reused",
        "unsupported",
        "cursor_expired",
        "busy",
    }
)


class ToolError(Exception):
    """A tool call that was refused; the store is unchanged.

    Attributes:
        code: one of :data:`ERROR_CODES`.
        message: human-readable text naming the offending argument.
        details: extra machine-readable fields (``cursor_expired`` carries
            ``oldest_available_sequence`` and ``latest_sequence``).
    """

    def __init__(self, code: str, message: str, **details: Any) -> None:
        if code not in ERROR_CODES:
            raise ValueError(f"unknown ToolError code {code!r}")
        # args are the constructor's own, so the error can be made again from them: SimPy raises
        # a process's failure anew as type(exc)(*exc.args), and pickle rebuilds it from args too
        super().__init__(code, message)
        self.code = code
        self.message = message
        self.details = details

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"

    def __reduce__(self):
        return _rebuilt_tool_error, (type(self), self.code, self.message, self.details)

    def to_dict(self) -> dict[str, Any]:
        """The error as a JSON-serialisable dict (what an MCP client sees)."""
        return {"code": self.code, "message": self.message, **self.details}


def _rebuilt_tool_error(cls: type[ToolError], code: str, message: str, details: dict[str, Any]) -> ToolError:
    """A :class:`ToolError` (or subclass) from its pickled fields, details included."""
    return cls(code, message, **details)
