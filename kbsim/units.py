"""Durations and byte sizes: one parser and one formatter each.

:func:`parse_duration` reads ``15min``, ``90s``, ``1.5h``, ``1h30min`` or a bare
number of seconds (refused with ``unit_required``, for a flag whose name does not say the
unit); :func:`parse_bytes` reads ``1.5 GB``, ``300kB`` or a bare number
of bytes (decimal units). Both raise ``ValueError`` with the problem; a caller that
knows which option or key gave the text names it (``kbsim advise`` does, in
:mod:`kbsim.cli.advise_cmd`).

:func:`format_duration` and :func:`format_bytes` write a value in a fitting unit, in
one of a few named styles. There is more than one because the pages, the README, the
figures and the command line each print these values in a way they have kept since
they were written, and they stay byte-identical:

=============  ===================================================  =====================
style          durations                                            sizes
=============  ===================================================  =====================
``default``    3 significant digits, s, min, h, days; a value       3 significant digits,
               that would round to 60 s or 60 min is written in     B, kB, MB, GB
               the next unit (59.97 s is ``0.999 min``); ``n/a``,   (``n/a``)
               ``unlimited``
``page``       3 significant digits, s, min, h                      kB, one decimal
``tick``       every digit it takes (``%g``), s, min, h             ``%g``: B, kB, MB
``estimate``   whole seconds (2 significant digits below 10 s),     3 significant digits,
               whole minutes from 2 min, 3 significant digits in    B to PB
               hours from 2 h and in days from 2 days
=============  ===================================================  =====================

``default`` is ``kbsim advise``'s answer, ``page`` the report's tables and pages,
``tick`` the figures' axes and labels, ``estimate`` the size and time estimates
:mod:`kbsim.runner.limits` prints. This module imports nothing of kbsim's.
"""

from __future__ import annotations

import math
import re
import sys
from dataclasses import dataclass

__all__ = [
    "BYTE_STYLES",
    "DURATION_STYLES",
    "format_bytes",
    "format_duration",
    "parse_bytes",
    "parse_duration",
]


@dataclass(frozen=True)
class _Step:
    """Values below ``below`` are written as ``value / size`` with ``spec``, then ``unit``."""

    below: float
    unit: str
    size: float
    spec: str


@dataclass(frozen=True)
class _Style:
    """The steps in increasing order (the last takes every value the others do not,
    NaN included unless ``missing`` is set), and the words for a missing or infinite value."""

    steps: tuple[_Step, ...]
    missing: str | None = None
    infinite: str | None = None

    def format(self, value: float) -> str:
        if self.missing is not None and (value is None or math.isnan(value)):
            return self.missing
        if self.infinite is not None and math.isinf(value):
            return self.infinite
        for step in self.steps:
            if value < step.below:
                break
        return f"{value / step.size:{step.spec}} {step.unit}"


_INF = math.inf
_DAY_S = 86400.0

#: Duration styles by name (see the module's docstring).
DURATION_STYLES: dict[str, _Style] = {
    "default": _Style(
        (
            _Step(59.95, "s", 1.0, ".3g"),
            _Step(3597.0, "min", 60.0, ".3g"),
            _Step(2 * _DAY_S, "h", 3600.0, ".3g"),
            _Step(_INF, "days", _DAY_S, ".3g"),
        ),
        missing="n/a",
        infinite="unlimited",
    ),
    "page": _Style((_Step(60.0, "s", 1.0, ".3g"), _Step(3600.0, "min", 60.0, ".3g"), _Step(_INF, "h", 3600.0, ".3g"))),
    "tick": _Style((_Step(60.0, "s", 1.0, "g"), _Step(3600.0, "min", 60.0, "g"), _Step(_INF, "h", 3600.0, "g"))),
    "estimate": _Style(
        (
            _Step(10.0, "s", 1.0, ".2g"),
            _Step(120.0, "s", 1.0, ".0f"),
            _Step(7200.0, "min", 60.0, ".0f"),
            _Step(2 * _DAY_S, "h", 3600.0, ".3g"),
            _Step(_INF, "days", _DAY_S, ".3g"),
        )
    ),
}

#: Decimal byte units, smallest first: what :func:`parse_bytes` reads and the styles write.
_BYTE_UNITS = (("B", 1.0), ("kB", 1e3), ("MB", 1e6), ("GB", 1e9), ("TB", 1e12), ("PB", 1e15))


def _byte_steps(units: int, spec: str, bytes_spec: str) -> tuple[_Step, ...]:
    """Steps through the first ``units`` of :data:`_BYTE_UNITS`, each up to 1000 of it."""
    chosen = _BYTE_UNITS[:units]
    return tuple(
        _Step(_INF if i == len(chosen) - 1 else chosen[i + 1][1], unit, size, bytes_spec if size == 1.0 else spec)
        for i, (unit, size) in enumerate(chosen)
    )


#: Byte-size styles by name (see the module's docstring).
BYTE_STYLES: dict[str, _Style] = {
    "default": _Style(_byte_steps(4, ".3g", ".0f"), missing="n/a"),
    "page": _Style((_Step(_INF, "kB", 1e3, ".1f"),)),
    "tick": _Style(_byte_steps(3, "g", "g")),
    "estimate": _Style(_byte_steps(6, ".3g", ".0f")),
}


