"""The arguments every command that reads an experiment config takes: ``--set`` and ``--seeds``."""

from __future__ import annotations

import argparse

from kbsim.experiment.config import ExperimentConfig
from kbsim.experiment.load import load_config


def add_config_arguments(parser: argparse.ArgumentParser) -> None:
    """Add ``--set KEY=VALUE`` and ``--seeds`` to an argparse parser (every config command)."""
    parser.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a config value (YAML): saves.count=500, edit.delay_s=null, seeds=3; "
        "a swept parameter is pinned to the value; repeatable",
    )
    parser.add_argument(
        "--seeds",
        nargs="+",
        metavar="SEEDS",
        help="replace the config's seeds: N (seeds 1..N), a range A-B, or a list 3 7 9",
    )


def config_from_args(args: argparse.Namespace) -> ExperimentConfig:
    """The validated config named by ``args.config`` with ``--set`` and ``--seeds`` applied
    (a grid too large to run without ``--yes`` is refused before its points are validated)."""
    seeds = " ".join(args.seeds) if getattr(args, "seeds", None) else None
    return load_config(args.config, getattr(args, "overrides", ()) or (), seeds=seeds,
                       yes=getattr(args, "yes", True))
