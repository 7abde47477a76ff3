//! WEBP decoding, scaled by libwebp to the size wanted, and encoding (libwebp, webp_codec.c).
const std = @import("std");
const codec = @import("codec.zig");
const Image = @import("Image.zig");

pub const Decoded = struct { image: Image, lossless: bool };

/// want_w x want_h: the size to decode at (0, 0: full size). An animation: its first frame,
/// full size.
pub fn decode(gpa: std.mem.Allocator, bytes: []const u8, max_pixels: u64, want_w: u32, want_h: u32) codec.Error!Decoded {
    var sink: codec.Sink = .{ .gpa = gpa };
    var shape: codec.Shape = undefined;
    var lossless: c_int = 0;
    const status = codec.panto_webp_decode(bytes.ptr, bytes.len, max_pixels, want_w, want_h, codec.Sink.alloc, &sink, &shape, &lossless);
    return .{ .image = try codec.decoded(&sink, status, shape), .lossless = lossless != 0 };
}

pub const Quality = union(enum) { lossless, lossy: u8 };

/// RGB or RGBA (gray is widened first: widen.zig).
pub fn encode(gpa: std.mem.Allocator, image: Image, quality: Quality) codec.Error![]u8 {
    std.debug.assert(image.channels == 3 or image.channels == 4);
    var sink: codec.Sink = .{ .gpa = gpa };
    var len: usize = 0;
    const q: c_int = switch (quality) {
        .lossless => -1,
        .lossy => |q| q,
    };
    const status = codec.panto_webp_encode(image.pixels.ptr, image.shape(), q, codec.Sink.alloc, &sink, &len);
    return codec.encoded(&sink, status, len);
}
