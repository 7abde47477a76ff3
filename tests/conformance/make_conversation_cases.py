#!/usr/bin/env python3
"""Generates the conversation cases of issue 16: import and export, editing, switching
provider, compaction and sessions (cases/conv_*, cases/compaction_*, cases/session_*).

    .venv/bin/python tests/conformance/make_conversation_cases.py          # (re)write them
    .venv/bin/python tests/conformance/make_conversation_cases.py --check  # fail if stale

Each case is written from what must happen (the rules of docs/conversations.md and
include/panto.h, as conversation_model.py states them), never from a driver's output: the
replies the emulator sends, the transcript they make, the conversation they leave and the
requests each provider must get (rewritten tool-call ids, thinking only for the model that
made it, the summary request of a compaction). Edit this script, not the folders.

Python 3.11 standard library only.
"""
from __future__ import annotations

import base64
import json
import sys
from pathlib import Path
from typing import Any

from case_files import case_texts, generate
from conversation_model import (
    A, MODEL, O, Reply, Server, Text, Thinking, ToolCall, exact_tokens, request, reply_lines, script,
    stored, summary_message, turn, turn_lines, usage, usage_tokens, user,
)

HERE = Path(__file__).resolve().parent
CASES_DIR = HERE / "cases"

CONFIG = {"provider": A, "model": MODEL[A], "api_key": "test-key"}
LOOKUP = {"name": "lookup", "description": "Looks a word up.",
          "input_schema": {"type": "object", "properties": {"q": {"type": "string"}},
                           "required": ["q"]}}


def tool(spec: dict[str, Any], returns: str) -> dict[str, Any]:
    return {**spec, "behavior": {"return": returns}}


def ok(event: str, **fields: Any) -> dict[str, Any]:
    return {"event": event, "code": "ok", **fields}


def conversation_line(messages: list[dict[str, Any]]) -> dict[str, Any]:
    return {"event": "conversation", "messages": messages}


def export_line(messages: list[dict[str, Any]]) -> dict[str, Any]:
    return {"event": "export", "conversation": {"version": 1, "messages": messages}}


CASES: dict[str, tuple[dict[str, Any], list[dict[str, Any]]]] = {}


def case(name: str, description: str, turns: list[Any], replies: list[Any],
         lines: list[dict[str, Any]], requests: list[dict[str, Any]] | None,
         config: dict[str, Any] | None = None, **more: Any) -> None:
    data: dict[str, Any] = {"description": description, "config": config or CONFIG,
                            "turns": turns, **more,
                            "script": {"responses": [r if isinstance(r, dict) else script(r)
                                                     for r in replies]}}
    if requests is not None:
        data["expect_requests"] = requests
    CASES[name] = (data, lines)


# ---- Import and export ----------------------------------------------------------------------

PNG_1X1 = ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJ"
           "RU5ErkJggg==")
PDF_TINY = base64.b64encode(b"%PDF-1.4\n%%EOF\n").decode()

# Every block kind, both providers' messages, an aborted one, an error result, a result with
# media. Keys in the export's order, so the document reads like an export.
DOCUMENT = {"version": 1, "messages": [
    {"role": "user", "content": [
        {"type": "text", "text": "Look at these."},
        {"type": "image", "media_type": "image/png", "data": PNG_1X1},
        {"type": "document", "media_type": "application/pdf", "data": PDF_TINY, "name": "notes.pdf"}]},
    {"role": "assistant", "content": [
        {"type": "thinking", "text": "A picture and a PDF.", "signature": "sig-imported-1"},
        {"type": "redacted_thinking", "text": "EoBDCkYIBxgCKkBvcGFxdWU="},
        {"type": "text", "text": "Let me fetch the rest."},
        {"type": "tool_call", "id": "toolu_imp_1", "name": "fetch", "input": {"path": "a.txt"}}],
     "provider": "anthropic", "model": "claude-test", "stop_reason": "tool_use",
     "usage": {"input_tokens": 120, "output_tokens": 40, "cache_read_tokens": 7,
               "cache_write_tokens": 3, "reasoning_tokens": 11}},
    {"role": "user", "content": [
        {"type": "tool_result", "id": "toolu_imp_1",
         "content": [{"type": "text", "text": "Here it is:"},
                     {"type": "image", "media_type": "image/png", "data": PNG_1X1}],
         "is_error": False}]},
    {"role": "assistant", "content": [{"type": "text", "text": "It shows a dot, and"}],
     "provider": "anthropic", "model": "claude-test", "stop_reason": "aborted",
     "usage": {"input_tokens": 200, "output_tokens": 1, "cache_read_tokens": 0,
               "cache_write_tokens": 0, "reasoning_tokens": 0}},
    {"role": "user", "content": [{"type": "text", "text": "Go on."}]},
    {"role": "assistant", "content": [
        {"type": "thinking", "text": "Fetch b."},
        {"type": "tool_call", "id": "call_imp_2", "name": "fetch", "input": {"path": "b.txt"}}],
     "provider": "openai", "model": "gpt-test", "stop_reason": "tool_use",
     "usage": {"input_tokens": 230, "output_tokens": 12, "cache_read_tokens": 64,
               "cache_write_tokens": 0, "reasoning_tokens": 5}},
    {"role": "user", "content": [
        {"type": "tool_result", "id": "call_imp_2", "content": "no such file", "is_error": True}]},
    {"role": "assistant", "content": [{"type": "text", "text": "b.txt is missing."}],
     "provider": "openai", "model": "gpt-test", "stop_reason": "end_turn",
     "usage": {"input_tokens": 250, "output_tokens": 6, "cache_read_tokens": 0,
               "cache_write_tokens": 0, "reasoning_tokens": 0}},
]}


def import_export_cases() -> None:
    thanks = Reply(A, "msg_thanks", [Text("You are welcome.")], usage(input_tokens=300, output_tokens=4))
    text = json.dumps(DOCUMENT, separators=(",", ":"))
    messages = DOCUMENT["messages"]
    # What Anthropic gets for the imported conversation: media as base64 sources, the
    # thinking of claude-test with its signature, the redacted thinking, OpenAI's thinking
    # left out, the error result marked.
    anthropic_sent = [
        {"role": "user", "content": [
            {"type": "text", "text": "Look at these."},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG_1X1}},
            {"type": "document", "source": {"type": "base64", "media_type": "application/pdf",
                                            "data": PDF_TINY}, "title": "notes.pdf"}]},
        {"role": "assistant", "content": [
            {"type": "thinking", "thinking": "A picture and a PDF.", "signature": "sig-imported-1"},
            {"type": "redacted_thinking", "data": "EoBDCkYIBxgCKkBvcGFxdWU="},
            {"type": "text", "text": "Let me fetch the rest."},
            {"type": "tool_use", "id": "toolu_imp_1", "name": "fetch", "input": {"path": "a.txt"}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_imp_1", "content": [
                {"type": "text", "text": "Here it is:"},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG_1X1}}]}]},
        {"role": "assistant", "content": [{"type": "text", "text": "It shows a dot, and"}]},
        {"role": "user", "content": [{"type": "text", "text": "Go on."}]},
        {"role": "assistant", "content": [
            {"type": "tool_use", "id": "call_imp_2", "name": "fetch", "input": {"path": "b.txt"}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "call_imp_2", "content": "no such file", "is_error": True}]},
        {"role": "assistant", "content": [{"type": "text", "text": "b.txt is missing."}]},
        {"role": "user", "content": [{"type": "text", "text": "Thanks."}]},
    ]
    case("conv_import_export_roundtrip",
         "A conversation document holding every block kind (text, thinking with its signature, "
         "redacted thinking, an image, a named PDF, tool calls, a result with text and an image, "
         "an error result), both providers' messages with their usage, stop reasons and models, "
         "and an aborted message, is imported (as text), exported (the same document), imported "
         "again from that export and exported again (the same bytes, in every language: the "
         "runner compares the export texts across languages). The next turn's request carries it "
         "all as Anthropic takes it: OpenAI's thinking left out, claude-test's with its signature.",
         [{"import_text": text}, {"export": True}, {"reimport": True}, {"export": True}, "Thanks."],
         [thanks],
         [ok("import"), export_line(messages), ok("reimport", identical=True),
          export_line(messages)] + turn_lines([thanks])
         + [conversation_line(messages + turn("Thanks.", thanks))],
         [request(A, [], messages=anthropic_sent)],
         print_conversation=True)


