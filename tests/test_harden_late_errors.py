"""Errors that came late or not at all (issue 24, part 5): each now comes first, in one
line naming what the user set, before anything runs or is written."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
import yaml

import kbsim
from kbsim.cli import main
from kbsim.params import DayParams
from kbsim.runner.config import ConfigError, TooLargeError
from kbsim.runner.load import load_config
from kbsim.runner.precision import PrecisionTarget, check_targets
from kbsim.runner.results import results_layout
from kbsim.sim import run_day
from kbsim.stats.metrics import metric_names, run_metrics

TINY = ("name: tiny\nparams: {day_hours: 2, corpus: {articles: 20}, saves: {count: 10}, questions: {count: 6}}\n"
        "seeds: 1\n")


def _config(tmp_path: Path, text: str = TINY, name: str = "tiny.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def _run(tmp_path, *args) -> list[str]:
    return ["run", str(_config(tmp_path)), "--out", str(tmp_path / "out"), "--no-progress", *args]


def test_an_unknown_precision_metric_row_is_refused_before_any_run(tmp_path, capsys):
    assert main(_run(tmp_path, "--precision", "stale_citation_share@h99=0.05")) == 2
    captured = capsys.readouterr()
    assert captured.err.startswith("kbsim run: error: --precision: stale_citation_share@h99: no such metric in this "
                                   "experiment's summary (did you mean 'stale_citation_share@")
    assert "runs" not in captured.err.split("\n")[0][:40] and not (tmp_path / "out").exists()
    assert main(_run(tmp_path, "--precision", "calls_per_check[nobody]=3")) == 2
    assert "calls_per_check[nobody]: no such metric" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("params", [
    {"day_hours": 2.5, "corpus": {"articles": 20}, "saves": {"count": 20}, "questions": {"count": 8,
                                                                                        "citations_per_answer": 3}},
    {"day_hours": 1, "corpus": {"articles": 20}, "saves": {"count": 20}, "questions": {"count": 8},
     "edit": {"delay_s": 30, "share": 1.0}},
    # the design switches' days (several agents, no versions, a lossy wire): their extra tables' rows
    {"day_hours": 2, "corpus": {"articles": 20}, "saves": {"count": 30}, "questions": {"count": 12},
     "edit": {"delay_s": 30, "share": 1.0}, "agents": {"count": 3}, "citation": {"carries_version": False},
     "transport": {"loss_rate": 0.2}, "events": {"log_unpublish": False}},
    {"day_hours": 1, "corpus": {"articles": 20}, "saves": {"count": 20}, "questions": {"count": 8},
     "agents": {"count": 2}},
])
def test_the_names_precision_checks_against_are_the_names_a_day_gives(params):
    day = DayParams.model_validate(params)
    given = set(run_metrics(run_day(day, 1), day.day_s)["name"])
    assert given <= metric_names(day)
    assert {"stale_citation_share@end", "detected_share@end[poll]"} <= given
    assert ("stale_citation_share@h1" in given) == (day.day_hours > 1)
    if day.agents.count > 1:  # a row per agent, each of which --precision may name
        assert {"calls_per_check[poll]{agent 0}", f"bytes_per_check[reread]{{agent {day.agents.count - 1}}}",
                "shared_consumer_saving"} <= given
    if not day.citation.carries_version:
        assert "cited_text_bytes" in given


def test_check_targets_refuses_unknown_rows_and_bad_caps(tmp_path):
    config = load_config(_config(tmp_path))
    check_targets(config, [PrecisionTarget.parse("stale_citation_share@h1=2%")], 640)
    with pytest.raises(ConfigError, match="stale_citation_share@h2: no such metric"):  # h2 is the end of a 2 h day
        check_targets(config, [PrecisionTarget.parse("stale_citation_share@h2=2%")], 640)
    for cap in (0, -3, 10**12):
        with pytest.raises(ConfigError, match="--max-seeds: expected 1 to 1,000,000 seeds"):
            check_targets(config, [PrecisionTarget.parse("stale_citation_share@end=2%")], cap)


def test_max_seeds_zero_is_refused_not_read_as_the_default(tmp_path, capsys):
    assert main(_run(tmp_path, "--precision", "stale_citation_share@end=0.05", "--max-seeds", "0")) == 2
    assert capsys.readouterr().err == "kbsim run: error: --max-seeds: expected at least 1, got 0\n"
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("address", ["not a url", "tcp://host", "tcp://host:port"])
def test_a_scheduler_that_is_no_address_is_one_line(tmp_path, capsys, address):
    assert main(_run(tmp_path, "--scheduler", address)) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"kbsim run: error: --scheduler {address!r}: not the address of a Dask scheduler")
    assert err.count("\n") == 1 and not (tmp_path / "out").exists()


def test_a_grid_at_the_run_limit_is_refused_by_its_size_before_per_point_validation(tmp_path, capsys):
    values = list(range(1, 1001))
    grid = {"name": "big", "params": {"day_hours": 1}, "seeds": 1,
            "sweep": {"saves.count": values, "questions.count": values}}
    config = _config(tmp_path, yaml.safe_dump(grid), "big.yaml")
    started = time.perf_counter()
    assert main(["run", str(config), "--out", str(tmp_path / "out")]) == 2
    assert time.perf_counter() - started < 20  # minutes before: a million points validated first
    err = capsys.readouterr().err
    assert err.startswith(f"kbsim run: error: {config}: 1000000 runs (1000000 points x 1 seeds), about ") and (
        "of CPU" in err and "more than 10000 runs" in err and err.endswith("pass --yes (yes=True) to run it anyway\n"))
    with pytest.raises(TooLargeError):
        load_config(config, yes=False)


def test_a_key_set_with_set_is_the_key_blamed(tmp_path, capsys):
    assert main(_run(tmp_path, "--set", "edit.delay_s=1e300")) == 2
    err = capsys.readouterr().err
    assert err.startswith("kbsim run: error: --set edit.delay_s=1e300: edit.delay_s: the simulated clock "
                          "would reach"), err
    assert "day_hours" not in err
    # a day too long is still the day's fault
    assert main(_run(tmp_path, "--set", "day_hours=1e12")) == 2
    assert "--set day_hours=1e12: day_hours: the simulated clock would reach" in capsys.readouterr().err


def test_runs_of_other_kbsims_are_noted_each_with_its_own_reason(tmp_path, capsys):
    config = _config(tmp_path, TINY.replace("seeds: 1", "seeds: 4"))
    out = tmp_path / "out"
    assert main(["run", str(config), "--out", str(out), "--no-progress", "--workers", "1"]) == 0
    runs = sorted((out / "tiny" / "runs").iterdir())
    for run_dir, (version, layout) in zip(runs, [("0.0.9", results_layout()), ("0.0.9", results_layout()),
                                                  ("0.0.8", results_layout()), (kbsim.__version__, 1)], strict=True):
        marker = json.loads((run_dir / "run.json").read_text())
        marker.update(kbsim_version=version, layout=layout)
        (run_dir / "run.json").write_text(json.dumps(marker))
    capsys.readouterr()
    assert main(["run", str(config), "--out", str(out), "--no-progress", "--workers", "1"]) == 0
    err = capsys.readouterr().err
    assert f"tiny: 2 runs were written by kbsim 0.0.9 with results layout {results_layout()}" in err
    assert f"tiny: 1 run was written by kbsim 0.0.8 with results layout {results_layout()}" in err
    assert f"tiny: 1 run was written by kbsim {kbsim.__version__} with results layout 1" in err
