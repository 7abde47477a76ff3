"""The loopback SSE server of `make bench`: pre-rendered streaming bodies at memory speed.

    python bench/sse_server.py [--port 0] [--n 10000,100000,1000000]

It answers, on 127.0.0.1 only:

    POST /n/<N>/v1/messages            an Anthropic Messages stream with N text deltas
    POST /n/<N>/v1/chat/completions    an OpenAI chat.completion.chunk stream with N content chunks
    POST /n/<N>/v1/responses           an OpenAI Responses stream with N output_text.delta events
    POST /n/<N>/v1beta/models/<m>:streamGenerateContent   a Gemini stream (alt=sse), N chunks
    POST /n/<N>/model/<m>/converse-stream   a Bedrock ConverseStream body, N contentBlockDelta
                                       (binary event-stream frames)
    GET  /n/<N>/stats                  {"events": N, "text_bytes": ..., "<provider>_body_bytes": ...
                                       for each provider} (what a client must count)
    POST /turns/<N>/v1/messages        an agent's turn (the latency benchmark, bench/latency.py):
    POST /turns/<N>/v1/chat/completions  a tool call or N text deltas, decided from the request

so a client's base URL is `http://127.0.0.1:PORT/n/N` (`.../n/N/v1` for the OpenAI SDKs). The
model in a Gemini or Bedrock path is not read.

/turns/ reads the conversation in the request body: when its last prompt (the last user
message that is not tool results) says `tool rounds: R`, and fewer than R tool results
follow it, the answer calls the tool `ping` (tool_use / tool_calls, input {"round": k}, one
call a message); otherwise it is N text deltas, like /n/N. So a prompt `tool rounds: 3` makes
a turn of 4 requests (3 tool rounds, then the answer) and any other prompt a turn of one.
Those bodies are rendered for each request (they are small); /turns/ speaks Anthropic and
OpenAI Chat only.

With --tls CERT KEY the server also listens for HTTPS on another port (second line on stdout:
`listening-tls https://localhost:PORT`), the same routes behind TLS.
Each body is rendered once (for the --n values at start-up, any other N on first use) and sent
with one `sendall` of a memoryview: the server does no per-event work while a client reads.
Bodies are complete, valid streams in each provider's current wire format:

    anthropic: message_start, content_block_start, ping, N content_block_delta,
               content_block_stop, message_delta (end_turn, usage), message_stop
    openai:    role chunk, N content chunks, finish chunk (stop), usage chunk, [DONE]
    openai-responses: created, in_progress, output_item.added, content_part.added,
               N output_text.delta, output_text.done, content_part.done, output_item.done,
               completed (usage); the done events carry the whole text, as the API's do
    gemini:    N chunks of one text part, the last with finishReason STOP and usageMetadata
    bedrock:   messageStart, N contentBlockDelta, contentBlockStop, messageStop, metadata,
               each an event-stream message with its CRCs (content type
               application/vnd.amazon.eventstream)

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
import struct
import threading
import zlib
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


RESPONSES_ID = "resp_0BenchPanto000000000000000000000000000000000000"
RESPONSES_ITEM = "msg_0BenchPanto000000000000000000000000000000000000"


def render_responses(n: int) -> bytes:
    """OpenAI Responses: created, in_progress, output_item.added, content_part.added, N
    output_text.delta, output_text.done, content_part.done, output_item.done, completed (the
    done events and the completed response carry the whole text, as the API sends them)."""
    def event(kind: str, seq: int, data: dict) -> bytes:
        return f"event: {kind}\ndata: {_dump(dict({'type': kind, 'sequence_number': seq}, **data))}\n\n".encode()

    response = {
        "id": RESPONSES_ID, "object": "response", "created_at": 1782955818, "status": "in_progress",
        "background": False, "error": None, "incomplete_details": None, "instructions": None,
        "max_output_tokens": None, "max_tool_calls": None, "model": OPENAI_MODEL, "output": [],
        "parallel_tool_calls": True, "previous_response_id": None, "prompt_cache_key": None,
        "reasoning": {"effort": None, "summary": None}, "safety_identifier": None, "service_tier": "default",
        "store": False, "temperature": 1.0, "text": {"format": {"type": "text"}, "verbosity": "medium"},
        "tool_choice": "auto", "tools": [], "top_logprobs": 0, "top_p": 1.0, "truncation": "disabled",
        "usage": None, "user": None, "metadata": {},
    }
    at = {"item_id": RESPONSES_ITEM, "output_index": 0, "content_index": 0}
    item = {"id": RESPONSES_ITEM, "type": "message", "status": "in_progress", "content": [], "role": "assistant"}
    head = event("response.created", 0, {"response": response}) + event("response.in_progress", 1, {"response": response}) \
        + event("response.output_item.added", 2, {"output_index": 0, "item": item}) \
        + event("response.content_part.added", 3, dict(at, part={"type": "output_text", "annotations": [], "logprobs": [], "text": ""}))
    # Each delta has its own sequence_number: a prefix, the number, a suffix per word.
    pre = b'event: response.output_text.delta\ndata: {"type":"response.output_text.delta","sequence_number":'
    posts = [(f',"item_id":"{RESPONSES_ITEM}","output_index":0,"content_index":0,"delta":{_dump(w)},'
              f'"logprobs":[],"obfuscation":{_dump("Q8vLmZ0aRtx"[: max(1, 11 - len(w))])}}}\n\n').encode() for w in WORDS]
    deltas = b"".join(pre + str(4 + i).encode() + posts[i % len(WORDS)] for i in range(n))
    text = _repeat([w.encode() for w in WORDS], n).decode()
    part = {"type": "output_text", "annotations": [], "logprobs": [], "text": text}
    done = dict(item, status="completed", content=[part])
    seq = 4 + n
    tail = event("response.output_text.done", seq, dict(at, text=text, logprobs=[])) \
        + event("response.content_part.done", seq + 1, dict(at, part=part)) \
        + event("response.output_item.done", seq + 2, {"output_index": 0, "item": done}) \
        + event("response.completed", seq + 3, {"response": dict(response, status="completed", output=[done], usage={
            "input_tokens": 17, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": n,
            "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 17 + n})})
    return head + deltas + tail


GEMINI_MODEL = "gemini-2.5-flash"


def render_gemini(n: int) -> bytes:
    """Gemini (streamGenerateContent?alt=sse): N chunks of one text part each, the last with
    finishReason and usageMetadata; `data:` lines ended by CRLF CRLF, as the API ends them."""
    def chunk(w: str, last: bool = False) -> bytes:
        candidate = {"content": {"parts": [{"text": w}], "role": "model"}, "index": 0}
        body: dict = {"candidates": [dict(candidate, finishReason="STOP") if last else candidate]}
        if last:
            body["usageMetadata"] = {"promptTokenCount": 17, "candidatesTokenCount": n, "totalTokenCount": 17 + n,
                                     "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 17}]}
        body.update(modelVersion=GEMINI_MODEL, responseId="BenchPanto0000000000000")
        return f"data: {_dump(body)}\r\n\r\n".encode()

    if n == 0:
        return chunk("", last=True)
    return _repeat([chunk(w) for w in WORDS], n - 1) + chunk(WORDS[(n - 1) % len(WORDS)], last=True)


# Bedrock pads every payload with `p` so that event sizes do not tell the token lengths.
BEDROCK_PADDING = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456"


def eventstream_frame(headers: list, payload: bytes) -> bytes:
    """One application/vnd.amazon.eventstream message: prelude (total length, headers
    length, their CRC32), string headers (type 7), payload, CRC32 of all that."""
    raw = b"".join(bytes([len(name)]) + name.encode() + b"\x07" + struct.pack(">H", len(value.encode())) + value.encode()
                   for name, value in headers)
    prelude = struct.pack(">II", 12 + len(raw) + len(payload) + 4, len(raw))
    prelude += struct.pack(">I", zlib.crc32(prelude))
    message = prelude + raw + payload
    return message + struct.pack(">I", zlib.crc32(message))


def render_bedrock(n: int) -> bytes:
    """Bedrock ConverseStream: messageStart, N contentBlockDelta, contentBlockStop,
    messageStop, metadata, each a framed event."""
    def event(kind: str, payload: dict, pad: int = 0) -> bytes:
        data = dict(payload, p=BEDROCK_PADDING[: max(1, pad)])
        return eventstream_frame([(":event-type", kind), (":content-type", "application/json"),
                                  (":message-type", "event")], _dump(data).encode())

    head = event("messageStart", {"role": "assistant"}, 20)
    deltas = [event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": w}}, 20 - len(w)) for w in WORDS]
    tail = event("contentBlockStop", {"contentBlockIndex": 0}, 20) + event("messageStop", {"stopReason": "end_turn"}, 20) \
        + event("metadata", {"usage": {"inputTokens": 17, "outputTokens": n, "totalTokens": 17 + n},
                             "metrics": {"latencyMs": 412}}, 20)
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


RENDER = {"anthropic": render_anthropic, "openai": render_openai, "openai-responses": render_responses,
          "gemini": render_gemini, "bedrock": render_bedrock}
PROVIDERS = tuple(RENDER)


def with_head(provider: str, n: int, payload: bytes) -> bytes:
    binary = provider == "bedrock"
    head = (
        "HTTP/1.1 200 OK\r\n"
        f"content-type: {'application/vnd.amazon.eventstream' if binary else 'text/event-stream; charset=utf-8'}\r\n"
        "cache-control: no-cache\r\n"
        f"{'x-amzn-requestid' if binary else 'request-id'}: req_bench_{provider}_{n}\r\n"
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
                    payload = RENDER[provider](n)
                    body = with_head(provider, n, payload)
                    self._bodies[key] = body
        return body


ROUTE = re.compile(rb"^(GET|POST) /(n|turns)/(\d+)(/v1/messages|/v1/chat/completions|/v1/responses|/stats"
                   rb"|/v1beta/models/[^/ ?]+:streamGenerateContent|/model/[^/ ?]+/converse-stream)(?:\?[^ ]*)? HTTP/1\.[01]$")
ROUTE_PROVIDER = {b"/v1/messages": "anthropic", b"/v1/chat/completions": "openai", b"/v1/responses": "openai-responses"}
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
                for provider in PROVIDERS:
                    whole = bodies.get(provider, n)
                    stats[f"{provider}_body_bytes"] = len(whole) - whole.index(b"\r\n\r\n") - 4
                conn.sendall(_simple("200 OK", _dump(stats).encode()))
                continue
            provider = ROUTE_PROVIDER.get(route) or ("gemini" if route.startswith(b"/v1beta/") else "bedrock")
            if m.group(2) == b"turns" and provider not in ("anthropic", "openai"):
                conn.sendall(_simple("404 Not Found", b'{"type":"error","error":{"type":"not_found_error","message":"no turns for this provider"}}'))
                continue
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
        for provider in PROVIDERS:
            bodies.get(provider, n)

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
