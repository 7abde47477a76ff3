//! fast_json against std.json, on the providers' own wire types: whenever the fast path gives
//! an answer, std.json must give the same value; where it is not sure, std.json decides. Hand
//! picked tricky inputs first, then many generated ones (valid, odd and broken).
const std = @import("std");
const fast_json = @import("fast_json.zig");
const WireEvent = @import("providers/anthropic/decode.zig").WireEvent;
const WireChunk = @import("providers/openai/decode.zig").WireChunk;

const Outcome = enum { fast, fallback };

/// Decodes `input` both ways. When the fast path answers, std.json must accept the input and
/// give an equal value.
fn compare(comptime T: type, input: []const u8) !Outcome {
    var arena: std.heap.ArenaAllocator = .init(std.testing.allocator);
    defer arena.deinit();
    const fast = try fast_json.parse(T, arena.allocator(), input) orelse return .fallback;
    const slow = std.json.parseFromSliceLeaky(T, arena.allocator(), input, fast_json.std_options) catch |err| {
        std.debug.print("the fast path accepted what std.json refuses ({s}): {s}\n", .{ @errorName(err), input });
        return error.TestUnexpectedResult;
    };
    std.testing.expectEqualDeep(slow, fast) catch |err| {
        std.debug.print("fast and std.json differ on: {s}\n", .{input});
        return err;
    };
    return .fast;
}

fn expectFast(comptime T: type, input: []const u8) !void {
    if (try compare(T, input) != .fast) {
        std.debug.print("the fast path should take: {s}\n", .{input});
        return error.TestExpectedFastPath;
    }
}

fn expectFallback(comptime T: type, input: []const u8) !void {
    if (try compare(T, input) != .fallback) {
        std.debug.print("the fast path should leave to std.json: {s}\n", .{input});
        return error.TestExpectedFallback;
    }
}

test "the shapes real streams send take the fast path" {
    // Lines from the recorded streams (tests/fixtures/recorded), padding included.
    const anthropic_lines = [_][]const u8{
        \\{"type":"message_start","message":{"model":"claude-sonnet-4-5-20250929","id":"msg_017A4s3HAsrqf5d2WvBmrpLr","type":"message","role":"assistant","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":17,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"cache_creation":{"ephemeral_5m_input_tokens":0,"ephemeral_1h_input_tokens":0},"output_tokens":1,"service_tier":"standard","inference_geo":"not_available"}}               }
        ,
        \\{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}   }
        ,
        \\{"type": "ping"}
        ,
        \\{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":" Captain"}          }
        ,
        \\{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"city\": \"Par"}}
        ,
        \\{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Let me think\n\nabout it"}}
        ,
        \\{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"EqQBCkYIBxgCKkBf+/x=="}}
        ,
        \\{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_01A","name":"get_weather","input":{}}}
        ,
        \\{"type":"content_block_stop","index":0}
        ,
        \\{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":5}}
        ,
        \\{"type":"message_stop"}
        ,
        \\{"type":"error","error":{"details":null,"type":"overloaded_error","message":"Overloaded"}        }
    };
    for (anthropic_lines) |line| try expectFast(WireEvent, line);

    const openai_lines = [_][]const u8{
        \\{"id":"chatcmpl-ABfw3Oqj8RD0z6aJiiX37oTjV2HFh","object":"chat.completion.chunk","created":1727346171,"model":"gpt-4o-2024-08-06","system_fingerprint":"fp_7568d46099","choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}]}
        ,
        \\{"id":"chatcmpl-ABfw3Oqj8RD0z6aJiiX37oTjV2HFh","object":"chat.completion.chunk","created":1727346171,"model":"gpt-4o-2024-08-06","system_fingerprint":"fp_7568d46099","choices":[{"index":0,"delta":{"content":"{\""},"logprobs":null,"finish_reason":null}]}
        ,
        \\{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","service_tier":"default","system_fingerprint":"fp_d0469e1700","choices":[{"index":0,"delta":{"content":" quick"},"logprobs":null,"finish_reason":null}],"usage":null,"obfuscation":"Q8vL"}
        ,
        \\{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"get_weather","arguments":""}}]},"logprobs":null,"finish_reason":null}]}
        ,
        \\{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"{\"city\": \"Paris\"}"}}]},"logprobs":null,"finish_reason":null}]}
        ,
        \\{"id":"c","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"length"}]}
        ,
        \\{"id":"c","choices":[],"usage":{"prompt_tokens":79,"completion_tokens":1,"total_tokens":80,"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":0}}}
        ,
        \\{"id":"c","choices":[{"index":0,"delta":{"reasoning_content":"hmm"}},{"index":1,"delta":{"content":"x"}},{"index":2,"delta":{"content":"y"}}]}
    };
    for (openai_lines) |line| try expectFast(WireChunk, line);
}

