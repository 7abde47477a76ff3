//! MCP servers' tools in agent turns (config `mcp_servers`), against tests/mcp/server.py and a
//! loopback provider: calls answered by the server, an isError result, an image, the
//! allow-list, a server that dies mid-call beside one that answers, one that cannot start.
const std = @import("std");
const st = @import("../stream_test.zig");
const Agent = @import("../agent.zig").Agent;
const isRunning = @import("client_test.zig").isRunning;

const gpa = std.testing.allocator;

fn script() []const u8 {
    return if (std.c.getenv("PANTO_MCP_TEST_SERVER")) |p| std.mem.span(p) else "tests/mcp/server.py";
}

/// A tool call block; `input` is the JSON input as an escaped JSON string's content.
fn call(comptime index: u8, comptime id: []const u8, comptime name: []const u8, comptime input: []const u8) []const u8 {
    const i = [_]u8{'0' + index};
    return "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":" ++ i ++ ",\"content_block\":{\"type\":\"tool_use\",\"id\":\"" ++ id ++ "\",\"name\":\"" ++ name ++ "\",\"input\":{}}}\n\n" ++
        "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":" ++ i ++ ",\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"" ++ input ++ "\"}}\n\n" ++
        "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":" ++ i ++ "}\n\n";
}

fn message(comptime calls: []const u8) []const u8 {
    return "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_t\",\"model\":\"m\",\"usage\":{\"input_tokens\":2,\"output_tokens\":1}}}\n\n" ++
        calls ++
        "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"},\"usage\":{\"output_tokens\":4}}\n\n" ++
        "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";
}

const Result = struct { id: []const u8, content: []const u8, is_error: bool, parts: usize };

/// Reads the turn to its end, copying the tool results (their text lives in `arena`).
fn results(arena: std.mem.Allocator, stream: anytype) ![]Result {
    var list: std.ArrayList(Result) = .empty;
    while (try stream.next()) |e| switch (e) {
        .tool_call_start => |s| try std.testing.expect(!s.awaiting_result), // the core is its host
        .tool_result => |r| try list.append(arena, .{ .id = try arena.dupe(u8, r.id), .content = try arena.dupe(u8, r.content), .is_error = r.is_error, .parts = r.parts.len }),
        else => {},
    };
    return list.items;
}

test "mcp: a turn's calls are answered by the server: text, isError, image, structured; names prefixed" {
    var server: st.TestServer = undefined;
    try server.startMany(.{ .body = message(
        call(0, "c1", "t__echo", "{\\\"text\\\":\\\"hi\\\"}") ++ call(1, "c2", "t__fail", "{}") ++
            call(2, "c3", "t__pixel", "{}") ++ call(3, "c4", "t__add", "{\\\"a\\\":1,\\\"b\\\":2}"),
    ) }, &.{.{}});
    defer server.stop();
    const agent = try st.loopbackAgent(server.port, .{ .provider = .anthropic, .model = "m", .capabilities = &.{"net"}, .mcp_servers = &.{
        .{ .name = "t", .command = "python3", .args = &.{script()}, .requires = &.{"net"} },
    } });
    defer agent.deinit();
    const stream = try agent.run("go");
    defer stream.destroy();
    var arena_state: std.heap.ArenaAllocator = .init(gpa);
    defer arena_state.deinit();
    const got = try results(arena_state.allocator(), stream);
    try std.testing.expectEqual(@as(usize, 4), got.len);
    try std.testing.expectEqualStrings("hi", got[0].content);
    try std.testing.expect(!got[0].is_error);
    try std.testing.expectEqualStrings("it failed, as asked", got[1].content);
    try std.testing.expect(got[1].is_error);
    try std.testing.expectEqual(@as(usize, 1), got[2].parts); // the PNG, through the media pipeline
    try std.testing.expectEqualStrings("{\"sum\": 3}", got[3].content);
    try std.testing.expectEqual(.done, stream.state);

    // The server's tools are the agent's, prefixed, with the server's capabilities.
    const echo = agent.findTool("t__echo").?;
    try std.testing.expectEqualStrings("net", echo.capabilities[0]);
    try std.testing.expect(std.mem.indexOf(u8, echo.schema_json, "$schema") != null);
    try std.testing.expect(agent.findTool("t__docs") != null);
}

