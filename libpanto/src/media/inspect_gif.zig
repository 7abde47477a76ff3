//! GIF structure: the logical screen and its color table, then extension and image blocks,
//! each with its sub-blocks whole, up to the trailer; at least one image.
const std = @import("std");
const inspect = @import("inspect.zig");

fn skipSubBlocks(r: *inspect.Reader) inspect.Error!void {
    while (true) {
        const n = try r.byte();
        if (n == 0) return;
        try r.skip(n);
    }
}

fn colorTableSize(flags: u8) usize {
    return if (flags & 0x80 != 0) 3 * (@as(usize, 2) << @intCast(flags & 0x07)) else 0;
}

pub fn walk(bytes: []const u8) inspect.Error!inspect.Header {
    var r: inspect.Reader = .{ .bytes = bytes };
    try r.skip(6); // GIF87a / GIF89a, matched by detect()
    const header: inspect.Header = .{ .width = try r.int(u16, .little), .height = try r.int(u16, .little) };
    const flags = try r.byte();
    try r.skip(2); // background color, aspect
    try r.skip(colorTableSize(flags));
    var images: usize = 0;
    while (true) {
        switch (try r.byte()) {
            0x3b => return if (images > 0) header else error.Corrupt,
            0x21 => {
                try r.skip(1); // the label
                try skipSubBlocks(&r);
            },
            0x2c => {
                try r.skip(8); // left, top, width, height
                const image_flags = try r.byte();
                try r.skip(colorTableSize(image_flags));
                const min_code_size = try r.byte();
                if (min_code_size < 2 or min_code_size > 11) return error.Corrupt;
                try skipSubBlocks(&r);
                images += 1;
            },
            else => return error.Corrupt,
        }
    }
}
