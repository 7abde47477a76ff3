//! Compaction against a real loopback HTTP server that records the requests it is sent: a turn
//! whose context passes the threshold summarizes first (the summary request and the compacted
//! request checked), so does a tool round's request (the tool call kept with its result);
//! a summary request that fails, or is canceled, leaves the conversation as it was;
//! `Agent.compact` and its refusals.
const std = @import("std");
const Agent = @import("agent.zig").Agent;
const Stream = @import("stream.zig").Stream;
const Event = @import("event.zig").Event;
const conversation = @import("conversation.zig");
const compaction = @import("compaction.zig");
const Config = @import("config.zig").Config;
const test_deadline = @import("test_deadline.zig");
const stream_test = @import("stream_test.zig");
const tool_message = stream_test.tool_message;
const lookup_tool = stream_test.lookup_tool;

const gpa = std.testing.allocator;
var server_io_instance: std.Io.Threaded = .init_single_threaded;

/// An Anthropic message of one text block, with its usage.
fn textMessage(comptime text: []const u8, comptime input_tokens: u32, comptime output_tokens: u32) []const u8 {
    return std.fmt.comptimePrint(
        "event: message_start\ndata: {{\"type\":\"message_start\",\"message\":{{\"id\":\"msg_1\",\"model\":\"m\",\"usage\":{{\"input_tokens\":{d},\"output_tokens\":1}}}}}}\n\n" ++
            "event: content_block_start\ndata: {{\"type\":\"content_block_start\",\"index\":0,\"content_block\":{{\"type\":\"text\",\"text\":\"\"}}}}\n\n" ++
            "event: content_block_delta\ndata: {{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{{\"type\":\"text_delta\",\"text\":\"{s}\"}}}}\n\n" ++
            "event: content_block_stop\ndata: {{\"type\":\"content_block_stop\",\"index\":0}}\n\n" ++
            "event: message_delta\ndata: {{\"type\":\"message_delta\",\"delta\":{{\"stop_reason\":\"end_turn\"}},\"usage\":{{\"output_tokens\":{d}}}}}\n\n" ++
            "event: message_stop\ndata: {{\"type\":\"message_stop\"}}\n\n",
        .{ input_tokens, text, output_tokens },
    );
}

const summary_answer = textMessage("The user asked old things; the assistant answered.", 500, 20);
const final_answer = textMessage("hello", 40, 5);

const overloaded: Answer = .{
    .status = "529 Overloaded",
    .content_type = "application/json",
    .body = "{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}",
};

const Answer = struct {
    status: []const u8 = "200 OK",
    content_type: []const u8 = "text/event-stream",
    body: []const u8 = final_answer,
    /// After the head and the body, cancel the server's `cancel_target`, then wait for the
    /// client to go away (the body never ends).
    cancel: bool = false,
};

/// Serves its answers in order, one connection each, and keeps every request's body.
const Server = struct {
    server: std.Io.net.Server,
    thread: std.Thread,
    port: u16,
    answers: []const Answer,
    done: std.atomic.Value(bool) = .init(false),
    /// Only the server's thread writes it until `stop` joins the thread.
    bodies: std.ArrayList([]u8) = .empty,
    cancel_target: std.atomic.Value(?*Stream) = .init(null),
    url_buf: [64]u8 = undefined,

    fn start(s: *Server, answers: []const Answer) !void {
        const io = server_io_instance.io();
        const address = try std.Io.net.IpAddress.parseIp4("127.0.0.1", 0);
        s.* = .{ .server = try address.listen(io, .{ .reuse_address = true }), .thread = undefined, .port = 0, .answers = answers };
        s.port = s.server.socket.address.getPort();
        s.thread = try std.Thread.spawn(.{}, serve, .{s});
    }

    fn url(s: *Server) []const u8 {
        return std.fmt.bufPrint(&s.url_buf, "http://127.0.0.1:{d}", .{s.port}) catch unreachable;
    }

    /// Waits for the thread, knocking while it waits for a request a failed test never made.
    fn stop(s: *Server) void {
        const io = server_io_instance.io();
        stream_test.knockUntilDone(io, s.port, &s.done);
        s.thread.join();
        s.server.deinit(io);
        for (s.bodies.items) |b| gpa.free(b);
        s.bodies.deinit(gpa);
    }

    fn serve(s: *Server) void {
        defer s.done.store(true, .release);
        for (s.answers) |a| s.serveOne(a) catch {};
    }

    fn serveOne(s: *Server, a: Answer) !void {
        const io = server_io_instance.io();
        const conn = try s.server.accept(io);
        defer conn.close(io);
        var read_buf: [64 * 1024]u8 = undefined;
        var reader = conn.reader(io, &read_buf);
        const r = &reader.interface;
        const body = try gpa.alloc(u8, try stream_test.readRequestHead(r));
        errdefer gpa.free(body);
        try r.readSliceAll(body);
        try s.bodies.append(gpa, body);

        var write_buf: [1024]u8 = undefined;
        var writer = conn.writer(io, &write_buf);
        const w = &writer.interface;
        try w.print("HTTP/1.1 {s}\r\ncontent-type: {s}\r\nconnection: close\r\n", .{ a.status, a.content_type });
        if (a.cancel) {
            try w.print("transfer-encoding: chunked\r\n\r\n{x}\r\n{s}\r\n", .{ a.body.len, a.body });
            try w.flush();
            s.cancel_target.load(.acquire).?.cancel();
            test_deadline.awaitPeer(conn.socket.handle);
            return;
        }
        try w.print("content-length: {d}\r\n\r\n{s}", .{ a.body.len, a.body });
        try w.flush();
    }

    /// The request `i`, parsed.
    fn request(s: *Server, arena: std.mem.Allocator, i: usize) !std.json.Value {
        return std.json.parseFromSliceLeaky(std.json.Value, arena, s.bodies.items[i], .{});
    }
};

