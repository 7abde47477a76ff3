"""The event classes are frozen dataclasses (issue 5), built by panto/_frozen.py rather than
by @dataclasses.dataclass: each one is checked here against the class the real decorator makes
from the same fields. And what `import panto` loads: the heavy modules wait for first use.

These checks need no built libpanto. Run with PYTHONPATH=bindings-py.
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
import os
import pickle
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List, Tuple

import pytest

from panto import _frozen, config, events

ROOT = Path(__file__).resolve().parents[2]

USAGE = events.Usage(1, 2, 3, 4, 5, 6, 7)

# One instance of every class made with _frozen, with the arguments to make it.
SAMPLES: List[Tuple[type, Tuple[Any, ...]]] = [
    (events.Usage, (1, 2, 3, 4, 5, 6, 7)),
    (events.MessageStart, ("msg_1", "claude", "req_1")),
    (events.BlockStart, (0, "text")),
    (events.ContentDelta, (0, "text", "hé")),
    (events.BlockComplete, (1, "thinking", "hmm", "", "")),
    (events.MessageEnd, ("end_turn", "end_turn", USAGE, 0.0177)),
    (events.ToolDetails, (2, "toolu_1", "get_weather")),
    (events.ToolCallStart, ("toolu_1", "get_weather", {"city": "Paris"}, True, True)),
    (events.ToolProgress, ("toolu_1", "get_weather", "half way", 0.5)),
    (events.ToolResult, ("toolu_1", "get_weather", "Sunny", False, ())),
    (events.MessageComplete, ("end_turn", "end_turn", USAGE, None)),
    (events.ProviderRetry, (1, 500, None, "overloaded_error: Overloaded")),
    (events.CompactionStart, (50_000, "threshold")),
    (events.CompactionEnd, (50_000, 12_000, 7, "The user asked for a story.")),
    (events.ApprovalRequest, ((),)),  # (its calls hold dicts: unhashable, as ToolCallStart)
    (events.UserMessage, ("steer", "In Celsius, please.")),
    (config.RetryPolicy, (3, 100, None, None)),
    (config.Timeouts, (None, 5000, None)),
    (events.Part, ("image", "", "image/png", "a.png", 3, 2, 1, "AAEC")),
    (events.ApprovalCall, ("toolu_1", "bash", {"command": "ls"})),
]


def twin(cls: type) -> type:
    """The class @dataclasses.dataclass(frozen=True) makes from the fields of `cls`."""
    body: Dict[str, Any] = {"__annotations__": dict(cls.__annotations__), "__qualname__": cls.__qualname__}
    for f in dataclasses.fields(cls):
        if not f.init:
            body[f.name] = dataclasses.field(default=f.default, init=False)
        elif f.default is not dataclasses.MISSING:
            body[f.name] = f.default
    return dataclasses.dataclass(frozen=True)(type(cls.__name__, (), body))


@pytest.mark.parametrize("cls,args", SAMPLES, ids=[c.__name__ for c, _ in SAMPLES])
def test_behaves_as_the_real_frozen_dataclass(cls: type, args: Tuple[Any, ...]) -> None:
    real = twin(cls)
    ours, theirs = cls(*args), real(*args)
    assert dataclasses.is_dataclass(cls) and dataclasses.is_dataclass(ours)
    assert cls.__dataclass_params__.frozen  # type: ignore[attr-defined]
    assert [(f.name, f.type, f.default, f.init) for f in dataclasses.fields(ours)] == [
        (f.name, f.type, f.default, f.init) for f in dataclasses.fields(theirs)
    ]
    if cls is not events.Part:  # its repr shows the data's size only (see below)
        assert repr(ours) == repr(theirs)
    assert dataclasses.asdict(ours) == dataclasses.asdict(theirs)
    assert dataclasses.astuple(ours) == dataclasses.astuple(theirs)
    assert ours == cls(*args) and not (ours != cls(*args))
    assert ours != theirs  # another class: not equal, as between two dataclasses
    if any(isinstance(a, dict) for a in args):
        with pytest.raises(TypeError):  # a dict field: unhashable, like the real one
            hash(ours)
    else:
        assert hash(ours) == hash(theirs)
        assert {ours: 1}[cls(*args)] == 1
    assert cls.__match_args__ == real.__match_args__  # type: ignore[attr-defined]
    assert inspect.signature(cls) == inspect.signature(real)
    # Frozen: no field can be set or deleted, nor a new attribute added.
    name = dataclasses.fields(ours)[0].name
    for action in (lambda: setattr(ours, name, None), lambda: delattr(ours, name), lambda: setattr(ours, "extra", 1)):
        with pytest.raises(dataclasses.FrozenInstanceError):
            action()
    assert getattr(ours, name) == getattr(theirs, name)
    # Copies and pickles give equal objects.
    for copied in (copy.copy(ours), copy.deepcopy(ours), pickle.loads(pickle.dumps(ours))):
        assert copied == ours and type(copied) is cls
    # replace() makes a new object with one field changed.
    first = dataclasses.fields(ours)[0].name
    changed = dataclasses.replace(ours, **{first: "changed"})
    assert type(changed) is cls and getattr(changed, first) == "changed"
    assert dataclasses.astuple(changed)[1:] == dataclasses.astuple(ours)[1:]
    # The same outcome, and the same error, for bad arguments.
    for bad_args, bad_kwargs in (((), {}), (args + (1,), {}), (args, {"nope": 1}), (args[1:], {first: args[0]})):
        assert outcome(cls, bad_args, bad_kwargs) == outcome(real, bad_args, bad_kwargs)


EVENT_SAMPLES = [(c, a) for c, a in SAMPLES if c.__module__ == "panto.events"]


@pytest.mark.parametrize("cls,args", EVENT_SAMPLES, ids=[c.__name__ for c, _ in EVENT_SAMPLES])
def test_construct_makes_what_the_class_makes(cls: type, args: Tuple[Any, ...]) -> None:
    # How a stream makes its events (every field given), without the class's __init__ (see
    # _frozen.construct).
    made = _frozen.construct(cls, *args)
    assert type(made) is cls and made == cls(*args) and repr(made) == repr(cls(*args))
    assert dataclasses.astuple(made) == dataclasses.astuple(cls(*args))
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(made, dataclasses.fields(made)[0].name, None)


def outcome(cls: type, args: Tuple[Any, ...], kwargs: Dict[str, Any]) -> str:
    try:
        cls(*args, **kwargs)
    except TypeError as e:
        return str(e)
    return "made"


def test_kind_is_a_field_with_a_default_fixed_per_class() -> None:
    delta = events.ContentDelta(0, "text", "hi")
    assert delta.kind == "content_delta" and events.ContentDelta.kind == "content_delta"
    kind = {f.name: f for f in dataclasses.fields(delta)}["kind"]
    assert (kind.default, kind.init) == ("content_delta", False)
    with pytest.raises(TypeError):
        events.ContentDelta(0, "text", "hi", "other")  # type: ignore[call-arg]
    assert dataclasses.asdict(delta)["kind"] == "content_delta"


def test_slots_keep_events_small() -> None:
    delta = events.ContentDelta(0, "text", "hi")
    assert not hasattr(delta, "__dict__")
    assert events.ContentDelta.__slots__ == ("index", "block_kind", "text")


def test_the_event_union_names_every_class() -> None:
    import typing

    assert typing.get_origin(events.Event) is typing.Union
    assert set(events.Event.__args__) == {c for c, _ in SAMPLES[1:16]}  # type: ignore[attr-defined]


# ---- what `import panto` loads ---------------------------------------------------------

HEAVY = ["typing", "dataclasses", "inspect", "json", "threading", "signal", "asyncio", "logging", "re", "enum"]

IMPORTS = """
import json, sys
before = set(sys.modules)
import panto
loaded = [m for m in {heavy} if m in sys.modules and m not in before]
lazy = [m for m in ("panto.tools", "panto.message", "panto._interrupt", "panto._batch") if m in sys.modules]
from panto import tool, Registry, AssistantMessage, Event, RetryPolicy
names = dir(panto)
star = {{}}
exec("from panto import *", star)
print(json.dumps({{"loaded": loaded, "lazy": lazy, "tools_then": "panto.tools" in sys.modules,
                  "dir": all(n in names for n in panto.__all__), "star": sorted(set(panto.__all__) - set(star))}}))
