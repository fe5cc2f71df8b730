"""Time the README's commands on a fresh clone: what a new user waits for on this machine.

Clones this repository's committed HEAD into a temporary folder (nothing installed, no
results, no venv), then runs, in that clone and in this order, ``make install``,
``make test-fast``, ``make test`` (as CI runs it: on a clone with no results), ``make
reproduce`` and ``make docs`` (or those named by ``--only``), each timed in wall-clock
seconds, and writes the section "Commands on a fresh clone" of benchmarks/RESULTS.md. ``make
install`` downloads from PyPI through pip's cache, so a first install on a new machine takes
longer.

``make bench`` runs ``--only install,reproduce`` (issue 41's target is ``make reproduce`` on
a fresh clone); the suite's targets are left to a run by hand: they take as long again, and
CI times the suite on every submission.

    python benchmarks/bench_commands.py                       # all five, about 30 minutes
    python benchmarks/bench_commands.py --only install,docs   # some of them
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from results_file import RESULTS, machine_line, write_section  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SECTION = "Commands on a fresh clone"
#: The commands timed, in the order a new user runs them (install first: the others reuse .venv).
COMMANDS = ("install", "test-fast", "test", "reproduce", "docs")


def duration(seconds: float) -> str:
    """``9 min 12 s`` or ``48 s``: as the README quotes it."""
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} min {rest} s" if minutes else f"{rest} s"


def _outcome(target: str, output: str, code: int) -> str:
    """What the command came to: the suite's counts for the tests, else its exit status."""
    if code != 0:
        return f"failed (exit {code})"
    if target.startswith("test"):
        summary = re.findall(r"^=*\s*(\d[\d,]* passed.*?) in [\d.]+s", output, re.M)
        if summary:
            return summary[-1].replace(" =", "").strip()
    return "exit 0"


def _rows_written() -> dict[str, str]:
    """The rows of this section as RESULTS.md has them, by target (rows of the current
    layout only, with their commit and load columns)."""
    text = RESULTS.read_text(encoding="utf-8") if RESULTS.exists() else ""
    section = re.search(rf"^## {re.escape(SECTION)}\n(.*?)(?=^## |\Z)", text, re.S | re.M)
    body = section.group(1) if section else ""
    # a section of the first layout (one commit and one load for every row) gives its rows those
    commit = re.search(r"fresh clone of (\w+) ", body)
    load = re.search(r"Load average \(1 min\) ([\d.]+) when it started and ([\d.]+) when it ended", body)
    rows = {}
    for line in body.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        found = re.fullmatch(r"`make ([\w-]+)`", cells[0])
        if found and len(cells) == 5:
            rows[found.group(1)] = line
        elif found and len(cells) == 4 and commit and load:  # command, wall, CPU, outcome
            rows[found.group(1)] = (f"| {cells[0]} | {cells[1]} | {cells[3]} | {commit.group(1)} | "
                                    f"{load.group(1)} to {load.group(2)} |")
    return rows


def time_target(clone: Path, target: str) -> tuple[float, str]:
    """``make target`` in ``clone``: its wall seconds and its outcome."""
    started = time.perf_counter()
    run = subprocess.run(["make", target], cwd=clone, capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": ""})
    wall = time.perf_counter() - started
    (clone.parent / f"make-{target}.log").write_text(run.stdout + run.stderr, encoding="utf-8")
    return wall, _outcome(target, run.stdout + run.stderr, run.returncode)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", default=",".join(COMMANDS),
                        help=f"comma-separated targets among {', '.join(COMMANDS)} (install always runs first)")
    parser.add_argument("--keep", action="store_true", help="keep the clone and the logs (printed at the end)")
    args = parser.parse_args(argv)
    chosen = [name.strip() for name in args.only.split(",") if name.strip()]
    unknown = [name for name in chosen if name not in COMMANDS]
    if unknown:
        parser.error(f"--only: unknown target(s) {', '.join(unknown)}; expected some of {', '.join(COMMANDS)}")
    targets = [name for name in COMMANDS if name in chosen or name == "install"]
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                            check=True).stdout.strip()
    work = Path(tempfile.mkdtemp(prefix="kbsim-commands-"))
    clone = work / "kbsim"
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True)
    load_before = os.getloadavg()[0]
    rows = []
    try:
        for target in targets:
            wall, outcome = time_target(clone, target)
            rows.append((target, wall, outcome))
            print(f"make {target}: {duration(wall)}, {outcome}", flush=True)
            if target == "install" and outcome.startswith("failed"):
                break  # nothing else can run; a failing suite still lets the study be timed
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    load_after = os.getloadavg()[0]
    load = f"{load_before:.1f} to {load_after:.1f}"
    timed = {target: f"| `make {target}` | {duration(wall)} | {outcome} | {commit} | {load} |"
             for target, wall, outcome in rows}
    kept = {target: row for target, row in _rows_written().items() if target not in timed}
    lines = [
        "Command: `python benchmarks/bench_commands.py [--only TARGETS]`, each target on a fresh clone of the "
        "commit in its row (no .venv, no results; pip's cache as this machine has it); a run of some targets "
        "keeps the other rows.",
        machine_line(),
        "Wall times include whatever else the machine ran (the load average, 1 min, when the run started and "
        "ended). No CPU time is given: the worker pools' processes are not all the command's waited-for "
        "children, so the system's count of them misses most of a study's work.",
        "",
        "| command | wall time | outcome | commit | load |",
        "| --- | ---: | --- | --- | --- |",
    ]
    lines += [timed.get(target) or kept[target] for target in COMMANDS if target in timed or target in kept]
    write_section(SECTION, "\n".join(lines))
    if args.keep:
        print(f"clone and logs kept in {work}")
    return 0 if all(not row[2].startswith("failed") for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
