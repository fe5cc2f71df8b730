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
import errno
import os
import re
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from kbsim.files import FileReadError, read_regular
from kbsim.inputs.safe_read import (
    MAX_YAML_FILE_BYTES,
    BoundedSafeLoader,
    YAMLBoundsError,
    yaml_location,
    yaml_reason,
)
from kbsim.params import INPUT_PATHS, DayParams
from kbsim.runner.config import ConfigError, ExperimentConfig, deep_merge, expand_sweep
from kbsim.runner.config_keys import KEYS, Setting, check_config, parse_seeds, set_param, validation_error
from kbsim.runner.paths import nest_params, unknown
from kbsim.runner.shipped import shipped_experiments

__all__ = ["MAX_EXTENDS", "config_from_dict", "load_config", "load_day_params"]

#: The longest chain of ``extends``: a config, the file it extends, the file that extends, ...
MAX_EXTENDS = 32


# --------------------------------------------------------------------------- YAML


class _Loader(BoundedSafeLoader):
    """SafeLoader that rejects duplicate keys and reads ``1e3`` as a float (YAML 1.2 style),
    within the bounds of :class:`~kbsim.inputs.safe_read.BoundedSafeLoader` (depth, aliases)."""


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
        mark = yaml_location(exc, text)
        where = f"line {mark[0] + 1}, column {mark[1] + 1}: " if mark else ""
        problem = yaml_reason(exc)
        verdict = "YAML refused" if isinstance(exc, YAMLBoundsError) else "invalid YAML"
        raise ConfigError(source, "", f"{verdict} at {where}{problem}") from None


def _read_yaml(path: Path, via: Path | None = None) -> Any:
    """The YAML a file holds; ``via`` is the file that ``extends`` it, if any (for a missing one)."""
    source = str(path)
    try:
        text = read_regular(path, MAX_YAML_FILE_BYTES, what="config file").decode("utf-8-sig")
    except FileReadError as exc:
        if exc.errno == errno.ENOENT:
            extended = f" (extended by {via})" if via else ""
            raise ConfigError(source, "", f"config file not found{extended}") from None
        problem = exc.problem.replace("cannot read it:", "cannot read config file:")
        raise ConfigError(source, "", problem) from None
    except UnicodeDecodeError as exc:
        raise ConfigError(
            source,
            "",
            f"not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at offset {exc.start}); "
            "expected a YAML file saved as UTF-8",
        ) from None
    return _parse_yaml(text, source)


# ----------------------------------------------------------------- files, extends


def _config_keys(raw: Any, source: str) -> dict:
    """The top-level mapping of a config, every key one of :data:`KEYS`.

    A file that is not a config at all (no key is one of :data:`KEYS` or close to one: a
    token file, a system file named by ``extends``) is refused without quoting its text.
    """
    if not isinstance(raw, dict):
        raise ConfigError(source, "", f"expected a mapping with keys {', '.join(KEYS)}, got {_kind(raw)} "
                          "(is it an experiment config?)")
    if raw and not any(key in KEYS or _near_key(key) for key in raw):
        raise ConfigError(source, "", f"not an experiment config: none of its {len(raw)} top-level keys is one "
                          f"of {', '.join(KEYS)}")
    for key in raw:
        if key not in KEYS:
            raise ConfigError(source, str(key), unknown(key, list(KEYS)))
    return raw


def _kind(raw: Any) -> str:
    """What a YAML value is, in words, without quoting it."""
    if isinstance(raw, str):
        return f"text of {len(raw):,} characters"
    if isinstance(raw, list):
        return f"a list of {len(raw):,} items"
    return "a number" if isinstance(raw, (int, float)) else f"a {type(raw).__name__}"


def _near_key(key: Any) -> bool:
    return isinstance(key, str) and len(key) <= 40 and bool(difflib.get_close_matches(key, list(KEYS), n=1))


def _shaped(raw: dict, source: str, base: Path) -> tuple[dict, dict[tuple, str]]:
    """A config's keys in their canonical shapes for merging (``extends`` left out), input
    paths made relative to ``base``; also the file that set each key path (``source``)."""
    data = {key: value for key, value in raw.items() if KEYS[key].check is not None}
    for name, key in KEYS.items():
        if key.shape is not None and name in data:
            data[name] = key.shape(data[name], source)
    _resolve_inputs(data, base)
    return data, {path: source for path in _leaf_paths(data)}


def _extends(extends: Any, source: str) -> str:
    """The file name an ``extends`` key gives."""
    if not isinstance(extends, str) or not extends:
        raise ConfigError(source, "extends", f"expected a file name, got {extends!r}")
    return extends


def _extend(data: dict, origins: dict, base_path: Path, chain: tuple[Path, ...]) -> tuple[dict, dict]:
    """``data`` merged over the file it extends, but the keys :data:`KEYS` does not let a file
    inherit; ``chain`` is the files extending so far."""
    inherited, base_origins = _read_file(base_path, chain)
    for name, key in KEYS.items():
        if not key.inherited:
            inherited.pop(name, None)
    return deep_merge(inherited, data), {**base_origins, **origins}


