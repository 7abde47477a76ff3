//! Turns driven without blocking (stream_step.zig) against loopback servers, by a poll() loop
//! in the test: whole turns over chunked and Content-Length bodies, deadlines kept without the
//! watchdog thread (a server that never answers, a connect that never completes), and a
//! cancel from another thread while the stream is parked.
const std = @import("std");
const builtin = @import("builtin");
const c = std.c;
const Agent = @import("agent.zig").Agent;
const Stream = @import("stream.zig").Stream;
const Event = @import("event.zig").Event;
const stream_step = @import("stream_step.zig");
const fiber = @import("transport/fiber.zig");
const watchdog = @import("transport/watchdog.zig");
const stream_test = @import("stream_test.zig");
const TestServer = stream_test.TestServer;
const FullListener = @import("transport/connect_test.zig").FullListener;
const test_deadline = @import("test_deadline.zig");

fn skipUnlessSupported() !void {
    if (!fiber.supported) return error.SkipZigTest;
}

/// Waits as the step asked: the descriptor for its direction, or the deadline, whichever
/// first (what an event loop does).
fn waitFor(w: stream_step.Wait) void {
    var timeout_ms: c_int = -1;
    if (w.deadline_ns != 0) {
        const now = watchdog.nowNs();
        timeout_ms = if (w.deadline_ns <= now) 0 else @intCast(@min((w.deadline_ns - now + std.time.ns_per_ms - 1) / std.time.ns_per_ms, std.math.maxInt(c_int)));
    }
    // Never longer than the test servers' own limit: a broken wait fails instead of hanging.
    if (timeout_ms < 0 or timeout_ms > test_deadline.limit_ms) timeout_ms = test_deadline.limit_ms;
    if (w.fd < 0) {
        var none: [1]c.pollfd = undefined;
        _ = c.poll(&none, 0, timeout_ms);
        return;
    }
    const events: i16 = switch (w.direction) {
        .read => c.POLL.IN,
        .write => c.POLL.OUT,
        .none => 0,
    };
    var pfd = [1]c.pollfd{.{ .fd = w.fd, .events = events, .revents = 0 }};
    _ = c.poll(&pfd, 1, timeout_ms);
}

const Driven = struct {
    text: std.ArrayList(u8) = .empty,
    last: ?Event = null,
    /// How many steps said would_block: the turn did wait without blocking.
    blocked: usize = 0,
    /// Of those, the waits for a deadline alone (no descriptor).
    deadline_only: usize = 0,

    fn deinit(d: *Driven) void {
        d.text.deinit(std.testing.allocator);
    }
};

/// Steps `stream` to its end (or its error), waiting in a poll() loop; the watchdog thread
/// never holds the stream.
fn drive(stream: *Stream, out: *Driven) !void {
    while (true) {
        const step = try stream.step();
        try std.testing.expect(!stream.watch.listed);
        switch (step) {
            .event => |e| {
                if (e.* == .content_delta) try out.text.appendSlice(std.testing.allocator, e.content_delta.text);
                if (e.* == .block_complete) try std.testing.expectEqualStrings(out.text.items, e.block_complete.text);
                out.last = e.*;
            },
            .done => return,
            .would_block => |w| {
                out.blocked += 1;
                if (w.fd < 0) out.deadline_only += 1;
                waitFor(w);
            },
        }
    }
}

fn expectSteppedTurn(answer: stream_test.Answer) !void {
    var server: TestServer = undefined;
    try server.start(answer);
    defer server.stop();
    const agent = try stream_test.loopbackAgent(server.port, .{ .provider = .anthropic, .model = "m" });
    defer agent.deinit();
    const stream = try agent.run("hi");
    defer stream.destroy();
    var d: Driven = .{};
    defer d.deinit();
    try drive(stream, &d);
    try std.testing.expectEqualStrings("h\xc3\xa9llo w\xc3\xb6rld", d.text.items);
    const last = d.last.?.message_complete;
    try std.testing.expectEqual(.end_turn, last.stop_reason);
    try std.testing.expectEqual(@as(u64, 5), last.usage.output_tokens);
    // (Whether it waited depends on how fast the server answers: the failures' tests below
    // must wait, and do.)
    try std.testing.expect(try stream.step() == .done); // over stays over
    try std.testing.expectEqual(@as(usize, 2), agent.conversation.messages.items.len);
}

