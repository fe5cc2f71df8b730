"""Tidy result frames, per-run metrics over stacked tables, the derived frames and the results table."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from kbsim.params import DayParams
from kbsim.report import frames
from kbsim.report import text_tables as report_tables
from kbsim.sim import run_day
from kbsim.stats import metrics_by_run, run_metrics, summarize
from kbsim.units import format_duration

SMALL = {
    "day_hours": 3.0,
    "corpus": {"articles": 60},
    "questions": {"count": 40},
    "saves": {"count": 90},
}


def _params(**overrides) -> DayParams:
    data = {**SMALL, **overrides}
    data["saves"] = {**SMALL["saves"], **overrides.get("saves", {})}
    return DayParams.model_validate(data)


@pytest.fixture(scope="module")
def tables():
    """Zipf and control days without edits, and a Zipf day with edits, 3 seeds each,
    keyed like the runner's tables (scenario and the dotted swept column)."""
    days = []
    for scenario, params, delay in (
        ("zipf", _params(), None),
        ("control", _params(saves={"popularity": "uniform"}), None),
        ("zipf", _params(edit={"delay_s": 600.0}), 600.0),
    ):
        runs = {seed: run_day(params, seed) for seed in (1, 2, 3)}
        days.append(frames.day_tables(runs, scenario=scenario, **{"edit.delay_s": delay}))
    return frames.concat_tables(*days)


@pytest.fixture(scope="module")
def per_run(tables):
    return metrics_by_run(tables, day_s=3 * 3600.0)


def test_run_keys_are_scenario_and_dotted_swept_columns(tables, per_run):
    assert frames.key_columns(tables["citations"]) == ["scenario", "edit.delay_s"]
    runs = per_run.drop_duplicates("run_id")
    assert len(runs) == 9
    # the dotted key survives per run (not lost to a renamed namedtuple field)
    assert sorted(runs["edit.delay_s"].fillna(-1).unique()) == [-1, 600.0]
    assert set(runs["seed"]) == {1, 2, 3}
    by_run = per_run.set_index(["run_id", "name"])["value"]
    edited = runs[runs["edit.delay_s"] == 600.0]["run_id"]
    assert all(by_run[(run, "edits_made")] > 0 for run in edited)
    assert all(by_run[(run, "cursor_expired_rate")] == 0 for run in runs["run_id"])


def test_per_run_metrics_are_run_metrics_of_each_run(tables, per_run):
    run_id = per_run["run_id"].iloc[0]
    mine = {name: t[t["run_id"] == run_id] for name, t in tables.items()}
    expected = run_metrics(mine, 3 * 3600.0)
    got = per_run[per_run["run_id"] == run_id]
    pd.testing.assert_frame_equal(got[list(expected.columns)].reset_index(drop=True), expected)
    assert list(got.columns[:4]) == ["scenario", "edit.delay_s", "seed", "run_id"]


def test_staleness_by_hour_counts_what_was_held_and_stale(tables, per_run):
    summary = summarize(per_run, ["scenario", "edit.delay_s"])
    frame = frames.staleness_by_hour(summary)
    zipf = frame[(frame["scenario"] == "zipf") & frame["edit.delay_s"].isna()]
    assert list(zipf["hour"]) == [1, 2, 3, 1, 2, 3]
    assert list(zipf["kind"]) == ["answers"] * 3 + ["citations"] * 3
    cited = tables["citations"]
    cited = cited[(cited["scenario"] == "zipf") & cited["edit.delay_s"].isna()]
    held = cited["asked_s"] <= 7200.0
    share = (held & (cited["first_stale_s"] <= 7200.0)).sum() / held.sum()
    got = zipf[(zipf["kind"] == "citations") & (zipf["hour"] == 2)]["share"].iloc[0]
    assert got == pytest.approx(share)


