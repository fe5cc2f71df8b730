"""Read experiment configs: strict YAML, ``extends``, ``--set`` overrides, then validation.

:func:`load_config` reads a YAML file (and the files it ``extends``, merged), applies
``--set KEY=VALUE`` overrides and ``--seeds``, and checks the result against the keys
:data:`kbsim.runner.config_keys.KEYS` declares, every run's
:class:`~kbsim.params.DayParams` included, before anything runs.
:func:`config_from_dict` does the same for a config written as a dict in a notebook;
:func:`load_day_params` reads one day's parameters (``kbsim serve --config``). Every
problem is a :class:`~kbsim.runner.config.ConfigError` naming the file, the key path
and what was expected.

Reading is bounded before it starts (:mod:`kbsim.inputs.safe_read`): a config and each
file it extends must be a regular file of at most 16 MiB (not a FIFO or ``/dev/zero``),
YAML nested at most 64 deep with aliases adding at most 100,000 values (an alias bomb in
``description``, a parameter or a sweep is refused at once), and an ``extends`` chain at
most :data:`MAX_EXTENDS` files long. A file that is not a config is refused without
quoting what it holds.
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from kbsim.params import INPUT_PATHS, DayParams
from kbsim.runner.config import ConfigError, ExperimentConfig
from kbsim.runner.config_keys import KEYS, Setting, check_config, set_param, validation_error
from kbsim.runner.grid import parse_seeds
from kbsim.runner.paths import nest_params
from kbsim.runner.reading import (
    MAX_EXTENDS,
    SHIPPED_BASE,
    config_keys,
    extend,
    extends_name,
    kind_of,
    parse_yaml,
    read_chain,
    read_yaml,
    shipped_bases,
)
from kbsim.runner.shipped import shipped_experiments

__all__ = ["MAX_EXTENDS", "config_from_dict", "load_config", "load_day_params"]


def _key_table() -> dict[str, bool]:
    """The top-level keys a config may hold, each with whether it is inherited (from :data:`KEYS`)."""
    return {name: key.inherited for name, key in KEYS.items()}


def _shaped(raw: dict, source: str, base: Path) -> tuple[dict, dict[tuple, str]]:
    """A config's keys in their canonical shapes for merging (``extends`` left out), input
    paths made relative to ``base``; also the file that set each key path (``source``)."""
    data = {key: value for key, value in raw.items() if KEYS[key].check is not None}
    for name, key in KEYS.items():
        if key.shape is not None and name in data:
            data[name] = key.shape(data[name], source)
    _resolve_inputs(data, base)
    return data, {path: source for path in _leaf_paths(data)}


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


# ------------------------------------------------------------------------ --set


def _apply_override(data: dict, origins: dict, item: str) -> None:
    """Apply one ``--set key=value`` (value parsed as YAML) to the merged raw config: a
    top-level key as :data:`KEYS` says, anything else as a parameter."""
    source = f"--set {item}"
    key, sep, text = item.partition("=")
    key = key.strip()
    if not sep or not key:
        raise ConfigError(source, "", "expected KEY=VALUE, e.g. saves.count=500 or seeds=10")
    value = parse_yaml(text, source)
    head, _, rest = key.partition(".")
    setting = Setting(source, key, head, rest, value)
    if head not in KEYS:
        set_param(data, origins, setting, key)
    elif not KEYS[head].override(data, origins, setting):
        raise ConfigError(source, key, f"expected a parameter or one of {', '.join(KEYS)}")


# -------------------------------------------------------------------- entry points


def load_config(
    path: str | Path,
    overrides: list[str] | tuple[str, ...] = (),
    seeds: Any = None,
    *,
    yes: bool = True,
    seeds_flag: str = "--seeds",
) -> ExperimentConfig:
    """Read, merge (``extends``), override (``--set``) and validate an experiment config.

    Args:
        path: the YAML file.
        overrides: ``KEY=VALUE`` strings; the value is YAML. A parameter key
            (``saves.count=50``) sets it for every run, or pins it if swept;
            top-level keys work too (``seeds=3``, ``sweep.zipf_s=[0,1]``).
        seeds: replaces the config's seeds (a count, a list, or CLI text).
        seeds_flag: the option that gave ``seeds``, named by an error about them (``--seed``).
        yes: False refuses a grid above ``limits.CONFIRM_RUNS`` runs from its counts, before
            any point is validated (``kbsim run`` without ``--yes``).

    Raises:
        ConfigError: naming the file, the key path and what was expected; its subclass
            TooLargeError for a grid refused by its size (``yes`` False).
    """
    path = Path(path)
    data, origins = read_chain(path, _shaped, _key_table())
    for item in overrides:
        _apply_override(data, origins, item)
    _resolve_inputs(data, Path.cwd())  # paths given with --set are relative to where it runs
    if seeds is not None:
        data["seeds"] = parse_seeds(seeds, seeds_flag, "seeds")
        origins[("seeds",)] = seeds_flag
    try:
        config = check_config(data, origins, str(path), default_name=path.stem, yes=yes)
    except ConfigError as exc:
        raise _as_written(exc) from None
    config.notes.extend(_shipped_notes(str(path), origins))
    return config


def _as_written(exc: ConfigError) -> ConfigError:
    """An error a ``--set KEY=VALUE`` caused, naming KEY as the user wrote it (``edit.delay_s``,
    not the ``sweep.edit.delay_s`` it pinned, nor ``params.saves.count``)."""
    if not exc.source.startswith("--set "):
        return exc
    written = exc.source.removeprefix("--set ").partition("=")[0].strip()
    if exc.key_path == written or not exc.key_path.endswith(f".{written}"):
        return exc
    renamed = ConfigError(exc.source, written, exc.problem)
    renamed.__class__ = type(exc)  # a TooLargeError stays one
    return renamed


def _shipped_notes(source: str, origins: dict[tuple, str]) -> list[str]:
    return [f"{source}: extends: {name} is the shipped experiment {file} (no file {name} beside it)"
            for name, file in shipped_bases(origins).items()]


def config_from_dict(data: dict, name: str | None = None, source: str = "<dict>") -> ExperimentConfig:
    """Validate a config given as a dict (as a YAML file would hold it), e.g. in a notebook.

    ``extends`` is resolved relative to the current directory.

    Raises:
        ConfigError: naming the key path and what was expected.
    """
    if not isinstance(data, dict):
        raise ConfigError(source, "", f"expected a mapping of config keys, got {data!r}")
    normalised, origins = _shaped(config_keys(data, source, _key_table()), source, Path.cwd())
    if data.get("extends"):
        named = extends_name(data["extends"], source)
        base = Path(named)
        if not base.is_file() and named in shipped_experiments():
            base = shipped_experiments()[named].resolve()
            origins[(SHIPPED_BASE, named)] = str(base)
        normalised, origins = extend(normalised, origins, base, _shaped, _key_table())
    if name is not None:
        normalised["name"] = name
    if "name" not in normalised:
        raise ConfigError(source, "name", "expected an experiment name (it names the results directory)")
    config = check_config(normalised, origins, source, default_name=normalised["name"])
    config.notes.extend(_shipped_notes(source, origins))
    return config


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
    raw = read_yaml(path)
    fields = list(DayParams.model_fields)
    if raw is not None and not isinstance(raw, dict):  # not quoted: it may be any file at all
        raise ConfigError(source, "", f"expected a mapping of day parameters ({', '.join(fields)}), got "
                          f"{kind_of(raw)} (is it a config of day parameters?)")
    heads = [key.partition(".")[0] if isinstance(key, str) else key for key in raw or {}]
    if heads and not any(head in fields or (isinstance(head, str) and len(head) <= 40 and difflib.get_close_matches(
            head, fields, n=1)) for head in heads):
        raise ConfigError(source, "", f"not a config of day parameters: none of its {len(heads)} top-level keys "
                          f"is one of {', '.join(fields)}")
    try:
        params = nest_params(raw, source, "")
        _resolve_inputs({"params": params}, path.parent)
        try:
            return DayParams.model_validate(params, strict=True)
        except ValidationError as exc:
            raise validation_error(exc, "", {}, (), source) from None
    except ConfigError as exc:  # key paths from the top level, not from a ``params`` key
        raise ConfigError(exc.source, exc.key_path.lstrip("."), exc.problem) from None
