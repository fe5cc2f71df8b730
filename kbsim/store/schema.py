"""The four tool definitions, as data, and their compiled argument validators.

The definitions are loaded from ``kbsim/spec/tools.json`` (a copy of the
service's own listing), so the names, descriptions, limits and annotations
live in exactly one place. Validation is done by ``fastjsonschema``, which
compiles each input schema once into Python code; unknown arguments are
rejected by compiling each schema with ``additionalProperties: false``
added (the published schema itself is left as the service lists it).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from functools import cache
from typing import Any

import fastjsonschema

from kbsim.spec import tools_document
from kbsim.store.errors import MAX_ECHOED_CHARS, ToolError, echoed
from kbsim.store.timefmt import is_rfc3339


@dataclass(frozen=True)
class ToolDefinition:
    """One tool as the service lists it (name, description, schema, annotations)."""

    name: str
    description: str
    input_schema: dict[str, Any]
    annotations: dict[str, Any]

    @property
    def required(self) -> frozenset[str]:
        """The argument names the tool's input schema requires."""
        return frozenset(self.input_schema.get("required", ()))

    @property
    def properties(self) -> frozenset[str]:
        """Every argument name the tool's input schema declares."""
        return frozenset(self.input_schema.get("properties", {}))


@cache
def tool_definitions() -> dict[str, ToolDefinition]:
    """The four tools by name, in the order the service lists them."""
    return {
        tool["name"]: ToolDefinition(
            name=tool["name"],
            description=tool["description"],
            input_schema=tool["inputSchema"],
            annotations=tool.get("annotations", {}),
        )
        for tool in tools_document()["tools"]
    }


TOOL_NAMES: tuple[str, ...] = tuple(tool_definitions())


@cache
def _validator(name: str):
    schema = copy.deepcopy(tool_definitions()[name].input_schema)
    schema["additionalProperties"] = False
    # fastjsonschema's own date-time regex admits non-ASCII digits and "+0000" offsets.
    return fastjsonschema.compile(schema, formats={"date-time": is_rfc3339})


def _argument_name(exc: fastjsonschema.JsonSchemaValueException) -> str:
    path = exc.path if isinstance(exc.path, list) else []
    return ".".join(str(p) for p in path[1:]) or "arguments"


#: Tools whose valid argument sets are remembered (small, repeated: ids, queries, cursors).
_REMEMBERED = frozenset({"search_knowledge_base", "read_knowledge_article", "poll_resource_events"})
#: Valid argument sets remembered at most; past it, the memory starts again.
_REMEMBERED_MAX = 65_536
#: (tool, ((argument, type of value, value), ...)) of argument sets found valid.
_valid: set[tuple] = set()
_PLAIN = (str, int)


def validate_arguments(name: str, arguments: Any) -> dict[str, Any]:
    """Check ``arguments`` for tool ``name`` against its input schema.

    Returns the validated arguments; raises ``ToolError("invalid_argument")``
    naming the offending argument otherwise.

    An argument set of plain strings and integers already found valid for a
    search, a read or a poll is not checked again: validity depends only on the
    names, types and values, and the validator returns the arguments
    themselves. (A day repeats the same reads and searches at every check;
    validating was about a tenth of its time.)
    """
    if name in _REMEMBERED and type(arguments) is dict and all(type(v) in _PLAIN for v in arguments.values()):
        if _plainly_valid(name, arguments):
            return arguments
        key = (name, *[(k, type(v), v) for k, v in arguments.items()])
        if key in _valid:
            return arguments
        validated = _validate(name, arguments)
        if validated is arguments:
            if len(_valid) >= _REMEMBERED_MAX:
                _valid.clear()
            _valid.add(key)
        return validated
    return _validate(name, arguments)


#: The keywords of a flat schema that :func:`_plain_schema` reads: validity by them is
#: exactly these checks of names, types, lengths and bounds (a description checks nothing).
_PLAIN_OBJECT_KEYS = frozenset({"type", "required", "properties", "description"})
_PLAIN_FIELD_KEYS = frozenset({"type", "minLength", "maxLength", "minimum", "maximum", "description"})
_PLAIN_TYPES: dict[str, type] = {"string": str, "integer": int}


@cache
def _plain_schema(name: str) -> tuple[frozenset[str], dict[str, tuple[type, Any, Any]]] | None:
    """Tool ``name``'s input schema as its required names and, for each property, its
    Python type and bounds (string lengths, integer values; None: unbounded), when it is
    that plain (else None): an object of strings and integers with no other keyword."""
    schema = tool_definitions()[name].input_schema
    if set(schema) - _PLAIN_OBJECT_KEYS or schema.get("type") != "object":
        return None
    fields: dict[str, tuple[type, Any, Any]] = {}
    for field, spec in schema.get("properties", {}).items():
        kind = _PLAIN_TYPES.get(spec.get("type"))
        if kind is None or set(spec) - _PLAIN_FIELD_KEYS:
            return None
        if kind is str:
            fields[field] = (str, spec.get("minLength"), spec.get("maxLength"))
        else:
            fields[field] = (int, spec.get("minimum"), spec.get("maximum"))
    return frozenset(schema.get("required", ())), fields


