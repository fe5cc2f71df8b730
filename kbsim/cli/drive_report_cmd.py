"""``kbsim drive-report``: set the histories ``kbsim drive`` wrote beside the model."""

from __future__ import annotations

from kbsim.cli.drive_cmd import run_report


def register(subparsers) -> None:
    """Add ``kbsim drive-report`` to the command line, handled by :func:`kbsim.cli.drive_cmd.run_report`."""
    from kbsim.cli import command_help

    report = subparsers.add_parser(
        "drive-report",
        help=command_help("drive-report"),
        description="Read the histories kbsim drive wrote and write the table of model against measured, "
                    "each figure with its interval over the driven days (the seed is the unit).",
    )
    report.add_argument("histories", nargs="+", metavar="HISTORY", help="folders kbsim drive wrote")
    report.add_argument("--out", metavar="FILE.md", help="write the page here (default: print it)")
    report.add_argument("--command", metavar="TEXT",
                        help="the command the page names as the one that regenerates it (default: this one)")
    report.set_defaults(func=run_report, error_prefix="kbsim drive-report: ")
