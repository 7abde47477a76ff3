"""Writes the issue 17 cases of tool rounds and turn helpers (README.md, "Tools in a case" and
"Turn objects"): `tools_parallel_*` (host tools run at the same time, results in call order,
a failing one, a slow one, a sequential one), `tool_progress_*`, `final_*` and
`error_detail_*` (retry_after, headers, request ids). Each transcript is derived here from
what the scenario says and the rules (include/panto.h, docs/tool-use.md), never from a
driver's output.

    .venv/bin/python tests/conformance/make_tool_cases.py           # write them
    .venv/bin/python tests/conformance/make_tool_cases.py --check   # fail if stale

Python 3.11 standard library only."""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from case_files import case_texts, generate

CASES = Path(__file__).resolve().parent / "cases"
MODEL = "claude-test"
CONFIG = {"provider": "anthropic", "model": MODEL, "api_key": "test-key"}
SCHEMA = {"type": "object", "properties": {"i": {"type": "integer"}}}


def usage(i: int, o: int) -> dict[str, int]:
    return {"input_tokens": i, "output_tokens": o, "cache_read_tokens": 0, "cache_write_tokens": 0,
            "reasoning_tokens": 0}


def add(a: dict[str, int], b: dict[str, int]) -> dict[str, int]:
    return {k: a[k] + b[k] for k in a}


class Message:
    """A scripted assistant message: its emulator response and the transcript lines it makes."""

    def __init__(self, mid: str, text: str | None = None, calls: list[tuple[str, str, dict]] = (),
                 i: int = 10, o: int = 5, headers: dict[str, str] | None = None) -> None:
        self.mid, self.text, self.calls, self.usage = mid, text, list(calls), usage(i, o)
        self.stop = "tool_use" if self.calls else "end_turn"
        blocks: list[dict[str, Any]] = []
        if text is not None:
            blocks.append({"type": "text", "text": text, "deltas": [text]})
        for cid, name, inp in self.calls:
            blocks.append({"type": "tool_use", "id": cid, "name": name, "input": inp,
                           "deltas": [json.dumps(inp)]})
        self.response: dict[str, Any] = {"message": {
            "id": mid, "model": MODEL, "content": blocks, "stop_reason": self.stop,
            "usage": {"input_tokens": i, "output_tokens": o}}}
        if headers:
            self.response["headers"] = headers

    def lines(self, request_id: str | None = None) -> list[dict[str, Any]]:
        start = {"event": "message_start", "id": self.mid, "model": MODEL}
        if request_id is not None:
            start["request_id"] = request_id
        out = [start]
        index = 0
        if self.text is not None:
            out += [{"event": "block_start", "index": 0, "kind": "text"},
                    {"event": "content_delta", "index": 0, "kind": "text", "text": self.text},
                    {"event": "block_complete", "index": 0, "kind": "text", "text": self.text}]
            index = 1
        for cid, name, inp in self.calls:
            raw = json.dumps(inp)
            out += [{"event": "block_start", "index": index, "kind": "tool_call"},
                    {"event": "tool_details", "index": index, "id": cid, "name": name},
                    {"event": "content_delta", "index": index, "kind": "tool_call", "text": raw},
                    {"event": "block_complete", "index": index, "kind": "tool_call", "text": raw}]
            index += 1
        out.append({"event": "message_end", "stop_reason": self.stop, "provider_stop_reason": self.stop,
                    "usage": self.usage})
        return out

    def starts(self) -> list[dict[str, Any]]:
        return [{"event": "tool_call_start", "id": cid, "name": name, "input": inp, "awaiting_result": True}
                for cid, name, inp in self.calls]


def result(cid: str, name: str, content: str, is_error: bool = False) -> dict[str, Any]:
    return {"event": "tool_result", "id": cid, "name": name, "content": content, "is_error": is_error,
            "parts": []}


def progress(cid: str, name: str, text: str, fraction: float | None) -> dict[str, Any]:
    return {"event": "tool_progress", "id": cid, "name": name, "text": text, "fraction": fraction}


def complete(stop: str, u: dict[str, int]) -> dict[str, Any]:
    return {"event": "message_complete", "stop_reason": stop, "provider_stop_reason": stop, "usage": u}


DONE = {"event": "done"}


def tool(name: str, behavior: dict[str, Any], **spec: Any) -> dict[str, Any]:
    return dict({"name": name, "description": f"The {name} tool.", "input_schema": SCHEMA}, **spec,
                behavior=behavior)