def _resolved(path: Path) -> Path:
    """``path`` made absolute without symbolic links; a link loop stays as it is (reading it
    refuses it, naming it)."""
    try:
        return path.resolve()
    except (OSError, RuntimeError):  # RuntimeError: Python 3.11's "Symlink loop from ..."
        return Path(os.path.abspath(path))


def _read_file(path: Path, chain: tuple[Path, ...] = ()) -> tuple[dict, dict[tuple, str]]:
    """One file with its ``extends`` chain merged; also the file that set each key path."""
    source = str(path)
    raw = _read_yaml(path, chain[-1] if chain else None)
    if raw is None or raw == {}:  # empty, only comments, ``null`` or ``{}``: never the defaults
        extended = f" (extended by {chain[-1]})" if chain else ""
        raise ConfigError(source, "", f"holds no experiment{extended}: the file is empty (or only comments, "
                          f"null or {{}}); expected a mapping with keys {', '.join(KEYS)}")
    raw = _config_keys(raw, source)
    data, origins = _shaped(raw, source, path.parent)
    if raw.get("extends") is None:
        return data, origins
    chain = (*chain, path.resolve())
    if len(chain) >= MAX_EXTENDS:
        raise ConfigError(source, "extends", f"a chain of more than {MAX_EXTENDS} files extending each other "
                          f"(from {chain[0]}); expected at most {MAX_EXTENDS}")
    named = _extends(raw["extends"], source)
    base_path = _resolved(path.parent / named)
    if not base_path.is_file() and named in shipped_experiments():  # extends: reference, from any folder
        base_path = shipped_experiments()[named].resolve()
        origins = {**origins, (SHIPPED_BASE, named): str(base_path)}
    if base_path in chain:
        cycle = " -> ".join(str(p) for p in (*chain, base_path))
        raise ConfigError(source, "extends", f"circular extends: {cycle}")
    return _extend(data, origins, base_path, chain)


#: The key under which :func:`_read_file` records, in a config's origins, a shipped experiment
#: that an ``extends: NAME`` named (no file of that name being there).
SHIPPED_BASE = "<shipped experiment>"


def shipped_bases(origins: dict[tuple, str]) -> dict[str, str]:
    """The shipped experiments a config's ``extends`` chain used, by name: their files."""
    return {key[1]: file for key, file in origins.items() if key[0] == SHIPPED_BASE}


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
    value = _parse_yaml(text, source)
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
    data, origins = _read_file(path)
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


def config_outline(path: str | Path) -> tuple[str, int]:
    """A config file's description and number of runs (scenarios x sweep points x seeds), read
    with its ``extends`` chain but not validated: what ``kbsim experiments`` lists, without the
    statistics and simulation modules a full :func:`load_config` imports to check contrasts.

    Raises:
        ConfigError: a file that cannot be read as a config, or a bad ``seeds`` or sweep.
    """
    path = Path(path)
    data, _ = _read_file(path)
    seeds = parse_seeds(data["seeds"], str(path)) if "seeds" in data else ExperimentConfig.model_fields[
        "seeds"].get_default(call_default_factory=True)
    scenarios = data.get("scenarios") or ExperimentConfig.model_fields["scenarios"].get_default(
        call_default_factory=True)
    try:
        points = len(expand_sweep(data.get("sweep") or {}))
    except ValueError as exc:
        raise ConfigError(str(path), "sweep", str(exc)) from None
    return str(data.get("description", "")), len(scenarios) * points * len(seeds)


def config_from_dict(data: dict, name: str | None = None, source: str = "<dict>") -> ExperimentConfig:
    """Validate a config given as a dict (as a YAML file would hold it), e.g. in a notebook.

    ``extends`` is resolved relative to the current directory.

    Raises:
        ConfigError: naming the key path and what was expected.
    """
    if not isinstance(data, dict):
        raise ConfigError(source, "", f"expected a mapping of config keys, got {data!r}")
    normalised, origins = _shaped(_config_keys(data, source), source, Path.cwd())
    if data.get("extends"):
        named = _extends(data["extends"], source)
        base = Path(named)
        if not base.is_file() and named in shipped_experiments():
            base = shipped_experiments()[named].resolve()
            origins[(SHIPPED_BASE, named)] = str(base)
        normalised, origins = _extend(normalised, origins, base, ())
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
    raw = _read_yaml(path)
    fields = list(DayParams.model_fields)
    if raw is not None and not isinstance(raw, dict):  # not quoted: it may be any file at all
        raise ConfigError(source, "", f"expected a mapping of day parameters ({', '.join(fields)}), got "
                          f"{_kind(raw)} (is it a config of day parameters?)")
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