test "escapes, unicode and whitespace decode as std.json decodes them" {
    const fast_cases = [_][]const u8{
        \\{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a\"b\\c\/d\be\ff\ng\rh\ti"}}
        ,
        \\{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"\u00e9\u00E9 \u4e2d \ud83d\ude00 \uD83D\uDE00 \u0000 \u001f"}}
        ,
        "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"h\xc3\xa9 \xe4\xb8\xad \xf0\x9f\x98\x80 \xed\x9f\xbf \xf4\x8f\xbf\xbf\"}}",
        " \t\r\n{ \"type\" : \"content_block_delta\" ,\n\"index\" :\t7 , \"delta\" : { \"text\" : \"x\" } } \n",
        \\{"delta":{"text":"late type"},"index":3,"type":"content_block_delta"}
        ,
        \\{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"0123456789abcdef0123456789abcdef\"0123456789abcdef0123456789abcdef\\"}}
        ,
        \\{"type":"x","index":4294967295,"delta":null,"usage":null,"message":null}
        ,
        \\{}
        ,
        // Unknown fields of every kind, skipped.
        \\{"type":"t","extra":{"a":[1,-2.5e+3,0.0,true,false,null,"s\u0041\"",{"\u006b":{}}],"b":[]},"n":-0,"e":1E-9,"f":12.5}
        ,
        // Keys are compared unescaped, as std.json does; non-ASCII ones are unknown fields.
        "{\"t\\u0079pe\":\"x\",\"t\xc3\xa9\":\"y\"}",
        // Unknown keys may repeat (std.json skips each); known ones may not (see below).
        \\{"type":"t","x":1,"x":2}
        ,
    };
    for (fast_cases) |input| try expectFast(WireEvent, input);
}

test "what the fast path is not sure about goes to std.json" {
    const fallback_cases = [_][]const u8{
        // Malformed: std.json's error stands.
        "",
        "{",
        "{\"type\":\"t\"",
        "{\"type\":\"t\",}",
        "{\"type\":\"t\"}}",
        "{\"type\":\"t\"} {}",
        "{\"type\":\"t\"}x",
        "{\"type\" \"t\"}",
        "{\"type\":'t'}",
        "{type:\"t\"}",
        "{\"x\":[1,]}",
        "{\"x\":01}",
        "{\"x\":1.}",
        "{\"x\":.5}",
        "{\"x\":1e}",
        "{\"x\":+1}",
        "{\"x\":tru}",
        "{\"x\":nul}",
        "{\"x\":NaN}",
        "{\"text\":\"a\x01b\"}",
        "{\"x\":\"\\x\"}",
        "{\"x\":\"\\u12\"}",
        "{\"x\":\"\\u12g4\"}",
        "{\"x\":\"\\ud800\"}",
        "{\"x\":\"\\ud800\\u0041\"}",
        "{\"x\":\"\\udc00\"}",
        "{\"x\":\"\xc0\x80\"}",
        "{\"x\":\"\xed\xa0\x80\"}",
        "{\"x\":\"\xf4\x90\x80\x80\"}",
        "{\"x\":\"\xe4\xb8\"}",
        "{\"x\":\"\xff\"}",
        "{\"x\":\"unterminated}",
        // Valid, but std.json's business: a duplicate known field (an error there), numbers
        // it converts, escaped or non-ASCII keys, strings for integers.
        "{\"type\":\"a\",\"type\":\"b\"}",
        "{\"index\":1.0}",
        "{\"index\":1e2}",
        "{\"index\":-1}",
        "{\"index\":\"5\"}",
        "{\"index\":4294967296}",
        "{\"type\":null}",
        "{\"type\":5}",
        "{\"delta\":[]}",
        "{\"delta\":{\"text\":7}}",
        "[]",
        "null",
    };
    for (fallback_cases) |input| try expectFallback(WireEvent, input);

    // Nesting deeper than max_depth in a skipped value.
    const deep = "{\"x\":" ++ "[" ** (fast_json.max_depth + 1) ++ "]" ** (fast_json.max_depth + 1) ++ "}";
    try expectFallback(WireEvent, deep);
    const shallow = "{\"x\":" ++ "[" ** fast_json.max_depth ++ "]" ** fast_json.max_depth ++ "}";
    try expectFast(WireEvent, shallow);
    // OpenAI's error code is a free-form JSON value: std.json's.
    try expectFallback(WireChunk, "{\"error\":{\"message\":\"m\",\"code\":\"rate_limit\"}}");
    try expectFallback(WireChunk, "{\"choices\":null}");
}

