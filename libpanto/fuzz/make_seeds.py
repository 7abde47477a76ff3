#!/usr/bin/env python3
"""Writes the fuzz targets' seed inputs to tests/fuzz/seeds/TARGET/ (libpanto/fuzz/README.md).

    .venv/bin/python libpanto/fuzz/make_seeds.py

Seeds are what the conformance cases send and configure (each scripted response rendered by
the emulator into the body a provider would send, each config, tool spec and tool input), and
generated inputs: deep nesting (300 and 10,000 levels), huge numbers (1e308, 1e20,
99999999999999999999), bytes that are not UTF-8, cut events, odd framings. The recorded
streams (tests/fixtures/recorded/) are seeds in place (targets.json); cut at every byte they
are replayed by the replay test, not written here.

Inputs that crash panto today (issue 12) go to tests/fuzz/pending/TARGET/ instead, which the
replay does not read, unless tests/fuzz/regressions/TARGET/ has them already (moved there
once fixed). The output is the same on every run: the folders are rewritten whole.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
import types
from pathlib import Path
from typing import Any, Iterator

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bindings-py"))

from panto.emulator import anthropic as emu_anthropic  # noqa: E402
from panto.emulator import bedrock as emu_bedrock  # noqa: E402
from panto.emulator import gemini as emu_gemini  # noqa: E402
from panto.emulator import openai as emu_openai  # noqa: E402
from panto.emulator import responses as emu_responses  # noqa: E402
from panto.emulator.call import Call  # noqa: E402
from panto.emulator.scenario import ScenarioError, parse  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import media_seeds  # noqa: E402

CASES = ROOT / "tests" / "conformance" / "cases"
RECORDED = ROOT / "tests" / "fixtures" / "recorded"
OUT = ROOT / "tests" / "fuzz"
TARGETS = ("sse", "anthropic", "openai", "responses", "gemini", "bedrock", "tool_input", "config", "media")
# A case's provider: its target, and the emulator module that renders its bodies.
PROVIDER_TARGET = {"anthropic": "anthropic", "openai": "openai", "openai-responses": "responses",
                   "gemini": "gemini", "bedrock": "bedrock"}
EMULATORS = {"anthropic": emu_anthropic, "openai": emu_openai, "openai-responses": emu_responses,
             "gemini": emu_gemini, "bedrock": emu_bedrock}
# A seed larger than this is left out (a case streaming megabytes tests something else).
MAX_SEED = 64 * 1024
# `$repeat` strings of the cases are expanded to at most this many characters.
MAX_REPEAT = 2048

# OpenAI chunks carry `created`: the emulator's clock, fixed here so the output never changes.
emu_openai.time = types.SimpleNamespace(time=lambda: 1_700_000_000)  # type: ignore[attr-defined]

HUGE_NUMBERS = ("1e308", "1e20", "99999999999999999999", "-1", "1.5", "-0", "1E400", "18446744073709551616")
NOT_UTF8 = (b"\xff", b"\xc0\x80", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"abc\xe2\x82")


def main() -> int:
    seeds: dict[str, dict[str, bytes]] = {t: {} for t in TARGETS}
    pending: dict[str, dict[str, bytes]] = {t: {} for t in TARGETS}
    recorded = {p.read_bytes() for p in RECORDED.glob("*/*.sse")}

    for case_dir in sorted(p for p in CASES.iterdir() if (p / "case.json").is_file()):
        case = json.loads((case_dir / "case.json").read_text(encoding="utf-8"))
        name = case_dir.name
        provider = case.get("config", {}).get("provider", "anthropic")
        for i, body in enumerate(case_bodies(case, case_dir, provider)):
            if body not in recorded:
                add(seeds[PROVIDER_TARGET.get(provider, "anthropic")], f"{name}_{i}", body)
        add(seeds["config"], f"{name}_config", dump(case.get("config", {})))
        for j, tool in enumerate(case.get("tools", [])):
            spec = {k: v for k, v in tool.items() if k != "behavior"}
            add(seeds["config"], f"{name}_tool{j}", dump(spec))
        on_error = case.get("on_error", {})
        if "set_config" in on_error:
            add(seeds["config"], f"{name}_set_config", dump(on_error["set_config"]))
        for j, tool_input in enumerate(tool_inputs(case)):
            add(seeds["tool_input"], f"{name}_input{j}", dump(tool_input))

    for target, name, data, crashes in generated():
        add((pending if crashes else seeds)[target], name, data)

    for kind, table in (("seeds", seeds), ("pending", pending)):
        for target, files in table.items():
            folder = OUT / kind / target
            if kind == "seeds" and folder.exists():
                shutil.rmtree(folder)
            folder.mkdir(parents=True, exist_ok=True)
            fixed = OUT / "regressions" / target
            for file_name, data in sorted(files.items()):
                if kind == "pending" and (fixed / file_name).exists():
                    continue  # fixed and kept as a regression input
                (folder / file_name).write_bytes(data)
    total = sum(len(d) for table in (seeds, pending) for files in table.values() for d in files.values())
    count = sum(len(files) for table in (seeds, pending) for files in table.values())
    print(f"make_seeds: {count} inputs, {total // 1024} KiB, in {OUT.relative_to(ROOT)}/")
    return 0


def add(files: dict[str, bytes], name: str, data: bytes) -> None:
    """Keeps `data` under `name`, unless it is too large or the same bytes are kept already."""
    if len(data) > MAX_SEED or data in files.values():
        return
    files[name] = data


def dump(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


# ---- what the conformance cases send ---------------------------------------------------------


def case_bodies(case: dict[str, Any], case_dir: Path, provider: str) -> Iterator[bytes]:
    """The body of each scripted response, as the emulator would send it."""
    script = expand_repeats(case.get("script", {"responses": []}))
    try:
        scenario = parse(script, case_dir)
    except ScenarioError as e:
        print(f"make_seeds: {case_dir.name}: {e}", file=sys.stderr)
        return
    emu = EMULATORS.get(provider, emu_anthropic)
    request = {"model": case.get("config", {}).get("model", "m"), "stream": True,
               "stream_options": {"include_usage": True}}
    for number, r in enumerate(scenario.responses, start=1):
        if r.message is not None:
            pieces = emu.render(r.message, Call(number, request, "req_fuzz"))
            if r.stream_error is not None:
                e = r.stream_error
                pieces = pieces[: e["after_events"]] + emu.stream_error(e["type"], e["message"], e["code"])
            else:
                pieces = pieces + emu.END
            yield b"".join(pieces)
        elif r.error is not None:
            yield emu.error_body(r.error["type"], r.error["message"], "req_fuzz", r.error["code"])
        elif r.body is not None:
            yield r.body


def expand_repeats(value: Any) -> Any:
    """The runner's `{"$repeat": [S, N]}`, kept short."""
    if isinstance(value, dict):
        if set(value) == {"$repeat"}:
            text, times = value["$repeat"]
            return (text * times)[:MAX_REPEAT]
        return {k: expand_repeats(v) for k, v in value.items()}
    if isinstance(value, list):
        return [expand_repeats(v) for v in value]
    return value