test "mcp: servers start at the first turn, not with the agent, and end when the agent is freed" {
    var server: st.TestServer = undefined;
    try server.startMany(.{}, &.{});
    defer server.stop();
    const agent = try st.loopbackAgent(server.port, .{ .provider = .anthropic, .model = "m", .mcp_servers = &.{
        .{ .name = "t", .command = "python3", .args = &.{script()} },
    } });
    var freed = false;
    defer if (!freed) agent.deinit();
    try std.testing.expect(agent.mcp.list[0].client == null);
    const stream = try agent.run("go");
    while (try stream.next()) |_| {}
    stream.destroy();
    const pid = agent.mcp.list[0].client.?.conn.stdio.pid();
    try std.testing.expect(isRunning(pid));
    agent.deinit();
    freed = true;
    // Killed and reaped before deinit returned.
    try std.testing.expect(!isRunning(pid));
}

test "mcp: the allow-list offers only the tools it names" {
    var server: st.TestServer = undefined;
    try server.startMany(.{ .body = message(call(0, "c1", "t__env", "{}")) }, &.{.{}});
    defer server.stop();
    const agent = try st.loopbackAgent(server.port, .{ .provider = .anthropic, .model = "m", .mcp_servers = &.{
        .{ .name = "t", .command = "python3", .args = &.{script()}, .tools = &.{"echo"} },
    } });
    defer agent.deinit();
    const stream = try agent.run("go");
    defer stream.destroy();
    var arena_state: std.heap.ArenaAllocator = .init(gpa);
    defer arena_state.deinit();
    const got = try results(arena_state.allocator(), stream);
    try std.testing.expectEqualStrings("Unknown tool: t__env", got[0].content);
    try std.testing.expect(agent.findTool("t__echo") != null);
    try std.testing.expect(agent.findTool("t__env") == null);
}

test "mcp: a server that dies mid-call fails its call with an error naming it; the other server answers" {
    var server: st.TestServer = undefined;
    try server.startMany(.{ .body = message(call(0, "c1", "bad__echo", "{\\\"text\\\":\\\"x\\\"}") ++ call(1, "c2", "ok__echo", "{\\\"text\\\":\\\"fine\\\"}")) }, &.{.{}});
    defer server.stop();
    const agent = try st.loopbackAgent(server.port, .{ .provider = .anthropic, .model = "m", .mcp_servers = &.{
        .{ .name = "bad", .command = "python3", .args = &.{ script(), "--on-call", "die" } },
        .{ .name = "ok", .command = "python3", .args = &.{script()} },
    } });
    defer agent.deinit();
    const stream = try agent.run("go");
    defer stream.destroy();
    var arena_state: std.heap.ArenaAllocator = .init(gpa);
    defer arena_state.deinit();
    const got = try results(arena_state.allocator(), stream);
    try std.testing.expect(got[0].is_error);
    try std.testing.expect(std.mem.startsWith(u8, got[0].content, "MCP server \"bad\" exited during the call"));
    try std.testing.expectEqualStrings("fine", got[1].content);
    try std.testing.expect(!got[1].is_error);
    try std.testing.expectEqual(.done, stream.state);
}

test "mcp: status: not started, then ready with its initialize answer, or failed with why" {
    const agent = try st.loopbackAgent(9, .{ .provider = .anthropic, .model = "m", .mcp_servers = &.{
        .{ .name = "bad", .command = "python3", .args = &.{ script(), "--on-call", "die" } },
        .{ .name = "ok", .command = "python3", .args = &.{script()}, .tools = &.{ "echo", "add" } },
        .{ .name = "web", .command = "", .url = "http://127.0.0.1:9/mcp" },
    } });
    defer agent.deinit();
    try std.testing.expectEqual(@as(usize, 3), agent.mcpServerCount());
    for (0..3) |i| try std.testing.expectEqual(.not_started, agent.mcpStatus(i).state);
    try std.testing.expectEqual(.http, agent.mcpStatus(2).transport);
    try std.testing.expectEqual(.stdio, agent.mcpStatus(0).transport);

    // "web" cannot be reached: the turn fails at the start, after the two stdio servers started.
    const first = try agent.run("go");
    try std.testing.expectError(error.Config, first.next());
    first.destroy();
    const web = agent.mcpStatus(2);
    try std.testing.expectEqual(.failed, web.state);
    try std.testing.expect(std.mem.startsWith(u8, web.error_message, "MCP server \"web\" could not start"));
    const ok = agent.mcpStatus(1);
    try std.testing.expectEqual(.ready, ok.state);
    try std.testing.expectEqualStrings("ok", ok.name);
    try std.testing.expectEqualStrings("2025-11-25", ok.protocol_version);
    try std.testing.expectEqualStrings("panto-test-server", ok.server_name);
    try std.testing.expectEqualStrings("1.0.0", ok.server_version);
    try std.testing.expectEqual(@as(usize, 2), ok.tool_count); // the allow-list's
    try std.testing.expectEqualStrings("", ok.error_message);
}

