//! A turn's budgets (config `budget`, issue 36): reaching one ends the turn normally, its
//! MessageComplete saying `budget` and naming which, the calls of a round it stops answered,
//! and the conversation left one whose next request is valid (every tool call with its result,
//! never two user messages in a row). The stepped path: stream_step_test.zig.
const std = @import("std");
const Agent = @import("agent.zig").Agent;
const Stream = @import("stream.zig").Stream;
const ev = @import("event.zig");
const st = @import("stream_test.zig");
const config = @import("config.zig");
const providers = @import("providers.zig");
const watchdog = @import("transport/watchdog.zig");

const gpa = std.testing.allocator;

/// A message's first events and text, then nothing until the client goes away.
const stalled_text: st.Answer = .{
    .body = st.sse_body[0 .. std.mem.indexOf(u8, st.sse_body, "event: content_block_stop").?],
    .framing = .content_length,
    .stall = true,
};

/// An agent on `port` with the `lookup` host tool and the budget.
fn budgetAgent(port: u16, budget: config.Budget) !*Agent {
    const agent = try st.loopbackAgent(port, .{ .provider = .anthropic, .model = "m", .capabilities = &.{"search"}, .budget = budget, .retry = .{ .max_retries = 0 } });
    errdefer agent.deinit();
    var diag: config.Diagnostic = .{};
    try agent.addTool(st.lookup_tool, &diag);
    return agent;
}

/// Reads the turn to its end: the MessageComplete, after checking that no call started.
fn expectEndWithoutStart(stream: *Stream) !ev.MessageComplete {
    while (try stream.next()) |e| switch (e) {
        .tool_call_start => return error.TestUnexpectedResult,
        .message_complete => |c| return c,
        else => {},
    };
    return error.TestUnexpectedEnd;
}

/// The request the agent's next turn sends (Anthropic's wire form): its messages alternate
/// user / assistant, and every tool_use has its tool_result in the next message.
pub fn expectValidNextRequest(agent: *Agent) !void {
    var out: std.Io.Writer.Allocating = .init(gpa);
    defer out.deinit();
    try providers.writeRequest(.anthropic, &out.writer, .{ .config = agent.config, .conversation = &agent.conversation, .tools = agent.tools.items(), .granted = agent.config.capabilities });
    const parsed = try std.json.parseFromSlice(std.json.Value, gpa, out.written(), .{});
    defer parsed.deinit();
    const messages = parsed.value.object.get("messages").?.array.items;
    for (messages, 0..) |m, i| {
        const role = m.object.get("role").?.string;
        try std.testing.expectEqualStrings(if (i % 2 == 0) "user" else "assistant", role);
        const blocks = m.object.get("content").?;
        if (blocks != .array) continue;
        for (blocks.array.items) |b| {
            if (!std.mem.eql(u8, b.object.get("type").?.string, "tool_use")) continue;
            const id = b.object.get("id").?.string;
            try std.testing.expect(i + 1 < messages.len);
            const answered = for (messages[i + 1].object.get("content").?.array.items) |r| {
                const r_id = r.object.get("tool_use_id") orelse continue;
                if (std.mem.eql(u8, r_id.string, id)) break true;
            } else false;
            try std.testing.expect(answered);
        }
    }
}

/// The last message: the results of a round the budget stopped, every one "Skipped".
fn expectSkippedRound(agent: *const Agent) !void {
    const messages = agent.conversation.messages.items;
    const last = messages[messages.len - 1];
    try std.testing.expectEqual(.user, last.role);
    for (last.blocks) |b| {
        try std.testing.expectEqual(.tool_result, b.kind);
        try std.testing.expect(b.is_error);
        try std.testing.expectEqualStrings(@import("stream.zig").budget_skipped, b.text);
    }
}

/// The agent's next turn, against the server's plain answer, ends well.
fn expectNextTurn(agent: *Agent, options: ?[]const u8) !void {
    try expectValidNextRequest(agent);
    var diag: config.Diagnostic = .{};
    const next = try agent.runWith(.{ .text = "again" }, options, &diag);
    defer next.destroy();
    const end = (try st.nextUntil(next, .message_complete)).message_complete;
    try std.testing.expectEqual(.end_turn, end.stop_reason);
}

