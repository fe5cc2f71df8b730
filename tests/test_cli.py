"""The ``kbsim`` command line starts and lists its commands."""

from __future__ import annotations

import json
import subprocess
import sys


def run_kbsim(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kbsim", *args], capture_output=True, text=True, timeout=120)


def test_help_runs():
    result = run_kbsim("--help")
    assert result.returncode == 0
    assert "usage: kbsim" in result.stdout


def test_tools_prints_the_four_definitions():
    result = run_kbsim("tools")
    assert result.returncode == 0
    names = [tool["name"] for tool in json.loads(result.stdout)["tools"]]
    assert names == [
        "search_knowledge_base", "read_knowledge_article", "edit_knowledge_article", "poll_resource_events"
    ]


def test_unknown_command_is_an_error_naming_it():
    result = run_kbsim("frobnicate")
    assert result.returncode == 2
    assert "frobnicate" in result.stderr


def test_the_command_line_starts_without_the_heavy_imports():
    """Every command builds the whole parser, so registering a command must stay cheap:
    scipy (about 0.5 s to import) and matplotlib load only when a figure or interval needs them."""
    code = (
        "import sys; from kbsim.cli import build_parser; build_parser(); "
        "print(sorted(m for m in ('scipy', 'matplotlib') if m in sys.modules))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"
