//! Name resolution against a real nameserver on loopback (resolve.zig): answers, a nameserver
//! that never answers (the connect deadline ends the lookup), a cancel during the lookup, and
//! an agent whose lookup stalls: a timeout error naming connect_ms, then a cancel, then the same
//! agent runs a full turn once the nameserver answers.
const std = @import("std");
const builtin = @import("builtin");
const c = std.c;
const resolve = @import("resolve.zig");
const watchdog = @import("watchdog.zig");
const test_deadline = @import("../test_deadline.zig");
const Agent = @import("../agent.zig").Agent;
const Stream = @import("../stream.zig").Stream;
const Event = @import("../event.zig").Event;
const FullListener = @import("connect_test.zig").FullListener;
const skipRequest = @import("../stream_test.zig").skipRequest;

/// A UDP nameserver on 127.0.0.1 that answers A and AAAA queries for any name with the
/// addresses it is given, or stays silent. Its thread ends at `stop` (or after
/// test_deadline.limit_ms).
pub const FakeNameserver = struct {
    fd: c.fd_t,
    port: u16,
    thread: std.Thread,
    silent: std.atomic.Value(bool) = .init(true),
    stopping: std.atomic.Value(bool) = .init(false),
    queries: std.atomic.Value(u32) = .init(0),
    a: []const [4]u8 = &.{.{ 127, 0, 0, 1 }},
    aaaa: []const [16]u8 = &.{},
    /// A resolv.conf naming this server.
    conf_path_buf: [64]u8 = undefined,
    conf_path: []const u8 = "",

    pub fn start(ns: *FakeNameserver, silent: bool) !void {
        if (builtin.os.tag != .linux) return error.SkipZigTest;
        const fd = c.socket(c.AF.INET, c.SOCK.DGRAM | c.SOCK.CLOEXEC, 0);
        if (fd < 0) return error.SocketFailed;
        errdefer _ = c.close(fd);
        var addr: c.sockaddr.in = .{ .port = 0, .addr = std.mem.nativeToBig(u32, 0x7f000001) };
        var len: c.socklen_t = @sizeOf(c.sockaddr.in);
        if (c.bind(fd, @ptrCast(&addr), len) != 0 or c.getsockname(fd, @ptrCast(&addr), &len) != 0) return error.BindFailed;
        ns.* = .{ .fd = fd, .port = std.mem.bigToNative(u16, addr.port), .thread = undefined };
        ns.silent.store(silent, .release);
        ns.conf_path = try std.fmt.bufPrint(&ns.conf_path_buf, "/tmp/panto-resolv-test-{d}.conf", .{ns.port});
        var text_buf: [64]u8 = undefined;
        const text = try std.fmt.bufPrint(&text_buf, "nameserver 127.0.0.1:{d}\noptions timeout:30\n", .{ns.port});
        try std.Io.Dir.cwd().writeFile(std.testing.io, .{ .sub_path = ns.conf_path, .data = text });
        ns.thread = try std.Thread.spawn(.{}, serve, .{ns});
    }

    pub fn stop(ns: *FakeNameserver) void {
        ns.stopping.store(true, .release);
        ns.thread.join();
        _ = c.close(ns.fd);
        std.Io.Dir.cwd().deleteFile(std.testing.io, ns.conf_path) catch {};
    }

    fn serve(ns: *FakeNameserver) void {
        var waited_ms: u32 = 0;
        while (!ns.stopping.load(.acquire) and waited_ms < test_deadline.limit_ms) {
            var pfd = [1]c.pollfd{.{ .fd = ns.fd, .events = c.POLL.IN, .revents = 0 }};
            if (c.poll(&pfd, 1, 10) <= 0) {
                waited_ms += 10;
                continue;
            }
            var packet: [512]u8 = undefined;
            var from: c.sockaddr.in6 = undefined;
            var from_len: c.socklen_t = @sizeOf(c.sockaddr.in6);
            const n = c.recvfrom(ns.fd, &packet, packet.len, 0, @ptrCast(&from), &from_len);
            if (n < 12) continue;
            _ = ns.queries.fetchAdd(1, .monotonic);
            if (ns.silent.load(.acquire)) continue;
            var reply: [512]u8 = undefined;
            const len = ns.answer(packet[0..@intCast(n)], &reply) orelse continue;
            _ = c.sendto(ns.fd, &reply, len, 0, @ptrCast(&from), from_len);
        }
    }

    /// The query's question, then one record per address of the asked type.
    fn answer(ns: *const FakeNameserver, query: []const u8, out: *[512]u8) ?usize {
        var i: usize = 12;
        while (i < query.len and query[i] != 0) i += 1 + query[i];
        if (i + 5 > query.len) return null;
        const question_end = i + 5;
        const qtype = std.mem.readInt(u16, query[i + 1 ..][0..2], .big);
        @memcpy(out[0..question_end], query[0..question_end]);
        out[2] = 0x81; // response, RD
        out[3] = 0x80; // RA, no error
        var w = question_end;
        var count: u16 = 0;
        if (qtype == 1) for (ns.a) |bytes| {
            w = record(out, w, 1, &bytes);
            count += 1;
        };
        if (qtype == 28) for (ns.aaaa) |bytes| {
            w = record(out, w, 28, &bytes);
            count += 1;
        };
        std.mem.writeInt(u16, out[6..8], count, .big);
        return w;
    }

    fn record(out: *[512]u8, at: usize, rtype: u16, data: []const u8) usize {
        out[at..][0..2].* = .{ 0xc0, 12 }; // the name: a pointer to the question's
        std.mem.writeInt(u16, out[at + 2 ..][0..2], rtype, .big);
        std.mem.writeInt(u16, out[at + 4 ..][0..2], 1, .big);
        std.mem.writeInt(u32, out[at + 6 ..][0..4], 60, .big);
        std.mem.writeInt(u16, out[at + 10 ..][0..2], @intCast(data.len), .big);
        @memcpy(out[at + 12 ..][0..data.len], data);
        return at + 12 + data.len;
    }
};

