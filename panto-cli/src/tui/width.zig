//! How many terminal columns text takes: most characters one, East Asian wide ones and
//! emoji two, combining marks and zero-width characters none. An approximation of wcwidth
//! good enough to keep the cursor where the terminal puts it.
const std = @import("std");

pub fn ofCodepoint(cp: u21) u2 {
    if (cp < 0x20 or (cp >= 0x7f and cp < 0xa0)) return 0;
    if ((cp >= 0x300 and cp <= 0x36f) or (cp >= 0x200b and cp <= 0x200f) or cp == 0xfe0f) return 0;
    const wide = [_][2]u21{
        .{ 0x1100, 0x115f },  .{ 0x2e80, 0x303e },  .{ 0x3041, 0x33ff },
        .{ 0x3400, 0x4dbf },  .{ 0x4e00, 0x9fff },  .{ 0xa000, 0xa4cf },
        .{ 0xac00, 0xd7a3 },  .{ 0xf900, 0xfaff },  .{ 0xfe30, 0xfe4f },
        .{ 0xff00, 0xff60 },  .{ 0xffe0, 0xffe6 },  .{ 0x1f300, 0x1f64f },
        .{ 0x1f900, 0x1f9ff }, .{ 0x20000, 0x3fffd },
    };
    for (wide) |r| if (cp >= r[0] and cp <= r[1]) return 2;
    return 1;
}

/// Columns of UTF-8 `text` (an invalid byte counts one, as terminals show a replacement).
pub fn of(text: []const u8) usize {
    var cols: usize = 0;
    var i: usize = 0;
    while (i < text.len) {
        const n = std.unicode.utf8ByteSequenceLength(text[i]) catch {
            cols += 1;
            i += 1;
            continue;
        };
        if (i + n > text.len) return cols + 1;
        const cp = std.unicode.utf8Decode(text[i..][0..n]) catch {
            cols += 1;
            i += 1;
            continue;
        };
        cols += ofCodepoint(cp);
        i += n;
    }
    return cols;
}

test "columns: ASCII one each, CJK and emoji two, combining marks none" {
    try std.testing.expectEqual(@as(usize, 5), of("hello"));
    try std.testing.expectEqual(@as(usize, 4), of("日本"));
    try std.testing.expectEqual(@as(usize, 1), of("e\u{301}"));
    try std.testing.expectEqual(@as(usize, 2), of("🙂"));
    try std.testing.expectEqual(@as(usize, 2), of("a\xff"));
}
