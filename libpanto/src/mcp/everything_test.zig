//! The MCP client against the reference server of the MCP project, npm
//! `@modelcontextprotocol/server-everything` (pinned by tests/mcp/package-lock.json, installed
//! into tests/mcp/node_modules by scripts/setup.sh), over stdio and over Streamable HTTP: its
//! tools listed, `echo`, `get-tiny-image` (text and image parts), and
//! `trigger-long-running-operation`'s progress notifications.
const std = @import("std");
const client_mod = @import("client.zig");
const stdio = @import("stdio.zig");
const Client = client_mod.Client;
const Agent = @import("../agent.zig").Agent;

const gpa = std.testing.allocator;

fn path(variable: [:0]const u8, fallback: []const u8) []const u8 {
    return if (std.c.getenv(variable)) |p| std.mem.span(p) else fallback;
}

const Steps = struct {
    seen: usize = 0,
    total: ?f64 = null,

    fn report(context: *anyopaque, p: client_mod.Progress) void {
        const s: *Steps = @ptrCast(@alignCast(context));
        s.seen += 1;
        s.total = p.total;
    }
};

/// What every transport must give with this server.
fn exercise(client: *Client) !void {
    try std.testing.expectEqualStrings("mcp-servers/everything", client.server_name);
    var arena_state: std.heap.ArenaAllocator = .init(gpa);
    defer arena_state.deinit();
    const arena = arena_state.allocator();
    const tools = try client.listTools(arena);
    for ([_][]const u8{ "echo", "get-tiny-image", "trigger-long-running-operation", "get-sum" }) |want| {
        for (tools) |t| {
            if (std.mem.eql(u8, t.name, want)) break;
        } else {
            std.debug.print("server-everything lists no tool {s}\n", .{want});
            return error.TestUnexpectedResult;
        }
    }
    const echo = try client.callTool(arena, "echo", "{\"message\":\"h\\u00e9llo\"}", null);
    try std.testing.expectEqualStrings("Echo: h\u{e9}llo", echo.content[0].text);

    const image = try client.callTool(arena, "get-tiny-image", "{}", null);
    var images: usize = 0;
    for (image.content) |part| if (part == .image) {
        try std.testing.expectEqualStrings("image/png", part.image.mime_type);
        try std.testing.expect(std.mem.startsWith(u8, part.image.data, "iVBORw0KGgo"));
        images += 1;
    };
    try std.testing.expectEqual(@as(usize, 1), images);

    // duration 0: the steps come at once, each a progress notification before the result.
    var steps: Steps = .{};
    const long = try client.callTool(arena, "trigger-long-running-operation", "{\"duration\":0,\"steps\":3}", .{ .context = &steps, .report = Steps.report });
    try std.testing.expect(std.mem.startsWith(u8, long.content[0].text, "Long running operation completed"));
    try std.testing.expectEqual(@as(usize, 3), steps.seen);
    try std.testing.expectEqual(@as(?f64, 3), steps.total);
}

test "mcp: the reference server (server-everything) over stdio" {
    const client = try Client.start(gpa, .{ .argv = &.{
        "node",
        path("PANTO_MCP_EVERYTHING", "tests/mcp/node_modules/@modelcontextprotocol/server-everything/dist/index.js"),
        "stdio",
    } }, .{}, null);
    defer client.close();
    try exercise(client);
}

var lock: std.c.pthread_mutex_t = std.c.PTHREAD_MUTEX_INITIALIZER;

test "mcp: the reference server (server-everything) over Streamable HTTP" {
    const server = try stdio.Process.spawn(gpa, .{ .argv = &.{ "node", path("PANTO_MCP_EVERYTHING_HTTP", "tests/mcp/everything_http.mjs") } });
    defer server.close();
    // (Not a timing assumption: a server that never says its port fails the test.)
    const port = try server.readLine(stdio.deadlineIn(60_000));
    var url_buf: [64]u8 = undefined;
    const url = try std.fmt.bufPrint(&url_buf, "http://127.0.0.1:{s}/mcp", .{port});
    const agent = try Agent.init(gpa, .{ .provider = .anthropic, .model = "m", .api_key = "k" });
    defer agent.deinit();
    const client = try Client.startHttp(gpa, agent, &lock, .{ .url = url }, .{}, null);
    defer client.close();
    try exercise(client);
}
