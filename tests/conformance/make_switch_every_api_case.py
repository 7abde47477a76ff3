#!/usr/bin/env python3
"""Generates cases/switch_every_api: one conversation through the five wire APIs (issue 29's
"a provider switch through all ... APIs in one conversation").

    .venv/bin/python tests/conformance/make_switch_every_api_case.py          # (re)write it
    .venv/bin/python tests/conformance/make_switch_every_api_case.py --check  # fail if stale

Anthropic (thinking on) calls a tool, then each turn switches with set_config: OpenAI Chat
Completions, OpenAI Responses, Gemini (a Gemini 3 model: its own call is signed, the earlier
ones are another provider's), Bedrock (a Claude model: cache points by default), and back
to Anthropic's first model. Each of the first four providers calls the tool once. Written
from the providers' wire rules (docs/requests.md, docs/conversations.md: each request carries
the whole conversation in its provider's form, thinking only to the model that made it, with
its signature), never from a driver's output. Edit this script, not the folder.

Python 3.11 standard library only.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from case_files import case_texts, generate

HERE = Path(__file__).resolve().parent
FOLDER = HERE / "cases" / "switch_every_api"

LOOKUP = {"name": "lookup", "description": "Looks a word up.",
          "input_schema": {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]},
          "behavior": {"return": "Found: 42"}}
A, O, R, G, B = "anthropic", "openai", "openai-responses", "gemini", "bedrock"
MODEL = {A: "claude-test", O: "gpt-test", R: "gpt-test", G: "gemini-3-test", B: "anthropic.claude-test-v1:0"}
# What each API says when a message ends on a tool call, and on an answer.
STOP = {A: ("tool_use", "end_turn"), O: ("tool_calls", "stop"), R: ("completed", "completed"),
        G: ("STOP", "STOP"), B: ("tool_use", "end_turn")}
SIGNATURE = "sig-a1"


def usage(i: int, o: int) -> dict[str, int]:
    return {"input_tokens": i, "output_tokens": o, "cache_read_tokens": 0, "cache_write_tokens": 0,
            "reasoning_tokens": 0}


def compact(v: Any) -> str:
    return json.dumps(v, separators=(",", ":"))


class Reply:
    """A scripted assistant message: optional thinking, then a call of `lookup` or a text."""

    def __init__(self, provider: str, rid: str, q: str | None = None, text: str | None = None,
                 thinking: str | None = None, call_id: str | None = None, tokens: tuple[int, int] = (10, 5)):
        self.provider, self.rid, self.q, self.text, self.thinking = provider, rid, q, text, thinking
        self.tokens = tokens
        # Gemini names no call: the emulator's id is call_<response id>_<call ordinal>.
        self.call_id = f"call_{rid}_0" if provider == G and q is not None else call_id

    def script(self) -> dict[str, Any]:
        content: list[dict[str, Any]] = []
        if self.thinking:
            content.append({"type": "thinking", "thinking": self.thinking, "signature": SIGNATURE,
                            "deltas": [self.thinking]})
        if self.q is not None:
            call: dict[str, Any] = {"type": "tool_use", "name": "lookup", "input": {"q": self.q},
                                    "deltas": [compact({"q": self.q})]}
            if self.provider == G:
                del call["deltas"]  # Gemini sends a call's args whole
            else:
                call["id"] = self.call_id
            content.append(call)
        else:
            content.append({"type": "text", "text": self.text, "deltas": [self.text]})
        message: dict[str, Any] = {"content": content, "stop_reason": "tool_use" if self.q is not None else "end_turn",
                                   "usage": {"input_tokens": self.tokens[0], "output_tokens": self.tokens[1]}}
        if self.provider != B:  # Bedrock's stream names neither
            message["id"] = self.rid
            message["model"] = MODEL[self.provider]
        return {"message": message}

    @property
    def stop(self) -> tuple[str, str]:
        return ("tool_use" if self.q is not None else "end_turn"), STOP[self.provider][0 if self.q is not None else 1]

    def lines(self) -> list[dict[str, Any]]:
        if self.provider == B:
            out: list[dict[str, Any]] = [{"event": "message_start", "id": "", "model": ""}]
        else:
            out = [{"event": "message_start", "id": self.rid, "model": MODEL[self.provider]}]
        i = 0
        if self.thinking:
            out += [{"event": "block_start", "index": i, "kind": "thinking"},
                    {"event": "content_delta", "index": i, "kind": "thinking", "text": self.thinking},
                    {"event": "block_complete", "index": i, "kind": "thinking", "text": self.thinking}]
            i += 1
        if self.q is not None:
            args = compact({"q": self.q})
            out += [{"event": "block_start", "index": i, "kind": "tool_call"},
                    {"event": "tool_details", "index": i, "id": self.call_id, "name": "lookup"},
                    {"event": "content_delta", "index": i, "kind": "tool_call", "text": args},
                    {"event": "block_complete", "index": i, "kind": "tool_call", "text": args}]
        else:
            out += [{"event": "block_start", "index": i, "kind": "text"},
                    {"event": "content_delta", "index": i, "kind": "text", "text": self.text},
                    {"event": "block_complete", "index": i, "kind": "text", "text": self.text}]
        stop, provider_stop = self.stop
        out.append({"event": "message_end", "stop_reason": stop, "provider_stop_reason": provider_stop,
                    "usage": usage(*self.tokens)})
        if self.q is not None:
            out += [{"event": "tool_call_start", "id": self.call_id, "name": "lookup", "input": {"q": self.q},
                     "awaiting_result": True},
                    {"event": "tool_result", "id": self.call_id, "name": "lookup", "content": "Found: 42",
                     "is_error": False, "parts": []}]
        return out


def turn_lines(replies: list[Reply]) -> list[dict[str, Any]]:
    lines = [l for r in replies for l in r.lines()]
    stop, provider_stop = replies[-1].stop
    total = usage(sum(r.tokens[0] for r in replies), sum(r.tokens[1] for r in replies))
    return lines + [{"event": "message_complete", "stop_reason": stop, "provider_stop_reason": provider_stop,
                     "usage": total}, {"event": "done"}, {"event": "done"}]


TURNS = [
    ("What is x?", None, [Reply(A, "msg_a1", q="x", thinking="Look x up.", call_id="toolu_01A"),
                          Reply(A, "msg_a2", text="x is 42.")]),
    ("And y?", {"provider": O, "model": MODEL[O], "thinking": "off"},
     [Reply(O, "chatcmpl-o1", q="y", call_id="call_o1"), Reply(O, "chatcmpl-o2", text="y is 42 too.")]),
    ("And z?", {"provider": R, "model": MODEL[R]},
     [Reply(R, "resp_r1", q="z", call_id="call_r1"), Reply(R, "resp_r2", text="z is 42 as well.")]),
    ("And w?", {"provider": G, "model": MODEL[G]},
     [Reply(G, "resp-g1", q="w"), Reply(G, "resp-g2", text="w is 42.")]),
    ("Sum?", {"provider": B, "model": MODEL[B]}, [Reply(B, "", text="168.")]),
    ("Thanks.", {"provider": A, "model": MODEL[A], "thinking": "low"}, [Reply(A, "msg_a3", text="You are welcome.")]),
]


# ---- What each API must be sent at the end of its turn ----------------------------------------
# One history in each API's form: for every earlier turn, the question, the call, its result and
# the answer. Thinking goes back only to the model that made it (Anthropic's, in the last turn).

def history(upto: int) -> list[tuple[str, Reply | None, str]]:
    """(question, the turn's call if any, its answer text) of turns 0..upto-1."""
    out = []
    for question, _, replies in TURNS[:upto]:
        call = next((r for r in replies if r.q is not None), None)
        out.append((question, call, replies[-1].text))
    return out


def openai_messages(turn: int) -> list[dict[str, Any]]:
    msgs: list[dict[str, Any]] = []
    for question, call, answer in history(turn):
        msgs.append({"role": "user", "content": {"$text": question}})
        if call:
            msgs.append({"role": "assistant", "tool_calls": [{"id": call.call_id, "type": "function", "function": {
                "name": "lookup", "arguments": {"$json": {"q": call.q}}}}]})
            msgs.append({"role": "tool", "tool_call_id": call.call_id, "content": {"$text": "Found: 42"}})
        msgs.append({"role": "assistant", "content": {"$text": answer}})
    return msgs


def responses_input(turn: int) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    for question, call, answer in history(turn):
        items.append({"role": "user", "content": [{"type": "input_text", "text": question}]})
        if call:
            items.append({"type": "function_call", "call_id": call.call_id, "name": "lookup",
                          "arguments": {"$json": {"q": call.q}}})
            items.append({"type": "function_call_output", "call_id": call.call_id, "output": "Found: 42"})
        items.append({"role": "assistant", "content": answer})  # (an EasyInputMessage's string)
    return items


def gemini_contents(turn: int) -> list[dict[str, Any]]:
    contents: list[dict[str, Any]] = []
    for question, call, answer in history(turn):
        contents.append({"role": "user", "parts": [{"text": question}]})
        if call:
            contents.append({"role": "model", "parts": [{"functionCall": {"name": "lookup", "args": {"q": call.q}}}]})
            contents.append({"role": "user", "parts": [{"functionResponse": {"name": "lookup",
                                                                              "response": {"output": "Found: 42"}}}]})
        contents.append({"role": "model", "parts": [{"text": answer}]})
    return contents


def bedrock_messages(turn: int) -> list[dict[str, Any]]:
    msgs: list[dict[str, Any]] = []
    for question, call, answer in history(turn):
        msgs.append({"role": "user", "content": [{"text": question}]})
        if call:
            msgs.append({"role": "assistant", "content": [{"toolUse": {"toolUseId": call.call_id, "name": "lookup",
                                                                        "input": {"q": call.q}}}]})
            msgs.append({"role": "user", "content": [{"toolResult": {"toolUseId": call.call_id,
                                                                      "content": [{"text": "Found: 42"}]}}]})
        msgs.append({"role": "assistant", "content": [{"text": answer}]})
    return msgs


def anthropic_messages(turn: int) -> list[dict[str, Any]]:
    msgs: list[dict[str, Any]] = []
    for question, call, answer in history(turn):
        msgs.append({"role": "user", "content": [{"type": "text", "text": question}]})
        if call:
            blocks: list[dict[str, Any]] = []
            if call.thinking:  # Anthropic's own, to the same model: back with its signature
                blocks.append({"type": "thinking", "thinking": call.thinking, "signature": SIGNATURE})
            blocks.append({"type": "tool_use", "id": call.call_id, "name": "lookup", "input": {"q": call.q}})
            msgs.append({"role": "assistant", "content": blocks})
            msgs.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": call.call_id,
                                                      "content": {"$text": "Found: 42"}}]})
        msgs.append({"role": "assistant", "content": [{"type": "text", "text": answer}]})
    return msgs


