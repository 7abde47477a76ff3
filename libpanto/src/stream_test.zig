//! Turns against a real loopback HTTP server that sends hand-framed responses, so the core's
//! HTTP and SSE handling is tested in Zig itself: chunked and Content-Length bodies, bodies cut
//! into tiny writes, error answers, and bodies cut short.
const std = @import("std");
const Agent = @import("agent.zig").Agent;
const Stream = @import("stream.zig").Stream;
const Event = @import("event.zig").Event;
const test_deadline = @import("test_deadline.zig");

var server_io_instance: std.Io.Threaded = .init_single_threaded;

const sse_head =
    "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"model\":\"m\",\"usage\":{\"input_tokens\":3,\"output_tokens\":1}}}\n\n" ++
    "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n";
pub const sse_body = sse_head ++
    ": a comment, then a ping\n\nevent: ping\ndata: {\"type\": \"ping\"}\n\n" ++
    "event: content_block_delta\r\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"h\\u00e9llo \"}}\r\n\r\n" ++
    "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"w\xc3\xb6rld\"}}\n\n" ++
    "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n" ++
    "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":5}}\n\n" ++
    "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";

pub const Framing = enum { chunked, content_length };

const test_key = "sk-ant-test-0123456789";

/// How the test server answers its one request.
pub const Answer = struct {
    status: []const u8 = "200 OK",
    content_type: []const u8 = "text/event-stream",
    body: []const u8 = sse_body,
    framing: Framing = .chunked,
    /// Bytes per write (and per chunk, when chunked).
    piece: usize = 1 << 20,
    /// Send only this many bytes of the framed body, then close.
    cut_at: ?usize = null,
    /// After the body, keep the connection open until the client closes it (or at most
    /// test_deadline.limit_ms).
    stall: bool = false,
    /// The head and the whole framed body in one write, so that the client's first read
    /// from the connection takes them all (`piece` then sizes the chunks only).
    one_write: bool = false,
};

/// Reads a request a test server is sent: its head, then its body (Content-Length), discarded.
pub fn skipRequest(r: *std.Io.Reader) !void {
    try r.discardAll(try readRequestHead(r));
}

/// Reads the head of a request a test server is sent: the length of its body.
pub fn readRequestHead(r: *std.Io.Reader) !usize {
    var content_length: usize = 0;
    while (true) {
        const line = try r.takeDelimiterInclusive('\n');
        if (std.mem.eql(u8, line, "\r\n")) return content_length;
        if (std.ascii.startsWithIgnoreCase(line, "content-length:"))
            content_length = try std.fmt.parseInt(usize, std.mem.trim(u8, line[15..], " \r\n"), 10);
    }
}

/// Waits until a test server's thread is `done`. A test that failed before making every
/// request the server expects leaves it waiting for a connection that never comes: knock
/// (connect and hang up) until it is done, so that the failure is reported instead of
/// hanging the run.
pub fn knockUntilDone(io: std.Io, port: u16, done: *const std.atomic.Value(bool)) void {
    while (!done.load(.acquire)) {
        const address = std.Io.net.IpAddress.parseIp4("127.0.0.1", port) catch unreachable;
        if (address.connect(io, .{ .mode = .stream })) |conn| conn.close(io) else |_| {}
        const ts: std.c.timespec = .{ .sec = 0, .nsec = 10 * std.time.ns_per_ms };
        _ = std.c.nanosleep(&ts, null);
    }
}

