"""Ordinary mistakes get one line naming the path and the problem, exit 2, no traceback,
and nothing half-written: read-only folders, a file in the way, a full disk, a config
that is not UTF-8."""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import shutil
import stat
import sys
import textwrap
from pathlib import Path

import pytest
from tiny_configs import TINY_DAY, TINY_SWEEP

import kbsim.runner.executors
import kbsim.runner.results
import kbsim.runner.run
from kbsim.cli import main

#: linux/capability.h: the capability by which root writes where permission bits say no
CAP_DAC_OVERRIDE = 1
_LINUX_CAPABILITY_VERSION_3 = 0x20080522


def files_under(directory: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(directory)): p.read_bytes()
        for p in sorted(directory.rglob("*"))
        if p.is_file() and p.name != ".lock"
    }


def one_line(err: str) -> str:
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


@contextlib.contextmanager
def dac_override_lowered():
    """This thread without CAP_DAC_OVERRIDE in its effective capabilities, if it held it (Linux).

    Root writes anywhere only through that capability; without it, root is refused a
    folder without write bits like any other owner, yet it still reads its own files
    (the interpreter's, under /root say). The capability stays permitted, so it is raised
    again on the way out. Elsewhere, or without the capability, nothing changes.
    """
    lowered = None
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        header, data = _CapHeader(_LINUX_CAPABILITY_VERSION_3, 0), (_CapData * 2)()
        if libc.capget(ctypes.byref(header), data) == 0 and data[0].effective & (1 << CAP_DAC_OVERRIDE):
            held = data[0].effective
            data[0].effective = held & ~(1 << CAP_DAC_OVERRIDE)
            if libc.capset(ctypes.byref(header), data) == 0:
                lowered = held
    try:
        yield
    finally:
        if lowered is not None:
            data[0].effective = lowered
            if libc.capset(ctypes.byref(header), data) != 0:
                raise OSError(ctypes.get_errno(), "cannot raise CAP_DAC_OVERRIDE again")


