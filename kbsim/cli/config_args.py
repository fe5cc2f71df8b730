"""The arguments every command that reads an experiment config takes: ``--set``, ``--seeds``
and ``--seed``."""

from __future__ import annotations

import argparse
import re

from kbsim.errors import OptionError
from kbsim.runner.config import ExperimentConfig
from kbsim.runner.limits import MAX_SEED
from kbsim.runner.load import load_config

#: What ``--quiet`` does, in the words every command's help uses.
QUIET_HELP = "print only the result and errors: no progress bar, notes or warnings"


def add_quiet_argument(parser: argparse.ArgumentParser) -> None:
    """Add ``--quiet`` (``-q``) to a command that prints progress, notes or warnings beside its result."""
    parser.add_argument("-q", "--quiet", action="store_true", help=QUIET_HELP)


#: What ``--seeds`` means, in the words every command's help uses.
SEEDS_HELP = (
    "replace the config's seeds: a count N means seeds 1 to N (--seeds 3 runs seeds 1, 2 and 3), "
    "A-B the seeds A to B, or a list 3 7 9; for one seed alone, --seed N"
)


def add_config_arguments(parser: argparse.ArgumentParser) -> None:
    """Add ``--set KEY=VALUE``, ``--seeds`` and ``--seed`` to an argparse parser (every config command)."""
    parser.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a config value (YAML): saves.count=500, edit.delay_s=10min, edit.delay_s=null, "
        "seeds=3; a swept parameter is pinned to the value; repeatable",
    )
    parser.add_argument("--seeds", nargs="+", metavar="SEEDS", help=SEEDS_HELP)
    parser.add_argument("--seed", metavar="N", help="run this one seed alone (--seed 7 is --seeds 7-7)")


def one_seed(text: str, flag: str = "--seed") -> int:
    """The seed ``text`` names: a whole number from 0 to 2**63 - 1.

    Raises:
        OptionError: naming ``flag``, when ``text`` is not one such number.
    """
    raw = str(text).strip()
    if not re.fullmatch(r"\d+", raw):
        raise OptionError(flag, f"expected one seed, a whole number like 7, got {text!r} "
                          "(several seeds: --seeds 1-5 or --seeds 3 7 9)")
    seed = int(raw)
    if seed > MAX_SEED:
        raise OptionError(flag, f"expected a seed from 0 to 2**63 - 1, got {seed}")
    return seed


def exclusive_seeds(args: argparse.Namespace) -> None:
    """Refuse ``--seed`` together with ``--seeds`` (OptionError naming both)."""
    if getattr(args, "seed", None) is not None and getattr(args, "seeds", None) not in (None, [], ""):
        raise OptionError("--seed", "give --seed N (one seed) or --seeds (several), not both")


def config_from_args(args: argparse.Namespace) -> ExperimentConfig:
    """The validated config named by ``args.config`` with ``--set`` and ``--seeds`` or ``--seed``
    applied (a grid too large to run without ``--yes`` is refused before its points are validated).

    Raises:
        OptionError: ``--seed`` and ``--seeds`` both given, or a ``--seed`` that is not one seed.
        ConfigError: a bad config, override or ``--seeds``, naming it.
    """
    exclusive_seeds(args)
    seeds: list[int] | str | None
    if getattr(args, "seed", None) is not None:
        seeds, flag = [one_seed(args.seed)], "--seed"
    else:
        seeds, flag = (" ".join(args.seeds) if getattr(args, "seeds", None) else None), "--seeds"
    return load_config(args.config, getattr(args, "overrides", ()) or (), seeds=seeds,
                       yes=getattr(args, "yes", True), seeds_flag=flag)
