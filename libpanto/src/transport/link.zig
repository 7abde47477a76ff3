//! The connection one request rides while it is open: std.http's request on a pooled or new
//! connection, or a request inside panto's CONNECT tunnel through a proxy. A provider
//! stream (transport.zig) and a one-shot request (oneshot.zig) each hold one: connecting,
//! sending, closing and parking are the same for both; what a failure means is theirs.
const std = @import("std");
const Agent = @import("../agent.zig").Agent;
const KeepAlive = @import("keep_alive.zig").KeepAlive;
const Reason = @import("connection_log.zig").Reason;
const watchdog = @import("watchdog.zig");
const tunnel = @import("tunnel.zig");
const stack_trim = @import("stack_trim.zig");
const std_http = @import("std_http_internals.zig");

pub const Link = struct {
    request: std.http.Client.Request = undefined,
    /// HTTPS through a proxy: panto's CONNECT tunnel, which `request` is read from.
    tunnel: ?*tunnel.Tunnel = null,
    /// The connection is up (TCP, a proxy's tunnel, TLS) and `request` (and `tunnel`, if
    /// set) must be closed or parked.
    connected: bool = false,

    /// Opens the request's connection (TCP and TLS, or a tunnel through a proxy and TLS in
    /// it), or takes a kept-alive one: from std.http's pool, or `kept`, the agent's tunnel
    /// to `tunnel_key`. True when the connection was reused. A tunnel that cannot be opened
    /// is `error.TunnelFailed`, its message in `problem`; std.http's failures come as they
    /// are, for the caller to name.
    pub fn connect(
        l: *Link,
        agent: *Agent,
        watch: *watchdog.Watch,
        method: std.http.Method,
        uri: std.Uri,
        options: std.http.Client.RequestOptions,
        tunnel_key: ?tunnel.Key,
        kept: ?*tunnel.Tunnel,
        problem: *tunnel.Problem,
    ) anyerror!bool {
        const k = &agent.keep_alive;
        // A new TLS connection's handshake leaves ~200 KB of dead stack pages resident below
        // this frame, for the thread's life: give them back (stack_trim.zig).
        const https = std.ascii.eqlIgnoreCase(uri.scheme, "https");
        const key = tunnel_key orelse {
            const free_before = std_http.idleConnections(&agent.http);
            l.request = agent.http.request(method, uri, options) catch |err| {
                if (https) stack_trim.giveBack();
                return err;
            };
            l.connected = true; // from here on the request must be closed
            const reused = k.count(&agent.http, &l.request, free_before);
            if (https and !reused) stack_trim.giveBack();
            watchdog.setSocket(watch, std_http.socketOf(&l.request));
            return reused;
        };
        const t = kept orelse open: {
            defer stack_trim.giveBack();
            break :open tunnel.Tunnel.open(&agent.http, key, problem) catch |err| switch (err) {
                error.OutOfMemory => return error.OutOfMemory,
                else => return error.TunnelFailed,
            };
        };
        k.countTunnel(t, kept != null);
        l.tunnel = t;
        l.request = t.request(&agent.http, method, uri, options);
        l.connected = true; // from here on the tunnel must be closed
        watchdog.setSocket(watch, t.socket());
        return kept != null;
    }

    /// Writes the request and reads the response head, on std.http's connection or inside
    /// the tunnel. Sending uses `body` as the write buffer, which a failed send leaves
    /// shifted (what was written is gone from its start).
    pub fn exchange(l: *Link, body: []u8) anyerror!std.http.Client.Response {
        try l.sendBody(body);
        return l.receiveHead();
    }

    /// Writes the request (exchange's first half: a caller may wait between the two).
    pub fn sendBody(l: *Link, body: []u8) anyerror!void {
        if (l.tunnel) |t| return t.sendBodyComplete(&l.request, body);
        // (A GET or a DELETE has no body, not an empty one: std.http asserts it.)
        if (l.request.method.requestHasBody()) return l.request.sendBodyComplete(body);
        return l.request.sendBodiless();
    }

    /// Reads the response head (exchange's second half).
    pub fn receiveHead(l: *Link) anyerror!std.http.Client.Response {
        if (l.tunnel) |t| return t.receiveHead(&l.request);
        return l.request.receiveHead(&.{});
    }

    /// What made an exchange fail, for its message: inside a tunnel, the socket's or TLS's
    /// error rather than the reader's or writer's.
    pub fn causeOf(l: *const Link, err: anyerror) anyerror {
        const t = l.tunnel orelse return err;
        return switch (err) {
            error.WriteFailed => t.writeError() orelse err,
            error.ReadFailed => t.readError() orelse err,
            else => err,
        };
    }

    /// Whether a failed exchange got nothing of the response (and was neither canceled nor
    /// timed out): the request may be sent again elsewhere.
    pub fn nothingReceived(l: *Link, watch: *const watchdog.Watch, err: anyerror) bool {
        if (watch.fired.load(.acquire) != .none) return false;
        return switch (err) {
            error.WriteFailed, error.HttpConnectionClosing => true,
            error.ReadFailed => std_http.heldBytes(&l.request) == 0,
            else => false,
        };
    }

    /// The connection's own error behind a failed body read, when it has one.
    pub fn readError(l: *Link) ?anyerror {
        if (l.request.connection) |c| return c.getReadError();
        if (l.tunnel) |t| return t.readError();
        return null;
    }

    /// Closes the connection. A request that failed, was canceled, timed out or did not
    /// read its body to the end closes its connection: std.http would pool one whose
    /// request failed while being written (its response not begun), and the next request
    /// would fail on it.
    pub fn close(l: *Link, k: *KeepAlive, watch: *watchdog.Watch, why: Reason) void {
        if (!l.connected) return;
        // The watchdog must forget the socket before it is closed and its number reused.
        watchdog.setSocket(watch, -1);
        if (l.request.connection) |c| {
            if (k.log.on) k.log.closedConnection(c, why);
            c.closing = true;
        }
        l.request.deinit();
        if (l.tunnel) |t| k.closeTunnel(t, why);
        l.tunnel = null;
        l.connected = false;
    }

    /// The answer was read to its end (or the rest is left for the next request to read,
    /// keep_alive.zig): the connection is the agent's for its next request.
    pub fn park(l: *Link, k: *KeepAlive, watch: *watchdog.Watch, idle_ms: u64) void {
        watchdog.setSocket(watch, -1);
        k.park(&l.request, l.tunnel, idle_ms);
        l.tunnel = null;
        l.connected = false;
    }
};
