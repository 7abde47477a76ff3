"""Python types as JSON Schema: the machinery tools (tools.py) and structured output
(_output.py) share.

str → string, int → integer, float → number, bool → boolean, list[T] / List[T] / Sequence[T]
→ array of T, dict / Dict[str, T] → object, Literal[...] and Enum → enum, Optional[T] → T or
null, Any → any value, a dataclass or a TypedDict → an object of its fields (required unless
they have a default; for a TypedDict, its required keys), with no other properties. A type
that involves a pydantic model has the schema Pydantic makes, adapted (_pydantic.py). Each
schema comes with a converter from its JSON value to the Python value where they differ
(enums, dataclasses, models, and containers of them).
"""

from __future__ import annotations

import collections.abc
import dataclasses
import enum
import inspect
import json
import sys
import threading
import typing
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from ._docstring import parse_docstring
from ._pydantic import InvalidValue, hoist_defs, involves_model, is_model_class, model_type_schema

__all__ = ["MISSING", "Param", "type_schema", "object_schema_of"]

class _Missing:
    """The marker of "no default"."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"

    def __bool__(self) -> bool:
        return False


MISSING: Any = _Missing()


# ---- parameters ----------------------------------------------------------------------------


class Param:
    """Describes one parameter of a tool, as a default value or inside `Annotated`:

        def search(query: str = panto.Param("What to look for"),
                   limit: int = panto.Param("At most this many", default=10, schema={"minimum": 1})):
            ...

        class Search(panto.ToolClass):
            query: Annotated[str, panto.Param("What to look for")]

    `description` becomes the property's description; `default` makes the parameter optional
    (without one it is required, even though the Python signature has a default: the Param);
    `schema` holds extra JSON Schema keywords merged into the property ("minimum",
    "maxLength", "format", ...).
    """

    __slots__ = ("description", "default", "schema")

    def __init__(
        self,
        description: Optional[str] = None,
        *,
        default: Any = MISSING,
        schema: Optional[Mapping[str, Any]] = None,
    ) -> None:
        if description is not None and not isinstance(description, str):
            raise TypeError(f"Param description must be a str, not {type(description).__name__}")
        self.description = description
        self.default = default
        self.schema: Dict[str, Any] = dict(schema or {})

    def __repr__(self) -> str:
        parts = [repr(self.description)] if self.description is not None else []
        if self.default is not MISSING:
            parts.append(f"default={self.default!r}")
        if self.schema:
            parts.append(f"schema={self.schema!r}")
        return f"panto.Param({', '.join(parts)})"


@dataclasses.dataclass
class _Parameter:
    """One parameter as the schema generator understood it."""

    name: str
    schema: Dict[str, Any]
    default: Any  # MISSING: required
    convert: Optional[Callable[[Any], Any]]  # JSON value -> Python value (enums), or None


# ---- type -> JSON Schema -------------------------------------------------------------------

_NONE_TYPE = type(None)
_UNION_TYPES: Tuple[Any, ...] = (Union,)
if sys.version_info >= (3, 10):
    import types as _types

    _UNION_TYPES = (Union, _types.UnionType)

_ARRAY_ORIGINS = (list, collections.abc.Sequence, collections.abc.MutableSequence)
_OBJECT_ORIGINS = (dict, collections.abc.Mapping, collections.abc.MutableMapping)


def _json_type_of_value(value: Any) -> Optional[str]:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return None


def _enum_schema(values: Sequence[Any], where: str) -> Dict[str, Any]:
    types = []
    for v in values:
        t = _json_type_of_value(v)
        if t is None:
            raise TypeError(f"{where}: the enum value {v!r} is not a JSON string, number, boolean or null")
        if t not in types:
            types.append(t)
    if "integer" in types and "number" in types:
        types.remove("integer")
    schema: Dict[str, Any] = {}
    if len(types) == 1:
        schema["type"] = types[0]
    elif types:
        schema["type"] = types
    schema["enum"] = list(values)
    return schema


def _nullable(schema: Dict[str, Any]) -> Dict[str, Any]:
    """`schema` or null."""
    out = dict(schema)
    t = out.get("type")
    if isinstance(t, str):
        out["type"] = [t, "null"] if t != "null" else t
    elif isinstance(t, list):
        if "null" not in t:
            out["type"] = t + ["null"]
    else:
        return {"anyOf": [schema, {"type": "null"}]}
    if "enum" in out and None not in out["enum"]:
        out["enum"] = list(out["enum"]) + [None]
    return out


def _split_annotated(tp: Any) -> Tuple[Any, Tuple[Any, ...]]:
    if typing.get_origin(tp) is typing.Annotated:
        base, *meta = typing.get_args(tp)
        inner, more = _split_annotated(base)
        return inner, tuple(more) + tuple(meta)
    return tp, ()


def _apply_metadata(schema: Dict[str, Any], meta: Sequence[Any], where: str) -> Tuple[Dict[str, Any], Any]:
    """Merges Annotated metadata into `schema`: a str is the description, a Param its
    description, default and schema, a Mapping extra JSON Schema keywords. Returns the schema
    and the Param's default (MISSING when none)."""
    default = MISSING
    for m in meta:
        if isinstance(m, str):
            schema["description"] = m
        elif isinstance(m, Param):
            if m.description is not None:
                schema["description"] = m.description
            schema.update(m.schema)
            if m.default is not MISSING:
                default = m.default
        elif isinstance(m, Mapping):
            schema.update(m)
        # other metadata belongs to other libraries: ignored
    return schema, default