def invalid_import_cases() -> None:
    hello = Reply(A, "msg_hello", [Text("Hi.")], usage(input_tokens=10, output_tokens=2))
    again = Reply(A, "msg_again", [Text("Still here.")], usage(input_tokens=20, output_tokens=3))
    assistant_meta = {"provider": "anthropic", "model": "claude-test", "stop_reason": "end_turn",
                      "usage": usage(input_tokens=1, output_tokens=1)}

    def assistant(*content: dict[str, Any], **meta: Any) -> dict[str, Any]:
        return {"role": "assistant", "content": list(content), **{**assistant_meta, **meta}}

    def doc(*messages: dict[str, Any]) -> dict[str, Any]:
        return {"version": 1, "messages": list(messages)}

    text_hi = {"type": "text", "text": "Hi"}
    gif = base64.b64encode(b"GIF89a\x01\x00\x01\x00\x00\x00\x00;").decode()
    # (the step, where the message must point): one problem per document.
    refused: list[tuple[dict[str, Any], dict[str, Any]]] = [
        ({"import_text": '{"version": 1, "messages": ['}, {"$prefix": ""}),
        ({"import_text": "[]"}, {"$prefix": ""}),
        ({"import": {"version": 2, "messages": []}}, {"$contains": "version 2"}),
        ({"import": {"messages": []}}, {"$contains": "version"}),
        ({"import": doc({"role": "system", "content": [text_hi]})}, {"$prefix": "messages[0]"}),
        ({"import": doc({"role": "user", "content": []})}, {"$prefix": "messages[0]"}),
        ({"import": doc({"role": "user", "content": [text_hi], "color": "red"})},
         {"$prefix": "messages[0]"}),
        ({"import": doc({"role": "user", "content": [{"type": "thinking", "text": "x"}]})},
         {"$prefix": "messages[0].content[0]"}),
        ({"import": doc({"role": "user", "content": [
            text_hi, {"type": "image", "media_type": "image/png", "data": "!!not base64!!"}]})},
         {"$prefix": "messages[0].content[1]"}),
        ({"import": doc({"role": "user", "content": [
            text_hi, {"type": "image", "media_type": "image/png", "data": gif}]})},
         {"$prefix": "messages[0].content[1]"}),
        ({"import": doc(user("Hi"), assistant({"type": "text", "text": "Yes"}, stop_reason="bored"))},
         {"$prefix": "messages[1]"}),
        ({"import": doc(user("Hi"), assistant(
            {"type": "text", "text": "Yes"},
            usage={**usage(output_tokens=1), "input_tokens": -1}))},
         {"$prefix": "messages[1]"}),
        ({"import": doc(user("Hi"), assistant(
            {"type": "tool_call", "id": "toolu_a", "name": "bad name!", "input": {"q": "x"}},
            stop_reason="tool_use"),
            {"role": "user", "content": [
                {"type": "tool_result", "id": "toolu_a", "content": "x", "is_error": False}]})},
         {"$prefix": "messages[1].content[0]"}),
        ({"import": doc(user("Hi"), assistant(
            {"type": "tool_call", "id": "toolu_a", "name": "lookup", "input": {"q": "x"}},
            stop_reason="tool_use"), user("never answered"))},
         {"$contains": "toolu_a"}),
        ({"import": doc(user("Hi"), assistant({"type": "text", "text": "Yes"}),
                        {"role": "user", "content": [
                            {"type": "tool_result", "id": "call_9", "content": "x", "is_error": False}]})},
         {"$prefix": "messages[2].content[0]"}),
    ]
    before = turn("Hello", hello)
    lines = turn_lines([hello]) + [export_line(before)]
    lines += [{"event": "import", "code": "conversation", "message": where} for _, where in refused]
    lines += [export_line(before)] + turn_lines([again])
    case("conv_import_invalid",
         "Documents that are not valid exports are refused with a conversation error whose "
         "message names the first problem (its place: messages[i].content[j]): invalid JSON, "
         "not an object, another version, no version, an unknown role, empty content, an "
         "unknown key, a thinking block in a user message, bad base64, GIF bytes said to be a "
         "PNG, an unknown stop reason, a negative usage count, a bad tool name, a tool call "
         "never answered, a result answering no call. The conversation is unchanged after "
         "each (the exports before and after are the same) and the next turn carries it.",
         ["Hello", {"export": True}] + [step for step, _ in refused] + [{"export": True}, "Again"],
         [hello, again], lines,
         [request(A, [user("Hello")]),
          request(A, before + [user("Again")])])


# ---- Editing ----------------------------------------------------------------------------------


