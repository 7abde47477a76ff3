#!/usr/bin/env python3
"""A small loopback HTTP proxy for the proxy tests: CONNECT tunnels and plain-HTTP forwarding.

    python tests/net/connect_proxy.py [--port 0] [--auth USER:PASS] [--mode MODE] [--log FILE]

prints `proxy listening on http://127.0.0.1:PORT` first (flushed), then serves until SIGINT or
SIGTERM (exit 0). What it does with a request:

- `CONNECT host:port`: connects to the origin and answers `200 Connection Established`, then
  relays bytes both ways until both sides are done (a TLS client talks to the origin through
  it, end to end).
- An absolute-URI request (`POST http://host:port/path HTTP/1.1`): forwards it to the origin
  with the request line rewritten to origin form (`POST /path HTTP/1.1`), the hop-by-hop
  headers (`Proxy-Authorization`, `Proxy-Connection`, `Connection`, `Keep-Alive`) dropped and
  `Connection: close` added; relays the response head with `Connection: close` in place of the
  origin's connection headers, then the rest of the response as raw bytes (chunked or not)
  until the origin closes. One request per client connection.
- `GET /_proxy/requests` (origin form, addressed to the proxy itself): the JSON list of the
  requests logged so far; `POST /_proxy/clear` empties it.
- Anything else: 400. A target that is not a loopback address: 403 (tests never leave the
  machine). An origin that cannot be reached: 502. Names under `.localhost` (`wrong.localhost`)
  are loopback (RFC 6761), so a client can be sent to the test server under a name its
  certificate does not hold.

`--mode` (or `Proxy.mode`) makes the proxy fail on purpose, after it has read and logged a
proxied request's head (status 0): `close` closes the connection without answering, `silent`
never answers and holds the connection until the client goes away (or the proxy closes). The
default, `forward`, serves requests as above.

With `--auth USER:PASS` every proxied request must carry `Proxy-Authorization: Basic
base64(USER:PASS)`; otherwise the answer is `407` with `Proxy-Authenticate: Basic`.

Every proxied request is logged (in memory, and as one JSON line in `--log FILE`):
`{"method", "target", "headers": {lower-case name: value}, "status"}`, where status is what the
client got: 200 for an established tunnel, 407, 403, 502, or the origin's status (0 when the
origin closed without answering). The entry is in the log as soon as the request's head has
arrived, and its status (and its line in the file) before the client gets the answer, so a
client that has its answer finds its request in the log.

From Python (tests, the conformance runner):

    with Proxy(auth="user:pass") as proxy:
        proxy.url                 # "http://127.0.0.1:PORT"
        proxy.url_with_auth       # "http://user:pass@127.0.0.1:PORT" (the url without auth)
        proxy.url_with_credentials("u:p@ss")  # "http://u:p%40ss@127.0.0.1:PORT"
        proxy.requests()          # the log; "METHOD target" strings: proxy.request_lines()
        proxy.clear()             # empties the log
        proxy.auth = None         # change the requirement at any time
        proxy.mode = "silent"     # or "close", "forward" (the default), at any time

Standard library only; one thread per client connection.
"""
from __future__ import annotations

import argparse
import base64
import ipaddress
import json
import os
import select
import signal
import socket
import socketserver
import sys
import threading
from typing import Any
from urllib.parse import quote, urlsplit

MAX_HEAD = 64 * 1024
CONNECT_TIMEOUT_S = 10.0
IDLE_TIMEOUT_S = 120.0  # a tunnel with no traffic either way for this long is closed
HOP_BY_HOP = {"proxy-authorization", "proxy-connection", "connection", "keep-alive"}


class BadRequest(Exception):
    pass


def _split_head(raw: bytes) -> tuple[str, list[tuple[str, str]]]:
    """The request (or status) line and the header fields of a head (without its blank line)."""
    lines = raw.decode("iso-8859-1").split("\r\n")
    fields = []
    for line in lines[1:]:
        if not line:
            continue
        name, sep, value = line.partition(":")
        if not sep or not name or name != name.strip():
            raise BadRequest(f"bad header line {line!r}")
        fields.append((name, value.strip()))
    return lines[0], fields


def _host_port(authority: str, default_port: int | None) -> tuple[str, int]:
    """("localhost", 443) from "localhost:443", "[::1]:443" or (with a default) "localhost"."""
    if authority.startswith("["):
        host, _, rest = authority[1:].partition("]")
        port_text = rest[1:] if rest.startswith(":") else ""
    else:
        host, _, port_text = authority.rpartition(":") if ":" in authority else (authority, "", "")
    if not port_text:
        if default_port is None:
            raise BadRequest(f"no port in {authority!r}")
        return host, default_port
    if not port_text.isdigit() or not 0 < int(port_text) < 65536:
        raise BadRequest(f"bad port in {authority!r}")
    if not host:
        raise BadRequest(f"no host in {authority!r}")
    return host, int(port_text)


