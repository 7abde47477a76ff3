//! Where a request's cache points go, whichever provider writes them (config `request.cache`,
//! include/panto.h): Anthropic's cache_control breakpoints (anthropic/cache.zig) and Bedrock's
//! cachePoint blocks (bedrock/request.zig). A point caches the request's prefix up to and
//! including what it follows (tools, then system, then messages, in that order); a later
//! request that starts with the same prefix reads it instead of paying for it again.
//!
//! Mode "auto" (the default) marks, in this order of precedence:
//!   1. the last tool sent (the tools rarely change: one entry caches them all);
//!   2. the system prompt (an empty one is not marked);
//!   3. the last message that can carry a mark, so that the next request of the turn (a tool
//!      round) or of the next turn reads everything this one wrote;
//!   4. the user messages the caller marked (Message.cache), the most recent first.
//! Mode "off" marks only 4. Both APIs take at most 4 points: the marks beyond are left out,
//! the oldest first. Thinking blocks cannot carry an Anthropic mark: a message's mark goes on
//! its last block that can (`markable`), and a message with none is not marked.
const std = @import("std");
const config = @import("../config.zig");
const conversation = @import("../conversation.zig");
const tools = @import("../tools.zig");
const RequestParts = @import("../request.zig").RequestParts;

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
