//! Agent.continueTurn (panto_agent_continue): a turn that answers the conversation as it is,
//! such as one imported from another process whose last message is a tool round's results.
const std = @import("std");
const st = @import("../stream_test.zig");
const config = @import("../config.zig");
const conversation_json = @import("../conversation_json.zig");

/// A conversation whose last message is the results of a round: what a worker that ran the
/// tool hands on to the one that asks the model next.
const after_a_round =
    \\{"version":1,"messages":[{"role":"user","content":[{"type":"text","text":"find x"}]},
    \\{"role":"assistant","content":[{"type":"tool_call","id":"toolu_1","name":"lookup","input":{"q":"x"}}],"provider":"anthropic","model":"m","stop_reason":"tool_use"},
    \\{"role":"user","content":[{"type":"tool_result","id":"toolu_1","content":"found it","is_error":false}]}]}
;

test "continueTurn answers an imported conversation that ends with a round's results, appending no user message" {
    var record: std.ArrayList(u8) = .empty;
    defer record.deinit(std.testing.allocator);
    var server: st.TestServer = undefined;
    try server.startRecorded(.{}, &.{}, &record);
    const agent = try st.toolAgent(server.port, &.{"search"}, 10);
    defer agent.deinit();
    var problem: conversation_json.Diagnostic = .{};
    try agent.importJson(after_a_round, &problem);
    var diag: config.Diagnostic = .{};
    const stream = try agent.continueTurn(null, &diag);
    defer stream.destroy();
    const end = (try st.nextUntil(stream, .message_complete)).message_complete;
    try std.testing.expectEqual(.end_turn, end.stop_reason);
    try std.testing.expectEqual(null, try stream.next());
    server.stop();
    const messages = agent.conversation.messages.items;
    try std.testing.expectEqual(@as(usize, 4), messages.len);
    try std.testing.expectEqual(.assistant, messages[3].role);
    // The request was the conversation as it was: its last message the results.
    try std.testing.expect(std.mem.indexOf(u8, record.items, "\"tool_result\"") != null);
    try std.testing.expectEqual(@as(usize, 1), std.mem.count(u8, record.items, "find x"));
    // Nothing left to answer now: the model had the last word.
    try std.testing.expectError(error.NothingToAnswer, agent.continueTurn(null, &diag));
}

test "continueTurn with nothing to answer is refused; one that fails keeping nothing leaves the last message" {
    var server: st.TestServer = undefined;
    try server.start(.{ .status = "400 Bad Request", .content_type = "application/json", .body = "{\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":\"no\"}}" });
    defer server.stop();
    const agent = try st.loopbackAgent(server.port, .{ .provider = .anthropic, .model = "m" });
    defer agent.deinit();
    var diag: config.Diagnostic = .{};
    try std.testing.expectError(error.NothingToAnswer, agent.continueTurn(null, &diag)); // (empty)
    var problem: conversation_json.Diagnostic = .{};
    try agent.importJson("{\"version\":1,\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"hi\"}]}]}", &problem);
    const stream = try agent.continueTurn(null, &diag);
    defer stream.destroy();
    try std.testing.expectError(error.InvalidRequest, stream.next());
    // The user message was not this turn's: it stays, and the turn can be continued again.
    try std.testing.expectEqual(@as(usize, 1), agent.conversation.messages.items.len);
    try std.testing.expectEqual(@as(usize, 0), try agent.rollbackTurn());
}