def edit_cases() -> None:
    hi = Reply(A, "msg_hi", [Text("Hi there.")], usage(input_tokens=12, output_tokens=3))
    overloaded = {"event": "error", "code": "overloaded", "http_status": 529,
                  "type": "overloaded_error", "message": "Overloaded"}
    case("rollback_after_failed_turn",
         "A turn fails before any answer (overloaded, retries off): its user message is rolled "
         "back as it fails (rollback_turn then finds nothing: 0 removed), so the next turn's "
         "request holds one user message, not two in a row. Dropping more messages than there "
         "are is an invalid_argument error and changes nothing.",
         ["Hello", {"rollback_turn": True}, "Hello again", {"drop_last": 3}],
         [{"error": {"type": "overloaded_error", "message": "Overloaded"}}, hi],
         [overloaded] * 2
         + [ok("rollback_turn", removed=0, message_count=0)] + turn_lines([hi])
         + [{"event": "drop_last", "code": "invalid_argument", "message_count": 2},
            conversation_line(turn("Hello again", hi))],
         [request(A, [user("Hello")]), request(A, [user("Hello again")])],
         config={**CONFIG, "retry": {"max_retries": 0}}, print_conversation=True)

    o_hi = Reply(O, "chatcmpl-hi", [Text("Hi there.")], usage(input_tokens=12, output_tokens=3))
    case("rollback_after_failed_turn_openai",
         "OpenAI: a turn refused with HTTP 400 leaves nothing behind: the next turn's request "
         "holds only its own user message.",
         ["Hello", "Hello again"],
         [{"status": 400, "error": {"type": "invalid_request_error", "message": "Bad request."}},
          o_hi],
         [{"event": "error", "code": "invalid_request", "http_status": 400,
           "type": "invalid_request_error", "message": "Bad request."}] * 2
         + turn_lines([o_hi]) + [conversation_line(turn("Hello again", o_hi))],
         [request(O, [user("Hello")]), request(O, [user("Hello again")])],
         config={"provider": O, "model": MODEL[O], "api_key": "test-key"},
         print_conversation=True)

    canceled = {"event": "error", "code": "canceled", "http_status": 0, "type": "canceled_error",
                "message": {"$prefix": ""}}
    late = Reply(A, "msg_late", [Text("Too late.")], usage(input_tokens=10, output_tokens=3))
    case("rollback_after_cancel_before_text",
         "The server waits 3 s before answering; the turn is canceled 200 ms after run(), before "
         "any text: its user message is rolled back, so the second turn's request holds only "
         "its own user message (alternating roles), and the conversation only the second turn.",
         ["Hello", "Again"],
         [{**script(late), "delay_ms": 3000}, hi],
         [canceled] * 2 + turn_lines([hi]) + [conversation_line(turn("Again", hi))],
         [request(A, [user("Hello")]), request(A, [user("Again")])],
         cancel_after_ms=200, print_conversation=True)

    looked = Reply(A, "msg_looked", [ToolCall("toolu_rb_1", "lookup", {"q": "x"}, "Found.")],
                   usage(input_tokens=30, output_tokens=9))
    case("rollback_turn_after_tool_round",
         "A turn's tool round completes, then its next request fails (a server error, retries "
         "off): the call and its result stay (they pair up). rollback_turn removes the whole "
         "turn (3 messages), a second rollback_turn removes nothing, and the next turn's "
         "request holds only its own user message.",
         ["Look up x", {"rollback_turn": True}, {"rollback_turn": True}, "Hello again"],
         [looked, {"error": {"type": "api_error", "message": "Internal error"}}, hi],
         reply_lines(looked)
         + [{"event": "error", "code": "server", "http_status": 500, "type": "api_error",
             "message": "Internal error"}] * 2
         + [ok("rollback_turn", removed=3, message_count=0),
            ok("rollback_turn", removed=0, message_count=0)]
         + turn_lines([hi]) + [conversation_line(turn("Hello again", hi))],
         [request(A, [user("Look up x")]), request(A, turn("Look up x", looked)),
          request(A, [user("Hello again")])],
         config={**CONFIG, "retry": {"max_retries": 0}}, tools=[tool(LOOKUP, "Found.")],
         print_conversation=True)

    call = Reply(A, "msg_call", [ToolCall("toolu_edit_1", "lookup", {"q": "x"}, "Found.")],
                 usage(input_tokens=30, output_tokens=9))
    answer = Reply(A, "msg_answer", [Text("It is found.")], usage(input_tokens=40, output_tokens=4))
    fresh = Reply(A, "msg_fresh", [Text("Hello.")], usage(input_tokens=8, output_tokens=2))
    case("conv_truncate_keeps_tool_pairs",
         "After a turn with a tool round (4 messages), truncate refuses to keep a tool call "
         "without its result (truncate(2), drop_last(1) after truncate(3): a conversation error) "
         "and a count larger than the conversation (invalid_argument); the count is unchanged "
         "each time. Truncating to 3 (the call and its result kept), to 1 and to 0 works, and "
         "the next turn's request holds only its own message.",
         ["Look up x", {"truncate": 2}, {"truncate": 5}, {"truncate": 3}, {"drop_last": 1},
          {"drop_last": 2}, {"truncate": 0}, "Hello"],
         [call, answer, fresh],
         turn_lines([call, answer])
         + [{"event": "truncate", "code": "conversation", "message_count": 4},
            {"event": "truncate", "code": "invalid_argument", "message_count": 4},
            ok("truncate", message_count=3),
            {"event": "drop_last", "code": "conversation", "message_count": 3},
            ok("drop_last", message_count=1),
            ok("truncate", message_count=0)]
         + turn_lines([fresh]) + [conversation_line(turn("Hello", fresh))],
         [request(A, [user("Look up x")]),
          request(A, turn("Look up x", call)),
          request(A, [user("Hello")])],
         tools=[tool(LOOKUP, "Found.")], print_conversation=True)


# ---- Consecutive user messages ------------------------------------------------------------------


def user_run_cases() -> None:
    """A conversation can hold two user messages in a row (a compaction summary: see
    compaction_cut_before_user; an import; a turn that failed after its tool round). They stay
    apart in the conversation; Anthropic gets them as one message, OpenAI as they are."""
    looked = Reply(A, "msg_run_looked", [ToolCall("toolu_run_1", "lookup", {"q": "x"}, "Found.")],
                   usage(input_tokens=30, output_tokens=9))
    hi = Reply(A, "msg_run_hi", [Text("Hi there.")], usage(input_tokens=12, output_tokens=3))
    case("user_run_after_failed_tool_round",
         "A turn's tool round completes, then its next request fails (a server error, retries "
         "off): the call and its result stay, so the next turn's user message follows the "
         "result's user message. Anthropic's request sends the two as one user message, the "
         "tool_result first; the conversation keeps them apart.",
         ["Look up x", "Hello again"],
         [looked, {"error": {"type": "api_error", "message": "Internal error"}}, hi],
         reply_lines(looked)
         + [{"event": "error", "code": "server", "http_status": 500, "type": "api_error",
             "message": "Internal error"}] * 2
         + turn_lines([hi])
         + [conversation_line(turn("Look up x", looked) + turn("Hello again", hi))],
         [request(A, [user("Look up x")]), request(A, turn("Look up x", looked)),
          request(A, turn("Look up x", looked) + [user("Hello again")])],
         config={**CONFIG, "retry": {"max_retries": 0}}, tools=[tool(LOOKUP, "Found.")],
         print_conversation=True)

    imported = [user("Hi"),
                {"role": "assistant", "content": [{"type": "text", "text": "Hello."}],
                 "provider": A, "model": MODEL[A], "stop_reason": "end_turn",
                 "usage": usage(input_tokens=5, output_tokens=2)},
                user("One"), user("Two")]
    counted = Reply(A, "msg_run_counted", [Text("Counted.")], usage(input_tokens=20, output_tokens=2))
    four = Reply(O, "chatcmpl-run-four", [Text("Four.")], usage(input_tokens=30, output_tokens=2))
    case("user_run_imported",
         "An imported conversation ends with two user messages; the next turn adds a third. "
         "Anthropic's request sends the three as one user message (text blocks in order); after "
         "a switch to OpenAI, its request sends them as they are, three user messages (Chat "
         "Completions takes them). The conversation keeps them apart.",
         [{"import": {"version": 1, "messages": imported}}, "Three",
          {"set_config": {"provider": O, "model": MODEL[O]}}, "Four"],
         [counted, four],
         [ok("import")] + turn_lines([counted]) + [ok("set_config")] + turn_lines([four])
         + [conversation_line(imported + turn("Three", counted) + turn("Four", four))],
         [request(A, imported + [user("Three")]),
          request(O, imported + turn("Three", counted) + [user("Four")])],
         print_conversation=True)