test "a stepped turn over a chunked body, whole and in 1 and 64 byte pieces" {
    try skipUnlessSupported();
    for ([_]usize{ 1 << 20, 1, 64 }) |piece| try expectSteppedTurn(.{ .framing = .chunked, .piece = piece });
}

test "a stepped turn over a Content-Length body, whole and in 7 byte pieces" {
    try skipUnlessSupported();
    for ([_]usize{ 1 << 20, 7 }) |piece| try expectSteppedTurn(.{ .framing = .content_length, .piece = piece });
}

test "a second stepped turn runs on the first's stack, taken back from the pool trimmed at the first's end" {
    try skipUnlessSupported();
    var server: TestServer = undefined;
    try server.startMany(.{ .framing = .chunked }, &.{.{}});
    defer server.stop();
    const agent = try stream_test.loopbackAgent(server.port, .{ .provider = .anthropic, .model = "m" });
    defer agent.deinit();
    var stacks: [2][*]const u8 = undefined;
    for (&stacks) |*stack| {
        const stream = try agent.run("hi");
        defer stream.destroy();
        var d: Driven = .{};
        defer d.deinit();
        // (The first step cannot end the turn: it gives MessageStart at the soonest.)
        if (try stream.step() == .would_block) d.blocked += 1;
        stack.* = stream.stepper.?.driver.fiber.mapping.ptr;
        try drive(stream, &d);
        try std.testing.expectEqualStrings("h\xc3\xa9llo w\xc3\xb6rld", d.text.items);
        // Over, not yet freed: its stack is back in the pool already, and the end stays;
        // its body buffer was freed with the answer's end (parked for the next request).
        try std.testing.expect(stream.stepper == null);
        try std.testing.expectEqual(@as(usize, 0), stream.body.small.len);
        try std.testing.expect(fiber.pool.holds(stack.*));
        try std.testing.expect(try stream.step() == .done);
        try std.testing.expect(try stream.next() == null);
        try std.testing.expect(stream.stepper == null);
    }
    try std.testing.expectEqual(stacks[0], stacks[1]);
}

/// A listener that takes connections into its queue and never answers them.
const SilentListener = struct {
    fd: c.fd_t,
    port: u16,

    fn start() !SilentListener {
        const fd = c.socket(c.AF.INET, c.SOCK.STREAM | c.SOCK.CLOEXEC, 0);
        if (fd < 0) return error.SocketFailed;
        errdefer _ = c.close(fd);
        var addr: c.sockaddr.in = .{ .port = 0, .addr = std.mem.nativeToBig(u32, 0x7f000001) };
        var len: c.socklen_t = @sizeOf(c.sockaddr.in);
        if (c.bind(fd, @ptrCast(&addr), len) != 0 or c.listen(fd, 8) != 0) return error.ListenFailed;
        if (c.getsockname(fd, @ptrCast(&addr), &len) != 0) return error.ListenFailed;
        return .{ .fd = fd, .port = std.mem.bigToNative(u16, addr.port) };
    }

    fn stop(l: *SilentListener) void {
        _ = c.close(l.fd);
    }
};

/// Steps a turn to its failure; the stream must wait at least once on the way.
fn expectSteppedFailure(stream: *Stream, expected: anyerror) !void {
    var d: Driven = .{};
    defer d.deinit();
    try std.testing.expectError(expected, drive(stream, &d));
    try std.testing.expect(d.blocked > 0);
    try std.testing.expect(stream.stepper == null); // (its fiber went back at the turn's end)
    try std.testing.expectError(expected, stream.step()); // sticky
}

