"""The shape every request's conversation must have, whatever a case did before it (issue 36:
a denial, a steer, a budget, a cancel, a kill): no tool call without its result in the next
message, no tool result without its call, and (Anthropic) never two user messages in a row. The runner
checks it on every request the emulator receives, in every case and language (README.md,
"What every request must be"). Python 3.11 standard library only."""
from __future__ import annotations

import json
from typing import Any


def request_body(request: dict[str, Any]) -> Any:
    body = request.get("body")
    if isinstance(body, str):
        try:
            return json.loads(body) if body.strip() else None
        except ValueError:
            return None
    return body


def problems(request: dict[str, Any]) -> list[str]:
    """What is wrong with the conversation of one request (Anthropic Messages or OpenAI Chat
    Completions; the other wire APIs are checked by their own tests)."""
    path = str(request.get("path", ""))
    body = request_body(request)
    if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
        return []
    if path.startswith("/v1/messages") and not path.startswith("/v1/messages/count_tokens"):
        return anthropic_problems(body["messages"])
    if path.startswith("/v1/chat/completions"):
        return openai_problems(body["messages"])
    return []


def anthropic_problems(messages: list[Any]) -> list[str]:
    found: list[str] = []
    for i, m in enumerate(messages):
        if not isinstance(m, dict):
            continue
        role = m.get("role")
        if i > 0 and isinstance(messages[i - 1], dict) and messages[i - 1].get("role") == role == "user":
            found.append(f"messages[{i - 1}] and messages[{i}] are two user messages in a row")
        blocks = m.get("content") if isinstance(m.get("content"), list) else []
        calls = [b.get("id") for b in blocks if isinstance(b, dict) and b.get("type") == "tool_use"]
        results = [b.get("tool_use_id") for b in blocks if isinstance(b, dict) and b.get("type") == "tool_result"]
        if role == "assistant" and calls:
            after = messages[i + 1] if i + 1 < len(messages) and isinstance(messages[i + 1], dict) else {}
            answered = {b.get("tool_use_id") for b in after.get("content", []) if isinstance(b, dict)
                        and b.get("type") == "tool_result"} if isinstance(after.get("content"), list) else set()
            for cid in calls:
                if cid not in answered:
                    found.append(f"messages[{i}]: tool call {cid} has no result in the next message")
        if role == "user" and results:
            before = messages[i - 1] if i > 0 and isinstance(messages[i - 1], dict) else {}
            asked = {b.get("id") for b in before.get("content", []) if isinstance(b, dict)
                     and b.get("type") == "tool_use"} if isinstance(before.get("content"), list) else set()
            for rid in results:
                if rid not in asked:
                    found.append(f"messages[{i}]: tool result {rid} answers no call of the message before")
    return found


def openai_problems(messages: list[Any]) -> list[str]:
    """Chat Completions takes user messages in a row (user_run_imported sends them so, on
    purpose): only the tool calls are checked."""
    found: list[str] = []
    for i, m in enumerate(messages):
        if not isinstance(m, dict):
            continue
        role = m.get("role")
        calls = [c.get("id") for c in m.get("tool_calls") or [] if isinstance(c, dict)]
        if role == "assistant" and calls:
            answered = set()
            for after in messages[i + 1:]:
                if not isinstance(after, dict) or after.get("role") != "tool":
                    break
                answered.add(after.get("tool_call_id"))
            for cid in calls:
                if cid not in answered:
                    found.append(f"messages[{i}]: tool call {cid} has no tool message after it")
    return found


def _self_test() -> None:
    call = {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "x", "input": {}}]}
    result = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]}
    user = {"role": "user", "content": "hi"}
    assert anthropic_problems([user, call, result]) == []
    assert anthropic_problems([user, call, user]) == ["messages[1]: tool call t1 has no result in the next message"]
    assert anthropic_problems([user, user]) == ["messages[0] and messages[1] are two user messages in a row"]
    assert openai_problems([{"role": "user", "content": "a"}, {"role": "assistant", "tool_calls": [{"id": "c1"}]},
                            {"role": "user", "content": "b"}]) == ["messages[1]: tool call c1 has no tool message after it"]
    assert openai_problems([{"role": "user", "content": "a"}, {"role": "user", "content": "b"}]) == []


if __name__ == "__main__":
    _self_test()
    print("conversation_shape: ok")
