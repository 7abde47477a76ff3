"""Running one consumer process for `make bench` (bench/run.py, bench/latency.py).

A consumer runs through build/bench/spawn (bench/clients/spawn.c: Linux would otherwise charge
the harness's own peak RSS to a child forked from it), with the optimized libpanto, and prints
lines on stdout that the harness timestamps as they arrive.
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import time
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
BUILD = os.path.join(ROOT, "build", "bench")
CLIENTS_DIR = os.path.join(HERE, "clients")
LIB = os.environ.get("BENCH_LIB_DIR", os.path.join(BUILD, "zig-out", "lib"))
RUN_TIMEOUT_S = 240.0


class RunError(Exception):
    pass


@dataclass
class Process:
    """What one run printed and cost."""
    lines: List[Tuple[float, str]]  # (perf_counter when it arrived, the line)
    t_spawn: float
    t_exit: float
    cpu_total_s: float  # user + sys, the whole process (rusage)
    maxrss_kb: int  # ru_maxrss
    import_rss_kb: Optional[int] = None  # VmHWM when the READY line arrived
    extra: Dict[str, float] = field(default_factory=dict)


def _vm_hwm_kb(pid: int) -> Optional[int]:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def run(argv: List[str], env_extra: Dict[str, str], log, name: str) -> Process:
    """Runs argv to its end; raises RunError when it failed, timed out or left no rusage."""
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    env.update({
        "PANTO_LIBRARY": os.path.join(LIB, "libpanto.so"),
        "LD_LIBRARY_PATH": LIB,
        "LUA_CPATH": os.path.join(LIB, "lua", "?.so") + ";;",
        "PYTHONWARNINGS": "ignore",
    })
    env.update(env_extra)
    log.write(f"\n### {name} {' '.join(argv)}\n")
    log.flush()
    ru_path = os.path.join(BUILD, "logs", "rusage.txt")
    if os.path.exists(ru_path):
        os.unlink(ru_path)
    t_spawn = time.perf_counter()
    proc = subprocess.Popen([os.path.join(BUILD, "spawn"), ru_path] + argv, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=log, env=env, cwd=CLIENTS_DIR, start_new_session=True)
    fd = proc.stdout.fileno()
    lines: List[Tuple[float, str]] = []
    buf = b""
    import_rss = None
    child_pid = None
    deadline = t_spawn + RUN_TIMEOUT_S
    try:
        while True:
            left = deadline - time.perf_counter()
            if left <= 0:
                raise RunError(f"timed out after {RUN_TIMEOUT_S:.0f} s")
            r, _, _ = select.select([fd], [], [], left)
            if not r:
                continue
            data = os.read(fd, 65536)
            now = time.perf_counter()
            if not data:
                break
            buf += data
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                text = line.decode("utf-8", "replace").strip()
                if text.startswith("PID ") and child_pid is None:
                    child_pid = int(text.split()[1])
                    continue
                lines.append((now, text))
                if text.startswith("READY") and child_pid and import_rss is None:
                    import_rss = _vm_hwm_kb(child_pid)
    finally:
        if proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)  # the spawner and the consumer
            except ProcessLookupError:
                pass
        proc.wait()
        proc.stdout.close()
    t_exit = time.perf_counter()
    if buf.strip():  # curl -w prints no final newline
        lines.append((t_exit, buf.decode("utf-8", "replace").strip()))
    try:
        with open(ru_path) as f:
            code, maxrss, utime, stime = f.read().split()
    except (OSError, ValueError):
        raise RunError(f"the spawner exited with {proc.returncode} and no rusage (see {log.name})")
    if int(code) != 0:
        raise RunError(f"exit status {code} (see {log.name})")
    return Process(lines=lines, t_spawn=t_spawn, t_exit=t_exit, cpu_total_s=float(utime) + float(stime),
                   maxrss_kb=int(maxrss), import_rss_kb=import_rss)
