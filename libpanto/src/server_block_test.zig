//! Blocks panto does not interpret (Anthropic's server tools, compaction, types added later)
//! are kept as themselves: decoded from the stream with their JSON as received (a
//! server_tool_use's streamed input filled in), carried by export and import, sent back byte
//! for byte to the provider and model that wrote them, left out for any other. No request
//! holds an empty text block.
const std = @import("std");
const conversation = @import("conversation.zig");
const conversation_json = @import("conversation_json.zig");
const providers = @import("providers.zig");
const fixture = @import("anthropic_decode_fixture.zig");
const Fixture = fixture.Fixture;
const request = fixture.request;

const search_use = "{\"type\":\"server_tool_use\",\"id\":\"srvtoolu_01\",\"name\":\"web_search\",\"input\":{}}";
const search_use_filled = "{\"type\":\"server_tool_use\",\"id\":\"srvtoolu_01\",\"name\":\"web_search\",\"input\":{\"query\": \"zig 0.16\"}}";
const search_result = "{\"type\":\"web_search_tool_result\",\"tool_use_id\":\"srvtoolu_01\",\"content\":[{\"type\":\"web_search_result\",\"title\":\"Zig \\u00e9\",\"url\":\"https://ziglang.org\",\"encrypted_content\":\"EqgfCio=\",\"page_age\":null}]}";
const unknown = "{\"type\":\"future_block\",\"n\":1.50}";

/// The stream of one message: text "", a server_tool_use whose input streams in two deltas, its
/// result, a block of a type no one knows yet, then text.
const stream = [_][]const u8{
    "{\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"model\":\"claude-a\",\"content\":[]}}",
    "{\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}",
    "{\"type\":\"content_block_stop\",\"index\":0}",
    "{\"type\":\"content_block_start\",\"index\":1,\"content_block\":" ++ search_use ++ "}",
    "{\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"query\\\": \"}}",
    "{\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"\\\"zig 0.16\\\"}\"}}",
    "{\"type\":\"content_block_stop\",\"index\":1}",
    "{\"type\":\"content_block_start\",\"index\":2,\"content_block\":" ++ search_result ++ "}",
    "{\"type\":\"content_block_stop\",\"index\":2}",
    "{\"type\":\"content_block_start\",\"index\":3,\"content_block\": " ++ unknown ++ " }",
    "{\"type\":\"content_block_stop\",\"index\":3}",
    "{\"type\":\"content_block_start\",\"index\":4,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}",
    "{\"type\":\"content_block_delta\",\"index\":4,\"delta\":{\"type\":\"text_delta\",\"text\":\"Found it.\"}}",
    "{\"type\":\"content_block_stop\",\"index\":4}",
    "{\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"}}",
    "{\"type\":\"message_stop\"}",
};

/// The conversation: a user turn, then the stream's message (by anthropic claude-a), committed.
fn decodeInto(conv: *conversation.Conversation) !void {
    var f: Fixture = .init(std.testing.allocator);
    defer f.deinit();
    try f.feed(&stream);
    try f.commit(conv, "search");
}

test "server blocks are stored with their JSON as received, the streamed input filled in" {
    const gpa = std.testing.allocator;
    var conv: conversation.Conversation = .init(gpa);
    defer conv.deinit();
    try decodeInto(&conv);
    const blocks = conv.messages.items[1].blocks;
    try std.testing.expectEqual(@as(usize, 5), blocks.len);
    try std.testing.expectEqual(.text, blocks[0].kind);
    try std.testing.expectEqualStrings("", blocks[0].text);
    const want = [_]struct { []const u8, []const u8 }{ .{ "server_tool_use", search_use_filled }, .{ "web_search_tool_result", search_result }, .{ "future_block", unknown } };
    for (want, blocks[1..4]) |w, b| {
        try std.testing.expectEqual(.server_block, b.kind);
        try std.testing.expectEqualStrings(w[0], b.name);
        try std.testing.expectEqualStrings(w[1], b.text);
    }
    try std.testing.expectEqualStrings("Found it.", blocks[4].text);
}

test "export and import carry server blocks byte for byte" {
    const gpa = std.testing.allocator;
    var conv: conversation.Conversation = .init(gpa);
    defer conv.deinit();
    try decodeInto(&conv);
    var out: std.Io.Writer.Allocating = .init(gpa);
    defer out.deinit();
    try conversation_json.writeExport(&out.writer, conv.messages.items);
    var diag: conversation_json.Diagnostic = .{};
    const back = try conversation_json.parseExport(gpa, out.written(), &diag);
    defer conversation.freeMessages(gpa, back);
    try std.testing.expectEqualStrings(search_use_filled, back[1].blocks[1].text);
    try std.testing.expectEqualStrings("web_search_tool_result", back[1].blocks[2].name);
    try std.testing.expectEqualStrings(search_result, back[1].blocks[2].text);
    var again: std.Io.Writer.Allocating = .init(gpa);
    defer again.deinit();
    try conversation_json.writeExport(&again.writer, back);
    try std.testing.expectEqualStrings(out.written(), again.written());
}

