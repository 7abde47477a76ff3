"""The durable part of `make bench` (`bench/bench.sh --only durable`; not in the default run, as
it starts a Temporal development server): the overhead per model request of a turn run as a
Temporal workflow (panto.temporal, docs/durable.md) against the same turn run locally.

A turn of TOOL_ROUNDS tool rounds (a `lookup` call each) and an answer, REQUESTS model
requests, against the provider emulator; locally (`Agent.complete`, a new agent a turn, its
tools run by panto) and durably (`execute_workflow` on a worker process of its own: Python,
tests/durable/worker.py, and Go, libpanto-go/temporal's test binary; the same tools), on the
dev server as it starts and with eager activity execution (SERVERS), alternately, TURNS times each after a warm-up. The
figure: (median durable turn - median local turn) / REQUESTS. No target: reported.

`measure()` runs this file with the repository's .venv (temporalio is there, not in the
peers' venv), on the optimized libpanto."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from typing import Any, Dict, List

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
# The Go worker: libpanto-go/temporal's test binary, which is a worker process with
# PANTO_TEMPORAL_WORKER set (bench.sh builds it on the optimized libpanto).
GO_WORKER = os.path.join(ROOT, "build", "bench", "temporal-worker.test")
# The dev server as it starts, and with eager activity execution (the worker that completes a
# workflow task gets the activity it schedules in the answer, with no trip through matching).
SERVERS = {"": [], ", eager activities": ["--dynamic-config-value", "system.enableActivityEagerExecution=true"]}
TOOL_ROUNDS = 4
REQUESTS = TOOL_ROUNDS + 1
TURNS = {"quick": 10, "full": 40}
WARMUP = 3


def measure(turns: int, lib_dir: str, log: Any, say: Any) -> Dict[str, Any]:
    """Runs the measurement in the repository's .venv; its result as a dict."""
    env = dict(os.environ, PANTO_LIBRARY=os.path.join(lib_dir, "libpanto.so"), LD_LIBRARY_PATH=lib_dir,
               PYTHONPATH=os.path.join(ROOT, "bindings-py"))
    say(f"bench: durable: {turns} turns of {REQUESTS} model requests, local and as Temporal workflows")
    proc = subprocess.run([os.path.join(ROOT, ".venv", "bin", "python"), __file__, str(turns)], env=env,
                          capture_output=True, text=True, timeout=1800)
    log.write(f"$ durable.py {turns}\n{proc.stdout}{proc.stderr}\n")
    if proc.returncode != 0:
        raise RuntimeError(f"durable.py failed ({proc.returncode}): {proc.stderr.strip()[-300:]}")
    result: Dict[str, Any] = json.loads(proc.stdout.splitlines()[-1])
    return result


def targets(m: Dict[str, Any]) -> List[Dict[str, str]]:
    return [dict(target=f"durable turn: overhead per model request, worker {w} ({REQUESTS} requests a turn)",
                 measured=f"{r['overhead_per_request_ms']:.1f} ms ({r['durable_ms']:.0f} ms a turn, locally {m['local_ms']:.0f} ms)",
                 status="reported") for w, r in m["workers"].items()]


def markdown(m: Dict[str, Any]) -> List[str]:
    return [
        "",
        "## Durable turns (Temporal)",
        "",
        f"A turn of {TOOL_ROUNDS} tool rounds and an answer ({REQUESTS} model requests, the emulator), run "
        f"locally (Python) and as a workflow on a worker process (`temporal server start-dev` on loopback, "
        f"as it starts and with `system.enableActivityEagerExecution`); "
        f"median of {m['turns']} turns each:",
        "",
        "| worker | local turn | durable turn | overhead per model request |",
        "|---|---|---|---|",
    ] + [f"| {w} | {m['local_ms']:.1f} ms | {r['durable_ms']:.1f} ms | {r['overhead_per_request_ms']:.1f} ms |"
         for w, r in m["workers"].items()]


def scenario() -> Dict[str, Any]:
    rounds = [{"message": {"content": [{"type": "tool_use", "id": f"toolu_{i}", "name": "lookup", "input": {"key": f"k{i}"}}]}}
              for i in range(TOOL_ROUNDS)]
    return {"responses": rounds + [{"message": {"content": [{"type": "text", "text": "All known."}]}}]}


