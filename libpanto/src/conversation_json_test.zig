//! The conversation format v1: the round trip, the import's refusals, and the agent's edits.
const std = @import("std");
const cj = @import("conversation_json.zig");
const conversation = @import("conversation.zig");
const Agent = @import("agent.zig").Agent;
const png_1x1 = @import("test_png.zig").bytes;

const testing = std.testing;

/// A document holding every block kind, media included, in the writer's own form.
fn everyKind(gpa: std.mem.Allocator) ![]u8 {
    const encoder = std.base64.standard.Encoder;
    var png_buf: [256]u8 = undefined;
    const png = encoder.encode(&png_buf, png_1x1);
    const pdf = encoder.encode(png_buf[128..], "%PDF-1.4\n%%EOF\n");
    return std.fmt.allocPrint(gpa,
        \\{{"version":1,"messages":[
        ++ "{{\"role\":\"user\",\"content\":[{{\"type\":\"text\",\"text\":\"look \\\"here\\\" é\\n\"}},{{\"type\":\"image\",\"media_type\":\"image/png\",\"data\":\"{s}\",\"name\":\"a.png\"}},{{\"type\":\"document\",\"media_type\":\"application/pdf\",\"data\":\"{s}\",\"name\":\"d.pdf\"}}],\"cache\":true}}," ++
        "{{\"role\":\"assistant\",\"content\":[{{\"type\":\"thinking\",\"text\":\"hmm\",\"signature\":\"sig==\"}},{{\"type\":\"redacted_thinking\",\"text\":\"opaque\"}},{{\"type\":\"text\",\"text\":\"calling\"}},{{\"type\":\"tool_call\",\"id\":\"toolu_1\",\"name\":\"get_weather\",\"input\":{{\"city\":\"Paris\",\"n\":1e300,\"x\":[0.10,{{}}]}}}},{{\"type\":\"tool_call\",\"id\":\"a/b:c\",\"name\":\"shot\",\"input\":{{}}}}],\"provider\":\"anthropic\",\"model\":\"claude-x\",\"stop_reason\":\"tool_use\",\"usage\":{{\"input_tokens\":10,\"output_tokens\":20,\"cache_read_tokens\":3,\"cache_write_tokens\":0,\"reasoning_tokens\":18446744073709551615}}}}," ++
        "{{\"role\":\"user\",\"content\":[{{\"type\":\"tool_result\",\"id\":\"toolu_1\",\"content\":\"sunny\",\"is_error\":false}},{{\"type\":\"tool_result\",\"id\":\"a/b:c\",\"content\":[{{\"type\":\"text\",\"text\":\"see\"}},{{\"type\":\"image\",\"media_type\":\"image/png\",\"data\":\"{s}\"}}],\"is_error\":true}}]}}," ++
        "{{\"role\":\"assistant\",\"content\":[{{\"type\":\"text\",\"text\":\"part\"}}],\"provider\":\"openai\",\"model\":\"gpt-4o\",\"stop_reason\":\"aborted\",\"usage\":{{\"input_tokens\":0,\"output_tokens\":0,\"cache_read_tokens\":0,\"cache_write_tokens\":0,\"reasoning_tokens\":0}}}}," ++
        "{{\"role\":\"user\",\"content\":[{{\"type\":\"text\",\"text\":\"summary\"}}],\"cache\":true,\"compaction\":{{\"message_count\":4,\"tokens_before\":123}}}}," ++
        "{{\"role\":\"user\",\"content\":[{{\"type\":\"text\",\"text\":\"\"}}]}}" ++
        \\]}}
    , .{ png, pdf, png });
}

fn exportOf(gpa: std.mem.Allocator, messages: []const conversation.Message) ![]u8 {
    var out: std.Io.Writer.Allocating = .init(gpa);
    defer out.deinit();
    try cj.writeExport(&out.writer, messages);
    return out.toOwnedSlice();
}

