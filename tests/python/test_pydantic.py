"""Pydantic models in the Python binding (when Pydantic is installed): tool parameters and
ToolClass attributes typed with models (nested, in lists, Optional), `Agent.parse` and
`response_format` with a model, model results; the schema Pydantic makes, kept as it is (nested
models' "$defs" at the root, where the core's input checker follows their "$ref"s) and written
by the core as each provider takes it (titles left out; a structured output's objects closed,
Anthropic's refused keywords in the description), and Pydantic's validation errors as the
tool's error result.

    PYTHONPATH=bindings-py PANTO_LIBRARY=zig-out/lib/libpanto.so \\
        .venv/bin/python -m pytest -q tests/python/test_pydantic.py
"""

from __future__ import annotations

import dataclasses
import enum
import json
from typing import Annotated, Any, List, Literal, Optional

import pytest

pydantic = pytest.importorskip("pydantic")
from pydantic import BaseModel, Field, field_validator  # noqa: E402

import panto  # noqa: E402
from panto.emulator import Emulator  # noqa: E402
from test_tools import answer, new_agent, text, tool_results_sent, tool_use  # noqa: E402


class Seat(enum.Enum):
    WINDOW = "window"
    AISLE = "aisle"


class Passenger(BaseModel):
    """One traveller."""

    name: str
    age: int = Field(ge=0)
    seat: Optional[Seat] = None

    @field_validator("name")
    @classmethod
    def capitalized(cls, v: str) -> str:
        if not v[:1].isupper():
            raise ValueError("a name starts with a capital letter")
        return v


class Request(BaseModel):
    passengers: List[Passenger]
    cabin: Literal["economy", "business"] = "economy"


class City(BaseModel):
    """A city."""

    name: str
    population: int
    mayor: Passenger


PASSENGER = {
    "type": "object",
    "description": "One traveller.",
    "properties": {
        "name": {"type": "string"},
        "age": {"type": "integer", "minimum": 0},
        "seat": {"anyOf": [{"$ref": "#/$defs/Seat"}, {"type": "null"}], "default": None},
    },
    "required": ["name", "age"],
    "additionalProperties": False,
}


# Pydantic's schema of Passenger, titles left out: what a tool's schema sends.
PASSENGER_OPEN = {k: v for k, v in PASSENGER.items() if k != "additionalProperties"}
# As Anthropic's structured output takes it: the bound and the default in the description.
PASSENGER_ANTHROPIC_OUTPUT = {**PASSENGER, "properties": {
    "name": {"type": "string"},
    "age": {"type": "integer", "description": "{minimum: 0}"},
    "seat": {"anyOf": [{"$ref": "#/$defs/Seat"}, {"type": "null"}], "description": "{default: null}"},
}}
SEAT = {"type": "string", "enum": ["window", "aisle"]}


def untitled(schema: Any) -> Any:
    """`schema` without its "title" keywords (the cases here have no property named title)."""
    if isinstance(schema, dict):
        return {k: untitled(v) for k, v in schema.items() if k != "title"}
    if isinstance(schema, list):
        return [untitled(v) for v in schema]
    return schema


def test_a_tool_with_a_nested_model_parameter_gets_model_instances() -> None:
    got: List[Any] = []

    @panto.tool
    def book(request: Request, note: Annotated[Optional[str], "A note for the agent"] = None) -> str:
        """Books a trip."""
        got.append(request)
        return "booked"

    schema = book.input_schema
    # Pydantic's schema as it made it (the core leaves its titles out of requests), the nested
    # models' "$defs" at the root, where "#/$defs/..." points.
    assert untitled(schema["properties"]["request"]) == {
        "type": "object",
        "properties": {
            "passengers": {"type": "array", "items": {"$ref": "#/$defs/Passenger"}},
            "cabin": {"type": "string", "enum": ["economy", "business"], "default": "economy"},
        },
        "required": ["passengers"],
    }
    assert schema["properties"]["request"]["title"] == "Request"
    assert untitled(schema["$defs"]) == {"Passenger": PASSENGER_OPEN, "Seat": SEAT}
    assert schema["required"] == ["request"] and schema["additionalProperties"] is False

    assert book.invoke({"request": {"passengers": [{"name": "Ada", "age": 36, "seat": "window"}]}}) == "booked"
    assert got == [Request(passengers=[Passenger(name="Ada", age=36, seat=Seat.WINDOW)])]
    assert isinstance(got[0].passengers[0], Passenger)


