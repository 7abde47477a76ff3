//! PNG structure: the signature, IHDR first, every chunk whole with a right CRC, IDAT present,
//! IEND at the end.
const std = @import("std");
const inspect = @import("inspect.zig");

pub fn walk(bytes: []const u8) inspect.Error!inspect.Header {
    var r: inspect.Reader = .{ .bytes = bytes };
    try r.skip(8); // the signature, matched by detect()
    var header: ?inspect.Header = null;
    var seen_idat = false;
    var idat_bytes: u64 = 0;
    var bits_per_pixel: u64 = 0;
    while (true) {
        const len = try r.int(u32, .big);
        if (len > std.math.maxInt(i32)) return error.Corrupt;
        const typed = try r.take(4 + @as(usize, len)); // type and data: what the CRC covers
        const crc = try r.int(u32, .big);
        if (std.hash.Crc32.hash(typed) != crc) return error.Corrupt;
        const kind = typed[0..4];
        const data = typed[4..];
        if (header == null) {
            if (!std.mem.eql(u8, kind, "IHDR") or len != 13) return error.Corrupt;
            const bit_depth = data[8];
            const color_type = data[9];
            const depth_ok = switch (color_type) {
                0 => bit_depth == 1 or bit_depth == 2 or bit_depth == 4 or bit_depth == 8 or bit_depth == 16,
                3 => bit_depth == 1 or bit_depth == 2 or bit_depth == 4 or bit_depth == 8,
                2, 4, 6 => bit_depth == 8 or bit_depth == 16,
                else => false,
            };
            if (!depth_ok or data[10] != 0 or data[11] != 0 or data[12] > 1) return error.Corrupt;
            header = .{ .width = std.mem.readInt(u32, data[0..4], .big), .height = std.mem.readInt(u32, data[4..8], .big) };
            const samples: u64 = switch (color_type) {
                2 => 3,
                4 => 2,
                6 => 4,
                else => 1,
            };
            bits_per_pixel = samples * bit_depth;
        } else if (std.mem.eql(u8, kind, "IDAT")) {
            seen_idat = true;
            idat_bytes += len;
        } else if (std.mem.eql(u8, kind, "IEND")) {
            if (!seen_idat) return error.Corrupt;
            var h = header.?;
            h.data_can_hold_pixels = idat_bytes * max_deflate_ratio + max_deflate_ratio >= rawBytes(h, bits_per_pixel);
            return h;
        }
    }
}

/// Deflate never expands more than this (zlib's technical notes: 1032:1, at best).
const max_deflate_ratio = 1032;

/// The bytes the IDAT data inflates to, without interlacing (which only adds to it): each
/// row's filter byte and its pixels.
fn rawBytes(h: inspect.Header, bits_per_pixel: u64) u64 {
    return @as(u64, h.height) * (1 + (@as(u64, h.width) * bits_per_pixel + 7) / 8);
}
