//! Anthropic prompt caching: where a request's cache_control breakpoints go (config
//! `request.cache`, include/panto.h). A breakpoint caches the request's prefix up to and
//! including the block it is on (tools, then system, then messages, in that order); a later
//! request that starts with the same prefix reads it instead of paying for it again.
//!
//! Mode "auto" (the default) marks, in this order of precedence:
//!   1. the last tool sent (the tools rarely change: one entry caches them all);
//!   2. the system prompt (sent as a block array then; an empty one is not marked);
//!   3. the last block of the last message, so that the next request of the turn (a tool
//!      round) or of the next turn reads everything this one wrote;
//!   4. the user messages the caller marked (Message.cache), the most recent first.
//! Mode "off" marks only 4. The API takes at most 4 breakpoints: the marks beyond are left
//! out, the oldest first. Thinking blocks cannot carry a mark: a message's mark goes on its
//! last block that can.
const std = @import("std");
const config = @import("../../config.zig");
const conversation = @import("../../conversation.zig");
const tools = @import("../../tools.zig");
const RequestParts = @import("../../request.zig").RequestParts;
const server_tools = @import("server_tools.zig");

pub const max_breakpoints = 4;

/// The breakpoints of one request.
pub const Plan = struct {
    ttl: ?config.Cache.Ttl = null,
    tools: bool = false,
    system: bool = false,
    /// Indexes into the conversation of the messages marked, most recent first.
    messages: [max_breakpoints]usize = undefined,
    message_count: usize = 0,

    pub fn count(p: *const Plan) usize {
        return @as(usize, @intFromBool(p.tools)) + @intFromBool(p.system) + p.message_count;
    }

    /// Whether message `index` of the conversation ends with a breakpoint.
    pub fn marksMessage(p: *const Plan, index: usize) bool {
        return std.mem.indexOfScalar(usize, p.messages[0..p.message_count], index) != null;
    }

    fn addMessage(p: *Plan, index: usize) void {
        if (p.count() == max_breakpoints or p.marksMessage(index)) return;
        p.messages[p.message_count] = index;
        p.message_count += 1;
    }

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
};

/// Where the breakpoints of the request `parts` go.
pub fn plan(parts: RequestParts) Plan {
    const options = parts.config.request.cache;
    var p: Plan = .{ .ttl = options.ttl };
    const messages = parts.conversation.messages.items;
    if (options.mode == .auto) {
        p.tools = parts.hasTools();
        p.system = if (parts.config.system) |system| system.len > 0 else false;
        var i = messages.len;
        // (the last message with a block that can carry the mark)
        while (i > 0) : (i -= 1) if (markable(messages[i - 1])) |_| {
            p.addMessage(i - 1);
            break;
        };
    }
    var i = messages.len;
    while (i > 0) : (i -= 1) {
        const m = messages[i - 1];
        if (m.cache and markable(m) != null) p.addMessage(i - 1);
    }
    return p;
}

/// The index of the block of `m` that carries the message's breakpoint (its last one that
/// can and is sent), or null.
pub fn markable(m: conversation.Message) ?usize {
    var j = m.blocks.len;
    while (j > 0) : (j -= 1) switch (m.blocks[j - 1].kind) {
        .thinking, .redacted_thinking, .server_block => {},
        .text => if (m.blocks[j - 1].text.len > 0) return j - 1, // (the API refuses a mark on empty text)
        else => return j - 1,
    };
    return null;
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
    try p.writeControl(s);
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
        if (p.tools and i == last) try p.writeControl(s);
        try s.endObject();
    };
    try s.endArray();
}

// ---- Tests --------------------------------------------------------------------------------

const testing = std.testing;

fn userText(c: *conversation.Conversation, text: []const u8, cache: bool) !void {
    try c.appendOwnedMessage(.{ .role = .user, .blocks = try conversation.copyBlocks(c.gpa, &.{.{ .kind = .text, .text = text }}), .cache = cache });
}

fn planOf(c: *const conversation.Conversation, cache: config.Cache, system: ?[]const u8, tool_list: []const tools.Tool) Plan {
    var cfg: config.Config = .{ .provider = .anthropic, .model = "m", .system = system };
    cfg.request.cache = cache;
    return plan(.{ .config = cfg, .conversation = c, .tools = tool_list, .granted = &.{} });
}

test "auto marks the last tool, the system prompt and the last message; the caller's marks fill up to 4, the most recent first" {
    var c: conversation.Conversation = .init(testing.allocator);
    defer c.deinit();
    const tool: tools.Tool = .{ .name = "t", .description = "", .schema_json = "{}", .schema = .null, .capabilities = &.{} };
    try userText(&c, "one", true);
    try c.appendCopy(.assistant, &.{.{ .kind = .text, .text = "a" }});
    try userText(&c, "two", true);
    try c.appendCopy(.assistant, &.{.{ .kind = .text, .text = "b" }});
    try userText(&c, "three", false);

    var p = planOf(&c, .{}, "sys", &.{tool});
    try testing.expect(p.tools and p.system);
    try testing.expectEqualSlices(usize, &.{ 4, 2 }, p.messages[0..p.message_count]); // "one" left out
    // No tools, an empty system prompt: room for both marks.
    p = planOf(&c, .{}, "", &.{});
    try testing.expect(!p.tools and !p.system);
    try testing.expectEqualSlices(usize, &.{ 4, 2, 0 }, p.messages[0..p.message_count]);
    // Off: the marks only; a marked last message is marked once.
    p = planOf(&c, .{ .mode = .off, .ttl = .@"1h" }, "sys", &.{tool});
    try testing.expect(!p.tools and !p.system);
    try testing.expectEqualSlices(usize, &.{ 2, 0 }, p.messages[0..p.message_count]);
    c.messages.items[4].cache = true;
    p = planOf(&c, .{}, null, &.{});
    try testing.expectEqualSlices(usize, &.{ 4, 2, 0 }, p.messages[0..p.message_count]);
}

test "a message's mark goes on its last block that can carry one" {
    var blocks = [_]conversation.Block{ .{ .kind = .text, .text = "x" }, .{ .kind = .tool_call, .text = "{}", .id = "c", .name = "t" }, .{ .kind = .thinking, .text = "hm" } };
    try testing.expectEqual(@as(?usize, 1), markable(.{ .role = .assistant, .blocks = &blocks }));
    var only_thinking = [_]conversation.Block{.{ .kind = .redacted_thinking, .text = "x" }};
    try testing.expectEqual(@as(?usize, null), markable(.{ .role = .assistant, .blocks = &only_thinking }));
    var empty_text = [_]conversation.Block{ .{ .kind = .image, .text = "AAAA", .media_type = "image/png" }, .{ .kind = .text, .text = "" } };
    try testing.expectEqual(@as(?usize, 0), markable(.{ .role = .user, .blocks = &empty_text }));
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
