//! OpenRouter's reasoning_details (reasoning_details.zig): assembled from the deltas as the
//! same message by both decode paths (the hot path leaves a chunk that carries any to the
//! general path), kept with the message through export and import, and sent back with its
//! tool calls to the model that wrote it only; `reasoning` is never sent back.
const std = @import("std");
const openai = @import("decode.zig");
const hot = @import("hot.zig");
const Assembly = @import("../../assembly.zig").Assembly;
const errors = @import("../../errors.zig");
const chunk_feed = @import("chunk_feed.zig");
const conversation = @import("../../conversation.zig");
const conversation_json = @import("../../conversation_json.zig");
const providers = @import("../../providers.zig");

// As OpenRouter streams Claude's thinking (a recorded stream's shape): every delta holds
// `reasoning` and `reasoning_details`, the signature comes in a piece of its own.
const head = "{\"id\":\"gen-1\",\"provider\":\"Anthropic\",\"model\":\"anthropic/claude-sonnet-4\",\"object\":\"chat.completion.chunk\",\"created\":1761052928,\"choices\":[{\"index\":0,";
const tail = ",\"finish_reason\":null,\"native_finish_reason\":null,\"logprobs\":null}]}";
const claude = "\"format\":\"anthropic-claude-v1\",\"index\":0";

const chunks = [_][]const u8{
    head ++ "\"delta\":{\"role\":\"assistant\",\"content\":\"\",\"reasoning\":null,\"reasoning_details\":[]}" ++ tail,
    head ++ "\"delta\":{\"role\":\"assistant\",\"content\":\"\",\"reasoning\":null,\"reasoning_details\":[{\"type\":\"reasoning.text\",\"text\":\"\",\"signature\":\"\"," ++ claude ++ "}]}" ++ tail,
    head ++ "\"delta\":{\"role\":\"assistant\",\"content\":\"\",\"reasoning\":\"The \\\"user\\\"\",\"reasoning_details\":[{\"type\":\"reasoning.text\",\"text\":\"The \\\"user\\\"\"," ++ claude ++ "}]}" ++ tail,
    head ++ "\"delta\":{\"role\":\"assistant\",\"content\":\"\",\"reasoning\":\" asks.\",\"reasoning_details\":[{\"type\":\"reasoning.text\",\"text\":\" asks.\"," ++ claude ++ "}]}" ++ tail,
    head ++ "\"delta\":{\"role\":\"assistant\",\"content\":\"\",\"reasoning\":null,\"reasoning_details\":[{\"type\":\"reasoning.text\",\"signature\":\"EqgBCkYI\"," ++ claude ++ "}]}" ++ tail,
    head ++ "\"delta\":{\"role\":\"assistant\",\"content\":null,\"reasoning_details\":[{\"type\":\"reasoning.encrypted\",\"data\":\"CiQBjz1rX==\",\"id\":\"tool_w\",\"format\":\"google-gemini-v1\",\"index\":1}],\"tool_calls\":[{\"index\":0,\"id\":\"call_a\",\"type\":\"function\",\"function\":{\"name\":\"get_weather\",\"arguments\":\"{}\"}}]}" ++ tail,
    head ++ "\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"finish_reason\":\"tool_calls\",\"native_finish_reason\":\"tool_use\",\"logprobs\":null}]}",
    "[DONE]",
};

const details = "[{\"type\":\"reasoning.text\",\"text\":\"The \\\"user\\\" asks.\",\"signature\":\"EqgBCkYI\",\"format\":\"anthropic-claude-v1\",\"index\":0}," ++
    "{\"type\":\"reasoning.encrypted\",\"data\":\"CiQBjz1rX==\",\"id\":\"tool_w\",\"format\":\"google-gemini-v1\",\"index\":1}]";

