//! Host tool rounds with several calls: progress reported while they run comes first, results
//! submitted in any order come back in call order, the sequential flag, and finalMessage.
const std = @import("std");
const Agent = @import("agent.zig").Agent;
const st = @import("stream_test.zig");
const Diagnostic = @import("config.zig").Diagnostic;

fn call(comptime index: u8, comptime id: []const u8, comptime name: []const u8) []const u8 {
    const i = [_]u8{'0' + index};
    return "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":" ++ i ++ ",\"content_block\":{\"type\":\"tool_use\",\"id\":\"" ++ id ++ "\",\"name\":\"" ++ name ++ "\",\"input\":{}}}\n\n" ++
        "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":" ++ i ++ ",\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{}\"}}\n\n" ++
        "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":" ++ i ++ "}\n\n";
}

/// A message asking for `a` twice and `b` once.
const three_calls =
    "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_t\",\"model\":\"m\",\"usage\":{\"input_tokens\":2,\"output_tokens\":1}}}\n\n" ++
    call(0, "t1", "a") ++ call(1, "t2", "b") ++ call(2, "t3", "a") ++
    "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"},\"usage\":{\"output_tokens\":4}}\n\n" ++
    "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";

fn agentWith(port: u16, execution: @import("config.zig").ToolExecution) !*Agent {
    var url_buf: [64]u8 = undefined;
    const url = try std.fmt.bufPrint(&url_buf, "http://127.0.0.1:{d}", .{port});
    const agent = try Agent.init(std.testing.allocator, .{ .provider = .anthropic, .model = "m", .base_url = url, .api_key = "k", .tool_execution = execution });
    errdefer agent.deinit();
    var diag: Diagnostic = .{};
    try agent.addTool("{\"name\":\"a\"}", &diag);
    try agent.addTool("{\"name\":\"b\",\"sequential\":true}", &diag);
    return agent;
}

test "progress comes before the rest of the round; results submitted out of order come in call order" {
    var server: st.TestServer = undefined;
    try server.startMany(.{ .body = three_calls }, &.{.{}});
    defer server.stop();
    const agent = try agentWith(server.port, .parallel);
    defer agent.deinit();
    const stream = try agent.run("go");
    defer stream.destroy();

    var e = (try stream.next()).?;
    while (e != .tool_call_start) e = (try stream.next()).?;
    try std.testing.expectEqualStrings("t1", e.tool_call_start.id);
    try std.testing.expect(!e.tool_call_start.sequential);
    // Progress of a call already announced comes before the next TOOL_CALL_START.
    try stream.toolProgress("t1", "half", 0.5);
    try stream.toolProgress("t1", "text only", -1);
    const p1 = (try stream.next()).?.tool_progress;
    try std.testing.expectEqualStrings("t1", p1.id);
    try std.testing.expectEqualStrings("a", p1.name);
    try std.testing.expectEqualStrings("half", p1.text);
    try std.testing.expectEqual(@as(?f64, 0.5), p1.fraction);
    const p2 = (try stream.next()).?.tool_progress;
    try std.testing.expectEqualStrings("text only", p2.text);
    try std.testing.expectEqual(@as(?f64, null), p2.fraction);
    const s2 = (try stream.next()).?.tool_call_start;
    try std.testing.expectEqualStrings("t2", s2.id);
    try std.testing.expect(s2.sequential); // its tool says so
    try std.testing.expectEqualStrings("t3", (try stream.next()).?.tool_call_start.id);

    try std.testing.expectError(error.InvalidArgument, stream.toolProgress("t1", "", 1.5));
    try std.testing.expectError(error.InvalidArgument, stream.toolProgress("t1", "", std.math.nan(f64)));
    try std.testing.expectError(error.NoSuchCall, stream.toolProgress("t9", "", 0));
    try stream.submitToolResult("t3", "third", false);
    try std.testing.expectError(error.NoSuchCall, stream.toolProgress("t3", "done already", 1));
    try std.testing.expectError(error.ResultPending, stream.next());
    try stream.toolProgress("t2", "bad \xff byte", 1);
    const p3 = (try stream.next()).?.tool_progress;
    try std.testing.expectEqualStrings("bad \xef\xbf\xbd byte", p3.text);
    try std.testing.expectEqual(@as(?f64, 1), p3.fraction);
    try std.testing.expectError(error.ResultPending, stream.next());
    try stream.submitToolResult("t2", "second", false);
    try stream.submitToolResult("t1", "first", true);
    try std.testing.expectError(error.NoSuchCall, stream.toolProgress("t1", "", 0));

    const names = [_][]const u8{ "first", "second", "third" };
    for (names, 0..) |want, i| {
        const r = (try stream.next()).?.tool_result;
        try std.testing.expectEqualStrings(want, r.content);
        try std.testing.expectEqual(i == 0, r.is_error);
    }
    // The next message is the last: its text is the turn's final text.
    const final = try stream.finalMessage();
    try std.testing.expectEqualStrings("h\xc3\xa9llo w\xc3\xb6rld", final.text);
    try std.testing.expectEqual(.end_turn, final.complete.stop_reason);
    try std.testing.expectEqual(@as(u64, 2 + 3), final.complete.usage.input_tokens);
    // Again after the turn: the same.
    try std.testing.expectEqualStrings("h\xc3\xa9llo w\xc3\xb6rld", (try stream.finalMessage()).text);
    try std.testing.expectError(error.NoSuchCall, stream.toolProgress("t1", "", 0));
    // The results went to the model in call order, in one user message.
    const results = agent.conversation.messages.items[2].blocks;
    try std.testing.expectEqualStrings("t1", results[0].id);
    try std.testing.expectEqualStrings("t2", results[1].id);
    try std.testing.expectEqualStrings("t3", results[2].id);
}

test "finalMessage stops at a call awaiting its result and names it; tool_execution sequential marks every call" {
    var server: st.TestServer = undefined;
    try server.startMany(.{ .body = three_calls }, &.{.{}});
    defer server.stop();
    const agent = try agentWith(server.port, .sequential);
    defer agent.deinit();
    const stream = try agent.run("go");
    defer stream.destroy();

    try std.testing.expectError(error.ResultPending, stream.finalMessage());
    const ids = [_][]const u8{ "t1", "t2", "t3" };
    for (ids) |id| {
        const pending = stream.pendingCall().?;
        try std.testing.expectEqualStrings(id, pending.id);
        try std.testing.expect(pending.sequential);
        try stream.submitToolResult(id, "ok", false);
    }
    try std.testing.expectEqual(null, stream.pendingCall());
    const final = try stream.finalMessage();
    try std.testing.expectEqualStrings("h\xc3\xa9llo w\xc3\xb6rld", final.text);
}

test "a canceled round drops its queued progress" {
    var server: st.TestServer = undefined;
    try server.startMany(.{ .body = three_calls }, &.{});
    defer server.stop();
    const agent = try agentWith(server.port, .parallel);
    defer agent.deinit();
    const stream = try agent.run("go");
    defer stream.destroy();
    try std.testing.expectError(error.ResultPending, stream.finalMessage());
    try stream.toolProgress("t1", "x", 0.1);
    stream.cancel();
    try std.testing.expectError(error.Canceled, stream.next());
    try std.testing.expectError(error.Canceled, stream.finalMessage());
    try std.testing.expectError(error.NoSuchCall, stream.toolProgress("t1", "x", 0.2));
}
