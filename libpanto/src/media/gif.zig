//! The first frame of a GIF, decoded (giflib, gif_codec.c).
const std = @import("std");
const codec = @import("codec.zig");
const Image = @import("Image.zig");

pub fn decodeFirstFrame(gpa: std.mem.Allocator, bytes: []const u8, max_pixels: u64) codec.Error!Image {
    var sink: codec.Sink = .{ .gpa = gpa };
    var shape: codec.Shape = undefined;
    const status = codec.panto_gif_decode(bytes.ptr, bytes.len, max_pixels, codec.Sink.alloc, &sink, &shape);
    return codec.decoded(&sink, status, shape);
}
