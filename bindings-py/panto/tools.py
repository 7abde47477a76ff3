"""Tools: declared from typed Python functions and classes (or a raw JSON Schema), exported in
each provider's format, and gathered in registries.

    @panto.tool
    def get_weather(city: str, unit: Literal["c", "f"] = "c") -> str:
        \"\"\"Current weather for a city.

        Args:
            city: The city.
            unit: Celsius or Fahrenheit.
        \"\"\"
        return f"Sunny in {city}"

    class GetWeather(panto.ToolClass, capabilities=["net"]):
        \"\"\"Current weather for a city.\"\"\"

        city: Annotated[str, "The city"]
        unit: Literal["c", "f"] = panto.Param("Celsius or Fahrenheit", default="c")

        def run(self) -> str:
            return f"Sunny in {self.city}"

Both give the tool `get_weather` with the input schema

    {"type": "object",
     "properties": {"city": {"type": "string", "description": "The city."},
                    "unit": {"type": "string", "enum": ["c", "f"], "default": "c", ...}},
     "required": ["city"], "additionalProperties": false}

Types: str → string, int → integer, float → number, bool → boolean, list[T] / List[T] /
Sequence[T] → array of T, dict / Dict[str, T] → object, Literal[...] and Enum → enum,
Optional[T] → T or null, Any → any value, a dataclass, a TypedDict or a pydantic model (or a
type made of models: list[City], Optional[City], validated by Pydantic) → an object of its
fields (the handler gets an instance). A parameter without a default is required (_schema.py).
"""

from __future__ import annotations

import copy
import dataclasses
import enum
import functools
import inspect
import json
import re
import sys
import typing
from typing import (
    Any,
    Callable,
    Dict,
    Generic,
    Iterable,
    Iterator,
    List,
    Mapping,
    Optional,
    Sequence,
    Tuple,
    TypeVar,
    Union,
    overload,
)

from . import _tool_set
from ._docstring import parse_docstring
from ._pydantic import InvalidValue
from ._tool_failure import ToolError
from .parts import Media, is_media, parts_of

__all__ = ["Tool", "ToolClass", "Param", "Registry", "tool", "as_tool", "to_content", "to_result"]

from ._schema import (  # noqa: E402  (the type -> JSON Schema machinery, shared with structured output)
    MISSING,
    Param as ParamMarker,
    _build_parameter,
    _object_schema,
    _Parameter,
    _type_hints,
)


# A Tool is generic over its handler's parameters (P) and result (R), so that a decorated
# function keeps its signature for type checkers; a Tool made otherwise is Tool[..., Any].
if typing.TYPE_CHECKING:
    from typing_extensions import ParamSpec, Protocol
    from typing_extensions import TypeVar as DefaultTypeVar

    P = ParamSpec("P", default=...)
    R = DefaultTypeVar("R", default=Any)
    Q = ParamSpec("Q")
    S = TypeVar("S")
elif sys.version_info >= (3, 10):
    P = typing.ParamSpec("P")
    R = TypeVar("R")
else:  # Python 3.9 has no ParamSpec: a TypeVar stands for it at run time
    P = TypeVar("P")
    R = TypeVar("R")

T = TypeVar("T")

if typing.TYPE_CHECKING:
    # What checkers see of `panto.Param` (the class is _schema.Param): as dataclasses' field(),
    # it gives the type of its default, so that `to: str = panto.Param("...", default="EUR")`
    # keeps the attribute's or parameter's declared type.
    @overload
    def Param(description: Optional[str] = None, *, default: T, schema: Optional[Mapping[str, Any]] = None) -> T: ...
    @overload
    def Param(description: Optional[str] = None, *, schema: Optional[Mapping[str, Any]] = None) -> Any: ...
    def Param(description: Optional[str] = None, *, default: Any = MISSING,
              schema: Optional[Mapping[str, Any]] = None) -> Any:
        """Describes one parameter of a tool (see `panto._schema.Param`)."""
else:
    Param = ParamMarker


# ---- naming --------------------------------------------------------------------------------

_WORD_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def snake_case(name: str) -> str:
    """`GetWeather` → `get_weather`, `HTTPRequest` → `http_request`, `getURL2` → `get_url2`."""
    return _WORD_BOUNDARY.sub("_", name).replace("-", "_").lower()