def tool_inputs(case: dict[str, Any]) -> Iterator[Any]:
    for r in case.get("script", {}).get("responses", []):
        for block in (r.get("message") or {}).get("content", []):
            if block.get("type") == "tool_use":
                yield block.get("input", {})


# ---- generated inputs -------------------------------------------------------------------------


def nested(depth: int, inner: str = "1") -> str:
    return "[" * depth + inner + "]" * depth


def nested_objects(depth: int) -> str:
    return '{"a":' * depth + "1" + "}" * depth


def anthropic_event(kind: str, data: Any) -> bytes:
    text = data if isinstance(data, str) else json.dumps(data, separators=(",", ":"))
    return f"event: {kind}\ndata: {text}\n\n".encode()


def anthropic_stream(blocks: list[bytes], message_start: str | None = None, stop: str = "end_turn",
                     usage: str = '{"output_tokens":5}') -> bytes:
    start = message_start or '{"type":"message_start","message":{"id":"msg_g","model":"m","usage":{"input_tokens":1,"output_tokens":1}}}'
    return (anthropic_event("message_start", start) + b"".join(blocks)
            + anthropic_event("message_delta", f'{{"type":"message_delta","delta":{{"stop_reason":"{stop}"}},"usage":{usage}}}')
            + anthropic_event("message_stop", '{"type":"message_stop"}'))


