"""Every request panto sends is one the official SDKs could have sent.

Each request body the provider emulator received is validated against the official SDKs' own
request types — `anthropic`'s `MessageCreateParamsStreaming` and `openai`'s
`CompletionCreateParamsStreaming` (TypedDicts), with pydantic's TypeAdapter, which both SDKs
depend on — strictly:

- unknown keys are refused at every level (TypedDicts allow extra keys by default: the
  adapter is built with `extra="forbid"`, which nested TypedDicts inherit), and the top-level
  keys are also checked against the keys the TypedDict declares; values are checked in
  strict mode (`"16384"` is not an integer);
- the SDKs declare `messages`, content blocks and tools as `Iterable[...]`, which pydantic
  validates lazily: every such iterator is consumed, so each element is validated;
- an element that validates only as one of the SDK's *response* models (the Anthropic SDK
  also accepts `TextBlock` & co. as input) is refused: the wire format is the `*Param` type;
- Anthropic's sampling parameters (temperature, top_p, top_k), which anthropic 1.0 took out of
  its types as deprecated while the API still takes them, are checked by their documented
  types and ranges (`AnthropicSampling`); the top-level keys a conformance case sets with the
  extra_body escape hatch are left out of the check (`_extra_body_keys`);
- plus the documented rules the types cannot express (`api_rule_problems`): no message with
  empty content (Anthropic: "all messages must have non-empty content except for the optional
  final assistant message"; OpenAI: an assistant message has content or tool_calls), and no
  empty Anthropic text block ("text content blocks must be non-empty", issue 27).

Where the requests come from:

- `test_conformance_requests`: the ones `tests/conformance/run.py` saved during its last run
  (`build/conformance-requests.jsonl`: every case, every language — retries, reopen, thinking
  levels, cancel, tools, recorded streams); skipped when there is no such file;
- `test_representative_turns`: turns this test runs itself through the Python binding against
  the Emulator, covering each feature (text, system prompt, history, tools and their results,
  error results, thinking at every level with its signature sent back, redacted thinking sent
  back, a canceled partial message, retries, reopen after set_config, OpenAI tool calls,
  reasoning_effort, refusals, images and PDFs in user turns and tool results: Anthropic image /
  document blocks and tool_result arrays, OpenAI content arrays with image_url and file parts and
  the synthetic user message after a round's tool messages, a provider or model switched
  between turns with thinking and odd tool-call ids, the summary request of a compaction by
  threshold and by hand, every request parameter of both providers with tools), so the check
  holds without a conformance run;
- `test_validator_refuses_mistakes`: the validator itself refuses bodies with a bogus key, a
  bad value or a wrong block, so a green run means something.
"""
from __future__ import annotations

import base64
import functools
import io
import json
import re
import threading
import typing
from pathlib import Path
from typing import Any, List, Union

import pydantic
import pytest
import typing_extensions
from anthropic.types import ContentBlockParam
from anthropic.types.beta import BetaContentBlockParam
from anthropic.types.beta.message_create_params import MessageCreateParamsStreaming as BetaMessageCreateParamsStreaming
from anthropic.types.message_create_params import MessageCreateParamsStreaming
from openai.types.chat.completion_create_params import CompletionCreateParamsStreaming
from openai.types.responses.response_create_params import ResponseCreateParamsStreaming

import panto
from panto.emulator import Emulator

REPO = Path(__file__).resolve().parents[2]
CONFORMANCE_LOG = REPO / "build" / "conformance-requests.jsonl"
RECORDED = REPO / "tests" / "fixtures" / "recorded"

PARAMS = {
    "anthropic": MessageCreateParamsStreaming,
    "openai": CompletionCreateParamsStreaming,
    "openai-responses": ResponseCreateParamsStreaming,
}
PATHS = {"/v1/messages": "anthropic", "/v1/chat/completions": "openai",
         "/v1/responses": "openai-responses"}
STRICT = pydantic.ConfigDict(extra="forbid", strict=True)
# A config on the TypedDict itself is refused by TypeAdapter; on a list of it, it applies to
# the TypedDict and to the ones nested in it.
ADAPTERS = {p: pydantic.TypeAdapter(List[t], config=STRICT) for p, t in PARAMS.items()}


# Anthropic's content block params alone: a block whose param type nests an Iterable (a
# web_search_tool_result's results) is matched first by its response model, a list being a
# closer match than an Iterable; it passes when it also validates as a param.
BLOCK_PARAM = pydantic.TypeAdapter(List[ContentBlockParam], config=STRICT)

# Keys of an Anthropic body that only the beta Messages API has (the MCP connector's servers):
# such a body is checked against the SDK's beta types, which also have the blocks that
# feature brings (mcp_tool_use, mcp_tool_result).
BETA_KEYS = frozenset({"mcp_servers"})
BETA_ADAPTER = pydantic.TypeAdapter(List[BetaMessageCreateParamsStreaming], config=STRICT)
# (Its block param union also admits the response models; the check wants the param types.)
BETA_BLOCK_PARAM = pydantic.TypeAdapter(
    List[Union[tuple(t for t in typing.get_args(BetaContentBlockParam)  # type: ignore[misc]
                     if typing_extensions.is_typeddict(t))]], config=STRICT)


def _consume(value: Any, where: str, problems: list[str], blocks: pydantic.TypeAdapter[Any] = BLOCK_PARAM) -> None:
    """Walks a validated value: consumes pydantic's lazy iterators (validating their elements)
    and refuses elements that matched a response model instead of a request param type
    (`blocks`: the param types)."""
    if isinstance(value, pydantic.BaseModel):
        raw = value.model_dump(mode="json", exclude_unset=True)
        try:
            as_param = blocks.validate_python([raw])
        except pydantic.ValidationError:
            as_param = None
        if as_param is None or isinstance(as_param[0], pydantic.BaseModel):
            problems.append(f"{where}: validates only as the response model "
                            f"{type(value).__name__}, not as a request param type")
            return
        _consume(as_param[0], where, problems, blocks)
    elif isinstance(value, dict):
        for k, v in value.items():
            _consume(v, f"{where}.{k}", problems, blocks)
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            _consume(v, f"{where}[{i}]", problems, blocks)
    elif isinstance(value, (str, bytes, int, float, bool)) or value is None:
        pass
    elif hasattr(value, "__next__"):
        try:
            items = list(value)
        except pydantic.ValidationError as e:
            problems.append(f"{where}: {_short(e)}")
            return
        for i, v in enumerate(items):
            _consume(v, f"{where}[{i}]", problems, blocks)
    else:
        problems.append(f"{where}: unexpected validated value of type {type(value).__name__}")


