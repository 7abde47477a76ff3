//! A conversation written for another provider or model than the one that made it (a switch by
//! set_config, an imported conversation): thinking goes only to its own provider and model, an
//! assistant message left empty is left out, tool-call ids become what the target accepts.
const std = @import("std");
const conversation = @import("conversation.zig");
const providers = @import("providers.zig");
const Provider = @import("config.zig").Provider;

/// user, assistant (anthropic claude-a: thinking, redacted thinking, text, a call with an id no
/// provider accepts), its result, assistant (thinking only), user.
fn build(conv: *conversation.Conversation) !void {
    try conv.appendCopy(.user, &.{.{ .kind = .text, .text = "hi" }});
    try conv.appendMessage(.assistant, &.{
        .{ .kind = .thinking, .text = "mull", .signature = "sig" },
        .{ .kind = .redacted_thinking, .text = "opaque" },
        .{ .kind = .text, .text = "let me look" },
        .{ .kind = .tool_call, .id = "fc/1:x", .name = "look", .text = "{}" },
    }, .{ .stop_reason = .tool_use, .provider = "anthropic", .model = "claude-a" });
    try conv.appendCopy(.user, &.{.{ .kind = .tool_result, .id = "fc/1:x", .text = "seen" }});
    try conv.appendMessage(.assistant, &.{.{ .kind = .thinking, .text = "only", .signature = "s2" }}, .{ .stop_reason = .end_turn, .provider = "anthropic", .model = "claude-a" });
    try conv.appendCopy(.user, &.{.{ .kind = .text, .text = "again" }});
}

fn render(gpa: std.mem.Allocator, provider: Provider, model: []const u8, conv: *const conversation.Conversation) ![]u8 {
    var out: std.Io.Writer.Allocating = .init(gpa);
    defer out.deinit();
    // (no cache breakpoints: providers/anthropic/cache.zig tests them)
    try providers.writeRequest(provider, &out.writer, .{ .config = .{ .provider = provider, .model = model, .request = .{ .cache = .{ .mode = .off } } }, .conversation = conv, .tools = &.{}, .granted = &.{} });
    const parsed = try std.json.parseFromSlice(std.json.Value, gpa, out.written(), .{});
    defer parsed.deinit();
    return std.json.Stringify.valueAlloc(gpa, parsed.value.object.get("messages").?, .{});
}


test "to the model that wrote it: thinking and its signature go back; the id is rewritten all the same" {
    const gpa = std.testing.allocator;
    var conv: conversation.Conversation = .init(gpa);
    defer conv.deinit();
    try build(&conv);
    const got = try render(gpa, .anthropic, "claude-a", &conv);
    defer gpa.free(got);
    var buf: @import("call_id.zig").Buffer = undefined;
    const id = @import("call_id.zig").forWire("fc/1:x", &buf);
    const want = try std.fmt.allocPrint(gpa,
        \\[{{"role":"user","content":[{{"type":"text","text":"hi"}}]}},{{"role":"assistant","content":[{{"type":"thinking","thinking":"mull","signature":"sig"}},{{"type":"redacted_thinking","data":"opaque"}},{{"type":"text","text":"let me look"}},{{"type":"tool_use","id":"{s}","name":"look","input":{{}}}}]}},{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"{s}","content":"seen"}}]}},{{"role":"assistant","content":[{{"type":"thinking","thinking":"only","signature":"s2"}}]}},{{"role":"user","content":[{{"type":"text","text":"again"}}]}}]
    , .{ id, id });
    defer gpa.free(want);
    try std.testing.expectEqualStrings(want, got);
}

test "to another model of the same provider: no thinking, a message of thinking alone is left out, and the user messages it parted are one" {
    const gpa = std.testing.allocator;
    var conv: conversation.Conversation = .init(gpa);
    defer conv.deinit();
    try build(&conv);
    const got = try render(gpa, .anthropic, "claude-b", &conv);
    defer gpa.free(got);
    var buf: @import("call_id.zig").Buffer = undefined;
    const id = @import("call_id.zig").forWire("fc/1:x", &buf);
    const want = try std.fmt.allocPrint(gpa,
        \\[{{"role":"user","content":[{{"type":"text","text":"hi"}}]}},{{"role":"assistant","content":[{{"type":"text","text":"let me look"}},{{"type":"tool_use","id":"{s}","name":"look","input":{{}}}}]}},{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"{s}","content":"seen"}},{{"type":"text","text":"again"}}]}}]
    , .{ id, id });
    defer gpa.free(want);
    try std.testing.expectEqualStrings(want, got);
}

test "to OpenAI: the call and its result carry the same rewritten id, the thinking-only message is left out" {
    const gpa = std.testing.allocator;
    var conv: conversation.Conversation = .init(gpa);
    defer conv.deinit();
    try build(&conv);
    const got = try render(gpa, .openai, "gpt-4o", &conv);
    defer gpa.free(got);
    var buf: @import("call_id.zig").Buffer = undefined;
    const id = @import("call_id.zig").forWire("fc/1:x", &buf);
    try std.testing.expect(std.mem.startsWith(u8, id, "call_") and id.len == 37);
    const want = try std.fmt.allocPrint(gpa,
        \\[{{"role":"user","content":"hi"}},{{"role":"assistant","content":"let me look","tool_calls":[{{"id":"{s}","type":"function","function":{{"name":"look","arguments":"{{}}"}}}}]}},{{"role":"tool","tool_call_id":"{s}","content":"seen"}},{{"role":"user","content":"again"}}]
    , .{ id, id });
    defer gpa.free(want);
    try std.testing.expectEqualStrings(want, got);
}
