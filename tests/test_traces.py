"""Trace-driven days: a day exported and replayed gives identical tables; a log of saves
replays over a folder of Markdown files; every bad trace names its file, line and column."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from kbsim.inputs import InputError
from kbsim.inputs.traces import write_questions_trace, write_saves_trace
from kbsim.params import DayParams
from kbsim.sim import run_day, simulate_day
from kbsim.sim.export import export_day

REPO = Path(__file__).resolve().parents[1]
SMALL = {"day_hours": 4, "corpus": {"articles": 120}, "questions": {"count": 60}, "saves": {"count": 150}}


def replayed(params: DayParams, saves: Path, questions: Path) -> DayParams:
    data = params.model_dump(mode="json")
    data["saves"]["trace"], data["questions"]["trace"] = str(saves), str(questions)
    return DayParams.model_validate(data)


@pytest.mark.parametrize(
    "overrides",
    [
        # edits an hour after answering run past the end of the day: people keep saving (tail)
        {**SMALL, "edit": {"delay_s": 3600, "share": 0.5}, "event_retention_s": 900},
        {**SMALL, "saves": {"count": 150, "popularity": "uniform"}, "edit": {"delay_s": 600}},
        {"corpus": {"source": "kbsim:sample"}, "day_hours": 4, "questions": {"count": 60}, "saves": {"count": 150},
         "edit": {"delay_s": 1800}},
    ],
    ids=["synthetic-with-tail", "control", "sample-kb"],
)
def test_a_day_exported_and_replayed_gives_identical_tables(tmp_path, overrides):
    params = DayParams.model_validate(overrides)
    tables, log = simulate_day(params, 3, keep_activity=True)
    saves, questions = export_day(log, params.day_s)
    assert len(saves) == params.saves.count and len(questions) == params.questions.count
    write_saves_trace(tmp_path / "saves.csv", saves)
    write_questions_trace(tmp_path / "questions.csv", questions)
    replay = run_day(replayed(params, tmp_path / "saves.csv", tmp_path / "questions.csv"), 3)
    assert set(replay) == set(tables)
    for name in tables:
        pd.testing.assert_frame_equal(replay[name], tables[name], obj=name)
    assert len(tables["edits"]) > 0


@pytest.mark.slow
def test_kbsim_trace_export_round_trip_through_results(tmp_path):
    """A run of `kbsim run`, exported with `kbsim trace export` and run again as a replay."""
    from kbsim.runner.results import load_results

    def kbsim(*args: str) -> subprocess.CompletedProcess:
        run = subprocess.run([sys.executable, "-m", "kbsim", *args], capture_output=True, text=True, cwd=REPO,
                             timeout=300)
        assert run.returncode == 0, run.stderr
        return run

    day = "params: {day_hours: 2, corpus: {articles: 40}, questions.count: 20, saves.count: 40, edit.delay_s: 900}\n"
    (tmp_path / "day.yaml").write_text(day + "seeds: [4]\n")
    kbsim("run", str(tmp_path / "day.yaml"), "--out", str(tmp_path / "results"), "--no-progress", "--workers", "1")
    (run_dir,) = (tmp_path / "results" / "day" / "runs").iterdir()
    kbsim("trace", "export", str(run_dir), "--out", str(tmp_path / "traces"))
    traced = day.replace("}\n", ", saves.trace: traces/saves.csv, questions.trace: traces/questions.csv}\n")
    (tmp_path / "replay.yaml").write_text(traced + "seeds: [4]\n")
    kbsim("run", str(tmp_path / "replay.yaml"), "--out", str(tmp_path / "results"), "--no-progress", "--workers", "1")
    original, replay = load_results(tmp_path / "results" / "day"), load_results(tmp_path / "results" / "replay")
    for name in ("citations", "checks", "detections", "edits", "saves", "metrics"):
        pd.testing.assert_frame_equal(replay[name].drop(columns="run_id"), original[name].drop(columns="run_id"),
                                      obj=name)
    again = subprocess.run([sys.executable, "-m", "kbsim", "trace", "export", str(run_dir), "--out",
                            str(tmp_path / "traces")], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert again.returncode == 2 and "saves.csv exists" in again.stderr


def test_a_folder_of_markdown_files_and_a_saves_log_replay_end_to_end(tmp_path):
    """Your own articles and your own log: saves named by title at ISO times, questions by query."""
    kb = tmp_path / "kb"
    kb.mkdir()
    for name, title, body in [
        ("vpn.md", "Reset your VPN password", "Open the VPN client and choose Reset password."),
        ("printer.md", "Printer shows offline", "Remove the printer and add it again."),
        ("email.md", "Set up email on a phone", "Install the mail app and sign in."),
    ]:
        (kb / name).write_text(f"# {title}\n\n{body}\n")
    (tmp_path / "saves.csv").write_text(
        "time,article,kind,title,content\n"
        "2024-03-12T09:30:00+01:00,Printer shows offline,content,,Restart the print spooler first.\n"
        "2024-03-12T10:00:00+01:00,vpn,content_and_title,Reset your VPN password or PIN,\n"
        "2024-03-12T11:15:00+01:00,Reset your VPN password or PIN,unpublish,,\n")
    (tmp_path / "questions.csv").write_text(
        "time,article,query\n300,Reset your VPN password,\n600,,printer offline\n4000,,email on my phone\n")
    (tmp_path / "day.yaml").write_text(
        "params:\n  corpus: {source: kb}\n  saves.trace: saves.csv\n  questions.trace: questions.csv\n"
        "  day_start: '2024-03-12T09:00:00+01:00'\n  day_hours: 3\n  edit.delay_s: 60\nseeds: 1\n")
    run = subprocess.run([sys.executable, "-m", "kbsim", "run", str(tmp_path / "day.yaml"), "--out",
                          str(tmp_path / "results"), "--no-progress", "--workers", "1"],
                         capture_output=True, text=True, cwd=REPO, timeout=300)
    assert run.returncode == 0, run.stderr
    from kbsim.runner.results import load_results

    tables = load_results(tmp_path / "results" / "day")
    people = tables["saves"].query("actor == 'people'")
    assert people[["time_s", "kind", "article_id"]].values.tolist() == [
        [1800.0, "content", "printer"], [3600.0, "content_and_title", "vpn"],
        [8100.0, "unpublish", "vpn"]]  # each article by its file's path in the folder
    citations = tables["citations"]
    first = citations.groupby("answer_id").first()
    assert first["asked_s"].tolist() == [300.0, 600.0, 4000.0]
    assert first["article_id"].tolist() == ["vpn", "printer", "email"]
    assert first["target_article_id"].tolist() == ["vpn", "", ""]
    checks = tables["checks"].query("strategy == 'reread' and check_index == 3")
    assert checks["true_gone"].tolist() == [(citations["article_id"] == "vpn").sum()]


# -- bad traces ---------------------------------------------------------------------------------


def bad_trace_cases():
    header = "time,article,kind\n"
    return [
        ("saves", "time,kind\n10,art-000001,content\n", r"saves\.csv, line 1, column 'article': missing column"),
        ("saves", header + "10,art-000001,content\n20,art-999999,content\n",
         r"saves\.csv, line 3, column 'article': unknown article 'art-999999'"),
        ("saves", header + "10,art-000001,content\n20,No such title here,content\n",
         r"saves\.csv, line 3, column 'article': unknown article 'No such title here'"),
        ("saves", header + "10,art-000001,content\n99999,art-000002,content\n",
         r"saves\.csv, line 3, column 'time': '99999' is outside the day"),
        ("saves", header + "-1,art-000001,content\n", r"saves\.csv, line 2, column 'time': '-1' is outside the day"),
        ("saves", header + "2026-01-05T08:00:00Z,art-000001,content\n",
         r"saves\.csv, line 2, column 'time': '2026-01-05T08:00:00Z' is outside the day"),
        ("saves", header + "10,art-000001,content\n30,art-000002,content\n20,art-000003,content\n",
         r"saves\.csv, line 4, column 'time': '20' is earlier than the row before .* sorted by time"),
        ("saves", header + "10,art-000001,edit\n", r"saves\.csv, line 2, column 'kind': unknown kind 'edit'"),
        ("saves", header + "10,art-000001,unpublish\n20,art-000001,content\n",
         r"saves\.csv, line 3, column 'article': article 'art-000001' was unpublished at line 2"),
        ("saves", header + "10,art-000001,content\n20,art-000002,nonsense,\n",
         r"saves\.csv, line 3: 4 values where the header names 3 columns"),
        ("questions", "time\n10\n", r"questions\.csv, line 1, column 'article': missing column"),
        ("questions", "time,query\n10,x\n", r"questions\.csv, line 2, column 'query': query of 1 characters"),
        ("questions", "time,article\n10,art-000001\n5,art-000002\n",
         r"questions\.csv, line 3, column 'time': '5' is earlier"),
        ("questions", "time,article\n10,art-000500\n", r"questions\.csv, line 2, column 'article': unknown article"),
    ]


def test_every_bad_trace_names_the_file_line_and_column(tmp_path):
    for i, (kind, text, message) in enumerate(bad_trace_cases()):
        path = tmp_path / str(i) / f"{kind}.csv"
        path.parent.mkdir()
        path.write_text(text)
        params = DayParams.model_validate({"day_hours": 1, "corpus": {"articles": 10}, kind: {"trace": str(path)}})
        with pytest.raises(InputError, match=message):
            run_day(params, 1)


def test_a_bad_trace_stops_kbsim_run_before_anything_is_written(tmp_path):
    (tmp_path / "saves.csv").write_text("time,article,kind\n10,art-000001,content\n20,art-000077,content\n")
    (tmp_path / "day.yaml").write_text("params: {day_hours: 1, corpus.articles: 10, saves.trace: saves.csv}\n"
                                       "seeds: 2\n")
    out = tmp_path / "results"
    run = subprocess.run([sys.executable, "-m", "kbsim", "run", str(tmp_path / "day.yaml"), "--out", str(out)],
                         capture_output=True, text=True, cwd=REPO, timeout=120)
    assert run.returncode == 2
    assert (f"day.yaml: params.saves.trace: {tmp_path / 'saves.csv'}, line 3, column 'article': unknown article "
            "'art-000077'") in run.stderr
    assert not out.exists()