def _plainly_valid(name: str, arguments: dict[str, Any]) -> bool:
    """Whether ``arguments`` (a dict of plain strings and integers, not bools) are valid for
    tool ``name`` by its plain schema (:func:`_plain_schema`): every required name, no other
    name, each value of its property's type and within its bounds. False says only that
    this check cannot tell (the schema is not plain, or the arguments fail it): the
    compiled validator then decides, and words the error.

    Why it exists: a day's searches all have new queries, and at 100,000 articles most of
    its reads new article ids, so remembering valid sets spares them nothing; the compiled
    validator took 7 us a call, this check 1 us.
    """
    plain = _plain_schema(name)
    if plain is None:
        return False
    required, fields = plain
    if not required <= arguments.keys():
        return False
    for field, value in arguments.items():
        spec = fields.get(field)
        if spec is None or type(value) is not spec[0]:
            return False
        low, high = spec[1], spec[2]
        measure = len(value) if spec[0] is str else value
        if (low is not None and measure < low) or (high is not None and measure > high):
            return False
    return True


@cache
def _field_validator(name: str, field: str):
    schema = copy.deepcopy(tool_definitions()[name].input_schema["properties"][field])
    return fastjsonschema.compile(schema, formats={"date-time": is_rfc3339})


def validate_each(name: str, arguments: dict[str, Any], field: str, values: list) -> None:
    """:func:`validate_arguments` of ``{**arguments, field: value}`` for each of ``values``,
    raising as the first failing one would.

    Why it exists: a check's batch of searches or reads (tens of thousands at 100,000
    articles, too many to remember) differ in one argument only. The first is validated
    whole; each value is then checked against that argument's own schema, which is what
    the whole schema checks of it once the rest is valid; a value that fails is validated
    whole again, to raise the whole schema's own error.
    """
    if not values:
        return
    validate_arguments(name, {**arguments, field: values[0]})
    if _plainly_valid_strings(name, field, values):
        return
    check = _field_validator(name, field)
    for value in values:
        try:
            check(value)
        except fastjsonschema.JsonSchemaValueException:
            validate_arguments(name, {**arguments, field: value})
            raise AssertionError(f"{name}: {field} {value!r} fails its own schema but not the tool's") from None


def _plainly_valid_strings(name: str, field: str, values: list) -> bool:
    """Whether every one of ``values`` is a plain string within the lengths tool ``name``'s
    plain schema (:func:`_plain_schema`) gives ``field``: checked for the whole batch at
    once (their types as a set, their shortest and longest), which is what the field's own
    schema checks of each. False says only that this check cannot tell; the field's
    compiled validator then decides, value by value.

    Why it exists: a title check's batch is thousands of queries at 100,000 articles; a
    batch of 150 queries took 28 us value by value and 10 us so, the first value's whole
    validation included. It replaces a memory of the strings found valid (5 us), which
    needed a bound and a reset for about the same saving.
    """
    plain = _plain_schema(name)
    spec = None if plain is None else plain[1].get(field)
    if spec is None or spec[0] is not str or set(map(type, values)) != {str}:
        return False
    low, high = spec[1], spec[2]
    lengths = list(map(len, values))
    return (low is None or min(lengths) >= low) and (high is None or max(lengths) <= high)


def _validate(name: str, arguments: Any) -> dict[str, Any]:
    definitions = tool_definitions()
    if not isinstance(name, str) or name not in definitions:
        raise ToolError(
            "invalid_argument",
            f"unknown tool {echoed(name)}; expected one of {', '.join(TOOL_NAMES)}",
        )
    if not isinstance(arguments, dict):
        raise ToolError(
            "invalid_argument",
            f"arguments of {name} must be an object, got {type(arguments).__name__}",
        )
    try:
        return _validator(name)(arguments)
    except fastjsonschema.JsonSchemaValueException as exc:
        definition = definitions[name]
        if exc.rule == "required":
            missing = sorted(definition.required - arguments.keys())
            message = f"missing required argument(s) {', '.join(missing)} for {name}"
        elif exc.rule == "additionalProperties":
            unknown = sorted(str(k) if len(str(k)) <= MAX_ECHOED_CHARS else echoed(str(k))
                             for k in arguments.keys() - definition.properties)
            message = f"unknown argument(s) {', '.join(unknown)} for {name}"
        else:
            argument = _argument_name(exc)
            detail = exc.message.replace(exc.name, argument, 1)
            message = f"argument {argument} of {name} is invalid: {detail}"
        raise ToolError("invalid_argument", message) from None
