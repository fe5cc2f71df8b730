"""Inputs have limits: what cannot run is refused when the config is validated, naming the
key; what is merely big is estimated and needs --yes."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from tiny_configs import TINY_DAY, TINY_SWEEP

import kbsim.runner.executors
import kbsim.runner.limits
import kbsim.runner.run
from kbsim.cli import main
from kbsim.runner.config import ConfigError
from kbsim.runner.config_keys import parse_seeds
from kbsim.runner.load import load_config
from kbsim.runner.shipped import SHIPPED_DIR

ROOT = Path(__file__).resolve().parents[1]


def write_config(directory: Path, text: str, name: str = "tiny") -> Path:
    path = directory / f"{name}.yaml"
    path.write_text(textwrap.dedent(text))
    return path


def refused(path: Path, *overrides: str, seeds=None) -> ConfigError:
    with pytest.raises(ConfigError) as caught:
        load_config(path, list(overrides), seeds=seeds)
    return caught.value


@pytest.mark.parametrize(
    ("text", "key_path"),
    [
        ("seeds: [1, 9223372036854775808]\n", "seeds[1]"),
        ("seeds: '9223372036854775800-9223372036854775808'\n", "seeds"),
        ("seeds: [9223372036854775807]\n", None),  # the largest int64 is fine
    ],
)
def test_seeds_must_fit_the_int64_seed_column(text, key_path, tmp_path):
    path = write_config(tmp_path, TINY_DAY.replace("seeds: 2\n", text))
    if key_path is None:
        assert load_config(path).seeds == [2**63 - 1]
        return
    error = refused(path)
    assert error.key_path == key_path and "below 2**63" in error.problem


def test_a_seed_range_too_long_to_run_is_refused_before_it_is_listed():
    with pytest.raises(ConfigError, match=r"seeds: '1-2000000' makes 2000000 seeds; expected at most 1000000"):
        parse_seeds("1-2000000", "--seeds")
    # a hundred billion seeds would exhaust memory if listed
    with pytest.raises(ConfigError, match=r"makes 100000000000 seeds; expected at most"):
        parse_seeds("1-100000000000", "--seeds")
    with pytest.raises(ConfigError, match=r"100000000000 seeds; expected at most"):
        parse_seeds(100_000_000_000)
    with pytest.raises(ConfigError, match=r"makes 1000001 seeds"):
        parse_seeds("1-500000,600000-1100000")


def test_too_many_runs_are_refused_naming_the_seeds(tmp_path, capsys):
    path = write_config(tmp_path, TINY_SWEEP)  # 4 points
    error = refused(path, seeds="1-300000")
    assert error.key_path == "seeds" and "300000 seeds x 4 points make 1200000 runs" in error.problem
    assert main(["run", str(path), "--out", str(tmp_path / "out"), "--seeds", "1-300000"]) == 2
    assert "expected at most 1000000 runs" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("line", "key_path"),
    [
        ("  checks.interval_s: .inf\n", "params.checks.interval_s"),
        ("  edit: {delay_s: .inf}\n", "params.edit.delay_s"),
        ("  event_retention_s: .nan\n", "params.event_retention_s"),
    ],
)
def test_infinite_and_nan_parameters_are_refused_naming_the_key(line, key_path, tmp_path):
    path = write_config(tmp_path, TINY_DAY.replace("params:\n", f"params:\n{line}"))
    error = refused(path)
    assert (error.key_path, error.source) == (key_path, str(path))
    assert error.problem.startswith("expected a finite number, got")


def test_infinity_is_refused_from_a_scenario_and_from_set(tmp_path):
    path = write_config(tmp_path, TINY_DAY.replace("day_hours: 2", "day_hours: .inf"))
    assert refused(path).key_path == "params.day_hours"
    path = write_config(tmp_path, TINY_SWEEP.replace("  zipf: {}", "  zipf: {day_hours: .inf}"))
    assert refused(path).key_path == "scenarios.zipf.day_hours"
    path = write_config(tmp_path, TINY_DAY)
    error = refused(path, "checks.interval_s=.inf")
    assert (error.source, error.key_path) == ("--set checks.interval_s=.inf", "checks.interval_s")  # as written


@pytest.mark.parametrize(
    ("params", "key_path", "words"),
    [
        ("saves.count: 1000000000", "params.saves.count", "saves.count 1000000000: one run would need about"),
        ("questions.count: 1000000000", "params.questions.count", "questions.count 1000000000"),
        ("corpus: {articles: 100000000}", "params.corpus.articles", "corpus.articles 100000000"),
        (
            "{day_hours: 1000000, checks.interval_s: 0.5}",
            "params.checks.interval_s",
            "day_hours 1e+06 / checks.interval_s 0.5 s = 7.2e+09 checks",
        ),
        (
            "edit: {delay_s: 1.0e+7, delay_distribution: lognormal, lognormal_sigma: 3}",
            "params.edit.delay_s",
            "saves while edits wait",
        ),
        ("edit: {delay_s: 1.0e+12}", "params.edit.delay_s", "past the year 9999"),
    ],
)
def test_a_run_that_cannot_run_is_refused_at_validation(params, key_path, words, tmp_path):
    """Refused when the config is read, before any worker allocates anything."""
    text = f"params: {params}\n" if params.startswith("{") else f"params:\n  {params}\n"
    error = refused(write_config(tmp_path, text))
    assert error.key_path == key_path, error
    assert words in error.problem and "expected a smaller value" in error.problem or "9999" in words


def test_the_limit_names_the_sweep_value_or_scenario_that_breaks_it(tmp_path):
    sweep = write_config(tmp_path, TINY_DAY + "sweep:\n  saves.count: [30, 2000000000]\n")
    error = refused(sweep)
    assert error.key_path == "sweep.saves.count" and "'saves.count': 2000000000" in error.problem
    scenario = write_config(
        tmp_path, TINY_DAY + "scenarios:\n  small: {}\n  huge: {questions.count: 2000000000}\n"
    )
    assert refused(scenario).key_path == "scenarios.huge.questions.count"


@pytest.mark.parametrize("path", sorted(SHIPPED_DIR.glob("*.yaml")), ids=lambda p: p.stem)
def test_the_shipped_experiments_run_without_yes(path):
    assert load_config(path).estimate().reasons_to_confirm() == []


@pytest.mark.parametrize(
    ("overrides", "reason"),
    [
        (["saves.count=3000000"], "of memory in a run"),
        (["day_hours=1000000"], "of memory in a run"),
        (["checks.interval_s=0.1", "seeds=200"], "of CPU"),
    ],
)
def test_big_runs_need_confirmation(overrides, reason, tmp_path):
    estimate = load_config(write_config(tmp_path, TINY_SWEEP), overrides).estimate()
    assert any(reason in r for r in estimate.reasons_to_confirm()), (estimate, estimate.reasons_to_confirm())


@pytest.fixture
def executed(monkeypatch):
    """Records the jobs handed to the pool, and runs none of them."""
    jobs_seen: list[dict] = []

    def execute(jobs, workers, batch_size, run_day, handle):
        jobs_seen.extend(jobs)
        return 1, 0

    monkeypatch.setattr(kbsim.runner.executors, "execute_local", execute)
    return jobs_seen


def test_a_large_experiment_prints_its_estimate_and_needs_yes(tmp_path, capsys, executed):
    path = write_config(tmp_path, TINY_SWEEP)
    out = tmp_path / "out"
    assert main(["run", str(path), "--out", str(out), "--seeds", "1-3000", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"kbsim run: error: {path}: 12000 runs (4 points x 3000 seeds)")
    assert "of CPU" in err and "more than 10000 runs; pass --yes" in err
    assert not out.exists() and executed == []  # nothing written, nothing run


def test_yes_runs_an_experiment_above_the_thresholds(tmp_path, capsys, executed, monkeypatch):
    monkeypatch.setattr(kbsim.runner.limits, "CONFIRM_RUNS", 10)  # so that a dozen runs pass it
    path = write_config(tmp_path, TINY_SWEEP)
    out = tmp_path / "out"
    assert main(["run", str(path), "--out", str(out), "--seeds", "1-3", "--no-progress"]) == 2
    assert "12 runs (4 points x 3 seeds)" in capsys.readouterr().err and executed == []
    assert main(["run", str(path), "--out", str(out), "--seeds", "1-3", "--no-progress", "--yes"]) == 0
    assert len(executed) == 12
