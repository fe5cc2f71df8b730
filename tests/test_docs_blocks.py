"""Every fenced block of README.md and docs/*.md runs, or is declared here with the reason it cannot.

Shell blocks run line by line in one scratch folder, in the order the page gives them: a
``kbsim`` command as written, or in the cheap form :data:`CHEAP` declares (fewer seeds, a
shorter day, a free port), or not at all when :data:`NOT_RUN` gives the reason (an install, the
whole study, a cluster). Python blocks are executed. JSON and YAML blocks are parsed, and a
YAML block naming its file (``# busy.yaml: ...``) is written into the scratch folder, where the
commands that name it use it. A block or line that none of this covers fails the test, and so
does a declaration whose line is no longer in the page: nothing is skipped silently.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SHELL, PYTHON = ("sh", "bash", "shell", "console"), ("python", "py")
#: Languages of blocks that hold a file's contents, not code: what the test does with each.
DATA = {
    "json": "parsed as JSON",
    "yaml": "parsed as YAML; written into the scratch folder when its first line names the file",
    "text": "shown as a file's contents (a trace's rows), parsed as CSV",
    "markdown": "shown as an article file's contents, read as a corpus article",
}

#: Command lines that do not run here, by page and line (without its comment), with the reason.
NOT_RUN: dict[tuple[str, str], str] = {
    ("README.md", "make reproduce"):
        "the full study and every notebook (about 8 minutes); `kbsim figures --quick` runs below",
    ("README.md", "make test"): "the whole test suite, this test among them",
    ("README.md", "pip install dist/kbsim-0.2.0-py3-none-any.whl"):
        "an install; tests/test_package.py builds the wheel and installs the core alone into a fresh venv",
    ("README.md", "pip install 'dist/kbsim-0.2.0-py3-none-any.whl[plots,serve]'"):
        "an install; tests/test_package.py installs the wheel",
    ("README.md", "kbsim run zipf_sweep --executor dask --scheduler tcp://host:8786"):
        "needs a Dask cluster at host:8786; tests/test_dask.py runs the Dask executor on a local cluster",
    ("README.md", "kbsim serve --http 8000"):
        "serves until Ctrl-C; test_the_http_client_block_runs_against_the_server starts it on a free port",
    ("README.md", "kbsim fit examples/helpdesk-log/saves.csv examples/helpdesk-log/questions.csv --corpus "
                  "kbsim:sample --write-config my-day.yaml --figure fit.png"):
        "the walk-through 'From your logs to advice': tests/test_readme.py runs its three commands",
    ("README.md", "kbsim run my-day.yaml"): "the walk-through: tests/test_readme.py runs it",
    ("README.md", "kbsim advise --config my-day.yaml --max-latency 15min"):
        "the walk-through: tests/test_readme.py runs it",
    ("README.md", "kbsim drive --url http://127.0.0.1:8765/mcp --corpus my-kb/ --seed 1 --out drive/seed-1 "
                  "--yes-edit-this-server"):
        "needs a server holding my-kb/ at port 8765; tests/test_drive_day.py drives kbsim serve --http on a free port",
    ("README.md", "kbsim drive --corpus synthetic --seed 1 --out drive/stdio-1 --yes-edit-this-server -- kbsim serve "
                  "--corpus synthetic --seed 1"):
        "an 8-minute day in real time; tests/test_drive_day.py drives kbsim serve over stdio through a 1-hour day",
    ("README.md", "kbsim drive-report drive/seed-1 drive/seed-2 drive/seed-3 --out your-server.md"):
        "needs three driven days; tests/test_drive_day.py runs drive-report on a driven day",
    ("README.md", "kbsim serve --http 8765 --db kb.sqlite --admin-tools --corpus synthetic"):
        "serves until Ctrl-C; tests/test_check.py starts it on a free port and checks it",
    ("README.md", "kbsim check --url http://127.0.0.1:8765/mcp --yes-edit-this-server --markdown card.md"):
        "needs the server above; tests/test_check.py runs kbsim check --url against kbsim serve --http --db",
    ("docs/check.md", "kbsim check --url http://127.0.0.1:8765/mcp --yes-edit-this-server --out check-day "
                      "--markdown card.md"):
        "needs a server at port 8765; tests/test_check.py runs kbsim check --url against kbsim serve --http --db",
    ("docs/check.md", "kbsim check drive/seed-1 drive/seed-2 --json card.json"):
        "needs two driven days; tests/test_check.py checks a kept check day's history with kbsim check HISTORY",
    ("docs/serve.md", "pip install 'kbsim[serve]'"): "an install; tests/test_package.py installs the wheel",
    ("docs/serve.md", "kbsim serve --http 8000"):
        "serves until Ctrl-C; test_the_http_client_block_runs_against_the_server starts it on a free port",
    ("docs/serve.md", "kbsim serve --http 127.0.0.1:0 --live"):
        "serves until Ctrl-C; test_the_http_client_block_runs_against_the_server starts it",
    ("docs/serve.md", "make conformance"):
        "installs Node 22 and the suite from the npm registry (needs npm); docs/serve.md records its results",
    ("docs/serve.md", "python scripts/mcp_conformance.py --suite .conformance/node_modules/.bin/conformance --all"):
        "needs what make conformance installs; docs/serve.md records its results",
    ("docs/fit.md", "kbsim fit SAVES [QUESTIONS] [--articles N | --corpus PATH] [--write-config day.yaml] [--json] "
                    "[--figure fit.png]"):
        "a usage synopsis (placeholders in capitals); tests/test_readme.py runs a fit",
    ("docs/fit.md", "kbsim advise --config day.yaml --max-latency 15min"):
        "a usage synopsis; tests/test_readme.py runs it",
    ("docs/fit.md", "kbsim advise --trace SAVES [QUESTIONS] --articles N --max-exposure 2%"):
        "a usage synopsis; tests/test_advise.py runs advise --trace",
}
#: A study shortened for a test: one seed, a one-hour day.
SHORT = "--seeds 1-1 --set day_hours=1"
#: Command lines run in a cheaper form: page and line -> the line that runs instead.
CHEAP: dict[tuple[str, str], str] = {
    ("README.md", "kbsim run reference --out results"): f"kbsim run reference --out results {SHORT}",
    ("README.md", "kbsim figures --out study"): "kbsim figures --out study --only edit_rejections --quick",
    ("README.md", "kbsim run reference"): f"kbsim run reference {SHORT}",
    ("README.md", "kbsim run reference --precision stale_citation_share@end=0.02"):
        # a half-width met at once: the doubling runs, and stops
        "kbsim run reference --precision stale_citation_share@end=0.5 --seeds 1-2 --max-seeds 4 --set day_hours=1",
    ("README.md", "kbsim run zipf_sweep --workers 2"): f"kbsim run zipf_sweep --workers 2 {SHORT}",
    ("README.md", "kbsim run reference --set saves.count=600 --seeds 1-10 --out /tmp/r"):
        "kbsim run reference --set saves.count=600 --seeds 1-2 --out r --set day_hours=1",
    ("README.md", "kbsim run my-study.yaml"): "kbsim run my-study.yaml",  # the scratch folder's own study
    ("README.md", "kbsim figures [--only edit_rejections] [--quick]"): "kbsim figures --only edit_rejections --quick",
    ("README.md", "kbsim advise --max-latency 15min --verify"): "kbsim advise --max-latency 15min --verify --seeds 2",
    ("README.md", "kbsim trace export results/reference/runs/<run_id>"):
        "kbsim trace export results/reference/runs/{run_id}",
    ("README.md", "kbsim run sample_kb"): f"kbsim run sample_kb {SHORT}",
    # the whole 200-day study again, under another check interval: its parsing is what the line shows
    ("README.md", "kbsim run reference --set checks.interval_s=30min"):
        f"kbsim run reference --set checks.interval_s=30min {SHORT}",
    ("README.md", "kbsim run reference --seed 7 --quiet"): "kbsim run reference --seed 7 --quiet --set day_hours=1",
}
#: What the scratch folder holds before the first command: the files a page's commands name as yours.
SETUP = {
    "my-study.yaml": "description: a study of your own\nseeds: 1\nparams: {day_hours: 1}\n",
    "ja-kb/パスワード.md": "# パスワードの再設定\n\n設定を開き、セキュリティを選んでパスワードを変更します。\n",
    "ja-kb/プリンター.md": "# プリンターが表示されない\n\nドライバーを再インストールしてから再起動します。\n",
}
#: (``my-kb/``, the articles a page's commands name as yours, is the sample, written by
#: ``kbsim corpus sample my-kb/`` before the first command that reads it, unless the page writes it.)
#: Python blocks' text replaced before they run: a server command the test's interpreter runs.
PYTHON_CHEAP = {
    ("docs/serve.md", 'StdioServerParameters(command="kbsim", args=["serve", "--live"])'):
        'StdioServerParameters(command=sys.executable, args=["-m", "kbsim", "serve", "--live"], '
        'env={**os.environ, "PYTHONPATH": ROOT})',
}
#: Python blocks that need a server running: page and a line of the block -> the command serving it.
NEEDS_SERVER = {("docs/serve.md", 'streamable_http_client("http://127.0.0.1:8000/mcp")'): "serve --http 127.0.0.1:0"}


@dataclass(frozen=True)
class Block:
    page: str
    line: int
    language: str
    text: str


def fenced_blocks(path: Path) -> list[Block]:
    """Every fenced block of a Markdown page (indented ones too), with its language."""
    blocks, opened, language, body = [], None, "", []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        fence = re.match(r"^\s*```(\S*)\s*$", line)
        if fence and opened is None:
            opened, language, body = number, fence.group(1), []
        elif fence and opened is not None:
            blocks.append(Block(path.relative_to(ROOT).as_posix(), opened, language, "\n".join(body) + "\n"))
            opened = None
        elif opened is not None:
            body.append(line)
    assert opened is None, f"{path}: a block opened at line {opened} is never closed"
    return blocks


BLOCKS = [block for path in PAGES for block in fenced_blocks(path)]


def command_lines(block: Block) -> list[str]:
    """A shell block's commands, each without its comment."""
    lines = []
    for raw in block.text.splitlines():
        line = re.sub(r"\s+#\s.*$", "", raw).strip()
        if line and not line.startswith("#"):
            lines.append(line)
    return lines


