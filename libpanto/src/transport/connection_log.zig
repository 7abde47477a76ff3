//! The connection debug log, for a user who wants to see which connection each request took:
//! with the debug log on (log.zig: PANTO_LOG=debug or the config's `log`), each request of the
//! agent writes one line naming its connection (its number, host:port, new or reused, through
//! a proxy or not), and each connection closed one line saying why. Off (the default), each
//! place that logs costs one branch (`if (log.on)`).
const std = @import("std");
const Sink = @import("../log.zig").Sink;
const Connection = std.http.Client.Connection;

/// Why a connection was closed.
pub const Reason = enum {
    idle,
    server_closed,
    server_asked,
    not_kept,
    failed,
    canceled,
    timed_out,
    unread,
    other_route,
    agent_freed,

    fn text(r: Reason) []const u8 {
        return switch (r) {
            .idle => "idle longer than keep_alive.idle_ms",
            .server_closed => "the server closed it while it was idle",
            .server_asked => "the server asked to close it (connection: close)",
            .not_kept => "keep_alive.idle_ms is 0: connections are not kept alive",
            .failed => "its request failed",
            .canceled => "its turn was canceled",
            .timed_out => "its request timed out",
            .unread => "its response was not read to the end",
            .other_route => "the next request goes elsewhere",
            .agent_freed => "the agent was freed",
        };
    }
};

/// Where a connection leads, for a line of the log.
pub const Peer = struct {
    host: []const u8,
    port: u16,
    /// HTTPS through this proxy's CONNECT tunnel (host:port).
    tunnel_proxy: ?struct { host: []const u8, port: u16 } = null,
    /// Plain HTTP sent to an HTTP proxy (host and port are the proxy's).
    http_proxy: bool = false,

    pub fn of(c: *Connection) Peer {
        return .{ .host = c.host().bytes, .port = c.port, .http_proxy = c.proxied };
    }

    pub fn format(p: Peer, w: *std.Io.Writer) std.Io.Writer.Error!void {
        try w.print("{s}:{d}", .{ p.host, p.port });
        if (p.tunnel_proxy) |proxy| try w.print(" through the proxy {s}:{d}", .{ proxy.host, proxy.port });
        if (p.http_proxy) try w.writeAll(" (an HTTP proxy)");
    }
};

pub const Log = struct {
    on: bool = false,
    /// Where the lines go (the agent's); null: stderr.
    sink: ?*const Sink = null,
    /// The numbers of the agent's latest std.http connections, by address. A connection's
    /// number is the count of connections the agent had opened once it was opened.
    known: [8]Known = @splat(.{}),
    next_slot: usize = 0,

    const Known = struct { connection: ?*const Connection = null, number: u32 = 0 };

    /// Remembers the number of a std.http connection just opened.
    /// (A closed connection's memory may hold the next one: its entry is then replaced.)
    pub fn opened(l: *Log, c: *const Connection, number: u32) void {
        for (&l.known) |*k| if (k.connection == c) {
            k.number = number;
            return;
        };
        l.known[l.next_slot] = .{ .connection = c, .number = number };
        l.next_slot = (l.next_slot + 1) % l.known.len;
    }

    /// The number of a std.http connection, 0 when forgotten.
    pub fn numberOf(l: *const Log, c: *const Connection) u32 {
        for (l.known) |k| if (k.connection == c) return k.number;
        return 0;
    }

    pub fn request(l: *const Log, number: u32, peer: Peer, reused: bool) void {
        l.print("request on connection {d} to {f} ({s})", .{ number, peer, if (reused) "reused" else "new" });
    }

    pub fn closed(l: *const Log, number: u32, peer: Peer, reason: Reason) void {
        l.print("connection {d} to {f} closed: {s}", .{ number, peer, reason.text() });
    }

    fn print(l: *const Log, comptime fmt: []const u8, args: anytype) void {
        const stderr_sink: Sink = .{ .level = .debug };
        (l.sink orelse &stderr_sink).print(fmt, args);
    }

    /// `closed`, for a std.http connection.
    pub fn closedConnection(l: *const Log, c: *Connection, reason: Reason) void {
        l.closed(l.numberOf(c), .of(c), reason);
    }
};

test "a peer names host:port, and the proxy it goes through" {
    var buf: [160]u8 = undefined;
    try std.testing.expectEqualStrings("api.anthropic.com:443", try std.fmt.bufPrint(&buf, "{f}", .{Peer{ .host = "api.anthropic.com", .port = 443 }}));
    try std.testing.expectEqualStrings(
        "api.openai.com:443 through the proxy 10.0.0.1:3128",
        try std.fmt.bufPrint(&buf, "{f}", .{Peer{ .host = "api.openai.com", .port = 443, .tunnel_proxy = .{ .host = "10.0.0.1", .port = 3128 } }}),
    );
    try std.testing.expectEqualStrings("proxy.corp:3128 (an HTTP proxy)", try std.fmt.bufPrint(&buf, "{f}", .{Peer{ .host = "proxy.corp", .port = 3128, .http_proxy = true }}));
}

test "a connection's number survives its memory holding an older one" {
    var log: Log = .{ .on = true };
    var a: Connection = undefined;
    var b: Connection = undefined;
    log.opened(&a, 1);
    log.opened(&b, 2);
    log.opened(&a, 3); // a closed, the next one allocated at the same address
    try std.testing.expectEqual(@as(u32, 3), log.numberOf(&a));
    try std.testing.expectEqual(@as(u32, 2), log.numberOf(&b));
    var c: Connection = undefined;
    try std.testing.expectEqual(@as(u32, 0), log.numberOf(&c));
}
