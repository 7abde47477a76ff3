"""The sessions part of `make bench` (`--only sessions`): a session of 10,000 messages (about
50 MB: user and assistant messages of about 5 KB of text each, written through panto's own
session store) is loaded by a new agent (`session_bench load`, its own process started
through build/bench/spawn so that its peak RSS is its own): the time to open it, and the peak
RSS against the file's size; then one message (about 1 KB) appended to a session, with fsync
and without (`session_bench append`, the median of many).

Targets (issue 16): load under 300 ms and under 2x the file's size in memory; an append
without fsync under 50 µs. (With fsync the figure is the disk's: reported, no target.)"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
from typing import List

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
BUILD = os.path.join(ROOT, "build", "bench")
SESSIONS = os.path.join(BUILD, "sessions")
MESSAGES = 10_000
MESSAGE_BYTES = 5_000
APPENDS = 400
LOAD_MS = 300
RSS_FACTOR = 2
APPEND_US = 50


def run(argv: List[str], log, rusage: str | None = None) -> tuple[List[str], dict]:
    if rusage is not None:
        argv = [os.path.join(BUILD, "spawn"), rusage] + argv
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    log.write(f"$ {' '.join(argv)}\n{proc.stdout}{proc.stderr}\n")
    if proc.returncode != 0:
        raise RuntimeError(f"{argv[0]} failed ({proc.returncode}): {proc.stderr.strip()[-300:]}")
    result = [line.split()[2:] for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
    usage = {}
    if rusage is not None:
        code, maxrss_kb, user_s, sys_s = open(rusage).read().split()
        usage = dict(rss_mb=int(maxrss_kb) / 1024, cpu_s=float(user_s) + float(sys_s))
    return (result[-1] if result else []), usage


def measure(reps: int, session_bench: str, log, say) -> dict:
    shutil.rmtree(SESSIONS, ignore_errors=True)
    os.makedirs(SESSIONS)
    say(f"bench: sessions: writing {MESSAGES} messages of about {MESSAGE_BYTES} bytes")
    run([session_bench, "make", SESSIONS, "big", str(MESSAGES), str(MESSAGE_BYTES)], log)
    loads = []
    for _ in range(max(reps, 3)):
        fields, usage = run([session_bench, "load", SESSIONS, "big"], log, os.path.join(BUILD, "sessions.rusage"))
        seconds, messages, size, torn = fields
        if int(messages) != MESSAGES or int(torn) != 0:
            raise RuntimeError(f"the session loaded {messages} messages, torn {torn}")
        loads.append(dict(seconds=float(seconds), rss_mb=usage["rss_mb"], cpu_s=usage["cpu_s"], file_mb=int(size) / 1e6))
    appends = []
    for k in range(max(reps, 3)):
        fields, _ = run([session_bench, "append", SESSIONS, f"append{k}", str(APPENDS)], log)
        appends.append(dict(fsync_us=float(fields[0]), nofsync_us=float(fields[1]), line_bytes=int(fields[2])))
    file_mb = loads[0]["file_mb"]
    result = {
        "load_ms": statistics.median(l["seconds"] for l in loads) * 1000,
        "load_rss_mb": max(l["rss_mb"] for l in loads),
        # The process's CPU time (user + sys, its exit included): on a busy machine the
        # wall-clock time is larger by the time others held the cores.
        "load_process_cpu_ms": statistics.median(l["cpu_s"] for l in loads) * 1000,
        "file_mb": file_mb,
        "append_fsync_us": statistics.median(a["fsync_us"] for a in appends),
        "append_nofsync_us": statistics.median(a["nofsync_us"] for a in appends),
        "append_line_bytes": appends[0]["line_bytes"],
    }
    say(f"bench: sessions: load {result['load_ms']:.0f} ms (process CPU {result['load_process_cpu_ms']:.0f} ms), peak RSS {result['load_rss_mb']:.1f} MB for a "
        f"{file_mb:.1f} MB file; append {result['append_nofsync_us']:.1f} µs without fsync, "
        f"{result['append_fsync_us']:.0f} µs with")
    return result


def targets(m: dict) -> List[dict]:
    rss_ratio = m["load_rss_mb"] * 1.048576 / m["file_mb"]  # MiB against MB
    return [
        dict(target=f"session load ({MESSAGES} messages, {m['file_mb']:.0f} MB) < {LOAD_MS} ms",
             measured=f"{m['load_ms']:.0f} ms", status="met" if m["load_ms"] < LOAD_MS else "NOT MET"),
        dict(target=f"session load peak RSS < {RSS_FACTOR}x the file",
             measured=f"{m['load_rss_mb']:.1f} MiB = {rss_ratio:.2f}x", status="met" if rss_ratio < RSS_FACTOR else "NOT MET"),
        dict(target=f"session append without fsync < {APPEND_US} µs",
             measured=f"{m['append_nofsync_us']:.1f} µs (with fsync {m['append_fsync_us']:.0f} µs)",
             status="met" if m["append_nofsync_us"] < APPEND_US else "NOT MET"),
    ]


def markdown(m: dict) -> List[str]:
    rss_ratio = m["load_rss_mb"] * 1.048576 / m["file_mb"]
    return [
        "",
        "## Sessions",
        "",
        f"A session of {MESSAGES:,} messages ({m['file_mb']:.1f} MB) opened by a new agent, and one "
        f"message ({m['append_line_bytes']} bytes of entry) appended (median of {APPENDS}):",
        "",
        "| load | process CPU | peak RSS | append, no fsync | append, fsync |",
        "|---|---|---|---|---|",
        f"| {m['load_ms']:.0f} ms | {m['load_process_cpu_ms']:.0f} ms | {m['load_rss_mb']:.1f} MiB ({rss_ratio:.2f}x the file) | "
        f"{m['append_nofsync_us']:.1f} µs | {m['append_fsync_us']:.0f} µs |",
    ]
