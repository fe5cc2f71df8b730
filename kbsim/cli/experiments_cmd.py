"""``kbsim experiments``: the experiments kbsim ships, each with its runs and description."""

from __future__ import annotations

import sys


def register(subparsers) -> None:
    """Add ``kbsim experiments`` to the command line."""
    parser = subparsers.add_parser(
        "experiments",
        help="list the shipped experiments (kbsim run NAME runs one from any folder)",
        description="List the experiment configs shipped inside kbsim: name, runs "
        "(points x seeds) and description. `kbsim run NAME` runs one from any folder; "
        "`kbsim run PATH` runs a YAML file of your own.",
    )
    parser.set_defaults(func=run)


def run(args) -> int:
    """List the shipped experiments: name, runs and description; exit 2 when none is found."""
    from kbsim.runner.config import ConfigError
    from kbsim.runner.load import load_config
    from kbsim.runner.shipped import SHIPPED_DIR, shipped_experiments

    shipped = shipped_experiments()
    if not shipped:
        print(f"kbsim experiments: no experiment configs in {SHIPPED_DIR}", file=sys.stderr)
        return 2
    rows = []
    for name, path in shipped.items():
        try:
            config = load_config(path)
        except ConfigError as exc:
            print(f"kbsim experiments: {exc}", file=sys.stderr)
            return 2
        rows.append((name, f"{len(config.runs()):,} runs", config.description))
    name_width = max(len(name) for name, _, _ in rows)
    runs_width = max(len(runs) for _, runs, _ in rows)
    for name, runs, description in rows:
        print(f"{name:<{name_width}}  {runs:>{runs_width}}  {description}")
    print(f"\nkbsim run NAME runs one (the files: {SHIPPED_DIR})", file=sys.stderr)
    return 0
