//! The hand-read hot events (providers/*/hot.zig) against std.json: whenever
//! one answers, std.json must read the same document as valid and to the same meaning (the
//! general decoding then does what the hot path does). Many generated documents close to
//! what the providers send: fields reordered, padded, repeated, of other types, extra
//! fields, escapes and UTF-8 in strings, and one document in ten with a byte broken.
const std = @import("std");
const fast_json = @import("fast_json.zig");
const anthropic = @import("providers/anthropic/decode.zig");
const anthropic_hot = @import("providers/anthropic/hot.zig");
const openai = @import("providers/openai/decode.zig");
const openai_hot = @import("providers/openai/hot.zig");
const sse = @import("sse.zig");

const Doc = struct {
    random: std.Random,
    out: std.ArrayList(u8) = .empty,

    fn chance(d: *Doc, percent: u32) bool {
        return d.random.uintLessThan(u32, 100) < percent;
    }

    fn pick(d: *Doc, options: []const []const u8) []const u8 {
        return options[d.random.uintLessThan(usize, options.len)];
    }

    fn put(d: *Doc, s: []const u8) !void {
        try d.out.appendSlice(std.testing.allocator, s);
    }

    /// A structural piece, now and then with whitespace around it.
    fn tok(d: *Doc, s: []const u8) !void {
        if (d.chance(4)) try d.put(d.pick(&.{ " ", "\n", "\t", "\r\n " }));
        try d.put(s);
        if (d.chance(4)) try d.put(" ");
    }

    fn string(d: *Doc) !void {
        try d.put("\"");
        for (0..d.random.uintLessThan(usize, 4)) |_| try d.put(d.pick(&.{
            "Hello", " world", "{\\\"city\\\": \\\"Par", "\\n", "\\\"", "\\\\", "\\/", "\\t", "\\u00e9",
            "\\ud83d\\ude00", "\xc3\xa9", "\xe4\xb8\xad", "\xf0\x9f\x98\x80", "0123456789abcdef0123456789",
        }));
        // Rarely something std.json refuses.
        if (d.chance(2)) try d.put(d.pick(&.{ "\\x", "\\ud800", "\x01", "\xc0\x80", "\xff" }));
        try d.put("\"");
    }

    /// A value of some other type where a string or null belongs.
    fn odd(d: *Doc) !void {
        try d.put(d.pick(&.{ "0", "1.5", "true", "[]", "{}", "\"0\"", "null", "{\"a\":[1,{}]}" }));
    }

    fn mutate(d: *Doc) void {
        const doc = d.out.items;
        if (doc.len == 0) return;
        const at = d.random.uintLessThan(usize, doc.len);
        switch (d.random.uintLessThan(u32, 3)) {
            0 => _ = d.out.orderedRemove(at),
            1 => d.out.shrinkRetainingCapacity(at),
            else => doc[at] = d.pick(&.{ "{", "}", "[", "]", ",", ":", "\"", "\\", " ", "0", "a", "\x00" })[0],
        }
    }
};

fn anthropicDelta(d: *Doc) !void {
    const kinds = [_][2][]const u8{
        .{ "text_delta", "text" },         .{ "thinking_delta", "thinking" },
        .{ "input_json_delta", "partial_json" }, .{ "signature_delta", "signature" },
    };
    const kind = kinds[d.random.uintLessThan(usize, kinds.len)];
    if (d.chance(70)) {
        // The exact form, with small variations.
        try d.put(if (d.chance(95)) "{\"type\":\"content_block_delta\",\"index\":" else "{\"type\":\"content_block_stop\",\"index\":");
        try d.put(if (d.chance(80)) d.pick(&.{ "0", "1", "7", "4294967295", " 2" }) else d.pick(&.{ "4294967296", "01", "-1", "1.0" }));
        try d.put(",\"delta\":{\"type\":\"");
        try d.put(kind[0]);
        try d.put("\",\"");
        try d.put(if (d.chance(90)) kind[1] else "text");
        try d.put("\":");
        if (d.chance(95)) try d.string() else try d.odd();
        try d.put(if (d.chance(80)) d.pick(&.{ "}}", "}   }", "}}   ", "}} \n" }) else d.pick(&.{ "},\"x\":1}", ",\"x\":1}}", "}}}", "}" }));
    } else {
        // Reordered, with extra fields.
        try d.tok("{");
        try d.tok("\"delta\"");
        try d.tok(":");
        try d.tok("{");
        try d.put("\"");
        try d.put(kind[1]);
        try d.put("\":");
        try d.string();
        try d.tok(",");
        try d.put("\"type\":\"");
        try d.put(kind[0]);
        try d.put("\"}");
        try d.tok(",");
        try d.put("\"index\":3,\"type\":\"content_block_delta\"");
        if (d.chance(50)) try d.put(",\"extra\":[1,2]");
        try d.tok("}");
    }
}

