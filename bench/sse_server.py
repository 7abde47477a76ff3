"""The loopback SSE server of `make bench`: pre-rendered streaming bodies at memory speed.

    python bench/sse_server.py [--port 0] [--n 10000,100000,1000000]

It answers, on 127.0.0.1 only:

    POST /n/<N>/v1/messages            an Anthropic Messages stream with N text deltas
    POST /n/<N>/v1/chat/completions    an OpenAI chat.completion.chunk stream with N content chunks
    GET  /n/<N>/stats                  {"events": N, "text_bytes": ..., "anthropic_body_bytes": ...,
                                       "openai_body_bytes": ...} (what a client must count)
    POST /turns/<N>/v1/messages        an agent's turn (the latency benchmark, bench/latency.py):
    POST /turns/<N>/v1/chat/completions  a tool call or N text deltas, decided from the request

so a client's base URL is `http://127.0.0.1:PORT/n/N` (`.../n/N/v1` for the OpenAI SDKs).

/turns/ reads the conversation in the request body: when its last prompt (the last user
message that is not tool results) says `tool rounds: R`, and fewer than R tool results
follow it, the answer calls the tool `ping` (tool_use / tool_calls, input {"round": k}, one
call a message); otherwise it is N text deltas, like /n/N. So a prompt `tool rounds: 3` makes
a turn of 4 requests (3 tool rounds, then the answer) and any other prompt a turn of one.
Those bodies are rendered for each request (they are small).

With --tls CERT KEY the server also listens for HTTPS on another port (second line on stdout:
`listening-tls https://localhost:PORT`), the same routes behind TLS.
Each body is rendered once (for the --n values at start-up, any other N on first use) and sent
with one `sendall` of a memoryview: the server does no per-event work while a client reads.
Bodies are complete, valid streams in each provider's current wire format:

    anthropic: message_start, content_block_start, ping, N content_block_delta,
               content_block_stop, message_delta (end_turn, usage), message_stop
    openai:    role chunk, N content chunks, finish chunk (stop), usage chunk, [DONE]

The response has a Content-Length (no chunked framing) and the connection stays open for
another request. The delta texts cycle through WORDS: ASCII (so characters = bytes in every
language), 1 to 9 bytes, mean 4.2, with JSON escapes (\\n, \\") among them, like real
token streams.

The first line on stdout is `listening http://127.0.0.1:PORT`.
"""

from __future__ import annotations

import argparse
import json
import re
import socket
import ssl
import sys
import threading
from typing import Dict, Tuple

WORDS = [
    " The", " quick", " brown", " fox", " jumps", " over", " the", " lazy", " dog", ".",
    " It", "'s", " a", " test", " of", " stream", "ing", " through", " panto", ",",
    " and", " every", " token", " counts", ":", " \"quoted\"", " text", ";", " numbers",
    " 42", " and", " 3", ".14", "\n", "\n", "-", " item", " one", "\n-", " item", " two",
    " with", " some", " longer", " words", " like", " benchmark", " throughput", ".",
    " Then", " a", " tab", "\t", "here", " and", " a", " back", "slash", " \\", " too", "!",
    " End", " of", " line",
]

ANTHROPIC_MODEL = "claude-sonnet-4-5-20250929"
OPENAI_MODEL = "gpt-4o-mini-2024-07-18"
CHAT_ID = "chatcmpl-BenchPanto0000000000000000000"
MSG_ID = "msg_01BenchPanto00000000000000"


def _dump(obj: object) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def text_bytes(n: int) -> int:
    """The total length of the N delta texts (ASCII: bytes = characters)."""
    period = sum(len(w) for w in WORDS)
    full, rest = divmod(n, len(WORDS))
    return full * period + sum(len(w) for w in WORDS[:rest])


def _repeat(parts: list, n: int) -> bytes:
    """parts[i % len(parts)] for i in range(n), joined, without an n-long Python loop."""
    period = b"".join(parts)
    full, rest = divmod(n, len(parts))
    return period * full + b"".join(parts[:rest])


def render_anthropic(n: int) -> bytes:
    def event(name: str, data: object) -> bytes:
        return f"event: {name}\ndata: {_dump(data)}\n\n".encode()

    head = event("message_start", {
        "type": "message_start",
        "message": {
            "model": ANTHROPIC_MODEL, "id": MSG_ID, "type": "message", "role": "assistant",
            "content": [], "stop_reason": None, "stop_sequence": None,
            "usage": {"input_tokens": 17, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0,
                      "output_tokens": 1, "service_tier": "standard"},
        },
    }) + event("content_block_start", {
        "type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""},
    }) + b'event: ping\ndata: {"type": "ping"}\n\n'
    deltas = [event("content_block_delta", {
        "type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": w},
    }) for w in WORDS]
    tail = event("content_block_stop", {"type": "content_block_stop", "index": 0}) + event("message_delta", {
        "type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None},
        "usage": {"input_tokens": 17, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0,
                  "output_tokens": n},
    }) + event("message_stop", {"type": "message_stop"})
    return head + _repeat(deltas, n) + tail


