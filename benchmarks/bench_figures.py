"""`kbsim figures`, the command behind every figure and results page, timed as a whole process.

Usage: python benchmarks/bench_figures.py [--cached-only] [--workers N]

In a temporary folder holding copies of docs/ and README.md (so nothing in the checkout
is rewritten; the configs are the shipped experiments/), it times three passes, the
first two ``python -m kbsim figures``:

1. with no results at all: every run of every experiment the figures and pages need is
   computed, then everything is drawn and written (what ``kbsim figures --fresh`` does);
2. again, with every run cached: verifying and loading the runs, the statistics, the
   drawing and the pages alone.

Both outputs are then compared, file by file, with the committed figures/, docs/results.md,
docs/reproduction.md and the README's results block: the speed work must leave every
figure and page identical.

3. the workload the figures target was set for: the experiments that existed when the speed
   issue was filed (commit ``START_COMMIT``, read from the repository's history), each
   computed with today's code by ``python -m kbsim run CONFIG``, one process after another
   (so the time includes a process start per experiment), and nothing drawn. The
   experiments have grown since, so pass 1 alone does not say whether the code got faster.

``--cached-only`` skips steps 1 and 3 and reads the checkout's results/ (computing whatever
is missing there). Writes the "Figures" section of benchmarks/RESULTS.md, or with
``--cached-only`` the "Figures from cached results" section (so the passes it does not run
keep their last figures).
"""

from __future__ import annotations

import argparse
import json
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from results_file import machine_line, write_section  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SECTION = "Figures"
CACHED_SECTION = "Figures from cached results"
TARGET_FRESH_S = 45.0
#: Issue 41's target for the cached pass (verify, load, statistics, draw, pages).
TARGET_CACHED_S = 10.0
#: The commit that filed the speed target: its experiments/ is the workload the target was set for.
START_COMMIT = "42cf343"


def timed(command: list[str], cwd: Path) -> float:
    """Wall seconds of one whole process; its output is kept quiet unless it fails."""
    started = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"bench_figures: {shlex.join(command)} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return wall


def runs_per_experiment(results: Path) -> dict[str, int]:
    """The runs each experiment the figures and pages need lists in its manifest."""
    from kbsim.report.build import PAGE_EXPERIMENTS, REPRODUCTION_EXPERIMENTS
    from kbsim.report.figures import specs

    needed = {name for spec in specs(None) for name in spec.experiments}
    needed |= {*PAGE_EXPERIMENTS, *REPRODUCTION_EXPERIMENTS}
    counts = {}
    for name in sorted(needed):
        manifest = results / name / "manifest.json"
        counts[name] = len(json.loads(manifest.read_text(encoding="utf-8"))["runs"])
    return counts


def start_experiments(folder: Path) -> list[Path] | None:
    """The experiment files of :data:`START_COMMIT`, written into ``folder``; None without the
    repository's history (a shallow or exported copy)."""
    listing = subprocess.run(
        ["git", "-C", str(ROOT), "ls-tree", "--name-only", START_COMMIT, "experiments/"],
        capture_output=True, text=True,
    )  # fmt: skip
    if listing.returncode != 0:
        return None
    folder.mkdir(parents=True)
    configs = []
    for name in listing.stdout.split():
        shown = subprocess.run(["git", "-C", str(ROOT), "show", f"{START_COMMIT}:{name}"], capture_output=True)
        if shown.returncode != 0:
            return None
        path = folder / Path(name).name
        path.write_bytes(shown.stdout)
        if path.suffix == ".yaml":
            configs.append(path)
    return configs


def computed_start_set(work: Path, workers: int | None) -> tuple[float, dict[str, int]] | None:
    """Wall seconds to compute every run of the start commit's experiments, and their runs."""
    configs = start_experiments(work / "start" / "experiments")
    if configs is None:
        return None
    results = work / "start" / "results"
    wall = 0.0
    for config in configs:
        command = [sys.executable, "-m", "kbsim", "run", str(config), "--out", str(results),
                   "--fresh", "--no-progress", "--yes"]  # fmt: skip
        if workers:
            command += ["--workers", str(workers)]
        wall += timed(command, work / "start")
    counts = {}
    for config in configs:
        manifest = json.loads((results / config.stem / "manifest.json").read_text(encoding="utf-8"))
        counts[config.stem] = len(manifest["runs"])
    return wall, counts