/// An agent on the server with a small context window: compaction past 1000 - 100 tokens,
/// keeping the last 50 or so.
fn newAgent(server: *Server) !*Agent {
    return Agent.init(gpa, .{
        .provider = .anthropic,
        .model = "m",
        .base_url = server.url(),
        .api_key = "k",
        .capabilities = &.{"search"},
        .retry = .{ .max_retries = 1, .initial_delay_ms = 1 },
        .keep_alive = .{ .idle_ms = 0 },
        .compaction = .{ .context_window = 1000, .reserve_tokens = 100, .keep_recent_tokens = 50 },
    });
}

/// A turn past the threshold: an agent on a server of `answers`, with an old question and
/// answer whose usage says 950 tokens, running the new question. Start it in place (the
/// server's thread points at it), end it with `end`.
const PastThreshold = struct {
    server: Server,
    agent: *Agent,
    stream: *Stream,

    fn start(t: *PastThreshold, answers: []const Answer) !void {
        try t.server.start(answers);
        errdefer t.server.stop();
        t.agent = try newAgent(&t.server);
        errdefer t.agent.deinit();
        try appendText(t.agent, .user, old_question, 0);
        try appendText(t.agent, .assistant, old_answer, 950); // the provider's count: past 900
        t.stream = try t.agent.run(new_question);
        t.server.cancel_target.store(t.stream, .release);
    }

    fn end(t: *PastThreshold) void {
        t.stream.destroy();
        t.agent.deinit();
        t.server.stop();
    }
};

/// Appends a message of one text block (with a usage, for an assistant's).
fn appendText(agent: *Agent, role: conversation.Role, text: []const u8, input_tokens: u64) !void {
    try agent.conversation.appendCopy(role, &.{.{ .kind = .text, .text = text }});
    agent.conversation.messages.items[agent.conversation.messages.items.len - 1].usage = .{ .input_tokens = input_tokens };
}

/// The conversation as JSON, to compare before and after.
fn snapshot(agent: *Agent) ![]u8 {
    var out: std.Io.Writer.Allocating = .init(gpa);
    defer out.deinit();
    try agent.conversation.writeJson(&out.writer);
    return out.toOwnedSlice();
}

/// The next event, which must be a `tag`: its payload.
fn nextAs(stream: *Stream, comptime tag: std.meta.Tag(Event)) !@FieldType(Event, @tagName(tag)) {
    const e = (try stream.next()) orelse return error.TestUnexpectedResult;
    if (e != tag) {
        std.debug.print("expected {s}, got {s}\n", .{ @tagName(tag), @tagName(e) });
        return error.TestUnexpectedResult;
    }
    return @field(e, @tagName(tag));
}

fn nextUntil(stream: *Stream, tag: std.meta.Tag(Event)) !Event {
    while (try stream.next()) |e| if (e == tag) return e;
    return error.TestUnexpectedResult;
}

fn textOf(m: conversation.Message) []const u8 {
    return m.blocks[0].text;
}

