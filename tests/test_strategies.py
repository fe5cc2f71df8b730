"""Check strategies handed to a day by name, as Ciw hands in ``node_class``.

The study's three are the default, in their order. A fourth, written as one module outside
kbsim (``tests/contrib/fourth_strategy.py``) and named in a config by its import path, runs
on a plain day, on a switched day of two agents over a lossy wire, in a local pool's
workers and a spawned one's, in ``kbsim advise --config ... --verify`` (answered by
simulation, as the output says), and in the ``check_cost`` figure, with no other edit:
nothing is registered, and nothing in kbsim names it.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import multiprocessing
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from kbsim.cli import main
from kbsim.params import DayParams
from kbsim.runner.config import ConfigError
from kbsim.runner.load import config_from_dict
from kbsim.runner.run import run_experiment
from kbsim.runner.worker import make_job, run_batch
from kbsim.sim import StalenessMismatch, StrategyError, run_day
from kbsim.sim.strategies import DEFAULT, resolve
from kbsim.stats import MetricSelector, run_metrics, summarize

CONTRIB = Path(__file__).parent / "contrib"
FOURTH = "fourth_strategy:STRATEGY"
NAMES = [*DEFAULT, FOURTH]
#: A small day with a check every half hour, so the last hour's citations are a part of those held.
DAY = {
    "day_hours": 3,
    "corpus": {"articles": 80},
    "questions": {"count": 40},
    "saves": {"count": 100},
    "checks": {"interval_s": 1800},
    "edit": {"delay_s": 600},
}
#: The same day with the design switches: two agents, each behind a lossy wire.
SWITCHED = {**DAY, "agents": {"count": 2}, "transport": {"loss_rate": 0.2}}
SEED = 3


@pytest.fixture(autouse=True)
def contrib_on_path(monkeypatch):
    """The contributor's folder on ``sys.path`` (as ``PYTHONPATH`` would put it), for this
    process and for the workers it starts."""
    monkeypatch.syspath_prepend(str(CONTRIB))


def with_fourth(day: dict, names=NAMES) -> DayParams:
    return DayParams.model_validate({**day, "checks": {**day["checks"], "strategies": list(names)}}, strict=True)


def others(frame: pd.DataFrame) -> pd.DataFrame:
    return frame[frame["strategy"] != "recent"].reset_index(drop=True)


def test_the_default_strategies_are_the_study_three_in_their_order_and_leave_every_run_id():
    strategies = resolve()
    assert [(s.name, s.label, s.exact) for s in strategies] == [
        ("title", "title lookup", False), ("reread", "re-read", True), ("poll", "poll events", True)]
    assert [s.model is not None for s in strategies] == [True, True, True]
    assert "strategies" not in DayParams().model_dump()["checks"]  # so no stored run id moves
    named = DayParams.model_validate({"checks": {"strategies": list(DEFAULT)}})
    assert resolve(named.checks.strategies) == strategies


def test_a_name_that_names_no_strategy_is_refused_in_one_line_naming_it(tmp_path):
    for names, message in (
        (["title", "nope"], "'nope': no built-in strategy of that name"),
        (["no_such_module.x:S"], "cannot import 'no_such_module.x'"),
        (["fourth_strategy:MISSING"], "fourth_strategy.MISSING is missing, not a kbsim Strategy"),
        (["fourth_strategy:recent_check"], "is function, not a kbsim Strategy"),
        (["reread", "reread"], "reread named twice"),
    ):
        with pytest.raises(StrategyError, match=message):
            resolve(names)
    with pytest.raises(ValueError, match="String should match pattern"):
        DayParams.model_validate({"checks": {"strategies": ["two words"]}})
    config = {"name": "bad", "params": {**DAY, "checks": {"strategies": ["title", "nope"]}}, "seeds": [1]}
    with pytest.raises(ConfigError, match=r"params\.checks\.strategies: strategy 'nope'"):
        config_from_dict(config)
    contrast = {"name": "c", "params": DAY, "seeds": [1, 2], "scenarios": {"a": {}, "b": {"zipf_s": 1.2}},
                "contrasts": [{"metric": "calls_per_check", "strategy": "recent", "baseline": {"scenario": "a"}}]}
    with pytest.raises(ConfigError, match=r"contrasts\[0\]\.strategy: expected one of the day's strategies "
                                          r"\(title, reread, poll\), got 'recent'"):
        config_from_dict(contrast)
    contrast["params"] = {**DAY, "checks": {**DAY["checks"], "strategies": NAMES}}
    assert config_from_dict(contrast).contrasts[0]["strategy"] == "recent"
    with pytest.raises(StrategyError, match="'nope'"):  # a day run without a config is refused before it runs
        run_day(DayParams.model_validate({**DAY, "checks": {"strategies": ["nope"]}}), SEED)


def test_a_fourth_strategy_named_by_its_import_path_runs_on_a_plain_day():
    base = run_day(DayParams.model_validate(DAY), SEED)
    tables = run_day(with_fourth(DAY), SEED)
    checks, citations = tables["checks"], tables["citations"]
    # checked at every check, after the three, which did not change
    assert set(checks.groupby("check_index")["strategy"].agg(tuple)) == {("title", "reread", "poll", "recent")}
    for name in base:
        frame = others(tables[name]) if "strategy" in tables[name] else tables[name]
        pd.testing.assert_frame_equal(frame, base[name])
    # its calls: one read per distinct article cited in the hour before the check
    mine = checks[checks["strategy"] == "recent"].set_index("check_index")
    for _, row in mine.iterrows():
        asked = citations["asked_s"]
        last_hour = citations[(asked > row["time_s"] - 3600) & (asked <= row["time_s"])]
        assert row["calls"] == last_hour["article_id"].nunique()
    assert (mine["flagged"] == mine["true_positives"]).all() and (mine["flagged"] < mine["true_stale"]).any()
    assert (tables["detections"]["strategy"] == "recent").sum() == len(citations)
    # measured like the others, and its rows alone are new
    metrics = run_metrics(tables, 3 * 3600.0, resolve(NAMES))
    pd.testing.assert_frame_equal(others(metrics), run_metrics(base, 3 * 3600.0))
    by_metric = metrics[metrics["strategy"] == "recent"].set_index("metric")["value"]
    assert list(by_metric.index) == [
        "calls_per_check", "bytes_per_check", "calls_per_hour", "bytes_per_hour", "detected_share",
        "detection_latency_s", "detection_latency_p90_s", "stale_exposure"]
    assert 0 < by_metric["detected_share"] < 1.0
    summary = summarize(metrics.assign(scenario="day", seed=SEED, run_id="day-3"))
    assert len(summary[MetricSelector("stale_exposure", strategy="recent").mask(summary)]) == 1


def test_the_fourth_strategy_runs_on_a_switched_day_of_two_agents_over_a_lossy_wire():
    base = run_day(DayParams.model_validate(SWITCHED), SEED)
    tables = run_day(with_fourth(SWITCHED), SEED)
    assert {"intents", "transport", "agent_checks"} <= set(tables)
    assert set(tables["checks"].groupby("check_index")["strategy"].agg(tuple)) == {
        ("title", "reread", "poll", "recent")}
    assert (tables["detections"]["strategy"] == "recent").sum() == len(tables["citations"])
    # it reads through the shared consumer's wire; the wire's draws are its own stream's, so the
    # agents' edits, the desk's questions and the three strategies' rows are as they were
    for name in ("citations", "edits", "saves", "intents", "agent_checks"):
        pd.testing.assert_frame_equal(tables[name], base[name])
    for name in ("checks", "detections"):
        pd.testing.assert_frame_equal(others(tables[name]), base[name])
    # each agent's own checks are the exact strategies': not this one, which is not exact
    assert set(tables["agent_checks"]["strategy"]) == {"reread", "poll"}
    # and without versions it compares the text cited
    no_version = {**SWITCHED, "citation": {"carries_version": False}, "events": {"log_unpublish": False}}
    texts = run_day(with_fourth(no_version), SEED)
    assert (texts["checks"]["strategy"] == "recent").sum() == 6


def test_a_strategy_claimed_exact_is_held_to_the_truth_on_every_day():
    claimed = DayParams.model_validate(
        {**DAY, "checks": {**DAY["checks"], "strategies": [*DEFAULT, "fourth_strategy:CLAIMED_EXACT"]}})
    with pytest.raises(StalenessMismatch, match=r"check \d+: strategy 'recent_exact' disagrees"):
        run_day(claimed, SEED)


def test_each_day_keeps_its_own_state_for_the_strategy():
    import fourth_strategy

    seen = []
    counting = dataclasses.replace(fourth_strategy.STRATEGY,
                                   start=lambda scope: seen.append(scope.now) or {"checks": 0})
    fourth_strategy.COUNTING = counting
    try:
        run_day(with_fourth(DAY, [*DEFAULT, "fourth_strategy:COUNTING"]), SEED)
        run_day(with_fourth(DAY, [*DEFAULT, "fourth_strategy:COUNTING"]), SEED)
    finally:
        del fourth_strategy.COUNTING
    assert seen == [0.0, 0.0]  # once per day, when its checker starts


def _config(tmp_path: Path, name: str, **extra) -> dict:
    return {"name": name, "params": {**DAY, "checks": {**DAY["checks"], "strategies": NAMES}}, "seeds": [1, 2],
            **extra}


def test_workers_of_a_local_pool_and_of_a_spawned_one_import_it_from_the_path_in_the_params(tmp_path):
    result = run_experiment(_config(tmp_path, "fourth"), tmp_path, workers=2, progress=False)
    assert result.ok and result.runs_computed == 2
    summary = result.summary
    assert len(summary[MetricSelector("calls_per_check", strategy="recent").mask(summary)]) == 1
    # a spawned worker starts from nothing: it imports the strategy from its name in the job
    config = config_from_dict(_config(tmp_path, "fourth"))
    run = config.runs()[0]
    with concurrent.futures.ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        [outcome] = pool.submit(run_batch, [make_job(run, {})]).result()
    assert "files" in outcome, outcome.get("error")
    metrics = pd.read_parquet(__import__("io").BytesIO(outcome["files"]["metrics"]))
    assert "recent" in set(metrics["strategy"])


def test_kbsim_advise_answers_the_fourth_strategy_by_simulation_and_says_so(tmp_path, capsys):
    path = tmp_path / "day.yaml"
    path.write_text(yaml.safe_dump(_config(tmp_path, "advise-fourth")))
    code = main(["advise", "--config", str(path), "--max-latency", "40min", "--verify", "--seeds", "2",
                 "--out", str(tmp_path / "out"), "--workers", "2", "--quiet"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "The model has no cost for re-read the last hour's: that is answered by simulation only" in out
    assert "The analytic model has no cost for re-read the last hour's, so the answer is found again" in out
    assert "Simulated (" in out
    swept = next((tmp_path / "out").glob("advise-sim-*/summary.csv"))
    assert "recent" in set(pd.read_csv(swept)["strategy"].dropna())


def test_the_check_cost_figure_draws_the_fourth_strategy_from_the_configs_alone(tmp_path):
    from kbsim.report import figures
    from kbsim.report.experiments import load_experiment

    experiments = tmp_path / "experiments"
    experiments.mkdir()
    day = {**DAY, "edit": {"delay_s": None}, "checks": {"interval_s": 3600, "strategies": NAMES}}
    (experiments / "reference.yaml").write_text(yaml.safe_dump(
        {"name": "reference", "params": day, "seeds": [1, 2], "scenarios": {"zipf": {}}}))
    (experiments / "save_volume_sweep.yaml").write_text(yaml.safe_dump(
        {"name": "save_volume_sweep", "params": day, "seeds": [1, 2], "sweep": {"saves.count": [50, 100]}}))
    exps = {name: load_experiment(name, experiments_dir=experiments, results_dir=tmp_path / "results", workers=2,
                                  progress=False) for name in ("reference", "save_volume_sweep")}
    assert [s.name for s in exps["save_volume_sweep"].strategies] == ["title", "reread", "poll", "recent"]
    figure = figures.figure_check_cost(exps)
    labels = {label for ax in figure.axes for label in ax.get_legend_handles_labels()[1]}
    labels |= {text.get_text() for legend in figure.legends for text in legend.get_texts()}
    assert "re-read the last hour's" in labels
    colours = {line.get_color() for ax in figure.axes for line in ax.get_lines()}
    assert "#e377c2" in colours


def test_nothing_in_kbsim_spells_a_strategys_name_outside_the_strategies_modules():
    """The study's strategies are reached through their modules, never by a literal name."""
    root = Path(__file__).resolve().parents[1] / "kbsim"
    found = subprocess.run(
        ["grep", "-rnE", r"""["'](title|reread|poll)["']""", str(root), "--include=*.py"],
        capture_output=True, text=True, check=False).stdout.splitlines()
    strategy_literals = [
        line for line in found
        if "/sim/strategies/" not in line
        and "strategy" in line.lower()
    ]
    assert strategy_literals == []
    assert sys.modules.get("kbsim.sim.strategies") is not None
