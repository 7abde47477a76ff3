"""Tools in the Python binding: declaring them (functions, classes, raw schemas), exporting,
registries, and real turns against the emulator (automatic and manual running, failures,
capabilities).

    PYTHONPATH=bindings-py PANTO_LIBRARY=zig-out/lib/libpanto.so \
        .venv/bin/python -m pytest -q tests/python/test_tools.py
"""

import dataclasses
import enum
import json
import logging
import threading
from pathlib import Path
from typing import Any, ClassVar, Dict, List, Literal, Optional, Sequence

import pytest

try:
    from typing import Annotated
except ImportError:  # Python < 3.9 is not supported by the package anyway
    from typing_extensions import Annotated  # type: ignore[assignment]

import panto
from panto import _native
from panto.emulator import Emulator

PROVIDERS = ["anthropic", "openai"]


# Every test here needs the library (conftest.py fails them clearly when it is missing).
pytestmark = pytest.mark.usefixtures("library")


# ---- declaring: functions -----------------------------------------------------------------


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


def test_function_schema_covers_every_type() -> None:
    @panto.tool
    def everything(
        s: str,
        i: int,
        f: float,
        b: bool,
        items: List[int],
        names: list,
        seq: Sequence[str],
        mapping: Dict[str, int],
        anything_dict: dict,
        maybe: Optional[str],
        choice: Literal["a", "b"],
        numbers: Literal[1, 2, 3],
        color: Color,
        level: Level,
        raw: Any,
        nested: List[List[float]],
        opt_with_default: Optional[int] = None,
        flag: bool = False,
    ) -> str:
        """Takes every type."""
        return ""

    schema = everything.input_schema
    assert schema["type"] == "object"
    assert schema["additionalProperties"] is False
    props = schema["properties"]
    assert props == {
        "s": {"type": "string"},
        "i": {"type": "integer"},
        "f": {"type": "number"},
        "b": {"type": "boolean"},
        "items": {"type": "array", "items": {"type": "integer"}},
        "names": {"type": "array"},
        "seq": {"type": "array", "items": {"type": "string"}},
        "mapping": {"type": "object", "additionalProperties": {"type": "integer"}},
        "anything_dict": {"type": "object"},
        "maybe": {"type": ["string", "null"]},
        "choice": {"type": "string", "enum": ["a", "b"]},
        "numbers": {"type": "integer", "enum": [1, 2, 3]},
        "color": {"type": "string", "enum": ["red", "green"]},
        "level": {"type": "integer", "enum": [1, 2]},
        "raw": {},
        "nested": {"type": "array", "items": {"type": "array", "items": {"type": "number"}}},
        "opt_with_default": {"type": ["integer", "null"], "default": None},
        "flag": {"type": "boolean", "default": False},
    }
    # Every parameter without a default is required, in signature order.
    assert schema["required"] == list(props)[:-2]
    assert list(props) == [
        "s", "i", "f", "b", "items", "names", "seq", "mapping", "anything_dict", "maybe", "choice",
        "numbers", "color", "level", "raw", "nested", "opt_with_default", "flag",
    ]


def test_builtin_generics_and_pep604_unions() -> None:
    def f(a: "list[str]", b: "dict[str, bool]", c: "tuple[int, ...]") -> None:
        """Builtin generics."""

    t = panto.Tool.from_function(f)
    assert t.input_schema["properties"] == {
        "a": {"type": "array", "items": {"type": "string"}},
        "b": {"type": "object", "additionalProperties": {"type": "boolean"}},
        "c": {"type": "array", "items": {"type": "integer"}},
    }
    import sys

    if sys.version_info >= (3, 10):
        def g(a: "int | None", b: "str | int") -> None:
            """PEP 604."""

        props = panto.Tool.from_function(g).input_schema["properties"]
        assert props["a"] == {"type": ["integer", "null"]}
        assert props["b"] == {"anyOf": [{"type": "string"}, {"type": "integer"}]}


def test_function_descriptions_from_annotated_param_and_docstring() -> None:
    @panto.tool
    def get_weather(
        city: Annotated[str, "The city"],
        unit: Literal["c", "f"] = "c",
        days: int = panto.Param("How many days", default=1, schema={"minimum": 1, "maximum": 7}),
        country: str = panto.Param("ISO country code"),
        verbose: Annotated[bool, panto.Param("Say more")] = False,
    ) -> str:
        """Current weather for a city.

        Looks the city up first.

        Args:
            city: Ignored: Annotated wins.
            unit (str): Celsius or
                Fahrenheit.

        Returns:
            A sentence about the weather.
        """
        return f"{city}/{unit}/{days}/{country}/{verbose}"

    assert isinstance(get_weather, panto.Tool)
    assert get_weather.name == "get_weather"
    assert get_weather.description == "Current weather for a city.\n\nLooks the city up first."
    assert get_weather.input_schema == {
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": "The city"},
            "unit": {"type": "string", "description": "Celsius or Fahrenheit.", "enum": ["c", "f"], "default": "c"},
            "days": {"type": "integer", "description": "How many days", "minimum": 1, "maximum": 7, "default": 1},
            "country": {"type": "string", "description": "ISO country code"},
            "verbose": {"type": "boolean", "description": "Say more", "default": False},
        },
        "required": ["city", "country"],  # a Param without default is required
        "additionalProperties": False,
    }
    # Still callable like the function; Param defaults are filled in.
    assert get_weather("Paris", country="FR") == "Paris/c/1/FR/False"
    assert get_weather.invoke({"city": "Oslo", "country": "NO", "days": 3}) == "Oslo/c/3/NO/False"
    with pytest.raises(TypeError, match="country"):
        get_weather("Paris")  # a required Param left out
    assert get_weather.__name__ == "get_weather"
    assert get_weather.__doc__ is not None and "Current weather" in get_weather.__doc__


