"""Sweep throughput: N reference-size day-runs serially, on the local pool and on a Dask cluster.

Usage: python benchmarks/bench_sweep.py [--runs 1000] [--workers 2] [--repeats 1] [--profile]

The sweep is the reference study's no-edit day (``kbsim run reference
--set edit.delay_s=null --set contrasts=[] --seeds N/2``: zipf and control, N/2 seeds
each), so no extra experiment file is needed. Each repetition measures, in a rotating
order so machine noise hits all alike:

- serial: every run's ``run_day`` one after another in a fresh process
  (ideal = serial / cores), and what a worker adds per run (metrics, Parquet);
- local: ``kbsim run ... --executor local --workers W`` as a whole process;
- dask: ``kbsim run ... --executor dask --workers W`` (a fresh LocalCluster);
- the fixed cost of each executor: the same command with 2 runs.

Writes the "Sweep throughput" section of benchmarks/RESULTS.md; with
``--profile`` also "Sweep runner overhead" (the local parent under cProfile).
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import pstats
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_study import (  # noqa: E402
    become_subreaper,
    load_average,
    run_tree,
    serial_compute,
)
from results_file import machine_line, write_section  # noqa: E402

STUDY = "experiments/reference.yaml"
#: The no-edit day; the study's contrasts compare edit delays, which this sweep pins, so they go.
OVERRIDES = ["edit.delay_s=null", "contrasts=[]"]
SETS = " ".join(f"--set {item}" for item in OVERRIDES)
SCENARIOS = 2  # reference.yaml: zipf and control
TARGET_LOCAL_VS_IDEAL = 1.5
TARGET_DASK_VS_LOCAL = 1.3


def kbsim_run(seeds: int, executor: str, workers: int, out: str, profile: str | None = None):
    """The ``kbsim run`` command line for ``seeds`` seeds of the no-edit reference day."""
    head = [sys.executable]
    if profile:
        head += ["-m", "cProfile", "-o", profile]
    sets = [arg for item in OVERRIDES for arg in ("--set", item)]
    return [
        *head, "-m", "kbsim", "run", STUDY, *sets, "--seeds", str(seeds),
        "--executor", executor, "--workers", str(workers),
        "--out", out, "--fresh", "--no-progress",
    ]  # fmt: skip


def worker_seconds(out: str) -> float:
    """Sum of the runs' own wall times as the workers recorded them (run.json ``wall_s``)."""
    markers = glob.glob(f"{out}/*/runs/*/run.json")
    return sum(json.loads(Path(p).read_text())["wall_s"] for p in markers)


def measure_executor(executor: str, seeds: int, workers: int, out: str) -> dict:
    tree = run_tree(kbsim_run(seeds, executor, workers, out))
    return {
        "wall_s": tree.wall_s,
        "runner_s": tree.runner_wall_s,
        "cpu_s": tree.cpu_s,
        "worker_s": worker_seconds(out),
    }


def measure_serial(seeds: int) -> dict:
    out = run_tree([sys.executable, __file__, "--serial-seeds", str(seeds)])
    serial = json.loads(out.stdout)
    return {
        "wall_s": sum(serial["wall_s"]),
        "cpu_s": sum(serial["cpu_s"]),
        "tables_s": sum(serial["tables_s"]),
        "runs": serial["runs"],
    }