test "a stepped turn whose server never answers times out on the step's deadline, without the watchdog" {
    try skipUnlessSupported();
    var listener: SilentListener = try .start();
    defer listener.stop();
    const agent = try stream_test.loopbackAgent(listener.port, .{ .provider = .anthropic, .model = "m", .retry = .{ .max_retries = 0 }, .timeouts = .{ .first_byte_ms = 150 } });
    defer agent.deinit();
    const stream = try agent.run("hi");
    defer stream.destroy();
    try expectSteppedFailure(stream, error.Timeout);
    try std.testing.expectEqualStrings("no answer from the provider within timeouts.first_byte_ms", stream.failureDetail().?.message.items);
    try std.testing.expect(!agent.busy);
}

test "a stepped stream waiting for its answer keeps only its live frames' stack pages resident" {
    try skipUnlessSupported();
    var listener: SilentListener = try .start();
    defer listener.stop();
    const agent = try stream_test.loopbackAgent(listener.port, .{ .provider = .anthropic, .model = "m", .retry = .{ .max_retries = 0 } });
    defer agent.deinit();
    const stream = try agent.run("hi");
    defer stream.destroy();
    while (true) switch (try stream.step()) {
        .event, .done => return error.TestUnexpectedResult,
        .would_block => |w| if (w.fd >= 0 and w.direction == .read) break else waitFor(w),
    };
    // Parked in the response head's read: the frames below it (the connect, the request's
    // write) are dead and were given back at the park; the live frames and stack_trim's
    // margin stay (Debug: 44 KB; 84 KB without the trim at the park).
    const resident = fiber.residentPages(&stream.stepper.?.driver.fiber).? * std.heap.pageSize();
    const limit: usize = if (builtin.mode == .Debug) 52 * 1024 else 40 * 1024;
    if (resident > limit) {
        std.debug.print("{d} KB of the fiber's stack resident at the head wait\n", .{resident / 1024});
        return error.TestUnexpectedResult;
    }
}

test "a stepped stream waiting for its answer holds no request body (it was sent), nor a body buffer or an event buffer (none came)" {
    try skipUnlessSupported();
    var listener: SilentListener = try .start();
    defer listener.stop();
    const agent = try stream_test.loopbackAgent(listener.port, .{ .provider = .anthropic, .model = "m", .retry = .{ .max_retries = 0 } });
    defer agent.deinit();
    const stream = try agent.run("hi");
    defer stream.destroy();
    while (true) switch (try stream.step()) {
        .event, .done => return error.TestUnexpectedResult,
        .would_block => |w| if (w.fd >= 0 and w.direction == .read) break else waitFor(w),
    };
    try std.testing.expectEqual(@as(usize, 0), stream.request_body.writer.buffer.len);
    try std.testing.expectEqual(@as(usize, 0), stream.body.small.len);
    try std.testing.expectEqual(@as(usize, 0), stream.event_arena.small.len);
}

test "a stepped connect that never completes times out on connect_ms, without the watchdog" {
    try skipUnlessSupported();
    var listener = FullListener.startAt(0x7f000001, 0) catch |err| switch (err) {
        error.QueueNeverFull => return error.SkipZigTest, // (a kernel that never fills it)
        else => return err,
    };
    defer listener.stop();
    const agent = try stream_test.loopbackAgent(listener.port, .{ .provider = .anthropic, .model = "m", .retry = .{ .max_retries = 0 }, .timeouts = .{ .connect_ms = 150 } });
    defer agent.deinit();
    const stream = try agent.run("hi");
    defer stream.destroy();
    try expectSteppedFailure(stream, error.Timeout);
    try std.testing.expectEqualStrings("no connection to the provider within timeouts.connect_ms", stream.failureDetail().?.message.items);
}

/// Steps until the stream is parked after its first text delta (the server stalls there).
fn stepUntilParkedInText(stream: *Stream) !stream_step.Wait {
    var seen_text = false;
    while (true) switch (try stream.step()) {
        .event => |e| if (e.* == .content_delta) {
            seen_text = true;
        },
        .done => return error.TestUnexpectedResult,
        .would_block => |w| {
            if (seen_text) return w;
            waitFor(w);
        },
    };
}

