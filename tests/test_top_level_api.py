"""The top-level ``kbsim`` exports the entry points a notebook needs (issue 29, part 6):
``run_day``, ``run_experiment``, ``load_results`` and ``summarize``, each documented with
an example that runs here, and ``import kbsim`` stays light."""

from __future__ import annotations

import doctest
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import kbsim
import kbsim.runner.results
import kbsim.runner.run
import kbsim.sim.day
import kbsim.stats.summary

REPO = Path(__file__).resolve().parents[1]
ENTRY_POINTS = {
    "run_day": kbsim.sim.day,
    "run_experiment": kbsim.runner.run,
    "load_results": kbsim.runner.results,
    "summarize": kbsim.stats.summary,
}


def test_the_entry_points_are_exported_from_their_homes():
    for name, home in ENTRY_POINTS.items():
        assert name in kbsim.__all__
        assert getattr(kbsim, name) is getattr(home, name)
        assert name in dir(kbsim)
    namespace: dict = {}
    exec("from kbsim import *", namespace)  # noqa: S102 (the star import __all__ promises)
    assert {*ENTRY_POINTS} <= set(namespace)
    with pytest.raises(AttributeError, match="no attribute 'run_days'"):
        kbsim.run_days  # noqa: B018


def test_import_kbsim_loads_none_of_the_entry_points_heavy_modules():
    """pandas, pyarrow and SimPy come with the first entry point used, not with ``import kbsim``
    (every command imports it, ``kbsim --help`` too)."""
    code = ("import json, sys, kbsim; print(json.dumps(sorted(m for m in ('pandas', 'pyarrow', 'simpy', 'scipy') "
            "if m in sys.modules))); kbsim.summarize; print(json.dumps('pandas' in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=120)
    before, after = done.stdout.splitlines()
    assert json.loads(before) == [] and json.loads(after) is True


@pytest.mark.parametrize("name", [*ENTRY_POINTS, "kbsim"])
def test_each_entry_point_has_args_returns_and_an_example_that_runs(name, tmp_path, monkeypatch):
    target = kbsim if name == "kbsim" else getattr(kbsim, name)
    text = target.__doc__
    assert "Example:" in text
    if name != "kbsim":
        assert "Args:" in text and "Returns:" in text
    monkeypatch.chdir(tmp_path)  # the examples write results/ where they run
    finder = doctest.DocTestFinder(recurse=False)
    tests = finder.find(target, name, globs={})
    assert tests and tests[0].examples
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    for test in tests:
        runner.run(test)
    assert runner.summarize(verbose=False).failed == 0
