//! WEBP structure: a RIFF container whose chunks fill it exactly, and the canvas size from the
//! first chunk (VP8X, or a still image's VP8 / VP8L bitstream header).
const std = @import("std");
const inspect = @import("inspect.zig");

pub fn walk(bytes: []const u8) inspect.Error!inspect.Header {
    var r: inspect.Reader = .{ .bytes = bytes };
    try r.skip(4); // RIFF
    const riff_size = try r.int(u32, .little);
    if (riff_size < 4 or riff_size > bytes.len - 8) return error.Corrupt;
    r.bytes = bytes[0 .. 8 + @as(usize, riff_size)];
    try r.skip(4); // WEBP
    var header: ?inspect.Header = null;
    var has_image = false;
    while (r.left() > 0) {
        const kind = try r.take(4);
        const len = try r.int(u32, .little);
        const data = try r.take(len);
        if (len % 2 == 1 and r.left() > 0) try r.skip(1); // padding
        const first = header == null;
        if (std.mem.eql(u8, kind, "VP8X")) {
            if (!first or data.len < 10) return error.Corrupt;
            header = .{
                .width = 1 + @as(u32, std.mem.readInt(u24, data[4..7], .little)),
                .height = 1 + @as(u32, std.mem.readInt(u24, data[7..10], .little)),
            };
        } else if (std.mem.eql(u8, kind, "VP8 ")) {
            // A key frame: 3 bytes of frame tag, the start code, 14-bit width and height.
            if (data.len < 10 or !std.mem.eql(u8, data[3..6], "\x9d\x01\x2a")) return error.Corrupt;
            if (first) header = .{
                .width = std.mem.readInt(u16, data[6..8], .little) & 0x3fff,
                .height = std.mem.readInt(u16, data[8..10], .little) & 0x3fff,
            };
            has_image = true;
        } else if (std.mem.eql(u8, kind, "VP8L")) {
            if (data.len < 5 or data[0] != 0x2f) return error.Corrupt;
            const bits = std.mem.readInt(u32, data[1..5], .little);
            if (first) header = .{ .width = 1 + (bits & 0x3fff), .height = 1 + ((bits >> 14) & 0x3fff) };
            has_image = true;
        } else if (std.mem.eql(u8, kind, "ANMF")) {
            has_image = true;
        } else if (first) {
            return error.Corrupt;
        }
    }
    if (!has_image) return error.Corrupt;
    return header orelse error.Corrupt;
}
