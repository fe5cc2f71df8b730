"""The benchmarks still describe runs the package accepts.

``make bench`` is not part of the test suite (it takes an hour), so a change elsewhere can
leave a benchmark asking for something the package now refuses: bench_sweep's pinned
no-edit day stopped loading once the reference study declared contrasts between edit
delays. These load what each benchmark loads, without timing anything.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

import bench_day  # noqa: E402
import bench_sweep  # noqa: E402

from kbsim.runner.load import load_config  # noqa: E402


def test_the_sweep_benchmark_loads_the_no_edit_reference_day():
    loaded = load_config(ROOT / bench_sweep.STUDY, bench_sweep.OVERRIDES, seeds="3")
    runs = loaded.runs()
    assert len(runs) == bench_sweep.SCENARIOS * 3
    assert {run.params.edit.delay_s for run in runs} == {None}


def test_the_day_benchmark_builds_its_reference_and_scaled_days():
    for _, delay in bench_day.REFERENCE_DAYS:
        assert bench_day.DayParams(edit={"delay_s": delay}).edit.delay_s == delay
    scaled = bench_day.scaled(bench_day.MILLION_SCALE)
    assert scaled.corpus.articles == 1_000_000
    assert scaled.saves.count == bench_day.DayParams().saves.count * bench_day.MILLION_SCALE


def test_the_day_benchmark_compares_with_a_revision_the_repository_has():
    """The baseline section extracts its revision with git archive: it must name a commit (of
    the repository's history; a shallow clone has not got it)."""
    import subprocess

    import pytest

    shallow = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--is-shallow-repository"],
                             capture_output=True, text=True).stdout.strip()
    if shallow != "false":
        pytest.skip("not a full clone of the repository")
    for revision in (bench_day.BASELINE, bench_day.MAIN_BEFORE, bench_day.ISSUE_BASELINE):
        done = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--verify", f"{revision}^{{commit}}"],
                              capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
    assert {"baseline", "main", "scale-baseline"} <= set(bench_day.SECTIONS) and "million" in bench_day.EXTRA_SECTIONS


def test_the_day_benchmark_times_the_collector_inside_its_block():
    import gc

    with bench_day.collector_time() as collected:
        gc.collect()
    gc.collect()  # outside the block: not counted
    assert collected["collections"] == [0, 0, 1] and collected["seconds"] >= 0.0


def test_the_memory_benchmark_samples_the_resident_set_where_kbsim_runs():
    """bench_day_memory's sampler reads the resident set and names the kbsim code running."""
    import time

    import bench_day_memory

    from kbsim.sim.corpus import vocabulary_word

    marks: dict[str, float] = {}

    class Owner:
        @staticmethod
        def build(n):
            # Python code of kbsim's (the sampler's thread takes the GIL between bytecodes,
            # so a call spent in C would rarely be seen), for half a second
            deadline = time.perf_counter() + 0.5
            while time.perf_counter() < deadline:
                for i in range(n):
                    vocabulary_word(i)
            return n

    original = bench_day_memory.marked(Owner, "build", marks, "before", "after")
    with bench_day_memory.Sampler() as sampler:
        assert Owner.build(2000) == 2000
    assert Owner.build is not original and marks["before"] > 0 and marks["after"] > 0
    assert sampler.samples and all(rss > 0 for rss, _ in sampler.samples)
    assert any("corpus.vocabulary_word" in where for _, where in sampler.samples)