# ---- Switching provider -------------------------------------------------------------------------


def switch_cases() -> None:
    odd_id = "toolu.odd:1"  # not [a-zA-Z0-9_-]: rewritten for every provider
    long_id = "call_abcdefghijklmnopqrstuvwxyz0123456789ABCDEF"  # 46 characters: rewritten
    a1 = Reply(A, "msg_a1", [Thinking("I should look x up.", "sig-a1"), Text("Let me look."),
                             ToolCall(odd_id, "lookup", {"q": "x"}, "Found: 42")],
               usage(input_tokens=50, output_tokens=30, reasoning_tokens=12))
    a2 = Reply(A, "msg_a2", [Text("x is 42.")], usage(input_tokens=90, output_tokens=5))
    o1 = Reply(O, "chatcmpl-o1", [Thinking("Now y."), ToolCall(long_id, "lookup", {"q": "y"}, "Found: 42")],
               usage(input_tokens=120, output_tokens=20, reasoning_tokens=8))
    o2 = Reply(O, "chatcmpl-o2", [Text("y is 42 too.")], usage(input_tokens=150, output_tokens=6))
    a3 = Reply(A, "msg_a3", [Text("You are welcome.")], usage(input_tokens=200, output_tokens=4))
    a4 = Reply(A, "msg_a4", [Text("Bye.")], usage(input_tokens=210, output_tokens=2), model="claude-other")
    t1 = turn("What is x?", a1, a2)
    t2 = turn("And y?", o1, o2)
    t3 = turn("Thanks.", a3)
    t4 = turn("Bye.", a4)
    to_openai = {"provider": "openai", "model": "gpt-test", "thinking": "off"}
    to_anthropic = {"provider": "anthropic", "model": "claude-test", "thinking": "low"}
    case("conv_switch_provider",
         "Provider and model switched between turns with set_config: Anthropic (thinking on) "
         "calls a tool whose id is not of the allowed form, OpenAI goes on (reasoning, a tool "
         "call with a 46-character id), back to Anthropic, then another Anthropic model. Every "
         "request carries the conversation in its provider's form: tool-call ids the providers "
         "do not take are sent as call_ + 32 hex digits of their SHA-256, for the call and its "
         "result alike, in every request; thinking goes only to the provider and model that "
         "made it (with its signature), and is left out elsewhere.",
         ["What is x?", {"set_config": to_openai}, "And y?", {"set_config": to_anthropic},
          "Thanks.", {"set_config": {"model": "claude-other"}}, "Bye."],
         [a1, a2, o1, o2, a3, a4],
         turn_lines([a1, a2]) + [ok("set_config")] + turn_lines([o1, o2]) + [ok("set_config")]
         + turn_lines([a3]) + [ok("set_config")] + turn_lines([a4])
         + [conversation_line(t1 + t2 + t3 + t4)],
         [request(A, [user("What is x?")]),
          request(A, turn("What is x?", a1)),
          request(O, t1 + [user("And y?")]),
          request(O, t1 + turn("And y?", o1)),
          request(A, t1 + t2 + [user("Thanks.")]),
          request(A, t1 + t2 + t3 + [user("Bye.")], model="claude-other")],
         config={**CONFIG, "thinking": "low"}, tools=[tool(LOOKUP, "Found: 42")],
         print_conversation=True)


# ---- Server blocks (issue 27) -------------------------------------------------------------------

# What real Anthropic streams hold besides text, thinking and client tool calls: a server tool's
# call, its input streamed as input_json_delta; its result, whole in content_block_start (with
# encrypted content and non-ASCII text); a web fetch whose input comes whole, and its result.
# (Types the SDK's request types know, so test_request_fidelity checks the resent bodies; a
# type no one knows yet is kept the same way: libpanto/src/server_block_test.zig.)
SEARCH = Server({"type": "server_tool_use", "id": "srvtoolu_01A", "name": "web_search", "input": {}},
                ('{"query": ', '"zig 0.16 release"}'))
RESULTS = Server({"type": "web_search_tool_result", "tool_use_id": "srvtoolu_01A", "content": [
    {"type": "web_search_result", "title": "Zig 0.16 — notes", "url": "https://ziglang.org/download/0.16.0/release-notes.html",
     "encrypted_content": "EqgfCioIARgBIiQ3YTAwMjY1Mi1mZjM5LTQ1NGUtODgxNC1kNjNjNTk1ZWI3Y2Y=", "page_age": None}]})
FETCH = Server({"type": "server_tool_use", "id": "srvtoolu_02B", "name": "web_fetch",
                "input": {"url": "https://ziglang.org/news/", "max": 1.50}})
FETCHED = Server({"type": "web_fetch_tool_result", "tool_use_id": "srvtoolu_02B", "content": {
    "type": "web_fetch_result", "url": "https://ziglang.org/news/", "retrieved_at": "2026-12-01T10:00:00Z",
    "content": {"type": "document", "source": {"type": "text", "media_type": "text/plain",
                                               "data": "Zig 0.16.0 released."}}}})


def server_block_cases() -> None:
    s1 = Reply(A, "msg_s1", [Text(""), SEARCH, RESULTS, FETCH, FETCHED, Text("Zig 0.16 is out.")],
               usage(input_tokens=40, output_tokens=25))
    s2 = Reply(A, "msg_s2", [Text("It came out this year.")], usage(input_tokens=90, output_tokens=6))
    s3 = Reply(A, "msg_s3", [Text("Bye.")], usage(input_tokens=60, output_tokens=2), model="claude-other")
    o1 = Reply(O, "chatcmpl-s4", [Text("Ciao.")], usage(input_tokens=70, output_tokens=2))
    t1 = turn("Search zig.", s1)
    t2 = turn("When?", s2)
    t3 = turn("Bye.", s3)
    t4 = turn("Ciao.", o1)
    case("conv_server_blocks",
         "Blocks panto does not interpret (a server_tool_use whose input streams as "
         "input_json_delta, a web_search_tool_result with encrypted content, a web_fetch call "
         "whose input comes whole and its web_fetch_tool_result) are kept as themselves: "
         "the conversation stores each with its type and its JSON as received, the streamed "
         "input in place; export and import carry them byte for byte; the next request to the "
         "same model sends them back with their ids; another Anthropic model and OpenAI get "
         "them left out. The empty text block the stream started with is never sent. Their "
         "events: kind server_block, the input's fragments as content deltas (an input given "
         "whole as one), block_complete "
         "with the block's JSON as text and its type as name.",
         ["Search zig.", {"export": True}, {"reimport": True}, "When?",
          {"set_config": {"model": "claude-other"}}, "Bye.",
          {"set_config": {"provider": "openai", "model": "gpt-test"}}, "Ciao."],
         [s1, s2, s3, o1],
         turn_lines([s1]) + [export_line(t1), ok("reimport", identical=True)] + turn_lines([s2])
         + [ok("set_config")] + turn_lines([s3]) + [ok("set_config")] + turn_lines([o1])
         + [conversation_line(t1 + t2 + t3 + t4)],
         [request(A, [user("Search zig.")]),
          request(A, t1 + [user("When?")]),
          request(A, t1 + t2 + [user("Bye.")], model="claude-other"),
          request(O, t1 + t2 + t3 + [user("Ciao.")])],
         print_conversation=True)


