//! media.fit on images the tests make (test_images.zig): what passes through byte for byte,
//! what is resized or converted, and which note replaces what cannot be sent.
const std = @import("std");
const testing = std.testing;
const gpa = testing.allocator;
const media = @import("../media.zig");
const make = @import("test_images.zig");
const png = @import("png.zig");
const jpeg = @import("jpeg.zig");
const webp = @import("webp.zig");
const Image = @import("Image.zig");

fn expectPassedThrough(bytes: []const u8, media_type: []const u8, width: u32, height: u32) !void {
    const outcome = try media.fit(gpa, .{ .bytes = bytes, .hint = "image/bmp" });
    defer outcome.deinit(gpa);
    const f = outcome.fitted;
    try testing.expect(!f.owned);
    try testing.expectEqual(bytes.ptr, f.data.ptr); // the very bytes: no copy, no decode
    try testing.expectEqual(bytes.len, f.data.len);
    try testing.expectEqualStrings(media_type, f.media_type); // the bytes win over the hint
    try testing.expectEqual(media.Kind.image, f.kind);
    try testing.expectEqual(width, f.width);
    try testing.expectEqual(height, f.height);
}

test "small images pass through byte for byte, each codec" {
    const p = try make.pngFile(gpa, 300, 200, 4, false);
    defer gpa.free(p);
    try expectPassedThrough(p, "image/png", 300, 200);
    const j = try make.jpegFile(gpa, 2000, 1000);
    defer gpa.free(j);
    try expectPassedThrough(j, "image/jpeg", 2000, 1000);
    const w = try make.webpFile(gpa, 640, 480, 4, .{ .lossy = 80 });
    defer gpa.free(w);
    try expectPassedThrough(w, "image/webp", 640, 480);
    const wl = try make.webpFile(gpa, 64, 48, 3, .lossless);
    defer gpa.free(wl);
    try expectPassedThrough(wl, "image/webp", 64, 48);
    const g = try make.gifFile(gpa, 120, 80, 3);
    defer gpa.free(g);
    try expectPassedThrough(g, "image/gif", 120, 80);
}

/// Fits `bytes` and decodes what came out with the codec of `media_type`.
fn fitAndDecode(bytes: []const u8, media_type: []const u8, width: u32, height: u32) !Image {
    const outcome = try media.fit(gpa, .{ .bytes = bytes });
    defer outcome.deinit(gpa);
    const f = outcome.fitted;
    try testing.expect(f.owned);
    try testing.expectEqualStrings(media_type, f.media_type);
    try testing.expectEqual(width, f.width);
    try testing.expectEqual(height, f.height);
    try testing.expectEqualStrings(media_type, @import("note.zig").mediaTypeOf(media.detect(f.data).?));
    const max = 100_000_000;
    const image = if (std.mem.eql(u8, media_type, "image/png"))
        try png.decode(gpa, f.data, max)
    else if (std.mem.eql(u8, media_type, "image/jpeg"))
        try jpeg.decode(gpa, f.data, max, 0, 0)
    else
        (try webp.decode(gpa, f.data, max, 0, 0)).image;
    try testing.expectEqual(width, image.width);
    try testing.expectEqual(height, image.height);
    return image;
}

test "large images are downscaled into 2000x2000, aspect and codec kept" {
    const p = try make.pngFile(gpa, 3001, 1234, 3, false);
    defer gpa.free(p);
    // 1234 * 2000 / 3001 = 822.4
    (try fitAndDecode(p, "image/png", 2000, 822)).deinit(gpa);

    const j = try make.jpegFile(gpa, 4000, 3000);
    defer gpa.free(j);
    (try fitAndDecode(j, "image/jpeg", 2000, 1500)).deinit(gpa);

    const tall = try make.jpegFile(gpa, 1000, 4999);
    defer gpa.free(tall);
    (try fitAndDecode(tall, "image/jpeg", 400, 2000)).deinit(gpa);
}

test "a large WEBP stays WEBP and keeps its alpha channel" {
    const w = try make.webpFile(gpa, 2500, 1000, 4, .{ .lossy = 80 });
    defer gpa.free(w);
    const image = try fitAndDecode(w, "image/webp", 2000, 800);
    defer image.deinit(gpa);
    try testing.expectEqual(4, image.channels);
    // The source's alpha fades from 0 (left) to 255 (right): so does the fitted image's.
    const row = image.pixels[400 * 2000 * 4 ..][0 .. 2000 * 4];
    try testing.expect(row[3] < 16);
    try testing.expect(row[1999 * 4 + 3] > 240);
}

