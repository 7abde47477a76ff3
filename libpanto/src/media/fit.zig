//! The pipeline behind `media.fit`: what is done with each format, and in which order the
//! checks run (the cheap ones, from the header, before anything is decoded).
const std = @import("std");
const Allocator = std.mem.Allocator;
const media = @import("../media.zig");
const Format = media.Format;
const Limits = @import("limits.zig");
const note = @import("note.zig");
const inspect = @import("inspect.zig");
const Image = @import("Image.zig");
const channels = @import("channels.zig");
const resize = @import("resize.zig").resize;
const reduce = @import("reduce.zig").reduce;
const bmp = @import("bmp.zig");
const png = @import("png.zig");
const jpeg = @import("jpeg.zig");
const webp = @import("webp.zig");
const gif = @import("gif.zig");

/// Quality of a JPEG or lossy WEBP written at the fitted size.
const quality = 85;
/// When the kept codec's encoding is over the size limit: JPEG at these qualities, then the
/// same at these fractions of the fitted size (as pi does).
const fallback_qualities = [_]u8{ 85, 70, 55, 40 };
const fallback_scales = [_]f32{ 0.75, 0.5, 0.35, 0.25 };

pub fn fit(gpa: Allocator, given: media.Given, limits: Limits) Allocator.Error!media.Outcome {
    return switch (try fitOrSay(gpa, given, limits)) {
        .fitted => |f| .{ .fitted = f },
        .dropped => |r| .{ .dropped = try note.write(gpa, given, limits, r) },
    };
}

const Result = union(enum) { fitted: media.Fitted, dropped: note.Reason };

fn fitOrSay(gpa: Allocator, given: media.Given, limits: Limits) Allocator.Error!Result {
    const bytes = given.bytes;
    const format = media.detect(bytes) orelse return .{ .dropped = .unrecognized };
    if (format == .pdf) {
        if (bytes.len > limits.max_pdf_bytes) return .{ .dropped = .{ .pdf_too_large = bytes.len } };
        return .{ .fitted = .{ .kind = .document, .media_type = "application/pdf", .data = bytes, .owned = false } };
    }
    const header = (if (format == .bmp) bmp.header(bytes) else inspect.inspect(format, bytes)) catch |err| return .{ .dropped = switch (err) {
        error.Corrupt => .{ .corrupt = format },
        error.Unsupported => .{ .unsupported = format },
    } };
    const size: note.Reason.Size = .{ .format = format, .width = header.width, .height = header.height };
    if (header.width == 0 or header.height == 0) return .{ .dropped = .{ .zero_size = format } };
    if (header.width > Limits.max_claimed_side or header.height > Limits.max_claimed_side) return .{ .dropped = .{ .absurd_size = size } };
    if (@as(u64, header.width) * header.height > limits.max_pixels) return .{ .dropped = .{ .too_many_pixels = size } };
    if (!header.data_can_hold_pixels) return .{ .dropped = .{ .corrupt = format } };
    if (format != .bmp and header.width <= limits.max_side and header.height <= limits.max_side and bytes.len <= limits.max_image_bytes)
        return .{ .fitted = .{ .kind = .image, .media_type = note.mediaTypeOf(format), .data = bytes, .owned = false, .width = header.width, .height = header.height } };
    return reencode(gpa, format, bytes, header, limits) catch |err| switch (err) {
        error.OutOfMemory => error.OutOfMemory,
        error.Corrupt => .{ .dropped = .{ .corrupt = format } },
        error.TooLarge => .{ .dropped = .{ .too_many_pixels = size } },
        error.Unsupported => .{ .dropped = .{ .unsupported = format } },
        error.CannotFit => .{ .dropped = .{ .cannot_fit = format } },
    };
}

const Error = error{ OutOfMemory, Corrupt, TooLarge, Unsupported, CannotFit };

