#!/usr/bin/env python3
"""Writes the request-parameter cases (`req_*`) from the rules of include/panto.h ("Request
parameters") and docs/requests.md: for each, the config (or a turn's options), the scripted
answer, the transcript a text answer gives, and the request body and headers each provider
must be sent.

    .venv/bin/python tests/conformance/make_request_cases.py           # write them
    .venv/bin/python tests/conformance/make_request_cases.py --check   # fail if stale
"""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

CASES = Path(__file__).resolve().parent / "cases"
ABSENT = {"$absent": True}
USAGE = {"input_tokens": 10, "output_tokens": 4}
FULL_USAGE = dict(USAGE, cache_read_tokens=0, cache_write_tokens=0, reasoning_tokens=0)
PATH = {"anthropic": "/v1/messages", "openai": "/v1/chat/completions"}
MODEL = {"anthropic": "claude-test", "openai": "gpt-test"}
WEATHER = {"name": "get_weather", "description": "Current weather for a city.",
           "input_schema": {"type": "object", "properties": {"city": {"type": "string"}},
                            "required": ["city"]},
           "behavior": {"return": "Sunny"}}


def answer(provider: str, n: int, text: str = "Done.") -> dict[str, Any]:
    return {"message": {"id": f"msg_req_{n}" if provider == "anthropic" else f"chatcmpl-req-{n}",
                        "model": MODEL[provider],
                        "content": [{"type": "text", "text": text, "deltas": [text]}],
                        "stop_reason": "end_turn", "usage": USAGE}}


def text_turn(provider: str, n: int, text: str = "Done.") -> list[dict[str, Any]]:
    """The lines of a turn answered by `answer` (panto.h's transcript; OpenAI's message id is
    the chunk id), then `done` and the one extra `next()`'s `done`."""
    msg_id = f"msg_req_{n}" if provider == "anthropic" else f"chatcmpl-req-{n}"
    end = {"stop_reason": "end_turn",
           "provider_stop_reason": "end_turn" if provider == "anthropic" else "stop",
           "usage": FULL_USAGE}
    return [
        {"event": "message_start", "id": msg_id, "model": MODEL[provider]},
        {"event": "block_start", "index": 0, "kind": "text"},
        {"event": "content_delta", "index": 0, "kind": "text", "text": text},
        {"event": "block_complete", "index": 0, "kind": "text", "text": text},
        {"event": "message_end", **end},
        {"event": "message_complete", **end},
        {"event": "done"},
    ]


def error_line(code: str, message: Any, http_status: int = 0, type_: str = "") -> dict[str, Any]:
    return {"event": "error", "code": code, "http_status": http_status, "type": type_,
            "message": message}


def config(provider: str, **keys: Any) -> dict[str, Any]:
    return {"provider": provider, "model": MODEL[provider], "api_key": "test-key", **keys}


def request(provider: str, body: dict[str, Any], **more: Any) -> dict[str, Any]:
    return {"method": "POST", "path": PATH[provider], "body_contains": body, **more}


def one_turn(description: str, provider: str, cfg: dict[str, Any], body: dict[str, Any],
             tools: list[Any] | None = None, turn: Any = "Hello", **more: Any) -> dict[str, Any]:
    case = {"description": description, "config": cfg, "turns": [turn],
            "script": {"responses": [answer(provider, 1)]},
            "expect_requests": [request(provider, body, **more)]}
    if tools:
        case["tools"] = tools
    return {"case": case, "expected": text_turn(provider, 1) + [{"event": "done"}]}


def refused(description: str, cfg: dict[str, Any], message: str) -> dict[str, Any]:
    """A config refused when the agent is made: one error line, nothing sent."""
    case = {"description": description, "config": cfg, "turns": ["Hello"],
            "script": {"responses": []}, "expect_requests": []}
    return {"case": case, "expected": [error_line("config", message)]}


