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
//! (the stream marks it closing), nor does one idle for longer than `keep_alive.idle_ms`
//! (config.zig), checked at the next request. HTTPS through a proxy goes through panto's own
//! CONNECT tunnel (tunnel.zig), which std.http does not pool: a tunnel is parked and drained
//! here the same way, and handed to the next request when it goes through the same proxy to
//! the same host and port (else closed).
const std = @import("std");
const Client = std.http.Client;
const watchdog = @import("watchdog.zig");
const Tunnel = @import("tunnel.zig").Tunnel;
const TunnelKey = @import("tunnel.zig").Key;
const connection_log = @import("connection_log.zig");
const std_http = @import("std_http_internals.zig");
const Reason = connection_log.Reason;

pub const KeepAlive = struct {
    /// The request of the agent's last message, its response not necessarily read to the end.
    parked: ?Client.Request = null,
    /// The tunnel the parked request went through (HTTPS through a proxy), else null.
    parked_tunnel: ?*Tunnel = null,
    /// When a connection was last parked or released to the pool (CLOCK_MONOTONIC ns).
    idle_since_ns: u64 = 0,
    /// Connections opened (TCP connections and tunnels), and requests sent on a reused one.
    opened: u32 = 0,
    reused: u32 = 0,
    /// The connection debug log (PANTO_LOG=debug).
    log: connection_log.Log = .{},

    /// Keeps a request whose message ended (its last event was read) for the next request
    /// to finish, with the tunnel it went through, if any. A connection that cannot be reused
    /// is closed now, and so is every one when `idle_ms` is 0.
    pub fn park(k: *KeepAlive, request: *Client.Request, tunnel: ?*Tunnel, idle_ms: u64) void {
        k.closeParked(.unread);
        const closing = if (tunnel) |t| t.closing else if (request.connection) |c| c.closing else true;
        if (closing or idle_ms == 0) {
            const reason: Reason = if (idle_ms == 0) .not_kept else .server_asked;
            if (tunnel) |t| {
                request.deinit();
                k.closeTunnel(t, reason);
            } else {
                if (request.connection) |c| {
                    if (k.log.on) k.log.closedConnection(c, reason);
                    c.closing = true;
                }
                request.deinit();
            }
            return;
        }
        // The body reader's buffer is the stream's: forget what it holds (decoded body
        // bytes after the message's end), keeping the chunk state, which is in `request`.
        std_http.forgetBodyBuffer(request);
        k.parked = request.*;
        k.parked_tunnel = tunnel;
        request.* = undefined;
        k.idle_since_ns = watchdog.nowNs();
    }

    /// Before a request: reads the parked response to its end; then a std.http connection
    /// goes back to the pool (where the request finds it), and a tunnel is returned when
    /// `want` is where it leads (else closed). Connections idle for longer than `idle_ms` are
    /// closed instead. The reads are watched by `watch` (its deadline and cancel end them:
    /// the connection is then closed).
    pub fn reclaim(k: *KeepAlive, client: *Client, watch: *watchdog.Watch, idle_ms: u64, want: ?TunnelKey) ?*Tunnel {
        const now = watchdog.nowNs();
        if (now -| k.idle_since_ns >= idle_ms *| std.time.ns_per_ms) {
            k.closeParked(.idle);
            k.closeIdle(client, .idle);
            return null;
        }
        var request = k.parked orelse return null;
        const tunnel = k.parked_tunnel;
        k.parked = null;
        k.parked_tunnel = null;
        k.idle_since_ns = now;
        if (tunnel) |t| if (want == null or !t.leadsTo(want.?)) {
            request.deinit();
            k.closeTunnel(t, .other_route); // not worth reading to its end
            return null;
        };
        watchdog.setSocket(watch, if (tunnel) |t| t.socket() else std_http.socketOf(&request));
        const ended = std_http.drain(&request);
        watchdog.setSocket(watch, -1);
        const reason: ?Reason = if (watch.fired.load(.acquire) != .none) (if (watch.canceled.load(.acquire)) .canceled else .timed_out) else if (!ended) .unread else null;
        if (tunnel) |t| {
            request.deinit();
            if (reason) |why| {
                k.closeTunnel(t, why);
                return null;
            }
            return t;
        }
        if (reason) |why| {
            const connection = request.connection.?;
            if (k.log.on) k.log.closedConnection(connection, why);
            connection.closing = true;
        }
        request.deinit(); // to the pool, unless closing
        return null;
    }

    /// Closes the parked connection, if any.
    pub fn closeParked(k: *KeepAlive, reason: Reason) void {
        var request = k.parked orelse return;
        const tunnel = k.parked_tunnel;
        k.parked = null;
        k.parked_tunnel = null;
        if (tunnel) |t| {
            request.deinit();
            return k.closeTunnel(t, reason);
        }
        const connection = request.connection.?;
        if (k.log.on) k.log.closedConnection(connection, reason);
        connection.closing = true;
        request.deinit();
    }

    pub fn closeTunnel(k: *KeepAlive, t: *Tunnel, reason: Reason) void {
        if (k.log.on) k.log.closed(t.number, t.peer(), reason);
        t.destroy();
    }

    /// Counts a new std.http request's connection: reused when the pool held one fewer idle
    /// connection after the request took its connection than before (`free_before`).
    pub fn count(k: *KeepAlive, client: *const Client, request: *const Client.Request, free_before: usize) bool {
        const reused = std_http.idleConnections(client) < free_before;
        if (reused) k.reused += 1 else k.opened += 1;
        if (k.log.on) {
            const connection = request.connection.?;
            if (!reused) k.log.opened(connection, k.opened);
            k.log.request(k.log.numberOf(connection), .of(connection), reused);
        }
        return reused;
    }

    /// Counts a request through a tunnel, `reused` or opened for it.
    pub fn countTunnel(k: *KeepAlive, t: *Tunnel, reused: bool) void {
        if (reused) k.reused += 1 else {
            k.opened += 1;
            t.number = k.opened;
        }
        if (k.log.on) k.log.request(t.number, t.peer(), reused);
    }

    /// Closes every idle connection of the client's pool.
    pub fn closeIdle(k: *const KeepAlive, client: *Client, reason: Reason) void {
        while (std_http.takeIdle(client)) |connection| {
            if (k.log.on) k.log.closedConnection(connection, reason);
            connection.destroy(client.io);
        }
    }
};
