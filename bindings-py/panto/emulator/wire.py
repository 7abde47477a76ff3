"""Putting a response body on the socket: framing, write sizes, pacing and faults.

The body arrives as a list of pieces (one per SSE event). Each element of the write plan is
sent with one sendall() on a TCP_NODELAY socket, so that a client really sees it as a
separate read: that is how the emulator makes events straddle reads (chunk_size N) and how
it cuts a stream at an exact byte (fault.after_bytes).
"""

from __future__ import annotations

import os
import select
import socket
import struct
import threading
import time

from .scenario import Fault


#: The longest a `stall` holds a connection: a test's deadline. A client whose timeout or
#: cancel is broken then sees the body end short and fails, instead of waiting forever.
HOLD_LIMIT_S = 10.0


class ClientGone(Exception):
    """The client closed or reset the connection while we were writing."""


def plan_writes(pieces: list[bytes], chunk_size: int) -> list[bytes]:
    """chunk_size 0 keeps one write per piece; N re-cuts the whole body into N-byte writes."""
    if chunk_size == 0:
        return [p for p in pieces if p]
    body = b"".join(pieces)
    return [body[i : i + chunk_size] for i in range(0, len(body), chunk_size)]


def cut_after(writes: list[bytes], after_bytes: int) -> list[bytes]:
    """Keeps the first `after_bytes` bytes of the body, cutting the write that crosses it."""
    kept: list[bytes] = []
    left = after_bytes
    for w in writes:
        if left <= 0:
            break
        kept.append(w[:left])
        left -= len(w)
    return kept


def send_body(conn: socket.socket, writes: list[bytes], framing: str, delay_s: float,
              fault: Fault | None, stopping: threading.Event) -> None:
    """Sends the writes in the given framing, then ends the body or applies the fault.

    The head (status line and headers) has already been sent. Raises ClientGone when the
    client disappears first. After a fault, the connection is closed or held here; the
    caller must not use it again.
    """
    if fault is not None:
        writes = cut_after(writes, fault.after_bytes)
    try:
        for i, w in enumerate(writes):
            if i and delay_s and stopping.wait(delay_s):
                return  # the server is stopping: give up quietly
            if framing == "chunked":
                conn.sendall(b"%x\r\n%s\r\n" % (len(w), w))
            else:
                conn.sendall(w)
        if fault is None:
            if framing == "chunked":
                conn.sendall(b"0\r\n\r\n")
            return
        if fault.kind == "reset":
            reset(conn)
        elif fault.kind == "close":
            conn.shutdown(socket.SHUT_WR)  # a clean FIN, and no terminating 0-chunk
        else:
            hold(conn, stopping)
    except (BrokenPipeError, ConnectionResetError) as e:
        raise ClientGone() from e


def reset(conn: socket.socket) -> None:
    """Aborts the connection: with SO_LINGER 0, closing sends an RST instead of a FIN.

    socket.close() would wait for the handler's makefile() objects to be closed too, so the
    descriptor is detached and closed at once; later uses of `conn` fail with EBADF instead
    of touching a descriptor number that another connection may have reused.
    """
    conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    os.close(conn.detach())


def hold(conn: socket.socket, stopping: threading.Event) -> None:
    """Sends nothing more and waits until the client goes away, the server stops, or
    HOLD_LIMIT_S pass (then the caller closes the connection)."""
    deadline = time.monotonic() + HOLD_LIMIT_S
    while not stopping.is_set() and time.monotonic() < deadline:
        readable, _, _ = select.select([conn], [], [], 0.05)
        if readable:
            try:
                if not conn.recv(65536):
                    return  # the client closed its side
            except OSError:
                return
