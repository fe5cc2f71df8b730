"""``kbsim tools``: print the four tool definitions the store serves."""

from __future__ import annotations

import json


def register(subparsers) -> None:
    """Add the ``kbsim tools`` parser to ``subparsers``, handled by :func:`run`."""
    parser = subparsers.add_parser("tools", help="print the four tool definitions as JSON")
    parser.set_defaults(func=run)


def run(args) -> int:
    """Print the four tool definitions as JSON; the exit status."""
    from kbsim.store.schema import tools_document

    print(json.dumps(tools_document(), indent=2))
    return 0
