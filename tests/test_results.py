"""A results folder is verified, not just found: damaged runs are recomputed, results of
another kbsim are not reused, and more seeds or sweep points extend what exists."""

from __future__ import annotations

import dataclasses
import json
import re
import shutil
import textwrap
from pathlib import Path

import pandas as pd
import pytest
from tiny_configs import TINY_SWEEP

import kbsim.runner.executors
import kbsim.runner.run
from kbsim.cli import main
from kbsim.runner.load import load_config
from kbsim.runner.run import RunsFailedError, load_results, run_experiment


def write_config(directory: Path, text: str = TINY_SWEEP, name: str = "tiny") -> Path:
    path = directory / f"{name}.yaml"
    path.write_text(textwrap.dedent(text))
    return path


@pytest.fixture
def in_process(monkeypatch):
    """Runs computed in this process (no pool start-up); the ids of the runs handed out."""
    handed_out: list[str] = []

    def execute(jobs, workers, batch_size, run_day, handle):
        handed_out.extend(job["run_id"] for job in jobs)
        handle(kbsim.runner.run.run_batch(jobs, run_day))
        return 1, len(jobs)

    monkeypatch.setattr(kbsim.runner.executors, "execute_local", execute)
    return handed_out


def files_under(directory: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(directory)): p.read_bytes()
        for p in sorted(directory.rglob("*"))
        if p.is_file() and p.name != ".lock"
    }


def without_wall_times(files: dict[str, bytes]) -> dict[str, bytes]:
    """run.json records the wall time; everything else is identical run to run."""
    return {name: data for name, data in files.items() if not name.endswith("run.json")}


def run_cli(config: Path, out: Path, *extra: str) -> list:
    return ["run", str(config), "--out", str(out), "--no-progress", *extra]


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    """The tiny sweep, run once for the module: (config path, out dir)."""
    root = tmp_path_factory.mktemp("finished")
    config = write_config(root)
    run_experiment(config, root / "out", workers=1, progress=False)
    return config, root / "out"


@pytest.fixture
def done(finished, tmp_path, in_process):
    """A copy of the finished tiny sweep: (config path, out dir, results dir, its files)."""
    config, finished_out = finished
    out = tmp_path / "out"
    shutil.copytree(finished_out, out)
    directory = out / "tiny"
    return config, out, directory, files_under(directory)


def truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def flip_a_byte(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF  # same size, different content
    path.write_bytes(bytes(data))


DAMAGE = {
    "truncated metrics": ("metrics.parquet", truncate, "metrics.parquet is"),
    "corrupt citations": ("citations.parquet", flip_a_byte, "citations.parquet does not match its sha256"),
    "deleted checks": ("checks.parquet", Path.unlink, "checks.parquet is missing"),
    "truncated run.json": ("run.json", truncate, "run.json is not valid JSON"),
    "garbage run.json": ("run.json", lambda p: p.write_bytes(b"\x00\x01not json"), "run.json is not valid JSON"),
    "run.json without files": ("run.json", lambda p: drop_key(p, "files"), "run.json does not list the run's files"),
}


def drop_key(path: Path, key: str) -> None:
    marker = json.loads(path.read_text())
    del marker[key]
    path.write_text(json.dumps(marker))


@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_a_damaged_run_is_recomputed_with_one_line_and_nothing_else_moves(damage, done, capsys, in_process):
    config, out, directory, before = done
    name, spoil, reason = DAMAGE[damage]
    victim = sorted(p.name for p in (directory / "runs").iterdir())[3]
    spoil(directory / "runs" / victim / name)
    stamps = {p.parent.name: p.stat().st_mtime_ns for p in directory.glob("runs/*/run.json")}
    capsys.readouterr()
    in_process.clear()

    assert main(run_cli(config, out)) == 0
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if victim in line]
    assert len(lines) == 1 and reason in lines[0] and "recomputing" in lines[0], err
    assert "Traceback" not in err and "7 already done, 1 to run" in err
    assert in_process == [victim]
    after = files_under(directory)
    assert without_wall_times(after) == without_wall_times(before)  # the same bytes again
    del stamps[victim]
    assert {i: (directory / "runs" / i / "run.json").stat().st_mtime_ns for i in stamps} == stamps