fn lookup(ns: *const FakeNameserver, name: []const u8, watch: ?*watchdog.Watch, deadline_ns: u64, out: *resolve.Addresses) resolve.Error!void {
    return resolve.resolve(std.testing.io, name, .{
        .port = 443,
        .watch = watch,
        .deadline_ns = deadline_ns,
        .resolv_conf = ns.conf_path,
        .hosts = "/nonexistent/hosts",
    }, out);
}

test "a name the nameserver knows: its IPv6 and IPv4 addresses alternate, IPv6 first" {
    var ns: FakeNameserver = undefined;
    try ns.start(false);
    defer ns.stop();
    ns.a = &.{ .{ 10, 0, 0, 1 }, .{ 10, 0, 0, 2 }, .{ 10, 0, 0, 3 } };
    ns.aaaa = &.{(std.Io.net.Ip6Address.loopback(0)).bytes};
    var out: resolve.Addresses = .{};
    try lookup(&ns, "api.panto.test", null, 0, &out);
    var text_buf: [256]u8 = undefined;
    var w: std.Io.Writer = .fixed(&text_buf);
    for (out.slice()) |a| try w.print("{f} ", .{a});
    try std.testing.expectEqualStrings("[::1]:443 10.0.0.1:443 10.0.0.2:443 10.0.0.3:443 ", w.buffered());
}

/// The lowest free descriptor: the same after a lookup as before when the lookup closed
/// what it opened (no other thread of these tests opens any meanwhile).
fn lowestFreeFd() !c.fd_t {
    const fd = c.dup(0);
    if (fd < 0) return error.DupFailed;
    _ = c.close(fd);
    return fd;
}

test "a nameserver that never answers: the lookup ends at the deadline, a timeout the watch records" {
    var ns: FakeNameserver = undefined;
    try ns.start(true);
    defer ns.stop();
    const free_fd = try lowestFreeFd();
    var watch: watchdog.Watch = .{};
    defer watchdog.forget(&watch);
    var out: resolve.Addresses = .{};
    try std.testing.expectError(error.Timeout, lookup(&ns, "api.panto.test", &watch, watchdog.nowNs() + 200 * std.time.ns_per_ms, &out));
    try std.testing.expectEqual(watchdog.Reason.timeout, watch.fired.load(.acquire));
    try std.testing.expect(ns.queries.load(.monotonic) >= 2); // A and AAAA were asked
    try std.testing.expectEqual(@as(c.fd_t, -1), watch.fd); // the socket was given back...
    try std.testing.expectEqual(free_fd, try lowestFreeFd()); // ...and closed
}

