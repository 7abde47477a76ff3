//! The MCP client over Streamable HTTP (http.zig) against servers on loopback:
//! tests/mcp/sdk_server.py --http (the official Python SDK's Streamable HTTP, SSE or JSON
//! answers) and tests/mcp/http_server.py (standard library only: it checks the session and
//! version headers, frames its SSE oddly, and fails on request). Each server is spawned with
//! stdio.zig and says its port on its stdout.
const std = @import("std");
const client_mod = @import("client.zig");
const stdio = @import("stdio.zig");
const http = @import("http.zig");
const Client = client_mod.Client;
const Agent = @import("../agent.zig").Agent;

const gpa = std.testing.allocator;

fn scriptPath(variable: [:0]const u8, fallback: []const u8) []const u8 {
    return if (std.c.getenv(variable)) |p| std.mem.span(p) else fallback;
}

/// A server process and its endpoint.
const Server = struct {
    process: *stdio.Process,
    url_buf: [64]u8 = undefined,
    url_len: usize = 0,

    fn url(s: *const Server) []const u8 {
        return s.url_buf[0..s.url_len];
    }

    fn stop(s: *Server) void {
        s.process.close();
    }
};

fn startServer(argv: []const []const u8) !Server {
    const process = try stdio.Process.spawn(gpa, .{ .argv = argv });
    errdefer process.close();
    // (Not a timing assumption: a server that never says its port fails the test.)
    const port = try process.readLine(stdio.deadlineIn(60_000));
    var server: Server = .{ .process = process };
    server.url_len = (try std.fmt.bufPrint(&server.url_buf, "http://127.0.0.1:{s}/mcp", .{port})).len;
    return server;
}

fn sdkServer(flags: []const []const u8) !Server {
    var argv: [6][]const u8 = undefined;
    argv[0] = scriptPath("PANTO_MCP_PYTHON", ".venv/bin/python");
    argv[1] = scriptPath("PANTO_MCP_SDK_SERVER", "tests/mcp/sdk_server.py");
    argv[2] = "--http";
    @memcpy(argv[3..][0..flags.len], flags);
    return startServer(argv[0 .. 3 + flags.len]);
}

fn faultServer(on_list: []const u8) !Server {
    return startServer(&.{ "python3", scriptPath("PANTO_MCP_HTTP_SERVER", "tests/mcp/http_server.py"), "--on-list", on_list });
}

fn callFaultServer(on_call: []const u8) !Server {
    return startServer(&.{ "python3", scriptPath("PANTO_MCP_HTTP_SERVER", "tests/mcp/http_server.py"), "--on-call", on_call });
}

var lock: std.c.pthread_mutex_t = std.c.PTHREAD_MUTEX_INITIALIZER;

fn testAgent() !*Agent {
    return Agent.init(gpa, .{ .provider = .anthropic, .model = "m", .api_key = "k" });
}

const Steps = struct {
    seen: usize = 0,
    last: f64 = 0,

    fn report(context: *anyopaque, p: client_mod.Progress) void {
        const s: *Steps = @ptrCast(@alignCast(context));
        s.seen += 1;
        s.last = p.progress;
    }
};

