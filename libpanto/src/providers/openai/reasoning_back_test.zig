//! Thinking of OpenAI-compatible servers goes back only as DeepSeek documents it: what came as
//! `reasoning_content` returns as `reasoning_content` on that model's messages with tool
//! calls (its thinking mode refuses a later request without it); under another name
//! (`reasoning`: Groq, OpenRouter), or to another model, it does not (Groq and Cerebras refuse
//! message fields they do not know). The name is kept with the thinking, through export.
const std = @import("std");
const openai = @import("decode.zig");
const Assembly = @import("../../assembly.zig").Assembly;
const errors = @import("../../errors.zig");
const chunk_feed = @import("chunk_feed.zig");
const conversation = @import("../../conversation.zig");
const conversation_json = @import("../../conversation_json.zig");
const providers = @import("../../providers.zig");

const head = "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"model\":\"deepseek-v4\",\"choices\":[{\"index\":0,";

/// A tool round whose thinking streams under `name`, decoded (both paths: each chunk is tried
/// hot first) and committed after a user turn, then the tool's result and a user turn.
fn round(conv: *conversation.Conversation, comptime name: []const u8) !void {
    const gpa = std.testing.allocator;
    var arena: std.heap.ArenaAllocator = .init(gpa);
    defer arena.deinit();
    var a = Assembly.init(gpa);
    defer a.deinit();
    var detail: errors.Detail = .{};
    defer detail.deinit(gpa);
    var d: openai.Decoder = .{};
    const chunks = [_][]const u8{
        head ++ "\"delta\":{\"role\":\"assistant\",\"content\":null,\"" ++ name ++ "\":\"\"},\"finish_reason\":null}]}",
        head ++ "\"delta\":{\"content\":null,\"" ++ name ++ "\":\"Need the \\\"weather\\\".\"},\"finish_reason\":null}]}",
        head ++ "\"delta\":{\"" ++ name ++ "\":\" Call it.\"},\"finish_reason\":null}]}",
        head ++ "\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_a\",\"type\":\"function\",\"function\":{\"name\":\"get_weather\",\"arguments\":\"{}\"}}]},\"finish_reason\":null}]}",
        head ++ "\"delta\":{},\"finish_reason\":\"tool_calls\"}]}",
        "[DONE]",
    };
    for (chunks) |data| {
        _ = arena.reset(.retain_capacity);
        try chunk_feed.feed(&d, &a, arena.allocator(), data, true, &detail);
        while (a.pop()) |_| {}
    }
    try conv.appendUserText("weather?");
    try a.commit(conv, &.{"{}"}, .{ .stop_reason = .tool_use, .provider = "openai", .model = "deepseek-v4" });
    try conv.appendMessage(.user, &.{.{ .kind = .tool_result, .id = "call_a", .text = "sunny" }}, .{});
    try conv.appendUserText("thanks");
}

fn request(gpa: std.mem.Allocator, model: []const u8, conv: *const conversation.Conversation) ![]u8 {
    var out: std.Io.Writer.Allocating = .init(gpa);
    defer out.deinit();
    try providers.writeRequest(.openai, &out.writer, .{ .config = .{ .provider = .openai, .model = model }, .conversation = conv, .tools = &.{}, .granted = &.{} });
    return out.toOwnedSlice();
}

const with_reasoning = "{\"role\":\"assistant\",\"content\":null,\"reasoning_content\":\"Need the \\\"weather\\\". Call it.\",\"tool_calls\":[";

test "thinking that came as reasoning_content goes back with the model's tool calls, to that model only" {
    const gpa = std.testing.allocator;
    var conv: conversation.Conversation = .init(gpa);
    defer conv.deinit();
    try round(&conv, "reasoning_content");
    try std.testing.expectEqualStrings("reasoning_content", conv.messages.items[1].blocks[0].name);
    const same = try request(gpa, "deepseek-v4", &conv);
    defer gpa.free(same);
    try std.testing.expect(std.mem.indexOf(u8, same, with_reasoning) != null);
    const other = try request(gpa, "gpt-4o", &conv);
    defer gpa.free(other);
    try std.testing.expect(std.mem.indexOf(u8, other, "reasoning") == null);
}

test "thinking that came as reasoning is not sent back" {
    const gpa = std.testing.allocator;
    var conv: conversation.Conversation = .init(gpa);
    defer conv.deinit();
    try round(&conv, "reasoning");
    try std.testing.expectEqualStrings("reasoning", conv.messages.items[1].blocks[0].name);
    const same = try request(gpa, "deepseek-v4", &conv);
    defer gpa.free(same);
    try std.testing.expect(std.mem.indexOf(u8, same, "reasoning") == null);
    try std.testing.expect(std.mem.indexOf(u8, same, "Call it.") == null);
}

test "the thinking's name is carried by export and import, so an imported conversation sends it back too" {
    const gpa = std.testing.allocator;
    var conv: conversation.Conversation = .init(gpa);
    defer conv.deinit();
    try round(&conv, "reasoning_content");
    var out: std.Io.Writer.Allocating = .init(gpa);
    defer out.deinit();
    try conversation_json.writeExport(&out.writer, conv.messages.items);
    try std.testing.expect(std.mem.indexOf(u8, out.written(), "{\"type\":\"thinking\",\"text\":\"Need the \\\"weather\\\". Call it.\",\"name\":\"reasoning_content\"}") != null);
    var diag: conversation_json.Diagnostic = .{};
    const back = try conversation_json.parseExport(gpa, out.written(), &diag);
    defer conversation.freeMessages(gpa, back);
    try std.testing.expectEqualStrings("reasoning_content", back[1].blocks[0].name);
    // A name on another kind of block than thinking is refused as before.
    try std.testing.expectError(error.InvalidConversation, conversation_json.parseExport(gpa, "{\"version\":1,\"messages\":[{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"a\",\"name\":\"x\"}]}]}", &diag));
}
