"""The ``kbsim`` command line: one sub-command per module in this package.

Each sub-command module exposes ``register(subparsers)``, which adds its
parser and sets ``func(args) -> int`` as the handler.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from kbsim.version import __version__

#: Sub-command modules, in the order ``kbsim --help`` lists them.
COMMAND_MODULES = (
    "kbsim.cli.tools_cmd",
    "kbsim.cli.run_cmd",
    "kbsim.cli.serve_cmd",
    "kbsim.cli.figures_cmd",
    "kbsim.cli.corpus_cmd",
    "kbsim.cli.trace_cmd",
    "kbsim.cli.fit_cmd",
    "kbsim.cli.advise_cmd",
)


def build_parser() -> argparse.ArgumentParser:
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
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "func", None) is None:
        parser.print_help()
        return 2
    return int(args.func(args) or 0)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
