#!/usr/bin/env python3
"""Cancel soak: turns canceled (or timed out) at random instants, each followed by a full
turn on the same agent (tests/soak/README.md).

    cancel_soak.py [--lang c|c-stepped|python|go|lua ...] [--turns N | --turns LANG=N ...] [--seed S]

Runs the provider emulator over plain HTTP and over TLS (the test certificates, reached as
`localhost`), and over plain HTTP under a name a slow loopback nameserver answers
(tests/net/dns_server.py), a driver per language and transport (one agent each, renewed now
and then so its conversation stays small), and after every canceled turn checks that the turn
ended canceled, timed out or complete, never otherwise; that the conversation kept exactly
what was seen; and that the next turn on the same agent completes with the expected text, over
the connection expected (the one kept, or a new one), as the agent's connection counters and
the emulator agree. Prints the seed (set it with --seed or $SOAK_SEED to replay a run) and a
histogram of the phases the cancels hit, and fails when a phase was never hit (a soak that no
longer reaches a phase proves nothing about it).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import select
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bindings-py"))
sys.path.insert(0, str(ROOT / "tests" / "net"))
from panto.emulator import Emulator  # noqa: E402  (standard library only)
from dns_server import Nameserver, Query  # noqa: E402  (standard library only)

BUILD = ROOT / "build" / "soak"
# c-stepped: the C driver stepping its turns (panto_step_event in a poll() loop), canceled from
# the loop's thread or another one; Go's driver always steps (its binding does).
LANGS = ["c", "c-stepped", "python", "go", "lua"]

# Where a cancel landed, as the emulator and the driver saw it, in the order of a turn.
PHASES = [
    "dns",                # the name's lookup asked the nameserver, no answer yet
    "connect",            # no connection reached the server, no lookup pending: before the
                          # turn began, the lookup from /etc/hosts, the connect
    "tls_handshake",      # a connection, its TLS handshake not completed
    "request_head",       # a connection ready (new or reused), no request received yet
    "request_body",       # the request's head received, its body not read (a write blocked)
    "response_head",      # a request received, none of its answer's events seen
    "between_events",     # some events of an answer seen, not its end
    "tool_dispatch",      # a message asked for a tool: its handler, or the next request's start
    "after_end",          # the turn completed first
]

TOOL = {
    "name": "lookup",
    "description": "Looks a word up.",
    "input_schema": {"type": "object", "properties": {"q": {"type": "string"}},
                     "required": ["q"]},
}

# Generous bounds, so that a turn that hangs fails the soak instead of hanging it.
TIMEOUTS = {"connect_ms": 10000, "first_byte_ms": 10000, "idle_ms": 10000, "total_ms": 30000}
REPLY_DEADLINE_S = 60.0
# An agent is renewed after this many trials (its conversation grows with every turn).
TRIALS_PER_AGENT = 40
# A request body this large fills the loopback socket buffers while the emulator waits
# (read_delay_ms), so that the driver's write blocks and a cancel can land in it.
BIG_PAD = 4_000_000
# The name the `dns` transport's base URL holds: not in /etc/hosts, so panto asks the soak's
# nameserver (PANTO_RESOLV_CONF), which answers it 127.0.0.1 and ::1, late.
DNS_HOST = "api.panto.test"
RESOLV_CONF = BUILD / "resolv.conf"
# The transports, in the order each driver runs them, and their share of its turns.
TRANSPORTS = [("http", 0.4), ("https", 0.4), ("dns", 0.2)]


def driver_command(lang: str) -> List[str]:
    """Builds the language's driver if it needs building; returns how to run it."""
    BUILD.mkdir(parents=True, exist_ok=True)
    if lang in ("c", "c-stepped"):
        exe = BUILD / "soak_driver_c"
        subprocess.run(["cc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-pthread",
                        "-Iinclude", "tests/soak/drivers/soak_driver.c", "-o", str(exe),
                        "-Lzig-out/lib", "-lpanto", f"-Wl,-rpath,{ROOT}/zig-out/lib"],
                       cwd=ROOT, check=True)
        return [str(exe)] + (["--stepped"] if lang == "c-stepped" else [])
    if lang == "go":
        exe = BUILD / "soak_driver_go"
        subprocess.run(["go", "build", "-o", str(exe), "./cmd/soak-driver"],
                       cwd=ROOT / "libpanto-go", check=True)
        return [str(exe)]
    if lang == "python":
        return [sys.executable, str(ROOT / "tests/soak/drivers/soak_driver.py")]
    if lang == "lua":
        return ["lua5.4", str(ROOT / "tests/soak/drivers/soak_driver.lua")]
    raise ValueError(f"unknown language {lang}")


