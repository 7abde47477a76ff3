//! Shrinking by a whole factor k: each k x k block of pixels becomes its average (the area
//! filter, exact for whole factors; colors weighted by alpha). Cheap, so a large reduction
//! does most of its way here, and the cubic filter (resize.zig) only the last, less than 2x,
//! as Pillow's reducing gap does.
const std = @import("std");
const Allocator = std.mem.Allocator;
const Image = @import("Image.zig");

/// A new image of width / k x height / k (the last partial blocks dropped: under k pixels).
pub fn reduce(gpa: Allocator, image: Image, k: u32) Allocator.Error!Image {
    std.debug.assert(k >= 2 and image.width >= k and image.height >= k);
    const width = image.width / k;
    const height = image.height / k;
    const ch: usize = image.channels;
    const pixels = try gpa.alloc(u8, @as(usize, width) * height * ch);
    const sums = try gpa.alloc(u32, @as(usize, width) * ch);
    defer gpa.free(sums);
    const alpha = image.hasAlpha();
    const area = k * k;
    for (0..height) |y| {
        @memset(sums, 0);
        for (0..k) |dy| {
            const row = image.pixels[((y * k + dy) * image.width) * ch ..][0 .. @as(usize, image.width) * ch];
            for (0..width) |x| {
                const sum = sums[x * ch ..][0..ch];
                for (0..k) |dx| {
                    const px = row[(x * k + dx) * ch ..][0..ch];
                    if (alpha) {
                        const a: u32 = px[ch - 1];
                        for (sum[0 .. ch - 1], px[0 .. ch - 1]) |*s, c| s.* += c * a;
                        sum[ch - 1] += a;
                    } else {
                        for (sum, px) |*s, c| s.* += c;
                    }
                }
            }
        }
        const out = pixels[y * width * ch ..][0 .. width * ch];
        for (0..width) |x| {
            const sum = sums[x * ch ..][0..ch];
            const o = out[x * ch ..][0..ch];
            if (alpha) {
                const a = sum[ch - 1];
                for (o[0 .. ch - 1], sum[0 .. ch - 1]) |*d, s| d.* = if (a == 0) 0 else @intCast((s + a / 2) / a);
                o[ch - 1] = @intCast((a + area / 2) / area);
            } else {
                for (o, sum) |*d, s| d.* = @intCast((s + area / 2) / area);
            }
        }
    }
    return .{ .width = width, .height = height, .channels = image.channels, .pixels = pixels };
}