pub const TestServer = struct {
    server: std.Io.net.Server,
    thread: std.Thread,
    answer: Answer,
    /// Further answers, one connection each (panto closes a connection after each message).
    more: []const Answer = &.{},
    port: u16,
    /// The thread has served (or given up on) every answer.
    done: std.atomic.Value(bool) = .init(false),
    /// When set, each request's first line and body are appended, "LINE\r\nBODY\n" a request
    /// (read once `stop` returned).
    record: ?*std.ArrayList(u8) = null,

    pub fn start(s: *TestServer, answer: Answer) !void {
        return s.startMany(answer, &.{});
    }

    pub fn startMany(s: *TestServer, answer: Answer, more: []const Answer) !void {
        return s.startRecorded(answer, more, null);
    }

    /// As startMany, with each request recorded into `record` (see the field).
    pub fn startRecorded(s: *TestServer, answer: Answer, more: []const Answer, record: ?*std.ArrayList(u8)) !void {
        s.record = record;
        const io = server_io_instance.io();
        const address = try std.Io.net.IpAddress.parseIp4("127.0.0.1", 0);
        s.server = try address.listen(io, .{ .reuse_address = true });
        s.port = s.server.socket.address.getPort();
        s.answer = answer;
        s.more = more;
        s.done = .init(false);
        s.thread = try std.Thread.spawn(.{}, serve, .{s});
    }

    /// Waits for the server's thread. A test that failed before making every request the
    /// server expects leaves it waiting for a connection that never comes: knock (connect and
    /// hang up) until it is done, so that the failure is reported instead of hanging the run.
    pub fn stop(s: *TestServer) void {
        const io = server_io_instance.io();
        knockUntilDone(io, s.port, &s.done);
        s.thread.join();
        s.server.deinit(io);
    }

    fn serve(s: *TestServer) void {
        defer s.done.store(true, .release);
        // A client that goes away early (a timeout, a cancel) makes writes fail: that is the
        // point of those tests, not a server problem.
        s.serveOne() catch {};
        for (s.more) |answer| {
            s.answer = answer;
            s.serveOne() catch {};
        }
    }

    fn serveOne(s: *TestServer) !void {
        const io = server_io_instance.io();
        const conn = try s.server.accept(io);
        defer conn.close(io);
        var read_buf: [4096]u8 = undefined;
        var reader = conn.reader(io, &read_buf);
        if (s.record) |out| {
            const r = &reader.interface;
            try out.appendSlice(std.testing.allocator, try r.takeDelimiterInclusive('\n'));
            try out.appendSlice(std.testing.allocator, try r.take(try readRequestHead(r)));
            try out.append(std.testing.allocator, '\n');
        } else try skipRequest(&reader.interface);

        var framed: std.ArrayList(u8) = .empty;
        defer framed.deinit(std.testing.allocator);
        const a = s.answer;
        switch (a.framing) {
            .content_length => try framed.appendSlice(std.testing.allocator, a.body),
            .chunked => {
                var rest = a.body;
                while (rest.len > 0) {
                    const n = @min(rest.len, a.piece);
                    try framed.print(std.testing.allocator, "{x}\r\n{s}\r\n", .{ n, rest[0..n] });
                    rest = rest[n..];
                }
                try framed.appendSlice(std.testing.allocator, "0\r\n\r\n");
            },
        }
        var write_buf: [256]u8 = undefined;
        var writer = conn.writer(io, &write_buf);
        const w = &writer.interface;
        try w.print("HTTP/1.1 {s}\r\ncontent-type: {s}\r\nrequest-id: req_test\r\n", .{ a.status, a.content_type });
        switch (a.framing) {
            .content_length => try w.print("content-length: {d}\r\n\r\n", .{a.body.len + @as(usize, if (a.stall) 1000 else 0)}),
            .chunked => try w.writeAll("transfer-encoding: chunked\r\n\r\n"),
        }
        if (!a.one_write) try w.flush();
        const total = a.cut_at orelse framed.items.len;
        const write_size = if (a.one_write) total else a.piece;
        var sent: usize = 0;
        while (sent < total) {
            const n = @min(total - sent, write_size);
            try w.writeAll(framed.items[sent .. sent + n]);
            try w.flush();
            sent += n;
        }
        // Until the client goes away, or the tests' deadline passes: then the body ends short.
        if (a.stall) test_deadline.awaitPeer(conn.socket.handle);
    }
};

/// Runs one turn against `answer` and returns the concatenated text deltas, the final block
/// text and the stop reason, or the error.
fn runTurn(answer: Answer, text_out: *std.ArrayList(u8)) !Event {
    var server: TestServer = undefined;
    try server.start(answer);
    defer server.stop();
    const agent = try loopbackAgent(server.port, .{ .provider = .anthropic, .model = "m" });
    defer agent.deinit();
    const stream = try agent.run("hi");
    defer stream.destroy();
    const last = try readTurn(stream, text_out);
    try std.testing.expectEqual(@as(usize, 2), agent.conversation.messages.items.len);
    return last;
}

/// Reads a one-block turn to its end: the text deltas into `text_out` (the block's complete
/// text must be theirs), and its last event.
fn readTurn(stream: *Stream, text_out: *std.ArrayList(u8)) !Event {
    var last: ?Event = null;
    while (try stream.next()) |e| {
        if (e == .content_delta) try text_out.appendSlice(std.testing.allocator, e.content_delta.text);
        if (e == .block_complete) try std.testing.expectEqualStrings(text_out.items, e.block_complete.text);
        last = e;
    }
    try std.testing.expectEqual(null, try stream.next()); // exhausted stays exhausted
    return last.?;
}

fn expectTurn(answer: Answer) !void {
    var text: std.ArrayList(u8) = .empty;
    defer text.deinit(std.testing.allocator);
    const last = try runTurn(answer, &text);
    try std.testing.expectEqualStrings("h\xc3\xa9llo w\xc3\xb6rld", text.items);
    try std.testing.expectEqual(.end_turn, last.message_complete.stop_reason);
    try std.testing.expectEqual(@as(u64, 3), last.message_complete.usage.input_tokens);
    try std.testing.expectEqual(@as(u64, 5), last.message_complete.usage.output_tokens);
}

test "a turn over a chunked body, whole and in 1, 3 and 64 byte pieces" {
    for ([_]usize{ 1 << 20, 1, 3, 64 }) |piece| try expectTurn(.{ .framing = .chunked, .piece = piece });
}

test "a turn over a Content-Length body, whole and in 1 and 7 byte pieces" {
    for ([_]usize{ 1 << 20, 1, 7 }) |piece| try expectTurn(.{ .framing = .content_length, .piece = piece });
}

fn expectFailure(answer: Answer, expected: anyerror, http_status: u16, message_part: []const u8) !void {
    var server: TestServer = undefined;
    try server.start(answer);
    defer server.stop();
    var url_buf: [64]u8 = undefined;
    const url = try std.fmt.bufPrint(&url_buf, "http://127.0.0.1:{d}", .{server.port});
    // No retries: each failure here must surface as it is (retries have their own tests).
    const agent = try Agent.init(std.testing.allocator, .{ .provider = .anthropic, .model = "m", .base_url = url, .api_key = test_key, .retry = .{ .max_retries = 0 } });
    defer agent.deinit();
    const stream = try agent.run("hi");
    defer stream.destroy();
    var result = stream.next();
    while (result) |maybe| {
        if (maybe == null) return error.TestExpectedError;
        result = stream.next();
    } else |err| try std.testing.expectEqual(expected, err);
    try std.testing.expectError(@errorCast(expected), stream.next()); // sticky
    const detail = stream.failureDetail().?;
    try std.testing.expectEqual(http_status, detail.http_status);
    try std.testing.expect(std.mem.indexOf(u8, detail.message.items, test_key) == null);
    try std.testing.expect(std.mem.indexOf(u8, detail.message.items, message_part) != null);
    // Nothing was kept: the turn's user message is rolled back (failed_turn_test.zig).
    try std.testing.expectEqual(@as(usize, 0), agent.conversation.messages.items.len);
    try std.testing.expect(!agent.busy);
}