def profile_parent(seeds: int, workers: int, out: str) -> dict[str, float]:
    """Cumulative seconds of the local sweep's parent in the runner's main steps (cProfile)."""
    prof = os.path.join(out, "parent.prof")
    tree = run_tree(kbsim_run(seeds, "local", workers, os.path.join(out, "results"), profile=prof))
    # (file, line, function) -> (calls, primitive calls, tottime, cumtime, callers)
    stats = pstats.Stats(prof).stats

    def cumtime(file_suffix: str, function: str) -> float:
        times = [
            ct for (file, _, name), (_, _, _, ct, _) in stats.items()
            if file.endswith(file_suffix) and name == function
        ]  # fmt: skip
        return max(times, default=0.0)

    return {
        "whole process": tree.wall_s,
        "run_experiment": cumtime("kbsim/runner/run.py", "run_experiment"),
        "config: load and expand": cumtime("kbsim/cli/config_args.py", "config_from_args"),
        "manifest": cumtime("kbsim/runner/run.py", "_manifest"),
        "pool start (fork server + workers)": cumtime("popen_forkserver.py", "_launch"),
        "waiting for workers": cumtime("concurrent/futures/_base.py", "as_completed"),
        "writing runs' files": cumtime("kbsim/runner/run.py", "handle"),
        "summary (pools the runs' metrics; reads back only earlier sessions' runs)": cumtime(
            "kbsim/runner/run.py", "_summarize"
        ),
        "importing scipy.special (the summary's t quantiles), inside the summary": cumtime(
            "scipy/special/__init__.py", "<module>"
        ),
    }