test "mcp: status of a server that dies mid-call, and of one that exits between turns" {
    var server: st.TestServer = undefined;
    try server.startMany(.{ .body = message(call(0, "c1", "bad__echo", "{\\\"text\\\":\\\"x\\\"}")) }, &.{.{}});
    defer server.stop();
    const agent = try st.loopbackAgent(server.port, .{ .provider = .anthropic, .model = "m", .mcp_servers = &.{
        .{ .name = "bad", .command = "python3", .args = &.{ script(), "--on-call", "die" } },
        .{ .name = "ok", .command = "python3", .args = &.{script()} },
    } });
    defer agent.deinit();
    const stream = try agent.run("go");
    while (try stream.next()) |_| {}
    stream.destroy();
    const bad = agent.mcpStatus(0);
    try std.testing.expectEqual(.failed, bad.state);
    try std.testing.expectEqualStrings("MCP server \"bad\" exited during the call: dying on purpose", bad.error_message);
    try std.testing.expectEqualStrings("test server started\ndying on purpose\n", bad.stderr_tail);
    try std.testing.expectEqualStrings("panto-test-server", bad.server_name); // its last handshake

    // "ok" is killed from outside; once its stdout has ended it is closed.
    const process = agent.mcp.list[1].client.?.conn.stdio;
    try std.testing.expectEqual(.ready, agent.mcpStatus(1).state);
    _ = std.c.kill(process.pid(), std.c.SIG.KILL);
    var fds = [1]std.c.pollfd{.{ .fd = process.child.stdout.?.handle, .events = 0, .revents = 0 }};
    while (fds[0].revents & std.c.POLL.HUP == 0) _ = std.c.poll(&fds, 1, -1);
    try std.testing.expectEqual(.closed, agent.mcpStatus(1).state);
}

test "mcp: a server that cannot start fails the turn with a config error naming it, before any request" {
    const agent = try st.loopbackAgent(9, .{ .provider = .anthropic, .model = "m", .mcp_servers = &.{
        .{ .name = "gone", .command = "/nonexistent/panto-mcp-server" },
    } });
    defer agent.deinit();
    const stream = try agent.run("go");
    defer stream.destroy();
    try std.testing.expectError(error.Config, stream.next());
    const detail = stream.failureDetail().?;
    try std.testing.expectEqualStrings("mcp_server_error", detail.error_type.items);
    try std.testing.expect(std.mem.startsWith(u8, detail.message.items, "MCP server \"gone\" could not start"));
    // The agent is not stuck: its next turn may run (and fails the same way).
    const again = try agent.run("go");
    defer again.destroy();
    try std.testing.expectError(error.Config, again.next());
}

test "mcp: a server that exits at start: its last stderr line is in the turn's error" {
    const agent = try st.loopbackAgent(9, .{ .provider = .anthropic, .model = "m", .mcp_servers = &.{
        .{ .name = "db", .command = "python3", .args = &.{ script(), "--die-at-start" } },
    } });
    defer agent.deinit();
    const stream = try agent.run("go");
    defer stream.destroy();
    try std.testing.expectError(error.Config, stream.next());
    try std.testing.expectEqualStrings("MCP server \"db\" could not start: it exited: cannot open the database, as asked", stream.failureDetail().?.message.items);
}

