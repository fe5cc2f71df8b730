"""The README's Python examples run as written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"


def python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S)


def test_readme_has_the_two_commands_first():
    text = README.read_text(encoding="utf-8")
    first_block = re.search(r"```sh\n(.*?)```", text, flags=re.S).group(1)
    assert first_block.splitlines()[0].startswith("make reproduce")
    assert first_block.splitlines()[1].startswith("make test")


def test_readme_python_examples_run():
    blocks = python_blocks()
    assert len(blocks) >= 2
    namespace: dict = {}
    for block in blocks:
        exec(compile(block, str(README), "exec"), namespace)  # noqa: S102


def _block_env() -> dict:
    import os

    return {**os.environ, "PYTHONPATH": str(README.parent)}


@pytest.mark.slow
@pytest.mark.parametrize("index", [0, 1])
def test_each_python_block_runs_verbatim_as_a_script(index, tmp_path):
    """Pasted into a file without a ``__main__`` guard: workers=1 starts no process that would
    import the script again (issue 39)."""
    import subprocess
    import sys

    script = tmp_path / "tour.py"
    script.write_text(python_blocks()[index], encoding="utf-8")
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True,
                          timeout=600, env=_block_env())
    assert done.returncode == 0, done.stderr


@pytest.mark.slow
@pytest.mark.parametrize("index", [0, 1])
def test_each_python_block_runs_piped_into_python(index, tmp_path):
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-"], input=python_blocks()[index], cwd=tmp_path, capture_output=True,
                          text=True, timeout=600, env=_block_env())
    assert done.returncode == 0, done.stderr


@pytest.mark.slow
def test_the_python_blocks_run_in_a_notebook(tmp_path, monkeypatch):
    """Each block a cell of one notebook, run by a Jupyter kernel; the study shows as an HTML table."""
    import sys

    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    sys.path.insert(0, str(README.parent / "scripts"))
    from execute_notebooks import kernel_config

    monkeypatch.setenv("PYTHONPATH", str(README.parent))
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(block) for block in python_blocks()])
    nbclient.NotebookClient(notebook, timeout=600, kernel_name="python3", config=kernel_config(),
                            resources={"metadata": {"path": str(tmp_path)}}).execute()
    shown = notebook.cells[1].outputs[-1]
    assert shown["output_type"] == "execute_result"
    assert "<table" in shown["data"]["text/html"] and "rejection_rate" in shown["data"]["text/html"]


@pytest.mark.slow
@pytest.mark.xdist_group("readme-logs")
def test_readme_from_your_logs_to_advice_runs(tmp_path, monkeypatch, capsys):
    """The three commands of "From your logs to advice", run as written (in a scratch folder, the
    example log at its place in the checkout): the fit writes a config, it runs, and advise says the
    model does not hold and answers by simulation."""
    import shlex

    from kbsim.cli import main

    section = README.read_text(encoding="utf-8").split("## From your logs to advice", 1)[1]
    commands = re.search(r"```sh\n(.*?)```", section, flags=re.S).group(1).strip().splitlines()
    assert [line.split()[1] for line in commands] == ["fit", "run", "advise"]
    monkeypatch.chdir(tmp_path)
    root = README.parent
    for line in commands:
        args = [str(root / a) if a.startswith("examples/") else a for a in shlex.split(line)[1:]]
        if args[0] in ("run", "advise"):
            args += ["--workers", "2"]
        assert main(args) == 0, line
    printed = capsys.readouterr().out
    assert (tmp_path / "my-day.yaml").exists() and (tmp_path / "fit.png").exists()
    assert "The analytic model does not hold for this day" in printed and "Simulated (10 days per point" in printed
