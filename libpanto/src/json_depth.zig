//! How deeply JSON from outside (a model's tool input, a caller's tool schema) may nest.
//!
//! std.json parses any depth: its parser keeps its stack on the heap. But what is done with
//! the value afterwards is not depth-safe: std.json.Stringify asserts a depth of at most 256
//! in safe builds (a panic, not an error), and the schema check, the conversation's readers
//! in the bindings (Lua refuses JSON deeper than 200) and the providers walk values
//! recursively. So a tool input or a tool schema nested deeper than `max_depth` is refused
//! before anything re-writes or walks it: the input gets an error result for the model, the
//! schema a configuration error.
const std = @import("std");
const Value = std.json.Value;

/// The deepest nesting accepted: `{}` and `[]` are 1 deep, `{"a":[1]}` is 2 deep.
pub const max_depth = 128;

/// How a refusal words it: "the input is " ++ nested_too_deep.
pub const nested_too_deep = std.fmt.comptimePrint("nested more than {d} levels deep", .{max_depth});

/// Whether the JSON text nests deeper than `max_depth`. Counts the brackets outside strings,
/// so it answers for invalid JSON too (whose parse fails anyway), without allocating.
pub fn textTooDeep(text: []const u8) bool {
    var depth: usize = 0;
    var i: usize = 0;
    while (i < text.len) : (i += 1) {
        const ch = text[i];
        switch (ch) {
            // A string: on to the quote that ends it (one not escaped: after an even run of
            // backslashes), found by the vectorized search, so long texts cost little.
            '"' => while (true) {
                i = std.mem.indexOfScalarPos(u8, text, i + 1, '"') orelse return false;
                var backslashes: usize = 0;
                while (text[i - 1 - backslashes] == '\\') backslashes += 1;
                if (backslashes % 2 == 0) break;
            },
            '[', '{' => {
                depth += 1;
                if (depth > max_depth) return true;
            },
            ']', '}' => depth -|= 1,
            else => {},
        }
    }
    return false;
}

/// Whether the value nests deeper than `max_depth`. Recurses at most `max_depth` levels.
pub fn valueTooDeep(value: Value) bool {
    return deeperThan(value, max_depth);
}

fn deeperThan(value: Value, room: usize) bool {
    switch (value) {
        .array => |arr| {
            if (room == 0) return true;
            for (arr.items) |item| if (deeperThan(item, room - 1)) return true;
        },
        .object => |obj| {
            if (room == 0) return true;
            for (obj.values()) |item| if (deeperThan(item, room - 1)) return true;
        },
        else => {},
    }
    return false;
}

fn nested(gpa: std.mem.Allocator, depth: usize) ![]u8 {
    const text = try gpa.alloc(u8, depth * 2);
    @memset(text[0..depth], '[');
    @memset(text[depth..], ']');
    return text;
}

test "nesting up to max_depth is accepted, one level more is not, in text and in values" {
    const gpa = std.testing.allocator;
    var arena: std.heap.ArenaAllocator = .init(gpa);
    defer arena.deinit();
    for ([_]usize{ 1, max_depth, max_depth + 1, 10_000 }) |depth| {
        const text = try nested(gpa, depth);
        defer gpa.free(text);
        const deep = depth > max_depth;
        try std.testing.expectEqual(deep, textTooDeep(text));
        const value = try std.json.parseFromSliceLeaky(Value, arena.allocator(), text, .{});
        try std.testing.expectEqual(deep, valueTooDeep(value));
    }
    // Objects count like arrays; scalars add no depth.
    const two = try std.json.parseFromSliceLeaky(Value, arena.allocator(), "{\"a\":[1,\"x\",null]}", .{});
    try std.testing.expect(!deeperThan(two, 2));
    try std.testing.expect(deeperThan(two, 1));
}

test "brackets inside strings do not count, escaped quotes do not end them" {
    var text: [2 * max_depth + 16]u8 = undefined;
    const inside = try std.fmt.bufPrint(&text, "{{\"a\":\"\\\"{s}\"}}", .{"[" ** (max_depth + 1)});
    try std.testing.expect(!textTooDeep(inside));
    try std.testing.expect(textTooDeep("[" ** (max_depth + 1))); // unclosed: still too deep
    try std.testing.expect(!textTooDeep("]]]]{}"));
    // A string ending in escaped backslashes ends at its quote: the brackets after it count.
    const after = try std.fmt.bufPrint(&text, "[\"a\\\\\\\\\",{s}", .{"[" ** max_depth});
    try std.testing.expect(textTooDeep(after));
    // An escaped quote after escaped backslashes does not end it: these brackets do not.
    const within = try std.fmt.bufPrint(&text, "[\"a\\\\\\\"{s}\"]", .{"[" ** max_depth});
    try std.testing.expect(!textTooDeep(within));
}
