"""python -m panto.emulator: run the emulator until SIGINT or SIGTERM.

The first line on stdout is always `panto-emulator listening on http://HOST:PORT` (with
--tls-cert/--tls-key: `https://localhost:PORT`), so a test runner can start it with --port 0
and read the port from that line.
"""

from __future__ import annotations

import argparse
import signal
import ssl
import sys
import threading
from pathlib import Path

from .scenario import FRAMINGS, ScenarioError
from .server import Emulator

# The scenario format in short, with an example; README.md (installed with the package)
# has all of it.
SCENARIO_HELP = """\
scenario (--scenario FILE, or POST /_emulator/scenario):
  {"responses": [R, ...], "repeat_last": false, "require_api_key": true,
   "prompt_cache": {"unit_tokens": 10}}
  One R per provider call (POST /v1/messages, POST /v1/chat/completions), in
  order; "repeat_last": true answers every later call with the last one. Each R
  is exactly one of
    "message": {"content": [BLOCK, ...], "stop_reason"?, "usage"?, "id"?, "model"?}
        BLOCK: {"type": "text", "text"}, {"type": "thinking", "thinking"},
        {"type": "tool_use", "name", "input"?}; rendered in the wire format of the
        endpoint called
    "error": {"type": "rate_limit_error", "message": "..."}   the provider's error
    "body": "raw SSE text"   "replay": "recorded.sse"   sent as they are
  plus any of "status", "headers", "delay_ms", "framing" (chunked, content-length,
  close), "chunk_size", "chunk_delay_ms", "read_delay_ms", "idle_close",
  "describe_media", "stream_error": {"type", "message", "after_events"},
  "fault": {"after_bytes": N, "kind": "reset" | "close" | "stall"}.
  Unknown keys are refused.

example: a tool call, then the answer after the tool's result, then a rate limit:
  {"responses": [
    {"message": {"content": [
      {"type": "text", "text": "Let me look that up."},
      {"type": "tool_use", "name": "get_weather", "input": {"city": "Paris"}}]}},
    {"message": {"content": [{"type": "text", "text": "It is sunny in Paris."}]},
     "chunk_size": 7},
    {"error": {"type": "rate_limit_error", "message": "Slow down"},
     "headers": {"retry-after": "1"}}
  ]}

control API: POST /_emulator/scenario (load one), GET /_emulator/requests (what
arrived), GET /_emulator/connections, POST /_emulator/reset.
The whole format: README.md beside this module, """


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m panto.emulator",
        description="Emulate the Anthropic and OpenAI streaming APIs on loopback.",
        epilog=SCENARIO_HELP + str(Path(__file__).with_name("README.md")),
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--scenario", metavar="FILE", help="a scenario JSON file")
    source.add_argument("--replay", metavar="FILE",
                        help="serve this raw SSE body to every request")
    parser.add_argument("--chunk-size", type=int, default=0, metavar="N",
                        help="with --replay: write the body N bytes at a time")
    parser.add_argument("--framing", choices=FRAMINGS, default="chunked",
                        help="with --replay: how the body is framed (default chunked)")
    parser.add_argument("--tls-cert", metavar="FILE",
                        help="serve HTTPS with this certificate chain (PEM); needs --tls-key")
    parser.add_argument("--tls-key", metavar="FILE", help="the private key (PEM) of --tls-cert")
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="log every request on stderr")
    args = parser.parse_args(argv)
    if args.chunk_size < 0:
        parser.error("--chunk-size must be >= 0")
    if (args.tls_cert is None) != (args.tls_key is None):
        parser.error("--tls-cert and --tls-key go together")
    tls = (args.tls_cert, args.tls_key) if args.tls_cert is not None else None

    stop = threading.Event()
    # Handlers first, so a signal that arrives while starting still ends us cleanly.
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        emulator = Emulator(scenario=args.scenario, replay=args.replay,
                            chunk_size=args.chunk_size, framing=args.framing,
                            host=args.host, port=args.port, verbose=args.verbose, tls=tls)
    except ScenarioError as e:
        print(f"panto-emulator: {e}", file=sys.stderr)
        return 2
    except ssl.SSLError as e:
        print(f"panto-emulator: cannot use the TLS certificate or key: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"panto-emulator: cannot listen on {args.host}:{args.port}: {e}",
              file=sys.stderr)
        return 1
    with emulator:
        print(f"panto-emulator listening on {emulator.url}", flush=True)
        while not stop.wait(0.5):
            pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