test "tool_rounds: the round past the budget is skipped, the turn ends with budget, the next turn's request is valid" {
    var server: st.TestServer = undefined;
    try server.startMany(.{ .body = st.tool_message }, &.{ .{ .body = st.tool_message }, .{} });
    defer server.stop();
    const agent = try budgetAgent(server.port, .{ .tool_rounds = 1 });
    defer agent.deinit();
    const stream = try agent.run("find x");
    defer stream.destroy();

    _ = try st.nextUntil(stream, .tool_call_start);
    try stream.submitToolResult("toolu_1", "found it", false);
    _ = try st.nextUntil(stream, .tool_result);
    const end = try expectEndWithoutStart(stream);
    try std.testing.expectEqual(.budget, end.stop_reason);
    try std.testing.expectEqualStrings("tool_rounds", end.provider_stop_reason);
    try std.testing.expectEqual(@as(u64, 8), end.usage.output_tokens); // (both messages')
    try std.testing.expectEqual(null, try stream.next());
    try std.testing.expect(!agent.busy);
    // user, assistant (tool_use), user (result), assistant (tool_use), user (skipped)
    try std.testing.expectEqual(@as(usize, 5), agent.conversation.messages.items.len);
    try expectSkippedRound(agent);
    try std.testing.expectEqual(@as(usize, 0), try agent.rollbackTurn()); // it ended well
    try expectNextTurn(agent, null);
}

test "tool_rounds 0 skips the first round; max_tool_iterations below it stays the ToolLoop error" {
    var server: st.TestServer = undefined;
    try server.startMany(.{ .body = st.tool_message }, &.{.{ .body = st.tool_message }});
    defer server.stop();
    const agent = try budgetAgent(server.port, .{ .tool_rounds = 0 });
    defer agent.deinit();
    const stream = try agent.run("find x");
    defer stream.destroy();
    const end = try expectEndWithoutStart(stream);
    try std.testing.expectEqual(.budget, end.stop_reason);
    try std.testing.expectEqualStrings("tool_rounds", end.provider_stop_reason);
    try expectSkippedRound(agent);

    // The budget of a turn's options, past the runaway guard: the guard fails the turn.
    var diag: config.Diagnostic = .{};
    try agent.setConfig("{\"max_tool_iterations\":0}", &diag);
    const guarded = try agent.runWith(.{ .text = "again" }, "{\"budget\":{\"tool_rounds\":5}}", &diag);
    defer guarded.destroy();
    try std.testing.expectError(error.ToolLoop, st.nextUntil(guarded, .message_complete));
    try expectValidNextRequest(agent);
}

test "output_tokens: summed at each message's end, a round after it is reached is skipped; a last answer keeps its own stop reason" {
    var server: st.TestServer = undefined;
    try server.startMany(.{ .body = st.tool_message }, &.{.{}});
    defer server.stop();
    const agent = try budgetAgent(server.port, .{ .output_tokens = 4 });
    defer agent.deinit();
    const stream = try agent.run("find x");
    defer stream.destroy();
    const end = try expectEndWithoutStart(stream);
    try std.testing.expectEqual(.budget, end.stop_reason);
    try std.testing.expectEqualStrings("output_tokens", end.provider_stop_reason);
    try std.testing.expectEqual(@as(u64, 4), end.usage.output_tokens);
    try expectSkippedRound(agent);
    // The next turn's answer (5 output tokens) ends it anyway: end_turn, not budget.
    try expectNextTurn(agent, null);
}

test "wall_ms: a request it interrupts ends the turn normally, keeping what was seen of the message; timeouts.total_ms stays an error" {
    var server: st.TestServer = undefined;
    // The server stalls mid-message until the client goes away: only the budget ends it.
    try server.startMany(stalled_text, &.{ .{}, stalled_text });
    defer server.stop();
    const agent = try budgetAgent(server.port, .{ .wall_ms = 200 });
    defer agent.deinit();
    const stream = try agent.run("hi");
    defer stream.destroy();
    var seen: std.ArrayList(u8) = .empty;
    defer seen.deinit(gpa);
    const end = while (try stream.next()) |e| switch (e) {
        .content_delta => |d| try seen.appendSlice(gpa, d.text),
        .message_end => return error.TestUnexpectedResult,
        .message_complete => |c| break c,
        else => {},
    } else return error.TestUnexpectedEnd;
    try std.testing.expectEqual(.budget, end.stop_reason);
    try std.testing.expectEqualStrings("wall_ms", end.provider_stop_reason);
    try std.testing.expect(!agent.busy);
    // However far the turn got before the deadline: what was seen is kept, marked aborted.
    const messages = agent.conversation.messages.items;
    if (seen.items.len == 0) {
        try std.testing.expect(messages.len <= 2);
    } else {
        try std.testing.expectEqual(@as(usize, 2), messages.len);
        try std.testing.expectEqual(.aborted, messages[1].stop_reason);
        try std.testing.expectEqualStrings(seen.items, messages[1].blocks[0].text);
    }
    // The next turn, its budget lifted by its options, sends a valid request and ends well.
    try expectNextTurn(agent, "{\"budget\":{\"wall_ms\":null}}");

    // total_ms, the runaway guard, still fails the turn when it comes first.
    var diag: config.Diagnostic = .{};
    try agent.setConfig("{\"budget\":{\"wall_ms\":60000},\"timeouts\":{\"total_ms\":100}}", &diag);
    const guarded = try agent.run("again");
    defer guarded.destroy();
    try std.testing.expectError(error.Timeout, st.nextUntil(guarded, .message_complete));
}

