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


def seconds(fn, *args) -> float:
    start = time.perf_counter()
    fn(*args)
    return time.perf_counter() - start


def scaled(scale: int) -> DayParams:
    reference = DayParams()
    return DayParams.model_validate(
        {
            "corpus": {"articles": reference.corpus.articles * scale},
            "questions": {"count": reference.questions.count * scale},
            "saves": {"count": reference.saves.count * scale},
        }
    )


def one_scale(scale: int, runs: int) -> dict:
    """Run in a fresh process so peak RSS belongs to this scale alone.

    A small warm-up day first pays the one-time costs (compiling the tool validators, first
    use of pandas) outside the timing. Each timed run is a fresh seed, so it builds its own
    starting knowledge base, at every scale alike; the medians are over ``runs`` runs.
    """
    run_day(DayParams(), 0)
    params = scaled(scale)
    per_event, per_call, seconds = [], [], []
    for seed in range(1, runs + 1):
        env = CountingEnvironment()
        start = time.perf_counter()
        tables = run_day(params, seed, env=env)
        elapsed = time.perf_counter() - start
        calls = int(tables["checks"]["calls"].sum()) + 3 * params.questions.count
        seconds.append(elapsed)
        per_event.append(elapsed / env.scheduled)
        per_call.append(elapsed / calls)
    return {
        "scale": scale,
        "runs": runs,
        "seconds": statistics.median(seconds),
        "simpy_events": env.scheduled,
        "tool_calls": calls,
        "s_per_event": statistics.median(per_event),
        "s_per_call": statistics.median(per_call),
        "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--scales", default="1,10,50,250")
    parser.add_argument(
        "--scale-runs", type=int, default=5, help="runs per scale up to 10x (one run above, each a minute)"
    )
    parser.add_argument("--one-scale", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one_scale:
        runs = args.scale_runs if args.one_scale <= 10 else 1
        print(json.dumps(one_scale(args.one_scale, runs)))
        return

    params = DayParams()
    run_day(params, 0)  # warm imports and caches outside the timing
    floor_day(params, 0)
    # Interleaved run by run, so machine noise hits all three alike. A fresh seed builds its
    # starting knowledge base; run again at once, the seed's KB is cached, as in a sweep.
    cold, warm, floor = [], [], []
    for seed in range(1000, 1000 + args.runs):
        cold.append(seconds(run_day, params, seed))
        warm.append(seconds(run_day, params, seed))
        floor.append(seconds(floor_day, params, seed))
    cold_s, warm_s, floor_s = (statistics.median(t) for t in (cold, warm, floor))
    env = CountingEnvironment()
    tables = run_day(params, 1, env=env)
    calls = int(tables["checks"]["calls"].sum()) + 3 * params.questions.count
    floor_events = floor_day(params, 1)
    command = f"python benchmarks/bench_day.py --runs {args.runs} --scales {args.scales}"
    write_section(
        "One day",
        f"""{machine_line()} Command: `{command}`.

The reference Zipf day (400 articles, 120 questions, 300 saves, 8 hourly three-way checks, no edits),
median of {args.runs} in-process runs, interleaved with a bare SimPy model that has the same arrivals
and timeouts and nothing else. A fresh seed builds its starting knowledge base (publishing 400
articles); the same seed again finds it cached, as the days of a sweep do.

| | median wall time | SimPy events scheduled | vs floor |
| --- | ---: | ---: | ---: |
| one day, fresh seed | {cold_s * 1000:.1f} ms | {env.scheduled} | {cold_s / floor_s:.0f}x |
| one day, starting KB cached | {warm_s * 1000:.1f} ms | {env.scheduled} | {warm_s / floor_s:.0f}x |
| SimPy floor | {floor_s * 1000:.2f} ms | {floor_events} | 1x |

Target: at most 3x the floor. **{"Met" if warm_s / floor_s <= 3 else "Not met"}.** The floor does no
work per event; the day (seed 1) makes {calls:,} tool calls (searches ranked by BM25, reads, polls),
each validated against the tool schema, answered with fresh JSON-ready dicts and sized in JSON
bytes, and about 300 saves that each re-index an article. 3x the floor is {3 * floor_s * 1000:.1f} ms
a day, {3 * floor_s / calls * 1e6:.1f} µs per tool call with nothing left for the saves: about what
validating one call's arguments costs.
""",
    )
    rows = []
    for scale in [int(s) for s in args.scales.split(",")]:
        out = subprocess.run(
            [sys.executable, __file__, "--one-scale", str(scale), "--scale-runs", str(args.scale_runs)],
            capture_output=True,
            text=True,
            check=True,
        )
        rows.append(json.loads(out.stdout))
    base = rows[0]
    lines = [
        "| scale | articles | runs | wall time | SimPy events | µs per event | vs 1x "
        "| tool calls | µs per tool call | vs 1x | peak RSS |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for row in rows:
        event_vs, call_vs = row["s_per_event"] / base["s_per_event"], row["s_per_call"] / base["s_per_call"]
        lines.append(
            f"| {row['scale']}x | {400 * row['scale']:,} | {row['runs']} | {row['seconds']:.2f} s "
            f"| {row['simpy_events']:,} | {row['s_per_event'] * 1e6:.0f} | {event_vs:.2f}x "
            f"| {row['tool_calls']:,} | {row['s_per_call'] * 1e6:.1f} | {call_vs:.2f}x "
            f"| {row['peak_rss_mib']:.0f} MiB |"
        )
    last = rows[-1]
    event_ratio = last["s_per_event"] / base["s_per_event"]
    call_ratio = last["s_per_call"] / base["s_per_call"]
    command = f"{command} --scale-runs {args.scale_runs}" if args.scale_runs != 5 else command
    write_section(
        "Scale",
        f"""{machine_line()} Command: `{command}`.

The reference day with articles, questions and saves all multiplied, one fresh process per scale
(peak RSS is that process's), after a small warm-up day. Each run is a fresh seed, so the time
includes building that seed's starting knowledge base, at every scale alike; times are medians
over the runs. Time is given per SimPy event, as the target is stated, and per tool call, since
tool calls are the work: the checks' calls grow a little faster than the events.

{chr(10).join(lines)}

Targets at {last['scale']}x: time per event within 2x of 1x (**{"met" if event_ratio <= 2 else "not met"}**,
{event_ratio:.2f}x; per tool call {call_ratio:.2f}x, {"also" if call_ratio <= 2 else "not"} within 2x);
peak RSS at most 2 GiB (**{"met" if last['peak_rss_mib'] <= 2048 else "not met"}**,
{last['peak_rss_mib']:.0f} MiB).
""",
    )


if __name__ == "__main__":
    main()