/// The text of the first block of request message `i`.
fn requestText(req: std.json.Value, i: usize) []const u8 {
    const content = req.object.get("messages").?.array.items[i].object.get("content").?.array.items[0];
    return content.object.get("text").?.string;
}

const old_question = "Which files hold the parser? " ** 8;
const old_answer = "The parser is in sse.zig and decode.zig. " ** 6;
const new_question = "Now make the parser faster, please, and keep every test green. " ** 4; // 252 characters: 63 tokens

test "a turn past the threshold summarizes the older messages first, then sends the request with the summary" {
    var t: PastThreshold = undefined;
    try t.start(&.{ .{ .body = summary_answer }, .{} });
    defer t.end();
    const agent = t.agent;
    const stream = t.stream;
    const server = &t.server;

    const start = try nextAs(stream, .compaction_start);
    try std.testing.expectEqualStrings("threshold", start.reason);
    try std.testing.expectEqual(@as(u64, 950 + 63), start.tokens_before); // usage + what came after
    const end = try nextAs(stream, .compaction_end);
    try std.testing.expectEqual(@as(u64, 950 + 63), end.tokens_before);
    try std.testing.expectEqual(@as(u64, 2), end.message_count);
    try std.testing.expectEqualStrings("The user asked old things; the assistant answered.", end.summary);
    const summary_text = compaction.summary_prefix ++ "The user asked old things; the assistant answered." ++ compaction.summary_suffix;
    try std.testing.expectEqual(compaction.tokensOf(summary_text.len + new_question.len), end.tokens_after);
    _ = try nextAs(stream, .message_start);
    const complete = (try nextUntil(stream, .message_complete)).message_complete;
    try std.testing.expectEqual(null, try stream.next());
    // The turn's usage counts the summary request's.
    try std.testing.expectEqual(@as(u64, 500 + 40), complete.usage.input_tokens);
    try std.testing.expectEqual(@as(u64, 20 + 5), complete.usage.output_tokens);

    // The conversation: the summary, then what was kept.
    const messages = agent.conversation.messages.items;
    try std.testing.expectEqual(@as(usize, 3), messages.len);
    try std.testing.expectEqual(conversation.Role.user, messages[0].role);
    try std.testing.expectEqualStrings(summary_text, textOf(messages[0]));
    try std.testing.expectEqual(@as(u64, 2), messages[0].compaction.?.message_count);
    try std.testing.expectEqual(@as(u64, 950 + 63), messages[0].compaction.?.tokens_before);
    try std.testing.expectEqualStrings(new_question, textOf(messages[1]));
    try std.testing.expectEqualStrings("hello", textOf(messages[2]));

    // The summary request: the prompt as system, no tools, one user message of the old ones.
    var arena: std.heap.ArenaAllocator = .init(gpa);
    defer arena.deinit();
    try std.testing.expectEqual(@as(usize, 2), server.bodies.items.len);
    const summary_req = try server.request(arena.allocator(), 0);
    try std.testing.expectEqualStrings(compaction.default_prompt, summary_req.object.get("system").?.string);
    try std.testing.expect(summary_req.object.get("tools") == null);
    try std.testing.expectEqual(@as(usize, 1), summary_req.object.get("messages").?.array.items.len);
    try std.testing.expectEqualStrings("<conversation>\n[User]: " ++ old_question ++ "\n\n[Assistant]: " ++ old_answer ++ "\n</conversation>", requestText(summary_req, 0));
    // The turn's request: the summary in place of the old messages, the new question after it
    // in the same user message (Anthropic takes no two user messages in a row).
    const turn_req = try server.request(arena.allocator(), 1);
    try std.testing.expect(turn_req.object.get("system") == null);
    try std.testing.expectEqual(@as(usize, 1), turn_req.object.get("messages").?.array.items.len);
    try std.testing.expectEqualStrings(summary_text, requestText(turn_req, 0));
    const content = turn_req.object.get("messages").?.array.items[0].object.get("content").?.array.items;
    try std.testing.expectEqualStrings(new_question, content[1].object.get("text").?.string);
}

