//! A tool round left waiting for a person (issue 36, decision 3): a stream closed while a call
//! waits for its answer leaves it to the agent (Agent.pendingRound, resumeTurn); a session
//! records it, so that an agent opening the session after the process ended, by a SIGKILL
//! as well, has it too; a new turn answers what it left. Each test ends with the next
//! request valid: no call without its result, never two user messages in a row.
const std = @import("std");
const Agent = @import("../agent.zig").Agent;
const st = @import("../stream_test.zig");
const at = @import("../approval_test.zig");
const config = @import("../config.zig");
const dir_mod = @import("../session/dir.zig");
const pending_round = @import("pending_round.zig");
const expectValidNextRequest = @import("../budget_test.zig").expectValidNextRequest;

const gpa = std.testing.allocator;

/// t1 asks (the tool `danger` says so), t2 runs freely (a host call).
const mixed_round = at.message(at.call(0, "t1", "danger", "{\"path\":\"x\"}") ++ at.call(1, "t2", "a", "{}"));

/// Reads the round of `mixed_round` up to the wait for a person: t2's result given.
fn readUntilWaiting(stream: anytype) !void {
    const request = (try st.nextUntil(stream, .approval_request)).approval_request;
    try std.testing.expectEqual(@as(usize, 1), request.calls.len);
    try at.expectStart((try stream.next()).?, "t2", true);
    try std.testing.expectError(error.ResultPending, stream.next());
    try stream.submitToolResult("t2", "done", false);
    try std.testing.expectError(error.ApprovalPending, stream.next());
}

fn expectPending(agent: *Agent, ask: pending_round.State, other: pending_round.State) !void {
    const calls = try agent.pendingCalls();
    try std.testing.expectEqual(@as(usize, 2), calls.len);
    try std.testing.expectEqualStrings("t1", calls[0].id.slice());
    try std.testing.expectEqualStrings("danger", calls[0].name.slice());
    try std.testing.expectEqualStrings("{\"path\":\"x\"}", calls[0].input.slice());
    try std.testing.expectEqual(ask, calls[0].state);
    try std.testing.expectEqualStrings("t2", calls[1].id.slice());
    try std.testing.expectEqual(other, calls[1].state);
}

/// Resumes the agent's round: t1 asked again, t2 announced with its result, then t1
/// approved, run and answered, and the turn ends.
fn resumeAndApprove(agent: *Agent) !void {
    var diag: config.Diagnostic = .{};
    const stream = try agent.resumeTurn(null, &diag);
    defer stream.destroy();
    const request = (try stream.next()).?.approval_request;
    try std.testing.expectEqualStrings("t1", request.calls[0].id.slice());
    try at.expectStart((try stream.next()).?, "t2", false); // (answered already)
    try std.testing.expectError(error.ApprovalPending, stream.next());
    try stream.approve("t1");
    try at.expectStart((try stream.next()).?, "t1", true);
    try stream.submitToolResult("t1", "removed", false);
    try std.testing.expectEqualStrings("removed", (try stream.next()).?.tool_result.content);
    try std.testing.expectEqualStrings("done", (try stream.next()).?.tool_result.content);
    _ = try stream.finalMessage();
    try std.testing.expectEqual(null, agent.pendingRound());
}