/// The tool round decoded (`from_bytes`: each chunk tried on the hot path first) and
/// committed after a user turn, then the tool's result and a user turn. Returns the thinking
/// block's events' text, joined.
fn round(conv: *conversation.Conversation, from_bytes: bool) ![]u8 {
    const gpa = std.testing.allocator;
    var arena: std.heap.ArenaAllocator = .init(gpa);
    defer arena.deinit();
    var a = Assembly.init(gpa);
    defer a.deinit();
    var detail: errors.Detail = .{};
    defer detail.deinit(gpa);
    var d: openai.Decoder = .{};
    var thinking: std.ArrayList(u8) = .empty;
    errdefer thinking.deinit(gpa);
    for (chunks) |data| {
        _ = arena.reset(.retain_capacity);
        try chunk_feed.feed(&d, &a, arena.allocator(), data, from_bytes, &detail);
        while (a.pop()) |e| switch (e) {
            .content_delta => |c| if (c.index == 0) try thinking.appendSlice(gpa, c.text),
            else => {},
        };
    }
    try conv.appendUserText("weather?");
    try a.commit(conv, &.{"{}"}, .{ .stop_reason = .tool_use, .provider = "openai", .model = "anthropic/claude-sonnet-4" });
    try conv.appendMessage(.user, &.{.{ .kind = .tool_result, .id = "call_a", .text = "sunny" }}, .{});
    try conv.appendUserText("thanks");
    return thinking.toOwnedSlice(gpa);
}

fn request(gpa: std.mem.Allocator, model: []const u8, conv: *const conversation.Conversation) ![]u8 {
    var out: std.Io.Writer.Allocating = .init(gpa);
    defer out.deinit();
    try providers.writeRequest(.openai, &out.writer, .{ .config = .{ .provider = .openai, .model = model }, .conversation = conv, .tools = &.{}, .granted = &.{} });
    return out.toOwnedSlice();
}

test "the hot path leaves a chunk with reasoning_details to the general path, and takes one with none" {
    var arena: std.heap.ArenaAllocator = .init(std.testing.allocator);
    defer arena.deinit();
    var prefix: hot.Prefix = .{};
    try std.testing.expect(try hot.parse(arena.allocator(), chunks[4], &prefix) == null);
    const with = head ++ "\"delta\":{\"reasoning\":\"Hm\",\"reasoning_details\":[{\"type\":\"reasoning.text\",\"text\":\"Hm\"," ++ claude ++ "}]}" ++ tail;
    try std.testing.expect(try hot.parse(arena.allocator(), with, &prefix) == null);
    const none = head ++ "\"delta\":{\"reasoning\":\"Hm\",\"reasoning_details\":[]}" ++ tail;
    const chunk = try hot.parse(arena.allocator(), none, &prefix) orelse return error.TestExpectedChunk;
    try std.testing.expectEqualStrings("Hm", chunk.delta.reasoning.text);
}

test "reasoning_details are assembled by index, the same from either decode path, and kept with the message" {
    const gpa = std.testing.allocator;
    for ([_]bool{ false, true }) |from_bytes| {
        var conv: conversation.Conversation = .init(gpa);
        defer conv.deinit();
        const thinking = try round(&conv, from_bytes);
        defer gpa.free(thinking);
        try std.testing.expectEqualStrings("The \"user\" asks.", thinking);
        const m = conv.messages.items[1];
        try std.testing.expectEqualStrings(details, m.reasoning_details);
        try std.testing.expectEqualStrings("The \"user\" asks.", m.blocks[0].text);
        try std.testing.expectEqualStrings("reasoning", m.blocks[0].name);
    }
}

