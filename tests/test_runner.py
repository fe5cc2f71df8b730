"""The experiment runner: tidy per-run Parquet, summary, resume, failures, real interrupts."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pandas as pd
import pytest
from tiny_configs import TINY_SWEEP

import kbsim.runner.executors
import kbsim.runner.run
from kbsim.cli import main
from kbsim.params import DayParams
from kbsim.runner.load import config_from_dict, load_config
from kbsim.runner.results import ResultsDirectory
from kbsim.runner.run import ResultsConflictError, in_seed_order, load_results, run_experiment
from kbsim.sim import run_day
from kbsim.stats import summarize

ROOT = Path(__file__).resolve().parents[1]
TABLES = ("citations", "checks", "edits", "metrics")

TINY = TINY_SWEEP


def write_config(directory: Path, text: str = TINY, name: str = "tiny") -> Path:
    path = directory / f"{name}.yaml"
    path.write_text(textwrap.dedent(text))
    return path


def flaky_run_day(params, seed):
    """The real day, except that seed 2 always fails (run in pool workers by import path)."""
    if seed == 2:
        raise RuntimeError(f"boom for seed {seed}")
    return run_day(params, seed)


def files_under(directory: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(directory)): p.read_bytes()
        for p in sorted(directory.rglob("*"))
        if p.is_file() and p.name != ".lock"
    }


def sorted_tables(tables: dict[str, pd.DataFrame]) -> dict[str, pd.DataFrame]:
    keys = {
        "citations": ["run_id", "answer_id", "position"],
        "checks": ["run_id", "check_index", "strategy"],
        "edits": ["run_id", "answer_id"],
        "metrics": ["run_id", "name"],
        "runs": ["run_id"],
    }
    return {name: tables[name].sort_values(by).reset_index(drop=True) for name, by in keys.items()}


def test_sweep_writes_tidy_tables_manifest_and_summary(tmp_path):
    config = load_config(write_config(tmp_path))
    result = run_experiment(config, tmp_path / "out", workers=2, progress=False)
    directory = tmp_path / "out" / "tiny"
    runs = config.runs()
    assert (result.directory, result.runs_total, result.runs_computed) == (directory, 8, 8)
    assert result.failures == [] and result.runs_reused == 0

    manifest = json.loads((directory / "manifest.json").read_text())
    assert manifest["fingerprint"] == config.fingerprint()
    assert [r["run_id"] for r in manifest["runs"]] == [r.run_id for r in runs]
    files = files_under(directory)
    assert not [name for name in files if name.endswith(".tmp")]
    for run in runs:
        for name in (*TABLES, "saves"):
            assert f"runs/{run.run_id}/{name}.parquet" in files
        marker = json.loads(files[f"runs/{run.run_id}/run.json"])
        assert (marker["scenario"], marker["seed"]) == (run.scenario, run.seed)

    tables = load_results(directory)
    for name in TABLES:
        frame = tables[name]
        assert list(frame.columns[:2]) == ["scenario", "run_id"] and "edit.delay_s" in frame
        labels = frame.groupby("run_id")[["scenario", "edit.delay_s"]].first()
        for run in runs:
            if run.run_id in labels.index:
                scenario, delay = labels.loc[run.run_id]
                assert scenario == run.scenario
                assert (pd.isna(delay) and run.point["edit.delay_s"] is None) or (delay == run.point["edit.delay_s"])
    assert set(tables["metrics"]["run_id"]) == {r.run_id for r in runs}

    # each run's table is exactly run_day(params, seed) with the labels in front
    run = runs[-1]
    mine = tables["citations"][tables["citations"]["run_id"] == run.run_id]
    mine = mine.drop(columns=["scenario", "run_id", "edit.delay_s"]).reset_index(drop=True)
    direct = run_day(run.params, run.seed)["citations"]
    pd.testing.assert_frame_equal(mine, direct, check_dtype=False)

    summary = result.summary
    assert list(summary.columns) == [
        "scenario", "edit.delay_s", "metric", "at_s", "at_end", "strategy", "subset", "name",
        "value", "ci_low", "ci_high", "se", "seeds", "n", "successes", "trials", "method",
    ]  # fmt: skip
    points = summary[["scenario", "edit.delay_s"]].drop_duplicates()
    assert [tuple(p) for p in points.fillna(-1).itertuples(index=False)] == [
        ("zipf", -1), ("zipf", 60.0), ("control", -1), ("control", 60.0),
    ]  # fmt: skip
    assert (summary["n"] == 2).all() and (summary["seeds"] == 2).all()
    metrics = tables["metrics"]
    control_60 = metrics[(metrics["scenario"] == "control") & (metrics["edit.delay_s"] == 60)]
    expected = summarize(control_60, by=["scenario"]).drop(columns="scenario")
    got = summary[(summary["scenario"] == "control") & (summary["edit.delay_s"] == 60)]
    pd.testing.assert_frame_equal(
        got.drop(columns=["scenario", "edit.delay_s"]).reset_index(drop=True),
        expected.reset_index(drop=True),
        check_dtype=False,
    )
    assert "rejection_rate" in set(got["metric"])
    on_disk = pd.read_csv(directory / "summary.csv")
    assert list(on_disk.columns) == list(summary.columns) and len(on_disk) == len(summary)

    # same config, other workers and batch size: byte-identical results
    again = run_experiment(config, tmp_path / "again", workers=1, batch_size=3, progress=False).directory
    assert files_under(again).keys() == files.keys()
    for name, data in files_under(again).items():
        if not name.endswith("run.json"):  # run.json holds the wall time
            assert data == files[name], name


def test_rerun_computes_only_missing_runs(tmp_path):
    path = write_config(tmp_path)
    first = run_experiment(path, tmp_path / "out", workers=2, progress=False)
    before = sorted_tables(load_results(first.directory))
    runs_dir = first.directory / "runs"
    ids = sorted(p.name for p in runs_dir.iterdir())
    gone, unmarked, kept = ids[0], ids[1], ids[2:]
    for p in (runs_dir / gone).iterdir():
        p.unlink()
    (runs_dir / gone).rmdir()
    (runs_dir / unmarked / "run.json").unlink()  # tables written, marker not: incomplete
    (runs_dir / unmarked / ".citations.parquet.999.tmp").write_bytes(b"half")
    stamps = {i: (runs_dir / i / "run.json").stat().st_mtime_ns for i in kept}

    second = run_experiment(path, tmp_path / "out", workers=2, progress=False)
    assert (second.runs_reused, second.runs_computed, second.failures) == (6, 2, [])
    assert {i: (runs_dir / i / "run.json").stat().st_mtime_ns for i in kept} == stamps
    assert not list(first.directory.rglob("*.tmp"))
    after = sorted_tables(load_results(second.directory))
    for name in before:
        pd.testing.assert_frame_equal(after[name], before[name])
    pd.testing.assert_frame_equal(second.summary, first.summary)


def test_a_current_summary_is_reused_unread_and_a_changed_one_recomputed(tmp_path, monkeypatch):
    """summary.key names what summary.csv and contrasts.csv were computed from: a rerun that
    changes nothing summarises nothing (until someone asks for the frame), while a tampered
    summary.csv, or a run recomputed, is summarised and written anew."""
    contrast = "contrasts:\n  - {metric: stale_citation_share, baseline: {scenario: control}}\n"
    path = write_config(tmp_path, TINY + contrast)
    first = run_experiment(path, tmp_path / "out", workers=1, progress=False)
    directory = first.directory
    assert len(first.contrasts) and len(first.summary)
    stored = {name: (directory / name).read_bytes() for name in ("summary.csv", "contrasts.csv", "summary.key")}
    summarised = []
    real = kbsim.runner.run._summarize
    monkeypatch.setattr(kbsim.runner.run, "_summarize", lambda *a: summarised.append(1) or real(*a))

    again = run_experiment(path, tmp_path / "out", workers=1, progress=False)
    assert summarised == []
    pd.testing.assert_frame_equal(again.summary, first.summary)  # computed now, when asked for
    pd.testing.assert_frame_equal(again.contrasts, first.contrasts)
    assert summarised == [1]

    (directory / "summary.csv").write_bytes(stored["summary.csv"].replace(b"zipf", b"zipg", 1))
    run_experiment(path, tmp_path / "out", workers=1, progress=False)
    assert len(summarised) == 2
    assert {name: (directory / name).read_bytes() for name in stored} == stored

    run_id = sorted(p.name for p in (directory / "runs").iterdir())[0]
    (directory / "runs" / run_id / "run.json").unlink()
    (directory / "contrasts.csv").unlink()
    third = run_experiment(path, tmp_path / "out", workers=1, progress=False)
    assert (third.runs_computed, len(summarised)) == (1, 3)
    assert {name: (directory / name).read_bytes() for name in stored} == stored

    with ResultsDirectory(directory).read_lock():  # another reader (a notebook) does not stop this one
        assert run_experiment(path, tmp_path / "out", workers=1, progress=False).runs_reused == 8


def test_readers_share_the_results_lock_and_a_writer_excludes_them(tmp_path):
    """Two readers hold the folder's lock at once; a writer waits for them to let go, and while
    it writes a reader waits and a second writer is refused at once."""
    import threading

    folder = ResultsDirectory(tmp_path)
    events = {name: threading.Event() for name in ("reader", "writer", "late reader")}
    release = {name: threading.Event() for name in events}

    def hold(name, lock):
        with lock():
            events[name].set()
            release[name].wait(5)

    def start(name, lock):
        thread = threading.Thread(target=hold, args=(name, lock), daemon=True)
        thread.start()
        return thread

    with folder.read_lock():
        reader = start("reader", folder.read_lock)
        assert events["reader"].wait(2)  # both readers hold it
        writer = start("writer", folder.lock)
        assert not events["writer"].wait(0.2)  # the writer waits for the readers
        release["reader"].set()
        reader.join(2)
    assert events["writer"].wait(2)
    late = start("late reader", folder.read_lock)
    assert not events["late reader"].wait(0.2)  # a reader waits for the writer
    with pytest.raises(ResultsConflictError, match="another kbsim run is writing"), folder.lock():
        pass
    release["writer"].set()
    writer.join(2)
    assert events["late reader"].wait(2)
    release["late reader"].set()
    late.join(2)


def test_a_folder_kbsim_did_not_write_is_neither_used_nor_deleted(tmp_path, capsys):
    """A changed config extends its results (tests/test_results.py); what is still refused is
    a results folder holding someone else's files and no manifest, with or without --fresh."""
    path = write_config(tmp_path)
    out = tmp_path / "out"
    (out / "tiny").mkdir(parents=True)
    (out / "tiny" / "notes.txt").write_text("mine")
    assert main(["run", str(path), "--out", str(out), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "holds files kbsim did not write (notes.txt) and no manifest.json" in err
    assert main(["run", str(path), "--out", str(out), "--no-progress", "--fresh"]) == 2
    assert "refusing to delete it" in capsys.readouterr().err
    assert sorted(p.name for p in (out / "tiny").iterdir()) == ["notes.txt"]
    with pytest.raises(ResultsConflictError):
        run_experiment(path, out, progress=False)


def test_failing_runs_are_recorded_and_the_sweep_goes_on(tmp_path, monkeypatch, capsys):
    path = write_config(tmp_path)
    flaky = f"{__name__}:flaky_run_day"
    real_run_experiment = kbsim.runner.run.run_experiment

    def with_flaky_day(*args, **kwargs):
        return real_run_experiment(*args, run_day=flaky, **kwargs)

    monkeypatch.setattr(kbsim.runner.run, "run_experiment", with_flaky_day)
    out = tmp_path / "out"
    assert main(["run", str(path), "--out", str(out), "--workers", "2", "--no-progress"]) == 1
    err = capsys.readouterr().err
    assert "4 failed" in err and "RuntimeError: boom for seed 2" in err
    directory = out / "tiny"
    config = load_config(path)
    failed = {r.run_id: r for r in config.runs() if r.seed == 2}
    records = {p.stem: json.loads(p.read_text()) for p in (directory / "errors").iterdir()}
    assert records.keys() == failed.keys()
    for run_id, record in records.items():
        assert record["seed"] == 2 and record["scenario"] == failed[run_id].scenario
        assert record["params"] == failed[run_id].params.model_dump(mode="json")
        assert "RuntimeError: boom for seed 2" in record["traceback"]
    tables = load_results(directory)
    assert tables["runs"]["status"].value_counts().to_dict() == {"done": 4, "failed": 4}
    assert sorted(tables["errors"]["run_id"]) == sorted(failed)
    assert (pd.read_csv(directory / "summary.csv")["n"] == 1).all()

    monkeypatch.setattr(kbsim.runner.run, "run_experiment", real_run_experiment)
    assert main(["run", str(path), "--out", str(out), "--workers", "2", "--no-progress"]) == 0
    assert "4 already done, 4 to run" in capsys.readouterr().err
    assert not list((directory / "errors").iterdir())
    assert (pd.read_csv(directory / "summary.csv")["n"] == 2).all()


# ------------------------------------------------------------ real interrupts

SLOWER = """\
params:
  day_hours: 4
  corpus: {articles: 60}
  questions.count: 40
  saves.count: 80
seeds: 6
scenarios:
  zipf: {}
  control: {saves.popularity: uniform}
sweep:
  edit.delay_s: [null, 5, 600]
"""


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    directory = tmp_path_factory.mktemp("uninterrupted")
    path = write_config(directory, SLOWER, name="slower")
    result = run_experiment(path, directory / "out", workers=2, progress=False)
    assert result.runs_computed == 36
    return sorted_tables(load_results(result.directory)), result.summary


def kbsim_run(config: Path, out: Path) -> subprocess.Popen:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    argv = [sys.executable, "-m", "kbsim", "run", str(config), "--out", str(out)]
    argv += ["--workers", "1", "--batch-size", "1"]
    return subprocess.Popen(
        argv,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group, like a command in a terminal
    )


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL])
def test_interrupted_sweep_resumes_to_the_uninterrupted_result(signum, tmp_path, uninterrupted):
    config = write_config(tmp_path, SLOWER, name="slower")
    out = tmp_path / "out"
    runs_dir = out / "slower" / "runs"
    process = kbsim_run(config, out)
    try:
        deadline = time.monotonic() + 60
        while len(list(runs_dir.glob("*/run.json"))) < 3:
            assert process.poll() is None, process.communicate()
            assert time.monotonic() < deadline
            time.sleep(0.005)
        if signum == signal.SIGINT:
            os.killpg(process.pid, signum)  # Ctrl-C: the whole group, pool workers included
        else:
            process.send_signal(signum)  # kill PID
        _, err = process.communicate(timeout=30)
    finally:
        process.kill()
    assert process.returncode == (-signum if signum == signal.SIGKILL else 128 + signum), err
    if signum != signal.SIGKILL:
        assert "rerun the same command to resume" in err
        assert not list(out.rglob("*.tmp"))  # nothing half-written
    json.loads((out / "slower" / "manifest.json").read_text())  # complete, parseable
    done = {p.parent.name for p in runs_dir.glob("*/run.json")}
    assert 3 <= len(done) < 36, "the signal must land part-way through the sweep"
    stamps = {i: (runs_dir / i / "run.json").stat().st_mtime_ns for i in done}

    process = kbsim_run(config, out)
    _, err = process.communicate(timeout=120)
    assert process.returncode == 0, err
    assert f"36 runs, {len(done)} already done, {36 - len(done)} to run" in err
    assert {i: (runs_dir / i / "run.json").stat().st_mtime_ns for i in done} == stamps
    assert not list(out.rglob("*.tmp"))
    tables = sorted_tables(load_results(out / "slower"))
    expected, expected_summary = uninterrupted
    assert tables["runs"]["run_id"].is_unique and (tables["runs"]["status"] == "done").all()
    for name in expected:
        pd.testing.assert_frame_equal(tables[name], expected[name])
    pd.testing.assert_frame_equal(pd.read_csv(out / "slower" / "summary.csv"), _csv(expected_summary))