def _style(styles: dict[str, _Style], style: str, what: str) -> _Style:
    try:
        return styles[style]
    except KeyError:
        raise ValueError(f"{what} style {style!r}: expected one of {', '.join(styles)}") from None


def format_duration(seconds: float, style: str = "default") -> str:
    """``seconds`` in a fitting unit, written in ``style`` (a key of :data:`DURATION_STYLES`):
    ``45 s``, ``14.8 min``, ``1.5 h``, ``2.5 days`` in the default style."""
    return _style(DURATION_STYLES, style, "duration").format(seconds)


def format_bytes(size: float, style: str = "default") -> str:
    """``size`` bytes in a fitting decimal unit, written in ``style`` (a key of
    :data:`BYTE_STYLES`): ``512 B``, ``12.3 kB``, ``1.5 GB`` in the default style."""
    return _style(BYTE_STYLES, style, "size").format(size)


_DURATION_UNITS = {
    "s": 1.0, "sec": 1.0, "secs": 1.0, "second": 1.0, "seconds": 1.0,
    "m": 60.0, "min": 60.0, "mins": 60.0, "minute": 60.0, "minutes": 60.0,
    "h": 3600.0, "hr": 3600.0, "hrs": 3600.0, "hour": 3600.0, "hours": 3600.0,
    "d": 86400.0, "day": 86400.0, "days": 86400.0,
}  # fmt: skip
_DURATION_PART = re.compile(r"(\d+(?:\.\d*)?(?:e[+-]?\d+)?|\.\d+(?:e[+-]?\d+)?)\s*([a-z]*)")


def parse_duration(text: str, *, unit_required: bool = False, allow_zero: bool = False) -> float:
    """Seconds from ``90s``, ``15min``, ``1.5h``, ``1h30min`` or a bare number of seconds.

    Args:
        text: the duration.
        unit_required: refuse a bare number (``15``): where nothing says the unit, 15 may
            mean seconds or minutes (``kbsim advise --max-latency``). Where the name says
            it (a key ending in ``_s``), a bare number is seconds and this stays False.
        allow_zero: accept a duration of 0 (an edit delay of ``0s``).

    Raises:
        ValueError: the text is empty, has an unknown unit or something else beside
            the parts, has no unit when one is required, or is not a positive duration
            (at least 0 with ``allow_zero``).
    """
    raw = str(text).strip().lower()
    if not raw:
        raise ValueError("expected a duration like 15min, 90s or 1.5h, got an empty value")
    try:
        seconds = float(raw)
    except ValueError:
        seconds, position = 0.0, 0
        for match in _DURATION_PART.finditer(raw):
            if match.start() != position or raw[position : match.start()].strip():
                break
            number, unit = match.groups()
            if unit not in _DURATION_UNITS:
                raise ValueError(f"unknown unit {unit!r} in {text!r}; expected s, min, h or d (e.g. 15min)") from None
            seconds += float(number) * _DURATION_UNITS[unit]
            position = match.end()
            while position < len(raw) and raw[position] == " ":
                position += 1
        if position != len(raw):
            if raw.startswith("-") and raw[1:].strip() and _DURATION_PART.fullmatch(raw[1:].strip()):
                kind = "a duration of at least 0" if allow_zero else "a positive duration"
                raise ValueError(f"expected {kind}, got {text!r}") from None
            raise ValueError(f"expected a duration like 15min, 90s or 1.5h, got {text!r}") from None
    else:
        if unit_required and math.isfinite(seconds):
            raise ValueError(f"{str(text).strip()} has no unit: write {str(text).strip()}s or "
                             f"{str(text).strip()}min (or h, d)")
    if math.isinf(seconds) and _DURATION_PART.match(raw):  # 1e400s, or 1e308d overflowing
        raise ValueError(f"{text!r} is out of range: a duration must be a finite number of seconds "
                         f"(at most {sys.float_info.max:.3g})")
    if not (math.isfinite(seconds) and (seconds > 0 or (allow_zero and seconds == 0))):
        kind = "a duration of at least 0" if allow_zero else "a positive duration"
        raise ValueError(f"expected {kind}, got {text!r}")
    return seconds


_SIZE = re.compile(r"(\d+(?:\.\d*)?(?:e[+-]?\d+)?|\.\d+(?:e[+-]?\d+)?)\s*([a-z]*)")
_SIZE_UNITS = {unit.lower(): size for unit, size in _BYTE_UNITS}


def parse_bytes(text: str) -> float:
    """Bytes from ``1.5 GB``, ``300kB``, ``512 B`` or a bare number of bytes (decimal units,
    any case: ``1.5gb`` too); what :func:`format_bytes` writes reads back.

    Raises:
        ValueError: the text is not a number with one of B, kB, MB, GB, TB or PB, or
            not a finite size of at least 0.
    """
    raw = str(text).strip().lower()
    match = _SIZE.fullmatch(raw)
    if match is None:
        raise ValueError(f"expected a size like 1.5 GB, 300 kB or 512 B, got {text!r}")
    number, unit = match.groups()
    if unit and unit not in _SIZE_UNITS:
        raise ValueError(f"unknown unit {unit!r} in {text!r}; expected B, kB, MB, GB, TB or PB")
    size = float(number) * _SIZE_UNITS[unit or "b"]
    if not math.isfinite(size):
        raise ValueError(f"expected a finite size, got {text!r}")
    return size
