"""The ``kbsim`` command line: one sub-command per module in this package.

Each sub-command module exposes ``register(subparsers)``, which adds its
parser and sets ``func(args) -> int`` as the handler and ``error_prefix``, the
start of the line that reports a :class:`~kbsim.errors.UsageError` escaping it
(``kbsim run: error: ``): :func:`main` prints that line and exits 2, for every
command, in one place. It also stops every command quietly when its reader goes away
(``kbsim tools | head -1``): no traceback for a broken pipe.

:func:`main` imports only the module of the command it runs: the others are listed in
``kbsim --help`` from :data:`COMMANDS` alone, so ``kbsim --help``, ``--version``, ``tools``
and ``experiments`` start without pandas, pyarrow, SimPy or scipy. A mistyped command or
flag gets a "did you mean" (difflib), and Ctrl-C at any moment is one line and exit 130.
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import importlib
import os
import signal
import sys
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import NoReturn

from kbsim.errors import UsageError, printable
from kbsim.extras import MissingExtraError
from kbsim.version import __version__


@dataclass(frozen=True)
class Command:
    """A sub-command: its name, the module that registers it, its one-line help and aliases."""

    name: str
    module: str
    help: str
    aliases: tuple[str, ...] = ()


#: The sub-commands, in the order ``kbsim --help`` lists them; each module's parser takes its
#: help from here (:func:`command_help`), so the list shown without importing it is the same.
COMMANDS = (
    Command("tools", "kbsim.cli.tools_cmd", "print the four tool definitions as JSON"),
    Command("run", "kbsim.cli.run_cmd", "run an experiment config (scenarios x sweep x seeds), resumably",
            ("sweep",)),
    Command("experiments", "kbsim.cli.experiments_cmd",
            "list the shipped experiments (kbsim run NAME runs one from any folder)"),
    Command("serve", "kbsim.cli.serve_cmd",
            "serve the knowledge base as an MCP server (the four tools), over stdio or HTTP"),
    Command("drive", "kbsim.cli.drive_cmd",
            "drive a live knowledge-base MCP server through a day (HTTP URL or stdio command)"),
    Command("drive-report", "kbsim.cli.drive_report_cmd",
            "set driven days' histories beside the model (the page 'your server against the model')"),
    Command("check", "kbsim.cli.check_cmd",
            "check a server against the write-up's advice, from driven days' histories or a short day of its own"),
    Command("figures", "kbsim.cli.figures_cmd",
            "run the missing results and write figures/*.png, *.svg, figures/README.md"),
    Command("corpus", "kbsim.cli.corpus_cmd", "check a knowledge base's files, or write out the shipped sample"),
    Command("trace", "kbsim.cli.trace_cmd", "export a simulated day's saves and questions as trace files"),
    Command("fit", "kbsim.cli.fit_cmd",
            "estimate a day (rates, profile, popularity, bursts) from your logs, and write it as a config"),
    Command("advise", "kbsim.cli.advise_cmd",
            "the cheapest check strategy and interval for your day, and a safe edit delay"),
)
#: Sub-command modules, in the order ``kbsim --help`` lists them.
COMMAND_MODULES = tuple(command.module for command in COMMANDS)


def command_help(name: str) -> str:
    """The one-line help of the sub-command ``name`` (as ``kbsim --help`` lists it)."""
    return next(command.help for command in COMMANDS if command.name == name)


def did_you_mean(word: str, choices: Sequence[str]) -> str:
    """`` (did you mean 'run'?)`` for the choices closest to ``word`` (at most two); empty when
    none is close."""
    choices = sorted(set(choices))
    stem = word.rsplit("-", 1)[0] if word.startswith("--") and word.count("-") > 2 else word
    kin = [choice for choice in choices if choice.startswith(stem)]  # --seed-count: --seed, --seeds
    close = difflib.get_close_matches(word, kin or choices, n=2, cutoff=0.6) or kin[:2]
    return f" (did you mean {' or '.join(repr(c) for c in close)}?)" if close else ""


class Parser(argparse.ArgumentParser):
    """An argparse parser whose errors suggest the command or flag the user may have meant."""

    def error(self, message: str) -> NoReturn:
        """Exit 2 with ``message``, and the closest choice to an invalid one."""
        if "invalid choice: " in message:
            word = message.split("invalid choice: ", 1)[1].split(" (choose from", 1)[0].strip("'\"")
            choices = [choice for action in self._actions for choice in (action.choices or ())]
            message += did_you_mean(word, [str(choice) for choice in choices])
        super().error(message)


def _command_named(argv: Sequence[str]) -> Command | None:
    """The command ``argv`` runs: its first word that is not an option, if that names one."""
    for word in argv:
        if word == "--":
            return None
        if not word.startswith("-"):
            return next((c for c in COMMANDS if word == c.name or word in c.aliases), None)
    return None


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The ``kbsim`` parser: every command's module registered, or with ``argv`` only the one
    it runs (the others listed by name and help, so that ``kbsim --help`` imports none)."""
    parser = Parser(
        prog="kbsim",
        description="Simulate an AI agent citing and editing a knowledge base people keep editing.",
    )
    parser.add_argument("--version", action="version", version=f"kbsim {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    wanted = None if argv is None else _command_named(argv)
    for command in COMMANDS:
        if argv is None or command is wanted:
            importlib.import_module(command.module).register(subparsers)
        else:  # listed only: the command is not run, so its module is not imported
            subparsers.add_parser(command.name, aliases=list(command.aliases), help=command.help)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the command ``argv`` names; its exit status.

    A :class:`~kbsim.errors.UsageError` (a bad config, input, option or results
    folder) becomes one line on stderr, the command's ``error_prefix`` then the
    message naming what is at fault, and exit status 2. The line is printed with control
    characters escaped (:func:`~kbsim.errors.printable`): a message may quote a file's text.

    A reader of stdout that goes away (``| head -1``) stops the command quietly, as it
    stops a Unix tool: no traceback, and the status a shell reports for SIGPIPE (141).
    Ctrl-C (at any moment, imports included) is one line and exit status 130. While the
    command's modules load it is held until they have (:class:`_CtrlC`).
    """
    try:
        status = _main(sys.argv[1:] if argv is None else argv)
        sys.stdout.flush()  # here, not at exit: a closed pipe is then seen and handled below
        return status
    except BrokenPipeError:
        return _stdout_gone()
    except KeyboardInterrupt:
        print("kbsim: interrupted", file=sys.stderr)
        return 130


class _CtrlC:
    """Ctrl-C held back while the command's modules load, and raised once they have: it must
    never land inside a compiled module's import, where it is not a KeyboardInterrupt but that
    module's failure (pydantic-core's Rust turned an import of ``datetime`` cut short into a
    ``PanicException``: a panic message, a traceback, exit 1).

    Only where Python's own handler is in place, in the main thread (a caller's own handler, a
    test's or an embedding program's, is left alone), and only for the block: the command then
    runs under Python's handler, which anyio's event loop replaces with its own graceful one.
    """

    def __init__(self) -> None:
        self._pending = False

    def _handler(self, signum: int, frame: object) -> None:
        self._pending = True

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        """Hold a Ctrl-C that comes inside the block until it ends, then raise it."""
        if (threading.current_thread() is not threading.main_thread()
                or signal.getsignal(signal.SIGINT) is not signal.default_int_handler):
            yield
            return
        signal.signal(signal.SIGINT, self._handler)
        try:
            yield
        finally:
            signal.signal(signal.SIGINT, signal.default_int_handler)
        if self._pending:
            raise KeyboardInterrupt


def _refuse_unknown_flags(parser: argparse.ArgumentParser, argv: Sequence[str]) -> None:
    """Refuse a ``--flag`` the command does not take before argparse parses (which would first
    complain of a required flag missing, or show the top-level usage), suggesting the closest."""
    command = _command_named(argv)
    if command is None:
        return
    chosen = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices[command.name]
    parsers, flags = [chosen], set()
    while parsers:  # the command's parser and its own sub-commands' (kbsim corpus check)
        current = parsers.pop()
        for action in current._actions:
            flags.update(action.option_strings)
            if isinstance(action, argparse._SubParsersAction):
                parsers.extend(action.choices.values())
    for word in argv[list(argv).index(next(w for w in argv if not w.startswith("-"))) + 1 :]:
        if word == "--":
            return
        name = word.partition("=")[0]
        if word.startswith("--") and not any(flag.startswith(name) for flag in flags):
            chosen.error(f"unrecognized arguments: {word}{did_you_mean(name, list(flags))}")


def _missing_extra_line(command: str, error: MissingExtraError) -> str:
    """``kbsim run: error: --executor dask needs the 'dask' extra (...): pip install ...``, the
    feature left out when it is the command itself (``kbsim serve: error: needs the ...``)."""
    feature = error.feature.removeprefix(f"kbsim {command}").strip()
    return (f"kbsim {command}: error: {feature + ' ' if feature else ''}needs the {error.extra!r} extra "
            f"({error.module} is not installed): pip install 'kbsim[{error.extra}]'")


def _main(argv: list[str]) -> int:
    with _CtrlC().held():  # the command's modules load here: pydantic's among them
        parser = build_parser(argv)
    _refuse_unknown_flags(parser, argv)
    args = parser.parse_args(argv)
    if getattr(args, "func", None) is None:
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except UsageError as error:
        prefix = getattr(args, "error_prefix", f"kbsim {args.command}: error: ")
        if isinstance(error, MissingExtraError):  # one form for every command and extra
            print(_missing_extra_line(args.command, error), file=sys.stderr)
            return 2
        print(printable(f"{prefix}{error}"), file=sys.stderr)
        return 2


def _stdout_gone() -> int:
    """The reader of stdout has gone: point stdout at /dev/null, so that what is still buffered
    is dropped at exit instead of raising again, and return 128 + SIGPIPE."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, sys.stdout.fileno())
        finally:
            os.close(devnull)
    except (OSError, ValueError, AttributeError):  # not a file: a test's captured stdout
        pass
    return 128 + getattr(signal, "SIGPIPE", 13)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