test "an HTTP 401 with the provider's error body is an authentication error" {
    try expectFailure(.{
        .status = "401 Unauthorized",
        .content_type = "application/json",
        .body = "{\"type\":\"error\",\"error\":{\"type\":\"authentication_error\",\"message\":\"invalid x-api-key\"}}",
        .framing = .content_length,
    }, error.Authentication, 401, "invalid x-api-key");
}

test "an API key the provider quotes in its error never reaches the error" {
    try expectFailure(.{
        .status = "401 Unauthorized",
        .content_type = "application/json",
        .body = "{\"type\":\"error\",\"error\":{\"type\":\"authentication_error\",\"message\":\"invalid key " ++ test_key ++ " (check it)\"}}",
        .framing = .content_length,
    }, error.Authentication, 401, "invalid key [redacted] (check it)");
}

test "a chunked body cut short is a protocol error" {
    try expectFailure(.{ .piece = 5, .cut_at = 300 }, error.Protocol, 0, "cut short");
}

test "a Content-Length body cut short fails the turn" {
    try expectFailure(.{ .framing = .content_length, .piece = 5, .cut_at = 300 }, error.Protocol, 0, "");
}

test "a mid-stream error event is the typed error it names" {
    try expectFailure(.{
        .body = sse_head ++ "event: error\ndata: {\"type\":\"error\",\"error\":{\"details\":null,\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}        }\n\n",
    }, error.Overloaded, 0, "Overloaded");
}

test "a wrong content type is a protocol error" {
    try expectFailure(.{ .content_type = "text/html", .body = "<html></html>", .framing = .content_length }, error.Protocol, 200, "text/event-stream");
}

test "freeing the agent before its stream defers the free to the stream" {
    var server: TestServer = undefined;
    try server.start(.{});
    defer server.stop();
    const agent = try loopbackAgent(server.port, .{ .provider = .anthropic, .model = "m" });
    const stream = try agent.run("hi");
    try std.testing.expectError(error.Busy, agent.run("again"));
    agent.deinit();
    _ = try stream.next(); // still works: the agent lives until its last stream goes
    stream.destroy(); // frees the agent too; the testing allocator reports any leak
}

/// A message asking for the `lookup` tool (keep_alive_test.zig uses it too).
pub const tool_message =
    "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_t\",\"model\":\"m\",\"usage\":{\"input_tokens\":2,\"output_tokens\":1}}}\n\n" ++
    "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"lookup\",\"input\":{}}}\n\n" ++
    "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"q\\\": \\\"x\\\"}\"}}\n\n" ++
    "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n" ++
    "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"},\"usage\":{\"output_tokens\":4}}\n\n" ++
    "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";

pub const lookup_tool =
    \\{"name":"lookup","description":"Looks up q.","input_schema":{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]},"capabilities":["search"]}
;

/// An agent of `config` on a loopback test server's port, with the key "k".
pub fn loopbackAgent(port: u16, config: @import("config.zig").Config) !*Agent {
    var url_buf: [64]u8 = undefined;
    var c = config;
    c.api_key = "k";
    c.base_url = try std.fmt.bufPrint(&url_buf, "http://127.0.0.1:{d}", .{port});
    return Agent.init(std.testing.allocator, c); // (it copies the strings)
}

pub fn toolAgent(port: u16, capabilities: []const []const u8, max_tool_iterations: u32) !*Agent {
    const agent = try loopbackAgent(port, .{ .provider = .anthropic, .model = "m", .capabilities = capabilities, .max_tool_iterations = max_tool_iterations });
    errdefer agent.deinit();
    var diag: @import("config.zig").Diagnostic = .{};
    try agent.addTool(lookup_tool, &diag);
    return agent;
}

pub fn nextUntil(stream: *Stream, tag: std.meta.Tag(Event)) !Event {
    while (try stream.next()) |e| if (e == tag) return e;
    return error.TestUnexpectedEnd;
}

test "a host tool round: the call waits for its result, then the next message comes" {
    var server: TestServer = undefined;
    try server.startMany(.{ .body = tool_message }, &.{.{}});
    defer server.stop();
    const agent = try toolAgent(server.port, &.{"search"}, 10);
    defer agent.deinit();
    const stream = try agent.run("find x");
    defer stream.destroy();

    const start = (try nextUntil(stream, .tool_call_start)).tool_call_start;
    try std.testing.expectEqualStrings("{\"q\":\"x\"}", start.input);
    try std.testing.expect(start.awaiting_result);
    try std.testing.expectError(error.NoSuchCall, stream.submitToolResult("toolu_404", "x", false));
    try std.testing.expectError(error.ResultPending, stream.next());
    try std.testing.expectError(error.ResultPending, stream.next()); // not sticky, nothing lost
    try stream.submitToolResult("toolu_1", "found it", false);
    try std.testing.expectError(error.NoSuchCall, stream.submitToolResult("toolu_1", "again", false));
    const result = (try stream.next()).?.tool_result;
    try std.testing.expectEqualStrings("found it", result.content);
    const complete = (try nextUntil(stream, .message_complete)).message_complete;
    try std.testing.expectEqual(.end_turn, complete.stop_reason);
    try std.testing.expectEqual(@as(u64, 2 + 3), complete.usage.input_tokens); // summed over both messages
    try std.testing.expectEqual(null, try stream.next());
    // user, assistant (tool_use), user (tool_result), assistant (text)
    try std.testing.expectEqual(@as(usize, 4), agent.conversation.messages.items.len);
}