test "mcp: canceling the turn while a server works ends the call's wait; the call is answered as canceled" {
    var server: st.TestServer = undefined;
    try server.startMany(.{ .body = message(call(0, "c1", "slow__echo", "{\\\"text\\\":\\\"x\\\"}")) }, &.{});
    defer server.stop();
    // The server never answers a call: only the cancel can end the wait before timeout_ms.
    const agent = try st.loopbackAgent(server.port, .{ .provider = .anthropic, .model = "m", .mcp_servers = &.{
        .{ .name = "slow", .command = "python3", .args = &.{ script(), "--on-call", "hang" }, .timeout_ms = 60_000 },
    } });
    defer agent.deinit();
    const stream = try agent.run("go");
    defer stream.destroy();
    _ = try st.nextUntil(stream, .tool_call_start);
    // The next `next()` waits for the server; the cancel comes from another thread, before or
    // during that wait: either way the turn ends canceled with the call answered so.
    const Canceler = struct {
        fn run(s: @TypeOf(stream)) void {
            s.cancel();
        }
    };
    const thread = try std.Thread.spawn(.{}, Canceler.run, .{stream});
    const got = stream.next();
    thread.join();
    try std.testing.expectError(error.Canceled, got);
    var out: std.Io.Writer.Allocating = .init(gpa);
    defer out.deinit();
    try agent.conversation.writeJson(&out.writer);
    try std.testing.expect(std.mem.indexOf(u8, out.written(), @import("servers.zig").canceled_message) != null);
}

test "mcp: a call's progress notifications are ToolProgress events while the call still runs" {
    var server: st.TestServer = undefined;
    try server.startMany(.{ .body = message(call(0, "c1", "t__echo", "{\\\"text\\\":\\\"hi\\\"}")) }, &.{.{}});
    defer server.stop();
    // The server sends two progress notifications, then holds its answer until `hold` exists:
    // the events can only come while the call runs (no timing involved).
    var hold_buf: [64]u8 = undefined;
    const hold = try std.fmt.bufPrintZ(&hold_buf, "/tmp/panto-mcp-hold-{d}", .{std.c.getpid()});
    _ = std.c.unlink(hold);
    defer _ = std.c.unlink(hold);
    const agent = try st.loopbackAgent(server.port, .{ .provider = .anthropic, .model = "m", .mcp_servers = &.{
        .{ .name = "t", .command = "python3", .args = &.{ script(), "--progress", "2", "--hold", hold } },
    } });
    defer agent.deinit();
    const stream = try agent.run("go");
    defer stream.destroy();
    _ = try st.nextUntil(stream, .tool_call_start);
    for ([_][]const u8{ "step 1 of 2", "step 2 of 2" }, [_]f64{ 0.5, 1 }) |text, fraction| {
        const e = (try stream.next()).?;
        try std.testing.expectEqual(.tool_progress, std.meta.activeTag(e));
        try std.testing.expectEqualStrings("c1", e.tool_progress.id);
        try std.testing.expectEqualStrings("t__echo", e.tool_progress.name);
        try std.testing.expectEqualStrings(text, e.tool_progress.text);
        try std.testing.expectEqual(fraction, e.tool_progress.fraction.?);
    }
    const fd = std.c.open(hold, .{ .ACCMODE = .WRONLY, .CREAT = true }, @as(std.c.mode_t, 0o600));
    try std.testing.expect(fd >= 0);
    _ = std.c.close(fd);
    const result = (try stream.next()).?;
    try std.testing.expectEqual(.tool_result, std.meta.activeTag(result));
    try std.testing.expectEqualStrings("hi", result.tool_result.content);
    while (try stream.next()) |_| {}
    try std.testing.expectEqual(.done, stream.state);
}

