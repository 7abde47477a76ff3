//! JPEG decoding, at a DCT scaling near the size wanted, and encoding (libjpeg-turbo,
//! jpeg_codec.c).
const std = @import("std");
const codec = @import("codec.zig");
const Image = @import("Image.zig");

/// want_w x want_h: the size the image is going to; the decode is at least that big
/// (0, 0: full size).
pub fn decode(gpa: std.mem.Allocator, bytes: []const u8, max_pixels: u64, want_w: u32, want_h: u32) codec.Error!Image {
    var sink: codec.Sink = .{ .gpa = gpa };
    var shape: codec.Shape = undefined;
    const status = codec.panto_jpeg_decode(bytes.ptr, bytes.len, max_pixels, want_w, want_h, codec.Sink.alloc, &sink, &shape);
    return codec.decoded(&sink, status, shape);
}

/// Gray or RGB (an alpha channel must be flattened first: flatten.zig).
pub fn encode(gpa: std.mem.Allocator, image: Image, quality: u8) codec.Error![]u8 {
    std.debug.assert(image.channels == 1 or image.channels == 3);
    var sink: codec.Sink = .{ .gpa = gpa };
    var len: usize = 0;
    const status = codec.panto_jpeg_encode(image.pixels.ptr, image.shape(), quality, codec.Sink.alloc, &sink, &len);
    return codec.encoded(&sink, status, len);
}