def _short(e: pydantic.ValidationError) -> str:
    errors = e.errors()
    # A union reports one error per member; the ones of the member the block's `type` names
    # are the informative ones, but all are kept short.
    shown = "; ".join(f"{'.'.join(map(str, err['loc']))}: {err['msg']}" for err in errors[:6])
    return f"{len(errors)} validation error(s): {shown}"


def api_rule_problems(provider: str, body: dict[str, Any]) -> list[str]:
    """The documented request rules the SDK types cannot express."""
    problems = []
    messages = body.get("messages")
    if not isinstance(messages, list):
        return problems
    for i, m in enumerate(messages):
        if not isinstance(m, dict):
            continue
        content = m.get("content")
        if provider == "anthropic":
            previous = messages[i - 1] if i > 0 else None
            if m.get("role") == "user" and isinstance(previous, dict) and previous.get("role") == "user":
                problems.append(f"messages[{i}]: a second user message in a row (Anthropic takes "
                                "alternating roles: consecutive user turns are one message, its "
                                "tool_result blocks first)")
            final_assistant = i == len(messages) - 1 and m.get("role") == "assistant"
            if content in ("", []) and not final_assistant:
                problems.append(f"messages[{i}] ({m.get('role')}): empty content (Anthropic: all "
                                "messages must have non-empty content except for the optional "
                                "final assistant message)")
            blocks = content if isinstance(content, list) else []
            kinds = [b.get("type") for b in blocks if isinstance(b, dict)]
            if "tool_result" in kinds and kinds.index("tool_result") != 0 or \
                    any(a != "tool_result" and b == "tool_result" for a, b in zip(kinds, kinds[1:])):
                problems.append(f"messages[{i}]: a tool_result block after another block (Anthropic: "
                                "tool_result blocks come first in a user message)")
            nested = [p for b in blocks if isinstance(b, dict) and isinstance(b.get("content"), list)
                      for p in b["content"]]
            if any(isinstance(b, dict) and b.get("type") == "text" and b.get("text") == ""
                   for b in blocks + nested):
                problems.append(f"messages[{i}]: an empty text block (Anthropic: \"text content "
                                "blocks must be non-empty\")")
        elif m.get("role") == "assistant" and content in (None, "", []) and not m.get("tool_calls"):
            problems.append(f"messages[{i}] (assistant): neither content nor tool_calls")
        for where, call_id in _tool_ids(m):
            if not isinstance(call_id, str) or not TOOL_ID.fullmatch(call_id):
                problems.append(f"messages[{i}]{where}: tool-call id {call_id!r} is not 1 to 40 of "
                                "[a-zA-Z0-9_-] (Anthropic's pattern; OpenAI's longest)")
    return problems


# The tool-call ids both APIs take (Anthropic: ^[a-zA-Z0-9_-]+$, OpenAI: at most 40 characters).
TOOL_ID = re.compile(r"[a-zA-Z0-9_-]{1,40}")


def _tool_ids(message: dict[str, Any]) -> list[tuple[str, Any]]:
    """(where, id) of every tool call and result id in a message of either provider."""
    ids = [(f".tool_calls[{k}].id", c.get("id")) for k, c in enumerate(message.get("tool_calls") or [])
           if isinstance(c, dict)]
    if "tool_call_id" in message:
        ids.append((".tool_call_id", message["tool_call_id"]))
    content = message.get("content")
    for k, b in enumerate(content if isinstance(content, list) else []):
        if isinstance(b, dict) and b.get("type") == "tool_use":
            ids.append((f".content[{k}].id", b.get("id")))
        elif isinstance(b, dict) and b.get("type") == "tool_result":
            ids.append((f".content[{k}].tool_use_id", b.get("tool_use_id")))
    return ids


class AnthropicSampling(typing_extensions.TypedDict, total=False):
    """Anthropic's sampling parameters, which the SDK's types no longer declare: anthropic 1.0
    removed them from `messages.create` as deprecated (its MIGRATION.md, "Removed deprecated
    request parameters": pass them through `extra_body`), while the API still takes them on the
    models that support sampling (docs/requests.md). Checked here as the API documents them."""

    temperature: float
    top_p: float
    top_k: int


SAMPLING = pydantic.TypeAdapter(List[AnthropicSampling], config=STRICT)  # (see ADAPTERS)
SAMPLING_RANGES = {"temperature": (0, 1), "top_p": (0, 1), "top_k": (1, None)}


def _sampling_problems(body: dict[str, Any]) -> list[str]:
    """Checks and takes Anthropic's deprecated sampling keys out of `body`."""
    given = {k: body.pop(k) for k in list(body) if k in SAMPLING_RANGES}
    try:
        SAMPLING.validate_python([given])
    except pydantic.ValidationError as e:
        return [_short(e)]
    problems = []
    for key, value in given.items():
        low, high = SAMPLING_RANGES[key]
        if value < low or (high is not None and value > high):
            problems.append(f"{key} {value} is out of its range")
    return problems


def validate_request(provider: str, body: Any, extra_body: frozenset[str] = frozenset()) -> list[str]:
    """What is wrong with a request body as the provider's SDK type sees it ([] when fine).
    `extra_body`: top-level keys the case set with the extra_body escape hatch, which the SDK
    types need not declare (they are left out of the check)."""
    if not isinstance(body, dict):
        return [f"the body is not a JSON object: {str(body)[:200]}"]
    body = {k: v for k, v in body.items() if k not in extra_body}
    extension_problems, body = _without_reasoning_content(provider, body)
    sampling = _sampling_problems(body) if provider == "anthropic" else []
    beta = provider == "anthropic" and bool(BETA_KEYS & set(body))
    params = BetaMessageCreateParamsStreaming if beta else PARAMS[provider]
    declared = set(typing.get_type_hints(params))
    problems = [f"top-level key {k!r} is not declared by {params.__name__}"
                for k in body if k not in declared]
    problems += extension_problems + sampling + api_rule_problems(provider, body)
    try:
        validated = (BETA_ADAPTER if beta else ADAPTERS[provider]).validate_python([body])
    except pydantic.ValidationError as e:
        return problems + [_short(e)]
    _consume(validated[0], "body", problems, BETA_BLOCK_PARAM if beta else BLOCK_PARAM)
    return problems


