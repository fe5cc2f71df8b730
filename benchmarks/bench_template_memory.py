"""A scaled day's time and memory on the store's arena index, and on the plain index it ranks as.

Usage: python benchmarks/bench_template_memory.py [--scale 250]

A day copies its seed's starting knowledge base, which stays cached (for the seed's next day)
beside the copy, so its index is held twice. This runs the scaled reference day twice, each in
a fresh process: as kbsim runs it (``ArenaIndex``: postings in numpy arrays), and with the
plain reference index in the store instead (``BM25Index``: dicts of postings, a large cached
one kept frozen as flat arrays and thawed into each day's copy). Wall time, CPU time and peak
RSS of each process, the time including the starting knowledge base's build. Writes the
"Starting index beside the day's copy" section of benchmarks/RESULTS.md.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_day import scaled  # noqa: E402
from results_file import machine_line, write_section  # noqa: E402

SECTION = "Starting index beside the day's copy"


def one_day(scale: int, index: str) -> dict:
    """One scaled day (seed 1) in this process, after a warm-up day; wall and CPU time, peak RSS."""
    from kbsim.params import DayParams
    from kbsim.sim import day as day_module
    from kbsim.store import MemoryStore
    from kbsim.store.bm25 import BM25Index

    if index == "plain":  # every store made from here on holds the plain index
        MemoryStore.__init__.__kwdefaults__["index"] = BM25Index
    day_module.run_day(DayParams(), 0)
    started, cpu = time.perf_counter(), time.process_time()
    day_module.run_day(scaled(scale), 1)
    return {
        "seconds": time.perf_counter() - started,
        "cpu_seconds": time.process_time() - cpu,
        "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=int, default=250)
    parser.add_argument("--one", choices=("arena", "plain"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.scale < 1:
        parser.error("--scale: expected at least 1")
    if args.one:
        print(json.dumps(one_day(args.scale, args.one)))
        return
    rows = {}
    for index in ("arena", "plain"):
        done = subprocess.run(
            [sys.executable, __file__, "--scale", str(args.scale), "--one", index],
            capture_output=True, text=True, check=True,
        )
        rows[index] = json.loads(done.stdout.strip().splitlines()[-1])
    arena, plain = rows["arena"], rows["plain"]
    body = f"""{machine_line()} Command: `python benchmarks/bench_template_memory.py --scale {args.scale}`.

The reference day at {args.scale}x ({400 * args.scale:,} articles), seed 1, one fresh process each;
the time includes building the seed's starting knowledge base, which stays cached beside the
day's copy of it. Both indexes rank alike (the tests hold the arena to the plain one), so both
days give the same tables.

| the store's search index | wall time | CPU time | peak RSS |
| --- | ---: | ---: | ---: |
| arena: postings in numpy arrays (as kbsim runs) | {arena['seconds']:.1f} s | {arena['cpu_seconds']:.1f} s | \
{arena['peak_rss_mib']:.0f} MiB |
| plain: dicts of postings (`BM25Index`, the cached one frozen) | {plain['seconds']:.1f} s | \
{plain['cpu_seconds']:.1f} s | {plain['peak_rss_mib']:.0f} MiB |
"""
    write_section(SECTION, body)
    print(body)


if __name__ == "__main__":
    main()
