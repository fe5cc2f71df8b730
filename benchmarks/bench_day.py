"""One simulated day against a bare SimPy floor, and the day at growing scale.

Usage: python benchmarks/bench_day.py [--runs 20] [--scales 1,10,50,250]

Writes the "One day" and "Scale" sections of benchmarks/RESULTS.md.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import simpy

sys.path.insert(0, str(Path(__file__).resolve().parent))
from results_file import machine_line, write_section  # noqa: E402

from kbsim.params import DayParams  # noqa: E402
from kbsim.sim import run_day  # noqa: E402
from kbsim.sim.day import arrival_times, streams  # noqa: E402


class CountingEnvironment(simpy.Environment):
    """A SimPy environment that counts every event it schedules."""

    def __init__(self) -> None:
        super().__init__()
        self.scheduled = 0

    def schedule(self, event, priority=simpy.core.NORMAL, delay=0):
        self.scheduled += 1
        super().schedule(event, priority, delay)


def floor_day(params: DayParams, seed: int) -> int:
    """The same arrivals and timeouts as the day, with no store, search or checks."""
    env = CountingEnvironment()
    rngs = streams(seed)
    save_times = arrival_times(rngs["editors"], params.saves.count, params.day_s, params.arrivals)
    question_times = arrival_times(rngs["askers"], params.questions.count, params.day_s, params.arrivals)
    check_times = np.arange(1, int(params.day_s // params.checks.interval_s) + 1) * params.checks.interval_s

    def actor(env, times):
        for t in times:
            yield env.timeout(t - env.now)

    for times in (save_times, question_times, check_times):
        env.process(actor(env, times))
    env.run()
    return env.scheduled


def median_seconds(fn, runs: int) -> float:
    times = []
    for i in range(runs):
        start = time.perf_counter()
        fn(i + 1)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def scaled(scale: int) -> DayParams:
    reference = DayParams()
    return DayParams.model_validate(
        {
            "corpus": {"articles": reference.corpus.articles * scale},
            "questions": {"count": reference.questions.count * scale},
            "saves": {"count": reference.saves.count * scale},
        }
    )


def one_scale(scale: int) -> dict:
    """Run in a fresh process so peak RSS belongs to this scale alone."""
    params = scaled(scale)
    env = CountingEnvironment()
    start = time.perf_counter()
    tables = run_day(params, 1, env=env)
    seconds = time.perf_counter() - start
    calls = int(tables["checks"]["calls"].sum()) + 3 * params.questions.count
    return {
        "scale": scale,
        "seconds": seconds,
        "simpy_events": env.scheduled,
        "tool_calls": calls,
        "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--scales", default="1,10,50,250")
    parser.add_argument("--one-scale", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one_scale:
        print(json.dumps(one_scale(args.one_scale)))
        return

    params = DayParams()
    run_day(params, 0)  # warm imports and caches outside the timing
    floor_day(params, 0)
    # Interleave the two so machine noise hits both alike.
    day_s = median_seconds(lambda seed: run_day(params, 1000 + seed), args.runs)
    floor_s = median_seconds(lambda seed: floor_day(params, 1000 + seed), args.runs)
    env = CountingEnvironment()
    run_day(params, 1, env=env)
    floor_events = floor_day(params, 1)
    command = f"python benchmarks/bench_day.py --runs {args.runs} --scales {args.scales}"
    ratio = day_s / floor_s
    write_section(
        "One day",
        f"""{machine_line()} Command: `{command}`.

The reference Zipf day (400 articles, 120 questions, 300 saves, 8 hourly three-way checks, no edits),
median of {args.runs} in-process runs (each a fresh seed, so the per-seed starting KB cache is cold),
against a bare SimPy model with the same arrivals and timeouts and nothing else.

| | median wall time | SimPy events scheduled |
| --- | ---: | ---: |
| one day | {day_s * 1000:.1f} ms | {env.scheduled} |
| SimPy floor | {floor_s * 1000:.2f} ms | {floor_events} |
| ratio | {ratio:.0f}x | |

Target: at most 3x the floor. **{"Met" if ratio <= 3 else "Not met"}.** The floor does no work per
event; the day makes about 2,000 tool calls (search with BM25, reads, polls), each validated against
the tool schema and sized in JSON bytes, so the floor is a lower bound no real day can approach.
""",
    )
    rows = []
    for scale in [int(s) for s in args.scales.split(",")]:
        out = subprocess.run(
            [sys.executable, __file__, "--one-scale", str(scale)], capture_output=True, text=True, check=True
        )
        rows.append(json.loads(out.stdout))
    base = rows[0]["seconds"] / rows[0]["tool_calls"]
    lines = [
        "| scale | articles | wall time | SimPy events | tool calls | µs per tool call | vs 1x | peak RSS |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for row in rows:
        per_call = row["seconds"] / row["tool_calls"]
        lines.append(
            f"| {row['scale']}x | {400 * row['scale']:,} | {row['seconds']:.2f} s | {row['simpy_events']:,} | "
            f"{row['tool_calls']:,} | {per_call * 1e6:.1f} | {per_call / base:.2f}x | {row['peak_rss_mib']:.0f} MiB |"
        )
    last = rows[-1]
    ratio_last = (last["seconds"] / last["tool_calls"]) / base
    write_section(
        "Scale",
        f"""{machine_line()} Command: `{command}`.

The reference day with articles, questions and saves all multiplied, one fresh process per scale
(peak RSS is that process's). Work per event is dominated by tool calls, so time is reported per tool
call as well as in SimPy events.

{chr(10).join(lines)}

Targets at {last['scale']}x: time per event within 2x of 1x (**{"met" if ratio_last <= 2 else "not met"}**,
{ratio_last:.2f}x); peak RSS at most 2 GiB (**{"met" if last['peak_rss_mib'] <= 2048 else "not met"}**,
{last['peak_rss_mib']:.0f} MiB).
""",
    )


if __name__ == "__main__":
    main()