def requests() -> list[dict[str, Any]]:
    """Every request's path; the body of each provider's last request holds the whole
    conversation so far (its turn's question last)."""
    gemini_path = f"/v1beta/models/{MODEL[G]}:streamGenerateContent?alt=sse"
    bedrock_path = "/model/anthropic.claude-test-v1%3A0/converse-stream"
    paths = {A: "/v1/messages", O: "/v1/chat/completions", R: "/v1/responses", G: gemini_path, B: bedrock_path}
    out: list[dict[str, Any]] = []
    for t, (question, _, replies) in enumerate(TURNS):
        provider = replies[0].provider
        for k, reply in enumerate(replies):
            out.append({"method": "POST", "path": paths[provider]})
        last = out[-1]
        # The request of the turn's answer: every earlier turn, the question, then this turn's call.
        call = next((r for r in replies if r.q is not None), None)
        if provider == O:
            msgs = openai_messages(t) + [{"role": "user", "content": {"$text": question}},
                                         {"role": "assistant", "tool_calls": [{"id": call.call_id, "type": "function", "function": {
                                             "name": "lookup", "arguments": {"$json": {"q": call.q}}}}]},
                                         {"role": "tool", "tool_call_id": call.call_id, "content": {"$text": "Found: 42"}}]
            last["body_contains"] = {"messages": msgs}
        elif provider == R:
            last["body_contains"] = {"input": responses_input(t) + [
                {"role": "user", "content": [{"type": "input_text", "text": question}]},
                {"type": "function_call", "call_id": call.call_id, "name": "lookup", "arguments": {"$json": {"q": call.q}}},
                {"type": "function_call_output", "call_id": call.call_id, "output": "Found: 42"}]}
        elif provider == G:
            last["body_contains"] = {"contents": gemini_contents(t) + [
                {"role": "user", "parts": [{"text": question}]},
                # Its own call of this turn goes back with its signature.
                {"role": "model", "parts": [{"functionCall": {"name": "lookup", "args": {"q": call.q}},
                                             "thoughtSignature": {"$prefix": ""}}]},
                {"role": "user", "parts": [{"functionResponse": {"name": "lookup", "response": {"output": "Found: 42"}}}]}]}
        elif provider == B:
            msgs = bedrock_messages(t) + [{"role": "user", "content": [{"text": question}]}]
            msgs[-1]["content"].append({"cachePoint": {"type": "default"}})  # mode auto: the last message
            last["body_contains"] = {"messages": msgs}
        elif t == len(TURNS) - 1:
            last["body_contains"] = {"messages": anthropic_messages(t) + [
                {"role": "user", "content": [{"type": "text", "text": question}]}]}
    return out


