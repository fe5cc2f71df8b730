"""The runs a config asks for, as it is written: its seeds, its scenarios and its sweep grid.

What a run *is* (validated parameters, its id) is :mod:`kbsim.runner.config`'s; here is
only the arithmetic of the grid and the reading of seeds, which need no parameter models,
so that :func:`config_outline` counts a config's runs without pydantic or numpy
(``kbsim experiments`` answers at once).
"""

from __future__ import annotations

import collections
import itertools
import re
from pathlib import Path
from typing import Any

from kbsim.errors import brief
from kbsim.runner.errors import ConfigError
from kbsim.runner.reading import read_chain

__all__ = [
    "DEFAULT_SCENARIOS",
    "DEFAULT_SEEDS",
    "MAX_SEED",
    "MAX_SEEDS",
    "config_outline",
    "expand_sweep",
    "flatten_sweep",
    "parse_seeds",
    "scenario_mapping",
]

#: Seeds are stored in int64 columns.
MAX_SEED = 2**63 - 1
#: Seeds in one experiment (a longer list is refused before it is built).
MAX_SEEDS = 1_000_000
#: The seeds of a config that lists none.
DEFAULT_SEEDS: tuple[int, ...] = (1, 2, 3, 4, 5)
#: The scenarios of a config that names none: one, with no overrides.
DEFAULT_SCENARIOS: tuple[str, ...] = ("default",)


def expand_sweep(sweep: dict[str, Any]) -> list[dict[str, Any]]:
    """The sweep's points: the product of the listed values, last key varying fastest.

    Scalars (``None`` and strings included: strings are not iterated) are one
    value; an empty list is an error. No sweep gives one empty point.
    """
    axes = []
    for key, values in sweep.items():
        if isinstance(values, (list, tuple)):
            if not values:
                raise ValueError(f"sweep {key!r}: empty list; expected at least one value")
            axes.append(list(values))
        else:
            axes.append([values])
    return [dict(zip(sweep, combo, strict=True)) for combo in itertools.product(*axes)]


def flatten_sweep(raw: Any, source: str) -> dict[str, Any]:
    """Sweep entries keyed by dotted name (nested mappings are flattened)."""
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise ConfigError(
            source, "sweep", f"expected a mapping of parameter -> list of values, got {brief(raw)}"
        )
    flat: dict[str, Any] = {}

    def visit(mapping: dict, prefix: str) -> None:
        for key, value in mapping.items():
            dotted = f"{prefix}{key}"
            if isinstance(value, dict):
                visit(value, f"{dotted}.")
            elif dotted in flat:
                raise ConfigError(source, f"sweep.{dotted}", "set twice")
            else:
                flat[dotted] = value

    visit(raw, "")
    return flat


def parse_seeds(value: Any, source: str = "seeds", key_path: str = "seeds") -> list[int]:
    """Seeds from a count N (1..N), a list of ints, or text: ``"20"``, ``"1-5"``, ``"3,7"``.

    At most :data:`~kbsim.runner.MAX_SEEDS` seeds, each below 2**63; a longer range is
    refused before it is listed.
    """
    if isinstance(value, str):
        tokens = [t for t in re.split(r"[,\s]+", value.strip()) if t]
        if len(tokens) == 1 and re.fullmatch(r"\d+", tokens[0]):
            return parse_seeds(int(tokens[0]), source, key_path)
        seeds: list[int] = []
        for token in tokens:
            match = re.fullmatch(r"(\d+)(?:-(\d+))?", token)
            if not match:
                raise ConfigError(
                    source, key_path, f"expected N, a range A-B or a list like 1,2,3; got {brief(token)}"
                )
            low, high = int(match[1]), int(match[2] or match[1])
            if high < low:
                raise ConfigError(source, key_path, f"empty range {brief(token)}")
            if high > MAX_SEED:
                raise ConfigError(source, key_path, f"{brief(token)}: {_SEED_RANGE}, got {high}")
            if len(seeds) + high - low + 1 > MAX_SEEDS:
                raise ConfigError(
                    source, key_path, f"{brief(token)} makes {len(seeds) + high - low + 1} seeds; {_SEED_COUNT}"
                )
            seeds.extend(range(low, high + 1))
        return parse_seeds(seeds, source, key_path)
    if isinstance(value, bool) or not isinstance(value, (int, list, tuple)):
        raise ConfigError(
            source, key_path, f"expected a count N (seeds 1..N) or a list of ints, got {brief(value)}"
        )
    if isinstance(value, int):
        if value < 1:
            raise ConfigError(source, key_path, f"expected a count of at least 1, got {value}")
        if value > MAX_SEEDS:
            raise ConfigError(source, key_path, f"{value} seeds; {_SEED_COUNT}")
        return list(range(1, value + 1))
    if not value:
        raise ConfigError(source, key_path, "expected at least one seed, got an empty list")
    if len(value) > MAX_SEEDS:
        raise ConfigError(source, key_path, f"{len(value)} seeds; {_SEED_COUNT}")
    for i, seed in enumerate(value):
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise ConfigError(
                source, f"{key_path}[{i}]", f"expected a non-negative integer seed, got {seed!r}"
            )
        if seed > MAX_SEED:
            raise ConfigError(source, f"{key_path}[{i}]", f"{_SEED_RANGE}, got {seed}")
    duplicates = sorted(s for s, n in collections.Counter(value).items() if n > 1)
    if duplicates:
        raise ConfigError(
            source, key_path, f"duplicate seeds {duplicates}; expected distinct seeds"
        )
    return list(value)


_SEED_RANGE = "expected seeds below 2**63 (every table stores the seed as an int64)"
_SEED_COUNT = f"expected at most {MAX_SEEDS} seeds in one experiment"


def scenario_mapping(raw: Any, source: str) -> dict:
    """A config's ``scenarios`` as written: a non-empty mapping of scenario name -> overrides.

    Raises:
        ConfigError: anything else, naming ``scenarios``.
    """
    if not isinstance(raw, dict) or not raw:
        raise ConfigError(
            source, "scenarios", f"expected a non-empty mapping of scenario name -> overrides, got {brief(raw)}"
        )
    return raw


def _outline_shape(raw: dict, source: str, folder: Path) -> tuple[dict, dict[tuple, str]]:
    """The keys of one file that say how many runs it makes, in the shapes they merge in."""
    data: dict[str, Any] = {key: raw[key] for key in ("description", "seeds") if key in raw}
    if "scenarios" in raw:
        data["scenarios"] = {name: {} for name in scenario_mapping(raw["scenarios"], source)}
    if "sweep" in raw:
        data["sweep"] = flatten_sweep(raw["sweep"], source)
    return data, {}


def config_outline(path: str | Path) -> tuple[str, int]:
    """A config file's description and number of runs (scenarios x sweep points x seeds), read
    with its ``extends`` chain but not validated: what ``kbsim experiments`` lists, without the
    parameter models, statistics and simulation modules a full
    :func:`kbsim.runner.load.load_config` imports.

    Raises:
        ConfigError: a file that cannot be read as a config, or a bad ``seeds``, ``scenarios``
            or sweep.
    """
    path = Path(path)
    data, _ = read_chain(path, _outline_shape, None)
    seeds = parse_seeds(data["seeds"], str(path)) if "seeds" in data else DEFAULT_SEEDS
    scenarios = data.get("scenarios") or DEFAULT_SCENARIOS
    try:
        points = len(expand_sweep(data.get("sweep") or {}))
    except ValueError as exc:
        raise ConfigError(str(path), "sweep", str(exc)) from None
    return str(data.get("description", "")), len(scenarios) * points * len(seeds)
