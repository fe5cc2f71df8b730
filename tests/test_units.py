"""Durations and byte sizes: kbsim.units' one parser and one formatter each.

Each style reproduces, string for string, the formatter it replaced (copied below
as it was), so pages, README blocks, figures and CLI output stay byte-identical.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from kbsim.units import BYTE_STYLES, DURATION_STYLES, format_bytes, format_duration, parse_bytes, parse_duration

# -- the formatters as they were before kbsim.units -------------------------------------------


def advise_format_duration(seconds):  # kbsim.model.advise
    if seconds is None or (isinstance(seconds, float) and math.isnan(seconds)):
        return "n/a"
    if math.isinf(seconds):
        return "unlimited"
    for unit, size, below in (("s", 1.0, 59.95), ("min", 60.0, 3597.0), ("h", 3600.0, 2 * 86400.0)):
        if seconds < below:
            return f"{seconds / size:.3g} {unit}"
    return f"{seconds / 86400:.3g} days"


def tables_format_duration(seconds):  # kbsim.report.text_tables
    seconds = float(seconds)
    if seconds < 60:
        return f"{seconds:.3g} s"
    if seconds < 3600:
        return f"{seconds / 60:.3g} min"
    return f"{seconds / 3600:.3g} h"


def plots_duration(seconds):  # kbsim.report.plots
    if seconds < 60:
        return f"{seconds:g} s"
    if seconds < 3600:
        return f"{seconds / 60:g} min"
    return f"{seconds / 3600:g} h"


def limits_format_seconds(s):  # kbsim.runner.limits
    if s < 120:
        return f"{s:.2g} s" if s < 10 else f"{s:.0f} s"
    if s < 7200:
        return f"{s / 60:.0f} min"
    if s < 2 * 86400:
        return f"{s / 3600:.3g} h"
    return f"{s / 86400:.3g} days"


def advise_format_bytes(value):  # kbsim.model.advise
    if math.isnan(value):
        return "n/a"
    for unit, size in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if value >= size:
            return f"{value / size:.3g} {unit}"
    return f"{value:.0f} B"


def limits_format_bytes(n):  # kbsim.runner.limits
    for unit in ("B", "kB", "MB", "GB", "TB", "PB"):
        if abs(n) < 1000 or unit == "PB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.3g} {unit}"
        n /= 1000
    raise AssertionError("unreachable")


def plots_bytes_label(value):  # kbsim.report.plots
    if value >= 1e6:
        return f"{value / 1e6:g} MB"
    if value >= 1e3:
        return f"{value / 1e3:g} kB"
    return f"{value:g} B"


def tables_bytes(value):  # kbsim.report.text_tables.format_estimate's value
    return f"{value / 1000:.1f} kB"


def _values(low: float, high: float) -> list[float]:
    """Round values, the unit boundaries and both sides of them, and seeded random ones."""
    rng = np.random.default_rng(23)
    boundaries = [1, 10, 59.95, 60, 120, 1000, 3597, 3600, 7200, 86400, 172800, 1e6, 1e9, 1e12, 1e15]
    near = [b * f for b in boundaries for f in (1 - 1e-9, 1, 1 + 1e-9, 0.9995, 1.0005)]
    spread = list(10 ** rng.uniform(math.log10(low), math.log10(high), 4000))
    rounded = [round(v, 1) for v in spread[:1000]] + [float(round(v)) for v in spread[1000:2000]]
    return [0.0, 0.5, 5, 45, 90, 600, 900, 5400, 9000, 43200, *near, *spread, *rounded]


FORMER_DURATIONS = [
    ("default", advise_format_duration),
    ("page", tables_format_duration),
    ("tick", plots_duration),
    ("estimate", limits_format_seconds),
]


@pytest.mark.parametrize("style, former", FORMER_DURATIONS, ids=[s for s, _ in FORMER_DURATIONS])
def test_each_duration_style_writes_what_its_former_formatter_wrote(style, former):
    values = [*_values(1e-3, 1e7), float("inf"), float("nan"), np.float64(1234.5), np.int64(600), 60, 3600]
    for value in values:
        assert format_duration(value, style) == former(value), (style, value)


FORMER_SIZES = [
    ("default", advise_format_bytes),
    ("estimate", limits_format_bytes),
    ("tick", plots_bytes_label),
    ("page", tables_bytes),
]


@pytest.mark.parametrize("style, former", FORMER_SIZES, ids=[s for s, _ in FORMER_SIZES])
def test_each_size_style_writes_what_its_former_formatter_wrote(style, former):
    values = [*_values(1e-1, 1e17), np.float64(12345.0), np.int64(2_000_000), 64e9, 5e9, 2e9]
    if style != "page":
        values.append(float("inf"))
    if style == "default":
        values.append(float("nan"))
    for value in values:
        assert format_bytes(value, style) == former(value), (style, value)


def test_the_default_styles_are_kbsim_advises():
    assert [format_duration(s) for s in (45, 59.97, 888, 5400, 216000, math.inf, math.nan)] == [
        "45 s", "0.999 min", "14.8 min", "1.5 h", "2.5 days", "unlimited", "n/a",
    ]  # fmt: skip
    assert [format_bytes(b) for b in (512, 12345, 2.5e6, 1.5e9, math.nan)] == [
        "512 B", "12.3 kB", "2.5 MB", "1.5 GB", "n/a",
    ]  # fmt: skip
    assert format_duration(90, "estimate") == "90 s" and format_bytes(64e9, "estimate") == "64 GB"


def test_an_unknown_style_is_refused_naming_the_styles():
    with pytest.raises(ValueError, match="duration style 'iso': expected one of default, page, tick, estimate"):
        format_duration(60, "iso")
    with pytest.raises(ValueError, match="size style 'KiB'"):
        format_bytes(60, "KiB")
    assert set(DURATION_STYLES) == set(BYTE_STYLES) == {"default", "page", "tick", "estimate"}


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("15min", 900), ("90s", 90), ("1.5h", 5400), ("1h30min", 5400), ("2 h", 7200), ("45", 45), (".5d", 43200),
     ("1 day 2 hours", 93600), ("2.5 days", 216000), ("14.8 min", 888)],
)  # fmt: skip
def test_durations_parse_with_units(text, seconds):
    assert parse_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize(
    ("text", "problem"),
    [("", "empty"), ("soon", "expected a duration"), ("15fortnights", "unknown unit 'fortnights'"),
     ("-5min", "a positive duration"), ("0s", "positive"), ("15min later", "expected a duration"), ("nan", "positive")],
)  # fmt: skip
def test_bad_durations_say_what_was_expected(text, problem):
    with pytest.raises(ValueError, match=problem):
        parse_duration(text)


@pytest.mark.parametrize(
    ("text", "size"),
    [("512 B", 512), ("300kB", 3e5), ("1.5 GB", 1.5e9), ("1.5gb", 1.5e9), ("2e9", 2e9), ("12.3 MB", 12.3e6),
     ("1e+03 kB", 1e6), ("0", 0), ("4 TB", 4e12), ("1 PB", 1e15)],
)  # fmt: skip
def test_sizes_parse_with_decimal_units(text, size):
    assert parse_bytes(text) == pytest.approx(size)


@pytest.mark.parametrize(
    ("text", "problem"),
    [("", "expected a size"), ("lots", "expected a size"), ("-5 kB", "expected a size"),
     ("5 KiB", "unknown unit 'kib'"), ("5 kB 3 B", "expected a size"), ("1e999 B", "finite")],
)  # fmt: skip
def test_bad_sizes_say_what_was_expected(text, problem):
    with pytest.raises(ValueError, match=problem):
        parse_bytes(text)


def test_what_is_written_reads_back_to_its_digits():
    """Round trips: parse(format(x)) is x to the digits the style writes (3 significant
    digits, whole seconds and minutes in estimates, 6 digits in ticks)."""
    for seconds in [v for v in _values(0.01, 1e7) if v > 0]:
        for style, rel, abs_s in (("default", 5e-3, 0), ("page", 5e-3, 0), ("estimate", 5e-2, 30), ("tick", 5e-6, 0)):
            text = format_duration(seconds, style)
            if "e" in text.split()[0]:
                continue  # 1e+03 days: an exponent is written, and the CLI's parser does not read one
            assert parse_duration(text) == pytest.approx(seconds, rel=rel, abs=abs_s), (seconds, style, text)
    for size in _values(1.0, 1e17):
        for style, rel in (("default", 5e-3), ("estimate", 5e-3), ("tick", 5e-6)):
            text = format_bytes(size, style)
            assert parse_bytes(text) == pytest.approx(size, rel=rel, abs=0.5), (size, style, text)
        assert parse_bytes(format_bytes(size, "page")) == pytest.approx(size, abs=50.0)
    assert parse_duration(format_duration(5400)) == 5400 and parse_bytes(format_bytes(1.5e9)) == 1.5e9
