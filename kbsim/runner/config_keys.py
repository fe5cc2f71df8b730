"""The top-level keys of an experiment config, declared once in :data:`KEYS`, and their checks.

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

Each :class:`Key` says everything :mod:`kbsim.runner.load` does with its key: the
canonical shape it is merged in, whether a file that ``extends`` another inherits it,
how ``--set`` changes it, and how its value is checked. Adding a top-level key is one
entry here and its field on :class:`~kbsim.runner.config.ExperimentConfig` (which
holds its type and default); ``CONFIG_KEYS``, the unknown-key message, merging,
``--set`` and validation all follow from the entry. Every check raises a
:class:`~kbsim.runner.config.ConfigError` naming the file that set the key (a
config's keys may come from the files it extends, or from ``--set``), the key path and
what was expected.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError

from kbsim.errors import brief, printable
from kbsim.inputs import InputError
from kbsim.params import INPUT_PATHS, SERVER_STORE_BACKEND, DayParams, in_seconds, nested_in_seconds
from kbsim.runner import limits
from kbsim.runner.config import (
    ConfigError,
    ExperimentConfig,
    TooLargeError,
    all_errors,
    contrast_spec,
    deep_merge,
    expand_sweep,
    get_dotted,
    iter_points,
    set_nested,
    short_hash,
    with_point,
)
from kbsim.runner.grid import flatten_sweep, parse_seeds, scenario_mapping
from kbsim.runner.paths import check_leaf, get_nested, has_path, model_at, nest_params
from kbsim.runner.reading import unknown
from kbsim.store import store_backend

__all__ = ["CONFIG_KEYS", "CONTRAST_KEYS", "KEYS", "Key", "parse_seeds"]

#: The keys of one entry of ``contrasts``.
CONTRAST_KEYS = ("metric", "at", "strategy", "subset", "baseline", "where", "compare")

_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_SCALAR_TYPES = (bool, int, float, str, type(None))


class _Absent:
    """The value of a key a config does not set (falsy, so ``raw or default`` reads well)."""

    def __bool__(self) -> bool:
        return False

    def __repr__(self) -> str:
        return "<absent>"


#: What :attr:`Key.check` is given for a key the merged config does not set.
ABSENT: Any = _Absent()


@dataclass(frozen=True)
class Setting:
    """One ``--set KEY=VALUE``: ``head`` is KEY up to its first dot, ``rest`` what follows."""

    source: str  # "--set KEY=VALUE", the origin error messages name
    key: str
    head: str
    rest: str
    value: Any


@dataclass
class Checking:
    """What a key's check may read: where each key path came from, and the keys checked before it."""

    origins: dict[tuple, str]  # key path -> the file (or --set) that set it
    source: str  # the config's own file
    default_name: str
    checked: dict[str, Any] = field(default_factory=dict)  # key -> validated value, in KEYS order
    key: str = ""  # the key being checked

    def src(self, *path: str) -> str:
        """The file that set ``path`` (or the nearest key path above it)."""
        return origin(self.origins, path, self.source)


def _default(name: str) -> Any:
    """The model's default for a key no file sets (a fresh copy)."""
    return ExperimentConfig.model_fields[name].get_default(call_default_factory=True)


# ------------------------------------------------------------------ --set, per key


def _set_whole(data: dict, origins: dict, setting: Setting) -> bool:
    if setting.rest:
        return False
    data[setting.head] = setting.value
    origins[(setting.head,)] = setting.source
    return True


def _set_extends(data: dict, origins: dict, setting: Setting) -> bool:
    raise ConfigError(setting.source, setting.key, "extends cannot be overridden; edit the file")


def set_param(data: dict, origins: dict, setting: Setting, dotted: str) -> None:
    """``--set`` of one parameter: for every run, or pinning it (or re-listing it) if swept."""
    source, key, value = setting.source, setting.key, setting.value
    check_leaf(dotted, source, key)
    if dotted in data.get("sweep", {}):
        data["sweep"][dotted] = value  # pin (or re-list) a swept parameter
        origins[("sweep", dotted)] = source
        return
    params = data.setdefault("params", {})
    model = model_at(dotted)
    if isinstance(value, dict) and model is not None:
        value = nest_params(value, source, key, model)
        value = deep_merge(get_nested(params, dotted.split(".")) or {}, value)
    set_nested(params, dotted.split("."), value)
    origins[("params", *dotted.split("."))] = source


