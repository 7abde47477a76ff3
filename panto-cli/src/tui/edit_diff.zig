//! What an `edit` call changed, under its result: the lines of `old` and `new` that differ
//! (the lines both share at the start and the end are one line of context each), `-` red and
//! `+` green, numbered from the line the edit starts at, at most `max_rows` rows.
//!
//!     12   fn main() {
//!     13 -     print("hi")
//!     13 +     print("hello")
//!     14   }
const std = @import("std");

const Writer = std.Io.Writer;
const red = "\x1b[31m";
const green = "\x1b[32m";
const dim = "\x1b[2m";
const reset = "\x1b[0m";

pub const max_rows = 12;

/// `first_line`: the file's line where `old` began (the edit result's "at line N").
/// `cols`: each row is cut to it.
pub fn write(w: *Writer, old: []const u8, new: []const u8, first_line: usize, cols: usize) Writer.Error!void {
    var old_lines: [4096][]const u8 = undefined;
    var new_lines: [4096][]const u8 = undefined;
    const a = split(old, &old_lines);
    const b = split(new, &new_lines);
    var head: usize = 0;
    while (head < a.len and head < b.len and std.mem.eql(u8, a[head], b[head])) head += 1;
    var tail: usize = 0;
    while (tail < a.len - head and tail < b.len - head and std.mem.eql(u8, a[a.len - 1 - tail], b[b.len - 1 - tail])) tail += 1;
    var rows: usize = 0;
    const total = @min(head, 1) + (a.len - head - tail) + (b.len - head - tail) + @min(tail, 1);
    if (head > 0) try row(w, &rows, total, ' ', first_line + head - 1, a[head - 1], cols);
    for (a[head .. a.len - tail], 0..) |line, i| try row(w, &rows, total, '-', first_line + head + i, line, cols);
    for (b[head .. b.len - tail], 0..) |line, i| try row(w, &rows, total, '+', first_line + head + i, line, cols);
    if (tail > 0) try row(w, &rows, total, ' ', first_line + a.len - tail, a[a.len - tail], cols);
}

/// The lines of `text` (a last line without its newline counts), at most `buf.len`.
fn split(text: []const u8, buf: [][]const u8) []const []const u8 {
    var n: usize = 0;
    var it = std.mem.splitScalar(u8, if (std.mem.endsWith(u8, text, "\n")) text[0 .. text.len - 1] else text, '\n');
    while (it.next()) |line| {
        if (n == buf.len) break;
        buf[n] = line;
        n += 1;
    }
    return buf[0..n];
}

fn row(w: *Writer, rows: *usize, total: usize, mark: u8, number: usize, line: []const u8, cols: usize) Writer.Error!void {
    defer rows.* += 1;
    if (rows.* > max_rows) return;
    if (rows.* == max_rows) return w.print("    {s}… {d} more line{s} of the diff{s}\n", .{ dim, total - max_rows, if (total - max_rows == 1) "" else "s", reset });
    const color = switch (mark) {
        '-' => red,
        '+' => green,
        else => dim,
    };
    var num_buf: [24]u8 = undefined;
    const num = std.fmt.bufPrint(&num_buf, "{d: >5} {c} ", .{ number, mark }) catch "";
    try w.print("{s}{s}", .{ color, num });
    // Cut to the width: tabs as spaces, control characters dropped.
    var used: usize = num.len;
    var view = std.unicode.Utf8View.init(line) catch null;
    if (view) |*v| {
        var it = v.iterator();
        while (it.nextCodepointSlice()) |ch| {
            if (used + 1 >= cols) {
                try w.writeAll("…");
                break;
            }
            if (ch[0] == '\t') try w.writeAll("  ") else if (ch[0] >= 0x20 and ch[0] != 0x7f) try w.writeAll(ch);
            used += if (ch[0] == '\t') 2 else 1;
        }
    } else try w.writeAll("(not UTF-8)");
    try w.print("{s}\n", .{reset});
}

const testing = std.testing;

fn plain(buf: []u8, old: []const u8, new: []const u8, first: usize) ![]const u8 {
    var w: Writer = .fixed(buf);
    try write(&w, old, new, first, 80);
    // Without the colors, for the comparison.
    var out: usize = 0;
    var i: usize = 0;
    const s = w.buffered();
    while (i < s.len) {
        if (s[i] == 0x1b) {
            while (s[i] != 'm') i += 1;
            i += 1;
            continue;
        }
        buf[out] = s[i];
        out += 1;
        i += 1;
    }
    return buf[0..out];
}

test "a changed line between shared ones: one line of context each side" {
    var buf: [512]u8 = undefined;
    const got = try plain(&buf, "fn main() {\n    a()\n    print(\"hi\")\n}\n", "fn main() {\n    a()\n    print(\"hello\")\n}\n", 11);
    try testing.expectEqualStrings(
        "   12   \x20   a()\n   13 -     print(\"hi\")\n   13 +     print(\"hello\")\n   14   }\n",
        got,
    );
}

test "more changed lines than the rows: the rest counted" {
    var old: [400]u8 = undefined;
    var w: Writer = .fixed(&old);
    for (0..20) |i| try w.print("line {d}\n", .{i});
    var buf: [4096]u8 = undefined;
    const got = try plain(&buf, w.buffered(), "x\n", 1);
    try testing.expect(std.mem.endsWith(u8, got, "… 9 more lines of the diff\n"));
    try testing.expectEqual(@as(usize, 13), std.mem.count(u8, got, "\n"));
}