def test_lists_and_optionals_of_models_and_toolclass_attributes() -> None:
    @panto.tool
    def count(people: List[Passenger], lead: Optional[Passenger] = None) -> int:
        return len(people) + (lead is not None)

    assert untitled(count.input_schema["properties"]["people"]) == {"type": "array", "items": {"$ref": "#/$defs/Passenger"}}
    assert count.invoke({"people": [{"name": "A", "age": 1}], "lead": {"name": "B", "age": 2}}) == "2"

    class Board(panto.ToolClass):
        """Boards a passenger."""

        passenger: Passenger
        gate: str = "A1"

        def run(self) -> str:
            assert isinstance(self.passenger, Passenger)
            return f"{self.passenger.name} at {self.gate}"

    tool = panto.as_tool(Board)
    assert tool.input_schema["properties"]["passenger"]["required"] == ["name", "age"]
    assert tool.invoke({"passenger": {"name": "Ada", "age": 36}}) == "Ada at A1"


@dataclasses.dataclass
class Group:
    lead: Passenger


def test_a_model_inside_a_dataclass_is_validated_and_named_by_its_path() -> None:
    @panto.tool
    def board(group: Group) -> str:
        return group.lead.name

    assert board.invoke({"group": {"lead": {"name": "Ada", "age": 1}}}) == "Ada"
    with pytest.raises(ValueError) as info:
        board.invoke({"group": {"lead": {"name": "ada", "age": 1}}})
    assert str(info.value) == ('Invalid input for tool board: property "group.lead.name": '
                               "Value error, a name starts with a capital letter")
    assert isinstance(info.value.__cause__, pydantic.ValidationError)


def test_a_model_returned_by_a_tool_is_its_json() -> None:
    @panto.tool
    def lookup(name: str) -> Passenger:
        return Passenger(name=name, age=3, seat=Seat.AISLE)

    assert json.loads(lookup.invoke({"name": "Ada"})) == {"name": "Ada", "age": 3, "seat": "aisle"}


def test_pydantics_error_and_the_cores_are_the_tools_error_results(provider: str) -> None:
    """A name Pydantic's validator refuses reaches the tool and comes back as its error result;
    a passenger without a name never reaches it: the core follows the "$ref" and names the
    path."""
    ran: List[Request] = []

    @panto.tool
    def book(request: Request) -> str:
        ran.append(request)
        return "booked"

    lower = {"request": {"passengers": [{"name": "ada", "age": 36}]}}
    nameless = {"request": {"passengers": [{"name": "Ada", "age": 36}, {"age": 5}]}}
    script = {"responses": [answer(tool_use("call_1", "book", lower), tool_use("call_2", "book", nameless)),
                            answer(text("Sorry."))]}
    with Emulator(scenario=script) as emu, new_agent(emu, provider, tools=[book]) as agent:
        assert agent.complete("Book it").text == "Sorry."
        first = emu.requests()[0]["body"]
        sent = first["tools"][0]["input_schema" if provider == "anthropic" else "function"]
        sent_schema = sent if provider == "anthropic" else sent["parameters"]
        assert sent_schema == untitled(book.input_schema)
        results = tool_results_sent(provider, emu.requests()[1])
    assert ran == []
    assert [r["id"] for r in results] == ["call_1", "call_2"]
    assert results[0]["content"] == ('Invalid input for tool book: property "request.passengers[0].name": '
                                     "Value error, a name starts with a capital letter")
    assert results[1]["content"] == 'Invalid input for tool book: missing required property "request.passengers[1].name"'
    if provider == "anthropic":  # OpenAI's tool messages carry no error flag
        assert results[0]["is_error"] and results[1]["is_error"]


