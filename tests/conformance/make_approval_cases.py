"""Writes the issue 36 cases of tool calls that wait for a person's answer (README.md,
"Approvals in a case"): `approval_approve`, `approval_deny`, `approval_mixed_round`,
`approval_rules_order`, `approval_outside`, and `approval_killed_while_waiting` (README.md, "A process killed while
a call waits"). Each transcript is derived here from the scenario and the rules
(include/panto.h, docs/tool-use.md), never from a driver's output.

    .venv/bin/python tests/conformance/make_approval_cases.py           # write them
    .venv/bin/python tests/conformance/make_approval_cases.py --check   # fail if stale

Python 3.11 standard library only."""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from case_files import case_texts, generate
from make_tool_cases import CASES, CONFIG, DONE, Message, add, complete, result, results_request, tool

SHELL_SCHEMA = {"type": "object", "properties": {"command": {"type": "string"}}}
PATH_SCHEMA = {"type": "object", "properties": {"path": {"type": "string"}}}


def start(cid: str, name: str, inp: dict, awaiting: bool = True) -> dict[str, Any]:
    return {"event": "tool_call_start", "id": cid, "name": name, "input": inp, "awaiting_result": awaiting}


def request(calls: list[tuple[str, str, dict]]) -> dict[str, Any]:
    return {"event": "approval_request", "calls": [{"id": c, "name": n, "input": i} for c, n, i in calls]}


def answer(cid: str, how: str) -> dict[str, Any]:
    return {"event": "approval_answer", "id": cid, "answer": how, "code": "ok"}


def denied(reason: str) -> str:
    return f"The user denied this call: {reason}"


def approval_case(description: str, tools: list[dict[str, Any]], calls: list[tuple[str, str, dict]],
                  approvals: dict[str, Any], round_lines: list[dict[str, Any]],
                  contents: list[tuple[str, bool]], config: dict[str, Any] | None = None) -> tuple[dict[str, Any], list[Any]]:
    """One turn: a message asking for `calls`; the round's lines between its message_end and
    its results (`round_lines`); the results in call order (`contents`); then an answer."""
    ask = Message("msg_tools", calls=calls, i=30, o=9)
    reply = Message("msg_answer", text="All done.", i=50, o=4)
    data = {"description": description, "config": config or CONFIG, "turns": ["go"],
            "tools": tools, "approvals": approvals,
            "script": {"responses": [ask.response, reply.response]},
            "expect_requests": [{"method": "POST", "path": "/v1/messages"}, results_request(calls, contents)]}
    lines = (ask.lines() + round_lines
             + [result(cid, name, c, e) for (cid, name, _), (c, e) in zip(calls, contents)]
             + reply.lines() + [complete("end_turn", add(ask.usage, reply.usage)), DONE, DONE])
    return data, lines


