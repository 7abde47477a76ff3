#!/usr/bin/env python3
"""A small MCP server over stdio, standard library only, for panto's MCP client tests.

It speaks the protocol as the reference servers do (newline-delimited JSON-RPC 2.0; revisions
2025-11-25, 2025-06-18 and 2025-03-26; an unsupported version is answered with the newest one,
not an error), and misbehaves on request, so that each failure the client must survive is a
flag:

  --version V        answer initialize with protocol version V whatever was asked
  --page-size N      tools/list returns N tools per page, with nextCursor
  --on-call MODE     what tools/call does: answer (default), die (exit before answering),
                     hang (never answer), garbage (write a line that is not JSON-RPC)
  --ping             send the client a ping request before answering each tools/call, and
                     fail the call if the ping is not answered
  --list-changed     send notifications/tools/list_changed right after initialized
  --progress N       before answering a tools/call that asked for progress (a progressToken),
                     send N notifications/progress (i of N, "step i of N")
  --grow             the first tools/call adds a tool `extra` (echo's twin): the server sends
                     notifications/tools/list_changed before that call's result
  --late-grow        as --grow, but list_changed is sent right after that call's result (in the
                     same write, so it is in the pipe once the result is read): the client
                     meets it while no request waits
  --die-at-start     write a reason to stderr and exit before reading anything
  --hold PATH        then wait until PATH exists before answering (so a test can see the
                     progress arrive while the call still runs, without timing anything)

Tools: echo (text), add (structuredContent and its JSON as text), fail (isError: true),
pixel (an image part), env (this process's environment names, as text), docs (a
resource link, an embedded resource and a part of an unknown kind).
"""
import argparse
import json
import os
import sys
import time

SUPPORTED = ["2025-11-25", "2025-06-18", "2025-03-26"]
PIXEL_PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)

TOOLS = [
    {"name": "echo", "description": "Says its text back.",
     "inputSchema": {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
                     "properties": {"text": {"type": "string"}}, "required": ["text"]}},
    {"name": "add", "description": "Adds two numbers.",
     "inputSchema": {"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
                     "required": ["a", "b"]},
     "outputSchema": {"type": "object", "properties": {"sum": {"type": "number"}}}},
    {"name": "fail", "description": "Always fails.", "inputSchema": {"type": "object"}},
    {"name": "pixel", "description": "A one-pixel PNG.", "inputSchema": {"type": "object"}},
    {"name": "env", "description": "The names of its environment.", "inputSchema": {"type": "object"}},
    {"name": "docs", "description": "A resource link and an embedded resource.", "inputSchema": {"type": "object"}},
]


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def read():
    line = sys.stdin.readline()
    if not line:
        sys.exit(0)
    return json.loads(line)


def call_result(name, arguments):
    if name == "echo":
        return {"content": [{"type": "text", "text": arguments.get("text", "")}]}
    if name == "add":
        total = arguments["a"] + arguments["b"]
        return {"content": [{"type": "text", "text": json.dumps({"sum": total})}],
                "structuredContent": {"sum": total}}
    if name == "fail":
        return {"content": [{"type": "text", "text": "it failed, as asked"}], "isError": True}
    if name == "pixel":
        return {"content": [{"type": "image", "data": PIXEL_PNG, "mimeType": "image/png"}]}
    if name == "docs":
        return {"content": [
            {"type": "resource_link", "uri": "file:///guide.md", "name": "guide", "mimeType": "text/markdown"},
            {"type": "resource", "resource": {"uri": "file:///notes.txt", "mimeType": "text/plain", "text": "notes"}},
            {"type": "hologram", "shape": "cube"}]}
    if name == "env":
        return {"content": [{"type": "text", "text": " ".join(sorted(os.environ))}]}
    return None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--version")
    parser.add_argument("--page-size", type=int, default=0)
    parser.add_argument("--on-call", default="answer", choices=["answer", "die", "hang", "garbage"])
    parser.add_argument("--ping", action="store_true")
    parser.add_argument("--list-changed", action="store_true")
    parser.add_argument("--progress", type=int, default=0)
    parser.add_argument("--hold")
    parser.add_argument("--die-at-start", action="store_true")
    parser.add_argument("--grow", action="store_true")
    parser.add_argument("--late-grow", action="store_true")
    args = parser.parse_args()
    print("test server started", file=sys.stderr, flush=True)
    if args.die_at_start:
        print("cannot open the database, as asked", file=sys.stderr, flush=True)
        sys.exit(1)
    ping_id = 0
    while True:
        message = read()
        method = message.get("method")
        if "id" not in message or method is None:
            if method == "notifications/initialized" and args.list_changed:
                send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
            continue  # notifications and replies need no answer
        rid = message["id"]
        params = message.get("params") or {}
        if method == "initialize":
            asked = params.get("protocolVersion")
            version = args.version or (asked if asked in SUPPORTED else SUPPORTED[0])
            send({"jsonrpc": "2.0", "id": rid, "result": {
                "protocolVersion": version,
                "capabilities": {"tools": {"listChanged": True}},
                "serverInfo": {"name": "panto-test-server", "version": "1.0.0"}}})
        elif method == "ping":
            send({"jsonrpc": "2.0", "id": rid, "result": {}})
        elif method == "tools/list":
            start = int(params.get("cursor") or 0)
            size = args.page_size or len(TOOLS)
            result = {"tools": TOOLS[start:start + size]}
            if start + size < len(TOOLS):
                result["nextCursor"] = str(start + size)
            send({"jsonrpc": "2.0", "id": rid, "result": result})
        elif method == "tools/call":
            if args.on_call == "die":
                print("dying on purpose", file=sys.stderr, flush=True)
                sys.exit(3)
            if args.on_call == "hang":
                continue
            if args.on_call == "garbage":
                sys.stdout.write("this is not JSON-RPC\n")
                sys.stdout.flush()
                continue
            if args.ping:
                ping_id += 1
                send({"jsonrpc": "2.0", "id": f"ping-{ping_id}", "method": "ping"})
                answer = read()
                if answer.get("id") != f"ping-{ping_id}" or "result" not in answer:
                    send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32000, "message": "ping not answered"}})
                    continue
            token = (params.get("_meta") or {}).get("progressToken")
            if token is not None:
                for i in range(1, args.progress + 1):
                    send({"jsonrpc": "2.0", "method": "notifications/progress",
                          "params": {"progressToken": token, "progress": i, "total": args.progress,
                                     "message": f"step {i} of {args.progress}"}})
            while args.hold and not os.path.exists(args.hold):
                time.sleep(0.01)
            if args.grow and not any(t["name"] == "extra" for t in TOOLS):
                TOOLS.append(dict(TOOLS[0], name="extra", description="Says its text back, too."))
                send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
            name = params.get("name")
            result = call_result("echo" if name == "extra" else name, params.get("arguments") or {})
            if result is None:
                send({"jsonrpc": "2.0", "id": rid,
                      "error": {"code": -32602, "message": f"Unknown tool: {params.get('name')}"}})
            elif args.late_grow and not any(t["name"] == "extra" for t in TOOLS):
                TOOLS.append(dict(TOOLS[0], name="extra", description="Says its text back, too."))
                changed = {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
                sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": rid, "result": result}) + "\n" + json.dumps(changed) + "\n")
                sys.stdout.flush()
            else:
                send({"jsonrpc": "2.0", "id": rid, "result": result})
        else:
            send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "Method not found"}})


if __name__ == "__main__":
    main()
