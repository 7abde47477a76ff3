//! Session ids: the name of a session's file (DIR/ID.jsonl). Given ids are checked; made ids
//! are "YYYYMMDDTHHMMSSZ-" and 8 random lowercase hex digits, so they sort by creation time.
const std = @import("std");
const clock = @import("clock.zig");
const entropy = @import("../entropy.zig");

pub const max_len = 128;

/// 1 to 128 of [A-Za-z0-9._-], not starting with "." (no hidden file, no "..", no path).
pub fn isValid(id: []const u8) bool {
    if (id.len == 0 or id.len > max_len or id[0] == '.') return false;
    for (id) |c| switch (c) {
        'A'...'Z', 'a'...'z', '0'...'9', '.', '_', '-' => {},
        else => return false,
    };
    return true;
}

pub const made_len = 16 + 1 + 8;

/// A new id for a session created at `ms`.
pub fn make(buf: *[made_len]u8, ms: i64) []const u8 {
    var stamp: [16]u8 = undefined;
    var random: [4]u8 = undefined;
    entropy.fill(&random);
    return std.fmt.bufPrint(buf, "{s}-{x}", .{ clock.compact(&stamp, ms), random }) catch unreachable; // (fixed width: fits)
}

test "given ids are checked, made ids are valid and differ" {
    try std.testing.expect(isValid("a"));
    try std.testing.expect(isValid("my-session_2.v1"));
    try std.testing.expect(isValid("x" ** 128));
    for ([_][]const u8{ "", ".hidden", "..", "a/b", "a b", "é", "x" ** 129, "a\x00" }) |bad| try std.testing.expect(!isValid(bad));
    var a: [made_len]u8 = undefined;
    var b: [made_len]u8 = undefined;
    const ida = make(&a, 1_796_163_640_123);
    const idb = make(&b, 1_796_163_640_123);
    try std.testing.expect(isValid(ida));
    try std.testing.expectEqualStrings("20261201T222040Z-", ida[0..17]);
    for (ida[17..]) |c| try std.testing.expect(std.ascii.isDigit(c) or (c >= 'a' and c <= 'f'));
    try std.testing.expect(!std.mem.eql(u8, ida, idb));
}
