//! Images made by the media tests: pixels drawn here, encoded with the codecs under test
//! (PNG, JPEG, WEBP) or written by hand (GIF, BMP, broken files).
const std = @import("std");
const Allocator = std.mem.Allocator;
const Image = @import("Image.zig");
const png = @import("png.zig");
const jpeg = @import("jpeg.zig");
const webp = @import("webp.zig");

/// A smooth picture (gradients and a disc), so lossy codecs compress it as they do a photo;
/// alpha fades left to right. `noise` adds pseudo-random values (incompressible).
pub fn pixels(gpa: Allocator, width: u32, height: u32, channels: u8, noise: bool) Allocator.Error!Image {
    const data = try gpa.alloc(u8, @as(usize, width) * height * channels);
    var rng = std.Random.DefaultPrng.init(42);
    for (0..height) |y| for (0..width) |x| {
        const px = data[(y * width + x) * channels ..][0..channels];
        const dx = @as(i64, @intCast(x)) - width / 2;
        const dy = @as(i64, @intCast(y)) - height / 2;
        const in_disc = dx * dx + dy * dy < @as(i64, @min(width, height) / 3) * (@min(width, height) / 3);
        const rgb = [3]u8{ @intCast(x * 255 / width), @intCast(y * 255 / height), if (in_disc) 200 else 40 };
        const color_channels: usize = if (channels <= 2) 1 else 3;
        for (0..color_channels) |c| px[c] = if (noise) rng.random().int(u8) else rgb[c];
        if (channels == 2 or channels == 4) px[channels - 1] = @intCast(x * 255 / width);
    };
    return .{ .width = width, .height = height, .channels = channels, .pixels = data };
}

pub fn pngFile(gpa: Allocator, width: u32, height: u32, channels: u8, noise: bool) ![]u8 {
    const image = try pixels(gpa, width, height, channels, noise);
    defer image.deinit(gpa);
    return png.encode(gpa, image);
}

pub fn jpegFile(gpa: Allocator, width: u32, height: u32) ![]u8 {
    const image = try pixels(gpa, width, height, 3, false);
    defer image.deinit(gpa);
    return jpeg.encode(gpa, image, 90);
}

pub fn webpFile(gpa: Allocator, width: u32, height: u32, channels: u8, quality: webp.Quality) ![]u8 {
    const image = try pixels(gpa, width, height, channels, false);
    defer image.deinit(gpa);
    return webp.encode(gpa, image, quality);
}

/// An uncompressed 24-bit BMP (bottom-up) of `pixels(.., 3, false)`.
pub fn bmpFile(gpa: Allocator, width: u32, height: u32) ![]u8 {
    const image = try pixels(gpa, width, height, 3, false);
    defer image.deinit(gpa);
    const row = (width * 3 + 3) / 4 * 4;
    const size = 54 + row * height;
    const out = try gpa.alloc(u8, size);
    @memset(out, 0);
    @memcpy(out[0..2], "BM");
    std.mem.writeInt(u32, out[2..6], size, .little);
    std.mem.writeInt(u32, out[10..14], 54, .little);
    std.mem.writeInt(u32, out[14..18], 40, .little);
    std.mem.writeInt(i32, out[18..22], @intCast(width), .little);
    std.mem.writeInt(i32, out[22..26], @intCast(height), .little);
    std.mem.writeInt(u16, out[26..28], 1, .little);
    std.mem.writeInt(u16, out[28..30], 24, .little);
    for (0..height) |y| for (0..width) |x| {
        const src = image.pixels[(y * width + x) * 3 ..][0..3];
        const dst = out[54 + (height - 1 - y) * row + x * 3 ..][0..3];
        dst.* = .{ src[2], src[1], src[0] };
    };
    return out;
}