fn cancelAfter(watch: *watchdog.Watch, ms: u64) void {
    const ts: c.timespec = .{ .sec = 0, .nsec = @intCast(ms * std.time.ns_per_ms) };
    _ = c.nanosleep(&ts, null);
    watchdog.cancel(watch);
}

test "a cancel from another thread ends a lookup the nameserver never answers" {
    var ns: FakeNameserver = undefined;
    try ns.start(true);
    defer ns.stop();
    var watch: watchdog.Watch = .{};
    defer watchdog.forget(&watch);
    const canceler = try std.Thread.spawn(.{}, cancelAfter, .{ &watch, 100 });
    defer canceler.join();
    var out: resolve.Addresses = .{};
    const free_fd = try lowestFreeFd();
    // No deadline: only the cancel (or the resolver's own 30 s) ends it.
    try std.testing.expectError(error.Canceled, lookup(&ns, "api.panto.test", &watch, 0, &out));
    try std.testing.expectEqual(watchdog.Reason.canceled, watch.fired.load(.acquire));
    try std.testing.expectEqual(free_fd, try lowestFreeFd());
}

// ---- An agent whose name lookup stalls -----------------------------------------------------

var resolv_conf: ?[]const u8 = null;
var https_proxy: ?[]const u8 = null;

fn testEnv(name: [:0]const u8) ?[]const u8 {
    if (std.mem.eql(u8, name, "HTTPS_PROXY")) return https_proxy;
    return if (std.mem.eql(u8, name, "PANTO_RESOLV_CONF")) resolv_conf else null;
}

const sse_text =
    "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"model\":\"m\",\"usage\":{\"input_tokens\":1,\"output_tokens\":0}}}\n\n" ++
    "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n" ++
    "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"resolved\"}}\n\n" ++
    "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n" ++
    "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":1}}\n\n" ++
    "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";

/// Answers each request on 127.0.0.1 with `sse_text`, one connection each, until `stop`.
const OneAnswer = struct {
    server: std.Io.net.Server,
    thread: std.Thread,

    fn start(s: *OneAnswer) !void {
        const address = try std.Io.net.IpAddress.parseIp4("127.0.0.1", 0);
        s.server = try address.listen(std.testing.io, .{ .reuse_address = true });
        s.thread = try std.Thread.spawn(.{}, serve, .{s});
    }

    fn port(s: *const OneAnswer) u16 {
        return s.server.socket.address.getPort();
    }

    fn stop(s: *OneAnswer) void {
        // Ends the thread's accept().
        _ = c.shutdown(s.server.socket.handle, 2);
        s.thread.join();
        s.server.deinit(std.testing.io);
    }

    fn serve(s: *OneAnswer) void {
        while (true) s.serveOne() catch |err| if (err == error.AcceptFailed) return;
    }

    fn serveOne(s: *OneAnswer) !void {
        const io = std.testing.io;
        const conn = s.server.accept(io) catch return error.AcceptFailed;
        defer conn.close(io);
        var read_buf: [4096]u8 = undefined;
        var reader = conn.reader(io, &read_buf);
        try skipRequest(&reader.interface);
        var writer = conn.writer(io, &.{});
        try writer.interface.print("HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\ncontent-length: {d}\r\n\r\n{s}", .{ sse_text.len, sse_text });
    }
};

fn cancelStreamAfter(stream: *Stream, ms: u64) void {
    const ts: c.timespec = .{ .sec = 0, .nsec = @intCast(ms * std.time.ns_per_ms) };
    _ = c.nanosleep(&ts, null);
    stream.cancel();
}

test "an agent whose lookup stalls: a timeout naming connect_ms, then a cancel, then a full turn" {
    var ns: FakeNameserver = undefined;
    try ns.start(true);
    defer ns.stop();
    var server: OneAnswer = undefined;
    try server.start();
    defer server.stop();
    const agent = try newAgent(&ns, server.port(), .{ .connect_ms = 200, .total_ms = 20_000 });
    defer agent.deinit();

    // The lookup runs out of connect_ms: the same error as a connect that does.
    try expectLookupTimeout(agent);
    try std.testing.expect(ns.queries.load(.monotonic) >= 2);

    // No connect deadline: a cancel from another thread ends the lookup.
    try expectLookupCanceled(agent);

    // The nameserver answers now: the same agent runs a full turn.
    ns.silent.store(false, .release);
    try fullTurn(agent);
}