def _csv(frame: pd.DataFrame) -> pd.DataFrame:
    import io

    return pd.read_csv(io.StringIO(frame.to_csv(index=False)))


class Terminal:
    """A stand-in stderr that says it is a terminal and keeps what is written."""

    def __init__(self) -> None:
        self.text = ""

    def isatty(self) -> bool:
        return True

    def write(self, text: str) -> int:
        self.text += text
        return len(text)

    def flush(self) -> None:
        pass


def test_progress_bar_only_on_a_terminal(tmp_path, monkeypatch, capsys):
    path = write_config(tmp_path, TINY.replace("seeds: 2", "seeds: 1"))
    run_experiment(path, tmp_path / "quiet", workers=1, progress=True)
    assert capsys.readouterr().err == ""  # pytest's stderr is not a terminal
    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    run_experiment(path, tmp_path / "bar", workers=1, progress=True)
    assert "tiny: 100%" in terminal.text and "4/4 [" in terminal.text and "run/s]" in terminal.text


def test_runs_of_one_seed_are_computed_next_to_each_other():
    """Same-seed runs share a starting knowledge base, so the runner schedules them together."""
    config = config_from_dict(
        {
            "name": "order",
            "seeds": [3, 1, 2],
            "scenarios": {"zipf": {}, "control": {"saves": {"popularity": "uniform"}}},
            "sweep": {"edit.delay_s": [60, 600]},
        }
    )
    runs = config.runs()
    ordered = in_seed_order(runs)
    assert sorted(r.run_id for r in ordered) == sorted(r.run_id for r in runs)
    assert [r.seed for r in ordered] == [1] * 4 + [2] * 4 + [3] * 4
    for seed in (1, 2, 3):  # config order (scenario, then point) within a seed
        assert [r.run_id for r in ordered if r.seed == seed] == [r.run_id for r in runs if r.seed == seed]