# A compaction block whose summary comes in a compaction_delta (Anthropic's server-side
# compaction): the delta's members set in the block's JSON, `content` in place of the null it
# started with, `encrypted_content` added.
COMPACTED = Server({"type": "compaction", "content": None},
                   ({"type": "compaction_delta", "content": "The user asked about Zig 0.16 — \"out\".",
                     "encrypted_content": "Ev0BCioIAhgBIiQ5ZTk="},))


def compaction_delta_cases() -> None:
    k1 = Reply(A, "msg_k1", [COMPACTED, Text("Zig 0.16 is out.")], usage(input_tokens=40, output_tokens=12))
    k2 = Reply(A, "msg_k2", [Text("Bye.")], usage(input_tokens=30, output_tokens=2), model="claude-other")
    t1 = turn("Zig?", k1)
    t2 = turn("Bye.", k2)
    case("conv_compaction_delta",
         "A compaction block whose summary streams as a compaction_delta is stored with the "
         "delta applied to its JSON (content in place of the null it started with, "
         "encrypted_content added), every other byte as received; its block_complete gives that "
         "JSON; export and import carry it; another model gets it left out.",
         ["Zig?", {"export": True}, {"reimport": True}, {"set_config": {"model": "claude-other"}}, "Bye."],
         [k1, k2],
         turn_lines([k1]) + [export_line(t1), ok("reimport", identical=True), ok("set_config")]
         + turn_lines([k2]) + [conversation_line(t1 + t2)],
         [request(A, [user("Zig?")]),
          request(A, t1 + [user("Bye.")], model="claude-other")],
         print_conversation=True)


# Citations (Anthropic's web search answers): streamed as citations_delta before a text, or
# given in the text's content_block_start; escapes and non-ASCII kept as sent.
CITE_RELEASE = {"type": "web_search_result_location", "cited_text": "Zig 0.16.0 released — \"async\" I/O is back.",
                "url": "https://ziglang.org/download/0.16.0/release-notes.html", "title": "Zig 0.16 — notes",
                "encrypted_index": "Eo8BCioIAhgBIiQ3YTAwMjY1Mi1mZjM5"}
CITE_NEWS = {"type": "web_search_result_location", "cited_text": "New I/O interface.",
             "url": "https://ziglang.org/news/", "title": "News", "encrypted_index": "EpABCioIAhgBIiQ4YjEx"}


def citation_cases() -> None:
    c1 = Reply(A, "msg_c1", [Text("Searching."), SEARCH, RESULTS, Text("Zig 0.16 is out", (CITE_RELEASE,)),
                             Text(", with new I/O.", (CITE_RELEASE, CITE_NEWS), citations_at_start=True)],
               usage(input_tokens=40, output_tokens=25))
    c2 = Reply(A, "msg_c2", [Text("This year.")], usage(input_tokens=90, output_tokens=3))
    c3 = Reply(A, "msg_c3", [Text("Bye.")], usage(input_tokens=60, output_tokens=2), model="claude-other")
    o1 = Reply(O, "chatcmpl-c4", [Text("Ciao.")], usage(input_tokens=70, output_tokens=2))
    t1 = turn("Search zig.", c1)
    t2 = turn("When?", c2)
    t3 = turn("Bye.", c3)
    t4 = turn("Ciao.", o1)
    case("conv_citations",
         "A text block's citations (a web search answer's, streamed as citations_delta before "
         "the text, or given whole in the text's content_block_start) are kept in the "
         "conversation as a JSON array of the citation objects as received, exported as a "
         "string and reimported identical, sent back with the text to the same model, left out "
         "(the text kept) for another Anthropic model and for OpenAI; the text block's "
         "block_complete carries them as citations.",
         ["Search zig.", {"export": True}, {"reimport": True}, "When?",
          {"set_config": {"model": "claude-other"}}, "Bye.",
          {"set_config": {"provider": "openai", "model": "gpt-test"}}, "Ciao."],
         [c1, c2, c3, o1],
         turn_lines([c1]) + [export_line(t1), ok("reimport", identical=True)] + turn_lines([c2])
         + [ok("set_config")] + turn_lines([c3]) + [ok("set_config")] + turn_lines([o1])
         + [conversation_line(t1 + t2 + t3 + t4)],
         [request(A, [user("Search zig.")]),
          request(A, t1 + [user("When?")]),
          request(A, t1 + t2 + [user("Bye.")], model="claude-other"),
          request(O, t1 + t2 + t3 + [user("Ciao.")])],
         print_conversation=True)


# ---- OpenRouter's reasoning_details (issue 27) --------------------------------------------------

# As OpenRouter streams a Claude model's thinking: each chunk's `reasoning` text with its
# reasoning_details piece, the signature in a piece of its own; and a Gemini model's encrypted
# reasoning, given alone before its call.
OR_CLAUDE, OR_GEMINI = "or-claude-test", "or-gemini-test"
WEATHER = {"name": "get_weather", "description": "Current weather for a city.",
           "input_schema": {"type": "object", "properties": {"city": {"type": "string"}},
                            "required": ["city"]}}
CLAUDE_FORMAT = {"format": "anthropic-claude-v1", "index": 0}


def claude_details(text: str, signature: str) -> tuple[tuple[dict[str, Any], ...], ...]:
    return (({"type": "reasoning.text", "text": text, **CLAUDE_FORMAT},),
            ({"type": "reasoning.text", "signature": signature, **CLAUDE_FORMAT},))