/// An agent of `api.panto.test:port`, resolved by `ns`.
fn newAgent(ns: *const FakeNameserver, port: u16, timeouts: @import("../config.zig").Timeouts) !*Agent {
    var url_buf: [64]u8 = undefined;
    const url = try std.fmt.bufPrint(&url_buf, "http://api.panto.test:{d}", .{port});
    const agent = try Agent.init(std.testing.allocator, .{
        .provider = .anthropic,
        .model = "m",
        .base_url = url,
        .api_key = "k",
        .retry = .{ .max_retries = 0 },
        .timeouts = timeouts,
    });
    resolv_conf = ns.conf_path;
    https_proxy = null;
    agent.network.getenv = testEnv;
    return agent;
}

fn fullTurn(agent: *Agent) !void {
    const stream = try agent.run("hi");
    defer stream.destroy();
    var text: std.ArrayList(u8) = .empty;
    defer text.deinit(std.testing.allocator);
    var last: ?Event = null;
    while (try stream.next()) |e| {
        if (e == .content_delta) try text.appendSlice(std.testing.allocator, e.content_delta.text);
        last = e;
    }
    try std.testing.expectEqualStrings("resolved", text.items);
    try std.testing.expect(last.? == .message_complete);
}

test "addresses are tried in order until one connects; the ones after it are never tried" {
    var server: OneAnswer = undefined;
    try server.start();
    defer server.stop();
    // 127.0.0.2 on the server's port: first nobody listens (refused at once), then a
    // listener whose queue is full (a connect to it would hang until the deadline).
    var ns: FakeNameserver = undefined;
    try ns.start(false);
    defer ns.stop();
    {
        ns.a = &.{ .{ 127, 0, 0, 2 }, .{ 127, 0, 0, 1 } };
        const agent = try newAgent(&ns, server.port(), .{ .connect_ms = 2_000, .total_ms = 20_000 });
        defer agent.deinit();
        try fullTurn(agent);
    }
    var hanging = try FullListener.startAt(0x7f000002, server.port());
    defer hanging.stop();
    ns.a = &.{ .{ 127, 0, 0, 1 }, .{ 127, 0, 0, 2 } };
    const agent = try newAgent(&ns, server.port(), .{ .connect_ms = 300, .total_ms = 20_000 });
    defer agent.deinit();
    try fullTurn(agent);
}

test "a proxy whose name lookup stalls: the same timeout naming connect_ms, and a cancel" {
    var ns: FakeNameserver = undefined;
    try ns.start(true);
    defer ns.stop();
    // The provider is never reached: the tunnel's proxy is looked up first.
    const agent = try newAgent(&ns, 9, .{ .connect_ms = 200, .total_ms = 20_000 });
    defer agent.deinit();
    agent.config.base_url = "https://localhost:9";
    https_proxy = "http://proxy.panto.test:3128";
    try expectLookupTimeout(agent);
    try expectLookupCanceled(agent);
    try std.testing.expect(ns.queries.load(.monotonic) >= 4);
}

/// A turn whose lookup runs out of connect_ms: the same error as a connect that does, and the
/// agent is free again.
fn expectLookupTimeout(agent: *Agent) !void {
    const stream = try agent.run("first");
    defer stream.destroy();
    try std.testing.expectError(error.Timeout, stream.next());
    const detail = stream.failureDetail().?;
    try std.testing.expectEqualStrings("timeout_error", detail.error_type.items);
    try std.testing.expect(std.mem.indexOf(u8, detail.message.items, "timeouts.connect_ms") != null);
    try std.testing.expect(!agent.busy);
}

/// With no connect deadline, a turn whose lookup stalls is ended by a cancel from another thread.
fn expectLookupCanceled(agent: *Agent) !void {
    agent.config.timeouts = .{ .connect_ms = 0, .total_ms = 20_000 };
    const stream = try agent.run("second");
    defer stream.destroy();
    const canceler = try std.Thread.spawn(.{}, cancelStreamAfter, .{ stream, 100 });
    defer canceler.join();
    try std.testing.expectError(error.Canceled, stream.next());
    try std.testing.expectEqualStrings("canceled_error", stream.failureDetail().?.error_type.items);
}
