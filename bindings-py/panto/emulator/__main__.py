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

from .scenario import FRAMINGS, ScenarioError
from .server import Emulator


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m panto.emulator",
        description="Emulate the Anthropic and OpenAI streaming APIs on loopback.")
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
