"""mypy over kbsim/, held to no error at all: ``make lint`` and ``tests/test_types.py``.

Usage: python scripts/check_types.py

Runs mypy with pyproject.toml's ``[tool.mypy]`` settings (the package, the pydantic plugin,
the untyped libraries' values as Any) and counts its errors by file and error code. Any
error fails, naming it: :data:`KNOWN` is empty and stays so (``tests/test_types.py`` holds
it), a type mypy finds wrong is fixed, not listed. Exit 0 when mypy finds none, 1 otherwise.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: Errors tolerated, (file, error code) -> how many: none. The list that held the errors
#: found when mypy was added reached zero; ``tests/test_types.py`` keeps it empty.
KNOWN: dict[tuple[str, str], int] = {}

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
        print(f"mypy: {sum(found.values())} errors")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