fn compareAnthropic(input: []const u8) !bool {
    var arena: std.heap.ArenaAllocator = .init(std.testing.allocator);
    defer arena.deinit();
    const hot = try anthropic_hot.hotDelta(arena.allocator(), input) orelse return false;
    const wire = std.json.parseFromSliceLeaky(anthropic.WireEvent, arena.allocator(), input, fast_json.std_options) catch |err| {
        std.debug.print("hotDelta took what std.json refuses ({s}): {s}\n", .{ @errorName(err), input });
        return error.TestUnexpectedResult;
    };
    expectSameDelta(hot, wire) catch |err| {
        std.debug.print("hotDelta and std.json differ on: {s}\n", .{input});
        return err;
    };
    return true;
}

/// `wire` is the content_block_delta `hot` read: the same index, and one of text, thinking
/// or tool input, the one its type names, holding the same fragment.
fn expectSameDelta(hot: anthropic_hot.HotDelta, wire: anthropic.WireEvent) !void {
    try std.testing.expectEqualStrings("content_block_delta", wire.type);
    try std.testing.expectEqual(hot.index, wire.index);
    const delta = wire.delta orelse return error.TestUnexpectedResult;
    const kind = delta.type orelse return error.TestUnexpectedResult;
    const expected: anthropic.WireDelta = if (std.mem.eql(u8, kind, "text_delta"))
        .{ .type = kind, .text = hot.fragment }
    else if (std.mem.eql(u8, kind, "thinking_delta"))
        .{ .type = kind, .thinking = hot.fragment }
    else if (std.mem.eql(u8, kind, "input_json_delta"))
        .{ .type = kind, .partial_json = hot.fragment }
    else
        return error.TestUnexpectedResult;
    try std.testing.expectEqualDeep(expected, delta);
}

test "Anthropic hot deltas read as std.json reads them" {
    var prng = std.Random.DefaultPrng.init(0xa7);
    var d: Doc = .{ .random = prng.random() };
    defer d.out.deinit(std.testing.allocator);
    var hot: usize = 0;
    const rounds = 20_000;
    for (0..rounds) |_| {
        d.out.clearRetainingCapacity();
        try anthropicDelta(&d);
        if (d.chance(10)) d.mutate();
        if (try compareAnthropic(d.out.items)) hot += 1;
    }
    // Not vacuous: many documents are the hot shape, and many are not.
    try std.testing.expect(hot > rounds / 5 and hot < rounds - rounds / 10);
}

/// The SSE framing of an Anthropic event, now and then not as the API frames it.
fn anthropicFraming(d: *Doc) !void {
    if (d.chance(5)) try d.put(d.pick(&.{ ": ping\n", "id: 7\n", "\n", "retry: 10\n" }));
    try d.put(if (d.chance(90)) "event: content_block_delta" else d.pick(&.{ "event:content_block_delta", "event: content_block_stop", "event: content_block_delta ", "data: {}" }));
    try d.put(if (d.chance(90)) "\n" else d.pick(&.{ "\r\n", "\r", "\nid: 1\n" }));
    try d.put(if (d.chance(90)) "data: " else d.pick(&.{ "data:", "data:  ", "Data: " }));
    if (d.chance(80)) {
        // As the API writes it (the text has escapes and UTF-8 now and then).
        try d.put("{\"type\":\"content_block_delta\",\"index\":");
        try d.put(d.pick(&.{ "0", "1", "12" }));
        try d.put(",\"delta\":{\"type\":\"text_delta\",\"text\":");
        try d.string();
        try d.put("}}");
    } else try anthropicDelta(d);
    if (d.chance(10)) d.mutate();
    try d.put(if (d.chance(85)) "\n\n" else d.pick(&.{ "\r\n\r\n", "\n", "\ndata: x\n\n", "\n\r\n", "\n:\n\n", "" }));
    // What follows in the buffer: the next event, or nothing yet.
    if (d.chance(50)) try d.put("event: ping\ndata: {\"type\": \"ping\"}\n\n");
}

