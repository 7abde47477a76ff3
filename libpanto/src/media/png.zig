//! PNG decoding and encoding (libpng, png_codec.c).
const std = @import("std");
const codec = @import("codec.zig");
const Image = @import("Image.zig");

pub fn decode(gpa: std.mem.Allocator, bytes: []const u8, max_pixels: u64) codec.Error!Image {
    var sink: codec.Sink = .{ .gpa = gpa };
    var shape: codec.Shape = undefined;
    const status = codec.panto_png_decode(bytes.ptr, bytes.len, max_pixels, codec.Sink.alloc, &sink, &shape);
    return codec.decoded(&sink, status, shape);
}

pub fn encode(gpa: std.mem.Allocator, image: Image) codec.Error![]u8 {
    var sink: codec.Sink = .{ .gpa = gpa };
    var len: usize = 0;
    const status = codec.panto_png_encode(image.pixels.ptr, image.shape(), codec.Sink.alloc, &sink, &len);
    return codec.encoded(&sink, status, len);
}
