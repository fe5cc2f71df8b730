"""Declared contrasts (config, contrasts.csv, the terminal) and seeds chosen by precision."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pandas as pd
import pytest
from tiny_configs import TINY_DAY

from kbsim.cli import main
from kbsim.runner.config import ConfigError
from kbsim.runner.load import load_config
from kbsim.runner.precision import PrecisionTarget, next_seeds
from kbsim.runner.run import load_results
from kbsim.stats import contrasts, summarize

SCENARIOS = """\
scenarios:
  zipf: {}
  control: {saves.popularity: uniform}
sweep:
  edit.delay_s: [null, 60]
"""
CONTRASTS = """\
contrasts:
  - metric: stale_citation_share
    baseline: {scenario: control}
    where: {edit.delay_s: null}
  - metric: calls_per_check
    strategy: poll
    baseline: {edit.delay_s: null}
    compare: ratio
"""


def write(tmp_path: Path, text: str, name: str = "tiny") -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(textwrap.dedent(text))
    return path


@pytest.mark.parametrize(
    ("entry", "key_path", "problem"),
    [
        ("- {metric: stale_citation_share, baseline: {scenario: control}, by: x}", "contrasts[0].by", "unknown key"),
        ("- {baseline: {scenario: control}}", "contrasts[0].metric", "missing"),
        ("- {metric: stale_share, baseline: {scenario: control}}", "contrasts[0].metric", "stale_share"),
        ("- {metric: stale_citation_share, baseline: {seed: 1}}", "contrasts[0].baseline.seed", "swept parameter"),
        ("- {metric: stale_citation_share, baseline: {scenario: other}}", "contrasts[0].baseline.scenario", "'other'"),
        ("- {metric: stale_citation_share, baseline: {scenario: control}, compare: quotient}",
         "contrasts[0].compare", "ratio"),
        ("- {metric: stale_citation_share, at: soon, baseline: {scenario: control}}", "contrasts[0].at", "'Nh'"),
        ("- {metric: calls_per_check, strategy: guess, baseline: {scenario: control}}",
         "contrasts[0].strategy", "strategy"),
        ("- {metric: stale_citation_share, baseline: {}}", "contrasts[0].baseline", "mapping"),
    ],
)
def test_a_bad_contrast_is_refused_naming_its_key(tmp_path, entry, key_path, problem):
    path = write(tmp_path, TINY_DAY + SCENARIOS + "contrasts:\n  " + entry + "\n")
    with pytest.raises(ConfigError) as error:
        load_config(path)
    assert error.value.key_path == key_path and problem in str(error.value)
    assert str(path) in str(error.value)


def test_contrasts_do_not_change_what_runs(tmp_path):
    plain = load_config(write(tmp_path, TINY_DAY + SCENARIOS, "a"))
    declared = load_config(write(tmp_path, TINY_DAY + SCENARIOS + CONTRASTS, "a2"))
    assert [r.run_id for r in plain.runs()] == [r.run_id for r in declared.runs()]
    assert len(declared.contrast_specs()) == 2


def test_run_writes_contrasts_csv_and_prints_them(tmp_path, capsys):
    path = write(tmp_path, TINY_DAY + SCENARIOS + CONTRASTS)
    out = tmp_path / "out"
    assert main(["run", str(path), "--out", str(out), "--workers", "1", "--no-progress"]) == 0
    printed = capsys.readouterr().out
    assert "contrasts (paired on common seeds" in printed
    assert "stale_citation_share@end zipf none vs scenario=control" in printed
    on_disk = pd.read_csv(out / "tiny" / "contrasts.csv")
    # zipf vs control at no edits (1 row); each scenario's 60 s day vs its no-edit day (2 rows)
    assert len(on_disk) == 3
    assert {"value", "ci_low", "ci_high", "unpaired_ci_low", "unpaired_ci_high", "width_ratio", "seeds"} <= set(
        on_disk.columns
    )
    metrics = load_results(out / "tiny")["metrics"]
    expected = contrasts(metrics, load_config(path).contrast_specs(), ["scenario", "edit.delay_s"])
    pd.testing.assert_series_equal(
        on_disk["value"], expected["value"].reset_index(drop=True), check_names=False
    )
    ratio = on_disk[on_disk["compare"] == "ratio"]
    assert (ratio["ci_low"] > 0).all()


def test_precision_adds_seeds_until_the_interval_is_narrow_enough(tmp_path, capsys):
    path = write(tmp_path, TINY_DAY + SCENARIOS.replace("  edit.delay_s: [null, 60]\n", "  edit.delay_s: null\n"))
    out = tmp_path / "out"
    argv = ["run", str(path), "--out", str(out), "--workers", "1", "--no-progress"]
    code = main([*argv, "--precision", "stale_citation_share@end=0.1", "--max-seeds", "32"])
    err = capsys.readouterr().err
    assert code == 0, err
    assert "precision: every target met with" in err
    seeds = int(err.split("precision: every target met with ")[1].split(" seeds")[0])
    assert seeds > 2  # the tiny day's 2 seeds were not enough: it added seeds on its own
    summary = pd.read_csv(out / "tiny" / "summary.csv")
    end = summary[summary["name"] == "stale_citation_share@end"]
    assert (end["seeds"] == seeds).all()
    assert ((end[["ci_high"]].to_numpy() - end[["value"]].to_numpy()) <= 0.1 + 1e-12).all()
    assert "at zipf none" in err or "at zipf" in err
    # the same command again reuses every run
    assert main([*argv, "--precision", "stale_citation_share@end=0.1", "--max-seeds", "32"]) == 0
    assert f"{2 * seeds} runs, {2 * seeds} already done, 0 to run" in capsys.readouterr().err


def test_precision_stops_at_the_cap_with_a_clear_message_and_exit_3(tmp_path, capsys):
    path = write(tmp_path, TINY_DAY)
    code = main(["run", str(path), "--out", str(tmp_path / "o"), "--workers", "1", "--no-progress",
                 "--precision", "calls_per_check[poll]=0.000001", "--max-seeds", "4"])
    err = capsys.readouterr().err
    assert code == 3
    assert "targets not met with 4 seeds, the --max-seeds cap" in err and "not reached" in err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--precision", "stale_share@end=0.1"], "unknown metric 'stale_share'"),
        (["--precision", "stale_citation_share@end"], "NAME=HALF_WIDTH"),
        (["--precision", "stale_citation_share@end=-1"], "positive half-width"),
        (["--precision", "stale_citation_share@h9=0.1"], "no such metric in this experiment's summary"),
        (["--max-seeds", "8"], "--max-seeds needs --precision"),
    ],
)
def test_bad_precision_arguments_are_one_line_exit_2(tmp_path, capsys, argv, message):
    path = write(tmp_path, TINY_DAY)
    code = main(["run", str(path), "--out", str(tmp_path / "o"), "--workers", "1", "--no-progress", *argv])
    err = capsys.readouterr().err
    assert code == 2 and message in err


def test_precision_targets_and_seed_extension():
    assert PrecisionTarget.parse("stale_citation_share@end=2%").half_width == pytest.approx(0.02)
    assert PrecisionTarget.parse(" calls_per_check[poll] = 0.5 ").name == "calls_per_check[poll]"
    assert next_seeds([3, 7], 5) == [3, 7, 8, 9, 10]
    assert next_seeds([1, 2, 3, 4, 5], 3) == [1, 2, 3]


def test_summary_seeds_column_counts_seeds_not_runs(tmp_path):
    path = write(tmp_path, TINY_DAY)
    main(["run", str(path), "--out", str(tmp_path / "o"), "--workers", "1", "--no-progress"])
    metrics = load_results(tmp_path / "o" / "tiny")["metrics"]
    summary = summarize(metrics, ["scenario"])
    assert (summary["seeds"] == 2).all()
