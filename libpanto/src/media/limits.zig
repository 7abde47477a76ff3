//! The providers' rules an attachment is fitted to (see PantoPart in include/panto.h).
const Limits = @This();

/// Images fit inside max_side x max_side, aspect ratio kept.
max_side: u32 = 2000,
/// Raw bytes an image may take: 3,538,944, whose base64 is 4,718,592 characters (4.5 MiB,
/// below Anthropic's 5 MB).
max_image_bytes: usize = 4_718_592 / 4 * 3,
/// Pixels an image may have, read from its header before anything is decoded.
max_pixels: u64 = 100_000_000,
/// Raw bytes a PDF may have.
max_pdf_bytes: usize = 20 * 1024 * 1024,

/// No codec panto uses writes a longer side (JPEG, GIF: 65535; WEBP: 16383); a longer one in
/// a header is a lie that would only cost memory.
pub const max_claimed_side: u32 = 65535;

/// The size inside box x box with the aspect of width x height (the longer side becomes box,
/// the other is rounded, at least 1).
pub fn fitInside(width: u32, height: u32, box: u32) struct { u32, u32 } {
    if (width <= box and height <= box) return .{ width, height };
    if (width >= height) return .{ box, scaled(height, box, width) };
    return .{ scaled(width, box, height), box };
}

fn scaled(side: u32, num: u32, den: u32) u32 {
    const v = (@as(u64, side) * num + den / 2) / den;
    return @intCast(@max(1, v));
}