test "an imported server block is a JSON object of its named type" {
    const gpa = std.testing.allocator;
    const cases = [_]struct { []const u8, []const u8 }{
        .{ "{\"type\":\"server_block\",\"name\":\"x\",\"json\":\"{\\\"type\\\":\\\"y\\\"}\"}", "messages[0].content[0]: a server_block's \"json\" is not an object of type \"x\"" },
        .{ "{\"type\":\"server_block\",\"name\":\"x\",\"json\":\"{\"}", "messages[0].content[0]: a server_block's \"json\" is not valid JSON" },
        .{ "{\"type\":\"server_block\",\"name\":\"\",\"json\":\"{}\"}", "messages[0].content[0]: a server_block's \"name\" is empty" },
    };
    for (cases) |c| {
        const doc = try std.fmt.allocPrint(gpa, "{{\"version\":1,\"messages\":[{{\"role\":\"assistant\",\"content\":[{s}]}}]}}", .{c[0]});
        defer gpa.free(doc);
        var diag: conversation_json.Diagnostic = .{};
        try std.testing.expectError(error.InvalidConversation, conversation_json.parseExport(gpa, doc, &diag));
        try std.testing.expectEqualStrings(c[1], diag.message());
    }
    // A user message cannot hold one.
    var diag: conversation_json.Diagnostic = .{};
    try std.testing.expectError(error.InvalidConversation, conversation_json.parseExport(gpa, "{\"version\":1,\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"server_block\",\"name\":\"x\",\"json\":\"{\\\"type\\\":\\\"x\\\"}\"}]}]}", &diag));
}

test "to the model that wrote them server blocks go back as received; to any other, not; no empty text" {
    const gpa = std.testing.allocator;
    var conv: conversation.Conversation = .init(gpa);
    defer conv.deinit();
    try decodeInto(&conv);
    try conv.appendUserText("more");

    const same = try request(gpa, .anthropic, "claude-a", &conv);
    defer gpa.free(same);
    try std.testing.expect(std.mem.indexOf(u8, same, "\"content\":[" ++ search_use_filled ++ "," ++ search_result ++ "," ++ unknown ++ ",{\"type\":\"text\",\"text\":\"Found it.\"}]") != null);

    const other_model = try request(gpa, .anthropic, "claude-b", &conv);
    defer gpa.free(other_model);
    try std.testing.expect(std.mem.indexOf(u8, other_model, "\"content\":[{\"type\":\"text\",\"text\":\"Found it.\"}]") != null);
    try std.testing.expect(std.mem.indexOf(u8, other_model, "srvtoolu_01") == null);

    const openai = try request(gpa, .openai, "gpt-4o", &conv);
    defer gpa.free(openai);
    try std.testing.expect(std.mem.indexOf(u8, openai, "srvtoolu_01") == null);
    try std.testing.expect(std.mem.indexOf(u8, openai, "\"content\":\"Found it.\"") != null);

    for ([_][]const u8{ same, other_model }) |body| try std.testing.expect(std.mem.indexOf(u8, body, "\"text\":\"\"") == null);
}

test "a message of empty text, or of server blocks for another model, is left out (the user messages around it go as one)" {
    const gpa = std.testing.allocator;
    var conv: conversation.Conversation = .init(gpa);
    defer conv.deinit();
    try conv.appendUserText("hi");
    try conv.appendMessage(.assistant, &.{ .{ .kind = .text, .text = "" }, .{ .kind = .server_block, .name = "compaction", .text = "{\"type\":\"compaction\",\"content\":\"summary\"}" } }, .{ .stop_reason = .end_turn, .provider = "anthropic", .model = "claude-a" });
    try conv.appendUserText("again");
    const body = try request(gpa, .anthropic, "claude-b", &conv);
    defer gpa.free(body);
    try std.testing.expect(std.mem.indexOf(u8, body, "\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"hi\"},{\"type\":\"text\",\"text\":\"again\"}]}]") != null);
}

test "a server block cut off by a cancel is not kept" {
    const gpa = std.testing.allocator;
    var f: Fixture = .init(gpa);
    defer f.deinit();
    try f.feed(stream[0..5]);
    var conv: conversation.Conversation = .init(gpa);
    defer conv.deinit();
    try f.assembly.commitPartial(&conv, .{ .provider = "anthropic", .model = "claude-a" });
    try std.testing.expectEqual(@as(usize, 0), conv.messages.items.len);
}

