//! BMP, which neither provider accepts, decoded here (a small format; no codec library needed)
//! to be sent as PNG. Uncompressed and bit-field BMPs of 1, 4, 8, 16, 24 and 32 bits a pixel,
//! with Windows (40-124 byte) and OS/2 (12 byte) headers, bottom-up or top-down.
const std = @import("std");
const Allocator = std.mem.Allocator;
const inspect = @import("inspect.zig");
const Image = @import("Image.zig");

pub const Error = error{ Corrupt, Unsupported };

const Layout = struct {
    width: u32,
    height: u32,
    top_down: bool,
    bits: u16,
    /// Bit masks of red, green, blue and alpha (16 and 32 bits a pixel).
    masks: [4]u32,
    palette: []const u8,
    /// Bytes a palette entry: 4 (BGRX), 3 in OS/2 BMPs.
    palette_entry: usize,
    pixel_offset: usize,
    row_size: u64,
};

fn parse(bytes: []const u8) Error!Layout {
    var r: inspect.Reader = .{ .bytes = bytes };
    try r.skip(10); // "BM", file size, reserved: the file size is often wrong in the wild
    const pixel_offset = try r.int(u32, .little);
    const dib_start = r.at;
    const dib_size = try r.int(u32, .little);
    var layout: Layout = undefined;
    layout.pixel_offset = pixel_offset;
    layout.palette = "";
    layout.palette_entry = 4;
    var colors_used: u32 = 0;
    var compression: u32 = 0;
    if (dib_size == 12) {
        layout.width = try r.int(u16, .little);
        layout.height = try r.int(u16, .little);
        layout.top_down = false;
        _ = try r.int(u16, .little); // planes
        layout.bits = try r.int(u16, .little);
        layout.palette_entry = 3;
    } else if (dib_size >= 40 and dib_size <= 124) {
        const width = try r.int(i32, .little);
        const height = try r.int(i32, .little);
        if (width <= 0 or height == 0 or height == std.math.minInt(i32)) return error.Corrupt;
        layout.width = @intCast(width);
        layout.height = @abs(height);
        layout.top_down = height < 0;
        _ = try r.int(u16, .little); // planes
        layout.bits = try r.int(u16, .little);
        compression = try r.int(u32, .little);
        try r.skip(12); // image size, resolution
        colors_used = try r.int(u32, .little);
    } else return error.Corrupt;
    r.at = dib_start + dib_size;

    layout.masks = switch (layout.bits) {
        16 => .{ 0x7c00, 0x03e0, 0x001f, 0 },
        32 => .{ 0xff0000, 0x00ff00, 0x0000ff, 0 },
        else => .{ 0, 0, 0, 0 },
    };
    switch (compression) {
        0 => {},
        3, 6 => { // BI_BITFIELDS, BI_ALPHABITFIELDS: masks in the header (size >= 52) or after it
            if (layout.bits != 16 and layout.bits != 32) return error.Corrupt;
            const with_alpha = compression == 6 or dib_size >= 56;
            var m: inspect.Reader = .{ .bytes = bytes, .at = dib_start + 40 };
            for (layout.masks[0..if (with_alpha) 4 else 3]) |*mask| mask.* = try m.int(u32, .little);
            if (dib_size == 40) r.at = m.at;
        },
        else => return error.Unsupported, // RLE, or a JPEG or PNG inside
    }
    switch (layout.bits) {
        1, 4, 8 => {
            const max_colors = @as(u32, 1) << @intCast(layout.bits);
            const count = if (colors_used == 0 or colors_used > max_colors) max_colors else colors_used;
            layout.palette = try r.take(@min(count * layout.palette_entry, r.left()));
            if (layout.palette.len < layout.palette_entry) return error.Corrupt;
        },
        16, 24, 32 => {},
        else => return error.Corrupt,
    }
    layout.row_size = (@as(u64, layout.bits) * layout.width + 31) / 32 * 4;
    return layout;
}

/// The size a BMP says it has (its headers checked; its pixels are checked by decode).
pub fn header(bytes: []const u8) Error!inspect.Header {
    const layout = try parse(bytes);
    return .{ .width = layout.width, .height = layout.height };
}

fn channel(pixel: u32, mask: u32) u8 {
    if (mask == 0) return 0;
    const shift: u5 = @intCast(@ctz(mask));
    const max = mask >> shift;
    const value = (pixel & mask) >> shift;
    return @intCast(@as(u64, value) * 255 / max);
}

/// RGB, or RGBA when the BMP has an alpha mask and uses it (all-zero alpha is read as opaque,
/// as writers that leave it 0 mean).
pub fn decode(gpa: Allocator, bytes: []const u8) (Error || Allocator.Error)!Image {
    const layout = try parse(bytes);
    const data_len = std.math.mul(u64, layout.row_size, layout.height) catch return error.Corrupt;
    if (layout.pixel_offset > bytes.len or data_len > bytes.len - layout.pixel_offset) return error.Corrupt;
    const has_alpha = layout.masks[3] != 0;
    const channels: u8 = if (has_alpha) 4 else 3;
    const pixels = try gpa.alloc(u8, @as(usize, layout.width) * layout.height * channels);
    errdefer gpa.free(pixels);
    var any_alpha = false;
    for (0..layout.height) |y| {
        const source_row = if (layout.top_down) y else layout.height - 1 - y;
        const row = bytes[layout.pixel_offset + source_row * layout.row_size ..][0..@intCast(layout.row_size)];
        for (0..layout.width) |x| {
            const out = pixels[(y * layout.width + x) * channels ..][0..channels];
            switch (layout.bits) {
                1, 4, 8 => {
                    const bit = x * layout.bits;
                    const shift: u3 = @intCast(8 - layout.bits - bit % 8);
                    const index_mask: u16 = (@as(u16, 1) << @intCast(layout.bits)) - 1;
                    const index = (row[bit / 8] >> shift) & index_mask;
                    const entry_at = @as(usize, index) * layout.palette_entry;
                    if (entry_at + 3 > layout.palette.len) {
                        @memset(out, 0);
                    } else {
                        const entry = layout.palette[entry_at..][0..3];
                        out[0..3].* = .{ entry[2], entry[1], entry[0] };
                    }
                    if (has_alpha) out[3] = 255;
                },
                24 => {
                    const p = row[x * 3 ..][0..3];
                    out[0..3].* = .{ p[2], p[1], p[0] };
                },
                16, 32 => {
                    const pixel: u32 = if (layout.bits == 16)
                        std.mem.readInt(u16, row[x * 2 ..][0..2], .little)
                    else
                        std.mem.readInt(u32, row[x * 4 ..][0..4], .little);
                    for (0..3) |c| out[c] = channel(pixel, layout.masks[c]);
                    if (has_alpha) {
                        out[3] = channel(pixel, layout.masks[3]);
                        any_alpha = any_alpha or out[3] != 0;
                    }
                },
                else => unreachable, // parse() accepts no other depth
            }
        }
    }
    if (has_alpha and !any_alpha) {
        var i: usize = 3;
        while (i < pixels.len) : (i += 4) pixels[i] = 255;
    }
    return .{ .width = layout.width, .height = layout.height, .channels = channels, .pixels = pixels };
}