def test_the_runner_hands_out_the_runs_of_a_seed_together(tmp_path, monkeypatch):
    handed_out = []

    def in_process(jobs, workers, batch_size, run_day, handle):
        handed_out.extend(job["seed"] for job in jobs)
        handle(kbsim.runner.run.run_batch(jobs, run_day))
        return 1, len(jobs)

    monkeypatch.setattr(kbsim.runner.executors, "execute_local", in_process)
    config = load_config(write_config(tmp_path))
    assert [r.seed for r in config.runs()] == [1, 2] * 4  # config order alternates seeds
    result = run_experiment(config, tmp_path / "out", progress=False)
    assert result.ok and result.runs_computed == 8
    assert handed_out == [1] * 4 + [2] * 4


TIDY_JOBS = [
    {"scenario": "zipf", "run_id": "zipf-1", "seed": 1, "columns": []},
    {"scenario": "zipf", "run_id": "zipf-s0.9-1", "seed": 1, "columns": [["zipf_s", 0.9, "float64"]]},
    {
        "scenario": "control",
        "run_id": "control-7",
        "seed": 7,
        "columns": [
            ["edit.delay_s", None, "float64"],
            ["saves.count", None, "Int64"],
            ["checks.interval_s", 3600, "int64"],
            ["saves.replace_unpublished", True, "boolean"],
            ["ranking", "by_id", "str"],
            ["label", None, "str"],
            ["score", float("nan"), "float64"],
        ],
    },
]


