#!/usr/bin/env python3
"""Crash test: drivers killed with SIGKILL at random instants during streaming turns, then
their session loaded and checked (tests/crash/README.md).

    crash_test.py [--lang c|python|go|lua ...] [--kills N] [--seed S]

Per language: a driver keeps one session and runs turns against the provider emulator, whose
answers are paced so that a kill lands mostly while a message streams; after each kill the
session is loaded (through the Python binding, mode "resume") and must hold, in order, every
message the driver reported committed (`user N` after run() returned, `assistant N` after
MESSAGE_END), nothing twice, and nothing but user "turn i" / assistant pairs (a user message
whose turn was killed may lack its assistant); a torn last line is allowed (and cut off by the
load). The next driver goes on at the next turn number. Prints the seed ($CRASH_SEED or --seed
replays a run) and where the kills landed; fails when none landed while a message streamed.
"""

from __future__ import annotations

import argparse
import os
import random
import select
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bindings-py"))
import panto  # noqa: E402
from panto.emulator import Emulator  # noqa: E402

BUILD = ROOT / "build" / "crash"
LANGS = ["c", "python", "go", "lua"]
ANSWER = "Answer: " + " ".join(f"word{k}" for k in range(12))
# The emulator sleeps this long between two writes of an answer (one SSE event each): a turn
# streams for about 14 of them.
CHUNK_DELAY_MS = 4
# A kill comes this long (at most) after the driver's first line: a few turns' time.
MAX_KILL_DELAY_S = 0.25
# Bounds, so that a driver that hangs fails the test instead of hanging it.
FIRST_LINE_DEADLINE_S = 60.0
EXIT_DEADLINE_S = 30.0


class CrashFailure(Exception):
    pass


def driver_command(lang: str) -> List[str]:
    """Builds the language's driver if it needs building; returns how to run it."""
    BUILD.mkdir(parents=True, exist_ok=True)
    if lang == "c":
        source = ROOT / "tests/crash/drivers/crash_driver.c"
        exe = BUILD / "crash_driver_c"
        need(source)
        subprocess.run(["cc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic",
                        "-Iinclude", str(source), "-o", str(exe), "-Lzig-out/lib", "-lpanto",
                        f"-Wl,-rpath,{ROOT}/zig-out/lib"], cwd=ROOT, check=True)
        return [str(exe)]
    if lang == "go":
        need(ROOT / "libpanto-go/cmd/crash-driver")
        exe = BUILD / "crash_driver_go"
        subprocess.run(["go", "build", "-o", str(exe), "./cmd/crash-driver"],
                       cwd=ROOT / "libpanto-go", check=True)
        return [str(exe)]
    if lang == "python":
        return [sys.executable, str(need(ROOT / "tests/crash/drivers/crash_driver.py"))]
    if lang == "lua":
        return ["lua5.4", str(need(ROOT / "tests/crash/drivers/crash_driver.lua"))]
    raise ValueError(f"unknown language {lang}")


def need(path: Path) -> Path:
    if not path.exists():
        raise CrashFailure(f"no crash driver at {path.relative_to(ROOT)}")
    return path


def scenario() -> Dict[str, Any]:
    return {"responses": [{"message": {"content": [{"type": "text", "text": ANSWER}],
                                       "usage": {"input_tokens": 3, "output_tokens": 12}},
                           "chunk_delay_ms": CHUNK_DELAY_MS}],
            "repeat_last": True}