def folders() -> dict[Path, dict[str, str]]:
    turns: list[Any] = []
    lines: list[dict[str, Any]] = []
    for question, switch, replies in TURNS:
        if switch is not None:
            turns.append({"set_config": switch})
            lines.append({"event": "set_config", "code": "ok"})
        turns.append(question)
        lines += turn_lines(replies)
    data = {
        "description": "One conversation through the five wire APIs, switched with set_config between turns: "
                       "Anthropic (thinking on) calls a tool, then OpenAI Chat Completions, OpenAI Responses and "
                       "Gemini (a Gemini 3 model) each call it once, Bedrock (a Claude model) answers, and "
                       "Anthropic's first model ends it. Each API's last request holds the whole conversation "
                       "in its own form: the calls and results of the other providers (their ids kept where "
                       "every API takes them), no thinking but to the model that made it (Anthropic's, with "
                       "its signature, in the last turn), Gemini's own call of its turn signed.",
        "config": {"provider": A, "model": MODEL[A], "api_key": "test-key", "thinking": "low"},
        "turns": turns,
        "tools": [LOOKUP],
        "script": {"responses": [r.script() for _, _, replies in TURNS for r in replies]},
        "expect_requests": requests(),
    }
    return {FOLDER: case_texts(data, lines)}


if __name__ == "__main__":
    sys.exit(generate(__doc__.splitlines()[0], "tests/conformance/make_switch_every_api_case.py", folders))
