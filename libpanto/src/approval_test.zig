//! Tool calls that wait for a person's answer (approval.zig, issue 36): the ApprovalRequest
//! before the round's other calls start, ApprovalPending once every runnable call is done
//! (ResultPending first), approve and deny, the approval rules' order, and a cancel while a
//! call waits (the round left pending: turn/pending_round_test.zig goes on from there).
const std = @import("std");
const Agent = @import("agent.zig").Agent;
const st = @import("stream_test.zig");
const Diagnostic = @import("config.zig").Diagnostic;
const Rule = @import("approval.zig").Rule;
const watchdog = @import("transport/watchdog.zig");

/// `json` with its quotes escaped, to sit inside a JSON string.
fn escaped(comptime json: []const u8) []const u8 {
    comptime var out: []const u8 = "";
    inline for (json) |ch| out = out ++ (if (ch == '"') "\\\"" else &[_]u8{ch});
    return out;
}

pub fn call(comptime index: u8, comptime id: []const u8, comptime name: []const u8, comptime input: []const u8) []const u8 {
    const i = [_]u8{'0' + index};
    return "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":" ++ i ++ ",\"content_block\":{\"type\":\"tool_use\",\"id\":\"" ++ id ++ "\",\"name\":\"" ++ name ++ "\",\"input\":{}}}\n\n" ++
        "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":" ++ i ++ ",\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"" ++ escaped(input) ++ "\"}}\n\n" ++
        "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":" ++ i ++ "}\n\n";
}

pub fn message(comptime calls: []const u8) []const u8 {
    return "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_t\",\"model\":\"m\",\"usage\":{\"input_tokens\":2,\"output_tokens\":1}}}\n\n" ++
        calls ++
        "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"},\"usage\":{\"output_tokens\":4}}\n\n" ++
        "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";
}

/// `a` runs freely, `danger` asks (its declaration); `bash` follows the rules.
pub fn agentWith(port: u16, rules: []const Rule) !*Agent {
    const agent = try st.loopbackAgent(port, .{ .provider = .anthropic, .model = "m", .approval_rules = rules });
    errdefer agent.deinit();
    var diag: Diagnostic = .{};
    try agent.addTool("{\"name\":\"a\"}", &diag);
    try agent.addTool("{\"name\":\"danger\",\"approval\":\"always\"}", &diag);
    try agent.addTool("{\"name\":\"bash\",\"input_schema\":{\"type\":\"object\",\"properties\":{\"command\":{\"type\":\"string\"}}}}", &diag);
    return agent;
}

pub fn expectStart(e: @import("event.zig").Event, id: []const u8, awaiting: bool) !void {
    try std.testing.expectEqualStrings(id, e.tool_call_start.id);
    try std.testing.expectEqual(awaiting, e.tool_call_start.awaiting_result);
}

/// The last message of the conversation: the round's results, in call order.
fn lastResults(agent: *Agent) []const @import("conversation.zig").Block {
    const messages = agent.conversation.messages.items;
    return messages[messages.len - 2].blocks; // (the model's answer to them comes after)
}

test "approve: the request comes first, the other call runs, ResultPending wins, then ApprovalPending until the yes" {
    var server: st.TestServer = undefined;
    try server.startMany(.{ .body = message(call(0, "t1", "a", "{}") ++ call(1, "t2", "danger", "{\"x\":1}")) }, &.{.{}});
    defer server.stop();
    const agent = try agentWith(server.port, &.{});
    defer agent.deinit();
    const stream = try agent.run("go");
    defer stream.destroy();

    const request = (try st.nextUntil(stream, .approval_request)).approval_request;
    try std.testing.expectEqual(@as(usize, 1), request.calls.len);
    try std.testing.expectEqualStrings("t2", request.calls[0].id.slice());
    try std.testing.expectEqualStrings("danger", request.calls[0].name.slice());
    try std.testing.expectEqualStrings("{\"x\":1}", request.calls[0].input.slice());
    try expectStart((try stream.next()).?, "t1", true);
    // A host result is the quicker answer: asked for first, as long as one is missing.
    try std.testing.expectError(error.ResultPending, stream.next());
    try std.testing.expectError(error.NoSuchCall, stream.submitToolResult("t2", "too early", false));
    try stream.submitToolResult("t1", "one", false);
    try std.testing.expectError(error.ApprovalPending, stream.next());
    try std.testing.expectError(error.ApprovalPending, stream.next()); // not sticky, nothing lost
    try std.testing.expectError(error.InvalidArgument, stream.approve("t1")); // it asked nothing
    try std.testing.expectError(error.InvalidArgument, stream.approve("nobody"));
    try stream.approve("t2");
    try std.testing.expectError(error.InvalidArgument, stream.approve("t2")); // answered already
    try std.testing.expectError(error.InvalidArgument, stream.deny("t2", "no"));
    try expectStart((try stream.next()).?, "t2", true);
    try std.testing.expectError(error.ResultPending, stream.next());
    try stream.submitToolResult("t2", "two", false);
    try std.testing.expectEqualStrings("one", (try stream.next()).?.tool_result.content);
    try std.testing.expectEqualStrings("two", (try stream.next()).?.tool_result.content);
    const final = try stream.finalMessage();
    try std.testing.expectEqual(.end_turn, final.complete.stop_reason);
    try std.testing.expectError(error.InvalidArgument, stream.approve("t2"));
    const results = lastResults(agent);
    try std.testing.expectEqualStrings("t1", results[0].id);
    try std.testing.expectEqualStrings("two", results[1].text);
}