def _type_schema(tp: Any, where: str) -> Tuple[Dict[str, Any], Optional[Callable[[Any], Any]]]:
    """The JSON Schema of a Python type, and a converter from its JSON value to the Python
    value when they differ (enums), else None."""
    tp, meta = _split_annotated(tp)
    schema, convert = _plain_type_schema(tp, where)
    if meta:
        schema, _ = _apply_metadata(dict(schema), meta, where)
    return schema, convert


def _plain_type_schema(tp: Any, where: str) -> Tuple[Dict[str, Any], Optional[Callable[[Any], Any]]]:
    if involves_model(tp):
        return model_type_schema(tp, where)
    if tp is Any or tp is object:
        return {}, None
    if tp is str:
        return {"type": "string"}, None
    if tp is bool:
        return {"type": "boolean"}, None
    if tp is int:
        return {"type": "integer"}, None
    if tp is float:
        return {"type": "number"}, None
    if tp is _NONE_TYPE or tp is None:
        return {"type": "null"}, None
    if inspect.isclass(tp) and issubclass(tp, enum.Enum):
        members = list(tp)
        if not members:
            raise TypeError(f"{where}: the enum {tp.__name__} has no members")
        enum_cls = tp
        return _enum_schema([m.value for m in members], where), lambda v: enum_cls(v)
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin is typing.Literal:
        return _enum_schema(args, where), None
    if origin in _UNION_TYPES:
        options = [a for a in args if a is not _NONE_TYPE]
        nullable = len(options) < len(args)
        if len(options) == 1:
            schema, convert = _type_schema(options[0], where)
        else:
            parts = [_type_schema(a, where) for a in options]
            schema = {"anyOf": [s for s, _ in parts]}
            convert = None
            if any(c is not None for _, c in parts):
                raise TypeError(f"{where}: an enum, a dataclass or a TypedDict inside a Union of several types is not supported")
        if nullable:
            schema = _nullable(schema)
            if convert is not None:
                inner = convert
                convert = lambda v: None if v is None else inner(v)  # noqa: E731
        return schema, convert
    if tp in (list, List, Sequence) or origin in _ARRAY_ORIGINS:
        schema = {"type": "array"}
        convert = None
        if args and args[0] is not Any:
            items, item_convert = _type_schema(args[0], f"{where} (items)")
            schema["items"] = items
            if item_convert is not None:
                convert = lambda v: [item_convert(x) for x in v]  # noqa: E731
        return schema, convert
    if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
        return _plain_type_schema(List[args[0]], where)  # type: ignore[valid-type]
    if tp in (dict, Dict, Mapping) or origin in _OBJECT_ORIGINS:
        schema = {"type": "object"}
        if args:
            key, value = args
            if key is not str and key is not Any:
                raise TypeError(f"{where}: object keys are strings in JSON, not {_type_name(key)}")
            if value is not Any:
                values, value_convert = _type_schema(value, f"{where} (values)")
                schema["additionalProperties"] = values
                if value_convert is not None:
                    convert_value = value_convert
                    return schema, lambda v: {k: convert_value(x) for k, x in v.items()}
        return schema, None
    if inspect.isclass(tp) and (dataclasses.is_dataclass(tp) or _is_typeddict(tp)):
        return _class_schema(tp, where)
    raise TypeError(
        f"{where}: the type {_type_name(tp)} has no JSON Schema mapping (use str, int, float, bool, "
        f"list[T], dict[str, T], Literal[...], an Enum, Optional[T], Any, a dataclass, a TypedDict or a pydantic model)"
    )


def _type_name(tp: Any) -> str:
    return tp.__name__ if inspect.isclass(tp) else repr(tp)


def _schema_default(value: Any) -> Any:
    """A default as JSON, or MISSING when it has no JSON form."""
    if isinstance(value, enum.Enum):
        value = value.value
    if isinstance(value, tuple):
        value = list(value)
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError):
        return MISSING
    return value


def _build_parameter(
    name: str,
    annotation: Any,
    default: Any,
    doc_description: Optional[str],
    where: str,
) -> _Parameter:
    """One parameter: `annotation` (possibly Annotated) and `default` (MISSING, a value or a
    Param) as Python declared them."""
    base, meta = _split_annotated(annotation)
    # Pydantic reads its own metadata (Field(...)) in the Annotated; panto's is read below.
    schema, convert = model_type_schema(annotation, where) if involves_model(base) else _plain_type_schema(base, where)
    schema = dict(schema)
    if doc_description:
        schema["description"] = doc_description
    schema, annotated_default = _apply_metadata(schema, meta, where)
    if isinstance(default, Param):
        schema, param_default = _apply_metadata(schema, [default], where)
        default = param_default
    elif default is MISSING:
        default = annotated_default
    if default is not MISSING:
        as_json = _schema_default(default)
        if as_json is not MISSING:
            schema["default"] = as_json
    # Keep the usual key order of a JSON Schema: type first, description, then the rest.
    ordered: Dict[str, Any] = {}
    for key in ("type", "description"):
        if key in schema:
            ordered[key] = schema.pop(key)
    ordered.update(schema)
    return _Parameter(name, ordered, default, convert)


