"""Experiment configs: YAML files that name a set of simulated days.

A config sets day parameters, lists seeds and scenarios, and declares a
sweep (the product of listed values, Mesa batch-runner style). Everything is
validated before anything runs, every run's :class:`~kbsim.params.DayParams`
included, so a misspelled key fails at once with a :class:`ConfigError`
naming the file, the key path and what was expected.

```yaml
# what question this experiment answers
extends: reference.yaml        # optional, relative to this file; deep-merged
name: my_sweep                 # default: the file name without .yaml
params: {saves.count: 500}     # DayParams overrides, nested or dotted keys
seeds: 20                      # a count (seeds 1..20) or a list of ints
scenarios:                     # name -> overrides (default: {default: {}})
  zipf: {}
  control: {saves.popularity: uniform}
sweep:                         # dotted parameter -> values; runs = the product
  zipf_s: [0.0, 0.5, 1.0]
  edit.delay_s: [null, 60]     # null is a value; a scalar is one value
contrasts:                     # comparisons paired on common seeds -> contrasts.csv (not inherited)
  - metric: stale_citation_share          # a kbsim.stats metric; optional at (end, 1h, ...),
    baseline: {scenario: control}         #   strategy, subset; every other point vs this one
    where: {edit.delay_s: null}           # optional: only the points matching this
    compare: difference                   # or ratio
```
"""

from __future__ import annotations

import collections
import copy
import difflib
import hashlib
import itertools
import json
import math
import os
import re
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError, field_validator

from kbsim.experiment import limits
from kbsim.params import INPUT_PATHS, DayParams

__all__ = [
    "CONFIG_KEYS",
    "ConfigError",
    "ExperimentConfig",
    "RunSpec",
    "add_config_arguments",
    "canonical_json",
    "config_from_args",
    "config_from_dict",
    "expand_sweep",
    "load_config",
    "parse_seeds",
]

#: The keys a config file may hold at its top level.
CONFIG_KEYS = ("name", "extends", "description", "params", "seeds", "scenarios", "sweep", "contrasts")
#: The keys of one entry of ``contrasts``.
CONTRAST_KEYS = ("metric", "at", "strategy", "subset", "baseline", "where", "compare")

_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_SCALAR_TYPES = (bool, int, float, str, type(None))


class ConfigError(ValueError):
    """A config that cannot be run: names the file, the key path and what was expected."""

    def __init__(self, source: str, key_path: str, problem: str) -> None:
        self.source = str(source)
        self.key_path = key_path
        self.problem = problem
        where = f"{self.source}: {key_path}" if key_path else self.source
        super().__init__(f"{where}: {problem}")


# --------------------------------------------------------------------------- YAML


class _Loader(yaml.SafeLoader):
    """SafeLoader that rejects duplicate keys and reads ``1e3`` as a float (YAML 1.2 style)."""


_Loader.yaml_implicit_resolvers = {
    first: list(resolvers) for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(?:[0-9][0-9_]*)(?:\.[0-9_]*)?[eE][-+]?[0-9]+$"),
    list("-+0123456789"),
)


def _construct_mapping(loader: _Loader, node: yaml.MappingNode, deep: bool = False) -> dict:
    loader.flatten_mapping(node)
    mapping: dict = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if key in mapping:
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate key {key!r}", key_node.start_mark
            )
        mapping[key] = loader.construct_object(value_node, deep=deep)
    return mapping


_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def _parse_yaml(text: str, source: str) -> Any:
    try:
        return yaml.load(text, Loader=_Loader)  # noqa: S506 (a SafeLoader subclass)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise ConfigError(source, "", f"invalid YAML at {where}{problem}") from None


# ----------------------------------------------------------------- parameter paths


def _submodel(annotation: Any) -> type[BaseModel] | None:
    """The pydantic model a field holds (``X`` or ``X | None``), else None."""
    candidates = [annotation, *typing.get_args(annotation)]
    for candidate in candidates:
        if isinstance(candidate, type) and issubclass(candidate, BaseModel):
            return candidate
    return None


def _param_leaf(dotted: str, source: str, key_path: str) -> None:
    """Check that ``dotted`` names a DayParams field, raising a ConfigError otherwise."""
    model: type[BaseModel] | None = DayParams
    done: list[str] = []
    for part in dotted.split("."):
        if model is None:
            raise ConfigError(
                source, key_path, f"{'.'.join(done)!r} is a single value and has no key {part!r}"
            )
        _check_field(model, part, source, key_path)
        model = _submodel(model.model_fields[part].annotation)
        done.append(part)