def differing_outputs(work: Path) -> list[str]:
    """The written figures and pages that differ from the committed ones."""
    pairs = [(work / "figures" / p.name, p) for p in sorted((ROOT / "figures").iterdir()) if p.is_file()]
    pairs += [(work / "docs" / name, ROOT / "docs" / name) for name in ("results.md", "reproduction.md")]
    pairs.append((work / "README.md", ROOT / "README.md"))
    differ = []
    for written, committed in pairs:
        if committed.name == ".gitkeep":
            continue
        if not written.exists() or written.read_bytes() != committed.read_bytes():
            differ.append(str(committed.relative_to(ROOT)))
    return differ


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cached-only", action="store_true", help="time only the cached pass, on results/")
    parser.add_argument("--workers", type=int, default=None, help="processes for the runs (default: CPU count)")
    args = parser.parse_args()
    if args.workers is not None and args.workers < 1:
        parser.error("--workers: expected at least 1")
    # a kill ends the run like Ctrl-C: the kbsim process is stopped and the scratch folder removed
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))

    with tempfile.TemporaryDirectory(prefix="kbsim-bench-figures-") as temp:
        work = Path(temp)
        shutil.copytree(ROOT / "docs", work / "docs")
        # the pages link to validation/: without it beside them they are written with its
        # links as plain text (kbsim.report.links), and would differ from the committed ones
        shutil.copytree(ROOT / "validation", work / "validation")
        shutil.copy(ROOT / "README.md", work / "README.md")
        results = ROOT / "results" if args.cached_only else work / "results"
        command = [sys.executable, "-m", "kbsim", "figures", "--results", str(results)]
        if args.workers:
            command += ["--workers", str(args.workers)]
        fresh_s = None
        if not args.cached_only:
            fresh_s = timed(command, work)
        cached_s = timed(command, work)
        counts = runs_per_experiment(results)
        differ = differing_outputs(work)
        start = None if args.cached_only else computed_start_set(work, args.workers)

    shown = ["python", "-m", "kbsim", "figures"] + (["--workers", str(args.workers)] if args.workers else [])
    lines = [
        f"Command: `python benchmarks/bench_figures.py{' --cached-only' if args.cached_only else ''}"
        f"{f' --workers {args.workers}' if args.workers else ''}` "
        f"(`{shlex.join(shown)}` in a scratch folder{'' if args.cached_only else ', twice'}). {machine_line()}",
        "",
        f"The experiments the figures and pages need: {len(counts)}, "
        f"{sum(counts.values()):,} runs ({', '.join(f'{k} {v}' for k, v in counts.items())}).",
        "",
        "| pass | wall | target |",
        "|---|---|---|",
    ]
    if fresh_s is not None:
        met = "met" if fresh_s <= TARGET_FRESH_S else "NOT MET"
        lines.append(f"| no results (every run computed, then drawn) | {fresh_s:.1f} s | "
                     f"{TARGET_FRESH_S:.0f} s: {met} |")
    met = "met" if cached_s <= TARGET_CACHED_S else "NOT MET"
    lines.append(f"| every run cached (verify, load, statistics, draw, pages) | {cached_s:.1f} s | "
                 f"{TARGET_CACHED_S:.0f} s: {met} |")
    if start is not None:
        start_s, start_counts = start
        met = "met" if start_s <= TARGET_FRESH_S else "NOT MET"
        lines += [
            "",
            f"The workload the {TARGET_FRESH_S:.0f} s target was set for: the experiments that existed when the "
            f"speed issue was filed (commit {START_COMMIT}): {len(start_counts)}, "
            f"{sum(start_counts.values()):,} runs ({', '.join(f'{k} {v}' for k, v in start_counts.items())}), "
            "each computed with today's code by `python -m kbsim run CONFIG"
            + (f" --workers {args.workers}" if args.workers else "")
            + "`, one after another (no drawing: those experiments' figures are not today's).",
            "",
            "| pass | wall | target |",
            "|---|---|---|",
            f"| every run of the {START_COMMIT} experiments computed | {start_s:.1f} s | "
            f"{TARGET_FRESH_S:.0f} s: {met} |",
        ]
    elif not args.cached_only:
        lines += ["", f"The {START_COMMIT} experiments were not timed: this copy has no git history."]
    lines += [
        "",
        "Outputs against the committed ones: "
        + ("every figure and page identical." if not differ else f"DIFFER: {', '.join(differ)}."),
    ]
    write_section(CACHED_SECTION if args.cached_only else SECTION, "\n".join(lines))
    print("\n".join(lines))
    if differ:
        sys.exit(1)


if __name__ == "__main__":
    main()