const stalled_answer: stream_test.Answer = .{
    .body = stream_test.sse_body[0 .. std.mem.indexOf(u8, stream_test.sse_body, "event: content_block_stop").?],
    .framing = .content_length,
    .stall = true,
};

test "a stepped stream parked mid-message is canceled from another thread: the fd wakes, the step is Canceled" {
    try skipUnlessSupported();
    var server: TestServer = undefined;
    try server.start(stalled_answer);
    defer server.stop();
    const agent = try stream_test.loopbackAgent(server.port, .{ .provider = .anthropic, .model = "m", .retry = .{ .max_retries = 0 } });
    defer agent.deinit();
    const stream = try agent.run("hi");
    defer stream.destroy();
    const w = try stepUntilParkedInText(stream);
    try std.testing.expect(w.fd >= 0 and w.direction == .read);
    const canceler = try std.Thread.spawn(.{}, Stream.cancel, .{stream});
    canceler.join();
    // The cancel shut the socket down: a loop waiting on it wakes at once.
    var pfd = [1]c.pollfd{.{ .fd = w.fd, .events = c.POLL.IN, .revents = 0 }};
    try std.testing.expectEqual(@as(c_int, 1), c.poll(&pfd, 1, test_deadline.limit_ms));
    try std.testing.expectError(error.Canceled, stream.step());
    try std.testing.expectError(error.Canceled, stream.step());
    const last = agent.conversation.messages.items[agent.conversation.messages.items.len - 1];
    try std.testing.expectEqual(.aborted, last.stop_reason);
    try std.testing.expect(!agent.busy);
}

test "a stepped stream freed while parked unwinds its fiber: nothing leaks, the agent goes on" {
    try skipUnlessSupported();
    var server: TestServer = undefined;
    try server.startMany(stalled_answer, &.{.{}});
    defer server.stop();
    const agent = try stream_test.loopbackAgent(server.port, .{ .provider = .anthropic, .model = "m", .retry = .{ .max_retries = 0 } });
    defer agent.deinit();
    const stream = try agent.run("hi");
    _ = try stepUntilParkedInText(stream);
    stream.destroy(); // (the testing allocator reports anything the fiber's frames held)
    try std.testing.expect(!agent.busy);
    // The next turn, blocking this time, on the same agent.
    const again = try agent.run("again");
    defer again.destroy();
    while (try again.next()) |_| {}
}

/// Steps until an event of `tag` (waiting as asked); the waits seen are counted in `out`.
fn stepUntil(stream: *Stream, tag: std.meta.Tag(Event), out: *Driven) !Event {
    while (true) switch (try stream.step()) {
        .event => |e| if (e.* == tag) return e.*,
        .done => return error.TestUnexpectedEnd,
        .would_block => |w| {
            out.blocked += 1;
            if (w.fd < 0) out.deadline_only += 1;
            waitFor(w);
        },
    };
}

test "a stepped retry waits its delay on the stream's wake descriptor, then the turn goes on" {
    try skipUnlessSupported();
    var server: TestServer = undefined;
    const overloaded: stream_test.Answer = .{
        .status = "529 Overloaded",
        .content_type = "application/json",
        .body = "{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}",
        .framing = .content_length,
    };
    try server.startMany(overloaded, &.{.{}});
    defer server.stop();
    // A delay of 300-400 ms: the step after the ProviderRetry event comes well before it ends.
    const agent = try stream_test.loopbackAgent(server.port, .{ .provider = .anthropic, .model = "m", .retry = .{ .initial_delay_ms = 400 } });
    defer agent.deinit();
    const stream = try agent.run("hi");
    defer stream.destroy();
    var d: Driven = .{};
    defer d.deinit();
    const retry = (try stepUntil(stream, .provider_retry, &d)).provider_retry;
    try std.testing.expectEqual(@as(u16, 529), retry.http_status);
    // The delay: a wait on the wake descriptor (readable only after a cancel) until its end.
    const w = (try stream.step()).would_block;
    try std.testing.expect(w.fd >= 0 and w.fd == stream.stepper.?.driver.wake_fd and w.direction == .read);
    try std.testing.expect(w.deadline_ns > 0);
    waitFor(w);
    try drive(stream, &d);
    try std.testing.expectEqual(@as(usize, 0), d.deadline_only);
    try std.testing.expectEqual(.end_turn, d.last.?.message_complete.stop_reason);
}

