//! Fuzz target `media`: any bytes as an attachment, through `media.fit` (detection, the
//! structural walks, the BMP decoder, the codecs, resizing, encoding, the JPEG fallback).
//! Small limits (a 256-pixel box, 4 megapixels, 64 KiB) send most images through decoding
//! and re-encoding, and keep each input's memory and time small. What comes out must keep
//! the pipeline's promises: a note that says what was dropped, or media within the limits
//! whose bytes are what the media type says.
const std = @import("std");
const media = @import("../src/media.zig");
const Context = @import("context.zig").Context;

const limits: media.Limits = .{ .max_side = 256, .max_pixels = 4_000_000, .max_image_bytes = 64 * 1024, .max_pdf_bytes = 32 * 1024 };

pub fn run(ctx: Context, input: []const u8) !void {
    const outcome = try media.fitWithin(ctx.gpa, .{ .bytes = input, .hint = "image/png" }, limits);
    defer outcome.deinit(ctx.gpa);
    switch (outcome) {
        .dropped => |note| {
            if (!std.mem.startsWith(u8, note, "[attachment ") or std.mem.indexOf(u8, note, " dropped: ") == null or !std.mem.endsWith(u8, note, "]"))
                std.debug.panic("a note not in the pipeline's words: {s}", .{note});
            if (!std.unicode.utf8ValidateSlice(note)) std.debug.panic("a note that is not UTF-8", .{});
        },
        .fitted => |f| expectFitted(f, input),
    }
}

fn expectFitted(f: media.Fitted, input: []const u8) void {
    const format = media.detect(f.data) orelse std.debug.panic("fitted media that is no format panto knows ({s})", .{f.media_type});
    const media_type: []const u8 = switch (format) {
        .png => "image/png",
        .jpeg => "image/jpeg",
        .gif => "image/gif",
        .webp => "image/webp",
        .pdf => "application/pdf",
        .bmp => std.debug.panic("a BMP was sent", .{}),
    };
    if (!std.mem.eql(u8, media_type, f.media_type)) std.debug.panic("{s} sent as {s}", .{ media_type, f.media_type });
    if (f.owned == (f.data.ptr == input.ptr)) std.debug.panic("owned is {}, but the data is {s} the input", .{ f.owned, if (f.owned) "" else "not" });
    if (format == .pdf) {
        if (f.kind != .document or f.data.len > limits.max_pdf_bytes) std.debug.panic("a PDF sent as {t}, {d} bytes", .{ f.kind, f.data.len });
        return;
    }
    if (f.kind != .image or f.width == 0 or f.height == 0 or f.width > limits.max_side or f.height > limits.max_side)
        std.debug.panic("an image sent at {d}x{d}", .{ f.width, f.height });
    if (f.data.len > limits.max_image_bytes) std.debug.panic("an image of {d} bytes sent", .{f.data.len});
}