test "mcp http: the Python SDK's server, SSE answers: headers, list, calls, progress before the result" {
    var server = try sdkServer(&.{ "--require-header", "Authorization=Bearer tok" });
    defer server.stop();
    const agent = try testAgent();
    defer agent.deinit();
    const client = try Client.startHttp(gpa, agent, &lock, .{
        .url = server.url(),
        .headers = &.{.{ .name = "Authorization", .value = "Bearer tok" }},
    }, .{}, null);
    defer client.close();
    try std.testing.expectEqualStrings("panto-sdk-test", client.server_name);
    try std.testing.expect(client.conn.http.session_id != null);

    var arena_state: std.heap.ArenaAllocator = .init(gpa);
    defer arena_state.deinit();
    const arena = arena_state.allocator();
    const tools = try client.listTools(arena);
    try std.testing.expectEqual(@as(usize, 4), tools.len);
    const echo = try client.callTool(arena, "echo", "{\"text\":\"h\\u00e9\"}", null);
    try std.testing.expectEqualStrings("h\u{e9}", echo.content[0].text);
    const add = try client.callTool(arena, "add", "{\"a\":1,\"b\":2}", null);
    try std.testing.expect(std.mem.indexOf(u8, add.structured_json.?, "3") != null);
    // The progress notifications come on the call's SSE stream, before its result.
    var steps: Steps = .{};
    const done = try client.callTool(arena, "steps", "{\"n\":3}", .{ .context = &steps, .report = Steps.report });
    try std.testing.expectEqualStrings("3 steps done", done.content[0].text);
    try std.testing.expectEqual(@as(usize, 3), steps.seen);
    try std.testing.expectEqual(@as(f64, 3), steps.last);
    try client.ping();
}

test "mcp http: the Python SDK's server, JSON answers" {
    var server = try sdkServer(&.{"--json"});
    defer server.stop();
    const agent = try testAgent();
    defer agent.deinit();
    const client = try Client.startHttp(gpa, agent, &lock, .{ .url = server.url() }, .{}, null);
    defer client.close();
    var arena_state: std.heap.ArenaAllocator = .init(gpa);
    defer arena_state.deinit();
    const arena = arena_state.allocator();
    try std.testing.expectEqual(@as(usize, 4), (try client.listTools(arena)).len);
    const echo = try client.callTool(arena, "echo", "{\"text\":\"json\"}", null);
    try std.testing.expectEqualStrings("json", echo.content[0].text);
}

test "mcp http: a server that refuses the request (no bearer token) fails the start, saying why" {
    var server = try sdkServer(&.{ "--require-header", "Authorization=Bearer tok" });
    defer server.stop();
    const agent = try testAgent();
    defer agent.deinit();
    var failure: client_mod.StartFailure = .{};
    try std.testing.expectError(error.HttpFailed, Client.startHttp(gpa, agent, &lock, .{ .url = server.url() }, .{}, &failure));
    try std.testing.expect(std.mem.indexOf(u8, failure.stderrTail(), "HTTP 401") != null);
}

test "mcp http: session and version headers on every request, odd SSE framing, the session DELETEd at close" {
    var server = try faultServer("answer");
    defer server.stop();
    const agent = try testAgent();
    defer agent.deinit();
    const client = try Client.startHttp(gpa, agent, &lock, .{ .url = server.url() }, .{}, null);
    var arena_state: std.heap.ArenaAllocator = .init(gpa);
    defer arena_state.deinit();
    const arena = arena_state.allocator();
    const tools = try client.listTools(arena);
    try std.testing.expectEqual(@as(usize, 1), tools.len);
    try std.testing.expectEqualStrings("inits", tools[0].name);
    const inits = try client.callTool(arena, "inits", "{}", null);
    try std.testing.expectEqualStrings("1", inits.content[0].text);
    client.close();
    try std.testing.expectEqualStrings("DELETE s1", try server.process.readLine(stdio.deadlineIn(60_000)));
}

test "mcp http: a session the server forgot (404) gets a new handshake, and the request goes on" {
    var server = try faultServer("expire");
    defer server.stop();
    const agent = try testAgent();
    defer agent.deinit();
    const client = try Client.startHttp(gpa, agent, &lock, .{ .url = server.url() }, .{}, null);
    defer client.close();
    var arena_state: std.heap.ArenaAllocator = .init(gpa);
    defer arena_state.deinit();
    const arena = arena_state.allocator();
    try std.testing.expectEqual(@as(usize, 1), (try client.listTools(arena)).len);
    try std.testing.expectEqualStrings("s2", client.conn.http.session_id.?);
    const inits = try client.callTool(arena, "inits", "{}", null);
    try std.testing.expectEqualStrings("2", inits.content[0].text);
}

