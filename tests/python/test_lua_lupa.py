"""The Lua module zig-out/lib/lua/panto.so inside Python, under lupa's Lua 5.4 runtime.

    zig build
    PYTHONPATH=bindings-py .venv/bin/python -m pytest -q tests/python/test_lua_lupa.py

panto.so does not link Lua: it takes the lua_* symbols from the process. lupa's Lua lives in
its extension module, which exports them only when loaded with RTLD_GLOBAL, so this file sets
the dlopen flags before it imports lupa. (Had another test imported lupa first, without them,
loading panto.so fails with an undefined lua_* symbol.)
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any, Dict, Iterator

import pytest

_flags = sys.getdlopenflags()
sys.setdlopenflags(os.RTLD_NOW | os.RTLD_GLOBAL)
try:
    import lupa.lua54 as lupa54
finally:
    sys.setdlopenflags(_flags)

from panto.emulator import Emulator

ROOT = Path(__file__).resolve().parents[2]
LUA_MODULE = ROOT / "zig-out" / "lib" / "lua" / "panto.so"

HELLO = {"message": {"id": "msg_lupa", "model": "claude-test",
                     "content": [{"type": "text", "text": "Hello world"}],
                     "stop_reason": "end_turn", "usage": {"input_tokens": 7, "output_tokens": 2}}}

TURN = """
local url = ...
local panto = require("panto")
local agent <close> = assert(panto.Agent{provider = "anthropic", model = "claude-test",
                                         api_key = "test-key", base_url = url})
