//! Consecutive user messages in the conversation (a compaction summary and the user message
//! kept after it, an imported document, a turn whose answer failed) go to Anthropic as one
//! message, tool results first; OpenAI gets them as they are. The conversation is unchanged.
const std = @import("std");
const conversation = @import("conversation.zig");
const providers = @import("providers.zig");
const Provider = @import("config.zig").Provider;
const Cache = @import("config.zig").Cache;

fn render(gpa: std.mem.Allocator, provider: Provider, cache: Cache, conv: *const conversation.Conversation) ![]u8 {
    var out: std.Io.Writer.Allocating = .init(gpa);
    defer out.deinit();
    try providers.writeRequest(provider, &out.writer, .{ .config = .{ .provider = provider, .model = "m", .request = .{ .cache = cache } }, .conversation = conv, .tools = &.{}, .granted = &.{} });
    const parsed = try std.json.parseFromSlice(std.json.Value, gpa, out.written(), .{});
    defer parsed.deinit();
    return std.json.Stringify.valueAlloc(gpa, parsed.value.object.get("messages").?, .{});
}

/// user "summary", user "go on", assistant (a call), its result, then (the answer failed)
/// user "and now?".
fn build(conv: *conversation.Conversation) !void {
    try conv.appendCopy(.user, &.{.{ .kind = .text, .text = "summary" }});
    try conv.appendCopy(.user, &.{.{ .kind = .text, .text = "go on" }});
    try conv.appendMessage(.assistant, &.{.{ .kind = .tool_call, .id = "c1", .name = "look", .text = "{}" }}, .{ .stop_reason = .tool_use, .provider = "anthropic", .model = "m" });
    try conv.appendCopy(.user, &.{.{ .kind = .tool_result, .id = "c1", .text = "seen" }});
    try conv.appendCopy(.user, &.{.{ .kind = .text, .text = "and now?" }});
}

test "Anthropic: consecutive user messages are one, the stored conversation keeps them apart" {
    const gpa = std.testing.allocator;
    var conv: conversation.Conversation = .init(gpa);
    defer conv.deinit();
    try build(&conv);
    const got = try render(gpa, .anthropic, .{ .mode = .off }, &conv);
    defer gpa.free(got);
    try std.testing.expectEqualStrings(
        \\[{"role":"user","content":[{"type":"text","text":"summary"},{"type":"text","text":"go on"}]},{"role":"assistant","content":[{"type":"tool_use","id":"c1","name":"look","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"c1","content":"seen"},{"type":"text","text":"and now?"}]}]
    , got);
    try std.testing.expectEqual(5, conv.messages.items.len);
}

test "Anthropic: a tool result after text in a run goes first, as the API requires" {
    const gpa = std.testing.allocator;
    var conv: conversation.Conversation = .init(gpa);
    defer conv.deinit();
    try conv.appendCopy(.user, &.{.{ .kind = .text, .text = "look" }});
    try conv.appendMessage(.assistant, &.{.{ .kind = .tool_call, .id = "c1", .name = "look", .text = "{}" }}, .{ .stop_reason = .tool_use, .provider = "anthropic", .model = "m" });
    try conv.appendCopy(.user, &.{.{ .kind = .text, .text = "note" }});
    try conv.appendCopy(.user, &.{ .{ .kind = .tool_result, .id = "c1", .text = "seen" }, .{ .kind = .text, .text = "also" } });
    const got = try render(gpa, .anthropic, .{ .mode = .off }, &conv);
    defer gpa.free(got);
    try std.testing.expectEqualStrings(
        \\[{"role":"user","content":[{"type":"text","text":"look"}]},{"role":"assistant","content":[{"type":"tool_use","id":"c1","name":"look","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"c1","content":"seen"},{"type":"text","text":"note"},{"type":"text","text":"also"}]}]
    , got);
}

test "Anthropic: each message of a run keeps its cache breakpoint" {
    const gpa = std.testing.allocator;
    var conv: conversation.Conversation = .init(gpa);
    defer conv.deinit();
    try build(&conv);
    const got = try render(gpa, .anthropic, .{}, &conv);
    defer gpa.free(got);
    // (auto: the last block of the last message)
    try std.testing.expect(std.mem.endsWith(u8, got,
        \\{"type":"text","text":"and now?","cache_control":{"type":"ephemeral"}}]}]
    ));
    try std.testing.expectEqual(1, std.mem.count(u8, got, "cache_control"));
}

test "OpenAI: consecutive user messages go as they are (the API takes them)" {
    const gpa = std.testing.allocator;
    var conv: conversation.Conversation = .init(gpa);
    defer conv.deinit();
    try build(&conv);
    const got = try render(gpa, .openai, .{}, &conv);
    defer gpa.free(got);
    try std.testing.expectEqualStrings(
        \\[{"role":"user","content":"summary"},{"role":"user","content":"go on"},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"look","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c1","content":"seen"},{"role":"user","content":"and now?"}]
    , got);
}