test "mcp http: an HTTP 500 and a body that is not JSON fail the server, each with its typed error" {
    const agent = try testAgent();
    defer agent.deinit();
    var arena_state: std.heap.ArenaAllocator = .init(gpa);
    defer arena_state.deinit();
    const arena = arena_state.allocator();
    {
        var server = try faultServer("500");
        defer server.stop();
        const client = try Client.startHttp(gpa, agent, &lock, .{ .url = server.url() }, .{}, null);
        defer client.close();
        try std.testing.expectError(error.HttpFailed, client.listTools(arena));
        try std.testing.expectEqualStrings("HTTP 500: the server broke", client.stderrTail());
        try std.testing.expectError(error.HttpFailed, client.ping()); // it stays failed
    }
    {
        var server = try faultServer("garbage");
        defer server.stop();
        const client = try Client.startHttp(gpa, agent, &lock, .{ .url = server.url() }, .{}, null);
        defer client.close();
        try std.testing.expectError(error.Garbage, client.listTools(arena));
    }
}

test "mcp http: a server that never answers times out and goes on; a canceled wait ends at once" {
    var server = try faultServer("hang");
    defer server.stop();
    const agent = try testAgent();
    defer agent.deinit();
    // The server never answers tools/list, so the timeout is the only way out, however slow
    // the machine: nothing here depends on how long anything takes.
    const client = try Client.startHttp(gpa, agent, &lock, .{ .url = server.url() }, .{ .timeout_ms = 200 }, null);
    defer client.close();
    var arena_state: std.heap.ArenaAllocator = .init(gpa);
    defer arena_state.deinit();
    const arena = arena_state.allocator();
    try std.testing.expectError(error.Timeout, client.listTools(arena));
    client.options.timeout_ms = 60_000;
    try client.ping();

    // A turn canceled before the answer: the cancel descriptor is readable already.
    const fd = std.c.eventfd(1, std.os.linux.EFD.CLOEXEC);
    defer _ = std.c.close(fd);
    client.conn.setCancelFd(fd);
    try std.testing.expectError(error.Canceled, client.listTools(arena));
}

test "mcp http: an SSE answer that breaks before its reply is resumed with Last-Event-ID" {
    var server = try callFaultServer("break");
    defer server.stop();
    const agent = try testAgent();
    defer agent.deinit();
    const client = try Client.startHttp(gpa, agent, &lock, .{ .url = server.url() }, .{}, null);
    defer client.close();
    var arena_state: std.heap.ArenaAllocator = .init(gpa);
    defer arena_state.deinit();
    const arena = arena_state.allocator();
    var steps: Steps = .{};
    // The answer: the progress notification (event c1), then the connection closes.
    const result = try client.callTool(arena, "inits", "{}", .{ .context = &steps, .report = Steps.report });
    try std.testing.expectEqualStrings("1", result.content[0].text);
    try std.testing.expectEqual(@as(usize, 1), steps.seen);
    try std.testing.expectEqualStrings("GET Last-Event-ID c1", try server.process.readLine(stdio.deadlineIn(60_000)));
    // The session goes on: the next call is answered (and resumed) the same way.
    try std.testing.expectEqualStrings("1", (try client.callTool(arena, "inits", "{}", null)).content[0].text);
}

/// Writes the eventfd `fd` once the server says it broke its answer (a cancel during the wait).
fn cancelOnBroke(server: *Server, fd: std.c.fd_t) void {
    const line = server.process.readLine(stdio.deadlineIn(60_000)) catch return;
    if (std.mem.eql(u8, line, "broke")) _ = std.c.write(fd, &std.mem.toBytes(@as(u64, 1)), 8);
}

