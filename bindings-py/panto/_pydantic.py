"""Pydantic models as tool parameters, tool attributes and structured output, when Pydantic is
installed (it is never a dependency: a model can only exist once the program imported it).

A type that involves a model (`City`, `list[City]`, `Optional[City]`,
`Annotated[City, Field(...)]`, a Union holding one) has the JSON Schema Pydantic's TypeAdapter
makes, and its JSON value is validated by the same TypeAdapter, which hands over model
instances; a bad value raises InvalidValue (a ValueError naming each problem by its path, the
pydantic ValidationError as its cause). The schema is sent as Pydantic makes it: the core
writes it as each provider takes it (libpanto/src/provider_schema.zig: titles left out,
objects of a structured output closed, keywords a provider refuses moved into the
description). Only the "$defs" of nested models are gathered at the root of the schema they
end up in (`hoist_defs`), where their "$ref"s ("#/$defs/X") point.
"""

from __future__ import annotations

import sys
import typing
from typing import Any, Callable, Dict, List, Optional, Tuple

__all__ = ["InvalidValue", "involves_model", "is_model_class", "model_type_schema", "hoist_defs"]

# Keywords whose value is a map of names to schemas, one schema, or a list of schemas.
_SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
_SCHEMA_ONE = ("items", "additionalProperties", "not", "contains", "propertyNames", "if", "then", "else")
_SCHEMA_LISTS = ("anyOf", "allOf", "oneOf", "prefixItems")


def _base_model() -> Optional[type]:
    pydantic = sys.modules.get("pydantic")
    return getattr(pydantic, "BaseModel", None) if pydantic is not None else None


def is_model_class(tp: Any) -> bool:
    """`tp` is a pydantic BaseModel subclass."""
    base = _base_model()
    return base is not None and isinstance(tp, type) and issubclass(tp, base)


def involves_model(tp: Any, _depth: int = 0) -> bool:
    """`tp` is a model or a type made of one (list[City], Optional[City], Annotated[...])."""
    if _base_model() is None or _depth > 20:
        return False
    if is_model_class(tp):
        return True
    return any(involves_model(arg, _depth + 1) for arg in typing.get_args(tp) if not isinstance(arg, (str, int, float)))


def model_type_schema(tp: Any, where: str) -> Tuple[Dict[str, Any], Callable[[Any], Any]]:
    """The JSON Schema of a type involving a model and the converter that validates a JSON
    value into its Python value (model instances)."""
    from pydantic import TypeAdapter

    try:
        adapter: Any = TypeAdapter(tp)
        schema = adapter.json_schema()
    except Exception as e:  # a type Pydantic cannot describe: say where
        raise TypeError(f"{where}: Pydantic gives no JSON Schema for {tp!r}: {e}") from None

    def validate(value: Any) -> Any:
        try:
            return adapter.validate_python(value)
        except ValueError as e:  # pydantic's ValidationError
            raise InvalidValue(_problems(e)) from e

    return schema, validate


class InvalidValue(ValueError):
    """Pydantic refused a value: its problems as (path, message) pairs, the path as the core
    writes one ("passengers[1].name"; "" for the value itself)."""

    def __init__(self, problems: List[Tuple[str, str]]) -> None:
        self.problems = problems
        super().__init__(self.describe(""))

    def under(self, name: str) -> "InvalidValue":
        """The same problems, of the value's property `name`."""
        moved = InvalidValue([(_join(name, path), message) for path, message in self.problems])
        moved.__cause__ = self.__cause__
        return moved

    def describe(self, root: str) -> str:
        """The problems in one line, each path under `root` (a property's name, or "")."""
        parts = []
        for path, message in self.problems:
            full = _join(root, path)
            parts.append(f'property "{full}": {message}' if full else message)
        return "; ".join(parts)


def _join(root: str, path: str) -> str:
    if not root or not path:
        return root or path
    return root + path if path.startswith("[") else f"{root}.{path}"


def _problems(error: Any) -> List[Tuple[str, str]]:
    errors = getattr(error, "errors", None)
    if not callable(errors):
        return [("", str(error))]
    out = []
    for e in errors(include_url=False, include_input=False):
        path = ""
        for part in e.get("loc", ()):
            path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
        out.append((path, str(e.get("msg", ""))))
    return out


def _each_subschema(schema: Dict[str, Any], visit: Callable[[Any], None]) -> None:
    for key in _SCHEMA_MAPS:
        subs = schema.get(key)
        if isinstance(subs, dict):
            for sub in subs.values():
                visit(sub)
    for key in _SCHEMA_ONE:
        visit(schema.get(key))
    for key in _SCHEMA_LISTS:
        subs = schema.get(key)
        if isinstance(subs, list):
            for sub in subs:
                visit(sub)


def hoist_defs(schema: Dict[str, Any], where: str) -> Dict[str, Any]:
    """`schema` with the "$defs" of its subschemas moved to its own "$defs" (in place): a
    model's schema put under "properties" keeps "$ref"s to "#/$defs/X", the root's. TypeError
    when two different definitions have one name (two models called alike)."""
    found: Dict[str, Any] = {}

    def take(sub: Any) -> None:
        if not isinstance(sub, dict):
            return
        defs = sub.pop("$defs", None)
        _each_subschema(sub, take)
        if isinstance(defs, dict):
            for name, definition in defs.items():
                take(definition)
                if name in found and found[name] != definition:
                    raise TypeError(f"{where}: two different types are both named {name} in the schema")
                found[name] = definition

    own = schema.pop("$defs", None)
    _each_subschema(schema, take)
    if isinstance(own, dict):
        take({"$defs": own})
    if found:
        schema["$defs"] = found
    return schema
