//! The MCP client against real stdio servers: tests/mcp/server.py (standard library only; it
//! misbehaves on request) and tests/mcp/sdk_server.py (the official Python SDK, PyPI `mcp`,
//! installed in the venv by requirements-dev.txt). `zig build test` says where the scripts are
//! (PANTO_MCP_TEST_SERVER, PANTO_MCP_SDK_SERVER) and which python has the SDK (PANTO_MCP_PYTHON).
const std = @import("std");
const client_mod = @import("client.zig");
const stdio = @import("stdio.zig");
const Client = client_mod.Client;

const gpa = std.testing.allocator;
extern "c" fn setenv(name: [*:0]const u8, value: [*:0]const u8, overwrite: c_int) c_int;

fn scriptPath(variable: [:0]const u8, fallback: []const u8) []const u8 {
    return if (std.c.getenv(variable)) |p| std.mem.span(p) else fallback;
}

/// Starts tests/mcp/server.py with `flags`.
fn startTestServer(flags: []const []const u8, options: client_mod.Options) client_mod.StartError!*Client {
    var argv: [8][]const u8 = undefined;
    argv[0] = "python3";
    argv[1] = scriptPath("PANTO_MCP_TEST_SERVER", "tests/mcp/server.py");
    @memcpy(argv[2..][0..flags.len], flags);
    return Client.start(gpa, .{ .argv = argv[0 .. 2 + flags.len] }, options, null);
}

test "mcp: handshake, paged tools/list, and tools/call with text, structured, error and image results" {
    // A variable of this process that the server must not get.
    _ = setenv("PANTO_MCP_SECRET", "do-not-pass", 1);
    const client = try startTestServer(&.{ "--page-size", "2", "--ping", "--list-changed" }, .{});
    defer client.close();
    try std.testing.expectEqualStrings("2025-11-25", client.protocol_version);
    try std.testing.expectEqualStrings("panto-test-server", client.server_name);
    try std.testing.expect(client.tools_can_change);

    var arena_state: std.heap.ArenaAllocator = .init(gpa);
    defer arena_state.deinit();
    const arena = arena_state.allocator();

    // Six tools in pages of two: three requests, one list.
    const tools = try client.listTools(arena);
    try std.testing.expectEqual(@as(usize, 6), tools.len);
    try std.testing.expectEqualStrings("echo", tools[0].name);
    try std.testing.expectEqualStrings("docs", tools[5].name);
    // The schema as the server wrote it, `$schema` and all.
    try std.testing.expect(std.mem.indexOf(u8, tools[0].input_schema_json, "\"$schema\"") != null);
    // Sent right after the handshake, read while listing.
    try std.testing.expect(client.tools_changed);

    // Each call is preceded by the server's ping, which the client answers.
    const echo = try client.callTool(arena, "echo", "{\"text\":\"h\\u00e9llo\\nworld\"}", null);
    try std.testing.expect(!echo.is_error);
    try std.testing.expectEqual(@as(usize, 1), echo.content.len);
    try std.testing.expectEqualStrings("h\u{e9}llo\nworld", echo.content[0].text);
    try std.testing.expectEqual(@as(?[]const u8, null), echo.structured_json);

    const add = try client.callTool(arena, "add", "{\"a\":2,\"b\":3.5}", null);
    try std.testing.expectEqualStrings("{\"sum\":5.5}", add.structured_json.?);

    const fail = try client.callTool(arena, "fail", "{}", null);
    try std.testing.expect(fail.is_error);
    try std.testing.expectEqualStrings("it failed, as asked", fail.content[0].text);

    const pixel = try client.callTool(arena, "pixel", "{}", null);
    try std.testing.expectEqualStrings("image/png", pixel.content[0].image.mime_type);
    try std.testing.expect(std.mem.startsWith(u8, pixel.content[0].image.data, "iVBORw0KGgo"));

    const docs = try client.callTool(arena, "docs", "{}", null);
    try std.testing.expectEqualStrings("file:///guide.md", docs.content[0].resource.uri);
    try std.testing.expectEqual(@as(?[]const u8, null), docs.content[0].resource.text);
    try std.testing.expectEqualStrings("notes", docs.content[1].resource.text.?);
    try std.testing.expectEqualStrings("{\"type\":\"hologram\",\"shape\":\"cube\"}", docs.content[2].other);

    // The server's minimal environment: PATH and HOME, not the rest of this process's (its
    // secrets). (python3 may be a shim that adds variables of its own: only absence is checked.)
    const env = try client.callTool(arena, "env", "{}", null);
    const names = env.content[0].text;
    try std.testing.expect(std.mem.indexOf(u8, names, "PATH") != null);
    try std.testing.expect(std.mem.indexOf(u8, names, "PANTO_MCP_SECRET") == null);
    try std.testing.expect(std.mem.indexOf(u8, names, "PANTO_MCP_TEST_SERVER") == null);

    // A JSON-RPC error is ServerError with its code and message; the server goes on.
    try std.testing.expectError(error.ServerError, client.callTool(arena, "nope", "{}", null));
    try std.testing.expectEqual(@as(i64, -32602), client.last_error.code);
    try std.testing.expectEqualStrings("Unknown tool: nope", client.last_error.message);
    try client.ping();
}