test "mcp http: a broken answer is resumed after the server's SSE retry, capped; a cancel ends that wait" {
    // The server asks for 10 minutes and refuses a resumption sooner than the cap (5 s) after
    // it broke the answer: only a client that waits, and not longer than the cap, gets the reply.
    var server = try startServer(&.{ "python3", scriptPath("PANTO_MCP_HTTP_SERVER", "tests/mcp/http_server.py"), "--on-call", "break", "--retry", "600000" });
    defer server.stop();
    const agent = try testAgent();
    defer agent.deinit();
    const client = try Client.startHttp(gpa, agent, &lock, .{ .url = server.url() }, .{}, null);
    defer client.close();
    var arena_state: std.heap.ArenaAllocator = .init(gpa);
    defer arena_state.deinit();
    const arena = arena_state.allocator();
    try std.testing.expectEqualStrings("1", (try client.callTool(arena, "inits", "{}", null)).content[0].text);
    try std.testing.expectEqualStrings("broke", try server.process.readLine(stdio.deadlineIn(60_000)));
    try std.testing.expectEqualStrings("GET Last-Event-ID c1", try server.process.readLine(stdio.deadlineIn(60_000)));

    // The next call breaks the same way; the turn is canceled during the wait: at once.
    const fd = std.c.eventfd(0, std.os.linux.EFD.CLOEXEC);
    defer _ = std.c.close(fd);
    client.conn.setCancelFd(fd);
    const canceler = try std.Thread.spawn(.{}, cancelOnBroke, .{ &server, fd });
    const outcome = client.callTool(arena, "inits", "{}", null);
    canceler.join();
    try std.testing.expectError(error.Canceled, outcome);
}

test "mcp http: an answer that is a JSON-RPC batch, as a JSON body or an SSE message, is read message by message" {
    for ([_][]const u8{ "batch", "sse-batch" }) |mode| {
        var server = try callFaultServer(mode);
        defer server.stop();
        const agent = try testAgent();
        defer agent.deinit();
        const client = try Client.startHttp(gpa, agent, &lock, .{ .url = server.url() }, .{}, null);
        defer client.close();
        var arena_state: std.heap.ArenaAllocator = .init(gpa);
        defer arena_state.deinit();
        var steps: Steps = .{};
        const result = try client.callTool(arena_state.allocator(), "inits", "{}", .{ .context = &steps, .report = Steps.report });
        try std.testing.expectEqualStrings("1", result.content[0].text);
        try std.testing.expectEqual(@as(usize, 1), steps.seen);
        try std.testing.expectEqual(@as(f64, 1), steps.last);
    }
}

fn getStreamServer(mode: []const u8) !Server {
    return startServer(&.{ "python3", scriptPath("PANTO_MCP_HTTP_SERVER", "tests/mcp/http_server.py"), "--get-stream", mode });
}

/// How many entries `dir` (/proc/self/fd, /proc/self/task) has: this process's fds, threads.
fn countEntries(dir: [:0]const u8) !usize {
    const d = std.c.opendir(dir) orelse return error.TestUnexpectedResult;
    defer _ = std.c.closedir(d);
    var n: usize = 0;
    while (std.c.readdir(d) != null) n += 1;
    return n;
}

/// Waits until the GET stream's listener noted a list change (readPending hands it to the
/// client); a listener that never does fails the test after a minute.
fn awaitToolsChanged(client: *Client) !void {
    for (0..6000) |_| {
        try client.readPending();
        if (client.tools_changed) return;
        nap();
    }
    return error.TestUnexpectedResult;
}

/// Waits until the client's GET stream listener got to `outcome` (at most a minute).
fn awaitOutcome(client: *Client, outcome: http.Listener.Outcome) !void {
    const listener = client.conn.http.listener.?;
    for (0..6000) |_| {
        if (listener.outcome.load(.acquire) == outcome) return;
        nap();
    }
    return error.TestUnexpectedResult;
}

fn nap() void {
    var none = [0]std.c.pollfd{};
    _ = std.c.poll(&none, 0, 10);
}

