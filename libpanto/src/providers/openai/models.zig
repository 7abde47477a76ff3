//! The model list of OpenAI's API and of the servers that speak it (model_list.zig), for Chat
//! Completions and Responses alike: `GET /v1/models`, answered `{"data": [{"id", "created"
//! (Unix seconds), "owned_by"}]}` in one page; a server that pages as OpenAI's newer lists
//! do (`has_more`, `last_id`, `after`) is followed.
const std = @import("std");
const Allocator = std.mem.Allocator;
const model_list = @import("../../model_list.zig");

pub fn writeListPath(gpa: Allocator, out: *std.ArrayList(u8), cursor: ?[]const u8) Allocator.Error!void {
    try out.appendSlice(gpa, "/v1/models");
    if (cursor) |c| {
        try out.appendSlice(gpa, "?after=");
        try model_list.appendQueryValue(gpa, out, c);
    }
}

pub fn parseModelPage(arena: Allocator, body: []const u8) error{ OutOfMemory, NotAPage }!model_list.Page {
    const Entry = struct { id: []const u8, created: ?std.json.Value = null };
    const Body = struct { data: []const Entry, has_more: bool = false, last_id: ?[]const u8 = null };
    const page = try model_list.parse(Body, arena, body);
    const models = try arena.alloc(model_list.Listed, page.data.len);
    for (page.data, models) |e, *m| {
        const created: ?[]const u8 = if (e.created) |v| switch (v) {
            .integer => |n| try model_list.rfc3339(arena, n),
            else => null,
        } else null;
        m.* = .{ .id = e.id, .created = created };
    }
    const last = if (page.data.len > 0) page.data[page.data.len - 1].id else null;
    return .{ .models = models, .next = if (page.has_more) page.last_id orelse last else null };
}

test "openai model pages: the created time as RFC 3339, one page unless has_more" {
    var arena_state: std.heap.ArenaAllocator = .init(std.testing.allocator);
    defer arena_state.deinit();
    const arena = arena_state.allocator();
    const page = try parseModelPage(arena, "{\"object\":\"list\",\"data\":[{\"id\":\"gpt-4o\",\"object\":\"model\",\"created\":1715367049,\"owned_by\":\"system\"},{\"id\":\"local\"}]}");
    try std.testing.expectEqual(@as(usize, 2), page.models.len);
    try std.testing.expectEqualStrings("2024-05-10T18:50:49Z", page.models[0].created.?);
    try std.testing.expectEqual(null, page.models[1].created);
    try std.testing.expectEqual(null, page.next);
    const paged = try parseModelPage(arena, "{\"data\":[{\"id\":\"a\"}],\"has_more\":true}");
    try std.testing.expectEqualStrings("a", paged.next.?);
    try std.testing.expectError(error.NotAPage, parseModelPage(arena, "{\"models\":[]}"));
}
