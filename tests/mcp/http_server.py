#!/usr/bin/env python3
"""A small MCP server over Streamable HTTP, standard library only, for panto's MCP client
tests: it checks what the client must send, and misbehaves on request.

It listens on 127.0.0.1 on a port of its own choosing and writes "PORT\\n" on stdout once it
does; later lines on stdout say what it saw ("DELETE <session>" when a session is ended).
Every request after initialize must carry the session's Mcp-Session-Id and the negotiated
MCP-Protocol-Version, and every POST Accept both application/json and text/event-stream
(else 400). initialize is answered with JSON and a session id s1, s2, ... (one per
handshake); notifications with 202; tools/list and tools/call with an SSE stream whose framing
has what a parser must take: a priming event (empty data), a comment, an event of another
type, a message split over data lines, CRLF line ends. Tools: `inits` says how many handshakes the server saw.

  --on-list MODE  what tools/list does: answer (default), 500 (an HTTP 500 with a body),
                  garbage (a 200 JSON body that is not JSON), hang (never answer), expire
                  (answer 404 to the first session's request: the server forgot it)
  --on-call MODE  what tools/call does: answer (default); break (an SSE answer whose events
                  have ids: a progress notification, id c1, then the connection closes before
                  the reply; a GET with Last-Event-ID c1 is said on stdout, "GET Last-Event-ID
                  c1", and answered with an SSE stream of the reply; a GET without it: 405);
                  batch (a JSON body that is a JSON-RPC batch: the progress notification and
                  the reply in one array); sse-batch (the same batch as one SSE message)
  --get-stream MODE  the GET stream (messages outside any request): none (default: 405), 405 (the
                  same, "GET 405" said), list-changed (an SSE stream kept open; a tools/call adds
                  a tool `extra` and sends notifications/tools/list_changed on it before its
                  answer), drop (as list-changed, but the first GET stream says `retry: 50` and
                  an event g1, then closes: the next GET must carry Last-Event-ID g1, said on
                  stdout as "GET Last-Event-ID g1")
  --retry MS      with --on-call break: the broken answer says `retry: MS` first, "broke" is said
                  on stdout once it is closed, and a GET that resumes it sooner than
                  min(MS, 5000) ms after is refused (404, "GET too early" said)
"""
import argparse
import json
import socket
import sys
import queue
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

TOOLS = [{"name": "inits", "description": "How many handshakes the server saw.", "inputSchema": {"type": "object"}}]

state = {"sessions": 0, "version": None, "expired": False, "gets": 0}
outside = queue.Queue()  # messages for the GET stream
lock = threading.Lock()
args = None