@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_load_results_names_a_damaged_run_and_what_to_run(damage, done):
    from kbsim.runner.results import DamagedResultsError

    config, out, directory, _ = done
    name, spoil, reason = DAMAGE[damage]
    victim = sorted(p.name for p in (directory / "runs").iterdir())[0]
    spoil(directory / "runs" / victim / name)
    with pytest.raises(DamagedResultsError) as caught:
        load_results(directory)
    message = str(caught.value)
    assert victim in message and reason in message
    assert f"kbsim run {config} --out {out}" in message


def test_the_fast_parquet_reader_gives_what_read_table_gives(finished):
    import pyarrow as pa
    import pyarrow.parquet as pq

    from kbsim.runner.results import read_parquet_bytes

    _, out = finished
    files = sorted((out / "tiny" / "runs").glob("*/*.parquet"))
    assert len(files) >= 8 * 6
    for path in files:
        data = path.read_bytes()
        plain = pq.read_table(pa.BufferReader(data))
        assert read_parquet_bytes(data).equals(plain, check_metadata=True), path
        assert read_parquet_bytes(data, columns=["run_id"]).equals(plain.select(["run_id"]), check_metadata=True)


def test_tables_read_one_by_one_equal_load_results(finished):
    """load_results(tables=...) and ResultTables read only what is asked for, and give what
    reading everything gives: the same frames, keys and order."""
    from kbsim.runner.results import ResultTables

    _, out = finished
    everything = load_results(out / "tiny")
    for name in ("metrics", "citations", "saves"):
        some = load_results(out / "tiny", tables=[name])
        assert set(some) == {name, "runs", "timings", "errors"}
        pd.testing.assert_frame_equal(some[name], everything[name])
    lazy = ResultTables(out / "tiny")
    assert list(lazy) == list(everything)
    assert set(lazy._loaded) == {"metrics", "runs", "timings", "errors"}  # nothing else read yet
    for name, frame in everything.items():
        pd.testing.assert_frame_equal(lazy[name], frame)
    kept = ResultTables(out / "tiny", keep=("checks", "metrics", "runs"))
    assert list(kept) == ["checks", "metrics", "runs"]
    with pytest.raises(KeyError):
        kept["citations"]


@pytest.mark.parametrize("damage", ["corrupt citations", "deleted checks"])
def test_a_damaged_table_is_refused_when_it_is_read(damage, done):
    """A table read on first use is verified then: a damaged file of it is the same one-line
    error as load_results gives, naming the run and what to run."""
    from kbsim.runner.results import DamagedResultsError, ResultTables

    config, out, directory, _ = done
    name, spoil, reason = DAMAGE[damage]
    victim = sorted(p.name for p in (directory / "runs").iterdir())[2]
    spoil(directory / "runs" / victim / name)
    lazy = ResultTables(directory)  # metrics are intact: this reads
    assert len(lazy["metrics"]) > 0
    with pytest.raises(DamagedResultsError) as caught:
        lazy[name.removesuffix(".parquet")]
    message = str(caught.value)
    assert victim in message and reason in message and f"kbsim run {config} --out {out}" in message


def test_a_truncated_manifest_is_a_clear_message_and_is_rebuilt_from_the_config(done, capsys, in_process):
    from kbsim.runner.results import DamagedResultsError

    config, out, directory, before = done
    manifest = directory / "manifest.json"
    truncate(manifest)
    with pytest.raises(DamagedResultsError, match=r"manifest.json: is not valid JSON .*truncated\?.*kbsim run"):
        load_results(directory)
    capsys.readouterr()
    in_process.clear()
    assert main(run_cli(config, out)) == 0
    err = capsys.readouterr().err
    assert "manifest.json: is not valid JSON" in err and "rebuilding it from the config" in err
    assert in_process == []  # every run reused
    assert files_under(directory) == before
    manifest.unlink()  # a lost manifest is rebuilt too
    assert main(run_cli(config, out)) == 0
    assert files_under(directory) == before


def set_in_run_json(directory: Path, **values) -> None:
    for path in directory.glob("runs/*/run.json"):
        marker = json.loads(path.read_text())
        marker.update(values)
        path.write_text(json.dumps(marker))