test "a turn under the threshold, or with nothing old enough to summarize, goes out as it is" {
    var server: Server = undefined;
    try server.start(&.{ .{}, .{} });
    defer server.stop();
    const agent = try newAgent(&server);
    defer agent.deinit();
    try appendText(agent, .user, old_question, 0);
    try appendText(agent, .assistant, old_answer, 800); // 800 + 63: under 900
    {
        const stream = try agent.run(new_question);
        defer stream.destroy();
        _ = try nextAs(stream, .message_start);
        _ = try nextUntil(stream, .message_complete);
    }
    // Past the threshold, but everything is recent: keep_recent_tokens covers it all.
    agent.config.compaction.keep_recent_tokens = 100_000;
    agent.conversation.messages.items[3].usage = .{ .input_tokens = 5000 };
    const stream = try agent.run("more");
    defer stream.destroy();
    _ = try nextAs(stream, .message_start);
    _ = try nextUntil(stream, .message_complete);
    try std.testing.expectEqual(@as(usize, 6), agent.conversation.messages.items.len);
    try std.testing.expectEqual(@as(usize, 2), server.bodies.items.len);
}

test "a tool round whose result passes the threshold compacts before the next request, the tool call kept with its result" {
    var server: Server = undefined;
    const big_result = "R" ** 4000; // 1000 tokens
    try server.start(&.{ .{ .body = tool_message }, .{ .body = summary_answer }, .{} });
    defer server.stop();
    const agent = try newAgent(&server);
    defer agent.deinit();
    var diag: @import("config.zig").Diagnostic = .{};
    try agent.addTool(lookup_tool, &diag);
    try appendText(agent, .user, old_question, 0);
    try appendText(agent, .assistant, old_answer, 0);
    const stream = try agent.run("find x");
    defer stream.destroy();
    _ = try nextAs(stream, .message_start); // no compaction: ~130 tokens
    _ = try nextUntil(stream, .tool_call_start);
    try stream.submitToolResult("toolu_1", big_result, false);
    _ = try nextAs(stream, .tool_result);
    const start = try nextAs(stream, .compaction_start);
    try std.testing.expectEqualStrings("threshold", start.reason);
    const end = try nextAs(stream, .compaction_end);
    // The result alone is past keep_recent_tokens; the cut moves back to its call.
    try std.testing.expectEqual(@as(u64, 3), end.message_count);
    _ = try nextAs(stream, .message_start);
    _ = try nextUntil(stream, .message_complete);

    const messages = agent.conversation.messages.items;
    try std.testing.expectEqual(@as(usize, 4), messages.len);
    try std.testing.expect(messages[0].compaction != null);
    try std.testing.expectEqual(conversation.BlockKind.tool_call, messages[1].blocks[0].kind);
    try std.testing.expectEqual(conversation.BlockKind.tool_result, messages[2].blocks[0].kind);
    try std.testing.expectEqualStrings("hello", textOf(messages[3]));

    var arena: std.heap.ArenaAllocator = .init(gpa);
    defer arena.deinit();
    try std.testing.expectEqual(@as(usize, 3), server.bodies.items.len);
    try std.testing.expect((try server.request(arena.allocator(), 0)).object.get("tools") != null);
    const summary_req = try server.request(arena.allocator(), 1);
    try std.testing.expect(summary_req.object.get("tools") == null);
    try std.testing.expectEqualStrings("<conversation>\n[User]: " ++ old_question ++ "\n\n[Assistant]: " ++ old_answer ++ "\n\n[User]: find x\n</conversation>", requestText(summary_req, 0));
    const next_req = try server.request(arena.allocator(), 2);
    const sent = next_req.object.get("messages").?.array.items;
    try std.testing.expectEqual(@as(usize, 3), sent.len);
    try std.testing.expectEqualStrings("tool_use", sent[1].object.get("content").?.array.items[0].object.get("type").?.string);
    try std.testing.expectEqualStrings("tool_result", sent[2].object.get("content").?.array.items[0].object.get("type").?.string);
}

/// A turn past the threshold whose summary request gets `answers`: it fails with `expected`
/// (after a COMPACTION_START), the conversation as it was before the turn (its user message
/// rolled back).
fn expectSummaryFailure(answers: []const Answer, expected: anyerror, message_part: []const u8) !void {
    var t: PastThreshold = undefined;
    try t.start(answers);
    defer t.end();
    const agent = t.agent;
    const stream = t.stream;
    // As it was before the turn: the turn's user message is rolled back as it fails.
    const count = agent.conversation.messages.items.len;
    agent.conversation.messages.items.len -= 1;
    const before = try snapshot(agent);
    agent.conversation.messages.items.len += 1;
    defer gpa.free(before);
    _ = try nextAs(stream, .compaction_start);
    var e = stream.next();
    while (e) |got| : (e = stream.next()) {
        try std.testing.expect(got.? == .provider_retry); // (retried as any request)
    } else |err| try std.testing.expectEqual(expected, err);
    try std.testing.expectEqual(expected, stream.next()); // sticky
    try std.testing.expect(std.mem.indexOf(u8, stream.failureDetail().?.message.items, message_part) != null);
    const after = try snapshot(agent);
    defer gpa.free(after);
    try std.testing.expectEqualStrings(before, after);
    try std.testing.expectEqual(count - 1, agent.conversation.messages.items.len);
    try std.testing.expectEqual(@as(u64, 950), agent.conversation.messages.items[1].usage.input_tokens);
    try std.testing.expect(!agent.busy);
}

