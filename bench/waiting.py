"""Turns that all wait at once: what a waiting stream costs in Go (issue 28). A part of `make
bench` (`--only waiting`: 10,000 turns, 1,000 with BENCH_QUICK=1), or on its own:

    .venv/bin/python bench/waiting.py [--streams 1000] [--delay-ms 500] [--go-panto PATH]

Runs `go-panto waiting` (bench/go-panto/waiting.go: one process, a goroutine and an agent a
turn) with 1 turn and with N turns at once, against `go-panto delayed-server`
(bench/go-panto/delayed.go: a goroutine a connection, so it serves 10,000 waiting turns)
answering every request DELAY ms after it came, and reports wall time, CPU, peak OS threads
and KB a stream = (peak RSS with N turns - peak RSS with 1) / N. On its own, go-panto is built
from bench/go-panto (the module's static libpanto) into build/bench/go-panto-waiting;
--go-panto runs another build of the consumer (e.g. one linked against an older libpanto-go).
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
from typing import Dict, List, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
BUILD = os.path.join(os.path.dirname(HERE), "build", "bench")
STREAMS = {"full": 10_000, "quick": 1_000}
SIDE_BY_SIDE = {"full": [1_000, 10_000], "quick": [1_000]}
DELAY_MS = 500
THREADS_TARGET = 100  # issue 28: fewer than 100 OS threads for 10,000 streams
KB_TARGET = 64  # issue 28: at most 64 KB of RSS a plain-HTTP stream


def _run(binary: str, url: str, streams: int, env: Dict[str, str], log) -> Dict[str, float]:
    out = subprocess.run([binary, "waiting", url, str(streams)], check=True, stdout=subprocess.PIPE,
                         stderr=log, text=True, timeout=600, env=env).stdout
    return {k: float(v) for k, v in (kv.split("=") for kv in out.split())}


def measure(streams: int, delay_ms: int, go_panto: str, lib_dir: Optional[str], log=None) -> dict:
    """The figures of `streams` turns at once (and of 1), by `go_panto`, whose libpanto.so (if
    it links one) is in lib_dir."""
    env = dict(os.environ)
    if lib_dir:
        env["LD_LIBRARY_PATH"] = lib_dir
    # Each turn holds a socket, the server the other end: raise the soft limit on open files
    # (the children inherit it).
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < 2 * streams + 256:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 2 * streams + 256), hard))
    server = subprocess.Popen([go_panto, "delayed-server", str(delay_ms)], stdout=subprocess.PIPE, stderr=log,
                              text=True, env=env)
    try:
        assert server.stdout is not None
        url = server.stdout.readline().split()[-1]
        one = _run(go_panto, url, 1, env, log)
        many = _run(go_panto, url, streams, env, log)
    finally:
        server.kill()
        server.wait()
    return dict(streams=streams, delay_ms=delay_ms, wall_s=many["wall_s"], cpu_s=many["cpu_s"],
                threads_peak=int(many["threads_peak"]), threads_created=int(many["threads_created"]),
                rss_peak_mb=many["rss_peak_kb"] / 1024, rss_one_mb=one["rss_peak_kb"] / 1024,
                kb_per_stream=(many["rss_peak_kb"] - one["rss_peak_kb"]) / streams)


# ---- side by side (issue 28's table): Python asyncio, Go and C epoll, panto and the SDKs ------

PY_CLIENTS = [("Python asyncio", "panto", "panto"), ("Python asyncio", "AsyncAnthropic", "anthropic"),
              ("Python asyncio", "AsyncOpenAI", "openai")]
GO_PEERS = [("anthropic-sdk-go", "anthropic-go"), ("openai-go", "openai-go")]
PY_THREADS_TARGET = 8  # issue 28: 1,000 Python streams with at most 8 threads


def _child_usage(argv: List[str], env: Dict[str, str], log) -> Dict[str, float]:
    """Runs a child to its end, sampling its thread count and peak RSS (VmHWM: wait4's
    ru_maxrss counts the forking parent's pages) every millisecond; its CPU from its own
    wait4. Its own `key=value` line (stdout), when it prints one, wins: it times the turns
    alone, without its start-up."""
    import tempfile
    import time
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=out, stderr=err, text=True, env=env)
        peak = 0
        hwm = 0
        while True:
            pid, code, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid != 0:
                break
            try:
                with open(f"/proc/{proc.pid}/status") as f:
                    for line in f:
                        if line.startswith("Threads:"):
                            peak = max(peak, int(line.split()[1]))
                        elif line.startswith("VmHWM:"):
                            hwm = max(hwm, int(line.split()[1]))
            except (OSError, ValueError):
                pass
            time.sleep(0.001)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(code)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    if log is not None:
        log.write(stderr)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(argv[:3])} exited {proc.returncode}: {stderr.strip()[-300:]}")
    figures: Dict[str, float] = {"wall_s": wall, "threads_peak": peak, "cpu_s": usage.ru_utime + usage.ru_stime,
                                 "rss_peak_kb": float(hwm)}
    for line in stderr.splitlines():  # epoll_streams: "(W s)", the turns' wall time
        if line.startswith("(") and line.endswith(" s)"):
            figures["wall_s"] = float(line[1:-3])
    for line in stdout.splitlines():
        if line.startswith("streams="):
            figures.update({k: float(v) for k, v in (kv.split("=") for kv in line.split())})
    return figures


def side_by_side(streams: int, delay_ms: int, go_panto: str, lib_dir: Optional[str], epoll_streams: Optional[str],
                 log=None) -> List[dict]:
    """One row a language and client: `streams` turns at once and 1, each answered delay_ms
    late by go-panto's delayed server."""
    env = dict(os.environ, PYTHONPATH=os.path.join(os.path.dirname(HERE), "bindings-py"))
    if lib_dir:
        env.update(LD_LIBRARY_PATH=lib_dir, PANTO_LIBRARY=os.path.join(lib_dir, "libpanto.so"))
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < 2 * streams + 256:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 2 * streams + 256), hard))
    server = subprocess.Popen([go_panto, "delayed-server", str(delay_ms)], stdout=subprocess.PIPE, stderr=log,
                              text=True, env=env)
    rows = []
    try:
        assert server.stdout is not None
        url = server.stdout.readline().split()[-1]
        go_one, go_many = _run(go_panto, url, 1, env, log), _run(go_panto, url, streams, env, log)
        rows.append(_row("Go", "panto", streams, go_one, go_many))
        for client, exe in GO_PEERS:  # (bench/bench.sh builds them from bench/go-peers)
            path = os.path.join(BUILD, exe)
            if os.path.exists(path):
                one, many = _child_usage([path, "waiting", url, "1"], env, log), _child_usage([path, "waiting", url, str(streams)], env, log)
                rows.append(_row("Go", client, streams, one, many))
        for lang, client, name in PY_CLIENTS:
            argv = [sys.executable, os.path.join(HERE, "waiting_py.py"), name, url]
            one, many = _child_usage(argv + ["1"], env, log), _child_usage(argv + [str(streams)], env, log)
            rows.append(_row(lang, client, streams, one, many))
        if epoll_streams:
            c_env = dict(env, PANTO_BASE_URL=url, PANTO_API_KEY="bench")
            c_env.pop("OPENAI_API_KEY", None)
            one = _child_usage([epoll_streams, "1"], c_env, log)
            many = _child_usage([epoll_streams, str(streams)], c_env, log)
            rows.append(_row("C epoll", "panto", streams, one, many))
    finally:
        server.kill()
        server.wait()
    return rows


