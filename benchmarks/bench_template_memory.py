"""What the cached starting index costs at scale: the figure behind the next memory step.

Usage: python benchmarks/bench_template_memory.py [--scale 250]

A day copies its seed's starting knowledge base, which stays cached (for the seed's next
day) beside the copy, so both hold the search index's postings. This runs the scaled
reference day twice, each in a fresh process: as it is, and with the cached starting
index's postings dropped right after the copy (what a compact read-only starting index
would nearly save; the cache is unusable afterwards, so this is a measurement, not a
mode). Peak RSS of each process. Writes the "Starting index beside the day's copy"
section of benchmarks/RESULTS.md.
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


def one_day(scale: int, drop_cached_postings: bool) -> dict:
    """One scaled day (seed 1) in this process, after a warm-up day; wall time and peak RSS."""
    from kbsim.params import DayParams
    from kbsim.sim import day as day_module

    day_module.run_day(DayParams(), 0)
    copy_store = day_module.day_store

    def day_store(starting, params, store=None):
        twin = copy_store(starting, params, store)
        if drop_cached_postings:
            for kb in starting.template._kbs.values():
                kb.index._postings = {}
        return twin

    day_module.day_store = day_store
    started = time.perf_counter()
    day_module.run_day(scaled(scale), 1)
    return {
        "seconds": time.perf_counter() - started,
        "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=int, default=250)
    parser.add_argument("--one", choices=("kept", "dropped"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.scale < 1:
        parser.error("--scale: expected at least 1")
    if args.one:
        print(json.dumps(one_day(args.scale, args.one == "dropped")))
        return
    rows = {}
    for mode in ("kept", "dropped"):
        done = subprocess.run(
            [sys.executable, __file__, "--scale", str(args.scale), "--one", mode],
            capture_output=True, text=True, check=True,
        )
        rows[mode] = json.loads(done.stdout.strip().splitlines()[-1])
    kept, dropped = rows["kept"], rows["dropped"]
    body = f"""{machine_line()} Command: `python benchmarks/bench_template_memory.py --scale {args.scale}`.

The reference day at {args.scale}x ({400 * args.scale:,} articles), seed 1, one fresh process each.

| cached starting index | wall time | peak RSS |
| --- | ---: | ---: |
| kept beside the day's copy (as kbsim runs) | {kept['seconds']:.1f} s | {kept['peak_rss_mib']:.0f} MiB |
| its postings dropped after the copy | {dropped['seconds']:.1f} s | {dropped['peak_rss_mib']:.0f} MiB |

The difference, {kept['peak_rss_mib'] - dropped['peak_rss_mib']:.0f} MiB, is what the cached index's
postings cost; a compact read-only starting index (6 to 8 bytes a posting) would keep most of it.
"""
    write_section(SECTION, body)
    print(body)


if __name__ == "__main__":
    main()