def render_openai(n: int) -> bytes:
    def chunk(delta: dict, finish: object = None, choices: bool = True, usage: object = None, obf: str = "Xk3") -> bytes:
        body = {
            "id": CHAT_ID, "object": "chat.completion.chunk", "created": 1782955818, "model": OPENAI_MODEL,
            "service_tier": "default", "system_fingerprint": "fp_d0469e1700",
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}] if choices else [],
            "usage": usage, "obfuscation": obf,
        }
        return f"data: {_dump(body)}\n\n".encode()

    head = chunk({"role": "assistant", "content": "", "refusal": None})
    # The real API pads `obfuscation` so that every chunk has about the same length.
    deltas = [chunk({"content": w}, obf="Q8vLmZ0aRt"[: max(1, 10 - len(w))]) for w in WORDS]
    tail = chunk({}, finish="stop") + chunk({}, choices=False, usage={
        "prompt_tokens": 17, "completion_tokens": n, "total_tokens": 17 + n,
        "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0,
                                      "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0},
    }) + b"data: [DONE]\n\n"
    return head + _repeat(deltas, n) + tail


TOOL_NAME = "ping"
ROUNDS = re.compile(r"tool rounds: (\d+)")


def tool_round(provider: str, request: dict) -> int:
    """0 when the answer is text; else the round (1, 2, ...) of the tool call to answer with."""
    rounds = results = 0
    for m in request.get("messages") or []:
        role, content = m.get("role"), m.get("content")
        if provider == "openai" and role == "tool":
            results += 1
        elif role == "user":
            blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
            returned = sum(1 for b in blocks if b.get("type") == "tool_result")
            if returned:
                results += returned
            else:
                text = " ".join(b.get("text", "") for b in blocks if b.get("type") == "text")
                found = ROUNDS.search(text)
                rounds, results = (int(found.group(1)) if found else 0), 0
    return results + 1 if results < rounds else 0


def render_anthropic_tool_call(k: int) -> bytes:
    def event(name: str, data: object) -> bytes:
        return f"event: {name}\ndata: {_dump(data)}\n\n".encode()

    usage = {"input_tokens": 17, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
    return event("message_start", {
        "type": "message_start",
        "message": {"model": ANTHROPIC_MODEL, "id": f"{MSG_ID}{k}", "type": "message", "role": "assistant",
                    "content": [], "stop_reason": None, "stop_sequence": None,
                    "usage": dict(usage, output_tokens=1, service_tier="standard")},
    }) + event("content_block_start", {
        "type": "content_block_start", "index": 0,
        "content_block": {"type": "tool_use", "id": f"toolu_bench_{k}", "name": TOOL_NAME, "input": {}},
    }) + event("content_block_delta", {
        "type": "content_block_delta", "index": 0,
        "delta": {"type": "input_json_delta", "partial_json": _dump({"round": k})},
    }) + event("content_block_stop", {"type": "content_block_stop", "index": 0}) + event("message_delta", {
        "type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": None},
        "usage": dict(usage, output_tokens=12),
    }) + event("message_stop", {"type": "message_stop"})


def render_openai_tool_call(k: int) -> bytes:
    def chunk(delta: dict, finish: object = None, choices: bool = True, usage: object = None) -> bytes:
        return f"data: {_dump({'id': CHAT_ID, 'object': 'chat.completion.chunk', 'created': 1782955818, 'model': OPENAI_MODEL, 'service_tier': 'default', 'system_fingerprint': 'fp_d0469e1700', 'choices': [{'index': 0, 'delta': delta, 'logprobs': None, 'finish_reason': finish}] if choices else [], 'usage': usage})}\n\n".encode()

    call = {"index": 0, "id": f"call_bench_{k}", "type": "function", "function": {"name": TOOL_NAME, "arguments": ""}}
    return chunk({"role": "assistant", "content": None, "tool_calls": [call], "refusal": None}) + chunk(
        {"tool_calls": [{"index": 0, "function": {"arguments": _dump({"round": k})}}]}
    ) + chunk({}, finish="tool_calls") + chunk({}, choices=False, usage={
        "prompt_tokens": 17, "completion_tokens": 12, "total_tokens": 29,
    }) + b"data: [DONE]\n\n"


