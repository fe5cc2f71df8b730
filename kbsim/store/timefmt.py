"""Simulated seconds <-> RFC 3339 ``updated_at`` strings.

Versions are kept internally as integer microseconds since the start of the
simulated day, so "strictly larger" is exact integer arithmetic and the
string form is only produced at the tool boundary.

The range of versions is the range RFC 3339 can write: years 0001 to 9999
(:data:`MIN_VERSION_US` to :data:`MAX_VERSION_US`). A leap second
(``23:59:60`` in UTC) is a valid RFC 3339 time, but no version is ever one:
versions are counted on a timeline without leap seconds, as POSIX time is.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from functools import lru_cache

#: The instant simulated second 0 maps to.
DAY_START = datetime(2026, 1, 5, 9, 0, 0, tzinfo=UTC)
_EPOCH_US = int(DAY_START.timestamp()) * 1_000_000


def seconds_to_us(at: float) -> int:
    """Simulated seconds to integer microseconds (rounded to nearest)."""
    return int(round(at * 1_000_000))


def _us_since_day_start(moment: datetime) -> int:
    delta = moment - DAY_START
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


#: The first and the last version RFC 3339 can write (0001-01-01T00:00:00Z and
#: 9999-12-31T23:59:59.999999Z), as microseconds since :data:`DAY_START`.
MIN_VERSION_US = _us_since_day_start(datetime.min.replace(tzinfo=UTC))
MAX_VERSION_US = _us_since_day_start(datetime.max.replace(tzinfo=UTC))


def in_version_range(version_us: int) -> bool:
    """Whether ``version_us`` names an instant an ``updated_at`` string can write."""
    return MIN_VERSION_US <= version_us <= MAX_VERSION_US


_DAY_US = 86_400_000_000
_START_OF_DAY_US = (DAY_START.hour * 3600 + DAY_START.minute * 60 + DAY_START.second) * 1_000_000


@lru_cache(maxsize=64)
def _date_text(day_offset: int) -> str:
    return (DAY_START.date() + timedelta(days=day_offset)).isoformat()


def format_version(version_us: int) -> str:
    """Integer microseconds since day start -> ``2026-01-05T09:00:01.000000Z``.

    Integer arithmetic instead of ``strftime``: this runs on every save.
    """
    day_offset, of_day = divmod(version_us + _START_OF_DAY_US, _DAY_US)
    seconds, micros = divmod(of_day, 1_000_000)
    hours, seconds = divmod(seconds, 3600)
    minutes, seconds = divmod(seconds, 60)
    return f"{_date_text(day_offset)}T{hours:02d}:{minutes:02d}:{seconds:02d}.{micros:06d}Z"


# RFC 3339 section 5.6 date-time, ASCII digits only; "T" and "Z" may be lower case.
_RFC3339 = re.compile(
    r"(\d{4}-\d\d-\d\d)[Tt](\d\d:\d\d:\d\d)(?:\.(\d+))?([Zz]|[+-]\d\d:\d\d)", re.ASCII
)


def _parse_rfc3339(text: str) -> tuple[datetime | None, str] | None:
    """``(moment to the microsecond, fraction digits beyond the sixth)`` or None.

    The moment is None for a leap second: RFC 3339 admits second 60 where the
    time is 23:59:60 in UTC (no table of the actual leap seconds is kept).
    """
    match = _RFC3339.fullmatch(text)
    if match is None:
        return None
    date, clock, fraction, offset = match.groups()
    fraction = fraction or ""
    offset = "+00:00" if offset in ("Z", "z") else offset
    leap = clock.endswith(":60")
    if leap:
        clock = clock[:-2] + "59"
    try:
        moment = datetime.fromisoformat(f"{date}T{clock}.{fraction[:6]:0<6}{offset}")
        utc = moment.astimezone(UTC) if leap else moment
    except (ValueError, OverflowError):  # no such day, hour 24, offset out of range ...
        return None
    if leap:
        if (utc.hour, utc.minute) != (23, 59):
            return None
        return None, fraction[6:]
    return moment, fraction[6:]


def version_precision_us(text: str) -> int:
    """The step, in microseconds, of the time ``text`` writes: 1 for the six fraction digits
    every ``updated_at`` has, 1000 for a time cut to milliseconds (as a JavaScript ``Date``
    writes it), 1,000,000 for whole seconds. 1 for text that is not RFC 3339."""
    match = _RFC3339.fullmatch(text)
    if match is None:
        return 1
    digits = len(match.group(3) or "")
    return 10 ** (6 - digits) if digits < 6 else 1


def is_rfc3339(text: object) -> bool:
    """True if ``text`` is an RFC 3339 date-time (the ``format: date-time`` check)."""
    return isinstance(text, str) and _parse_rfc3339(text) is not None


def parse_version(text: str) -> int | None:
    """An RFC 3339 date-time -> microseconds since day start, or None.

    None means no version can be that instant: the text is not RFC 3339, it
    names a time finer than a microsecond, or a leap second. Any offset and either case of
    ``T``/``Z`` are accepted, so ``...Z``, ``...z`` and ``...+00:00`` name the
    same version.
    """
    parsed = _parse_rfc3339(text)
    if parsed is None:
        return None
    moment, finer = parsed
    if moment is None or finer.strip("0"):
        return None
    return _us_since_day_start(moment)
