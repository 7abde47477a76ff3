//! The note that replaces media that cannot be sent:
//! `[attachment <name, or what it is> dropped: <reason>]`.
const std = @import("std");
const Allocator = std.mem.Allocator;
const media = @import("../media.zig");
const Limits = @import("limits.zig");

pub const Reason = union(enum) {
    unrecognized,
    /// Truncated, a bad checksum, a structure that does not hold together, or refused by the codec.
    corrupt: media.Format,
    /// A valid file of a variant panto does not decode (a compressed BMP).
    unsupported: media.Format,
    zero_size: media.Format,
    /// A side longer than Limits.max_claimed_side.
    absurd_size: Size,
    too_many_pixels: Size,
    pdf_too_large: usize,
    /// Over the encoded-size limit even as a small, low-quality JPEG.
    cannot_fit: media.Format,

    pub const Size = struct { format: media.Format, width: u32, height: u32 };
};

pub fn formatName(format: media.Format) []const u8 {
    return switch (format) {
        .png => "PNG",
        .jpeg => "JPEG",
        .gif => "GIF",
        .webp => "WEBP",
        .bmp => "BMP",
        .pdf => "PDF",
    };
}

pub fn mediaTypeOf(format: media.Format) []const u8 {
    return switch (format) {
        .png => "image/png",
        .jpeg => "image/jpeg",
        .gif => "image/gif",
        .webp => "image/webp",
        .bmp => "image/bmp",
        .pdf => "application/pdf",
    };
}

/// The note, allocated with gpa. Names the attachment by its name, else by what its bytes are,
/// else by its hint.
pub fn write(gpa: Allocator, given: media.Given, limits: Limits, reason: Reason) Allocator.Error![]u8 {
    const who = if (given.name.len > 0)
        given.name
    else if (media.detect(given.bytes)) |format|
        mediaTypeOf(format)
    else if (given.hint.len > 0)
        given.hint
    else
        "(unnamed)";
    const mib = 1024 * 1024;
    return switch (reason) {
        .unrecognized => std.fmt.allocPrint(gpa, "[attachment {s} dropped: not an image or PDF panto can read (PNG, JPEG, GIF, WEBP, BMP or PDF)]", .{who}),
        .corrupt => |f| std.fmt.allocPrint(gpa, "[attachment {s} dropped: the {s} is truncated or corrupt]", .{ who, formatName(f) }),
        .unsupported => |f| std.fmt.allocPrint(gpa, "[attachment {s} dropped: this kind of {s} is not supported]", .{ who, formatName(f) }),
        .zero_size => |f| std.fmt.allocPrint(gpa, "[attachment {s} dropped: the {s} has no pixels (a width or height of 0)]", .{ who, formatName(f) }),
        .absurd_size => |s| std.fmt.allocPrint(gpa, "[attachment {s} dropped: the {s} claims {d}x{d} pixels, a side longer than {d}]", .{ who, formatName(s.format), s.width, s.height, Limits.max_claimed_side }),
        .too_many_pixels => |s| std.fmt.allocPrint(gpa, "[attachment {s} dropped: the {s} claims {d}x{d} pixels, over the limit of {d} megapixels]", .{ who, formatName(s.format), s.width, s.height, limits.max_pixels / 1_000_000 }),
        .pdf_too_large => |len| std.fmt.allocPrint(gpa, "[attachment {s} dropped: the PDF is {d}.{d} MiB, over the limit of {d} MiB]", .{ who, len / mib, len % mib * 10 / mib, limits.max_pdf_bytes / mib }),
        .cannot_fit => |f| std.fmt.allocPrint(gpa, "[attachment {s} dropped: the {s} stays over {d} bytes even as a small JPEG]", .{ who, formatName(f), limits.max_image_bytes }),
    };
}
