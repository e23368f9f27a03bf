"""Configuration schemas: read, validated with their defaults filled in, walked for the docs.

The schema is the one home of every configuration default and bound. A study's plan reads a
section that :func:`fill_defaults` has checked and completed, so no default is written a second
time in Python. Schemas are JSON Schema (draft 2020-12) written in YAML; every property carries
``type``, ``description`` and (unless the key is required) ``default``.

Errors are :class:`~scheduler.core.errors.ConfigurationError` naming the key as a dotted path
(``config memory.loads[1]: ...``), raised before any work.
"""

from __future__ import annotations

import copy
import functools
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from scheduler.core.errors import ConfigurationError

__all__ = [
    "SchemaKey",
    "fill_defaults",
    "key_path",
    "load_schema",
    "schema_defaults",
    "schema_keys",
]


@functools.cache
def _read_schema(path: str) -> dict[str, Any]:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as error:
        raise ConfigurationError(f"{path}: cannot read the schema ({error})") from error
    schema = yaml.safe_load(text)
    if not isinstance(schema, dict):
        raise ConfigurationError(f"{path}: a schema must be a mapping")
    return schema


def load_schema(path: str | Path) -> dict[str, Any]:
    """The schema in YAML file ``path`` (a fresh copy: callers may change it)."""
    return copy.deepcopy(_read_schema(str(path)))


def key_path(parts: Any, root: str = "config") -> str:
    """``root`` and the keys and indices of ``parts`` as ``config memory.loads[1]``."""
    text = ""
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else f".{part}" if text else str(part)
    return f"{root} {text}".strip()


def _validator_class() -> Any:
    """Draft 2020-12 with ``default`` filled in: a property with a default that the instance
    lacks gets a deep copy of it before the property's own schema is checked (so nested
    defaults fill in too)."""
    from jsonschema import Draft202012Validator, validators

    check_properties = Draft202012Validator.VALIDATORS["properties"]

    def properties(validator: Any, props: Mapping[str, Any], instance: Any, schema: Any) -> Any:
        if isinstance(instance, dict):
            for name, sub in props.items():
                if "default" in sub and name not in instance:
                    instance[name] = copy.deepcopy(sub["default"])
        yield from check_properties(validator, props, instance, schema)

    return validators.extend(Draft202012Validator, {"properties": properties})


@functools.cache
def _filling_validator() -> Any:
    return _validator_class()


def _finite(instance: Any, where: list[Any]) -> None:
    """JSON Schema's number bounds let NaN and infinities through; configs never hold them."""
    if isinstance(instance, float) and not math.isfinite(instance):
        raise ConfigurationError(f"{key_path(where)}: {instance!r} is not a finite number")
    if isinstance(instance, dict):
        for name, value in instance.items():
            _finite(value, [*where, name])
    elif isinstance(instance, list):
        for index, value in enumerate(instance):
            _finite(value, [*where, index])


def fill_defaults(
    instance: Mapping[str, Any] | None, schema: Mapping[str, Any], *, root: str = "config"
) -> dict[str, Any]:
    """A deep copy of ``instance`` checked against ``schema``, every missing default filled in.

    Raises
    ------
    ConfigurationError
        The first problem found, naming the key (``config memory.loads[1]: -1 is less than or
        equal to the minimum of 0``); non-finite numbers are refused anywhere.
    """
    from jsonschema.exceptions import best_match

    filled = copy.deepcopy(dict(instance or {}))
    validator = _filling_validator()(schema)
    errors = list(validator.iter_errors(filled))
    if errors:
        error = best_match(errors)
        parts = list(error.absolute_path)
        raise ConfigurationError(f"{key_path(parts, root)}: {_message(error)}")
    _finite(filled, [])
    return filled


_ARTICLES = {"integer": "an integer", "number": "a number", "string": "a string",
             "boolean": "true or false", "array": "a list", "object": "a mapping",
             "null": "null"}  # fmt: skip
_BOUND_WORDS = {"minimum": ">=", "exclusiveMinimum": ">", "maximum": "<=",
                "exclusiveMaximum": "<"}  # fmt: skip