test "Anthropic hot events read from the bytes as the SSE parser and the decoding read them" {
    var prng = std.Random.DefaultPrng.init(0x55e);
    var d: Doc = .{ .random = prng.random() };
    defer d.out.deinit(std.testing.allocator);
    var hot_count: usize = 0;
    const rounds = 20_000;
    for (0..rounds) |_| {
        d.out.clearRetainingCapacity();
        try anthropicFraming(&d);
        var arena: std.heap.ArenaAllocator = .init(std.testing.allocator);
        defer arena.deinit();
        const hot = try anthropic_hot.hotEvent(arena.allocator(), d.out.items) orelse continue;
        hot_count += 1;
        // The SSE parser must find one event of exactly that length, whose data std.json
        // reads to the same delta.
        var source: std.Io.Reader = .fixed(d.out.items);
        var parser = sse.Parser.init(std.testing.allocator);
        defer parser.deinit();
        errdefer std.debug.print("hotEvent took: {s}\n", .{d.out.items});
        const event = try parser.next(&source) orelse return error.TestUnexpectedResult;
        try std.testing.expectEqualStrings("content_block_delta", event.type);
        const wire = try std.json.parseFromSliceLeaky(anthropic.WireEvent, arena.allocator(), event.data, fast_json.std_options);
        try expectSameDelta(hot.delta, wire);
        try std.testing.expectEqual(hot.len, source.seek); // the event, all of it, and no more
    }
    try std.testing.expect(hot_count > rounds / 5 and hot_count < rounds - rounds / 10);
}

/// An OpenAI chunk's members before "choices" (the part a Prefix remembers).
fn openaiHead(d: *Doc) !void {
    try d.tok("{");
    if (d.chance(2)) {
        try d.put("\"choices\":[],"); // a duplicate, later
    }
    try d.put("\"id\":");
    if (d.chance(95)) try d.put(d.pick(&.{ "\"chatcmpl-A\"", "\"chatcmpl-B\"", "\"c\\u0041\"" })) else try d.odd();
    try d.tok(",");
    try d.put("\"object\":\"chat.completion.chunk\",\"created\":1727346171,");
    try d.put("\"model\":");
    if (d.chance(97)) try d.put(d.pick(&.{ "\"gpt-4o\"", "\"gpt-4o-mini-2024-07-18\"" })) else try d.odd();
    try d.tok(",");
    if (d.chance(50)) try d.put("\"service_tier\":\"default\",\"system_fingerprint\":\"fp_d0469e1700\",");
    if (d.chance(3)) try d.put(d.pick(&.{ "\"model\":\"again\",", "\"id\":\"again\",", "\"usage\":null,", "\"error\":null," }));
}