test "a summary request that fails fails the turn with its error; the conversation is as before the turn" {
    const unauthorized: Answer = .{
        .status = "401 Unauthorized",
        .content_type = "application/json",
        .body = "{\"type\":\"error\",\"error\":{\"type\":\"authentication_error\",\"message\":\"invalid x-api-key\"}}",
    };
    try expectSummaryFailure(&.{unauthorized}, error.Authentication, "invalid x-api-key");
    try expectSummaryFailure(&.{ overloaded, overloaded }, error.Overloaded, "Overloaded");
    // A summary of no text is no summary.
    try expectSummaryFailure(&.{.{ .body = textMessage("  ", 5, 1) }}, error.Protocol, "empty summary");
}

test "a summary request retried after a ProviderRetry event, then the turn goes on" {
    var t: PastThreshold = undefined;
    try t.start(&.{ overloaded, .{ .body = summary_answer }, .{} });
    defer t.end();
    const agent = t.agent;
    const stream = t.stream;
    _ = try nextAs(stream, .compaction_start);
    try std.testing.expectEqual(@as(u32, 1), (try nextAs(stream, .provider_retry)).attempt);
    _ = try nextAs(stream, .compaction_end);
    _ = try nextAs(stream, .message_start);
    _ = try nextUntil(stream, .message_complete);
    try std.testing.expectEqual(@as(usize, 3), agent.conversation.messages.items.len);
}

test "a turn canceled during its summary request ends Canceled; the conversation is as before the turn" {
    const partial = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"model\":\"m\",\"usage\":{\"input_tokens\":3,\"output_tokens\":1}}}\n\n" ++
        "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n" ++
        "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"The user\"}}\n\n";
    try expectSummaryFailure(&.{.{ .body = partial, .cancel = true }}, error.Canceled, "canceled");
}

test "Agent.compact summarizes now: COMPACTION_START, COMPACTION_END, MESSAGE_COMPLETE, then null" {
    var server: Server = undefined;
    try server.start(&.{ .{ .body = summary_answer }, .{} });
    defer server.stop();
    const agent = try newAgent(&server);
    defer agent.deinit();
    agent.config.system = "You are terse.";
    try appendText(agent, .user, old_question, 0);
    try appendText(agent, .assistant, old_answer, 120);
    try appendText(agent, .user, new_question, 0);
    try appendText(agent, .assistant, "Done.", 0);

    const stream = try agent.compact();
    defer stream.destroy();
    try std.testing.expectError(error.Busy, agent.compact());
    try std.testing.expectError(error.Busy, agent.run("x"));
    const start = try nextAs(stream, .compaction_start);
    try std.testing.expectEqualStrings("manual", start.reason);
    try std.testing.expectEqual(@as(u64, 120 + compaction.tokensOf(new_question.len + 5)), start.tokens_before);
    const end = try nextAs(stream, .compaction_end);
    try std.testing.expectEqual(@as(u64, 2), end.message_count); // the last ~50 tokens stay
    const complete = try nextAs(stream, .message_complete);
    try std.testing.expectEqual(.end_turn, complete.stop_reason);
    try std.testing.expectEqual(@as(u64, 500), complete.usage.input_tokens);
    try std.testing.expectEqual(@as(u64, 20), complete.usage.output_tokens);
    try std.testing.expectEqual(null, try stream.next());

    const messages = agent.conversation.messages.items;
    try std.testing.expectEqual(@as(usize, 3), messages.len);
    try std.testing.expect(messages[0].compaction != null);
    try std.testing.expectEqualStrings(new_question, textOf(messages[1]));
    try std.testing.expectEqualStrings("Done.", textOf(messages[2]));
    // The summary's estimate counts characters: the usage kept from before no longer applies.
    const system_len = "You are terse.".len;
    try std.testing.expectEqual(compaction.tokensOf(messages[0].blocks[0].text.len + new_question.len + 5 + system_len), end.tokens_after);
    try std.testing.expectEqual(end.tokens_after, compaction.estimate(&agent.conversation, agent.config.system));

    var arena: std.heap.ArenaAllocator = .init(gpa);
    defer arena.deinit();
    const summary_req = try server.request(arena.allocator(), 0);
    try std.testing.expectEqualStrings(compaction.default_prompt, summary_req.object.get("system").?.string);

    // The agent goes on with the compacted conversation.
    const turn = try agent.run("next");
    defer turn.destroy();
    _ = try nextAs(turn, .message_start);
    _ = try nextUntil(turn, .message_complete);
    const turn_req = try server.request(arena.allocator(), 1);
    // (the summary and the question kept after it go as one user message, then "Done.", "next")
    try std.testing.expectEqual(@as(usize, 3), turn_req.object.get("messages").?.array.items.len);
    // (a block array: it carries the system prompt's cache breakpoint)
    try std.testing.expectEqualStrings("You are terse.", turn_req.object.get("system").?.array.items[0].object.get("text").?.string);
}