def with_head(provider: str, n: int, payload: bytes) -> bytes:
    head = (
        "HTTP/1.1 200 OK\r\n"
        "content-type: text/event-stream; charset=utf-8\r\n"
        "cache-control: no-cache\r\n"
        f"request-id: req_bench_{provider}_{n}\r\n"
        "x-request-id: req_bench\r\n"
        "connection: keep-alive\r\n"
    ).encode()
    return head + f"content-length: {len(payload)}\r\n\r\n".encode() + payload


class Bodies:
    """Rendered bodies by (provider, N), each rendered once."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._bodies: Dict[Tuple[str, int], bytes] = {}

    def get(self, provider: str, n: int) -> bytes:
        key = (provider, n)
        body = self._bodies.get(key)
        if body is None:
            with self._lock:
                body = self._bodies.get(key)
                if body is None:
                    payload = render_anthropic(n) if provider == "anthropic" else render_openai(n)
                    body = with_head(provider, n, payload)
                    self._bodies[key] = body
        return body


ROUTE = re.compile(rb"^(GET|POST) /(n|turns)/(\d+)(/v1/messages|/v1/chat/completions|/stats)(?:\?[^ ]*)? HTTP/1\.[01]$")
MAX_N = 20_000_000


def _simple(status: str, body: bytes, content_type: str = "application/json") -> bytes:
    return (f"HTTP/1.1 {status}\r\ncontent-type: {content_type}\r\ncontent-length: {len(body)}\r\n"
            "connection: keep-alive\r\n\r\n").encode() + body


def serve_connection(conn: socket.socket, bodies: Bodies, tls: "ssl.SSLContext | None" = None) -> None:
    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    buf = b""
    try:
        if tls is not None:
            conn = tls.wrap_socket(conn, server_side=True)
        while True:
            while b"\r\n\r\n" not in buf:
                data = conn.recv(65536)
                if not data:
                    return
                buf += data
                if len(buf) > 1 << 20:
                    return
            head, _, buf = buf.partition(b"\r\n\r\n")
            lines = head.split(b"\r\n")
            length = 0
            for line in lines[1:]:
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value.strip())
            while len(buf) < length:
                data = conn.recv(65536)
                if not data:
                    return
                buf += data
            request, buf = buf[:length], buf[length:]
            m = ROUTE.match(lines[0])
            if m is None or int(m.group(3)) > MAX_N:
                conn.sendall(_simple("404 Not Found", b'{"type":"error","error":{"type":"not_found_error","message":"no such route"}}'))
                continue
            n = int(m.group(3))
            route = m.group(4)
            if route == b"/stats":
                stats = {"events": n, "text_bytes": text_bytes(n)}
                for provider in ("anthropic", "openai"):
                    whole = bodies.get(provider, n)
                    stats[f"{provider}_body_bytes"] = len(whole) - whole.index(b"\r\n\r\n") - 4
                conn.sendall(_simple("200 OK", _dump(stats).encode()))
                continue
            provider = "anthropic" if route == b"/v1/messages" else "openai"
            if m.group(2) == b"turns":  # the only route that reads the request body
                try:
                    k = tool_round(provider, json.loads(request))
                except (ValueError, AttributeError, TypeError):
                    conn.sendall(_simple("400 Bad Request", b'{"type":"error","error":{"type":"invalid_request_error","message":"unreadable conversation"}}'))
                    continue
                if k:
                    call = render_anthropic_tool_call(k) if provider == "anthropic" else render_openai_tool_call(k)
                    conn.sendall(with_head(provider, n, call))
                    continue
            conn.sendall(memoryview(bodies.get(provider, n)))
    except (ConnectionError, OSError):
        return
    finally:
        conn.close()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--n", default="", help="comma-separated N values to render at start-up")
    ap.add_argument("--tls", nargs=2, metavar=("CERT", "KEY"), help="also serve HTTPS with this certificate")
    args = ap.parse_args()

    bodies = Bodies()
    for n in (int(x) for x in args.n.split(",") if x.strip()):
        bodies.get("anthropic", n)
        bodies.get("openai", n)

    def listen(port: int) -> socket.socket:
        srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        srv.bind(("127.0.0.1", port))
        srv.listen(1024)
        return srv

    def accept(srv: socket.socket, tls: "ssl.SSLContext | None") -> None:
        while True:
            conn, _ = srv.accept()
            threading.Thread(target=serve_connection, args=(conn, bodies, tls), daemon=True).start()

    srv = listen(args.port)
    print(f"listening http://127.0.0.1:{srv.getsockname()[1]}", flush=True)
    if args.tls:
        tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        tls.load_cert_chain(*args.tls)
        tls_srv = listen(0)
        print(f"listening-tls https://localhost:{tls_srv.getsockname()[1]}", flush=True)
        threading.Thread(target=accept, args=(tls_srv, tls), daemon=True).start()
    try:
        accept(srv, None)
    except KeyboardInterrupt:
        return 0


if __name__ == "__main__":
    sys.exit(main())