def results_request(calls: list[tuple[str, str, dict]], contents: list[tuple[str, bool]]) -> dict[str, Any]:
    """The second request of a round: its last message holds the results in call order."""
    blocks = []
    for (cid, _, _), (content, is_error) in zip(calls, contents):
        b: dict[str, Any] = {"type": "tool_result", "tool_use_id": cid, "content": {"$text": content}}
        if is_error:
            b["is_error"] = True
        blocks.append(b)
    return {"method": "POST", "path": "/v1/messages",
            "body_contains": {"messages": [{"role": "user", "content": {"$text": "go"}},
                                           {"role": "assistant", "content": [
                                               {"type": "tool_use", "id": cid, "name": name, "input": inp}
                                               for cid, name, inp in calls]},
                                           {"role": "user", "content": blocks}]}}


def round_case(description: str, tools: list[dict[str, Any]], calls: list[tuple[str, str, dict]],
               contents: list[tuple[str, bool]], progress_lines: list[dict[str, Any]] = (),
               config: dict[str, Any] | None = None) -> tuple[dict[str, Any], list[Any]]:
    """One turn: a message asking for `calls`, their results (`contents`, in call order),
    then an answer."""
    ask = Message("msg_tools", calls=calls, i=30, o=9)
    answer = Message("msg_answer", text="All done.", i=50, o=4)
    data = {"description": description, "config": config or CONFIG, "turns": ["go"], "tools": tools,
            "script": {"responses": [ask.response, answer.response]},
            "expect_requests": [{"method": "POST", "path": "/v1/messages"}, results_request(calls, contents)]}
    lines = (ask.lines() + ask.starts() + list(progress_lines)
             + [result(cid, name, c, e) for (cid, name, _), (c, e) in zip(calls, contents)]
             + answer.lines() + [complete("end_turn", add(ask.usage, answer.usage)), DONE, DONE])
    return data, lines


def three(name_of: list[str]) -> list[tuple[str, str, dict]]:
    return [(f"toolu_{k + 1}", n, {"i": k + 1}) for k, n in enumerate(name_of)]


