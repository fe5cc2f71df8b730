"""kbsim as a package: the extras, the shipped experiments, the project files, the API reference.

The slow test builds the wheel, installs the core alone (no extra) into a fresh virtual
environment and uses it from an empty folder, as a new user would.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest
import yaml

from kbsim.cli import main
from kbsim.extras import EXTRAS, MissingExtraError, require
from kbsim.runner.shipped import SHIPPED_DIR, experiment_path, shipped_experiments
from kbsim.version import __version__

REPO = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
#: The top-level modules of the extras' packages: none may be imported by ``import kbsim``.
EXTRA_MODULES = ("matplotlib", "mcp", "mcp_types", "starlette", "uvicorn", "distributed", "dask",
                 "IPython", "ipykernel", "nbclient", "nbformat")
#: The distributions an extra brings, none of which the core may install.
EXTRA_DISTRIBUTIONS = ("matplotlib", "mcp", "starlette", "uvicorn", "dask", "distributed", "ipykernel",
                       "nbclient", "nbformat", "cryptography")


# -- extras ------------------------------------------------------------------------------------


def test_the_core_depends_on_no_extra_and_the_extras_are_the_issues():
    core = {re.split(r"[<>=\[; ]", dep)[0].lower() for dep in PYPROJECT["project"]["dependencies"]}
    # snowballstemmer: the analyzers' stemmers (kbsim.store.analyzer), pure Python and small
    assert core == {"numpy", "pandas", "pyarrow", "simpy", "pydantic", "pyyaml", "fastjsonschema", "tqdm", "scipy",
                    "snowballstemmer"}
    extras = PYPROJECT["project"]["optional-dependencies"]
    assert set(EXTRAS) <= set(extras) and set(extras) == {*EXTRAS, "all", "dev"}
    assert extras["all"] == ["kbsim[plots,serve,dask,notebooks]"]
    assert "pdoc>=14" in extras["dev"]
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    assert "pip install --quiet -e '.[all,dev]'" in makefile


def test_import_kbsim_and_every_parser_import_no_extra():
    """Even with every extra installed, none is imported until a feature needs it."""
    code = (
        "import json, sys, kbsim; from kbsim.cli import build_parser; build_parser();"
        "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=120)
    assert set(json.loads(done.stdout)) & set(EXTRA_MODULES) == set()


def test_require_names_the_missing_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "mcp", None)  # import mcp now fails as if it were not installed
    with pytest.raises(MissingExtraError) as raised:
        require("serve", "mcp", "kbsim serve")
    assert str(raised.value) == "kbsim serve needs the 'serve' extra (mcp is not installed): pip install 'kbsim[serve]'"
    assert isinstance(raised.value, ValueError) and raised.value.extra == "serve"
    assert require("plots", "json") is json
    with pytest.raises(KeyError, match="kbsim's extras are plots, serve, dask, notebooks"):
        require("plot", "matplotlib")


@pytest.mark.parametrize(
    ("argv", "module", "line"),
    [
        (["serve"], "mcp", "kbsim serve: error: needs the 'serve' extra (mcp is not installed): "
                           "pip install 'kbsim[serve]'"),
        (["serve", "--http", "0"], "mcp", "pip install 'kbsim[serve]'"),
        (["figures", "--only", "check_cost"], "matplotlib",
         "kbsim figures: error: needs the 'plots' extra (matplotlib is not installed): "
         "pip install 'kbsim[plots]'"),
        (["run", "reference", "--executor", "dask"], "distributed",
         "kbsim run: error: --executor dask needs the 'dask' extra (distributed is not installed): "
         "pip install 'kbsim[dask]'"),
    ],
)
def test_a_command_missing_its_extra_says_which_in_one_line(monkeypatch, tmp_path, capsys, argv, module, line):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setitem(sys.modules, module, None)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert line in err and len(err.strip().splitlines()) == 1
    assert list(tmp_path.iterdir()) == []  # nothing written


def test_fit_with_a_figure_and_no_plots_extra_refuses_before_it_prints_or_writes(monkeypatch, tmp_path, capsys):
    """Found from a core install: the fit was printed and its config written, and only then did the
    figure fail on the missing extra (exit 2 after half the work)."""
    log = REPO / "examples" / "helpdesk-log"
    monkeypatch.chdir(tmp_path)
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    argv = ["fit", str(log / "saves.csv"), str(log / "questions.csv"), "--corpus", "kbsim:sample",
            "--write-config", "my-day.yaml", "--figure", "fit.png"]
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err == ("kbsim fit: error: --figure needs the 'plots' extra (matplotlib is not installed): "
                   "pip install 'kbsim[plots]'\n")
    assert list(tmp_path.iterdir()) == []


def test_no_help_page_shows_a_doubled_percent_sign():
    """argparse %-formats help strings but not descriptions or epilogs, so a ``%%`` there is printed
    as written (``kbsim fit --help`` said "a 95%% interval")."""
    from kbsim.cli import build_parser

    parser = build_parser()
    (subparsers,) = [action for action in parser._actions if isinstance(action, argparse._SubParsersAction)]
    pages = {"kbsim": parser.format_help()}
    pages.update({name: sub.format_help() for name, sub in subparsers.choices.items()})
    for name, sub in subparsers.choices.items():  # kbsim corpus check, kbsim trace export, ...
        for action in sub._actions:
            if isinstance(action, argparse._SubParsersAction):
                pages.update({f"{name} {inner}": page.format_help() for inner, page in action.choices.items()})
    assert len(pages) > 10
    assert [name for name, text in pages.items() if "%%" in text] == []


# -- the shipped experiments ---------------------------------------------------------------------


def test_experiments_ship_in_the_package_and_resolve_by_name(tmp_path, monkeypatch):
    """In a checkout the configs are the top-level experiments/ (the wheel's copy: the slow
    wheel test); setup.py's build step copies them into the package."""
    assert SHIPPED_DIR == REPO / "experiments"
    assert not (REPO / "kbsim" / "experiments").exists()  # one source
    names = list(shipped_experiments())
    assert "reference" in names and names == sorted(names) and len(names) >= 10
    monkeypatch.chdir(tmp_path)
    assert experiment_path("reference") == SHIPPED_DIR / "reference.yaml"
    (tmp_path / "reference").write_text("a file of the user's wins over a shipped name")
    assert experiment_path("reference") == Path("reference")
    assert experiment_path("mine.yaml") == Path("mine.yaml")  # a path, even when missing
    shipped = "shipped: ablation, advice, approval, check_interval_sweep"
    with pytest.raises(ValueError, match=f"no shipped experiment of that name.*{shipped}"):
        experiment_path("refrence")
    assert "py.typed" in PYPROJECT["tool"]["setuptools"]["package-data"]["kbsim"]
    assert "include experiments/*.yaml" in (REPO / "MANIFEST.in").read_text(encoding="utf-8")


