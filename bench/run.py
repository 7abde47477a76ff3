"""The runner of `make bench` (bench/bench.sh sets up, then runs this with build/bench-venv).

    python bench/run.py [--quick] [--only SUBSTR ...] [--reps R] [--no-chart]

Starts the loopback SSE server (bench/sse_server.py), runs every consumer as its own process
against it, several times, and writes build/bench.json, bench/RESULTS.md and bench/results.png.
See bench/README.md for the protocol, the metrics and the targets.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import re
import resource
import signal
import statistics
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional

import consumer
import images
import latency
import durable
import sessions
import tool_round
import waiting
from consumer import BUILD, CLIENTS_DIR, HERE, ROOT, RunError

VENV_PY = os.path.join(ROOT, "build", "bench-venv", "bin", "python")

FULL = dict(name="full", ns=[10_000, 100_000, 1_000_000], reps=3, skip_over_s=15.0, one_rep_over_s=4.0,
            conc_streams=100, conc_n=1_000, conc_reps=3, big_streams=1_000, big_n=1_000, warmup=True,
            latency=latency.FULL, image_reps=3)
QUICK = dict(name="quick", ns=[1_000, 10_000, 100_000], reps=1, skip_over_s=3.0, one_rep_over_s=1.0,
             conc_streams=100, conc_n=200, conc_reps=1, big_streams=1_000, big_n=1_000, warmup=False,
             latency=latency.QUICK, image_reps=1)
# What `--only` may name besides consumers: run only these parts.
SECTIONS = ("streaming", "streams1000", "latency", "images", "sessions", "tool_round", "waiting")
# Parts that run only when named (`--only durable`: it starts a Temporal dev server).
OPT_IN = ("durable",)
KB_PER_STREAM_TARGET = 64
# The wire APIs of issue 29, each streamed by panto in every language and by its official
# Python SDK (the peer whose events/s the target row compares with).
NEW_PROVIDERS = ("openai-responses", "gemini", "bedrock")
OFFICIAL_SDK = {"openai-responses": "openai-sdk-py/responses-raw", "gemini": "google-genai-py/raw",
                "bedrock": "boto3-py/raw"}
# Fixed keys (AWS's documentation example): Bedrock's consumers sign every request with them
# (SigV4, before the stream; the bench server checks nothing).
AWS_ENV = {"AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
           "AWS_REGION": "us-east-1", "AWS_DEFAULT_REGION": "us-east-1", "AWS_EC2_METADATA_DISABLED": "true"}
# Each provider's streaming path under the base URL (curl's request).
PATHS = {"anthropic": "/v1/messages", "openai": "/v1/chat/completions", "openai-responses": "/v1/responses",
         "gemini": "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
         "bedrock": "/model/anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse-stream"}


# ---- the consumers ---------------------------------------------------------------------------

@dataclass
class Client:
    name: str
    provider: str  # which body it reads: anthropic | openai | openai-responses | gemini | bedrock
    group: str  # panto | peer | limit
    argv: Callable[[str, int], List[str]]  # (base_url, streams) -> argv
    env: Dict[str, str] = field(default_factory=dict)
    kind: str = "proto"  # proto: speaks READY/FIRST/END; curl: curl -w
    concurrent: bool = False  # part of the 100-stream comparison
    note: str = ""
    big: bool = False  # part of the 1,000-stream memory measurement


def clients() -> List[Client]:
    py = VENV_PY
    c = CLIENTS_DIR
    panto_env = {"PYTHONPATH": os.path.join(ROOT, "bindings-py")}
    out: List[Client] = []
    for p in ("anthropic", "openai"):
        conc = p == "anthropic"
        out += [
            Client(f"panto-c/{p}", p, "panto", lambda u, s, p=p: [os.path.join(BUILD, "panto_c"), p, u, str(s)],
                   concurrent=conc, big=conc, note="pthreads, one agent each"),
            Client(f"panto-py/{p}", p, "panto", lambda u, s, p=p: [py, os.path.join(c, "panto_py.py"), p, u, str(s)],
                   env=panto_env, concurrent=conc, big=conc, note="threads, one agent each"),
            Client(f"panto-go/{p}", p, "panto", lambda u, s, p=p: [os.path.join(BUILD, "go-panto"), p, u, str(s)],
                   concurrent=conc, big=conc, note="goroutines, one agent each"),
            Client(f"panto-lua/{p}", p, "panto", lambda u, s, p=p: ["lua5.4", os.path.join(c, "panto_lua.lua"), p, u, str(s)],
                   concurrent=conc, note="one Lua thread, streams read round-robin"),
        ]
    for p in NEW_PROVIDERS:
        env = AWS_ENV if p == "bedrock" else {}
        out += [
            Client(f"panto-c/{p}", p, "panto", lambda u, s, p=p: [os.path.join(BUILD, "panto_c"), p, u, str(s)], env=env),
            Client(f"panto-py/{p}", p, "panto", lambda u, s, p=p: [py, os.path.join(c, "panto_py.py"), p, u, str(s)],
                   env=dict(panto_env, **env)),
            Client(f"panto-go/{p}", p, "panto", lambda u, s, p=p: [os.path.join(BUILD, "go-panto"), p, u, str(s)], env=env),
            Client(f"panto-lua/{p}", p, "panto", lambda u, s, p=p: ["lua5.4", os.path.join(c, "panto_lua.lua"), p, u, str(s)],
                   env=env),
        ]
    for mode in ("raw", "stream"):
        out.append(Client(f"anthropic-sdk-py/{mode}", "anthropic", "peer",
                          lambda u, s, m=mode: [py, os.path.join(c, "anthropic_sdk.py"), m, u, str(s)],
                          concurrent=mode == "raw", note="threads, one shared client"))
    out.append(Client("anthropic-sdk-py/async", "anthropic", "peer",
                      lambda u, s: [py, os.path.join(c, "anthropic_sdk.py"), "raw", u, str(s), "--async"],
                      concurrent=True, note="asyncio tasks, one AsyncAnthropic"))
    for mode in ("raw", "stream"):
        out.append(Client(f"openai-sdk-py/{mode}", "openai", "peer",
                          lambda u, s, m=mode: [py, os.path.join(c, "openai_sdk.py"), m, u, str(s)]))
    for mode in ("raw", "stream"):
        out.append(Client(f"openai-sdk-py/responses-{mode}", "openai-responses", "peer",
                          lambda u, s, m=mode: [py, os.path.join(c, "openai_sdk.py"), f"responses-{m}", u, str(s)]))
    out.append(Client("google-genai-py/raw", "gemini", "peer",
                      lambda u, s: [py, os.path.join(c, "gemini_sdk.py"), u, str(s)]))
    out.append(Client("boto3-py/raw", "bedrock", "peer",
                      lambda u, s: [py, os.path.join(c, "bedrock_sdk.py"), u, str(s)], env=AWS_ENV))
    for p in ("anthropic", "openai"):
        out.append(Client(f"httpx-py/{p}", p, "peer", lambda u, s, p=p: [py, os.path.join(c, "httpx_client.py"), p, u, str(s)]))
    for mode in ("raw", "accumulate"):
        out.append(Client(f"anthropic-sdk-go/{mode}", "anthropic", "peer",
                          lambda u, s, m=mode: [os.path.join(BUILD, "anthropic-go"), m, u, str(s)],
                          concurrent=mode == "raw", note="goroutines, one shared client"))
    for mode in ("raw", "accumulate"):
        out.append(Client(f"openai-sdk-go/{mode}", "openai", "peer",
                          lambda u, s, m=mode: [os.path.join(BUILD, "openai-go"), m, u, str(s)]))
    for p in ("anthropic", "openai") + NEW_PROVIDERS:
        out.append(Client(f"curl/{p}", p, "limit", lambda u, s, path=PATHS[p]: [
            "curl", "-sS", "-N", "-o", "/dev/null", "-X", "POST", "-H", "content-type: application/json",
            "-H", "accept: text/event-stream", "--data", '{"stream":true}',
            "-w", "%{time_starttransfer} %{time_total} %{size_download} %{http_code}", u + path], kind="curl"))
    return out


# ---- running one process ---------------------------------------------------------------------

def run_once(client: Client, base_url: str, streams: int, log, together: bool = False,
             extra_env: Optional[Dict[str, str]] = None) -> dict:
    """Runs the consumer once; returns its measurements (seconds, kB). together: every stream
    waits after its first delta until all have one (BENCH_TOGETHER=1), so all are open at once."""
    env = dict(client.env, BENCH_TOGETHER="1") if together else client.env
    if extra_env:
        env = dict(env, **extra_env)
    p = consumer.run(client.argv(base_url, streams), env, log, f"{client.name} streams={streams}")
    rec = {"cpu_total_s": p.cpu_total_s, "maxrss_kb": p.maxrss_kb, "process_s": p.t_exit - p.t_spawn}
    lines = [text for _, text in p.lines]
    if client.kind == "curl":
        parts = lines[-1].split() if lines else []
        if len(parts) != 4 or parts[3] != "200":
            raise RunError(f"curl printed {lines!r}")
        rec.update(ttfe_s=float(parts[0]), wall_s=float(parts[1]), body_bytes=int(parts[2]),
                   cpu_s=rec["cpu_total_s"])
        return rec
    stamps: Dict[str, float] = {}
    for t, text in p.lines:
        stamps.setdefault(text.split(" ", 1)[0], t)
    missing = [w for w in ("READY", "FIRST", "END") if w not in stamps]
    if missing:
        raise RunError(f"no {'/'.join(missing)} line; stdout was {lines[-5:]!r}")
    ready = next(x for x in lines if x.startswith("READY")).split()
    end = next(x for x in lines if x.startswith("END")).split()
    rec.update(
        events=int(end[1]), text_bytes=int(end[2]), cpu_s=float(end[3]) - float(ready[1]),
        wall_s=stamps["END"] - stamps["READY"], ttfe_s=stamps["FIRST"] - stamps["READY"],
        cold_start_s=stamps["FIRST"] - p.t_spawn, import_s=stamps["READY"] - p.t_spawn,
        import_rss_kb=p.import_rss_kb,
    )
    return rec


# ---- the server ------------------------------------------------------------------------------

class Server:
    """The SSE server, over HTTP and (for the 1,000 TLS streams) HTTPS with the test
    certificates (the URL is `localhost`: Zig's TLS does not verify IP SANs)."""

    def __init__(self, ns: List[int], log) -> None:
        subprocess.run([os.path.join(ROOT, "tests", "net", "make_certs.sh"), latency.TLS_DIR], check=True)
        self.proc = subprocess.Popen([sys.executable, os.path.join(HERE, "sse_server.py"), "--n", ",".join(map(str, ns)),
                                      "--tls", os.path.join(latency.TLS_DIR, "server.pem"),
                                      os.path.join(latency.TLS_DIR, "server.key")],
                                     stdout=subprocess.PIPE, stderr=log, stdin=subprocess.DEVNULL)
        lines = [self.proc.stdout.readline().decode() for _ in range(2)]
        m = re.match(r"listening (http://\S+)", lines[0])
        m_tls = re.match(r"listening-tls (https://\S+)", lines[1])
        if not m or not m_tls:
            self.stop()
            raise SystemExit(f"bench: the SSE server did not start: {lines!r}")
        self.url = m.group(1)
        self.tls_url = m_tls.group(1)
        # Every consumer (panto, Go's crypto/x509, Python's ssl through panto) trusts the test CA.
        self.tls_env = {"SSL_CERT_FILE": os.path.join(latency.TLS_DIR, "ca.pem")}

    def base(self, n: int, tls: bool = False) -> str:
        return f"{self.tls_url if tls else self.url}/n/{n}"

    def stats(self, n: int) -> dict:
        with urllib.request.urlopen(self.base(n) + "/stats", timeout=30) as r:
            return json.load(r)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


# ---- measuring -------------------------------------------------------------------------------

def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def check(client: Client, rec: dict, n: int, streams: int, expected_text: int, body_bytes: Optional[int]) -> None:
    if client.kind == "curl":
        if body_bytes is not None and rec["body_bytes"] != body_bytes:
            raise RunError(f"curl read {rec['body_bytes']} bytes, the body has {body_bytes}")
        return
    if rec["events"] != n * streams or rec["text_bytes"] != expected_text * streams:
        raise RunError(f"counted {rec['events']} deltas / {rec['text_bytes']} text bytes, "
                       f"expected {n * streams} / {expected_text * streams}")


def raise_fd_limit(need: int, say) -> None:
    """Every stream holds a socket: lift the soft limit on open files (inherited by the
    consumers) to the hard one if it is below `need`."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < need:
        new = hard if hard == resource.RLIM_INFINITY else min(hard, max(need, soft))
        resource.setrlimit(resource.RLIMIT_NOFILE, (new, hard))
        say(f"bench: open files limit raised from {soft} to {new}")
        if new != resource.RLIM_INFINITY and new < need:
            say(f"bench: warning: the hard limit on open files ({hard}) is below the {need} the streams need")


def measure(cfg: dict, selected: List[Client], log, say, streaming: bool = True, big: bool = True) -> dict:
    ns = cfg["ns"] if streaming else []
    server = Server(ns + [cfg["conc_n"], cfg["big_n"], 10], log)
    try:
        say(f"bench: SSE server at {server.url}")
        stats = {n: server.stats(n) for n in ns + [cfg["conc_n"], cfg["big_n"], 10]}
        expected = {n: s["text_bytes"] for n, s in stats.items()}
        bodies = {(p, n): stats[n][f"{p}_body_bytes"] for p in PATHS for n in ns}
        runs: Dict[str, Dict[int, List[dict]]] = {c.name: {} for c in selected}
        conc_runs: Dict[str, List[dict]] = {c.name: [] for c in selected if c.concurrent}
        big_runs: Dict[str, List[tuple]] = {c.name: [] for c in selected if c.big}
        big_tls_runs: Dict[str, List[tuple]] = {c.name: [] for c in selected if c.big}
        failed: Dict[str, str] = {}
        skipped: Dict[str, Dict[int, float]] = {c.name: {} for c in selected}

        def attempt(c: Client, n: int, streams: int, expect_text: int, together: bool = False,
                    tls: bool = False) -> Optional[dict]:
            try:
                rec = run_once(c, server.base(n, tls), streams, log, together, server.tls_env if tls else None)
                check(c, rec, n, streams, expect_text, bodies.get((c.provider, n)) if streams == 1 else None)
                return rec
            except RunError as e:
                failed[c.name] = f"N={n} streams={streams}{' over TLS' if tls else ''}: {e}"
                say(f"bench: {c.name} failed: {failed[c.name]}")
                return None

        if cfg["warmup"] and streaming:
            say("bench: warm-up (one short run of each consumer, not counted)")
            for c in selected:
                attempt(c, 10, 1, expected[10])

        def rate(c: Client, upto: int) -> Optional[float]:
            """events/s at the largest N measured below `upto` (not the best: a consumer may
            slow down as N grows, e.g. one that accumulates by string concatenation)."""
            below = [n for n, rs in runs[c.name].items() if n < upto and rs]
            if not below:
                return None
            n = max(below)
            return n / median([x["wall_s"] for x in runs[c.name][n]])

        for rep in range(cfg["reps"] if streaming else 0):
            for n in ns:
                line = []
                for c in selected:
                    if c.name in failed:
                        continue
                    r = rate(c, n)
                    est = n / r if r else 0.0
                    if rep == 0:
                        if est > cfg["skip_over_s"]:
                            skipped[c.name][n] = est
                            continue
                    elif not runs[c.name].get(n) or est > cfg["one_rep_over_s"]:
                        continue  # repeat only what ran in the first repetition, and was quick
                    rec = attempt(c, n, 1, expected[n])
                    if rec is not None:
                        runs[c.name].setdefault(n, []).append(rec)
                        line.append(f"{c.name} {n / rec['wall_s']:,.0f}/s")
                say(f"bench: rep {rep + 1}/{cfg['reps']} N={n:,}: " + ", ".join(line))

        def rounds(title: str, chosen: List[Client], one: Callable[[Client], Optional[str]]) -> None:
            """one(c) for every chosen consumer that has not failed, conc_reps times: what it
            says of a run, or None when the run failed."""
            for rep in range(cfg["conc_reps"]):
                line = [x for x in (one(c) for c in chosen if c.name not in failed) if x]
                say(f"bench: rep {rep + 1}/{cfg['conc_reps']} {title}: " + ", ".join(line))

        def concurrent(c: Client) -> Optional[str]:
            rec = attempt(c, cfg["conc_n"], cfg["conc_streams"], expected[cfg["conc_n"]])
            if rec is None:
                return None
            conc_runs[c.name].append(rec)
            return f"{c.name} {rec['cpu_s']:.2f} s CPU {rec['maxrss_kb'] / 1024:.0f} MB"

        def thousand(c: Client, tls: bool = False) -> Optional[str]:
            """1 stream, then 1,000 all open at once: the peak RSS a stream costs."""
            n = cfg["big_n"]
            one = attempt(c, n, 1, expected[n], tls=tls)
            many = attempt(c, n, cfg["big_streams"], expected[n], together=True, tls=tls) if one is not None else None
            if many is None:
                return None
            (big_tls_runs if tls else big_runs)[c.name].append((one, many))
            return f"{c.name} {one['maxrss_kb'] / 1024:.0f} → {many['maxrss_kb'] / 1024:.0f} MB"

        conc = [c for c in selected if c.concurrent and c.name not in failed]
        if conc and streaming:
            say(f"bench: {cfg['conc_streams']} concurrent streams of {cfg['conc_n']:,} deltas in one process")
            rounds("concurrent", conc, concurrent)
        bigs = [c for c in selected if c.big and c.name not in failed]
        if bigs and big:
            raise_fd_limit(cfg["big_streams"] + 256, say)
            say(f"bench: {cfg['big_streams']:,} concurrent streams of {cfg['big_n']:,} deltas in one process, and 1 stream")
            rounds(f"{cfg['big_streams']:,} streams", bigs, thousand)
            say(f"bench: the same over TLS (a handshake on every stream's thread or goroutine)")
            rounds(f"{cfg['big_streams']:,} TLS streams", bigs, lambda c: thousand(c, tls=True))
        return dict(runs=runs, conc_runs=conc_runs, big_runs=big_runs, big_tls_runs=big_tls_runs, failed=failed, skipped=skipped, expected=expected,
                    bodies={f"{p}/{n}": v for (p, n), v in bodies.items()})
    finally:
        server.stop()


def summarize(cfg: dict, selected: List[Client], m: dict) -> Dict[str, dict]:
    out: Dict[str, dict] = {}
    ns = cfg["ns"]
    for c in selected:
        rs = m["runs"][c.name]
        d: dict = {}
        for n in ns:
            if rs.get(n):
                d[f"events_per_s_{n}"] = round(n / median([x["wall_s"] for x in rs[n]]))
                d[f"cpu_us_per_event_{n}"] = round(median([x["cpu_s"] for x in rs[n]]) / n * 1e6, 3)
                d[f"peak_rss_mb_{n}"] = round(median([x["maxrss_kb"] for x in rs[n]]) / 1024, 1)
                d[f"runs_{n}"] = len(rs[n])
        measured = [n for n in ns if rs.get(n)]
        if measured:
            top = measured[-1]
            d["largest_n"] = top
            d["cpu_us_per_event"] = d[f"cpu_us_per_event_{top}"]
            d["peak_rss_mb"] = d[f"peak_rss_mb_{top}"]
            first = [x for n in measured for x in rs[n]]
            d["ttfe_ms"] = round(median([x["ttfe_s"] for x in first]) * 1e3, 2)
            if c.kind == "proto":
                d["cold_start_ms"] = round(median([x["cold_start_s"] for x in first]) * 1e3, 1)
                d["import_ms"] = round(median([x["import_s"] for x in first]) * 1e3, 1)
                d["import_rss_mb"] = round(median([x["import_rss_kb"] for x in first]) / 1024, 1)
        cr = m["conc_runs"].get(c.name) or []
        if cr:
            k = cfg["conc_streams"]
            d[f"concurrent{k}_cpu_s"] = round(median([x["cpu_s"] for x in cr]), 3)
            d[f"concurrent{k}_rss_mb"] = round(median([x["maxrss_kb"] for x in cr]) / 1024, 1)
            d[f"concurrent{k}_wall_s"] = round(median([x["wall_s"] for x in cr]), 3)
            d[f"concurrent{k}_events_per_s"] = round(k * cfg["conc_n"] / median([x["wall_s"] for x in cr]))
        for runs_key, infix in (("big_runs", ""), ("big_tls_runs", "_tls")):
            br = m.get(runs_key, {}).get(c.name) or []
            if br:
                k = cfg["big_streams"]
                one = median([x[0]["maxrss_kb"] for x in br])
                many = median([x[1]["maxrss_kb"] for x in br])
                d[f"concurrent{k}{infix}_rss_mb"] = round(many / 1024, 1)
                d[f"concurrent{k}{infix}_wall_s"] = round(median([x[1]["wall_s"] for x in br]), 3)
                d[f"concurrent{k}{infix}_baseline_rss_mb"] = round(one / 1024, 1)
                d[f"concurrent{k}{infix}_kb_per_stream"] = round((many - one) / k, 1)
        if c.name in m["failed"]:
            d["error"] = m["failed"][c.name]
        for n, est in m["skipped"][c.name].items():
            d[f"skipped_{n}"] = f"estimated {est:.1f} s, over the {cfg['skip_over_s']:.0f} s limit per run"
        out[c.name] = d
    return out


# ---- targets ---------------------------------------------------------------------------------

def common_rate(res: dict, a: str, b: str, ns: List[int]):
    """events/s of a and b at the largest N both were measured at."""
    for n in reversed(ns):
        x, y = res.get(a, {}).get(f"events_per_s_{n}"), res.get(b, {}).get(f"events_per_s_{n}")
        if x and y:
            return x, y, n
    return None, None, None


def targets(cfg: dict, res: dict, expected: dict) -> List[dict]:
    ns = cfg["ns"]
    top = ns[-1]
    k = cfg["conc_streams"]
    rows: List[dict] = []

    def add(target: str, measured: str, ok: Optional[bool]) -> None:
        rows.append({"target": target, "measured": measured,
                     "status": "not measured" if ok is None else ("met" if ok else "not met")})

    def ratio_row(target: str, a: str, b: str, need: float) -> None:
        x, y, n = common_rate(res, a, b, ns)
        if x is None:
            add(target, f"{a} or {b} has no measurement", None)
            return
        add(target, f"{x / y:.2f}× ({a} {x:,.0f}/s vs {b} {y:,.0f}/s, N={n:,})", x / y >= need)

    def rate_row(target: str, names: List[str], need: float) -> None:
        parts, oks = [], []
        for name in names:
            d = res.get(name, {})
            n = d.get("largest_n")
            v = d.get(f"events_per_s_{n}") if n else None
            if v is None:
                parts.append(f"{name}: not measured")
                oks.append(None)
            else:
                parts.append(f"{name} {v:,.0f}/s (N={n:,})")
                oks.append(v >= need)
        add(target, "; ".join(parts), None if None in oks else all(oks))

    ratio_row("Python binding ≥ 25× the anthropic SDK's raw event iteration", "panto-py/anthropic", "anthropic-sdk-py/raw", 25)
    rate_row("Python binding ≥ 1,000,000 events/s", ["panto-py/anthropic", "panto-py/openai"], 1e6)
    for p in ("anthropic", "openai"):
        x, y, n = common_rate(res, f"panto-c/{p}", f"curl/{p}", ns)
        if x is None:
            add(f"C ≥ 50% of curl's event rate ({p})", "not measured", None)
        else:
            add(f"C ≥ 50% of curl's event rate ({p})", f"{100 * x / y:.1f}% (panto-c {x:,.0f}/s vs curl {y:,.0f}/s, N={n:,})", x / y >= 0.5)
    ratio_row("Go ≥ 3× anthropic-sdk-go", "panto-go/anthropic", "anthropic-sdk-go/raw", 3)
    ratio_row("Go ≥ 3× openai-go (same target, OpenAI format)", "panto-go/openai", "openai-sdk-go/raw", 3)
    rate_row("Lua ≥ 1,000,000 events/s", ["panto-lua/anthropic", "panto-lua/openai"], 1e6)
    for p in NEW_PROVIDERS:  # issue 29: reported beside the official SDK, the ratio the figure
        sdk = OFFICIAL_SDK[p]
        parts, oks = [], []
        for lang, name in (("C", "c"), ("Python", "py"), ("Go", "go"), ("Lua", "lua")):
            x, y, n = common_rate(res, f"panto-{name}/{p}", sdk, ns)
            if x is None:
                parts.append(f"{lang}: not measured")
                oks.append(None)
            else:
                parts.append(f"{lang} {x / y:.1f}× ({x:,.0f}/s vs {y:,.0f}/s, N={n:,})")
                oks.append(x >= y)
        add(f"panto (each language) ≥ the official SDK's events/s, {p} (vs `{sdk}`)", "; ".join(parts),
            None if None in oks else all(oks))
    limit = 30 + 2 * expected[top] / 1e6
    parts, oks = [], []
    for name in [f"panto-{l}/{p}" for l in ("c", "py", "go", "lua") for p in ("anthropic", "openai")]:
        v = res.get(name, {}).get(f"peak_rss_mb_{top}")
        if v is None:
            parts.append(f"{name}: not measured")
            oks.append(None)
        else:
            parts.append(f"{name} {v:.1f}")
            oks.append(v <= limit)
    add(f"peak RSS streaming {top:,} deltas ≤ 30 MB + 2× text = {limit:.1f} MB (every panto consumer)",
        "; ".join(parts) + " MB", None if None in oks else all(oks))
    a, b = res.get("panto-py/anthropic", {}).get("cold_start_ms"), res.get("anthropic-sdk-py/raw", {}).get("cold_start_ms")
    if a and b:
        add("Python cold start to first event ≤ 10% of the anthropic SDK's",
            f"{100 * a / b:.1f}% ({a:.0f} ms vs {b:.0f} ms)", a <= 0.1 * b)
    else:
        add("Python cold start to first event ≤ 10% of the anthropic SDK's", "not measured", None)
    a, b = res.get("panto-py/anthropic", {}).get(f"concurrent{k}_cpu_s"), res.get("anthropic-sdk-py/raw", {}).get(f"concurrent{k}_cpu_s")
    if a and b:
        add(f"{k} concurrent Python streams ≤ 1/10 of the SDK's CPU",
            f"{a / b:.3f} of it ({a:.2f} s vs {b:.2f} s, threads, {cfg['conc_n']:,} deltas each)", a <= 0.1 * b)
    else:
        add(f"{k} concurrent Python streams ≤ 1/10 of the SDK's CPU", "not measured", None)
    return rows


def big_targets(cfg: dict, res: dict, selected: List[Client]) -> List[dict]:
    k = cfg["big_streams"]
    names = [c.name for c in selected if c.big]
    rows = []
    for infix, over in (("", ""), ("_tls", " over TLS")):
        parts, oks = [], []
        for name in names:
            v = res.get(name, {}).get(f"concurrent{k}{infix}_kb_per_stream")
            parts.append(f"{name}: not measured" if v is None else f"{name} {v:,.0f} KB")
            oks.append(None if v is None else v <= KB_PER_STREAM_TARGET)
        ok = None if not oks or None in oks else all(oks)
        rows.append({"target": f"{k:,} concurrent streams{over}: ≤ {KB_PER_STREAM_TARGET} KB of peak RSS a stream (C, Go, Python)",
                     "measured": "; ".join(parts) + f" ((peak RSS with {k:,} streams − with 1) / {k:,})",
                     "status": "not measured" if ok is None else ("met" if ok else "not met")})
    return rows


# ---- reports ---------------------------------------------------------------------------------

def fmt(v, spec="{:,.0f}"):
    return "—" if v is None else spec.format(v)


def machine_info() -> dict:
    cpu = ""
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next((l.split(":", 1)[1].strip() for l in f if l.startswith("model name")), "")
    except OSError:
        pass
    versions = {}
    for mod in ("anthropic", "openai", "httpx", "google.genai", "boto3"):
        try:
            out = subprocess.run([VENV_PY, "-c", f"import {mod}; print({mod}.__version__)"], capture_output=True, text=True, timeout=60)
            versions[mod] = out.stdout.strip()
        except Exception:
            versions[mod] = "?"
    try:
        with open(os.path.join(HERE, "go-peers", "go.mod")) as f:
            for line in f:
                m = re.match(r"\s*(github\.com/(?:anthropics/anthropic-sdk-go|openai/openai-go)\S*)\s+(\S+)", line)
                if m:
                    versions[m.group(1)] = m.group(2)
    except OSError:
        pass
    go = subprocess.run(["go", "env", "GOVERSION"], capture_output=True, text=True).stdout.strip()
    curl = subprocess.run(["curl", "--version"], capture_output=True, text=True).stdout.split("\n")[0].split(" ")[1]
    return {"cpu": cpu, "cores": os.cpu_count(), "kernel": platform.release(), "python": platform.python_version(),
            "go": go, "curl": curl, "lua": "5.4", "versions": versions,
            "panto_optimize": os.environ.get("BENCH_OPTIMIZE", "ReleaseSafe")}


def md_table(title: str, header: List[str], rows: List[List[str]]) -> List[str]:
    """A section of RESULTS.md: its title and a table."""
    return ([f"## {title}", "", "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
            + ["| " + " | ".join(r) + " |" for r in rows] + [""])


def streaming_table(cfg: dict, res: dict, selected: List[Client]) -> List[str]:
    ns = cfg["ns"]
    L: List[str] = ["## Streaming one turn", ""]
    hdr = ["consumer"] + [f"events/s N={n:,}" for n in ns] + ["CPU µs/event", "peak RSS MB", "TTFE ms", "cold start ms", "import RSS MB"]
    L.append("| " + " | ".join(hdr) + " |")
    L.append("|" + "---|" * len(hdr))
    for c in selected:
        d = res[c.name]
        cells = [f"`{c.name}`"] + [fmt(d.get(f"events_per_s_{n}")) if f"skipped_{n}" not in d else "skipped" for n in ns]
        cells += [fmt(d.get("cpu_us_per_event"), "{:.2f}"), fmt(d.get("peak_rss_mb"), "{:.1f}"),
                  fmt(d.get("ttfe_ms"), "{:.2f}"), fmt(d.get("cold_start_ms"), "{:,.0f}"), fmt(d.get("import_rss_mb"), "{:.1f}")]
        if "error" in d:
            cells[0] += " (failed)"
        L.append("| " + " | ".join(cells) + " |")
    L.append("")
    L.append(f"CPU µs/event and peak RSS are at the largest N measured for that consumer (N={ns[-1]:,} unless "
             f"skipped); 'skipped' means one run was estimated to take over {cfg['skip_over_s']:.0f} s. CPU is the "
             "consumer's user+sys from READY to END (start-up excluded; curl: the whole process). TTFE: request "
             "sent → first text delta. Cold start: process spawned → first text delta (interpreter, imports, "
             "client set-up, connect, first event). Import RSS: peak RSS when set-up was done, before the request.")
    L.append("")
    return L


def write_markdown(path: str, cfg: dict, res: dict, rows: List[dict], info: dict, selected: List[Client], png: Optional[str],
                   m: dict, latency_lines: List[str]) -> None:
    k = cfg["conc_streams"]
    L: List[str] = []
    L.append("# `make bench` results")
    L.append("")
    L.append(f"Generated by `make bench{' BENCH_QUICK=1' if cfg['name'] == 'quick' else ''}` on {datetime.datetime.now().strftime('%Y-%m-%d %H:%M')} "
             f"({info['cores']} cores, {info['cpu']}, Linux {info['kernel']}; Python {info['python']}, {info['go']}, "
             f"Lua {info['lua']}, curl {info['curl']}; libpanto {info['panto_optimize']}; load average "
             f"{info['loadavg_before'][0]:.2f} just before the run: above ~0.5, something else was using the CPU). "
             "Medians of the repetitions; each consumer runs as its own process against a loopback SSE server "
             "that sends pre-rendered bodies (see bench/README.md). "
             + ", ".join(f"{k_} {v}" for k_, v in info["versions"].items()) + ".")
    L.append("")
    L.append("## Targets (issues 6 and 13)")
    L.append("")
    L.append("| target | measured | status |")
    L.append("|---|---|---|")
    for r in rows:
        L.append(f"| {r['target']} | {r['measured']} | **{r['status']}** |")
    L.append("")
    if any(res[c.name].get("largest_n") for c in selected):  # the streaming part ran
        L += streaming_table(cfg, res, selected)
    conc = [c for c in selected if res[c.name].get(f"concurrent{k}_cpu_s") is not None]
    if conc:
        L += md_table(f"{k} concurrent streams in one process ({cfg['conc_n']:,} deltas each)",
                      ["consumer", "how", "CPU s", "peak RSS MB", "wall s", "events/s"],
                      [[f"`{c.name}`", c.note, f"{d[f'concurrent{k}_cpu_s']:.2f}", f"{d[f'concurrent{k}_rss_mb']:.1f}",
                        f"{d[f'concurrent{k}_wall_s']:.2f}", f"{d[f'concurrent{k}_events_per_s']:,.0f}"]
                       for c, d in ((c, res[c.name]) for c in conc)])
    kb = cfg["big_streams"]
    big = [c for c in selected if res[c.name].get(f"concurrent{kb}_kb_per_stream") is not None
           or res[c.name].get(f"concurrent{kb}_tls_kb_per_stream") is not None]
    if big:
        L += md_table(f"{kb:,} concurrent streams in one process ({cfg['big_n']:,} deltas each): memory a stream",
                      ["consumer", "how", "link", "peak RSS, 1 stream MB", f"peak RSS, {kb:,} streams MB", "KB a stream", "wall s"],
                      [[f"`{c.name}`", c.note, link, f"{d[f'concurrent{kb}{infix}_baseline_rss_mb']:.1f}",
                        f"{d[f'concurrent{kb}{infix}_rss_mb']:.1f}",
                        f"{d[f'concurrent{kb}{infix}_kb_per_stream']:,.0f}", f"{d[f'concurrent{kb}{infix}_wall_s']:.2f}"]
                       for c, d in ((c, res[c.name]) for c in big)
                       for infix, link in (("", "http"), ("_tls", "https"))
                       if d.get(f"concurrent{kb}{infix}_kb_per_stream") is not None])
        L.append(f"KB a stream: (peak RSS with {kb:,} streams − peak RSS of the same program with 1 stream of as many "
                 f"deltas) / {kb:,}, in KiB: every stream's buffers, its agent, its thread or goroutine stack pages, "
                 "and its socket's user-space state, all streams open at once; https: the same through TLS "
                 "(each stream's handshake on its own thread or goroutine, the TLS connection's buffers).")
        L.append("")
    L += latency_lines
    errors = [(name, d[key]) for name, d in res.items() for key in ("error", "latency_error") if key in d]
    if errors:
        L.append("## Failures")
        L.append("")
        for name, e in errors:
            L.append(f"- `{name}`: {e}")
        L.append("")
    if png:
        L.append(f"![events per second, CPU per event, peak RSS and cold start]({os.path.basename(png)})")
        L.append("")
    with open(path, "w") as f:
        f.write("\n".join(L))


def write_chart(path: str, cfg: dict, res: dict, selected: List[Client]) -> bool:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    colors = {"panto": "#1f77b4", "peer": "#ff7f0e", "limit": "#7f7f7f"}
    names = [c for c in selected if res[c.name].get("largest_n")]
    fig, axes = plt.subplots(2, 2, figsize=(15, 11))
    panels = [
        ("events per second (largest N measured; log)", lambda d: d.get(f"events_per_s_{d['largest_n']}"), True),
        ("CPU µs per event (log)", lambda d: d.get("cpu_us_per_event"), True),
        ("peak RSS, MB (largest N)", lambda d: d.get("peak_rss_mb"), False),
        ("cold start to first event, ms (log)", lambda d: d.get("cold_start_ms"), True),
    ]
    for ax, (title, get, log) in zip(axes.flat, panels):
        rows = [(c.name, get(res[c.name]), colors[c.group]) for c in names if get(res[c.name])]
        rows.reverse()
        y = range(len(rows))
        ax.barh(list(y), [r[1] for r in rows], color=[r[2] for r in rows])
        ax.set_yticks(list(y))
        ax.set_yticklabels([r[0] for r in rows], fontsize=8)
        ax.set_title(title, fontsize=11)
        if log:
            ax.set_xscale("log")
        ax.grid(axis="x", alpha=0.3)
        for yi, r in zip(y, rows):
            v = r[1]
            label = f"{v:,.0f}" if v >= 100 else f"{v:.2f}" if v < 10 else f"{v:.1f}"
            ax.text(v, yi, " " + label, va="center", fontsize=7)
    from matplotlib.patches import Patch
    fig.legend(handles=[Patch(color=colors["panto"], label="panto"), Patch(color=colors["peer"], label="official SDKs / httpx"),
                        Patch(color=colors["limit"], label="curl (physical limit)")], loc="upper center", ncol=3)
    fig.tight_layout(rect=(0, 0, 1, 0.96))
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return True


def merge_part(res: dict, failed: dict, part: dict, error_key: str) -> None:
    """A part's figures (`part["results"]`) and failures into the per-consumer results."""
    for name, d in part["results"].items():
        res.setdefault(name, {}).update(d)
    for name, why in part["failed"].items():
        res.setdefault(name, {})[error_key] = why
        failed.setdefault(name, why)


def main() -> int:
    ap = argparse.ArgumentParser(description="make bench")
    ap.add_argument("--quick", action="store_true", default=os.environ.get("BENCH_QUICK", "") not in ("", "0"))
    ap.add_argument("--only", action="append", default=[],
                    help="run only consumers whose name contains this, or only the parts named: "
                         + ", ".join(SECTIONS + OPT_IN) + " (repeatable; " + ", ".join(OPT_IN) + " only when named)")
    ap.add_argument("--reps", type=int, default=None)
    ap.add_argument("--json", default=os.path.join(ROOT, "build", "bench.json"))
    ap.add_argument("--markdown", default=os.path.join(HERE, "RESULTS.md"))
    args = ap.parse_args()
    cfg = QUICK if args.quick else FULL
    if args.reps:
        cfg = dict(cfg, reps=args.reps, conc_reps=args.reps, latency=dict(cfg["latency"], reps=args.reps))
    sections = [s for s in SECTIONS + OPT_IN if s in args.only] or list(SECTIONS)
    names = [s for s in args.only if s not in SECTIONS + OPT_IN]
    selected = [c for c in clients() if not names or any(s in c.name for s in names)]
    lat_selected = [c for c in latency.clients() if not names or any(s in c.name for s in names)]
    os.makedirs(os.path.join(BUILD, "logs"), exist_ok=True)
    log_path = os.path.join(BUILD, "logs", "bench.log")
    t0 = time.time()

    def say(msg: str) -> None:
        print(msg, flush=True)

    load_before = os.getloadavg()
    streaming, big = "streaming" in sections, "streams1000" in sections
    lat = None
    with open(log_path, "w") as log:
        if streaming or big:
            m = measure(cfg, selected, log, say, streaming=streaming, big=big)
        else:
            m = dict(runs={c.name: {} for c in selected}, conc_runs={}, big_runs={}, big_tls_runs={}, failed={},
                     skipped={c.name: {} for c in selected}, expected={}, bodies={})
        if "latency" in sections and lat_selected:
            say("bench: latency: a tool turn and plain turns through delayed links")
            lat = latency.measure(cfg["latency"], lat_selected, log, say)
        img = None
        if "images" in sections:
            say("bench: images: fitting 4000x3000 pictures into 2000x2000, panto and Pillow")
            img = images.measure(cfg["image_reps"], os.path.join(os.environ["BENCH_LIB_DIR"], "..", "bin", "media_fit"),
                                 sys.executable, log, say)
        ses = None
        ses_error = None
        if "sessions" in sections:
            say("bench: sessions: a 10,000-message session loaded, messages appended")
            try:
                ses = sessions.measure(1 if cfg["name"] == "quick" else 3,
                                       os.path.join(os.environ["BENCH_LIB_DIR"], "..", "bin", "session_bench"), log, say)
            except (RuntimeError, subprocess.TimeoutExpired, ValueError) as e:
                ses_error = str(e)
                say(f"bench: sessions failed: {e}")
        tr = None
        if "tool_round" in sections:
            tr_selected = [c for c in tool_round.clients() if not names or any(s in c.name for s in names)]
            say("bench: tool round: three 200 ms host tools a round, parallel and sequential")
            tr = tool_round.measure(4 if cfg["name"] == "quick" else 6, tr_selected, os.environ["BENCH_LIB_DIR"], log, say)
        wt = None
        wt_error = None
        sbs_rows: List[dict] = []
        if "waiting" in sections and (not names or any(s in "panto-go" for s in names)):
            n = waiting.STREAMS[cfg["name"]]
            say(f"bench: waiting: {n:,} Go turns at once, each answered {waiting.DELAY_MS} ms late")
            try:
                wt = waiting.measure(n, waiting.DELAY_MS, os.path.join(BUILD, "go-panto"), os.environ["BENCH_LIB_DIR"], log)
            except (subprocess.CalledProcessError, subprocess.TimeoutExpired, ValueError, IndexError) as e:
                wt_error = str(e)
                say(f"bench: waiting failed: {e}")
            # Side by side (issue 28's table): Python asyncio (panto, AsyncAnthropic, AsyncOpenAI),
            # Go and C epoll; 1,000 streams, and 10,000 unless quick.
            sbs_rows = []
            try:
                epoll = waiting.build_epoll_streams(os.environ["BENCH_LIB_DIR"])
                for n in waiting.SIDE_BY_SIDE[cfg["name"]]:
                    say(f"bench: waiting side by side: {n:,} streams in Python, Go and C, each answered {waiting.DELAY_MS} ms late")
                    sbs_rows += waiting.side_by_side(n, waiting.DELAY_MS, os.path.join(BUILD, "go-panto"),
                                                     os.environ["BENCH_LIB_DIR"], epoll, log)
            except (subprocess.CalledProcessError, RuntimeError, ValueError, IndexError, OSError) as e:
                wt_error = (wt_error + "; " if wt_error else "") + f"side by side: {e}"
                say(f"bench: waiting side by side failed: {e}")
        dur = None
        if "durable" in sections:
            try:
                dur = durable.measure(durable.TURNS[cfg["name"]], os.environ["BENCH_LIB_DIR"], log, say)
            except (RuntimeError, subprocess.TimeoutExpired, ValueError, IndexError) as e:
                m["failed"]["durable"] = str(e)
                say(f"bench: durable failed: {e}")
    load_after = os.getloadavg()
    res = summarize(cfg, selected, m)
    rows = targets(cfg, res, m["expected"]) if streaming else []
    rows += big_targets(cfg, res, selected) if big else []
    if lat is not None:
        merge_part(res, m["failed"], lat, "latency_error")
        rows += latency.targets(lat, lat_selected)
    if img is not None:
        merge_part(res, m["failed"], img, "image_error")
        rows += images.targets(img)
    if ses is not None:
        res["sessions"] = ses
        rows += sessions.targets(ses)
    if ses_error is not None:
        m["failed"]["sessions"] = ses_error
    if tr is not None:
        merge_part(res, m["failed"], tr, "tool_round_error")
        rows += tool_round.targets(tr)
    if wt is not None:
        res["waiting"] = wt
        rows += waiting.targets(wt)
    if wt is not None or sbs_rows:
        res["waiting_side_by_side"] = sbs_rows
        rows += waiting.side_targets(sbs_rows)
    if wt_error is not None:
        m["failed"]["waiting"] = wt_error
    if dur is not None:
        res["durable"] = dur
        rows += durable.targets(dur)
    info = machine_info()
    info["loadavg_before"] = [round(x, 2) for x in load_before]
    info["loadavg_after"] = [round(x, 2) for x in load_after]
    doc = {"_meta": {"quick": cfg["name"] == "quick", "ns": cfg["ns"], "reps": cfg["reps"],
                     "concurrent_streams": cfg["conc_streams"], "concurrent_deltas_each": cfg["conc_n"],
                     "big_streams": cfg["big_streams"], "big_deltas_each": cfg["big_n"],
                     "latency": dict(cfg["latency"], turns=latency.TURNS, text_deltas=latency.TEXT_DELTAS,
                                     tool_rounds=latency.TOOL_ROUNDS),
                     "text_bytes": {str(n): m["expected"][n] for n in cfg["ns"] if n in m["expected"]}, "body_bytes": m["bodies"],
                     "sections": sections, "targets": rows, "duration_s": round(time.time() - t0, 1), **info}}
    doc.update(res)
    partial = bool(args.only)
    if partial and args.json == ap.get_default("json"):  # a subset must not overwrite a full run
        args.json = os.path.join(BUILD, "bench.json")
    os.makedirs(os.path.dirname(args.json), exist_ok=True)
    with open(args.json, "w") as f:
        json.dump(doc, f, indent=1)
    png = os.path.join(HERE, "results.png")
    md = args.markdown
    if partial:  # nor the committed results
        png = os.path.join(BUILD, "results.png")
        md = os.path.join(BUILD, "RESULTS.md") if args.markdown == os.path.join(HERE, "RESULTS.md") else args.markdown
    have_png = streaming and write_chart(png, cfg, res, selected)
    write_markdown(md, cfg, res, rows, info, selected, png if have_png else None, m,
                   (latency.markdown(lat, lat_selected) if lat is not None else []) + (images.markdown(img) if img is not None else [])
                   + (sessions.markdown(ses) if ses is not None else [])
                   + (tool_round.markdown(tr) if tr is not None else [])
                   + (waiting.markdown(wt) if wt is not None else [])
                   + (waiting.side_markdown(sbs_rows, waiting.DELAY_MS) if sbs_rows else [])
                   + (durable.markdown(dur) if dur is not None else []))

    print()
    print(f"bench: wrote {args.json}, {md}" + (f", {png}" if have_png else "") + f" in {time.time() - t0:.0f} s")
    print("bench: headline targets (issues 6 and 13)")
    width = max((len(r["target"]) for r in rows), default=0)
    for r in rows:
        print(f"  [{r['status']:^12}] {r['target']:<{width}}  {r['measured']}")
    if m["failed"]:
        print(f"bench: {len(m['failed'])} consumer(s) failed: " + ", ".join(m["failed"]) + f" (see {log_path})")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
