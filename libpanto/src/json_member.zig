//! Where a member's value sits in the bytes of a JSON object, found without decoding it: a
//! block panto keeps as it was received (a provider's server block) is cut from, and mended
//! in, the provider's own bytes.
const std = @import("std");
const Allocator = std.mem.Allocator;

/// A value's place in the object's bytes: `json[start..end]`.
pub const Range = struct { start: usize, end: usize };

/// The place of the value of top-level member `key` in the JSON object `json`, or null when
/// `json` is not an object holding it (or is not JSON). `arena` holds the scanner's nesting
/// stack and any escaped key.
pub fn find(arena: Allocator, json: []const u8, key: []const u8) Allocator.Error!?Range {
    var scanner: std.json.Scanner = .initCompleteInput(arena, json);
    return findIn(arena, &scanner, key) catch |err| switch (err) {
        error.OutOfMemory => error.OutOfMemory,
        else => null,
    };
}

fn findIn(arena: Allocator, scanner: *std.json.Scanner, key: []const u8) !?Range {
    if (try scanner.next() != .object_begin) return null;
    while (true) {
        const name = switch (try scanner.nextAlloc(arena, .alloc_if_needed)) {
            .string, .allocated_string => |s| s,
            else => return null, // the object's end: no such member
        };
        if (std.mem.eql(u8, name, key)) {
            _ = try scanner.peekNextTokenType(); // past ':' and whitespace
            const start = scanner.cursor;
            try scanner.skipValue();
            return .{ .start = start, .end = scanner.cursor };
        }
        try scanner.skipValue();
    }
}

/// The value of top-level member `key` of `json`, as its bytes, or null.
pub fn value(arena: Allocator, json: []const u8, key: []const u8) Allocator.Error!?[]const u8 {
    const r = try find(arena, json, key) orelse return null;
    return json[r.start..r.end];
}

/// The elements of the JSON array `json`, as their bytes, or null when `json` is not an array
/// (or is not JSON).
pub fn elements(arena: Allocator, json: []const u8) Allocator.Error!?[]const []const u8 {
    var scanner: std.json.Scanner = .initCompleteInput(arena, json);
    return elementsIn(arena, &scanner, json) catch |err| switch (err) {
        error.OutOfMemory => error.OutOfMemory,
        else => null,
    };
}

fn elementsIn(arena: Allocator, scanner: *std.json.Scanner, json: []const u8) ![]const []const u8 {
    if (try scanner.next() != .array_begin) return error.SyntaxError;
    var list: std.ArrayList([]const u8) = .empty;
    while (try scanner.peekNextTokenType() != .array_end) { // (past ',' and whitespace)
        const start = scanner.cursor;
        try scanner.skipValue();
        try list.append(arena, json[start..scanner.cursor]);
    }
    return list.items;
}

test "an array's elements are found as their bytes" {
    var arena: std.heap.ArenaAllocator = .init(std.testing.allocator);
    defer arena.deinit();
    const a = arena.allocator();
    const got = (try elements(a, " [ {\"a\": [1, 2]} ,\"x\",3 ,null]")).?;
    try std.testing.expectEqual(@as(usize, 4), got.len);
    try std.testing.expectEqualStrings("{\"a\": [1, 2]}", got[0]);
    try std.testing.expectEqualStrings("\"x\"", got[1]);
    try std.testing.expectEqualStrings("3", got[2]);
    try std.testing.expectEqualStrings("null", got[3]);
    try std.testing.expectEqual(@as(usize, 0), (try elements(a, "[]")).?.len);
    try std.testing.expect(try elements(a, "{}") == null);
    try std.testing.expect(try elements(a, "[1,") == null);
}

test "a member's value is found as its bytes, nested values and escaped keys too" {
    var arena: std.heap.ArenaAllocator = .init(std.testing.allocator);
    defer arena.deinit();
    const a = arena.allocator();
    const json = "{\"type\":\"x\", \"in\\u0070ut\" : {\"q\": [1, 2.50]} ,\"n\":null}";
    try std.testing.expectEqualStrings("{\"q\": [1, 2.50]}", (try value(a, json, "input")).?);
    try std.testing.expectEqualStrings("\"x\"", (try value(a, json, "type")).?);
    try std.testing.expectEqualStrings("null", (try value(a, json, "n")).?);
    try std.testing.expect(try value(a, json, "q") == null); // nested members are not top-level
    try std.testing.expect(try value(a, "[1]", "type") == null);
    try std.testing.expect(try value(a, "{\"type\":", "type") == null);
}