def _set_params(data: dict, origins: dict, setting: Setting) -> bool:
    if not setting.rest:
        return False
    set_param(data, origins, setting, setting.rest)
    return True


def _set_scenario(data: dict, origins: dict, setting: Setting) -> bool:
    if not setting.rest:
        return False
    scenario, _, param = setting.rest.partition(".")
    scenarios = data.setdefault("scenarios", {})
    if not param:
        scenarios[scenario] = nest_params(setting.value, setting.source, setting.key)
    else:
        check_leaf(param, setting.source, setting.key)
        set_nested(scenarios.setdefault(scenario, {}), param.split("."), setting.value)
    origins[tuple(setting.key.split("."))] = setting.source
    return True


def _set_sweep(data: dict, origins: dict, setting: Setting) -> bool:
    if not setting.rest:
        return False
    check_leaf(setting.rest, setting.source, setting.key)
    data.setdefault("sweep", {})[setting.rest] = setting.value
    origins[("sweep", setting.rest)] = setting.source
    return True


# ------------------------------------------------------------------ shapes, per key


def _shape_params(raw: Any, source: str) -> dict:
    return nest_params(raw, source, "params")


def _shape_scenarios(raw: Any, source: str) -> dict:
    scenarios = scenario_mapping(raw, source)
    return {name: nest_params(body, source, f"scenarios.{name}") for name, body in scenarios.items()}


# ------------------------------------------------------------------ checks, per key


def check_by_type(raw: Any, ctx: Checking) -> Any:
    """A key's value checked against its field's type on the model (its default when no file
    sets it): the check of a key that needs no other."""
    if raw is ABSENT:
        return _default(ctx.key)
    annotation = ExperimentConfig.model_fields[ctx.key].annotation
    assert annotation is not None  # every field of the config is annotated
    try:
        return TypeAdapter(annotation).validate_python(raw, strict=True)
    except ValidationError as exc:
        raise validation_error(exc, ctx.key, ctx.origins, (ctx.key,), ctx.source) from None


def _check_name(raw: Any, ctx: Checking) -> str:
    name = ctx.default_name if raw is ABSENT else raw
    if not isinstance(name, str) or not _NAME_RE.match(name):
        raise ConfigError(
            ctx.src("name"),
            "name",
            f"expected a name made of letters, digits, '.', '_' or '-' (it names the results "
            f"directory), got {brief(name)}",
        )
    if len(name) > limits.MAX_NAME_CHARS:
        raise ConfigError(ctx.src("name"), "name", f"a name of {len(name):,} characters is over the limit of "
                          f"{limits.MAX_NAME_CHARS} (it names the results directory)")
    return name


def _check_description(raw: Any, ctx: Checking) -> str:
    description = raw or _default("description")
    if not isinstance(description, str):
        raise ConfigError(ctx.src("description"), "description", f"expected text, got {description!r}")
    return description


def _check_params(raw: Any, ctx: Checking) -> dict:
    params = raw or _default("params")
    _check_finite(params, "params", ("params",), ctx)
    try:
        day = DayParams.model_validate(params, strict=True)
    except ValidationError as exc:
        raise validation_error(exc, "params", ctx.origins, ("params",), ctx.source) from None
    _check_strategies(day, "params", ctx, "params")
    return nested_in_seconds(params)  # canonical: a duration written 10min is held as 600.0


def _check_strategies(day: DayParams, where: str, ctx: Checking, *path: str) -> None:
    """Every strategy the day names resolves here (a word of kbsim's, or an importable path),
    so a misspelt one is refused before any run, naming the key."""
    from kbsim.sim.strategies import StrategyError, resolve  # the simulation: loaded to check, not to list

    try:
        resolve(day.checks.strategies)
    except StrategyError as exc:
        raise ConfigError(ctx.src(*path, "checks", "strategies"), f"{where}.checks.strategies", str(exc)) from None


def _check_seeds(raw: Any, ctx: Checking) -> list[int]:
    return _default("seeds") if raw is ABSENT else parse_seeds(raw, ctx.src("seeds"), "seeds")


