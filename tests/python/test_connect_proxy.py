"""Tests of the loopback test proxy (tests/net/connect_proxy.py), against the emulator over
real loopback HTTP and HTTPS.

Run: PYTHONPATH=bindings-py .venv/bin/python -m pytest -q tests/python/test_connect_proxy.py
"""

from __future__ import annotations

import base64
import http.client
import json
import os
import signal
import socket
import ssl
import subprocess
import sys
import time
from pathlib import Path

import pytest

from panto.emulator import Emulator

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "net"))
from connect_proxy import Proxy  # noqa: E402

SSE = ROOT / "tests" / "fixtures" / "recorded" / "anthropic" / "text_basic.sse"
PATH = "/v1/messages"
HEADERS = {"x-api-key": "test-key", "anthropic-version": "2023-06-01",
           "content-type": "application/json"}
BODY = json.dumps({"model": "claude-test", "max_tokens": 100, "stream": True,
                   "messages": [{"role": "user", "content": "Hi"}]})


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("tls")
    subprocess.run([str(ROOT / "tests" / "net" / "make_certs.sh"), str(folder)], check=True,
                   timeout=60)
    return folder


@pytest.fixture
def plain():
    with Emulator(replay=SSE) as e:
        yield e


@pytest.fixture
def tls(certs):
    with Emulator(replay=SSE, tls=(certs / "server.pem", certs / "server.key")) as e:
        yield e


@pytest.fixture
def proxy():
    with Proxy() as p:
        yield p


def tunnel(proxy: Proxy, port: int, ca: Path, headers: dict[str, str] | None = None,
           timeout: float = 5) -> http.client.HTTPSConnection:
    """An HTTPS connection to localhost:port through the proxy's CONNECT tunnel."""
    ctx = ssl.create_default_context(cafile=str(ca))
    conn = http.client.HTTPSConnection(proxy.host, proxy.port, timeout=timeout, context=ctx)
    conn.set_tunnel("localhost", port, headers=headers)
    return conn


def basic(credentials: str) -> str:
    return "Basic " + base64.b64encode(credentials.encode()).decode()


def test_connect_tunnels_tls_end_to_end(proxy, tls, certs):
    conn = tunnel(proxy, tls.port, certs / "ca.pem")
    try:
        for _ in range(2):  # keep-alive inside the tunnel
            conn.request("POST", PATH, BODY, HEADERS)
            resp = conn.getresponse()
            assert resp.status == 200
            assert resp.read() == SSE.read_bytes()
    finally:
        conn.close()
    assert proxy.request_lines() == [f"CONNECT localhost:{tls.port}"]
    assert proxy.requests()[0]["status"] == 200
    assert [r["path"] for r in tls.requests()] == [PATH, PATH]


def test_connect_with_the_wrong_ca_fails_at_the_client(proxy, tls, certs):
    conn = tunnel(proxy, tls.port, certs / "other-ca.pem")
    with pytest.raises(ssl.SSLCertVerificationError):
        conn.request("POST", PATH, BODY, HEADERS)
    conn.close()
    assert proxy.request_lines() == [f"CONNECT localhost:{tls.port}"]
    assert tls.requests() == []


def test_absolute_uri_is_forwarded_in_origin_form(proxy, plain):
    conn = http.client.HTTPConnection(proxy.host, proxy.port, timeout=5)
    try:
        target = f"http://localhost:{plain.port}{PATH}?beta=true"
        conn.request("POST", target, BODY, dict(HEADERS, **{"Proxy-Connection": "keep-alive"}))
        resp = conn.getresponse()
        assert resp.status == 200
        assert resp.getheader("connection") == "close"
        assert resp.getheader("transfer-encoding") == "chunked"
        assert resp.read() == SSE.read_bytes()
    finally:
        conn.close()
    assert proxy.request_lines() == [f"POST {target}"]
    assert proxy.requests()[0]["status"] == 200
    [got] = plain.requests()
    assert got["path"] == f"{PATH}?beta=true"
    assert got["body"] == json.loads(BODY)
    assert got["headers"]["x-api-key"] == "test-key"
    assert got["headers"]["connection"] == "close"
    assert "proxy-connection" not in got["headers"]


def test_origin_errors_are_relayed(proxy, plain):
    plain.load({"responses": [{"error": {"type": "overloaded_error", "message": "Overloaded"}}]})
    conn = http.client.HTTPConnection(proxy.host, proxy.port, timeout=5)
    conn.request("POST", f"http://127.0.0.1:{plain.port}{PATH}", BODY, HEADERS)
    resp = conn.getresponse()
    assert resp.status == 529
    assert json.loads(resp.read())["error"]["type"] == "overloaded_error"
    conn.close()
    assert proxy.requests()[0]["status"] == 529


