"""Structured output in the Python binding: `response_format` from a dataclass, a TypedDict or
a JSON Schema dict (the schema machinery of tools), `Agent.parse`, `Stream.final_json`,
`panto.OutputError`; and the dataclass / TypedDict types as tool parameters.

    PYTHONPATH=bindings-py PANTO_LIBRARY=zig-out/lib/libpanto.so \\
        .venv/bin/python -m pytest -q tests/python/test_structured_output.py
"""

from __future__ import annotations

import dataclasses
import enum
import json
from typing import Any, Dict, List, Optional, TypedDict

import pytest

import panto
from panto._output import response_format
from panto.emulator import Emulator
from test_tools import answer, new_agent, text, tool_use


class Kind(enum.Enum):
    CAPITAL = "capital"
    TOWN = "town"


@dataclasses.dataclass
class Mayor:
    name: str
    since: int


@dataclasses.dataclass
class City:
    """A city.

    Attributes:
        name: Its name.
    """

    name: str
    population: int
    kind: Kind
    mayor: Optional[Mayor]
    districts: List[str]


class Point(TypedDict):
    x: float
    y: float


CITY_SCHEMA = {
    "type": "object",
    "description": "A city.",
    "properties": {
        "name": {"type": "string", "description": "Its name."},
        "population": {"type": "integer"},
        "kind": {"type": "string", "enum": ["capital", "town"]},
        "mayor": {"type": ["object", "null"], "properties": {"name": {"type": "string"}, "since": {"type": "integer"}},
                  "required": ["name", "since"], "additionalProperties": False},
        "districts": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["name", "population", "kind", "mayor", "districts"],
    "additionalProperties": False,
}

PARIS = {"name": "Paris", "population": 2100000, "kind": "capital", "mayor": {"name": "A. H.", "since": 2014},
         "districts": ["1er", "2e"]}


def test_a_dataclass_gives_its_json_schema_and_is_made_from_its_json() -> None:
    fmt = response_format(City)
    assert fmt == {"type": "json_schema", "schema": CITY_SCHEMA, "name": "City"}  # strict: the library's
    from panto._output import converter

    city = converter(City)(PARIS)
    assert city == City("Paris", 2100000, Kind.CAPITAL, Mayor("A. H.", 2014), ["1er", "2e"])


def test_typeddicts_defaults_and_plain_schemas() -> None:
    assert response_format(Point) == {
        "type": "json_schema", "name": "Point",
        "schema": {"type": "object", "properties": {"x": {"type": "number"}, "y": {"type": "number"}},
                   "required": ["x", "y"], "additionalProperties": False},
    }

    @dataclasses.dataclass
    class WithDefault:
        a: int
        b: str = "x"

    fmt = response_format(WithDefault)
    assert fmt["schema"]["required"] == ["a"] and "strict" not in fmt  # the library decides
    schema = {"type": "object", "properties": {"ok": {"type": "boolean"}}}
    assert response_format(schema) == {"type": "json_schema", "schema": schema}
    assert response_format({"type": "json_object"}) == {"type": "json_object"}
    with pytest.raises(TypeError):
        response_format(int)
    with pytest.raises(TypeError):
        response_format("City")


@dataclasses.dataclass
class Node:
    children: List[Node]


def test_recursive_types_are_refused_clearly() -> None:
    with pytest.raises(TypeError, match="recursive"):
        response_format(Node)


def test_tools_take_dataclass_parameters() -> None:
    got: List[Any] = []

    @panto.tool
    def visit(city: City, at: Point) -> str:
        """Visits a city."""
        got.append((city, at))
        return "ok"

    assert visit.input_schema["properties"]["city"]["required"] == CITY_SCHEMA["required"]
    assert visit.invoke({"city": PARIS, "at": {"x": 1.5, "y": 2}}) == "ok"
    assert got == [(City("Paris", 2100000, Kind.CAPITAL, Mayor("A. H.", 2014), ["1er", "2e"]), {"x": 1.5, "y": 2})]


def structured(provider: str, request: Dict[str, Any]) -> Any:
    """The schema a request asks the answer to follow."""
    body = request["body"]
    if provider == "openai":
        return body["response_format"]["json_schema"]["schema"]
    return body["output_config"]["format"]["schema"]


def test_parse_returns_an_instance(provider: str) -> None:
    script = {"responses": [answer(text(json.dumps(PARIS)))]}
    with Emulator(scenario=script) as emu, new_agent(emu, provider) as agent:
        city = agent.parse("The largest city of France?", City, temperature=0)
        assert city == City("Paris", 2100000, Kind.CAPITAL, Mayor("A. H.", 2014), ["1er", "2e"])
        assert structured(provider, emu.requests()[0]) == CITY_SCHEMA


def test_strict_is_the_librarys_rule_a_defaulted_field_is_not_strict() -> None:
    """OpenAI's strict mode takes every property required: the library sends strict true for
    City, false for a dataclass with a defaulted field, and what the caller says when told."""

    @dataclasses.dataclass
    class WithDefault:
        a: int
        b: str = "x"

    script = {"responses": [answer(text(json.dumps(PARIS))), answer(text('{"a": 1}')), answer(text(json.dumps(PARIS)))]}
    with Emulator(scenario=script) as emu, new_agent(emu, "openai") as agent:
        agent.parse("?", City)
        assert agent.parse("?", WithDefault) == WithDefault(1)
        agent.run("?", response_format={"type": "json_schema", "schema": CITY_SCHEMA, "strict": False}).final_json()
        strict = [r["body"]["response_format"]["json_schema"]["strict"] for r in emu.requests()]
        assert strict == [True, False, False]


def test_an_answer_not_of_the_schema_is_an_output_error_with_the_text(provider: str) -> None:
    bad = '{"name": "Paris"}'
    script = {"responses": [answer(text(bad)), answer(text("not json at all"))]}
    with Emulator(scenario=script) as emu, new_agent(emu, provider) as agent:
        with pytest.raises(panto.OutputError) as info:
            agent.parse("?", City)
        assert info.value.output == bad and info.value.code == "output"
        stream = agent.run("?", response_format={"type": "object"})
        with pytest.raises(panto.OutputError) as info:
            stream.final_json()
        assert info.value.output == "not json at all"
        assert stream.done  # the turn itself ended normally


def test_final_json_without_a_json_format_is_a_state_error() -> None:
    script = {"responses": [answer(text("{}"))]}
    with Emulator(scenario=script) as emu, new_agent(emu) as agent:
        with pytest.raises(panto.StateError):
            agent.run("?").final_json()


def test_response_format_as_agent_config_and_a_parse_with_tools() -> None:
    @panto.tool
    def population(city: str) -> int:
        """The population of a city."""
        return 2100000

    script = {"responses": [answer(tool_use("call_1", "population", {"city": "Paris"})),
                            answer(text(json.dumps({"x": 1, "y": 2})))]}
    with Emulator(scenario=script) as emu, new_agent(emu, tools=[population], response_format=Point) as agent:
        assert agent.run("Where?").final_json(Point) == {"x": 1, "y": 2}
        assert structured("anthropic", emu.requests()[1])["required"] == ["x", "y"]
