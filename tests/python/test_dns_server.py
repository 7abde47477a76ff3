"""Tests of the loopback test nameserver (tests/net/dns_server.py), over real loopback UDP.

Run: .venv/bin/python -m pytest -q tests/python/test_dns_server.py
"""

from __future__ import annotations

import socket
import struct
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "net"))
from dns_server import Nameserver  # noqa: E402


def query(qid: int, name: str, qtype: int) -> bytes:
    labels = b"".join(bytes([len(p)]) + p.encode() for p in name.split("."))
    return struct.pack("!HHHHHH", qid, 0x0100, 1, 0, 0, 0) + labels + b"\0" + struct.pack("!HH", qtype, 1)


def ask(ns: Nameserver, packet: bytes, wait_s: float) -> bytes | None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.settimeout(wait_s)
        s.sendto(packet, ("127.0.0.1", ns.port))
        try:
            return s.recv(512)
        except socket.timeout:
            return None


def test_answers_a_and_aaaa_with_loopback_for_any_name():
    ns = Nameserver()
    try:
        a = ask(ns, query(0x1234, "api.panto.test", 1), 5)
        assert a is not None and a[:2] == b"\x12\x34" and a[2] & 0x80
        assert struct.unpack("!H", a[6:8])[0] == 1 and a.endswith(socket.inet_pton(socket.AF_INET, "127.0.0.1"))
        aaaa = ask(ns, query(7, "Other.Name", 28), 5)
        assert aaaa is not None and aaaa.endswith(socket.inet_pton(socket.AF_INET6, "::1"))
        mx = ask(ns, query(8, "api.panto.test", 15), 5)
        assert mx is not None and struct.unpack("!H", mx[6:8])[0] == 0
        assert ns.queries == 3
    finally:
        ns.close()


def test_late_then_silent():
    ns = Nameserver(delay_ms=300)
    try:
        start = time.monotonic()
        assert ask(ns, query(1, "api.panto.test", 1), 5) is not None
        assert time.monotonic() - start >= 0.3
        ns.silent = True
        assert ask(ns, query(2, "api.panto.test", 1), 0.5) is None
        assert ns.queries == 2
        # The log times them: the first answered 300 ms after it came, the second never.
        first, second = ns.log
        assert first.answered is not None and first.answered - first.received >= 0.3
        assert second.answered is None and second.received >= first.answered
    finally:
        ns.close()


def test_writes_a_resolv_conf_naming_it(tmp_path):
    ns = Nameserver()
    try:
        path = tmp_path / "resolv.conf"
        ns.write_resolv_conf(path)
        assert path.read_text() == f"nameserver 127.0.0.1:{ns.port}\n"
    finally:
        ns.close()
