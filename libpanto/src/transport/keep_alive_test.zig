//! The kept-alive connection of an agent, against a loopback HTTP/1.1 server that keeps its
//! connections open and counts them: the requests of a turn and of later turns share one
//! connection; a connection the server closed while idle is replaced silently; a cancel at any
//! instant (while the request is written included) never leaves a broken connection behind.
const std = @import("std");
const Agent = @import("../agent.zig").Agent;
const Stream = @import("../stream.zig").Stream;
const Event = @import("../event.zig").Event;

var server_io_instance: std.Io.Threaded = .init_single_threaded;

const text_message =
    "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"model\":\"m\",\"usage\":{\"input_tokens\":3,\"output_tokens\":1}}}\n\n" ++
    "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n" ++
    "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"hello\"}}\n\n" ++
    "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n" ++
    "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":5}}\n\n" ++
    "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";

const tool_message = @import("../stream_test.zig").tool_message;
const lookup_tool = @import("../stream_test.zig").lookup_tool;

/// One answer of the server's script.
const Answer = struct {
    body: []const u8 = text_message,
    content_length: bool = false,
    /// The last event and the body's end (the chunk terminator) in separate writes, a little
    /// apart, so that the client reads the last event before the body's end arrives.
    split_end: bool = false,
    /// After the answer, close the connection (an idle server closing its keep-alive one).
    close_after: bool = false,
    /// Wait this long before reading the request's body (its writer then blocks, if large).
    read_delay_ms: u64 = 0,
};

/// A keep-alive HTTP/1.1 server: one thread per connection, answers taken in order from the
/// script (the last one repeats), connections counted.
const KeepAliveServer = struct {
    server: std.Io.net.Server,
    port: u16,
    script: []const Answer,
    next_answer: std.atomic.Value(usize) = .init(0),
    connections: std.atomic.Value(u32) = .init(0),
    requests: std.atomic.Value(u32) = .init(0),
    /// Request heads received (a request being written has one).
    heads: std.atomic.Value(u32) = .init(0),
    /// Requests that said `connection: close`.
    close_requested: std.atomic.Value(u32) = .init(0),
    stopping: std.atomic.Value(bool) = .init(false),
    acceptor: std.Thread,
    /// Only the acceptor touches it until it is joined.
    handlers: std.ArrayList(std.Thread) = .empty,

    fn start(s: *KeepAliveServer, script: []const Answer) !void {
        const io = server_io_instance.io();
        const address = try std.Io.net.IpAddress.parseIp4("127.0.0.1", 0);
        s.* = .{ .server = try address.listen(io, .{ .reuse_address = true }), .port = 0, .script = script, .acceptor = undefined };
        s.port = s.server.socket.address.getPort();
        s.acceptor = try std.Thread.spawn(.{}, acceptLoop, .{s});
    }

    /// Stops accepting (a knock wakes the accept), then waits for every connection's thread:
    /// each ends when its client closes the connection (the agent must be freed first).
    fn stop(s: *KeepAliveServer) void {
        const io = server_io_instance.io();
        s.stopping.store(true, .release);
        const address = std.Io.net.IpAddress.parseIp4("127.0.0.1", s.port) catch unreachable;
        if (address.connect(io, .{ .mode = .stream })) |conn| conn.close(io) else |_| {}
        s.acceptor.join();
        for (s.handlers.items) |t| t.join();
        s.handlers.deinit(std.testing.allocator);
        s.server.deinit(io);
    }

    fn acceptLoop(s: *KeepAliveServer) void {
        const io = server_io_instance.io();
        while (!s.stopping.load(.acquire)) {
            const conn = s.server.accept(io) catch return;
            if (s.stopping.load(.acquire)) {
                conn.close(io);
                return;
            }
            _ = s.connections.fetchAdd(1, .monotonic);
            const t = std.Thread.spawn(.{}, serveConnection, .{ s, conn }) catch {
                conn.close(io);
                continue;
            };
            s.handlers.append(std.testing.allocator, t) catch {
                t.join();
            };
        }
    }

    fn serveConnection(s: *KeepAliveServer, conn: std.Io.net.Stream) void {
        const io = server_io_instance.io();
        defer conn.close(io);
        var read_buf: [16 * 1024]u8 = undefined;
        var reader = conn.reader(io, &read_buf);
        var write_buf: [1024]u8 = undefined;
        var writer = conn.writer(io, &write_buf);
        // A client that goes away (a cancel) ends the connection: that is the point.
        while (s.serveRequest(&reader.interface, &writer.interface) catch false) {}
    }

    /// Serves one request; false when the connection is to be closed.
    fn serveRequest(s: *KeepAliveServer, r: *std.Io.Reader, w: *std.Io.Writer) !bool {
        var content_length: usize = 0;
        var close_requested = false;
        while (true) {
            const line = try r.takeDelimiterInclusive('\n');
            if (std.mem.eql(u8, line, "\r\n")) break;
            if (std.ascii.eqlIgnoreCase(std.mem.trimEnd(u8, line, "\r\n"), "connection: close")) close_requested = true;
            if (std.ascii.startsWithIgnoreCase(line, "content-length:"))
                content_length = try std.fmt.parseInt(usize, std.mem.trim(u8, line[15..], " \r\n"), 10);
        }
        _ = s.heads.fetchAdd(1, .release);
        if (close_requested) _ = s.close_requested.fetchAdd(1, .monotonic);
        const i = s.next_answer.fetchAdd(1, .monotonic);
        const a = s.script[@min(i, s.script.len - 1)];
        if (a.read_delay_ms > 0) sleepMs(a.read_delay_ms);
        try r.discardAll(content_length);
        _ = s.requests.fetchAdd(1, .monotonic);

        try w.writeAll("HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n");
        if (a.content_length) {
            try w.print("content-length: {d}\r\n\r\n", .{a.body.len});
            const cut = if (a.split_end) a.body.len - 1 else a.body.len;
            try w.writeAll(a.body[0..cut]);
            try w.flush();
            if (a.split_end) sleepMs(20);
            try w.writeAll(a.body[cut..]);
        } else {
            try w.print("transfer-encoding: chunked\r\n\r\n{x}\r\n{s}\r\n", .{ a.body.len, a.body });
            try w.flush();
            if (a.split_end) sleepMs(20);
            try w.writeAll("0\r\n\r\n");
        }
        try w.flush();
        return !a.close_after;
    }
};