fn openaiDelta(d: *Doc) !void {
    try d.tok("{");
    var first = true;
    const fields = [_][]const u8{ "role", "content", "reasoning_content", "reasoning", "reasoning_text", "refusal", "tool_calls" };
    for (fields) |f| {
        const present = if (std.mem.eql(u8, f, "content")) d.chance(70) else d.chance(25);
        if (!present) continue;
        if (!first) try d.tok(",");
        first = false;
        try d.put("\"");
        try d.put(f);
        try d.put("\":");
        if (std.mem.eql(u8, f, "tool_calls")) {
            try d.tok("[");
            try d.tok("{");
            try d.put("\"index\":");
            try d.put(d.pick(&.{ "0", "1", "2", "\"1\"" }));
            if (d.chance(30)) {
                try d.put(",\"id\":");
                try d.put(d.pick(&.{ "null", "\"call_1\"" }));
            }
            if (d.chance(30)) try d.put(",\"type\":\"function\"");
            try d.put(",\"function\":{");
            if (d.chance(25)) try d.put(d.pick(&.{ "\"name\":null,", "\"name\":\"get\"," }));
            try d.put("\"arguments\":");
            if (d.chance(95)) try d.string() else try d.odd();
            try d.put("}}");
            if (d.chance(10)) try d.put(",{\"index\":1,\"function\":{\"arguments\":\"x\"}}");
            try d.tok("]");
        } else if (d.chance(15)) {
            try d.put(if (d.chance(50)) "null" else "");
            if (d.out.items[d.out.items.len - 1] == ':') try d.odd();
        } else try d.string();
    }
    try d.tok("}");
}

fn openaiChoices(d: *Doc) !void {
    try d.put("\"choices\":");
    if (d.chance(50)) {
        try d.put("[{\"index\":0,\"delta\":{\"content\":");
        try d.string();
        try d.put(d.pick(&.{ "},\"logprobs\":null,\"finish_reason\":null}]", "},\"logprobs\":null,\"finish_reason\":\"stop\"}]", "},\"finish_reason\":null}]" }));
        return;
    }
    if (d.chance(3)) return d.put(d.pick(&.{ "[]", "null", "{}" }));
    try d.tok("[");
    try d.tok("{");
    const order = [_][]const u8{ "index", "delta", "logprobs", "finish_reason" };
    var first = true;
    for (order) |f| {
        if (!d.chance(90)) continue;
        if (!first) try d.tok(",");
        first = false;
        try d.put("\"");
        try d.put(f);
        try d.put("\":");
        if (std.mem.eql(u8, f, "index")) {
            try d.put(d.pick(&.{ "0", "0", "0", "1", "00", "0.0", " 0" }));
        } else if (std.mem.eql(u8, f, "delta")) {
            if (d.chance(95)) try openaiDelta(d) else try d.odd();
        } else if (std.mem.eql(u8, f, "logprobs")) {
            try d.put(d.pick(&.{ "null", "null", "{\"content\":[]}" }));
        } else {
            try d.put(d.pick(&.{ "null", "null", "null", "\"stop\"", "\"length\"" }));
        }
    }
    try d.tok("}");
    if (d.chance(5)) try d.put(",{\"index\":1,\"delta\":{}}");
    try d.tok("]");
}

