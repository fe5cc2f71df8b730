"""Write one named section of benchmarks/RESULTS.md, keeping the others."""

from __future__ import annotations

import datetime
import os
import platform
import re
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "RESULTS.md"
HEADER = (
    "# Benchmark results\n\n"
    "Each section is rewritten by the command named in it; `make bench` runs them all but two:\n"
    "the compiled-index probe (it needs numba) and the commands on a fresh clone\n"
    "(`python benchmarks/bench_commands.py`: the whole suite and the whole study, about half an hour).\n"
    "It runs the 1,000,000-article day twice (`python benchmarks/bench_day.py --sections million` and\n"
    "`python benchmarks/bench_day_memory.py --scale 2500`: about ten minutes of CPU and 4 GiB each).\n\n"
    "The machine is shared (2 cores, other agents' work beside these runs), so wall times move with\n"
    "its load: the sections of issue 28's targets time the process's CPU (`time.process_time`) and\n"
    "compare within one run (interleaved, or in fresh processes one after the other), and say so.\n"
)


def machine_line() -> str:
    """Where and when: the machine is shared and noisy, so sections compare ratios within one run."""
    cpu = platform.processor() or platform.machine()
    return (
        f"Machine: {platform.system()} {platform.release()}, {cpu}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}. Date: {datetime.date.today().isoformat()}."
    )


def write_section(title: str, body: str) -> None:
    """Replace (or append) the ``## title`` section of RESULTS.md with ``body``."""
    text = RESULTS.read_text(encoding="utf-8") if RESULTS.exists() else HEADER
    section = f"## {title}\n\n{body.strip()}\n\n"
    pattern = re.compile(rf"^## {re.escape(title)}\n.*?(?=^## |\Z)", re.S | re.M)
    text = pattern.sub(lambda _: section, text) if pattern.search(text) else text.rstrip("\n") + "\n\n" + section
    RESULTS.write_text(text.rstrip("\n") + "\n", encoding="utf-8")