test "a stepped retry's delay canceled from another thread: the wake descriptor wakes the loop at once" {
    try skipUnlessSupported();
    var server: TestServer = undefined;
    try server.start(.{
        .status = "529 Overloaded",
        .content_type = "application/json",
        .body = "{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}",
        .framing = .content_length,
    });
    defer server.stop();
    const agent = try stream_test.loopbackAgent(server.port, .{ .provider = .anthropic, .model = "m", .retry = .{ .initial_delay_ms = 60_000 } });
    defer agent.deinit();
    const stream = try agent.run("hi");
    defer stream.destroy();
    var d: Driven = .{};
    defer d.deinit();
    _ = try stepUntil(stream, .provider_retry, &d);
    const w = (try stream.step()).would_block;
    try std.testing.expect(w.fd >= 0 and w.direction == .read);
    var pfd = [1]c.pollfd{.{ .fd = w.fd, .events = c.POLL.IN, .revents = 0 }};
    try std.testing.expectEqual(@as(c_int, 0), c.poll(&pfd, 1, 0)); // (nothing before the cancel)
    const canceler = try std.Thread.spawn(.{}, Stream.cancel, .{stream});
    canceler.join();
    try std.testing.expectEqual(@as(c_int, 1), c.poll(&pfd, 1, test_deadline.limit_ms));
    try std.testing.expectError(error.Canceled, stream.step());
    try std.testing.expect(!agent.busy);
}

test "a stepped host tool round: ResultPending until the result is submitted, then the next message" {
    try skipUnlessSupported();
    var server: TestServer = undefined;
    try server.startMany(.{ .body = stream_test.tool_message }, &.{.{}});
    defer server.stop();
    const agent = try stream_test.loopbackAgent(server.port, .{ .provider = .anthropic, .model = "m", .capabilities = &.{"search"} });
    defer agent.deinit();
    var diag: @import("config.zig").Diagnostic = .{};
    try agent.addTool(stream_test.lookup_tool, &diag);
    const stream = try agent.run("find x");
    defer stream.destroy();
    var d: Driven = .{};
    defer d.deinit();
    const start = (try stepUntil(stream, .tool_call_start, &d)).tool_call_start;
    try std.testing.expect(start.awaiting_result);
    try std.testing.expectError(error.ResultPending, stream.step());
    try std.testing.expectError(error.ResultPending, stream.step()); // not sticky, nothing lost
    try stream.submitToolResult("toolu_1", "found it", false);
    const result = (try stepUntil(stream, .tool_result, &d)).tool_result;
    try std.testing.expectEqualStrings("found it", result.content);
    try drive(stream, &d);
    try std.testing.expectEqual(.end_turn, d.last.?.message_complete.stop_reason);
    // user, assistant (tool_use), user (tool_result), assistant (text)
    try std.testing.expectEqual(@as(usize, 4), agent.conversation.messages.items.len);
}

test "a stepped round with a steer and a follow-up: the steer after the result, the follow-up's turn after the first's end" {
    try skipUnlessSupported();
    var server: TestServer = undefined;
    try server.startMany(.{ .body = stream_test.tool_message }, &.{ .{}, .{} });
    defer server.stop();
    const agent = try stream_test.toolAgent(server.port, &.{"search"}, 10);
    defer agent.deinit();
    const stream = try agent.run("find x");
    defer stream.destroy();
    var d: Driven = .{};
    defer d.deinit();
    try stream.followUp("and then?");
    _ = try stepUntil(stream, .tool_call_start, &d);
    try stream.steer("look for y");
    try stream.submitToolResult("toolu_1", "found it", false);
    _ = try stepUntil(stream, .tool_result, &d);
    const steered = (try stepUntil(stream, .user_message, &d)).user_message;
    try std.testing.expectEqual(.steer, steered.source);
    _ = try stepUntil(stream, .message_complete, &d);
    const followed = (try stepUntil(stream, .user_message, &d)).user_message;
    try std.testing.expectEqual(.follow_up, followed.source);
    try std.testing.expectEqualStrings("and then?", followed.text);
    try drive(stream, &d);
    try std.testing.expectEqual(.end_turn, d.last.?.message_complete.stop_reason);
    // user, assistant (tool_use), user (result + steer), assistant, user (follow-up), assistant
    try std.testing.expectEqual(@as(usize, 6), agent.conversation.messages.items.len);
    try @import("budget_test.zig").expectValidNextRequest(agent);
}