def ratio_line(name: str, value: float, target: float) -> str:
    verdict = "met" if value <= target else "not met"
    return f"- {name}: **{value:.2f}x**, target at most {target}x: **{verdict}**."


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000, help="day-runs per measurement (even)")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--repeats", type=int, default=1, help="repetitions (median reported)")
    parser.add_argument("--profile", action="store_true", help="also profile the local parent")
    parser.add_argument("--serial-seeds", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serial_seeds:
        print(json.dumps(serial_compute(STUDY, OVERRIDES, str(args.serial_seeds), tables=True)))
        return
    if args.runs < 2 or args.runs % SCENARIOS:
        parser.error(f"--runs: expected an even number (zipf and control), got {args.runs}")
    if args.workers < 1 or args.repeats < 1:
        parser.error("--workers and --repeats: expected at least 1")

    subreaper = become_subreaper()
    seeds = args.runs // SCENARIOS
    cores = os.cpu_count() or 1
    loads = [load_average()]
    kinds = ["serial", "local", "dask"]
    results: dict[str, list[dict]] = {kind: [] for kind in [*kinds, "local fixed", "dask fixed"]}
    with tempfile.TemporaryDirectory(prefix="kbsim-bench-sweep-") as tmp:
        for repeat in range(args.repeats):
            order = kinds[repeat % 3 :] + kinds[: repeat % 3]
            for kind in order:
                if kind == "serial":
                    results[kind].append(measure_serial(seeds))
                else:
                    out = os.path.join(tmp, kind)
                    results[kind].append(measure_executor(kind, seeds, args.workers, out))
                    fixed = measure_executor(kind, 1, args.workers, os.path.join(tmp, "fixed"))
                    results[f"{kind} fixed"].append(fixed)
                loads.append(load_average())
                print(f"repeat {repeat + 1} {kind}: {results[kind][-1]}", file=sys.stderr)
        overhead = profile_parent(seeds, args.workers, tmp) if args.profile else None

    def med(kind: str, key: str) -> float:
        return statistics.median(row[key] for row in results[kind])

    n = args.runs
    serial, tables = med("serial", "wall_s"), med("serial", "tables_s")
    ideal = serial / cores
    local, dask = med("local", "wall_s"), med("dask", "wall_s")
    local_runner, dask_runner = med("local", "runner_s"), med("dask", "runner_s")
    command = f"python benchmarks/bench_sweep.py --runs {n} --workers {args.workers}"
    command += f" --repeats {args.repeats}"
    if args.profile:
        command += " --profile"
    serial_cpu = med("serial", "cpu_s")
    rows = [
        "| | wall time | runs/s | vs ideal | CPU time (tree) | cores busy | runs' own wall (sum) |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
        f"| serial `run_day`, one process | {serial:.1f} s | {n / serial:.2f} | "
        f"{serial / ideal:.2f}x | {serial_cpu:.1f} s (`run_day` only) | "
        f"{serial_cpu / serial:.2f} | |",
        f"| ideal = serial / {cores} cores | {ideal:.1f} s | {n / ideal:.2f} | 1.00x | | "
        f"{cores} | |",
    ]
    for kind, whole, runner in (("local", local, local_runner), ("dask", dask, dask_runner)):
        cpu, worker = med(kind, "cpu_s"), med(kind, "worker_s")
        fixed, fixed_cpu = med(f"{kind} fixed", "wall_s"), med(f"{kind} fixed", "cpu_s")
        rows += [
            f"| {kind} x{args.workers}, whole process | {whole:.1f} s | {n / whole:.2f} | "
            f"{whole / ideal:.2f}x | {cpu:.1f} s | {cpu / whole:.2f} | {worker:.1f} s |",
            f"| {kind} x{args.workers}, runner only | {runner:.1f} s | {n / runner:.2f} | "
            f"{runner / ideal:.2f}x | | | |",
            f"| {kind} x{args.workers}, 2 runs (fixed cost) | {fixed:.1f} s | | | "
            f"{fixed_cpu:.1f} s | | |",
        ]
    local_cpu, dask_cpu = med("local", "cpu_s"), med("dask", "cpu_s")
    cpu_note = (
        "CPU time of the tree counts the orphaned fork server and pool workers too (the bench "
        "process is a child subreaper and reaps them)"
        if subreaper
        else "CPU time of the tree is **undercounted** (no subreaper: orphaned pool workers missed)"
    )
    body = f"""{machine_line()} Command: `{command}`.
Load average (1/5/15 min) at the start and after each measurement: {", ".join(loads)}.

{n:,} day-runs of the reference size: `kbsim run {STUDY} {SETS} --seeds {seeds}`
(the no-edit day, zipf and control, {seeds} seeds each), median of {args.repeats} repetition(s),
measured in a rotating order. "Runner only" is the wall time `kbsim run` logs (no interpreter start
or imports). "Cores busy" is CPU time / wall time: the ideal assumes {cores} free cores.
"Runs' own wall" sums each run's time as its worker recorded it (simulation, metrics, Parquet);
against the serial sum it shows how much slower each run went in the pool. {cpu_note}.

{chr(10).join(rows)}

{ratio_line("local vs ideal (whole process)", local / ideal, TARGET_LOCAL_VS_IDEAL)}
{ratio_line("dask vs local (whole processes)", dask / local, TARGET_DASK_VS_LOCAL)}
- Runner only: local vs ideal {local_runner / ideal:.2f}x, dask vs local
  {dask_runner / local_runner:.2f}x.
- Work besides simulating, per run, serially (`kbsim.runner.worker.run_files`: metrics, tidy columns,
  Parquet encoding of the tables): {tables / n * 1000:.1f} ms ({tables / serial:.0%} of `run_day`),
  done by the workers, not in the ideal.
- CPU time beyond the serial `run_day` CPU time and that per-run work: local
  {local_cpu - serial_cpu - tables:.1f} s, dask {dask_cpu - serial_cpu - tables:.1f} s (start-up,
  imports in every process, the parent's file writing and summary, and contention; a
  difference of medians taken over noisy repetitions, so near zero, even below, means too small
  to measure here).
- If the pool's cores busy is well under {cores}, other load on the shared machine took the rest,
  and the wall-time ratios measure that load as much as the runner.
"""
    write_section("Sweep throughput", body)
    if overhead:
        lines = ["| step in the parent (`kbsim run --executor local`) | cumulative |"]
        lines.append("| --- | ---: |")
        lines += [f"| {step} | {seconds * 1000:,.0f} ms |" for step, seconds in overhead.items()]
        write_section(
            "Sweep runner overhead",
            f"""{machine_line()} Command: `{command}`.

The local sweep of {n:,} runs once more with its parent process under cProfile
(`python -m cProfile -m kbsim run ...`; workers are not profiled, their per-run extra work is the
metrics and Parquet time in "Sweep throughput"). Cumulative time per step; the steps overlap
where one calls another.

{chr(10).join(lines)}
""",
        )


if __name__ == "__main__":
    main()
