"""Where a scaled day's memory goes: resident memory at each stage of one day, and where it peaks.

Usage: python benchmarks/bench_day_memory.py [--scale 250]

Writes the "Where the 250x day's memory goes" section of benchmarks/RESULTS.md (the scale in the
title is ``--scale``'s). One fresh process: a warm-up day, then the scaled day of seed 1 (its
starting knowledge base built first, as a fresh seed's day builds it). A thread samples the
process's resident set (``/proc/self/statm``) every 20 ms with the kbsim functions on the main
thread's stack, so the peak is placed in the code that made it; the stages are marked where the
day calls them (the build, the day's copy of the starting knowledge base, the tables).

Why it exists: the 1,000,000-article day's peak RSS has a target (at most 4 GiB, issue 41; 5 GiB in issue 28).
That day takes about ten minutes and 8 GB; this breaks a day ten times smaller into the same
stages, which grow with the articles, saves and questions alike.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_day import scaled  # noqa: E402
from results_file import machine_line, write_section  # noqa: E402

import kbsim.sim.day  # noqa: E402
import kbsim.sim.world  # noqa: E402
from kbsim.params import DayParams  # noqa: E402
from kbsim.sim import run_day  # noqa: E402

_PAGE = os.sysconf("SC_PAGE_SIZE")
#: Seconds between two samples of the resident set.
_EVERY_S = 0.02


def resident_mib() -> float:
    """This process's resident set now, in MiB."""
    with open("/proc/self/statm", encoding="ascii") as statm:
        return int(statm.read().split()[1]) * _PAGE / 2**20


class Sampler:
    """Samples the resident set and the main thread's innermost kbsim functions, in a thread."""

    def __init__(self) -> None:
        self.main = threading.get_ident()
        self.samples: list[tuple[float, str]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _where(self) -> str:
        frame = sys._current_frames().get(self.main)
        names = []
        while frame is not None and len(names) < 3:
            code = frame.f_code
            if f"{os.sep}kbsim{os.sep}" in code.co_filename:
                names.append(f"{Path(code.co_filename).stem}.{code.co_name}")
            frame = frame.f_back
        return " < ".join(names) or "(outside kbsim)"

    def _run(self) -> None:
        while not self._stop.is_set():
            self.samples.append((resident_mib(), self._where()))
            time.sleep(_EVERY_S)

    def __enter__(self) -> Sampler:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


def marked(owner, name: str, marks: dict[str, float], before: str | None, after: str | None):
    """Wrap ``owner.name`` to record the resident set before and after each call (the last call's)."""
    fn = getattr(owner, name)

    def wrapper(*args, **kwargs):
        if before:
            marks[before] = resident_mib()
        result = fn(*args, **kwargs)
        if after:
            marks[after] = resident_mib()
        return result

    setattr(owner, name, wrapper)
    return fn


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=int, default=250)
    args = parser.parse_args()
    if args.scale < 1:
        parser.error("--scale: expected at least 1")
    run_day(DayParams(), 0)  # imports, validators and pandas paid outside the day
    params = scaled(args.scale)
    marks: dict[str, float] = {}
    # kbsim.sim.day calls day_store and tabulate by the names it imported
    originals = [
        (kbsim.sim.day, "day_store", marked(kbsim.sim.day, "day_store", marks, None, "copied")),
        (kbsim.sim.day, "tabulate", marked(kbsim.sim.day, "tabulate", marks, "run", "tables")),
    ]
    try:
        with Sampler() as sampler:
            marks["start"] = resident_mib()
            cpu = time.process_time()
            kbsim.sim.world.starting_knowledge_base(params.corpus, 1)
            marks["built"] = resident_mib()
            build_cpu = time.process_time() - cpu
            run_day(params, 1)
            day_cpu = time.process_time() - cpu - build_cpu
    finally:
        for owner, name, fn in originals:
            setattr(owner, name, fn)
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    sampled_peak, peak_where = max(sampler.samples, key=lambda sample: sample[0])
    highest: dict[str, float] = {}
    for rss, where in sampler.samples:
        highest[where] = max(highest.get(where, 0.0), rss)
    top = sorted(highest.items(), key=lambda item: -item[1])[:6]
    stages = [
        ("the process before the build (Python, numpy, pandas, kbsim, a warm-up day)", marks["start"]),
        ("the starting knowledge base built (the template, cached for the seed's days)", marks["built"]),
        ("the day's copy of it made", marks["copied"]),
        ("the day run (saves, questions, checks), its store then let go: the tables need only the log", marks["run"]),
        ("the day's tables made", marks["tables"]),
    ]
    rows = ["| stage | RSS after it | added by it |", "| --- | ---: | ---: |"]
    previous = None
    for label, rss in stages:
        added = "" if previous is None else f"{rss - previous:+.0f} MiB"
        rows.append(f"| {label} | {rss:.0f} MiB | {added} |")
        previous = rss
    over = peak_mib - marks["run"]
    rows.append(f"| peak (getrusage's ru_maxrss) | {peak_mib:.0f} MiB | {over:+.0f} MiB over the run's end |")
    peaks = ["| innermost kbsim functions running | highest RSS sampled there |", "| --- | ---: |"]
    peaks += [f"| `{where}` | {rss:.0f} MiB |" for where, rss in top]
    scope = ("this is that day" if args.scale == 2500 else
             f"the 1,000,000-article day (section \"1,000,000 articles\") multiplies them by {2500 / args.scale:g}")
    write_section(
        f"Where the {args.scale}x day's memory goes",
        f"""{machine_line()} Command: `python benchmarks/bench_day_memory.py --scale {args.scale}`.

The reference day at {args.scale}x ({params.corpus.articles:,} articles, {params.saves.count:,} saves,
{params.questions.count:,} questions), seed 1, one fresh process; its starting knowledge base built
first ({build_cpu:.1f} s CPU), then the day ({day_cpu:.1f} s CPU). The resident set is read at each
stage, and sampled every {_EVERY_S * 1000:.0f} ms with the kbsim functions then on the main thread's
stack ({len(sampler.samples):,} samples).

{chr(10).join(rows)}

The highest sample, {sampled_peak:.0f} MiB, was taken in `{peak_where}`. The functions under which
the process was largest:

{chr(10).join(peaks)}

Every stage grows with the articles, saves and questions ({scope}): the starting knowledge
base and the day's copy of it are both held for the whole day (the template stays cached beside
the copy, for the seed's next day).
""",
    )


if __name__ == "__main__":
    main()