def cases() -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    out["req_anthropic_sampling"] = one_turn(
        "Anthropic: temperature, top_p, top_k, stop (as stop_sequences), user (as metadata.user_id) "
        "and service_tier are sent as the Messages API takes them.",
        "anthropic",
        config("anthropic", temperature=0.25, top_p=0.5, top_k=40, stop=["END", "###"],
               user="user-42", service_tier="standard_only"),
        {"temperature": 0.25, "top_p": 0.5, "top_k": 40, "stop_sequences": ["END", "###"],
         "metadata": {"user_id": "user-42"}, "service_tier": "standard_only", "stop": ABSENT,
         "user": ABSENT, "tool_choice": ABSENT})
    out["req_openai_sampling"] = one_turn(
        "OpenAI: temperature (up to 2), top_p, stop, seed, presence and frequency penalties, "
        "metadata, user, service_tier and reasoning_effort (which wins over thinking) are sent as "
        "Chat Completions takes them.",
        "openai",
        config("openai", temperature=1.5, top_p=0.5, stop="END", seed=7, presence_penalty=-0.5,
               frequency_penalty=1, metadata={"team": "search", "run": "7"}, user="user-42",
               service_tier="flex", thinking="high", reasoning_effort="minimal"),
        {"temperature": 1.5, "top_p": 0.5, "stop": ["END"], "seed": 7, "presence_penalty": -0.5,
         "frequency_penalty": 1, "metadata": {"team": "search", "run": "7"}, "user": "user-42",
         "service_tier": "flex", "reasoning_effort": "minimal", "top_k": ABSENT})
    out["req_anthropic_tool_choice"] = one_turn(
        "Anthropic: tool_choice \"required\" is {\"type\": \"any\"}, with parallel_tool_calls false "
        "as disable_parallel_tool_use; sent with the tools.",
        "anthropic", config("anthropic", tool_choice="required", parallel_tool_calls=False),
        {"tool_choice": {"type": "any", "disable_parallel_tool_use": True},
         "parallel_tool_calls": ABSENT}, tools=[WEATHER])
    out["req_anthropic_tool_choice_named"] = one_turn(
        "Anthropic: a named tool_choice is {\"type\": \"tool\", \"name\"}.",
        "anthropic", config("anthropic", tool_choice={"name": "get_weather"}),
        {"tool_choice": {"type": "tool", "name": "get_weather"}}, tools=[WEATHER])
    out["req_anthropic_parallel_off"] = one_turn(
        "Anthropic: parallel_tool_calls false without a tool_choice sends {\"type\": \"auto\", "
        "\"disable_parallel_tool_use\": true}.",
        "anthropic", config("anthropic", parallel_tool_calls=False),
        {"tool_choice": {"type": "auto", "disable_parallel_tool_use": True}}, tools=[WEATHER])
    out["req_openai_tool_choice_named"] = one_turn(
        "OpenAI: a named tool_choice is {\"type\": \"function\", \"function\": {\"name\"}}, and "
        "parallel_tool_calls goes as it is, with the tools.",
        "openai", config("openai", tool_choice={"name": "get_weather"}, parallel_tool_calls=False),
        {"tool_choice": {"type": "function", "function": {"name": "get_weather"}},
         "parallel_tool_calls": False}, tools=[WEATHER])
    out["req_openai_tool_choice_without_tools"] = one_turn(
        "OpenAI: tool_choice and parallel_tool_calls are sent only with tools (the API refuses "
        "them alone).",
        "openai", config("openai", tool_choice="required", parallel_tool_calls=True),
        {"tool_choice": ABSENT, "parallel_tool_calls": ABSENT, "tools": ABSENT})
    out["req_anthropic_thinking_budget"] = one_turn(
        "Anthropic: thinking {\"budget_tokens\": N} is sent as the budget, max_tokens raised above "
        "it; with tools, interleaved thinking's beta header goes too, joined with the user's "
        "anthropic-beta.",
        "anthropic",
        config("anthropic", max_tokens=1000, thinking={"budget_tokens": 3000},
               extra_headers={"anthropic-beta": "files-api-2025-04-14"}),
        {"max_tokens": 4000, "thinking": {"type": "enabled", "budget_tokens": 3000}},
        tools=[WEATHER],
        headers_contain={"anthropic-beta": "interleaved-thinking-2025-05-14,files-api-2025-04-14"})
    out["req_anthropic_interleaved_off"] = one_turn(
        "Anthropic: interleaved_thinking false leaves the beta header out, thinking on and tools "
        "offered.",
        "anthropic", config("anthropic", thinking="low", interleaved_thinking=False),
        {"thinking": {"type": "enabled", "budget_tokens": 2048}}, tools=[WEATHER],
        headers_absent=["anthropic-beta"])
    for provider in ("anthropic", "openai"):
        extra = {"inference_geo": "us", "speed": "fast"} if provider == "anthropic" else \
            {"verbosity": "low", "logit_bias": {"50256": -100}}
        out[f"req_{provider}_escape_hatch"] = one_turn(
            "extra_body members are merged into the body (after panto's own keys) and "
            "extra_headers go with the request; a user-agent replaces panto's.",
            provider,
            config(provider, extra_body=extra,
                   extra_headers={"X-Trace-Id": "trace-1", "User-Agent": "my-app/2.0"}),
            dict(extra, stream=True), headers_contain={"x-trace-id": "trace-1",
                                                       "user-agent": "my-app/2.0"})
    out["req_refused_top_k_openai"] = refused(
        "A parameter the provider does not have is refused by name when the agent is made.",
        config("openai", top_k=5), "top_k is an Anthropic parameter: openai does not take it")
    out["req_refused_seed_anthropic"] = refused(
        "seed is OpenAI's: refused for Anthropic.",
        config("anthropic", seed=1), "seed is an OpenAI parameter: anthropic does not take it")
    out["req_refused_temperature_range_anthropic"] = refused(
        "Anthropic's temperature goes from 0 to 1.",
        config("anthropic", temperature=1.5), "temperature must be a number from 0 to 1 for anthropic")
    out["req_refused_extra_body_stream"] = refused(
        "extra_body may not overwrite a key panto writes (stream).",
        config("openai", extra_body={"stream": False}),
        "extra_body cannot set \"stream\": panto writes it (use its config key, if it has one)")
    out["req_refused_extra_body_messages"] = refused(
        "extra_body may not overwrite a key panto writes (messages).",
        config("anthropic", extra_body={"messages": []}),
        "extra_body cannot set \"messages\": panto writes it (use its config key, if it has one)")
    out["req_refused_extra_header_authorization"] = refused(
        "extra_headers may not set a header panto writes.",
        config("openai", extra_headers={"Authorization": "Bearer other"}),
        "extra_headers cannot set \"Authorization\": panto writes it")
    # set_config switching provider while a parameter of the first is set.
    case = {"description": "set_config that switches provider while an Anthropic-only parameter is "
                           "set is refused (nothing changes), unless the same call unsets it.",
            "config": config("anthropic", top_k=5),
            "turns": [{"set_config": {"provider": "openai", "model": "gpt-test"}},
                      {"set_config": {"provider": "openai", "model": "gpt-test", "top_k": None}},
                      "Hello"],
            "script": {"responses": [answer("openai", 1)]},
            "expect_requests": [request("openai", {"model": "gpt-test", "top_k": ABSENT})]}
    out["req_set_config_switch_provider"] = {"case": case, "expected": [
        {"event": "set_config", "code": "config",
         "message": "top_k is an Anthropic parameter: openai does not take it"},
        {"event": "set_config", "code": "ok"}] + text_turn("openai", 1) + [{"event": "done"}]}
    # The environment's base URL, and a missing key.
    for provider, variable in (("anthropic", "ANTHROPIC_BASE_URL"), ("openai", "OPENAI_BASE_URL")):
        case = {"description": f"Without base_url, {variable} is the endpoint (as the official SDKs "
                               "read it).",
                "config": config(provider, base_url=None),
                "env": {variable: "$BASE_URL"},
                "turns": ["Hello"], "script": {"responses": [answer(provider, 1)]},
                "expect_requests": [request(provider, {"model": MODEL[provider]})]}
        out[f"req_env_base_url_{provider}"] = {"case": case,
                                               "expected": text_turn(provider, 1) + [{"event": "done"}]}
    # A provider switch with both providers' variables set: the new provider's address (the
    # emulator by another name) and key, not the old one's.
    case = {"description": "With both providers' variables set, a set_config that switches "
                           "provider sends to the new provider's *_BASE_URL with its *_API_KEY: "
                           "the address and key that came from the old provider's variables do "
                           "not follow.",
            "config": {"provider": "anthropic", "model": MODEL["anthropic"], "base_url": None},
            "env": {"ANTHROPIC_BASE_URL": "$BASE_URL", "ANTHROPIC_API_KEY": "anthropic-env-key",
                    "OPENAI_BASE_URL": "http://localhost:$PORT/v1",
                    "OPENAI_API_KEY": "openai-env-key"},
            "turns": ["Hello", {"set_config": {"provider": "openai", "model": MODEL["openai"]}},
                      "Again"],
            "script": {"responses": [answer("anthropic", 1), answer("openai", 2, "Again.")]},
            "expect_requests": [
                request("anthropic", {"model": MODEL["anthropic"]},
                        headers_contain={"host": {"$prefix": "127.0.0.1:"},
                                         "x-api-key": "anthropic-env-key"},
                        headers_absent=["authorization"]),
                request("openai", {"model": MODEL["openai"]},
                        headers_contain={"host": {"$prefix": "localhost:"},
                                         "authorization": "Bearer openai-env-key"},
                        headers_absent=["x-api-key"])]}
    out["req_env_switch_provider"] = {"case": case, "expected": (
        text_turn("anthropic", 1) + [{"event": "done"}, {"event": "set_config", "code": "ok"}]
        + text_turn("openai", 2, "Again.") + [{"event": "done"}])}
    for provider, default, variable in (("anthropic", "https://api.anthropic.com", "ANTHROPIC_API_KEY"),
                                        ("openai", "https://api.openai.com/v1", "OPENAI_API_KEY")):
        message = f"no API key: set {variable} (or the config key api_key)"
        case = {"description": "A turn to the provider's public endpoint without an API key fails "
                               "before any request: an authentication error naming the variable "
                               "(sticky); nothing is sent.",
                "config": {"provider": provider, "model": MODEL[provider], "base_url": default},
                "turns": ["Hello"], "script": {"responses": []}, "expect_requests": []}
        out[f"req_missing_key_{provider}"] = {"case": case, "expected": [
            error_line("authentication", message, type_="authentication_error")] * 2}
    # A named tool_choice the agent may not use.
    for provider in ("anthropic", "openai"):
        lookup = dict(WEATHER, capabilities=["net"])
        message = {"$prefix": "tool_choice names the tool \"get_weather\""}
        case = {"description": "A named tool_choice whose tool the agent may not use (a capability "
                               "not granted) fails the turn at its first request with a config "
                               "error; nothing is sent.",
                "config": config(provider, tool_choice={"name": "get_weather"}),
                "tools": [lookup], "turns": ["Hello"], "script": {"responses": []},
                "expect_requests": []}
        out[f"req_tool_choice_unusable_{provider}"] = {"case": case, "expected": [
            error_line("config", message, type_="config_error")] * 2}
    # Per-turn options (the drivers' {"input", "options"} turn form).
    for provider in ("anthropic", "openai"):
        base = config(provider, temperature=0.2, system="Base prompt.", max_tokens=500)
        # ($text: a string, or text blocks, which prompt caching may mark)
        sys_key = {"system": {"$text": "Turn prompt."}} if provider == "anthropic" else {}
        limit = "max_tokens" if provider == "anthropic" else "max_completion_tokens"
        first = dict({"temperature": 0.9, limit: 64}, **sys_key)
        if provider == "openai":
            first["messages"] = [{"role": "system", "content": "Turn prompt."},
                                 {"role": "user", "content": {"$text": "Hello"}}]
        second = dict({"temperature": 0.2, limit: 500},
                      **({"system": {"$text": "Base prompt."}} if provider == "anthropic" else {}))
        case = {"description": "A turn's options (temperature, max_tokens, system) override the "
                               "configuration for that turn only; the next turn has the agent's "
                               "again.",
                "config": base,
                "turns": [{"input": "Hello", "options": {"temperature": 0.9, "max_tokens": 64,
                                                         "system": "Turn prompt."}},
                          "Again"],
                "script": {"responses": [answer(provider, 1), answer(provider, 2)]},
                "expect_requests": [request(provider, first), request(provider, second)]}
        out[f"req_turn_options_{provider}"] = {"case": case, "expected":
            text_turn(provider, 1) + [{"event": "done"}] + text_turn(provider, 2) + [{"event": "done"}]}
    # Pydantic's schemas as Python sends them (titles, "$defs" and "$ref", a bound): the core
    # writes them as each provider takes them (provider_schema.zig).
    def pydantic_schema(root: str) -> dict[str, Any]:
        return {"$defs": {"Passenger": {
                    "properties": {"name": {"title": "Name", "type": "string"},
                                   "age": {"minimum": 0, "title": "Age", "type": "integer"}},
                    "required": ["name", "age"], "title": "Passenger", "type": "object"}},
                "properties": {"passenger": {"$ref": "#/$defs/Passenger"}},
                "required": ["passenger"], "title": root, "type": "object"}

    def written(output: bool, anthropic: bool) -> dict[str, Any]:
        """The schema as sent: titles left out, refs kept; for a structured output objects
        closed, and for Anthropic's its refused bound moved into the description."""
        closed = {"additionalProperties": False} if output else {"additionalProperties": ABSENT}
        age = ({"type": "integer", "minimum": ABSENT, "title": ABSENT, "description": "{minimum: 0}"}
               if output and anthropic else {"type": "integer", "minimum": 0, "title": ABSENT})
        return {"$defs": {"Passenger": {
                    "properties": {"name": {"type": "string", "title": ABSENT}, "age": age},
                    "required": ["name", "age"], "title": ABSENT, "type": "object", **closed}},
                "properties": {"passenger": {"$ref": "#/$defs/Passenger"}},
                "required": ["passenger"], "title": ABSENT, "type": "object", **closed}

    booking = {"name": "book", "description": "Books a seat.",
               "input_schema": pydantic_schema("BookArgs"), "behavior": {"return": "Booked."}}
    response_format = {"type": "json_schema", "name": "ticket", "schema": pydantic_schema("Ticket")}
    out["req_schema_ref_anthropic"] = one_turn(
        "Anthropic: a tool's input schema and a json_schema response_format as Pydantic makes "
        "them (titles, $defs and $ref, a minimum) are sent as the API takes them: titles left "
        "out, refs kept; the structured output's objects closed and its minimum, which "
        "Anthropic's structured outputs refuse, moved into the description.",
        "anthropic", config("anthropic", response_format=response_format),
        {"tools": [{"name": "book", "input_schema": written(False, True)}],
         "output_config": {"format": {"type": "json_schema", "schema": written(True, True)}}},
        tools=[booking])
    out["req_schema_ref_openai"] = one_turn(
        "OpenAI: the same tool and response_format: titles left out, refs and the minimum "
        "kept; the structured output's objects closed, which makes it strict.",
        "openai", config("openai", response_format=response_format),
        {"tools": [{"type": "function", "function": {"name": "book", "parameters": written(False, False)}}],
         "response_format": {"type": "json_schema", "json_schema": {
             "name": "ticket", "schema": written(True, False), "strict": True}}},
        tools=[booking])
    # Pydantic's `class P(BaseModel): name: str = Field(min_length=1)` under `class T(BaseModel):
    # p: P = Field(description="The passenger."); tags: set[str]`: every property required.
    described = {"$defs": {"P": {"properties": {"name": {"minLength": 1, "title": "Name", "type": "string"}},
                                 "required": ["name"], "title": "P", "type": "object"}},
                 "properties": {"p": {"$ref": "#/$defs/P", "description": "The passenger."},
                                "tags": {"items": {"type": "string"}, "title": "Tags", "type": "array",
                                         "uniqueItems": True}},
                 "required": ["p", "tags"], "title": "T", "type": "object"}
    p_written = {"properties": {"name": {"minLength": 1, "type": "string", "title": ABSENT}},
                 "required": ["name"], "type": "object", "additionalProperties": False}
    out["req_schema_strict_openai"] = one_turn(
        "OpenAI's strict mode: a json_schema response_format with every property required is "
        "strict; a $ref with a sibling description, which strict mode refuses, is unravelled "
        "into the schema it names (as the openai SDK does), a set's uniqueItems, which it "
        "refuses, is moved into the description, and minLength, which it takes, is kept.",
        "openai", config("openai", response_format={"type": "json_schema", "name": "t", "schema": described}),
        {"response_format": {"type": "json_schema", "json_schema": {"name": "t", "strict": True, "schema": {
            "$defs": {"P": p_written},
            "properties": {"p": {**p_written, "$ref": ABSENT, "description": "The passenger."},
                           "tags": {"items": {"type": "string"}, "type": "array", "uniqueItems": ABSENT,
                                    "description": "{uniqueItems: true}", "title": ABSENT}},
            "required": ["p", "tags"], "type": "object", "additionalProperties": False, "title": ABSENT}}}})
    # Pydantic's `class Pair(BaseModel): pair: tuple[int, str]`.
    pair = {"properties": {"pair": {"maxItems": 2, "minItems": 2, "prefixItems": [{"type": "integer"}, {"type": "string"}],
                                    "title": "Pair", "type": "array"}},
            "required": ["pair"], "title": "Pair", "type": "object"}
    out["req_schema_not_strict_openai"] = one_turn(
        "OpenAI: a schema using a keyword strict mode refuses and that shapes the answer (a "
        "tuple's prefixItems; allOf, not, patternProperties, ... alike) is not strict: sent "
        "with strict false, the keyword kept.",
        "openai", config("openai", response_format={"type": "json_schema", "name": "pair", "schema": pair}),
        {"response_format": {"type": "json_schema", "json_schema": {"name": "pair", "strict": False, "schema": {
            "properties": {"pair": {"prefixItems": [{"type": "integer"}, {"type": "string"}], "minItems": 2,
                                    "maxItems": 2, "type": "array", "title": ABSENT}},
            "required": ["pair"], "type": "object", "additionalProperties": False}}}})
    # Pydantic's `class Node(BaseModel): value: int; kids: list[Node]`: a root $ref.
    tree = {"$defs": {"Node": {"properties": {"value": {"title": "Value", "type": "integer"},
                                              "kids": {"items": {"$ref": "#/$defs/Node"}, "title": "Kids", "type": "array"}},
                               "required": ["value", "kids"], "title": "Node", "type": "object"}},
            "$ref": "#/$defs/Node"}
    node_written = {"properties": {"value": {"type": "integer"}, "kids": {"items": {"$ref": "#/$defs/Node"}, "type": "array"}},
                    "required": ["value", "kids"], "type": "object", "additionalProperties": False}
    out["req_schema_recursive_openai"] = one_turn(
        "OpenAI's strict mode takes a recursive schema; the root $ref beside its $defs, which "
        "it refuses (the root must be an object), is unravelled, the inner $refs kept.",
        "openai", config("openai", response_format={"type": "json_schema", "name": "tree", "schema": tree}),
        {"response_format": {"type": "json_schema", "json_schema": {"name": "tree", "strict": True, "schema": {
            "$defs": {"Node": node_written}, **node_written, "$ref": ABSENT}}}})
    out["req_schema_recursive_anthropic"] = refused(
        "Anthropic's structured outputs refuse a recursive schema (the anthropic SDK sends it and "
        "the API answers 400): panto refuses it as a config error naming the $ref, nothing sent.",
        config("anthropic", response_format={"type": "json_schema", "name": "tree", "schema": tree}),
        "response_format.schema is recursive (\"$ref\": \"#/$defs/Node\" leads back into itself): "
        "Anthropic's structured outputs refuse a recursive schema")
    case = {"description": "A turn's options are refused like set_config (a parameter the provider "
                           "does not have): run fails with a config error and nothing is appended.",
            "config": config("openai"),
            "turns": [{"input": "Hello", "options": {"top_k": 3}}],
            "script": {"responses": []}, "expect_requests": []}
    out["req_turn_options_refused"] = {"case": case, "expected": [
        error_line("config", "top_k is an Anthropic parameter: openai does not take it")]}
    # Hosted tools (server_tools): first in tools, as given; the beta header a type needs.
    web_search = {"type": "web_search_20250305", "name": "web_search", "max_uses": 3,
                  "allowed_domains": ["ziglang.org"],
                  "user_location": {"type": "approximate", "city": "Paris", "country": "FR"}}
    web_fetch = {"type": "web_fetch_20250910", "name": "web_fetch", "max_uses": 2,
                 "citations": {"enabled": True}, "max_content_tokens": 5000}
    code = {"type": "code_execution_20250522", "name": "code_execution"}
    weather_sent = {"name": "get_weather", "cache_control": {"type": "ephemeral"}}
    case = {"description": "server_tools (Anthropic's hosted tools) are sent first in tools, each "
                           "object as given, before the agent's own tools (whose last keeps the "
                           "cache breakpoint); the beta header a type needs joins anthropic-beta "
                           "before the user's. A turn's options replace them for that turn (one "
                           "tool, no beta: the user's alone), or set them to null (no hosted "
                           "tool); the next turn has the agent's again.",
            "config": config("anthropic", server_tools=[web_search, web_fetch, code],
                             extra_headers={"anthropic-beta": "files-api-2025-04-14"}),
            "tools": [WEATHER],
            "turns": ["Hello", {"input": "Again", "options": {"server_tools": [web_search]}},
                      {"input": "More", "options": {"server_tools": None}}, "Last"],
            "script": {"responses": [answer("anthropic", n) for n in range(1, 5)]},
            "expect_requests": [
                request("anthropic", {"tools": [web_search, web_fetch, code, weather_sent]},
                        headers_contain={"anthropic-beta": "code-execution-2025-05-22,files-api-2025-04-14"}),
                request("anthropic", {"tools": [web_search, weather_sent]},
                        headers_contain={"anthropic-beta": "files-api-2025-04-14"}),
                request("anthropic", {"tools": [weather_sent]},
                        headers_contain={"anthropic-beta": "files-api-2025-04-14"}),
                request("anthropic", {"tools": [web_search, web_fetch, code, weather_sent]},
                        headers_contain={"anthropic-beta": "code-execution-2025-05-22,files-api-2025-04-14"})]}
    out["req_anthropic_server_tools"] = {"case": case, "expected": [
        line for n in range(1, 5) for line in text_turn("anthropic", n) + [{"event": "done"}]]}
    out["req_anthropic_server_tools_alone"] = one_turn(
        "server_tools without tools of the agent's own: tools holds the hosted tools alone (no "
        "cache breakpoint on them), a tool_choice may name one of them, and web search needs no "
        "beta header.",
        "anthropic", config("anthropic", server_tools=[web_search], tool_choice={"name": "web_search"}),
        {"tools": [web_search], "tool_choice": {"type": "tool", "name": "web_search"}},
        headers_absent=["anthropic-beta"])
    for provider in ("openai", "openai-responses", "gemini"):
        message = ("server_tools are Anthropic's hosted tools (web search, web fetch, code "
                   f"execution): provider {provider} cannot take them")
        cfg = {"provider": provider, "model": "gpt-test", "api_key": "test-key",
               "server_tools": [web_search]}
        out[f"req_refused_server_tools_{provider.replace('-', '_')}"] = refused(
            f"server_tools are refused by name for {provider}, which has no hosted tools panto "
            "can send.", cfg, message)
    case = {"description": "A turn's server_tools are refused for OpenAI like set_config: run fails "
                           "with a config error and nothing is appended.",
            "config": config("openai"),
            "turns": [{"input": "Hello", "options": {"server_tools": [web_search]}}],
            "script": {"responses": []}, "expect_requests": []}
    out["req_turn_server_tools_refused_openai"] = {"case": case, "expected": [error_line(
        "config", "server_tools are Anthropic's hosted tools (web search, web fetch, code "
                  "execution): provider openai cannot take them")]}
    case = {"description": "server_tools checks each tool: an object with a non-empty string type "
                           "and name.",
            "config": config("anthropic", server_tools=[{"type": "web_search_20250305"}]),
            "turns": ["Hello"], "script": {"responses": []}, "expect_requests": []}
    out["req_refused_server_tools_no_name"] = {"case": case, "expected": [error_line(
        "config", {"$prefix": "server_tools[0] needs \"name\""})]}
    # The MCP connector: hosted_mcp_servers as the body's mcp_servers, an mcp_toolset in tools,
    # its beta header.
    docs = {"type": "url", "url": "https://mcp.example.com/sse", "name": "docs",
            "authorization_token": "tok"}
    toolset = {"type": "mcp_toolset", "mcp_server_name": "docs",
               "default_config": {"enabled": False}, "configs": {"search_docs": {"enabled": True}}}
    case = {"description": "Anthropic's MCP connector: hosted_mcp_servers are sent in the body's "
                           "mcp_servers as given, "
                           "an mcp_toolset (mcp_server_name, no name) in tools with the other "
                           "hosted tools, and panto adds the mcp-client-2025-11-20 beta before the "
                           "user's. A turn whose anthropic-beta chose a version of the connector "
                           "(mcp-client-...) gets that one alone; a turn with neither key has no "
                           "mcp_servers and no beta.",
            "config": config("anthropic", server_tools=[toolset, web_search], hosted_mcp_servers=[docs],
                             extra_headers={"anthropic-beta": "files-api-2025-04-14"}),
            "tools": [WEATHER],
            "turns": ["Hello",
                      {"input": "Again", "options": {"extra_headers": {"anthropic-beta": "mcp-client-2025-04-04"}}},
                      {"input": "More", "options": {"server_tools": None, "hosted_mcp_servers": None}}],
            "script": {"responses": [answer("anthropic", n) for n in range(1, 4)]},
            "expect_requests": [
                request("anthropic", {"tools": [toolset, web_search, weather_sent], "mcp_servers": [docs]},
                        headers_contain={"anthropic-beta": "mcp-client-2025-11-20,files-api-2025-04-14"}),
                request("anthropic", {"tools": [toolset, web_search, weather_sent], "mcp_servers": [docs]},
                        headers_contain={"anthropic-beta": "mcp-client-2025-04-04"}),
                request("anthropic", {"tools": [weather_sent], "mcp_servers": ABSENT},
                        headers_contain={"anthropic-beta": "files-api-2025-04-14"})]}
    out["req_anthropic_mcp_connector"] = {"case": case, "expected": [
        line for n in range(1, 4) for line in text_turn("anthropic", n) + [{"event": "done"}]]}
    for provider in ("openai", "openai-responses", "gemini"):
        cfg = {"provider": provider, "model": "gpt-test", "api_key": "test-key", "hosted_mcp_servers": [docs]}
        out[f"req_refused_hosted_mcp_servers_{provider.replace('-', '_')}"] = refused(
            f"hosted_mcp_servers (Anthropic's MCP connector) are refused by name for {provider}.", cfg,
            f"hosted_mcp_servers are for Anthropic's MCP connector: provider {provider} cannot take them")
    case = {"description": "An mcp_toolset must name a server of hosted_mcp_servers (the API refuses it "
                           "otherwise): refused when the agent is made.",
            "config": config("anthropic", server_tools=[toolset]),
            "turns": ["Hello"], "script": {"responses": []}, "expect_requests": []}
    out["req_refused_mcp_toolset_unknown_server"] = {"case": case, "expected": [error_line(
        "config", "server_tools has an MCP toolset of the server \"docs\", which hosted_mcp_servers does not name")]}
    case = {"description": "A hosted tool named like one of the agent's tools (the API refuses "
                           "two tools of one name) fails the turn at its first request with a "
                           "config error naming it; nothing is sent.",
            "config": config("anthropic", server_tools=[dict(web_search, name="get_weather")]),
            "tools": [WEATHER], "turns": ["Hello"], "script": {"responses": []},
            "expect_requests": []}
    out["req_refused_server_tool_named_like_client_tool"] = {"case": case, "expected": [error_line(
        "config", "server_tools has a tool named \"get_weather\", like one of the agent's tools: "
                  "rename one of them", type_="config_error")] * 2}
    return out


def main() -> int:
    check = "--check" in sys.argv[1:]
    stale = []
    for name, data in cases().items():
        folder = CASES / name
        files = {"case.json": json.dumps(data["case"], indent=2, ensure_ascii=False) + "\n",
                 "expected.jsonl": "".join(json.dumps(line, ensure_ascii=False) + "\n"
                                           for line in data["expected"])}
        for file, text in files.items():
            path = folder / file
            if check:
                if not path.is_file() or path.read_text("utf-8") != text:
                    stale.append(str(path))
            else:
                folder.mkdir(parents=True, exist_ok=True)
                path.write_text(text, "utf-8")
    if stale:
        print("stale request cases (run make_request_cases.py):\n  " + "\n  ".join(stale))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