test "parts in a turn and in a host tool result: the event lists them (in a batch too), all freed" {
    const png = @import("test_png.zig").bytes;
    const Part = @import("content.zig").Part;
    // Read one by one, in batches, and canceled while the results are handed out.
    for ([_]enum { next, batch, cancel }{ .next, .batch, .cancel }) |way| {
        var server: TestServer = undefined;
        try server.startMany(.{ .body = tool_message }, &.{.{}});
        defer server.stop();
        const agent = try toolAgent(server.port, &.{"search"}, 10);
        defer agent.deinit();
        const stream = try agent.runInput(.{ .text = "find this", .parts = &.{ Part{ .media = .{ .bytes = png } }, Part{ .text = "please" } } });
        defer stream.destroy();
        _ = try nextUntil(stream, .tool_call_start);
        try std.testing.expectError(error.NoSuchCall, stream.submitToolResultParts("toolu_9", "", &.{.{ .media = .{ .bytes = png } }}, false));
        try std.testing.expectError(error.ResultPending, stream.next()); // nothing changed
        try stream.submitToolResultParts("toolu_1", "found", &.{ .{ .media = .{ .bytes = png, .name = "x.png" } }, .{ .media = .{ .bytes = "??" } } }, false);
        if (way == .cancel) {
            stream.cancel();
            try std.testing.expectError(error.Canceled, stream.next());
            break;
        }
        const result = if (way == .batch) (try stream.nextBatch(8))[0].tool_result else (try stream.next()).?.tool_result;
        try std.testing.expectEqual(@as(usize, 3), result.parts.len);
        try std.testing.expectEqual(.image, result.parts[1].kind);
        try std.testing.expectEqualStrings("x.png", result.parts[1].name.slice());
        try std.testing.expectEqual(@as(u64, png.len), result.parts[1].byte_size);
        try std.testing.expectEqualStrings(result.parts[0].text.slice(), "found");
        try std.testing.expect(std.mem.startsWith(u8, result.content, "found\n[attachment "));
        _ = try nextUntil(stream, .message_complete);
        // user (text, image, text), assistant, user (the result with its parts), assistant
        const messages = agent.conversation.messages.items;
        try std.testing.expectEqual(@as(usize, 3), messages[0].blocks.len);
        try std.testing.expectEqual(.image, messages[0].blocks[1].kind);
        try std.testing.expectEqual(@as(usize, 3), messages[2].blocks[0].parts.len);
    }
}

test "a tool the agent may not use fails the turn before it runs; the conversation stays valid" {
    var server: TestServer = undefined;
    try server.start(.{ .body = tool_message });
    defer server.stop();
    const agent = try toolAgent(server.port, &.{}, 10);
    defer agent.deinit();
    const stream = try agent.run("find x");
    defer stream.destroy();
    _ = try nextUntil(stream, .message_end);
    try std.testing.expectError(error.Capability, stream.next());
    try std.testing.expectError(error.Capability, stream.next());
    try std.testing.expect(std.mem.indexOf(u8, stream.failureDetail().?.message.items, "lookup") != null);
    const messages = agent.conversation.messages.items;
    try std.testing.expectEqual(@as(usize, 3), messages.len);
    try std.testing.expect(messages[2].blocks[0].is_error);
}

test "more tool rounds than max_tool_iterations fail the turn with a tool-loop error" {
    var server: TestServer = undefined;
    try server.startMany(.{ .body = tool_message }, &.{});
    defer server.stop();
    const agent = try toolAgent(server.port, &.{"search"}, 0);
    defer agent.deinit();
    const stream = try agent.run("find x");
    defer stream.destroy();
    _ = try nextUntil(stream, .message_end);
    try std.testing.expectError(error.ToolLoop, stream.next());
}

test "an overloaded answer is retried after a ProviderRetry event, then the turn goes on" {
    var server: TestServer = undefined;
    const overloaded: Answer = .{
        .status = "529 Overloaded",
        .content_type = "application/json",
        .body = "{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}",
        .framing = .content_length,
    };
    try server.startMany(overloaded, &.{.{}});
    defer server.stop();
    const agent = try loopbackAgent(server.port, .{ .provider = .anthropic, .model = "m", .retry = .{ .initial_delay_ms = 10 } });
    defer agent.deinit();
    const stream = try agent.run("hi");
    defer stream.destroy();
    const first = (try stream.next()).?;
    try std.testing.expectEqual(@as(u32, 1), first.provider_retry.attempt);
    try std.testing.expectEqual(@as(u16, 529), first.provider_retry.http_status);
    try std.testing.expect(first.provider_retry.delay_ms <= 10);
    try std.testing.expect(std.mem.indexOf(u8, first.provider_retry.reason, "Overloaded") != null);
    const complete = (try nextUntil(stream, .message_complete)).message_complete;
    try std.testing.expectEqual(.end_turn, complete.stop_reason);
}

