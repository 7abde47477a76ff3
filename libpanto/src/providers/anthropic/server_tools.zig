//! Anthropic's hosted tools (config `server_tools`): written into the request's tools as the
//! user gave them, and the beta header each type needs, if any.
//! https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/overview
const std = @import("std");
const config = @import("../../config.zig");
const writeRawJson = @import("../../conversation.zig").writeRawJson;

/// The tool types still behind a beta, and the anthropic-beta value each needs (the SDK's
/// AnthropicBetaParam). Web search, web fetch (web_fetch_20250910 and later) and code
/// execution from code_execution_20250825 on are in the Messages API's own tool types and
/// need none; a type not listed is sent without a header (extra_headers may add one).
const betas = [_]struct { []const u8, []const u8 }{
    .{ "code_execution_20250522", "code-execution-2025-05-22" },
};

/// The beta header value tool type `type_name` needs, or null.
pub fn betaFor(type_name: []const u8) ?[]const u8 {
    for (betas) |entry| if (std.mem.eql(u8, entry[0], type_name)) return entry[1];
    return null;
}

/// The tools' JSON objects, as given (before the client tools, so that the cache breakpoint
/// on the last client tool covers them too).
pub fn write(s: *std.json.Stringify, list: []const config.ServerTool) std.Io.Writer.Error!void {
    for (list) |t| try writeRawJson(s, t.json);
}

/// Appends to `out` (comma-joined) the betas `list` needs that `out` does not hold yet.
pub fn appendBetas(gpa: std.mem.Allocator, out: *std.ArrayList(u8), list: []const config.ServerTool) std.mem.Allocator.Error!void {
    for (list) |t| if (betaFor(t.type)) |beta| try appendOnce(gpa, out, beta);
}

/// The MCP connector's beta, the one whose request shape panto checks (servers in the body's
/// mcp_servers, their tools by an mcp_toolset in tools).
pub const mcp_client_beta = "mcp-client-2025-11-20";

/// Appends the MCP connector's beta when the request names MCP servers, unless the user's
/// anthropic-beta (extra_headers) chose a version of it already ("mcp-client-...").
pub fn appendMcpBeta(gpa: std.mem.Allocator, out: *std.ArrayList(u8), r: config.RequestOptions) std.mem.Allocator.Error!void {
    if (r.hosted_mcp_servers.len == 0) return;
    for (r.extra_headers) |h| if (std.ascii.eqlIgnoreCase(h.name, "anthropic-beta")) {
        var it = std.mem.splitScalar(u8, h.value, ',');
        while (it.next()) |beta| if (std.mem.startsWith(u8, std.mem.trim(u8, beta, " "), "mcp-client-")) return;
    };
    try appendOnce(gpa, out, mcp_client_beta);
}

fn appendOnce(gpa: std.mem.Allocator, out: *std.ArrayList(u8), beta: []const u8) std.mem.Allocator.Error!void {
    var it = std.mem.splitScalar(u8, out.items, ',');
    while (it.next()) |have| if (std.mem.eql(u8, have, beta)) return;
    if (out.items.len > 0) try out.append(gpa, ',');
    try out.appendSlice(gpa, beta);
}

/// The body's "mcp_servers": each server's JSON object as given.
pub fn writeMcpServers(s: *std.json.Stringify, list: []const config.HostedMcpServer) std.Io.Writer.Error!void {
    if (list.len == 0) return;
    try s.objectField("mcp_servers");
    try s.beginArray();
    for (list) |m| try writeRawJson(s, m.json);
    try s.endArray();
}

test "betas are the tool types', once each" {
    const gpa = std.testing.allocator;
    var out: std.ArrayList(u8) = .empty;
    defer out.deinit(gpa);
    try out.appendSlice(gpa, "interleaved-thinking-2025-05-14");
    try appendBetas(gpa, &out, &.{
        .{ .type = "web_search_20250305", .name = "", .json = "{}" },
        .{ .type = "code_execution_20250522", .name = "", .json = "{}" },
        .{ .type = "web_fetch_20250910", .name = "", .json = "{}" },
        .{ .type = "code_execution_20250522", .name = "", .json = "{}" },
    });
    try std.testing.expectEqualStrings("interleaved-thinking-2025-05-14,code-execution-2025-05-22", out.items);
    out.clearRetainingCapacity();
    try appendBetas(gpa, &out, &.{.{ .type = "code_execution_20250522", .name = "", .json = "{}" }});
    try std.testing.expectEqualStrings("code-execution-2025-05-22", out.items);
}

test "the MCP connector's beta: with servers only, and not when the user chose a version" {
    const gpa = std.testing.allocator;
    var out: std.ArrayList(u8) = .empty;
    defer out.deinit(gpa);
    const servers = [_]config.HostedMcpServer{.{ .name = "docs", .json = "{}" }};
    try appendMcpBeta(gpa, &out, .{});
    try std.testing.expectEqualStrings("", out.items);
    try appendMcpBeta(gpa, &out, .{ .hosted_mcp_servers = &servers });
    try std.testing.expectEqualStrings(mcp_client_beta, out.items);
    out.clearRetainingCapacity();
    try appendMcpBeta(gpa, &out, .{ .hosted_mcp_servers = &servers, .extra_headers = &.{.{ .name = "Anthropic-Beta", .value = "files-api-2025-04-14, mcp-client-2025-04-04" }} });
    try std.testing.expectEqualStrings("", out.items);
}