/// A GIF of `frames` frames, each width x height of palette index (x + y + frame) % 4 over a
/// 4-color table (red, green, blue, white). LZW written the simple way: 3-bit codes, a clear
/// code before the table would grow.
pub fn gifFile(gpa: Allocator, width: u16, height: u16, frames: u8) ![]u8 {
    var out: std.ArrayList(u8) = .empty;
    errdefer out.deinit(gpa);
    try out.appendSlice(gpa, "GIF89a");
    try out.appendSlice(gpa, &std.mem.toBytes(std.mem.nativeToLittle(u16, width)));
    try out.appendSlice(gpa, &std.mem.toBytes(std.mem.nativeToLittle(u16, height)));
    try out.appendSlice(gpa, &.{ 0x81, 0, 0 }); // global table of 4 colors
    try out.appendSlice(gpa, &.{ 255, 0, 0, 0, 255, 0, 0, 0, 255, 255, 255, 255 });
    for (0..frames) |frame| {
        try out.appendSlice(gpa, &.{ 0x2c, 0, 0, 0, 0 });
        try out.appendSlice(gpa, &std.mem.toBytes(std.mem.nativeToLittle(u16, width)));
        try out.appendSlice(gpa, &std.mem.toBytes(std.mem.nativeToLittle(u16, height)));
        try out.appendSlice(gpa, &.{ 0, 2 }); // no local table; LZW minimum code size 2
        // Codes of 3 bits: clear = 4, end = 5; a clear every 2 codes keeps the width at 3.
        var bits: std.ArrayList(u8) = .empty;
        defer bits.deinit(gpa);
        var acc: u32 = 0;
        var n: u5 = 0;
        const Emit = struct {
            fn code(list: *std.ArrayList(u8), a: Allocator, accp: *u32, np: *u5, c: u32) !void {
                accp.* |= c << np.*;
                np.* += 3;
                while (np.* >= 8) {
                    try list.append(a, @truncate(accp.*));
                    accp.* >>= 8;
                    np.* -= 8;
                }
            }
        };
        var i: usize = 0;
        for (0..height) |y| for (0..width) |x| {
            if (i % 2 == 0) try Emit.code(&bits, gpa, &acc, &n, 4);
            try Emit.code(&bits, gpa, &acc, &n, @intCast((x + y + frame) % 4));
            i += 1;
        };
        try Emit.code(&bits, gpa, &acc, &n, 5);
        if (n > 0) try bits.append(gpa, @truncate(acc));
        var at: usize = 0;
        while (at < bits.items.len) {
            const len = @min(255, bits.items.len - at);
            try out.append(gpa, @intCast(len));
            try out.appendSlice(gpa, bits.items[at..][0..len]);
            at += len;
        }
        try out.append(gpa, 0);
    }
    try out.append(gpa, 0x3b);
    return out.toOwnedSlice(gpa);
}

/// A PNG whose header claims width x height, with a valid structure (right CRCs) around an
/// IDAT that holds nothing decodable.
pub fn pngClaiming(gpa: Allocator, width: u32, height: u32) ![]u8 {
    var out: std.ArrayList(u8) = .empty;
    errdefer out.deinit(gpa);
    try out.appendSlice(gpa, "\x89PNG\r\n\x1a\n");
    var ihdr: [13]u8 = undefined;
    std.mem.writeInt(u32, ihdr[0..4], width, .big);
    std.mem.writeInt(u32, ihdr[4..8], height, .big);
    ihdr[8..13].* = .{ 8, 2, 0, 0, 0 };
    try chunk(gpa, &out, "IHDR", &ihdr);
    try chunk(gpa, &out, "IDAT", "not zlib data");
    try chunk(gpa, &out, "IEND", "");
    return out.toOwnedSlice(gpa);
}

fn chunk(gpa: Allocator, out: *std.ArrayList(u8), kind: *const [4]u8, data: []const u8) !void {
    var len: [4]u8 = undefined;
    std.mem.writeInt(u32, &len, @intCast(data.len), .big);
    try out.appendSlice(gpa, &len);
    const start = out.items.len;
    try out.appendSlice(gpa, kind);
    try out.appendSlice(gpa, data);
    var crc: [4]u8 = undefined;
    std.mem.writeInt(u32, &crc, std.hash.Crc32.hash(out.items[start..]), .big);
    try out.appendSlice(gpa, &crc);
}