def _env() -> dict:
    return {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}


def test_every_block_has_a_language_the_test_knows():
    for block in BLOCKS:
        where = f"{block.page}:{block.line}"
        assert block.language in (*SHELL, *PYTHON, *DATA), f"{where}: block language {block.language!r}"


def test_every_declaration_names_a_line_that_is_still_there():
    lines = {(b.page, line) for b in BLOCKS if b.language in SHELL for line in command_lines(b)}
    for key in (*NOT_RUN, *CHEAP):
        assert key in lines, f"declared but no longer in the page: {key}"
    for page, snippet in (*PYTHON_CHEAP, *NEEDS_SERVER):
        assert any(b.page == page and snippet in b.text for b in BLOCKS if b.language in PYTHON), snippet


def test_data_blocks_parse():
    from kbsim.inputs import load_corpus

    for block in BLOCKS:
        where = f"{block.page}:{block.line}"
        if block.language == "json":
            json.loads(block.text)
        elif block.language == "yaml":
            assert isinstance(yaml.safe_load(block.text), dict), where
        elif block.language == "text":
            rows = [line.split(",") for line in block.text.strip().splitlines()]
            assert len(rows) > 1 and all(len(row) == len(rows[0]) for row in rows), where
        elif block.language == "markdown":
            folder = Path(os.environ.get("TMPDIR", "/tmp")) / f"kbsim-doc-article-{os.getpid()}"
            folder.mkdir(parents=True, exist_ok=True)
            (folder / "article.md").write_text(block.text, encoding="utf-8")
            kb = load_corpus(str(folder))
            assert len(kb) == 1 and kb.titles[0], where


