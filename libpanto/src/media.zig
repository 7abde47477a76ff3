//! Media: what libpanto does with the bytes of an image or a PDF before a model sees them.
//! `fit` detects the format by its bytes, fits an image to the providers' rules (or passes it
//! through byte for byte when it already fits), passes a PDF through, and turns what it cannot
//! send into a short note (see PantoPart in include/panto.h for the rules).
//! The pipeline lives in libpanto/src/media/ (fit.zig is its policy).
const std = @import("std");
const Allocator = std.mem.Allocator;

pub const Kind = enum { image, document };

/// Media as a caller gives it: raw bytes, a media-type hint (may be empty; the bytes win),
/// and an optional file name.
pub const Given = struct {
    bytes: []const u8,
    hint: []const u8 = "",
    name: []const u8 = "",
};

/// Media ready to send.
pub const Fitted = struct {
    kind: Kind,
    /// Static: "image/png", "image/jpeg", "image/gif", "image/webp" or "application/pdf".
    media_type: []const u8,
    /// The bytes to send: the given bytes themselves when passed through (`owned` false), or
    /// a new encoding allocated with the gpa given to `fit` (`owned` true).
    data: []const u8,
    owned: bool,
    /// Images: pixels, after fitting. 0 for documents.
    width: u32 = 0,
    height: u32 = 0,

    pub fn deinit(f: Fitted, gpa: Allocator) void {
        if (f.owned) gpa.free(f.data);
    }
};

pub const Outcome = union(enum) {
    fitted: Fitted,
    /// The media cannot be sent: a short note saying what was dropped and why, allocated with
    /// the gpa given to `fit`, to send as text instead.
    dropped: []u8,

    pub fn deinit(o: Outcome, gpa: Allocator) void {
        switch (o) {
            .fitted => |f| f.deinit(gpa),
            .dropped => |note| gpa.free(note),
        }
    }
};

pub const Format = enum { png, jpeg, gif, webp, bmp, pdf };

/// The format the bytes say they are, whatever a hint or a file name says.
pub fn detect(bytes: []const u8) ?Format {
    if (std.mem.startsWith(u8, bytes, "\x89PNG\r\n\x1a\n")) return .png;
    if (std.mem.startsWith(u8, bytes, "\xff\xd8\xff")) return .jpeg;
    if (std.mem.startsWith(u8, bytes, "GIF87a") or std.mem.startsWith(u8, bytes, "GIF89a")) return .gif;
    if (bytes.len >= 12 and std.mem.eql(u8, bytes[0..4], "RIFF") and std.mem.eql(u8, bytes[8..12], "WEBP")) return .webp;
    if (std.mem.startsWith(u8, bytes, "BM")) return .bmp;
    if (std.mem.startsWith(u8, bytes, "%PDF-")) return .pdf;
    return null;
}

pub const Limits = @import("media/limits.zig");

/// Makes media ready to send, or says why it cannot be. Fails only when memory runs out.
pub fn fit(gpa: Allocator, given: Given) Allocator.Error!Outcome {
    return fitWithin(gpa, given, .{});
}

/// `fit` with other limits (tests and the fuzz target use smaller ones).
pub fn fitWithin(gpa: Allocator, given: Given, limits: Limits) Allocator.Error!Outcome {
    return @import("media/fit.zig").fit(gpa, given, limits);
}

test {
    _ = @import("media/fit_test.zig");
}