@pytest.mark.parametrize("job", TIDY_JOBS, ids=["no-sweep", "float", "every-dtype"])
def test_tidy_tables_are_written_byte_for_byte_as_the_plain_path_writes_them(job):
    """The worker's Parquet writer (_TidyWriter) against _parquet_bytes(_tidy(...)): every
    table of a day with edits, its metrics, empty tables, a table with a column the front
    replaces and one with an index of its own."""
    from kbsim.runner.worker import _parquet_bytes, _tidy, _TidyWriter
    from kbsim.stats.metrics import run_metrics

    tables = run_day(DayParams(edit={"delay_s": 60}), 3)
    frames = dict(tables)
    frames["empty"] = tables["edits"].iloc[:0]
    frames["no columns"] = pd.DataFrame(index=range(3))
    frames["reindexed"] = tables["saves"].iloc[5:40:3]
    frames["clashing"] = tables["checks"].assign(scenario="stale", run_id=0)
    for with_seed, named in ((False, frames), (True, {"metrics": run_metrics(tables, day_s=28800.0)})):
        writer = _TidyWriter(job, with_seed)
        for name, frame in named.items():
            assert writer.parquet_bytes(frame) == _parquet_bytes(_tidy(frame, job, with_seed)), name
    with_attrs = tables["checks"].copy()
    with_attrs.attrs["note"] = "kept"
    assert _TidyWriter(job, False).parquet_bytes(with_attrs) == _parquet_bytes(_tidy(with_attrs, job))
