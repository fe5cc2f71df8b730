"""A config's files as written: strict, bounded YAML and the ``extends`` chain, merged.

Nothing here validates a value: :mod:`kbsim.runner.load` hands :func:`read_chain` its
shaper (parameters nested and checked against the day's models, input paths resolved)
and then checks the merged config; :mod:`kbsim.runner.grid` hands it a lean one to count
a config's runs without pydantic (``kbsim experiments``). Both read a file, refuse what
is not a config, and follow ``extends`` (to a file beside it, or to a shipped experiment
by name) the same way, because both go through here.
"""

from __future__ import annotations

import difflib
import errno
import os
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from kbsim.files import FileReadError, read_regular
from kbsim.inputs.safe_read import MAX_YAML_FILE_BYTES, BoundedSafeLoader, YAMLBoundsError, yaml_location, yaml_reason
from kbsim.runner.errors import ConfigError
from kbsim.runner.shipped import shipped_experiments

__all__ = [
    "MAX_EXTENDS",
    "SHIPPED_BASE",
    "KeyTable",
    "Shaper",
    "deep_merge",
    "config_keys",
    "extend",
    "extends_name",
    "kind_of",
    "parse_yaml",
    "read_chain",
    "read_yaml",
    "shipped_bases",
    "unknown",
]

#: A config's top-level keys, in the order messages list them, each with whether a file that
#: ``extends`` another takes it (:data:`kbsim.runner.config_keys.KEYS` gives the loader's).
KeyTable = Mapping[str, bool]
#: The longest chain of ``extends``: a config, the file it extends, the file that extends, ...
MAX_EXTENDS = 32
#: The key under which :func:`read_chain` records, in a config's origins, a shipped experiment
#: that an ``extends: NAME`` named (no file of that name being there).
SHIPPED_BASE = "<shipped experiment>"

#: ``shape(raw, source, folder)``: one file's keys (checked to be config keys) in the form they
#: are merged in, and the file that set each key path; ``folder`` is the file's own.
Shaper = Callable[[dict, str, Path], tuple[dict, dict[tuple, str]]]