def _check_field(model: type[BaseModel], key: Any, source: str, key_path: str) -> None:
    fields = list(model.model_fields)
    if isinstance(key, str) and key in fields:
        return
    close = difflib.get_close_matches(str(key), fields, n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    raise ConfigError(
        source,
        key_path,
        f"unknown parameter {key!r}; expected one of: {', '.join(fields)}{hint}",
    )


def _nest_params(raw: Any, source: str, key_path: str, model: type[BaseModel] = DayParams) -> dict:
    """DayParams overrides with dotted keys expanded into nested dicts, every key checked."""
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise ConfigError(
            source,
            key_path,
            f"expected a mapping of parameters ({', '.join(model.model_fields)}), "
            f"got {type(raw).__name__} {raw!r}",
        )
    nested: dict = {}
    for key, value in raw.items():
        if not isinstance(key, str):
            _check_field(model, key, source, key_path)
        head, _, rest = key.partition(".")
        path = f"{key_path}.{head}"
        _check_field(model, head, source, path)
        sub = _submodel(model.model_fields[head].annotation)
        if rest:
            if sub is None:
                raise ConfigError(
                    source, f"{path}.{rest}", f"{head!r} is a single value and has no key {rest!r}"
                )
            value = {rest: value}
        if sub is not None and isinstance(value, dict):
            value = _nest_params(value, source, path, sub)
            existing = nested.get(head, {})
            if not isinstance(existing, dict):
                raise ConfigError(source, path, "set twice (as a value and as a mapping)")
            for sub_key in value:
                if sub_key in existing:
                    raise ConfigError(source, f"{path}.{sub_key}", "set twice")
            nested[head] = _deep_merge(existing, value)
        else:
            if head in nested:
                raise ConfigError(source, path, "set twice")
            nested[head] = value
    return nested


def _flatten_sweep(raw: Any, source: str) -> dict[str, Any]:
    """Sweep entries keyed by dotted name (nested mappings are flattened)."""
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise ConfigError(
            source, "sweep", f"expected a mapping of parameter -> list of values, got {raw!r}"
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


def _deep_merge(base: dict, override: dict) -> dict:
    merged = dict(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def _set_nested(target: dict, parts: list[str], value: Any) -> None:
    for part in parts[:-1]:
        child = target.get(part)
        if not isinstance(child, dict):
            child = target[part] = {}
        target = child
    target[parts[-1]] = value


def _get_dotted(params: BaseModel, dotted: str) -> Any:
    value: Any = params
    for part in dotted.split("."):
        value = getattr(value, part)
    return value


# ------------------------------------------------------------------ sweep grid


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


def _with_point(base: dict, point: dict[str, Any]) -> dict:
    """A deep copy of nested overrides with each dotted sweep value set."""
    nested = copy.deepcopy(base)
    for dotted, value in point.items():
        _set_nested(nested, dotted.split("."), value)
    return nested


def _iter_points(config: ExperimentConfig):
    """``(scenario, raw point, nested overrides)``: scenario-major, then the sweep product."""
    for scenario, overrides in config.scenarios.items():
        base = _deep_merge(config.params, overrides)
        for point in expand_sweep(config.sweep):
            yield scenario, point, _with_point(base, point)


def canonical_json(obj: Any) -> str:
    """Key-sorted compact JSON: the text hashed into run ids and fingerprints."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def _short_hash(obj: Any, length: int = 12) -> str:
    return hashlib.sha256(canonical_json(obj).encode()).hexdigest()[:length]


# ------------------------------------------------------------------- the config


@dataclass(frozen=True)
class RunSpec:
    """One simulated day to run: a scenario at a sweep point with one seed."""

    run_id: str
    scenario: str
    point: dict[str, Any]  # swept parameter (dotted) -> validated value
    seed: int
    params: DayParams


class ExperimentConfig(BaseModel):
    """A validated experiment: build it with :func:`load_config` (or directly in a notebook)."""

    model_config = {"extra": "forbid", "frozen": True}

    name: str
    description: str = ""
    params: dict[str, Any] = {}
    seeds: list[int] = [1, 2, 3, 4, 5]
    scenarios: dict[str, dict[str, Any]] = {"default": {}}
    sweep: dict[str, Any] = {}
    contrasts: list[dict[str, Any]] = []
    source: str | None = None

    @field_validator("seeds")
    @classmethod
    def _seeds_fit_int64(cls, seeds: list[int]) -> list[int]:
        for seed in seeds:
            if not 0 <= seed <= limits.MAX_SEED:
                raise ValueError(f"seed {seed}: expected 0 <= seed < 2**63 (seeds are stored as int64)")
        return seeds

    @property
    def swept(self) -> list[str]:
        """The swept parameters' dotted names, in sweep order (the tables' extra columns)."""
        return list(self.sweep)

    def points(self) -> list[tuple[str, dict[str, Any], DayParams]]:
        """``(scenario, sweep point, params)`` for every scenario x point, in run order."""
        out = []
        for scenario, point, nested in _iter_points(self):
            params = DayParams.model_validate(nested, strict=True)
            validated = {dotted: _get_dotted(params, dotted) for dotted in point}
            out.append((scenario, validated, params))
        return out

    def runs(self) -> list[RunSpec]:
        """Every run, scenario-major, then sweep point, then seed."""
        specs = []
        for scenario, point, params in self.points():
            inputs = _input_digests(params)  # {} for a synthetic day: its run ids are as they were
            params = _sized(params)  # a corpus from files: counts not given are per article
            dumped = params.model_dump(mode="json")
            for seed in self.seeds:
                run_id = _short_hash({"params": dumped, "seed": seed, **inputs})
                specs.append(RunSpec(run_id, scenario, point, seed, params))
        return specs

    def contrast_specs(self) -> list:
        """The declared contrasts as :class:`kbsim.stats.ContrastSpec` (validated at load)."""
        return [_contrast_spec(item) for item in self.contrasts]

    def estimate(self) -> limits.ExperimentEstimate:
        """How big running this config is (runs, CPU, disk, memory per run), without listing its runs."""
        return limits.estimate_experiment([params for _, _, params in self.points()], len(self.seeds))

    def fingerprint(self) -> str:
        """A hash of what the config runs (not of its wording): same runs, same fingerprint."""
        runs = [(r.scenario, r.point, r.seed, r.run_id) for r in self.runs()]
        return _short_hash({"name": self.name, "runs": runs}, length=16)


# --------------------------------------------------------------------- loading


def _read_file(path: Path, chain: tuple[Path, ...]) -> tuple[dict, dict[tuple, str]]:
    """One file with its ``extends`` chain merged; also the file that set each key path."""
    source = str(path)
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except FileNotFoundError:
        via = f" (extended by {chain[-1]})" if chain else ""
        raise ConfigError(source, "", f"config file not found{via}") from None
    except OSError as exc:
        raise ConfigError(source, "", f"cannot read config file: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(
            source,
            "",
            f"not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at offset {exc.start}); "
            "expected a YAML file saved as UTF-8",
        ) from None
    raw = _parse_yaml(text, source)
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise ConfigError(
            source, "", f"expected a mapping with keys {', '.join(CONFIG_KEYS)}, got {raw!r}"
        )
    for key in raw:
        if key not in CONFIG_KEYS:
            close = difflib.get_close_matches(str(key), CONFIG_KEYS, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ConfigError(
                source, str(key), f"unknown key; expected one of: {', '.join(CONFIG_KEYS)}{hint}"
            )
    data = _normalise(raw, source)
    _resolve_inputs(data, path.parent)
    origins = {path_: source for path_ in _leaf_paths(data)}
    extends = raw.get("extends")
    if extends is None:
        return data, origins
    if not isinstance(extends, str) or not extends:
        raise ConfigError(source, "extends", f"expected a file name, got {extends!r}")
    base_path = (path.parent / extends).resolve()
    if base_path in chain or base_path == path.resolve():
        cycle = " -> ".join(str(p) for p in (*chain, path.resolve(), base_path))
        raise ConfigError(source, "extends", f"circular extends: {cycle}")
    base, base_origins = _read_file(base_path, (*chain, path.resolve()))
    base.pop("name", None)  # an experiment's name is its own: results must not collide
    base.pop("contrasts", None)  # so are its comparisons: they name its own scenarios and sweep values
    return _deep_merge(base, data), {**base_origins, **origins}


def _normalise(raw: dict, source: str) -> dict:
    """Canonical shapes for merging: params and scenarios nested, sweep flat (dotted)."""
    data = {k: v for k, v in raw.items() if k != "extends"}
    if "params" in data:
        data["params"] = _nest_params(data["params"], source, "params")
    if "scenarios" in data:
        scenarios = data["scenarios"]
        if not isinstance(scenarios, dict) or not scenarios:
            raise ConfigError(
                source,
                "scenarios",
                f"expected a non-empty mapping of scenario name -> overrides, got {scenarios!r}",
            )
        data["scenarios"] = {
            name: _nest_params(body, source, f"scenarios.{name}")
            for name, body in scenarios.items()
        }
    if "sweep" in data:
        data["sweep"] = _flatten_sweep(data["sweep"], source)
    return data


def _resolve_inputs(data: dict, base: Path) -> None:
    """Make the input file paths a config sets (``kbsim.params.INPUT_PATHS``) relative to
    ``base``, the folder of the file that sets them (an absolute path stays as it is)."""

    def resolved(value: Any) -> Any:
        if not isinstance(value, str) or not value or value.startswith("kbsim:"):
            return value
        return os.path.abspath(base / Path(value).expanduser())  # absolute, without ".."

    nested = [data.get("params") or {}, *(data.get("scenarios") or {}).values()]
    for dotted in INPUT_PATHS:
        *parents, leaf = dotted.split(".")
        for params in nested:
            for part in parents:
                params = params.get(part) if isinstance(params, dict) else None
            if isinstance(params, dict) and leaf in params:
                params[leaf] = resolved(params[leaf])
        sweep = data.get("sweep") or {}
        if dotted in sweep:
            values = sweep[dotted]
            sweep[dotted] = [resolved(v) for v in values] if isinstance(values, list) else resolved(values)


def _leaf_paths(data: dict, prefix: tuple = ()) -> list[tuple]:
    out = []
    for key, value in data.items():
        path = (*prefix, str(key))
        if isinstance(value, dict) and value and prefix[:1] != ("sweep",):
            out.extend(_leaf_paths(value, path))
        else:
            out.append(path)
    return out


def parse_seeds(value: Any, source: str = "seeds", key_path: str = "seeds") -> list[int]:
    """Seeds from a count N (1..N), a list of ints, or text: ``"20"``, ``"1-5"``, ``"3,7"``.

    At most :data:`~kbsim.experiment.limits.MAX_SEEDS` seeds, each below 2**63; a longer range is
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
                    source, key_path, f"expected N, a range A-B or a list like 1,2,3; got {token!r}"
                )
            low, high = int(match[1]), int(match[2] or match[1])
            if high < low:
                raise ConfigError(source, key_path, f"empty range {token!r}")
            if high > limits.MAX_SEED:
                raise ConfigError(source, key_path, f"{token!r}: {_SEED_RANGE}, got {high}")
            if len(seeds) + high - low + 1 > limits.MAX_SEEDS:
                raise ConfigError(
                    source, key_path, f"{token!r} makes {len(seeds) + high - low + 1} seeds; {_SEED_COUNT}"
                )
            seeds.extend(range(low, high + 1))
        return parse_seeds(seeds, source, key_path)
    if isinstance(value, bool) or not isinstance(value, (int, list, tuple)):
        raise ConfigError(
            source, key_path, f"expected a count N (seeds 1..N) or a list of ints, got {value!r}"
        )
    if isinstance(value, int):
        if value < 1:
            raise ConfigError(source, key_path, f"expected a count of at least 1, got {value}")
        if value > limits.MAX_SEEDS:
            raise ConfigError(source, key_path, f"{value} seeds; {_SEED_COUNT}")
        return list(range(1, value + 1))
    if not value:
        raise ConfigError(source, key_path, "expected at least one seed, got an empty list")
    if len(value) > limits.MAX_SEEDS:
        raise ConfigError(source, key_path, f"{len(value)} seeds; {_SEED_COUNT}")
    for i, seed in enumerate(value):
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise ConfigError(
                source, f"{key_path}[{i}]", f"expected a non-negative integer seed, got {seed!r}"
            )
        if seed > limits.MAX_SEED:
            raise ConfigError(source, f"{key_path}[{i}]", f"{_SEED_RANGE}, got {seed}")
    duplicates = sorted(s for s, n in collections.Counter(value).items() if n > 1)
    if duplicates:
        raise ConfigError(
            source, key_path, f"duplicate seeds {duplicates}; expected distinct seeds"
        )
    return list(value)


_SEED_RANGE = "expected seeds below 2**63 (every table stores the seed as an int64)"
_SEED_COUNT = f"expected at most {limits.MAX_SEEDS} seeds in one experiment"


def _apply_override(data: dict, origins: dict, item: str) -> None:
    """Apply one ``--set key=value`` (value parsed as YAML) to the merged raw config."""
    source = f"--set {item}"
    key, sep, text = item.partition("=")
    key = key.strip()
    if not sep or not key:
        raise ConfigError(source, "", "expected KEY=VALUE, e.g. saves.count=500 or seeds=10")
    value = _parse_yaml(text, source)
    head, _, rest = key.partition(".")
    if head == "extends":
        raise ConfigError(source, key, "extends cannot be overridden; edit the file")
    if head in ("name", "description", "seeds", "contrasts") and not rest:
        data[head] = value
    elif head == "sweep" and rest:
        _param_leaf(rest, source, key)
        data.setdefault("sweep", {})[rest] = value
        origins[("sweep", rest)] = source
        return
    elif head == "scenarios" and rest:
        scenario, _, param = rest.partition(".")
        if not param:
            body = _nest_params(value, source, key)
            data.setdefault("scenarios", {})[scenario] = body
        else:
            _param_leaf(param, source, key)
            scenarios = data.setdefault("scenarios", {})
            _set_nested(scenarios.setdefault(scenario, {}), param.split("."), value)
    elif head == "params" and rest or head not in CONFIG_KEYS:
        dotted = rest if head == "params" else key
        _param_leaf(dotted, source, key)
        if dotted in data.get("sweep", {}):
            data["sweep"][dotted] = value  # pin (or re-list) a swept parameter
            origins[("sweep", dotted)] = source
            return
        params = data.setdefault("params", {})
        if isinstance(value, dict) and _model_at(dotted) is not None:
            value = _nest_params(value, source, key, _model_at(dotted))
            value = _deep_merge(_get_nested(params, dotted.split(".")) or {}, value)
        _set_nested(params, dotted.split("."), value)
        origins[("params", *dotted.split("."))] = source
        return
    else:
        raise ConfigError(source, key, f"expected a parameter or one of {', '.join(CONFIG_KEYS)}")
    origins[tuple(key.split("."))] = source


def _model_at(dotted: str) -> type[BaseModel] | None:
    model: Any = DayParams
    for part in dotted.split("."):
        model = _submodel(model.model_fields[part].annotation)
    return model


def _get_nested(nested: dict, parts: list[str]) -> Any:
    for part in parts:
        if not isinstance(nested, dict):
            return None
        nested = nested.get(part)
    return nested if isinstance(nested, dict) else None


def _origin(origins: dict[tuple, str], path: tuple, default: str) -> str:
    for length in range(len(path), 0, -1):
        if path[:length] in origins:
            return origins[path[:length]]
    return default


def _pydantic_error(
    exc: ValidationError, prefix: str, origins: dict, origin_prefix: tuple, default: str
) -> ConfigError:
    """The first validation error as a ConfigError with a dotted key path."""
    err = exc.errors()[0]
    loc = [str(part) for part in err["loc"]]
    key_path = ".".join([prefix, *loc]) if loc else prefix
    msg = err["msg"]
    if err["type"] == "value_error":
        problem = msg.removeprefix("Value error, ")
    else:
        expected = msg.removeprefix("Input should be ")
        problem = f"expected {expected}, got {err.get('input')!r}"
    source = _origin(origins, (*origin_prefix, *loc), default)
    return ConfigError(source, key_path, problem)


def load_config(
    path: str | Path,
    overrides: list[str] | tuple[str, ...] = (),
    seeds: Any = None,
) -> ExperimentConfig:
    """Read, merge (``extends``), override (``--set``) and validate an experiment config.

    Args:
        path: the YAML file.
        overrides: ``KEY=VALUE`` strings; the value is YAML. A parameter key
            (``saves.count=50``) sets it for every run, or pins it if swept;
            top-level keys work too (``seeds=3``, ``sweep.zipf_s=[0,1]``).
        seeds: replaces the config's seeds (a count, a list, or CLI text).

    Raises:
        ConfigError: naming the file, the key path and what was expected.
    """
    path = Path(path)
    source = str(path)
    data, origins = _read_file(path, ())
    for item in overrides:
        _apply_override(data, origins, item)
    _resolve_inputs(data, Path.cwd())  # paths given with --set are relative to where it runs
    if seeds is not None:
        data["seeds"] = parse_seeds(seeds, "--seeds", "seeds")
        origins[("seeds",)] = "--seeds"
    return _validate(data, origins, source, default_name=path.stem)


def config_from_dict(
    data: dict, name: str | None = None, source: str = "<dict>"
) -> ExperimentConfig:
    """Validate a config given as a dict (as a YAML file would hold it), e.g. in a notebook.

    ``extends`` is resolved relative to the current directory.
    """
    if not isinstance(data, dict):
        raise ConfigError(source, "", f"expected a mapping of config keys, got {data!r}")
    for key in data:
        if key not in CONFIG_KEYS:
            raise ConfigError(
                source, str(key), f"unknown key; expected one of: {', '.join(CONFIG_KEYS)}"
            )
    normalised = _normalise(data, source)
    _resolve_inputs(normalised, Path.cwd())
    origins = {path: source for path in _leaf_paths(normalised)}
    if data.get("extends"):
        base, base_origins = _read_file(Path(data["extends"]), ())
        base.pop("name", None)
        base.pop("contrasts", None)
        normalised, origins = _deep_merge(base, normalised), {**base_origins, **origins}
    if name is not None:
        normalised["name"] = name
    if "name" not in normalised:
        raise ConfigError(
            source, "name", "expected an experiment name (it names the results directory)"
        )
    return _validate(normalised, origins, source, default_name=normalised["name"])


def _validate(data: dict, origins: dict, source: str, default_name: str) -> ExperimentConfig:
    def src(*path: str) -> str:
        return _origin(origins, path, source)

    name = data.get("name", default_name)
    if not isinstance(name, str) or not _NAME_RE.match(name):
        raise ConfigError(
            src("name"),
            "name",
            f"expected a name made of letters, digits, '.', '_' or '-' (it names the results "
            f"directory), got {name!r}",
        )
    description = data.get("description") or ""
    if not isinstance(description, str):
        raise ConfigError(src("description"), "description", f"expected text, got {description!r}")
    seeds = [1, 2, 3, 4, 5]
    if "seeds" in data:
        seeds = parse_seeds(data["seeds"], src("seeds"), "seeds")
    params = data.get("params") or {}
    scenarios = data.get("scenarios") or {"default": {}}
    for scenario in scenarios:
        if not isinstance(scenario, str) or not scenario:
            raise ConfigError(src("scenarios"), "scenarios", f"bad scenario name {scenario!r}")
    sweep = data.get("sweep") or {}

    _check_finite(params, "params", ("params",), origins, source)
    for scenario, overrides in scenarios.items():
        _check_finite(overrides, f"scenarios.{scenario}", ("scenarios", scenario), origins, source)
    try:
        DayParams.model_validate(params, strict=True)
    except ValidationError as exc:
        raise _pydantic_error(exc, "params", origins, ("params",), source) from None
    for scenario, overrides in scenarios.items():
        try:
            DayParams.model_validate(_deep_merge(params, overrides), strict=True)
        except ValidationError as exc:
            raise _pydantic_error(
                exc, f"scenarios.{scenario}", origins, ("scenarios", scenario), source
            ) from None

    for dotted, values in sweep.items():
        key_path = f"sweep.{dotted}"
        origin = src("sweep", dotted)
        _param_leaf(dotted, origin, key_path)
        listed = list(values) if isinstance(values, (list, tuple)) else [values]
        if isinstance(values, (list, tuple)) and not values:
            raise ConfigError(origin, key_path, "empty list; expected at least one value")
        for i, value in enumerate(listed):
            if not isinstance(value, _SCALAR_TYPES) or (
                isinstance(value, float) and not math.isfinite(value)
            ):
                raise ConfigError(
                    origin, f"{key_path}[{i}]", f"expected a number, text or null, got {value!r}"
                )
            try:
                DayParams.model_validate(_with_point(params, {dotted: value}), strict=True)
            except ValidationError as exc:
                err = _pydantic_error(exc, "params", origins, ("params",), source)
                where = f"{key_path}[{i}]" if isinstance(values, (list, tuple)) else key_path
                problem = err.problem
                if err.key_path != f"params.{dotted}":
                    problem = f"{err.key_path.removeprefix('params.')}: {problem}"
                raise ConfigError(origin, where, problem) from None
        for scenario, overrides in scenarios.items():
            if _has_path(overrides, dotted.split(".")):
                raise ConfigError(
                    origin,
                    key_path,
                    f"also set by scenarios.{scenario}; expected a parameter to be either "
                    "swept or set per scenario, not both",
                )
    _check_counts(len(seeds), len(scenarios), sweep, src)
    contrasts = _check_contrasts(data.get("contrasts") or [], scenarios, sweep, src("contrasts"))

    config = ExperimentConfig(
        name=name,
        description=description,
        params=params,
        seeds=seeds,
        scenarios=scenarios,
        sweep={k: list(v) if isinstance(v, (list, tuple)) else v for k, v in sweep.items()},
        contrasts=contrasts,
        source=source,
    )
    _check_runs(config, source, origins)
    return config


def _contrast_spec(item: dict):
    from kbsim.stats.summary import ContrastSpec, MetricSelector

    selector = MetricSelector(
        item["metric"], at=item.get("at"), strategy=item.get("strategy", ""), subset=item.get("subset", "")
    )
    return ContrastSpec(
        selector, dict(item["baseline"]), dict(item.get("where") or {}), item.get("compare", "difference")
    )


def _check_contrasts(raw: Any, scenarios: dict, sweep: dict, source: str) -> list[dict]:
    """Each contrast names a metric, a baseline and optionally where it applies, every key and
    value checked against the metrics, scenarios and sweep values the config has."""
    if not isinstance(raw, list):
        raise ConfigError(source, "contrasts", f"expected a list of contrasts, got {raw!r}")
    values: dict[str, list] = {"scenario": list(scenarios)}
    for dotted, listed in sweep.items():
        values[dotted] = list(listed) if isinstance(listed, (list, tuple)) else [listed]
    out = []
    for i, item in enumerate(raw):
        where = f"contrasts[{i}]"
        if not isinstance(item, dict):
            raise ConfigError(
                source, where, f"expected a mapping with keys {', '.join(CONTRAST_KEYS)}, got {item!r}"
            )
        for key in item:
            if key not in CONTRAST_KEYS:
                close = difflib.get_close_matches(str(key), CONTRAST_KEYS, n=1)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                raise ConfigError(
                    source, f"{where}.{key}", f"unknown key; expected one of: {', '.join(CONTRAST_KEYS)}{hint}"
                )
        for required in ("metric", "baseline"):
            if required not in item:
                raise ConfigError(
                    source, f"{where}.{required}", "missing; every contrast names a metric and a baseline"
                )
        for key in ("metric", "strategy", "subset", "compare"):
            if key in item and not isinstance(item[key], str):
                raise ConfigError(source, f"{where}.{key}", f"expected text, got {item[key]!r}")
        if item.get("compare", "difference") not in ("difference", "ratio"):
            raise ConfigError(
                source, f"{where}.compare", f"expected 'difference' or 'ratio', got {item['compare']!r}"
            )
        for key in ("baseline", "where"):
            mapping = item.get(key)
            if key == "where" and mapping is None:
                continue
            if not isinstance(mapping, dict) or (key == "baseline" and not mapping):
                raise ConfigError(
                    source,
                    f"{where}.{key}",
                    f"expected a mapping of scenario or swept parameter -> value, got {mapping!r}",
                )
            for name, value in mapping.items():
                if name not in values:
                    raise ConfigError(
                        source,
                        f"{where}.{key}.{name}",
                        f"expected 'scenario' or a swept parameter ({', '.join(values)})",
                    )
                if value not in values[name]:
                    raise ConfigError(
                        source,
                        f"{where}.{key}.{name}",
                        f"{value!r} is not one of this config's values {values[name]}",
                    )
        try:
            _contrast_spec(item)
        except ValueError as exc:
            field = str(exc).split(":", 1)[0]
            raise ConfigError(source, f"{where}.{field}", str(exc).split(": ", 1)[-1]) from None
        out.append(dict(item))
    return out


def _check_finite(nested: dict, key_path: str, origin_path: tuple, origins: dict, source: str) -> None:
    """Refuse ``.inf`` and ``.nan``: a range check such as ``gt=0`` lets infinity through."""
    for key, value in nested.items():
        if isinstance(value, dict):
            _check_finite(value, f"{key_path}.{key}", (*origin_path, key), origins, source)
        elif isinstance(value, float) and not math.isfinite(value):
            raise ConfigError(
                _origin(origins, (*origin_path, key), source),
                f"{key_path}.{key}",
                f"expected a finite number, got {value!r}",
            )


def _check_counts(seeds: int, scenarios: int, sweep: dict, src) -> None:
    """Refuse a grid too large to list, before listing it."""
    points = scenarios
    for values in sweep.values():
        points *= len(values) if isinstance(values, (list, tuple)) else 1
    if points > limits.MAX_RUNS:
        raise ConfigError(
            src("sweep"),
            "sweep",
            f"{scenarios} scenarios x the sweep make {points} points; "
            f"expected at most {limits.MAX_RUNS} runs in one experiment",
        )
    if points * seeds > limits.MAX_RUNS:
        raise ConfigError(
            src("seeds"),
            "seeds",
            f"{seeds} seeds x {points} points make {points * seeds} runs; "
            f"expected at most {limits.MAX_RUNS} runs in one experiment",
        )


def _blame(
    keys: tuple[str, ...], config: ExperimentConfig, scenario: str, point: dict, origins: dict, source: str
) -> tuple[str, str]:
    """``(file, key path)`` of the first of ``keys`` the config sets (sweep, scenario, params)."""
    for key in keys:
        if key in point:
            return _origin(origins, ("sweep", key), source), f"sweep.{key}"
        if _has_path(config.scenarios[scenario], key.split(".")):
            path = ("scenarios", scenario, *key.split("."))
            return _origin(origins, path, source), ".".join(path)
        if _has_path(config.params, key.split(".")):
            return _origin(origins, ("params", *key.split(".")), source), f"params.{key}"
    return source, f"params.{keys[0]}"


def _sized(params: DayParams) -> DayParams:
    """The day sized to its corpus from files (:meth:`DayParams.sized_to`): the run's params,
    its id and its run.json then hold the counts it runs with."""
    if params.corpus.source is None:
        return params
    from kbsim.inputs import load_corpus

    return params.sized_to(len(load_corpus(params.corpus.source)))


def _input_digests(params: DayParams) -> dict[str, dict[str, str]]:
    if all(_get_dotted(params, dotted) is None for dotted in INPUT_PATHS):
        return {}
    from kbsim.sim.replay import input_digests

    return {"inputs": input_digests(params)}


def _check_inputs(
    params: DayParams, config: ExperimentConfig, scenario: str, point: dict, origins: dict, source: str
) -> None:
    """Read the corpus and traces a point names, refusing a bad file before anything runs."""
    named = {dotted: _get_dotted(params, dotted) for dotted in INPUT_PATHS}
    if all(value is None for value in named.values()):
        return
    from kbsim.inputs import InputError
    from kbsim.sim.replay import check_inputs

    try:
        check_inputs(params, list(config.seeds))
    except InputError as exc:
        key = next((k for k, v in named.items() if v is not None and Path(v) == Path(exc.path)), "corpus.source")
        origin, key_path = _blame((key,), config, scenario, point, origins, source)
        raise ConfigError(origin, key_path, str(exc)) from None


def _has_path(nested: dict, parts: list[str]) -> bool:
    for part in parts:
        if not isinstance(nested, dict) or part not in nested:
            return False
        nested = nested[part]
    return True


def _check_runs(config: ExperimentConfig, source: str, origins: dict) -> None:
    """Validate every scenario x point (cross-field rules and :mod:`kbsim.experiment.limits`' hard
    limits) and reject duplicate runs."""
    seen: dict[str, tuple[str, dict]] = {}
    several = len(config.scenarios) > 1 or bool(config.sweep)
    for scenario, point, nested in _iter_points(config):
        try:
            params = DayParams.model_validate(nested, strict=True)
        except ValidationError as exc:
            err = exc.errors()[0]
            loc = ".".join(str(p) for p in err["loc"])
            raise ConfigError(
                source,
                f"scenarios.{scenario} at sweep point {point}",
                f"{loc}: {err['msg'].removeprefix('Value error, ')}",
            ) from None
        for limit in limits.estimate_run(params).limits():
            origin, key_path = _blame(limit.keys, config, scenario, point, origins, source)
            where = ""
            if several:
                where = f" (scenario {scenario}, sweep point {point})" if point else f" (scenario {scenario})"
            raise ConfigError(origin, key_path, limit.problem + where)
        _check_inputs(params, config, scenario, point, origins, source)
        key = _short_hash(params.model_dump(mode="json"))
        if key in seen:
            other, other_point = seen[key]
            raise ConfigError(
                source,
                f"scenarios.{scenario}",
                f"gives the same parameters as scenarios.{other} (sweep point {point} vs "
                f"{other_point}); expected every scenario x sweep point to differ",
            )
        seen[key] = (scenario, point)


# ------------------------------------------------------------------------- CLI


def add_config_arguments(parser) -> None:
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


def config_from_args(args) -> ExperimentConfig:
    """The validated config named by ``args.config`` with ``--set`` and ``--seeds`` applied."""
    seeds = " ".join(args.seeds) if getattr(args, "seeds", None) else None
    return load_config(args.config, getattr(args, "overrides", ()) or (), seeds=seeds)


# ----------------------------------------------------------- one day's parameters


def load_day_params(path: str | Path) -> DayParams:
    """The :class:`DayParams` of a YAML file of day parameters (``kbsim serve --config``).

    The file holds parameters at its top level, nested or dotted exactly as a
    config's ``params`` (``saves.count: 50`` or ``saves: {count: 50}``), read
    and validated by the same code as :func:`load_config`.

    Raises:
        ConfigError: naming the file, the key path and what was expected (a
            file that is not UTF-8 text included).
    """
    path = Path(path)
    source = str(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise ConfigError(source, "", "config file not found") from None
    except OSError as exc:
        raise ConfigError(source, "", f"cannot read config file: {exc.strerror}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(
            source, "", f"not UTF-8 text (byte {data[exc.start]:#04x} at offset {exc.start}); "
            "save the file as UTF-8"
        ) from None
    try:
        params = _nest_params(_parse_yaml(text, source), source, "")
        _resolve_inputs({"params": params}, path.parent)
        try:
            return DayParams.model_validate(params, strict=True)
        except ValidationError as exc:
            raise _pydantic_error(exc, "", {}, (), source) from None
    except ConfigError as exc:  # key paths from the top level, not from a ``params`` key
        raise ConfigError(exc.source, exc.key_path.lstrip("."), exc.problem) from None