MODES = ("forward", "close", "silent")


def _loopback_only(host: str, port: int) -> list[Any]:
    """The addresses of host, all loopback, or PermissionError. A name under `.localhost` is
    127.0.0.1 (RFC 6761 6.3), whatever the system's resolver says."""
    if host.lower().endswith(".localhost"):
        host = "127.0.0.1"
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    for info in infos:
        if not ipaddress.ip_address(info[4][0].split("%")[0]).is_loopback:
            raise PermissionError(f"{host} is not a loopback address")
    return infos


def _connect(host: str, port: int) -> socket.socket:
    last: OSError = OSError(f"cannot resolve {host}")
    for family, type_, proto, _, addr in _loopback_only(host, port):
        s = socket.socket(family, type_, proto)
        try:
            s.settimeout(CONNECT_TIMEOUT_S)
            s.connect(addr)
            s.settimeout(None)
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            return s
        except OSError as e:
            s.close()
            last = e
    raise last


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = False  # server_close() joins the handler threads
    block_on_close = True
    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], proxy: Proxy) -> None:
        self.proxy = proxy
        self.stopping = threading.Event()
        self._socks: set[socket.socket] = set()
        self._lock = threading.Lock()
        super().__init__(address, _Handler)

    def track(self, s: socket.socket) -> None:
        with self._lock:
            self._socks.add(s)
        if self.stopping.is_set():  # closing raced with a new connection
            self._cut(s)

    def untrack(self, s: socket.socket) -> None:
        with self._lock:
            self._socks.discard(s)

    @staticmethod
    def _cut(s: socket.socket) -> None:
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def drop_connections(self) -> None:
        with self._lock:
            socks = list(self._socks)
        for s in socks:
            self._cut(s)


