"""The ``kbsim`` command line: one sub-command per module in this package.

Each sub-command module exposes ``register(subparsers)``, which adds its
parser and sets ``func(args) -> int`` as the handler and ``error_prefix``, the
start of the line that reports a :class:`~kbsim.errors.UsageError` escaping it
(``kbsim run: error: ``): :func:`main` prints that line and exits 2, for every
command, in one place.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from kbsim.errors import UsageError, printable
from kbsim.version import __version__

#: Sub-command modules, in the order ``kbsim --help`` lists them.
COMMAND_MODULES = (
    "kbsim.cli.tools_cmd",
    "kbsim.cli.run_cmd",
    "kbsim.cli.experiments_cmd",
    "kbsim.cli.serve_cmd",
    "kbsim.cli.figures_cmd",
    "kbsim.cli.corpus_cmd",
    "kbsim.cli.trace_cmd",
    "kbsim.cli.fit_cmd",
    "kbsim.cli.advise_cmd",
)


def build_parser() -> argparse.ArgumentParser:
    """The ``kbsim`` parser, with every command module's sub-command registered."""
    parser = argparse.ArgumentParser(
        prog="kbsim",
        description="Simulate an AI agent citing and editing a knowledge base people keep editing.",
    )
    parser.add_argument("--version", action="version", version=f"kbsim {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module_name in COMMAND_MODULES:
        importlib.import_module(module_name).register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the command ``argv`` names; its exit status.

    A :class:`~kbsim.errors.UsageError` (a bad config, input, option or results
    folder) becomes one line on stderr, the command's ``error_prefix`` then the
    message naming what is at fault, and exit status 2. The line is printed with control
    characters escaped (:func:`~kbsim.errors.printable`): a message may quote a file's text.
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "func", None) is None:
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except UsageError as error:
        prefix = getattr(args, "error_prefix", f"kbsim {args.command}: error: ")
        print(printable(f"{prefix}{error}"), file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