local kinds, text, usage = {}, {}, nil
for ev in agent:run("Hi"):events() do
  kinds[#kinds + 1] = ev.kind
  if ev.kind == "content_delta" then text[#text + 1] = ev.text end
  if ev.kind == "message_complete" then usage = ev.usage end
end
return table.concat(kinds, " "), table.concat(text), usage.input_tokens, usage.output_tokens,
       agent:conversation()
"""

TOOL_TURN = """
local url, handler = ...
local panto = require("panto")
local agent <close> = assert(panto.Agent{provider = "anthropic", model = "claude-test",
                                         api_key = "test-key", base_url = url,
                                         capabilities = {"net"}})
agent:add_tool{name = "get_weather", description = "Weather.", capabilities = {"net"},
               params = {city = {type = "string", description = "The city"}},
               handler = handler}
local kinds, results = {}, {}
for ev in agent:run("Weather in Paris?"):events() do
  kinds[#kinds + 1] = ev.kind
  if ev.kind == "tool_result" then results[#results + 1] = ev.content .. "|" .. tostring(ev.is_error) end
end
return table.concat(kinds, " "), table.concat(results, ","), agent:tools("anthropic")
"""

FAILED_TURN = """
local url = ...
local panto = require("panto")
local agent <close> = assert(panto.Agent{provider = "anthropic", model = "claude-test",
                                         api_key = "test-key", base_url = url})
local stream <close> = agent:run("Hi")
local ok, err = pcall(stream.next, stream)
return ok, err.code, err.http_status, err.type, err.message, tostring(err)
"""


@pytest.fixture()
def lua() -> Iterator[Any]:
    if not LUA_MODULE.exists():
        pytest.fail(f"{LUA_MODULE} is missing: run `zig build` first", pytrace=False)
    runtime = lupa54.LuaRuntime(unpack_returned_tuples=True)
    assert runtime.lua_version == (5, 4)
    runtime.globals().package.cpath = str(LUA_MODULE.parent / "?.so")
    yield runtime


def test_text_turn(lua: Any) -> None:
    with Emulator(scenario={"responses": [HELLO]}) as emu:
        kinds, text, input_tokens, output_tokens, conversation = lua.execute(TURN, emu.url)
        requests = emu.requests()
    kinds = kinds.split()
    assert kinds[:2] == ["message_start", "block_start"]
    assert set(kinds[2:-3]) == {"content_delta"}
    assert kinds[-3:] == ["block_complete", "message_end", "message_complete"]
    assert text == "Hello world"
    assert (input_tokens, output_tokens) == (7, 2)
    assert '"assistant"' in conversation and "Hello world" in conversation
    assert len(requests) == 1 and requests[0]["path"] == "/v1/messages"


def tool_call(city: str) -> Dict[str, Any]:
    return {"message": {"id": "msg_t", "model": "claude-test", "stop_reason": "tool_use",
                        "content": [{"type": "tool_use", "id": "toolu_1", "name": "get_weather",
                                     "input": {"city": city}}]}}


def test_tool_round_trip(lua: Any) -> None:
    """A Lua handler, run by the module inside lupa's Lua, answers the model's call."""
    handler = lua.eval("function(input, call) return 'Sunny in ' .. input.city .. ' (' .. call.id .. ')' end")
    with Emulator(scenario={"responses": [tool_call("Paris"), HELLO]}) as emu:
        kinds, results, tools = lua.execute(TOOL_TURN, emu.url, handler)
        requests = emu.requests()
    kinds = kinds.split()
    i = kinds.index("tool_call_start")
    assert kinds[i - 1] == "message_end" and kinds[i + 1] == "tool_result"
    assert kinds[i + 2] == "message_start" and kinds[-1] == "message_complete"
    assert results == "Sunny in Paris (toolu_1)|false"
    assert json.loads(tools)[0]["input_schema"]["required"] == ["city"]
    # The request's tools are the export, plus the prompt-cache breakpoint panto puts on the
    # last tool (docs/caching-and-output.md).
    sent = [{k: v for k, v in t.items() if k != "cache_control"} for t in requests[0]["body"]["tools"]]
    assert sent == json.loads(tools)
    result = requests[1]["body"]["messages"][-1]["content"][0]
    assert result["type"] == "tool_result" and result["tool_use_id"] == "toolu_1"
    assert not result.get("is_error")


def test_failing_python_handler(lua: Any) -> None:
    """A Python function as the handler: its exception becomes an error result."""
    def handler(input: Any, call: Any) -> str:
        raise RuntimeError(f"no weather for {input['city']}")

    with Emulator(scenario={"responses": [tool_call("Oslo"), HELLO]}) as emu:
        _, results, _ = lua.execute(TOOL_TURN, emu.url, handler)
        requests = emu.requests()
    assert results.endswith("|true") and "no weather for Oslo" in results
    assert requests[1]["body"]["messages"][-1]["content"][0]["is_error"] is True


def test_error_table(lua: Any) -> None:
    scenario = {"responses": [{"status": 401, "error": {"type": "authentication_error",
                                                        "message": "bad key"}}]}
    with Emulator(scenario=scenario) as emu:
        ok, code, http_status, type_, message, text = lua.execute(FAILED_TURN, emu.url)
    assert ok is False
    assert (code, http_status, type_, message) == ("authentication", 401, "authentication_error", "bad key")
    assert "bad key" in text and "401" in text


def test_fresh_module_table(lua: Any) -> None:
    t1 = lua.execute("return package.loadlib(package.searchpath('panto', package.cpath), 'luaopen_panto')()")
    t2 = lua.execute("return (require('panto'))")
    assert t1 != t2
    assert t1["_VERSION"] == t2["_VERSION"]
    from panto._abi import ABI_VERSION  # (generated from the library's ABI definitions)

    assert t1["abi_version"] == ABI_VERSION == 3


def test_module_stays_loaded_after_its_state_closes() -> None:
    """panto's core runs a process-wide watchdog thread inside panto.so, so the module pins
    itself: closing the Lua state that loaded it (Lua then dlcloses its C modules) must not
    unmap it. (Unpinned, the next state mapped it again with fresh globals under the old
    thread, and a later turn could hang.)"""
    import gc

    def mapped() -> bool:
        with open("/proc/self/maps") as f:
            return str(LUA_MODULE.resolve()) in f.read()

    with Emulator(scenario={"responses": [HELLO]}) as emu:
        runtime = lupa54.LuaRuntime(unpack_returned_tuples=True)
        runtime.globals().package.cpath = str(LUA_MODULE.parent / "?.so")
        kinds = runtime.execute(TURN, emu.url)[0]
        assert kinds.split()[-1] == "message_complete"
        del runtime
        gc.collect()
    assert mapped(), "panto.so was unloaded with its Lua state"


def _sse(name: str, data: Dict[str, Any]) -> str:
    return f"event: {name}\ndata: {json.dumps(data)}\n\n"


def stalled(first: str) -> Dict[str, Any]:
    """An Anthropic stream that sends message_start, block_start and the delta `first`, then
    holds the connection open without sending the rest."""
    head = (
        _sse("message_start", {"type": "message_start", "message": {
            "id": "msg_stall", "type": "message", "role": "assistant", "model": "claude-test", "content": [],
            "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 1}}})
        + _sse("content_block_start", {"type": "content_block_start", "index": 0,
                                       "content_block": {"type": "text", "text": ""}})
        + _sse("content_block_delta", {"type": "content_block_delta", "index": 0,
                                       "delta": {"type": "text_delta", "text": first}})
    )
    rest = _sse("message_stop", {"type": "message_stop"})
    return {"body": head + rest, "fault": {"after_bytes": len(head.encode()), "kind": "stall"}}


CANCELED_TURN = """
local url = ...
local panto = require("panto")
local agent <close> = assert(panto.Agent{provider = "anthropic", model = "claude-test",
                                         api_key = "test-key", base_url = url,
                                         timeouts = {idle_ms = 5000}})
local kinds = {}
local ok, err = pcall(function()
  for ev in agent:run("Hello"):cancel_after(200):events() do kinds[#kinds + 1] = ev.kind end
end)
local second = {}
for ev in agent:run("Again"):events() do second[#second + 1] = ev.kind end
return table.concat(kinds, " "), err.code, err.type, table.concat(second, " "), agent:conversation()
"""


def test_cancel_after_while_blocked(lua: Any) -> None:
    """The module's timer thread cancels a next() blocked in lupa's Lua (the stall would hold
    it until the 5 s idle timeout, which ends in "timeout", not "canceled")."""
    import time

    with Emulator(scenario={"responses": [stalled("Partial "), HELLO]}) as emu:
        t0 = time.monotonic()
        kinds, code, type_, second, conversation = lua.execute(CANCELED_TURN, emu.url)
        elapsed = time.monotonic() - t0
        requests = emu.requests()
    assert kinds == "message_start block_start content_delta"
    assert (code, type_) == ("canceled", "canceled_error")
    assert elapsed < 3, elapsed
    assert second.split()[-1] == "message_complete"
    messages = json.loads(conversation)
    # The usage of a canceled message is whatever the provider had reported: not compared.
    assert {k: v for k, v in messages[1].items() if k != "usage"} == {
        "role": "assistant", "content": [{"type": "text", "text": "Partial "}],
        "provider": "anthropic", "model": "claude-test", "stop_reason": "aborted"}
    assert [m["role"] for m in requests[1]["body"]["messages"]] == ["user", "assistant", "user"]


RETRIED_TURN = """
local url = ...
local panto = require("panto")
local agent <close> = assert(panto.Agent{provider = "anthropic", model = "claude-test",
                                         api_key = "test-key", base_url = url})
local retries = {}
for ev in agent:run("Hi"):events() do
  if ev.kind == "provider_retry" then
    retries[#retries + 1] = ("%d %d %d %s"):format(ev.attempt, ev.delay_ms, ev.http_status, ev.reason)
  end
end
return table.concat(retries, "|")
"""


def test_provider_retry(lua: Any) -> None:
    overloaded = {"status": 529, "error": {"type": "overloaded_error", "message": "Overloaded"},
                  "headers": {"retry-after-ms": "10"}}
    with Emulator(scenario={"responses": [overloaded, HELLO]}) as emu:
        retries = lua.execute(RETRIED_TURN, emu.url)
        assert len(emu.requests()) == 2
    assert retries == "1 10 529 overloaded_error: Overloaded"


PARALLEL_TURN = """
local url = ...
local panto = require("panto")
local agent <close> = assert(panto.Agent{provider = "anthropic", model = "claude-test",
                                         api_key = "test-key", base_url = url})
local log, closed = {}, 0
agent:add_tool{name = "step", handler = function(_, call)
  local guard <close> = setmetatable({}, {__close = function() closed = closed + 1 end})
  log[#log + 1] = "start " .. call.id
  panto.sleep(0.01)
  log[#log + 1] = "end " .. call.id
  return call.id
end}
local results = {}
for ev in agent:run("go"):events() do
  if ev.kind == "tool_result" then results[#results + 1] = ev.content end
end
return table.concat(log, ","), table.concat(results, ","), closed
"""


def test_parallel_handlers(lua: Any) -> None:
    """The handlers run each in a coroutine of lupa's Lua: panto.sleep yields, they overlap."""
    calls = {"message": {"id": "msg_p", "model": "claude-test", "stop_reason": "tool_use",
                         "content": [{"type": "tool_use", "id": f"t{i}", "name": "step", "input": {}}
                                     for i in (1, 2)]}}
    with Emulator(scenario={"responses": [calls, HELLO]}) as emu:
        log, results, closed = lua.execute(PARALLEL_TURN, emu.url)
    assert log == "start t1,start t2,end t1,end t2"
    assert results == "t1,t2"
    assert closed == 2