fn sleepMs(ms: u64) void {
    const ts: std.c.timespec = .{ .sec = @intCast(ms / 1000), .nsec = @intCast((ms % 1000) * std.time.ns_per_ms) };
    _ = std.c.nanosleep(&ts, null);
}

fn newAgent(port: u16, max_retries: u32) !*Agent {
    return newAgentKeeping(port, max_retries, .{});
}

fn newAgentKeeping(port: u16, max_retries: u32, keep_alive: @import("../config.zig").KeepAlive) !*Agent {
    var url_buf: [64]u8 = undefined;
    const url = try std.fmt.bufPrint(&url_buf, "http://127.0.0.1:{d}", .{port});
    const agent = try Agent.init(std.testing.allocator, .{
        .provider = .anthropic,
        .model = "m",
        .base_url = url,
        .api_key = "k",
        .capabilities = &.{"search"},
        // A bug fails the test instead of hanging it.
        .timeouts = .{ .total_ms = 10_000 },
        .retry = .{ .max_retries = max_retries, .initial_delay_ms = 1 },
        .keep_alive = keep_alive,
    });
    errdefer agent.deinit();
    var diag: @import("../config.zig").Diagnostic = .{};
    try agent.addTool(lookup_tool, &diag);
    return agent;
}

/// Runs a turn to its end, answering tool calls; fails on a ProviderRetry (retries must not
/// be visible) and returns the last event.
fn runTurn(agent: *Agent, text: []const u8) !Event {
    const stream = try agent.run(text);
    defer stream.destroy();
    var last: ?Event = null;
    while (true) {
        const e = stream.next() catch |err| switch (err) {
            error.ResultPending => {
                try stream.submitToolResult("toolu_1", "found it", false);
                continue;
            },
            else => return err,
        } orelse break;
        if (e == .provider_retry) return error.TestUnexpectedRetry;
        last = e;
    }
    return last.?;
}