test "the idle timeout ends a stream that stalls, and cancel ends it from another thread" {
    // A body that stops after the head events and never ends: only a timeout or a cancel ends it.
    var server: TestServer = undefined;
    try server.start(.{ .body = sse_head, .framing = .content_length, .stall = true });
    const agent = try loopbackAgent(server.port, .{ .provider = .anthropic, .model = "m", .timeouts = .{ .idle_ms = 200 } });
    defer agent.deinit();
    {
        const stream = try agent.run("hi");
        defer stream.destroy();
        _ = try nextUntil(stream, .block_start);
        try std.testing.expectError(error.Timeout, stream.next());
        try std.testing.expect(std.mem.indexOf(u8, stream.failureDetail().?.message.items, "idle") != null);
    }
    server.stop();

    const partial = sse_head ++ "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hel\"}}\n\n";
    try server.start(.{ .body = partial, .framing = .content_length, .stall = true });
    defer server.stop();
    var url_buf2: [64]u8 = undefined;
    agent.config.base_url = try std.fmt.bufPrint(&url_buf2, "http://127.0.0.1:{d}", .{server.port});
    agent.config.timeouts = .{};
    const stream = try agent.run("again");
    defer stream.destroy();
    _ = try nextUntil(stream, .content_delta);
    const canceler = try std.Thread.spawn(.{}, cancelSoon, .{stream});
    try std.testing.expectError(error.Canceled, stream.next()); // blocked until the cancel
    canceler.join();
    try std.testing.expectError(error.Canceled, stream.next());
    // The partial message stays, marked aborted; the agent can run the next turn.
    const last = agent.conversation.messages.items[agent.conversation.messages.items.len - 1];
    try std.testing.expectEqual(.aborted, last.stop_reason);
    try std.testing.expectEqualStrings("Hel", last.blocks[0].text);
    try std.testing.expect(!agent.busy);
    // The timed-out turn before had no content: it left no (invalid) empty assistant message.
    for (agent.conversation.messages.items) |m| try std.testing.expect(m.blocks.len > 0);
}

fn cancelSoon(stream: *Stream) void {
    const ts: std.c.timespec = .{ .sec = 0, .nsec = 100 * std.time.ns_per_ms };
    _ = std.c.nanosleep(&ts, null);
    stream.cancel();
}

// ---- batches: nextBatch, peekBuffered, unread --------------------------------------------

/// One turn against the test server's `answer` (no retries). Start it in place (the server
/// thread points at it), and end it with `end`.
const Turn = struct {
    server: TestServer,
    url_buf: [64]u8,
    agent: *Agent,
    stream: *Stream,

    fn start(t: *Turn, answer: Answer) !void {
        try t.server.start(answer);
        errdefer t.server.stop();
        const url = try std.fmt.bufPrint(&t.url_buf, "http://127.0.0.1:{d}", .{t.server.port});
        t.agent = try Agent.init(std.testing.allocator, .{ .provider = .anthropic, .model = "m", .base_url = url, .api_key = "k", .retry = .{ .max_retries = 0 } });
        errdefer t.agent.deinit();
        t.stream = try t.agent.run("hi");
    }

    fn end(t: *Turn) void {
        t.stream.destroy();
        t.agent.deinit();
        t.server.stop();
    }
};

/// Whether an event can follow the first of a batch: only what continues the message.
fn continuesMessage(e: Event) bool {
    return switch (e) {
        .block_start, .content_delta, .block_complete, .tool_details => true,
        else => false,
    };
}

/// Reads a turn in batches of at most `max`, checking the shape of each; returns the number
/// of batches, the most events one held, and the text of the deltas in `text`.
fn readInBatches(stream: *Stream, max: usize, text: *std.ArrayList(u8)) !struct { batches: usize, largest: usize, events: usize } {
    var batches: usize = 0;
    var largest: usize = 0;
    var events: usize = 0;
    while (true) {
        const got = try stream.nextBatch(max);
        if (got.len == 0) break;
        batches += 1;
        events += got.len;
        largest = @max(largest, got.len);
        try std.testing.expect(got.len <= max);
        for (got, 0..) |e, i| {
            if (i > 0) try std.testing.expect(continuesMessage(e));
            if (e == .content_delta) try text.appendSlice(std.testing.allocator, e.content_delta.text);
            if (e == .block_complete) try std.testing.expectEqualStrings(text.items, e.block_complete.text);
        }
    }
    try std.testing.expectEqual(@as(usize, 0), (try stream.nextBatch(max)).len); // over stays over
    try std.testing.expectEqual(null, try stream.next());
    return .{ .batches = batches, .largest = largest, .events = events };
}

test "a turn read in batches has the events of next(), only message content after a batch's first" {
    for ([_]Framing{ .content_length, .chunked }) |framing| {
        for ([_]usize{ 1 << 20, 1, 7 }) |piece| {
            for ([_]usize{ 1, 2, 64 }) |max| {
                var turn: Turn = undefined;
                try turn.start(.{ .framing = framing, .piece = piece });
                defer turn.end();
                const agent = turn.agent;
                const stream = turn.stream;
                var text: std.ArrayList(u8) = .empty;
                defer text.deinit(std.testing.allocator);
                const r = try readInBatches(stream, max, &text);
                try std.testing.expectEqualStrings("h\xc3\xa9llo w\xc3\xb6rld", text.items);
                // message_start, block_start, 2 deltas, block_complete, message_end, message_complete
                try std.testing.expectEqual(@as(usize, 7), r.events);
                if (max == 1) try std.testing.expectEqual(@as(usize, 7), r.batches);
                // The whole body in one write: once it arrived, the message's content comes at once.
                if (piece == 1 << 20 and max == 64) try std.testing.expect(r.largest >= 3);
                try std.testing.expectEqual(@as(usize, 2), agent.conversation.messages.items.len);
                try std.testing.expect(!agent.busy);
            }
        }
    }
}