def _check_scenarios(raw: Any, ctx: Checking) -> dict:
    scenarios = raw or _default("scenarios")
    for scenario in scenarios:
        if not isinstance(scenario, str) or not scenario:
            raise ConfigError(ctx.src("scenarios"), "scenarios", f"bad scenario name {scenario!r}")
        if printable(scenario) != scenario:  # it is printed in every table kbsim run shows, and in summary.csv
            raise ConfigError(ctx.src("scenarios"), "scenarios",
                              f"scenario name {scenario!r} holds a control character (or a line "
                              "separator, a bidirectional control); expected a name a terminal shows as it is")
    for scenario, overrides in scenarios.items():
        _check_finite(overrides, f"scenarios.{scenario}", ("scenarios", scenario), ctx)
    for scenario, overrides in scenarios.items():
        try:
            day = DayParams.model_validate(deep_merge(ctx.checked["params"], overrides), strict=True)
        except ValidationError as exc:
            raise validation_error(
                exc, f"scenarios.{scenario}", ctx.origins, ("scenarios", scenario), ctx.source
            ) from None
        _check_strategies(day, f"scenarios.{scenario}", ctx, "scenarios", scenario)
    return {scenario: nested_in_seconds(overrides) for scenario, overrides in scenarios.items()}


def _check_sweep(raw: Any, ctx: Checking) -> dict:
    """Each swept parameter exists, each value fits it, none is also set per scenario; and the
    grid (scenarios x points x seeds) is small enough to list."""
    sweep = raw or _default("sweep")
    params, scenarios = ctx.checked["params"], ctx.checked["scenarios"]
    for dotted, values in sweep.items():
        key_path = f"sweep.{dotted}"
        where_set = ctx.src("sweep", dotted)
        check_leaf(dotted, where_set, key_path)
        listed = list(values) if isinstance(values, (list, tuple)) else [values]
        if isinstance(values, (list, tuple)) and not values:
            raise ConfigError(where_set, key_path, "empty list; expected at least one value")
        for i, value in enumerate(listed):
            if not isinstance(value, _SCALAR_TYPES) or (isinstance(value, float) and not math.isfinite(value)):
                raise ConfigError(where_set, f"{key_path}[{i}]", f"expected a number, text or null, got {brief(value)}")
            try:
                DayParams.model_validate(with_point(params, {dotted: value}), strict=True)
            except ValidationError as exc:
                err = validation_error(exc, "params", ctx.origins, ("params",), ctx.source)
                where = f"{key_path}[{i}]" if isinstance(values, (list, tuple)) else key_path
                problem = err.problem
                if err.key_path != f"params.{dotted}":
                    problem = f"{err.key_path.removeprefix('params.')}: {problem}"
                raise ConfigError(where_set, where, problem) from None
        for scenario, overrides in scenarios.items():
            if has_path(overrides, dotted.split(".")):
                raise ConfigError(
                    where_set,
                    key_path,
                    f"also set by scenarios.{scenario}; expected a parameter to be either "
                    "swept or set per scenario, not both",
                )
    _check_counts(len(ctx.checked["seeds"]), len(scenarios), sweep, ctx)
    return {  # canonical: a duration written 10min is held as 600.0 (each value validated above)
        k: [in_seconds(k, x) for x in v] if isinstance(v, (list, tuple)) else in_seconds(k, v) for k, v in sweep.items()
    }


def _day_strategy_names(ctx: Checking) -> list[str]:
    """The names of the strategies the config's days run (the base day's and each scenario's)."""
    from kbsim.sim.strategies import resolve

    names: list[str] = []
    params = ctx.checked["params"]
    for overrides in [{}, *ctx.checked["scenarios"].values()]:
        day = DayParams.model_validate(deep_merge(params, overrides))
        names += [s.name for s in resolve(day.checks.strategies) if s.name not in names]
    return names


