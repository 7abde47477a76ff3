//! Anthropic prompt caching: the cache_control breakpoints of a request, where
//! providers/cache_plan.zig puts them (the system prompt sent as a block array when it carries
//! one). Thinking blocks cannot carry a mark (cache_plan.markable).
const std = @import("std");
const config = @import("../../config.zig");
const conversation = @import("../../conversation.zig");
const tools = @import("../../tools.zig");
const RequestParts = @import("../../request.zig").RequestParts;
const server_tools = @import("server_tools.zig");
const cache_plan = @import("../cache_plan.zig");

pub const max_breakpoints = cache_plan.max_breakpoints;
pub const Plan = cache_plan.Plan;
pub const plan = cache_plan.plan;
pub const markable = cache_plan.markable;

/// Writes `"cache_control": {"type": "ephemeral"[, "ttl"]}` into the object being written.
pub fn writeControl(p: *const Plan, s: *std.json.Stringify) std.Io.Writer.Error!void {
    try s.objectField("cache_control");
    try s.beginObject();
    try s.objectField("type");
    try s.write("ephemeral");
    if (p.ttl) |ttl| {
        try s.objectField("ttl");
        try s.write(@tagName(ttl));
    }
    try s.endObject();
}

/// The "system" field: a string, or a block array when it carries a breakpoint.
pub fn writeSystem(s: *std.json.Stringify, system: ?[]const u8, p: *const Plan) std.Io.Writer.Error!void {
    const text = system orelse return;
    try s.objectField("system");
    if (!p.system) return s.write(text);
    try s.beginArray();
    try s.beginObject();
    try s.objectField("type");
    try s.write("text");
    try s.objectField("text");
    try s.write(text);
    try writeControl(p, s);
    try s.endObject();
    try s.endArray();
}

/// The "tools" field (RequestParts.writeTools), the last tool carrying the tools' breakpoint.
pub fn writeTools(s: *std.json.Stringify, parts: RequestParts, p: *const Plan) std.Io.Writer.Error!void {
    const hosted = parts.config.request.server_tools;
    if (!parts.hasTools() and hosted.len == 0) return;
    var last: usize = 0;
    for (parts.tools, 0..) |t, i| if (t.allowedWith(parts.granted)) {
        last = i;
    };
    try s.objectField("tools");
    try s.beginArray();
    try server_tools.write(s, hosted);
    for (parts.tools, 0..) |t, i| if (t.allowedWith(parts.granted)) {
        try s.beginObject();
        try tools.writeFields(s, t, .anthropic);
        if (p.tools and i == last) try writeControl(p, s);
        try s.endObject();
    };
    try s.endArray();
}

// ---- Tests --------------------------------------------------------------------------------

const testing = std.testing;

fn userText(c: *conversation.Conversation, text: []const u8, cache: bool) !void {
    try c.appendOwnedMessage(.{ .role = .user, .blocks = try conversation.copyBlocks(c.gpa, &.{.{ .kind = .text, .text = text }}), .cache = cache });
}

/// The JSON body Anthropic's writer makes of `c` with `cache`, the system prompt "sys" and
/// the tools.
fn body(c: *const conversation.Conversation, cache: config.Cache, tool_list: []const tools.Tool) ![]u8 {
    var cfg: config.Config = .{ .provider = .anthropic, .model = "m", .system = "sys", .max_tokens = 9 };
    cfg.request.cache = cache;
    var out: std.Io.Writer.Allocating = .init(testing.allocator);
    defer out.deinit();
    try @import("request.zig").writeRequest(&out.writer, .{ .config = cfg, .conversation = c, .tools = tool_list, .granted = &.{} });
    return out.toOwnedSlice();
}

test "the request: the system prompt as a block, the last tool and the last message's last block marked, ttl as set" {
    var c: conversation.Conversation = .init(testing.allocator);
    defer c.deinit();
    const list = [_]tools.Tool{
        .{ .name = "a", .description = "A.", .schema_json = "{}", .schema = .null, .capabilities = &.{} },
        .{ .name = "b", .description = "B.", .schema_json = "{}", .schema = .null, .capabilities = &.{} },
        .{ .name = "hidden", .description = "", .schema_json = "{}", .schema = .null, .capabilities = &.{"x"} },
    };
    try userText(&c, "first", true);
    try c.appendCopy(.assistant, &.{ .{ .kind = .text, .text = "calling" }, .{ .kind = .tool_call, .id = "c1", .name = "a", .text = "{}" } });
    try c.appendCopy(.user, &.{.{ .kind = .tool_result, .id = "c1", .text = "done" }});
    const got = try body(&c, .{ .ttl = .@"1h" }, &list);
    defer testing.allocator.free(got);
    const mark = "\"cache_control\":{\"type\":\"ephemeral\",\"ttl\":\"1h\"}";
    try testing.expectEqualStrings("{\"model\":\"m\",\"max_tokens\":9," ++
        "\"system\":[{\"type\":\"text\",\"text\":\"sys\"," ++ mark ++ "}]," ++
        "\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"first\"," ++ mark ++ "}]}," ++
        "{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"calling\"},{\"type\":\"tool_use\",\"id\":\"c1\",\"name\":\"a\",\"input\":{}}]}," ++
        "{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":\"c1\",\"content\":\"done\"," ++ mark ++ "}]}]," ++
        "\"tools\":[{\"name\":\"a\",\"description\":\"A.\",\"input_schema\":{}},{\"name\":\"b\",\"description\":\"B.\",\"input_schema\":{}," ++ mark ++ "}]," ++
        "\"stream\":true}", got);

    // Off: the caller's mark only (5 minutes: no ttl); the system prompt is a string again.
    const off = try body(&c, .{ .mode = .off }, &list);
    defer testing.allocator.free(off);
    try testing.expectEqualStrings("{\"model\":\"m\",\"max_tokens\":9,\"system\":\"sys\"," ++
        "\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"first\",\"cache_control\":{\"type\":\"ephemeral\"}}]}," ++
        "{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"calling\"},{\"type\":\"tool_use\",\"id\":\"c1\",\"name\":\"a\",\"input\":{}}]}," ++
        "{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":\"c1\",\"content\":\"done\"}]}]," ++
        "\"tools\":[{\"name\":\"a\",\"description\":\"A.\",\"input_schema\":{}},{\"name\":\"b\",\"description\":\"B.\",\"input_schema\":{}}]," ++
        "\"stream\":true}", off);
}

test "never more than 4 breakpoints, whatever the caller marked" {
    var c: conversation.Conversation = .init(testing.allocator);
    defer c.deinit();
    for (0..6) |i| {
        try userText(&c, "q", true);
        if (i < 5) try c.appendCopy(.assistant, &.{.{ .kind = .text, .text = "a" }});
    }
    const tool: tools.Tool = .{ .name = "t", .description = "", .schema_json = "{}", .schema = .null, .capabilities = &.{} };
    for ([_]config.Cache.Mode{ .auto, .off }) |mode| {
        const got = try body(&c, .{ .mode = mode }, &.{tool});
        defer testing.allocator.free(got);
        try testing.expectEqual(@as(usize, max_breakpoints), std.mem.count(u8, got, "cache_control"));
        // The most recent marks win: the last user message is marked in both modes.
        try testing.expect(std.mem.endsWith(u8, got[0..std.mem.indexOf(u8, got, "],\"tools\"").?], "\"text\":\"q\",\"cache_control\":{\"type\":\"ephemeral\"}}]}"));
    }
}