test "Agent.compact with nothing older than keep_recent_tokens is refused; nothing changes" {
    const agent = try Agent.init(gpa, .{ .provider = .anthropic, .model = "m", .api_key = "k", .base_url = "http://127.0.0.1:9" });
    defer agent.deinit();
    try std.testing.expectError(error.NothingToCompact, agent.compact());
    try appendText(agent, .user, old_question, 0);
    try appendText(agent, .assistant, old_answer, 100_000);
    try std.testing.expectError(error.NothingToCompact, agent.compact()); // all within 20,000 tokens
    agent.config.compaction.keep_recent_tokens = 10;
    // Only a tool result would be kept: the cut moves back to its call, the first message.
    agent.conversation.deinit();
    agent.conversation = .init(gpa);
    try agent.conversation.appendCopy(.assistant, &.{.{ .kind = .tool_call, .id = "c1", .name = "lookup", .text = "{}" }});
    try agent.conversation.appendCopy(.user, &.{.{ .kind = .tool_result, .id = "c1", .text = "R" ** 400 }});
    try std.testing.expectError(error.NothingToCompact, agent.compact());
    try std.testing.expectEqual(@as(usize, 2), agent.conversation.messages.items.len);
    try std.testing.expect(!agent.busy);
}

test "with OpenAI too: the summary request in its format, the summary from its chunks, its usage counted" {
    const chunk = "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"";
    const chunk_end = "\"},\"logprobs\":null,\"finish_reason\":null}]}\n\n";
    const summary = chunk ++ "Old things were " ++ chunk_end ++ chunk ++ "discussed." ++ chunk_end ++
        "data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n" ++
        "data: {\"id\":\"c\",\"choices\":[],\"usage\":{\"prompt_tokens\":300,\"completion_tokens\":9,\"total_tokens\":309}}\n\ndata: [DONE]\n\n";
    const answer = chunk ++ "hi" ++ chunk_end ++
        "data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n" ++
        "data: {\"id\":\"c\",\"choices\":[],\"usage\":{\"prompt_tokens\":30,\"completion_tokens\":1,\"total_tokens\":31}}\n\ndata: [DONE]\n\n";
    var server: Server = undefined;
    try server.start(&.{ .{ .body = summary }, .{ .body = answer } });
    defer server.stop();
    const agent = try Agent.init(gpa, .{
        .provider = .openai,
        .model = "gpt-4o-mini", // 128,000 tokens, from the table
        .base_url = server.url(),
        .api_key = "k",
        .system = "Be brief.",
        .keep_alive = .{ .idle_ms = 0 },
        .compaction = .{ .keep_recent_tokens = 10 },
    });
    defer agent.deinit();
    try appendText(agent, .user, old_question, 0);
    try appendText(agent, .assistant, old_answer, 120_000); // past 128,000 - 16,384
    const stream = try agent.run(new_question);
    defer stream.destroy();
    try std.testing.expectEqual(@as(u64, 120_000 + 63), (try nextAs(stream, .compaction_start)).tokens_before);
    try std.testing.expectEqualStrings("Old things were discussed.", (try nextAs(stream, .compaction_end)).summary);
    _ = try nextAs(stream, .message_start);
    const complete = (try nextUntil(stream, .message_complete)).message_complete;
    try std.testing.expectEqual(@as(u64, 330), complete.usage.input_tokens);
    try std.testing.expectEqual(@as(u64, 10), complete.usage.output_tokens);

    var arena: std.heap.ArenaAllocator = .init(gpa);
    defer arena.deinit();
    // The prompt goes as the system message; the agent's own system prompt comes back after.
    const summary_req = (try server.request(arena.allocator(), 0)).object.get("messages").?.array.items;
    try std.testing.expectEqual(@as(usize, 2), summary_req.len);
    try std.testing.expectEqualStrings(compaction.default_prompt, summary_req[0].object.get("content").?.string);
    try std.testing.expect(std.mem.startsWith(u8, summary_req[1].object.get("content").?.string, "<conversation>\n[User]: Which files"));
    const turn_req = (try server.request(arena.allocator(), 1)).object.get("messages").?.array.items;
    try std.testing.expectEqual(@as(usize, 3), turn_req.len);
    try std.testing.expectEqualStrings("Be brief.", turn_req[0].object.get("content").?.string);
    try std.testing.expect(std.mem.startsWith(u8, turn_req[1].object.get("content").?.string, compaction.summary_prefix ++ "Old things were discussed."));
}