test "a large PNG with alpha keeps it, and its colors, by the cubic filter or by areas" {
    // 2400x600: the cubic filter alone; 4000x1000: exactly 2x, area averages alone.
    for ([_][2]u32{ .{ 2400, 600 }, .{ 4000, 1000 } }) |size| {
        const p = try make.pngFile(gpa, size[0], size[1], 4, false);
        defer gpa.free(p);
        const image = try fitAndDecode(p, "image/png", 2000, 500);
        defer image.deinit(gpa);
        try testing.expectEqual(4, image.channels);
        // Middle of the disc: blue 200, where alpha is about half.
        const px = image.pixels[(250 * 2000 + 1000) * 4 ..][0..4];
        try testing.expect(px[2] >= 195 and px[2] <= 205);
        try testing.expect(px[3] >= 120 and px[3] <= 135);
    }
}

test "a large reduction goes by whole factors of areas, then the cubic filter" {
    // 8100x400 -> 2000x99: 2x by areas, then the cubic filter for the rest.
    const q = try make.pngFile(gpa, 8100, 400, 3, false);
    defer gpa.free(q);
    const wide = try fitAndDecode(q, "image/png", 2000, 99);
    defer wide.deinit(gpa);
    const mid = wide.pixels[(49 * 2000 + 1000) * 3 ..][0..3];
    try testing.expect(mid[2] >= 190 and mid[2] <= 210);
    try testing.expect(mid[0] >= 120 and mid[0] <= 135); // red: x / width, at the middle
}

test "a BMP becomes a PNG of the same pixels" {
    const b = try make.bmpFile(gpa, 33, 17);
    defer gpa.free(b);
    const image = try fitAndDecode(b, "image/png", 33, 17);
    defer image.deinit(gpa);
    const expected = try make.pixels(gpa, 33, 17, 3, false);
    defer expected.deinit(gpa);
    try testing.expectEqual(3, image.channels);
    try testing.expectEqualSlices(u8, expected.pixels, image.pixels);
}

test "a large BMP becomes a PNG fitted into 2000x2000" {
    const b = try make.bmpFile(gpa, 2100, 50);
    defer gpa.free(b);
    (try fitAndDecode(b, "image/png", 2000, 48)).deinit(gpa);
}

test "a large GIF becomes a PNG of its first frame" {
    const g = try make.gifFile(gpa, 2200, 110, 2);
    defer gpa.free(g);
    const outcome = try media.fit(gpa, .{ .bytes = g });
    defer outcome.deinit(gpa);
    const f = outcome.fitted;
    try testing.expectEqualStrings("image/png", f.media_type);
    try testing.expectEqual(2000, f.width);
    try testing.expectEqual(100, f.height);
    // Frame 0 at full size is index (x + y) % 4: decoded by giflib, it is the frame's colors.
    const first = try @import("gif.zig").decodeFirstFrame(gpa, g, 100_000_000);
    defer first.deinit(gpa);
    try testing.expectEqual(3, first.channels);
    try testing.expectEqualSlices(u8, &.{ 255, 0, 0, 0, 255, 0, 0, 0, 255, 255, 255, 255 }, first.pixels[0..12]);
    try testing.expectEqualSlices(u8, &.{ 0, 255, 0 }, first.pixels[2200 * 3 ..][0..3]);
}

test "a PDF passes through up to the size limit, and over it becomes a note" {
    const pdf = "%PDF-1.4\n1 0 obj << >> endobj\ntrailer << >>\n%%EOF\n";
    const outcome = try media.fit(gpa, .{ .bytes = pdf, .hint = "image/png", .name = "x.pdf" });
    defer outcome.deinit(gpa);
    try testing.expectEqual(media.Kind.document, outcome.fitted.kind);
    try testing.expectEqualStrings("application/pdf", outcome.fitted.media_type);
    try testing.expectEqual(pdf.ptr, outcome.fitted.data.ptr);

    const big = try gpa.alloc(u8, 20 * 1024 * 1024 + 1);
    defer gpa.free(big);
    @memset(big, ' ');
    @memcpy(big[0..5], "%PDF-");
    const over = try media.fit(gpa, .{ .bytes = big, .name = "big.pdf" });
    defer over.deinit(gpa);
    try testing.expectEqualStrings("[attachment big.pdf dropped: the PDF is 20.0 MiB, over the limit of 20 MiB]", over.dropped);
}