"""


def test_import_panto_loads_no_heavy_module() -> None:
    code = IMPORTS.format(heavy=HEAVY)
    env = dict(os.environ, PYTHONPATH=str(ROOT / "bindings-py"))
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    out = __import__("json").loads(proc.stdout)
    assert out["loaded"] == [], out  # typing, dataclasses, inspect... wait for first use
    assert out["lazy"] == [], out  # the tools, the final message, Ctrl-C support, batches too
    assert out["tools_then"]  # and come when asked for
    assert out["dir"] and out["star"] == [], out


SYNC_TOOL_TURN = """
import json, sys
from panto.emulator import Emulator
import panto

def ping(**_):
    return "pong"

script = {"responses": [
    {"message": {"content": [{"type": "tool_use", "id": "toolu_1", "name": "ping", "input": {}}]}},
    {"message": {"content": [{"type": "text", "text": "done"}]}}]}
with Emulator(scenario=script) as emu:
    agent = panto.Agent(provider="anthropic", model="m", base_url=emu.url, api_key="k",
                        tools=[panto.Tool(name="ping", handler=ping)])
    runner_with_agent = "panto._tool_runner" in sys.modules
    with agent.run("go") as stream:
        results = [e.content for e in stream if isinstance(e, panto.ToolResult)]
    agent.close()
print(json.dumps({"runner_with_agent": runner_with_agent, "asyncio": "asyncio" in sys.modules,
                  "results": results}))
"""


def test_a_sync_tool_turn_imports_no_asyncio_and_loads_its_runner_with_the_agent() -> None:
    # asyncio's import (about 27 ms) came with the first tool call's runner: the Python tool
    # turn of `make bench` was 27-49 % slower than C's, where it had been within 3 %.
    env = dict(os.environ, PYTHONPATH=str(ROOT / "bindings-py"))
    proc = subprocess.run([sys.executable, "-c", SYNC_TOOL_TURN], env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    out = __import__("json").loads(proc.stdout)
    assert out == {"runner_with_agent": True, "asyncio": False, "results": ["pong"]}, out


def test_a_missing_name_is_an_attribute_error() -> None:
    import panto

    with pytest.raises(AttributeError, match="no_such_name"):
        panto.no_such_name  # type: ignore[attr-defined]  # noqa: B018
    with pytest.raises(AttributeError):
        events.NoSuchEvent  # type: ignore[attr-defined]  # noqa: B018


def test_a_part_shows_its_data_by_size_only() -> None:
    image = events.Part("image", "", "image/png", "a.png", 3, 2, 1, "AAEC")
    assert repr(image) == "Part(kind='image', media_type='image/png', name='a.png', byte_size=3, width=2, height=1)"
    assert image.data == b"\x00\x01\x02"
    document = events.Part("document", "", "application/pdf", "", 3, 0, 0, "AAEC")
    assert repr(document) == "Part(kind='document', media_type='application/pdf', name='', byte_size=3)"
    assert repr(events.Part("text", "hi", "", "", 0, 0, 0, "")) == "Part(kind='text', text='hi')"
    assert events.Part("text", "hi", "", "", 0, 0, 0, "").data == b""
