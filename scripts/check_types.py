"""mypy over kbsim/, held to the errors still known: ``make lint`` and ``tests/test_types.py``.

Usage: python scripts/check_types.py

Runs mypy with pyproject.toml's ``[tool.mypy]`` settings (the package, the pydantic plugin,
the untyped libraries' values as Any) and counts its errors by file and error code. An
error beyond :data:`KNOWN` fails, naming it; a count in :data:`KNOWN` that has fallen fails
too, asking for the entry to be lowered or deleted, so the list only ever shrinks (as the
architecture test's known edges do). Exit 0 when they match, 1 otherwise.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: The errors mypy still finds, (file, error code) -> how many: each one a type that a
#: change should fix, not a rule. Empty is the goal.
KNOWN: dict[tuple[str, str], int] = {
    ("kbsim/cli/advise_cmd.py", "arg-type"): 2,
    ("kbsim/report/check_advice.py", "union-attr"): 1,
    ("kbsim/report/figures.py", "arg-type"): 1,
    ("kbsim/report/plots.py", "arg-type"): 2,
    ("kbsim/report/plots.py", "attr-defined"): 1,
    ("kbsim/report/plots.py", "union-attr"): 2,
    ("kbsim/serve/server.py", "operator"): 1,
    ("kbsim/serve/server.py", "union-attr"): 2,
}

_ERROR = re.compile(r"^(?P<file>[^:\n]+):\d+: error: (?P<message>.*?)  \[(?P<code>[a-z0-9-]+)\]$", re.M)


def mypy_output(root: Path = ROOT) -> str:
    """mypy's report on the package (pyproject.toml's settings), run from ``root``."""
    done = subprocess.run([sys.executable, "-m", "mypy", "--no-error-summary"], cwd=root, capture_output=True,
                          text=True, timeout=1200)
    if done.returncode not in (0, 1) or (done.returncode == 1 and not _ERROR.search(done.stdout)):
        raise RuntimeError(f"mypy failed to run (exit {done.returncode}):\n{done.stdout}{done.stderr}")
    return done.stdout


def count_errors(output: str) -> Counter[tuple[str, str]]:
    """mypy's errors in ``output``, counted by file and error code."""
    return Counter((match["file"], match["code"]) for match in _ERROR.finditer(output))


def compare(found: Counter[tuple[str, str]], known: dict[tuple[str, str], int], output: str = "") -> list[str]:
    """What differs between the errors found and the known ones, one line each (empty: they match)."""
    problems = []
    for (file, code), count in sorted(found.items()):
        allowed = known.get((file, code), 0)
        if count > allowed:
            lines = [line for line in output.splitlines() if line.startswith(f"{file}:") and line.endswith(f"[{code}]")]
            problems.append(f"{file} [{code}]: {count} errors, {allowed} known:\n    " + "\n    ".join(lines))
    for (file, code), allowed in sorted(known.items()):
        count = found.get((file, code), 0)
        if count < allowed:
            what = "delete its entry" if count == 0 else f"lower its count to {count}"
            problems.append(f"{file} [{code}]: {count} errors, {allowed} known: {what} in scripts/check_types.py")
    return problems


def main() -> int:
    """Run mypy, print what differs from :data:`KNOWN`; 0 when nothing does."""
    output = mypy_output()
    found = count_errors(output)
    problems = compare(found, KNOWN, output)
    for problem in problems:
        print(problem, file=sys.stderr)
    if not problems:
        print(f"mypy: {sum(found.values())} errors, all known (scripts/check_types.py's KNOWN)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