fn expectNote(given: media.Given, note: []const u8) !void {
    const outcome = try media.fit(gpa, given);
    defer outcome.deinit(gpa);
    try testing.expectEqualStrings(note, outcome.dropped);
}

test "unrecognized bytes become a note naming the attachment" {
    try expectNote(.{ .bytes = "hello", .name = "a.txt" }, "[attachment a.txt dropped: not an image or PDF panto can read (PNG, JPEG, GIF, WEBP, BMP or PDF)]");
    try expectNote(.{ .bytes = "", .hint = "image/png" }, "[attachment image/png dropped: not an image or PDF panto can read (PNG, JPEG, GIF, WEBP, BMP or PDF)]");
    try expectNote(.{ .bytes = "\x00\x01" }, "[attachment (unnamed) dropped: not an image or PDF panto can read (PNG, JPEG, GIF, WEBP, BMP or PDF)]");
}

test "truncated or corrupt images become a note, small or large, each format" {
    const p = try make.pngFile(gpa, 100, 100, 3, false);
    defer gpa.free(p);
    try expectNote(.{ .bytes = p[0 .. p.len - 1] }, "[attachment image/png dropped: the PNG is truncated or corrupt]");
    try expectNote(.{ .bytes = p[0 .. p.len / 2], .name = "half.png" }, "[attachment half.png dropped: the PNG is truncated or corrupt]");
    const flipped = try gpa.dupe(u8, p);
    defer gpa.free(flipped);
    flipped[60] ^= 0x10; // inside IDAT: its CRC no longer matches
    try expectNote(.{ .bytes = flipped }, "[attachment image/png dropped: the PNG is truncated or corrupt]");

    const j = try make.jpegFile(gpa, 100, 100);
    defer gpa.free(j);
    try expectNote(.{ .bytes = j[0 .. j.len - 2] }, "[attachment image/jpeg dropped: the JPEG is truncated or corrupt]");
    try expectNote(.{ .bytes = j[0..200] }, "[attachment image/jpeg dropped: the JPEG is truncated or corrupt]");

    const w = try make.webpFile(gpa, 100, 100, 3, .{ .lossy = 80 });
    defer gpa.free(w);
    try expectNote(.{ .bytes = w[0 .. w.len - 10] }, "[attachment image/webp dropped: the WEBP is truncated or corrupt]");

    const g = try make.gifFile(gpa, 50, 50, 1);
    defer gpa.free(g);
    try expectNote(.{ .bytes = g[0 .. g.len - 1] }, "[attachment image/gif dropped: the GIF is truncated or corrupt]");

    const b = try make.bmpFile(gpa, 50, 50);
    defer gpa.free(b);
    try expectNote(.{ .bytes = b[0 .. b.len - 1] }, "[attachment image/bmp dropped: the BMP is truncated or corrupt]");

    // Whole in structure, CRCs right, but its pixel data is not zlib: found when decoding.
    const bad = try make.pngClaiming(gpa, 3000, 3000);
    defer gpa.free(bad);
    try expectNote(.{ .bytes = bad }, "[attachment image/png dropped: the PNG is truncated or corrupt]");
}