@contextlib.contextmanager
def read_only(*folders: Path):
    """The folders (and everything in them) cannot be written by this process.

    Their write bits, and their files', are cleared; as root, :func:`dac_override_lowered` makes root heed
    them. The process keeps its user: becoming nobody instead, who may not read this
    Python's files, made any module first imported inside the block fail to load, so a
    test passed or failed by what earlier tests had imported. If a probe write still
    gets through, the test is skipped, saying so, rather than passing without a refusal.
    """
    modes = {p: p.stat().st_mode for folder in folders for p in (folder, *folder.rglob("*")) if not p.is_symlink()}
    for path, mode in modes.items():
        path.chmod(mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
    try:
        with dac_override_lowered():
            probe = folders[0] / ".probe"
            with contextlib.suppress(PermissionError), open(probe, "w"):
                probe.unlink()
                pytest.skip("this process can write a folder without write bits (root, and its capability kept)")
            yield
    finally:
        for path, mode in modes.items():
            path.chmod(mode)


def write_config(directory: Path, text: str = TINY_SWEEP, name: str = "tiny") -> Path:
    path = directory / f"{name}.yaml"
    path.write_text(textwrap.dedent(text))
    path.chmod(0o644)
    return path


@pytest.fixture
def in_process(monkeypatch):
    """Runs computed in this thread: no pool to start, no worker that gets root's capabilities afresh."""

    def execute(jobs, workers, batch_size, run_day, handle):
        handle(kbsim.runner.run.run_batch(jobs, run_day))
        return 1, len(jobs)

    monkeypatch.setattr(kbsim.runner.executors, "execute_local", execute)


def run_argv(config: Path, out: Path, *extra: str) -> list[str]:
    return ["run", str(config), "--out", str(out), "--no-progress", *extra]


@pytest.fixture
def done(tmp_path, in_process, capsys):
    config = write_config(tmp_path)
    out = tmp_path / "out"
    assert main(run_argv(config, out)) == 0
    capsys.readouterr()
    return config, out, out / "tiny"


def test_a_read_only_results_folder_with_every_run_done_still_summarises(done, capsys):
    config, out, directory = done
    before = files_under(directory)
    with read_only(out):
        assert main(run_argv(config, out)) == 0
    printed = capsys.readouterr()
    assert "stale_citation_share@end" in printed.out and "Traceback" not in printed.err
    assert files_under(directory) == before


def test_a_read_only_results_folder_with_runs_to_do_is_one_line_exit_2(done, capsys):
    config, out, directory = done
    victim = sorted((directory / "runs").iterdir())[0]
    shutil.rmtree(victim)
    before = files_under(directory)
    with read_only(out):
        assert main(run_argv(config, out)) == 2
        assert main(run_argv(config, out, "--seeds", "3")) == 2  # 4 more runs, and the deleted one
        assert main(run_argv(config, out, "--fresh")) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 3 and not any("Traceback" in line for line in err)
    assert err[0].startswith(f"kbsim run: error: {directory}: cannot write the results folder: Permission denied")
    assert "and 1 of 8 runs are to compute; expected a writable results folder" in err[0]
    assert "and 5 of 12 runs are to compute" in err[1]
    assert files_under(directory) == before


def test_a_results_folder_that_cannot_be_created_is_one_line_exit_2(tmp_path, in_process, capsys):
    config = write_config(tmp_path)
    parent = tmp_path / "locked"
    parent.mkdir()
    with read_only(parent):
        assert main(run_argv(config, parent / "out")) == 2
    err = one_line(capsys.readouterr().err)
    assert f"{parent / 'out'}: cannot create the results folder: Permission denied" in err
    assert not (parent / "out").exists()


@pytest.mark.parametrize(
    ("link_to", "problem"),
    [("file/below", errno.ENOTDIR), ("loop", errno.ELOOP)],
    ids=["a-link-under-a-file", "a-link-loop"],
)
def test_a_results_folder_no_one_can_create_is_one_line_exit_2(link_to, problem, tmp_path, in_process, capsys):
    """What a read-only parent shows, checked where permission bits do not matter (root or
    not, any system): through the link the folder's path only looks missing, so it is
    the creating itself that fails."""
    config = write_config(tmp_path)
    (tmp_path / "file").write_text("not a folder")
    (tmp_path / "loop").symlink_to("loop")
    (tmp_path / "link").symlink_to(link_to)
    out = tmp_path / "link" / "out"
    assert main(run_argv(config, out)) == 2
    err = one_line(capsys.readouterr().err)
    assert err == f"kbsim run: error: {out / 'tiny'}: cannot create the results folder: {os.strerror(problem)}\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file", "link", "loop", "tiny.yaml"]
    assert (tmp_path / "file").read_text() == "not a folder"


@pytest.mark.parametrize("where", ["file", "file/below"])
def test_out_pointing_at_a_file_is_one_line_exit_2(where, tmp_path, in_process, capsys):
    config = write_config(tmp_path)
    (tmp_path / "file").write_text("not a folder")
    assert main(run_argv(config, tmp_path / where)) == 2
    err = one_line(capsys.readouterr().err)
    assert f"kbsim run: error: {tmp_path / 'file'}: is a file; expected a folder for the results" in err
    assert (tmp_path / "file").read_text() == "not a folder"