def _without_reasoning_content(provider: str, body: dict[str, Any]) -> tuple[list[str], dict[str, Any]]:
    """Chat Completions bodies: the reasoning that servers want back on assistant messages with
    tool calls and the SDK's types do not declare (docs/conversations.md), taken out before the
    SDK's check: DeepSeek's `reasoning_content`, a non-empty string, and OpenRouter's
    `reasoning_details`, a non-empty list of its documented elements; only on such a message."""
    messages = body.get("messages")
    if provider != "openai" or not isinstance(messages, list):
        return [], body
    problems: list[str] = []
    kept = []
    for i, m in enumerate(messages):
        for key in ("reasoning_content", "reasoning_details"):
            if not isinstance(m, dict) or key not in m:
                continue
            value = m[key]
            if m.get("role") != "assistant" or not m.get("tool_calls"):
                problems.append(f"messages[{i}]: {key} on a message without tool calls")
            if key == "reasoning_content" and (not isinstance(value, str) or not value):
                problems.append(f"messages[{i}]: reasoning_content is not a non-empty string")
            if key == "reasoning_details":
                problems += _reasoning_details_problems(f"messages[{i}].reasoning_details", value)
            m = {k: v for k, v in m.items() if k != key}
        kept.append(m)
    return problems, dict(body, messages=kept)


# OpenRouter's reasoning_details elements (its docs, "Reasoning Tokens": reasoning_details
# types): each type's own members, besides `type` and the optional `id`, `format`, `index`.
REASONING_DETAIL_MEMBERS = {
    "reasoning.text": {"text", "signature"},
    "reasoning.summary": {"summary"},
    "reasoning.encrypted": {"data"},
}


def _reasoning_details_problems(where: str, value: Any) -> list[str]:
    if not isinstance(value, list) or not value:
        return [f"{where} is not a non-empty list"]
    problems = []
    for n, e in enumerate(value):
        kind = e.get("type") if isinstance(e, dict) else None
        if kind not in REASONING_DETAIL_MEMBERS:
            problems.append(f"{where}[{n}]: not an element of a type OpenRouter documents")
            continue
        for k, v in e.items():
            if k == "index":
                ok = isinstance(v, int) and not isinstance(v, bool) and v >= 0
            elif k in REASONING_DETAIL_MEMBERS[kind] | {"type", "format"}:
                ok = isinstance(v, str)
            elif k == "id":
                ok = v is None or isinstance(v, str)
            else:
                ok = False
            if not ok:
                problems.append(f"{where}[{n}]: {k!r} is not a member of {kind} or not its type")
    return problems


def validate_log(entries: list[dict[str, Any]]) -> list[str]:
    """Problems of every provider request of a request log, each naming where it came from."""
    problems = []
    for n, entry in enumerate(entries):
        provider = PATHS.get(str(entry.get("path", "")).split("?")[0])
        if provider is None or entry.get("method") != "POST":
            continue
        if entry.get("body") is None:
            continue  # never read: the client gave up while writing it (keep_alive_cancel_*)
        tag = f"{entry.get('case', 'request')} [{entry.get('lang', 'python')}] #{n}"
        extra = _extra_body_keys(str(entry.get("case", "")))
        problems += [f"{tag}: {p}" for p in validate_request(provider, entry.get("body"), extra)]
    return problems


CASES = REPO / "tests" / "conformance" / "cases"


@functools.lru_cache(maxsize=None)
def _extra_body_keys(case: str) -> frozenset[str]:
    """The extra_body keys a conformance case sets, in its config or a turn's options."""
    path = CASES / case / "case.json"
    if not case or not path.is_file():
        return frozenset()
    data = json.loads(path.read_text("utf-8"))
    objects = [data.get("config", {})] + [t.get("options", {}) for t in data.get("turns", [])
                                          if isinstance(t, dict)]
    objects += [t["set_config"] for t in data.get("turns", []) if isinstance(t, dict) and "set_config" in t]
    return frozenset(k for o in objects if isinstance(o, dict)
                     for k in (o.get("extra_body") or {}))


# ---- The requests of the last conformance run ---------------------------------------------


def test_conformance_requests() -> None:
    if not CONFORMANCE_LOG.is_file():
        pytest.skip("no conformance run yet (tests/conformance/run.py writes "
                    "build/conformance-requests.jsonl); test_representative_turns covers this")
    # Cut at LF only: a request's text may hold U+2028 and the like as they are.
    entries = [json.loads(line) for line in CONFORMANCE_LOG.read_text("utf-8").split("\n")
               if line.strip()]
    providers = {PATHS.get(e.get("path")) for e in entries}
    assert entries, "the conformance run saved no request"
    problems = validate_log(entries)
    assert not problems, "\n".join(problems[:40]) + f"\n({len(problems)} problem(s))"
    # The providers' requests were seen (a run restricted with -k may lack some: fine then;
    # one restricted to gemini or bedrock cases has only requests test_request_fidelity_gemini
    # or test_request_fidelity_bedrock checks).
    assert providers & set(PARAMS) or all(":streamGenerateContent" in str(e.get("path"))
                                          or str(e.get("path")).endswith("/converse-stream")
                                          for e in entries)


# ---- Representative turns, run here --------------------------------------------------------


def _text(text: str, deltas: list[str] | None = None) -> dict[str, Any]:
    return {"type": "text", "text": text, "deltas": deltas or [text]}


def _answer(*blocks: dict[str, Any], **more: Any) -> dict[str, Any]:
    return {"message": {"content": list(blocks), "usage": {"input_tokens": 5, "output_tokens": 3},
                        **more}}


WEATHER = panto.Tool(
    name="get_weather", description="Current weather for a city.",
    input_schema={"type": "object", "properties": {"city": {"type": "string"}},
                  "required": ["city"]},
    handler=lambda city: f"Sunny in {city}",
)
def _fail() -> str:
    raise RuntimeError("no such entry")


def _png() -> bytes:
    from PIL import Image  # test-only (requirements-dev.txt)

    out = io.BytesIO()
    Image.new("RGB", (6, 4), (200, 10, 10)).save(out, "PNG")
    return out.getvalue()