/// A server that answers the head and the message's first events, then only SSE comments
/// (pings, no progress), every 20 ms, until the client goes away (at most the tests' limit).
const SlowLoris = struct {
    fd: c.fd_t,
    port: u16,
    thread: std.Thread = undefined,

    fn start(l: *SlowLoris) !void {
        const fd = c.socket(c.AF.INET, c.SOCK.STREAM | c.SOCK.CLOEXEC, 0);
        if (fd < 0) return error.SocketFailed;
        errdefer _ = c.close(fd);
        var addr: c.sockaddr.in = .{ .port = 0, .addr = std.mem.nativeToBig(u32, 0x7f000001) };
        var len: c.socklen_t = @sizeOf(c.sockaddr.in);
        if (c.bind(fd, @ptrCast(&addr), len) != 0 or c.listen(fd, 8) != 0) return error.ListenFailed;
        if (c.getsockname(fd, @ptrCast(&addr), &len) != 0) return error.ListenFailed;
        l.* = .{ .fd = fd, .port = std.mem.bigToNative(u16, addr.port) };
        l.thread = try std.Thread.spawn(.{}, serve, .{l.fd});
    }

    fn stop(l: *SlowLoris) void {
        l.thread.join();
        _ = c.close(l.fd);
    }

    fn serve(listen_fd: c.fd_t) void {
        const conn = c.accept(listen_fd, null, null);
        if (conn < 0) return;
        defer _ = c.close(conn);
        const head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n";
        var buf: [1024]u8 = undefined;
        const events = comptime stream_test.sse_body[0..std.mem.indexOf(u8, stream_test.sse_body, ": a comment").?];
        const first = std.fmt.bufPrint(&buf, "{s}{x}\r\n{s}\r\n", .{ head, events.len, events }) catch return;
        if (c.send(conn, first.ptr, first.len, c.MSG.NOSIGNAL) < 0) return;
        const ping = "8\r\n: ping\n\n\r\n";
        for (0..test_deadline.limit_ms / 20) |_| {
            if (c.send(conn, ping.ptr, ping.len, c.MSG.NOSIGNAL) < 0) return;
            // Until the client goes away, 20 ms at a time.
            var pfd = [1]c.pollfd{.{ .fd = conn, .events = c.POLL.IN, .revents = 0 }};
            if (c.poll(&pfd, 1, 20) > 0) {
                const n = c.recv(conn, &buf, buf.len, 0);
                if (n <= 0) return; // (the request's bytes come first: read and go on)
            }
        }
    }
};

test "a stepped turn whose server sends only pings (slow-loris) times out on idle_ms, without the watchdog" {
    try skipUnlessSupported();
    var server: SlowLoris = undefined;
    try server.start();
    defer server.stop();
    const agent = try stream_test.loopbackAgent(server.port, .{ .provider = .anthropic, .model = "m", .retry = .{ .max_retries = 0 }, .timeouts = .{ .idle_ms = 200 } });
    defer agent.deinit();
    const stream = try agent.run("hi");
    defer stream.destroy();
    try expectSteppedFailure(stream, error.Timeout);
    try std.testing.expectEqualStrings("no progress from the provider within timeouts.idle_ms", stream.failureDetail().?.message.items);
}

