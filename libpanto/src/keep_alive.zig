//! An agent's kept-alive connection: the requests of an agent (the tool rounds of a turn, and
//! later turns) go over one connection while it is healthy.
//!
//! std.http.Client pools connections (per client, so per agent; keyed by the TCP peer's host,
//! port and protocol, a plain-HTTP proxy being the peer of its proxied requests) and puts a
//! connection back in its pool only when the request's response was read to its end. A
//! stream ends its message at the message's last SSE event, before the body's end (the
//! chunked terminator, the rest of a Content-Length, OpenAI's `[DONE]`): reading those bytes
//! then would hold the last event back until they arrive. So the finished request is parked
//! here, and the next request of the agent first reads the parked body to its end (bounded
//! by that request's deadlines and cancel, under its watch) and releases the connection to
//! the pool, where the new request finds it.
//!
//! A connection whose request failed, was canceled or timed out never goes back to the pool
//! (the stream marks it closing), nor does one idle for longer than `max_idle_ns`, a little
//! before servers usually close theirs. HTTPS through panto's own CONNECT tunnel is not
//! pooled: a tunnel serves one request.
const std = @import("std");
const Client = std.http.Client;
const watchdog = @import("watchdog.zig");

/// How long a connection may stay unused and still be reused.
pub const max_idle_ns: u64 = 60 * std.time.ns_per_s;

pub const KeepAlive = struct {
    /// The request of the agent's last message, its response not necessarily read to the end.
    parked: ?Client.Request = null,
    /// When a connection was last parked or released to the pool (CLOCK_MONOTONIC ns).
    idle_since_ns: u64 = 0,
    /// Connections opened, and requests sent on a reused connection (a test hook).
    opened: u32 = 0,
    reused: u32 = 0,

    /// Keeps a request whose message ended (its last event was read) for the next request
    /// to finish. A connection that cannot be reused is closed now.
    pub fn park(k: *KeepAlive, request: *Client.Request) void {
        k.closeParked();
        const connection = request.connection orelse {
            request.deinit();
            return;
        };
        if (connection.closing) {
            request.deinit();
            return;
        }
        // The body reader's buffer is the stream's: forget what it holds (decoded body
        // bytes after the message's end), keeping the chunk state, which is in `request`.
        const r = &request.reader.interface;
        r.buffer = &.{};
        r.seek = 0;
        r.end = 0;
        k.parked = request.*;
        request.* = undefined;
        k.idle_since_ns = watchdog.nowNs();
    }

    /// Before a request: reads the parked response to its end and puts its connection back in
    /// the pool, or closes it; closes pooled connections idle for too long. The reads are
    /// watched by `watch` (its deadline and cancel end them: the connection is then closed).
    pub fn reclaim(k: *KeepAlive, client: *Client, watch: *watchdog.Watch) void {
        const now = watchdog.nowNs();
        if (now -| k.idle_since_ns >= max_idle_ns) {
            k.closeParked();
            closeIdle(client);
            return;
        }
        var request = k.parked orelse return;
        k.parked = null;
        const connection = request.connection.?;
        watchdog.setSocket(watch, connection.stream_reader.stream.socket.handle);
        const ended = drain(&request);
        watchdog.setSocket(watch, -1);
        if (!ended or watch.fired.load(.acquire) != .none) connection.closing = true;
        request.deinit(); // to the pool, unless closing
        k.idle_since_ns = now;
    }

    /// Closes the parked connection, if any.
    pub fn closeParked(k: *KeepAlive) void {
        var request = k.parked orelse return;
        k.parked = null;
        request.connection.?.closing = true;
        request.deinit();
    }

    /// Counts a new request's connection: reused when the pool held one fewer idle
    /// connection after the request took its connection than before (`free_before`).
    pub fn count(k: *KeepAlive, client: *const Client, free_before: usize) bool {
        const reused = client.connection_pool.free_len < free_before;
        if (reused) k.reused += 1 else k.opened += 1;
        return reused;
    }
};

/// Reads the rest of a response body; true when it reached the body's end.
fn drain(request: *Client.Request) bool {
    switch (request.reader.state) {
        .ready => return true,
        .body_remaining_chunk_len, .body_remaining_content_length => {},
        else => return false, // a body framed by the connection's end: never reused
    }
    _ = request.reader.interface.discardRemaining() catch return false;
    return request.reader.state == .ready;
}

/// Closes every idle connection of the client's pool. (ConnectionPool.resize would, but it
/// does not compile in Zig 0.16.)
pub fn closeIdle(client: *Client) void {
    const pool = &client.connection_pool;
    while (pool.free.popFirst()) |node| {
        pool.free_len -= 1;
        const connection: *Client.Connection = @alignCast(@fieldParentPtr("pool_node", node));
        connection.destroy(client.io);
    }
}
