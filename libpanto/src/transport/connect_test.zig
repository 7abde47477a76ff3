//! Opening a connection, over loopback: the connect timeout and cancel while connecting (to a
//! listener whose accept queue is full, so the kernel drops the SYNs and connect() hangs), and
//! HTTPS through a fake proxy that refuses, drops or ignores the CONNECT. The tunnel's success
//! (TLS inside it) is tested by the conformance cases, against the TLS emulator.
const std = @import("std");
const builtin = @import("builtin");
const c = std.c;
const Agent = @import("../agent.zig").Agent;
const Stream = @import("../stream.zig").Stream;
const config = @import("../config.zig");
const test_deadline = @import("../test_deadline.zig");

/// The environment the agents of these tests see: HTTPS_PROXY and no other variable (the
/// system's trust store, then: the tests never get as far as a certificate).
var https_proxy: ?[]const u8 = null;

fn testEnv(name: [:0]const u8) ?[]const u8 {
    return if (std.mem.eql(u8, name, "HTTPS_PROXY")) https_proxy else null;
}

/// Runs a one-message turn to `base_url` that must fail; returns the stream (failed) for its
/// detail. No retries: each failure must surface as it is.
fn failingTurn(agent: *Agent, expected: anyerror) !*Stream {
    const stream = try agent.run("hi");
    errdefer stream.destroy();
    var result = stream.next();
    while (result) |maybe| {
        if (maybe == null) return error.TestExpectedError;
        result = stream.next();
    } else |err| try std.testing.expectEqual(expected, err);
    try std.testing.expectError(@errorCast(expected), stream.next()); // sticky
    try std.testing.expect(!agent.busy);
    return stream;
}

/// The dialer (dial.zig), which bounds connects and shows their sockets to the watchdog from
/// the start, works on Linux only; and other kernels may not drop the SYNs.
fn linuxOnly() !void {
    if (builtin.os.tag != .linux) return error.SkipZigTest;
}

fn newAgent(base_url: []const u8, timeouts: config.Timeouts, proxy_url: ?[]const u8) !*Agent {
    https_proxy = proxy_url;
    const agent = try Agent.init(std.testing.allocator, .{
        .provider = .anthropic,
        .model = "m",
        .base_url = base_url,
        .api_key = "sk-test-key",
        .retry = .{ .max_retries = 0 },
        .timeouts = timeouts,
    });
    agent.network.getenv = testEnv;
    return agent;
}

fn expectMessage(stream: *Stream, error_type: []const u8, part: []const u8) !void {
    const detail = stream.failureDetail().?;
    try std.testing.expectEqualStrings(error_type, detail.error_type.items);
    if (std.mem.indexOf(u8, detail.message.items, part) == null) {
        std.debug.print("message \"{s}\" lacks \"{s}\"\n", .{ detail.message.items, part });
        return error.TestUnexpectedResult;
    }
}

// ---- The direct path: a listener that never completes a handshake ------------------------

/// A loopback listener with a backlog of 0 whose queue is kept full by a connection it never
/// accepts: Linux then drops every SYN, and a connect to it hangs until its timeout.
pub const FullListener = struct {
    fd: c.fd_t,
    fillers: [8]c.fd_t = @splat(-1),
    port: u16,
    url_buf: [32]u8 = undefined,

    fn start() !FullListener {
        return startAt(0x7f000001, 0);
    }

    /// On a loopback address (127.x.y.z, host order) and port (0: any).
    pub fn startAt(ip4: u32, port: u16) !FullListener {
        try linuxOnly();
        const fd = c.socket(c.AF.INET, c.SOCK.STREAM | c.SOCK.CLOEXEC, 0);
        if (fd < 0) return error.SocketFailed;
        errdefer _ = c.close(fd);
        var addr: c.sockaddr.in = .{ .port = std.mem.nativeToBig(u16, port), .addr = std.mem.nativeToBig(u32, ip4) };
        var len: c.socklen_t = @sizeOf(c.sockaddr.in);
        if (c.bind(fd, @ptrCast(&addr), len) != 0 or c.listen(fd, 0) != 0) return error.ListenFailed;
        if (c.getsockname(fd, @ptrCast(&addr), &len) != 0) return error.ListenFailed;
        var l: FullListener = .{ .fd = fd, .port = std.mem.bigToNative(u16, addr.port) };
        // Fill the queue: connect until a connect no longer completes.
        for (&l.fillers) |*filler| {
            const s = c.socket(c.AF.INET, c.SOCK.STREAM | c.SOCK.CLOEXEC | c.SOCK.NONBLOCK, 0);
            if (s < 0) return error.SocketFailed;
            _ = c.connect(s, @ptrCast(&addr), @sizeOf(c.sockaddr.in));
            var pfd = [1]c.pollfd{.{ .fd = s, .events = c.POLL.OUT, .revents = 0 }};
            if (c.poll(&pfd, 1, 200) == 0) {
                _ = c.close(s);
                return l;
            }
            filler.* = s;
        }
        return error.QueueNeverFull;
    }

    pub fn stop(l: *FullListener) void {
        for (l.fillers) |s| if (s >= 0) {
            _ = c.close(s);
        };
        _ = c.close(l.fd);
    }

    fn url(l: *FullListener) []const u8 {
        return std.fmt.bufPrint(&l.url_buf, "http://127.0.0.1:{d}", .{l.port}) catch unreachable;
    }
};

