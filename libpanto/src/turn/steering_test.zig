//! Steering and follow-ups (turn/steering.zig, issue 36): what the user says during a turn
//! enters the conversation at a safe point (a steer after a tool round's results, in the same
//! user message) or starts the stream's next turn (a follow-up, or a steer no round took),
//! and no request ever carries two user messages in a row or a tool call without its result.
const std = @import("std");
const Stream = @import("../stream.zig").Stream;
const ev = @import("../event.zig");
const st = @import("../stream_test.zig");
const budget_test = @import("../budget_test.zig");

const gpa = std.testing.allocator;

/// The events' kinds from here to the stream's end, and the UserMessages' texts in order.
fn drain(stream: *Stream, kinds: *std.ArrayList(std.meta.Tag(ev.Event)), said: *std.ArrayList(u8)) !void {
    while (try stream.next()) |e| {
        try kinds.append(gpa, e);
        if (e == .user_message) {
            try said.print(gpa, "{t}: {s}\n", .{ e.user_message.source, e.user_message.text });
        }
    }
}

fn count(kinds: []const std.meta.Tag(ev.Event), tag: std.meta.Tag(ev.Event)) usize {
    var n: usize = 0;
    for (kinds) |k| n += @intFromBool(k == tag);
    return n;
}

test "a steer during a tool round goes to the model with the round's results, in one user message" {
    var record: std.ArrayList(u8) = .empty;
    defer record.deinit(gpa);
    var server: st.TestServer = undefined;
    try server.startRecorded(.{ .body = st.tool_message }, &.{.{}}, &record);
    const agent = try st.toolAgent(server.port, &.{"search"}, 10);
    defer agent.deinit();
    const stream = try agent.run("find x");
    defer stream.destroy();

    _ = try st.nextUntil(stream, .tool_call_start);
    try stream.steer("look for y instead");
    try stream.submitToolResult("toolu_1", "found x", false);
    try std.testing.expect((try stream.next()).? == .tool_result);
    const said = (try stream.next()).?.user_message;
    try std.testing.expectEqual(.steer, said.source);
    try std.testing.expectEqualStrings("look for y instead", said.text);
    const end = (try st.nextUntil(stream, .message_complete)).message_complete;
    try std.testing.expectEqual(.end_turn, end.stop_reason);
    try std.testing.expectEqual(null, try stream.next());
    server.stop();

    // user, assistant (tool_use), user (tool_result, then the steer), assistant
    const messages = agent.conversation.messages.items;
    try std.testing.expectEqual(@as(usize, 4), messages.len);
    try std.testing.expectEqual(@as(usize, 2), messages[2].blocks.len);
    try std.testing.expectEqual(.tool_result, messages[2].blocks[0].kind);
    try std.testing.expectEqual(.text, messages[2].blocks[1].kind);
    try std.testing.expectEqualStrings("look for y instead", messages[2].blocks[1].text);
    // The round's next request carried it, after the result.
    const second = record.items[std.mem.lastIndexOf(u8, record.items, "POST ").?..];
    const result_at = std.mem.indexOf(u8, second, "\"tool_result\"").?;
    const steer_at = std.mem.indexOf(u8, second, "look for y instead").?;
    try std.testing.expect(steer_at > result_at);
    try budget_test.expectValidNextRequest(agent);
}

test "a steer taken back before the round takes it never reaches the model" {
    var record: std.ArrayList(u8) = .empty;
    defer record.deinit(gpa);
    var server: st.TestServer = undefined;
    try server.startRecorded(.{ .body = st.tool_message }, &.{.{}}, &record);
    const agent = try st.toolAgent(server.port, &.{"search"}, 10);
    defer agent.deinit();
    const stream = try agent.run("find x");
    defer stream.destroy();

    _ = try st.nextUntil(stream, .tool_call_start);
    try stream.steer("look for y instead");
    try stream.followUp("and then z");
    var back: std.ArrayList(Stream.Queued) = .empty;
    defer {
        for (back.items) |m| gpa.free(m.text);
        back.deinit(gpa);
    }
    try stream.withdrawQueued(&back);
    try std.testing.expectEqual(@as(usize, 2), back.items.len);
    try std.testing.expectEqualStrings("look for y instead", back.items[0].text);
    try std.testing.expectEqualStrings("and then z", back.items[1].text);
    try stream.submitToolResult("toolu_1", "found x", false);
    var kinds: std.ArrayList(std.meta.Tag(ev.Event)) = .empty;
    defer kinds.deinit(gpa);
    var said: std.ArrayList(u8) = .empty;
    defer said.deinit(gpa);
    try drain(stream, &kinds, &said);
    server.stop();
    try std.testing.expectEqualStrings("", said.items);
    try std.testing.expectEqual(@as(usize, 1), count(kinds.items, .message_complete));
    // user, assistant (tool_use), user (the result alone), assistant
    const messages = agent.conversation.messages.items;
    try std.testing.expectEqual(@as(usize, 4), messages.len);
    try std.testing.expectEqual(@as(usize, 1), messages[2].blocks.len);
    try std.testing.expect(std.mem.indexOf(u8, record.items, "look for y") == null);
}

