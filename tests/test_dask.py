"""The Dask executor on a real cluster (a scheduler and two workers as subprocesses)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from tiny_configs import TINY_SWEEP

from kbsim.cli import main
from kbsim.runner.run import load_results, run_experiment

ROOT = Path(__file__).resolve().parents[1]
DASK = str(Path(sys.executable).parent / "dask")

TINY = TINY_SWEEP.replace("seeds: 2", "seeds: 3")


def result_files(directory: Path) -> dict[str, bytes]:
    """Every file's bytes, but run.json (it records the wall time)."""
    return {
        str(p.relative_to(directory)): p.read_bytes()
        for p in sorted(directory.rglob("*"))
        if p.is_file() and p.name not in (".lock", "run.json")
    }


@pytest.fixture
def dask_scheduler(tmp_path):
    """``dask scheduler`` and two single-threaded ``dask worker`` processes on 127.0.0.1."""
    from distributed import Client

    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    scheduler_file = tmp_path / "scheduler.json"
    log = open(tmp_path / "dask.log", "w")  # noqa: SIM115 (closed in finally)
    processes: list[subprocess.Popen] = []

    def start(*argv: str) -> None:
        processes.append(subprocess.Popen([DASK, *argv], env=env, stdout=log, stderr=subprocess.STDOUT))

    try:
        start("scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
              "--scheduler-file", str(scheduler_file))  # fmt: skip
        deadline = time.monotonic() + 60
        while not scheduler_file.exists() or not scheduler_file.read_text().strip():
            assert processes[0].poll() is None, (tmp_path / "dask.log").read_text()
            assert time.monotonic() < deadline, "dask scheduler did not start"
            time.sleep(0.05)
        address = json.loads(scheduler_file.read_text())["address"]
        for i in range(2):
            start("worker", address, "--nthreads", "1", "--host", "127.0.0.1", "--no-dashboard",
                  "--no-nanny", "--name", f"kbsim-test-{i}",
                  "--local-directory", str(tmp_path / f"worker-{i}"))  # fmt: skip
        with Client(address, timeout="30s") as client:
            client.wait_for_workers(2, timeout=60)
        yield address
    finally:
        for process in reversed(processes):
            process.terminate()
        for process in processes:
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        log.close()


@pytest.mark.slow
def test_dask_clusters_give_the_local_executors_results(tmp_path, dask_scheduler, capsys):
    from distributed import Client

    config = tmp_path / "tiny.yaml"
    config.write_text(textwrap.dedent(TINY))
    local = run_experiment(config, tmp_path / "local", workers=2, progress=False)
    assert local.runs_computed == 12

    argv = ["run", str(config), "--out", str(tmp_path / "dask"), "--scheduler", dask_scheduler]
    assert main([*argv, "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert "12 runs (0 reused, 12 computed, 0 failed)" in err and "with dask x2" in err
    with Client(dask_scheduler) as client:
        batches = client.run_on_scheduler(
            lambda dask_scheduler: sum(
                count
                for prefix, group in dask_scheduler.task_prefixes.items()
                if prefix.startswith("kbsim-batch")
                for count in group.state_counts.values()
            )
        )
        workers = client.run(lambda: os.getpid())
    assert batches >= 2  # the runs went to the cluster, in batched tasks
    assert os.getpid() not in workers.values()

    dask_files = result_files(tmp_path / "dask" / "tiny")
    assert dask_files == result_files(local.directory)
    assert len([name for name in dask_files if name.endswith("citations.parquet")]) == 12
    tables = load_results(tmp_path / "dask" / "tiny")
    assert (tables["runs"]["status"] == "done").all()

    # without --scheduler the dask executor starts (and stops) its own LocalCluster
    own = run_experiment(config, tmp_path / "own", executor="dask", workers=2, progress=False)
    assert (own.executor, own.workers, own.runs_computed) == ("dask", 2, 12)
    assert result_files(own.directory) == dask_files
