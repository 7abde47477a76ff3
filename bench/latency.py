"""The latency benchmark of `make bench` (bench/README.md, "Latency"): an agent's turns through a
link with real round trips, panto against the official SDKs, counting connections.

The bench server (sse_server.py, its /turns/ route, HTTP and HTTPS) sits behind one
delay_proxy.py per link (plain or TLS, one-way delay D); each consumer runs once per link
and repetition: one agent or client, a tool turn (3 tool rounds, then the answer: 4
requests), then TURNS plain turns, each answered with TEXT_DELTAS text deltas. The proxy
counts the TCP connections the consumer opened.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional

import consumer
from sse_server import text_bytes
from consumer import BUILD, CLIENTS_DIR, HERE, ROOT, RunError

VENV_PY = os.path.join(ROOT, "build", "bench-venv", "bin", "python")
TLS_DIR = os.path.join(ROOT, "build", "tls")
TOOL_ROUNDS = 3  # bench/clients/turnsproto.py asks for this many
TEXT_DELTAS = 20
TURNS = 10

FULL = dict(delays_ms=[10, 50], schemes=["http", "https"], reps=3)
QUICK = dict(delays_ms=[10], schemes=["http", "https"], reps=1)


@dataclass
class TurnsClient:
    name: str  # as in the streaming tables, where the consumer consumes the same way
    provider: str
    group: str  # panto | peer
    argv: Callable[[str, int], List[str]]  # (base_url, turns) -> argv
    env: Dict[str, str] = field(default_factory=dict)


def clients() -> List[TurnsClient]:
    c = CLIENTS_DIR
    panto_env = {"PYTHONPATH": os.path.join(ROOT, "bindings-py")}
    out: List[TurnsClient] = []
    for p in ("anthropic", "openai"):
        out += [
            TurnsClient(f"panto-c/{p}", p, "panto", lambda u, t, p=p: [os.path.join(BUILD, "panto_c_turns"), p, u, str(t)]),
            TurnsClient(f"panto-py/{p}", p, "panto", lambda u, t, p=p: [VENV_PY, os.path.join(c, "panto_py_turns.py"), p, u, str(t)],
                        env=panto_env),
            TurnsClient(f"panto-go/{p}", p, "panto", lambda u, t, p=p: [os.path.join(BUILD, "go-panto"), "turns", p, u, str(t)]),
            TurnsClient(f"panto-lua/{p}", p, "panto", lambda u, t, p=p: ["lua5.4", os.path.join(c, "panto_lua_turns.lua"), p, u, str(t)]),
        ]
    out += [
        TurnsClient("anthropic-sdk-py/stream", "anthropic", "peer",
                    lambda u, t: [VENV_PY, os.path.join(c, "anthropic_sdk_turns.py"), u, str(t)]),
        TurnsClient("openai-sdk-py/stream", "openai", "peer",
                    lambda u, t: [VENV_PY, os.path.join(c, "openai_sdk_turns.py"), u, str(t)]),
        TurnsClient("anthropic-sdk-go/accumulate", "anthropic", "peer",
                    lambda u, t: [os.path.join(BUILD, "anthropic-go"), "turns", u, str(t)]),
        TurnsClient("openai-sdk-go/accumulate", "openai", "peer",
                    lambda u, t: [os.path.join(BUILD, "openai-go"), "turns", u, str(t)]),
    ]
    return out


def link_key(scheme: str, delay_ms: int) -> str:
    return f"{scheme}_{delay_ms}ms"


# ---- the server and the links ----------------------------------------------------------------

def _first_lines(proc: subprocess.Popen, count: int) -> List[str]:
    return [proc.stdout.readline().decode() for _ in range(count)]


class Links:
    """The bench server (HTTP and HTTPS) and a delay proxy in front of it per link."""

    def __init__(self, cfg: dict, log) -> None:
        self.procs: List[subprocess.Popen] = []
        self.links: Dict[str, tuple] = {}  # key -> (base URL, control port)
        subprocess.run([os.path.join(ROOT, "tests", "net", "make_certs.sh"), TLS_DIR], check=True)
        try:
            server = self._start([sys.executable, os.path.join(HERE, "sse_server.py"), "--n", str(TEXT_DELTAS), "--tls",
                                  os.path.join(TLS_DIR, "server.pem"), os.path.join(TLS_DIR, "server.key")], log)
            lines = _first_lines(server, 2)
            ports = {"http": re.search(r"listening http://127\.0\.0\.1:(\d+)", lines[0]),
                     "https": re.search(r"listening-tls https://localhost:(\d+)", lines[1])}
            if not all(ports.values()):
                raise SystemExit(f"bench: the SSE server did not start: {lines!r}")
            for scheme in cfg["schemes"]:
                for d in cfg["delays_ms"]:
                    proxy = self._start([sys.executable, os.path.join(HERE, "delay_proxy.py"), "--upstream",
                                         f"127.0.0.1:{ports[scheme].group(1)}", "--delay-ms", str(d)], log)
                    m = re.match(r"listening (\d+) control (\d+)", _first_lines(proxy, 1)[0])
                    if not m:
                        raise SystemExit("bench: a delay proxy did not start")
                    # localhost, not 127.0.0.1: Zig's TLS checks host names, not IP SANs.
                    self.links[link_key(scheme, d)] = (f"{scheme}://localhost:{m.group(1)}/turns/{TEXT_DELTAS}", int(m.group(2)))
        except BaseException:
            self.stop()
            raise

    def _start(self, argv: List[str], log) -> subprocess.Popen:
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=log, stdin=subprocess.DEVNULL)
        self.procs.append(proc)
        return proc

    def connections(self, key: str) -> int:
        with socket.create_connection(("127.0.0.1", self.links[key][1]), timeout=10) as s:
            return int(s.makefile().readline().split()[1])

    def stop(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.terminate()
        for proc in self.procs:
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


# ---- measuring -------------------------------------------------------------------------------

def run_once(client: TurnsClient, links: Links, key: str, expected_text: int, log) -> dict:
    """One run on one link: {"tool_s", "turn_s": [...], "connections"}. Checks what it read."""
    base_url = links.links[key][0]
    env = dict(client.env)
    if base_url.startswith("https:"):
        env["SSL_CERT_FILE"] = os.path.join(TLS_DIR, "ca.pem")  # panto, httpx and Go all read it
    before = links.connections(key)
    p = consumer.run(client.argv(base_url, TURNS), env, log, f"{client.name} {key}")
    opened = links.connections(key) - before
    tool, turns, prev = None, [], None
    for t, text in p.lines:
        word, *rest = text.split()
        if word in ("TOOL", "TURN"):
            # A consumer without a wall clock (Lua) prints `-`: the turn ran between the
            # arrival of the line before and of this one.
            secs = t - prev if rest[0] == "-" else float(rest[0])
            if word == "TOOL":
                calls, nbytes = int(rest[1]), int(rest[2])
                if calls != TOOL_ROUNDS or nbytes != expected_text:
                    raise RunError(f"the tool turn ran {calls} tool calls and read {nbytes} text bytes, "
                                   f"expected {TOOL_ROUNDS} and {expected_text}")
                tool = secs
            else:
                if int(rest[1]) != expected_text:
                    raise RunError(f"a plain turn read {rest[1]} text bytes, expected {expected_text}")
                turns.append(secs)
        prev = t
    if tool is None or len(turns) != TURNS:
        raise RunError(f"expected a TOOL line and {TURNS} TURN lines; stdout was {[x for _, x in p.lines][-5:]!r}")
    return {"tool_s": tool, "turn_s": turns, "connections": opened}


def median(xs):
    xs = sorted(xs)
    n = len(xs)
    return (xs[n // 2] + xs[(n - 1) // 2]) / 2 if xs else None


def measure(cfg: dict, selected: List[TurnsClient], log, say) -> dict:
    """Returns {"results": {consumer: {metric: value}}, "failed": {consumer: why}}."""
    expected = text_bytes(TEXT_DELTAS)
    links = Links(cfg, log)
    runs: Dict[str, Dict[str, List[dict]]] = {c.name: {} for c in selected}
    failed: Dict[str, str] = {}
    try:
        for rep in range(cfg["reps"]):
            for key in links.links:
                line = []
                for c in selected:
                    if c.name in failed:
                        continue
                    try:
                        rec = run_once(c, links, key, expected, log)
                    except RunError as e:
                        failed[c.name] = f"latency {key}: {e}"
                        say(f"bench: {c.name} failed: {failed[c.name]}")
                        continue
                    runs[c.name].setdefault(key, []).append(rec)
                    line.append(f"{c.name} {rec['tool_s'] * 1e3:.0f}/{median(rec['turn_s']) * 1e3:.1f} ms {rec['connections']}c")
                say(f"bench: rep {rep + 1}/{cfg['reps']} latency {key} (tool turn / plain turn, connections): " + ", ".join(line))
    finally:
        links.stop()
    results: Dict[str, dict] = {}
    for c in selected:
        d = {}
        for key, rs in runs[c.name].items():
            d[f"latency_{key}_tool_turn_ms"] = round(median([r["tool_s"] for r in rs]) * 1e3, 2)
            d[f"latency_{key}_plain_turn_ms"] = round(median([t for r in rs for t in r["turn_s"]]) * 1e3, 2)
            d[f"latency_{key}_connections"] = max(r["connections"] for r in rs)
        results[c.name] = d
    return {"results": results, "failed": failed, "links": list(links.links)}


# ---- targets and report ----------------------------------------------------------------------

def floor_ms(key: str) -> tuple:
    """The round trips a turn cannot avoid: (tool turn, plain turn) in ms, on a fresh connection
    for the tool turn (TCP handshake, TLS 1.3 handshake) and a kept one for a plain turn."""
    scheme, d = key.split("_")
    rtt = 2 * int(d[:-2])
    setup = 2 if scheme == "https" else 1
    return (TOOL_ROUNDS + 1 + setup) * rtt, rtt


def targets(m: dict, selected: List[TurnsClient]) -> List[dict]:
    res = m["results"]
    rows: List[dict] = []

    def add(target: str, measured: str, ok: Optional[bool]) -> None:
        rows.append({"target": target, "measured": measured,
                     "status": "not measured" if ok is None else ("met" if ok else "not met")})

    panto = [c for c in selected if c.group == "panto"]
    counts = [(c.name, key, res[c.name].get(f"latency_{key}_connections")) for c in panto for key in m["links"]]
    measured = [x for x in counts if x[2] is not None]
    over = [f"{n} {k}: {v}" for n, k, v in measured if v != 1]
    add(f"latency: one connection per agent for a tool turn and {TURNS} plain turns (every panto consumer, every link)",
        ("all 1" if not over else "; ".join(over)) + f" ({len(measured)} of {len(counts)} runs measured)",
        None if not measured else (not over and len(measured) == len(counts)))
    for key in m["links"]:
        for p in ("anthropic", "openai"):
            sdks = [c.name for c in selected if c.group == "peer" and c.provider == p
                    and res[c.name].get(f"latency_{key}_tool_turn_ms") is not None]
            ours = [c.name for c in panto if c.provider == p]
            target = f"latency {key.replace('_', ' ')} ({p}): every panto consumer ≤ the fastest SDK (tool turn, median plain turn)"
            if not sdks or not ours:
                add(target, "not measured", None)
                continue
            best = {w: min(res[s][f"latency_{key}_{w}_turn_ms"] for s in sdks) for w in ("tool", "plain")}
            parts, oks = [f"fastest SDK {best['tool']:.1f} / {best['plain']:.1f} ms"], []
            for name in ours:
                tool, plain = (res[name].get(f"latency_{key}_{w}_turn_ms") for w in ("tool", "plain"))
                if tool is None:
                    parts.append(f"{name}: not measured")
                    oks.append(None)
                    continue
                ok = tool <= best["tool"] and plain <= best["plain"]
                oks.append(ok)
                parts.append(f"{name} {tool:.1f} / {plain:.1f}" + ("" if ok else " (slower)"))
            add(target, "; ".join(parts), None if None in oks else all(oks))
    # Issue 34's bar: a tool turn costs Python's binding no more than 5 % over C's.
    for p in ("anthropic", "openai"):
        target = f"latency ({p}): the Python tool turn within 5 % of C's, every link"
        pairs = [(key, res.get(f"panto-py/{p}", {}).get(f"latency_{key}_tool_turn_ms"),
                  res.get(f"panto-c/{p}", {}).get(f"latency_{key}_tool_turn_ms")) for key in m["links"]]
        if any(py is None or c is None for _, py, c in pairs) or not pairs:
            add(target, "not measured", None)
            continue
        add(target, "; ".join(f"{key.replace('_', ' ')} {py:.1f} vs {c:.1f} ms ({(py / c - 1) * 100:+.1f} %)"
                              for key, py, c in pairs),
            all(py <= c * 1.05 for _, py, c in pairs))
    return rows


def markdown(m: dict, selected: List[TurnsClient]) -> List[str]:
    res = m["results"]
    keys = m["links"]
    if not any(res.get(c.name) for c in selected):
        return []
    L = [f"## Latency: a tool turn and {TURNS} plain turns through a delayed link", ""]
    L.append(f"Each cell: tool turn ms ({TOOL_ROUNDS} tool rounds, then the answer: 4 requests) / median plain turn ms "
             f"/ TCP connections opened, for one agent (panto) or one client (SDKs, the tool loop by hand). "
             f"Links: bench/delay_proxy.py adds the one-way delay to each direction (a new connection costs one "
             f"round trip more); https: TLS 1.3 to the bench server through it. Answers: {TEXT_DELTAS} text deltas.")
    L.append("")
    hdr = ["consumer"] + [k.replace("_", " ") for k in keys]
    L.append("| " + " | ".join(hdr) + " |")
    L.append("|" + "---|" * len(hdr))
    floors = [floor_ms(k) for k in keys]
    L.append("| round trips alone | " + " | ".join(f"{t} / {p} / 1" for t, p in floors) + " |")
    for c in selected:
        d = res.get(c.name, {})
        cells = []
        for k in keys:
            tool = d.get(f"latency_{k}_tool_turn_ms")
            cells.append("—" if tool is None else
                         f"{tool:.1f} / {d[f'latency_{k}_plain_turn_ms']:.1f} / {d[f'latency_{k}_connections']}")
        name = f"`{c.name}`" + (" (failed)" if c.name in m["failed"] else "")
        L.append(f"| {name} | " + " | ".join(cells) + " |")
    L.append("")
    return L
