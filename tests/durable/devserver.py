"""A `temporal server start-dev` on loopback (the CLI `scripts/setup_temporal.sh` builds into
build/temporal-cli/): the durable tests' server (conftest.py) and `make bench`'s durable part
(bench/durable.py)."""

import socket
import subprocess
import time
from pathlib import Path
from typing import IO, Any, Sequence, Tuple

ROOT = Path(__file__).resolve().parents[2]
TEMPORAL = ROOT / "build" / "temporal-cli" / "temporal"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start(log: "IO[Any] | int", flags: Sequence[str] = ()) -> "Tuple[subprocess.Popen[bytes], str]":
    """The server (with `flags`), its output to `log`, and its address once its frontend
    answers; raises RuntimeError when it does not start within a minute (the server stopped)."""
    port = free_port()
    server = subprocess.Popen(
        [str(TEMPORAL), "server", "start-dev", "--ip", "127.0.0.1", "--port", str(port), "--headless",
         "--log-level", "warn", *flags],
        stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 60
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return server, f"127.0.0.1:{port}"
        except OSError:
            if server.poll() is not None or time.monotonic() > deadline:
                stop(server)
                raise RuntimeError("the temporal dev server did not start")
            time.sleep(0.2)


def stop(server: "subprocess.Popen[bytes]") -> None:
    server.terminate()
    try:
        server.wait(timeout=20)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait()
