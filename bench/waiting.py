"""Turns that all wait at once: what a waiting stream costs in Go (issue 28).

    .venv/bin/python bench/waiting.py [--streams 1000] [--delay-ms 500] [--go-panto PATH]

Runs `go-panto waiting` (bench/go-panto/waiting.go: one process, a goroutine and an agent a
turn) with 1 turn and with --streams turns at once, against the provider emulator answering
every request --delay-ms after it came, and prints wall time, CPU, peak OS threads and
KB a stream = (peak RSS with N turns - peak RSS with 1) / N. --go-panto runs another build of
the consumer (e.g. one linked against an older libpanto-go, to compare); by default it is
built from bench/go-panto into build/bench/go-panto-waiting. Not part of `make bench` yet.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
from pathlib import Path
from typing import Dict

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bindings-py"))

from panto.emulator import Emulator  # noqa: E402


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

    binary = args.go_panto
    if binary is None:
        binary = str(ROOT / "build" / "bench" / "go-panto-waiting")
        subprocess.run(["go", "build", "-o", binary, "."], cwd=ROOT / "bench" / "go-panto", check=True)
    # Each turn holds a socket (and an epoll instance): raise the soft limit as bench.sh does.
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < 3 * args.streams + 256:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(soft, 3 * args.streams + 256)), hard))

    answer = {"message": {"content": [{"type": "text", "text": "Hello from a turn that waited."}],
                          "stop_reason": "end_turn", "usage": {"input_tokens": 12, "output_tokens": 8}},
              "delay_ms": args.delay_ms}
    with Emulator(scenario={"responses": [answer], "repeat_last": True}) as emu:
        one = run(binary, emu.url, 1)
        many = run(binary, emu.url, args.streams)
    per_stream = (many["rss_peak_kb"] - one["rss_peak_kb"]) / args.streams
    print(f"{args.streams} turns at once, each answered {args.delay_ms} ms after its request:")
    print(f"  wall {many['wall_s']:.2f} s, CPU {many['cpu_s']:.2f} s, peak OS threads {many['threads_peak']:.0f}"
          f" ({many['threads_created']:.0f} created), peak RSS {many['rss_peak_kb'] / 1024:.1f} MiB"
          f" ({one['rss_peak_kb'] / 1024:.1f} MiB with 1 turn): {per_stream:.1f} KB a stream")
    return 0


if __name__ == "__main__":
    sys.exit(main())
