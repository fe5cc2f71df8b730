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