PNG = _png()
PDF = b"%PDF-1.4\n1 0 obj\n<< /Type /Catalog >>\nendobj\ntrailer\n<< /Root 1 0 R >>\n%%EOF\n"
SCREENSHOT = panto.Tool(
    name="screenshot", description="Takes a screenshot and attaches a report.",
    input_schema={"type": "object", "properties": {}},
    handler=lambda: ["Two files.", panto.Image(PNG), panto.Document(PDF, name="report.pdf")],
)
MEDIA_TURN = ["Describe these", panto.Image(PNG), panto.Document(PDF, name="spec.pdf"),
              panto.Document(PDF), panto.Media(b"not media")]


FAILING = panto.Tool(
    name="lookup", description="Always fails.",
    input_schema={"type": "object", "properties": {}}, handler=_fail,
)


def _run_turns(emu: Emulator, config: dict[str, Any], turns: list[Any],
               scenario: dict[str, Any], tools: list[Any] = (),
               cancel_after_s: float | None = None,
               on_error: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """Runs the turns on one agent against the scenario; returns the emulator's requests.
    A turn may fail (some scenarios fail on purpose); the requests are what matters here."""
    emu.load(scenario, base_dir=REPO)
    agent = panto.Agent.from_config(dict(config, base_url=emu.url, api_key="test-key"),
                                    tools=list(tools))
    with agent:
        for i, text in enumerate(turns):
            if isinstance(text, dict):  # a step between turns: {"set_config": {...}} or {"compact": True}
                if "set_config" in text:
                    agent.set_config(**text["set_config"])
                else:
                    with agent.compact() as compacting:
                        for _ in compacting:
                            pass
                continue
            stream = agent.run(text)
            timer = None
            if cancel_after_s is not None and i == 0:
                timer = threading.Timer(cancel_after_s, stream.cancel)
                timer.start()
            try:
                for _ in stream:
                    pass
            except panto.Error:
                if on_error is not None:
                    agent.set_config(**on_error)
                    for _ in stream.reopen():
                        pass
            finally:
                if timer is not None:
                    timer.cancel()
                stream.close()
    return emu.requests()


A = {"provider": "anthropic", "model": "claude-test"}
O = {"provider": "openai", "model": "gpt-test"}
OUTPUT_SCHEMA = {"type": "json_schema", "name": "weather", "schema": {
    "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"],
    "additionalProperties": False}}
FAST_RETRY = {"retry": {"initial_delay_ms": 0}}

