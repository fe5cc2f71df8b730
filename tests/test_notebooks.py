"""Execute every notebook in quick mode; a failing cell fails the test.

The notebooks share one temporary results directory (they run on one worker,
in order), so each experiment runs once. They must write nothing into the
repository: the test compares ``git status`` before and after.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
from execute_notebooks import kernel_config  # noqa: E402  (make reproduce's kernel settings: encrypted channels)

NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


@pytest.fixture(scope="session")
def notebook_results(tmp_path_factory):
    return tmp_path_factory.mktemp("notebook-results")


def _status() -> str:
    return subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout


def test_the_six_notebooks_are_there_and_committed_executed():
    """``make reproduce`` runs them in place (scripts/execute_notebooks.py), so a reader browsing
    the repository sees every figure: each code cell ran once, in order, without an error, and no
    output names a path of the machine that ran it."""
    names = [path.name for path in NOTEBOOKS]
    assert names == [
        "01_staleness.ipynb",
        "02_check_cost.ipynb",
        "03_edit_rejections.ipynb",
        "04_reproduction.ipynb",
        "05_check_policy.ipynb",
        "06_your_logs.ipynb",
    ]
    for path in NOTEBOOKS:
        notebook = nbformat.read(path, as_version=4)
        code = [cell for cell in notebook.cells if cell.cell_type == "code"]
        assert [cell.execution_count for cell in code] == list(range(1, len(code) + 1)), path.name
        outputs = [out for cell in code for out in cell.outputs]
        assert outputs, f"{path.name} was committed without outputs"
        assert not [out for out in outputs if out.output_type == "error"], path.name
        assert not [cell for cell in code if "execution" in cell.metadata], f"{path.name} records timings"
        text = path.read_text(encoding="utf-8")
        for marker in (str(ROOT), "/tmp/", "/home/"):
            assert marker not in text, f"{path.name}: an output names {marker!r}"
        printed = "".join(out.get("text", "") for out in outputs if out.output_type == "stream")
        assert "quick mode" not in printed, f"{path.name} was executed in quick mode, not the full study"
        images = [out for out in outputs if "image/png" in out.get("data", {})]
        assert images or path.stem.startswith("04"), f"{path.name} shows no figure"


#: ``import kbsim``, ``from kbsim import NAME`` and ``kbsim.NAME``: how a notebook may reach kbsim.
KBSIM_IMPORT = re.compile(r"^\s*(?:import\s+(kbsim[\w.]*)|from\s+(kbsim[\w.]*)\s+import\s+(.+))", re.MULTILINE)
KBSIM_ATTRIBUTE = re.compile(r"(?<![\w.])kbsim\.(\w+)")


def non_public_uses(source: str) -> list[str]:
    """What a code cell reaches of kbsim beyond its public API (``kbsim.__all__``): a submodule
    imported (``kbsim.cli.day_config``, ``kbsim.fit.synthetic``), a name imported from one, or
    an attribute of ``kbsim`` that is not public."""
    import kbsim

    public = set(kbsim.__all__)
    found = []
    for module, from_module, names in KBSIM_IMPORT.findall(source):
        if module and module != "kbsim":
            found.append(f"import {module}")
        if from_module and from_module != "kbsim":
            found.append(f"from {from_module} import {names.strip()}")
        if from_module == "kbsim":
            for part in names.strip("() \\").split(","):
                name = part.split()[0] if part.split() else ""
                if name and name not in public:
                    found.append(f"from kbsim import {name}")
    code = KBSIM_IMPORT.sub("", source)  # the imports are judged above
    found += [f"kbsim.{name}" for name in KBSIM_ATTRIBUTE.findall(code) if name not in public]
    return found


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebooks_use_only_kbsims_public_api(path):
    """Notebook 06 once imported kbsim.cli.day_config (a CLI module), kbsim.fit.synthetic and
    kbsim.runner.simulated_advice; every notebook now reaches kbsim through ``kbsim.__all__``
    only (``kbsim.walkthrough`` gives each its sections), so a reader learns the API from it."""
    notebook = nbformat.read(path, as_version=4)
    found = [f"cell {index}: {use}" for index, cell in enumerate(notebook.cells) if cell.cell_type == "code"
             for use in non_public_uses(cell.source)]
    assert not found, "\n".join(found)


def test_the_public_api_check_catches_internals():
    """The check above can fail: each form a notebook once used is caught, the public API is not."""
    assert non_public_uses("from kbsim.cli.day_config import load_day_config") == [
        "from kbsim.cli.day_config import load_day_config"]
    assert non_public_uses("import kbsim.fit.synthetic") == ["import kbsim.fit.synthetic"]
    assert non_public_uses("from kbsim import run_day, summarize as s") == []
    assert non_public_uses("from kbsim import _LAZY") == ["from kbsim import _LAZY"]
    assert non_public_uses("x = kbsim.report.figures.draw('a', {})") == ["kbsim.report"]
    assert non_public_uses("import kbsim\nnb = kbsim.walkthrough('01_staleness')") == []


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_each_code_cell_reads_as_api_calls(path):
    """Prose that must stay true to the numbers is rendered by kbsim (``nb.say(section)``), so no
    code cell builds a string from results: no f-string, no ``display(Markdown(...))``."""
    notebook = nbformat.read(path, as_version=4)
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type != "code":
            continue
        assert not re.search(r"\bf[\"']", cell.source), f"{path.name} cell {index} builds a string"
        assert "Markdown(" not in cell.source and "display(" not in cell.source, f"{path.name} cell {index}"


@pytest.mark.slow
@pytest.mark.xdist_group("notebooks")
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs_in_quick_mode(path, notebook_results, monkeypatch):
    monkeypatch.setenv("KBSIM_QUICK", "1")
    monkeypatch.setenv("KBSIM_RESULTS_DIR", str(notebook_results))
    monkeypatch.setenv(
        "PYTHONPATH", os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    )
    before = _status()
    notebook = nbformat.read(path, as_version=4)
    NotebookClient(
        notebook,
        timeout=300,
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
        config=kernel_config(),
    ).execute()
    outputs = [out for cell in notebook.cells if cell.cell_type == "code" for out in cell.outputs]
    assert not [out for out in outputs if out.output_type == "error"]
    images = [out for out in outputs if "image/png" in out.get("data", {})]
    assert images or path.stem.startswith("04"), f"{path.name} showed no figure"
    assert _status() == before, f"{path.name} wrote into the repository"