test "export -> import -> export is byte-identical over every block kind, media included" {
    const gpa = testing.allocator;
    const doc = try everyKind(gpa);
    defer gpa.free(doc);
    var diag: cj.Diagnostic = .{};
    const first = cj.parseExport(gpa, doc, &diag) catch |err| {
        std.debug.print("{s}\n", .{diag.message()});
        return err;
    };
    defer conversation.freeMessages(gpa, first);
    const exported = try exportOf(gpa, first);
    defer gpa.free(exported);
    // The writer's own form parses back into the same bytes, and the document was written in it
    // but for the tool input (made compact) and nothing else.
    const again = try cj.parseExport(gpa, exported, &diag);
    defer conversation.freeMessages(gpa, again);
    const exported_again = try exportOf(gpa, again);
    defer gpa.free(exported_again);
    try testing.expectEqualStrings(exported, exported_again);
    try testing.expectEqualStrings(doc, exported);

    try testing.expectEqual(@as(usize, 6), first.len);
    try testing.expectEqualStrings("sig==", first[1].blocks[0].signature);
    try testing.expectEqual(@as(u64, std.math.maxInt(u64)), first[1].usage.reasoning_tokens);
    try testing.expectEqualStrings("{\"city\":\"Paris\",\"n\":1e300,\"x\":[0.10,{}]}", first[1].blocks[3].text);
    try testing.expectEqualStrings("see", first[2].blocks[1].text); // the parts' text joined
    try testing.expectEqual(@as(u64, 4), first[4].compaction.?.message_count);
    // The caller's cache marks (a user message's "cache": true, written only when set).
    try testing.expect(first[0].cache and first[4].cache and !first[2].cache and !first[5].cache);
}

fn expectRefused(doc: []const u8, message: []const u8) !void {
    var diag: cj.Diagnostic = .{};
    try testing.expectError(error.InvalidConversation, cj.parseExport(testing.allocator, doc, &diag));
    try testing.expectEqualStrings(message, diag.message());
}

const usage0 = "\"usage\":{\"input_tokens\":0,\"output_tokens\":0,\"cache_read_tokens\":0,\"cache_write_tokens\":0,\"reasoning_tokens\":0}";