test "decode falls back to std.json and keeps its errors" {
    var arena: std.heap.ArenaAllocator = .init(std.testing.allocator);
    defer arena.deinit();
    const a = arena.allocator();
    try std.testing.expectError(error.DuplicateField, fast_json.decode(WireEvent, a, "{\"type\":\"a\",\"type\":\"b\"}"));
    try std.testing.expectError(error.SyntaxError, fast_json.decode(WireEvent, a, "{\"type\":\"a\"}x"));
    const converted = try fast_json.decode(WireEvent, a, "{\"index\":\"5\"}");
    try std.testing.expectEqual(5, converted.index);
}

/// Writes random JSON around a wire type's fields: known fields with values of the right
/// kind (mostly) or not, unknown fields of any kind, random whitespace and field order,
/// strings with every kind of escape and UTF-8; then, sometimes, one byte broken.
const Generator = struct {
    random: std.Random,
    out: *std.ArrayList(u8),
    gpa: std.mem.Allocator,

    fn chance(g: *Generator, percent: u32) bool {
        return g.random.uintLessThan(u32, 100) < percent;
    }

    fn put(g: *Generator, s: []const u8) !void {
        try g.out.appendSlice(g.gpa, s);
    }

    fn space(g: *Generator) !void {
        if (!g.chance(15)) return;
        const spaces = [_][]const u8{ " ", "\t", "\n", "\r\n", "  " };
        try g.put(spaces[g.random.uintLessThan(usize, spaces.len)]);
    }

    fn string(g: *Generator) !void {
        const pieces = [_][]const u8{
            "a",       "Hello",   " world", "0123456789abcdef0123", "\\\"",    "\\\\",  "\\/",   "\\b",
            "\\f",     "\\n",     "\\r",    "\\t",                  "\\u0041", "\\u00e9", "\\u4E2D", "\\ud83d\\ude00",
            "\\u0000", "\xc3\xa9", "\xe4\xb8\xad", "\xf0\x9f\x98\x80", "",
            // Broken ones, now and then.
            "\\x",     "\\ud800", "\\udc00", "\x01",  "\xc3",   "\xc0\x80", "\xed\xa0\x80", "\\u12",
        };
        try g.put("\"");
        const n = g.random.uintLessThan(usize, 5);
        for (0..n) |_| {
            // Mostly the valid pieces (the first 21).
            const limit: usize = if (g.chance(97)) 21 else pieces.len;
            try g.put(pieces[g.random.uintLessThan(usize, limit)]);
        }
        try g.put("\"");
    }

    fn number(g: *Generator) !void {
        const forms = [_][]const u8{ "0", "7", "42", "4294967295", "4294967296", "18446744073709551615", "18446744073709551616", "-1", "1.0", "1e2", "2.5", "-0", "1E+2", "01", "1.", "-" };
        try g.put(forms[g.random.uintLessThan(usize, if (g.chance(95)) 5 else forms.len)]);
    }

    /// Any JSON value, for unknown fields.
    fn anyValue(g: *Generator, depth: u32) !void {
        switch (g.random.uintLessThan(u32, if (depth > 3) 5 else 7)) {
            0 => try g.string(),
            1 => try g.number(),
            2 => try g.put("true"),
            3 => try g.put("false"),
            4 => try g.put("null"),
            5 => {
                try g.put("[");
                const n = g.random.uintLessThan(usize, 4);
                for (0..n) |i| {
                    if (i > 0) try g.put(",");
                    try g.space();
                    try g.anyValue(depth + 1);
                    try g.space();
                }
                try g.put("]");
            },
            else => {
                try g.put("{");
                const n = g.random.uintLessThan(usize, 4);
                for (0..n) |i| {
                    if (i > 0) try g.put(",");
                    try g.space();
                    try g.string();
                    try g.space();
                    try g.put(":");
                    try g.space();
                    try g.anyValue(depth + 1);
                }
                try g.put("}");
            },
        }
    }

    /// A value meant for type T: the right kind most of the time.
    fn valueFor(g: *Generator, comptime T: type, depth: u32) !void {
        if (g.chance(2)) return g.anyValue(depth);
        switch (@typeInfo(T)) {
            .optional => |o| if (g.chance(20)) try g.put("null") else try g.valueFor(o.child, depth),
            .int => try g.number(),
            .bool => try g.put(if (g.chance(50)) "true" else "false"),
            .@"struct" => try g.object(T, depth),
            .pointer => |p| if (p.child == u8) try g.string() else {
                try g.put("[");
                const n = g.random.uintLessThan(usize, 3);
                for (0..n) |i| {
                    if (i > 0) try g.put(",");
                    try g.space();
                    try g.valueFor(p.child, depth + 1);
                }
                try g.put("]");
            },
            else => try g.anyValue(depth),
        }
    }

    /// An object with T's fields in a random order (each present or not, now and then one
    /// twice) and unknown fields among them.
    fn object(g: *Generator, comptime T: type, depth: u32) !void {
        const fields = @typeInfo(T).@"struct".fields;
        var order: [fields.len + 3]usize = undefined;
        for (&order, 0..) |*o, i| o.* = i; // indexes past the fields stand for unknown ones
        g.random.shuffle(usize, &order);
        try g.put("{");
        var first = true;
        for (order) |pick| {
            if (pick < fields.len and !g.chance(60)) continue;
            if (pick >= fields.len and !g.chance(40)) continue;
            const times: usize = if (g.chance(3)) 2 else 1;
            for (0..times) |_| {
                if (!first) try g.put(",");
                first = false;
                try g.space();
                try g.field(T, pick, depth);
                try g.space();
            }
        }
        try g.put("}");
    }

    fn field(g: *Generator, comptime T: type, pick: usize, depth: u32) !void {
        const fields = @typeInfo(T).@"struct".fields;
        if (pick >= fields.len) {
            const unknown = [_][]const u8{ "\"extra\"", "\"logprobs\"", "\"obfuscation\"", "\"x\"", "\"t\\u0079pe\"" };
            try g.put(unknown[g.random.uintLessThan(usize, if (g.chance(95)) 4 else unknown.len)]);
            try g.space();
            try g.put(":");
            try g.space();
            return g.anyValue(depth + 1);
        }
        inline for (fields, 0..) |f, i| if (i == pick) {
            try g.put("\"" ++ f.name ++ "\"");
            try g.space();
            try g.put(":");
            try g.space();
            try g.valueFor(f.type, depth + 1);
        };
    }

    /// Breaks the document at one random place, in one of a few ways.
    fn mutate(g: *Generator) !void {
        const doc = g.out.items;
        if (doc.len == 0) return;
        const at = g.random.uintLessThan(usize, doc.len);
        switch (g.random.uintLessThan(u32, 4)) {
            0 => _ = g.out.orderedRemove(at),
            1 => {
                const junk = "{}[],:\"\\ 0a-.eE\x00\xff";
                try g.out.insert(g.gpa, at, junk[g.random.uintLessThan(usize, junk.len)]);
            },
            2 => g.out.shrinkRetainingCapacity(at),
            else => doc[at] = g.random.int(u8),
        }
    }
};

fn differential(comptime T: type, seed: u64, rounds: usize) !void {
    var prng = std.Random.DefaultPrng.init(seed);
    var doc: std.ArrayList(u8) = .empty;
    defer doc.deinit(std.testing.allocator);
    var g: Generator = .{ .random = prng.random(), .out = &doc, .gpa = std.testing.allocator };
    var counts = [_]usize{ 0, 0 };
    for (0..rounds) |_| {
        doc.clearRetainingCapacity();
        try g.space();
        try g.object(T, 0);
        try g.space();
        if (g.chance(25)) try g.mutate();
        counts[@intFromEnum(try compare(T, doc.items))] += 1;
    }
    // Not vacuous: the fast path answered for a good share, and left some to std.json.
    try std.testing.expect(counts[@intFromEnum(Outcome.fast)] > rounds / 4);
    try std.testing.expect(counts[@intFromEnum(Outcome.fallback)] > rounds / 20);
}

test "differential: generated Anthropic events, fast path against std.json" {
    try differential(WireEvent, 0xa17, 20_000);
}

test "differential: generated OpenAI chunks, fast path against std.json" {
    try differential(WireChunk, 0x0a1, 20_000);
}