def _named_files(blocks: list[Block]) -> dict[str, str]:
    """YAML blocks whose first line names their file (``# busy.yaml: ...``)."""
    named = {}
    for block in blocks:
        first = block.text.splitlines()[0] if block.text.strip() else ""
        found = re.match(r"#\s*([\w.-]+\.ya?ml)\b", first)
        if block.language == "yaml" and found:
            named[found.group(1)] = block.text
    return named


def _run_line(line: str, cwd: Path) -> subprocess.CompletedProcess:
    """A ``kbsim`` command line in ``cwd``, in this checkout, with stdin closed (a server
    over stdio then serves nothing and stops)."""
    args = shlex.split(line)
    assert args[0] == "kbsim", f"not a kbsim command and not declared: {line!r}"
    return subprocess.run(
        [sys.executable, "-m", "kbsim", *args[1:]], cwd=cwd, env=_env(), stdin=subprocess.DEVNULL,
        capture_output=True, text=True, timeout=600,
    )


@pytest.mark.slow
@pytest.mark.xdist_group("docs-blocks")
# README.md's lines are some thirty kbsim commands, each a fresh interpreter (a quick study, the figures,
# a verified advice among them): 8.5 min of wall time on the shared 2-core machine at a load of 10,
# past the suite's 300 s; each command keeps its own 600 s bound
@pytest.mark.timeout(1200)
@pytest.mark.parametrize("page", [p.relative_to(ROOT).as_posix() for p in PAGES])
def test_every_shell_line_runs(page, tmp_path):
    blocks = [b for b in BLOCKS if b.page == page]
    for name, text in {**SETUP, **_named_files(blocks)}.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    ran = 0
    for block in blocks:
        if block.language not in SHELL:
            continue
        for line in command_lines(block):
            key = (page, line)
            if key in NOT_RUN:
                continue
            command = CHEAP.get(key, line)
            if command.startswith("kbsim corpus sample my-kb/") and (tmp_path / "my-kb").exists():
                shutil.rmtree(tmp_path / "my-kb")  # written below for an earlier command: the page writes it now
            elif "my-kb/" in command and not (tmp_path / "my-kb").exists():
                # "your articles", for a command before the page's own `kbsim corpus sample my-kb/`
                assert _run_line("kbsim corpus sample my-kb/", tmp_path).returncode == 0
            if "{run_id}" in command:
                runs = sorted((tmp_path / "results" / "reference" / "runs").iterdir())
                command = command.format(run_id=runs[0].name)
            result = _run_line(command, tmp_path)
            where = f"{page}:{block.line}: {command!r}"
            assert result.returncode == 0, f"{where} exited {result.returncode}\n{result.stderr[-2000:]}"
            ran += 1
    shell = [line for b in blocks if b.language in SHELL for line in command_lines(b)]
    assert ran == len([line for line in shell if (page, line) not in NOT_RUN])