def test_decorator_with_options_and_name_defaults() -> None:
    @panto.tool(name="weather", description="Weather now.", capabilities=["net"])
    def get_weather(city: str) -> str:
        """Not this."""
        return city

    assert (get_weather.name, get_weather.description, get_weather.capabilities) == ("weather", "Weather now.", ("net",))
    assert get_weather("x") == "x"

    def fetchURLContent(url: str) -> str:
        return url

    assert panto.Tool.from_function(fetchURLContent).name == "fetch_url_content"
    assert panto.Tool.from_function(fetchURLContent).description == ""
    with pytest.raises(ValueError, match="name"):
        panto.Tool.from_function(lambda x: x)
    with pytest.raises(TypeError, match="no type hint"):
        panto.Tool.from_function(lambda x: x, name="echo")
    echo = panto.Tool(name="echo", input_schema={"type": "object"}, handler=lambda **kw: kw)
    assert echo.invoke({"x": 1}) == '{"x": 1}'
    assert echo.input_schema == {"type": "object"} and echo.description == ""


def test_declaration_errors_are_reported_at_once() -> None:
    def untyped(city):  # type: ignore[no-untyped-def]
        return city

    with pytest.raises(TypeError, match="city has no type hint"):
        panto.tool(untyped)

    def star(*cities: str) -> None: ...

    with pytest.raises(TypeError, match=r"\*cities"):
        panto.tool(star)

    def odd(when: complex) -> None: ...

    with pytest.raises(TypeError, match="complex"):
        panto.tool(odd)

    def bad_literal(x: Literal[b"bytes"]) -> None: ...

    with pytest.raises(TypeError, match="enum value"):
        panto.tool(bad_literal)

    # The rules of a spec are the library's (panto_tools_add): its reason, as ConfigError.
    with pytest.raises(panto.ConfigError) as info:
        panto.Tool(name="has space", description="")
    assert "1 to 64" in info.value.message and info.value.code == "config"
    with pytest.raises(panto.ConfigError, match="object"):
        panto.Tool(name="t", input_schema={"type": "string"})
    with pytest.raises(panto.ConfigError, match="no_such_key"):
        panto.Tool.from_spec({"name": "t", "no_such_key": 1})
    with pytest.raises(TypeError, match="list of str"):
        panto.Tool(name="t", capabilities="net")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="callable"):
        panto.Tool(name="t", handler="nope")  # type: ignore[arg-type]


def test_kwargs_function_accepts_more_properties() -> None:
    def f(city: str, **extra: Any) -> str:
        return json.dumps(extra, sort_keys=True)

    t = panto.Tool.from_function(f)
    assert "additionalProperties" not in t.input_schema
    assert t.invoke({"city": "x", "a": 1}) == '{"a": 1}'


# ---- declaring: classes -------------------------------------------------------------------


class GetWeather(panto.ToolClass, capabilities=["net"]):
    """Current weather for a city.

    Attributes:
        unit: Celsius or Fahrenheit.
    """

    city: Annotated[str, "The city"]
    unit: Literal["c", "f"] = "c"
    days: int = panto.Param("How many days", default=1)
    tags: List[str] = []
    color: Optional[Color] = None
    cache: ClassVar[Dict[str, str]] = {}
    _private: int = 0

    def run(self) -> Dict[str, Any]:
        self.tags.append("seen")
        return {"city": self.city, "unit": self.unit, "days": self.days, "tags": self.tags, "color": self.color}


def test_tool_class_schema_and_run() -> None:
    t = panto.as_tool(GetWeather)
    assert t is panto.as_tool(GetWeather)  # built once, with the class
    assert t.spec() == panto.Tool.from_class(GetWeather).spec()
    assert t.name == "get_weather"
    assert t.description == "Current weather for a city."
    assert t.capabilities == ("net",)
    assert t.input_schema == {
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": "The city"},
            "unit": {"type": "string", "description": "Celsius or Fahrenheit.", "enum": ["c", "f"], "default": "c"},
            "days": {"type": "integer", "description": "How many days", "default": 1},
            "tags": {"type": "array", "items": {"type": "string"}, "default": []},
            "color": {"type": ["string", "null"], "enum": ["red", "green", None], "default": None},
        },
        "required": ["city"],
        "additionalProperties": False,
    }
    # The handler makes an instance and calls run(); enums come back as the Enum; mutable
    # defaults are not shared between calls.
    first = json.loads(t.invoke({"city": "Paris", "color": "red"}))
    assert first == {"city": "Paris", "unit": "c", "days": 1, "tags": ["seen"], "color": "red"}
    assert json.loads(t.invoke({"city": "Oslo", "unit": "f"}))["tags"] == ["seen"]
    w = GetWeather(city="Rome", days=2)
    assert (w.city, w.unit, w.days) == ("Rome", "c", 2)
    assert repr(w).startswith("GetWeather(city='Rome', unit='c', days=2")
    with pytest.raises(TypeError, match="missing required argument"):
        GetWeather()
    with pytest.raises(TypeError, match="unexpected keyword"):
        GetWeather(city="x", nope=1)


def test_enum_inputs_reach_the_handler_as_enums() -> None:
    seen: List[Any] = []

    def paint(color: Color, levels: List[Level], maybe: Optional[Color] = None) -> str:
        seen.append((color, levels, maybe))
        return "ok"

    t = panto.Tool.from_function(paint)
    t.invoke({"color": "green", "levels": [2, 1]})
    t.invoke({"color": "red", "levels": [], "maybe": None})
    assert seen == [(Color.GREEN, [Level.HIGH, Level.LOW], None), (Color.RED, [], None)]
    assert type(seen[0][0]) is Color


class HTTPRequest(panto.ToolClass, name="http_get"):
    url: str

    def __call__(self) -> str:
        return f"GET {self.url}"


class ParseJSONToDict(panto.ToolClass):
    description = "Parses JSON."
    text: str

    def run(self) -> Any:
        return json.loads(self.text)


