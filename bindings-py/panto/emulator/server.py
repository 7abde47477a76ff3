"""The HTTP server: routing, the control API, and the Emulator object.

One request handler serves every provider endpoint; what differs between providers (wire
format, error shape, request checks) lives in anthropic.py, openai.py and responses.py behind the same
small set of names. The handler speaks HTTP/1.1 with keep-alive, so a client can reuse its
connection between turns, as it would with the real APIs. With `tls=(cert, key)` the same
server speaks HTTPS (TLS 1.2 and 1.3): each connection's handshake runs on its own handler
thread, so a client that never finishes one holds up nobody else.
"""

from __future__ import annotations

import copy
import http
import itertools
import json
import os
import socket
import socketserver
import ssl
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import ModuleType
from typing import Any
from urllib.parse import urlsplit

from . import anthropic, bedrock, count, gemini, models, openai, responses, wire
from .call import Call
from .media import describe, new_media, request_media
from .pieces import split_events
from .prompt_cache import PromptCache
from .scenario import Response, Scenario, ScenarioError, load_file, parse, replay_scenario

PROVIDERS: dict[str, ModuleType] = {anthropic.PATH: anthropic, openai.PATH: openai,
                                     responses.PATH: responses}


def provider_for(path: str) -> ModuleType | None:
    """The provider whose endpoint `path` is: a fixed path, or Gemini's or Bedrock's, which
    name the model."""
    if path in PROVIDERS:
        return PROVIDERS[path]
    return next((p for p in (gemini, bedrock) if p.matches(path)), None)


def _check_request(provider: ModuleType, path: str, headers: dict[str, str], body: Any,
                   require_api_key: bool) -> Any:
    """The provider's checks of a request (Gemini's know the model from the path)."""
    at = getattr(provider, "check_request_at", None)
    if at is not None:
        return at(path, headers, body, require_api_key)
    return provider.check_request(headers, body, require_api_key)
SSE_CONTENT_TYPE = "text/event-stream; charset=utf-8"
JSON_CONTENT_TYPE = "application/json"

# Reason phrases Python does not know.
_REASONS = {529: "Overloaded"}

# How long a client may take to finish the TLS handshake, and to answer our close_notify.
TLS_HANDSHAKE_TIMEOUT_S = 10.0
TLS_CLOSE_TIMEOUT_S = 1.0