test "mcp: an older version the client speaks is accepted; one it does not is refused" {
    {
        const client = try startTestServer(&.{ "--version", "2025-06-18" }, .{});
        defer client.close();
        try std.testing.expectEqualStrings("2025-06-18", client.protocol_version);
    }
    try std.testing.expectError(error.UnsupportedVersion, startTestServer(&.{ "--version", "2024-11-05" }, .{}));
}

test "mcp: a server that dies mid-call is ServerExited, with its stderr, for this call and the next" {
    const client = try startTestServer(&.{ "--on-call", "die" }, .{});
    defer client.close();
    var arena_state: std.heap.ArenaAllocator = .init(gpa);
    defer arena_state.deinit();
    try std.testing.expectError(error.ServerExited, client.callTool(arena_state.allocator(), "echo", "{\"text\":\"x\"}", null));
    try std.testing.expect(std.mem.indexOf(u8, client.stderrTail(), "dying on purpose") != null);
    try std.testing.expectError(error.ServerExited, client.ping());
}

test "mcp: a list change sent while no request waits is read by readPending, without blocking" {
    const client = try startTestServer(&.{"--late-grow"}, .{});
    defer client.close();
    var arena_state: std.heap.ArenaAllocator = .init(gpa);
    defer arena_state.deinit();
    const a = arena_state.allocator();
    try std.testing.expectEqual(@as(usize, 6), (try client.listTools(a)).len);
    // Its result and the notification after it come in one write: once the result is read,
    // the notification is there (in the pipe or the buffer), unread.
    _ = try client.callTool(a, "echo", "{\"text\":\"x\"}", null);
    try std.testing.expect(!client.tools_changed);
    try client.readPending();
    try std.testing.expect(client.tools_changed);
    try std.testing.expectEqual(@as(usize, 7), (try client.listTools(a)).len);
    // Nothing pending: it returns at once, and the server is fine.
    try client.readPending();
    try std.testing.expect(!client.tools_changed and client.broken == null);
    try client.ping();
}

test "mcp: a call the server never answers times out, is canceled, and the server goes on" {
    // The server never answers a call, so the timeout is the only way out, however slow the
    // machine: the test does not depend on how long anything takes.
    const client = try startTestServer(&.{ "--on-call", "hang" }, .{ .timeout_ms = 100 });
    defer client.close();
    var arena_state: std.heap.ArenaAllocator = .init(gpa);
    defer arena_state.deinit();
    try std.testing.expectError(error.Timeout, client.callTool(arena_state.allocator(), "echo", "{\"text\":\"x\"}", null));
    client.options.timeout_ms = 60_000;
    try client.ping();
}