def test_class_names_descriptions_and_call() -> None:
    assert panto.as_tool(HTTPRequest).name == "http_get"
    assert panto.as_tool(HTTPRequest).invoke({"url": "u"}) == "GET u"
    p = panto.as_tool(ParseJSONToDict)
    assert p.name == "parse_json_to_dict"
    assert p.description == "Parses JSON."
    assert p.input_schema["properties"] == {"text": {"type": "string"}}  # `description` is not a parameter
    assert p.invoke({"text": '{"a": [1, 2]}'}) == '{"a": [1, 2]}'

    class BaseWithoutRun(panto.ToolClass):
        shared: str

    class Child(BaseWithoutRun):
        """A child."""

        extra: int = 0

        def run(self) -> str:
            return f"{self.shared}{self.extra}"

    c = panto.as_tool(Child)
    assert c.name == "child" and list(c.input_schema["properties"]) == ["shared", "extra"]
    assert c.invoke({"shared": "s"}) == "s0"
    with pytest.raises(TypeError, match="neither a run"):
        panto.as_tool(BaseWithoutRun)


@pytest.mark.parametrize(
    "class_name,tool_name",
    [
        ("GetWeather", "get_weather"),
        ("HTTPRequest", "http_request"),
        ("ParseJSONToDict", "parse_json_to_dict"),
        ("Base64Encode", "base64_encode"),
        ("getURL2", "get_url2"),
        ("already_snake", "already_snake"),
        ("X", "x"),
    ],
)
def test_default_names_are_snake_case(class_name: str, tool_name: str) -> None:
    klass = type(class_name, (panto.ToolClass,), {"__annotations__": {"q": str}, "run": lambda self: self.q})
    assert panto.as_tool(klass).name == tool_name
    assert panto.as_tool(klass).invoke({"q": "v"}) == "v"


def test_tool_class_mistakes_fail_at_definition() -> None:
    with pytest.raises(TypeError, match="complex"):

        class Bad(panto.ToolClass):
            z: complex

            def run(self) -> str:
                return ""

    with pytest.raises(panto.ConfigError, match="letters, digits"):  # the library's rule

        class BadName(panto.ToolClass, name="bad name"):
            def run(self) -> str:
                return ""


def test_decorated_plain_and_dataclass_classes() -> None:
    @panto.tool(capabilities=["net"])
    class LookUp:
        """Looks a word up.

        Args:
            word: The word.
        """

        word: str
        lang: str = "en"

        def run(self) -> str:
            return f"{self.word}:{self.lang}"

    assert isinstance(LookUp, type)  # the class stays a class
    t = panto.as_tool(LookUp)
    assert (t.name, t.description, t.capabilities) == ("look_up", "Looks a word up.", ("net",))
    assert t.input_schema["properties"]["word"] == {"type": "string", "description": "The word."}
    assert t.invoke({"word": "cat"}) == "cat:en"

    @panto.tool
    @dataclasses.dataclass
    class Add:
        """Adds."""

        a: int
        b: int = 2

        def run(self) -> int:
            return self.a + self.b

    assert panto.as_tool(Add).invoke({"a": 1}) == "3"
    assert panto.as_tool(Add).input_schema["required"] == ["a"]


# ---- results ------------------------------------------------------------------------------


@dataclasses.dataclass
class Point:
    x: int
    y: int


def test_results_become_text() -> None:
    assert panto.to_content("as is") == "as is"
    assert panto.to_content({"b": 1, "a": [1, 2.5, None, True]}) == '{"b": 1, "a": [1, 2.5, null, true]}'
    assert panto.to_content(42) == "42"
    assert panto.to_content(None) == "null"
    assert panto.to_content("héllo ✓") == "héllo ✓"
    assert panto.to_content(["ü"]) == '["ü"]'
    assert json.loads(panto.to_content(Point(1, 2))) == {"x": 1, "y": 2}
    assert panto.to_content(Color.RED) == '"red"'
    with pytest.raises(TypeError, match="not JSON serializable"):
        panto.to_content(object())


# ---- export and registries ----------------------------------------------------------------


@panto.tool
def search(query: Annotated[str, "What to look for"], limit: int = 10) -> List[str]:
    """Searches the web."""
    return [query] * limit


@panto.tool(capabilities=["fs.write"])
def delete_file(path: str) -> str:
    """Deletes a file."""
    return f"deleted {path}"


def test_exports_per_provider() -> None:
    assert search.to_anthropic() == {
        "name": "search",
        "description": "Searches the web.",
        "input_schema": search.input_schema,
    }
    assert search.to_openai() == {
        "type": "function",
        "function": {"name": "search", "description": "Searches the web.", "parameters": search.input_schema},
    }
    assert search.spec() == {
        "name": "search",
        "description": "Searches the web.",
        "input_schema": search.input_schema,
        "capabilities": [],
    }
    exported = search.to_anthropic()
    exported["input_schema"]["properties"].clear()  # a copy: the tool is unchanged
    assert search.input_schema["properties"]
    with pytest.raises(ValueError):
        search.export("gemini")


def test_registry() -> None:
    registry = panto.Registry([search, GetWeather])

    @registry.register
    def shout(text: str) -> str:
        """Shouts."""
        return text.upper()

    assert isinstance(shout, panto.Tool) and shout("hi") == "HI"

    @registry.register(name="remove", capabilities=["fs.write"])
    def remove_file(path: str) -> str:
        return path

    registry.register({"name": "manual", "description": "By hand.", "input_schema": {"type": "object"}})
    assert registry.names() == ["search", "get_weather", "shout", "remove", "manual"]
    assert len(registry) == 5 and "shout" in registry and shout in registry and "nope" not in registry
    assert registry.get("remove").capabilities == ("fs.write",)
    assert registry.get("manual").handler is None
    assert [t.name for t in registry] == registry.names() == [t.name for t in registry.list()]
    with pytest.raises(KeyError):
        registry.get("nope")
    with pytest.raises(ValueError, match="already registered"):
        registry.register(search)

    assert registry.filter([]).names() == ["search", "shout", "manual"]
    assert registry.filter(["net"]).names() == ["search", "get_weather", "shout", "manual"]
    assert registry.filter(["net", "fs.write", "other"]).names() == registry.names()
    assert registry.export("openai", capabilities=["fs.write"]) == [
        registry.get(n).to_openai() for n in ("search", "shout", "remove", "manual")
    ]
    assert registry.export("anthropic") == [t.to_anthropic() for t in registry]
    assert registry.remove("manual").name == "manual" and "manual" not in registry


