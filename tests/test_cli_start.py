"""The command line answers at once: ``kbsim --help``, ``--version``, ``tools`` and
``experiments`` import none of pandas, pyarrow, SimPy or scipy (issue 39); a mistyped command
or flag gets a "did you mean"; Ctrl-C is one line and exit 130. Their CPU time is measured by
``benchmarks/bench_cli_start.py`` into benchmarks/RESULTS.md, not asserted here."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kbsim.cli import build_parser, main

REPO = Path(__file__).resolve().parents[1]
HEAVY = ("pandas", "pyarrow", "simpy", "scipy")
#: What the four commands that answer at once leave out besides: the parameter models
#: (pydantic) and the store (numpy), about 0.4 s of CPU between them.
MODELS = ("pydantic", "numpy")
QUICK = [["--help"], ["--version"], ["tools"], ["experiments"]]


def _imported(argv: list[str], names: tuple[str, ...]) -> list[str]:
    """Which of ``names`` a fresh interpreter has imported after ``kbsim ARGV``."""
    code = (
        "import contextlib, io, json, sys\n"
        "from kbsim.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):\n"
        "    try:\n"
        f"        main({argv!r})\n"
        "    except SystemExit:\n"
        "        pass\n"
        f"print(json.dumps(sorted(m for m in {names!r} if m in sys.modules)))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(REPO)}, check=True)
    return json.loads(done.stdout)


@pytest.mark.parametrize("argv", [*QUICK, ["run", "--help"]])
def test_the_quick_commands_import_none_of_the_heavy_packages(argv):
    imported = _imported(argv, HEAVY + MODELS)
    assert [name for name in imported if name in HEAVY] == []
    if argv in QUICK:  # run --help describes flags that need the models
        assert [name for name in imported if name in MODELS] == []


def test_help_lists_every_command_as_the_full_parser_does():
    """``kbsim --help`` lists the commands from kbsim.cli.COMMANDS without importing them: the
    same text as when every command's module registers its parser."""
    assert build_parser([]).format_help() == build_parser().format_help()
    assert "print the four tool definitions" in build_parser(["tools"]).format_help()


@pytest.mark.parametrize(
    ("argv", "suggestion"),
    [
        (["rnu"], "(did you mean 'run'?)"),
        (["run", "reference", "--seed-count", "3"], "--seed-count (did you mean '--seed' or '--seeds'?)"),
        (["advise", "--max-latncy", "15min"], "unrecognized arguments: --max-latncy (did you mean '--max-latency'?)"),
        (["corpus", "check", "--savs", "3", "kbsim:sample"], "(did you mean '--saves'?)"),
    ],
)
def test_a_mistyped_command_or_flag_gets_a_suggestion(argv, suggestion, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert suggestion in err
    assert "is required" not in err  # not told to add the flag the user believes they gave


def test_tools_help_says_what_it_prints(capsys):
    with pytest.raises(SystemExit):
        main(["tools", "--help"])
    assert "MCP tool definitions" in " ".join(capsys.readouterr().out.split())


@pytest.mark.slow
@pytest.mark.parametrize("delay_s", [0.05, 0.3, 2.0])
def test_ctrl_c_at_any_moment_is_one_line_and_exit_130(delay_s, tmp_path):
    """While the command imports pandas and SimPy, reads its config or runs days: one line on
    stderr, no traceback. (Before kbsim's first line runs, in the interpreter's own start-up,
    Python reports the interrupt itself.)"""
    code = ("import sys, kbsim.cli; print('started', file=sys.stderr, flush=True); sys.exit(kbsim.cli.main("
            f"['run', 'reference', '--out', {str(tmp_path)!r}, '--workers', '1', '--seeds', '3']))")
    process = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert process.stderr.readline() == "started\n"
    time.sleep(delay_s)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=300)
    assert process.returncode == 130, err
    assert "Traceback" not in err and len([line for line in err.splitlines() if "interrupted" in line]) == 1, err


def test_a_ctrl_c_while_the_commands_modules_load_waits_until_they_have():
    """It must never land inside a compiled module's import (pydantic-core turned one into a Rust
    panic and a page of noise, exit 1): it is held until the command's modules are loaded. In a
    fresh interpreter, whose SIGINT is Python's own whatever the suite's worker has done."""
    code = (
        "import json, signal, sys, kbsim.cli\n"
        "loaded = []\n"
        "build = kbsim.cli.build_parser\n"
        "def build_interrupted(argv):\n"
        "    signal.raise_signal(signal.SIGINT)  # as if Ctrl-C came mid-import\n"
        "    parser = build(argv)\n"
        "    loaded.append(True)\n"
        "    return parser\n"
        "kbsim.cli.build_parser = build_interrupted\n"
        "status = kbsim.cli.main(['tools'])\n"
        "print(json.dumps([status, loaded, signal.getsignal(signal.SIGINT) is signal.default_int_handler]))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(REPO)}, check=True)
    assert json.loads(done.stdout.splitlines()[-1]) == [130, [True], True]  # held until built; handler given back
    assert done.stderr == "kbsim: interrupted\n"