def cases() -> dict[str, tuple[dict[str, Any], list[Any]]]:
    out: dict[str, tuple[dict[str, Any], list[Any]]] = {}
    danger = tool("danger", {"return": "done it"}, approval="always")
    free = tool("free", {"return": "free result"})

    calls = [("toolu_1", "danger", {"i": 1})]
    out["approval_approve"] = approval_case(
        'A tool declared "approval": "always": the round begins with an approval_request listing its call, which '
        "gets no tool_call_start until the case approves it; then it runs as any host call.",
        [danger], calls, {"toolu_1": "approve"},
        [request(calls), answer("toolu_1", "approve"), start(*calls[0])],
        [("done it", False)])

    out["approval_deny"] = approval_case(
        "The same call denied with a reason: its tool_call_start comes with awaiting_result false (the handler "
        "never runs) and its result is an error telling the model the reason.",
        [danger], calls, {"toolu_1": {"deny": "not today"}},
        [request(calls), answer("toolu_1", "deny"), start(*calls[0], awaiting=False)],
        [(denied("not today"), True)])

    calls = [("toolu_1", "free", {"i": 1}), ("toolu_2", "danger", {"i": 2}), ("toolu_3", "free", {"i": 3})]
    out["approval_mixed_round"] = approval_case(
        "A round of three calls, the second asks: the approval_request comes first, the other two start and get "
        "their results while it waits (the answer is asked for only once they are in), then the approved call "
        "starts; the results come in call order.",
        [free, danger], calls, {"toolu_2": "approve"},
        [request(calls[1:2]), start(*calls[0]), start(*calls[2]), answer("toolu_2", "approve"), start(*calls[1])],
        [("free result", False), ("done it", False), ("free result", False)])

    shell = dict(tool("shell", {"return": "shell result"}), input_schema=SHELL_SCHEMA)
    calls = [("toolu_1", "shell", {"command": "rm -rf build"}), ("toolu_2", "shell", {"command": "ls -l"}),
             ("toolu_3", "shell", {"command": "cat notes"})]
    rules = [{"tool": "shell", "input": {"path": "/command", "prefix": "rm "}, "decision": "deny",
              "reason": "deleting is not for agents"},
             {"tool": "shell", "input": {"path": "/command", "glob": "ls*"}, "decision": "allow"},
             {"tool": "*", "decision": "ask"}]
    out["approval_rules_order"] = approval_case(
        "approval_rules, first match wins: `rm ...` is denied by the first rule at once (its result the rule's "
        "reason, no answer asked), `ls -l` is allowed by the second, `cat notes` falls to the last rule and asks; "
        "the case denies it.",
        [shell], calls, {"toolu_3": {"deny": "no reading today"}},
        [request(calls[2:3]), start(*calls[0], awaiting=False), start(*calls[1]), answer("toolu_3", "deny"),
         start(*calls[2], awaiting=False)],
        [("The approval rules do not allow this call: deleting is not for agents", True), ("shell result", False),
         (denied("no reading today"), True)],
        config=dict(CONFIG, approval_rules=rules))
    files = dict(tool("files", {"return": "files result"}), input_schema=PATH_SCHEMA)
    calls = [("toolu_1", "files", {"path": "notes.txt"}), ("toolu_2", "files", {"path": "../elsewhere.txt"}),
             ("toolu_3", "files", {"path": "sub/../../x"})]
    rules = [{"tool": "files", "input": {"path": "/path", "outside": "$SESSION_DIR"}, "decision": "ask"}]
    out["approval_outside"] = approval_case(
        "approval_rules' `outside` match (a file tool's path rule): `notes.txt` is inside the directory and runs "
        "unasked; `../elsewhere.txt` and `sub/../../x` lead out of it by `..` and ask; the case approves the first "
        "and denies the second.",
        [files], calls, {"toolu_2": "approve", "toolu_3": {"deny": "stay in the project"}},
        [request(calls[1:3]), start(*calls[0]), answer("toolu_2", "approve"), answer("toolu_3", "deny"),
         start(*calls[1]), start(*calls[2], awaiting=False)],
        [("files result", False), ("files result", False), (denied("stay in the project"), True)],
        config=dict(CONFIG, approval_rules=rules))
    calls = [("toolu_1", "free", {"i": 1}), ("toolu_2", "danger", {"i": 2}), ("toolu_3", "free", {"i": 3})]
    out["approval_killed_while_waiting"] = killed_case(
        "A mixed round in a session: the first process runs the two free calls, then is killed (SIGKILL) while "
        "the second call waits for its answer. A second process opens the session: pending_round lists the round "
        "(the free calls answered, the other asked), resume_turn asks again, announces the answered calls without "
        "running them, runs the approved one, and the turn ends; the model is asked once per message, the round's "
        "results in one request.",
        [free, danger], calls, "toolu_2",
        [("free result", False), ("done it", False), ("free result", False)])
    return out


def killed_case(description: str, tools: list[dict[str, Any]], calls: list[tuple[str, str, dict]], asked: str,
                contents: list[tuple[str, bool]]) -> tuple[dict[str, Any], list[Any]]:
    """A round whose call `asked` waits, the first process killed then, a second one resuming
    the turn from the session and approving it."""
    ask = Message("msg_tools", calls=calls, i=30, o=9)
    reply = Message("msg_answer", text="All done.", i=50, o=4)
    config = dict(CONFIG, session={"dir": "$SESSION_DIR", "id": "s1"})
    waiting = [c for c in calls if c[0] == asked]
    others = [c for c in calls if c[0] != asked]
    data = {"description": description, "config": config, "turns": ["go"], "tools": tools,
            "approvals": {asked: "kill"},
            "after_kill": {"turns": [{"pending_round": True}, {"resume_turn": True}], "approvals": {asked: "approve"}},
            "script": {"responses": [ask.response, reply.response]},
            "expect_requests": [{"method": "POST", "path": "/v1/messages"}, results_request(calls, contents)]}
    first = ask.lines() + [request(waiting)] + [start(*c) for c in others] + [{"event": "killed"}]
    pending = {"event": "pending_round", "code": "ok", "calls": [
        {"id": cid, "name": name, "input": inp, "state": "ask" if cid == asked else "answered"}
        for cid, name, inp in calls]}
    second = ([pending, request(waiting)] + [start(*c, awaiting=False) for c in others]
              + [answer(asked, "approve"), start(*waiting[0])]
              + [result(cid, name, c, e) for (cid, name, _), (c, e) in zip(calls, contents)]
              + reply.lines() + [complete("end_turn", reply.usage), DONE, DONE])
    return data, first + second


def folders() -> dict[Path, dict[str, str]]:
    return {CASES / name: case_texts(data, lines) for name, (data, lines) in cases().items()}


if __name__ == "__main__":
    sys.exit(generate(__doc__.splitlines()[0], "tests/conformance/make_approval_cases.py", folders))