def test_runs_written_by_another_kbsim_are_recomputed_with_a_message(done, capsys, in_process):
    config, out, directory, before = done
    set_in_run_json(directory, kbsim_version="0.0.9")
    capsys.readouterr()
    in_process.clear()
    assert main(run_cli(config, out)) == 0
    err = capsys.readouterr().err
    assert "8 runs were written by kbsim 0.0.9" in err and "recomputing them" in err
    assert len(in_process) == 8
    assert without_wall_times(files_under(directory)) == without_wall_times(before)


def test_runs_of_an_older_layout_without_checksums_are_recomputed(done, capsys, in_process):
    """What kbsim wrote before run.json recorded a layout and checksums."""
    config, out, directory, _ = done
    for path in directory.glob("runs/*/run.json"):
        marker = json.loads(path.read_text())
        for key in ("layout", "kbsim_version", "files", "columns"):
            marker.pop(key, None)
        path.write_text(json.dumps(marker))
    capsys.readouterr()
    in_process.clear()
    assert main(run_cli(config, out)) == 0
    assert "8 runs were written by kbsim (unknown) with results layout 1" in capsys.readouterr().err
    assert len(in_process) == 8


def test_the_results_layout_is_computed_from_the_tables_the_metrics_and_the_strategies(monkeypatch):
    """Nothing to bump by hand: a new metric, a metric's new kind, a new column of a day's table
    or a new check strategy each give another layout; a metric's label (not in any file) does not."""
    import kbsim.runner.results
    import kbsim.sim.tables
    from kbsim.runner.results import results_layout
    from kbsim.stats.metrics import METRICS, Metric

    layout = results_layout()
    assert re.fullmatch(r"[0-9a-f]{12}", layout) and results_layout() == layout
    with monkeypatch.context() as patch:
        patch.setitem(METRICS, "calls_per_check", dataclasses.replace(METRICS["calls_per_check"], label="another"))
        assert results_layout() == layout
        patch.setitem(METRICS, "calls_per_check", dataclasses.replace(METRICS["calls_per_check"], kind="ratio"))
        assert results_layout() != layout
    with monkeypatch.context() as patch:
        patch.setitem(METRICS, "toy_share", Metric("toy_share", "proportion", "a metric of the test's", "share"))
        assert results_layout() != layout
    with monkeypatch.context() as patch:
        patch.setitem(kbsim.sim.tables.DERIVED_COLUMNS, "saves", (("toy_s", "float"),))
        assert results_layout() != layout
    with monkeypatch.context() as patch:  # a new default strategy (a day naming others has another run id)
        patch.setattr(kbsim.runner.results, "DEFAULT_STRATEGIES", (*kbsim.runner.results.DEFAULT_STRATEGIES,
                                                                       "toy"))
        assert results_layout() != layout
    with monkeypatch.context() as patch:  # the switched days' own tables are not in it (stored runs keep theirs)
        patch.setitem(kbsim.sim.tables.SWITCHED_TABLES, "toy", kbsim.sim.tables.RECORDS["edits"])
        assert results_layout() == layout
    assert results_layout() == layout


def test_adding_a_metric_recomputes_every_run_and_load_results_refuses_the_old(done, monkeypatch, capsys, in_process):
    """The path a change of the metrics table takes: add a metric to the registry, and the
    layout (computed, not bumped) changes, so nothing stored before is used."""
    from kbsim.runner.results import DamagedResultsError, results_layout
    from kbsim.stats.metrics import METRICS, Metric

    config, out, directory, before = done
    old = results_layout()
    assert {json.loads(path.read_text())["layout"] for path in directory.glob("runs/*/run.json")} == {old}
    monkeypatch.setitem(METRICS, "toy_share", Metric("toy_share", "proportion", "a metric of the test's", "share"))
    new = results_layout()
    assert new != old
    with pytest.raises(DamagedResultsError, match=f"written by kbsim .* with results layout {old}"):
        load_results(directory)
    capsys.readouterr()
    in_process.clear()
    assert main(run_cli(config, out)) == 0
    err = capsys.readouterr().err
    assert (
        f"8 runs were written by kbsim {kbsim.__version__} with results layout {old} "
        f"(this is kbsim {kbsim.__version__} with layout {new}); recomputing them"
    ) in err
    assert len(in_process) == 8
    for path in directory.glob("runs/*/run.json"):
        assert json.loads(path.read_text())["layout"] == new
    assert json.loads((directory / "manifest.json").read_text())["layout"] == new
    assert len(load_results(directory)["runs"]) == 8
    in_process.clear()
    assert main(run_cli(config, out)) == 0 and in_process == []  # and now they are reused