fn openaiTail(d: *Doc) !void {
    if (d.chance(50)) try d.put(d.pick(&.{ ",\"usage\":null", ",\"usage\":null", ",\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":2}" }));
    if (d.chance(50)) {
        try d.put(",\"obfuscation\":");
        try d.string();
    }
    if (d.chance(2)) try d.put(",\"error\":{\"message\":\"m\"}");
    try d.tok("}");
}

/// What std.json's chunk must say for the hot reading to stand.
/// The same text; its name too when it has any (an empty one adds nothing either way).
fn sameReasoning(general: ?openai_hot.Reasoning, hot: openai_hot.Reasoning) bool {
    const g = general orelse return hot.text.len == 0;
    return std.mem.eql(u8, g.text, hot.text) and std.mem.eql(u8, g.name, hot.name);
}

fn sameMeaning(hot: openai_hot.Chunk, wire: openai.WireChunk) bool {
    if (wire.@"error" != null or wire.usage != null or wire.choices.len != 1) return false;
    const choice = wire.choices[0];
    if (choice.index != 0 or choice.finish_reason != null) return false;
    const delta = choice.delta orelse return false;
    if (delta.refusal != null) return false;
    if (!std.mem.eql(u8, hot.id, wire.id) or !std.mem.eql(u8, hot.model, wire.model)) return false;
    const no_reasoning = delta.reasoning_content == null and delta.reasoning == null and delta.reasoning_text == null;
    return switch (hot.delta) {
        .content => |t| no_reasoning and delta.tool_calls.len == 0 and
            delta.content != null and std.mem.eql(u8, delta.content.?, t),
        // The text the general path takes (an empty one adds nothing either way).
        .reasoning => |r| delta.content == null and delta.tool_calls.len == 0 and !no_reasoning and
            sameReasoning(delta.thinking(), r),
        .tool_arguments => |call| blk: {
            if (delta.content != null or !no_reasoning or delta.tool_calls.len != 1) break :blk false;
            const c = delta.tool_calls[0];
            const f = c.function orelse break :blk false;
            break :blk c.index == call.index and c.id == null and f.name == null and
                f.arguments != null and std.mem.eql(u8, f.arguments.?, call.arguments);
        },
    };
}

/// Reads `input` hot (with `prefix` as the stream left it) and with std.json, into `arena`;
/// the hot reading, if it answered.
/// The first chunk of a stream, in `first`; returns its head (the members before
/// "choices"), which the stream's next chunks mostly repeat.
fn openaiFirstChunk(d: *Doc, first: *std.ArrayList(u8)) ![]const u8 {
    d.out.clearRetainingCapacity();
    try openaiHead(d);
    const head_len = d.out.items.len;
    try openaiChoices(d);
    try openaiTail(d);
    first.clearRetainingCapacity();
    try first.appendSlice(std.testing.allocator, d.out.items);
    return first.items[0..head_len];
}

fn compareOpenai(arena: std.mem.Allocator, input: []const u8, prefix: *openai_hot.Prefix) !?openai_hot.Chunk {
    const hot = try openai_hot.parse(arena, input, prefix) orelse return null;
    const wire = std.json.parseFromSliceLeaky(openai.WireChunk, arena, input, fast_json.std_options) catch |err| {
        std.debug.print("openai_hot took what std.json refuses ({s}): {s}\n", .{ @errorName(err), input });
        return error.TestUnexpectedResult;
    };
    if (!sameMeaning(hot, wire)) {
        std.debug.print("openai_hot and std.json differ on: {s}\n", .{input});
        return error.TestUnexpectedResult;
    }
    return hot;
}

test "OpenAI hot chunks read as std.json reads them, with and without a remembered prefix" {
    var prng = std.Random.DefaultPrng.init(0x0a);
    var d: Doc = .{ .random = prng.random() };
    defer d.out.deinit(std.testing.allocator);
    var first: std.ArrayList(u8) = .empty;
    defer first.deinit(std.testing.allocator);
    var hot: usize = 0;
    var resumed: usize = 0;
    const rounds = 20_000;
    for (0..rounds) |_| {
        // Two chunks of one stream: the same head (mostly), another choice and tail.
        const head = try openaiFirstChunk(&d, &first);
        d.out.clearRetainingCapacity();
        try d.put(head);
        if (d.chance(5)) d.mutate();
        try openaiChoices(&d);
        try openaiTail(&d);
        if (d.chance(10)) d.mutate();

        var arena: std.heap.ArenaAllocator = .init(std.testing.allocator);
        defer arena.deinit();
        var prefix: openai_hot.Prefix = .{};
        _ = try compareOpenai(arena.allocator(), first.items, &prefix);
        const remembered = prefix.len > 0 and d.out.items.len > prefix.len and
            std.mem.eql(u8, d.out.items[0..prefix.len], prefix.bytes[0..prefix.len]);
        const with_prefix = try compareOpenai(arena.allocator(), d.out.items, &prefix);
        var fresh: openai_hot.Prefix = .{};
        const without = try compareOpenai(arena.allocator(), d.out.items, &fresh);
        // A remembered prefix changes the work, never the answer.
        try std.testing.expectEqualDeep(without, with_prefix);
        if (with_prefix != null) {
            hot += 1;
            if (remembered) resumed += 1;
        }
    }
    try std.testing.expect(hot > rounds / 5 and hot < rounds - rounds / 10);
    try std.testing.expect(resumed > rounds / 40);
}

test "OpenAI hot events read from the bytes as the SSE parser and openai_hot read them" {
    var prng = std.Random.DefaultPrng.init(0x0b);
    var d: Doc = .{ .random = prng.random() };
    defer d.out.deinit(std.testing.allocator);
    var first: std.ArrayList(u8) = .empty;
    defer first.deinit(std.testing.allocator);
    var hot_count: usize = 0;
    const rounds = 20_000;
    for (0..rounds) |_| {
        // A first chunk (its head remembered), then the SSE event of a second one.
        const head = try openaiFirstChunk(&d, &first);
        d.out.clearRetainingCapacity();
        try d.put(if (d.chance(90)) "data: " else d.pick(&.{ "data:", "data:  ", ": x\ndata: " }));
        try d.put(head);
        try openaiChoices(&d);
        try openaiTail(&d);
        if (d.chance(5)) d.mutate();
        try d.put(if (d.chance(85)) "\n\n" else d.pick(&.{ "\r\n\r\n", "\n", " \n\n", "\ndata: x\n\n", "" }));
        if (d.chance(50)) try d.put("data: [DONE]\n\n");

        var arena: std.heap.ArenaAllocator = .init(std.testing.allocator);
        defer arena.deinit();
        var prefix: openai_hot.Prefix = .{};
        _ = try openai_hot.parse(arena.allocator(), first.items, &prefix);
        const hot = try openai_hot.parseEvent(arena.allocator(), d.out.items, &prefix) orelse continue;
        hot_count += 1;
        errdefer std.debug.print("parseEvent took: {s}\n", .{d.out.items});
        // A remembered prefix changes the work, never the answer.
        var fresh: openai_hot.Prefix = .{};
        const again = try openai_hot.parseEvent(arena.allocator(), d.out.items, &fresh) orelse return error.TestUnexpectedResult;
        try std.testing.expectEqualDeep(hot, again);
        // The SSE parser finds one event of exactly that length, whose data reads the same.
        var source: std.Io.Reader = .fixed(d.out.items);
        var parser = sse.Parser.init(std.testing.allocator);
        defer parser.deinit();
        const event = try parser.next(&source) orelse return error.TestUnexpectedResult;
        try std.testing.expectEqual(hot.len, source.seek);
        var unused: openai_hot.Prefix = .{};
        const chunk = try compareOpenai(arena.allocator(), event.data, &unused) orelse return error.TestUnexpectedResult;
        try std.testing.expectEqualDeep(chunk, hot.chunk);
    }
    try std.testing.expect(hot_count > rounds / 10 and hot_count < rounds - rounds / 10);
}

test "the chunks of the bench and of recorded streams take the hot path" {
    const lines = [_][]const u8{
        \\{"id":"chatcmpl-BenchPanto0000000000000000000","object":"chat.completion.chunk","created":1782955818,"model":"gpt-4o-mini-2024-07-18","service_tier":"default","system_fingerprint":"fp_d0469e1700","choices":[{"index":0,"delta":{"content":" The"},"logprobs":null,"finish_reason":null}],"usage":null,"obfuscation":"Q8vLmZ"}
        ,
        \\{"id":"chatcmpl-ABfw3Oqj8RD0z6aJiiX37oTjV2HFh","object":"chat.completion.chunk","created":1727346171,"model":"gpt-4o-2024-08-06","system_fingerprint":"fp_7568d46099","choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}]}
        ,
        \\{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"{\"city\": \"Paris\"}"}}]},"logprobs":null,"finish_reason":null}]}
        ,
        \\{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"reasoning_content":"hmm"},"finish_reason":null}]}
    };
    var arena: std.heap.ArenaAllocator = .init(std.testing.allocator);
    defer arena.deinit();
    var prefix: openai_hot.Prefix = .{};
    for (lines) |line| {
        if (try compareOpenai(arena.allocator(), line, &prefix) == null) {
            std.debug.print("should be hot: {s}\n", .{line});
            return error.TestExpectedHot;
        }
    }
    try std.testing.expect(try compareAnthropic(
        \\{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":" Captain"}          }
    ));
}