test "events given back come again, strings and all, then the turn goes on" {
    var turn: Turn = undefined;
    try turn.start(.{ .framing = .content_length });
    defer turn.end();
    const agent = turn.agent;
    const stream = turn.stream;
    var text: std.ArrayList(u8) = .empty;
    defer text.deinit(std.testing.allocator);
    var gave_back = false;
    while (true) {
        const got = try stream.nextBatch(64);
        if (got.len == 0) break;
        // Give back the tail that continues the message, once, and check it comes again.
        var tail: usize = 0;
        while (tail < got.len and continuesMessage(got[got.len - 1 - tail])) tail += 1;
        if (tail > 0 and !gave_back) {
            gave_back = true;
            const kept = got.len - tail;
            var expected: std.ArrayList(u8) = .empty;
            defer expected.deinit(std.testing.allocator);
            for (got[kept..]) |e| try expected.appendSlice(std.testing.allocator, @tagName(e));
            for (got[0..kept]) |e| if (e == .content_delta) try text.appendSlice(std.testing.allocator, e.content_delta.text);
            try std.testing.expectError(error.InvalidArgument, stream.unread(got.len + 1));
            try stream.unread(tail);
            try std.testing.expectError(error.InvalidArgument, stream.unread(kept + 1)); // no more than was handed out
            const again = try stream.nextBatch(64);
            var seen: std.ArrayList(u8) = .empty;
            defer seen.deinit(std.testing.allocator);
            for (again) |e| try seen.appendSlice(std.testing.allocator, @tagName(e));
            try std.testing.expectEqualStrings(expected.items, seen.items);
            for (again) |e| if (e == .content_delta) try text.appendSlice(std.testing.allocator, e.content_delta.text);
            continue;
        }
        for (got) |e| if (e == .content_delta) try text.appendSlice(std.testing.allocator, e.content_delta.text);
    }
    try std.testing.expect(gave_back);
    try std.testing.expectEqualStrings("h\xc3\xa9llo w\xc3\xb6rld", text.items);
    const last = agent.conversation.messages.items[1];
    try std.testing.expectEqual(.end_turn, last.stop_reason);
    try std.testing.expectEqualStrings("h\xc3\xa9llo w\xc3\xb6rld", last.blocks[0].text);
}

test "a turn canceled with events given back keeps only what was seen" {
    var turn: Turn = undefined;
    try turn.start(.{ .framing = .content_length, .stall = true });
    defer turn.end();
    const agent = turn.agent;
    const stream = turn.stream;
    // Read until the batch holding the second delta, and see only what comes before it.
    outer: while (true) {
        const got = try stream.nextBatch(64);
        try std.testing.expect(got.len > 0);
        for (got, 0..) |e, i| {
            if (e == .content_delta and std.mem.eql(u8, e.content_delta.text, "w\xc3\xb6rld")) {
                try stream.unread(got.len - i);
                break :outer;
            }
        }
    }
    stream.cancel();
    try std.testing.expectError(error.Canceled, stream.nextBatch(64));
    try std.testing.expectError(error.Canceled, stream.next()); // sticky
    const last = agent.conversation.messages.items[agent.conversation.messages.items.len - 1];
    try std.testing.expectEqual(.aborted, last.stop_reason);
    try std.testing.expectEqual(@as(usize, 1), last.blocks.len);
    try std.testing.expectEqualStrings("h\xc3\xa9llo ", last.blocks[0].text);
    try std.testing.expect(!agent.busy);
}

test "a turn canceled between two events decoded from one provider event keeps only what was handed out" {
    // OpenAI's first content chunk starts the text block and carries its first delta: one
    // chunk, two events. Canceled after the block start, the delta never handed out must not
    // be kept in the conversation.
    const body =
        "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n" ++
        "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Unseen \"}}]}\n\n";
    var server: TestServer = undefined;
    try server.start(.{ .framing = .content_length, .body = body, .stall = true });
    defer server.stop();
    var url_buf: [64]u8 = undefined;
    const url = try std.fmt.bufPrint(&url_buf, "http://127.0.0.1:{d}", .{server.port});
    const agent = try Agent.init(std.testing.allocator, .{ .provider = .openai, .model = "m", .base_url = url, .api_key = "k", .retry = .{ .max_retries = 0 } });
    defer agent.deinit();
    const stream = try agent.run("hi");
    defer stream.destroy();
    try std.testing.expect((try stream.next()).? == .message_start);
    try std.testing.expect((try stream.next()).? == .block_start);
    stream.cancel();
    try std.testing.expectError(error.Canceled, stream.next());
    // Nothing of the message was seen: nothing was kept, and the user message is rolled back.
    try std.testing.expectEqual(@as(usize, 0), agent.conversation.messages.items.len);
    try std.testing.expect(!agent.busy);
}

