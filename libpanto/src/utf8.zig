//! Text that leaves libpanto is valid UTF-8, whatever came in: every binding hands it to its
//! language as a string (Python decodes strictly), so bytes from a header, a cut message or a
//! server's error body are mended here, once, instead of in four bindings.
const std = @import("std");
const Allocator = std.mem.Allocator;

/// The length of the longest prefix of `bytes` (valid UTF-8 cut anywhere) that does not end
/// inside a character.
pub fn wholePrefix(bytes: []const u8) usize {
    var i = bytes.len;
    while (i > 0 and bytes.len - i < 4) {
        i -= 1;
        if (bytes[i] & 0xC0 == 0x80) continue; // a continuation byte: the lead is further back
        const len = std.unicode.utf8ByteSequenceLength(bytes[i]) catch return i;
        return if (i + len <= bytes.len) bytes.len else i;
    }
    return i;
}

/// Appends `bytes` to `out`, each byte that is not part of a valid UTF-8 sequence replaced by
/// U+FFFD.
pub fn appendLossy(out: *std.ArrayList(u8), gpa: Allocator, bytes: []const u8) Allocator.Error!void {
    if (std.unicode.utf8ValidateSlice(bytes)) return out.appendSlice(gpa, bytes);
    var i: usize = 0;
    while (i < bytes.len) {
        const len = std.unicode.utf8ByteSequenceLength(bytes[i]) catch 0;
        if (len > 0 and i + len <= bytes.len and std.unicode.utf8ValidateSlice(bytes[i .. i + len])) {
            try out.appendSlice(gpa, bytes[i .. i + len]);
            i += len;
        } else {
            try out.appendSlice(gpa, "\u{FFFD}");
            i += 1;
        }
    }
}

/// `bytes` when they are valid UTF-8, else a copy in `scratch` with each invalid byte replaced
/// by U+FFFD: text the model reads is taken as it is, mended only where it is not text.
pub fn valid(gpa: Allocator, scratch: *std.ArrayList(u8), bytes: []const u8) Allocator.Error![]const u8 {
    if (std.unicode.utf8ValidateSlice(bytes)) return bytes;
    scratch.clearRetainingCapacity();
    try appendLossy(scratch, gpa, bytes);
    return scratch.items;
}

test "a message cut at its buffer's end keeps whole characters" {
    const text = "ab\u{e9}\u{20ac}\u{1F600}";
    for (0..text.len + 1) |n| {
        const kept = wholePrefix(text[0..n]);
        try std.testing.expect(kept <= n and n - kept < 4);
        try std.testing.expect(std.unicode.utf8ValidateSlice(text[0..kept]));
    }
    try std.testing.expectEqual(@as(usize, 2), wholePrefix("ab\xe2\x82"));
    try std.testing.expectEqual(text.len, wholePrefix(text));
}

test "invalid bytes become U+FFFD, valid text is kept as is" {
    const gpa = std.testing.allocator;
    var out: std.ArrayList(u8) = .empty;
    defer out.deinit(gpa);
    try appendLossy(&out, gpa, "req-\xff\xfe-\u{e9}-\xe2\x82");
    try std.testing.expectEqualStrings("req-\u{FFFD}\u{FFFD}-\u{e9}-\u{FFFD}\u{FFFD}", out.items);
    out.clearRetainingCapacity();
    try appendLossy(&out, gpa, "\xed\xa0\x80ok"); // an encoded surrogate half is not UTF-8
    try std.testing.expectEqualStrings("\u{FFFD}\u{FFFD}\u{FFFD}ok", out.items);
}

test "text is kept as it is, NUL included, unless it is not UTF-8" {
    const gpa = std.testing.allocator;
    var scratch: std.ArrayList(u8) = .empty;
    defer scratch.deinit(gpa);
    const kept = "a\x00b\u{e9}";
    try std.testing.expectEqual(@as([*]const u8, kept.ptr), (try valid(gpa, &scratch, kept)).ptr);
    try std.testing.expectEqualStrings("a\x00\u{FFFD}", try valid(gpa, &scratch, "a\x00\xc3"));
}