def test_basic_auth(plain, tls, certs):
    with Proxy(auth="user:pa ss") as proxy:
        assert proxy.url_with_auth == f"http://user:pa%20ss@127.0.0.1:{proxy.port}"
        assert proxy.url_with_credentials("u@x:p:w%") == f"http://u%40x:p%3Aw%25@127.0.0.1:{proxy.port}"
        assert proxy.url_with_credentials(None) == proxy.url
        # Missing, then wrong: 407, and nothing reaches the origin.
        conn = http.client.HTTPConnection(proxy.host, proxy.port, timeout=5)
        conn.request("POST", f"http://127.0.0.1:{plain.port}{PATH}", BODY, HEADERS)
        resp = conn.getresponse()
        assert resp.status == 407
        assert resp.getheader("proxy-authenticate").startswith("Basic ")
        resp.read()
        conn.close()
        conn = tunnel(proxy, tls.port, certs / "ca.pem",
                      headers={"Proxy-Authorization": basic("user:wrong")})
        with pytest.raises(OSError, match="407"):
            conn.request("POST", PATH, BODY, HEADERS)
        conn.close()
        assert plain.requests() == [] and tls.requests() == []
        # Right: both kinds go through, and the credentials are not passed on.
        conn = tunnel(proxy, tls.port, certs / "ca.pem",
                      headers={"Proxy-Authorization": basic("user:pa ss")})
        conn.request("POST", PATH, BODY, HEADERS)
        assert conn.getresponse().read() == SSE.read_bytes()
        conn.close()
        conn = http.client.HTTPConnection(proxy.host, proxy.port, timeout=5)
        conn.request("POST", f"http://127.0.0.1:{plain.port}{PATH}", BODY,
                     dict(HEADERS, **{"Proxy-Authorization": basic("user:pa ss")}))
        assert conn.getresponse().read() == SSE.read_bytes()
        conn.close()
        assert [r["status"] for r in proxy.requests()] == [407, 407, 200, 200]
        assert proxy.requests()[2]["headers"]["proxy-authorization"] == basic("user:pa ss")
        assert "proxy-authorization" not in plain.requests()[0]["headers"]


def test_refusals(proxy):
    def ask(request: bytes) -> bytes:
        with socket.create_connection((proxy.host, proxy.port), timeout=5) as s:
            s.sendall(request)
            data = b""
            while chunk := s.recv(65536):
                data += chunk
        return data

    with socket.socket() as closed:  # a loopback port nobody listens on
        closed.bind(("127.0.0.1", 0))
        dead = closed.getsockname()[1]
    assert ask(f"CONNECT 127.0.0.1:{dead} HTTP/1.1\r\n\r\n".encode()).startswith(
        b"HTTP/1.1 502 ")
    assert ask(b"CONNECT 192.0.2.1:443 HTTP/1.1\r\n\r\n").startswith(b"HTTP/1.1 403 ")
    assert ask(b"GET https://localhost/ HTTP/1.1\r\n\r\n").startswith(b"HTTP/1.1 400 ")
    assert ask(b"nonsense\r\n\r\n").startswith(b"HTTP/1.1 400 ")
    assert [r["status"] for r in proxy.requests()] == [502, 403, 400]


def test_localhost_subdomains_are_loopback(proxy, tls, certs):
    # A name the server's certificate does not hold, reaching the server all the same.
    ctx = ssl.create_default_context(cafile=str(certs / "ca.pem"))
    conn = http.client.HTTPSConnection(proxy.host, proxy.port, timeout=5, context=ctx)
    conn.set_tunnel("wrong.localhost", tls.port)
    with pytest.raises(ssl.SSLCertVerificationError, match="wrong.localhost"):
        conn.request("POST", PATH, BODY, HEADERS)
    conn.close()
    assert proxy.request_lines() == [f"CONNECT wrong.localhost:{tls.port}"]
    assert proxy.requests()[0]["status"] == 200


def test_modes_close_and_silent(proxy, tls):
    request = f"CONNECT localhost:{tls.port} HTTP/1.1\r\n\r\n".encode()
    proxy.mode = "close"
    with socket.create_connection((proxy.host, proxy.port), timeout=5) as s:
        s.sendall(request)
        assert s.recv(65536) == b""  # closed, no answer
    proxy.mode = "silent"
    with socket.create_connection((proxy.host, proxy.port), timeout=5) as s:
        s.sendall(request)
        s.settimeout(0.5)
        with pytest.raises(TimeoutError):
            s.recv(65536)  # no answer, and the connection stays open
    assert proxy.request_lines() == [f"CONNECT localhost:{tls.port}"] * 2
    assert [r["status"] for r in proxy.requests()] == [0, 0]
    assert tls.requests() == []
    with pytest.raises(ValueError):
        Proxy(mode="sometimes")


def test_close_cuts_open_tunnels_promptly(tls, certs):
    tls.load({"responses": [{"message": {"content": [{"type": "text", "text": "x " * 100}]},
                             "fault": {"after_bytes": 10, "kind": "stall"}}]})
    proxy = Proxy()
    conn = tunnel(proxy, tls.port, certs / "ca.pem")
    conn.request("POST", PATH, BODY, HEADERS)
    resp = conn.getresponse()
    started = time.monotonic()
    proxy.close()
    assert time.monotonic() - started < 2
    with pytest.raises((http.client.IncompleteRead, ssl.SSLError, ConnectionError)):
        resp.read()
    conn.close()


def test_cli_log_file_and_control_api(tmp_path, plain):
    log = tmp_path / "proxy.jsonl"
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "tests" / "net" / "connect_proxy.py"), "--log", str(log)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        assert line.startswith("proxy listening on http://127.0.0.1:")
        port = int(line.rsplit(":", 1)[1])
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
        conn.request("POST", f"http://127.0.0.1:{plain.port}{PATH}", BODY, HEADERS)
        assert conn.getresponse().read() == SSE.read_bytes()
        conn.close()
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
        conn.request("GET", "/_proxy/requests")
        [entry] = json.loads(conn.getresponse().read())
        conn.close()
        assert (entry["method"], entry["target"], entry["status"]) == (
            "POST", f"http://127.0.0.1:{plain.port}{PATH}", 200)
        assert [json.loads(l) for l in log.read_text().splitlines()] == [entry]
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=5) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()
        proc.stderr.close()