test "a stream closed while a call waits for a person leaves the round pending; resumeTurn goes on with it" {
    var record: std.ArrayList(u8) = .empty;
    defer record.deinit(gpa);
    var server: st.TestServer = undefined;
    try server.startRecorded(.{ .body = mixed_round }, &.{.{}}, &record);
    const agent = try at.agentWith(server.port, &.{});
    defer agent.deinit();
    {
        const stream = try agent.run("go");
        defer stream.destroy();
        try readUntilWaiting(stream);
    }
    try std.testing.expect(!agent.busy);
    // The conversation ends with the round's calls, their results not in it yet.
    const messages = agent.conversation.messages.items;
    try std.testing.expectEqual(@as(usize, 2), messages.len);
    try std.testing.expectEqual(.assistant, messages[1].role);
    try expectPending(agent, .ask, .answered);
    try resumeAndApprove(agent);
    server.stop();
    // The second request carried both results, in call order, once.
    const second = record.items[std.mem.lastIndexOf(u8, record.items, "POST").?..];
    try std.testing.expectEqual(@as(usize, 1), std.mem.count(u8, second, "\"removed\""));
    try std.testing.expect(std.mem.indexOf(u8, second, "\"removed\"").? < std.mem.indexOf(u8, second, "\"done\"").?);
    try expectValidNextRequest(agent);
}

test "a canceled stream leaves the round pending too; a call that had started gets a canceled result" {
    var server: st.TestServer = undefined;
    try server.start(.{ .body = mixed_round });
    defer server.stop();
    const agent = try at.agentWith(server.port, &.{});
    defer agent.deinit();
    const stream = try agent.run("go");
    defer stream.destroy();
    _ = try st.nextUntil(stream, .tool_call_start); // (t2 handed to the host, no result yet)
    stream.cancel();
    try std.testing.expectError(error.Canceled, stream.next());
    try expectPending(agent, .ask, .answered);
    const round = agent.pendingRound().?;
    try std.testing.expectEqualStrings("The turn was canceled before this tool call finished.", round.resultOf("t2").?.text);
}

test "a new turn answers the round it leaves: the asked call not approved, in one user message with the new text" {
    var record: std.ArrayList(u8) = .empty;
    defer record.deinit(gpa);
    var server: st.TestServer = undefined;
    try server.startRecorded(.{ .body = mixed_round }, &.{.{}}, &record);
    const agent = try at.agentWith(server.port, &.{});
    defer agent.deinit();
    {
        const stream = try agent.run("go");
        defer stream.destroy();
        try readUntilWaiting(stream);
    }
    const stream = try agent.run("never mind");
    defer stream.destroy();
    _ = try stream.finalMessage();
    server.stop();
    try std.testing.expectEqual(null, agent.pendingRound());
    const messages = agent.conversation.messages.items;
    const results = messages[2].blocks;
    try std.testing.expectEqualStrings(pending_round.settleText(.ask), results[0].text);
    try std.testing.expect(results[0].is_error);
    try std.testing.expectEqualStrings("done", results[1].text);
    // The request: the results, then the new text, in one user message.
    const second = record.items[std.mem.lastIndexOf(u8, record.items, "POST").?..];
    try std.testing.expect(std.mem.indexOf(u8, second, "before moving on.\",\"is_error\":true},{\"type\":\"tool_result\",\"tool_use_id\":\"t2\",\"content\":\"done\"},{\"type\":\"text\",\"text\":\"never mind\"") != null);
    try expectValidNextRequest(agent);
    var diag: config.Diagnostic = .{};
    try std.testing.expectError(error.NothingPending, agent.resumeTurn(null, &diag));
}

/// A session directory in the test's tmp, and agents of it.
const Sessions = struct {
    tmp: std.testing.TmpDir,
    dir_buf: [std.c.PATH_MAX]u8 = undefined,
    dir: []const u8 = "",

    fn init(f: *Sessions) !void {
        f.* = .{ .tmp = std.testing.tmpDir(.{}) };
        f.dir = try dir_mod.tmpPath(&f.tmp, &f.dir_buf);
    }

    fn agent(f: *const Sessions, port: u16, id: []const u8) !*Agent {
        const a = try st.loopbackAgent(port, .{ .provider = .anthropic, .model = "m", .session = .{ .dir = f.dir, .id = id } });
        errdefer a.deinit();
        var diag: config.Diagnostic = .{};
        try a.addTool("{\"name\":\"a\"}", &diag);
        try a.addTool("{\"name\":\"danger\",\"approval\":\"always\"}", &diag);
        return a;
    }

    /// The file of session `from` as it is now, as session `to`: what a process killed now
    /// (its lock gone with it) leaves for the next.
    fn copy(f: *Sessions, from: []const u8, to: []const u8) !void {
        var a: [64]u8 = undefined;
        var b: [64]u8 = undefined;
        try f.tmp.dir.copyFile(try std.fmt.bufPrint(&a, "{s}.jsonl", .{from}), f.tmp.dir, try std.fmt.bufPrint(&b, "{s}.jsonl", .{to}), std.testing.io, .{});
    }
};