def test_a_full_disk_mid_sweep_is_one_line_and_resumes_cleanly(tmp_path, monkeypatch, capsys):
    """The disk fills up in the middle of a run's files, with a pool running: the sweep
    stops with one line, and the same command afterwards completes it exactly."""
    config = write_config(tmp_path)
    clean = tmp_path / "clean"
    kbsim.runner.run.run_experiment(config, clean, workers=1, progress=False)
    real_write = kbsim.runner.results.atomic_write
    writes = []

    def filling_up(path: Path, data: bytes) -> None:
        writes.append(path)
        if len(writes) < 15:
            return real_write(path, data)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_bytes(data[: len(data) // 2])  # what was written before the disk filled
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(tmp))

    monkeypatch.setattr(kbsim.runner.results, "atomic_write", filling_up)
    out = tmp_path / "out"
    capsys.readouterr()
    assert main(run_argv(config, out, "--workers", "1", "--batch-size", "1")) == 2
    err = one_line(capsys.readouterr().err.split("\n", 1)[1])  # after the "8 runs ... to run" line
    assert f"{out / 'tiny' / 'runs'}" in err and "No space left on device" in err
    monkeypatch.setattr(kbsim.runner.results, "atomic_write", real_write)
    done = len(list((out / "tiny" / "runs").glob("*/run.json")))
    assert 1 <= done < 8

    assert main(run_argv(config, out, "--workers", "1")) == 0
    assert f"8 runs, {done} already done, {8 - done} to run" in capsys.readouterr().err
    assert not list(out.rglob("*.tmp"))
    again, expected = files_under(out / "tiny"), files_under(clean / "tiny")
    assert again.keys() == expected.keys()
    assert {k: v for k, v in again.items() if not k.endswith("run.json")} == {
        k: v for k, v in expected.items() if not k.endswith("run.json")
    }


def test_a_config_that_is_not_utf8_is_one_line_exit_2(tmp_path, capsys):
    path = tmp_path / "latin1.yaml"
    path.write_bytes("# r\xe9sum\xe9 of the study\n".encode("latin-1") + TINY_DAY.encode())
    assert main(["run", str(path), "--out", str(tmp_path / "out")]) == 2
    err = one_line(capsys.readouterr().err)
    assert f"{path}: not UTF-8 text (byte 0xe9 at offset 3); expected a YAML file saved as UTF-8" in err
    assert not (tmp_path / "out").exists()


# ------------------------------------------------------------------ figures

EDIT_DELAY_SWEEP = """\
params:
  day_hours: 2
  corpus: {articles: 40}
  questions: {count: 20}
  saves: {count: 40}
seeds: 2
scenarios:
  zipf: {}
  control: {saves.popularity: uniform}
sweep:
  edit.delay_s: [5, 600]
"""


def figures_argv(root: Path, figures: Path) -> list[str]:
    return [
        "figures", "--only", "edit_rejections", "--experiments", str(root / "experiments"),
        "--results", str(root / "results"), "--figures", str(figures), "--workers", "1",
    ]  # fmt: skip


def test_figures_from_a_read_only_results_folder(tmp_path, in_process, capsys):
    (tmp_path / "experiments").mkdir()
    config = write_config(tmp_path / "experiments", EDIT_DELAY_SWEEP, name="edit_delay_sweep")
    results = tmp_path / "results"
    kbsim.runner.run.run_experiment(config, results, progress=False)
    (tmp_path / "figures").mkdir()
    before = files_under(results)
    fresh = tmp_path / "fresh_figures"
    fresh.mkdir()
    capsys.readouterr()

    with read_only(results):  # every run done: the figures are still drawn
        assert main(figures_argv(tmp_path, fresh)) == 0
    assert (fresh / "edit_rejections.png").stat().st_size > 10_000
    assert files_under(results) == before

    with read_only(results, tmp_path / "figures"):  # nowhere to draw: one line
        capsys.readouterr()
        assert main(figures_argv(tmp_path, tmp_path / "figures")) == 2
    err = one_line(capsys.readouterr().err)
    assert f"kbsim figures: {tmp_path / 'figures'}" in err and "Permission denied" in err

    shutil.rmtree(sorted((results / "edit_delay_sweep" / "runs").iterdir())[0])
    with read_only(results):  # a run missing: it cannot be written, one line
        assert main(figures_argv(tmp_path, fresh)) == 2
    err = one_line(capsys.readouterr().err)
    assert f"kbsim figures: {results / 'edit_delay_sweep'}: cannot write the results folder" in err
    assert "1 of 8 runs are to compute" in err