test "wall_ms spent while the host runs a call: the round's results are kept and no request follows" {
    var server: st.TestServer = undefined;
    try server.startMany(.{ .body = st.tool_message }, &.{.{}});
    defer server.stop();
    const agent = try budgetAgent(server.port, .{ .wall_ms = 60_000 });
    defer agent.deinit();
    const stream = try agent.run("find x");
    defer stream.destroy();
    _ = try st.nextUntil(stream, .tool_call_start);
    try std.testing.expectError(error.ResultPending, stream.next());
    // The deadline passes while the host works (moved here, not slept for: no timing).
    stream.wall_deadline_ns = watchdog.nowNs();
    try stream.submitToolResult("toolu_1", "found it", false);
    _ = try st.nextUntil(stream, .tool_result);
    const end = (try stream.next()).?.message_complete;
    try std.testing.expectEqual(.budget, end.stop_reason);
    try std.testing.expectEqualStrings("wall_ms", end.provider_stop_reason);
    // user, assistant (tool_use), user (the result): the model is not asked again.
    const messages = agent.conversation.messages.items;
    try std.testing.expectEqual(@as(usize, 3), messages.len);
    try std.testing.expectEqualStrings("found it", messages[2].blocks[0].text);
    try expectNextTurn(agent, "{\"budget\":{\"wall_ms\":null}}");
}

test "cost_usd: summed at each message's end at the model's prices, a round after it is reached is skipped" {
    var server: st.TestServer = undefined;
    try server.startMany(.{ .body = st.tool_message }, &.{.{}});
    defer server.stop();
    // A model the catalog prices; a budget the first message's few tokens already spend.
    const agent = try st.loopbackAgent(server.port, .{ .provider = .anthropic, .model = "claude-sonnet-4-5", .capabilities = &.{"search"}, .budget = .{ .cost_usd = 0.000001 }, .retry = .{ .max_retries = 0 } });
    defer agent.deinit();
    var diag: config.Diagnostic = .{};
    try agent.addTool(st.lookup_tool, &diag);
    const stream = try agent.run("find x");
    defer stream.destroy();
    const end = try expectEndWithoutStart(stream);
    try std.testing.expectEqual(.budget, end.stop_reason);
    try std.testing.expectEqualStrings("cost_usd", end.provider_stop_reason);
    try std.testing.expect(end.cost.? >= 0.000001);
    try expectSkippedRound(agent);
    try expectNextTurn(agent, "{\"budget\":{\"cost_usd\":null}}");
}

test "cost_usd on a model whose prices are unknown fails the turn before its first request, with a Config error that says so" {
    var server: st.TestServer = undefined;
    try server.start(.{});
    defer server.stop();
    const agent = try budgetAgent(server.port, .{ .cost_usd = 1 });
    defer agent.deinit();
    const stream = try agent.run("hi");
    defer stream.destroy();
    try std.testing.expectError(error.Config, stream.next());
    try std.testing.expect(std.mem.indexOf(u8, stream.failureDetail().?.message.items, "budget.cost_usd needs the prices of anthropic model \"m\"") != null);
    // Prices given by model_info: the same budget holds.
    var diag: config.Diagnostic = .{};
    try agent.setConfig("{\"model_info\":{\"price\":{\"input\":3,\"output\":15}}}", &diag);
    const again = try agent.run("hi");
    defer again.destroy();
    const end = (try st.nextUntil(again, .message_complete)).message_complete;
    try std.testing.expectEqual(.end_turn, end.stop_reason);
}