def cases() -> dict[str, tuple[dict[str, Any], list[Any]]]:
    out: dict[str, tuple[dict[str, Any], list[Any]]] = {}

    calls = three(["slow", "fast", "medium"])
    out["tools_parallel_slow_first"] = round_case(
        "Three host tools in one message: the first sleeps 300 ms, the third 100 ms, the second not at all. "
        "They run at the same time and end in another order, yet the results come (and go to the model) in call order.",
        [tool("slow", {"sleep_ms": 300, "return": "slow result"}),
         tool("fast", {"return": "fast result"}),
         tool("medium", {"sleep_ms": 100, "return": "medium result"})],
        calls, [("slow result", False), ("fast result", False), ("medium result", False)])

    calls = three(["ok_a", "broken", "ok_b"])
    out["tools_parallel_one_fails"] = round_case(
        "Three host tools at once, the second fails (its handler raises): its result is an error result with "
        "the handler's message, the other two are kept, in call order, and the turn goes on.",
        [tool("ok_a", {"sleep_ms": 50, "return": "a"}), tool("broken", {"raise": "it broke"}),
         tool("ok_b", {"return": "b"})],
        calls, [("a", False), ("it broke", True), ("b", False)])

    calls = three(["meet", "meet", "meet"])
    out["tools_parallel_rendezvous"] = round_case(
        "Three calls of one host tool whose handler waits until three handlers of its group have started "
        "(else it fails with 'ran alone' after 10 s): it proves, without timing, that the three ran at the same time.",
        [tool("meet", {"rendezvous": ["three", 3], "return": "met"})],
        calls, [("met", False)] * 3)

    calls = three(["busy", "alone", "busy"])
    out["tools_parallel_sequential_tool"] = round_case(
        'A tool with "sequential": true called between two calls of a parallel tool: it starts after the first '
        "call finished and the third starts after it finished (its handler fails with 'overlapped' when any other "
        "handler runs during its run). The spec key stays in the registered spec.",
        [tool("busy", {"sleep_ms": 150, "return": "busy done"}),
         tool("alone", {"exclusive": True, "return": "ran alone"}, sequential=True)],
        calls, [("busy done", False), ("ran alone", False), ("busy done", False)])

    calls = three(["solo", "solo", "solo"])
    out["tools_parallel_config_sequential"] = round_case(
        'The agent\'s "tool_execution": "sequential": every call runs alone, one after another, in call order '
        "(each handler fails with 'overlapped' when another one runs during its run).",
        [tool("solo", {"exclusive": True, "return": "solo"})],
        calls, [("solo", False)] * 3, config=dict(CONFIG, tool_execution="sequential"))

    calls = [("toolu_1", "steps", {"i": 1})]
    out["tool_progress_one_tool"] = round_case(
        "A host tool reports progress three times (fractions 0 and 0.5, then text only) before it returns: "
        "each is a tool_progress line, after the round's tool_call_start and before its tool_result.",
        [tool("steps", {"progress": [["starting", 0], ["half way", 0.5], ["almost there", None]], "return": "finished"})],
        calls, [("finished", False)],
        progress_lines=[progress("toolu_1", "steps", "starting", 0), progress("toolu_1", "steps", "half way", 0.5),
                        progress("toolu_1", "steps", "almost there", None)])

    calls = three(["report", "report", "quiet"])
    out["tool_progress_two_calls_at_once"] = round_case(
        "Two calls that run at the same time (a rendezvous of two) each report progress; a third reports none. "
        "Progress of calls running at once may interleave: the runner compares each run of tool_progress lines "
        "ordered by call id (each call's own lines in its order). Every progress line comes before the results.",
        [tool("report", {"rendezvous": ["pair", 2], "progress": [["begun", 0.25], ["ending", 1]], "return": "reported"}),
         tool("quiet", {"return": "quiet"})],
        calls, [("reported", False), ("reported", False), ("quiet", False)],
        progress_lines=[progress("toolu_1", "report", "begun", 0.25), progress("toolu_1", "report", "ending", 1),
                        progress("toolu_2", "report", "begun", 0.25), progress("toolu_2", "report", "ending", 1)])

    # ---- final_*: the helpers read the whole turn and print one line.
    answer = Message("msg_final", text="The final answer.", i=12, o=6)
    out["final_message_text"] = (
        {"description": "A turn read with the final_message helper: one final_message line with the text of the "
                        "last assistant message, the stop reason and the turn's usage; then next() says done.",
         "config": CONFIG, "turns": [{"input": "Hello", "final": "message"}],
         "script": {"responses": [answer.response]}},
        [{"event": "final_message", "code": "ok", "text": "The final answer.", "stop_reason": "end_turn",
          "usage": answer.usage}, DONE])

    calls = three(["step", "step"])[:2]
    ask = Message("msg_tools", text="Let me check.", calls=calls, i=30, o=9)
    answer = Message("msg_answer", text="Both checked.", i=50, o=4)
    out["final_message_after_tools"] = (
        {"description": "final_message over a turn with a tool round: the helper runs the host tools as iterating "
                        "would (C: on PANTO_ERR_RESULT_PENDING it runs the call out_complete names), and gives the "
                        "text of the last message only, with the usage summed over both messages.",
         "config": CONFIG, "turns": [{"input": "go", "final": "message"}],
         "tools": [tool("step", {"return": "stepped"})],
         "script": {"responses": [ask.response, answer.response]},
         "expect_requests": [{"method": "POST", "path": "/v1/messages"}, {
             "method": "POST", "path": "/v1/messages", "body_contains": {"messages": [
                 {"role": "user", "content": {"$text": "go"}},
                 {"role": "assistant", "content": [{"type": "text", "text": "Let me check."}] + [
                     {"type": "tool_use", "id": cid, "name": n, "input": inp} for cid, n, inp in calls]},
                 {"role": "user", "content": [{"type": "tool_result", "tool_use_id": cid, "content": {"$text": "stepped"}}
                                              for cid, _, _ in calls]}]}}]},
        [{"event": "final_message", "code": "ok", "text": "Both checked.", "stop_reason": "end_turn",
          "usage": add(ask.usage, answer.usage)}, DONE])

    out["final_message_error"] = (
        {"description": "final_message over a turn that fails (HTTP 401): the driver prints the ordinary error "
                        "line, and next() gives the same error again (sticky).",
         "config": CONFIG, "turns": [{"input": "Hello", "final": "message"}],
         "script": {"responses": [{"error": {"type": "authentication_error", "message": "invalid x-api-key"}}]}},
        [{"event": "error", "code": "authentication", "http_status": 401, "type": "authentication_error",
          "message": "invalid x-api-key"}] * 2)

    out["final_json_without_format"] = (
        {"description": "final_json over a turn that asked for no JSON response_format: code state, no value, "
                        "output empty (the turn itself is fine, so next() then says done).",
         "config": CONFIG, "turns": [{"input": "Hello", "final": "json"}],
         "script": {"responses": [Message("msg_text", text="{\"a\": 1}").response]}},
        [{"event": "final_json", "code": "state", "value": None, "output": "", "message": {"$prefix": ""}}, DONE])

    # ---- error_detail_*: retry_after and the headers of interest; request ids.
    headers = {"request-id": "req_rate_1", "retry-after": "7",
               "anthropic-ratelimit-requests-limit": "50", "anthropic-ratelimit-requests-remaining": "0",
               "anthropic-ratelimit-requests-reset": "2026-01-01T00:00:07Z", "x-should-retry": "true"}
    out["error_detail_rate_limit"] = (
        {"description": "A 429 with retry-after and Anthropic's rate-limit headers, retries off: the error carries "
                        "retry_after (seconds) and the headers of interest as an object, names in lower case "
                        "(content-type and the others are not of interest).",
         "config": dict(CONFIG, retry={"max_retries": 0}), "turns": ["Hello"], "print_error_detail": True,
         "script": {"responses": [{"error": {"type": "rate_limit_error", "message": "Slow down"},
                                   "headers": {"Request-Id": "req_rate_1", "Retry-After": "7",
                                               "anthropic-ratelimit-requests-limit": "50",
                                               "anthropic-ratelimit-requests-remaining": "0",
                                               "anthropic-ratelimit-requests-reset": "2026-01-01T00:00:07Z",
                                               "x-should-retry": "true", "x-other": "not of interest"}}]}},
        [{"event": "error", "code": "rate_limit", "http_status": 429, "type": "rate_limit_error",
          "message": "Slow down", "retry_after": 7, "headers": headers}] * 2)

    oa_headers = {"x-request-id": "req_oa_1", "retry-after-ms": "1500", "x-ratelimit-limit-requests": "60",
                  "x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "1.5s"}
    out["error_detail_rate_limit_openai"] = (
        {"description": "An OpenAI 429 with retry-after-ms and x-ratelimit-* headers, retries off: retry_after "
                        "1.5 seconds and the headers of interest.",
         "config": {"provider": "openai", "model": "gpt-test", "api_key": "test-key", "retry": {"max_retries": 0}},
         "turns": ["Hello"], "print_error_detail": True,
         "script": {"responses": [{"error": {"type": "rate_limit_error", "message": "Rate limit reached"},
                                   "headers": dict(oa_headers, **{"openai-processing-ms": "3"})}]}},
        [{"event": "error", "code": "rate_limit", "http_status": 429, "type": "rate_limit_error",
          "message": "Rate limit reached", "retry_after": 1.5, "headers": oa_headers}] * 2)

    out["error_detail_no_answer"] = (
        {"description": "A failure without an HTTP answer (nothing listens at the base_url): retry_after null "
                        "and no headers.",
         "config": dict(CONFIG, base_url="http://127.0.0.1:9", retry={"max_retries": 0}), "turns": ["Hello"],
         "print_error_detail": True, "script": {"responses": []}},
        [{"event": "error", "code": "connection", "http_status": 0, "type": {"$prefix": ""},
          "message": {"$prefix": ""}, "retry_after": None, "headers": {}}] * 2)

    calls = [("toolu_1", "step", {"i": 1})]
    ask = Message("msg_tools", calls=calls, i=30, o=9, headers={"request-id": "req_first"})
    answer = Message("msg_answer", text="Done.", i=50, o=4, headers={"request-id": "req_second"})
    out["error_detail_request_ids"] = (
        {"description": "A successful turn of two messages, each response with its own request-id header: each "
                        "message_start carries it (print_request_ids).",
         "config": CONFIG, "turns": ["go"], "print_request_ids": True,
         "tools": [tool("step", {"return": "stepped"})],
         "script": {"responses": [ask.response, answer.response]}},
        ask.lines("req_first") + ask.starts() + [result("toolu_1", "step", "stepped")] + answer.lines("req_second")
        + [complete("end_turn", add(ask.usage, answer.usage)), DONE, DONE])

    oa = Message("chatcmpl-1", text="Hi.", i=5, o=2, headers={"x-request-id": "req_oa_ok"})
    oa_start = {"event": "message_start", "id": "chatcmpl-1", "model": "gpt-test", "request_id": "req_oa_ok"}
    oa.response["message"]["model"] = "gpt-test"
    out["error_detail_request_id_openai"] = (
        {"description": "OpenAI's x-request-id header is the message_start's request_id.",
         "config": {"provider": "openai", "model": "gpt-test", "api_key": "test-key"}, "turns": ["Hello"],
         "print_request_ids": True, "script": {"responses": [oa.response]}},
        [oa_start, {"event": "block_start", "index": 0, "kind": "text"},
         {"event": "content_delta", "index": 0, "kind": "text", "text": "Hi."},
         {"event": "block_complete", "index": 0, "kind": "text", "text": "Hi."},
         {"event": "message_end", "stop_reason": "end_turn", "provider_stop_reason": "stop", "usage": oa.usage},
         {"event": "message_complete", "stop_reason": "end_turn", "provider_stop_reason": "stop", "usage": oa.usage},
         DONE, DONE])
    return out


def folders() -> dict[Path, dict[str, str]]:
    return {CASES / name: case_texts(data, lines) for name, (data, lines) in cases().items()}


if __name__ == "__main__":
    sys.exit(generate(__doc__.splitlines()[0], "tests/conformance/make_tool_cases.py", folders))