class _Handler(socketserver.BaseRequestHandler):
    server: _Server
    request: socket.socket

    def handle(self) -> None:
        client = self.request
        self.server.track(client)
        try:
            self._handle(client)
        except (OSError, BadRequest):
            pass
        finally:
            self.server.untrack(client)

    def _read_head(self, s: socket.socket) -> tuple[bytes, bytes]:
        """(head without its blank line, bytes read beyond it); BadRequest when there is none."""
        buf = bytearray()
        while b"\r\n\r\n" not in buf:
            if len(buf) > MAX_HEAD:
                raise BadRequest("head too large")
            data = s.recv(65536)
            if not data:
                raise BadRequest("connection closed before the end of the head")
            buf += data
        head, _, rest = bytes(buf).partition(b"\r\n\r\n")
        return head, rest

    def _answer(self, status: int, reason: str, body: bytes = b"",
                extra: list[tuple[str, str]] = ()) -> None:
        head = [f"HTTP/1.1 {status} {reason}", f"Content-Length: {len(body)}",
                "Connection: close", *(f"{k}: {v}" for k, v in extra)]
        self.request.sendall(("\r\n".join(head) + "\r\n\r\n").encode("iso-8859-1") + body)

    def _handle(self, client: socket.socket) -> None:
        proxy = self.server.proxy
        head, rest = self._read_head(client)
        try:
            request_line, fields = _split_head(head)
            method, target, version = request_line.split(" ")
            if not version.startswith("HTTP/1."):
                raise ValueError(version)
        except (BadRequest, ValueError):
            self._answer(400, "Bad Request", b"proxy: malformed request\n")
            return
        headers = {k.lower(): v for k, v in fields}
        if target.startswith("/"):
            self._control(method, target)
            return
        entry = {"method": method, "target": target, "headers": headers, "status": 0}
        proxy.log(entry)
        if proxy.mode == "close":
            proxy.settle(entry, 0)
            return
        if proxy.mode == "silent":
            proxy.settle(entry, 0)
            self._hold(client)
            return
        try:
            if proxy.auth is not None and not proxy.authorized(headers.get("proxy-authorization")):
                self.server.proxy.settle(entry, 407)
                self._answer(407, "Proxy Authentication Required",
                             b"proxy: authentication required\n",
                             [("Proxy-Authenticate", 'Basic realm="panto-test-proxy"')])
                return
            if method == "CONNECT":
                self._tunnel(client, target, rest, entry)
            elif target.lower().startswith("http://"):
                self._forward(client, method, target, version, fields, rest, entry)
            else:
                self.server.proxy.settle(entry, 400)
                self._answer(400, "Bad Request", b"proxy: expected CONNECT or an http:// URI\n")
        finally:
            proxy.settle(entry, entry["status"])  # (when nothing did before)

    def _hold(self, client: socket.socket) -> None:
        """Reads and drops what the client sends until it goes away or the proxy stops."""
        stopping = self.server.stopping
        while not stopping.is_set():
            readable, _, _ = select.select([client], [], [], 0.2)
            if readable and not client.recv(65536):
                return

    def _origin(self, host: str, port: int, entry: dict[str, Any]) -> socket.socket | None:
        try:
            return _connect(host, port)
        except PermissionError as e:
            self.server.proxy.settle(entry, 403)
            self._answer(403, "Forbidden", f"proxy: {e}\n".encode())
        except OSError as e:
            self.server.proxy.settle(entry, 502)
            self._answer(502, "Bad Gateway", f"proxy: cannot reach {host}:{port}: {e}\n".encode())
        return None

    def _tunnel(self, client: socket.socket, target: str, rest: bytes,
                entry: dict[str, Any]) -> None:
        try:
            host, port = _host_port(target, None)
        except BadRequest as e:
            self.server.proxy.settle(entry, 400)
            self._answer(400, "Bad Request", f"proxy: {e}\n".encode())
            return
        origin = self._origin(host, port, entry)
        if origin is None:
            return
        self.server.track(origin)
        try:
            self.server.proxy.settle(entry, 200)
            client.sendall(b"HTTP/1.1 200 Connection Established\r\n\r\n")
            if rest:
                origin.sendall(rest)
            self._relay(client, origin)
        finally:
            self.server.untrack(origin)
            origin.close()

    def _forward(self, client: socket.socket, method: str, target: str, version: str,
                 fields: list[tuple[str, str]], rest: bytes, entry: dict[str, Any]) -> None:
        url = urlsplit(target)
        try:
            host, port = _host_port(url.netloc.rpartition("@")[2], 80)
        except BadRequest as e:
            self.server.proxy.settle(entry, 400)
            self._answer(400, "Bad Request", f"proxy: {e}\n".encode())
            return
        origin = self._origin(host, port, entry)
        if origin is None:
            return
        self.server.track(origin)
        try:
            path = (url.path or "/") + (f"?{url.query}" if url.query else "")
            lines = [f"{method} {path} {version}"]
            lines += [f"{k}: {v}" for k, v in fields if k.lower() not in HOP_BY_HOP]
            lines.append("Connection: close")
            origin.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("iso-8859-1") + rest)
            self._relay(client, origin, entry)
        finally:
            self.server.untrack(origin)
            origin.close()

    def _relay(self, client: socket.socket, origin: socket.socket,
               entry: dict[str, Any] | None = None) -> None:
        """Copies bytes both ways until both directions have ended (an end is passed on as a
        half close). With `entry` (plain forwarding) the origin's response head is rewritten
        to say `Connection: close`, and its status is logged."""
        peer = {client: origin, origin: client}
        open_ = [client, origin]
        response_head = bytearray() if entry is not None else None
        stopping = self.server.stopping
        while open_ and not stopping.is_set():
            readable, _, _ = select.select(open_, [], [], IDLE_TIMEOUT_S)
            if not readable:
                return
            for s in readable:
                try:
                    data = s.recv(65536)
                except OSError:
                    data = b""
                if not data:
                    open_.remove(s)
                    try:
                        peer[s].shutdown(socket.SHUT_WR)
                    except OSError:
                        pass
                    if s is origin:  # the response is over: nothing more to relay
                        return
                    continue
                if s is origin and response_head is not None:
                    response_head += data
                    if b"\r\n\r\n" not in response_head:
                        if len(response_head) > MAX_HEAD:
                            return
                        continue
                    data = self._rewrite_response_head(bytes(response_head), entry,
                                                       self.server.proxy)
                    response_head = None
                try:
                    peer[s].sendall(data)
                except OSError:
                    return

    @staticmethod
    def _rewrite_response_head(raw: bytes, entry: dict[str, Any], proxy: Proxy) -> bytes:
        head, _, body = raw.partition(b"\r\n\r\n")
        status_line, fields = _split_head(head)
        parts = status_line.split(" ", 2)
        if len(parts) >= 2 and parts[1].isdigit():
            proxy.settle(entry, int(parts[1]))
        lines = [status_line] + [f"{k}: {v}" for k, v in fields
                                 if k.lower() not in ("connection", "keep-alive")]
        lines.append("Connection: close")
        return ("\r\n".join(lines) + "\r\n\r\n").encode("iso-8859-1") + body

    def _control(self, method: str, target: str) -> None:
        proxy = self.server.proxy
        path = urlsplit(target).path
        if (method, path) == ("GET", "/_proxy/requests"):
            body = json.dumps(proxy.requests()).encode()
        elif (method, path) == ("POST", "/_proxy/clear"):
            proxy.clear()
            body = b'{"ok": true}'
        else:
            self._answer(400, "Bad Request", b"proxy: expected CONNECT or an http:// URI\n")
            return
        self._answer(200, "OK", body, [("Content-Type", "application/json")])