def test_parse_into_a_model(provider: str) -> None:
    paris = {"name": "Paris", "population": 2100000, "mayor": {"name": "Anne", "age": 60}}
    script = {"responses": [answer(text(json.dumps(paris))), answer(text(json.dumps({**paris, "population": "many"})))]}
    with Emulator(scenario=script) as emu, new_agent(emu, provider) as agent:
        city = agent.parse("The largest city of France?", City)
        assert city == City(name="Paris", population=2100000, mayor=Passenger(name="Anne", age=60))
        body = emu.requests()[0]["body"]
        if provider == "openai":
            fmt = body["response_format"]["json_schema"]
            assert fmt["name"] == "City" and fmt["strict"] is False  # Passenger has defaults
            schema = fmt["schema"]
        else:
            schema = body["output_config"]["format"]["schema"]
        # Closed by the core for a structured output; Anthropic's with its refused keywords
        # (a bound, a default) in the description.
        passenger = PASSENGER if provider == "openai" else PASSENGER_ANTHROPIC_OUTPUT
        assert schema == {"type": "object", "description": "A city.",
                          "properties": {"name": {"type": "string"}, "population": {"type": "integer"},
                                         "mayor": {"$ref": "#/$defs/Passenger"}},
                          "required": ["name", "population", "mayor"], "additionalProperties": False,
                          "$defs": {"Passenger": passenger, "Seat": SEAT}}
        with pytest.raises(panto.OutputError):  # the core's check, before Pydantic's
            agent.parse("Again?", City)


def test_a_model_all_required_is_strict_for_openai() -> None:
    class Point(BaseModel):
        x: float
        y: float

    script = {"responses": [answer(text('{"x": 1, "y": 2.5}'))]}
    with Emulator(scenario=script) as emu, new_agent(emu, "openai", response_format=Point) as agent:
        assert agent.run("Where?").final_json(Point) == Point(x=1, y=2.5)
        fmt = emu.requests()[0]["body"]["response_format"]["json_schema"]
        assert fmt["strict"] is True and fmt["schema"]["additionalProperties"] is False


class Point(BaseModel):
    x: float
    y: float


class Route(BaseModel):
    start: Point = Field(description="Where it starts.")
    tags: set[str]


def test_a_described_model_and_a_set_are_sent_as_openais_strict_mode_takes_them() -> None:
    # Pydantic writes {"$ref", "description"} for the described field and uniqueItems for the
    # set, both of which strict mode refuses (the emulator as OpenAI does): the core unravels
    # the first and moves the second into the description.
    script = {"responses": [answer(text('{"start": {"x": 1, "y": 2}, "tags": ["a", "b"]}'))]}
    with Emulator(scenario=script) as emu, new_agent(emu, "openai") as agent:
        assert agent.parse("Which route?", Route) == Route(start=Point(x=1, y=2), tags={"a", "b"})
        fmt = emu.requests()[0]["body"]["response_format"]["json_schema"]
        assert fmt["strict"] is True
        assert fmt["schema"]["properties"] == {
            "start": {"type": "object", "description": "Where it starts.", "required": ["x", "y"],
                      "properties": {"x": {"type": "number"}, "y": {"type": "number"}},
                      "additionalProperties": False},
            "tags": {"type": "array", "items": {"type": "string"}, "description": "{uniqueItems: true}"}}


class Node(BaseModel):
    value: int
    kids: List["Node"]


def test_a_recursive_model_parses_for_openai_and_is_a_config_error_for_anthropic() -> None:
    tree = {"value": 1, "kids": [{"value": 2, "kids": []}]}
    with Emulator(scenario={"responses": [answer(text(json.dumps(tree)))]}) as emu:
        with new_agent(emu, "openai") as agent:
            assert agent.parse("A tree?", Node) == Node(value=1, kids=[Node(value=2, kids=[])])
            schema = emu.requests()[0]["body"]["response_format"]["json_schema"]["schema"]
            assert "$ref" not in schema and schema["properties"]["kids"]["items"] == {"$ref": "#/$defs/Node"}
        with new_agent(emu, "anthropic") as agent:
            with pytest.raises(panto.ConfigError, match=r'recursive \("\$ref": "#/\$defs/Node"'):
                agent.parse("A tree?", Node)
        assert len(emu.requests()) == 1


def test_pydantic_refusing_an_answer_is_an_output_error() -> None:
    script = {"responses": [answer(text(json.dumps({"name": "P", "population": 1, "mayor": {"name": "anne", "age": 1}})))]}
    with Emulator(scenario=script) as emu, new_agent(emu) as agent:
        with pytest.raises(panto.OutputError) as info:
            agent.parse("?", City)
        assert info.value.message.endswith('property "mayor.name": Value error, a name starts with a capital letter')


def _another_passenger() -> Any:
    class Passenger(BaseModel):
        other: int

    return Passenger


OtherPassenger = _another_passenger()


def test_two_models_with_one_name_are_refused_clearly() -> None:
    with pytest.raises(TypeError, match="two different types are both named Passenger"):
        @panto.tool
        def both(a: List[Passenger], b: List[OtherPassenger]) -> str:  # type: ignore[valid-type]
            return ""
