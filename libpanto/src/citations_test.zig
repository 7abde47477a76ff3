//! A text block's citations (Anthropic's: a web search answer's sources) are kept with it: each
//! citation object's bytes as received, whether streamed as citations_delta or given in the
//! text's content_block_start; given on the text's BlockComplete; carried by export and
//! import; sent back with the text to the provider and model that wrote it, and left out (the
//! text kept) for any other.
const std = @import("std");
const conversation = @import("conversation.zig");
const conversation_json = @import("conversation_json.zig");
const fixture = @import("anthropic_decode_fixture.zig");
const Fixture = fixture.Fixture;
const request = fixture.request;

const cite_a = "{\"type\":\"web_search_result_location\",\"cited_text\":\"Zig \\u00e9 \\\"0.16\\\"\",\"url\":\"https://ziglang.org\",\"title\":\"Zig\",\"encrypted_index\":\"Eo8B\"}";
const cite_b = "{\"type\":\"web_search_result_location\", \"cited_text\":\"News.\",\"url\":\"https://ziglang.org/news\",\"title\":\"News\",\"encrypted_index\":\"EpAB\"}";

/// One message: a text whose two citations stream as citations_delta (its start says
/// `"citations":[]`), then a text whose citation is given in its start, then a plain text.
const stream = [_][]const u8{
    "{\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"model\":\"claude-a\",\"content\":[]}}",
    "{\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\",\"citations\":[]}}",
    "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"citations_delta\",\"citation\":" ++ cite_a ++ "}}",
    "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"citations_delta\",\"citation\": " ++ cite_b ++ " }}",
    "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Zig 0.16 is out.\"}}",
    "{\"type\":\"content_block_stop\",\"index\":0}",
    "{\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"text\",\"text\":\"\",\"citations\":[" ++ cite_b ++ "]}}",
    "{\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"text_delta\",\"text\":\" New I/O.\"}}",
    "{\"type\":\"content_block_stop\",\"index\":1}",
    "{\"type\":\"content_block_start\",\"index\":2,\"content_block\":{\"type\":\"text\",\"text\":\"\",\"citations\":null}}",
    "{\"type\":\"content_block_delta\",\"index\":2,\"delta\":{\"type\":\"text_delta\",\"text\":\" Bye.\"}}",
    "{\"type\":\"content_block_stop\",\"index\":2}",
    "{\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"}}",
    "{\"type\":\"message_stop\"}",
};

const both = "[" ++ cite_a ++ "," ++ cite_b ++ "]";
const one = "[" ++ cite_b ++ "]";

/// Decodes `events` into a conversation after a user turn (by anthropic claude-a), and gives
/// the text blocks' BlockComplete citations, in order, into `completed` (owned by `arena`).
fn decodeInto(conv: *conversation.Conversation, arena_out: std.mem.Allocator, events: []const []const u8, completed: *std.ArrayList([]const u8)) !void {
    var f: Fixture = .init(std.testing.allocator);
    defer f.deinit();
    for (events) |data| {
        try f.handle(data);
        while (f.assembly.pop()) |e| if (e == .block_complete and e.block_complete.kind == .text)
            try completed.append(arena_out, try arena_out.dupe(u8, e.block_complete.citations));
    }
    try f.commit(conv, "search");
}

test "a text's citations are kept as received, streamed or given at its start, and on its BlockComplete" {
    const gpa = std.testing.allocator;
    var arena: std.heap.ArenaAllocator = .init(gpa);
    defer arena.deinit();
    var conv: conversation.Conversation = .init(gpa);
    defer conv.deinit();
    var completed: std.ArrayList([]const u8) = .empty;
    try decodeInto(&conv, arena.allocator(), &stream, &completed);
    const blocks = conv.messages.items[1].blocks;
    try std.testing.expectEqualStrings("Zig 0.16 is out.", blocks[0].text);
    try std.testing.expectEqualStrings(both, blocks[0].citations);
    try std.testing.expectEqualStrings(one, blocks[1].citations);
    try std.testing.expectEqualStrings("", blocks[2].citations);
    try std.testing.expectEqual(@as(usize, 3), completed.items.len);
    try std.testing.expectEqualStrings(both, completed.items[0]);
    try std.testing.expectEqualStrings(one, completed.items[1]);
    try std.testing.expectEqualStrings("", completed.items[2]);
}

test "a message whole in message_start keeps its texts' citations" {
    const gpa = std.testing.allocator;
    var arena: std.heap.ArenaAllocator = .init(gpa);
    defer arena.deinit();
    var conv: conversation.Conversation = .init(gpa);
    defer conv.deinit();
    var completed: std.ArrayList([]const u8) = .empty;
    const whole = [_][]const u8{
        "{\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"model\":\"claude-a\",\"content\":[{\"type\":\"text\",\"text\":\"Out.\",\"citations\":[" ++ cite_a ++ "," ++ cite_b ++ "]}],\"stop_reason\":\"end_turn\"}}",
        "{\"type\":\"message_stop\"}",
    };
    try decodeInto(&conv, arena.allocator(), &whole, &completed);
    try std.testing.expectEqualStrings(both, conv.messages.items[1].blocks[0].citations);
    try std.testing.expectEqualStrings(both, completed.items[0]);
}