test "deny: the call never awaits a result, its error result tells the model the reason" {
    var server: st.TestServer = undefined;
    try server.startMany(.{ .body = message(call(0, "t1", "danger", "{}") ++ call(1, "t2", "danger", "{}")) }, &.{.{}});
    defer server.stop();
    const agent = try agentWith(server.port, &.{});
    defer agent.deinit();
    const stream = try agent.run("go");
    defer stream.destroy();

    try std.testing.expectEqual(@as(usize, 2), (try st.nextUntil(stream, .approval_request)).approval_request.calls.len);
    // Nothing may start before an answer.
    try std.testing.expectError(error.ApprovalPending, stream.next());
    try stream.deny("t2", "too \xff risky");
    try expectStart((try stream.next()).?, "t2", false); // (announced, not the host's to run)
    try std.testing.expectError(error.ApprovalPending, stream.next());
    try std.testing.expectError(error.InvalidArgument, stream.deny("t2", "again"));
    try stream.deny("t1", "");
    try expectStart((try stream.next()).?, "t1", false);
    const r1 = (try stream.next()).?.tool_result;
    try std.testing.expectEqualStrings("The user denied this call.", r1.content);
    try std.testing.expect(r1.is_error);
    const r2 = (try stream.next()).?.tool_result;
    try std.testing.expectEqualStrings("The user denied this call: too \xef\xbf\xbd risky", r2.content);
    try std.testing.expect(r2.is_error);
    _ = try stream.finalMessage();
    try std.testing.expectEqualStrings("The user denied this call.", lastResults(agent)[0].text);
    try std.testing.expect(lastResults(agent)[1].is_error);
}

test "a mixed round by the rules: first match wins; deny answers at once, ask waits, allow runs" {
    var server: st.TestServer = undefined;
    try server.startMany(.{ .body = message(
        call(0, "t1", "bash", "{\"command\":\"rm -rf x\"}") ++
            call(1, "t2", "bash", "{\"command\":\"ls -l\"}") ++
            call(2, "t3", "bash", "{\"command\":\"cat x\"}") ++
            call(3, "t4", "danger", "{}") ++
            call(4, "t5", "a", "{}"),
    ) }, &.{.{}});
    defer server.stop();
    const agent = try agentWith(server.port, &.{
        .{ .tool = "bash", .input = .{ .path = "/command", .match = .prefix, .pattern = "rm " }, .decision = .deny, .reason = "rm is not for agents" },
        .{ .tool = "bash", .input = .{ .path = "/command", .match = .glob, .pattern = "ls*" }, .decision = .allow },
        .{ .tool = "bash", .decision = .ask }, // (after the two above: they win for their calls)
        .{ .tool = "danger", .decision = .allow }, // a rule wins over the declaration
    });
    defer agent.deinit();
    const stream = try agent.run("go");
    defer stream.destroy();

    const request = (try st.nextUntil(stream, .approval_request)).approval_request;
    try std.testing.expectEqual(@as(usize, 1), request.calls.len);
    try std.testing.expectEqualStrings("t3", request.calls[0].id.slice());
    try expectStart((try stream.next()).?, "t1", false);
    try expectStart((try stream.next()).?, "t2", true);
    try expectStart((try stream.next()).?, "t4", true);
    try expectStart((try stream.next()).?, "t5", true);
    try std.testing.expectError(error.ResultPending, stream.next());
    for ([_][]const u8{ "t2", "t4", "t5" }) |id| try stream.submitToolResult(id, "ok", false);
    try std.testing.expectError(error.ApprovalPending, stream.next());
    try stream.approve("t3");
    try expectStart((try stream.next()).?, "t3", true);
    try stream.submitToolResult("t3", "ok", false);
    const denied = (try stream.next()).?.tool_result;
    try std.testing.expectEqualStrings("The approval rules do not allow this call: rm is not for agents", denied.content);
    try std.testing.expect(denied.is_error);
    _ = try stream.finalMessage();
    try std.testing.expectEqual(@as(usize, 5), lastResults(agent).len);
}