test "mcp: a server that writes garbage is ended, and stays failed" {
    const client = try startTestServer(&.{ "--on-call", "garbage" }, .{});
    defer client.close();
    var arena_state: std.heap.ArenaAllocator = .init(gpa);
    defer arena_state.deinit();
    try std.testing.expectError(error.Garbage, client.callTool(arena_state.allocator(), "echo", "{\"text\":\"x\"}", null));
    try std.testing.expectError(error.Garbage, client.ping());
}

test "mcp: closing ends the server's whole process group" {
    // The server starts a child of its own that would outlive it; closing kills the group.
    const script =
        \\sleep 1000 &
        \\echo $!
        \\wait
    ;
    const p = try stdio.Process.spawn(gpa, .{ .argv = &.{ "sh", "-c", script } });
    const line = p.readLine(stdio.deadlineIn(10_000)) catch |err| {
        p.close();
        return err;
    };
    const grandchild = try std.fmt.parseInt(std.c.pid_t, line, 10);
    p.close();
    // SIGKILL was sent to the group before `close` returned; the grandchild, reparented, may
    // still be on its way out: wait for it to be gone or a zombie (dead, not yet reaped).
    const deadline = stdio.deadlineIn(10_000);
    while (stdio.now() < deadline) {
        if (!isRunning(grandchild)) return;
        var pfd = [0]std.c.pollfd{};
        _ = std.c.poll(&pfd, 0, 10);
    }
    return error.TestUnexpectedResult;
}

/// Whether `pid` is a live process (not gone, not a zombie), from /proc.
pub fn isRunning(pid: std.c.pid_t) bool {
    var path_buf: [64]u8 = undefined;
    const path = std.fmt.bufPrintZ(&path_buf, "/proc/{d}/stat", .{pid}) catch return false;
    const fd = std.c.open(path, .{});
    if (fd < 0) return false;
    defer _ = std.c.close(fd);
    var buf: [512]u8 = undefined;
    const n = std.c.read(fd, &buf, buf.len);
    if (n <= 0) return false;
    const stat = buf[0..@intCast(n)];
    // "PID (comm) STATE ...": the state follows the last ')'.
    const close_paren = std.mem.lastIndexOfScalar(u8, stat, ')') orelse return false;
    if (close_paren + 2 >= stat.len) return false;
    const state = stat[close_paren + 2];
    return state != 'Z' and state != 'X';
}

test "mcp: a server built with the official Python SDK" {
    // Never skipped: a python without the SDK makes the server exit, and this test fail.
    const client = try Client.start(gpa, .{
        .argv = &.{ scriptPath("PANTO_MCP_PYTHON", ".venv/bin/python"), scriptPath("PANTO_MCP_SDK_SERVER", "tests/mcp/sdk_server.py") },
    }, .{}, null);
    defer client.close();
    try std.testing.expectEqualStrings("panto-sdk-test", client.server_name);
    var arena_state: std.heap.ArenaAllocator = .init(gpa);
    defer arena_state.deinit();
    const arena = arena_state.allocator();
    const tools = try client.listTools(arena);
    try std.testing.expectEqual(@as(usize, 4), tools.len);
    const echo = try client.callTool(arena, "echo", "{\"text\":\"hi\"}", null);
    try std.testing.expectEqualStrings("hi", echo.content[0].text);
    const add = try client.callTool(arena, "add", "{\"a\":1,\"b\":2}", null);
    try std.testing.expect(!add.is_error);
    try std.testing.expect(std.mem.indexOf(u8, add.structured_json.?, "3") != null);
    // The SDK's answer to a missing argument: a tool error, not a protocol one.
    const bad = client.callTool(arena, "add", "{\"a\":1}", null) catch |err| {
        try std.testing.expectEqual(error.ServerError, err);
        return;
    };
    try std.testing.expect(bad.is_error);
}
