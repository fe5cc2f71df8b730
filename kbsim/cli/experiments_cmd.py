"""``kbsim experiments``: the experiments kbsim ships, each with its runs and description."""

from __future__ import annotations

import sys


def register(subparsers) -> None:
    """Add ``kbsim experiments`` to the command line."""
    from kbsim.cli import command_help

    parser = subparsers.add_parser(
        "experiments",
        help=command_help("experiments"),
        description="List the experiment configs shipped inside kbsim: name, runs "
        "(points x seeds) and description. `kbsim run NAME` runs one from any folder; "
        "`kbsim run PATH` runs a YAML file of your own.",
    )
    parser.set_defaults(func=run)


def run(args) -> int:
    """List the shipped experiments: name, runs and description; exit 2 when none is found."""
    from kbsim.runner.errors import ConfigError
    from kbsim.runner.grid import config_outline
    from kbsim.runner.shipped import SHIPPED_DIR, shipped_experiments

    shipped = shipped_experiments()
    if not shipped:
        print(f"kbsim experiments: no experiment configs in {SHIPPED_DIR}", file=sys.stderr)
        return 2
    rows = []
    for name, path in shipped.items():
        try:  # read, not validated (tests validate every shipped config): no pandas or SimPy
            description, count = config_outline(path)
        except ConfigError as exc:
            print(f"kbsim experiments: {exc}", file=sys.stderr)
            return 2
        rows.append((name, f"{count:,} runs", description))
    name_width = max(len(name) for name, _, _ in rows)
    runs_width = max(len(runs) for _, runs, _ in rows)
    for name, runs, description in rows:
        print(f"{name:<{name_width}}  {runs:>{runs_width}}  {description}")
    print(f"\nkbsim run NAME runs one (the files: {SHIPPED_DIR})", file=sys.stderr)
    return 0