def test_more_seeds_extend_the_results_and_reuse_every_run(done, capsys, in_process):
    config, out, directory, before = done
    stamps = {p.parent.name: p.stat().st_mtime_ns for p in directory.glob("runs/*/run.json")}
    capsys.readouterr()
    in_process.clear()
    assert main(run_cli(config, out, "--seeds", "1-4")) == 0
    err = capsys.readouterr().err
    assert "16 runs, 8 already done, 8 to run" in err
    assert sorted(in_process) == sorted(r.run_id for r in load_config(config, seeds="3-4").runs())
    assert {i: (directory / "runs" / i / "run.json").stat().st_mtime_ns for i in stamps} == stamps
    after = files_under(directory)
    assert {k: after[k] for k in before if k.startswith("runs/")} == {
        k: v for k, v in before.items() if k.startswith("runs/")
    }  # the runs done are untouched, run.json included
    tables = load_results(directory)
    assert len(tables["runs"]) == 16 and (tables["runs"]["status"] == "done").all()
    assert (pd.read_csv(directory / "summary.csv")["n"] == 4).all()

    # back to two seeds: nothing to compute, and only those runs are summarised and loaded
    in_process.clear()
    assert main(run_cli(config, out)) == 0
    assert in_process == []
    assert "8 runs on disk are not in this config: kept" in capsys.readouterr().err
    assert (pd.read_csv(directory / "summary.csv")["n"] == 2).all()
    assert len(load_results(directory)["runs"]) == 8
    assert files_under(directory)["summary.csv"] == before["summary.csv"]


def test_new_sweep_points_and_changed_parameters_add_runs_and_fresh_still_discards(done, capsys, in_process):
    config, out, directory, _ = done
    in_process.clear()
    assert main(run_cli(config, out, "--set", "sweep.edit.delay_s=[null, 60, 600]")) == 0
    assert "12 runs, 8 already done, 4 to run" in capsys.readouterr().err
    summary = pd.read_csv(directory / "summary.csv")
    assert sorted(summary["edit.delay_s"].fillna(-1).unique()) == [-1, 60, 600]

    in_process.clear()
    assert main(run_cli(config, out, "--set", "saves.count=31")) == 0  # other parameters: other runs
    assert "8 runs, 0 already done, 8 to run" in capsys.readouterr().err
    runs = load_results(directory)["runs"]
    assert set(runs["run_id"]) == {r.run_id for r in load_config(config, ["saves.count=31"]).runs()}
    assert len(list((directory / "runs").iterdir())) == 20

    assert main(run_cli(config, out, "--fresh")) == 0
    assert {p.name for p in (directory / "runs").iterdir()} == {r.run_id for r in load_config(config).runs()}


def test_runs_stored_under_other_labels_are_recomputed_with_this_configs(done, capsys, in_process):
    """The tables carry the scenario name and swept columns, so a run reused under another
    name would be mislabelled: it is computed again under the config's labels."""
    config, out, directory, _ = done
    renamed = write_config(out.parent, TINY_SWEEP.replace("  zipf: {}", "  zipf_renamed: {}"))
    in_process.clear()
    assert main(run_cli(renamed, out)) == 0
    err = capsys.readouterr().err
    assert "4 runs were stored under another config's scenario names or swept columns" in err
    assert len(in_process) == 4
    citations = load_results(directory)["citations"]
    assert set(citations["scenario"]) == {"zipf_renamed", "control"}


def test_the_summary_covers_only_the_configs_runs_when_runs_failed(tmp_path, in_process, monkeypatch):
    """A config whose every run fails leaves no summary of another config's runs behind."""
    config = write_config(tmp_path)
    out = tmp_path / "out"
    run_experiment(config, out, progress=False)
    failing = f"{__name__}:failing_day"
    with pytest.raises(RunsFailedError, match=r"all 8 runs failed; the first, .* raised RuntimeError: no day today"):
        run_experiment(load_config(config, ["saves.count=31"]), out, progress=False, run_day=failing)
    assert not (out / "tiny" / "summary.csv").exists()


def failing_day(params, seed):
    raise RuntimeError("no day today")
