"""Structured output: the `response_format` of a dataclass, a TypedDict, a pydantic model or a JSON Schema dict
(the schema machinery tools use, _schema.py), and the model's JSON made into that type."""

from __future__ import annotations

import re
from collections.abc import Mapping

from ._schema import object_schema_of

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, Union

    #: What `response_format` takes: {"type": "text" | "json_object" | "json_schema", ...} as
    #: the library takes it, a JSON Schema dict, or a dataclass / TypedDict / pydantic model class.
    ResponseFormatArg = Union[Mapping[str, Any], type]

__all__ = ["response_format", "converter"]

_FORMAT_TYPES = ("text", "json_object", "json_schema")
_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")


def response_format(value: Any) -> Dict[str, Any]:
    """The library's response_format object of what the Python API takes: a format object
    as is, a JSON Schema dict as {"type": "json_schema", "schema": ...}, a dataclass, a
    TypedDict or a pydantic model as the json_schema of its fields, named after the class. "strict" is left to
    the library, which makes it true when the schema meets OpenAI's strict rules (every
    property required, no other properties) and false otherwise (fields with defaults)."""
    if isinstance(value, Mapping):
        if value.get("type") in _FORMAT_TYPES:
            return dict(value)
        return {"type": "json_schema", "schema": dict(value)}
    if isinstance(value, type):
        schema, _ = object_schema_of(value, "response_format")
        out: Dict[str, Any] = {"type": "json_schema", "schema": schema}
        name = value.__name__
        if _NAME.fullmatch(name):
            out["name"] = name
        return out
    raise TypeError(
        f"response_format must be a dataclass, TypedDict or pydantic model class, a JSON Schema dict or a format "
        f"dict, not {type(value).__name__}"
    )


def converter(output_type: Any) -> Callable[[Any], Any]:
    """JSON value -> the Python value of `output_type` (a dataclass, a TypedDict or a pydantic
    model class: validated by Pydantic, a ValidationError when it does not fit);
    the value itself for a schema dict."""
    if isinstance(output_type, Mapping):
        return lambda value: value
    return object_schema_of(output_type, "parse")[1]

