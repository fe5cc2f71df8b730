"""What the cached starting index costs at scale, frozen (as kbsim runs) and kept as dicts.

Usage: python benchmarks/bench_template_memory.py [--scale 250]

A day copies its seed's starting knowledge base, which stays cached (for the seed's next
day) beside the copy. kbsim keeps a large cached index frozen (``BM25Index.fill``: postings as
flat arrays, 8 bytes a posting) and builds each day's copy from the arrays. This runs the
scaled reference day twice, each in a fresh process: as kbsim runs it, and with freezing
turned off (the cached index kept as dicts, as before freezing existed). Wall time and peak
RSS of each process. Writes the "Starting index beside the day's copy" section of
benchmarks/RESULTS.md.
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


def one_day(scale: int, frozen: bool) -> dict:
    """One scaled day (seed 1) in this process, after a warm-up day; wall time and peak RSS."""
    import kbsim.store.bm25 as bm25
    from kbsim.params import DayParams
    from kbsim.sim import day as day_module

    if not frozen:
        bm25._FREEZE_POSTINGS = 2**62  # no index is ever large enough to freeze
    day_module.run_day(DayParams(), 0)
    started = time.perf_counter()
    day_module.run_day(scaled(scale), 1)
    return {
        "seconds": time.perf_counter() - started,
        "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=int, default=250)
    parser.add_argument("--one", choices=("frozen", "dicts"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.scale < 1:
        parser.error("--scale: expected at least 1")
    if args.one:
        print(json.dumps(one_day(args.scale, args.one == "frozen")))
        return
    rows = {}
    for mode in ("frozen", "dicts"):
        done = subprocess.run(
            [sys.executable, __file__, "--scale", str(args.scale), "--one", mode],
            capture_output=True, text=True, check=True,
        )
        rows[mode] = json.loads(done.stdout.strip().splitlines()[-1])
    frozen, dicts = rows["frozen"], rows["dicts"]
    body = f"""{machine_line()} Command: `python benchmarks/bench_template_memory.py --scale {args.scale}`.

The reference day at {args.scale}x ({400 * args.scale:,} articles), seed 1, one fresh process each;
the time includes building the seed's starting knowledge base.

| cached starting index | wall time | peak RSS |
| --- | ---: | ---: |
| frozen: flat arrays, the day's copy built from them (as kbsim runs) | {frozen['seconds']:.1f} s | \
{frozen['peak_rss_mib']:.0f} MiB |
| kept as dicts beside the day's copy (freezing off) | {dicts['seconds']:.1f} s | {dicts['peak_rss_mib']:.0f} MiB |

Freezing saves {dicts['peak_rss_mib'] - frozen['peak_rss_mib']:.0f} MiB of peak RSS here.
"""
    write_section(SECTION, body)
    print(body)


if __name__ == "__main__":
    main()
