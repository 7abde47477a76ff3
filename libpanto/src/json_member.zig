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

/// A top-level member of an object: its key as written (quotes and escapes as received), the
/// key decoded, and its value's bytes.
pub const Member = struct { raw_key: []const u8, key: []const u8, value: []const u8 };

/// The top-level members of the JSON object `json`, in order, or null when `json` is not an
/// object (or is not JSON).
pub fn members(arena: Allocator, json: []const u8) Allocator.Error!?[]const Member {
    var scanner: std.json.Scanner = .initCompleteInput(arena, json);
    return membersIn(arena, &scanner, json) catch |err| switch (err) {
        error.OutOfMemory => error.OutOfMemory,
        else => null,
    };
}

fn membersIn(arena: Allocator, scanner: *std.json.Scanner, json: []const u8) ![]const Member {
    if (try scanner.next() != .object_begin) return error.SyntaxError;
    var list: std.ArrayList(Member) = .empty;
    while (try scanner.peekNextTokenType() != .object_end) { // (past ',' and whitespace)
        const key_start = scanner.cursor;
        const key = switch (try scanner.nextAlloc(arena, .alloc_always)) {
            .allocated_string => |k| k,
            else => return error.SyntaxError,
        };
        const key_end = scanner.cursor;
        _ = try scanner.peekNextTokenType(); // past ':' and whitespace
        const start = scanner.cursor;
        try scanner.skipValue();
        try list.append(arena, .{ .raw_key = json[key_start..key_end], .key = key, .value = json[start..scanner.cursor] });
    }
    return list.items;
}

/// Sets member `m` in the JSON object held by `object`: its value replaces the value of the
/// member of the same key, or the member is added at the end; every other byte stays. False
/// when `object` is not a JSON object.
pub fn set(gpa: Allocator, arena: Allocator, object: *std.ArrayList(u8), m: Member) Allocator.Error!bool {
    if (try find(arena, object.items, m.key)) |r| {
        try object.replaceRange(gpa, r.start, r.end - r.start, m.value);
        return true;
    }
    const existing = try members(arena, object.items) orelse return false;
    const close = std.mem.lastIndexOfScalar(u8, object.items, '}') orelse return false;
    const added = try std.mem.concat(arena, u8, &.{ if (existing.len > 0) "," else "", m.raw_key, ":", m.value });
    try object.insertSlice(gpa, close, added);
    return true;
}

test "an object's members are found as their bytes, and set in place or added" {
    var arena: std.heap.ArenaAllocator = .init(std.testing.allocator);
    defer arena.deinit();
    const a = arena.allocator();
    const got = (try members(a, " { \"a\" : [1, 2], \"b\\u0063\":null }")).?;
    try std.testing.expectEqual(@as(usize, 2), got.len);
    try std.testing.expectEqualStrings("\"a\"", got[0].raw_key);
    try std.testing.expectEqualStrings("[1, 2]", got[0].value);
    try std.testing.expectEqualStrings("\"b\\u0063\"", got[1].raw_key);
    try std.testing.expectEqualStrings("bc", got[1].key);
    try std.testing.expectEqual(@as(usize, 0), (try members(a, "{}")).?.len);
    try std.testing.expect(try members(a, "[]") == null);

    var object: std.ArrayList(u8) = .empty;
    defer object.deinit(std.testing.allocator);
    try object.appendSlice(std.testing.allocator, "{\"type\":\"compaction\",\"content\":null}");
    try std.testing.expect(try set(std.testing.allocator, a, &object, .{ .raw_key = "\"content\"", .key = "content", .value = "\"Sum.\"" }));
    try std.testing.expect(try set(std.testing.allocator, a, &object, .{ .raw_key = "\"extra\"", .key = "extra", .value = "1" }));
    try std.testing.expectEqualStrings("{\"type\":\"compaction\",\"content\":\"Sum.\",\"extra\":1}", object.items);
    object.clearRetainingCapacity();
    try object.appendSlice(std.testing.allocator, "{}");
    try std.testing.expect(try set(std.testing.allocator, a, &object, .{ .raw_key = "\"k\"", .key = "k", .value = "2" }));
    try std.testing.expectEqualStrings("{\"k\":2}", object.items);
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