# ---- results -------------------------------------------------------------------------------


def _content_default(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, (set, frozenset)):
        return list(value)
    dump = getattr(value, "model_dump", None)  # pydantic models
    if callable(dump):
        return dump(mode="json")
    raise TypeError(f"a tool result of type {type(value).__name__} is not JSON serializable")


def to_result(value: Any) -> Union[str, List[Union[str, Media]]]:
    """A handler's return value as the result sent to the model: a list of parts when it
    holds media (a `panto.Media`, `Image` or `Document`, or bytes; or a list or tuple of str
    and media with at least one medium), else its text (`to_content`). Raises TypeError for a
    list of parts holding something else than str and media."""
    if is_media(value):
        return parts_of(value, "the result")
    if isinstance(value, (list, tuple)) and any(is_media(v) for v in value):
        return parts_of(value, "the result")
    return to_content(value)


def to_content(value: Any) -> str:
    """A handler's return value as the text sent to the model: a str as is, anything else as
    JSON (dataclasses, enums, sets and pydantic models included). Raises TypeError for a value
    with no JSON form."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=_content_default)


def _copy_schema(schema: Any) -> Any:
    """A copy of a JSON value through the json module, whose C code takes deeper nesting than
    copy.deepcopy (the library refuses a schema nested more deeply than either, with
    ConfigError)."""
    return json.loads(json.dumps(schema, allow_nan=False))


# ---- Tool ----------------------------------------------------------------------------------


class InvalidToolInput(ToolError, ValueError):
    """The model's input refused by Pydantic, worded as the core's own refusal. A ToolError, so
    its text goes to the model as it is (no exception type in front); a ValueError to a caller
    of the tool."""


class Tool(Generic[P, R]):
    """A tool: a name, a description, a JSON Schema of its input (an object), the capabilities
    it requires, and a handler that runs it.

        weather = panto.Tool(
            name="get_weather",
            description="Current weather for a city.",
            input_schema={"type": "object", "properties": {"city": {"type": "string"}},
                          "required": ["city"]},
            handler=lambda city: f"Sunny in {city}",
            capabilities=["net"],
        )

    The handler gets the model's input as keyword arguments; its return value is the result
    (a str as is; media — a `panto.Image`, `panto.Document`, `panto.Media` or bytes — or a
    list of str and media as parts; anything else as JSON); an exception it raises becomes an
    error result that names its type (`KeyError: 'city'`), logged at WARNING with its
    traceback on the `panto` logger; raise `panto.ToolError(text)` to fail with `text` as it
    is. A tool without a handler is run by hand:
    see `Stream.submit_tool_result`. The handler may be an `async def` function: the stream
    runs it as a task (see `Stream`).

    `sequential=True` makes the tool's calls run alone: after the calls before them in the
    model's message finished, before the calls after them start (the other host calls of a
    message run at the same time). `approval="always"` makes its calls wait for a person's
    answer (`panto.ApprovalRequest`; the agent's `approval_rules` decide first).

    Made from a typed function by `@panto.tool` / `Tool.from_function`, from a class by
    `panto.ToolClass` / `Tool.from_class`. Calling a Tool calls its handler, so a decorated
    function stays callable.
    """

    def __init__(
        self,
        name: str,
        description: str = "",
        input_schema: Optional[Mapping[str, Any]] = None,
        handler: Optional[Callable[P, R]] = None,
        capabilities: Iterable[str] = (),
        sequential: bool = False,
        approval: str = "never",
    ) -> None:
        if not isinstance(description, str):
            raise TypeError(f"tool {name}: the description must be a str, not {type(description).__name__}")
        if input_schema is None:
            input_schema = {"type": "object", "properties": {}}
        if not isinstance(input_schema, Mapping):
            raise TypeError(f"tool {name}: input_schema must be a JSON Schema object (a dict)")
        try:
            schema = _copy_schema(input_schema)
        except (TypeError, ValueError) as e:
            raise TypeError(f"tool {name}: input_schema is not JSON: {e}") from None
        except RecursionError:  # the library refuses far less deep schemas anyway
            raise ValueError(f"tool {name}: input_schema is nested too deeply") from None
        if handler is not None and not callable(handler):
            raise TypeError(f"tool {name}: the handler must be callable")
        self.name: str = name
        self.description: str = description
        self.input_schema: Dict[str, Any] = schema
        self.handler: Optional[Callable[P, R]] = handler
        self.capabilities: Tuple[str, ...] = _capabilities(capabilities, name)
        if not isinstance(sequential, bool):
            raise TypeError(f"tool {name}: sequential must be a bool, not {type(sequential).__name__}")
        self.sequential: bool = sequential
        if approval not in ("never", "always"):
            raise ValueError(f'tool {name}: approval must be "always" or "never", not {approval!r}')
        self.approval: str = approval
        _tool_set.check_spec(self.spec())  # the library's rules: its name, its schema
        # JSON value -> Python value, per parameter (enums); set by the generators.
        self._converters: Dict[str, Callable[[Any], Any]] = {}
        # The parameters as declared in Python (generated tools only).
        self._params: List[_Parameter] = []
        self._is_async = False  # the generators look through their wrappers

    # ---- construction ------------------------------------------------------------------

    @classmethod
    def from_function(
        cls,
        fn: Callable[Q, S],
        *,
        name: Optional[str] = None,
        description: Optional[str] = None,
        capabilities: Iterable[str] = (),
        sequential: bool = False,
    ) -> Tool[Q, S]:
        """A tool from a typed function: its parameters are the input, described by
        `Annotated[T, "description"]`, a `panto.Param` or the docstring's `Args:` section; the
        docstring's text before its sections is the description; the name defaults to the
        snake_case of the function's name. The function is the handler."""
        if not callable(fn):
            raise TypeError(f"Tool.from_function needs a function, not {type(fn).__name__}")
        fn_name = getattr(fn, "__name__", None)
        if name is None:
            if not fn_name or fn_name == "<lambda>":
                raise ValueError("a tool from a lambda or a callable without __name__ needs name=...")
            name = snake_case(fn_name)
        where = f"tool {name}"
        doc_text, doc_params = parse_docstring(inspect.getdoc(fn))
        try:
            signature = inspect.signature(fn)
        except (TypeError, ValueError) as e:
            raise TypeError(f"{where}: cannot read the signature of {fn!r}: {e}") from None
        hints = _type_hints(fn, where)
        params: List[_Parameter] = []
        param_defaults: Dict[str, Any] = {}
        additional = False
        for p in signature.parameters.values():
            if p.kind is p.VAR_POSITIONAL:
                raise TypeError(f"{where}: *{p.name} cannot take a JSON object's properties")
            if p.kind is p.POSITIONAL_ONLY:
                raise TypeError(f"{where}: the positional-only parameter {p.name} cannot be passed by name")
            if p.kind is p.VAR_KEYWORD:
                additional = True
                continue
            if p.name not in hints:
                raise TypeError(f"{where}: the parameter {p.name} has no type hint")
            default = MISSING if p.default is p.empty else p.default
            param = _build_parameter(p.name, hints[p.name], default, doc_params.get(p.name), f"{where}, parameter {p.name}")
            params.append(param)
            if isinstance(p.default, ParamMarker):
                param_defaults[p.name] = param.default
        handler = fn if not param_defaults else _with_param_defaults(fn, signature, param_defaults)
        new_tool: Callable[..., Tool[Q, S]] = cls  # type: ignore[assignment]  # cls(handler) is a Tool[Q, S]
        t = new_tool(
            name,
            description if description is not None else doc_text,
            _object_schema(params, additional),
            handler,
            capabilities,
            sequential,
        )
        t._converters = {p.name: p.convert for p in params if p.convert is not None}
        t._params = params
        t._is_async = inspect.iscoroutinefunction(fn)
        try:
            functools.update_wrapper(t, fn, updated=())
        except AttributeError:  # a callable without __name__ and the like
            pass
        return t

    @classmethod
    def from_class(
        cls,
        klass: type,
        *,
        name: Optional[str] = None,
        description: Optional[str] = None,
        capabilities: Optional[Iterable[str]] = None,
        sequential: Optional[bool] = None,
    ) -> Tool[..., Any]:
        """A tool from a class: its typed attributes (not ClassVar, not starting with `_`) are
        the input, with their class values as defaults (a `panto.Param` is allowed);
        descriptions come from `Annotated`, a Param or the docstring's `Args:` / `Attributes:`
        section. The description is `description=`, else an unannotated `description` class
        attribute, else the docstring's text; capabilities likewise from a `capabilities` class
        attribute. The name defaults to the snake_case of the class name (`GetWeather` →
        `get_weather`).

        Running the tool makes an instance with the input as its attributes (a class with its
        own `__init__`, e.g. a dataclass, is called with them as keyword arguments) and calls
        its `run()` method, or the instance itself when it defines `__call__`.
        """
        if not inspect.isclass(klass):
            raise TypeError(f"Tool.from_class needs a class, not {type(klass).__name__}")
        options = klass.__dict__.get("__panto_options__", {})
        name = name if name is not None else options.get("name")
        description = description if description is not None else options.get("description")
        capabilities = capabilities if capabilities is not None else options.get("capabilities")
        sequential = sequential if sequential is not None else options.get("sequential", False)
        if name is None:
            name = snake_case(klass.__name__)
        where = f"tool {name}"
        hints = _type_hints(klass, where)
        doc_text, doc_params = parse_docstring(klass.__dict__.get("__doc__"))
        params: List[_Parameter] = []
        for attr, annotation in hints.items():
            if attr.startswith("_") or typing.get_origin(annotation) is typing.ClassVar or annotation is typing.ClassVar:
                continue
            default = _class_default(klass, attr)
            if inspect.isroutine(default):
                raise TypeError(f"{where}: the attribute {attr} is annotated but holds a method")
            params.append(_build_parameter(attr, annotation, default, doc_params.get(attr), f"{where}, attribute {attr}"))
        names = {p.name for p in params}
        if description is None and "description" not in names:
            attr_description = _class_default(klass, "description")
            if isinstance(attr_description, str):
                description = attr_description
        if description is None:
            description = doc_text
        if capabilities is None and "capabilities" not in names:
            attr_caps = _class_default(klass, "capabilities")
            if attr_caps is not MISSING:
                capabilities = attr_caps
        method = _class_method(klass)
        if method is None:
            raise TypeError(f"{where}: the class {klass.__name__} has neither a run() method nor __call__()")
        make = _instance_maker(klass, params)
        call_method = method

        def handler(**kwargs: Any) -> Any:
            return getattr(make(kwargs), call_method)()

        handler.__name__ = klass.__name__
        handler.__qualname__ = klass.__qualname__
        handler.__doc__ = klass.__doc__
        new_tool: Callable[..., Tool[..., Any]] = cls
        t = new_tool(name, description, _object_schema(params, False), handler, capabilities or (),
                                 bool(sequential))
        t._converters = {p.name: p.convert for p in params if p.convert is not None}
        t._params = params
        t._is_async = inspect.iscoroutinefunction(getattr(klass, method))
        t.__wrapped__ = klass  # type: ignore[attr-defined]
        return t

    @classmethod
    def from_spec(cls, spec: Mapping[str, Any], handler: Optional[Callable[..., Any]] = None) -> Tool[..., Any]:
        """A tool from the JSON object of `panto_agent_add_tool` ({"name", "description",
        "input_schema", "capabilities", "sequential"}), with an optional handler."""
        _tool_set.check_spec(spec)  # the library's rules, its known keys included
        return cls(
            spec.get("name", ""),
            spec.get("description", ""),
            spec.get("input_schema"),
            handler,
            spec.get("capabilities", ()),
            spec.get("sequential", False),
            spec.get("approval", "never"),
        )

    # ---- use ---------------------------------------------------------------------------

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        """Calls the handler (the decorated function itself)."""
        if self.handler is None:
            raise TypeError(f"the tool {self.name} has no handler")
        return self.handler(*args, **kwargs)

    def invoke(self, input: Mapping[str, Any]) -> Union[str, List[Union[str, Media]]]:
        """Runs the tool on a model's input (a dict) and returns the result: the handler gets
        the input as keyword arguments (enum values turned into their Enum), and its return
        value is turned into text by `panto.to_content`, or into a list of parts (str and
        `panto.Media`) when it holds media (see `to_result`). Exceptions propagate. An async
        handler's coroutine is awaited on panto's loop thread (this call waits for it)."""
        value = self._call(input)
        if inspect.isawaitable(value):  # an async handler called from sync code
            from ._loop import run_awaitable

            value = run_awaitable(value)
        return to_result(value)

    async def ainvoke(self, input: Mapping[str, Any]) -> Union[str, List[Union[str, Media]]]:
        """`invoke`, awaiting the handler's result when it is awaitable (an `async def`
        handler)."""
        value = self._call(input)
        if inspect.isawaitable(value):
            value = await value
        return to_result(value)

    @property
    def is_async(self) -> bool:
        """The handler is an `async def` function (or a class whose run() is one)."""
        return self._is_async or inspect.iscoroutinefunction(self.handler)

    def _call(self, input: Mapping[str, Any]) -> Any:
        if self.handler is None:
            raise TypeError(f"the tool {self.name} has no handler")
        if not isinstance(input, Mapping):
            raise TypeError(f"the input of tool {self.name} must be a JSON object, not {type(input).__name__}")
        kwargs = dict(input)
        for key, convert in self._converters.items():
            if key in kwargs:
                try:
                    kwargs[key] = convert(kwargs[key])
                except InvalidValue as e:  # Pydantic's refusal, worded as the core's own
                    raise InvalidToolInput(f"Invalid input for tool {self.name}: {e.describe(key)}") from e.__cause__
        handler: Callable[..., Any] = self.handler  # the model's input: checked by the library, not by P
        return handler(**kwargs)

    # ---- export ------------------------------------------------------------------------

    def spec(self) -> Dict[str, Any]:
        """The JSON object `panto_agent_add_tool` takes."""
        spec = {
            "name": self.name,
            "description": self.description,
            "input_schema": _copy_schema(self.input_schema),
            "capabilities": list(self.capabilities),
        }
        if getattr(self, "sequential", False):  # (read by __init__ before it is set)
            spec["sequential"] = True
        if getattr(self, "approval", "never") == "always":
            spec["approval"] = "always"
        return spec

    def to_anthropic(self) -> Dict[str, Any]:
        """The tool in the Anthropic Messages API format: {name, description, input_schema}."""
        return self.export("anthropic")

    def to_openai(self) -> Dict[str, Any]:
        """The tool in the OpenAI Chat Completions format: {type: "function", function: {name,
        description, parameters}}."""
        return self.export("openai")

    def export(self, provider: str) -> Dict[str, Any]:
        """The tool in a provider's format ("anthropic" or "openai"), as the library exports it."""
        return _tool_set.export([self.spec()], provider)[0]

    def __repr__(self) -> str:
        capabilities = getattr(self, "capabilities", ())  # complete even while __init__ fails
        caps = f", capabilities={list(capabilities)!r}" if capabilities else ""
        handler = "" if getattr(self, "handler", None) is not None else ", no handler"
        return f"<panto.Tool {getattr(self, 'name', '?')!r}{caps}{handler}>"


def _capabilities(capabilities: Iterable[str], name: str) -> Tuple[str, ...]:
    if isinstance(capabilities, (str, bytes)):
        raise TypeError(f"tool {name}: capabilities must be a list of str, not a single {type(capabilities).__name__}")
    return tuple(capabilities)




def _with_param_defaults(fn: Callable[..., Any], signature: inspect.Signature, defaults: Dict[str, Any]) -> Callable[..., Any]:
    """`fn`, with the defaults of its Param-defaulted parameters put in place of the Params
    (a required one left out raises TypeError, as a plain required parameter does)."""

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        bound = signature.bind_partial(*args, **kwargs)
        for key, default in defaults.items():
            if key not in bound.arguments:
                if default is MISSING:
                    raise TypeError(f"{fn.__name__}() missing the required argument {key!r}")
                bound.arguments[key] = _fresh(default)
        return fn(*bound.args, **bound.kwargs)

    return call


def _fresh(default: Any) -> Any:
    """A mutable default is copied, so that no call sees another's changes."""
    return copy.deepcopy(default) if isinstance(default, (list, dict, set)) else default


def _class_default(klass: type, attr: str) -> Any:
    for k in klass.__mro__:
        if k is ToolClass or k is object:
            break
        if attr in k.__dict__:
            return k.__dict__[attr]
    return MISSING


def _class_method(klass: type) -> Optional[str]:
    for k in klass.__mro__:
        if k is ToolClass or k is object:
            break
        if "run" in k.__dict__:
            return "run"
        if "__call__" in k.__dict__:
            return "__call__"
    return None


def _instance_maker(klass: type, params: Sequence[_Parameter]) -> Callable[[Dict[str, Any]], Any]:
    if issubclass(klass, ToolClass) or _own_init(klass):
        return lambda kwargs: klass(**kwargs)

    def make(kwargs: Dict[str, Any]) -> Any:
        obj = klass.__new__(klass)
        _set_attributes(obj, params, kwargs, klass.__name__)
        return obj

    return make


def _own_init(klass: type) -> bool:
    for k in klass.__mro__:
        if k is object:
            return False
        if "__init__" in k.__dict__:
            return True
    return False


def _set_attributes(obj: Any, params: Sequence[_Parameter], kwargs: Mapping[str, Any], cls_name: str) -> None:
    known = {p.name for p in params}
    unknown = [k for k in kwargs if k not in known]
    if unknown:
        raise TypeError(f"{cls_name}() got unexpected keyword argument(s): {', '.join(unknown)}")
    missing = [p.name for p in params if p.name not in kwargs and p.default is MISSING]
    if missing:
        raise TypeError(f"{cls_name}() missing required argument(s): {', '.join(missing)}")
    for p in params:
        object.__setattr__(obj, p.name, kwargs[p.name] if p.name in kwargs else _fresh(p.default))


# ---- ToolClass -----------------------------------------------------------------------------


class ToolClass:
    """Base class of tools declared as classes:

        class GetWeather(panto.ToolClass, capabilities=["net"]):
            \"\"\"Current weather for a city.\"\"\"

            city: Annotated[str, "The city"]
            unit: Literal["c", "f"] = "c"

            def run(self) -> str:
                return f"Sunny in {self.city} ({self.unit})"

    Typed class attributes are the parameters (required unless they have a value); the
    docstring (or a `description` class attribute) is the description; the name defaults to
    the snake_case of the class name, `name=` / `description=` / `capabilities=` class
    keywords override (and `sequential=True`, see `Tool`). The class itself goes into `Agent(tools=[...])` and `Registry`
    (`Tool.from_class(GetWeather)` gives its `Tool`). `GetWeather(city="Paris")` makes an
    instance with those attributes; the tool calls its `run()`.

    A subclass that defines no `run()` is a base for other tool classes, not a tool.
    """

    def __init_subclass__(
        cls,
        *,
        name: Optional[str] = None,
        description: Optional[str] = None,
        capabilities: Optional[Iterable[str]] = None,
        sequential: Optional[bool] = None,
        **kwargs: Any,
    ) -> None:
        super().__init_subclass__(**kwargs)
        options: Dict[str, Any] = {}
        if name is not None:
            options["name"] = name
        if description is not None:
            options["description"] = description
        if capabilities is not None:
            options["capabilities"] = list(capabilities)
        if sequential is not None:
            options["sequential"] = sequential
        setattr(cls, "__panto_options__", options)
        setattr(cls, "__panto_tool__", None)  # built on first use (or now, below)
        if _class_method(cls) is not None:
            try:
                setattr(cls, "__panto_tool__", Tool.from_class(cls))
            except TypeError as e:
                if "cannot be resolved" not in str(e):
                    raise  # a real mistake: report it where the class is defined
                # a forward reference: resolved on first use

    def __init__(self, **kwargs: Any) -> None:
        _set_attributes(self, _class_tool(type(self))._params, kwargs, type(self).__name__)

    def run(self) -> Any:
        """Runs the tool with the instance's attributes as its input; the return value is the
        result."""
        raise NotImplementedError(f"{type(self).__name__} must define run()")

    def __repr__(self) -> str:
        tool = _class_tool(type(self))
        fields = ", ".join(
            f"{name}={getattr(self, name)!r}" for name in tool.input_schema.get("properties", {}) if hasattr(self, name)
        )
        return f"{type(self).__name__}({fields})"


def _class_tool(klass: type) -> Tool:
    tool = klass.__dict__.get("__panto_tool__")
    if tool is None:
        tool = Tool.from_class(klass)
        setattr(klass, "__panto_tool__", tool)
    return tool




# ---- panto.tool and as_tool ----------------------------------------------------------------

C = TypeVar("C", bound=type)

if typing.TYPE_CHECKING:

    class ToolDecorator(Protocol):
        """What `panto.tool(...)` with options returns: `panto.tool` itself, options applied."""

        @overload
        def __call__(self, obj: C, /) -> C: ...  # type: ignore[overload-overlap]
        @overload
        def __call__(self, obj: Callable[Q, S], /) -> Tool[Q, S]: ...


@overload
def tool(obj: C) -> C: ...  # type: ignore[overload-overlap]
@overload
def tool(obj: Callable[Q, S]) -> Tool[Q, S]: ...
@overload
def tool(
    *,
    name: Optional[str] = None,
    description: Optional[str] = None,
    capabilities: Optional[Iterable[str]] = None,
    sequential: Optional[bool] = None,
) -> ToolDecorator: ...


def tool(
    obj: Any = None,
    *,
    name: Optional[str] = None,
    description: Optional[str] = None,
    capabilities: Optional[Iterable[str]] = None,
    sequential: Optional[bool] = None,
) -> Any:
    """Declares a tool, as a bare decorator or with options:

        @panto.tool
        def get_weather(city: str) -> str: ...

        @panto.tool(name="weather", capabilities=["net"])
        def get_weather(city: str) -> str: ...

        @panto.tool(sequential=True)     # its calls run alone (see panto.Tool)
        async def migrate(table: str) -> str: ...

    On a function it returns a `panto.Tool` that is still callable like the function. On a
    class it returns the class itself, marked as a tool (see `Tool.from_class`).
    """
    if obj is None:
        return lambda o: _declare(o, name, description, capabilities, sequential)
    return _declare(obj, name, description, capabilities, sequential)


def _declare(
    obj: Any,
    name: Optional[str],
    description: Optional[str],
    capabilities: Optional[Iterable[str]],
    sequential: Optional[bool] = None,
) -> Any:
    if isinstance(obj, str):
        raise TypeError("use @panto.tool(name=...) to name a tool")
    if isinstance(obj, Tool):
        if name is None and description is None and capabilities is None and sequential is None:
            return obj
        obj = obj.__dict__.get("__wrapped__", obj.handler)
        if obj is None:
            raise TypeError("a Tool without a handler cannot be redeclared")
    if inspect.isclass(obj):
        t = Tool.from_class(obj, name=name, description=description, capabilities=capabilities, sequential=sequential)
        setattr(obj, "__panto_tool__", t)
        return obj
    if callable(obj):
        return Tool.from_function(
            obj, name=name, description=description, capabilities=capabilities or (), sequential=bool(sequential)
        )
    raise TypeError(f"@panto.tool needs a function or a class, not {type(obj).__name__}")


def as_tool(obj: Any) -> Tool:
    """The Tool of anything that declares one: a Tool, a ToolClass subclass or a class
    decorated with @panto.tool, a typed function (as `Tool.from_function`), or a spec dict
    (a tool without a handler)."""
    if isinstance(obj, Tool):
        return obj
    if inspect.isclass(obj):
        if issubclass(obj, ToolClass):
            return _class_tool(obj)
        t = obj.__dict__.get("__panto_tool__")
        return t if isinstance(t, Tool) else Tool.from_class(obj)
    if isinstance(obj, Mapping):
        return Tool.from_spec(obj)
    if callable(obj):
        return Tool.from_function(obj)
    raise TypeError(f"not a tool: {obj!r} (use a panto.Tool, a function, a ToolClass or a spec dict)")


# ---- Registry ------------------------------------------------------------------------------


class Registry:
    """A named set of tools, in registration order:

        tools = panto.Registry()

        @tools.register
        def get_weather(city: str) -> str: ...

        tools.register(GetWeather)          # a ToolClass
        tools.get("get_weather")            # the Tool
        tools.filter(["net"])               # the tools usable with these capabilities
        tools.export("openai")              # the list a provider's request carries
        panto.Agent(..., tools=tools)

    Names are unique: registering a second tool of a name raises ValueError.
    """

    def __init__(self, tools: Iterable[Any] = ()) -> None:
        self._tools: Dict[str, Tool] = {}
        for t in tools:
            self.register(t)

    @overload
    def register(  # type: ignore[overload-overlap]
        self,
        obj: C,
        *,
        name: Optional[str] = None,
        description: Optional[str] = None,
        capabilities: Optional[Iterable[str]] = None,
        sequential: Optional[bool] = None,
    ) -> C: ...
    @overload
    def register(
        self,
        obj: Callable[Q, S],
        *,
        name: Optional[str] = None,
        description: Optional[str] = None,
        capabilities: Optional[Iterable[str]] = None,
        sequential: Optional[bool] = None,
    ) -> Tool[Q, S]: ...
    @overload
    def register(
        self,
        obj: Mapping[str, Any],
        *,
        name: Optional[str] = None,
        description: Optional[str] = None,
        capabilities: Optional[Iterable[str]] = None,
        sequential: Optional[bool] = None,
    ) -> Tool[..., Any]: ...
    @overload
    def register(
        self,
        obj: None = None,
        *,
        name: Optional[str] = None,
        description: Optional[str] = None,
        capabilities: Optional[Iterable[str]] = None,
        sequential: Optional[bool] = None,
    ) -> ToolDecorator: ...
    def register(
        self,
        obj: Any = None,
        *,
        name: Optional[str] = None,
        description: Optional[str] = None,
        capabilities: Optional[Iterable[str]] = None,
        sequential: Optional[bool] = None,
    ) -> Any:
        """Adds a tool (anything `panto.as_tool` takes). Usable as a decorator, bare or with
        the options of `panto.tool`; returns what `panto.tool` returns (a Tool for a function,
        the class for a class)."""
        if obj is None:
            return lambda o: self.register(o, name=name, description=description, capabilities=capabilities,
                                           sequential=sequential)
        if name is not None or description is not None or capabilities is not None or sequential is not None:
            declared = _declare(obj, name, description, capabilities, sequential)
        elif isinstance(obj, Mapping):
            declared = Tool.from_spec(obj)
        elif inspect.isclass(obj) or isinstance(obj, Tool):
            declared = obj
        else:
            declared = _declare(obj, None, None, None)
        t = as_tool(declared)
        if t.name in self._tools:
            raise ValueError(f"a tool named {t.name!r} is already registered")
        self._tools[t.name] = t
        return declared

    def remove(self, name: str) -> Tool:
        """Removes and returns the tool `name` (KeyError when there is none)."""
        return self._tools.pop(name)

    def get(self, name: str) -> Tool:
        """The tool `name`; KeyError when there is none."""
        try:
            return self._tools[name]
        except KeyError:
            raise KeyError(f"no tool named {name!r}") from None

    def list(self) -> List[Tool]:
        """Every tool, in registration order."""
        return [t for t in self._tools.values()]

    def names(self) -> List[str]:
        return [n for n in self._tools]

    def filter(self, capabilities: Iterable[str]) -> "Registry":
        """A new registry of the tools usable with `capabilities` (each tool's required
        capabilities are among them), as the library filters them."""
        kept = _tool_set.export(self._specs(), "panto", _capabilities(capabilities, "filter"))
        return Registry(self._tools[spec["name"]] for spec in kept)

    def export(self, provider: str = "anthropic", capabilities: Optional[Iterable[str]] = None) -> List[Dict[str, Any]]:
        """The tools in a provider's format ("anthropic" or "openai"), as the request carries
        them; with `capabilities`, only the tools usable with them."""
        granted = None if capabilities is None else _capabilities(capabilities, "export")
        return _tool_set.export(self._specs(), provider, granted)

    def _specs(self) -> List[Dict[str, Any]]:
        return [t.spec() for t in self._tools.values()]

    def __iter__(self) -> Iterator[Tool]:
        return iter(self.list())

    def __len__(self) -> int:
        return len(self._tools)

    def __contains__(self, name: object) -> bool:
        if isinstance(name, Tool):
            return self._tools.get(name.name) is name
        return name in self._tools

    def __repr__(self) -> str:
        return f"<panto.Registry {self.names()!r}>"