# (name, config, turns, scenario, tools, options, covers): `covers` are texts the requests'
# bodies (as json.dumps writes them) must hold, so that each scenario really sends the feature
# it is meant to cover and its validation is not vacuous.
SCENARIOS: list[tuple[str, dict[str, Any], list[Any], dict[str, Any], list[Any], dict[str, Any],
                      list[str]]] = [
    ("anthropic_media_user_turn", dict(A), [MEDIA_TURN, "And now?"],
     {"responses": [_answer(_text("Seen.")), _answer(_text("Still."))]}, [], {},
     ['"type": "image"', '"type": "document"', '"title": "spec.pdf"', '"media_type": "image/png"',
      '"media_type": "application/pdf"', "dropped"]),
    ("anthropic_media_tool_result", dict(A), ["Screenshot?"],
     {"responses": [
         _answer({"type": "tool_use", "id": "toolu_m", "name": "screenshot", "input": {}},
                 {"type": "tool_use", "id": "toolu_w", "name": "get_weather", "input": {"city": "Oslo"}}),
         _answer(_text("Got it."))]}, [SCREENSHOT, WEATHER], {},
     ['"tool_result"', '"type": "image"', '"title": "report.pdf"', "Two files.", "Sunny in Oslo"]),
    ("openai_media_user_turn", dict(O), [MEDIA_TURN, "And now?"],
     {"responses": [_answer(_text("Seen.")), _answer(_text("Still."))]}, [], {},
     ['"image_url"', '"url": "data:image/png;base64,', '"file_data": "data:application/pdf;base64,',
      '"filename": "spec.pdf"', '"filename": "document.pdf"', "dropped"]),
    ("openai_media_tool_result", dict(O), ["Screenshot?", "Thanks"],
     {"responses": [
         _answer({"type": "tool_use", "id": "call_m", "name": "screenshot", "input": {}},
                 {"type": "tool_use", "id": "call_w", "name": "get_weather", "input": {"city": "Oslo"}}),
         _answer(_text("Got it.")), _answer(_text("Welcome."))]}, [SCREENSHOT, WEATHER], {},
     ['"role": "tool"', "Attachments of tool result call_m:", '"image_url"', '"filename": "report.pdf"',
      "[attachment 1: image/png, in the next user message]", "Sunny in Oslo"]),
    ("anthropic_text_history", dict(A, system="Be brief.", max_tokens=300), ["Hi", "More"],
     {"responses": [_answer(_text("Hello.")), _answer(_text("More."))]}, [], {},
     # (the system prompt is a block: it carries the cache breakpoint of mode auto)
     ['"text": "Be brief."', '"cache_control": {"type": "ephemeral"}', '"role": "assistant"']),
    ("anthropic_cache_ttl_tool_round", dict(A, system="Be brief.", cache={"ttl": "1h"}), ["Weather?"],
     {"responses": [
         _answer({"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}}),
         _answer(_text("Sunny."))]}, [WEATHER], {},
     ['"cache_control": {"type": "ephemeral", "ttl": "1h"}', '"tool_result"']),
    ("anthropic_cache_off", dict(A, system="Be brief.", cache={"mode": "off"}), ["Hi"],
     {"responses": [_answer(_text("Hello."))]}, [], {}, ['"system": "Be brief."']),
    ("anthropic_output_json_schema", dict(A, response_format=OUTPUT_SCHEMA), ["Weather as JSON?"],
     {"responses": [_answer(_text('{"city": "Paris"}'))]}, [], {},
     ['"output_config": {"format": {"type": "json_schema", "schema": {']),
    ("openai_output_json_schema_cache_key", dict(O, response_format=OUTPUT_SCHEMA,
                                                 cache={"key": "user-42", "retention": "24h"}),
     ["Weather as JSON?"], {"responses": [_answer(_text('{"city": "Paris"}'))]}, [], {},
     ['"response_format": {"type": "json_schema", "json_schema": {"name": "weather"',
      '"prompt_cache_key": "user-42"', '"prompt_cache_retention": "24h"']),
    ("openai_output_json_object", dict(O, response_format={"type": "json_object"}), ["JSON?"],
     {"responses": [_answer(_text("{}"))]}, [], {}, ['"response_format": {"type": "json_object"}']),
    ("anthropic_tools", dict(A), ["Weather?"],
     {"responses": [
         _answer({"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}},
                 {"type": "tool_use", "id": "toolu_2", "name": "lookup", "input": {}}),
         _answer(_text("Done."))]}, [WEATHER, FAILING], {},
     ['"input_schema"', '"tool_use"', '"tool_result"', '"is_error": true', "Sunny in Paris"]),
    *[(f"anthropic_thinking_{level}", dict(A, thinking=level), ["Think"],
       {"responses": [_answer(_text("Ok."))]}, [], {},
       [f'"budget_tokens": {budget}'] if budget else [])
      for level, budget in (("off", 0), ("minimal", 1024), ("low", 2048), ("medium", 8192),
                            ("high", 16384))],
    ("anthropic_thinking_signature_back", dict(A, thinking="high"), ["Think", "Again"],
     {"responses": [
         _answer({"type": "thinking", "thinking": "Hmm.", "signature": "sig-1"}, _text("Yes.")),
         _answer(_text("Still yes."))]}, [], {}, ['"signature": "sig-1"']),
    ("anthropic_thinking_then_tool", dict(A, thinking="low"), ["Weather?"],
     {"responses": [
         _answer({"type": "thinking", "thinking": "Need a tool.", "signature": "sig-2"},
                 {"type": "tool_use", "id": "toolu_3", "name": "get_weather", "input": {"city": "Oslo"}}),
         _answer(_text("Cold."))]}, [WEATHER], {}, ['"signature": "sig-2"', '"tool_result"']),
    ("anthropic_redacted_thinking_back", dict(A, thinking="medium"), ["Hi", "Again"],
     {"responses": [{"replay": str(RECORDED / "anthropic" / "redacted_thinking.sse")},
                    _answer(_text("Again."))]}, [], {}, ['"type": "redacted_thinking"']),
    ("anthropic_canceled_partial", dict(A), ["Hi", "Again"],
     {"responses": [
         {"body": "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_c\","
                  "\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-test\",\"content\":[],"
                  "\"stop_reason\":null,\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}}\n\n"
                  "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,"
                  "\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"
                  "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,"
                  "\"delta\":{\"type\":\"text_delta\",\"text\":\"Partial\"}}\n\n",
          "fault": {"after_bytes": 100000, "kind": "stall"}},
         _answer(_text("Whole."))]}, [], {"cancel_after_s": 0.3}, ['"text": "Partial"']),
    ("anthropic_retry_and_reopen", dict(A, thinking="high", **FAST_RETRY), ["Hi"],
     {"responses": [
         {"error": {"type": "overloaded_error", "message": "Overloaded"}},
         {"error": {"type": "invalid_request_error", "message": "no thinking here"}},
         _answer(_text("Fine."))]}, [], {"on_error": {"thinking": "off"}}, ['"budget_tokens": 16384']),
    ("openai_text_history", dict(O, system="Be brief.", max_tokens=300), ["Hi", "More"],
     {"responses": [_answer(_text("Hello.")), _answer(_text("More."))]}, [], {},
     ['"role": "system"', '"role": "assistant"', '"include_usage": true']),
    ("openai_tools", dict(O), ["Weather?"],
     {"responses": [
         _answer(_text("Let me see."),
                 {"type": "tool_use", "id": "call_1", "name": "get_weather", "input": {"city": "Rome"}},
                 {"type": "tool_use", "id": "call_2", "name": "lookup", "input": {}}),
         _answer(_text("Warm."))]}, [WEATHER, FAILING], {},
     ['"parameters"', '"tool_calls"', '"role": "tool"', "Sunny in Rome"]),
    *[(f"openai_reasoning_{level}", dict(O, thinking=level), ["Think"],
       {"responses": [_answer(_text("Ok."))]}, [], {},
       [f'"reasoning_effort": "{level}"'] if level != "off" else [])
      for level in ("off", "minimal", "low", "medium", "high")],
    ("openai_refusal_back", dict(O), ["Do it", "Please"],
     {"responses": [{"replay": str(RECORDED / "openai" / "refusal.sse")}, _answer(_text("Ok."))]},
     [], {}, ["I'm sorry, I can't assist with that request."]),
    ("openai_canceled_partial", dict(O), ["Hi", "Again"],
     {"responses": [
         {"body": 'data: {"id":"chatcmpl-c","object":"chat.completion.chunk","created":1,'
                  '"model":"gpt-test","choices":[{"index":0,"delta":{"role":"assistant",'
                  '"content":""},"finish_reason":null}]}\n\n'
                  'data: {"id":"chatcmpl-c","object":"chat.completion.chunk","created":1,'
                  '"model":"gpt-test","choices":[{"index":0,"delta":{"content":"Partial "},'
                  '"finish_reason":null}]}\n\n',
          "fault": {"after_bytes": 100000, "kind": "stall"}},
         _answer(_text("Whole."))]}, [], {"cancel_after_s": 0.3}, ['"Partial "']),
]

# The request parameters (issue 17): every one each provider takes, with tools (tool_choice,
# parallel tool calls) and the escape hatch's keys the SDK types declare.
REQUEST_PARAMS = [
    ("anthropic_request_params",
     dict(A, temperature=0.3, top_p=0.9, top_k=40, stop=["END"], user="user-1",
          service_tier="auto", tool_choice="required", parallel_tool_calls=False,
          thinking={"budget_tokens": 2048}, extra_body={"speed": "fast"}),
     ["Weather?"], {"responses": [_answer(_text("Sunny."))]}, [WEATHER], {},
     ['"top_k": 40', '"stop_sequences": ["END"]', '"user_id": "user-1"',
      '"disable_parallel_tool_use": true', '"budget_tokens": 2048', '"speed": "fast"']),
    ("anthropic_tool_choice_named", dict(A, tool_choice={"name": "get_weather"}), ["Weather?"],
     {"responses": [_answer(_text("Sunny."))]}, [WEATHER], {}, ['"type": "tool"']),
    ("openai_request_params",
     dict(O, temperature=1.2, top_p=0.9, stop=["END", "STOP"], seed=3, presence_penalty=0.5,
          frequency_penalty=-0.5, metadata={"team": "a"}, user="user-1", service_tier="default",
          tool_choice={"name": "get_weather"}, parallel_tool_calls=False,
          reasoning_effort="low", extra_body={"verbosity": "low"}),
     ["Weather?"], {"responses": [_answer(_text("Sunny."))]}, [WEATHER], {},
     ['"seed": 3', '"stop": ["END", "STOP"]', '"parallel_tool_calls": false',
      '"function": {"name": "get_weather"}', '"verbosity": "low"', '"reasoning_effort": "low"']),
    ("openai_tool_choice_required", dict(O, tool_choice="required"), ["Weather?"],
     {"responses": [_answer(_text("Sunny."))]}, [WEATHER], {}, ['"tool_choice": "required"']),
]
SCENARIOS += REQUEST_PARAMS

# Conversations that last (issue 16): a conversation written for another provider or model
# than the one that made it (thinking left out, tool-call ids rewritten), and the summary
# request of a compaction (by threshold and by hand).
ODD_ID_CALL = _answer({"type": "thinking", "thinking": "Weather first.", "signature": "sig-s"},
                      {"type": "tool_use", "id": "toolu.odd:1", "name": "get_weather",
                       "input": {"city": "Oslo"}})
LONG_ID_CALL = _answer({"type": "thinking", "thinking": "Again."},
                       {"type": "tool_use", "id": "call_" + "x" * 41, "name": "get_weather",
                        "input": {"city": "Rome"}})
TO_OPENAI = {"set_config": {"provider": "openai", "model": "gpt-test", "thinking": "low"}}
TO_ANTHROPIC = {"set_config": {"provider": "anthropic", "model": "claude-test", "thinking": "low"}}
COMPACTION = {"compaction": {"enabled": True, "context_window": 1000, "reserve_tokens": 100,
                             "keep_recent_tokens": 6}}
BIG_ANSWER = {"message": {"content": [_text("Once upon a time")],
                          "usage": {"input_tokens": 950, "output_tokens": 30}}}
SWITCHES = [
    ("switch_anthropic_openai_anthropic", dict(A, thinking="low"),
     ["Weather?", TO_OPENAI, "And Rome?", TO_ANTHROPIC, "Thanks", {"set_config": {"model": "claude-other"}},
      "Bye"],
     {"responses": [ODD_ID_CALL, _answer(_text("Cold.")), LONG_ID_CALL, _answer(_text("Warm.")),
                    _answer(_text("Welcome.")), _answer(_text("Bye."))]}, [WEATHER], {},
     ['"tool_call_id": "call_', '"signature": "sig-s"', '"model": "claude-other"']),
    ("switch_openai_anthropic", dict(O, thinking="low"), ["Weather?", TO_ANTHROPIC, "And Rome?"],
     {"responses": [LONG_ID_CALL, _answer(_text("Warm.")), _answer(_text("Sure."))]}, [WEATHER], {},
     ['"tool_use_id": "call_', '"reasoning_effort": "low"']),
    *[(f"{name}_compaction_threshold", dict(config, **COMPACTION), ["Tell me a story.", "And then what???"],
       {"responses": [BIG_ANSWER, _answer(_text("A story was asked for.")), _answer(_text("The end."))]},
       [], {}, ["<conversation>", "summarized"])
      for name, config in (("anthropic", A), ("openai", O))],
    *[(f"{name}_compaction_manual", dict(config, compaction={"keep_recent_tokens": 1}),
       ["Tell me a story.", "And then what???", {"compact": True}, "Go on."],
       {"responses": [_answer(_text("Once upon a time")), _answer(_text("There was a dragon")),
                      _answer(_text("A story was asked for.")), _answer(_text("The end."))]},
       [], {}, ["<conversation>", "summarized"])
      for name, config in (("anthropic", A), ("openai", O))],
]
SCENARIOS += SWITCHES

# The Responses API (issue 29): media, reasoning items sent back across a tool round with media
# in its results, every request parameter it takes, and a switch away and back (its reasoning
# then left out, as another model's).
R = {"provider": "openai-responses", "model": "gpt-test"}
REASONING_CALL = _answer({"type": "thinking", "thinking": "Look first.", "signature": "enc-r"},
                         {"type": "tool_use", "id": "call_r", "name": "screenshot", "input": {}},
                         {"type": "tool_use", "id": "call_w", "name": "get_weather",
                          "input": {"city": "Oslo"}})
RESPONSES = [
    ("responses_media_reasoning_tool_round", dict(R, thinking="low", system="Be brief."),
     [MEDIA_TURN, "And now?"],
     {"responses": [REASONING_CALL, _answer(_text("Seen.")), _answer(_text("Still."))]},
     [SCREENSHOT, WEATHER], {},
     ['"type": "input_image"', '"type": "input_file"', '"filename": "spec.pdf"',
      '"encrypted_content": "enc-r"', '"type": "function_call_output"', "Sunny in Oslo",
      '"summary": "auto"', '"instructions": "Be brief."']),
    ("responses_request_params",
     dict(R, temperature=1.2, top_p=0.9, metadata={"team": "a"}, user="user-1",
          service_tier="flex", tool_choice={"name": "get_weather"}, parallel_tool_calls=False,
          reasoning_effort="low", cache={"key": "k-1", "retention": "24h"},
          response_format={"type": "json_schema", "name": "weather",
                           "schema": {"type": "object", "properties": {"t": {"type": "number"}},
                                      "required": ["t"], "additionalProperties": False}},
          extra_body={"truncation": "auto"}),
     ["Weather?"], {"responses": [_answer(_text('{"t": 3}'))]}, [WEATHER], {},
     ['"parallel_tool_calls": false', '"name": "get_weather"}', '"effort": "low"',
      '"prompt_cache_key": "k-1"', '"strict": true', '"truncation": "auto"']),
    ("switch_responses_anthropic_responses", dict(R, thinking="low"),
     ["Weather?", TO_ANTHROPIC, "And Rome?", {"set_config": dict(R, thinking="low")}, "Thanks"],
     {"responses": [ODD_ID_CALL, _answer(_text("Cold.")), _answer(_text("Warm.")),
                    _answer(_text("Welcome."))]}, [WEATHER], {},
     ['"type": "function_call"', '"call_id": "call_', '"encrypted_content": "sig-s"']),
]
SCENARIOS += RESPONSES


# A turn canceled after MESSAGE_START, before any content, must leave no empty assistant
# message: the next request would carry it (Anthropic `"content": []`, OpenAI `"content": null`
# without tool_calls) and the live APIs refuse it.
EMPTY_PARTIAL = [
    (f"{provider}_canceled_before_content", dict(config), ["Hi", "Again"],
     {"responses": [{"message": {"content": [_text("Late answer")]}, "chunk_delay_ms": 3000},
                    _answer(_text("Whole."))]}, [], {"cancel_after_s": 0.5}, [])
    for provider, config in (("anthropic", A), ("openai", O))
]


@pytest.fixture(scope="module")
def emulator():
    with Emulator() as emu:
        yield emu


@pytest.mark.parametrize("name,config,turns,scenario,tools,options,covers", SCENARIOS,
                         ids=[s[0] for s in SCENARIOS])
def test_representative_turns(emulator: Emulator, name: str, config: dict[str, Any],
                              turns: list[str], scenario: dict[str, Any], tools: list[Any],
                              options: dict[str, Any], covers: list[str]) -> None:
    requests = _run_turns(emulator, config, turns, scenario, tools, **options)
    # Every turn reached the provider (a tool round or a retry makes more requests).
    assert len(requests) >= len([t for t in turns if not isinstance(t, dict)]), requests
    dump = json.dumps([r["body"] for r in requests], ensure_ascii=False)
    for text in covers:
        assert text in dump, f"{name}: the requests do not hold {text}"
    problems = validate_log([dict(r, case=name) for r in requests])
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("name,config,turns,scenario,tools,options,covers", EMPTY_PARTIAL,
                         ids=[s[0] for s in EMPTY_PARTIAL])
def test_canceled_before_content(emulator: Emulator, name: str, config: dict[str, Any],
                                 turns: list[str], scenario: dict[str, Any], tools: list[Any],
                                 options: dict[str, Any], covers: list[str]) -> None:
    requests = _run_turns(emulator, config, turns, scenario, tools, **options)
    assert len(requests) == 2, requests
    problems = validate_log([dict(r, case=name) for r in requests])
    assert not problems, "\n".join(problems)


# ---- The validator catches mistakes ----------------------------------------------------------


GOOD_ANTHROPIC = {
    "model": "claude-test", "max_tokens": 20480, "stream": True, "system": "Be brief.",
    "thinking": {"type": "enabled", "budget_tokens": 16384},
    "tools": [{"name": "get_weather", "description": "d",
               "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}}}],
    "messages": [
        {"role": "user", "content": [{"type": "text", "text": "Hi"}]},
        {"role": "assistant", "content": [
            {"type": "thinking", "thinking": "Hmm.", "signature": "sig"},
            {"type": "redacted_thinking", "data": "opaque"},
            {"type": "text", "text": "Let me look."},
            {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}},
            # server blocks, sent back as received (a results list: see BLOCK_PARAM)
            {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "Paris"}},
            {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": [
                {"type": "web_search_result", "title": "Paris", "url": "https://example.com",
                 "encrypted_content": "EqgfCio=", "page_age": None}]}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": "Sunny", "is_error": False}]},
    ],
}
B64 = base64.b64encode(b"\x89PNG\r\n\x1a\n").decode()
GOOD_ANTHROPIC_MEDIA = {
    "model": "claude-test", "max_tokens": 1024, "stream": True,
    "messages": [
        {"role": "user", "content": [
            {"type": "text", "text": "Look"},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": B64}},
            {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": B64},
             "title": "a.pdf"}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "shot", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": [
            {"type": "text", "text": "here"},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": B64}}]}]},
    ],
}
GOOD_OPENAI_MEDIA = {
    "model": "gpt-test", "stream": True, "stream_options": {"include_usage": True},
    "messages": [
        {"role": "user", "content": [
            {"type": "text", "text": "Look"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64," + B64}},
            {"type": "file", "file": {"file_data": "data:application/pdf;base64," + B64, "filename": "a.pdf"}}]},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "shot", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "here\n[attachment 1: image/png, in the next user message]"},
        {"role": "user", "content": [
            {"type": "text", "text": "Attachments of tool result call_1:"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64," + B64}}]},
    ],
}
GOOD_OPENAI = {
    "model": "gpt-test", "max_completion_tokens": 4096, "stream": True,
    "stream_options": {"include_usage": True}, "reasoning_effort": "high",
    "tools": [{"type": "function", "function": {"name": "get_weather", "description": "d",
                                                "parameters": {"type": "object"}}}],
    "messages": [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function",
             "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "Sunny"},
    ],
}


REASONING_DETAILS = [
    {"type": "reasoning.text", "text": "Call it.", "signature": "EqgB", "format": "anthropic-claude-v1", "index": 0},
    {"type": "reasoning.summary", "summary": "Calls it.", "format": "openai-responses-v1", "index": 1},
    {"type": "reasoning.encrypted", "data": "CiQB", "id": "tool_1", "format": "google-gemini-v1", "index": 2},
]


def _edited(body: dict[str, Any], edit: Any) -> dict[str, Any]:
    body = json.loads(json.dumps(body))
    edit(body)
    return body


MISTAKES = [
    ("anthropic", "top-level bogus key", lambda b: b.update(bogus=1)),
    ("anthropic", "OpenAI's key on Anthropic", lambda b: b.update(reasoning_effort="high")),
    ("anthropic", "bogus key in a text block", lambda b: b["messages"][0]["content"][0].update(bogus=1)),
    ("anthropic", "an empty text block", lambda b: b["messages"][0]["content"].append({"type": "text", "text": ""})),
    ("anthropic", "bogus key in a web search result",
     lambda b: b["messages"][1]["content"][5]["content"][0].update(bogus=1)),
    ("anthropic", "a server tool panto has none of",
     lambda b: b["messages"][1]["content"][4].update(name="mind_reading")),
    ("anthropic", "unknown block type", lambda b: b["messages"][0]["content"][0].update(type="txt")),
    ("anthropic", "thinking without its signature",
     lambda b: b["messages"][1]["content"][0].pop("signature")),
    ("anthropic", "bogus key in thinking config", lambda b: b["thinking"].update(level="high")),
    ("anthropic", "budget_tokens as text", lambda b: b["thinking"].update(budget_tokens="16384")),
    ("anthropic", "tool with OpenAI's parameters key",
     lambda b: b["tools"][0].update(parameters=b["tools"][0].pop("input_schema"))),
    ("anthropic", "tool_result without its id",
     lambda b: b["messages"][2]["content"][0].pop("tool_use_id")),
    ("anthropic", "bad role", lambda b: b["messages"][0].update(role="tool")),
    ("anthropic", "no max_tokens", lambda b: b.pop("max_tokens")),
    ("openai", "top-level bogus key", lambda b: b.update(bogus=1)),
    ("openai", "Anthropic's thinking on OpenAI", lambda b: b.update(thinking={"type": "enabled"})),
    ("openai", "unknown reasoning_effort", lambda b: b.update(reasoning_effort="extreme")),
    ("openai", "bogus key in a message", lambda b: b["messages"][1].update(bogus=1)),
    ("openai", "tool message without its call id", lambda b: b["messages"][3].pop("tool_call_id")),
    ("openai", "arguments as an object",
     lambda b: b["messages"][2]["tool_calls"][0]["function"].update(arguments={"city": "Paris"})),
    ("openai", "bogus key in stream_options", lambda b: b["stream_options"].update(usage=True)),
    ("openai", "empty assistant message",
     lambda b: b["messages"].insert(2, {"role": "assistant", "content": None})),
    ("anthropic", "empty assistant message",
     lambda b: b["messages"].insert(1, {"role": "assistant", "content": []})),
    ("anthropic", "a tool_use id with a colon",
     lambda b: b["messages"][1]["content"][3].update(id="toolu.odd:1")),
    ("anthropic", "a tool_result id with a colon",
     lambda b: b["messages"][2]["content"][0].update(tool_use_id="toolu.odd:1")),
    ("openai", "a tool call id of 41 characters",
     lambda b: b["messages"][2]["tool_calls"][0].update(id="call_" + "x" * 36)),
    ("openai", "a tool message's id with a colon", lambda b: b["messages"][3].update(tool_call_id="a:b")),
    ("anthropic", "two user messages in a row",
     lambda b: b["messages"].append({"role": "user", "content": [{"type": "text", "text": "And?"}]})),
    ("anthropic", "text before a tool_result",
     lambda b: b["messages"][2]["content"].insert(0, {"type": "text", "text": "Here:"})),
    ("anthropic", "temperature above 1", lambda b: b.update(temperature=1.5)),
    ("anthropic", "top_k as text", lambda b: b.update(top_k="40")),
    ("anthropic", "OpenAI's stop key", lambda b: b.update(stop=["END"])),
    ("anthropic", "OpenAI's tool_choice form", lambda b: b.update(tool_choice="required")),
    ("anthropic", "metadata with OpenAI's keys", lambda b: b.update(metadata={"team": "a"})),
    ("openai", "Anthropic's tool_choice form", lambda b: b.update(tool_choice={"type": "any"})),
    ("openai", "Anthropic's top_k", lambda b: b.update(top_k=40)),
    ("openai", "stop_sequences", lambda b: b.update(stop_sequences=["END"])),
    ("openai", "reasoning_details on a message without tool calls",
     lambda b: b["messages"].insert(2, {"role": "assistant", "content": "Hm.",
                                        "reasoning_details": REASONING_DETAILS})),
    ("openai", "a reasoning_details element of an unknown type",
     lambda b: b["messages"][2].update(reasoning_details=[{"type": "reasoning.raw", "text": "x"}])),
    ("openai", "reasoning_details with a member of another type",
     lambda b: b["messages"][2].update(reasoning_details=[{"type": "reasoning.encrypted", "text": "x"}])),
    ("openai", "reasoning_details empty", lambda b: b["messages"][2].update(reasoning_details=[])),
]
MEDIA_MISTAKES = [
    ("anthropic", "image source without its type", lambda b: b["messages"][0]["content"][1]["source"].pop("type")),
    ("anthropic", "image with OpenAI's image_url", lambda b: b["messages"][0]["content"][1].update(
        type="image_url", image_url={"url": "data:image/png;base64," + B64})),
    ("anthropic", "document with a name key", lambda b: b["messages"][0]["content"][2].update(name="a.pdf")),
    ("anthropic", "document as an image media type",
     lambda b: b["messages"][0]["content"][2]["source"].update(media_type="image/png")),
    ("anthropic", "bogus key in a tool_result image",
     lambda b: b["messages"][2]["content"][0]["content"][1].update(bogus=1)),
    ("openai", "image_url as a string", lambda b: b["messages"][0]["content"][1].update(image_url="data:x")),
    ("openai", "file part with a bogus key", lambda b: b["messages"][0]["content"][2]["file"].update(name="a.pdf")),
    ("openai", "an image in a tool message", lambda b: b["messages"][2].update(content=[
        {"type": "image_url", "image_url": {"url": "data:image/png;base64," + B64}}])),
    ("openai", "Anthropic's image block", lambda b: b["messages"][0]["content"][1].update(
        type="image", source={"type": "base64", "media_type": "image/png", "data": B64})),
]


def test_validator_accepts_good_bodies() -> None:
    assert validate_request("anthropic", GOOD_ANTHROPIC) == []
    assert validate_request("anthropic", dict(GOOD_ANTHROPIC, temperature=1, top_p=0.5, top_k=5)) == []
    assert validate_request("openai", dict(GOOD_OPENAI, bogus=1), frozenset({"bogus"})) == []
    assert validate_request("openai", GOOD_OPENAI) == []
    with_details = _edited(GOOD_OPENAI, lambda b: b["messages"][2].update(reasoning_details=REASONING_DETAILS))
    assert validate_request("openai", with_details) == []
    assert validate_request("anthropic", GOOD_ANTHROPIC_MEDIA) == []
    assert validate_request("openai", GOOD_OPENAI_MEDIA) == []


@pytest.mark.parametrize("provider,what,edit", MISTAKES, ids=[f"{p}: {w}" for p, w, _ in MISTAKES])
def test_validator_refuses_mistakes(provider: str, what: str, edit: Any) -> None:
    good = GOOD_ANTHROPIC if provider == "anthropic" else GOOD_OPENAI
    assert validate_request(provider, _edited(good, edit)) != [], what


@pytest.mark.parametrize("provider,what,edit", MEDIA_MISTAKES, ids=[f"{p}: {w}" for p, w, _ in MEDIA_MISTAKES])
def test_validator_refuses_media_mistakes(provider: str, what: str, edit: Any) -> None:
    good = GOOD_ANTHROPIC_MEDIA if provider == "anthropic" else GOOD_OPENAI_MEDIA
    assert validate_request(provider, _edited(good, edit)) != [], what