fn expectReuse(answers: []const Answer) !void {
    var server: KeepAliveServer = undefined;
    try server.start(answers);
    defer server.stop();
    const agent = try newAgent(server.port, 0);
    defer agent.deinit();
    // A turn with a tool round (two requests), then a plain turn.
    try std.testing.expectEqual(.end_turn, (try runTurn(agent, "find x")).message_complete.stop_reason);
    try std.testing.expectEqual(.end_turn, (try runTurn(agent, "again")).message_complete.stop_reason);
    try std.testing.expectEqual(@as(u32, 3), server.requests.load(.monotonic));
    try std.testing.expectEqual(@as(u32, 1), server.connections.load(.monotonic));
    try std.testing.expectEqual(Agent.Connections{ .opened = 1, .reused = 2 }, agent.connections());
}

test "the requests of a tool round and of the next turn share one connection (chunked, Content-Length)" {
    try expectReuse(&.{ .{ .body = tool_message }, .{} });
    try expectReuse(&.{ .{ .body = tool_message, .content_length = true }, .{ .content_length = true } });
}

test "a body whose end arrives after its last event: the connection is still reused" {
    try expectReuse(&.{ .{ .body = tool_message, .split_end = true }, .{ .split_end = true } });
    try expectReuse(&.{ .{ .body = tool_message, .split_end = true, .content_length = true }, .{ .split_end = true, .content_length = true } });
}

test "keep_alive.idle_ms 0: one connection per request, each closed after its response" {
    var server: KeepAliveServer = undefined;
    try server.start(&.{ .{ .body = tool_message }, .{} });
    defer server.stop();
    const agent = try newAgentKeeping(server.port, 0, .{ .idle_ms = 0 });
    defer agent.deinit();
    try std.testing.expectEqual(.end_turn, (try runTurn(agent, "find x")).message_complete.stop_reason);
    try std.testing.expectEqual(.end_turn, (try runTurn(agent, "again")).message_complete.stop_reason);
    try std.testing.expectEqual(@as(u32, 3), server.requests.load(.monotonic));
    try std.testing.expectEqual(@as(u32, 3), server.connections.load(.monotonic));
    try std.testing.expectEqual(@as(u32, 3), server.close_requested.load(.monotonic));
    try std.testing.expectEqual(Agent.Connections{ .opened = 3, .reused = 0 }, agent.connections());
}

test "a connection idle for longer than keep_alive.idle_ms is closed, not reused" {
    var server: KeepAliveServer = undefined;
    try server.start(&.{.{}});
    defer server.stop();
    const agent = try newAgentKeeping(server.port, 0, .{ .idle_ms = 5 });
    defer agent.deinit();
    _ = try runTurn(agent, "one");
    sleepMs(30); // longer than idle_ms
    _ = try runTurn(agent, "two");
    try std.testing.expectEqual(@as(u32, 2), server.connections.load(.monotonic));
    try std.testing.expectEqual(Agent.Connections{ .opened = 2, .reused = 0 }, agent.connections());
    // set_config changes it for the next request: kept for a minute, the later turns reuse
    // the second turn's connection.
    var diag: @import("../config.zig").Diagnostic = .{};
    try agent.setConfig("{\"keep_alive\":{\"idle_ms\":60000}}", &diag);
    sleepMs(30);
    _ = try runTurn(agent, "three");
    sleepMs(30);
    _ = try runTurn(agent, "four");
    try std.testing.expectEqual(@as(u32, 2), server.connections.load(.monotonic));
    try std.testing.expectEqual(Agent.Connections{ .opened = 2, .reused = 2 }, agent.connections());
}