test "a connect that hangs ends in a timeout error after timeouts.connect_ms" {
    var listener = try FullListener.start();
    defer listener.stop();
    const agent = try newAgent(listener.url(), .{ .connect_ms = 200 }, null);
    defer agent.deinit();
    const stream = try failingTurn(agent, error.Timeout);
    defer stream.destroy();
    try expectMessage(stream, "timeout_error", "timeouts.connect_ms");
    // Nothing was sent: the user message is rolled back, and the turn may not be reopened.
    try std.testing.expectEqual(@as(usize, 0), agent.conversation.messages.items.len);
    try std.testing.expectError(error.State, stream.reopen());
}

test "the turn's total timeout also ends a connect that hangs" {
    var listener = try FullListener.start();
    defer listener.stop();
    const agent = try newAgent(listener.url(), .{ .connect_ms = 0, .total_ms = 200 }, null);
    defer agent.deinit();
    const stream = try failingTurn(agent, error.Timeout);
    defer stream.destroy();
    try expectMessage(stream, "timeout_error", "timeouts.total_ms");
}

fn cancelLater(stream: *Stream) void {
    var ts: c.timespec = .{ .sec = 0, .nsec = 150 * std.time.ns_per_ms };
    _ = c.nanosleep(&ts, null);
    stream.cancel();
}

/// Runs a turn of `agent` that hangs while connecting, and cancels it from another thread.
fn expectCanceledWhileConnecting(agent: *Agent) !void {
    const stream = try agent.run("hi");
    defer stream.destroy();
    const canceler = try std.Thread.spawn(.{}, cancelLater, .{stream});
    defer canceler.join();
    try std.testing.expectError(error.Canceled, stream.next());
    try expectMessage(stream, "canceled_error", "canceled");
}

/// Without a cancel, the turns below would end in a timeout: connect_ms is off, total_ms is
/// the safety net.
const cancel_timeouts: config.Timeouts = .{ .connect_ms = 0, .total_ms = 20_000 };

test "a cancel from another thread ends a connect that hangs" {
    var listener = try FullListener.start();
    defer listener.stop();
    const agent = try newAgent(listener.url(), cancel_timeouts, null);
    defer agent.deinit();
    try expectCanceledWhileConnecting(agent);
}

test "a refused connect is retried, and the wait before the retry is not a connect timeout" {
    try linuxOnly();
    // A loopback port nobody listens on: one bound, then closed.
    const fd = c.socket(c.AF.INET, c.SOCK.STREAM | c.SOCK.CLOEXEC, 0);
    if (fd < 0) return error.SocketFailed;
    var addr: c.sockaddr.in = .{ .port = 0, .addr = std.mem.nativeToBig(u32, 0x7f000001) };
    var len: c.socklen_t = @sizeOf(c.sockaddr.in);
    const bound = c.bind(fd, @ptrCast(&addr), len) == 0 and c.getsockname(fd, @ptrCast(&addr), &len) == 0;
    _ = c.close(fd);
    if (!bound) return error.BindFailed;
    var url_buf: [32]u8 = undefined;
    const url = try std.fmt.bufPrint(&url_buf, "http://127.0.0.1:{d}", .{std.mem.bigToNative(u16, addr.port)});
    const agent = try Agent.init(std.testing.allocator, .{
        .provider = .anthropic,
        .model = "m",
        .base_url = url,
        .api_key = "k",
        // The wait (at least 150 ms) outlasts the connect deadline of the first attempt.
        .retry = .{ .max_retries = 1, .initial_delay_ms = 200 },
        .timeouts = .{ .connect_ms = 50 },
    });
    defer agent.deinit();
    agent.network.getenv = testEnv;
    https_proxy = null;
    const stream = try agent.run("hi");
    defer stream.destroy();
    const first = try stream.next();
    try std.testing.expect(first.? == .provider_retry);
    try std.testing.expectError(error.Connection, stream.next());
    try expectMessage(stream, "connection_error", "ConnectionRefused");
}

