//! Changing an image's channels for an encoder that cannot take them as they are: JPEG has
//! no alpha (flattened onto white, as a viewer shows it on a white page), WEBP no gray.
const std = @import("std");
const Allocator = std.mem.Allocator;
const Image = @import("Image.zig");

/// Gray or RGB, the alpha channel (if any) composited onto white. A new image.
pub fn flatten(gpa: Allocator, image: Image) Allocator.Error!Image {
    const out_channels: u8 = if (image.channels <= 2) 1 else 3;
    const n = @as(usize, image.width) * image.height;
    const pixels = try gpa.alloc(u8, n * out_channels);
    const color = out_channels;
    for (0..n) |i| {
        const src = image.pixels[i * image.channels ..][0..image.channels];
        const dst = pixels[i * out_channels ..][0..out_channels];
        if (!image.hasAlpha()) {
            @memcpy(dst, src[0..color]);
            continue;
        }
        const alpha: u32 = src[color];
        for (dst, src[0..color]) |*d, s| d.* = @intCast((s * alpha + 255 * (255 - alpha) + 127) / 255);
    }
    return .{ .width = image.width, .height = image.height, .channels = out_channels, .pixels = pixels };
}

/// RGB or RGBA: gray widened. A new image.
pub fn widen(gpa: Allocator, image: Image) Allocator.Error!Image {
    std.debug.assert(image.channels <= 2);
    const out_channels: u8 = image.channels + 2;
    const n = @as(usize, image.width) * image.height;
    const pixels = try gpa.alloc(u8, n * out_channels);
    for (0..n) |i| {
        const src = image.pixels[i * image.channels ..][0..image.channels];
        const dst = pixels[i * out_channels ..][0..out_channels];
        dst[0..3].* = .{ src[0], src[0], src[0] };
        if (image.channels == 2) dst[3] = src[1];
    }
    return .{ .width = image.width, .height = image.height, .channels = out_channels, .pixels = pixels };
}
