"""Everything kbsim writes is written atomically (issue 24, part 4).

A write to a temporary file beside the target, fsynced, then renamed: a disk that fills
up half-way, or a read-only folder, leaves the previous file whole and no temporary
file, and the error is one line naming the target. Held for the primitive
(``kbsim.files``) and for each writer: figures, pages, the README block, notebooks,
trace files (``kbsim trace export``) and ``kbsim corpus sample``.
"""

from __future__ import annotations

import errno
import os
import stat
import subprocess
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

import kbsim.files  # noqa: E402
from kbsim.cli import main  # noqa: E402
from kbsim.files import FileWriteError, atomic_write_bytes, atomic_write_text  # noqa: E402
from kbsim.inputs.corpus import write_corpus  # noqa: E402
from kbsim.inputs.traces import SaveRow, write_saves_trace  # noqa: E402
from kbsim.report import plots  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
ROOT = os.geteuid() == 0  # root writes into read-only folders: that case is then skipped


class _FillingDisk:
    """The helper's temporary file on a disk that fills up after ``room`` more bytes: the
    bytes that fit are written, then ENOSPC (what cut a good 109 kB figure to 50 kB)."""

    def __init__(self, monkeypatch, room: int) -> None:
        self.room = room
        disk, real_open = self, open

        class Filling:
            def __init__(self, handle) -> None:
                self._handle = handle

            def write(self, data) -> int:
                if len(data) > disk.room:
                    self._handle.write(bytes(data[: disk.room]))
                    self._handle.flush()
                    disk.room = 0
                    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
                disk.room -= len(data)
                return self._handle.write(data)

            def __getattr__(self, name):
                return getattr(self._handle, name)

            def __enter__(self):
                return self

            def __exit__(self, *exc):
                self._handle.close()

        def opening(file, mode="r", *args, **kwargs):
            handle = real_open(file, mode, *args, **kwargs)
            return Filling(handle) if isinstance(file, int) and "w" in mode else handle

        monkeypatch.setattr(kbsim.files, "open", opening, raising=False)


def _read_only(monkeypatch, folder: Path) -> None:
    """Creating a file in ``folder`` fails as in a read-only folder, for root too (the
    permission bits do not stop root)."""
    real_open = os.open

    def opening(path, flags, *args, **kwargs):
        if flags & os.O_CREAT and Path(os.fsdecode(path)).parent == folder:
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), os.fsdecode(path))
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(kbsim.files.os, "open", opening)


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


def test_a_full_disk_mid_write_leaves_the_previous_file_whole(tmp_path, monkeypatch):
    target = tmp_path / "figure.png"
    good = os.urandom(109_000)
    atomic_write_bytes(target, good)
    target.chmod(0o640)
    _FillingDisk(monkeypatch, room=50_000)
    with pytest.raises(FileWriteError) as info:
        atomic_write_bytes(target, os.urandom(120_000))
    assert str(info.value) == f"{target}: cannot write: No space left on device"
    assert target.read_bytes() == good and _leftovers(tmp_path) == []
    monkeypatch.undo()
    atomic_write_text(target, "new")
    assert target.read_text() == "new" and stat.S_IMODE(target.stat().st_mode) == 0o640  # mode kept


def test_a_read_only_folder_is_one_line_and_changes_nothing(tmp_path, monkeypatch):
    folder = tmp_path / "ro"
    folder.mkdir()
    atomic_write_text(folder / "page.md", "old")
    _read_only(monkeypatch, folder)
    with pytest.raises(FileWriteError) as info:
        atomic_write_text(folder / "page.md", "new")
    assert str(info.value) == f"{folder / 'page.md'}: cannot write: Permission denied"
    assert (folder / "page.md").read_text() == "old" and _leftovers(folder) == []


