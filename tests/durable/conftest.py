"""Fixtures of the durable tests: a real Temporal development server on loopback (the CLI
`scripts/setup_temporal.sh` builds into build/temporal-cli/ for `make test-durable`), and worker processes (worker.py)."""

import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Callable, Iterator, List

import pytest

ROOT = Path(__file__).resolve().parents[2]
TEMPORAL = ROOT / "build" / "temporal-cli" / "temporal"
WORKER = Path(__file__).with_name("worker.py")
# What the workers' agents take as their key: never in a workflow's history.
API_KEY = "durable-test-key"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="session")
def temporal_address(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The address of a `temporal server start-dev` started for the session."""
    if not TEMPORAL.exists():
        pytest.fail(f"{TEMPORAL} is missing: `make setup` builds it", pytrace=False)
    port = _free_port()
    log = open(tmp_path_factory.mktemp("temporal") / "server.log", "w")
    server = subprocess.Popen(
        [str(TEMPORAL), "server", "start-dev", "--ip", "127.0.0.1", "--port", str(port), "--headless",
         "--log-level", "warn"],
        stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while True:  # the frontend answers once the server is up
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"the temporal dev server did not start: see {log.name}", pytrace=False)
                time.sleep(0.2)
        yield f"127.0.0.1:{port}"
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.close()


@pytest.fixture
def runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Where the tools count their runs (tools.py), in this process and the workers."""
    monkeypatch.setenv("DURABLE_RUNS", str(tmp_path))
    return tmp_path


@pytest.fixture
def task_queue() -> str:
    return f"durable-{uuid.uuid4().hex[:8]}"


@pytest.fixture
def start_worker(temporal_address: str, task_queue: str, runs: Path) -> Iterator[Callable[[], "subprocess.Popen[str]"]]:
    """Starts a worker process on the test's task queue and waits until it polls; every
    worker still running at the end is stopped."""
    workers: List["subprocess.Popen[str]"] = []

    def start() -> "subprocess.Popen[str]":
        env = dict(os.environ, DURABLE_RUNS=str(runs), ANTHROPIC_API_KEY=API_KEY)
        p = subprocess.Popen([sys.executable, str(WORKER), temporal_address, task_queue], env=env,
                             stdout=subprocess.PIPE, text=True)
        workers.append(p)
        assert p.stdout is not None
        line = p.stdout.readline()
        assert line == "ready\n", f"the worker did not start (exit {p.poll()})"
        return p

    yield start
    for p in workers:
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
