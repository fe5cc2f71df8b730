"""CPU time of the commands that must answer at once: ``kbsim --help``, ``--version``, ``tools``
and ``experiments`` (issue 39: under 0.3 s of CPU, no pandas, pyarrow, SimPy or scipy).

Each command runs in a fresh interpreter, as a user types it, ``--repeats`` times; the figure is
the median of the process's user + system CPU time (``resource.getrusage(RUSAGE_CHILDREN)``), the
interpreter's own start-up (``python -c pass``) shown beside it.

    python benchmarks/bench_cli_start.py [--repeats 7]
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys

COMMANDS = (["--help"], ["--version"], ["tools"], ["experiments"])


def cpu_s(argv: list[str]) -> float:
    """User + system CPU seconds of one fresh process running ``argv``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    python = [sys.executable, "-c", "pass"]
    base = statistics.median(cpu_s(python) for _ in range(args.repeats))
    print("| command | CPU time (median) | of which the interpreter's start-up |")
    print("| --- | --- | --- |")
    for command in COMMANDS:
        median = statistics.median(cpu_s([sys.executable, "-m", "kbsim", *command]) for _ in range(args.repeats))
        print(f"| `kbsim {' '.join(command)}` | {median:.3f} s | {base:.3f} s |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