def tls_context(cert: str | os.PathLike[str], key: str | os.PathLike[str]) -> ssl.SSLContext:
    """A server-side TLS context (TLS 1.2 and 1.3) for the certificate chain and key (PEM)."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    ctx.load_cert_chain(os.fspath(cert), os.fspath(key))
    return ctx


class _State:
    """The loaded scenario, how far it has been consumed, and the request log."""

    def __init__(self, scenario: Scenario) -> None:
        self._lock = threading.Lock()
        self.load(scenario)

    def load(self, scenario: Scenario) -> None:
        with self._lock:
            self._scenario = scenario
            self._next = 0  # index of the next scripted response
            self._served = 0  # scripted responses served (Call.number)
            self._log: list[dict[str, Any]] = []
            # Connection serials (server-wide) -> their number since the load, from 1.
            self._connections: dict[int, int] = {}
            # Connections accepted, and TLS handshakes completed, since the load.
            self._accepted = 0
            self._handshakes = 0
            unit_tokens = scenario.prompt_cache_unit_tokens
            self.prompt_cache = PromptCache(unit_tokens) if unit_tokens is not None else None

    def count_accepted(self) -> None:
        with self._lock:
            self._accepted += 1

    def count_handshake(self) -> None:
        with self._lock:
            self._handshakes += 1

    def connections(self) -> dict[str, int]:
        with self._lock:
            return {"accepted": self._accepted, "tls_handshakes": self._handshakes}

    @property
    def require_api_key(self) -> bool:
        with self._lock:
            return self._scenario.require_api_key

    def record(self, entry: dict[str, Any], serial: int) -> str:
        """Logs a provider request that came on connection `serial` and returns its request
        id. The entry's `connection` numbers the connections in order of their first request
        since the load."""
        with self._lock:
            entry["connection"] = self._connections.setdefault(serial, len(self._connections) + 1)
            self._log.append(entry)
            return f"req_emu_{len(self._log):04d}"

    def set_body(self, entry: dict[str, Any], body: Any, media: list[dict[str, Any]]) -> None:
        """The body (and its media) of a request logged (as `entry`) before it was read.
        After a load, the entry is no longer in the log, and the new log is left alone."""
        with self._lock:
            entry["body"] = body
            entry["media"] = media

    def take_if_read_late(self) -> tuple[Response | None, int]:
        """The next scripted response when it says to read the request late (it is then
        this request's, whatever its body), else (None, 0) and nothing is taken."""
        with self._lock:
            responses = self._scenario.responses
            if self._next < len(responses) and responses[self._next].read_delay_ms:
                self._next += 1
                self._served += 1
                return responses[self._next - 1], self._served
            return None, 0

    def requests(self) -> list[dict[str, Any]]:
        with self._lock:
            return copy.deepcopy(self._log)

    def take(self) -> tuple[Response | None, int]:
        """The next scripted response and its call number, or (None, 0) when used up."""
        with self._lock:
            responses = self._scenario.responses
            if self._next < len(responses):
                response = responses[self._next]
                self._next += 1
            elif self._scenario.repeat_last and responses:
                response = responses[-1]
            else:
                return None, 0
            self._served += 1
            return response, self._served


class _Server(ThreadingHTTPServer):
    """Keeps track of open connections so that stopping can cut them (and end stalls)."""

    daemon_threads = False  # server_close() joins the handler threads
    block_on_close = True
    # The listen backlog: a load test's clients connect at once, faster than one thread
    # accepts them, and the kernel drops what the backlog cannot hold (Python's default: 5).
    request_queue_size = 1024

    def __init__(self, address: tuple[str, int], state: _State, verbose: bool,
                 tls: ssl.SSLContext | None = None) -> None:
        self.state = state
        self._serials = itertools.count(1)
        self.verbose = verbose
        self.tls = tls
        self.stopping = threading.Event()
        self._conns: set[socket.socket] = set()
        self._conns_lock = threading.Lock()
        super().__init__(address, _Handler)

    def server_bind(self) -> None:
        # HTTPServer.server_bind() looks up the host's FQDN, which can stall without DNS.
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = self.bound_address()

    def next_serial(self) -> int:
        """A number for a new connection, never used before by this server."""
        return next(self._serials)

    def bound_address(self) -> tuple[str, int]:
        """(host, port) of the bound AF_INET socket."""
        host, port = self.server_address[:2]
        return str(host), int(port)

    def process_request(self, request: Any, client_address: Any) -> None:
        # A connection accepted after close() began (stopping is set before the connections
        # are cut) is closed at once: its handler thread would otherwise wait out the TLS
        # handshake timeout, and close() joins it.
        with self._conns_lock:
            late = self.stopping.is_set()
            if not late:
                self._conns.add(request)
        if late:
            self.shutdown_request(request)
            return
        self.state.count_accepted()
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self._conns_lock:
            self._conns.discard(request)
        super().shutdown_request(request)

    def finish_request(self, request: Any, client_address: Any) -> None:
        if self.tls is None:
            super().finish_request(request, client_address)
            return
        # Wrapping detaches `request`: from here on the TLS socket is the connection (and the
        # one drop_connections() cuts); shutdown_request() then only closes the husk.
        try:
            conn = self.tls.wrap_socket(request, server_side=True,
                                        do_handshake_on_connect=False)
        except OSError:
            return
        with self._conns_lock:
            self._conns.discard(request)
            if self.stopping.is_set():  # close() began while this connection was wrapped
                conn.close()
                return
            self._conns.add(conn)
        try:
            conn.settimeout(TLS_HANDSHAKE_TIMEOUT_S)
            try:
                conn.do_handshake()
            except (OSError, ValueError) as e:  # a refused certificate, a plain-HTTP client...
                if self.verbose:
                    print(f"panto-emulator: TLS handshake with {client_address[0]}:"
                          f"{client_address[1]} failed: {e}", file=sys.stderr, flush=True)
                return
            self.state.count_handshake()
            conn.settimeout(None)
            super().finish_request(conn, client_address)
            # A clean TLS end (close_notify), so that a body framed by the connection's end
            # is not taken for a truncation. Faults (reset, close) have already ended the
            # connection their own way; unwrap() then fails, which is fine.
            try:
                conn.settimeout(TLS_CLOSE_TIMEOUT_S)
                conn.unwrap()
            except (OSError, ValueError):
                pass
        finally:
            with self._conns_lock:
                self._conns.discard(conn)
            try:
                conn.close()
            except OSError:
                pass

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that went away mid-request (a canceled turn) is no fault of the emulator's.
        if isinstance(sys.exc_info()[1], (ConnectionError, ssl.SSLError)) and not self.verbose:
            return
        super().handle_error(request, client_address)

    def drop_connections(self) -> None:
        with self._conns_lock:
            conns = list(self._conns)
        for conn in conns:
            try:
                # The plain socket's shutdown, also for a TLS socket: SSLSocket.shutdown()
                # would drop the TLS state under the feet of the handler thread.
                socket.socket.shutdown(conn, socket.SHUT_RDWR)
            except OSError:
                pass  # already closed or reset


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "panto-emulator"
    sys_version = ""
    server: _Server

    def setup(self) -> None:
        super().setup()
        self.serial = self.server.next_serial()
        self.requests_received = 0  # on this connection, over the server's life
        # Every write must leave as its own segment, or Nagle would merge small writes.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def _record(self, entry: dict[str, Any]) -> str:
        """Logs a provider request of this connection (see _State.record), with
        `connection_request`: its number on the connection, from 1 (more: a kept-alive one)."""
        self.requests_received += 1
        entry["connection_request"] = self.requests_received
        return self.server.state.record(entry, self.serial)

    def log_message(self, format: str, *args: Any) -> None:
        if self.server.verbose:
            super().log_message(format, *args)

    def do_POST(self) -> None:
        if provider_for(urlsplit(self.path).path) is not None:
            late, number = self.server.state.take_if_read_late()
            if late is not None:
                self._read_late(late, number)
                return
        try:
            raw = self._read_body()
        except ValueError as e:
            self.close_connection = True
            self._send_json(400, {"error": {"type": "invalid_request_error",
                                            "message": f"emulator: bad request body: {e}"}})
            return
        path = urlsplit(self.path).path
        if path.startswith("/_emulator/"):
            self._control(path, raw)
        else:
            self._provider(path, raw)

    do_GET = do_PUT = do_PATCH = do_DELETE = do_POST

    # ---- control API ---------------------------------------------------------------------

    def _control(self, path: str, raw: bytes) -> None:
        state = self.server.state
        route = (self.command, path)
        if route == ("POST", "/_emulator/scenario"):
            try:
                scenario = parse(_parse_json(raw, strict=True), base_dir=os.getcwd())
            except ScenarioError as e:
                self._send_json(400, {"error": {"type": "scenario_error", "message": str(e)}})
                return
            state.load(scenario)
            self._send_json(200, {"ok": True, "responses": len(scenario.responses)})
        elif route == ("GET", "/_emulator/requests"):
            self._send_json(200, state.requests())
        elif route == ("GET", "/_emulator/connections"):
            self._send_json(200, state.connections())
        elif route == ("POST", "/_emulator/reset"):
            state.load(Scenario())
            self._send_json(200, {"ok": True})
        else:
            self._send_json(404, {"error": {"type": "not_found_error",
                                            "message": f"emulator: no control route "
                                                       f"{self.command} {path}"}})

    # ---- provider endpoints --------------------------------------------------------------

    def _provider(self, path: str, raw: bytes) -> None:
        state = self.server.state
        body = _parse_json(raw, strict=False)
        headers = {name.lower(): value for name, value in self.headers.items()}
        request_id = self._record({
            "method": self.command, "path": self.path, "headers": headers,
            "body": body if body is not _NOT_JSON else raw.decode("utf-8", "replace"),
            "media": request_media(path, body)})

        counting = count.endpoint_for(path)
        if counting is not None:  # (answered outside the scenario: count.py)
            self._count(counting, headers, body, request_id)
            return
        listing = models.endpoint_for(path, headers)
        if listing is not None:  # (answered outside the scenario: models.py)
            self._list_models(listing, headers, request_id)
            return
        provider = provider_for(path)
        if provider is None:
            self._send_error(anthropic, request_id, 404, "not_found_error",
                             f"emulator: no such endpoint {self.command} {path}")
            return
        if self.command != "POST":
            self._send_error(provider, request_id, 405, provider.error_type_for(405),
                             f"emulator: {path} only accepts POST")
            return
        rejection = _check_request(provider, path, headers, body, state.require_api_key)
        if rejection is not None:
            self._send_error(provider, request_id, rejection.status, rejection.type,
                             rejection.message, rejection.code, rejection.param)
            return
        response, number = state.take()
        if response is None:
            self._send_error(provider, request_id, 500, provider.error_type_for(500),
                             "emulator: no scripted response left")
            return
        self._serve(provider, response, Call(number, body, request_id))

    def _count(self, e: count.Endpoint, headers: dict[str, str], body: Any,
               request_id: str) -> None:
        if self.command != "POST":
            self._send_error(e.provider, request_id, 405, e.provider.error_type_for(405),
                             f"emulator: {self.path} only accepts POST")
            return
        rejection = count.check(e, headers, body, self.server.state.require_api_key)
        if rejection is not None:
            self._send_error(e.provider, request_id, rejection.status, rejection.type,
                             rejection.message, rejection.code, rejection.param)
            return
        data = json.dumps(count.answer(e, body)).encode()
        self._send_head(200, {"content-type": JSON_CONTENT_TYPE,
                              e.provider.REQUEST_ID_HEADER: request_id,
                              "content-length": str(len(data))})
        self.wfile.write(data)

    def _list_models(self, e: models.Endpoint, headers: dict[str, str], request_id: str) -> None:
        rejection = models.check(e, self.command, headers, self.server.state.require_api_key)
        if rejection is not None:
            self._send_error(e.provider, request_id, rejection.status, rejection.type,
                             rejection.message, rejection.code, rejection.param)
            return
        status, page = models.answer(e, urlsplit(self.path).query)
        data = json.dumps(page).encode()
        self._send_head(status, {"content-type": JSON_CONTENT_TYPE,
                                 e.provider.REQUEST_ID_HEADER: request_id,
                                 "content-length": str(len(data))})
        self.wfile.write(data)

    def _read_late(self, r: Response, number: int) -> None:
        """A request whose response says to wait before reading its body: logged at once
        (body null until read), then read after the wait, then answered. A client gone
        meanwhile (a canceled write) ends the connection."""
        state = self.server.state
        headers = {name.lower(): value for name, value in self.headers.items()}
        entry: dict[str, Any] = {"method": self.command, "path": self.path, "headers": headers,
                                 "body": None, "media": []}
        request_id = self._record(entry)
        if self.server.stopping.wait(r.read_delay_ms / 1000):
            self.close_connection = True
            return
        try:
            raw = self._read_body()
        except (OSError, ValueError):
            self.close_connection = True
            return
        body = _parse_json(raw, strict=False)
        path = urlsplit(self.path).path
        state.set_body(entry, body if body is not _NOT_JSON else raw.decode("utf-8", "replace"),
                       request_media(path, body))
        provider = provider_for(path)
        assert provider is not None
        rejection = _check_request(provider, path, headers, body, state.require_api_key)
        if rejection is not None:  # the real API's checks still apply (a body that is not JSON)
            self._send_error(provider, request_id, rejection.status, rejection.type,
                             rejection.message, rejection.code, rejection.param)
            return
        self._serve(provider, r, Call(number, body, request_id))

    def _serve(self, provider: ModuleType, r: Response, call: Call) -> None:
        stopping = self.server.stopping
        if r.delay_ms and stopping.wait(r.delay_ms / 1000):
            self.close_connection = True
            return
        content_type = getattr(provider, "CONTENT_TYPE", SSE_CONTENT_TYPE)
        error_head: dict[str, str] = {}
        if r.message is not None:
            message = r.message
            if r.describe_media:
                text = describe(new_media(urlsplit(self.path).path, call.request))
                block = {"type": "text", "text": text, "deltas": [text]}  # one delta: easy to expect
                message = dict(message, content=[block] + message["content"])
            cache = self.server.state.prompt_cache
            if cache is not None:  # the usage as the cache makes it (prompt_cache.py)
                derived = cache.usage(provider.NAME, call.request)
                message = dict(message, usage=dict(message["usage"], **derived))
            pieces = provider.render(message, call)
            if r.stream_error is not None:
                e = r.stream_error
                pieces = pieces[: e["after_events"]] + provider.stream_error(
                    e["type"], e["message"], e["code"])
            else:
                pieces += provider.END
        elif r.error is not None:
            content_type = JSON_CONTENT_TYPE
            error_head = _error_headers(provider, r.error["type"])
            pieces = [provider.error_body(r.error["type"], r.error["message"],
                                          call.request_id, r.error["code"])]
        else:
            assert r.body is not None
            pieces = split_events(r.body)

        writes = wire.plan_writes(pieces, r.chunk_size)
        head = {"content-type": content_type, provider.REQUEST_ID_HEADER: call.request_id,
                "cache-control": "no-cache", **error_head}
        if r.framing == "chunked":
            head["transfer-encoding"] = "chunked"
        elif r.framing == "content-length":
            head["content-length"] = str(sum(len(w) for w in writes))
        else:
            head["connection"] = "close"
        for name, value in r.headers.items():  # the script's headers win, case-insensitively
            head.pop(name.lower(), None)
            head[name] = value
        if r.framing == "close" or r.fault is not None or r.idle_close:
            self.close_connection = True

        self._send_head(r.status, head)
        try:
            wire.send_body(self.connection, writes, r.framing, r.chunk_delay_ms / 1000,
                           r.fault, stopping)
        except wire.ClientGone:
            self.close_connection = True

    # ---- plain answers -------------------------------------------------------------------

    def _send_error(self, provider: ModuleType, request_id: str, status: int, type_: str,
                    message: str, code: str | None = None, param: str | None = None) -> None:
        body = provider.error_body(type_, message, request_id, code, param)
        self._send_head(status, {"content-type": JSON_CONTENT_TYPE,
                                 provider.REQUEST_ID_HEADER: request_id,
                                 "content-length": str(len(body)),
                                 **_error_headers(provider, type_)})
        self.wfile.write(body)

    def _send_json(self, status: int, data: Any) -> None:
        body = json.dumps(data).encode()
        self._send_head(status, {"content-type": JSON_CONTENT_TYPE,
                                 "content-length": str(len(body))})
        self.wfile.write(body)

    def _send_head(self, status: int, headers: dict[str, str]) -> None:
        try:
            reason = http.HTTPStatus(status).phrase
        except ValueError:
            reason = _REASONS.get(status, "Unknown")
        self.send_response_only(status, reason)
        self.send_header("date", self.date_time_string())
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()

    def _read_body(self) -> bytes:
        if "chunked" in self.headers.get("transfer-encoding", "").lower():
            return self._read_chunked()
        length = self.headers.get("content-length")
        if length is None:
            return b""
        if not length.strip().isdigit():
            raise ValueError(f"bad content-length {length!r}")
        body = self.rfile.read(int(length))
        if len(body) < int(length):
            raise ValueError("the body ended before its content-length")
        return body

    def _read_chunked(self) -> bytes:
        body = bytearray()
        while True:
            size_line = self.rfile.readline(1024).split(b";")[0].strip()
            try:
                size = int(size_line, 16)
            except ValueError:
                raise ValueError(f"bad chunk size {size_line!r}") from None
            if size == 0:
                while self.rfile.readline(1024).strip():  # trailers
                    pass
                return bytes(body)
            body += self.rfile.read(size)
            self.rfile.readline(1024)  # the CRLF after the chunk


_NOT_JSON = object()


def _error_headers(provider: ModuleType, type_: str) -> dict[str, str]:
    """The headers a provider's error answer carries beside its body (Bedrock names the
    exception in one)."""
    headers = getattr(provider, "error_headers", None)
    return headers(type_) if headers is not None else {}


def _parse_json(raw: bytes, strict: bool) -> Any:
    """The parsed body; when it is not JSON, ScenarioError if strict, else _NOT_JSON."""
    try:
        return json.loads(raw)
    except ValueError as e:  # JSONDecodeError and UnicodeDecodeError
        if strict:
            raise ScenarioError(f"scenario: not JSON: {e}") from e
        return _NOT_JSON


class Emulator:
    """A provider emulator on a free loopback port, served from a background thread.

        with Emulator(scenario={"responses": [...]}) as emu:
            ...point a client at emu.url...
            assert emu.requests()[0]["path"] == "/v1/messages"

    `scenario` is a scenario dict (relative replay paths resolve against `base_dir`, default
    the current directory) or the path of a scenario file; `replay` is the path of a raw SSE
    body served to every request instead. Raises ScenarioError for a bad scenario.

    `tls=(cert, key)` (PEM files: the certificate chain, the private key) serves HTTPS
    instead; `url` is then `https://localhost:PORT`, since the test certificates name
    `localhost` (and not every client checks IP addresses against a certificate).
    """

    def __init__(self, scenario: Any = None, replay: str | os.PathLike[str] | None = None,
                 chunk_size: int = 0, framing: str = "chunked", host: str = "127.0.0.1",
                 port: int = 0, base_dir: str | os.PathLike[str] | None = None,
                 verbose: bool = False,
                 tls: tuple[str | os.PathLike[str], str | os.PathLike[str]] | None = None) -> None:
        if scenario is not None and replay is not None:
            raise ValueError("give a scenario or a replay file, not both")
        if replay is not None:
            initial = replay_scenario(replay, chunk_size=chunk_size, framing=framing)
        else:
            initial = _as_scenario(scenario, base_dir)
        context = tls_context(*tls) if tls is not None else None
        self._server = _Server((host, port), _State(initial), verbose, context)
        self.host: str
        self.port: int
        self.host, self.port = self._server.bound_address()
        self.tls: bool = context is not None
        #: The base URL to give an agent (base_url=emulator.url).
        self.url: str
        if self.tls:
            name = "localhost" if host in ("127.0.0.1", "localhost") else host
            self.url = f"https://{name}:{self.port}"
        else:
            self.url = f"http://{self.host}:{self.port}"
        self._closed = False
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        kwargs={"poll_interval": 0.05},
                                        name="panto-emulator", daemon=True)
        self._thread.start()

    def load(self, scenario: Any, base_dir: str | os.PathLike[str] | None = None) -> None:
        """Replaces the scenario and clears the request log."""
        self._server.state.load(_as_scenario(scenario, base_dir))

    def reset(self) -> None:
        """Empties the scenario and the request log."""
        self._server.state.load(Scenario())

    def requests(self) -> list[dict[str, Any]]:
        """Every provider request since the last load: {method, path, headers, body}."""
        return self._server.state.requests()

    def connections(self) -> dict[str, int]:
        """{"accepted": N, "tls_handshakes": M}: the connections accepted, and the TLS
        handshakes completed, since the last load."""
        return self._server.state.connections()

    def close(self) -> None:
        """Stops the server, cutting open connections (stalled ones included). Idempotent."""
        if self._closed:
            return
        self._closed = True
        self._server.stopping.set()
        self._server.shutdown()
        self._server.drop_connections()
        self._server.server_close()  # joins the handler threads
        self._thread.join()

    def __enter__(self) -> Emulator:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _as_scenario(scenario: Any, base_dir: str | os.PathLike[str] | None) -> Scenario:
    if scenario is None:
        return Scenario()
    if isinstance(scenario, Scenario):
        return scenario
    if isinstance(scenario, (str, os.PathLike)):
        return load_file(scenario)
    return parse(scenario, base_dir)