def reasoning_details_cases() -> None:
    config = {"provider": O, "model": OR_CLAUDE, "api_key": "test-key"}
    r1 = Reply(O, "gen-rd-1", [Thinking("Weather: \"call\" the tool.", openai_key="reasoning"),
                               ToolCall("call_paris", "get_weather", {"city": "Paris"}, "Sunny")],
               usage(input_tokens=50, output_tokens=20, reasoning_tokens=12), model=OR_CLAUDE,
               details=claude_details("Weather: \"call\" the tool.", "EqgBCkYIBxgCKkD1sig=="))
    r2 = Reply(O, "gen-rd-2", [Thinking("Answer.", openai_key="reasoning"), Text("Sunny in Paris.")],
               usage(input_tokens=70, output_tokens=8, reasoning_tokens=2), model=OR_CLAUDE,
               details=claude_details("Answer.", "EpABCkYIsig2=="))
    r3 = Reply(O, "gen-rd-3", [Text("Sunny in Rome too.")], usage(input_tokens=90, output_tokens=5), model=OR_CLAUDE)
    r4 = Reply(O, "gen-rd-4", [Text("Bye.")], usage(input_tokens=60, output_tokens=2), model="other-test")
    t1 = turn("Weather in Paris?", r1, r2)
    t2 = turn("And Rome?", r3)
    t3 = turn("Bye.", r4)
    case("conv_reasoning_details",
         "OpenRouter's reasoning_details (a Claude model's thinking: each piece beside its "
         "reasoning text, the signature in a piece of its own) are assembled by index into the "
         "message's reasoning_details, exported as a string and reimported identical, and sent "
         "back on the same model's messages with tool calls (not on an answer without calls), "
         "never `reasoning`; another model gets the messages without them.",
         ["Weather in Paris?", {"export": True}, {"reimport": True}, "And Rome?",
          {"set_config": {"model": "other-test"}}, "Bye."],
         [r1, r2, r3, r4],
         turn_lines([r1, r2]) + [export_line(t1), ok("reimport", identical=True)] + turn_lines([r3])
         + [ok("set_config")] + turn_lines([r4]) + [conversation_line(t1 + t2 + t3)],
         [request(O, [user("Weather in Paris?")], model=OR_CLAUDE),
          request(O, turn("Weather in Paris?", r1), model=OR_CLAUDE),
          request(O, t1 + [user("And Rome?")], model=OR_CLAUDE),
          request(O, t1 + t2 + [user("Bye.")], model="other-test")],
         config=config, tools=[tool(WEATHER, "Sunny")], print_conversation=True)

    encrypted = ({"type": "reasoning.encrypted", "data": "CiQBjz1rX+7gYc/enc==", "id": "tool_get_weather_1",
                  "format": "google-gemini-v1", "index": 0},)
    e1 = Reply(O, "gen-re-1", [ToolCall("call_paris", "get_weather", {"city": "Paris"}, "Sunny")],
               usage(input_tokens=40, output_tokens=40, reasoning_tokens=30), model=OR_GEMINI, details=(encrypted,))
    e2 = Reply(O, "gen-re-2", [Text("Sunny in Paris.")], usage(input_tokens=60, output_tokens=5), model=OR_GEMINI)
    case("conv_reasoning_details_encrypted",
         "A Gemini model behind OpenRouter gives its reasoning encrypted, in reasoning_details "
         "alone (no reasoning text, so no thinking block): the element is kept whole with the "
         "message that calls the tool and sent back with the call in the next request.",
         ["Weather in Paris?"],
         [e1, e2],
         turn_lines([e1, e2]) + [conversation_line(turn("Weather in Paris?", e1, e2))],
         [request(O, [user("Weather in Paris?")], model=OR_GEMINI),
          request(O, turn("Weather in Paris?", e1), model=OR_GEMINI)],
         config={**config, "model": OR_GEMINI}, tools=[tool(WEATHER, "Sunny")], print_conversation=True)

    case("session_reasoning_details",
         "A session keeps a message's reasoning_details: the agent that resumes it sends them "
         "back with the message's tool calls in its next request.",
         ["Weather in Paris?", {"reopen_agent": True}, {"session_info": True}, "And Rome?"],
         [r1, r2, r3],
         turn_lines([r1, r2]) + [ok("reopen_agent"), info("s1", True, 4)] + turn_lines([r3])
         + [conversation_line(t1 + t2)],
         [request(O, [user("Weather in Paris?")], model=OR_CLAUDE),
          request(O, turn("Weather in Paris?", r1), model=OR_CLAUDE),
          request(O, t1 + [user("And Rome?")], model=OR_CLAUDE)],
         config={**config, "session": {"dir": "$SESSION_DIR", "id": "s1"}},
         tools=[tool(WEATHER, "Sunny")], print_conversation=True)


# ---- Compaction ----------------------------------------------------------------------------------

PROMPT = "Summarize the conversation so far."
STORY = "Tell me a story."   # every text here is 16 characters: 4 tokens, however rounded
ONCE = "Once upon a time"
THEN = "And then what???"
SUMMARY = "The user asked for a story."  # 27: with the summary message's frame, 100 characters


# Between the compaction prompt and the user's instructions for one summary (compaction.zig,
# Run.focus_heading).
FOCUS = "\n\nThe user's instructions for this summary (follow them where they ask what to keep or stress):\n"


def summary_request(conversation_text: str, provider: str = A, system: str = PROMPT) -> dict[str, Any]:
    """The summary request: the compaction prompt as system, one user message holding the
    serialized messages, no tools, no thinking."""
    req = request(provider, [user("<conversation>\n" + conversation_text + "\n</conversation>")],
                  system=system, tools={"$absent": True}, thinking={"$absent": True},
                  max_tokens=4096)
    return req


def manual_compaction_lines(before: Any, after: Any, count: Any, summary: Reply) -> list[dict[str, Any]]:
    """A manual compaction's stream: compaction_start, compaction_end (its counts), the summary
    request's message_complete, the end."""
    return [{"event": "compaction_start", "tokens_before": before, "reason": "manual"},
            {"event": "compaction_end", "tokens_before": before, "tokens_after": after,
             "message_count": count, "summary": SUMMARY},
            {"event": "message_complete", "stop_reason": "end_turn", "provider_stop_reason": "end_turn",
             "usage": summary.usage},
            {"event": "done"}, {"event": "done"}]