@pytest.mark.parametrize("capabilities", [[], ["net"], ["net", "fs.write"]])
def test_registry_export_equals_what_the_library_sends(capabilities: List[str]) -> None:
    registry = panto.Registry([search, GetWeather, delete_file, ParseJSONToDict])
    with panto.Agent(provider="anthropic", model="m", api_key="k", tools=registry, capabilities=capabilities) as agent:
        for fmt in PROVIDERS:
            assert agent.tools(fmt) == registry.export(fmt, capabilities=capabilities)
            assert agent.tools(fmt, only_allowed=False) == registry.export(fmt)
        assert agent.tools("panto", only_allowed=False) == [dict(t.spec(), native=False) for t in registry]


# ---- the agent ----------------------------------------------------------------------------


def test_agent_tool_registration() -> None:
    with panto.Agent(provider="anthropic", model="m", api_key="k") as agent:
        assert agent.tools() == []
        t = agent.add_tool(search)
        assert t is search and agent.get_tool("search") is search
        agent.add_tool(GetWeather)  # a class
        agent.add_tool({"name": "manual", "input_schema": {"type": "object", "properties": {}}})
        with pytest.raises(panto.ConfigError, match="search"):
            agent.add_tool(search)  # names are unique
        assert [x["name"] for x in agent.tools(only_allowed=False)] == ["search", "get_weather", "manual"]
        assert [x["name"] for x in agent.tools()] == ["search", "manual"]  # get_weather needs "net"
    with pytest.raises(ValueError, match="name="):
        panto.Agent(provider="anthropic", model="m", api_key="k", tools=[lambda x: x])

    def plain_function(x: int) -> int:  # not decorated: declared on the way in
        """Doubles."""
        return 2 * x

    with panto.Agent(provider="anthropic", model="m", api_key="k", tools=[plain_function]) as agent:
        assert agent.tools() == [panto.Tool.from_function(plain_function).to_anthropic()]
        assert agent.get_tool("plain_function").invoke({"x": 2}) == "4"
    with pytest.raises(panto.ConfigError):  # the core refuses the spec: the agent is not made
        panto.Agent(provider="anthropic", model="m", api_key="k", tools=[search, search])


def _nested_schema(depth: int) -> Dict[str, Any]:
    """An object schema nested `depth` deep: {"type": "object", "properties": {"x": [[...]]}}."""
    inner: Any = []
    for _ in range(depth - 3):
        inner = [inner]
    return {"type": "object", "properties": {"x": inner}}


def test_a_schema_nested_too_deeply_is_a_config_error_and_the_agent_goes_on() -> None:
    with panto.Agent(provider="anthropic", model="m", api_key="k") as agent:
        for depth in (300, 600):  # 600: deeper than copy.deepcopy goes
            with pytest.raises(panto.ConfigError, match="nested more than 128 levels deep"):
                agent.add_tool(panto.Tool("deep", input_schema=_nested_schema(depth)))
        agent.add_tool(panto.Tool("at_limit", input_schema=_nested_schema(128)))
        assert [x["name"] for x in agent.tools()] == ["at_limit"]
    with pytest.raises(panto.ConfigError, match="nested more than 128 levels deep"):
        panto.Agent(provider="anthropic", model="m", api_key="k", tools=[panto.Tool("deep", input_schema=_nested_schema(300))])
    # Deeper than Python itself can copy: refused when the tool is declared.
    with pytest.raises(ValueError, match="nested too deeply"):
        panto.Tool("deeper", input_schema=_nested_schema(100_000))


def test_read_tool_config(tmp_path: Path) -> None:
    with panto.Agent(provider="anthropic", model="m", api_key="k", read_tool=tmp_path, capabilities=["fs.read"]) as agent:
        (read,) = agent.tools("panto")
        assert read["name"] == "read" and read["native"] is True
    with panto.Agent(provider="anthropic", model="m", api_key="k", read_tool={"root": str(tmp_path)}) as agent:
        assert agent.tools() == []  # not granted fs.read
        assert [t["name"] for t in agent.tools(only_allowed=False)] == ["read"]


# ---- turns against the emulator -----------------------------------------------------------


def tool_use(id_: str, name: str, input_: Dict[str, Any]) -> Dict[str, Any]:
    return {"type": "tool_use", "id": id_, "name": name, "input": input_}


def answer(*blocks: Dict[str, Any], usage: Optional[Dict[str, int]] = None) -> Dict[str, Any]:
    msg: Dict[str, Any] = {"content": list(blocks)}
    if usage:
        msg["usage"] = usage
    return {"message": msg}


def text(t: str) -> Dict[str, Any]:
    return {"type": "text", "text": t}


def new_agent(emu: Emulator, provider: str = "anthropic", **kw: Any) -> panto.Agent:
    return panto.Agent(provider=provider, model="test-model", base_url=emu.url, api_key="test-key", **kw)


def tool_results_sent(provider: str, request: Dict[str, Any]) -> List[Dict[str, Any]]:
    """The tool results a request carries, as {"id", "content", "is_error"} in order."""
    out = []
    for m in request["body"]["messages"]:
        if provider == "anthropic" and m["role"] == "user" and isinstance(m["content"], list):
            for b in m["content"]:
                if b.get("type") == "tool_result":
                    content = b["content"]
                    if isinstance(content, list):
                        content = "".join(c["text"] for c in content)
                    out.append({"id": b["tool_use_id"], "content": content, "is_error": bool(b.get("is_error", False))})
        if provider == "openai" and m["role"] == "tool":
            out.append({"id": m["tool_call_id"], "content": m["content"]})
    return out