def _row(lang: str, client: str, streams: int, one: Dict[str, float], many: Dict[str, float]) -> dict:
    return dict(lang=lang, client=client, streams=streams, wall_s=many["wall_s"], cpu_s=many["cpu_s"],
                threads_peak=int(many["threads_peak"]), rss_peak_mb=many["rss_peak_kb"] / 1024,
                kb_per_stream=(many["rss_peak_kb"] - one["rss_peak_kb"]) / streams)


def side_targets(rows: List[dict]) -> List[dict]:
    out = []
    by = {(r["lang"], r["client"], r["streams"]): r for r in rows}
    for (lang, client, n), r in sorted(by.items()):
        if client != "panto":
            continue
        if lang == "Python asyncio" and n == 1_000 and ("Python asyncio", "AsyncAnthropic", n) in by:
            sdk = by[("Python asyncio", "AsyncAnthropic", n)]
            ok = r["wall_s"] <= sdk["wall_s"] / 2 and r["threads_peak"] <= PY_THREADS_TARGET
            out.append(dict(target=f"Python: {n:,} streams in <= 1/2 AsyncAnthropic's wall time, <= {PY_THREADS_TARGET} threads",
                            measured=f"{r['wall_s']:.2f} s vs {sdk['wall_s']:.2f} s, {r['threads_peak']} threads",
                            status="met" if ok else "NOT MET"))
        if n >= 10_000:
            ok = r["kb_per_stream"] <= KB_TARGET and r["threads_peak"] < THREADS_TARGET
            out.append(dict(target=f"{lang}: {n:,} streams <= {KB_TARGET} KB a stream, < {THREADS_TARGET} OS threads",
                            measured=f"{r['kb_per_stream']:.1f} KB, {r['threads_peak']} threads",
                            status="met" if ok else "NOT MET"))
    return out