test "what ends or changes the turn cannot be given back, a batch from its MessageStart can; next() gives given-back events too" {
    var turn: Turn = undefined;
    try turn.start(.{ .framing = .content_length });
    defer turn.end();
    const stream = turn.stream;
    const first = try stream.nextBatch(1);
    try std.testing.expect(first[0] == .message_start);
    try stream.unread(1); // the whole batch, from the message's start
    try std.testing.expect((try stream.nextBatch(1))[0] == .message_start); // read again
    try std.testing.expectError(error.InvalidArgument, stream.unread(2)); // more than the batch
    const second = try stream.nextBatch(1);
    try std.testing.expect(second[0] == .block_start);
    try stream.unread(1);
    try std.testing.expect((try stream.next()).? == .block_start); // given back, read again
    try std.testing.expect((try stream.next()).? == .content_delta);
    try std.testing.expectError(error.InvalidArgument, stream.unread(1)); // a newer event came since
    while (true) {
        const got = try stream.nextBatch(64);
        if (got[0] == .message_end) {
            try std.testing.expectEqual(@as(usize, 1), got.len);
            try std.testing.expectError(error.InvalidArgument, stream.unread(1));
            break;
        }
    }
    const complete = try stream.nextBatch(64);
    try std.testing.expectEqual(@as(usize, 1), complete.len);
    try std.testing.expect(complete[0] == .message_complete);
    try std.testing.expectError(error.InvalidArgument, stream.unread(1));
    try std.testing.expectEqual(@as(usize, 0), (try stream.nextBatch(64)).len);
}

test "a failure after events of a batch comes with the next call, the events first" {
    const body = sse_head ++
        "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hi\"}}\n\n" ++
        "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n";
    var turn: Turn = undefined;
    try turn.start(.{ .body = body, .framing = .content_length });
    defer turn.end();
    const agent = turn.agent;
    const stream = turn.stream;
    var deltas: usize = 0;
    const err = while (true) {
        const got = stream.nextBatch(64) catch |e| break e;
        for (got) |e| {
            if (e == .content_delta) deltas += 1;
        }
    };
    try std.testing.expectEqual(error.Overloaded, err);
    try std.testing.expectEqual(@as(usize, 1), deltas);
    try std.testing.expectError(error.Overloaded, stream.nextBatch(64)); // sticky
    try std.testing.expect(std.mem.indexOf(u8, stream.failureDetail().?.message.items, "Overloaded") != null);
    try std.testing.expect(!agent.busy);
}

test "the chunks of a chunked body that already arrived are read in one batch" {
    var turn: Turn = undefined;
    // An SSE event spans chunks; the whole answer arrives in the connection's first read.
    try turn.start(.{ .framing = .chunked, .piece = 64, .one_write = true });
    defer turn.end();
    const stream = turn.stream;
    try std.testing.expect((try stream.nextBatch(1))[0] == .message_start);
    // The connection now holds chunks the body reader has not decoded.
    const rest = try stream.nextBatch(64);
    try std.testing.expectEqual(@as(usize, 4), rest.len); // block_start, 2 deltas, block_complete
    try std.testing.expect(rest[3] == .block_complete);
    try std.testing.expect((try stream.nextBatch(64))[0] == .message_end);
}

test "a warmed-up stream allocates nothing per event, in either provider's format" {
    const deltas = 3000;
    var body: std.ArrayList(u8) = .empty;
    defer body.deinit(std.testing.allocator);
    for ([_]@import("config.zig").Provider{ .anthropic, .openai }) |provider| {
        body.clearRetainingCapacity();
        // Plain and escaped text, and now and then an event only std.json reads (a number as
        // a string): every path of the decoding.
        const words = [_][]const u8{ " plain", " \\\"quoted\\\"", "\\n", " \\u00e9t\\u00e9" };
        switch (provider) {
            .anthropic => {
                try body.appendSlice(std.testing.allocator, sse_head);
                for (0..deltas) |i| try body.print(std.testing.allocator, "event: content_block_delta\ndata: {{\"type\":\"content_block_delta\",\"index\":{s},\"delta\":{{\"type\":\"text_delta\",\"text\":\"{s}\"}}}}\n\n", .{ if (i % 97 == 0) "\"0\"" else "0", words[i % words.len] });
                try body.appendSlice(std.testing.allocator, "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n");
            },
            .openai => {
                for (0..deltas) |i| try body.print(std.testing.allocator, "data: {{\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{{\"index\":{s},\"delta\":{{\"content\":\"{s}\"}},\"logprobs\":null,\"finish_reason\":null}}]}}\n\n", .{ if (i % 97 == 0) "0.0" else "0", words[i % words.len] });
                try body.appendSlice(std.testing.allocator, "data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n");
            },
            else => unreachable, // (the providers of the hot paths)
        }
        var server: TestServer = undefined;
        try server.start(.{ .framing = .content_length, .body = body.items });
        defer server.stop();
        var url_buf: [64]u8 = undefined;
        const url = try std.fmt.bufPrint(&url_buf, "http://127.0.0.1:{d}", .{server.port});
        var counting = std.testing.FailingAllocator.init(std.testing.allocator, .{});
        const agent = try Agent.init(counting.allocator(), .{ .provider = provider, .model = "m", .base_url = url, .api_key = "k" });
        defer agent.deinit();
        const stream = try agent.run("hi");
        defer stream.destroy();
        var seen: usize = 0;
        var allocations_at_1000: usize = 0;
        while (try stream.next()) |e| {
            if (e != .content_delta) continue;
            seen += 1;
            if (seen == 1000) allocations_at_1000 = counting.allocations;
            if (seen == deltas) {
                // 2000 events later: only the block's text may have grown (it doubles).
                try std.testing.expect(counting.allocations - allocations_at_1000 <= 3);
            }
        }
        try std.testing.expectEqual(deltas, seen);
    }
}

