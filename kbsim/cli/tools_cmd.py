"""``kbsim tools``: print the four tool definitions the store serves."""

from __future__ import annotations

import json


def register(subparsers) -> None:
    """Add the ``kbsim tools`` parser to ``subparsers``, handled by :func:`run`."""
    from kbsim.cli import command_help

    parser = subparsers.add_parser(
        "tools",
        help=command_help("tools"),
        description="Print the four tools the store serves (search, read, edit, poll), as the "
        "MCP tool definitions of kbsim/spec/tools.json: name, description, input schema, annotations.",
    )
    parser.set_defaults(func=run)


def run(args) -> int:
    """Print the four tool definitions as JSON; the exit status."""
    from kbsim.spec import tools_document

    print(json.dumps(tools_document(), indent=2))
    return 0
