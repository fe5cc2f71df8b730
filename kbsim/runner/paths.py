"""Dotted parameter paths: the keys a config uses to name :class:`~kbsim.params.DayParams` fields.

A config may write parameters nested (``saves: {count: 50}``) or dotted
(``saves.count: 50``), and names swept parameters dotted (``edit.delay_s``). These
functions check every such key against the DayParams models, with a "did you mean"
hint for a near miss (:func:`unknown`, the one place that hint is written), expand
dotted keys into nested mappings, and flatten a sweep into dotted keys.
"""

from __future__ import annotations

import typing
from typing import Any

from pydantic import BaseModel

from kbsim.errors import brief
from kbsim.params import DayParams
from kbsim.runner.errors import ConfigError
from kbsim.runner.reading import deep_merge, unknown


def submodel(annotation: Any) -> type[BaseModel] | None:
    """The pydantic model a field holds (``X`` or ``X | None``), else None."""
    candidates = [annotation, *typing.get_args(annotation)]
    for candidate in candidates:
        if isinstance(candidate, type) and issubclass(candidate, BaseModel):
            return candidate
    return None


def check_field(model: type[BaseModel], key: Any, source: str, key_path: str) -> None:
    """Refuse ``key`` unless it is a field of ``model``, naming the fields it could be."""
    fields = list(model.model_fields)
    if isinstance(key, str) and key in fields:
        return
    raise ConfigError(source, key_path, unknown(key, fields, "parameter"))


def check_leaf(dotted: str, source: str, key_path: str) -> None:
    """Check that ``dotted`` names a DayParams field, raising a ConfigError otherwise."""
    model: type[BaseModel] | None = DayParams
    done: list[str] = []
    for part in dotted.split("."):
        if model is None:
            raise ConfigError(
                source, key_path, f"{'.'.join(done)!r} is a single value and has no key {part!r}"
            )
        check_field(model, part, source, key_path)
        model = submodel(model.model_fields[part].annotation)
        done.append(part)


def model_at(dotted: str) -> type[BaseModel] | None:
    """The parameter group a (checked) dotted path names, or None for a single value."""
    model: Any = DayParams
    for part in dotted.split("."):
        model = submodel(model.model_fields[part].annotation)
    return model


def nest_params(raw: Any, source: str, key_path: str, model: type[BaseModel] = DayParams) -> dict:
    """DayParams overrides with dotted keys expanded into nested dicts, every key checked."""
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise ConfigError(
            source,
            key_path,
            f"expected a mapping of parameters ({', '.join(model.model_fields)}), "
            f"got {type(raw).__name__} {brief(raw)}",
        )
    nested: dict = {}
    for key, value in raw.items():
        if not isinstance(key, str):
            check_field(model, key, source, key_path)
        head, _, rest = key.partition(".")
        path = f"{key_path}.{head}"
        check_field(model, head, source, path)
        sub = submodel(model.model_fields[head].annotation)
        if rest:
            if sub is None:
                raise ConfigError(
                    source, f"{path}.{rest}", f"{head!r} is a single value and has no key {rest!r}"
                )
            value = {rest: value}
        if sub is not None and isinstance(value, dict):
            value = nest_params(value, source, path, sub)
            existing = nested.get(head, {})
            if not isinstance(existing, dict):
                raise ConfigError(source, path, "set twice (as a value and as a mapping)")
            for sub_key in value:
                if sub_key in existing:
                    raise ConfigError(source, f"{path}.{sub_key}", "set twice")
            nested[head] = deep_merge(existing, value)
        else:
            if head in nested:
                raise ConfigError(source, path, "set twice")
            nested[head] = value
    return nested


def has_path(nested: dict, parts: list[str]) -> bool:
    """Whether nested mappings hold ``parts[0]``, then ``parts[1]`` in it, and so on."""
    for part in parts:
        if not isinstance(nested, dict) or part not in nested:
            return False
        nested = nested[part]
    return True


def get_nested(nested: dict, parts: list[str]) -> dict | None:
    """The mapping at ``parts`` in nested mappings, or None when there is none."""
    found: Any = nested
    for part in parts:
        if not isinstance(found, dict):
            return None
        found = found.get(part)
    return found if isinstance(found, dict) else None
