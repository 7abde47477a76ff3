"""Turns that all wait at once: what a waiting stream costs in Go (issue 28).

    .venv/bin/python bench/waiting.py [--streams 1000] [--delay-ms 500] [--go-panto PATH]

Runs `go-panto waiting` (bench/go-panto/waiting.go: one process, a goroutine and an agent a
turn) with 1 turn and with --streams turns at once, against `go-panto delayed-server`
(bench/go-panto/delayed.go: a goroutine a connection, so it serves 10,000 waiting turns)
answering every request --delay-ms after it came, and prints wall time, CPU, peak OS threads
and KB a stream = (peak RSS with N turns - peak RSS with 1) / N. --go-panto runs another
build of the consumer (e.g. one linked against an older libpanto-go, to compare); go-panto is
built from bench/go-panto into build/bench/go-panto-waiting. Not part of `make bench` yet.
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
from pathlib import Path
from typing import Dict

ROOT = Path(__file__).resolve().parent.parent


def run(binary: str, url: str, streams: int) -> Dict[str, float]:
    out = subprocess.run([binary, "waiting", url, str(streams)], check=True, capture_output=True, text=True,
                         timeout=600).stdout
    return {k: float(v) for k, v in (kv.split("=") for kv in out.split())}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--streams", type=int, default=1000)
    ap.add_argument("--delay-ms", type=int, default=500)
    ap.add_argument("--go-panto", help="the consumer to run (default: built from bench/go-panto)")
    args = ap.parse_args()

    built = str(ROOT / "build" / "bench" / "go-panto-waiting")
    subprocess.run(["go", "build", "-o", built, "."], cwd=ROOT / "bench" / "go-panto", check=True)
    binary = args.go_panto or built
    # Each turn holds a socket (and an epoll instance), the server the other end: raise the
    # soft limit as bench.sh does (the children inherit it).
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < 3 * args.streams + 256:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 3 * args.streams + 256), hard))

    server = subprocess.Popen([built, "delayed-server", str(args.delay_ms)], stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        url = server.stdout.readline().split()[-1]
        one = run(binary, url, 1)
        many = run(binary, url, args.streams)
    finally:
        server.kill()
        server.wait()
    per_stream = (many["rss_peak_kb"] - one["rss_peak_kb"]) / args.streams
    print(f"{args.streams} turns at once, each answered {args.delay_ms} ms after its request:")
    print(f"  wall {many['wall_s']:.2f} s, CPU {many['cpu_s']:.2f} s, peak OS threads {many['threads_peak']:.0f}"
          f" ({many['threads_created']:.0f} created), peak RSS {many['rss_peak_kb'] / 1024:.1f} MiB"
          f" ({one['rss_peak_kb'] / 1024:.1f} MiB with 1 turn): {per_stream:.1f} KB a stream")
    return 0


if __name__ == "__main__":
    sys.exit(main())
