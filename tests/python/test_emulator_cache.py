"""The emulator's prompt cache (usage derived from cache_control breakpoints and earlier
requests) and its checks of caching and structured-output parameters.

Run: PYTHONPATH=bindings-py .venv/bin/python -m pytest -q tests/python/test_emulator_cache.py
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from panto.emulator import Emulator, ScenarioError, parse
from test_emulator import ANTHROPIC, BODIES, OPENAI, post, sse_events

CC = {"type": "ephemeral"}
ANSWER = {"message": {"content": [{"type": "text", "text": "ok"}],
                      "usage": {"output_tokens": 2, "input_tokens": 999}}}


@pytest.fixture
def emu():
    with Emulator() as e:
        yield e


def usage_of(reply: Any, path: str) -> dict[str, int]:
    """The usage of a streamed reply, in the scenario's terms."""
    assert reply.status == 200, reply.body
    events = [json.loads(d) for _, d in sse_events(reply.body) if d != "[DONE]"]
    if path == ANTHROPIC:
        u = next(e for e in events if e["type"] == "message_delta")["usage"]
        return {"input": u["input_tokens"], "read": u["cache_read_input_tokens"],
                "write": u["cache_creation_input_tokens"], "output": u["output_tokens"]}
    u = events[-1]["usage"]
    cached = u["prompt_tokens_details"]["cached_tokens"]
    return {"input": u["prompt_tokens"] - cached, "read": cached, "write": 0,
            "output": u["completion_tokens"]}


def anthropic(messages: list[Any], **more: Any) -> dict[str, Any]:
    return dict(BODIES[ANTHROPIC], messages=messages, **more)


def text(t: str, mark: bool = False) -> dict[str, Any]:
    return {"type": "text", "text": t, **({"cache_control": CC} if mark else {})}


def test_anthropic_a_second_turn_reads_what_the_first_wrote(emu):
    emu.load({"prompt_cache": {"unit_tokens": 10}, "responses": [ANSWER], "repeat_last": True})
    system = [text("You are terse.", mark=True)]
    first = [{"role": "user", "content": [text("Hello", mark=True)]}]
    # system (1 unit) and the user block (1 unit) written; nothing after the last breakpoint.
    assert usage_of(post(emu, ANTHROPIC, anthropic(first, system=system)), ANTHROPIC) == \
        {"input": 0, "read": 0, "write": 20, "output": 2}
    second = [{"role": "user", "content": [text("Hello")]},
              {"role": "assistant", "content": [text("ok")]},
              {"role": "user", "content": [text("More", mark=True)]}]
    # The first request's prefix (2 units) is found looking back from the new breakpoint.
    assert usage_of(post(emu, ANTHROPIC, anthropic(second, system=system)), ANTHROPIC) == \
        {"input": 0, "read": 20, "write": 20, "output": 2}
    # Without breakpoints nothing is read or written, and everything is input.
    plain = [dict(m, content=[text(m["content"][0]["text"])]) for m in second]
    assert usage_of(post(emu, ANTHROPIC, anthropic(plain)), ANTHROPIC) == \
        {"input": 30, "read": 0, "write": 0, "output": 2}
    # A changed system prompt changes every prefix after it.
    other = [text("You are verbose.", mark=True)]
    assert usage_of(post(emu, ANTHROPIC, anthropic(second, system=other)), ANTHROPIC) == \
        {"input": 0, "read": 0, "write": 40, "output": 2}


def test_anthropic_tools_and_units_after_the_last_breakpoint(emu):
    emu.load({"prompt_cache": {"unit_tokens": 3}, "responses": [ANSWER], "repeat_last": True})
    tools = [{"name": "a", "input_schema": {}}, {"name": "b", "input_schema": {}, "cache_control": CC}]
    body = anthropic([{"role": "user", "content": "one"}, {"role": "assistant", "content": "two"},
                      {"role": "user", "content": "three"}], tools=tools)
    assert usage_of(post(emu, ANTHROPIC, body), ANTHROPIC) == \
        {"input": 9, "read": 0, "write": 6, "output": 2}
    assert usage_of(post(emu, ANTHROPIC, body), ANTHROPIC) == \
        {"input": 9, "read": 6, "write": 0, "output": 2}
    # A new load forgets the cache.
    emu.load({"prompt_cache": {}, "responses": [ANSWER]})
    assert usage_of(post(emu, ANTHROPIC, body), ANTHROPIC) == \
        {"input": 30, "read": 0, "write": 20, "output": 2}


def test_openai_caches_every_prefix_by_key(emu):
    emu.load({"prompt_cache": {"unit_tokens": 10}, "responses": [ANSWER], "repeat_last": True})
    first = [{"role": "system", "content": "s"}, {"role": "user", "content": "q1"}]
    second = first + [{"role": "assistant", "content": "ok"}, {"role": "user", "content": "q2"}]
    body = dict(BODIES[OPENAI], messages=first)
    assert usage_of(post(emu, OPENAI, body), OPENAI) == {"input": 20, "read": 0, "write": 0, "output": 2}
    assert usage_of(post(emu, OPENAI, dict(body, messages=second)), OPENAI) == \
        {"input": 20, "read": 20, "write": 0, "output": 2}
    # Another prompt_cache_key is another cache.
    assert usage_of(post(emu, OPENAI, dict(body, messages=second, prompt_cache_key="k")), OPENAI) == \
        {"input": 40, "read": 0, "write": 0, "output": 2}