def test_cost_by_citations_held_is_the_mean_per_check(tables):
    checks = tables["checks"][tables["checks"]["scenario"] == "control"]
    frame = frames.cost_by_citations_held(checks)
    assert set(frame["strategy"]) == {"title", "reread", "poll"}
    assert len(frame) == 3 * 3 * 2  # strategies x checks x (calls, bytes)
    row = frame[
        (frame["strategy"] == "poll") & (frame["check_index"] == 2) & (frame["measure"] == "calls")
    ]
    mine = checks[(checks["strategy"] == "poll") & (checks["check_index"] == 2)]
    assert row["value"].iloc[0] == pytest.approx(mine["calls"].mean())
    assert row["held"].iloc[0] == pytest.approx(mine["citations_held"].mean())
    with pytest.raises(ValueError, match="empty"):
        frames.cost_by_citations_held(checks.iloc[0:0])


def test_reference_table_and_markdown(per_run):
    summary = summarize(per_run, ["scenario", "edit.delay_s"])
    quiet = summary[summary["edit.delay_s"].isna()]
    edits = summary[summary["edit.delay_s"].notna()].rename(columns={"edit.delay_s": "edit_delay_s"})
    table = report_tables.reference_table(
        {"zipf": quiet[quiet["scenario"] == "zipf"], "control": quiet[quiet["scenario"] == "control"]},
        {"zipf": "Zipf", "control": "Control"},
        {"zipf": edits},
    )
    assert list(table.columns) == ["metric", "Zipf", "Control"]
    assert len(table) == len(report_tables.REFERENCE_ROWS) + 3 + 1
    assert table["metric"].iloc[-4] == "Edits rejected (conflict), delay 10 min"
    assert table["Control"].iloc[-4] == ""  # the edit days are Zipf days here
    assert table["Zipf"].iloc[0].endswith("]") and "%" in table["Zipf"].iloc[0]
    # the replay check is an invariant: how often it held, no interval
    assert table["Zipf"].iloc[-1].startswith("held in ") and "[" not in table["Zipf"].iloc[-1]
    # title recall split by cause: a gone article is always caught, a content change never
    by_label = table.set_index("metric")["Zipf"]
    assert by_label["... of citations gone (unpublished)"].startswith("100.0%")
    assert by_label["... of citations changed in content only"].startswith("0.0%")
    text = report_tables.markdown_table(table)
    lines = text.strip().splitlines()
    assert lines[0] == "| metric | Zipf | Control |" and lines[1] == "| --- | --- | --- |"
    assert len(lines) == len(table) + 2


def test_formatting_helpers():
    fmt = report_tables.format_estimate
    assert fmt(0.1234, 0.1, 0.15, "share") == "12.3% [10.0, 15.0]"
    assert fmt(12345.0, 12000.0, 13000.0, "bytes") == "12.3 kB [12.0, 13.0]"
    assert fmt(float("nan"), 0.0, 1.0, "count") == "n/a"
    assert fmt(0.5, float("nan"), float("nan"), "share") == "50.0%"
    assert [format_duration(s, "page") for s in (5, 60, 600, 3600, 9000)] == [
        "5 s",
        "1 min",
        "10 min",
        "1 h",
        "2.5 h",
    ]


def test_inside_ci():
    rows = pd.DataFrame({"ci_low": [0.1, 0.2], "ci_high": [0.3, 0.4]})
    assert list(frames.inside_ci(rows, np.array([0.2, 0.5]))) == [True, False]


def test_load_results_names_a_missing_directory(tmp_path):
    from kbsim.runner.results import load_results

    with pytest.raises(FileNotFoundError, match="results directory '.*nowhere' does not exist"):
        load_results(tmp_path / "nowhere")


def test_there_is_one_load_results():
    """kbsim.report.frames.load_results, the deprecated alias of 0.2, went in 0.3.0."""
    import kbsim
    import kbsim.runner.results

    assert kbsim.load_results is kbsim.runner.results.load_results
    assert "load_results" not in frames.__all__ and not hasattr(frames, "load_results")


def test_analysis_model_and_pipeline_do_not_import_matplotlib():
    code = (
        "import sys, kbsim.report.frames, kbsim.model.analytic, kbsim.stats, kbsim.report.build\n"
        "assert 'matplotlib' not in sys.modules, 'matplotlib imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