test "a follow-up starts the stream's next turn after the first's MessageComplete; each turn has its own usage" {
    var server: st.TestServer = undefined;
    try server.startMany(.{}, &.{.{}});
    defer server.stop();
    const agent = try st.loopbackAgent(server.port, .{ .provider = .anthropic, .model = "m" });
    defer agent.deinit();
    const stream = try agent.run("hi");
    defer stream.destroy();

    try stream.followUp("and then?");
    const first = (try st.nextUntil(stream, .message_complete)).message_complete;
    try std.testing.expect(agent.busy); // (the next turn is this stream's)
    const said = (try stream.next()).?.user_message;
    try std.testing.expectEqual(.follow_up, said.source);
    try std.testing.expectEqualStrings("and then?", said.text);
    try std.testing.expect((try stream.next()).? == .message_start);
    const second = (try st.nextUntil(stream, .message_complete)).message_complete;
    try std.testing.expectEqual(null, try stream.next());
    try std.testing.expect(!agent.busy);
    try std.testing.expectEqual(first.usage.output_tokens, second.usage.output_tokens); // (not summed)
    const messages = agent.conversation.messages.items;
    try std.testing.expectEqual(@as(usize, 4), messages.len);
    try std.testing.expectEqualStrings("and then?", messages[2].blocks[0].text);
    try budget_test.expectValidNextRequest(agent);
    // The stream is over: a late message is refused, not lost.
    try std.testing.expectError(error.Ended, stream.followUp("too late"));
    try std.testing.expectError(error.Ended, stream.steer("too late"));
}

test "a steer that no tool round takes becomes the next turn's user message" {
    var server: st.TestServer = undefined;
    try server.startMany(.{}, &.{.{}});
    defer server.stop();
    const agent = try st.loopbackAgent(server.port, .{ .provider = .anthropic, .model = "m" });
    defer agent.deinit();
    const stream = try agent.run("hi");
    defer stream.destroy();

    try std.testing.expect((try stream.next()).? == .message_start);
    try stream.steer("shorter, please");
    try std.testing.expectError(error.InvalidArgument, stream.steer(""));
    var kinds: std.ArrayList(std.meta.Tag(ev.Event)) = .empty;
    defer kinds.deinit(gpa);
    var said: std.ArrayList(u8) = .empty;
    defer said.deinit(gpa);
    try drain(stream, &kinds, &said);
    try std.testing.expectEqualStrings("follow_up: shorter, please\n", said.items);
    try std.testing.expectEqual(@as(usize, 2), count(kinds.items, .message_complete));
    try std.testing.expectEqual(@as(usize, 4), agent.conversation.messages.items.len);
    try budget_test.expectValidNextRequest(agent);
}

test "a stream closed with a follow-up queued drops it; the agent runs its next turn" {
    var server: st.TestServer = undefined;
    try server.startMany(.{}, &.{.{}});
    defer server.stop();
    const agent = try st.loopbackAgent(server.port, .{ .provider = .anthropic, .model = "m" });
    defer agent.deinit();
    {
        const stream = try agent.run("hi");
        defer stream.destroy();
        try stream.followUp("never sent");
        _ = try st.nextUntil(stream, .message_complete);
        // Closed here, between the turns: the follow-up's turn never starts.
    }
    try std.testing.expect(!agent.busy);
    try std.testing.expectEqual(@as(usize, 2), agent.conversation.messages.items.len);
    const next = try agent.run("again");
    defer next.destroy();
    _ = try st.nextUntil(next, .message_complete);
    try budget_test.expectValidNextRequest(agent);
}

test "a steer while a call waits for a person's answer skips that call: the user moved on, the steer goes with the results" {
    const at = @import("../approval_test.zig");
    var record: std.ArrayList(u8) = .empty;
    defer record.deinit(gpa);
    var server: st.TestServer = undefined;
    try server.startRecorded(.{ .body = at.message(at.call(0, "t1", "danger", "{}") ++ at.call(1, "t2", "a", "{}")) }, &.{.{}}, &record);
    const agent = try at.agentWith(server.port, &.{});
    defer agent.deinit();
    const stream = try agent.run("clean up");
    defer stream.destroy();

    _ = try st.nextUntil(stream, .approval_request);
    try at.expectStart((try stream.next()).?, "t2", true);
    try stream.submitToolResult("t2", "done", false);
    try std.testing.expectError(error.ApprovalPending, stream.next());
    try stream.steer("leave that file alone");
    // Not ApprovalPending again: the waiting call is skipped, announced as a denied one is.
    try at.expectStart((try stream.next()).?, "t1", false);
    const skipped = (try stream.next()).?.tool_result;
    try std.testing.expectEqualStrings("t1", skipped.id);
    try std.testing.expectEqualStrings(@import("../stream.zig").steer_skipped, skipped.content);
    try std.testing.expect(skipped.is_error);
    try std.testing.expectEqualStrings("done", (try stream.next()).?.tool_result.content);
    try std.testing.expectEqualStrings("leave that file alone", (try stream.next()).?.user_message.text);
    _ = try st.nextUntil(stream, .message_complete);
    server.stop();
    try std.testing.expectError(error.InvalidArgument, stream.approve("t1"));
    const second = record.items[std.mem.lastIndexOf(u8, record.items, "POST ").?..];
    try std.testing.expect(std.mem.indexOf(u8, second, "Skipped: the user steered.").? < std.mem.indexOf(u8, second, "leave that file alone").?);
    try budget_test.expectValidNextRequest(agent);
}
