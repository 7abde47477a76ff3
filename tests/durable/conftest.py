"""Fixtures of the durable tests: a real Temporal development server on loopback (the CLI
`scripts/setup_temporal.sh` builds into build/temporal-cli/ for `make test-durable`), and worker processes (worker.py)."""

import os
import signal
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Callable, Iterator, List

import pytest

sys.path.insert(0, str(Path(__file__).parent))
import devserver  # noqa: E402

WORKER = Path(__file__).with_name("worker.py")
# What the workers' agents take as their key: never in a workflow's history.
API_KEY = "durable-test-key"


@pytest.fixture(scope="session")
def temporal_address(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The address of a `temporal server start-dev` started for the session."""
    if not devserver.TEMPORAL.exists():
        pytest.fail(f"{devserver.TEMPORAL} is missing: `make setup` builds it", pytrace=False)
    with open(tmp_path_factory.mktemp("temporal") / "server.log", "w") as log:
        try:
            server, address = devserver.start(log)
        except RuntimeError as e:
            pytest.fail(f"{e}: see {log.name}", pytrace=False)
        try:
            yield address
        finally:
            devserver.stop(server)


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