def _check_contrasts(raw: Any, ctx: Checking) -> list[dict]:
    """Each contrast names a metric, a baseline and optionally where it applies, every key and
    value checked against the metrics, scenarios and sweep values the config has."""
    raw = raw or _default("contrasts")
    source = ctx.src("contrasts")
    if not isinstance(raw, list):
        raise ConfigError(source, "contrasts", f"expected a list of contrasts, got {brief(raw)}")
    values: dict[str, list] = {"scenario": list(ctx.checked["scenarios"])}
    for dotted, listed in ctx.checked["sweep"].items():
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
                raise ConfigError(source, f"{where}.{key}", unknown(key, CONTRAST_KEYS))
        for required in ("metric", "baseline"):
            if required not in item:
                raise ConfigError(
                    source, f"{where}.{required}", "missing; every contrast names a metric and a baseline"
                )
        for key in ("metric", "strategy", "subset", "compare"):
            if key in item and not isinstance(item[key], str):
                raise ConfigError(source, f"{where}.{key}", f"expected text, got {item[key]!r}")
        named = _day_strategy_names(ctx)
        if item.get("strategy") and item["strategy"] not in named:
            raise ConfigError(source, f"{where}.strategy",
                              f"expected one of the day's strategies ({', '.join(named)}), got {item['strategy']!r}")
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
            for name, value in list(mapping.items()):
                if name not in values:
                    raise ConfigError(
                        source,
                        f"{where}.{key}.{name}",
                        f"expected 'scenario' or a swept parameter ({', '.join(values)})",
                    )
                try:
                    value = in_seconds(name, value)  # a swept duration, compared in seconds
                except ValueError as exc:
                    raise ConfigError(source, f"{where}.{key}.{name}", str(exc)) from None
                if value != mapping[name]:
                    item = {**item, key: {**mapping, name: value}}
                    mapping = item[key]
                if value not in values[name]:
                    raise ConfigError(
                        source,
                        f"{where}.{key}.{name}",
                        f"{value!r} is not one of this config's values {values[name]}",
                    )
        try:
            contrast_spec(item)
        except ValueError as exc:
            field_name = str(exc).split(":", 1)[0]
            raise ConfigError(source, f"{where}.{field_name}", str(exc).split(": ", 1)[-1]) from None
        out.append(dict(item))
    return out


@dataclass(frozen=True)
class Key:
    """A top-level key of a config file and everything the loader does with it.

    Attributes:
        name: the key.
        check: its validated value for :class:`ExperimentConfig`, given the merged value
            (:data:`ABSENT` when no file sets it) and the keys checked before it; by default
            :func:`check_by_type`; ``None`` for ``extends``, which is resolved while the
            file is read and is not on the model.
        shape: its canonical form for merging, given the value as written and the file
            (parameters nested, a sweep flattened); ``None`` keeps it as written.
        inherited: whether a file that ``extends`` this one takes the value.
        override: applies ``--set`` to the merged config; returns False for a form the key
            does not take (``--set name.x=1``).
    """

    name: str
    check: Callable[[Any, Checking], Any] | None = check_by_type
    shape: Callable[[Any, str], Any] | None = None
    inherited: bool = True
    override: Callable[[dict, dict, Setting], bool] = _set_whole


#: The top-level keys of a config file, in the order the unknown-key message lists them and
#: the loader checks them (a key's check may read the keys before it).
KEYS: dict[str, Key] = {
    key.name: key
    for key in (
        # an experiment's name is its own (results must not collide), and so are its contrasts
        # (they name its own scenarios and sweep values): neither is inherited
        Key("name", _check_name, inherited=False),
        Key("extends", None, override=_set_extends),
        Key("description", _check_description),
        Key("params", _check_params, shape=_shape_params, override=_set_params),
        Key("seeds", _check_seeds),
        Key("scenarios", _check_scenarios, shape=_shape_scenarios, override=_set_scenario),
        Key("sweep", _check_sweep, shape=flatten_sweep, override=_set_sweep),
        Key("contrasts", _check_contrasts, inherited=False),
    )
}
#: The keys a config file may hold at its top level.
CONFIG_KEYS = tuple(KEYS)


# --------------------------------------------------------------- the whole config


def check_config(data: dict, origins: dict[tuple, str], source: str, default_name: str,
                 yes: bool = True) -> ExperimentConfig:
    """The validated config of merged, shaped config data: every key's check in :data:`KEYS`
    order, then every run's parameters.

    Args:
        data: the config's keys, merged over the files it extends, with ``--set`` applied.
        origins: the file (or ``--set``) that set each key path, for error messages.
        source: the config's own file.
        default_name: the name when no file sets one.
        yes: False to refuse, with :class:`~kbsim.runner.config.TooLargeError` and before
            any point is validated, a grid of more runs than ``limits.CONFIRM_RUNS`` (what
            ``kbsim run`` without ``--yes`` would refuse after validating them all).
    """
    ctx = Checking(origins, source, default_name)
    errors: list[ConfigError] = []
    for name, key in KEYS.items():
        if key.check is not None:
            ctx.key = name
            try:
                ctx.checked[name] = key.check(data.get(name, ABSENT), ctx)
            except ConfigError as exc:  # reported with the others, every key checked
                errors.append(exc)
            except KeyError:  # it reads a key that failed above: nothing more to say of it
                if not errors:
                    raise
    if errors:
        raise all_errors(errors)
    config = ExperimentConfig(**ctx.checked, source=source)
    if not yes:
        _confirm_size(config, source)
    _check_runs(config, source, origins)
    return config


