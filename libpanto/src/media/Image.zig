//! Decoded pixels: 8-bit, interleaved, rows packed; 1 gray, 2 gray+alpha, 3 RGB, 4 RGBA.
const std = @import("std");
const Allocator = std.mem.Allocator;
const codec = @import("codec.zig");
const Image = @This();

width: u32,
height: u32,
channels: u8,
/// Allocated with the pipeline's gpa.
pixels: []u8,

pub fn deinit(image: Image, gpa: Allocator) void {
    gpa.free(image.pixels);
}

pub fn shape(image: Image) codec.Shape {
    return .{ .width = image.width, .height = image.height, .channels = image.channels };
}

pub fn hasAlpha(image: Image) bool {
    return image.channels == 2 or image.channels == 4;
}