// ---- HTTPS through a fake proxy -------------------------------------------------------------

var proxy_io_instance: std.Io.Threaded = .init_single_threaded;

/// Accepts one connection, keeps the CONNECT request's head, then answers as told.
const FakeProxy = struct {
    server: std.Io.net.Server,
    thread: std.Thread,
    port: u16,
    behavior: Behavior,
    head: [1024]u8 = undefined,
    head_len: usize = 0,

    const Behavior = union(enum) {
        /// Writes these bytes, then closes.
        answer: []const u8,
        /// Closes without a word.
        close,
        /// Never answers; waits for the client to go away (at most test_deadline.limit_ms).
        silent,
    };

    fn start(p: *FakeProxy, behavior: Behavior) !void {
        const io = proxy_io_instance.io();
        const address = try std.Io.net.IpAddress.parseIp4("127.0.0.1", 0);
        p.* = .{ .server = try address.listen(io, .{ .reuse_address = true }), .thread = undefined, .port = 0, .behavior = behavior };
        p.port = p.server.socket.address.getPort();
        p.thread = try std.Thread.spawn(.{}, serve, .{p});
    }

    fn stop(p: *FakeProxy) void {
        // A test that failed before connecting leaves the thread in accept(): end it.
        _ = c.shutdown(p.server.socket.handle, 2);
        p.thread.join();
        p.server.deinit(proxy_io_instance.io());
    }

    fn serve(p: *FakeProxy) void {
        p.serveOne() catch {};
    }

    fn serveOne(p: *FakeProxy) !void {
        const io = proxy_io_instance.io();
        const conn = try p.server.accept(io);
        defer conn.close(io);
        var read_buf: [1024]u8 = undefined;
        var reader = conn.reader(io, &read_buf);
        while (true) {
            const line = try reader.interface.takeDelimiterInclusive('\n');
            if (p.head_len + line.len > p.head.len) return error.HeadTooLarge;
            @memcpy(p.head[p.head_len..][0..line.len], line);
            p.head_len += line.len;
            if (std.mem.eql(u8, line, "\r\n")) break;
        }
        switch (p.behavior) {
            .answer => |bytes| {
                var writer = conn.writer(io, &.{});
                try writer.interface.writeAll(bytes);
            },
            .close => {},
            .silent => test_deadline.awaitPeer(conn.socket.handle),
        }
    }

    fn request(p: *const FakeProxy) []const u8 {
        return p.head[0..p.head_len];
    }

    fn url(p: *const FakeProxy, buf: []u8, credentials: []const u8) ![]const u8 {
        return std.fmt.bufPrint(buf, "http://{s}127.0.0.1:{d}", .{ credentials, p.port });
    }
};

const provider_url = "https://localhost:9";

/// A turn to `provider_url` through a fake proxy that behaves as told, which must fail with
/// `expected`. The proxy URL carries `credentials` ("user:password@" or "").
const ProxyTurn = struct {
    proxy: FakeProxy,
    url_buf: [96]u8,
    agent: *Agent,
    stream: *Stream,

    fn run(t: *ProxyTurn, behavior: FakeProxy.Behavior, credentials: []const u8, timeouts: config.Timeouts, expected: anyerror) !void {
        try t.proxy.start(behavior);
        errdefer t.proxy.stop();
        t.agent = try newAgent(provider_url, timeouts, try t.proxy.url(&t.url_buf, credentials));
        errdefer t.agent.deinit();
        t.stream = try failingTurn(t.agent, expected);
    }

    fn deinit(t: *ProxyTurn) void {
        t.stream.destroy();
        t.agent.deinit();
        t.proxy.stop();
    }
};