def _message(error: Any) -> str:
    """A schema error in plain words (what the value must be, and what it is)."""
    kind, value, got = error.validator, error.validator_value, error.instance
    if kind == "type":
        kinds = value if isinstance(value, list) else [value]
        wanted = " or ".join(_ARTICLES.get(k, k) for k in kinds)
        return f"must be {wanted}, got {got!r}"
    if kind in _BOUND_WORDS:
        return f"must be {_BOUND_WORDS[kind]} {value}, got {got!r}"
    if kind == "enum":
        return f"{got!r} is not one of {', '.join(map(str, value))}"
    if kind == "uniqueItems":
        return f"a value is listed twice: {got!r}"
    if kind == "minItems":
        return f"give at least {value} value{'s' if value != 1 else ''}, got {got!r}"
    if kind == "maxItems":
        return f"give at most {value} value{'s' if value != 1 else ''}, got {len(got)}"
    if kind == "additionalProperties":
        known = ", ".join(error.schema.get("properties", {})) or "none"
        extra = sorted(set(got) - set(error.schema.get("properties", {})))
        return f"unknown key{'s' if len(extra) > 1 else ''} {', '.join(map(repr, extra))}; " \
            f"known: {known}"
    if kind == "required":
        return f"missing key(s): {', '.join(map(repr, value))}"
    if kind == "maxLength":
        return f"{str(got)[:24]!r}... has {len(got)} characters, more than {value}"
    if kind == "pattern":
        return f"{got!r} does not match {value!r}"
    return str(error.message)


def schema_defaults(schema: Mapping[str, Any]) -> dict[str, Any]:
    """What an empty configuration becomes: every default of ``schema``."""
    return fill_defaults({}, schema)


@dataclass(frozen=True)
class SchemaKey:
    """One key of a schema, for the configuration reference: its dotted name, the JSON type(s),
    the default (``None`` when it has none: :attr:`has_default` tells), the bounds and the
    description."""

    name: str
    types: str
    default: Any
    has_default: bool
    bounds: str
    description: str
    depth: int


_BOUNDS = (
    ("minimum", "≥ {}"),
    ("exclusiveMinimum", "> {}"),
    ("maximum", "≤ {}"),
    ("exclusiveMaximum", "< {}"),
    ("minItems", "at least {} item(s)"),
    ("maxItems", "at most {} item(s)"),
    ("minLength", "at least {} character(s)"),
    ("maxLength", "at most {} character(s)"),
    ("pattern", "matches `{}`"),
)


def _types(schema: Mapping[str, Any]) -> str:
    kind = schema.get("type")
    if isinstance(kind, list):
        text = " or ".join(kind)
    elif kind:
        text = str(kind)
    elif "oneOf" in schema or "anyOf" in schema:
        text = " or ".join(_types(s) for s in schema.get("oneOf", schema.get("anyOf", [])))
    else:
        text = "any"
    items = schema.get("items")
    if text == "array" and isinstance(items, Mapping):
        text = f"array of {_types(items)}"
    return text


def _bounds(schema: Mapping[str, Any]) -> str:
    parts = []
    if "enum" in schema:
        parts.append("one of " + ", ".join(f"`{v}`" for v in schema["enum"]))
    parts += [text.format(schema[key]) for key, text in _BOUNDS if key in schema]
    if schema.get("uniqueItems"):
        parts.append("no repeats")
    items = schema.get("items")
    if isinstance(items, Mapping):
        inner = _bounds(items)
        if inner:
            parts.append(f"each {inner}")
    return "; ".join(parts)


def schema_keys(schema: Mapping[str, Any], prefix: str = "", depth: int = 0) -> Iterator[SchemaKey]:
    """Every property of ``schema``, depth first in the schema's order, with nested objects'
    keys after their parent (``tuning``, ``tuning.traces``, …); the properties of an object's
    free-named entries (``additionalProperties``) under ``<name>`` (``traces.<name>.url``)."""
    for name, sub in _properties(schema):
        dotted = f"{prefix}{name}"
        yield SchemaKey(
            name=dotted,
            types=_types(sub),
            default=sub.get("default"),
            has_default="default" in sub,
            bounds=_bounds(sub),
            description=" ".join(str(sub.get("description", "")).split()),
            depth=depth,
        )
        if sub.get("properties"):
            yield from schema_keys(sub, f"{dotted}.", depth + 1)
        entries = sub.get("additionalProperties")
        if isinstance(entries, Mapping) and entries.get("properties"):
            yield from schema_keys(entries, f"{dotted}.<name>.", depth + 1)


def _properties(schema: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    return list((schema.get("properties") or {}).items())