test "mcp: a Streamable HTTP server's tools in a turn, beside a stdio server's: calls, progress events" {
    // The official SDK's server over HTTP, spawned here; it says its port on stdout.
    const stdio = @import("stdio.zig");
    const python = if (std.c.getenv("PANTO_MCP_PYTHON")) |p| std.mem.span(p) else ".venv/bin/python";
    const sdk_script = if (std.c.getenv("PANTO_MCP_SDK_SERVER")) |p| std.mem.span(p) else "tests/mcp/sdk_server.py";
    const http_server = try stdio.Process.spawn(gpa, .{ .argv = &.{ python, sdk_script, "--http" } });
    defer http_server.close();
    var url_buf: [64]u8 = undefined;
    const url = try std.fmt.bufPrint(&url_buf, "http://127.0.0.1:{s}/mcp", .{try http_server.readLine(stdio.deadlineIn(60_000))});

    var server: st.TestServer = undefined;
    try server.startMany(.{ .body = message(call(0, "c1", "h__steps", "{\\\"n\\\":2}") ++ call(1, "c2", "t__echo", "{\\\"text\\\":\\\"hi\\\"}")) }, &.{.{}});
    defer server.stop();
    const agent = try st.loopbackAgent(server.port, .{ .provider = .anthropic, .model = "m", .mcp_servers = &.{
        .{ .name = "h", .command = "", .url = url },
        .{ .name = "t", .command = "python3", .args = &.{script()} },
    } });
    defer agent.deinit();
    const stream = try agent.run("go");
    defer stream.destroy();
    var progress: usize = 0;
    var steps: ?[]const u8 = null;
    var echo: ?[]const u8 = null;
    var arena_state: std.heap.ArenaAllocator = .init(gpa);
    defer arena_state.deinit();
    while (try stream.next()) |e| switch (e) {
        .tool_progress => |p| {
            try std.testing.expectEqualStrings("h__steps", p.name);
            progress += 1;
        },
        .tool_result => |r| {
            try std.testing.expect(!r.is_error);
            const copy = try arena_state.allocator().dupe(u8, r.content);
            if (std.mem.eql(u8, r.id, "c1")) steps = copy else echo = copy;
        },
        else => {},
    };
    try std.testing.expectEqual(@as(usize, 2), progress);
    try std.testing.expectEqualStrings("2 steps done", steps.?);
    try std.testing.expectEqualStrings("hi", echo.?);
    try std.testing.expectEqual(.done, stream.state);
    try std.testing.expect(agent.findTool("h__add") != null);
}

test "mcp: a server's calls run on one thread even when its first call ends before the round's later calls are looked at" {
    // Round after round: server a's first call, then calls to three other servers (each a
    // thread to start, time in which a's thread may answer its first call), then a's second.
    // Were the units decided while threads already ran, a's first call, answered, would make
    // its second the "first of its server" and start a second thread on a's connection: two
    // requests at once on one stdin/stdout, one thread taking the other's reply (a hang until
    // the timeout, or a reply in the wrong call).
    const rounds = 30;
    const round = message(call(0, "c0", "a__echo", "{\\\"text\\\":\\\"first\\\"}") ++ call(1, "c1", "b__echo", "{\\\"text\\\":\\\"b\\\"}") ++
        call(2, "c2", "c__echo", "{\\\"text\\\":\\\"c\\\"}") ++ call(3, "c3", "d__echo", "{\\\"text\\\":\\\"d\\\"}") ++
        call(4, "c4", "a__echo", "{\\\"text\\\":\\\"second\\\"}"));
    const more = [_]st.Answer{.{ .body = round }} ** (rounds - 1) ++ [_]st.Answer{.{}};
    var server: st.TestServer = undefined;
    try server.startMany(.{ .body = round }, &more);
    defer server.stop();
    // A short timeout: a reply taken by the wrong thread is an error result, not a long hang.
    const timeout_ms = 5_000;
    const agent = try st.loopbackAgent(server.port, .{ .provider = .anthropic, .model = "m", .max_tool_iterations = rounds + 1, .mcp_servers = &.{
        .{ .name = "a", .command = "python3", .args = &.{script()}, .timeout_ms = timeout_ms },
        .{ .name = "b", .command = "python3", .args = &.{script()}, .timeout_ms = timeout_ms },
        .{ .name = "c", .command = "python3", .args = &.{script()}, .timeout_ms = timeout_ms },
        .{ .name = "d", .command = "python3", .args = &.{script()}, .timeout_ms = timeout_ms },
    } });
    defer agent.deinit();
    const stream = try agent.run("go");
    defer stream.destroy();
    var arena_state: std.heap.ArenaAllocator = .init(gpa);
    defer arena_state.deinit();
    const got = try results(arena_state.allocator(), stream);
    try std.testing.expectEqual(@as(usize, 5 * rounds), got.len);
    const want = [_][]const u8{ "first", "b", "c", "d", "second" };
    for (got, 0..) |r, i| {
        try std.testing.expect(!r.is_error);
        try std.testing.expectEqualStrings(want[i % 5], r.content);
    }
    try std.testing.expectEqual(.done, stream.state);
}
