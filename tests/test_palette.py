"""One palette for every figure: each colour declared once, with one meaning (issue 39).

Colour once meant different things in different figures (blue was the Zipf day in one and
citations in another; green was re-read and a retry that succeeds). Every colour a figure
draws now comes from :data:`kbsim.report.plots.PALETTE` or from a check strategy's own
``colour``; these tests read the source, so a literal colour slipped into a plot fails here.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

KBSIM = Path(__file__).resolve().parents[1] / "kbsim"
PLOTS = KBSIM / "report" / "plots.py"
#: A colour written out: hex, or one of matplotlib's names or single letters as a keyword's value.
HEX = re.compile(r"#[0-9a-fA-F]{6}\b|#[0-9a-fA-F]{3}\b")
NAMED = re.compile(
    r"""\b(?:color|colour|colors|facecolor|facecolors|edgecolor|edgecolors|c)\s*=\s*["'](?!none["'])[^"']+["']"""
)


def _palette_lines() -> range:
    """The lines of plots.py holding the PALETTE literal."""
    tree = ast.parse(PLOTS.read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "PALETTE" for t in node.targets):
            return range(node.lineno, node.end_lineno + 1)
    raise AssertionError("kbsim/report/plots.py declares no PALETTE")


def test_plots_take_every_colour_from_the_palette():
    """Outside PALETTE, plots.py names no colour: no hex literal, no colour name as a keyword's
    value, no colormap (a colormap's colours mean nothing of the palette's)."""
    inside = _palette_lines()
    found = []
    for number, line in enumerate(PLOTS.read_text(encoding="utf-8").splitlines(), start=1):
        if number in inside:
            continue
        if HEX.search(line) or NAMED.search(line) or "get_cmap" in line or "cmap=" in line:
            found.append(f"plots.py:{number}: {line.strip()}")
    assert not found, "colours outside PALETTE:\n" + "\n".join(found)


def test_no_other_module_of_the_report_or_library_names_a_colour():
    """Only the palette and the strategies (each carries its own colour, STYLE.md) declare one."""
    allowed = {PLOTS, *(KBSIM / "sim" / "strategies").glob("*.py")}
    found = []
    for path in sorted(KBSIM.rglob("*.py")):
        if path in allowed:
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if HEX.search(line) or NAMED.search(line):
                found.append(f"{path.relative_to(KBSIM.parent)}:{number}: {line.strip()}")
    assert not found, "\n".join(found)


def test_every_colour_has_one_meaning():
    """The palette's colours and every built-in strategy's colour are pairwise different, so a
    colour names one thing in every figure: the Zipf day, the control, each strategy."""
    pytest.importorskip("matplotlib")
    from matplotlib.colors import to_hex

    from kbsim.report.plots import PALETTE
    from kbsim.sim.strategies import Strategy, strategy_named

    strategies = sorted(path.stem for path in (KBSIM / "sim" / "strategies").glob("*.py") if path.stem != "__init__")
    meanings: dict[str, list[str]] = {}
    for meaning, colour in PALETTE.items():
        meanings.setdefault(to_hex(colour), []).append(f"PALETTE[{meaning!r}]")
    for name in strategies:
        strategy = strategy_named(name)
        assert isinstance(strategy, Strategy)
        meanings.setdefault(to_hex(strategy.colour), []).append(f"strategy {name!r}")
    # a user's strategy without a colour of its own takes Strategy's default: not a palette colour
    default = Strategy.__dataclass_fields__["colour"].default
    meanings.setdefault(to_hex(default), []).append("Strategy's default colour")
    shared = {colour: names for colour, names in meanings.items() if len(names) > 1}
    assert not shared, shared


def test_the_palette_test_catches_a_literal_colour(tmp_path):
    """The source check above can fail: a plot line with its own colour is caught."""
    for line in ('ax.plot(x, y, color="red")', "ax.fill_between(x, a, b, color='#1f77b4')",
                 'ax.scatter(x, y, edgecolors="black")', 'cmap = plt.get_cmap("viridis")'):
        assert HEX.search(line) or NAMED.search(line) or "get_cmap" in line, line
    assert not NAMED.search('ax.scatter(x, y, facecolors="none")')