def say(line):
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def answer(self, status, body=b"", content_type="application/json", headers=()):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def current(self):
        return f"s{state['sessions']}"

    def do_GET(self):
        last = self.headers.get("Last-Event-ID")
        if args.get_stream == "405":
            say("GET 405")
        if args.get_stream in ("list-changed", "drop") and (last is None or last.startswith("g")):
            return self.get_stream(last)
        if last is None or args.on_call != "break":
            return self.answer(405, b"no GET stream here", "text/plain")
        say(f"GET Last-Event-ID {last}")
        if self.headers.get("Mcp-Session-Id") != self.current():
            return self.answer(400, b"wrong session", "text/plain")
        if args.retry is not None:
            waited = time.monotonic() - state["broke_at"]
            if waited < min(args.retry, 5000) / 1000:
                say("GET too early")
                return self.answer(404, b"too early", "text/plain")
        with lock:
            pending = state.pop("pending", None)
        if last != "c1" or pending is None:
            return self.answer(404, b"no such stream", "text/plain")
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(f"id: c2\ndata: {json.dumps(pending)}\n\n".encode())
        self.close_connection = True

    def get_stream(self, last):
        if self.headers.get("Mcp-Session-Id") != self.current():
            return self.answer(400, b"wrong session", "text/plain")
        with lock:
            state["gets"] += 1
            first = state["gets"] == 1
        if last is not None:
            say(f"GET Last-Event-ID {last}")
        elif not first and args.get_stream == "drop":
            say("GET without Last-Event-ID")
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        if first and args.get_stream == "drop":
            self.wfile.write(b"retry: 50\n\nid: g1\ndata:\n\n")
            self.wfile.flush()
            return
        self.wfile.write(b": open\n\n")
        self.wfile.flush()
        while True:
            message = outside.get()
            try:
                self.wfile.write(f"data: {json.dumps(message)}\n\n".encode())
                self.wfile.flush()
            except OSError:
                outside.put(message)  # for the next stream
                return

    def do_DELETE(self):
        say(f"DELETE {self.headers.get('Mcp-Session-Id')}")
        self.answer(200)

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        accept = self.headers.get("Accept", "")
        if "application/json" not in accept or "text/event-stream" not in accept:
            return self.answer(400, b"Accept must take JSON and SSE", "text/plain")
        message = json.loads(body)
        method = message.get("method")
        if method == "initialize":
            with lock:
                state["sessions"] += 1
                state["version"] = message["params"]["protocolVersion"]
            result = {"protocolVersion": state["version"], "capabilities": {"tools": {}},
                      "serverInfo": {"name": "panto-http-test", "version": "1"}}
            reply = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}).encode()
            return self.answer(200, reply, headers=[("Mcp-Session-Id", self.current())])
        session = self.headers.get("Mcp-Session-Id")
        if args.on_list == "expire" and session == "s1" and method == "tools/list":
            return self.answer(404, b"no such session", "text/plain")
        if session != self.current():
            return self.answer(400, f"wrong session {session}".encode(), "text/plain")
        if self.headers.get("MCP-Protocol-Version") != state["version"]:
            return self.answer(400, b"no MCP-Protocol-Version", "text/plain")
        if "id" not in message or "method" not in message:
            return self.answer(202, b"")
        if method == "tools/list":
            if args.on_list == "500":
                return self.answer(500, b"the server broke", "text/plain")
            if args.on_list == "garbage":
                return self.answer(200, b"this is not JSON")
            if args.on_list == "hang":
                self.rfile.read(1)  # until the client gives up and closes
                return
            return self.stream(message["id"], {"tools": TOOLS})
        if method == "tools/call":
            if args.get_stream in ("list-changed", "drop") and not any(t["name"] == "extra" for t in TOOLS):
                TOOLS.append(dict(TOOLS[0], name="extra"))
                outside.put({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
            text = str(state["sessions"])
            result = {"content": [{"type": "text", "text": text}]}
            if args.on_call != "answer":
                return self.call_fault(message, result)
            return self.stream(message["id"], result)
        reply = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": {}}).encode()
        return self.answer(200, reply)

    def call_fault(self, message, result):
        token = (message["params"].get("_meta") or {}).get("progressToken")
        progress = {"jsonrpc": "2.0", "method": "notifications/progress",
                    "params": {"progressToken": token, "progress": 1, "total": 2, "message": "half"}}
        reply = {"jsonrpc": "2.0", "id": message["id"], "result": result}
        if args.on_call == "batch":
            return self.answer(200, json.dumps([progress, reply]).encode())
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        if args.on_call == "sse-batch":
            self.wfile.write(f"data: {json.dumps([progress, reply])}\n\n".encode())
        else:  # break: the reply is kept for the GET that resumes the stream
            with lock:
                state["pending"] = reply
            if args.retry is not None:
                self.wfile.write(f"retry: {args.retry}\n\n".encode())
            self.wfile.write(f"id: c0\ndata:\n\nid: c1\ndata: {json.dumps(progress)}\n\n".encode())
            if args.retry is not None:
                self.wfile.flush()
                state["broke_at"] = time.monotonic()  # (before the client can see the end)
                self.connection.shutdown(socket.SHUT_RDWR)
                say("broke")
        self.close_connection = True

    def stream(self, id, result):
        reply = json.dumps({"jsonrpc": "2.0", "id": id, "result": result}, indent=1)
        # The reply split over data lines (each a line of the indented JSON), after a comment
        # and an event of another type; CRLF line ends.
        events = "id: 0\r\ndata:\r\n\r\n"  # a priming event: an id and empty data
        events += ": a comment\r\n\r\nevent: other\r\ndata: {\"not\": \"a message\"}\r\n\r\n"
        events += "event: message\r\n" + "".join(f"data: {line}\r\n" for line in reply.split("\n")) + "\r\n"
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(events.encode())
        self.close_connection = True


def main():
    global args
    parser = argparse.ArgumentParser()
    parser.add_argument("--on-list", default="answer")
    parser.add_argument("--on-call", default="answer", choices=["answer", "break", "batch", "sse-batch"])
    parser.add_argument("--retry", type=int)
    parser.add_argument("--get-stream", default="none", choices=["none", "405", "list-changed", "drop"])
    args = parser.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    say(str(server.server_address[1]))
    server.serve_forever()


if __name__ == "__main__":
    main()