test "a proxy's 407 is a connection error that says so, and never shows the credentials" {
    var turn: ProxyTurn = undefined;
    // "se%40cretpw" is the password "se@cretpw" in a URL.
    try turn.run(.{ .answer = "HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm=\"x\"\r\nContent-Length: 0\r\n\r\n" }, "panto:se%40cretpw@", .{}, error.Connection);
    defer turn.deinit();
    try expectMessage(turn.stream, "connection_error", "407 Proxy Authentication Required");
    try expectMessage(turn.stream, "connection_error", "refused the credentials");
    const message = turn.stream.failureDetail().?.message.items;
    try std.testing.expect(std.mem.indexOf(u8, message, "cretpw") == null);
    try std.testing.expect(std.mem.indexOf(u8, message, "panto") == null);
    // What the proxy got: the target, and the credentials percent-decoded, in Basic form.
    var expected_auth: [64]u8 = undefined;
    const basic = std.base64.standard.Encoder.encode(&expected_auth, "panto:se@cretpw");
    const head = turn.proxy.request();
    try std.testing.expect(std.mem.startsWith(u8, head, "CONNECT localhost:9 HTTP/1.1\r\n"));
    try std.testing.expect(std.mem.indexOf(u8, head, "host: localhost:9\r\n") != null);
    var line_buf: [96]u8 = undefined;
    try std.testing.expect(std.mem.indexOf(u8, head, try std.fmt.bufPrint(&line_buf, "proxy-authorization: Basic {s}\r\n", .{basic})) != null);
    // The API key never goes to the proxy.
    try std.testing.expect(std.mem.indexOf(u8, head, "sk-test-key") == null);
}

test "a 407 without credentials in the proxy URL says where they go" {
    var turn: ProxyTurn = undefined;
    try turn.run(.{ .answer = "HTTP/1.1 407 Proxy Authentication Required\r\n\r\n" }, "", .{}, error.Connection);
    defer turn.deinit();
    try expectMessage(turn.stream, "connection_error", "put them in the proxy URL");
    try std.testing.expect(std.mem.indexOf(u8, turn.proxy.request(), "proxy-authorization") == null);
}

test "a proxy that forbids the tunnel, closes, or does not speak HTTP: connection errors" {
    const cases = [_]struct { FakeProxy.Behavior, []const u8 }{
        .{ .{ .answer = "HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n" }, "refused the tunnel to localhost:9: 403 Forbidden" },
        .{ .{ .answer = "HTTP/1.0 502 Bad\x01Gateway\r\n\r\n" }, "502 Bad?Gateway" },
        .{ .close, "closed the connection without answering CONNECT localhost:9" },
        .{ .{ .answer = "HTTP/1.1 200 Connection established\r\n" }, "closed the connection without answering" },
        .{ .{ .answer = "SSH-2.0-OpenSSH_9.6\r\n\r\n" }, "did not answer CONNECT with HTTP" },
    };
    for (cases) |case| {
        var turn: ProxyTurn = undefined;
        try turn.run(case[0], "", .{}, error.Connection);
        defer turn.deinit();
        try expectMessage(turn.stream, "connection_error", case[1]);
    }
}

test "a proxy that never answers CONNECT: a timeout after timeouts.connect_ms" {
    try linuxOnly();
    var turn: ProxyTurn = undefined;
    try turn.run(.silent, "", .{ .connect_ms = 200 }, error.Timeout);
    defer turn.deinit();
    try expectMessage(turn.stream, "timeout_error", "timeouts.connect_ms");
}

test "a proxy that never answers CONNECT: a cancel from another thread ends the wait" {
    try linuxOnly();
    var proxy: FakeProxy = undefined;
    try proxy.start(.silent);
    defer proxy.stop();
    var url_buf: [96]u8 = undefined;
    const agent = try newAgent(provider_url, cancel_timeouts, try proxy.url(&url_buf, ""));
    defer agent.deinit();
    try expectCanceledWhileConnecting(agent);
}

test "an https:// proxy URL is refused with a reason" {
    const agent = try newAgent(provider_url, .{}, "https://127.0.0.1:1");
    defer agent.deinit();
    const stream = try failingTurn(agent, error.Connection);
    defer stream.destroy();
    try expectMessage(stream, "connection_error", "TLS to the proxy itself is not supported");
}

test "a proxy URL with a line break is a connection error at request time, not an injection" {
    const agent = try newAgent(provider_url, .{}, "http://panto:s3cret@127.0.0.1:1\r\nX-Injected: yes");
    defer agent.deinit();
    const stream = try failingTurn(agent, error.Connection);
    defer stream.destroy();
    try expectMessage(stream, "connection_error", "contains a control character");
    const message = stream.failureDetail().?.message.items;
    try std.testing.expect(std.mem.indexOf(u8, message, "s3cret") == null);
    try std.testing.expect(std.mem.indexOf(u8, message, "Injected") == null);
    // Refused before anything was sent: the user message is rolled back.
    try std.testing.expectEqual(@as(usize, 0), agent.conversation.messages.items.len);
}