test "a session holds the pending round: an agent opening it after the process ended (killed while waiting) answers it" {
    var s: Sessions = undefined;
    try s.init();
    defer s.tmp.cleanup();
    var server: st.TestServer = undefined;
    try server.startMany(.{ .body = mixed_round }, &.{.{}});
    defer server.stop();
    {
        const first = try s.agent(server.port, "first");
        defer first.deinit();
        const stream = try first.run("go");
        defer stream.destroy();
        try readUntilWaiting(stream);
        // Killed here: nothing more of this process reaches the file.
        try s.copy("first", "killed");
    }
    {
        const second = try s.agent(server.port, "killed");
        defer second.deinit();
        try expectPending(second, .ask, .answered);
        try resumeAndApprove(second);
        try expectValidNextRequest(second);
    }
    // And so does the one after it: the round is over in the file too.
    const third = try s.agent(server.port, "killed");
    defer third.deinit();
    try std.testing.expectEqual(null, third.pendingRound());
    try std.testing.expectEqual(@as(usize, 4), third.conversation.messages.items.len);
}

test "a session killed in a round that asked nothing: its calls count as started, a new turn answers them so" {
    var s: Sessions = undefined;
    try s.init();
    defer s.tmp.cleanup();
    var server: st.TestServer = undefined;
    try server.startMany(.{ .body = at.message(at.call(0, "t1", "a", "{}")) }, &.{.{}});
    defer server.stop();
    {
        const first = try s.agent(server.port, "first");
        defer first.deinit();
        const stream = try first.run("go");
        defer stream.destroy();
        _ = try st.nextUntil(stream, .tool_call_start);
        try s.copy("first", "killed");
        try stream.submitToolResult("t1", "ok", false);
        _ = try stream.finalMessage();
    }
    // The server's second answer went to `first`: this agent's turn gets a third.
    server.stop();
    try server.start(.{});
    const second = try s.agent(server.port, "killed");
    defer second.deinit();
    const calls = try second.pendingCalls();
    try std.testing.expectEqual(@as(usize, 1), calls.len);
    try std.testing.expectEqual(pending_round.State.started, calls[0].state);
    const stream = try second.run("again");
    defer stream.destroy();
    _ = try stream.finalMessage();
    const results = second.conversation.messages.items[2].blocks;
    try std.testing.expectEqualStrings(pending_round.ended_text, results[0].text);
    try expectValidNextRequest(second);
}

test "a resumed stream closed again while the call waits leaves the round pending again" {
    var server: st.TestServer = undefined;
    try server.startMany(.{ .body = mixed_round }, &.{.{}});
    defer server.stop();
    const agent = try at.agentWith(server.port, &.{});
    defer agent.deinit();
    {
        const stream = try agent.run("go");
        defer stream.destroy();
        try readUntilWaiting(stream);
    }
    var diag: config.Diagnostic = .{};
    {
        // Closed before its first read, then after the question.
        const stream = try agent.resumeTurn(null, &diag);
        stream.destroy();
        try expectPending(agent, .ask, .answered);
        const again = try agent.resumeTurn(null, &diag);
        defer again.destroy();
        _ = try st.nextUntil(again, .tool_call_start);
        try std.testing.expectError(error.ApprovalPending, again.next());
    }
    try expectPending(agent, .ask, .answered);
    try resumeAndApprove(agent);
}