class Driver:
    """A driver process: one agent, one JSON reply per command line."""

    def __init__(self, command: List[str], config: Dict[str, Any],
                 env: Optional[Dict[str, str]] = None) -> None:
        self.proc = subprocess.Popen(command + [json.dumps(config), json.dumps(TOOL)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=ROOT,
                                     env=dict(os.environ, **(env or {})))
        self.buffer = b""

    def send(self, line: str) -> Dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(line.encode() + b"\n")
        self.proc.stdin.flush()
        deadline = time.monotonic() + REPLY_DEADLINE_S
        fd = self.proc.stdout.fileno()
        while b"\n" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise SoakFailure(f"no reply to {line[:80]!r} within {REPLY_DEADLINE_S} s")
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                raise SoakFailure(f"the driver exited ({self.proc.wait()}) on {line[:80]!r}")
            self.buffer += chunk
        reply, _, self.buffer = self.buffer.partition(b"\n")
        return json.loads(reply)

    def sockets(self) -> set:
        """The sockets the driver holds open (their inodes): the agent's connections."""
        folder = f"/proc/{self.proc.pid}/fd"
        found = set()
        for fd in os.listdir(folder):
            try:
                target = os.readlink(f"{folder}/{fd}")
            except OSError:
                continue  # closed meanwhile
            if target.startswith("socket:"):
                found.add(target)
        return found

    def kill(self) -> None:
        self.proc.kill()
        self.proc.wait()

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            raise SoakFailure("the driver did not exit after its input ended")
        if self.proc.returncode != 0:
            raise SoakFailure(f"the driver exited with status {self.proc.returncode}")


class SoakFailure(Exception):
    pass


def text_message(text: str, tool_q: Optional[str] = None) -> Dict[str, Any]:
    words = text.split(" ")
    content: List[Dict[str, Any]] = [{"type": "text", "text": text,
                                      "deltas": [w + " " for w in words[:-1]] + [words[-1]]}]
    if tool_q is not None:
        content.append({"type": "tool_use", "name": "lookup", "input": {"q": tool_q}})
    return {"content": content, "usage": {"input_tokens": 3, "output_tokens": 2}}


@dataclass
class Trial:
    """One canceled turn: what the emulator answers, when the cancel (or timeout) comes."""
    index: int
    shape: str
    responses: List[Dict[str, Any]]
    texts: List[str]  # the text of each message, if the turn runs to its end
    sleep_us: int = 0
    pad: int = 0
    cancel_us: int = -1
    timeouts: Optional[Dict[str, int]] = None
    start: str = "new agent"  # the agent's connection: new agent, keep, close, idle_close
    lookup_ms: int = 0  # how late the nameserver answers (the dns transport)

    @property
    def prompt(self) -> str:
        return f"Question {self.index}"


def plan_trial(rng: random.Random, index: int, fresh: bool, tls: bool, lookup_ms: int) -> Trial:
    """A random turn shape and a random instant to end it (`fresh`: the turn opens a
    connection; `lookup_ms`: the nameserver's delay, when the name is looked up there)."""
    shape = rng.choices(["text", "tools", "big"], weights=[42, 38, 20])[0]
    pace = {"chunk_delay_ms": rng.choice([0, 0, 1, 2, 3]),
            "framing": rng.choice(["chunked", "chunked", "content-length"])}
    words = " ".join(f"w{index}.{k}" for k in range(rng.randint(2, 8)))
    answer = f"Answer {index}: {words}"
    if shape == "tools":
        first = f"Looking up {index}."
        responses = [dict(pace, message=text_message(first, f"q{index}")),
                     dict(pace, message=text_message(answer), delay_ms=rng.randint(0, 4))]
        trial = Trial(index, shape, responses, [first, answer], sleep_us=rng.randint(0, 4000))
    elif shape == "big":
        responses = [dict(pace, message=text_message(answer), read_delay_ms=rng.randint(10, 40))]
        trial = Trial(index, shape, responses, [answer], pad=BIG_PAD)
    else:
        responses = [dict(pace, message=text_message(answer), delay_ms=rng.choice([0, rng.randint(1, 8)]))]
        trial = Trial(index, shape, responses, [answer])
    trial.lookup_ms = lookup_ms
    # How long the turn takes, roughly: when its instants are.
    length_us = 1500 if fresh and tls else 500
    if fresh:
        length_us += 1000 * lookup_ms
    for r in responses:
        events = 6 + 3 * len(r["message"]["content"]) + len(r["message"]["content"][0]["deltas"])
        length_us += 1000 * (r.get("delay_ms", 0) + r.get("read_delay_ms", 0)
                             + events * r["chunk_delay_ms"]) + 400
    length_us += trial.sleep_us
    if shape == "big":
        length_us += 5000  # writing and reading the 4 MB body
    if rng.random() < 0.2:
        which = rng.choice(["total_ms", "total_ms", "first_byte_ms", "idle_ms", "connect_ms"])
        limit = {"total_ms": rng.randint(1, max(1, length_us // 1000 + 2)),
                 "first_byte_ms": rng.randint(1, 10), "idle_ms": rng.randint(1, 4),
                 "connect_ms": rng.randint(1, 3)}[which]
        trial.timeouts = dict(TIMEOUTS, **{which: limit})
    elif fresh and lookup_ms and rng.random() < 0.4:
        trial.cancel_us = rng.randint(0, 1000 * lookup_ms)  # while the nameserver holds the answer
    elif rng.random() < (0.2 if fresh else 0.05):
        # At once: before the turn begins, the lookup, the connect.
        trial.cancel_us = rng.choice([0, rng.randint(0, 300)])
    elif rng.random() < 0.3:
        trial.cancel_us = rng.randint(0, 3000)  # early: the connection, TLS, the request
    elif shape == "big" and rng.random() < 0.5:
        # While the emulator waits before reading the body: the write blocked (the 4 MB
        # body takes a few ms to make, before its head goes out).
        trial.cancel_us = rng.randint(3000, 1000 * responses[0]["read_delay_ms"] + 3000)
    else:
        trial.cancel_us = rng.randint(0, int(length_us * 1.2))
    return trial


def phase_of(trial: Trial, reply: Dict[str, Any], requests: List[Dict[str, Any]],
             connections: Dict[str, int], tls: bool, lookups: List[Query],
             replied_at: float) -> str:
    """Where the turn was when the cancel (or timeout) landed (`lookups`: the queries the
    nameserver received during the turn; `replied_at`: when the driver's reply came)."""
    if reply["end"] == "done":
        return "after_end"
    events = reply["events"]
    starts = events.count("message_start")
    if not requests:
        if connections["accepted"] == 0 and trial.start != "keep":
            # The turn ended while a query was unanswered: in the lookup. (An answer sent
            # between the cancel and the reply counts the turn in `connect`.)
            if any(q.answered is None or q.answered > replied_at for q in lookups):
                return "dns"
            return "connect"
        if tls and connections["accepted"] > connections["tls_handshakes"]:
            return "tls_handshake"
        return "request_head"
    if requests[-1]["body"] is None:
        return "request_body"
    if starts < len(requests):
        return "response_head"
    last_message = events[len(events) - 1 - events[::-1].index("message_start"):]
    if "message_end" in last_message and trial.shape == "tools" and starts == 1:
        return "tool_dispatch"  # the message asking for the tool ended; the next not begun
    return "between_events"


# ---- checks --------------------------------------------------------------------------------

def fail(what: str, trial: Trial, reply: Dict[str, Any]) -> None:
    shown = {k: v for k, v in reply.items() if k != "conversation"}
    raise SoakFailure(f"trial {trial.index} ({trial.shape} after {trial.start}, "
                      f"cancel_us {trial.cancel_us}, "
                      f"timeouts {trial.timeouts}): {what}\n  reply: {json.dumps(shown)[:2000]}"
                      f"\n  script: {json.dumps(trial.responses)[:2000]}")


def message_texts(messages: List[Dict[str, Any]]) -> List[str]:
    return [b["text"] for m in messages if m["role"] == "assistant"
            for b in m["content"] if b["type"] == "text"]


def check_tool_pairs(conversation: List[Dict[str, Any]]) -> Optional[str]:
    """Every tool call is answered in the next message (as the providers require)."""
    for i, m in enumerate(conversation):
        calls = [b["id"] for b in m["content"] if b["type"] == "tool_call"]
        if not calls:
            continue
        after = conversation[i + 1]["content"] if i + 1 < len(conversation) else []
        results = [b["id"] for b in after if b["type"] == "tool_result"]
        if results != calls:
            return f"message {i}'s tool calls {calls} are answered by {results}"
    return None


def check_user_message(message: Dict[str, Any], text: str) -> bool:
    return message["role"] == "user" and message["content"] == [{"type": "text", "text": text}]


def check_canceled_turn(trial: Trial, reply: Dict[str, Any], before: List[Dict[str, Any]]) -> None:
    allowed = ("done", "timeout") if trial.timeouts else ("done", "canceled")
    if reply["end"] not in allowed:
        fail(f"the turn ended {reply['end']!r}, not one of {allowed}", trial, reply)
    if "provider_retry" in reply["events"]:
        fail("a provider_retry", trial, reply)
    conversation = reply["conversation"]
    if conversation[:len(before)] != before:
        fail("the conversation before the turn changed", trial, reply)
    new = conversation[len(before):]
    # A turn that failed or was canceled keeping nothing takes its user message back out
    # (docs/conversations.md): no new message at all, so no two user messages in a row later.
    if not new:
        if reply["end"] == "done":
            fail("a complete turn left no message", trial, reply)
    elif not check_user_message(new[0], trial.prompt + "x" * trial.pad):
        fail("the turn's user message is not the first new message", trial, reply)
    elif len(new) == 1 and reply["end"] != "done":
        fail("a failed turn that kept nothing left its user message", trial, reply)
    problem = check_tool_pairs(conversation)
    if problem:
        fail(problem, trial, reply)
    # A canceled turn keeps what was seen of its message (stop reason aborted); a timed-out
    # one drops the message it was streaming (as other failures do), keeping those before.
    kept = "".join(message_texts(new))
    if kept != reply["seen_text"] and not (reply["end"] == "timeout"
                                           and reply["seen_text"].startswith(kept)):
        fail(f"the conversation kept the text {kept!r}, the driver saw {reply['seen_text']!r}",
             trial, reply)
    if reply["end"] == "done":
        if reply["texts"] != trial.texts or reply["events"][-1] != "message_complete":
            fail(f"a complete turn with the texts {reply['texts']}, not {trial.texts}", trial, reply)


USAGE_KEYS = sorted(["input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens",
                     "reasoning_tokens"])


def check_next_turn(trial: Trial, reply: Dict[str, Any], before: List[Dict[str, Any]],
                    requests: List[Dict[str, Any]], prompt: str, answer: str,
                    provider: str) -> None:
    if reply["end"] != "done":
        fail(f"the next turn failed: {reply['end']} {reply['message']!r}", trial, reply)
    if reply["texts"] != [answer] or reply["events"].count("message_start") != 1:
        fail(f"the next turn gave the texts {reply['texts']}, not {[answer]}", trial, reply)
    # The answer's usage is the emulator's to report; the rest of the message is exact.
    usage = reply["conversation"][-1].get("usage") if reply["conversation"] else None
    if not (isinstance(usage, dict) and sorted(usage) == USAGE_KEYS
            and all(isinstance(n, int) and n >= 0 for n in usage.values())):
        fail(f"the answer's usage is {usage!r}", trial, reply)
    expected = before + [{"role": "user", "content": [{"type": "text", "text": prompt}]},
                         {"role": "assistant", "content": [{"type": "text", "text": answer}],
                          "provider": provider, "model": "claude-test",
                          "stop_reason": "end_turn", "usage": usage}]
    if reply["conversation"] != expected:
        fail("the conversation after the next turn is not the one before, the prompt and "
             f"the answer: it ends {json.dumps(reply['conversation'][-3:])[:1500]}", trial, reply)
    # A request of the canceled turn may reach the emulator late, after the next turn's
    # scenario was loaded (it was on its way when the cancel closed the connection).
    own = [r for r in requests if isinstance(r["body"], dict)
           and prompt in json.dumps(r["body"].get("messages", [None])[-1])]
    if len(own) != 1:  # (own_request finds it)
        fail(f"the next turn made {len(own)} requests", trial, reply)


# ---- the soak ------------------------------------------------------------------------------

@dataclass
class Stats:
    phases: Counter = field(default_factory=Counter)
    outcomes: Counter = field(default_factory=Counter)
    trials: int = 0


def soak(lang: str, transport: str, turns: int, rng: random.Random, command: List[str],
         emu: Emulator, nameserver: Nameserver, stats: Stats) -> None:
    tls = transport == "https"
    # By name: the lookup runs (from /etc/hosts for localhost, at the slow nameserver for
    # DNS_HOST), and TLS checks the name.
    host = DNS_HOST if transport == "dns" else "localhost"
    config = {"provider": "anthropic", "model": "claude-test", "api_key": "test-key",
              "base_url": f"{'https' if tls else 'http'}://{host}:{emu.port}",
              "retry": {"max_retries": 0}, "timeouts": TIMEOUTS,
              # A 4 MB question is past claude-test's window (the claude- models'): this soak
              # is about cancels, not compaction (its own cases and tests).
              "compaction": {"enabled": False}}
    driver = Driver(command, config, {"PANTO_RESOLV_CONF": str(RESOLV_CONF)}
                    if transport == "dns" else None)
    finished = False
    try:
        conversation: List[Dict[str, Any]] = []
        start = "new agent"
        for n in range(turns):
            if n % TRIALS_PER_AGENT == 0 or (n and trial.shape == "big"):
                expect_ok(driver.send("agent"), "agent")
                provider = rng.choice(["anthropic", "openai"])
                expect_ok(driver.send("config " + json.dumps({"provider": provider})), "config")
                conversation, start = [], "new agent"
            lookup_ms = rng.choice([0, rng.randint(1, 8)]) if transport == "dns" else 0
            trial = plan_trial(rng, stats.trials, start != "keep", tls, lookup_ms)
            trial.start = start
            stats.trials += 1
            emu.load({"responses": trial.responses})
            nameserver.delay_ms = lookup_ms
            if trial.timeouts:
                expect_ok(driver.send("config " + json.dumps({"timeouts": trial.timeouts})), "config")
            before = driver.sockets()
            queried = len(nameserver.log)
            reply = driver.send(f"turn {trial.cancel_us} {trial.sleep_us} {trial.pad} {trial.prompt}")
            replied_at = time.monotonic()
            requests, connections = emu.requests(), emu.connections()
            lookups = nameserver.log[queried:] if transport == "dns" else []
            check_canceled_turn(trial, reply, conversation)
            # A connection of a canceled or timed-out request is closed, never kept for the
            # next one (it may be in the middle of a request or response). What may stay: the
            # connection kept from before, if the turn ended before taking it, and one whose
            # message ended when no later request had gone out on it yet.
            after = driver.sockets()
            ended = reply["events"][-1:] in (["message_end"], ["tool_call_start"], ["tool_result"])
            may_stay = 1 if ended and len(requests) == reply["events"].count("message_end") else 0
            if reply["end"] != "done" and len(after - before) > may_stay:
                fail(f"the turn's connection was kept open ({sorted(after - before)})", trial, reply)
            if len(after) > 1:
                fail(f"{len(after)} connections open after the turn", trial, reply)
            phase = phase_of(trial, reply, requests, connections, tls, lookups, replied_at)
            canceled = reply
            stats.phases[phase] += 1
            stats.outcomes[reply["end"]] += 1
            conversation = reply["conversation"]
            if trial.timeouts:
                expect_ok(driver.send("config " + json.dumps({"timeouts": TIMEOUTS})), "config")

            # The same agent runs a full turn; how it ends decides the next trial's connection:
            # kept alive, closed (a fresh one), or closed by the server while idle (stale).
            ending = rng.choice(["keep", "keep", "close", "idle_close"])
            answer = f"Follow-up {trial.index} done."
            response: Dict[str, Any] = {"message": text_message(answer)}
            if ending == "close":
                response["framing"] = "close"
            elif ending == "idle_close":
                response["idle_close"] = True
            else:
                response["framing"] = rng.choice(["chunked", "content-length"])
            # repeat_last: a late request of the canceled turn does not use up the answer.
            emu.load({"responses": [response], "repeat_last": True})
            nameserver.delay_ms = 0
            counted = driver.send("connections")
            prompt = f"Follow-up {trial.index}"
            reply = driver.send(f"turn -1 0 0 {prompt}")
            check_next_turn(trial, reply, conversation, emu.requests(), prompt, answer, provider)
            # Its one request went over the connection the canceled turn left (if any), else a
            # new one; a connection the server closed while idle (kept from before the
            # canceled turn, which did not touch it) is found closed and replaced, silently.
            # One parked at a message's end may have been cut by the cancel (or timeout) that
            # came after (even after the turn's end): then it is closed unread, or, its body
            # read to the end already, it fails at once and is replaced silently. Not so one a
            # canceled request was using (it must have been closed).
            kept = len(after) == 1
            stale = kept and trial.start == "idle_close" and after == before
            expected = [{"opened": 0 if kept and not stale else 1, "reused": int(kept)}]
            if kept and not stale:
                expected.append({"opened": 1, "reused": 0})
            if kept and not stale and (canceled["end"] == "done" or ended):
                expected.append({"opened": 1, "reused": 1})
            reply["canceled_turn"] = {k: canceled[k] for k in ("end", "events")}
            check_connections(trial, reply, counted, driver.send("connections"),
                              own_request(emu.requests(), prompt), expected)
            if len(driver.sockets()) > 1:
                fail(f"{len(driver.sockets())} connections open after the next turn", trial, reply)
            conversation = reply["conversation"]
            start = ending
        finished = True
    finally:
        if finished:
            driver.close()
        else:
            driver.kill()


def own_request(requests: List[Dict[str, Any]], prompt: str) -> Dict[str, Any]:
    """The request of the turn on `prompt` (a late request of the canceled turn may be
    logged too); check_next_turn made sure there is one."""
    return next(r for r in requests if isinstance(r["body"], dict)
                and prompt in json.dumps(r["body"].get("messages", [None])[-1]))


def check_connections(trial: Trial, reply: Dict[str, Any], before: Dict[str, int],
                      after: Dict[str, int], request: Dict[str, Any],
                      expected: List[Dict[str, int]]) -> None:
    """The agent's connection counters over the next turn (before -> after) are one of the
    expected ones, and agree with the emulator: the turn's request came on a new connection
    (its first request) exactly when the counters say one was opened."""
    counted = {k: after[k] - before[k] for k in ("opened", "reused")}
    if counted not in expected:
        fail(f"the next turn's connection counters moved by {counted}, expected "
             f"{' or '.join(map(str, expected))}", trial, reply)
    on_new = request["connection_request"] == 1
    if counted["opened"] != int(on_new):
        fail(f"the next turn opened {counted['opened']} connection(s) by its counters, but the "
             f"emulator got its request as request {request['connection_request']} of its "
             "connection", trial, reply)


def expect_ok(reply: Dict[str, Any], what: str) -> None:
    if not reply.get("ok"):
        raise SoakFailure(f"{what} failed: {reply}")


def parse_turns(values: List[str], langs: List[str]) -> Dict[str, int]:
    turns = {lang: 200 for lang in langs}
    for v in values:
        lang, _, count = v.rpartition("=")
        for name in ([lang] if lang else langs):
            turns[name] = int(count)
    return turns


def main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lang", action="append", choices=LANGS)
    parser.add_argument("--turns", action="append", default=[],
                        help="canceled turns per language (N, or LANG=N), half over TLS")
    parser.add_argument("--seed", type=int,
                        default=int(os.environ["SOAK_SEED"]) if os.environ.get("SOAK_SEED") else None)
    args = parser.parse_args(argv)
    langs = args.lang or LANGS
    turns = parse_turns(args.turns, langs)
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(1 << 32)
    print(f"cancel soak: seed {seed} (replay with SOAK_SEED={seed})", flush=True)
    subprocess.run([str(ROOT / "tests/net/make_certs.sh"), str(ROOT / "build/tls")], check=True,
                   stdout=subprocess.DEVNULL)
    certs = (ROOT / "build/tls/server.pem", ROOT / "build/tls/server.key")
    os.environ["SSL_CERT_FILE"] = str(ROOT / "build/tls/ca.pem")
    for name in ("HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY", "NO_PROXY", "SSL_CERT_DIR"):
        os.environ.pop(name, None)
        os.environ.pop(name.lower(), None)
    failed = False
    everywhere: Counter = Counter()
    nameserver = Nameserver()
    BUILD.mkdir(parents=True, exist_ok=True)
    nameserver.write_resolv_conf(RESOLV_CONF)
    with Emulator() as plain, Emulator(tls=certs) as secure:
        for lang in langs:
            rng = random.Random(f"{seed}-{lang}")
            command = driver_command(lang)
            stats = Stats()
            started = time.monotonic()
            try:
                left = turns[lang]
                for i, (transport, share) in enumerate(TRANSPORTS):
                    count = left if i == len(TRANSPORTS) - 1 else round(turns[lang] * share)
                    left -= count
                    soak(lang, transport, count, rng, command,
                         secure if transport == "https" else plain, nameserver, stats)
            except SoakFailure as e:
                print(f"cancel soak {lang}: FAILED after {stats.trials} trials: {e}", flush=True)
                failed = True
                continue
            took = time.monotonic() - started
            # Some phases are short (on loopback the connect takes microseconds): each language's own histogram must cover them all from 1,000
            # turns on; the run's, summed over its languages, from 200.
            missing = [p for p in PHASES if stats.phases[p] == 0]
            everywhere.update(stats.phases)
            print(f"cancel soak {lang}: {stats.trials} canceled turns, each followed by a full "
                  f"turn, in {took:.1f} s; outcomes {dict(stats.outcomes)}", flush=True)
            print("  phases: " + ", ".join(f"{p} {stats.phases[p]}" for p in PHASES), flush=True)
            if missing and stats.trials >= 1000:
                print(f"cancel soak {lang}: FAILED: no cancel landed in {', '.join(missing)}",
                      flush=True)
                failed = True
    missing = [p for p in PHASES if everywhere[p] == 0]
    print("cancel soak, all languages: " + ", ".join(f"{p} {everywhere[p]}" for p in PHASES))
    if not failed and sum(turns[lang] for lang in langs) >= 200 and missing:
        print(f"cancel soak: FAILED: no cancel landed in {', '.join(missing)}, in any language")
        failed = True
    nameserver.close()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
