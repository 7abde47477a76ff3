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


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--streams", type=int, default=STREAMS["quick"])
    ap.add_argument("--delay-ms", type=int, default=DELAY_MS)
    ap.add_argument("--go-panto", help="the consumer to run (default: built from bench/go-panto)")
    args = ap.parse_args()
    binary = args.go_panto
    if binary is None:
        binary = os.path.join(BUILD, "go-panto-waiting")
        subprocess.run(["go", "build", "-o", binary, "."], cwd=os.path.join(HERE, "go-panto"), check=True)
    m = measure(args.streams, args.delay_ms, binary, None)
    print(f"{m['streams']} turns at once, each answered {m['delay_ms']} ms after its request:")
    print(f"  wall {m['wall_s']:.2f} s, CPU {m['cpu_s']:.2f} s, peak OS threads {m['threads_peak']}"
          f" ({m['threads_created']} created), peak RSS {m['rss_peak_mb']:.1f} MiB"
          f" ({m['rss_one_mb']:.1f} MiB with 1 turn): {m['kb_per_stream']:.1f} KB a stream")
    return 0


if __name__ == "__main__":
    sys.exit(main())
