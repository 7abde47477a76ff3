"""The Lua module zig-out/lib/lua/panto.so inside Python, under lupa's Lua 5.4 runtime.

    zig build
    PYTHONPATH=bindings-py .venv/bin/python -m pytest -q tests/python/test_lua_lupa.py

panto.so does not link Lua: it takes the lua_* symbols from the process. lupa's Lua lives in
its extension module, which exports them only when loaded with RTLD_GLOBAL, so this file sets
the dlopen flags before it imports lupa. (Had another test imported lupa first, without them,
loading panto.so fails with an undefined lua_* symbol.)
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any, Iterator

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
    assert set(kinds[2:-2]) == {"content_delta"}
    assert kinds[-2:] == ["block_complete", "message_complete"]
    assert text == "Hello world"
    assert (input_tokens, output_tokens) == (7, 2)
    assert '"assistant"' in conversation and "Hello world" in conversation
    assert len(requests) == 1 and requests[0]["path"] == "/v1/messages"


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
    assert t1["abi_version"] == 1
