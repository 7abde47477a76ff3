"""The tool-round part of `make bench` (`--only tool_round`, bench/README.md "Tool round"):
each language's client runs ROUNDS turns against the provider emulator, each turn a message
asking for three host tools that sleep 200 ms, then an answer; once with tool_execution
"parallel" and once "sequential". The figure is the median wall time of a round (the first
round left out: it opens the connection).

Target (issue 17): every language's parallel round under 300 ms."""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
from dataclasses import dataclass
from typing import Any, List

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
BUILD = os.path.join(ROOT, "build", "bench")
sys.path.insert(0, os.path.join(ROOT, "tests", "conformance"))
from run import Emulator  # noqa: E402  (the conformance runner's emulator process)

MODES = ("parallel", "sequential")
TARGET_MS = 300
CALLS = 3


@dataclass
class Client:
    name: str           # panto-<lang>/tool_round
    argv: List[str]     # the command, BASE_URL MODE ROUNDS appended
    needs: str          # the file that must exist


def clients() -> List[Client]:
    py = os.path.join(ROOT, "build", "bench-venv", "bin", "python")
    lua = shutil.which("lua5.4") or "lua5.4"
    return [
        Client("panto-c/tool_round", [os.path.join(BUILD, "tool_round_c")], os.path.join(BUILD, "tool_round_c")),
        Client("panto-py/tool_round", [py, os.path.join(HERE, "clients", "tool_round_py.py")],
               os.path.join(HERE, "clients", "tool_round_py.py")),
        Client("panto-go/tool_round", [os.path.join(BUILD, "go-panto"), "tool-round"], os.path.join(BUILD, "go-panto")),
        Client("panto-lua/tool_round", [lua, os.path.join(HERE, "clients", "tool_round_lua.lua")],
               os.path.join(HERE, "clients", "tool_round_lua.lua")),
    ]


def scenario(rounds: int) -> dict[str, Any]:
    """Each round: a message asking for `wait` three times, then the answer "done"."""
    ask = {"message": {"content": [{"type": "tool_use", "id": f"toolu_{k}", "name": "wait", "input": {"i": k}}
                                   for k in range(1, CALLS + 1)]}}
    answer = {"message": {"content": [{"type": "text", "text": "done"}]}}
    return {"responses": [ask, answer] * rounds}


def check_requests(log: list[dict[str, Any]], rounds: int) -> str | None:
    """None when the emulator got 2 x rounds requests and each round's second one carries the
    three results in call order."""
    if len(log) != 2 * rounds:
        return f"the emulator got {len(log)} requests, not {2 * rounds}"
    for r in range(rounds):
        body = log[2 * r + 1].get("body") or {}
        last = (body.get("messages") or [{}])[-1]
        ids = [b.get("tool_use_id") for b in last.get("content", []) if isinstance(b, dict)]
        if ids != [f"toolu_{k}" for k in range(1, CALLS + 1)]:
            return f"round {r + 1}: the results sent were {ids}"
    return None


def env_for(lib_dir: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(PANTO_LIBRARY=os.path.join(lib_dir, "libpanto.so"), LD_LIBRARY_PATH=lib_dir,
               LUA_CPATH=os.path.join(lib_dir, "lua", "?.so") + ";;", PYTHONPATH=os.path.join(ROOT, "bindings-py"))
    for k in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_BASE_URL", "OPENAI_BASE_URL", "PANTO_LOG"):
        env.pop(k, None)
    return env


def measure(rounds: int, selected: List[Client], lib_dir: str, log, say) -> dict:
    results: dict[str, dict[str, float]] = {}
    failed: dict[str, str] = {}
    missing: List[str] = []
    emulator = Emulator()
    try:
        for c in selected:
            if not os.path.exists(c.needs):
                missing.append(c.name)
                continue
            figures: dict[str, float] = {}
            for mode in MODES:
                emulator.load(scenario(rounds))
                argv = c.argv + [emulator.url, mode, str(rounds)]
                try:
                    proc = subprocess.run(argv, capture_output=True, text=True, timeout=120, env=env_for(lib_dir),
                                          cwd=ROOT, stdin=subprocess.DEVNULL)
                except subprocess.TimeoutExpired:
                    failed[c.name] = f"{mode}: timed out"
                    break
                log.write(f"$ {' '.join(argv)}\n{proc.stdout}{proc.stderr}\n")
                walls = []
                for line in proc.stdout.splitlines():
                    try:
                        d = json.loads(line)
                    except ValueError:
                        continue
                    if d.get("mode") == mode:
                        walls.append(float(d["wall_ms"]))
                why = (f"exit {proc.returncode}: {proc.stderr.strip()[-300:]}" if proc.returncode != 0
                       else f"{len(walls)} round lines, not {rounds}" if len(walls) != rounds
                       else check_requests(emulator.requests(), rounds))
                if why:
                    failed[c.name] = f"{mode}: {why}"
                    break
                figures[f"tool_round_{mode}_ms"] = statistics.median(walls[1:] or walls)
            if c.name not in failed:
                results[c.name] = figures
                say(f"bench: tool round: {c.name}: parallel {figures['tool_round_parallel_ms']:.0f} ms, "
                    f"sequential {figures['tool_round_sequential_ms']:.0f} ms a round")
            else:
                say(f"bench: tool round: {c.name} failed: {failed[c.name]}")
    finally:
        emulator.close()
    return {"results": results, "failed": failed, "missing": missing, "rounds": rounds}


def targets(m: dict) -> List[dict]:
    rows = []
    for name, d in m["results"].items():
        par, seq = d["tool_round_parallel_ms"], d["tool_round_sequential_ms"]
        rows.append(dict(target=f"{name}: three 200 ms host tools, parallel round < {TARGET_MS} ms",
                         measured=f"{par:.0f} ms (sequential {seq:.0f} ms)",
                         status="met" if par < TARGET_MS else "NOT MET"))
    for name in m["missing"]:
        rows.append(dict(target=f"{name}: parallel round < {TARGET_MS} ms", measured="not measured (no client)",
                         status="not measured"))
    return rows


def markdown(m: dict) -> List[str]:
    lines = ["", "## Tool round", "",
             f"Three host tools that each sleep 200 ms, asked for in one message, then an answer: wall time "
             f"of a round (median of {m['rounds'] - 1} rounds after the first), the tools run at the same time "
             "(`tool_execution` parallel) and one after another (sequential), in the same run.", "",
             "| client | parallel | sequential |", "|---|---|---|"]
    for name, d in m["results"].items():
        lines.append(f"| {name} | {d['tool_round_parallel_ms']:.0f} ms | {d['tool_round_sequential_ms']:.0f} ms |")
    for name, why in m["failed"].items():
        lines.append(f"| {name} | failed: {why} | |")
    for name in m["missing"]:
        lines.append(f"| {name} | not measured | |")
    return lines