test "a server block's events: its kind, its input's fragments, then the block itself and its type" {
    const gpa = std.testing.allocator;
    var f: Fixture = .init(gpa);
    defer f.deinit();
    var seen: std.ArrayList(u8) = .empty; // one line per event of block 1
    defer seen.deinit(gpa);
    for (stream[0..8]) |data| {
        try f.handle(data);
        while (f.assembly.pop()) |e| switch (e) {
            .block_start => |s| if (s.index == 1) try seen.print(gpa, "start {t}\n", .{s.kind}),
            .content_delta => |c| if (c.index == 1) try seen.print(gpa, "delta {t} {s}\n", .{ c.kind, c.text }),
            .block_complete => |c| if (c.index == 1) try seen.print(gpa, "complete {t} {s} {s}\n", .{ c.kind, c.name, c.text }),
            else => {},
        };
    }
    try std.testing.expectEqualStrings("start server_block\ndelta server_block {\"query\": \ndelta server_block \"zig 0.16\"}\ncomplete server_block server_tool_use " ++ search_use_filled ++ "\n", seen.items);
}

test "a compaction's compaction_delta is set in its JSON, every other byte as received" {
    const gpa = std.testing.allocator;
    var f: Fixture = .init(gpa);
    defer f.deinit();
    const events = [_][]const u8{
        "{\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"model\":\"claude-a\",\"content\":[]}}",
        "{\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"compaction\", \"content\": null}}",
        "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"compaction_delta\",\"content\":\"Sum \\u00e9.\",\"encrypted_content\":\"Ev0B\"}}",
        "{\"type\":\"content_block_stop\",\"index\":0}",
        "{\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"}}",
        "{\"type\":\"message_stop\"}",
    };
    var completed: []const u8 = "";
    for (events) |data| {
        try f.handle(data);
        while (f.assembly.pop()) |e| if (e == .block_complete) {
            completed = try gpa.dupe(u8, e.block_complete.text);
        };
    }
    defer gpa.free(completed);
    const want = "{\"type\":\"compaction\", \"content\": \"Sum \\u00e9.\",\"encrypted_content\":\"Ev0B\"}";
    try std.testing.expectEqualStrings(want, completed);
    var conv: conversation.Conversation = .init(gpa);
    defer conv.deinit();
    try f.commit(&conv, null);
    try std.testing.expectEqualStrings(want, conv.messages.items[0].blocks[0].text);
}

test "server tools' usage is read from message_delta, exported only when some ran, and imported" {
    const gpa = std.testing.allocator;
    var f: Fixture = .init(gpa);
    defer f.deinit();
    const events = [_][]const u8{
        "{\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"model\":\"claude-a\",\"content\":[],\"usage\":{\"input_tokens\":5,\"output_tokens\":1,\"server_tool_use\":{\"web_search_requests\":0}}}}",
        "{\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}",
        "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Found it.\"}}",
        "{\"type\":\"content_block_stop\",\"index\":0}",
        "{\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":9,\"server_tool_use\":{\"web_search_requests\":2,\"web_fetch_requests\":1}}}",
        "{\"type\":\"message_stop\"}",
    };
    try f.feed(&events);
    try std.testing.expectEqual(@as(u64, 2), f.assembly.usage.web_search_requests);
    try std.testing.expectEqual(@as(u64, 1), f.assembly.usage.web_fetch_requests);
    try std.testing.expectEqual(@as(u64, 9), f.assembly.usage.output_tokens);

    var conv: conversation.Conversation = .init(gpa);
    defer conv.deinit();
    try f.commit(&conv, "search");
    var out: std.Io.Writer.Allocating = .init(gpa);
    defer out.deinit();
    try conversation_json.writeExport(&out.writer, conv.messages.items);
    try std.testing.expect(std.mem.indexOf(u8, out.written(), "\"reasoning_tokens\":0,\"web_search_requests\":2,\"web_fetch_requests\":1}") != null);
    var diag: conversation_json.Diagnostic = .{};
    const back = try conversation_json.parseExport(gpa, out.written(), &diag);
    defer conversation.freeMessages(gpa, back);
    try std.testing.expectEqual(@as(u64, 2), back[1].usage.web_search_requests);
    try std.testing.expectEqual(@as(u64, 1), back[1].usage.web_fetch_requests);

    // None ran: the export has the five token counts only, as before.
    conv.messages.items[1].usage = .{};
    var plain: std.Io.Writer.Allocating = .init(gpa);
    defer plain.deinit();
    try conversation_json.writeExport(&plain.writer, conv.messages.items);
    try std.testing.expect(std.mem.indexOf(u8, plain.written(), "\"reasoning_tokens\":0}") != null);
}

