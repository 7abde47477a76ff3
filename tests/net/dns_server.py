#!/usr/bin/env python3
"""A loopback nameserver for the DNS tests: answers late, or never.

    python tests/net/dns_server.py [--port 0] [--delay-ms 2000] [--silent] [--resolv-conf FILE]

prints `nameserver listening on 127.0.0.1:PORT` first (flushed), then serves until SIGINT or
SIGTERM (exit 0). It answers every A query with 127.0.0.1 and every AAAA query with ::1,
whatever the name, `delay_ms` after the query came (0: at once); with `silent` it never
answers. Other query types get an empty answer. `--resolv-conf FILE` writes a resolv.conf
naming it (`nameserver 127.0.0.1:PORT`, a port being panto's extension of the format): give
that path to panto in PANTO_RESOLV_CONF and every name panto looks up (not in /etc/hosts, not
`localhost`) is asked here.

From Python (the conformance runner, soak tests): `Nameserver(delay_ms=..., silent=...)`
serves from a background thread; `delay_ms` and `silent` may be changed at any time,
`queries` counts the queries received, `log` times them (`Query`: when it came and when it
was answered, on the monotonic clock), `write_resolv_conf(path)` writes the file, `close()`
stops it.
"""
from __future__ import annotations

import argparse
import heapq
import os
import signal
import socket
import struct
import sys
import threading
import time
from dataclasses import dataclass


def answer(query: bytes) -> bytes | None:
    """The response to `query` (its question, then one address record), None for a datagram
    that is not a query."""
    if len(query) < 12 or query[2] & 0x80:
        return None
    i = 12
    while i < len(query) and query[i] != 0:
        i += 1 + query[i]
    if i + 5 > len(query):
        return None
    question = query[12 : i + 5]
    qtype = struct.unpack("!H", query[i + 1 : i + 3])[0]
    data = {1: socket.inet_pton(socket.AF_INET, "127.0.0.1"),
            28: socket.inet_pton(socket.AF_INET6, "::1")}.get(qtype)
    # Response, recursion desired and available, no error; one question.
    head = query[:2] + struct.pack("!HHHHH", 0x8180, 1, 1 if data else 0, 0, 0)
    records = b""
    if data:
        # The name: a pointer to the question's (offset 12).
        records = struct.pack("!HHHIH", 0xC00C, qtype, 1, 60, len(data)) + data
    return head + question + records


@dataclass
class Query:
    """A query received: when (time.monotonic()), and when its answer went out (None: not
    yet, or never)."""
    received: float
    answered: float | None = None


class Nameserver:
    """The nameserver on a free loopback UDP port, served from a background thread."""

    def __init__(self, port: int = 0, delay_ms: int = 0, silent: bool = False) -> None:
        self.delay_ms = delay_ms
        self.silent = silent
        self.queries = 0
        self.log: list[Query] = []  # appended to by the serving thread only
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self._sock.bind(("127.0.0.1", port))
        self.port = self._sock.getsockname()[1]
        self._closed = False
        self._thread = threading.Thread(target=self._serve, name="nameserver", daemon=True)
        self._thread.start()

    def write_resolv_conf(self, path: str | os.PathLike[str]) -> None:
        with open(path, "w", encoding="ascii") as f:
            f.write(f"nameserver 127.0.0.1:{self.port}\n")

    def _serve(self) -> None:
        # (when, seq, reply, to, the query's log entry)
        due: list[tuple[float, int, bytes, tuple[str, int], Query]] = []
        seq = 0
        while not self._closed:
            now = time.monotonic()
            while due and due[0][0] <= now:
                _, _, reply, to, logged = heapq.heappop(due)
                try:
                    self._sock.sendto(reply, to)
                    logged.answered = time.monotonic()
                except OSError:
                    pass
            # Wake for the next answer due (delays of a few ms stay a few ms), or to see close().
            self._sock.settimeout(min(0.01, max(0.0005, due[0][0] - now)) if due else 0.01)
            try:
                query, sender = self._sock.recvfrom(4096)
            except (socket.timeout, OSError):
                continue
            self.queries += 1
            logged = Query(time.monotonic())
            self.log.append(logged)
            reply = answer(query)
            if reply is None or self.silent:
                continue
            seq += 1
            heapq.heappush(due, (logged.received + self.delay_ms / 1000, seq, reply, sender, logged))

    def close(self) -> None:
        self._closed = True
        self._thread.join()
        self._sock.close()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--delay-ms", type=int, default=0)
    ap.add_argument("--silent", action="store_true")
    ap.add_argument("--resolv-conf")
    args = ap.parse_args()
    ns = Nameserver(args.port, args.delay_ms, args.silent)
    if args.resolv_conf:
        ns.write_resolv_conf(args.resolv_conf)
    print(f"nameserver listening on 127.0.0.1:{ns.port}", flush=True)
    done = threading.Event()
    signal.signal(signal.SIGINT, lambda *_: done.set())
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    done.wait()
    ns.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