def side_markdown(rows: List[dict], delay_ms: int) -> List[str]:
    lines = ["", "## Streams that wait at once, side by side", "",
             f"Every answer {delay_ms} ms after its request (bench/waiting.py, bench/waiting_py.py); "
             "KB a stream = (peak RSS with N - with 1) / N.", "",
             "| streams | language | client | wall | CPU | peak threads | peak RSS | KB a stream |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['streams']:,} | {r['lang']} | {r['client']} | {r['wall_s']:.2f} s | {r['cpu_s']:.2f} s | "
                     f"{r['threads_peak']} | {r['rss_peak_mb']:.1f} MiB | {r['kb_per_stream']:.1f} |")
    return lines


def targets(m: dict) -> List[dict]:
    n = m["streams"]
    return [
        dict(target=f"Go: {n:,} turns waiting at once < {THREADS_TARGET} OS threads",
             measured=f"{m['threads_peak']} at the peak", status="met" if m["threads_peak"] < THREADS_TARGET else "NOT MET"),
        dict(target=f"Go: {n:,} waiting turns <= {KB_TARGET} KB a stream (plain HTTP)",
             measured=f"{m['kb_per_stream']:.1f} KB", status="met" if m["kb_per_stream"] <= KB_TARGET else "NOT MET"),
    ]


def markdown(m: dict) -> List[str]:
    return [
        "",
        "## Turns that wait at once (Go)",
        "",
        f"{m['streams']:,} turns at once in one Go process (a goroutine and an agent each), every answer "
        f"{m['delay_ms']} ms after its request (bench/waiting.py):",
        "",
        "| wall | CPU | peak OS threads (created) | peak RSS (1 turn) | KB a stream |",
        "|---|---|---|---|---|",
        f"| {m['wall_s']:.2f} s | {m['cpu_s']:.2f} s | {m['threads_peak']} ({m['threads_created']}) | "
        f"{m['rss_peak_mb']:.1f} MiB ({m['rss_one_mb']:.1f} MiB) | {m['kb_per_stream']:.1f} |",
    ]


def build_epoll_streams(lib_dir: str) -> str:
    """examples/c/epoll_streams.c, built against lib_dir's libpanto."""
    root = os.path.dirname(HERE)
    exe = os.path.join(BUILD, "epoll_streams")
    os.makedirs(BUILD, exist_ok=True)
    subprocess.run(["cc", "-O2", "-Iinclude", "-Iexamples/c", "examples/c/epoll_streams.c", "-o", exe,
                    f"-L{lib_dir}", "-lpanto", f"-Wl,-rpath,{lib_dir}"], cwd=root, check=True)
    return exe


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--streams", type=int, default=STREAMS["quick"])
    ap.add_argument("--delay-ms", type=int, default=DELAY_MS)
    ap.add_argument("--go-panto", help="the consumer to run (default: built from bench/go-panto)")
    ap.add_argument("--side-by-side", action="store_true",
                    help="Go, Python asyncio (panto, AsyncAnthropic, AsyncOpenAI) and C epoll, one table")
    args = ap.parse_args()
    binary = args.go_panto
    if binary is None:
        binary = os.path.join(BUILD, "go-panto-waiting")
        subprocess.run(["go", "build", "-o", binary, "."], cwd=os.path.join(HERE, "go-panto"), check=True)
    if args.side_by_side:
        lib = os.path.join(os.path.dirname(HERE), "zig-out", "lib")
        rows = side_by_side(args.streams, args.delay_ms, binary, lib, build_epoll_streams(lib), sys.stderr)
        print("\n".join(side_markdown(rows, args.delay_ms)))
        for t in side_targets(rows):
            print(f"  {t['status']}: {t['target']} ({t['measured']})")
        return 0
    m = measure(args.streams, args.delay_ms, binary, None)
    print(f"{m['streams']} turns at once, each answered {m['delay_ms']} ms after its request:")
    print(f"  wall {m['wall_s']:.2f} s, CPU {m['cpu_s']:.2f} s, peak OS threads {m['threads_peak']}"
          f" ({m['threads_created']} created), peak RSS {m['rss_peak_mb']:.1f} MiB"
          f" ({m['rss_one_mb']:.1f} MiB with 1 turn): {m['kb_per_stream']:.1f} KB a stream")
    return 0


if __name__ == "__main__":
    sys.exit(main())
