"""Time ``kbsim fit`` on a large log, and its peak memory: issue 40's target, 10 million lines
in under 60 s and under 1 GiB.

Writes a CSV log of ``--lines`` saves (kbsim's trace format: ``time`` in seconds from the
day start, ``article``, ``kind``) over ``--days`` working days and ``--articles`` articles,
Zipf popularity, rows in random order, into a temporary folder; then runs ``kbsim fit LOG
--articles N --json`` in a fresh process and reports its wall time and peak resident memory
(``ru_maxrss`` of the child), and writes the section "kbsim fit on a large log" of
benchmarks/RESULTS.md.

    python benchmarks/bench_fit.py                      # 10,000,000 lines (about a minute)
    python benchmarks/bench_fit.py --lines 1000000      # a quicker look
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from results_file import machine_line, write_section  # noqa: E402

SECTION = "kbsim fit on a large log"


def write_log(path: Path, lines: int, days: int, articles: int, seed: int = 40) -> None:
    """A CSV log of ``lines`` saves, written a million rows at a time."""
    rng = np.random.default_rng(np.random.SeedSequence(seed))
    weights = np.arange(1, articles + 1, dtype=float) ** -1.0
    cdf = np.cumsum(weights / weights.sum())
    kinds = np.array(["content", "content_and_title", "unpublish"])
    with path.open("w", encoding="utf-8") as out:
        out.write("time,article,kind\n")
        for start in range(0, lines, 1_000_000):
            n = min(1_000_000, lines - start)
            day = rng.integers(0, days, n)
            seconds = day * 86_400 + rng.uniform(0, 10 * 3600, n)  # 09:00 to 19:00 from kbsim's day start
            article = np.minimum(np.searchsorted(cdf, rng.random(n)), articles - 1) + 1
            kind = kinds[np.searchsorted([0.9, 0.98], rng.random(n), side="right")]
            out.write("".join(f"{t:.3f},art-{a:06d},{k}\n" for t, a, k in zip(seconds, article, kind, strict=True)))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=10_000_000)
    parser.add_argument("--days", type=int, default=20)
    parser.add_argument("--articles", type=int, default=20_000)
    parser.add_argument("--no-write", action="store_true", help="print only; leave RESULTS.md alone")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="kbsim-bench-fit-") as folder:
        log = Path(folder) / "saves.csv"
        write_log(log, args.lines, args.days, args.articles)
        size_mb = log.stat().st_size / 1e6
        command = [sys.executable, "-m", "kbsim", "fit", str(log), "--articles", str(args.articles), "--json"]
        started = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True)
        wall = time.perf_counter() - started
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        peak_mib, cpu = usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime
        if done.returncode != 0:
            print(done.stderr, file=sys.stderr)
            return 1
        fit = json.loads(done.stdout)
    verdict = "met" if cpu < 60 and peak_mib < 1024 else "NOT met"
    body = (
        f"{machine_line()} Command: `python benchmarks/bench_fit.py --lines {args.lines}`.\n\n"
        f"`kbsim fit saves.csv --articles {args.articles:,} --json` on a CSV log of {args.lines:,} saves "
        f"({size_mb:,.0f} MB; kbsim's trace format, rows in random order, {args.days} days, Zipf popularity), "
        "in a fresh process; peak memory is the child's maximum resident set (`ru_maxrss`), time its CPU "
        "(user and system; the machine is shared, so the wall time moves with its load).\n\n"
        "| lines | file | CPU time | wall time | peak memory | target (60 s, 1 GiB) |\n"
        "| ---: | ---: | ---: | ---: | ---: | --- |\n"
        f"| {args.lines:,} | {size_mb:,.0f} MB | {cpu:.1f} s | {wall:.1f} s | {peak_mib:,.0f} MiB | {verdict} |\n\n"
        f"The fit read {fit['log']['saves_total']:,} saves over {fit['log']['days']} days. Before issue 40 the "
        "reader kept about 550 bytes a line: one million lines took 123 s and 555 MB, ten million ran out of "
        "a 3 GB cap after 225 s. The columnar reader then took 71.6 s CPU and 990 MiB here (2026-12-03, "
        "measured before the burst test's shuffles learnt to keep saves before their article's unpublish; "
        "that shuffle removed each chosen place from the day's free places, time that grows as the limited "
        "saves times the day's events, 10,000 x 500,000 a shuffle at ten million lines, until it drew them "
        "at once).\n\n"
        "Memory still grows with the lines: about 42 bytes a line at the peak (measured 2026-12-03: 402 MiB "
        "at one million lines, 764 MiB at ten, the same command; some 205 MiB is the interpreter and its "
        "libraries). The file's text is never held whole: it is read 16 MB of lines at a time and each run "
        "of lines is reduced to numbers before the next. What a line keeps is what the burst test's "
        "shuffles (a day's events in time order, with their articles, hours and kinds) and a replayed day "
        "need, event by event: while reading, its instant and local offset (8 + 8 bytes), article, kind and "
        "line (4 + 1 + 4); for the fit, its time and local hour (8 + 8), day and article (4 + 4), kind and "
        "line (1 + 4), 29 bytes. Per-day, per-article and per-hour sums are tables of days x articles and "
        "days x hours."
    )
    print(body)
    if not args.no_write:
        write_section(SECTION, body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
