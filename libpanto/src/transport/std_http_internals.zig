//! Everything panto reads of std.http's internal state, in one place: fields that std.http
//! (Zig 0.16) makes public but does not document as API, and that a new Zig may rename or
//! change. Each is a need std.http's API does not meet:
//!   - the socket under a request, for the watchdog to shut down on a timeout or a cancel;
//!   - how many idle connections the pool holds, to tell a reused connection from a new one;
//!   - the bytes a connection received but the body reader did not take yet, and where the
//!     body's framing stands (Content-Length, chunked), to read ahead only what is there
//!     (a batch never waits) and to resend a request that got nothing on a kept-alive
//!     connection the server had closed;
//!   - parking a response without its buffer, draining it, and closing the pool's idle
//!     connections (keep_alive.zig).
//! Moving to a new Zig: check these against std/http/Client.zig and std/http.zig.
const std = @import("std");
const Client = std.http.Client;

/// The socket a std.http request's connection uses.
pub fn socketOf(request: *const Client.Request) std.c.fd_t {
    return request.connection.?.stream_reader.stream.socket.handle;
}

/// How many idle connections the client's pool holds.
pub fn idleConnections(client: *const Client) usize {
    return client.connection_pool.free_len;
}

/// One idle connection taken out of the client's pool, for closing it (null: none left).
/// (ConnectionPool.resize would do it, but it does not compile in Zig 0.16.)
pub fn takeIdle(client: *Client) ?*Client.Connection {
    const pool = &client.connection_pool;
    const node = pool.free.popFirst() orelse return null;
    pool.free_len -= 1;
    return @alignCast(@fieldParentPtr("pool_node", node));
}

/// Bytes the request's connection received and holds, not yet read by anyone.
pub fn heldBytes(request: *const Client.Request) usize {
    return request.reader.in.bufferedLen();
}

/// Whether a fill of `body_reader`, the response's body reader, would return from bytes the
/// connection already holds (received and, over TLS, decrypted), without waiting on the
/// network: for a Content-Length body, any; for a chunked one, enough to reach the next
/// chunk's data. `room`: the body's buffer can take more.
pub fn fillsWithoutWaiting(request: *const Client.Request, body_reader: *const std.Io.Reader, room: bool) bool {
    const r = &request.reader;
    if (body_reader == r.in) return false; // a body read to the connection's end: nothing more is held
    if (!room) return false; // (an event larger than the buffer)
    var held: []const u8 = r.in.buffered();
    switch (r.state) {
        .body_remaining_content_length => return held.len > 0,
        .body_remaining_chunk_len => |left| switch (left) {
            .head => {},
            .n => held = if (held.len >= 1) held[1..] else return false,
            .rn => held = if (held.len >= 2) held[2..] else return false,
            else => return held.len > 0, // inside a chunk's data
        },
        else => return false,
    }
    var chunk: std.http.ChunkParser = .init;
    const head_len = chunk.feed(held);
    // The last chunk (length 0) is followed by trailers, which may not all be there.
    return chunk.state == .data and chunk.chunk_len > 0 and head_len < held.len;
}

/// Detaches the body reader from its buffer (the stream's), dropping the decoded bytes it
/// holds; the body's framing state stays in `request`.
pub fn forgetBodyBuffer(request: *Client.Request) void {
    const r = &request.reader.interface;
    r.buffer = &.{};
    r.seek = 0;
    r.end = 0;
}

/// Reads the rest of a response body; true when it reached the body's end.
pub fn drain(request: *Client.Request) bool {
    switch (request.reader.state) {
        .ready => return true,
        .body_remaining_chunk_len, .body_remaining_content_length => {},
        else => return false, // a body framed by the connection's end: never reused
    }
    _ = request.reader.interface.discardRemaining() catch return false;
    return request.reader.state == .ready;
}