def unknown(key: Any, expected: Sequence[str], what: str = "") -> str:
    """The problem of a key that is not one of ``expected``, with the closest one as a hint.

    ``what`` names the kind of key in the message (``unknown parameter 'cuont'; ...``);
    without it the key path already names the key (``unknown key; ...``).
    """
    close = difflib.get_close_matches(str(key), list(expected), n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    named = f"unknown {what} {key!r}" if what else "unknown key"
    return f"{named}; expected one of: {', '.join(expected)}{hint}"


def deep_merge(base: dict, override: dict) -> dict:
    """``base`` with ``override`` merged in, mapping into mapping (neither is changed)."""
    merged = dict(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged


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


def parse_yaml(text: str, source: str) -> Any:
    """The YAML value ``text`` holds, read strictly (no duplicate key) within bounds.

    Raises:
        ConfigError: invalid or refused YAML, naming its line and column.
    """
    try:
        return yaml.load(text, Loader=_Loader)  # noqa: S506 (a SafeLoader subclass)
    except yaml.YAMLError as exc:
        mark = yaml_location(exc, text)
        where = f"line {mark[0] + 1}, column {mark[1] + 1}: " if mark else ""
        problem = yaml_reason(exc)
        verdict = "YAML refused" if isinstance(exc, YAMLBoundsError) else "invalid YAML"
        raise ConfigError(source, "", f"{verdict} at {where}{problem}") from None


def read_yaml(path: Path, via: Path | None = None) -> Any:
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
    return parse_yaml(text, source)


# ----------------------------------------------------------------- files, extends


def config_keys(raw: Any, source: str, keys: KeyTable) -> dict:
    """The top-level mapping of a config, every key one of ``keys``.

    A file that is not a config at all (no key is one of ``keys`` or close to one: a
    token file, a system file named by ``extends``) is refused without quoting its text.
    """
    if not isinstance(raw, dict):
        raise ConfigError(source, "", f"expected a mapping with keys {', '.join(keys)}, got {kind_of(raw)} "
                          "(is it an experiment config?)")
    if raw and not any(key in keys or _near_key(key, keys) for key in raw):
        raise ConfigError(source, "", f"not an experiment config: none of its {len(raw)} top-level keys is one "
                          f"of {', '.join(keys)}")
    for key in raw:
        if key not in keys:
            raise ConfigError(source, str(key), unknown(key, list(keys)))
    return raw


def kind_of(raw: Any) -> str:
    """What a YAML value is, in words, without quoting it."""
    if isinstance(raw, str):
        return f"text of {len(raw):,} characters"
    if isinstance(raw, list):
        return f"a list of {len(raw):,} items"
    return "a number" if isinstance(raw, (int, float)) else f"a {type(raw).__name__}"


def _near_key(key: Any, keys: KeyTable) -> bool:
    return isinstance(key, str) and len(key) <= 40 and bool(difflib.get_close_matches(key, list(keys), n=1))


def extends_name(extends: Any, source: str) -> str:
    """The file name an ``extends`` key gives."""
    if not isinstance(extends, str) or not extends:
        raise ConfigError(source, "extends", f"expected a file name, got {extends!r}")
    return extends


def extend(data: dict, origins: dict, base_path: Path, shape: Shaper, keys: KeyTable | None,
           chain: tuple[Path, ...] = ()) -> tuple[dict, dict]:
    """``data`` merged over the file it extends, but the keys ``keys`` says are not inherited;
    ``chain`` is the files extending so far."""
    inherited, base_origins = read_chain(base_path, shape, keys, chain)
    for name, taken in (keys or {}).items():
        if not taken:
            inherited.pop(name, None)
    return deep_merge(inherited, data), {**base_origins, **origins}


def _resolved(path: Path) -> Path:
    """``path`` made absolute without symbolic links; a link loop stays as it is (reading it
    refuses it, naming it)."""
    try:
        return path.resolve()
    except (OSError, RuntimeError):  # RuntimeError: Python 3.11's "Symlink loop from ..."
        return Path(os.path.abspath(path))


def read_chain(path: Path, shape: Shaper, keys: KeyTable | None,
               chain: tuple[Path, ...] = ()) -> tuple[dict, dict[tuple, str]]:
    """One config file with its ``extends`` chain merged, each file's keys as ``shape`` gives
    them; also the file that set each key path.

    ``keys`` are the top-level keys a file may hold, and whether each is inherited; ``None``
    takes any mapping and inherits every key (a reader that keeps only the keys it knows, and
    validates nothing: :func:`kbsim.runner.grid.config_outline`).

    Raises:
        ConfigError: a file missing, unreadable, not a config, or an ``extends`` chain that
            loops or runs longer than :data:`MAX_EXTENDS`.
    """
    source = str(path)
    raw = read_yaml(path, chain[-1] if chain else None)
    if raw is None or raw == {}:  # empty, only comments, ``null`` or ``{}``: never the defaults
        extended = f" (extended by {chain[-1]})" if chain else ""
        expected = f"a mapping with keys {', '.join(keys)}" if keys else "a mapping of config keys"
        raise ConfigError(source, "", f"holds no experiment{extended}: the file is empty (or only comments, "
                          f"null or {{}}); expected {expected}")
    if keys is not None:
        raw = config_keys(raw, source, keys)
    elif not isinstance(raw, dict):
        raise ConfigError(source, "", f"expected a mapping of config keys, got {kind_of(raw)} "
                          "(is it an experiment config?)")
    data, origins = shape(raw, source, path.parent)
    if raw.get("extends") is None:
        return data, origins
    chain = (*chain, path.resolve())
    if len(chain) >= MAX_EXTENDS:
        raise ConfigError(source, "extends", f"a chain of more than {MAX_EXTENDS} files extending each other "
                          f"(from {chain[0]}); expected at most {MAX_EXTENDS}")
    named = extends_name(raw["extends"], source)
    base_path = _resolved(path.parent / named)
    if not base_path.is_file() and named in shipped_experiments():  # extends: reference, from any folder
        base_path = shipped_experiments()[named].resolve()
        origins = {**origins, (SHIPPED_BASE, named): str(base_path)}
    if base_path in chain:
        cycle = " -> ".join(str(p) for p in (*chain, base_path))
        raise ConfigError(source, "extends", f"circular extends: {cycle}")
    return extend(data, origins, base_path, shape, keys, chain)


def shipped_bases(origins: dict[tuple, str]) -> dict[str, str]:
    """The shipped experiments a config's ``extends`` chain used, by name: their files."""
    return {key[1]: file for key, file in origins.items() if key[0] == SHIPPED_BASE}