test "code execution's container is kept with its message, exported, and carried by later requests with hosted tools" {
    const gpa = std.testing.allocator;
    var f: Fixture = .init(gpa);
    defer f.deinit();
    const events = [_][]const u8{
        "{\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"model\":\"claude-a\",\"content\":[],\"container\":null}}",
        "{\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}",
        "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Ran it.\"}}",
        "{\"type\":\"content_block_stop\",\"index\":0}",
        "{\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\",\"container\":{\"id\":\"container_011\",\"expires_at\":\"2026-12-06T15:00:00Z\"}}}",
        "{\"type\":\"message_stop\"}",
    };
    try f.feed(&events);
    var conv: conversation.Conversation = .init(gpa);
    defer conv.deinit();
    try f.commit(&conv, "run");
    try std.testing.expectEqualStrings("container_011", conv.messages.items[1].container);
    try conv.appendUserText("again");

    var out: std.Io.Writer.Allocating = .init(gpa);
    defer out.deinit();
    try conversation_json.writeExport(&out.writer, conv.messages.items);
    try std.testing.expect(std.mem.indexOf(u8, out.written(), "\"reasoning_tokens\":0},\"container\":\"container_011\"}") != null);
    var diag: conversation_json.Diagnostic = .{};
    const back = try conversation_json.parseExport(gpa, out.written(), &diag);
    defer conversation.freeMessages(gpa, back);
    try std.testing.expectEqualStrings("container_011", back[1].container);

    const hosted = [_]@import("config.zig").ServerTool{.{ .type = "code_execution_20250825", .name = "code_execution", .json = "{\"type\":\"code_execution_20250825\",\"name\":\"code_execution\"}" }};
    for ([_]bool{ true, false }) |with_tools| {
        var body: std.Io.Writer.Allocating = .init(gpa);
        defer body.deinit();
        try providers.writeRequest(.anthropic, &body.writer, .{ .config = .{ .provider = .anthropic, .model = "claude-a", .request = .{ .cache = .{ .mode = .off }, .server_tools = if (with_tools) &hosted else &.{} } }, .conversation = &conv, .tools = &.{}, .granted = &.{} });
        const has = std.mem.indexOf(u8, body.written(), "\"container\":\"container_011\"") != null;
        try std.testing.expectEqual(with_tools, has);
    }
}

test "a paused message before another leaves out its server calls without a result; as the last message it goes back whole" {
    const gpa = std.testing.allocator;
    var conv: conversation.Conversation = .init(gpa);
    defer conv.deinit();
    const paused: conversation.Meta = .{ .stop_reason = .pause_turn, .provider = "anthropic", .model = "claude-a" };
    const fetch_use = "{\"type\":\"server_tool_use\",\"id\":\"srvtoolu_02\",\"name\":\"web_fetch\",\"input\":{\"url\":\"https://ziglang.org\"}}";
    try conv.appendUserText("search");
    // A paired call and its result, then a call the pause cut from its result.
    try conv.appendMessage(.assistant, &.{
        .{ .kind = .text, .text = "Searching." },
        .{ .kind = .server_block, .name = "server_tool_use", .text = search_use_filled },
        .{ .kind = .server_block, .name = "web_search_tool_result", .text = search_result },
        .{ .kind = .server_block, .name = "server_tool_use", .text = fetch_use },
    }, paused);
    {
        const body = try request(gpa, .anthropic, "claude-a", &conv);
        defer gpa.free(body);
        try std.testing.expect(std.mem.indexOf(u8, body, fetch_use) != null); // the continuation: whole
    }
    try conv.appendUserText("again");
    {
        const body = try request(gpa, .anthropic, "claude-a", &conv);
        defer gpa.free(body);
        try std.testing.expect(std.mem.indexOf(u8, body, "srvtoolu_02") == null);
        try std.testing.expect(std.mem.indexOf(u8, body, search_use_filled) != null);
        try std.testing.expect(std.mem.indexOf(u8, body, search_result) != null);
    }
    // A paused message holding only an unanswered call is left out whole (no empty message).
    try conv.appendMessage(.assistant, &.{.{ .kind = .server_block, .name = "server_tool_use", .text = fetch_use }}, paused);
    try conv.appendUserText("once more");
    const body = try request(gpa, .anthropic, "claude-a", &conv);
    defer gpa.free(body);
    try std.testing.expect(std.mem.indexOf(u8, body, "srvtoolu_02") == null);
    try std.testing.expect(std.mem.indexOf(u8, body, "\"content\":[]") == null);
    try std.testing.expect(std.mem.indexOf(u8, body, "{\"type\":\"text\",\"text\":\"again\"},{\"type\":\"text\",\"text\":\"once more\"}") != null);
}