test "a header claiming too many pixels is refused before anything is decoded" {
    const bomb = try make.pngClaiming(gpa, 20000, 20000);
    defer gpa.free(bomb);
    try expectNote(.{ .bytes = bomb, .name = "bomb.png" }, "[attachment bomb.png dropped: the PNG claims 20000x20000 pixels, over the limit of 100 megapixels]");
    const wide = try make.pngClaiming(gpa, 70000, 10);
    defer gpa.free(wide);
    try expectNote(.{ .bytes = wide }, "[attachment image/png dropped: the PNG claims 70000x10 pixels, a side longer than 65535]");
    const empty = try make.pngClaiming(gpa, 0, 10);
    defer gpa.free(empty);
    try expectNote(.{ .bytes = empty }, "[attachment image/png dropped: the PNG has no pixels (a width or height of 0)]");

    // A JPEG frame header of 60000x60000 (SOF0), a GIF screen of 65535x65535, a BMP.
    const jpeg_bomb = "\xff\xd8\xff\xc0\x00\x0b\x08\xea\x60\xea\x60\x01\x01\x11\x00\xff\xda\x00\x08\x01\x01\x00\x00\x3f\x00\x00\xff\xd9";
    try expectNote(.{ .bytes = jpeg_bomb }, "[attachment image/jpeg dropped: the JPEG claims 60000x60000 pixels, over the limit of 100 megapixels]");
    const gif_bomb = "GIF89a\xff\xff\xff\xff\x00\x00\x00\x2c\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02\x4c\x01\x00\x3b";
    try expectNote(.{ .bytes = gif_bomb }, "[attachment image/gif dropped: the GIF claims 65535x65535 pixels, over the limit of 100 megapixels]");
    var bmp_bomb = (try make.bmpFile(gpa, 2, 2));
    defer gpa.free(bmp_bomb);
    std.mem.writeInt(i32, bmp_bomb[18..22], 30000, .little);
    std.mem.writeInt(i32, bmp_bomb[22..26], -30000, .little);
    try expectNote(.{ .bytes = bmp_bomb }, "[attachment image/bmp dropped: the BMP claims 30000x30000 pixels, over the limit of 100 megapixels]");
}

test "a PNG whose data is too short for the pixels it claims is refused before they are allocated" {
    // 9000x9000 RGB is 243 MB decoded, under the pixel cap; 13 bytes of IDAT cannot inflate
    // to it, whatever they are. What was allocated in all shows no pixels ever were.
    const bomb = try make.pngClaiming(gpa, 9000, 9000);
    defer gpa.free(bomb);
    var counting: std.testing.FailingAllocator = .init(gpa, .{});
    const outcome = try media.fit(counting.allocator(), .{ .bytes = bomb, .name = "bomb.png" });
    defer outcome.deinit(counting.allocator());
    try testing.expectEqualStrings("[attachment bomb.png dropped: the PNG is truncated or corrupt]", outcome.dropped);
    try testing.expect(counting.allocated_bytes < 4096);
}

test "an image over the size limit is sent as a JPEG, smaller in quality, then in size" {
    // Noise does not compress: as PNG it stays over the limit, as a JPEG it fits.
    const p = try make.pngFile(gpa, 2100, 2000, 3, true);
    defer gpa.free(p);
    const outcome = try media.fit(gpa, .{ .bytes = p });
    defer outcome.deinit(gpa);
    const f = outcome.fitted;
    try testing.expectEqualStrings("image/jpeg", f.media_type);
    try testing.expect(f.data.len <= 3_538_944);
    try testing.expectEqual(media.Format.jpeg, media.detect(f.data).?);
    try testing.expect(f.width <= 2000 and f.height <= 2000);

    // A tighter limit: the JPEG must shrink.
    const small = try media.fitWithin(gpa, .{ .bytes = p }, .{ .max_image_bytes = 60_000 });
    defer small.deinit(gpa);
    try testing.expectEqualStrings("image/jpeg", small.fitted.media_type);
    try testing.expect(small.fitted.data.len <= 60_000);
    try testing.expect(small.fitted.width < 2000);

    // Nothing fits in 100 bytes.
    const none = try media.fitWithin(gpa, .{ .bytes = p, .name = "noise.png" }, .{ .max_image_bytes = 100 });
    defer none.deinit(gpa);
    try testing.expectEqualStrings("[attachment noise.png dropped: the PNG stays over 100 bytes even as a small JPEG]", none.dropped);
}

test "running out of memory is the only error, and leaks nothing" {
    const p = try make.pngFile(gpa, 2100, 300, 4, false);
    defer gpa.free(p);
    const g = try make.gifFile(gpa, 2100, 30, 1);
    defer gpa.free(g);
    const b = try make.bmpFile(gpa, 50, 30);
    defer gpa.free(b);
    for ([_][]const u8{ p, g, b }) |bytes| {
        try testing.checkAllAllocationFailures(gpa, struct {
            fn run(a: std.mem.Allocator, input: []const u8) !void {
                const outcome = try media.fit(a, .{ .bytes = input });
                outcome.deinit(a);
            }
        }.run, .{bytes});
    }
}