def _object_schema(params: Sequence[_Parameter], additional: bool) -> Dict[str, Any]:
    schema: Dict[str, Any] = {"type": "object", "properties": {p.name: p.schema for p in params}}
    required = [p.name for p in params if p.default is MISSING]
    if required:
        schema["required"] = required
    if not additional:
        schema["additionalProperties"] = False
    return hoist_defs(schema, "the schema")



def _type_hints(obj: Any, where: str) -> Dict[str, Any]:
    try:
        return typing.get_type_hints(obj, include_extras=True)
    except NameError as e:
        raise TypeError(f"{where}: a type hint cannot be resolved ({e})") from None


# ---- dataclasses and TypedDicts ------------------------------------------------------------

_building = threading.local()  # the classes whose schema is being made, on this thread


def _is_typeddict(tp: Any) -> bool:
    is_typeddict = getattr(typing, "is_typeddict", None)  # Python 3.10+
    if is_typeddict is not None and is_typeddict(tp):
        return True
    return isinstance(tp, type) and issubclass(tp, dict) and hasattr(tp, "__required_keys__")


def _class_schema(klass: type, where: str) -> Tuple[Dict[str, Any], Callable[[Any], Any]]:
    """The object schema of a dataclass or a TypedDict, and the converter that makes one from
    its JSON object (the fields converted in turn)."""
    stack: List[type] = _building.__dict__.setdefault("stack", [])
    if klass in stack:
        raise TypeError(f"{where}: {klass.__name__} contains itself: recursive types have no JSON Schema here")
    stack.append(klass)
    try:
        params = _class_params(klass, f"{where} ({klass.__name__})")
    finally:
        stack.pop()
    schema = _object_schema(params, False)
    doc = klass.__doc__ or ""
    described = doc and not doc.startswith(klass.__name__ + "(")  # not the dataclass's own
    text = parse_docstring(doc)[0] if described else ""
    if text:
        schema = {"type": "object", "description": text, **{k: v for k, v in schema.items() if k != "type"}}
    converters = {p.name: p.convert for p in params if p.convert is not None}
    make: Callable[..., Any] = klass if dataclasses.is_dataclass(klass) else dict

    def convert(value: Any) -> Any:
        if not isinstance(value, Mapping):
            raise TypeError(f"{klass.__name__} needs a JSON object, not {type(value).__name__}")
        fields = {}
        for k, v in value.items():
            try:
                fields[k] = converters[k](v) if k in converters else v
            except InvalidValue as e:  # a model's field: named by its path from here
                raise e.under(k) from e.__cause__
        return make(**fields)

    return schema, convert


def _class_params(klass: type, where: str) -> List[_Parameter]:
    hints = _type_hints(klass, where)
    doc_params = parse_docstring(klass.__doc__)[1]
    params: List[_Parameter] = []
    if dataclasses.is_dataclass(klass):
        for f in dataclasses.fields(klass):
            if not f.init:
                continue
            if f.default is not dataclasses.MISSING:
                default: Any = f.default
            elif f.default_factory is not dataclasses.MISSING:
                default = f.default_factory()
            else:
                default = MISSING
            params.append(_build_parameter(f.name, hints[f.name], default, doc_params.get(f.name), f"{where}, field {f.name}"))
        return params
    required = getattr(klass, "__required_keys__", frozenset(hints))
    for name, annotation in hints.items():
        origin = typing.get_origin(annotation)
        if origin is not None and getattr(origin, "_name", "") in ("Required", "NotRequired"):
            annotation = typing.get_args(annotation)[0]
        param = _build_parameter(name, annotation, MISSING, doc_params.get(name), f"{where}, key {name}")
        if name not in required:
            param.default = None  # optional: left out of "required"
            param.schema.pop("default", None)
        params.append(param)
    return params


def type_schema(tp: Any, where: str) -> Tuple[Dict[str, Any], Optional[Callable[[Any], Any]]]:
    """The JSON Schema of a Python type and its converter (None: the JSON value is the
    Python value)."""
    return _type_schema(tp, where)


def object_schema_of(klass: type, where: str) -> Tuple[Dict[str, Any], Callable[[Any], Any]]:
    """The object schema of a dataclass, a TypedDict or a pydantic model, and its converter.
    TypeError for another type."""
    if is_model_class(klass):
        return model_type_schema(klass, where)
    if not (inspect.isclass(klass) and (dataclasses.is_dataclass(klass) or _is_typeddict(klass))):
        raise TypeError(f"{where}: needs a dataclass, a TypedDict or a pydantic model class (or a JSON Schema dict), not {klass!r}")
    return _class_schema(klass, where)