def origin(origins: dict[tuple, str], path: tuple, default: str) -> str:
    """The file that set ``path``, or the nearest key path above it, else ``default``."""
    for length in range(len(path), 0, -1):
        if path[:length] in origins:
            return origins[path[:length]]
    return default


def validation_error(
    exc: ValidationError, prefix: str, origins: dict, origin_prefix: tuple, default: str
) -> ConfigError:
    """Pydantic's validation errors as one ConfigError with dotted key paths (every one of them,
    up to :data:`~kbsim.runner.config.MAX_REPORTED`)."""
    return all_errors([_one_error(err, prefix, origins, origin_prefix, default) for err in exc.errors()])


def _one_error(err: Any, prefix: str, origins: dict, origin_prefix: tuple, default: str) -> ConfigError:
    loc = [str(part) for part in err["loc"]]
    key_path = ".".join([prefix, *loc]) if loc else prefix
    msg = err["msg"]
    if err["type"] == "value_error":
        problem = msg.removeprefix("Value error, ")
    else:
        expected = msg.removeprefix("Input should be ")
        problem = f"expected {expected}, got {brief(err.get('input'))}"
    return ConfigError(origin(origins, (*origin_prefix, *loc), default), key_path, problem)


def _check_finite(nested: dict, key_path: str, origin_path: tuple, ctx: Checking) -> None:
    """Refuse ``.inf`` and ``.nan``: a range check such as ``gt=0`` lets infinity through."""
    for key, value in nested.items():
        if isinstance(value, dict):
            _check_finite(value, f"{key_path}.{key}", (*origin_path, key), ctx)
        elif isinstance(value, float) and not math.isfinite(value):
            raise ConfigError(
                origin(ctx.origins, (*origin_path, key), ctx.source),
                f"{key_path}.{key}",
                f"expected a finite number, got {value!r}",
            )


def _check_counts(seeds: int, scenarios: int, sweep: dict, ctx: Checking) -> None:
    """Refuse a grid too large to list, before listing it."""
    points = scenarios
    for values in sweep.values():
        points *= len(values) if isinstance(values, (list, tuple)) else 1
    if points > limits.MAX_RUNS:
        raise ConfigError(
            ctx.src("sweep"),
            "sweep",
            f"{scenarios} scenarios x the sweep make {points} points; "
            f"expected at most {limits.MAX_RUNS} runs in one experiment",
        )
    if points * seeds > limits.MAX_RUNS:
        raise ConfigError(
            ctx.src("seeds"),
            "seeds",
            f"{seeds} seeds x {points} points make {points * seeds} runs; "
            f"expected at most {limits.MAX_RUNS} runs in one experiment",
        )


#: Points whose parameters :func:`_confirm_size` validates to estimate a large grid's cost.
_SIZE_SAMPLE = 1000