@pytest.mark.skipif(ROOT, reason="root writes into read-only folders")
def test_a_folder_made_read_only_is_one_line(tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    atomic_write_text(folder / "page.md", "old")
    folder.chmod(0o555)
    try:
        with pytest.raises(FileWriteError, match=r"page.md: cannot write: Permission denied"):
            atomic_write_text(folder / "page.md", "new")
        assert (folder / "page.md").read_text() == "old" and _leftovers(folder) == []
    finally:
        folder.chmod(0o755)


def test_a_file_where_the_folder_should_be_is_one_line(tmp_path):
    (tmp_path / "afile").write_text("x")
    with pytest.raises(FileWriteError, match=r"afile/page.md: cannot write: Not a directory"):
        atomic_write_text(tmp_path / "afile" / "page.md", "new")


def test_figures_are_written_whole_or_not_at_all(tmp_path, monkeypatch):
    def figure():
        fig, ax = plt.subplots()
        ax.plot(range(50), [v * v for v in range(50)])
        return fig

    png, svg = plots.save_figure(figure(), tmp_path, "curve")
    before = png.read_bytes(), svg.read_bytes()
    assert before[0].startswith(b"\x89PNG")
    again = plots.save_figure(figure(), tmp_path, "curve")
    assert [p.read_bytes() for p in again] == list(before)  # byte-identical, as before
    _FillingDisk(monkeypatch, room=len(before[0]) // 2)
    with pytest.raises(FileWriteError, match="curve.png: cannot write: No space left on device"):
        plots.save_figure(figure(), tmp_path, "curve")
    assert (png.read_bytes(), svg.read_bytes()) == before and _leftovers(tmp_path) == []


def test_the_readme_block_and_pages_survive_a_failing_write(tmp_path, monkeypatch):
    from kbsim.report import pages

    readme = tmp_path / "README.md"
    text = f"intro\n{pages.README_START}\nold block\n{pages.README_END}\nrest\n"
    readme.write_text(text)
    monkeypatch.setattr(pages, "reference_results", lambda exps: __import__("pandas").DataFrame({"a": [1]}))
    monkeypatch.setattr(pages, "_study_line", lambda exps: "study")
    pages.update_readme_results({}, readme, tmp_path / "figures")
    written = readme.read_text()
    assert written.startswith("intro\n") and written.endswith("rest\n") and "old block" not in written
    _FillingDisk(monkeypatch, room=10)
    with pytest.raises(FileWriteError, match="README.md: cannot write"):
        pages.update_readme_results({}, readme, tmp_path / "figures")
    assert readme.read_text() == written and _leftovers(tmp_path) == []
    with pytest.raises(FileWriteError, match="README.md: cannot write"):
        pages.write_figures_readme(tmp_path / "figures")
    assert not (tmp_path / "figures" / "README.md").exists()


def test_trace_files_and_the_sample_are_written_atomically(tmp_path, monkeypatch, capsys):
    saves = tmp_path / "saves.csv"
    write_saves_trace(saves, [SaveRow(1.0, "art-000001", "content", None, "x" * 5000)])
    good = saves.read_bytes()
    _FillingDisk(monkeypatch, room=100)
    with pytest.raises(FileWriteError):
        write_saves_trace(saves, [SaveRow(2.0, "art-000002", "content", None, "y" * 9000)])
    assert saves.read_bytes() == good and _leftovers(tmp_path) == []
    assert main(["corpus", "sample", str(tmp_path / "kb.jsonl"), "--format", "jsonl"]) == 2
    expected = f"kbsim corpus sample: {tmp_path / 'kb.jsonl'}: cannot write: No space left on device\n"
    assert capsys.readouterr().err == expected
    assert not (tmp_path / "kb.jsonl").exists()
    monkeypatch.undo()
    assert write_corpus(iter([("Title one", "body")]), tmp_path / "kb.csv", "csv").read_bytes() == (
        b"title,content\r\nTitle one,body\r\n")


def _a_run(tmp_path: Path) -> Path:
    config = tmp_path / "tiny.yaml"
    config.write_text("name: tiny\nparams: {day_hours: 1, corpus: {articles: 20}, saves: {count: 10}, "
                      "questions: {count: 5}}\nseeds: 1\n")
    assert main(["run", str(config), "--out", str(tmp_path / "results"), "--no-progress", "--workers", "1"]) == 0
    return next((tmp_path / "results" / "tiny" / "runs").iterdir())


def test_trace_export_out_a_file_inside_a_file_or_read_only_is_one_line(tmp_path, capsys):
    run_dir = _a_run(tmp_path)
    capsys.readouterr()
    (tmp_path / "afile").write_text("not a folder")
    for out in (tmp_path / "afile", tmp_path / "afile" / "inside"):
        assert main(["trace", "export", str(run_dir), "--out", str(out)]) == 2
        err = capsys.readouterr().err
        assert err == (f"kbsim trace export: {tmp_path / 'afile'}: is a file; expected a folder for saves.csv and "
                       "questions.csv (--out)\n")
    assert (tmp_path / "afile").read_text() == "not a folder"
    folder = tmp_path / "ro"
    folder.mkdir()
    with pytest.MonkeyPatch.context() as patch:
        _read_only(patch, folder)
        assert main(["trace", "export", str(run_dir), "--out", str(folder)]) == 2
    assert capsys.readouterr().err == f"kbsim trace export: {folder / 'saves.csv'}: cannot write: Permission denied\n"
    assert list(folder.iterdir()) == []
    assert main(["trace", "export", str(run_dir), "--out", str(tmp_path / "traces")]) == 0
    assert sorted(p.name for p in (tmp_path / "traces").iterdir()) == ["questions.csv", "saves.csv"]


def test_the_notebook_script_writes_through_the_atomic_helper():
    """scripts/execute_notebooks.py writes each notebook with atomic_write_text (running a
    notebook here would take minutes; the script's source says how it writes)."""
    source = (REPO / "scripts" / "execute_notebooks.py").read_text()
    assert "atomic_write_text(path" in source and "nbformat.write(" not in source
    run = subprocess.run([sys.executable, "-c", "import runpy; runpy.run_path('scripts/execute_notebooks.py', "
                          "run_name='not_main')"], cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)},
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
