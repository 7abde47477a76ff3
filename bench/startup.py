"""Start-up of the `panto` command: `panto -p` to its first streamed byte against the provider
emulator, side by side with what other agents pay before doing anything: `python -c "import
anthropic"` (the Python SDK's import) and, where node is installed, `node -e ""` (the floor of
any Node CLI's start).

    python bench/startup.py [--panto BIN] [--python PY] [--reps N] [--json OUT]

bench/bench.sh runs it with the optimized build (build/bench/zig-out/bin/panto) and the peers'
venv (build/bench-venv, which has anthropic). Each figure is the median (and the minimum) of N
runs after one warm-up run, wall clock from before the spawn; the target is under 20 ms for
panto's first byte (issue 18).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bindings-py"))

from panto.emulator import Emulator  # noqa: E402

TARGET_MS = 20.0


def first_byte_ms(argv: list[str], env: dict[str, str], cwd: str) -> tuple[float, float]:
    """(ms to the first byte on stdout, ms to the exit) of one run."""
    t0 = time.perf_counter()
    p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env=env, cwd=cwd)
    assert p.stdout is not None and p.stderr is not None
    first = p.stdout.read(1)
    t1 = time.perf_counter()
    p.stdout.read()
    err = p.stderr.read()
    if p.wait() != 0 or not first:
        raise SystemExit(f"startup: {' '.join(argv)} failed ({p.returncode}): {err.decode(errors='replace')}")
    return (t1 - t0) * 1000, (time.perf_counter() - t0) * 1000


def exit_ms(argv: list[str], env: dict[str, str]) -> float:
    t0 = time.perf_counter()
    r = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, env=env)
    if r.returncode != 0:
        raise SystemExit(f"startup: {' '.join(argv)} failed ({r.returncode}): {r.stderr.decode(errors='replace')}")
    return (time.perf_counter() - t0) * 1000


def summary(samples: list[float]) -> dict[str, float]:
    return {"median_ms": round(statistics.median(samples), 2), "min_ms": round(min(samples), 2)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--panto", default=str(ROOT / "zig-out" / "bin" / "panto"))
    ap.add_argument("--python", default=sys.executable, help="a Python that has the anthropic package")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--json", default=str(ROOT / "build" / "bench" / "startup.json"))
    a = ap.parse_args()
    a.panto = os.path.abspath(a.panto)  # (it runs from a temporary HOME)

    results: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory(prefix="panto-startup-") as home, \
            Emulator({"responses": [{"message": {"content": [{"type": "text", "text": "Hi"}]}}],
                      "repeat_last": True}) as emu:
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": home,
               "ANTHROPIC_API_KEY": "sk-bench", "ANTHROPIC_BASE_URL": emu.url}
        for label, extra in (("panto -p, first byte", []), ("panto -p --no-session, first byte", ["--no-session"])):
            argv = [a.panto, "-p", "Say hi", *extra]
            first_byte_ms(argv, env, home)  # warm-up: page cache, the emulator's first connection
            runs = [first_byte_ms(argv, env, home) for _ in range(a.reps)]
            results[label] = summary([r[0] for r in runs])
            results[label.replace("first byte", "exit")] = summary([r[1] for r in runs])

    py_env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": os.environ.get("HOME", "/")}
    py = [a.python, "-c", "import anthropic"]
    if subprocess.run(py, capture_output=True, env=py_env).returncode == 0:
        results['python -c "import anthropic"'] = summary([exit_ms(py, py_env) for _ in range(a.reps)])
    else:
        print(f"startup: {a.python} has no anthropic package: left out", file=sys.stderr)
    node = shutil.which("node")
    if node:
        exit_ms([node, "-e", ""], py_env)
        results['node -e "" (a Node CLI\'s floor)'] = summary([exit_ms([node, "-e", ""], py_env) for _ in range(a.reps)])

    width = max(len(k) for k in results)
    print(f"startup ({a.reps} runs each; median, min):")
    for k, v in results.items():
        print(f"  {k:<{width}}  {v['median_ms']:8.2f} ms  {v['min_ms']:8.2f} ms")
    fb = results["panto -p, first byte"]["median_ms"]
    print(f"  panto's first byte: {'within' if fb < TARGET_MS else 'OVER'} the {TARGET_MS:.0f} ms target")
    out = Path(a.json)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"reps": a.reps, "target_ms": TARGET_MS, "results": results}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