test "a compaction that failed at the provider's door is run again by reopen: a manual one from its start, a threshold one decided again" {
    var server: Server = undefined;
    try server.start(&.{ .{ .body = summary_answer }, .{} });
    defer server.stop();
    const agent = try newAgent(&server);
    defer agent.deinit();
    agent.config.retry.max_retries = 0;
    try appendText(agent, .user, old_question, 0);
    try appendText(agent, .assistant, old_answer, 950);
    agent.config.base_url = "http://127.0.0.1:9"; // nothing listens there
    {
        // Nothing is left to compact when it is reopened: refused, nothing changes.
        const stream = try agent.compact();
        defer stream.destroy();
        _ = try nextAs(stream, .compaction_start);
        try std.testing.expectError(error.Connection, stream.next());
        agent.config.compaction.keep_recent_tokens = 100_000;
        try std.testing.expectError(error.State, stream.reopen());
        try std.testing.expectError(error.Connection, stream.next());
        try std.testing.expect(!agent.busy);
        agent.config.compaction.keep_recent_tokens = 50;
    }
    {
        const stream = try agent.compact();
        defer stream.destroy();
        _ = try nextAs(stream, .compaction_start);
        try std.testing.expectError(error.Connection, stream.next());
        // The conversation changes before the reopen: the compaction follows it.
        try appendText(agent, .user, old_question, 0);
        try appendText(agent, .assistant, old_answer, 0);
        agent.config.base_url = server.url();
        try stream.reopen();
        try std.testing.expectEqualStrings("manual", (try nextAs(stream, .compaction_start)).reason);
        try std.testing.expectEqual(@as(u64, 3), (try nextAs(stream, .compaction_end)).message_count);
        _ = try nextAs(stream, .message_complete);
        try std.testing.expectEqual(null, try stream.next());
    }
    var arena: std.heap.ArenaAllocator = .init(gpa);
    defer arena.deinit();
    try std.testing.expectEqualStrings("<conversation>\n[User]: " ++ old_question ++ "\n\n[Assistant]: " ++ old_answer ++ "\n\n[User]: " ++ old_question ++ "\n</conversation>", requestText(try server.request(arena.allocator(), 0), 0));
    try std.testing.expectEqual(@as(usize, 2), agent.conversation.messages.items.len);
    // Now past the threshold again, the summary request fails; the window grows before reopen.
    agent.conversation.messages.items[1].usage = .{ .input_tokens = 950 };
    agent.conversation.stale_usage_before = 0;

    agent.config.base_url = "http://127.0.0.1:9";
    const stream = try agent.run(new_question);
    defer stream.destroy();
    _ = try nextAs(stream, .compaction_start);
    try std.testing.expectError(error.Connection, stream.next());
    agent.config.base_url = server.url();
    agent.config.compaction.context_window = 100_000;
    try stream.reopen();
    _ = try nextAs(stream, .message_start); // no compaction now
    _ = try nextUntil(stream, .message_complete);
    try std.testing.expectEqual(@as(usize, 4), agent.conversation.messages.items.len);
}

