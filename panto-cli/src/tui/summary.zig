//! One-line summaries of a tool call: its input (the value that says most: a command, a
//! path, a pattern; else the members as key=value) and its result (lines and size).
const std = @import("std");
const panto = @import("panto");

/// The members shown alone when the input has them, first found first.
const telling = [_][]const u8{ "command", "cmd", "path", "file_path", "file", "pattern", "query", "url", "name" };

/// A summary of a JSON object `input`, in `buf` (cut to fit; the renderer clips to the width).
pub fn ofInput(buf: []u8, input: []const u8) []const u8 {
    var w: std.Io.Writer = .fixed(buf);
    writeInput(&w, input) catch {};
    return w.buffered();
}

fn writeInput(w: *std.Io.Writer, input: []const u8) std.Io.Writer.Error!void {
    var arena_buf: [64 * 1024]u8 = undefined; // a bigger input: its start as it is
    var fba: std.heap.FixedBufferAllocator = .init(&arena_buf);
    const parsed = std.json.parseFromSliceLeaky(std.json.Value, fba.allocator(), input, .{}) catch {
        // Too big to parse here, or not JSON: its start as it is.
        return w.writeAll(input[0..@min(input.len, w.buffer.len)]);
    };
    if (parsed != .object) return w.writeAll(input[0..@min(input.len, w.buffer.len)]);
    const obj = parsed.object;
    for (telling) |key| if (obj.get(key)) |v| if (v == .string) {
        try w.writeAll(v.string);
        if (obj.count() > 1) try writeRest(w, obj, key);
        return;
    };
    try writeRest(w, obj, null);
}

fn writeRest(w: *std.Io.Writer, obj: std.json.ObjectMap, skip: ?[]const u8) std.Io.Writer.Error!void {
    var first = skip == null;
    var it = obj.iterator();
    while (it.next()) |entry| {
        if (skip) |s| if (std.mem.eql(u8, s, entry.key_ptr.*)) continue;
        try w.writeAll(if (first) "" else " ");
        first = false;
        try w.print("{s}=", .{entry.key_ptr.*});
        switch (entry.value_ptr.*) {
            .string => |s| try w.print("{f}", .{std.json.fmt(s[0..@min(s.len, 60)], .{})}),
            .object => try w.writeAll("{…}"),
            .array => |a| try w.print("[{d}]", .{a.items.len}),
            else => |v| try w.print("{f}", .{std.json.fmt(v, .{})}),
        }
    }
}

/// "12 lines, 1.4 KB" (plus "2 images" and such for media parts).
pub fn ofResult(buf: []u8, content: []const u8, parts: []const panto.event.PartInfo) []const u8 {
    var w: std.Io.Writer = .fixed(buf);
    writeResult(&w, content, parts) catch {};
    return w.buffered();
}

fn writeResult(w: *std.Io.Writer, content: []const u8, parts: []const panto.event.PartInfo) std.Io.Writer.Error!void {
    var images: usize = 0;
    var documents: usize = 0;
    for (parts) |p| switch (p.kind) {
        .image => images += 1,
        .document, .media => documents += 1,
        .text => {},
    };
    if (content.len == 0 and images + documents == 0) return w.writeAll("empty");
    if (content.len > 0) {
        const lines = std.mem.count(u8, content, "\n") + @intFromBool(content[content.len - 1] != '\n');
        try w.print("{d} line{s}, ", .{ lines, if (lines == 1) "" else "s" });
        try writeSize(w, content.len);
    }
    if (images > 0) try w.print("{s}{d} image{s}", .{ if (content.len > 0) ", " else "", images, if (images == 1) "" else "s" });
    if (documents > 0) try w.print("{s}{d} document{s}", .{ if (content.len > 0 or images > 0) ", " else "", documents, if (documents == 1) "" else "s" });
}

pub fn writeSize(w: *std.Io.Writer, bytes: usize) std.Io.Writer.Error!void {
    if (bytes < 1024) return w.print("{d} B", .{bytes});
    const b: f64 = @floatFromInt(bytes);
    if (bytes < 1024 * 1024) return w.print("{d:.1} KB", .{b / 1024});
    return w.print("{d:.1} MB", .{b / (1024 * 1024)});
}

test "an input's telling member alone, else its members; odd input as it is" {
    var buf: [128]u8 = undefined;
    try std.testing.expectEqualStrings("ls -la", ofInput(&buf, "{\"command\":\"ls -la\"}"));
    try std.testing.expectEqualStrings("src/a.zig old=\"x\\ny\"", ofInput(&buf, "{\"path\":\"src/a.zig\",\"old\":\"x\\ny\"}"));
    try std.testing.expectEqualStrings("n=3 deep={…} list=[2]", ofInput(&buf, "{\"n\":3,\"deep\":{\"a\":1},\"list\":[1,2]}"));
    try std.testing.expectEqualStrings("not json", ofInput(&buf, "not json"));
    var small: [4]u8 = undefined;
    try std.testing.expectEqualStrings("abcd", ofInput(&small, "{\"command\":\"abcdefgh\"}"));
}

test "a result's lines and size, its media parts" {
    var buf: [64]u8 = undefined;
    try std.testing.expectEqualStrings("empty", ofResult(&buf, "", &.{}));
    try std.testing.expectEqualStrings("1 line, 5 B", ofResult(&buf, "hello", &.{}));
    try std.testing.expectEqualStrings("2 lines, 4 B", ofResult(&buf, "a\nb\n", &.{}));
    const big = "x" ** 2048;
    try std.testing.expectEqualStrings("1 line, 2.0 KB", ofResult(&buf, big, &.{}));
    const parts = [_]panto.event.PartInfo{ .{ .kind = .image }, .{ .kind = .text } };
    try std.testing.expectEqualStrings("1 image", ofResult(&buf, "", &parts));
}