def compaction_cases() -> None:
    compaction = {"enabled": True, "context_window": 1000, "reserve_tokens": 100,
                  "keep_recent_tokens": 6, "prompt": PROMPT}
    config = {**CONFIG, "compaction": compaction}
    first = Reply(A, "msg_first", [Text(ONCE)], usage(input_tokens=950, output_tokens=30))
    summary = Reply(A, "msg_summary", [Text(SUMMARY)], usage(input_tokens=30, output_tokens=8))
    second = Reply(A, "msg_second", [Text("The dragon woke up.")], usage(input_tokens=60, output_tokens=6))
    # Before the second request: the first reply's usage (950 + 30) and the 4 tokens of the
    # user message after it: 984 > 1000 - 100. Keeping 6 tokens: THEN (4) is not enough,
    # with ONCE (8) it is: the cut is before the assistant message, and STORY is summarized.
    kept = stored(first) + [user(THEN)]
    tokens_before = usage_tokens(first.usage) + exact_tokens([user(THEN)])
    summarized = summary_message(SUMMARY, 1, tokens_before)
    tokens_after = exact_tokens([summarized] + kept)
    case("compaction_threshold",
         "Compaction triggered by the usage the provider reported: after a reply whose usage "
         "(950 + 30 tokens) with the next user message (4 tokens) passes context_window 1000 - "
         "reserve_tokens 100, the next request is preceded by a summary request (the config's "
         "prompt as system, the older messages serialized in one user message, no tools, no "
         "thinking), and goes out with the summary message in their place; the most recent "
         "messages (keep_recent_tokens 6) stay. compaction_start and compaction_end (tokens "
         "before and after, the messages summarized, the summary) come before the request's "
         "message_start; message_complete adds the summary request's usage.",
         [STORY, THEN], [first, summary, second],
         turn_lines([first])
         + [{"event": "compaction_start", "tokens_before": tokens_before, "reason": "threshold"},
            {"event": "compaction_end", "tokens_before": tokens_before, "tokens_after": tokens_after,
             "message_count": 1, "summary": SUMMARY}]
         + turn_lines([second], extra_usage=summary.usage)
         + [conversation_line([summarized] + kept + stored(second))],
         [request(A, [user(STORY)]),
          summary_request("[User]: " + STORY),
          request(A, [summarized] + kept)],
         config=config, print_conversation=True)

    manual_config = {**CONFIG, "compaction": {"keep_recent_tokens": 10, "prompt": PROMPT}}
    one = Reply(A, "msg_one", [Text(ONCE)], usage(input_tokens=20, output_tokens=4))
    two = Reply(A, "msg_two", [Text("There was a dragon")], usage(input_tokens=30, output_tokens=5))
    three = Reply(A, "msg_three", [Text("It flew away.")], usage(input_tokens=40, output_tokens=4))
    # Compacting after two turns: the usage of the last reply (30 + 5); keeping 10 tokens:
    # "There was a dragon" (18 characters: 4 or 5 tokens, as rounded), THEN (4), ONCE (4): 12
    # or 13, the cut is before ONCE (an assistant message) and STORY alone is summarized.
    # After: the summary message (100 characters: 25), ONCE, THEN and the dragon: 37 or 38.
    manual_before = usage_tokens(two.usage)
    manual_kept = stored(one) + turn(THEN, two)
    manual_summary = summary_message(SUMMARY, 1, manual_before)
    case("compaction_manual",
         "compact() on an empty conversation is refused (state: nothing to compact). After two "
         "turns it compacts now: its stream shows compaction_start (reason manual), "
         "compaction_end and message_complete with the summary request's stop reason and usage. "
         "The next turn's request carries the summary message and the kept messages.",
         [{"compact": True}, STORY, THEN, {"compact": True}, "Go on."],
         [one, two, summary, three],
         [{"event": "compact", "code": "state"}] + turn_lines([one]) + turn_lines([two])
         + manual_compaction_lines(manual_before, {"$range": [37, 38]}, 1, summary)
         + turn_lines([three])
         + [conversation_line([manual_summary] + manual_kept + turn("Go on.", three))],
         [request(A, [user(STORY)]),
          request(A, turn(STORY, one) + [user(THEN)]),
          summary_request("[User]: " + STORY),
          request(A, [manual_summary] + manual_kept + [user("Go on.")])],
         config=manual_config, print_conversation=True)

    # Keeping 6 tokens instead: the dragon (4 or 5) and THEN (4) stay, the cut is before THEN,
    # a user message: the summary message and THEN are two user messages in a row, which
    # Anthropic gets as one (conversation_model.anthropic_messages).
    run_summary = summary_message(SUMMARY, 2, manual_before)
    run_kept = [user(THEN)] + stored(two)
    case("compaction_cut_before_user",
         "compact() whose cut falls before a user message (keep_recent_tokens 6: the last "
         "question and its answer stay): the conversation holds the summary message and that "
         "user message in a row, and keeps them apart; the next turn's Anthropic request sends "
         "them as one user message (the API takes no two in a row).",
         [STORY, THEN, {"compact": True}, "Go on."],
         [one, two, summary, three],
         turn_lines([one]) + turn_lines([two])
         + manual_compaction_lines(manual_before, {"$range": [33, 34]}, 2, summary)
         + turn_lines([three])
         + [conversation_line([run_summary] + run_kept + turn("Go on.", three))],
         [request(A, [user(STORY)]),
          request(A, turn(STORY, one) + [user(THEN)]),
          summary_request("[User]: " + STORY + "\n\n[Assistant]: " + ONCE),
          request(A, [run_summary] + run_kept + [user("Go on.")])],
         config={**CONFIG, "compaction": {"keep_recent_tokens": 6, "prompt": PROMPT}},
         print_conversation=True)

    case("compaction_manual_instructions",
         "compact with the user's instructions for the summary: they follow the compaction "
         "prompt in that summary request's system prompt, after a line saying they are the "
         "user's (surrounding blanks trimmed); the config's prompt is unchanged, and the next "
         "compaction's request has the prompt alone. Blank instructions are none.",
         [STORY, THEN, {"compact": {"instructions": "  Keep the dragon.\n"}}, "Go on.",
          {"compact": {"instructions": " "}}],
         [one, two, summary, three, summary],
         turn_lines([one]) + turn_lines([two])
         + manual_compaction_lines(manual_before, {"$range": [37, 38]}, 1, summary)
         + turn_lines([three])
         + manual_compaction_lines(usage_tokens(three.usage), {"$range": [20, 60]}, {"$range": [1, 6]}, summary),
         [request(A, [user(STORY)]),
          request(A, turn(STORY, one) + [user(THEN)]),
          summary_request("[User]: " + STORY, system=PROMPT + FOCUS + "Keep the dragon."),
          request(A, [manual_summary] + manual_kept + [user("Go on.")]),
          {"method": "POST", "path": "/v1/messages",
           "body_contains": {"system": PROMPT, "tools": {"$absent": True}}}],
         config=manual_config)

    call = Reply(A, "msg_call", [ToolCall("toolu_keep_1", "lookup", {"q": "dragon"}, "Found: a dragon.")],
                 usage(input_tokens=20, output_tokens=10))
    told = Reply(A, "msg_told", [Text(ONCE)], usage(input_tokens=950, output_tokens=30))
    after = Reply(A, "msg_after", [Text("It flew away.")], usage(input_tokens=70, output_tokens=4))
    # Before the second turn's request: 980 + 4 > 900. Keeping 10 tokens: THEN (4), ONCE (8),
    # the tool result (4 more: 12): the cut would fall between the tool call and its result;
    # it moves back before the call, and STORY alone is summarized. After: the summary (25),
    # the call (about 5, as its input is written), the result, ONCE and THEN (4 each), with
    # room for ids if they count.
    pair_before = usage_tokens(told.usage) + exact_tokens([user(THEN)])
    pair_kept = stored(call) + stored(told) + [user(THEN)]
    pair_summary = summary_message(SUMMARY, 1, pair_before)
    case("compaction_keeps_tool_pairs",
         "Compaction never separates a tool call from its result: the most recent 10 tokens end "
         "inside a tool round, so the cut moves back before the tool call, and only the first "
         "user message is summarized; the compacted request holds the call and its result.",
         [STORY, THEN], [call, told, summary, after],
         turn_lines([call, told])
         + [{"event": "compaction_start", "tokens_before": pair_before, "reason": "threshold"},
            {"event": "compaction_end", "tokens_before": pair_before,
             "tokens_after": {"$range": [38, 60]}, "message_count": 1, "summary": SUMMARY}]
         + turn_lines([after], extra_usage=summary.usage)
         + [conversation_line([pair_summary] + pair_kept + stored(after))],
         [request(A, [user(STORY)]),
          request(A, turn(STORY, call)),
          summary_request("[User]: " + STORY),
          request(A, [pair_summary] + pair_kept)],
         config={**CONFIG, "compaction": {**compaction, "keep_recent_tokens": 10}},
         tools=[tool(LOOKUP, "Found: a dragon.")], print_conversation=True)

    case("compaction_summary_fails",
         "A summary request that fails (a server error, retries off) fails the turn with its "
         "error, after compaction_start; the conversation is unchanged, and the failed turn's "
         "user message is rolled back, as after any turn that fails before an answer.",
         [STORY, THEN], [first, {"error": {"type": "api_error", "message": "Internal error"}}],
         turn_lines([first])
         + [{"event": "compaction_start", "tokens_before": tokens_before, "reason": "threshold"}]
         + [{"event": "error", "code": "server", "http_status": 500, "type": "api_error",
             "message": "Internal error"}] * 2
         + [conversation_line(turn(STORY, first))],
         [request(A, [user(STORY)]), summary_request("[User]: " + STORY)],
         config={**config, "retry": {"max_retries": 0}}, print_conversation=True)


