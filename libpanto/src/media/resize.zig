//! Downscaling (stb_image_resize through resize.c: a Mitchell filter, colors weighted by alpha).
const std = @import("std");
const codec = @import("codec.zig");
const Image = @import("Image.zig");

/// A new image of width x height.
pub fn resize(gpa: std.mem.Allocator, image: Image, width: u32, height: u32) codec.Error!Image {
    const pixels = try gpa.alloc(u8, @as(usize, width) * height * image.channels);
    errdefer gpa.free(pixels);
    const out: Image = .{ .width = width, .height = height, .channels = image.channels, .pixels = pixels };
    try codec.check(codec.panto_resize(image.pixels.ptr, image.shape(), pixels.ptr, out.shape()));
    return out;
}