test "export and import carry citations byte for byte" {
    const gpa = std.testing.allocator;
    var arena: std.heap.ArenaAllocator = .init(gpa);
    defer arena.deinit();
    var conv: conversation.Conversation = .init(gpa);
    defer conv.deinit();
    var completed: std.ArrayList([]const u8) = .empty;
    try decodeInto(&conv, arena.allocator(), &stream, &completed);
    var out: std.Io.Writer.Allocating = .init(gpa);
    defer out.deinit();
    try conversation_json.writeExport(&out.writer, conv.messages.items);
    var diag: conversation_json.Diagnostic = .{};
    const back = try conversation_json.parseExport(gpa, out.written(), &diag);
    defer conversation.freeMessages(gpa, back);
    try std.testing.expectEqualStrings(both, back[1].blocks[0].citations);
    try std.testing.expectEqualStrings("", back[1].blocks[2].citations);
    var again: std.Io.Writer.Allocating = .init(gpa);
    defer again.deinit();
    try conversation_json.writeExport(&again.writer, back);
    try std.testing.expectEqualStrings(out.written(), again.written());
}

test "imported citations are a JSON array of objects on an assistant's text" {
    const gpa = std.testing.allocator;
    const cases = [_]struct { []const u8, []const u8, []const u8 }{
        .{ "assistant", "{\"type\":\"text\",\"text\":\"a\",\"citations\":\"{}\"}", "messages[0].content[0]: \"citations\" is not a JSON array of objects" },
        .{ "assistant", "{\"type\":\"text\",\"text\":\"a\",\"citations\":\"[1]\"}", "messages[0].content[0]: \"citations\" is not a JSON array of objects" },
        .{ "assistant", "{\"type\":\"text\",\"text\":\"a\",\"citations\":\"[\"}", "messages[0].content[0]: \"citations\" is not valid JSON" },
        .{ "assistant", "{\"type\":\"text\",\"text\":\"a\",\"citations\":[]}", "messages[0].content[0]: \"citations\" is not a string" },
        .{ "user", "{\"type\":\"text\",\"text\":\"a\",\"citations\":\"[]\"}", "messages[0].content[0]: only an assistant message's text has \"citations\"" },
        .{ "assistant", "{\"type\":\"thinking\",\"text\":\"a\",\"citations\":\"[]\"}", "messages[0].content[0]: unknown key \"citations\" in a thinking block" },
    };
    for (cases) |c| {
        const doc = try std.fmt.allocPrint(gpa, "{{\"version\":1,\"messages\":[{{\"role\":\"{s}\",\"content\":[{s}]}}]}}", .{ c[0], c[1] });
        defer gpa.free(doc);
        var diag: conversation_json.Diagnostic = .{};
        try std.testing.expectError(error.InvalidConversation, conversation_json.parseExport(gpa, doc, &diag));
        try std.testing.expectEqualStrings(c[2], diag.message());
    }
}

test "citations go back with the text to the model that wrote them, and to no other" {
    const gpa = std.testing.allocator;
    var arena: std.heap.ArenaAllocator = .init(gpa);
    defer arena.deinit();
    var conv: conversation.Conversation = .init(gpa);
    defer conv.deinit();
    var completed: std.ArrayList([]const u8) = .empty;
    try decodeInto(&conv, arena.allocator(), &stream, &completed);
    try conv.appendUserText("more");

    const same = try request(gpa, .anthropic, "claude-a", &conv);
    defer gpa.free(same);
    try std.testing.expect(std.mem.indexOf(u8, same, "{\"type\":\"text\",\"text\":\"Zig 0.16 is out.\",\"citations\":" ++ both ++ "}") != null);
    try std.testing.expect(std.mem.indexOf(u8, same, "{\"type\":\"text\",\"text\":\" New I/O.\",\"citations\":" ++ one ++ "}") != null);
    try std.testing.expect(std.mem.indexOf(u8, same, "{\"type\":\"text\",\"text\":\" Bye.\"}") != null);

    const other = try request(gpa, .anthropic, "claude-b", &conv);
    defer gpa.free(other);
    try std.testing.expect(std.mem.indexOf(u8, other, "{\"type\":\"text\",\"text\":\"Zig 0.16 is out.\"}") != null);
    try std.testing.expect(std.mem.indexOf(u8, other, "citations") == null);

    const openai = try request(gpa, .openai, "gpt-x", &conv);
    defer gpa.free(openai);
    try std.testing.expect(std.mem.indexOf(u8, openai, "Zig 0.16 is out.") != null);
    try std.testing.expect(std.mem.indexOf(u8, openai, "citations") == null);
}

test "a canceled message keeps its text without citations" {
    const gpa = std.testing.allocator;
    var f: Fixture = .init(gpa);
    defer f.deinit();
    try f.feed(stream[0..5]);
    var conv: conversation.Conversation = .init(gpa);
    defer conv.deinit();
    try f.assembly.commitPartial(&conv, .{ .provider = "anthropic", .model = "claude-a" });
    try std.testing.expectEqualStrings("Zig 0.16 is out.", conv.messages.items[0].blocks[0].text);
    try std.testing.expectEqualStrings("", conv.messages.items[0].blocks[0].citations);
}
