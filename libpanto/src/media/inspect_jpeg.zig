//! JPEG structure: SOI, marker segments each whole, a frame header (SOFn) before the first scan,
//! the entropy-coded data of each scan followed by a marker, EOI at the end.
const std = @import("std");
const inspect = @import("inspect.zig");

pub fn walk(bytes: []const u8) inspect.Error!inspect.Header {
    var r: inspect.Reader = .{ .bytes = bytes };
    try r.skip(2); // SOI, matched by detect()
    var header: ?inspect.Header = null;
    while (true) {
        if (try r.byte() != 0xff) return error.Corrupt;
        var marker = try r.byte();
        while (marker == 0xff) marker = try r.byte(); // fill bytes
        switch (marker) {
            0xd9 => return header orelse error.Corrupt, // EOI
            0xd0...0xd7, 0x01 => continue, // RSTn, TEM: no length
            0x00, 0xd8 => return error.Corrupt,
            else => {},
        }
        const len = try r.int(u16, .big);
        if (len < 2) return error.Corrupt;
        const segment = try r.take(len - 2);
        switch (marker) {
            // SOF0..SOF15 but DHT (C4), JPG (C8) and DAC (CC).
            0xc0...0xc3, 0xc5...0xc7, 0xc9...0xcb, 0xcd...0xcf => {
                if (header != null or segment.len < 6) return error.Corrupt;
                header = .{
                    .height = std.mem.readInt(u16, segment[1..3], .big),
                    .width = std.mem.readInt(u16, segment[3..5], .big),
                };
            },
            0xda => { // SOS: the entropy-coded data runs to the next marker that is not RSTn
                if (header == null) return error.Corrupt;
                const rest = r.bytes[r.at..];
                var i: usize = 0;
                while (true) {
                    const ff = std.mem.indexOfScalarPos(u8, rest, i, 0xff) orelse return error.Corrupt;
                    if (ff + 1 >= rest.len) return error.Corrupt;
                    const next = rest[ff + 1];
                    if (next == 0x00 or (next >= 0xd0 and next <= 0xd7) or next == 0xff) {
                        i = ff + 1;
                        continue;
                    }
                    r.at += ff;
                    break;
                }
            },
            else => {},
        }
    }
}