def start_worker(argv: List[str], env: Dict[str, str]) -> "subprocess.Popen[str]":
    """A worker process, once it prints "ready" (the Go SDK logs on stdout too)."""
    worker = subprocess.Popen(argv, env=dict(os.environ, ANTHROPIC_API_KEY="bench-key", **env), stdout=subprocess.PIPE,
                              text=True)
    assert worker.stdout is not None
    for line in worker.stdout:
        if line == "ready\n":
            # The rest of its output is drained, so that the SDK's logs never block it.
            threading.Thread(target=worker.stdout.read, daemon=True).start()
            return worker
    worker.kill()
    raise RuntimeError(f"the worker {argv[0]} did not start")


def main(turns: int) -> None:
    sys.path.insert(0, os.path.join(ROOT, "tests", "durable"))
    from temporalio.client import Client

    import panto
    import panto.temporal
    from panto.emulator import Emulator
    import devserver
    from tools import TOOLS

    runs = tempfile.mkdtemp(prefix="panto-bench-durable-")
    os.environ["DURABLE_RUNS"] = runs  # where tools.py counts its runs
    local_s: List[float] = []
    durable_s: Dict[str, List[float]] = {}
    try:
        with Emulator() as emu:
            config = panto.temporal.turn_config("anthropic", "claude-test", base_url=emu.url, tools=TOOLS)

            def local() -> float:
                emu.load(scenario())
                t = time.perf_counter()
                with panto.Agent("anthropic", "claude-test", base_url=emu.url, api_key="bench-key", tools=TOOLS) as agent:
                    agent.complete("Look the keys up.")
                return time.perf_counter() - t

            async def durable(client: Client, queue: str, i: int) -> float:
                emu.load(scenario())
                t = time.perf_counter()
                result = await client.execute_workflow(panto.temporal.TurnWorkflow.run,
                                                       panto.temporal.turn(config, "Look the keys up."),
                                                       id=f"{queue}-{i}", task_queue=queue)
                elapsed = time.perf_counter() - t
                if len(result["conversation"]["messages"]) != 2 * REQUESTS:
                    raise RuntimeError(f"a durable turn ended with {len(result['conversation']['messages'])} messages")
                return elapsed

            async def run(address: str, workers: List[str], suffix: str) -> None:
                client = await Client.connect(address)
                for i in range(WARMUP + turns):  # alternately, so that all see the same load
                    lt = local()
                    dts = {w: await durable(client, f"bench-{w}", i) for w in workers}
                    if i >= WARMUP:
                        local_s.append(lt)
                        for w, dt in dts.items():
                            durable_s.setdefault(w + suffix, []).append(dt)

            for suffix, flags in SERVERS.items():
                server, address = devserver.start(subprocess.DEVNULL, flags)
                workers: Dict[str, subprocess.Popen[str]] = {}
                try:
                    workers["python"] = start_worker([sys.executable, os.path.join(ROOT, "tests", "durable", "worker.py"),
                                                      address, "bench-python"], {})
                    if os.path.exists(GO_WORKER):  # the Go tests' worker process (bench.sh builds it)
                        workers["go"] = start_worker([GO_WORKER], {"PANTO_TEMPORAL_WORKER": "bench-go",
                                                                   "PANTO_TEMPORAL_ADDRESS": address})
                    asyncio.run(run(address, list(workers), suffix))
                finally:
                    for worker in workers.values():
                        worker.kill()
                        worker.wait()
                    devserver.stop(server)
        local_ms = statistics.median(local_s) * 1000
        medians = {w: statistics.median(d) * 1000 for w, d in durable_s.items()}
        print(json.dumps(dict(turns=turns, requests_per_turn=REQUESTS, local_ms=local_ms,
                              workers={w: dict(durable_ms=ms, overhead_per_request_ms=(ms - local_ms) / REQUESTS)
                                       for w, ms in medians.items()})), flush=True)
    finally:
        shutil.rmtree(runs, ignore_errors=True)
    # The SDK's Rust threads can abort the interpreter's finalization (temporalio/sdk-python#300).
    os._exit(0)


if __name__ == "__main__":
    main(int(sys.argv[1]))