@pytest.mark.parametrize(
    "block", [b for b in BLOCKS if b.language in PYTHON and not any(
        b.page == page and snippet in b.text for page, snippet in NEEDS_SERVER)],
    ids=lambda b: f"{b.page}:{b.line}",
)
def test_every_python_block_runs(block, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    text = block.text
    for (page, old), new in PYTHON_CHEAP.items():
        if page == block.page:
            text = text.replace(old, new)
    namespace = {"sys": sys, "os": os, "ROOT": str(ROOT), "__name__": "__doc_block__"}
    exec(compile(text, f"{block.page}:{block.line}", "exec"), namespace)  # noqa: S102


@pytest.mark.slow
@pytest.mark.xdist_group("docs-blocks")
def test_the_http_client_block_runs_against_the_server(tmp_path):
    (page, snippet), command = next(iter(NEEDS_SERVER.items()))
    block = next(b for b in BLOCKS if b.page == page and snippet in b.text)
    server = subprocess.Popen(
        [sys.executable, "-m", "kbsim", *command.split()], cwd=tmp_path, env=_env(),
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )
    try:
        url = None
        for line in server.stderr:  # "kbsim serve: listening on http://127.0.0.1:PORT/mcp"
            found = re.search(r"listening on (http://127\.0\.0\.1:\d+/mcp)", line)
            if found:
                url = found.group(1)
                break
        assert url, "the server never said where it listens"
        text = block.text.replace("http://127.0.0.1:8000/mcp", url)
        exec(compile(text, f"{block.page}:{block.line}", "exec"), {"__name__": "__doc_block__"})  # noqa: S102
    finally:
        server.terminate()
        server.wait(timeout=30)
