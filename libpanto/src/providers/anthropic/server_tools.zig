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
    for (list) |t| {
        const beta = betaFor(t.type) orelse continue;
        var it = std.mem.splitScalar(u8, out.items, ',');
        const present = while (it.next()) |have| {
            if (std.mem.eql(u8, have, beta)) break true;
        } else false;
        if (present) continue;
        if (out.items.len > 0) try out.append(gpa, ',');
        try out.appendSlice(gpa, beta);
    }
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