test "mcp http: a list change on the GET stream is noted for the next request; agent free leaves no thread or fd" {
    var server = try getStreamServer("list-changed");
    defer server.stop();
    const fds_before = try countEntries("/proc/self/fd");
    const threads_before = try countEntries("/proc/self/task");
    {
        const agent = try testAgent();
        defer agent.deinit();
        const client = try Client.startHttp(gpa, agent, &lock, .{ .url = server.url() }, .{}, null);
        defer client.close();
        var arena_state: std.heap.ArenaAllocator = .init(gpa);
        defer arena_state.deinit();
        const arena = arena_state.allocator();
        try std.testing.expectEqual(@as(usize, 1), (try client.listTools(arena)).len);
        // The call makes the server add a tool and say so on the GET stream only (its answer
        // to the call carries no notification).
        _ = try client.callTool(arena, "inits", "{}", null);
        try awaitToolsChanged(client);
        try std.testing.expectEqual(@as(usize, 2), (try client.listTools(arena)).len);
        try std.testing.expect(client.conn.http.listener != null);
    }
    // The listener's thread joined and its connection closed with the client and the agent.
    try std.testing.expectEqual(threads_before, try countEntries("/proc/self/task"));
    try std.testing.expectEqual(fds_before, try countEntries("/proc/self/fd"));
}

test "mcp http: a GET stream that drops is reconnected with Last-Event-ID, after the server's retry" {
    var server = try getStreamServer("drop");
    defer server.stop();
    const agent = try testAgent();
    defer agent.deinit();
    const client = try Client.startHttp(gpa, agent, &lock, .{ .url = server.url() }, .{}, null);
    defer client.close();
    var arena_state: std.heap.ArenaAllocator = .init(gpa);
    defer arena_state.deinit();
    const arena = arena_state.allocator();
    // The first GET stream closes after its event g1; the second carries its id.
    try std.testing.expectEqualStrings("GET Last-Event-ID g1", try server.process.readLine(stdio.deadlineIn(60_000)));
    _ = try client.callTool(arena, "inits", "{}", null);
    try awaitToolsChanged(client);
    try std.testing.expectEqual(@as(usize, 2), (try client.listTools(arena)).len);
}

test "mcp http: a server without a GET stream (405) is asked once, not again" {
    var server = try getStreamServer("405");
    defer server.stop();
    {
        const agent = try testAgent();
        defer agent.deinit();
        const client = try Client.startHttp(gpa, agent, &lock, .{ .url = server.url() }, .{}, null);
        defer client.close();
        try awaitOutcome(client, .none);
        var arena_state: std.heap.ArenaAllocator = .init(gpa);
        defer arena_state.deinit();
        try std.testing.expectEqualStrings("1", (try client.callTool(arena_state.allocator(), "inits", "{}", null)).content[0].text);
    }
    // One GET, then the session's end: no retry came between.
    try std.testing.expectEqualStrings("GET 405", try server.process.readLine(stdio.deadlineIn(60_000)));
    try std.testing.expectEqualStrings("DELETE s1", try server.process.readLine(stdio.deadlineIn(60_000)));
}

test "mcp http: the Python SDK's server: a list change it sends outside any call comes on the GET stream" {
    var server = try sdkServer(&.{});
    defer server.stop();
    const agent = try testAgent();
    defer agent.deinit();
    const client = try Client.startHttp(gpa, agent, &lock, .{ .url = server.url() }, .{}, null);
    defer client.close();
    // The server drops a notification for a GET stream not open yet: wait until it is.
    try awaitOutcome(client, .open);
    var arena_state: std.heap.ArenaAllocator = .init(gpa);
    defer arena_state.deinit();
    const arena = arena_state.allocator();
    const before = (try client.listTools(arena)).len;
    try std.testing.expectEqualStrings("grown", (try client.callTool(arena, "grow", "{}", null)).content[0].text);
    try awaitToolsChanged(client);
    try std.testing.expectEqual(before + 1, (try client.listTools(arena)).len);
}