/// Decodes (near the target size when the codec can), resizes to fit, encodes in the same
/// codec (BMP and GIF as PNG), and falls back to JPEG when that is over the size limit.
fn reencode(gpa: Allocator, format: Format, bytes: []const u8, header: inspect.Header, limits: Limits) Error!Result {
    const width, const height = Limits.fitInside(header.width, header.height, limits.max_side);
    var lossless_webp = false;
    const decoded: Image = switch (format) {
        .png => try png.decode(gpa, bytes, limits.max_pixels),
        .jpeg => try jpeg.decode(gpa, bytes, limits.max_pixels, width, height),
        .webp => blk: {
            const d = try webp.decode(gpa, bytes, limits.max_pixels, width, height);
            lossless_webp = d.lossless;
            break :blk d.image;
        },
        .gif => try gif.decodeFirstFrame(gpa, bytes, limits.max_pixels),
        .bmp => try bmp.decode(gpa, bytes),
        .pdf => unreachable, // passed through by fitOrSay
    };
    defer decoded.deinit(gpa);
    const fitted = try shrink(gpa, decoded, width, height);
    defer if (fitted.pixels.ptr != decoded.pixels.ptr) fitted.deinit(gpa);

    const kept: Format, const data = switch (format) {
        .png, .gif, .bmp => .{ .png, try png.encode(gpa, fitted) },
        .jpeg => .{ .jpeg, try jpeg.encode(gpa, fitted, quality) },
        .webp => .{ .webp, try webp.encode(gpa, fitted, if (lossless_webp) .lossless else .{ .lossy = quality }) },
        .pdf => unreachable,
    };
    if (data.len <= limits.max_image_bytes) return fittedImage(kept, data, fitted);
    gpa.free(data);
    return fallbackJpeg(gpa, fitted, kept == .jpeg, limits);
}

/// `image` at width x height (itself when it is that size already): by whole-factor area
/// reduction as far as it leaves at least 2x to go (or lands exactly), then the cubic filter.
fn shrink(gpa: Allocator, image: Image, width: u32, height: u32) Error!Image {
    if (image.width == width and image.height == height) return image;
    const k = @min(image.width / width, image.height / height);
    const exact = image.width == width * k and image.height == height * k;
    const whole = if (exact) k else k / 2;
    if (whole < 2) return resize(gpa, image, width, height);
    const reduced = try reduce(gpa, image, whole);
    if (exact) return reduced;
    defer reduced.deinit(gpa);
    return resize(gpa, reduced, width, height);
}

fn fittedImage(format: Format, data: []u8, image: Image) Result {
    return .{ .fitted = .{ .kind = .image, .media_type = note.mediaTypeOf(format), .data = data, .owned = true, .width = image.width, .height = image.height } };
}

fn fallbackJpeg(gpa: Allocator, image: Image, tried_first_quality: bool, limits: Limits) Error!Result {
    const flat = if (image.hasAlpha()) try channels.flatten(gpa, image) else image;
    defer if (flat.pixels.ptr != image.pixels.ptr) flat.deinit(gpa);
    if (try smallestJpeg(gpa, flat, if (tried_first_quality) 1 else 0, limits)) |r| return r;
    for (fallback_scales) |scale| {
        const w: u32 = @max(1, @as(u32, @intFromFloat(@as(f32, @floatFromInt(image.width)) * scale)));
        const h: u32 = @max(1, @as(u32, @intFromFloat(@as(f32, @floatFromInt(image.height)) * scale)));
        const smaller = try shrink(gpa, flat, w, h);
        defer if (smaller.pixels.ptr != flat.pixels.ptr) smaller.deinit(gpa);
        if (try smallestJpeg(gpa, smaller, 0, limits)) |r| return r;
    }
    return error.CannotFit;
}

/// The first of the fallback qualities (from `first`) whose JPEG is within the size limit.
fn smallestJpeg(gpa: Allocator, image: Image, first: usize, limits: Limits) Error!?Result {
    for (fallback_qualities[first..]) |q| {
        const data = try jpeg.encode(gpa, image, q);
        if (data.len <= limits.max_image_bytes) return fittedImage(.jpeg, data, image);
        gpa.free(data);
    }
    return null;
}
