"""Writes the issue 36 cases of steering and follow-ups (README.md, "Steering in a case"):
`steer_during_tool_round`, `steer_while_text_streams`, `steer_before_any_round`,
`follow_up_next_turn`, `steer_withdrawn_before_it_is_taken` and
`steer_skips_a_call_waiting_for_approval`. Each transcript is derived here from the scenario and the rules
(include/panto.h, docs/tool-use.md "Saying something to a running turn"), never from a
driver's output.

    .venv/bin/python tests/conformance/make_steer_cases.py           # write them
    .venv/bin/python tests/conformance/make_steer_cases.py --check   # fail if stale

Python 3.11 standard library only."""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from case_files import case_texts, generate
from make_tool_cases import CASES, CONFIG, DONE, Message, add, complete, result, tool


def steer_call(call: str, text: str, code: str = "ok") -> dict[str, Any]:
    return {"event": "steer_call", "call": call, "text": text, "code": code}


def said(source: str, text: str) -> dict[str, Any]:
    return {"event": "user_message", "source": source, "text": text}


def text_block(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def steered_round(description: str, ask: Message, after: str, steer: str) -> tuple[dict[str, Any], list[Any]]:
    """One turn: `ask` (a message with one lookup call), a steer once the event `after` was
    printed, the round's result, the steer entering after it, then an answer. The second
    request's last message holds the result, then the steer's text."""
    (cid, name, inp), = ask.calls
    reply = Message("msg_answer", text="In metric: 21 C.", i=50, o=4)
    lines = ask.lines() + ask.starts() + [result(cid, name, "21 C")]
    at = next(i for i, l in enumerate(lines) if l["event"] == after) + 1
    lines[at:at] = [steer_call("steer", steer)]
    lines += [said("steer", steer)] + reply.lines() + [complete("end_turn", add(ask.usage, reply.usage)), DONE, DONE]
    data = {"description": description, "config": CONFIG, "turns": ["go"],
            "tools": [tool("lookup", {"return": "21 C"})],
            "steer": [{"after": after, "steer": steer}],
            "script": {"responses": [ask.response, reply.response]},
            "expect_requests": [
                {"method": "POST", "path": "/v1/messages"},
                {"method": "POST", "path": "/v1/messages", "body_contains": {"messages": [
                    {"role": "user", "content": {"$text": "go"}},
                    {"role": "assistant"},
                    {"role": "user", "content": [
                        {"type": "tool_result", "tool_use_id": cid, "content": {"$text": "21 C"}},
                        text_block(steer)]}]}}]}
    return data, lines


def follow_up_case(description: str, call: str, text: str) -> tuple[dict[str, Any], list[Any]]:
    """A text turn with `call` ("steer" or "follow_up") said before any event: no tool round
    takes it, so after the turn's message_complete it starts the stream's next turn; once the
    stream is over, another is refused with "state"."""
    first = Message("msg_first", text="Paris.", i=10, o=2)
    second = Message("msg_second", text="Lyon.", i=20, o=3)
    lines = ([steer_call(call, text)] + first.lines() + [complete("end_turn", first.usage), said("follow_up", text)]
             + second.lines() + [complete("end_turn", second.usage), DONE,
                                 steer_call("follow_up", "Too late.", "state"), DONE])
    data = {"description": description, "config": CONFIG, "turns": ["Which city?"],
            "steer": [{"after": "run", call: text}, {"after": "done", "follow_up": "Too late."}],
            "script": {"responses": [first.response, second.response]},
            "expect_requests": [
                {"method": "POST", "path": "/v1/messages"},
                {"method": "POST", "path": "/v1/messages", "body_contains": {"messages": [
                    {"role": "user", "content": {"$text": "Which city?"}},
                    {"role": "assistant", "content": [text_block("Paris.")]},
                    {"role": "user", "content": {"$text": text}}]}}]}
    return data, lines


def withdraw_call(messages: list[tuple[str, str]]) -> dict[str, Any]:
    return {"event": "withdraw_call", "messages": [{"source": s, "text": t} for s, t in messages], "code": "ok"}


def withdrawn_case(description: str) -> tuple[dict[str, Any], list[Any]]:
    """A steer and a follow-up said before the turn's first event, then taken back: the turn
    runs as if neither was said (one request, no user_message, no second turn); taken back
    again after the end, nothing is left."""
    first = Message("msg_first", text="Paris.", i=10, o=2)
    said_ = [("steer", "Use metric units."), ("follow_up", "And the second biggest?")]
    lines = ([steer_call(c, t) for c, t in said_] + [withdraw_call(said_)] + first.lines()
             + [complete("end_turn", first.usage), DONE, withdraw_call([]), DONE])
    data = {"description": description, "config": CONFIG, "turns": ["Which city?"],
            "steer": [{"after": "run", c: t} for c, t in said_]
            + [{"after": "run", "withdraw": True}, {"after": "done", "withdraw": True}],
            "script": {"responses": [first.response]},
            "expect_requests": [
                {"method": "POST", "path": "/v1/messages", "body_contains": {"messages": [
                    {"role": "user", "content": {"$text": "Which city?"}}]}}]}
    return data, lines


def cases() -> dict[str, tuple[dict[str, Any], list[Any]]]:
    out: dict[str, tuple[dict[str, Any], list[Any]]] = {}
    call = ("toolu_1", "lookup", {"i": 1})
    out["steer_during_tool_round"] = steered_round(
        "A steer said while a tool call runs (after its tool_call_start) waits for the round's end: after the "
        "tool_result comes a user_message (source steer), and the next request's last user message holds the "
        "result, then the steer's text (one user message, never two in a row).",
        Message("msg_tools", calls=[call], i=30, o=9), "tool_call_start", "Use metric units.")
    out["steer_while_text_streams"] = steered_round(
        "A steer said while the model's text streams (after its first content_delta), in a message that goes on "
        "to ask for a tool: taken at the end of that round, after its result.",
        Message("msg_tools", text="Let me look.", calls=[call], i=30, o=9), "content_delta", "Use metric units.")
    out["steer_before_any_round"] = follow_up_case(
        "A steer said before the turn's first event, in a turn with no tool round: no round takes it, so once the "
        "turn's message_complete is out it becomes the user message of the stream's next turn (user_message "
        "source follow_up); the stream ends after that turn; a follow-up after the end is refused with state.",
        "steer", "And the second biggest?")
    out["follow_up_next_turn"] = follow_up_case(
        "A follow-up said before the turn's first event: after the turn's message_complete the same stream goes on "
        "with a user_message (source follow_up) and the next turn, its own usage in its message_complete; done "
        "comes after the last turn; a follow-up after the end is refused with state.",
        "follow_up", "And the second biggest?")
    out["steer_withdrawn_before_it_is_taken"] = withdrawn_case(
        "A steer and a follow-up said before the turn's first event, then taken back (C "
        "panto_stream_withdraw_queued, a terminal's Alt-Up): both come back in the order said, with their "
        "sources, and never reach the model: one request, no user_message, no second turn. Taken back after "
        "the stream's end: nothing.")
    out["steer_skips_a_call_waiting_for_approval"] = steer_at_approval(
        "A round whose second call asks for an approval; the user steers right after the approval_request instead "
        "of answering: the free call runs, and the asked one is never run: its tool_call_start comes with "
        "awaiting_result false and its result is the error \"Skipped: the user steered.\" (no approval_answer); "
        "the steer enters after the round's results, and the next request carries both.")
    return out


def steer_at_approval(description: str) -> tuple[dict[str, Any], list[Any]]:
    calls = [("toolu_1", "lookup", {"i": 1}), ("toolu_2", "danger", {"i": 2})]
    ask = Message("msg_tools", calls=calls, i=30, o=9)
    reply = Message("msg_answer", text="Understood.", i=50, o=4)
    steer = "Leave the files alone."
    skipped = "Skipped: the user steered."
    request = {"event": "approval_request", "calls": [{"id": "toolu_2", "name": "danger", "input": {"i": 2}}]}
    start = lambda cid, name, inp, awaiting: {"event": "tool_call_start", "id": cid, "name": name, "input": inp,
                                               "awaiting_result": awaiting}
    lines = (ask.lines() + [request, steer_call("steer", steer), start(*calls[0], True), start(*calls[1], False),
                            result("toolu_1", "lookup", "21 C"), result("toolu_2", "danger", skipped, True),
                            said("steer", steer)]
             + reply.lines() + [complete("end_turn", add(ask.usage, reply.usage)), DONE, DONE])
    data = {"description": description, "config": CONFIG, "turns": ["go"],
            "tools": [tool("lookup", {"return": "21 C"}), tool("danger", {"return": "done it"}, approval="always")],
            "steer": [{"after": "approval_request", "steer": steer}],
            "script": {"responses": [ask.response, reply.response]},
            "expect_requests": [
                {"method": "POST", "path": "/v1/messages"},
                {"method": "POST", "path": "/v1/messages", "body_contains": {"messages": [
                    {"role": "user", "content": {"$text": "go"}},
                    {"role": "assistant"},
                    {"role": "user", "content": [
                        {"type": "tool_result", "tool_use_id": "toolu_1", "content": {"$text": "21 C"}},
                        {"type": "tool_result", "tool_use_id": "toolu_2", "content": {"$text": skipped},
                         "is_error": True},
                        text_block(steer)]}]}}]}
    return data, lines


def folders() -> dict[Path, dict[str, str]]:
    return {CASES / name: case_texts(data, lines) for name, (data, lines) in cases().items()}


if __name__ == "__main__":
    sys.exit(generate(__doc__.splitlines()[0], "tests/conformance/make_steer_cases.py", folders))
