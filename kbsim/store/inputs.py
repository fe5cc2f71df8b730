"""Checks of the Python API's arguments, shared by both backends.

Every public store method checks its arguments with these before it reads or
changes anything, so a value of the wrong type, or a time no ``updated_at``
can write, is a ``ToolError("invalid_argument")`` naming the argument, never
a ``TypeError`` from deep inside and never a half-applied change. The tool
calls' own arguments are checked earlier, against ``tools.json``, by
:func:`~kbsim.store.schema.validate_arguments`.
"""

from __future__ import annotations

import math
import numbers
import reprlib
from collections.abc import Iterable, Iterator
from typing import Any

from kbsim.store.errors import ToolError
from kbsim.store.timefmt import MAX_VERSION_US, MIN_VERSION_US, format_version, in_version_range

_short = reprlib.Repr()
_short.maxstring = 40
_short.maxother = 40


def shown(value: Any) -> str:
    """``value`` for an error message: its type and a repr cut short."""
    return f"{type(value).__name__} {_short.repr(value)}"


def check_text(value: Any, name: str) -> str:
    """A string argument (an id, a title, a content, a query)."""
    if not isinstance(value, str):
        raise ToolError("invalid_argument", f"{name} must be a string, got {shown(value)}")
    return value


def check_optional_text(value: Any, name: str) -> str | None:
    return None if value is None else check_text(value, name)


def check_count(value: Any, name: str, minimum: int) -> int:
    """An integer argument (a limit, a cursor) of at least ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ToolError("invalid_argument", f"{name} must be an integer, got {shown(value)}")
    if value < minimum:
        raise ToolError("invalid_argument", f"{name} must be at least {minimum}, got {value}")
    return int(value)


def check_at(value: Any, name: str = "at") -> int:
    """Simulated seconds -> microseconds, refusing what no ``updated_at`` can write."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ToolError(
            "invalid_argument", f"{name} must be a number of seconds, got {shown(value)}"
        )
    if not math.isfinite(value):
        raise ToolError("invalid_argument", f"{name} must be finite, got {value!r}")
    at_us = int(round(value * 1_000_000))
    if not in_version_range(at_us):
        raise ToolError(
            "invalid_argument",
            f"{name} = {value!r} s is outside the times an updated_at can write "
            f"({format_version(MIN_VERSION_US)} to {format_version(MAX_VERSION_US)})",
        )
    return at_us


def check_now_us(value: Any, name: str = "now_us") -> int:
    """Integer microseconds since the day start, within the writable range."""
    check_count(value, name, MIN_VERSION_US)
    if value > MAX_VERSION_US:
        raise ToolError(
            "invalid_argument",
            f"{name} = {value} is after the last time an updated_at can write "
            f"({format_version(MAX_VERSION_US)})",
        )
    return int(value)


def check_next_version(version_us: int, article_id: str) -> int:
    """The version a change would give: refused past the last writable instant."""
    if version_us > MAX_VERSION_US:
        raise ToolError(
            "invalid_argument",
            f"article {article_id!r} is at the last version an updated_at can write "
            f"({format_version(MAX_VERSION_US)}); it cannot change again",
        )
    return version_us


def checked_articles(articles: Any) -> Iterator[tuple[str, str]]:
    """The ``(title, content)`` pairs of a fill, each checked as it is reached."""
    if isinstance(articles, (str, bytes)) or not isinstance(articles, Iterable):
        raise ToolError(
            "invalid_argument",
            f"articles must be an iterable of (title, content) pairs, got {shown(articles)}",
        )
    for i, item in enumerate(articles):
        if not isinstance(item, (tuple, list)) or len(item) != 2:
            raise ToolError(
                "invalid_argument",
                f"articles[{i}] must be a (title, content) pair, got {shown(item)}",
            )
        title, content = item
        yield check_text(title, f"articles[{i}] title"), check_text(content, f"articles[{i}] content")


def check_retention(value: Any) -> float | None:
    """The ``event_retention_s`` option: None, or a finite number of seconds > 0."""
    if value is None:
        return None
    if (
        isinstance(value, bool)
        or not isinstance(value, numbers.Real)
        or not math.isfinite(value)
        or not value > 0
    ):
        raise ValueError(
            f"event_retention_s must be a finite number of seconds > 0 or None, got {value!r}"
        )
    return value
