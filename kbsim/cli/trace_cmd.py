"""``kbsim trace export RUN_DIR``: write a simulated day's activity as trace files.

The run's day is simulated again from its ``run.json`` and must give the run's own
tables; then ``saves.csv`` and ``questions.csv`` are written, which replay it exactly
(``saves: {trace: saves.csv}``, ``questions: {trace: questions.csv}``).

Exit codes: 0 written; 2 not a run directory, a run this kbsim does not reproduce, or
files that exist.
"""

from __future__ import annotations

import argparse
from pathlib import Path

EPILOG = """\
examples:
  kbsim trace export results/reference/runs/abb83d9fd192 --out traces/
  # then, in a config:  params: {saves: {trace: traces/saves.csv}, questions: {trace: traces/questions.csv}}
"""


def register(subparsers) -> None:
    """Add the ``kbsim trace`` parser to ``subparsers``, handled by :func:`run`."""
    from kbsim.cli import command_help

    parser = subparsers.add_parser(
        "trace",
        help=command_help("trace"),
        description="Write the saves and questions of one run of a results directory as saves.csv and "
        "questions.csv, the trace files a config replays.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    export = actions.add_parser("export", help="write RUN_DIR's activity as saves.csv and questions.csv")
    export.add_argument("run_dir", metavar="RUN_DIR", help="results/<experiment>/runs/<run_id>")
    export.add_argument("--out", metavar="DIR", help="where to write (default: trace-<run_id>)")
    export.add_argument("--force", action="store_true", help="overwrite saves.csv and questions.csv there")
    export.set_defaults(error_prefix="kbsim trace export: ")
    parser.set_defaults(func=run)


def run(args) -> int:
    """Write the run's day as ``saves.csv`` and ``questions.csv``, checked against its tables; the exit status."""
    from kbsim.sim.export import export_run

    run_dir = Path(args.run_dir)
    out = Path(args.out) if args.out else Path(f"trace-{run_dir.resolve().name}")
    saves, questions = export_run(run_dir, out, overwrite=args.force)
    print(saves)
    print(questions)
    return 0