class Proxy:
    """The proxy on a free loopback port, served from background threads (see the module
    docstring). `auth` ("user:pass" or None) and `mode` (one of MODES) may be changed at any
    time."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0, auth: str | None = None,
                 log_file: str | os.PathLike[str] | None = None, mode: str = "forward") -> None:
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}")
        self.auth = auth
        self.mode = mode
        self._log: list[dict[str, Any]] = []
        self._log_lock = threading.Lock()
        self._log_file = open(log_file, "a", encoding="utf-8") if log_file is not None else None
        self._server = _Server((host, port), self)
        self.host, self.port = self._server.server_address[:2]
        self.url = f"http://{self.host}:{self.port}"
        self._closed = False
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        kwargs={"poll_interval": 0.05},
                                        name="connect-proxy", daemon=True)
        self._thread.start()

    @property
    def url_with_auth(self) -> str:
        """The url with `auth` in it, user and password percent-encoded."""
        return self.url_with_credentials(self.auth)

    def url_with_credentials(self, credentials: str | None) -> str:
        """The url with "USER:PASS" in it (percent-encoded: "p@ss" is "p%40ss"), or without
        credentials for None."""
        if credentials is None:
            return self.url
        user, _, password = credentials.partition(":")
        return f"http://{quote(user, safe='')}:{quote(password, safe='')}@{self.host}:{self.port}"

    def authorized(self, value: str | None) -> bool:
        if self.auth is None:
            return True
        if value is None:
            return False
        scheme, _, token = value.strip().partition(" ")
        if scheme.lower() != "basic":
            return False
        try:
            return base64.b64decode(token.strip(), validate=True) == self.auth.encode()
        except ValueError:
            return False

    def log(self, entry: dict[str, Any]) -> None:
        """Adds a request to the log (its status comes later, from settle())."""
        with self._log_lock:
            self._log.append(entry)

    def settle(self, entry: dict[str, Any], status: int) -> None:
        """Sets a logged request's status and writes its line in the log file, once."""
        with self._log_lock:
            if entry.get("_settled"):
                return
            entry["status"] = status
            entry["_settled"] = True
            if self._log_file is not None:
                self._log_file.write(json.dumps(self._public(entry)) + "\n")
                self._log_file.flush()

    @staticmethod
    def _public(entry: dict[str, Any]) -> dict[str, Any]:
        return {k: (dict(v) if k == "headers" else v) for k, v in entry.items()
                if not k.startswith("_")}

    def requests(self) -> list[dict[str, Any]]:
        with self._log_lock:
            return [self._public(e) for e in self._log]

    def request_lines(self) -> list[str]:
        """The log as "METHOD target" strings, e.g. ["CONNECT localhost:4433"]."""
        return [f"{e['method']} {e['target']}" for e in self.requests()]

    def clear(self) -> None:
        with self._log_lock:
            self._log.clear()

    def close(self) -> None:
        """Stops the proxy and cuts every open connection and tunnel. Idempotent."""
        if self._closed:
            return
        self._closed = True
        self._server.stopping.set()
        self._server.shutdown()
        self._server.drop_connections()
        self._server.server_close()  # joins the handler threads
        self._thread.join()
        if self._log_file is not None:
            self._log_file.close()

    def __enter__(self) -> Proxy:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=0, help="0 picks a free port")
    ap.add_argument("--auth", metavar="USER:PASS", help="require Basic proxy authentication")
    ap.add_argument("--log", metavar="FILE", help="append every request as a JSON line")
    ap.add_argument("--mode", choices=MODES, default="forward",
                    help="close: drop every proxied request unanswered; silent: never answer")
    args = ap.parse_args(argv)
    stop = threading.Event()
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        proxy = Proxy(args.host, args.port, args.auth, args.log, args.mode)
    except OSError as e:
        print(f"connect_proxy: cannot listen on {args.host}:{args.port}: {e}", file=sys.stderr)
        return 1
    with proxy:
        print(f"proxy listening on {proxy.url}", flush=True)
        while not stop.wait(0.5):
            pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