def run_driver(command: List[str], url: str, session_dir: Path, session_id: str, start: int,
               delay_s: float) -> List[str]:
    """Starts a driver, kills it (SIGKILL) `delay_s` after its first line, and returns every
    line it printed."""
    proc = subprocess.Popen(command + [url, str(session_dir), session_id, str(start)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)
    assert proc.stdout is not None and proc.stderr is not None
    fd = proc.stdout.fileno()
    out = b""
    deadline = time.monotonic() + FIRST_LINE_DEADLINE_S
    kill_at: Optional[float] = None
    while True:
        now = time.monotonic()
        if kill_at is not None and now >= kill_at:
            break
        if kill_at is None and now >= deadline:
            proc.kill()
            raise CrashFailure(f"{command[-1]}: no line within {FIRST_LINE_DEADLINE_S} s; "
                               f"stderr: {proc.stderr.read().decode(errors='replace')[-2000:]}")
        wait = (kill_at or deadline) - now
        if select.select([fd], [], [], wait)[0]:
            chunk = os.read(fd, 1 << 16)
            if not chunk:  # it exited by itself: a failure of the driver or of panto
                code = proc.wait()
                raise CrashFailure(f"the driver exited with status {code} before it was "
                                   f"killed; stderr: "
                                   f"{proc.stderr.read().decode(errors='replace')[-2000:]}")
            out += chunk
            if kill_at is None and b"\n" in out:
                kill_at = time.monotonic() + delay_s
    proc.send_signal(signal.SIGKILL)
    try:
        proc.wait(timeout=EXIT_DEADLINE_S)
    except subprocess.TimeoutExpired:
        raise CrashFailure("a killed driver did not exit")
    out += proc.stdout.read()  # what it printed before it died
    proc.stdout.close()
    proc.stderr.close()
    return [line for line in out.decode().split("\n") if line]


def load_session(session_dir: Path, session_id: str) -> List[Dict[str, Any]]:
    """The session's messages, as a resuming agent sees them."""
    agent = panto.Agent.from_config({
        "provider": "anthropic", "model": "claude-test", "api_key": "k",
        "base_url": "http://127.0.0.1:9",
        "session": {"dir": str(session_dir), "id": session_id, "mode": "resume"}})
    try:
        return agent.conversation
    finally:
        agent.close()


def check(messages: List[Dict[str, Any]], before: List[Dict[str, Any]],
          printed: List[str]) -> Tuple[int, Optional[int]]:
    """Checks the loaded session (see the module's doc). Returns the last turn number in it
    and the number of the turn whose assistant message is missing at its end (or None)."""
    if messages[:len(before)] != before:
        raise CrashFailure("messages loaded before this driver ran changed or went missing")
    users: List[int] = []
    answered: set = set()
    expected_next: Optional[int] = None
    for i, m in enumerate(messages):
        text = "".join(b.get("text", "") for b in m["content"] if b["type"] == "text")
        if m["role"] == "user":
            if not text.startswith("turn "):
                raise CrashFailure(f"messages[{i}]: a user message {text!r}")
            n = int(text[5:])
            if expected_next is not None and n != expected_next:
                raise CrashFailure(f"messages[{i}]: turn {n} after turn {expected_next - 1} "
                                   "(a turn missing or twice)")
            users.append(n)
            expected_next = n + 1
        else:
            if i == 0 or messages[i - 1]["role"] != "user":
                raise CrashFailure(f"messages[{i}]: an assistant message that answers no user "
                                   "message (twice?)")
            if text != ANSWER:
                raise CrashFailure(f"messages[{i}]: the assistant message {text!r} is not the "
                                   "emulator's answer")
            answered.add(users[-1])
    for line in printed:
        what, n_text = line.split(" ")
        n = int(n_text)
        if what == "user" and n not in users:
            raise CrashFailure(f"the driver printed `{line}` but the session has no turn {n}")
        if what in ("assistant", "done") and n not in answered:
            raise CrashFailure(f"the driver printed `{line}` but the session has no answer to "
                               f"turn {n}")
    last = users[-1] if users else 0
    return last, (last if users and last not in answered else None)


def file_is_torn(path: Path) -> bool:
    data = path.read_bytes()
    return bool(data) and not data.endswith(b"\n")


def where(printed: List[str]) -> str:
    """Where the kill landed: the last line the driver printed."""
    if not printed:
        return "before_first_line"
    what = printed[-1].split(" ")[0]
    return {"user": "streaming", "assistant": "after_message_end", "done": "between_turns"}[what]


def run_language(lang: str, kills: int, rng: random.Random, url: str) -> Counter:
    command = driver_command(lang)
    session_dir = BUILD / lang / "sessions"
    shutil.rmtree(session_dir, ignore_errors=True)
    session_id = f"crash-{lang}"
    landed: Counter = Counter()
    messages: List[Dict[str, Any]] = []
    start = 1
    for k in range(kills):
        printed = run_driver(command, url, session_dir, session_id, start,
                             rng.uniform(0, MAX_KILL_DELAY_S))
        landed[where(printed)] += 1
        if file_is_torn(session_dir / f"{session_id}.jsonl"):
            landed["torn_line"] += 1
        try:
            loaded = load_session(session_dir, session_id)
            last, unanswered = check(loaded, messages, printed)
        except (CrashFailure, panto.Error) as e:
            raise CrashFailure(f"{lang}, kill {k + 1} (driver from turn {start}, printed "
                               f"{printed[-3:]}): {e}") from e
        if unanswered is not None:
            landed["user_without_answer"] += 1
        messages = loaded
        start = last + 1
    landed["turns"] = start - 1
    return landed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lang", action="append", choices=LANGS)
    parser.add_argument("--kills", type=int, default=100)
    parser.add_argument("--seed", type=int,
                        default=int(os.environ.get("CRASH_SEED", random.randrange(1 << 30))))
    args = parser.parse_args()
    langs = args.lang or LANGS
    print(f"crash test: seed {args.seed} (CRASH_SEED={args.seed} replays it), "
          f"{args.kills} kills per language", flush=True)
    failed = False
    with Emulator(scenario=scenario()) as emu:
        for lang in langs:
            rng = random.Random(f"{args.seed}-{lang}")
            began = time.monotonic()
            try:
                landed = run_language(lang, args.kills, rng, emu.url)
            except (CrashFailure, subprocess.CalledProcessError) as e:
                print(f"  {lang}: FAILED: {e}", flush=True)
                failed = True
                continue
            summary = ", ".join(f"{k} {v}" for k, v in sorted(landed.items()))
            print(f"  {lang}: {args.kills} kills in {time.monotonic() - began:.1f} s: {summary}",
                  flush=True)
            if landed["streaming"] == 0:
                print(f"  {lang}: FAILED: no kill landed while a message streamed", flush=True)
                failed = True
    print("crash test: " + ("FAILED" if failed else "passed"), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
