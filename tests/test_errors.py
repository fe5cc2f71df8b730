"""One base for every user-facing error, and one place in the CLI that reports it.

Every error a user's file, key, option or folder causes derives from
``kbsim.errors.UsageError`` (a ``ValueError``); ``kbsim.cli.main`` turns one that
escapes a command into one line, the command's own prefix then the message, and
exit status 2.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest

import kbsim
import kbsim.cli
from kbsim.cli import main
from kbsim.errors import UsageError

#: Exceptions of kbsim that are not a user's mistake, and why.
NOT_USAGE = {
    "RunsFailedError": "every run raised: the day's code or the machine, named by the first failure",
    "Interrupted": "a signal, reported as 128 + its number",
    "StalenessMismatch": "an internal invariant (AssertionError)",
    "ReplayError": "an internal invariant (AssertionError)",
    "DesignInvariantError": "an internal invariant (AssertionError): a lost update or a duplicate with CAS and keys on",
    "ToolError": "an agent's tool call refused: the MCP client's answer, not the command line's",
    "StoreBusyError": "a ToolError the agent may retry",
    "StoreFileError": "a store's file failing (kbsim serve reports it as a ServeConfigError naming --db)",
    "_TooDeep": "inside kbsim serve's check of a line, answered as a JSON-RPC error",
    "YAMLBoundsError": "a yaml.YAMLError inside the bounded YAML loader, reported as an InputError or ConfigError",
    "JSONTooDeepError": "a ValueError inside the bounded JSON reader, reported as an InputError or a damaged file",
    "JSONDuplicateKeyError": "a ValueError inside the JSON line reader, reported as an InputError naming the key",
}


def _exception_classes() -> dict[str, type[BaseException]]:
    """Every exception class defined in a kbsim module, by name."""
    found = {}
    for info in pkgutil.walk_packages(kbsim.__path__, "kbsim."):
        if info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if inspect.isclass(value) and issubclass(value, BaseException) and value.__module__ == info.name:
                found[name] = value
    return found


def test_every_user_facing_error_derives_from_usage_error_and_keeps_its_bases():
    classes = _exception_classes()
    assert {name for name, cls in classes.items() if not issubclass(cls, UsageError)} == set(NOT_USAGE)
    expected = {
        "ConfigError", "ResultsError", "DamagedResultsError", "ResultsWriteError", "ResultsConflictError",
        "TooLargeError", "SchedulerUnavailable", "InputError", "AdviceError", "ServeConfigError", "ExportError",
    }  # fmt: skip
    assert expected <= set(classes)
    assert issubclass(UsageError, ValueError)
    # the bases each had before stay, so an existing ``except`` still catches it
    for name, base in [
        ("ConfigError", ValueError), ("InputError", ValueError), ("AdviceError", ValueError),
        ("ServeConfigError", ValueError), ("ExportError", RuntimeError), ("SchedulerUnavailable", ConnectionError),
        ("TooLargeError", classes["ConfigError"]), ("ResultsConflictError", classes["ConfigError"]),
        ("DamagedResultsError", classes["ResultsError"]), ("ResultsWriteError", classes["ResultsError"]),
    ]:  # fmt: skip
        assert issubclass(classes[name], base), name


#: argv that reaches each command's handler, and the prefix its error lines start with.
COMMANDS = [
    (["run", "x.yaml"], "kbsim.cli.run_cmd", "kbsim run: error: "),
    (["sweep", "x.yaml"], "kbsim.cli.run_cmd", "kbsim run: error: "),
    (["figures"], "kbsim.cli.figures_cmd", "kbsim figures: "),
    (["corpus", "check", "kb/"], "kbsim.cli.corpus_cmd", "kbsim corpus check: "),
    (["corpus", "sample", "kb/"], "kbsim.cli.corpus_cmd", "kbsim corpus sample: "),
    (["serve"], "kbsim.cli.serve_cmd", "kbsim serve: "),
    (["drive", "--corpus", "synthetic", "--out", "day"], "kbsim.cli.drive_cmd", "kbsim drive: "),
    (["trace", "export", "runs/x"], "kbsim.cli.trace_cmd", "kbsim trace export: "),
    (["advise", "--max-latency", "15min"], "kbsim.cli.advise_cmd", "kbsim advise: error: "),
]


@pytest.mark.parametrize("argv, module, prefix", COMMANDS, ids=[" ".join(c[0][:2]) for c in COMMANDS])
def test_main_reports_an_escaping_usage_error_as_one_line_and_exit_2(monkeypatch, capsys, argv, module, prefix):
    def refuse(args):
        raise UsageError("experiments/x.yaml: params.saves.count: expected a number")

    monkeypatch.setattr(importlib.import_module(module), "run", refuse)
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == f"{prefix}experiments/x.yaml: params.saves.count: expected a number\n"


def test_main_leaves_other_errors_alone(monkeypatch):
    def broken(args):
        raise RuntimeError("a bug, with its traceback")

    monkeypatch.setattr(importlib.import_module("kbsim.cli.trace_cmd"), "run", broken)
    with pytest.raises(RuntimeError, match="a bug"):
        main(["trace", "export", "runs/x"])


def test_the_real_errors_keep_each_commands_message(tmp_path, capsys):
    """Errors raised deep inside a command, reported by main as the command did before."""
    missing = tmp_path / "missing.yaml"
    cases = [
        (["run", str(missing)], f"kbsim run: error: {missing}: config file not found"),
        (["run", str(missing), "--max-seeds", "3"], "kbsim run: error: --max-seeds needs --precision"),
        (["advise", "--max-latency", "soon"], "kbsim advise: error: --max-latency: "),
        (["advise", "--max-latency", "15min", "--articles", "many"],
         "kbsim advise: error: --articles: expected a whole number, got 'many'"),
        (["trace", "export", str(tmp_path)], f"kbsim trace export: {tmp_path}: not a completed run"),
        (["corpus", "check", str(tmp_path / "nowhere")], f"kbsim corpus check: {tmp_path / 'nowhere'}"),
        (["serve", "--speed", "0"], "kbsim serve: --speed must be > 0"),
    ]  # fmt: skip
    for argv, start in cases:
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert err.startswith(start) and err.count("\n") == 1, (argv, err)