test "approval_rules in the config JSON reach the calls; set_config changes them" {
    var server: st.TestServer = undefined;
    try server.startMany(.{ .body = message(call(0, "t1", "a", "{}")) }, &.{.{}});
    defer server.stop();
    const agent = try agentWith(server.port, &.{});
    defer agent.deinit();
    var diag: Diagnostic = .{};
    try agent.setConfig("{\"approval_rules\":[{\"tool\":\"*\",\"decision\":\"deny\"}]}", &diag);
    try std.testing.expectError(error.InvalidConfig, agent.setConfig("{\"approval_rules\":[{\"decision\":\"perhaps\"}]}", &diag));
    const stream = try agent.run("go");
    defer stream.destroy();
    try expectStart((try st.nextUntil(stream, .tool_call_start)), "t1", false);
    try std.testing.expectEqualStrings("The approval rules do not allow this call.", (try stream.next()).?.tool_result.content);
    _ = try stream.finalMessage();
}

test "a cancel while a call waits for its answer ends the turn and leaves the round pending (turn/pending_round_test.zig)" {
    var server: st.TestServer = undefined;
    try server.startMany(.{ .body = message(call(0, "t1", "danger", "{}") ++ call(1, "t2", "a", "{}")) }, &.{});
    defer server.stop();
    const agent = try agentWith(server.port, &.{});
    defer agent.deinit();
    const stream = try agent.run("go");
    defer stream.destroy();

    _ = try st.nextUntil(stream, .tool_call_start);
    try stream.submitToolResult("t2", "done", false);
    try std.testing.expectError(error.ApprovalPending, stream.next());
    stream.cancel();
    try std.testing.expectError(error.Canceled, stream.next());
    try std.testing.expectError(error.InvalidArgument, stream.approve("t1"));
    try std.testing.expect(!agent.busy);
    // The conversation ends with the round's calls; the agent keeps their answers so far.
    const messages = agent.conversation.messages.items;
    try std.testing.expectEqual(.assistant, messages[messages.len - 1].role);
    const calls = try agent.pendingCalls();
    try std.testing.expectEqual(.ask, calls[0].state);
    try std.testing.expectEqual(.answered, calls[1].state);
    try std.testing.expectEqualStrings("done", agent.pendingRound().?.resultOf("t2").?.text);
}

test "the time a call waits for its answer is not counted in timeouts.total_ms" {
    var server: st.TestServer = undefined;
    try server.startMany(.{ .body = message(call(0, "t1", "danger", "{}")) }, &.{.{}});
    defer server.stop();
    const agent = try agentWith(server.port, &.{});
    defer agent.deinit();
    var diag: Diagnostic = .{};
    try agent.setConfig("{\"timeouts\":{\"total_ms\":600000}}", &diag);
    const stream = try agent.run("go");
    defer stream.destroy();

    _ = try st.nextUntil(stream, .approval_request);
    try std.testing.expectError(error.ApprovalPending, stream.next());
    const deadline = stream.turn_deadline_ns;
    const since = stream.approval_wait_since;
    try std.testing.expect(deadline != 0 and since != 0);
    const ts: std.c.timespec = .{ .sec = 0, .nsec = 5 * std.time.ns_per_ms };
    _ = std.c.nanosleep(&ts, null);
    const waited = watchdog.nowNs() - since;
    try std.testing.expectError(error.ApprovalPending, stream.next());
    // Pushed back by the wait up to that call at least (measured, whatever the machine's load).
    try std.testing.expect(stream.turn_deadline_ns >= deadline + waited);
    try stream.deny("t1", "no");
    _ = try stream.finalMessage();
}