test "a connection the server closed while idle is replaced silently, retries off or on" {
    for ([_]u32{ 0, 2 }) |max_retries| {
        var server: KeepAliveServer = undefined;
        try server.start(&.{ .{ .close_after = true }, .{} });
        defer server.stop();
        const agent = try newAgent(server.port, max_retries);
        defer agent.deinit();
        _ = try runTurn(agent, "one");
        sleepMs(20); // the server's close arrives
        try std.testing.expectEqual(.end_turn, (try runTurn(agent, "two")).message_complete.stop_reason);
        try std.testing.expectEqual(@as(u32, 2), server.requests.load(.monotonic));
        try std.testing.expectEqual(@as(u32, 2), server.connections.load(.monotonic));
        try std.testing.expectEqual(@as(u32, 2), agent.keep_alive.opened);
        try std.testing.expectEqual(@as(u32, 1), agent.keep_alive.reused); // the stale one, tried first
    }
}

fn cancelAfter(stream: *Stream, us: u64) void {
    const ts: std.c.timespec = .{ .sec = @intCast(us / std.time.us_per_s), .nsec = @intCast((us % std.time.us_per_s) * std.time.ns_per_us) };
    _ = std.c.nanosleep(&ts, null);
    stream.cancel();
}

/// Runs a turn that another thread cancels `us` microseconds after it starts; it either ends
/// canceled or completes (the cancel came too late).
fn canceledTurn(agent: *Agent, text: []const u8, us: u64) !void {
    const stream = try agent.run(text);
    defer stream.destroy();
    const canceler = try std.Thread.spawn(.{}, cancelAfter, .{ stream, us });
    defer canceler.join();
    while (true) {
        const e = stream.next() catch |err| switch (err) {
            error.Canceled => return,
            error.ResultPending => {
                try stream.submitToolResult("toolu_1", "found it", false);
                continue;
            },
            else => return err,
        } orelse return;
        if (e == .provider_retry) return error.TestUnexpectedRetry;
    }
}

/// Cancels once the server has the request's head and the client had time to fill the
/// socket buffers (the server reads the body late), so the cancel lands during the write.
fn cancelWhileWritten(stream: *Stream, server: *KeepAliveServer) void {
    const deadline = @import("watchdog.zig").nowNs() + 5 * std.time.ns_per_s;
    while (server.heads.load(.acquire) == 0 and @import("watchdog.zig").nowNs() < deadline) sleepMs(1);
    sleepMs(50);
    stream.cancel();
}

test "a cancel while the request is written leaves a connection that is not reused" {
    var server: KeepAliveServer = undefined;
    // The first request's body is read late: its 16 MB outgrow the socket buffers and the
    // write blocks until the cancel.
    try server.start(&.{ .{ .read_delay_ms = 300 }, .{} });
    defer server.stop();
    const agent = try newAgent(server.port, 0);
    defer agent.deinit();
    const big = try std.testing.allocator.alloc(u8, 16 << 20);
    defer std.testing.allocator.free(big);
    @memset(big, 'x');
    {
        const stream = try agent.run(big);
        defer stream.destroy();
        const canceler = try std.Thread.spawn(.{}, cancelWhileWritten, .{ stream, &server });
        defer canceler.join();
        try std.testing.expectError(error.Canceled, stream.next());
        try std.testing.expectEqualStrings("canceled_error", stream.failureDetail().?.error_type.items);
    }
    try std.testing.expectEqual(.end_turn, (try runTurn(agent, "again")).message_complete.stop_reason);
    try std.testing.expectEqual(@as(u32, 2), agent.keep_alive.opened);
    try std.testing.expectEqual(@as(u32, 0), agent.keep_alive.reused);
}

test "200 turns canceled at random instants, each followed by a full turn on the same agent" {
    var server: KeepAliveServer = undefined;
    try server.start(&.{ .{ .body = tool_message }, .{ .split_end = true }, .{}, .{ .body = tool_message, .content_length = true }, .{ .content_length = true } });
    defer server.stop();
    const agent = try newAgent(server.port, 0);
    defer agent.deinit();
    var prng: std.Random.DefaultPrng = .init(0x5eed);
    const random = prng.random();
    for (0..200) |_| {
        try canceledTurn(agent, "find x", random.uintLessThan(u64, 3000));
        const last = try runTurn(agent, "again");
        try std.testing.expect(last == .message_complete);
    }
}
