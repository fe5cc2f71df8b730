"""``kbsim check``: check a knowledge-base MCP server against the write-up's advice, from the
histories of driven days, or from a short targeted day of its own."""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

SAFETY = ("The check's day edits the server's knowledge base (a few articles' text; with admin tools it "
          "publishes and unpublishes a probe article): check a staging copy, never production.")


def register(subparsers) -> None:
    """Add ``kbsim check`` to the command line."""
    from kbsim.cli import command_help
    from kbsim.drive.client import DEFAULT_CALL_TIMEOUT_S

    parser = subparsers.add_parser(
        "check",
        help=command_help("check"),
        description=(
            "Check a server against the write-up's five pieces of advice (versions, the log, published only, "
            "compare-and-swap and keys, marking): each property holds, is violated (with the ids of the calls "
            "that show it) or is not observable (and why). Give the history folders of driven days "
            "(kbsim drive, or an earlier kbsim check --out), or drive a short targeted day against --url URL or "
            f"a stdio command after --. {SAFETY} Exit status: 0 nothing violated, 1 a property violated, "
            "2 a bad input (nothing written)."
        ),
        epilog="examples: kbsim check drive/seed-1 drive/seed-2 --markdown card.md; "
               "kbsim check --url http://127.0.0.1:8765/mcp --yes-edit-this-server --json card.json",
    )
    parser.add_argument("targets", nargs="*", metavar="HISTORY",
                        help="history folders to check; or, after --, the command that serves MCP over stdio")
    parser.add_argument("--url", help="drive the check's day against this Streamable HTTP endpoint")
    parser.add_argument("--header-env", action="append", default=[], metavar="HEADER=ENV_VARIABLE",
                        help="send HTTP header HEADER with the value of environment variable ENV_VARIABLE "
                             "(repeatable); the value is never printed or written")
    parser.add_argument("--kb-id", default="kb-1", help="the knowledge base id on the server (default kb-1)")
    parser.add_argument("--out", metavar="DIR", help="a new folder for the check day's history (default: a "
                                                     "temporary one, removed after)")
    parser.add_argument("--json", metavar="FILE", help="write the report card as JSON")
    parser.add_argument("--markdown", metavar="FILE", help="write the report card as Markdown (for a pull request)")
    parser.add_argument("--racers", type=int, default=4, metavar="N", help="racing clients (default 4)")
    parser.add_argument("--rounds", type=int, default=20, metavar="N",
                        help="read-and-edit rounds of each racing client (default 20)")
    parser.add_argument("--hot", type=int, default=2, metavar="N", help="articles the racers share (default 2)")
    parser.add_argument("--seed", type=int, default=1, help="the racing clients' seed (default 1)")
    parser.add_argument("--timeout", type=float, default=DEFAULT_CALL_TIMEOUT_S, metavar="SECONDS",
                        help=f"a call unanswered this long stops the day (default {DEFAULT_CALL_TIMEOUT_S:g} s)")
    parser.add_argument("--yes-edit-this-server", action="store_true",
                        help="required to drive a day: you accept that it edits this server's knowledge base")
    parser.set_defaults(func=run, error_prefix="kbsim check: ")


def _split(args: argparse.Namespace):
    """``(history folders, stdio command)``: the targets are folders, or a command (after --)."""
    from kbsim.drive.client import DriveError

    targets = [t for t in args.targets if t != "--"]
    if not targets:
        return [], []
    if Path(targets[0]).is_dir():
        return targets, []
    if shutil.which(targets[0]) is not None and args.url is None:  # a program (on PATH, or a path to one)
        return [], targets
    raise DriveError(f"{targets[0]}: no such history folder (a stdio server's command goes after --, and must be "
                     "on PATH)")


def _options(args: argparse.Namespace):
    from kbsim.check.day import CheckDayOptions
    from kbsim.drive.client import DriveError

    for flag, value, low, high in (("--racers", args.racers, 1, 64), ("--rounds", args.rounds, 1, 10_000),
                                   ("--hot", args.hot, 1, 100)):
        if not low <= value <= high:
            raise DriveError(f"{flag} {value}: expected {low} to {high}")
    if not args.timeout > 0:
        raise DriveError(f"--timeout {args.timeout:g}: expected seconds > 0")
    return CheckDayOptions(racers=args.racers, rounds=args.rounds, hot=args.hot, seed=args.seed, kb_id=args.kb_id,
                           timeout_s=args.timeout)


def run(args: argparse.Namespace) -> int:
    """``kbsim check``: drive the day if asked, check the histories, print and write the card."""
    from kbsim.check import check_folders, write_card
    from kbsim.drive.client import DriveError, ServerAddress

    histories, command = _split(args)
    for flag, path in (("--json", args.json), ("--markdown", args.markdown)):
        if path is not None and Path(path).is_dir():
            raise DriveError(f"{flag} {path}: is a folder; give a file")
    live = args.url is not None or bool(command)
    if live and histories:
        raise DriveError("give history folders, or a server (--url URL or -- COMMAND), not both")
    if not live and not histories:
        raise DriveError("nothing to check: give history folders, --url URL, or -- COMMAND ARGS")
    if live:
        from kbsim.check.day import check_day
        from kbsim.extras import require

        require("serve", "mcp", "kbsim check")
        options = _options(args)
        address = ServerAddress.http(args.url, args.header_env) if args.url is not None else ServerAddress.stdio(
            command)
        if args.header_env and args.url is None:
            raise DriveError("--header-env needs --url (a stdio server has no HTTP headers)")
        out = Path(args.out) if args.out is not None else None
        if out is not None and out.exists() and (not out.is_dir() or any(out.iterdir())):
            raise DriveError(f"--out {out}: exists and is not an empty folder; give a new folder")
        print(f"kbsim check: {address.shown()} ({address.transport}), knowledge base {args.kb_id}: "
              f"{options.racers} racing clients x {options.rounds} rounds on {options.hot} hot articles, "
              "after the probes", file=sys.stderr)
        if not args.yes_edit_this_server:
            raise DriveError(f"refusing to start without --yes-edit-this-server. {SAFETY}")
        with tempfile.TemporaryDirectory(prefix="kbsim-check-") as scratch:
            folder = out if out is not None else Path(scratch) / "history"
            check_day(address, folder, options,
                      on_ready=lambda line: print(f"kbsim check: {line}", file=sys.stderr, flush=True))
            card = check_folders([folder])
            if out is None:
                card = card.model_copy(update={"histories": ["(the check's day, not kept: --out DIR keeps it)"]})
    else:
        card = check_folders(histories)
    sys.stdout.write(card.table())
    write_card(card, args.json, args.markdown)
    return 1 if card.violated else 0