test "stepped turns canceled at random instants end Canceled or done, leak nothing, and free the agent" {
    try skipUnlessSupported();
    var prng = std.Random.DefaultPrng.init(28);
    const random = prng.random();
    for (0..24) |_| {
        var server: TestServer = undefined;
        try server.start(.{ .framing = .chunked, .piece = 3 });
        defer server.stop();
        const agent = try stream_test.loopbackAgent(server.port, .{ .provider = .anthropic, .model = "m", .retry = .{ .max_retries = 0 } });
        defer agent.deinit();
        const stream = try agent.run("hi");
        defer stream.destroy();
        // Some steps (events or waits) in, then a cancel; every later step says how it ended.
        const steps = random.uintLessThan(usize, 60);
        // Over once MessageComplete was handed out: a cancel then changes nothing.
        var over = false;
        for (0..steps) |_| switch (try stream.step()) {
            .event => |e| over = e.* == .message_complete,
            .done => break,
            .would_block => |w| waitFor(w),
        };
        stream.cancel();
        if (over) {
            try std.testing.expect(try stream.step() == .done);
        } else {
            try std.testing.expectError(error.Canceled, stream.step());
        }
        try std.testing.expect(!agent.busy);
    }
}

test "next() on a stepped stream is a usage error while its turn runs (nothing changes), and reads its end once over" {
    try skipUnlessSupported();
    var server: TestServer = undefined;
    try server.start(stalled_answer);
    defer server.stop();
    const agent = try stream_test.loopbackAgent(server.port, .{ .provider = .anthropic, .model = "m", .retry = .{ .max_retries = 0 } });
    defer agent.deinit();
    const stream = try agent.run("hi");
    defer stream.destroy();
    _ = try stepUntilParkedInText(stream);
    try std.testing.expectError(error.Usage, stream.next());
    try std.testing.expectError(error.Usage, stream.nextBatch(8));
    try std.testing.expectError(error.Usage, stream.finalMessage());
    try std.testing.expect(agent.busy); // (the turn goes on, untouched)
    stream.cancel();
    try std.testing.expectError(error.Canceled, stream.step());
    // Over: its sticky end reads no socket, so next() and finalMessage give it.
    try std.testing.expectError(error.Canceled, stream.next());
    try std.testing.expectError(error.Canceled, stream.finalMessage());
}

test "step() on a stream read by next() is a usage error; the turn goes on with next()" {
    try skipUnlessSupported();
    var server: TestServer = undefined;
    try server.start(.{ .framing = .chunked, .piece = 7 });
    defer server.stop();
    const agent = try stream_test.loopbackAgent(server.port, .{ .provider = .anthropic, .model = "m" });
    defer agent.deinit();
    const stream = try agent.run("hi");
    defer stream.destroy();
    try std.testing.expect((try stream.next()).? == .message_start);
    try std.testing.expectError(error.Usage, stream.step());
    try std.testing.expectError(error.Usage, stream.stepBatch(8));
    try std.testing.expect(stream.stepper == null);
    var last: ?Event = null;
    while (try stream.next()) |e| last = e;
    try std.testing.expect(last.? == .message_complete);
    try std.testing.expectError(error.Usage, stream.step()); // (decided for good)
}

test "a stepped turn read in batches: the whole text, then finalMessage (the turn is over)" {
    try skipUnlessSupported();
    var server: TestServer = undefined;
    try server.start(.{ .framing = .chunked, .piece = 64 });
    defer server.stop();
    const agent = try stream_test.loopbackAgent(server.port, .{ .provider = .anthropic, .model = "m" });
    defer agent.deinit();
    const stream = try agent.run("hi");
    defer stream.destroy();
    var text: std.ArrayList(u8) = .empty;
    defer text.deinit(std.testing.allocator);
    while (true) switch (try stream.stepBatch(16)) {
        .would_block => |w| waitFor(w),
        .events => |events| {
            if (events.len == 0) break;
            for (events) |e| if (e == .content_delta) try text.appendSlice(std.testing.allocator, e.content_delta.text);
        },
    };
    try std.testing.expectEqualStrings("h\xc3\xa9llo w\xc3\xb6rld", text.items);
    const final = try stream.finalMessage();
    try std.testing.expectEqualStrings("h\xc3\xa9llo w\xc3\xb6rld", final.text);
}