def test_without_prompt_cache_the_usage_is_the_scripted_one(emu):
    emu.load({"responses": [ANSWER]})
    body = anthropic([{"role": "user", "content": [text("Hello", mark=True)]}])
    assert usage_of(post(emu, ANTHROPIC, body), ANTHROPIC) == \
        {"input": 999, "read": 0, "write": 0, "output": 2}


def test_prompt_cache_scenario_key_is_checked():
    assert parse({"prompt_cache": {}}).prompt_cache_unit_tokens == 10
    assert parse({}).prompt_cache_unit_tokens is None
    for bad, text_ in (({"prompt_cache": True}, "must be an object"),
                       ({"prompt_cache": {"unit_tokens": -1}}, "non-negative integer"),
                       ({"prompt_cache": {"size": 1}}, "unknown key")):
        with pytest.raises(ScenarioError, match=text_):
            parse(bad)


@pytest.mark.parametrize("body, message", [
    (anthropic([{"role": "user", "content": [text(str(i), mark=True) for i in range(5)]}]),
     "A maximum of 4 blocks with cache_control may be provided. Found 5."),
    (anthropic([{"role": "user", "content": [text("a", mark=True),
                                              {"type": "text", "text": "b", "cache_control": {"type": "ephemeral", "ttl": "1h"}}]}]),
     "a ttl='1h' cache_control block must not come after a ttl='5m'"),
    (anthropic([{"role": "user", "content": [{"type": "text", "text": "b", "cache_control": {"type": "persistent"}}]}]),
     "cache_control: must be"),
    (anthropic([{"role": "user", "content": "q"}], output_config={"format": {"type": "json_object"}}),
     "output_config.format: must be"),
])
def test_anthropic_refuses_what_the_api_refuses(emu, body, message):
    emu.load({"responses": [ANSWER]})
    r = post(emu, ANTHROPIC, body)
    assert r.status == 400 and message in r.json()["error"]["message"]


def test_anthropic_takes_a_1h_breakpoint_before_a_5m_one_and_a_schema_format(emu):
    emu.load({"responses": [ANSWER]})
    body = anthropic([{"role": "user", "content": [
        {"type": "text", "text": "a", "cache_control": {"type": "ephemeral", "ttl": "1h"}}, text("b", mark=True)]}],
        output_config={"format": {"type": "json_schema", "schema": {"type": "object"}}})
    assert post(emu, ANTHROPIC, body).status == 200


@pytest.mark.parametrize("changes, ok", [
    ({"response_format": {"type": "json_schema", "json_schema": {"name": "r", "schema": {"type": "object"}}}}, True),
    ({"response_format": {"type": "json_schema", "json_schema": {"name": "r", "strict": True, "schema": {
        "type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"], "additionalProperties": False}}}}, True),
    # Strict mode and a schema it cannot take: OpenAI's 400.
    ({"response_format": {"type": "json_schema", "json_schema": {"name": "r", "schema": {"type": "object"}, "strict": True}}}, False),
    ({"response_format": {"type": "json_schema", "json_schema": {"name": "r", "strict": True, "schema": {
        "type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": False}}}}, False),
    # A keyword beside a $ref, a keyword strict mode refuses: 400 (provider_schema.zig writes
    # neither).
    ({"response_format": {"type": "json_schema", "json_schema": {"name": "r", "strict": True, "schema": {
        "type": "object", "properties": {"p": {"$ref": "#/$defs/P", "description": "d"}}, "required": ["p"],
        "additionalProperties": False, "$defs": {"P": {"type": "string"}}}}}}, False),
    ({"response_format": {"type": "json_schema", "json_schema": {"name": "r", "strict": True, "schema": {
        "type": "object", "properties": {"t": {"type": "array", "items": {"type": "string"}, "uniqueItems": True}},
        "required": ["t"], "additionalProperties": False}}}}, False),
    ({"response_format": {"type": "json_schema", "json_schema": {"name": "r", "strict": True, "schema": {
        "type": "object", "properties": {"p": {"$ref": "#/$defs/P"}}, "required": ["p"],
        "additionalProperties": False, "$defs": {"P": {"type": "string"}}}}}}, True),
    ({"response_format": {"type": "json_object"}}, True),
    ({"response_format": {"type": "text"}, "prompt_cache_key": "k", "prompt_cache_retention": "24h"}, True),
    ({"response_format": {"type": "json_schema", "json_schema": {"schema": {}}}}, False),
    ({"response_format": {"type": "xml"}}, False),
    ({"prompt_cache_retention": "1h"}, False),
])
def test_openai_checks_response_format_and_retention(emu, changes, ok):
    emu.load({"responses": [ANSWER]})
    r = post(emu, OPENAI, dict(BODIES[OPENAI], **changes))
    assert (r.status == 200) == ok, r.body