test "import refuses bad documents, naming the first problem and its place" {
    try expectRefused("[]", "the conversation is not a JSON object");
    try expectRefused("{\"version\":1,\"messages\":[]", "the conversation is not valid JSON");
    try expectRefused("{\"version\":2,\"messages\":[]}", "unsupported conversation version 2");
    try expectRefused("{\"version\":\"1\",\"messages\":[]}", "\"version\" is not a non-negative integer");
    try expectRefused("{\"version\":1}", "the conversation has no \"messages\"");
    try expectRefused("{\"version\":1,\"messages\":[],\"x\":0}", "unknown key \"x\" in the conversation");
    try expectRefused("{\"version\":1,\"version\":1,\"messages\":[]}", "the conversation has a key twice");
    try expectRefused("{\"version\":1,\"messages\":[{\"role\":\"system\",\"content\":[]}]}", "messages[0]: role must be \"user\" or \"assistant\", not \"system\"");
    try expectRefused("{\"version\":1,\"messages\":[{\"role\":\"user\",\"content\":[]}]}", "messages[0]: \"content\" is empty");
    try expectRefused("{\"version\":1,\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"a\"}],\"model\":\"m\"}]}", "messages[0]: unknown key \"model\" in a user message");
    try expectRefused("{\"version\":1,\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"thinking\",\"text\":\"a\"}]}]}", "messages[0].content[0]: a user message cannot hold a thinking block");
    try expectRefused("{\"version\":1,\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":1}]}]}", "messages[0].content[0]: \"text\" is not a string");
    try expectRefused("{\"version\":1,\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"image\",\"media_type\":\"image/png\",\"data\":\"%%%\"}]}]}", "messages[0].content[0]: \"data\" is not base64");
    try expectRefused("{\"version\":1,\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"image\",\"media_type\":\"image/gif\",\"data\":\"iVBORw0KGgo=\"}]}]}", "messages[0].content[0]: \"data\" does not hold image/gif bytes");
    try expectRefused("{\"version\":1,\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"image\",\"media_type\":\"image/bmp\",\"data\":\"Qk0=\"}]}]}", "messages[0].content[0]: an image's media_type must be image/png, image/jpeg, image/gif or image/webp, not \"image/bmp\"");
    try expectRefused("{\"version\":1,\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"a\"}],\"cache\":1}]}", "messages[0]: \"cache\" is not true or false");
    try expectRefused("{\"version\":1,\"messages\":[{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"a\"}],\"cache\":true}]}", "messages[0]: unknown key \"cache\" in an assistant message");
    try expectRefused("{\"version\":1,\"messages\":[{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"a\"}],\"stop_reason\":\"bored\"}]}", "messages[0]: unknown stop_reason \"bored\"");
    try expectRefused("{\"version\":1,\"messages\":[{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"a\"}],\"usage\":{\"input_tokens\":-1}}]}", "messages[0]: usage.input_tokens is not a non-negative integer");
    try expectRefused("{\"version\":1,\"messages\":[{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"a\"}],\"usage\":{\"output_tokens\":1.5}}]}", "messages[0]: usage.output_tokens is not a non-negative integer");
    try expectRefused("{\"version\":1,\"messages\":[{\"role\":\"assistant\",\"content\":[{\"type\":\"tool_call\",\"id\":\"c\",\"name\":\"a b\",\"input\":{}}]}]}", "messages[0].content[0]: tool name \"a b\" is not 1 to 64 of [a-zA-Z0-9_-]");
    try expectRefused("{\"version\":1,\"messages\":[{\"role\":\"assistant\",\"content\":[{\"type\":\"tool_call\",\"id\":\"c\",\"name\":\"t\",\"input\":[]}]}]}", "messages[0].content[0]: \"input\" is not a JSON object");
    // Tool calls and results pair up, message after message.
    const call = "{\"role\":\"assistant\",\"content\":[{\"type\":\"tool_call\",\"id\":\"call_1\",\"name\":\"t\",\"input\":{}}]," ++ usage0 ++ "}";
    try expectRefused("{\"version\":1,\"messages\":[" ++ call ++ "]}", "messages[0]: tool call \"call_1\" gets no result (the conversation ends)");
    try expectRefused("{\"version\":1,\"messages\":[" ++ call ++ "," ++ call ++ "]}", "messages[1]: tool call \"call_1\" of messages[0] gets no result (an assistant message follows)");
    try expectRefused("{\"version\":1,\"messages\":[" ++ call ++ ",{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"id\":\"call_9\",\"content\":\"x\",\"is_error\":false}]}]}", "messages[1].content[0]: tool_result \"call_9\" answers no tool call of messages[0]");
    try expectRefused("{\"version\":1,\"messages\":[" ++ call ++ ",{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"x\"}]}]}", "messages[1]: no tool_result for tool call \"call_1\" of messages[0]");
    try expectRefused("{\"version\":1,\"messages\":[" ++ call ++ ",{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"id\":\"call_1\",\"content\":\"x\",\"is_error\":false},{\"type\":\"tool_result\",\"id\":\"call_1\",\"content\":\"x\",\"is_error\":false}]}]}", "messages[1].content[1]: a second tool_result for \"call_1\"");
    try expectRefused("{\"version\":1,\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"id\":\"call_1\",\"content\":\"x\",\"is_error\":false}]}]}", "messages[0].content[0]: tool_result \"call_1\" answers no tool call");
    // Deep nesting, in a tool input or anywhere.
    try expectRefused("{\"version\":1,\"messages\":[{\"a\":" ++ "[" ** 200 ++ "]" ** 200 ++ "}]}", "the conversation is nested more than 128 levels deep");
}