test "a stepped round with a call that asks: ApprovalPending as next() returns it, then the approved call" {
    try skipUnlessSupported();
    var server: TestServer = undefined;
    try server.startMany(.{ .body = stream_test.tool_message }, &.{.{}});
    defer server.stop();
    const agent = try stream_test.loopbackAgent(server.port, .{ .provider = .anthropic, .model = "m", .capabilities = &.{"search"}, .approval_rules = &.{.{ .tool = "lookup", .decision = .ask }} });
    defer agent.deinit();
    var diag: @import("config.zig").Diagnostic = .{};
    try agent.addTool(stream_test.lookup_tool, &diag);
    const stream = try agent.run("find x");
    defer stream.destroy();
    var d: Driven = .{};
    defer d.deinit();
    const request = (try stepUntil(stream, .approval_request, &d)).approval_request;
    try std.testing.expectEqualStrings("toolu_1", request.calls[0].id.slice());
    try std.testing.expectError(error.ApprovalPending, stream.step());
    try std.testing.expectError(error.ApprovalPending, stream.step()); // not sticky
    try stream.approve("toolu_1");
    const start = (try stepUntil(stream, .tool_call_start, &d)).tool_call_start;
    try std.testing.expect(start.awaiting_result);
    try std.testing.expectError(error.ResultPending, stream.step());
    try stream.submitToolResult("toolu_1", "found it", false);
    try drive(stream, &d);
    try std.testing.expectEqual(.end_turn, d.last.?.message_complete.stop_reason);
    try std.testing.expectEqual(@as(usize, 4), agent.conversation.messages.items.len);
}

test "a stepped turn's wall budget ends it on the step's deadline: MessageComplete says budget, what was seen is kept" {
    try skipUnlessSupported();
    var server: TestServer = undefined;
    try server.start(stalled_answer); // (it stalls until the client goes away)
    defer server.stop();
    const agent = try stream_test.loopbackAgent(server.port, .{ .provider = .anthropic, .model = "m", .budget = .{ .wall_ms = 200 } });
    defer agent.deinit();
    const stream = try agent.run("hi");
    defer stream.destroy();
    var d: Driven = .{};
    defer d.deinit();
    try drive(stream, &d);
    const end = d.last.?.message_complete;
    try std.testing.expectEqual(.budget, end.stop_reason);
    try std.testing.expectEqualStrings("wall_ms", end.provider_stop_reason);
    const messages = agent.conversation.messages.items;
    if (d.text.items.len > 0) {
        try std.testing.expectEqual(.aborted, messages[1].stop_reason);
        try std.testing.expectEqualStrings(d.text.items, messages[1].blocks[0].text);
    }
    try @import("budget_test.zig").expectValidNextRequest(agent);
}

test "a stepped round past the output_tokens budget is skipped: its call answered, the turn ends with budget" {
    try skipUnlessSupported();
    var server: TestServer = undefined;
    try server.start(.{ .body = stream_test.tool_message });
    defer server.stop();
    const agent = try stream_test.loopbackAgent(server.port, .{ .provider = .anthropic, .model = "m", .capabilities = &.{"search"}, .budget = .{ .output_tokens = 1 } });
    defer agent.deinit();
    var diag: @import("config.zig").Diagnostic = .{};
    try agent.addTool(stream_test.lookup_tool, &diag);
    const stream = try agent.run("find x");
    defer stream.destroy();
    var d: Driven = .{};
    defer d.deinit();
    try drive(stream, &d); // (a ToolCallStart would leave ResultPending: drive fails on it)
    const end = d.last.?.message_complete;
    try std.testing.expectEqual(.budget, end.stop_reason);
    try std.testing.expectEqualStrings("output_tokens", end.provider_stop_reason);
    // user, assistant (tool_use), user (the skipped call's result)
    const messages = agent.conversation.messages.items;
    try std.testing.expectEqual(@as(usize, 3), messages.len);
    try std.testing.expectEqualStrings(@import("stream.zig").budget_skipped, messages[2].blocks[0].text);
    try @import("budget_test.zig").expectValidNextRequest(agent);
}
