"""mypy over kbsim/ (``make lint``): no error at all (scripts/check_types.py lists none).

A new error fails, naming it; the list of known errors is empty and stays so.
"""

from __future__ import annotations

import sys
import tomllib
from collections import Counter
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "scripts"))
try:
    import check_types
finally:
    sys.path.remove(str(REPO / "scripts"))

OUTPUT = """\
kbsim/a.py:3: error: Incompatible types in assignment (expression has type "int", variable has type "str")  [assignment]
kbsim/a.py:9: error: Item "None" of "int | None" has no attribute "real"  [union-attr]
kbsim/a.py:9: note: a note is not an error
kbsim/b.py:1: error: Name "x" is not defined  [name-defined]
"""


def test_errors_are_counted_by_file_and_code():
    assert check_types.count_errors(OUTPUT) == Counter(
        {("kbsim/a.py", "assignment"): 1, ("kbsim/a.py", "union-attr"): 1, ("kbsim/b.py", "name-defined"): 1}
    )


def test_a_new_error_fails_naming_it_and_a_fixed_one_asks_for_its_entry():
    found = check_types.count_errors(OUTPUT)
    known = {("kbsim/a.py", "assignment"): 1, ("kbsim/a.py", "union-attr"): 1, ("kbsim/c.py", "index"): 2}
    problems = check_types.compare(found, known, OUTPUT)
    assert len(problems) == 2
    assert problems[0].startswith("kbsim/b.py [name-defined]: 1 errors, 0 known:\n    kbsim/b.py:1: error: Name")
    assert problems[1] == "kbsim/c.py [index]: 0 errors, 2 known: delete its entry in scripts/check_types.py"
    assert check_types.compare(found, {**known, ("kbsim/b.py", "name-defined"): 1, ("kbsim/c.py", "index"): 0}) == []


def test_mypy_is_pinned_and_configured_over_the_package():
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    assert "mypy==2.4.1" in config["project"]["optional-dependencies"]["dev"]
    mypy = config["tool"]["mypy"]
    assert mypy["files"] == ["kbsim"] and "pydantic.mypy" in mypy["plugins"]
    # no blanket switch-off: every kbsim module is checked; only libraries without types are Any
    assert not mypy.get("ignore_errors") and not mypy.get("ignore_missing_imports")
    for override in config["tool"]["mypy"]["overrides"]:
        assert not override.get("ignore_errors")
        assert not any(module.startswith("kbsim") for module in override["module"])
    assert "scripts/check_types.py" in (REPO / "Makefile").read_text(encoding="utf-8")


def test_no_error_is_known():
    # the known list reached zero: a type mypy finds wrong is fixed, not listed
    assert check_types.KNOWN == {}
    assert check_types.compare(check_types.count_errors(OUTPUT), check_types.KNOWN, OUTPUT)


@pytest.mark.slow
def test_mypy_finds_no_error():
    pytest.importorskip("mypy", reason="mypy is in the dev extra (make installs it)")
    output = check_types.mypy_output()
    problems = check_types.compare(check_types.count_errors(output), check_types.KNOWN, output)
    assert not problems, "\n".join(problems)