def test_kbsim_experiments_lists_every_shipped_one_with_its_description(capsys):
    assert main(["experiments"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == len(shipped_experiments())
    for line, (name, path) in zip(out, shipped_experiments().items(), strict=True):
        description = yaml.safe_load(path.read_text(encoding="utf-8")).get("description")
        assert re.fullmatch(rf"{name} +[\d,]+ runs  {re.escape(description)}", line)


def test_an_unknown_experiment_name_is_one_line(capsys):
    assert main(["run", "refrence"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("kbsim run: error: refrence: no such config file") and "kbsim experiments" in err


# -- project files -------------------------------------------------------------------------------


def test_project_files_agree_with_the_version_and_the_license():
    assert PYPROJECT["project"]["license"] == "MIT"
    assert PYPROJECT["project"]["dynamic"] == ["version"]
    assert PYPROJECT["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "kbsim.version.__version__"}
    assert (REPO / "LICENSE").read_text(encoding="utf-8").startswith("MIT License\n")
    citation = yaml.safe_load((REPO / "CITATION.cff").read_text(encoding="utf-8"))
    assert citation["version"] == __version__ and citation["license"] == "MIT" and citation["authors"]
    changelog = (REPO / "CHANGELOG.md").read_text(encoding="utf-8")
    assert f"\n## {__version__} (" in changelog
    assert (REPO / "kbsim" / "py.typed").is_file()


# -- the API reference ---------------------------------------------------------------------------


def test_the_api_reference_builds_from_the_docstrings(tmp_path):
    pytest.importorskip("pdoc", reason="pdoc is in the dev extra (make installs it)")
    sys.path.insert(0, str(REPO / "scripts"))
    try:
        import api_docs
    finally:
        sys.path.remove(str(REPO / "scripts"))
    modules = api_docs.api_modules()
    assert {"kbsim", "kbsim.extras", "kbsim.serve.http", "kbsim.runner.shipped"} <= set(modules)
    assert "kbsim.__main__" not in modules  # the entry point
    index = api_docs.build(tmp_path / "api")
    assert index.is_file()
    page = (tmp_path / "api" / "kbsim" / "extras.html").read_text(encoding="utf-8")
    assert "MissingExtraError" in page and "names the extra that installs it" in page
    assert (tmp_path / "api" / "kbsim" / "serve" / "http.html").is_file()
    assert "make docs" in (REPO / "README.md").read_text(encoding="utf-8")


# -- the wheel, from outside a checkout ----------------------------------------------------------


#: The environment of a pip in a fresh venv: a PYTHONPATH naming a checkout that holds a
#: ``kbsim.egg-info`` (which ``pip install -e .`` and ``python -m build`` leave there) makes pip take
#: kbsim as installed already, and the wheel is then never installed.
_WITHOUT_PYTHONPATH = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}

#: The README's line on the core's install: its package count and its size.
README_CORE = re.compile(r"# the core: (\d+) packages, (\d+) MB")


def _disk_usage(folder: Path) -> int:
    """The bytes ``folder`` takes on disk, as ``du -s`` counts them (each file once, its blocks)."""
    seen, total = set(), 0
    for path in [folder, *folder.rglob("*")]:
        stat = path.lstat()
        if (stat.st_dev, stat.st_ino) not in seen:
            seen.add((stat.st_dev, stat.st_ino))
            total += stat.st_blocks * 512
    return total


def test_the_readme_names_every_package_of_the_core():
    """The README's table of extras names each of the core's own dependencies (snowballstemmer,
    added with the analyzers, was missing from it)."""
    row = next(line for line in (REPO / "README.md").read_text(encoding="utf-8").splitlines()
               if line.startswith("| (core) |"))
    core = [re.split(r"[<>=\[; ]", dep)[0].lower() for dep in PYPROJECT["project"]["dependencies"]]
    assert [name for name in core if not re.search(rf"\b{re.escape(name)}\b", row)] == []
    assert README_CORE.search((REPO / "README.md").read_text(encoding="utf-8"))


def _copy_source(target: Path) -> Path:
    """The checkout's source, without what a build, a run or git left in it (builds never touch the checkout)."""
    shutil.copytree(REPO, target, ignore=shutil.ignore_patterns(
        ".git", ".venv", "build", "dist", "*.egg-info", "results", "__pycache__", ".pytest_cache",
        ".hypothesis", ".ruff_cache", "figures", "notebooks", "benchmarks", "validation"))
    return target


@pytest.mark.slow
def test_the_core_wheel_installs_alone_and_runs_a_study_from_an_empty_folder(tmp_path):
    pip = [sys.executable, "-m", "pip"]
    source = _copy_source(tmp_path / "source")
    subprocess.run([*pip, "wheel", "--quiet", "--no-deps", "-w", str(tmp_path / "wheel"), str(source)],
                   check=True, capture_output=True, timeout=600)
    (wheel,) = (tmp_path / "wheel").glob("kbsim-*.whl")
    assert wheel.name == f"kbsim-{__version__}-py3-none-any.whl"
    with zipfile.ZipFile(wheel) as archive:  # the top-level experiments/, mapped into the package
        packaged = {name: archive.read(name) for name in archive.namelist() if name.startswith("kbsim/experiments/")}
    assert packaged == {f"kbsim/experiments/{path.name}": path.read_bytes() for path in SHIPPED_DIR.glob("*.yaml")}
    subprocess.run([sys.executable, "-m", "venv", str(tmp_path / "venv")], check=True, timeout=300)
    python = tmp_path / "venv" / "bin" / "python"
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", str(wheel)], check=True,
                   capture_output=True, timeout=600, env=_WITHOUT_PYTHONPATH)
    empty = tmp_path / "empty"
    empty.mkdir()
    env = {"PATH": f"{python.parent}:/usr/bin:/bin", "HOME": str(tmp_path)}  # no PYTHONPATH: the wheel only

    def kbsim(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([str(python.parent / "kbsim"), *args], cwd=empty, env=env, capture_output=True,
                              text=True, timeout=600)

    installed = json.loads(subprocess.run(
        [str(python), "-c", "import importlib.metadata as m, json; "
                            "print(json.dumps(sorted(d.metadata['Name'].lower() for d in m.distributions())))"],
        cwd=empty, env=env, capture_output=True, text=True, check=True, timeout=60).stdout)
    assert set(installed) & set(EXTRA_DISTRIBUTIONS) == set()
    # the README's count and size of the core ("the core: 16 packages, 519 MB"): what kbsim brings,
    # without kbsim and the venv's own pip and setuptools; the size as du gives the whole venv's
    count, size_mb = README_CORE.search((REPO / "README.md").read_text(encoding="utf-8")).groups()
    brought = set(installed) - {"kbsim", "pip", "setuptools"}
    assert len(brought) == int(count), f"README.md says {count} packages; the core installs {sorted(brought)}"
    venv_mb = _disk_usage(tmp_path / "venv") / 2**20
    assert abs(venv_mb - int(size_mb)) <= 0.25 * int(size_mb), f"README.md says {size_mb} MB; the venv: {venv_mb:.0f}"
    imported = json.loads(subprocess.run(
        [str(python), "-c", "import json, sys, kbsim; print(json.dumps(sorted(sys.modules)))"],
        cwd=empty, env=env, capture_output=True, text=True, check=True, timeout=60).stdout)
    assert {name.split(".")[0] for name in imported} & set(EXTRA_MODULES) == set()
    where = subprocess.run([str(python), "-c", "import kbsim; print(kbsim.__file__)"], cwd=empty, env=env,
                           capture_output=True, text=True, check=True, timeout=60).stdout
    assert where.startswith(str(tmp_path / "venv"))

    listed = kbsim("experiments")
    assert listed.returncode == 0 and "reference" in listed.stdout, listed.stderr
    shrink = ["day_hours=1", "corpus.articles=30", "questions.count=10", "saves.count=20", "edit.delay_s=null",
              "contrasts=[]"]
    run = kbsim("run", "reference", "--seeds", "2", *(f"--set={item}" for item in shrink), "--workers", "1",
                "--no-progress", "--out", "out")
    assert run.returncode == 0, run.stderr
    assert "4 runs (0 reused, 4 computed, 0 failed)" in run.stderr  # zipf and control x 2 seeds
    assert (empty / "out" / "reference" / "summary.csv").is_file()
    assert sorted(p.name for p in empty.iterdir()) == ["out"]

    served = kbsim("serve")
    assert served.returncode == 2
    assert served.stderr.strip() == ("kbsim serve: error: needs the 'serve' extra (mcp is not installed): "
                                     "pip install 'kbsim[serve]'")
    drawn = kbsim("figures", "--out", "study")
    assert drawn.returncode == 2 and drawn.stderr.strip().endswith("pip install 'kbsim[plots]'")
    assert not (empty / "study").exists()


@pytest.mark.slow
def test_the_sdist_holds_the_project_files_and_the_package_data(tmp_path):
    """The sdist, built as ``python -m build --sdist`` builds it (setuptools' backend, in an
    environment of its own, as pyproject's build-system asks): LICENSE, CITATION.cff,
    CHANGELOG.md, README.md, py.typed, the tools' schema and every shipped experiment, and no
    part of the test suite, which could not run without the rest of the checkout (MANIFEST.in)."""
    import tarfile

    source = _copy_source(tmp_path / "source")
    subprocess.run([sys.executable, "-m", "venv", str(tmp_path / "build-env")], check=True, timeout=300)
    python = tmp_path / "build-env" / "bin" / "python"
    requires = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["build-system"]["requires"]
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", *requires], check=True, capture_output=True,
                   timeout=600, env=_WITHOUT_PYTHONPATH)
    built = subprocess.run(
        [str(python), "-c", "import sys; from setuptools import build_meta; print(build_meta.build_sdist(sys.argv[1]))",
         str(tmp_path / "sdist")], cwd=source, check=True, capture_output=True, text=True, timeout=600)
    name = built.stdout.strip().splitlines()[-1]
    assert name == f"kbsim-{__version__}.tar.gz"
    with tarfile.open(tmp_path / "sdist" / name) as sdist:
        members = {member.split("/", 1)[1] for member in sdist.getnames() if "/" in member}
    experiments = {f"experiments/{path.name}" for path in SHIPPED_DIR.glob("*.yaml")}
    assert {"LICENSE", "CITATION.cff", "CHANGELOG.md", "README.md", "pyproject.toml", "kbsim/py.typed",
            "kbsim/spec/tools.json", "kbsim/__init__.py", *experiments} <= members
    assert not [member for member in members if member.startswith("tests/")]