test "import never crashes: every prefix of a document, and every byte changed, is refused or read" {
    const gpa = testing.allocator;
    const doc = try everyKind(gpa);
    defer gpa.free(doc);
    var diag: cj.Diagnostic = .{};
    for (0..doc.len) |n| {
        const refused = cj.parseExport(gpa, doc[0..n], &diag);
        try testing.expectError(error.InvalidConversation, refused);
        try testing.expect(diag.message().len > 0);
    }
    const copy = try gpa.dupe(u8, doc);
    defer gpa.free(copy);
    var prng: std.Random.DefaultPrng = .init(16);
    const random = prng.random();
    const replacements = "{}[]\",:0-1.ae\\ntruefalsnul";
    for (0..3000) |_| {
        @memcpy(copy, doc);
        for (0..1 + random.uintLessThan(usize, 3)) |_| copy[random.uintLessThan(usize, copy.len)] = replacements[random.uintLessThan(usize, replacements.len)];
        if (cj.parseExport(gpa, copy, &diag)) |messages| {
            // What is read is written back and read again the same.
            const out = try exportOf(gpa, messages);
            defer gpa.free(out);
            const back = try cj.parseExport(gpa, out, &diag);
            conversation.freeMessages(gpa, back);
            conversation.freeMessages(gpa, messages);
        } else |err| try testing.expectEqual(error.InvalidConversation, err);
    }
}

test "import frees everything when memory runs out" {
    const gpa = testing.allocator;
    const doc = try everyKind(gpa);
    defer gpa.free(doc);
    try testing.checkAllAllocationFailures(gpa, struct {
        fn run(a: std.mem.Allocator, text: []const u8) !void {
            var diag: cj.Diagnostic = .{};
            conversation.freeMessages(a, try cj.parseExport(a, text, &diag));
        }
    }.run, .{doc});
}

test "an agent imports, exports, truncates; a refusal leaves it unchanged" {
    const gpa = testing.allocator;
    const agent = try Agent.init(gpa, .{ .provider = .anthropic, .model = "m", .api_key = "k" });
    defer agent.deinit();
    const doc = try everyKind(gpa);
    defer gpa.free(doc);
    var diag: cj.Diagnostic = .{};
    try agent.importJson(doc, &diag);
    try testing.expectEqual(@as(usize, 6), agent.messageCount());

    var out: std.Io.Writer.Allocating = .init(gpa);
    defer out.deinit();
    try agent.exportJson(&out.writer);
    try testing.expectEqualStrings(doc, out.written());

    // Refused imports and truncations change nothing.
    try testing.expectError(error.InvalidConversation, agent.importJson("{\"version\":1,\"messages\":[{}]}", &diag));
    try testing.expectEqualStrings("messages[0]: no \"role\"", diag.message());
    try testing.expectError(error.OutOfRange, agent.truncate(7, &diag));
    try testing.expectError(error.InvalidConversation, agent.truncate(2, &diag));
    try testing.expectEqualStrings("cannot keep 2 messages: messages[1] has tool calls whose results are in messages[2]", diag.message());
    try testing.expectEqual(@as(usize, 6), agent.messageCount());
    out.clearRetainingCapacity();
    try agent.exportJson(&out.writer);
    try testing.expectEqualStrings(doc, out.written());

    // Refused while a turn runs.
    agent.busy = true;
    try testing.expectError(error.Busy, agent.truncate(1, &diag));
    try testing.expectError(error.Busy, agent.importJson(doc, &diag));
    agent.busy = false;

    try agent.truncate(3, &diag);
    try testing.expectEqual(@as(usize, 3), agent.messageCount());
    try agent.truncate(3, &diag);
    try agent.truncate(0, &diag);
    try testing.expectEqual(@as(usize, 0), agent.messageCount());
    out.clearRetainingCapacity();
    try agent.exportJson(&out.writer);
    try testing.expectEqualStrings("{\"version\":1,\"messages\":[]}", out.written());
}
