"""A loopback TCP relay that adds network latency, for the latency benchmark (bench/latency.py).

    python bench/delay_proxy.py --upstream 127.0.0.1:PORT --delay-ms 10

It listens on 127.0.0.1 (and ::1 when the machine has it) on one port, relays every
connection it accepts to the upstream, and delivers each chunk of bytes, in either direction,
`delay` after it arrived: a one-way delay, so a request and its answer cost one round trip of
2 × delay. It does not look into the bytes, so TLS goes through it end to end (the upstream
terminates it).

A new TCP connection costs a round trip on a real network (SYN, SYN-ACK) before the client
can send; on loopback the kernel completes the handshake at once. So the relay holds what the
client sends on a new connection until 2 × delay after the accept: its first bytes arrive at
accept + 3 × delay, as if the connection had been set up over the same link. (A TLS handshake
then costs its round trips on top, through the ordinary delay.)

It counts the connections it accepted. The first line on stdout is
`listening PORT control CONTROL_PORT`; a connection to the control port reads the count
(`connections N\n`) and is closed.
"""

from __future__ import annotations

import argparse
import asyncio
import socket
import sys


class Relay:
    def __init__(self, upstream_host: str, upstream_port: int, delay_s: float) -> None:
        self.upstream = (upstream_host, upstream_port)
        self.delay = delay_s
        self.connections = 0

    async def client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        loop = asyncio.get_running_loop()
        accepted = loop.time()
        self.connections += 1
        try:
            up_reader, up_writer = await asyncio.open_connection(*self.upstream)
        except OSError:
            writer.close()
            return
        for w in (writer, up_writer):
            sock = w.get_extra_info("socket")
            if sock is not None:
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        await asyncio.gather(
            self.pipe(reader, up_writer, not_before=accepted + 2 * self.delay),
            self.pipe(up_reader, writer, not_before=0.0),
            return_exceptions=True,
        )
        for w in (writer, up_writer):
            w.close()

    async def pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, not_before: float) -> None:
        """Copies reader to writer, each chunk delivered `delay` after it arrived (or after
        not_before, when it arrived earlier); the end of the stream too."""
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue = asyncio.Queue()

        async def deliver() -> None:
            while True:
                due, data = await queue.get()
                wait = due - loop.time()
                if wait > 0:
                    await asyncio.sleep(wait)
                if data is None:
                    if writer.can_write_eof():
                        writer.write_eof()
                    return
                writer.write(data)
                await writer.drain()

        delivering = asyncio.ensure_future(deliver())
        try:
            while True:
                try:
                    data = await reader.read(65536)
                except OSError:
                    data = b""
                queue.put_nowait((max(loop.time(), not_before) + self.delay, data or None))
                if not data:
                    break
            await delivering
        except OSError:
            pass
        finally:
            if not delivering.done():
                delivering.cancel()

    async def control(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(f"connections {self.connections}\n".encode())
        await writer.drain()
        writer.close()


async def serve(args: argparse.Namespace) -> None:
    host, _, port = args.upstream.rpartition(":")
    relay = Relay(host, int(port), args.delay_ms / 1000)
    server = await asyncio.start_server(relay.client, "127.0.0.1", args.port)
    listen_port = server.sockets[0].getsockname()[1]
    servers = [server]
    try:  # `localhost` may resolve to ::1 first
        servers.append(await asyncio.start_server(relay.client, "::1", listen_port))
    except OSError:
        pass
    control = await asyncio.start_server(relay.control, "127.0.0.1", 0)
    print(f"listening {listen_port} control {control.sockets[0].getsockname()[1]}", flush=True)
    await asyncio.gather(*(s.serve_forever() for s in servers + [control]))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--upstream", required=True, help="HOST:PORT to relay to")
    ap.add_argument("--delay-ms", type=float, required=True, help="one-way delay, each direction")
    ap.add_argument("--port", type=int, default=0)
    args = ap.parse_args()
    try:
        asyncio.run(serve(args))
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
