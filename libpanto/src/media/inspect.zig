//! What an image's bytes say without decoding a pixel: its size from the header, and whether
//! its structure is intact to the end (PNG chunks and CRCs, JPEG segments, GIF blocks, WEBP
//! chunks). A file that passes through byte for byte is checked only this way.
const std = @import("std");
const Format = @import("../media.zig").Format;

pub const Header = struct {
    width: u32,
    height: u32,
    /// False when the compressed data is too short to hold the pixels the header claims, by
    /// the format's largest possible compression ratio: a small file claiming a large image (a
    /// decompression bomb under the pixel cap) is then refused before its pixels are allocated.
    data_can_hold_pixels: bool = true,
};

/// Corrupt: the bytes are not a whole image of their format (truncated, a bad chunk, a bad CRC).
pub const Error = error{Corrupt};

/// The header of a PNG, JPEG, GIF or WEBP after a walk of the whole structure. (BMP: bmp.zig.)
pub fn inspect(format: Format, bytes: []const u8) Error!Header {
    return switch (format) {
        .png => @import("inspect_png.zig").walk(bytes),
        .jpeg => @import("inspect_jpeg.zig").walk(bytes),
        .gif => @import("inspect_gif.zig").walk(bytes),
        .webp => @import("inspect_webp.zig").walk(bytes),
        .bmp, .pdf => unreachable, // not walked here: the caller dispatches these elsewhere
    };
}

/// A little-endian or big-endian reader over the bytes that fails with Corrupt at the end.
pub const Reader = struct {
    bytes: []const u8,
    /// May be set past the end (a header's size, say): reading from there fails.
    at: usize = 0,

    pub fn take(r: *Reader, n: usize) Error![]const u8 {
        if (r.at > r.bytes.len or r.bytes.len - r.at < n) return error.Corrupt;
        defer r.at += n;
        return r.bytes[r.at..][0..n];
    }
    pub fn byte(r: *Reader) Error!u8 {
        return (try r.take(1))[0];
    }
    pub fn skip(r: *Reader, n: usize) Error!void {
        _ = try r.take(n);
    }
    pub fn int(r: *Reader, comptime T: type, endian: std.builtin.Endian) Error!T {
        return std.mem.readInt(T, (try r.take(@sizeOf(T)))[0..@sizeOf(T)], endian);
    }
    pub fn left(r: Reader) usize {
        return r.bytes.len -| r.at;
    }
};