test "reasoning_details go back with the model's tool calls, to that model only, and reasoning never" {
    const gpa = std.testing.allocator;
    var conv: conversation.Conversation = .init(gpa);
    defer conv.deinit();
    gpa.free(try round(&conv, true));
    const same = try request(gpa, "anthropic/claude-sonnet-4", &conv);
    defer gpa.free(same);
    const expected = "{\"role\":\"assistant\",\"content\":null,\"reasoning_details\":" ++ details ++ ",\"tool_calls\":[";
    try std.testing.expect(std.mem.indexOf(u8, same, expected) != null);
    try std.testing.expect(std.mem.indexOf(u8, same, "\"reasoning\"") == null);
    const other = try request(gpa, "openai/gpt-5", &conv);
    defer gpa.free(other);
    try std.testing.expect(std.mem.indexOf(u8, other, "reasoning") == null);
}

test "a message without tool calls sends no reasoning_details" {
    const gpa = std.testing.allocator;
    var conv: conversation.Conversation = .init(gpa);
    defer conv.deinit();
    try conv.appendUserText("hi");
    try conv.appendMessage(.assistant, &.{.{ .kind = .text, .text = "hello" }}, .{ .provider = "openai", .model = "m", .reasoning_details = "[{\"type\":\"reasoning.encrypted\",\"data\":\"x\"}]" });
    try conv.appendUserText("again");
    const body = try request(gpa, "m", &conv);
    defer gpa.free(body);
    try std.testing.expect(std.mem.indexOf(u8, body, "reasoning_details") == null);
}

test "reasoning_details are carried by export and import as a string, and checked on import" {
    const gpa = std.testing.allocator;
    var conv: conversation.Conversation = .init(gpa);
    defer conv.deinit();
    gpa.free(try round(&conv, false));
    var out: std.Io.Writer.Allocating = .init(gpa);
    defer out.deinit();
    try conversation_json.writeExport(&out.writer, conv.messages.items);
    var quoted: std.Io.Writer.Allocating = .init(gpa);
    defer quoted.deinit();
    try std.json.Stringify.value(details, .{}, &quoted.writer);
    const member = try std.mem.concat(gpa, u8, &.{ "\"reasoning_details\":", quoted.written(), "}" });
    defer gpa.free(member);
    try std.testing.expect(std.mem.indexOf(u8, out.written(), member) != null);
    var diag: conversation_json.Diagnostic = .{};
    const back = try conversation_json.parseExport(gpa, out.written(), &diag);
    defer conversation.freeMessages(gpa, back);
    try std.testing.expectEqualStrings(details, back[1].reasoning_details);
    var again: std.Io.Writer.Allocating = .init(gpa);
    defer again.deinit();
    try conversation_json.writeExport(&again.writer, back);
    try std.testing.expectEqualStrings(out.written(), again.written());

    const head_doc = "{\"version\":1,\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"a\"}]},{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"b\"}],";
    const taken = try conversation_json.parseExport(gpa, head_doc ++ "\"reasoning_details\":\"[{\\\"type\\\":\\\"reasoning.encrypted\\\",\\\"data\\\":\\\"x\\\"}]\"}]}", &diag);
    defer conversation.freeMessages(gpa, taken);
    try std.testing.expectEqualStrings("[{\"type\":\"reasoning.encrypted\",\"data\":\"x\"}]", taken[1].reasoning_details);
    const refused = [_][]const u8{
        "\"reasoning_details\":\"{}\"", // not an array
        "\"reasoning_details\":\"[]\"", // empty: none is no key
        "\"reasoning_details\":\"[{\\\"data\\\":\\\"x\\\"}]\"", // an element without a type
        "\"reasoning_details\":\"[\"", // not JSON
        "\"reasoning_details\":[]", // not a string
    };
    for (refused) |bad| {
        const doc = try std.mem.concat(gpa, u8, &.{ head_doc, bad, "}]}" });
        defer gpa.free(doc);
        try std.testing.expectError(error.InvalidConversation, conversation_json.parseExport(gpa, doc, &diag));
    }
    // Only an assistant message has them.
    try std.testing.expectError(error.InvalidConversation, conversation_json.parseExport(gpa, "{\"version\":1,\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"a\"}],\"reasoning_details\":\"[{\\\"type\\\":\\\"x\\\"}]\"}]}", &diag));
}