def text_block(index: int, deltas: list[str]) -> bytes:
    out = anthropic_event("content_block_start", f'{{"type":"content_block_start","index":{index},"content_block":{{"type":"text","text":""}}}}')
    for d in deltas:
        out += anthropic_event("content_block_delta", f'{{"type":"content_block_delta","index":{index},"delta":{{"type":"text_delta","text":{d}}}}}')
    return out + anthropic_event("content_block_stop", f'{{"type":"content_block_stop","index":{index}}}')


def tool_block(index: int, name: str, fragments: list[str], tool_id: str = "toolu_g") -> bytes:
    out = anthropic_event("content_block_start", f'{{"type":"content_block_start","index":{index},"content_block":{{"type":"tool_use","id":"{tool_id}","name":"{name}","input":{{}}}}}}')
    for f in fragments:
        out += anthropic_event("content_block_delta", json.dumps({"type": "content_block_delta", "index": index, "delta": {"type": "input_json_delta", "partial_json": f}}, separators=(",", ":")))
    return out + anthropic_event("content_block_stop", f'{{"type":"content_block_stop","index":{index}}}')


def openai_chunk(delta: Any, finish: str | None = None, **extra: Any) -> bytes:
    chunk = {"id": "chatcmpl-g", "object": "chat.completion.chunk", "created": 1, "model": "m",
             "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
    chunk.update(extra)
    return b"data: " + json.dumps(chunk, separators=(",", ":")).encode() + b"\n\n"


def openai_stream(chunks: list[bytes], finish: str = "stop") -> bytes:
    return (openai_chunk({"role": "assistant", "content": ""}) + b"".join(chunks)
            + openai_chunk({}, finish) + b"data: [DONE]\n\n")


def openai_call(index: int, call_id: str | None, name: str | None, arguments: str) -> dict[str, Any]:
    call: dict[str, Any] = {"index": index, "function": {"arguments": arguments}}
    if call_id is not None:
        call["id"] = call_id
        call["type"] = "function"
    if name is not None:
        call["function"]["name"] = name
    return call


def generated() -> Iterator[tuple[str, str, bytes, bool]]:
    """(target, file name, bytes, crashes today)."""
    # The SSE parser: framings and fields.
    sse = {
        "crlf": b"event: a\r\ndata: 1\r\n\r\n",
        "cr_only": b"event: a\rdata: 1\r\rdata: 2\r\r",
        "mixed_ends": b"data: a\r\n\ndata: b\n\r\ndata: c\r\r\n",
        "multi_data": b"data: x\ndata\ndata:  y\ndata:z\n\n",
        "comments": b": keep-alive\n\n:\n: x\ndata: a\n\n",
        "fields": b"id: 7\nretry: 10\nevent\nevent:\nfoo: bar\ndata: a\n\n",
        "no_final_blank": b"data: a\n\ndata: cut",
        "bom": b"\xef\xbb\xbfdata: a\n\n",
        "nul": b"data: a\x00b\n\nevent: \x00\ndata: \x00\n\n",
        "not_utf8": b"event: \xff\ndata: \xc0\x80\n\n",
        "long_line": b"data: " + b"x" * 5000 + b"\n\n",
        "many_lines": b"data: a\n" * 600 + b"\n",
        "blank_lines": b"\n" * 100 + b"data: a\n\n" + b"\r\n" * 50,
        "event_only": b"event: ping\n\nevent: x\n\n",
        "colon_first": b":data: a\n\ndata\n\n",
        "space_before_colon": b"data : a\n\n data: b\n\n",
    }
    for name, data in sse.items():
        yield "sse", name, data, False

    # Anthropic streams.
    text_seed = lambda text: anthropic_stream([text_block(0, [text])])  # noqa: E731
    yield "anthropic", "deep_300_in_message_start", anthropic_stream([], message_start='{"type":"message_start","message":{"id":"m","model":"m","extra":' + nested(300) + "}}"), False
    yield "anthropic", "deep_10000_in_message_start", anthropic_stream([], message_start='{"type":"message_start","message":{"id":"m","model":"m","extra":' + nested(10000) + "}}"), False
    yield "anthropic", "deep_300_objects_in_delta", text_seed('"a"').replace(b'"delta":{', b'"x":' + nested_objects(300).encode() + b',"delta":{', 1), False
    for n in HUGE_NUMBERS:
        slug = n.replace("-", "minus").replace(".", "_")
        yield "anthropic", f"huge_usage_{slug}", anthropic_stream([text_block(0, ['"a"'])], usage=f'{{"output_tokens":{n},"input_tokens":{n}}}'), False
        yield "anthropic", f"huge_index_{slug}", anthropic_stream([text_block(0, ['"a"']).replace(b'"index":0', f'"index":{n}'.encode())]), False
    for i, bad in enumerate(NOT_UTF8):
        yield "anthropic", f"not_utf8_text_{i}", text_seed('"a' + bad.decode("latin-1") + '"').replace(bad.decode("latin-1").encode("utf-8"), bad), False
        yield "anthropic", f"not_utf8_text_hot_{i}", anthropic_stream([text_block(0, ['"x"'])]).replace(b'"text":"x"', b'"text":"' + bad + b'"'), False
    yield "anthropic", "escapes_in_text", text_seed(json.dumps("\b\f\n\r\t\"\\/\u0000\u001f\u2028\u2029\u0085\U0001F600")), False
    yield "anthropic", "lone_surrogates", text_seed('"\\ud800 \\udc00 \\ud83d\\ude00"'), False
    yield "anthropic", "interleaved_blocks", anthropic_stream([
        anthropic_event("content_block_start", '{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}'),
        anthropic_event("content_block_start", '{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}'),
        anthropic_event("content_block_delta", '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a"}}'),
        anthropic_event("content_block_delta", '{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"b"}}'),
        anthropic_event("content_block_stop", '{"type":"content_block_stop","index":1}'),
        anthropic_event("content_block_stop", '{"type":"content_block_stop","index":0}')]), False
    yield "anthropic", "two_message_starts", anthropic_stream([text_block(0, ['"a"'])]).replace(b"event: message_delta", anthropic_event("message_start", '{"type":"message_start","message":{"id":"again","model":"m"}}') + b"event: message_delta", 1), False
    yield "anthropic", "tool_then_text_same_index", anthropic_stream([tool_block(0, "probe", ['{"s":"x"}']), text_block(0, ['"a"'])], stop="tool_use"), False
    yield "anthropic", "tool_calls_all_tools", anthropic_stream([tool_block(0, "read", ['{"path":', '"a.txt"}'], "t0"), tool_block(1, "probe", ['{"s":"x","n":3}'], "t1"), tool_block(2, "missing", [""], "t2")], stop="tool_use"), False
    yield "anthropic", "tool_same_ids", anthropic_stream([tool_block(0, "probe", ['{"s":"x"}'], "same"), tool_block(1, "probe", ['{"s":"y"}'], "same")], stop="tool_use"), False
    yield "anthropic", "tool_input_not_object", anthropic_stream([tool_block(0, "probe", ["[1,2]"]), tool_block(1, "probe", ['"text"']), tool_block(2, "probe", ["{bad"])], stop="tool_use"), False
    yield "anthropic", "tool_deep_300", anthropic_stream([tool_block(0, "probe", ['{"s":"x","a":' + nested(300) + "}"])], stop="tool_use"), True
    yield "anthropic", "tool_read_offset_1e20", anthropic_stream([tool_block(0, "read", ['{"path":"a.txt","offset":1e20}'])], stop="tool_use"), True
    yield "anthropic", "error_event", anthropic_event("message_start", '{"type":"message_start","message":{"id":"m","model":"m"}}') + anthropic_event("error", '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded sk-fuzz-key-0123"}}'), False
    yield "anthropic", "error_body", b'{"type":"error","error":{"type":"invalid_request_error","message":"bad"},"request_id":"req_1"}', False
    yield "anthropic", "retry_after_ms_float", b"1e308\n" + text_seed('"a"'), False
    yield "anthropic", "retry_after_date", b"Sun, 06 Nov 1994 08:49:37 GMT\n" + text_seed('"a"'), False
    yield "anthropic", "hot_delta_padded", text_seed('"a"').replace(b'"text":"a"}}', b'"text":"a"}  }'), False
    yield "anthropic", "hot_delta_big_index", anthropic_stream([text_block(4294967295, ['"a"'])]), False
    yield "anthropic", "redacted_and_signature", anthropic_stream([
        anthropic_event("content_block_start", '{"type":"content_block_start","index":0,"content_block":{"type":"redacted_thinking","data":"xyz"}}'),
        anthropic_event("content_block_stop", '{"type":"content_block_stop","index":0}'),
        anthropic_event("content_block_start", '{"type":"content_block_start","index":1,"content_block":{"type":"thinking","thinking":"","signature":""}}'),
        anthropic_event("content_block_delta", '{"type":"content_block_delta","index":1,"delta":{"type":"thinking_delta","thinking":"hm"}}'),
        anthropic_event("content_block_delta", '{"type":"content_block_delta","index":1,"delta":{"type":"signature_delta","signature":"sig"}}'),
        anthropic_event("content_block_stop", '{"type":"content_block_stop","index":1}')]), False

    # OpenAI streams.
    yield "openai", "interleaved_tool_calls", openai_stream([
        openai_chunk({"tool_calls": [openai_call(0, "call_a", "probe", "")]}),
        openai_chunk({"tool_calls": [openai_call(1, "call_b", "read", "")]}),
        openai_chunk({"tool_calls": [openai_call(0, None, None, '{"s":')]}),
        openai_chunk({"tool_calls": [openai_call(1, None, None, '{"path":')]}),
        openai_chunk({"tool_calls": [openai_call(0, None, None, '"x"}'), openai_call(1, None, None, '"a.txt"}')]})], "tool_calls"), False
    yield "openai", "azure_empty_first_chunk", b'data: {"id":"","object":"","created":0,"model":"","choices":[],"prompt_filter_results":[]}\n\n' + openai_stream([openai_chunk({"content": "hi"})]), False
    yield "openai", "choice_without_delta", openai_stream([openai_chunk({"content": "a"}), b'data: {"id":"x","model":"m","choices":[{"index":0,"content_filter_results":{}}]}\n\n']), False
    yield "openai", "deep_300_in_chunk", openai_stream([openai_chunk({"content": "a"}, extra=json.loads(nested(300)))]), False
    yield "openai", "deep_10000_in_chunk", openai_stream([b'data: {"id":"x","model":"m","extra":' + nested(10000).encode() + b',"choices":[]}\n\n']), False
    for n in HUGE_NUMBERS:
        slug = n.replace("-", "minus").replace(".", "_")
        usage = f'{{"prompt_tokens":{n},"completion_tokens":{n},"prompt_tokens_details":{{"cached_tokens":{n}}}}}'
        yield "openai", f"huge_usage_{slug}", openai_stream([openai_chunk({"content": "a"})]) .replace(b"data: [DONE]", b'data: {"id":"x","model":"m","choices":[],"usage":' + usage.encode() + b"}\n\ndata: [DONE]"), False
        yield "openai", f"huge_tool_index_{slug}", openai_stream([b'data: {"id":"x","model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":' + n.encode() + b',"id":"c","function":{"name":"probe","arguments":"{}"}}]}}]}\n\n'], "tool_calls"), False
    for i, bad in enumerate(NOT_UTF8):
        yield "openai", f"not_utf8_content_{i}", openai_stream([b'data: {"id":"x","model":"m","choices":[{"index":0,"delta":{"content":"' + bad + b'"}}]}\n\n']), False
    yield "openai", "tool_deep_300", openai_stream([openai_chunk({"tool_calls": [openai_call(0, "c", "probe", '{"s":"x","a":' + nested(300) + "}")]})], "tool_calls"), True
    yield "openai", "refusal", openai_stream([openai_chunk({"refusal": "no"})]), False
    yield "openai", "no_done", openai_stream([openai_chunk({"content": "a"})]).replace(b"data: [DONE]\n\n", b""), False
    yield "openai", "after_done", openai_stream([openai_chunk({"content": "a"})]) + openai_chunk({"content": "late"}), False
    yield "openai", "error_chunk", b'data: {"error":{"message":"boom","type":"server_error","code":null}}\n\ndata: [DONE]\n\n', False
    yield "openai", "error_body", b'{"error":{"message":"bad key","type":"invalid_request_error","code":"invalid_api_key"}}', False
    yield "openai", "n3_choices", b'data: {"id":"x","model":"m","choices":[{"index":1,"delta":{"content":"b"}},{"index":0,"delta":{"content":"a"}}]}\n\n' + openai_stream([]), False
    yield "openai", "retry_after_ms_float", b"1e308\n" + openai_stream([openai_chunk({"content": "a"})]), False

    # OpenAI Responses streams (typed SSE events, items by output_index).
    def responses_event(kind: str, data: dict[str, Any]) -> bytes:
        return f"event: {kind}\ndata: {json.dumps(dict(data, type=kind), separators=(',', ':'))}\n\n".encode()

    created = responses_event("response.created", {"response": {"id": "resp_g", "model": "m", "status": "in_progress"}})
    completed = responses_event("response.completed", {"response": {"id": "resp_g", "model": "m", "status": "completed",
                                                                    "usage": {"input_tokens": 1, "output_tokens": 1}}})
    yield "responses", "delta_without_item", created + responses_event("response.output_text.delta", {"output_index": 3, "content_index": 0, "item_id": "msg_x", "delta": "a"}) + completed, False
    yield "responses", "huge_output_index", created + responses_event("response.output_item.added", {"output_index": 18446744073709551616, "item": {"type": "message", "id": "msg_x", "role": "assistant", "content": []}}) + completed, False
    yield "responses", "call_args_not_object", created + responses_event("response.output_item.added", {"output_index": 0, "item": {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "probe", "arguments": ""}}) + responses_event("response.function_call_arguments.delta", {"output_index": 0, "item_id": "fc_1", "delta": "[1,2]"}) + responses_event("response.output_item.done", {"output_index": 0, "item": {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "probe", "arguments": "[1,2]"}}) + completed, False
    yield "responses", "failed", created + responses_event("response.failed", {"response": {"id": "resp_g", "status": "failed", "error": {"code": "server_error", "message": "boom sk-fuzz-key-0123"}}}), False
    yield "responses", "deep_300_in_created", created.replace(b'"status":"in_progress"', b'"status":"in_progress","x":' + nested(300).encode(), 1) + completed, False

    # Gemini streams (SSE chunks of GenerateContentResponse).
    def gemini_chunk(parts: list[Any], finish: str | None = None, **extra: Any) -> bytes:
        candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
        if finish:
            candidate["finishReason"] = finish
        return b"data: " + json.dumps(dict({"candidates": [candidate]}, **extra), separators=(",", ":")).encode() + b"\r\n\r\n"

    yield "gemini", "args_not_object", gemini_chunk([{"functionCall": {"name": "probe", "args": [1]}}], "STOP"), False
    yield "gemini", "two_candidates", b'data: {"candidates":[{"index":1,"content":{"parts":[{"text":"b"}]}},{"index":0,"content":{"parts":[{"text":"a"}]}}]}\r\n\r\n', False
    yield "gemini", "thought_signature_only", gemini_chunk([{"text": "", "thoughtSignature": "c2ln"}, {"thought": True, "text": "hm"}], "STOP"), False
    yield "gemini", "huge_usage", gemini_chunk([{"text": "a"}], "STOP", usageMetadata={"promptTokenCount": 1e308, "candidatesTokenCount": 18446744073709551616}), False
    yield "gemini", "prompt_blocked", b'data: {"promptFeedback":{"blockReason":"SAFETY"}}\r\n\r\n', False
    yield "gemini", "deep_300_in_part", gemini_chunk([{"text": "a", "x": json.loads(nested(300))}], "STOP"), False

    # Bedrock event streams (binary frames: prelude, headers, payload, CRCs).
    def bedrock_event(kind: str, payload: dict[str, Any]) -> bytes:
        return emu_bedrock.frame([(":event-type", kind), (":content-type", "application/json"), (":message-type", "event")],
                                 json.dumps(payload, separators=(",", ":")).encode())

    text_frames = (bedrock_event("messageStart", {"role": "assistant"})
                   + bedrock_event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "a"}})
                   + bedrock_event("contentBlockStop", {"contentBlockIndex": 0})
                   + bedrock_event("messageStop", {"stopReason": "end_turn"}))
    yield "bedrock", "text", text_frames, False
    yield "bedrock", "total_length_short", b"\x00\x00\x00\x05\x00\x00\x00\x00" + text_frames[8:], False
    yield "bedrock", "headers_longer_than_message", text_frames[:4] + b"\xff\xff\xff\xff" + text_frames[8:], False
    yield "bedrock", "prelude_crc_wrong", text_frames[:8] + b"\x00\x00\x00\x00" + text_frames[12:], False
    yield "bedrock", "cut_mid_frame", text_frames[: len(text_frames) // 2], False
    yield "bedrock", "header_types", emu_bedrock.frame([(":event-type", "contentBlockDelta"), (":message-type", "event")], b"{}")[:-4].replace(b"\x07", b"\x00", 1) + b"\x00\x00\x00\x00", False
    yield "bedrock", "exception", emu_bedrock.frame([(":exception-type", "throttlingException"), (":message-type", "exception")], b'{"message":"slow down"}'), False
    yield "bedrock", "payload_not_json", emu_bedrock.frame([(":event-type", "contentBlockDelta"), (":message-type", "event")], b"\xff{"), False
    yield "bedrock", "tool_input_not_object", (bedrock_event("messageStart", {"role": "assistant"})
        + bedrock_event("contentBlockStart", {"contentBlockIndex": 0, "start": {"toolUse": {"toolUseId": "t1", "name": "probe"}}})
        + bedrock_event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"toolUse": {"input": "[1,"}}})
        + bedrock_event("contentBlockStop", {"contentBlockIndex": 0})
        + bedrock_event("messageStop", {"stopReason": "tool_use"})), False

    # Tool inputs (as the model streams them).
    tool = {
        "read_a": '{"path":"a.txt"}',
        "read_offset_limit": '{"path":"long.txt","offset":1990,"limit":20}',
        "read_wide": '{"path":"wide.txt"}',
        "read_bad": '{"path":"bad.bin"}',
        "read_sub": '{"path":"sub/b.txt"}',
        "read_dir": '{"path":"sub"}',
        "read_escape": '{"path":"../../etc/passwd"}',
        "read_symlink_out": '{"path":"out/passwd"}',
        "read_loop": '{"path":"loop"}',
        "read_fifo": '{"path":"fifo"}',
        "read_absolute": '{"path":"/etc/passwd"}',
        "read_nul": '{"path":"a.txt\\u0000x"}',
        "read_empty_path": '{"path":""}',
        "read_float_offset": '{"path":"a.txt","offset":1.0,"limit":2.0}',
        "read_negative": '{"path":"a.txt","offset":-1}',
        "read_extra": '{"path":"a.txt","x":1}',
        "probe_all": '{"s":"x","n":3,"f":1.5,"b":true,"e":null,"u":null,"a":[{"k":1}],"o":{"p":[[1],[]]}}',
        "probe_wrong": '{"s":1,"n":101,"e":"y","a":[{}],"o":{"q":1}}',
        "probe_long_key": '{"s":"x","' + "é" * 200 + '":1}',
        "probe_long_key_ascii": '{"s":"x","o":{"' + "k" * 300 + '":1}}',
        "not_object": "[1,2,3]",
        "not_json": "{bad",
        "empty": "",
        "whitespace": " \n\t ",
        "duplicate_keys": '{"path":"a.txt","path":"sub/b.txt"}',
        "escapes": '{"s":"\\b\\f\\n\\r\\t\\"\\\\\\/\\u0000\\ud83d\\ude00"}',
        "lone_surrogate": '{"s":"\\ud800"}',
        "deep_objects_100": '{"s":"x","o":' + nested_objects(100) + "}",
    }
    for name, text in tool.items():
        yield "tool_input", name, text.encode(), False
    for n in HUGE_NUMBERS:
        slug = n.replace("-", "minus").replace(".", "_")
        # Integral floats pass the schema as integers: the read tool then reads the wrong field
        # of the number (issue 12, item 2; -0 is one in range).
        crashes = n in ("1e308", "1e20")
        yield "tool_input", f"read_offset_{slug}", f'{{"path":"a.txt","offset":{n}}}'.encode(), crashes or n == "-0"
        yield "tool_input", f"read_limit_{slug}", f'{{"path":"a.txt","limit":{n}}}'.encode(), crashes
        yield "tool_input", f"probe_n_{slug}", f'{{"s":"x","n":{n},"f":{n}}}'.encode(), False
    for i, bad in enumerate(NOT_UTF8):
        yield "tool_input", f"not_utf8_{i}", b'{"path":"' + bad + b'"}', False
    # The schema check's message is cut to 256 bytes, maybe inside a UTF-8 sequence.
    yield "tool_input", "probe_long_unexpected_key", ('{"s":"x","o":{"' + "é" * 200 + '":1}}').encode(), True
    yield "tool_input", "deep_255", ('{"s":"x","a":' + nested(254) + "}").encode(), False
    yield "tool_input", "deep_300", ('{"s":"x","a":' + nested(300) + "}").encode(), True
    yield "tool_input", "deep_10000", ('{"s":"x","a":' + nested(10000) + "}").encode(), True
    yield "tool_input", "deep_objects_300", ('{"s":"x","o":' + nested_objects(300) + "}").encode(), True

    # Configurations, tool specs, changes of configuration.
    config = {
        "minimal": {"provider": "anthropic", "model": "m"},
        "full": {"provider": "openai", "model": "m", "base_url": "http://127.0.0.1:9/v1", "api_key": "k", "system": "s",
                 "max_tokens": 7, "capabilities": ["net"], "max_tool_iterations": 3, "read_tool": {"root": "/tmp", "max_bytes": 64},
                 "thinking": "high", "retry": {"max_retries": 1, "initial_delay_ms": 0, "max_delay_ms": 10, "max_retry_after_ms": 5},
                 "timeouts": {"connect_ms": 1, "first_byte_ms": 2, "idle_ms": 3, "total_ms": 4},
                 "tools": [{"name": "t", "description": "d", "input_schema": {"type": "object", "properties": {"a": {"type": "string"}}}, "capabilities": ["net"]}]},
        "spec": {"name": "get_weather", "description": "Weather.", "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}, "capabilities": ["net"]},
        "set_config": {"thinking": "off", "timeouts": {"idle_ms": 5}},
        "read_tool_null": {"read_tool": None},
        "crlf_key": {"provider": "openai", "model": "m", "api_key": "sk-x\r\nX-Injected: yes"},
        "crlf_base_url": {"provider": "openai", "model": "m", "base_url": "http://127.0.0.1:9/v1\r\nX: y"},
        "long_tool_name": {"name": "é" * 100},
        "duplicate_tools": {"provider": "anthropic", "model": "m", "tools": [{"name": "t"}, {"name": "t"}]},
    }
    for name, value in config.items():
        yield "config", name, dump(value), False
    for n in HUGE_NUMBERS:
        slug = n.replace("-", "minus").replace(".", "_")
        yield "config", f"max_tokens_{slug}", f'{{"provider":"anthropic","model":"m","max_tokens":{n},"timeouts":{{"idle_ms":{n}}}}}'.encode(), False
    for i, bad in enumerate(NOT_UTF8):
        yield "config", f"not_utf8_{i}", b'{"provider":"anthropic","model":"' + bad + b'"}', False
    # A refusal's reason is cut to 256 bytes, maybe inside a UTF-8 sequence.
    yield "config", "long_unknown_key", dump({"provider": "openai", "model": "m", "a" + "é" * 200: 1}), True
    yield "config", "deep_300_json", nested(300).encode(), False
    yield "config", "deep_10000_json", nested(10000).encode(), False
    yield "config", "schema_deep_255", dump({"name": "t", "input_schema": {"type": "object", "properties": {"a": json.loads(nested(250))}}}), False
    yield "config", "schema_deep_300", ('{"name":"t","input_schema":{"type":"object","properties":{"a":' + nested(300) + "}}}").encode(), True
    yield "config", "config_tools_deep_300", ('{"provider":"anthropic","model":"m","tools":[{"name":"t","input_schema":{"type":"object","x":' + nested(300) + "}}]}").encode(), True

    # Attachments: every format and variant, made with Pillow.
    for name, data in media_seeds.seeds():
        yield "media", name, data, False


if __name__ == "__main__":
    sys.exit(main())