def _confirm_size(config: ExperimentConfig, source: str) -> None:
    """Refuse, as ``kbsim run`` without ``--yes`` would, a grid of more runs than the
    confirmation threshold, from its counts and an even sample of its points: a million
    points take minutes to validate one by one, and the answer is the same."""
    points = len(config.scenarios)
    for values in config.sweep.values():
        points *= len(values) if isinstance(values, list) else 1
    if points * len(config.seeds) <= limits.CONFIRM_RUNS:
        return  # quick to validate: refused, if it must be, with the runner's own estimate
    sample = []
    grid = expand_sweep(config.sweep)
    step = max(1, points // _SIZE_SAMPLE)
    for overrides in config.scenarios.values():
        base = deep_merge(config.params, overrides)
        for point in grid[::step]:
            try:
                sample.append(DayParams.model_validate(with_point(base, point), strict=True))
            except ValidationError:
                continue  # reported, naming its key, by the validation of every point
    if not sample or any(limits.estimate_run(params).limits() for params in sample):
        return  # what cannot run at all is refused first, naming its key
    measured = limits.estimate_experiment(sample, len(config.seeds))
    scale = points / len(sample)
    estimate = limits.ExperimentEstimate(
        runs=points * len(config.seeds), points=points, seeds=len(config.seeds), cpu_s=measured.cpu_s * scale,
        disk_bytes=measured.disk_bytes * scale, run_memory_bytes=measured.run_memory_bytes)
    reasons = estimate.reasons_to_confirm()
    if reasons:
        raise TooLargeError(source, "", f"{estimate}: {' and '.join(reasons)}; pass --yes (yes=True) to run it anyway")


def _blame(
    keys: tuple[str, ...], config: ExperimentConfig, scenario: str, point: dict, origins: dict, source: str
) -> tuple[str, str]:
    """``(file, key path)`` of the first of ``keys`` the config sets (sweep, scenario, params)."""
    for key in keys:
        if key in point:
            return origin(origins, ("sweep", key), source), f"sweep.{key}"
        if has_path(config.scenarios[scenario], key.split(".")):
            path = ("scenarios", scenario, *key.split("."))
            return origin(origins, path, source), ".".join(path)
        if has_path(config.params, key.split(".")):
            return origin(origins, ("params", *key.split(".")), source), f"params.{key}"
    return source, f"params.{keys[0]}"


def _check_inputs(
    params: DayParams, config: ExperimentConfig, scenario: str, point: dict, origins: dict, source: str
) -> None:
    """Read the corpus and traces a point names, refusing a bad file before anything runs."""
    named = {dotted: get_dotted(params, dotted) for dotted in INPUT_PATHS}
    if all(value is None for value in named.values()):
        return
    from kbsim.sim.replay import check_inputs  # SimPy and pandas: only for a day that reads files

    try:
        check_inputs(params, list(config.seeds))
    except InputError as exc:
        key = next((k for k, v in named.items() if v is not None and Path(v) == Path(exc.path)), "corpus.source")
        where_set, key_path = _blame((key,), config, scenario, point, origins, source)
        raise ConfigError(where_set, key_path, str(exc)) from None


def _check_backend(
    params: DayParams, config: ExperimentConfig, scenario: str, point: dict, origins: dict, source: str, days: int
) -> None:
    """Refuse a ``store.backend`` that names no registered backend, before anything runs; and a
    server at a URL that more than one day would share (each day must start from its own
    knowledge base: a ``command`` starts a fresh server for each). ``days``: the config's runs."""
    if params.store.backend == SERVER_STORE_BACKEND:
        assert params.store.server is not None  # StoreParams holds both or neither
        if params.store.server.url is not None and days > 1:
            where_set, key_path = _blame(("store.server",), config, scenario, point, origins, source)
            raise ConfigError(where_set, key_path + ".url",
                              f"{days} days would share the one server at this URL, each starting from what the "
                              "last left; give store.server.command (a fresh server for each day) or one seed "
                              "and one scenario")
        return
    try:
        store_backend(params.store.backend)
    except ValueError as exc:
        where_set, key_path = _blame(("store.backend",), config, scenario, point, origins, source)
        raise ConfigError(where_set, key_path, str(exc)) from None


def _check_runs(config: ExperimentConfig, source: str, origins: dict) -> None:
    """Validate every scenario x point (cross-field rules and :mod:`kbsim.runner.limits`' hard
    limits) and reject duplicate runs."""
    seen: dict[str, tuple[str, dict]] = {}
    several = len(config.scenarios) > 1 or bool(config.sweep)
    points = list(iter_points(config))
    for scenario, point, nested in points:
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
            where_set, key_path = _blame(limit.keys, config, scenario, point, origins, source)
            where = ""
            if several:
                where = f" (scenario {scenario}, sweep point {point})" if point else f" (scenario {scenario})"
            raise ConfigError(where_set, key_path, limit.problem + where)
        _check_inputs(params, config, scenario, point, origins, source)
        _check_backend(params, config, scenario, point, origins, source, days=len(points) * len(config.seeds))
        key = short_hash(params.model_dump(mode="json"))
        if key in seen:
            other, other_point = seen[key]
            raise ConfigError(
                source,
                f"scenarios.{scenario}",
                f"gives the same parameters as scenarios.{other} (sweep point {point} vs "
                f"{other_point}); expected every scenario x sweep point to differ",
            )
        seen[key] = (scenario, point)