# ---- Sessions ----------------------------------------------------------------------------------


def session_config(id: str, **more: Any) -> dict[str, Any]:
    return {**CONFIG, "session": {"dir": "$SESSION_DIR", "id": id, **more}}


def info(id: str, resumed: bool, message_count: int, torn_bytes: int = 0) -> dict[str, Any]:
    return ok("session", id=id, resumed=resumed, torn_bytes=torn_bytes, message_count=message_count)


def session_cases() -> None:
    hello = Reply(A, "msg_hello", [Text("Hi.")], usage(input_tokens=10, output_tokens=2))
    again = Reply(A, "msg_again", [Text("Welcome back.")], usage(input_tokens=20, output_tokens=3))
    case("session_resume",
         "An agent with a session writes its turn to the session file; a new agent with the same "
         "config resumes it (resumed, 2 messages) and its next request carries the conversation.",
         [{"session_info": True}, "Hello", {"reopen_agent": True}, {"session_info": True}, "Again"],
         [hello, again],
         [info("s1", False, 0)] + turn_lines([hello]) + [ok("reopen_agent"), info("s1", True, 2)]
         + turn_lines([again]) + [conversation_line(turn("Hello", hello) + turn("Again", again))],
         [request(A, [user("Hello")]), request(A, turn("Hello", hello) + [user("Again")])],
         config=session_config("s1"), print_conversation=True)

    torn = '{"type":"message","message":{"role":"user","con'
    case("session_torn_tail",
         "A torn last line (a crash mid-write: bytes without a newline) is cut off when the "
         "session is opened again, counted in torn_bytes; the conversation before it is there, "
         "the next turn goes on, and the next open finds nothing torn.",
         ["Hello", {"append_to_session": torn}, {"reopen_agent": True}, {"session_info": True},
          "Again", {"reopen_agent": True}, {"session_info": True}],
         [hello, again],
         turn_lines([hello]) + [{"event": "append_to_session"}, ok("reopen_agent"),
                                info("s1", True, 2, torn_bytes=len(torn.encode()))]
         + turn_lines([again]) + [ok("reopen_agent"), info("s1", True, 4),
                                  conversation_line(turn("Hello", hello) + turn("Again", again))],
         [request(A, [user("Hello")]), request(A, turn("Hello", hello) + [user("Again")])],
         config=session_config("s1"), print_conversation=True)

    case("session_locked",
         "A second agent opening a session another agent has open gets session_locked; the first "
         "goes on, and once it is freed the session opens again.",
         ["Hello", {"second_agent": True}, {"session_info": True}, {"reopen_agent": True},
          {"session_info": True}],
         [hello],
         turn_lines([hello]) + [{"event": "second_agent", "code": "session_locked"},
                                info("s1", False, 2), ok("reopen_agent"), info("s1", True, 2)],
         [request(A, [user("Hello")])],
         config=session_config("s1"))

    case("session_resume_missing",
         "mode \"resume\" of a session that does not exist: the agent is not made "
         "(no_such_session, the message names the id).",
         ["Hello"], [],
         [{"event": "error", "code": "no_such_session", "http_status": 0, "type": "",
           "message": {"$contains": "nope"}}],
         [], config=session_config("nope", mode="resume"))

    # The compaction_threshold exchange in a session: the file records the compaction, so the
    # agent that resumes it has the compacted conversation, not the full history.
    first = Reply(A, "msg_first", [Text(ONCE)], usage(input_tokens=950, output_tokens=30))
    summary = Reply(A, "msg_summary", [Text(SUMMARY)], usage(input_tokens=30, output_tokens=8))
    second = Reply(A, "msg_second", [Text("The dragon woke up.")], usage(input_tokens=60, output_tokens=6))
    tokens_before = usage_tokens(first.usage) + exact_tokens([user(THEN)])
    summarized = summary_message(SUMMARY, 1, tokens_before)
    compacted = [summarized] + stored(first) + [user(THEN)] + stored(second)
    case("session_compaction_resumed",
         "A turn that compacts (as in compaction_threshold) in a session: the file records the "
         "compaction as an entry (the summarized messages stay in it), so the agent that resumes "
         "the session has the compacted conversation: 4 messages, the summary first.",
         [STORY, THEN, {"reopen_agent": True}, {"session_info": True}],
         [first, summary, second],
         turn_lines([first])
         + [{"event": "compaction_start", "tokens_before": tokens_before, "reason": "threshold"},
            {"event": "compaction_end", "tokens_before": tokens_before,
             "tokens_after": exact_tokens([summarized] + stored(first) + [user(THEN)]),
             "message_count": 1, "summary": SUMMARY}]
         + turn_lines([second], extra_usage=summary.usage)
         + [ok("reopen_agent"), info("s1", True, 4), conversation_line(compacted)],
         [request(A, [user(STORY)]), summary_request("[User]: " + STORY),
          request(A, compacted[:3])],
         config={**session_config("s1"), "compaction": {
             "enabled": True, "context_window": 1000, "reserve_tokens": 100,
             "keep_recent_tokens": 6, "prompt": PROMPT}},
         print_conversation=True)

    third = Reply(A, "msg_third", [Text("A branch.")], usage(input_tokens=30, output_tokens=3))
    case("session_fork_and_list",
         "Forking a session at message 2: the agent goes on in the new session (its conversation "
         "truncated, its next request without the dropped turn); the parent's file is unchanged "
         "(reopened, it has its 4 messages). The list shows both, newest first, the fork naming "
         "its parent.",
         ["Hello", "Again", {"fork": {"message_count": 2, "id": "s1-branch"}}, "Branch off",
          {"list_sessions": True}, {"reopen_agent": True}, {"session_info": True}],
         [hello, again, third],
         turn_lines([hello]) + turn_lines([again]) + [ok("fork")] + turn_lines([third])
         + [ok("sessions", sessions=[
             {"id": "s1-branch", "message_count": 4, "first_user_text": "Hello",
              "parent": {"id": "s1", "message_count": 2}},
             {"id": "s1", "message_count": 4, "first_user_text": "Hello", "parent": None}]),
            ok("reopen_agent"), info("s1", True, 4),
            conversation_line(turn("Hello", hello) + turn("Again", again))],
         [request(A, [user("Hello")]), request(A, turn("Hello", hello) + [user("Again")]),
          request(A, turn("Hello", hello) + [user("Branch off")])],
         config=session_config("s1"), print_conversation=True)


def folders() -> dict[Path, dict[str, str]]:
    import_export_cases()
    invalid_import_cases()
    edit_cases()
    user_run_cases()
    switch_cases()
    server_block_cases()
    citation_cases()
    compaction_delta_cases()
    reasoning_details_cases()
    compaction_cases()
    session_cases()
    return {CASES_DIR / name: case_texts(data, lines) for name, (data, lines) in CASES.items()}


def main() -> int:
    return generate(__doc__.splitlines()[0], "make_conversation_cases.py", folders)


if __name__ == "__main__":
    sys.exit(main())