def tool_calls_sent(provider: str, request: Dict[str, Any]) -> List[Dict[str, Any]]:
    """The assistant tool calls a request carries back, as {"id", "name", "input"}."""
    out = []
    for m in request["body"]["messages"]:
        if m["role"] != "assistant":
            continue
        if provider == "anthropic":
            out += [{"id": b["id"], "name": b["name"], "input": b["input"]} for b in m["content"] if b["type"] == "tool_use"]
        else:
            out += [
                {"id": c["id"], "name": c["function"]["name"], "input": json.loads(c["function"]["arguments"])}
                for c in m.get("tool_calls", [])
            ]
    return out


class Recorder:
    """A get_weather tool that records its calls."""

    def __init__(self) -> None:
        self.calls: List[Dict[str, Any]] = []

        @panto.tool(capabilities=["net"])
        def get_weather(city: Annotated[str, "The city"], unit: Literal["c", "f"] = "c") -> Dict[str, Any]:
            """Current weather for a city."""
            self.calls.append({"city": city, "unit": unit})
            if city == "Atlantis":
                raise LookupError(f"no weather station in {city}")
            return {"city": city, "sky": "sunny", "unit": unit}

        self.tool = get_weather


def test_tool_round_trip(provider: str) -> None:
    rec = Recorder()
    script = {
        "responses": [
            answer(text("Let me check."), tool_use("toolu_1", "get_weather", {"city": "Paris"}),
                   usage={"input_tokens": 20, "output_tokens": 10}),
            answer(text("It is sunny in Paris."), usage={"input_tokens": 40, "output_tokens": 6}),
        ]
    }
    with Emulator(scenario=script) as emu, new_agent(emu, provider, tools=[rec.tool], capabilities=["net"]) as agent:
        with agent.run("Weather in Paris?") as stream:
            events = []
            for ev in stream:
                events.append(ev)
                if isinstance(ev, panto.ToolCallStart):
                    assert rec.calls == []  # the user sees the call before it runs
        kinds = [e.kind for e in events]
        assert kinds.count("message_start") == 2 and kinds.count("message_end") == 2
        i = kinds.index("tool_call_start")
        assert kinds[i - 1] == "message_end" and kinds[i + 1] == "tool_result" and kinds[i + 2] == "message_start"
        details = next(e for e in events if isinstance(e, panto.ToolDetails))
        assert (details.index, details.id, details.name) == (1, "toolu_1", "get_weather")
        fragments = [e.text for e in events if isinstance(e, panto.ContentDelta) and e.block_kind == "tool_call"]
        assert json.loads("".join(fragments)) == {"city": "Paris"}
        first_end = next(e for e in events if isinstance(e, panto.MessageEnd))
        assert first_end.stop_reason == "tool_use"
        assert first_end.usage.input_tokens == 20 and first_end.usage.output_tokens == 10

        call = events[i]
        assert call == panto.ToolCallStart("toolu_1", "get_weather", {"city": "Paris"}, True)
        result = events[i + 1]
        assert isinstance(result, panto.ToolResult)
        assert (result.id, result.name, result.is_error) == ("toolu_1", "get_weather", False)
        assert json.loads(result.content) == {"city": "Paris", "sky": "sunny", "unit": "c"}
        assert rec.calls == [{"city": "Paris", "unit": "c"}]

        done = events[-1]
        assert isinstance(done, panto.MessageComplete) and done.stop_reason == "end_turn"
        assert done.usage.input_tokens == 60 and done.usage.output_tokens == 16  # summed over the turn

        first, second = emu.requests()
        if provider == "anthropic":  # the prompt-cache policy marks the last tool (docs/requests.md)
            for request in (first, second):
                assert request["body"]["tools"][-1].pop("cache_control") == {"type": "ephemeral"}
        # The tools were offered in the provider's format, exactly as exported.
        assert first["body"]["tools"] == [rec.tool.export(provider)]
        assert second["body"]["tools"] == first["body"]["tools"]
        # The second request carries the assistant's call and our result, with the same id.
        assert tool_calls_sent(provider, second) == [{"id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}}]
        sent = tool_results_sent(provider, second)
        assert len(sent) == 1 and sent[0]["id"] == "toolu_1" and sent[0]["content"] == result.content
        if provider == "anthropic":
            assert sent[0]["is_error"] is False
            assert [m["role"] for m in second["body"]["messages"]] == ["user", "assistant", "user"]
        else:
            assert [m["role"] for m in second["body"]["messages"] if m["role"] != "system"] == ["user", "assistant", "tool"]

        conv = agent.conversation
        assert [m["role"] for m in conv] == ["user", "assistant", "user", "assistant"]
        assert conv[2]["content"] == [{"type": "tool_result", "id": "toolu_1", "content": result.content, "is_error": False}]


def test_parallel_calls_run_in_order_with_their_ids(provider: str) -> None:
    rec = Recorder()
    script = {
        "responses": [
            answer(tool_use("toolu_a", "get_weather", {"city": "Paris"}),
                   tool_use("toolu_b", "get_weather", {"city": "Oslo", "unit": "f"})),
            answer(text("Done.")),
        ]
    }
    with Emulator(scenario=script) as emu, new_agent(emu, provider, tools=[rec.tool], capabilities=["net"]) as agent:
        with agent.run("Two cities") as stream:
            events = [e for e in stream if isinstance(e, (panto.ToolCallStart, panto.ToolResult))]
        assert [(e.kind, e.id) for e in events] == [
            ("tool_call_start", "toolu_a"),
            ("tool_call_start", "toolu_b"),
            ("tool_result", "toolu_a"),
            ("tool_result", "toolu_b"),
        ]
        # The handlers ran at the same time (tests/python/test_tools_parallel.py): in any order.
        assert sorted(rec.calls, key=lambda c: c["city"]) == [{"city": "Oslo", "unit": "f"}, {"city": "Paris", "unit": "c"}]
        sent = tool_results_sent(provider, emu.requests()[1])
        assert [s["id"] for s in sent] == ["toolu_a", "toolu_b"]
        assert [json.loads(s["content"])["city"] for s in sent] == ["Paris", "Oslo"]


def test_a_failing_tool_gives_an_error_result_and_the_turn_goes_on(provider: str) -> None:
    rec = Recorder()
    script = {"responses": [answer(tool_use("toolu_1", "get_weather", {"city": "Atlantis"})), answer(text("Sorry."))]}
    with Emulator(scenario=script) as emu, new_agent(emu, provider, tools=[rec.tool], capabilities=["net"]) as agent:
        with agent.run("Weather in Atlantis?") as stream:
            events = list(stream)
        (result,) = [e for e in events if isinstance(e, panto.ToolResult)]
        assert result.is_error is True
        assert result.content == "LookupError: no weather station in Atlantis"
        assert isinstance(events[-1], panto.MessageComplete) and stream.error is None
        (sent,) = tool_results_sent(provider, emu.requests()[1])
        assert sent["content"] == "LookupError: no weather station in Atlantis"
        if provider == "anthropic":
            assert sent["is_error"] is True
        assert agent.conversation[2]["content"][0]["is_error"] is True


def lookup_city(**input: Any) -> str:
    return {"Paris": "sunny"}[input["city"]]  # KeyError('city') without a city


async def async_lookup_city(**input: Any) -> str:
    return lookup_city(**input)


@pytest.mark.parametrize("handler", [lookup_city, async_lookup_city], ids=["sync", "async"])
def test_a_tool_exception_is_a_warning_with_its_traceback_and_its_result_names_its_type(
        provider: str, handler: Any, caplog: pytest.LogCaptureFixture) -> None:
    # Before, the model read `'city'` (str of a KeyError) and the traceback went to DEBUG only.
    lookup = panto.Tool(name="lookup", handler=handler,
                        input_schema={"type": "object", "properties": {"town": {"type": "string"}}})
    script = {"responses": [answer(tool_use("toolu_1", "lookup", {"town": "Paris"})), answer(text("Sorry."))]}
    with Emulator(scenario=script) as emu, new_agent(emu, provider, tools=[lookup]) as agent:
        with caplog.at_level(logging.WARNING, logger="panto"), agent.run("Weather?") as stream:
            events = list(stream)
        (result,) = [e for e in events if isinstance(e, panto.ToolResult)]
        assert (result.content, result.is_error) == ("KeyError: 'city'", True)
        (sent,) = tool_results_sent(provider, emu.requests()[1])
        assert sent["content"] == "KeyError: 'city'"
    (record,) = [r for r in caplog.records if r.name == "panto"]
    assert record.levelno == logging.WARNING
    assert "lookup" in record.getMessage() and "toolu_1" in record.getMessage()
    assert record.exc_info is not None and isinstance(record.exc_info[1], KeyError)
    logged = caplog.text
    assert "Traceback (most recent call last)" in logged and "in lookup_city" in logged


def test_a_tool_run_by_hand_that_raises_is_a_warning_too(caplog: pytest.LogCaptureFixture) -> None:
    lookup = panto.Tool(name="lookup", handler=lookup_city)
    script = {"responses": [answer(tool_use("toolu_1", "lookup", {})), answer(text("Sorry."))]}
    with Emulator(scenario=script) as emu, new_agent(emu, tools=[lookup]) as agent:
        with caplog.at_level(logging.WARNING, logger="panto"), agent.run("?", run_tools=False) as stream:
            for ev in stream:
                if isinstance(ev, panto.ToolCallStart):
                    assert stream.run_tool(ev).content == "KeyError: 'city'"
        assert tool_results_sent("anthropic", emu.requests()[1])[0]["content"] == "KeyError: 'city'"
    assert [r.levelno for r in caplog.records if r.name == "panto"] == [logging.WARNING]


@pytest.mark.parametrize("error, content", [
    (panto.ToolError("no such city"), "no such city"),  # meant: as it is, no warning
    (ValueError(), "ValueError"),  # no message: the type alone
    (ConnectionRefusedError(111, "Connection refused"), "ConnectionRefusedError: [Errno 111] Connection refused"),
])
def test_tool_failure_texts(error: Exception, content: str, caplog: pytest.LogCaptureFixture) -> None:
    def fail() -> str:
        raise error

    script = {"responses": [answer(tool_use("toolu_1", "fail", {})), answer(text("Sorry."))]}
    with Emulator(scenario=script) as emu, new_agent(emu, tools=[panto.Tool(name="fail", handler=fail)]) as agent:
        with caplog.at_level(logging.DEBUG, logger="panto"), agent.run("?") as stream:
            (result,) = [e for e in stream if isinstance(e, panto.ToolResult)]
        assert (result.content, result.is_error) == (content, True)
    levels = [r.levelno for r in caplog.records if r.name == "panto"]
    assert levels == ([logging.DEBUG] if isinstance(error, panto.ToolError) else [logging.WARNING])


def test_a_result_holding_a_nul_goes_to_the_model_as_it_is(provider: str) -> None:
    # A NUL is a character like any other (the library's rule, the same in every language):
    # not an error result.
    nul = panto.Tool(name="nul", handler=lambda: "a\0b")
    script = {"responses": [answer(tool_use("toolu_1", "nul", {})), answer(text("Done."))]}
    with Emulator(scenario=script) as emu, new_agent(emu, provider, tools=[nul]) as agent:
        with agent.run("Go") as stream:
            events = list(stream)
        (result,) = [e for e in events if isinstance(e, panto.ToolResult)]
        assert (result.content, result.is_error) == ("a\0b", False)
        (sent,) = tool_results_sent(provider, emu.requests()[1])
        assert sent["content"] == "a\0b"
        assert agent.conversation[2]["content"][0]["content"] == "a\0b"


def test_invalid_input_and_unknown_tools_are_answered_by_panto(provider: str) -> None:
    rec = Recorder()
    script = {
        "responses": [
            answer(tool_use("toolu_1", "get_weather", {"city": 3}), tool_use("toolu_2", "no_such_tool", {})),
            answer(text("Hm.")),
        ]
    }
    with Emulator(scenario=script) as emu, new_agent(emu, provider, tools=[rec.tool], capabilities=["net"]) as agent:
        with agent.run("?") as stream:
            events = [e for e in stream if isinstance(e, (panto.ToolCallStart, panto.ToolResult))]
        starts = [e for e in events if isinstance(e, panto.ToolCallStart)]
        results = [e for e in events if isinstance(e, panto.ToolResult)]
        assert [s.awaiting_result for s in starts] == [False, False]
        assert rec.calls == []  # the handler never ran on bad input
        assert results[0].is_error and results[0].content.startswith("Invalid input for tool get_weather")
        assert results[1].is_error and results[1].content == "Unknown tool: no_such_tool"


def test_manual_mode_submit_and_result_pending(provider: str) -> None:
    rec = Recorder()
    script = {"responses": [answer(tool_use("toolu_1", "get_weather", {"city": "Paris"})), answer(text("OK."))]}
    with Emulator(scenario=script) as emu, new_agent(emu, provider, tools=[rec.tool], capabilities=["net"]) as agent:
        with agent.run("Weather?", run_tools=False) as stream:
            call = next(e for e in stream if isinstance(e, panto.ToolCallStart))
            assert call.awaiting_result and stream.pending_calls == (call,)
            for _ in range(2):  # not sticky, the same answer each time
                with pytest.raises(panto.ResultPendingError) as info:
                    next(stream)
                assert info.value.code == "result_pending" and info.value.status == _native.ERR_RESULT_PENDING
                assert info.value.call_ids == ["toolu_1"] and "toolu_1" in str(info.value)
            assert stream.error is None and not stream.done
            with pytest.raises(panto.NoSuchCallError) as nope:
                stream.submit_tool_result("toolu_999", "x")
            assert nope.value.call_id == "toolu_999" and nope.value.code == "no_such_call"
            stream.submit_tool_result(call.id, "12 degrees, by hand")
            assert stream.pending_calls == ()
            with pytest.raises(panto.NoSuchCallError):
                stream.submit_tool_result(call.id, "twice")
            rest = list(stream)
        assert rec.calls == []  # the handler did not run
        (result,) = [e for e in rest if isinstance(e, panto.ToolResult)]
        assert (result.id, result.content, result.is_error) == ("toolu_1", "12 degrees, by hand", False)
        assert isinstance(rest[-1], panto.MessageComplete)
        (sent,) = tool_results_sent(provider, emu.requests()[1])
        assert sent["content"] == "12 degrees, by hand"
        with pytest.raises(panto.NoSuchCallError):  # the stream is closed
            stream.submit_tool_result(call.id, "late")


def test_manual_mode_error_results_json_and_run_tool() -> None:
    rec = Recorder()
    script = {
        "responses": [
            answer(tool_use("toolu_1", "get_weather", {"city": "Paris"}), tool_use("toolu_2", "get_weather", {"city": "Rome"})),
            answer(tool_use("toolu_3", "get_weather", {"city": "Oslo"})),
            answer(text("OK.")),
        ]
    }
    with Emulator(scenario=script) as emu, new_agent(emu, tools=[rec.tool], capabilities=["net"]) as agent:
        with agent.run("Weather?", run_tools=False) as stream:
            results = []
            for ev in stream:
                if isinstance(ev, panto.ToolCallStart):
                    if ev.input["city"] == "Paris":
                        stream.submit_tool_result(ev.id, "the user said no", is_error=True)
                    elif ev.input["city"] == "Rome":
                        stream.submit_tool_result(ev.id, {"temp": 20})  # not a str: JSON
                    else:
                        ran = stream.run_tool(ev)  # the registered handler, on demand
                        assert ran.id == "toolu_3" and not ran.is_error
                elif isinstance(ev, panto.ToolResult):
                    results.append((ev.id, ev.content, ev.is_error))
        assert results[:2] == [("toolu_1", "the user said no", True), ("toolu_2", '{"temp": 20}', False)]
        assert results[2][0] == "toolu_3" and json.loads(results[2][1])["city"] == "Oslo"
        assert rec.calls == [{"city": "Oslo", "unit": "c"}]
        assert tool_results_sent("anthropic", emu.requests()[1])[0]["is_error"] is True


def test_a_tool_without_handler_is_answered_by_hand() -> None:
    spec = {"name": "ask_user", "description": "Asks the user.",
            "input_schema": {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}}
    script = {"responses": [answer(tool_use("toolu_1", "ask_user", {"q": "Name?"})), answer(text("Hi Ann."))]}
    with Emulator(scenario=script) as emu:
        # From the config, as panto_agent_new takes it.
        with panto.Agent.from_config({"provider": "anthropic", "model": "m", "api_key": "k", "base_url": emu.url,
                                      "tools": [spec]}) as agent, agent.run("Hello") as stream:
            call = next(e for e in stream if isinstance(e, panto.ToolCallStart))
            assert call.awaiting_result and call.input == {"q": "Name?"}
            with pytest.raises(panto.ResultPendingError):
                next(stream)
            with pytest.raises(LookupError):
                stream.run_tool(call)
            stream.submit_tool_result(call.id, "Ann")
            assert "".join(stream.text()) == "Hi Ann."


def test_user_can_answer_before_the_automatic_run() -> None:
    rec = Recorder()
    script = {"responses": [answer(tool_use("toolu_1", "get_weather", {"city": "Paris"})), answer(text("OK."))]}
    with Emulator(scenario=script) as emu, new_agent(emu, tools=[rec.tool], capabilities=["net"]) as agent:
        with agent.run("?") as stream:
            results = []
            for ev in stream:
                if isinstance(ev, panto.ToolCallStart):
                    stream.submit_tool_result(ev.id, "cached")
                if isinstance(ev, panto.ToolResult):
                    results.append(ev.content)
        assert results == ["cached"] and rec.calls == []


def test_keyboard_interrupt_in_a_handler_propagates() -> None:
    calls = []

    @panto.tool
    def slow(n: int) -> str:
        """Slow."""
        calls.append(n)
        if len(calls) == 1:
            raise KeyboardInterrupt
        return "fine"

    script = {"responses": [answer(tool_use("toolu_1", "slow", {"n": 1})), answer(text("OK."))]}
    with Emulator(scenario=script) as emu, new_agent(emu, tools=[slow]) as agent, agent.run("?") as stream:
        with pytest.raises(KeyboardInterrupt):
            for _ in stream:
                pass
        # Not turned into a tool error; the call still awaits its result.
        with pytest.raises(panto.ResultPendingError):
            next(stream)
        assert stream.run_tool("toolu_1").content == "fine"
        assert "".join(stream.text()) == "OK."
        assert calls == [1, 1]


def test_capability_refusal_before_the_handler_runs(provider: str) -> None:
    ran: List[str] = []

    @panto.tool(capabilities=["fs.write"])
    def delete_file(path: str) -> str:
        """Deletes a file."""
        ran.append(path)
        return "deleted"

    @panto.tool
    def harmless(x: str) -> str:
        """Harmless."""
        ran.append(x)
        return x

    # The model calls a tool the agent may not use (it was not offered): the turn fails with a
    # capability error before any tool of that message runs, the harmless one included.
    script = {"responses": [answer(tool_use("toolu_1", "harmless", {"x": "a"}), tool_use("toolu_2", "delete_file", {"path": "/etc"}))]}
    with Emulator(scenario=script) as emu, new_agent(emu, provider, tools=[delete_file, harmless]) as agent:
        with agent.run("Delete it") as stream:
            seen = []
            with pytest.raises(panto.CapabilityError) as info:
                for ev in stream:
                    seen.append(ev)
            assert info.value.code == "capability" and "delete_file" in info.value.message
            assert not any(isinstance(e, (panto.ToolCallStart, panto.ToolResult)) for e in seen)
            with pytest.raises(panto.CapabilityError):  # sticky
                next(stream)
        assert ran == []
        (request,) = emu.requests()
        assert [t["name"] if provider == "anthropic" else t["function"]["name"] for t in request["body"]["tools"]] == ["harmless"]


def test_tool_loop_limit() -> None:
    rec = Recorder()
    loop = answer(tool_use("toolu_x", "get_weather", {"city": "Paris"}))
    with Emulator(scenario={"responses": [loop], "repeat_last": True}) as emu:
        with new_agent(emu, tools=[rec.tool], capabilities=["net"], max_tool_iterations=2) as agent, agent.run("?") as stream:
            with pytest.raises(panto.ToolLoopError) as info:
                list(stream)
            assert info.value.code == "tool_loop"
        assert len(rec.calls) == 2 and len(emu.requests()) == 3


def test_native_read_tool(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("one\ntwo\nthree\n")
    script = {
        "responses": [
            answer(tool_use("toolu_1", "read", {"path": "notes.txt", "offset": 1, "limit": 1}),
                   tool_use("toolu_2", "read", {"path": "../escape.txt"})),
            answer(text("Read it.")),
        ]
    }
    with Emulator(scenario=script) as emu, new_agent(emu, read_tool=tmp_path, capabilities=["fs.read"]) as agent:
        with agent.run("Read notes") as stream:
            events = [e for e in stream if isinstance(e, (panto.ToolCallStart, panto.ToolResult))]
        starts = [e for e in events if isinstance(e, panto.ToolCallStart)]
        results = {e.id: e for e in events if isinstance(e, panto.ToolResult)}
        assert [s.awaiting_result for s in starts] == [False, False]  # panto runs it
        assert "two" in results["toolu_1"].content and "one" not in results["toolu_1"].content
        assert not results["toolu_1"].is_error
        assert results["toolu_2"].is_error


def test_add_tool_while_a_stream_is_unfinished_is_busy() -> None:
    script = {"responses": [answer(text("Hi."))]}
    with Emulator(scenario=script) as emu, new_agent(emu) as agent:
        stream = agent.run("Hi")
        with pytest.raises(panto.BusyError):
            agent.add_tool(search)
        list(stream)
        agent.add_tool(search)
        assert agent.get_tool("search") is search


def test_a_cancel_between_result_pending_and_the_runners_look_raises_canceled(monkeypatch: pytest.MonkeyPatch) -> None:
    """The cancel soak's race (seen once in `make test`): the library says a call awaits its
    result, then cancel() (another thread) cancels the stream and abandons the tool runner,
    and only then does the reading thread look at the runner. It must raise CanceledError, not
    ResultPendingError for a call no one will answer. The cancel is put exactly there."""
    from panto import _interrupt
    from panto import stream as stream_mod

    release = threading.Event()

    @panto.tool
    def lookup(q: str) -> str:
        """Looks q up."""
        release.wait(10)
        return q

    script = {"responses": [answer(text("Looking up."), tool_use("toolu_1", "lookup", {"q": "x"})),
                            answer(text("Done."))]}
    with Emulator(scenario=script) as emu, new_agent(emu, "anthropic", tools=[lookup]) as agent:
        stream = agent.run("Look x up")
        fired: List[int] = []

        def call_then_cancel(handle: Any, fn: Any, *args: Any) -> int:
            rc = _interrupt.blocking_call(handle, fn, *args)
            if rc == _native.ERR_RESULT_PENDING and not fired:
                fired.append(rc)
                canceler = threading.Thread(target=stream.cancel)
                canceler.start()
                canceler.join(10)
            return rc

        monkeypatch.setattr(stream_mod, "_blocking_call", call_then_cancel)
        with stream:
            with pytest.raises(panto.CanceledError):
                for _ in stream:
                    pass
        release.set()
        assert fired, "the library never said a call awaits its result: the test did not test the race"
        # What a canceled round leaves: the call answered with an error, so the next request is valid.
        last = agent.conversation[-1]
        assert last["role"] == "user" and last["content"][0]["type"] == "tool_result"
        assert last["content"][0]["id"] == "toolu_1" and last["content"][0]["is_error"] is True
