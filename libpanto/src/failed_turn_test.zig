//! The rule of a turn that fails or is canceled (docs/conversations.md, "A turn that fails"):
//! one that kept nothing after its user message is rolled back as it fails, `reopen` puts the
//! message back, and one that kept something stays until Agent.rollbackTurn removes it. So
//! the next request never carries two user messages in a row.
const std = @import("std");
const Agent = @import("agent.zig").Agent;
const Stream = @import("stream.zig").Stream;
const conversation = @import("conversation.zig");
const stream_test = @import("stream_test.zig");
const TestServer = stream_test.TestServer;
const nextUntil = stream_test.nextUntil;

const gpa = std.testing.allocator;

const overloaded: stream_test.Answer = .{
    .status = "529 Overloaded",
    .content_type = "application/json",
    .body = "{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}",
    .framing = .content_length,
};

const refused: stream_test.Answer = .{
    .status = "400 Bad Request",
    .content_type = "application/json",
    .body = "{\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":\"thinking is not supported\"}}",
    .framing = .content_length,
};

fn agentFor(port: u16) !*Agent {
    var url_buf: [64]u8 = undefined;
    const url = try std.fmt.bufPrint(&url_buf, "http://127.0.0.1:{d}", .{port});
    return Agent.init(gpa, .{ .provider = .anthropic, .model = "m", .base_url = url, .api_key = "k", .retry = .{ .max_retries = 0 } });
}

/// The roles of the conversation, "u" and "a", in order.
fn expectRoles(agent: *const Agent, comptime roles: []const u8) !void {
    var got: [16]u8 = undefined;
    const messages = agent.conversation.messages.items;
    for (messages, 0..) |m, i| got[i] = if (m.role == .user) 'u' else 'a';
    try std.testing.expectEqualStrings(roles, got[0..messages.len]);
}

test "a turn that fails before any answer is rolled back as it fails; the next turn's conversation alternates" {
    var server: TestServer = undefined;
    try server.startMany(overloaded, &.{.{}});
    defer server.stop();
    const agent = try agentFor(server.port);
    defer agent.deinit();

    const failed = try agent.run("one");
    defer failed.destroy(); // (still open while the next turn runs)
    try std.testing.expectError(error.Overloaded, failed.next());
    try expectRoles(agent, "");
    try std.testing.expectEqual(@as(usize, 0), try agent.rollbackTurn()); // nothing left of it

    const second = try agent.run("two");
    defer second.destroy();
    _ = try nextUntil(second, .message_complete);
    try expectRoles(agent, "ua");
    try std.testing.expectEqualStrings("two", agent.conversation.messages.items[0].blocks[0].text);
}

test "a turn canceled before any text is rolled back; after text its partial answer stays, until rollbackTurn" {
    var server: TestServer = undefined;
    try server.start(.{ .stall = true });
    defer server.stop();
    const agent = try agentFor(server.port);
    defer agent.deinit();

    // Closed before anything was sent.
    var stream = try agent.run("never sent");
    stream.close();
    try expectRoles(agent, "");

    // Canceled after a delta: the partial answer stays, aborted.
    stream = try agent.run("hi");
    _ = try nextUntil(stream, .content_delta);
    stream.cancel();
    try std.testing.expectError(error.Canceled, stream.next());
    stream.close();
    try expectRoles(agent, "ua");
    try std.testing.expectEqual(.aborted, agent.conversation.messages.items[1].stop_reason);

    // The explicit rollback removes the turn, once.
    try std.testing.expectEqual(@as(usize, 2), try agent.rollbackTurn());
    try expectRoles(agent, "");
    try std.testing.expectEqual(@as(usize, 0), try agent.rollbackTurn());
}

test "rollbackTurn removes a failed turn's tool round with it, and nothing after a turn that ended well" {
    var server: TestServer = undefined;
    try server.startMany(.{}, &.{ .{ .body = stream_test.tool_message }, overloaded });
    defer server.stop();
    const agent = try stream_test.toolAgent(server.port, &.{"search"}, 10);
    defer agent.deinit();
    agent.config.retry.max_retries = 0;

    var stream = try agent.run("hello");
    _ = try nextUntil(stream, .message_complete);
    stream.close();
    try std.testing.expectEqual(@as(usize, 0), try agent.rollbackTurn()); // it ended well

    stream = try agent.run("find x");
    const call = try nextUntil(stream, .tool_call_start);
    try stream.submitToolResult(call.tool_call_start.id, "found", false);
    try std.testing.expectError(error.Overloaded, nextUntil(stream, .message_complete));
    stream.close();
    try expectRoles(agent, "uauau"); // the round stays: the call and its result pair up
    try std.testing.expectEqual(@as(usize, 3), try agent.rollbackTurn());
    try expectRoles(agent, "ua");
}

test "reopen puts the failed turn's user message back once, after any turn run meanwhile" {
    var server: TestServer = undefined;
    try server.startMany(refused, &.{ .{}, refused, .{}, .{} });
    defer server.stop();
    const agent = try agentFor(server.port);
    defer agent.deinit();

    const stream = try agent.run("hi");
    defer stream.destroy();
    try std.testing.expectError(error.InvalidRequest, stream.next());
    try expectRoles(agent, "");
    try stream.reopen();
    try expectRoles(agent, "u");
    _ = try nextUntil(stream, .message_complete);
    try expectRoles(agent, "ua");

    const again = try agent.run("again");
    defer again.destroy();
    try std.testing.expectError(error.InvalidRequest, again.next());
    const other = try agent.run("other");
    _ = try nextUntil(other, .message_complete);
    other.destroy();
    try expectRoles(agent, "uaua");
    try again.reopen();
    _ = try nextUntil(again, .message_complete);
    try expectRoles(agent, "uauaua");
    try std.testing.expectEqualStrings("again", agent.conversation.messages.items[4].blocks[0].text);
}