test "read in batches: the compaction's events come each alone, before the request's" {
    var t: PastThreshold = undefined;
    try t.start(&.{ .{ .body = summary_answer }, .{} });
    defer t.end();
    var tags: std.ArrayList(std.meta.Tag(Event)) = .empty;
    defer tags.deinit(gpa);
    var summary: std.ArrayList(u8) = .empty;
    defer summary.deinit(gpa);
    while (true) {
        const batch = try t.stream.nextBatch(64);
        if (batch.len == 0) break;
        if (batch[0] == .compaction_start or batch[0] == .compaction_end) try std.testing.expectEqual(@as(usize, 1), batch.len);
        if (batch[0] == .compaction_end) try summary.appendSlice(gpa, batch[0].compaction_end.summary);
        for (batch) |e| try tags.append(gpa, e);
    }
    try std.testing.expect(tags.items.len > 3);
    try std.testing.expectEqualSlices(std.meta.Tag(Event), &.{ .compaction_start, .compaction_end, .message_start }, tags.items[0..3]);
    try std.testing.expectEqual(.message_complete, tags.items[tags.items.len - 1]);
    try std.testing.expectEqualStrings("The user asked old things; the assistant answered.", summary.items);
}

test "the agent keeps its own copy of the compaction prompt; set_config turns compaction off and on" {
    var server: Server = undefined;
    try server.start(&.{ .{}, .{ .body = summary_answer }, .{} });
    defer server.stop();
    const prompt = try gpa.dupe(u8, "Summarize, briefly.");
    const agent = try Agent.init(gpa, .{
        .provider = .anthropic,
        .model = "m",
        .base_url = server.url(),
        .api_key = "k",
        .keep_alive = .{ .idle_ms = 0 },
        .compaction = .{ .context_window = 1000, .reserve_tokens = 100, .keep_recent_tokens = 50, .prompt = prompt },
    });
    defer agent.deinit();
    @memset(prompt, 'X'); // the caller's copy changes, then goes
    gpa.free(prompt);
    try appendText(agent, .user, old_question, 0);
    try appendText(agent, .assistant, old_answer, 950);
    var diag: @import("config.zig").Diagnostic = .{};
    try agent.setConfig("{\"compaction\":{\"enabled\":false}}", &diag);
    {
        const stream = try agent.run(new_question);
        defer stream.destroy();
        _ = try nextAs(stream, .message_start); // past the threshold, but compaction is off
        _ = try nextUntil(stream, .message_complete);
    }
    try agent.setConfig("{\"compaction\":{\"enabled\":true}}", &diag);
    agent.conversation.messages.items[3].usage = .{ .input_tokens = 950 };
    const stream = try agent.run("again");
    defer stream.destroy();
    _ = try nextAs(stream, .compaction_start);
    _ = try nextAs(stream, .compaction_end);
    _ = try nextUntil(stream, .message_complete);
    var arena: std.heap.ArenaAllocator = .init(gpa);
    defer arena.deinit();
    try std.testing.expectEqualStrings("Summarize, briefly.", (try server.request(arena.allocator(), 1)).object.get("system").?.string);
}

test "a session resumed after a compaction estimates as the agent that compacted: the usage kept from before it does not count" {
    var server: Server = undefined;
    try server.start(&.{.{ .body = summary_answer }});
    defer server.stop();
    var tmp = std.testing.tmpDir(.{});
    defer tmp.cleanup();
    var dir_buf: [std.c.PATH_MAX]u8 = undefined;
    const dir = try @import("session/dir.zig").tmpPath(&tmp, &dir_buf);
    var config: Config = .{
        .provider = .anthropic,
        .model = "claude-test",
        .base_url = server.url(),
        .api_key = "k",
        .keep_alive = .{ .idle_ms = 0 },
        .compaction = .{ .keep_recent_tokens = 50 },
        .session = .{ .dir = dir, .id = "compacted" },
    };
    const before = before: {
        const agent = try Agent.init(gpa, config);
        defer agent.deinit();
        try agent.conversation.appendUserText(old_question);
        try agent.conversation.appendMessage(.assistant, &.{.{ .kind = .text, .text = old_answer }}, .{ .stop_reason = .end_turn, .provider = "anthropic", .model = "claude-test", .usage = .{ .input_tokens = 950 } });
        const stream = try agent.compact();
        defer stream.destroy();
        _ = try nextAs(stream, .compaction_start);
        try std.testing.expectEqual(@as(u64, 1), (try nextAs(stream, .compaction_end)).message_count);
        _ = try nextAs(stream, .message_complete);
        // [summary, the answer with its old usage]: counted in characters.
        break :before compaction.estimate(&agent.conversation, null);
    };
    try std.testing.expect(before < 950);
    config.session.?.mode = .@"resume";
    const resumed = try Agent.init(gpa, config);
    defer resumed.deinit();
    try std.testing.expectEqual(@as(usize, 2), resumed.conversation.messages.items.len);
    try std.testing.expectEqual(before, compaction.estimate(&resumed.conversation, null));
}