test "a body that arrives faster than it is read grows the read buffer; the turn reads the same" {
    const deltas = 20_000; // some 2 MB: a read brings more than half the first buffer
    var body: std.ArrayList(u8) = .empty;
    defer body.deinit(std.testing.allocator);
    var expected: std.ArrayList(u8) = .empty;
    defer expected.deinit(std.testing.allocator);
    try body.appendSlice(std.testing.allocator, sse_head);
    for (0..deltas) |i| {
        try body.print(std.testing.allocator, "event: content_block_delta\ndata: {{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{{\"type\":\"text_delta\",\"text\":\" w{d}\"}}}}\n\n", .{i});
        try expected.print(std.testing.allocator, " w{d}", .{i});
    }
    try body.appendSlice(std.testing.allocator, "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n");
    for ([_]Framing{ .content_length, .chunked }) |framing| {
        var turn: Turn = undefined;
        try turn.start(.{ .framing = framing, .body = body.items, .piece = 1 << 16, .one_write = true });
        defer turn.end();
        var text: std.ArrayList(u8) = .empty;
        defer text.deinit(std.testing.allocator);
        var largest: usize = 0;
        while (try turn.stream.next()) |e| {
            if (e != .content_delta) continue;
            try text.appendSlice(std.testing.allocator, e.content_delta.text);
            largest = @max(largest, turn.stream.body.capacity());
        }
        try std.testing.expectEqualStrings(expected.items, text.items);
        try std.testing.expectEqual(@import("body.zig").large_len, largest);
        try std.testing.expectEqual(0, turn.stream.body.large.len); // given back at the message's end
    }
}

test "a stream that waits after a fast body holds no large buffer, nor does its parked connection: under 64 KiB in all" {
    // A tool call after 2 MB of SSE comments, all sent at once: read fast, in the large buffer.
    var body: std.ArrayList(u8) = .empty;
    defer body.deinit(std.testing.allocator);
    const head_end = std.mem.indexOf(u8, tool_message, "event: content_block_start").?;
    try body.appendSlice(std.testing.allocator, tool_message[0..head_end]);
    for (0..2048) |_| try body.appendSlice(std.testing.allocator, ": " ++ "padding " ** 127 ++ "\n\n");
    try body.appendSlice(std.testing.allocator, tool_message[head_end..]);
    for ([_]Framing{ .content_length, .chunked }) |framing| {
        var server: TestServer = undefined;
        try server.startMany(.{ .body = body.items, .framing = framing, .piece = 1 << 16, .one_write = true }, &.{.{}});
        defer server.stop();
        var url_buf: [64]u8 = undefined;
        const url = try std.fmt.bufPrint(&url_buf, "http://127.0.0.1:{d}", .{server.port});
        // Counts what the agent, its stream and its connection hold.
        var counting = std.testing.FailingAllocator.init(std.testing.allocator, .{});
        const agent = try Agent.init(counting.allocator(), .{ .provider = .anthropic, .model = "m", .base_url = url, .api_key = "k", .capabilities = &.{"search"} });
        defer agent.deinit();
        var diag: @import("config.zig").Diagnostic = .{};
        try agent.addTool(lookup_tool, &diag);
        const stream = try agent.run("find x");
        defer stream.destroy();

        try std.testing.expect((try stream.next()).? == .message_start);
        try std.testing.expect((try stream.next()).? == .block_start); // after the 2 MB
        try std.testing.expectEqual(@import("body.zig").large_len, stream.body.capacity());
        const start = (try nextUntil(stream, .tool_call_start)).tool_call_start;
        try std.testing.expect(start.awaiting_result);
        // The turn waits for the tool's result: the connection is parked for the next request.
        try std.testing.expectEqual(0, stream.body.large.len);
        const parked = &agent.keep_alive.parked.?;
        try std.testing.expectEqual(0, parked.reader.interface.buffer.len);
        const held = counting.allocated_bytes - counting.freed_bytes;
        try std.testing.expect(held <= 64 * 1024);

        try stream.submitToolResult("toolu_1", "found it", false);
        _ = try nextUntil(stream, .message_complete);
    }
}

test "closing an unfinished turn keeps what was read, aborted; a pending tool call gets an error result" {
    var server: TestServer = undefined;
    try server.startMany(.{}, &.{ .{ .body = tool_message }, .{} });
    defer server.stop();
    const agent = try toolAgent(server.port, &.{"search"}, 10);
    defer agent.deinit();

    // Closed after the first delta: the second, decoded from the same read, was not seen.
    var stream = try agent.run("hi");
    try std.testing.expectEqualStrings("h\xc3\xa9llo ", (try nextUntil(stream, .content_delta)).content_delta.text);
    stream.close();
    const aborted = agent.conversation.messages.items[1];
    try std.testing.expectEqual(.aborted, aborted.stop_reason);
    try std.testing.expectEqual(@as(usize, 1), aborted.blocks.len);
    try std.testing.expectEqualStrings("h\xc3\xa9llo ", aborted.blocks[0].text);

    // Closed while a tool result is awaited: the call is answered with an error.
    stream = try agent.run("find x"); // not busy
    _ = try nextUntil(stream, .tool_call_start);
    stream.close();
    const messages = agent.conversation.messages.items;
    try std.testing.expectEqual(@as(usize, 5), messages.len); // + user, assistant (tool_use), user (result)
    try std.testing.expect(messages[4].blocks[0].is_error);

    // The agent runs the next turn.
    stream = try agent.run("again");
    defer stream.close();
    try std.testing.expectEqual(.end_turn, (try nextUntil(stream, .message_complete)).message_complete.stop_reason);
}
