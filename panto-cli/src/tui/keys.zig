//! Bytes from a raw terminal, decoded into keys: UTF-8 text, control keys, and the escape
//! sequences of xterm-like terminals (both the CSI `ESC [` and the SS3 `ESC O` forms).
const std = @import("std");

pub const Key = union(enum) {
    /// One UTF-8 encoded character (borrowed from the input).
    char: []const u8,
    /// Ctrl plus a letter, lower case ('a' for Ctrl-A); Enter, Tab and Backspace have their own.
    ctrl: u8,
    enter,
    /// Shift-Enter where the terminal tells it from Enter (CSI 13;2u, or xterm's
    /// CSI 27;2;13~): a newline in the prompt.
    newline,
    /// Alt-Enter (ESC CR): a newline at the prompt; while a turn runs, a follow-up.
    alt_enter,
    tab,
    backspace,
    delete,
    left,
    right,
    up,
    down,
    /// Alt-Up (CSI 1;3A): while a turn runs, the queued lines back into the prompt.
    alt_up,
    home,
    end,
    word_left,
    word_right,
    /// Alt-Backspace: the word before the cursor.
    delete_word,
    /// Bracketed paste: what comes between is pasted text, newlines included.
    paste_start,
    paste_end,
    escape,
    /// A sequence this editor has no use for: skipped whole.
    unknown,
};

pub const Decoded = struct { key: Key, len: usize };

/// The first key of `bytes`, or null when `bytes` is the start of a sequence that needs more
/// (the caller keeps it and reads on). A lone ESC at the end is the Escape key.
pub fn decode(bytes: []const u8) ?Decoded {
    std.debug.assert(bytes.len > 0);
    const b = bytes[0];
    return switch (b) {
        '\r', '\n' => .{ .key = .enter, .len = 1 },
        '\t' => .{ .key = .tab, .len = 1 },
        0x7f, 0x08 => .{ .key = .backspace, .len = 1 },
        0x1b => escape(bytes),
        0x00...0x07, 0x0b, 0x0c, 0x0e...0x1a => .{ .key = .{ .ctrl = b + 'a' - 1 }, .len = 1 },
        0x1c...0x1f => .{ .key = .unknown, .len = 1 },
        else => utf8(bytes),
    };
}

fn utf8(bytes: []const u8) ?Decoded {
    const n = std.unicode.utf8ByteSequenceLength(bytes[0]) catch return .{ .key = .unknown, .len = 1 };
    if (bytes.len < n) return null;
    _ = std.unicode.utf8Decode(bytes[0..n]) catch return .{ .key = .unknown, .len = 1 };
    return .{ .key = .{ .char = bytes[0..n] }, .len = n };
}

fn escape(bytes: []const u8) ?Decoded {
    if (bytes.len == 1) return .{ .key = .escape, .len = 1 };
    switch (bytes[1]) {
        '[' => return csi(bytes),
        'O' => {
            if (bytes.len < 3) return null;
            const key: Key = switch (bytes[2]) {
                'A' => .up,
                'B' => .down,
                'C' => .right,
                'D' => .left,
                'H' => .home,
                'F' => .end,
                else => .unknown,
            };
            return .{ .key = key, .len = 3 };
        },
        '\r', '\n' => return .{ .key = .alt_enter, .len = 2 },
        'b' => return .{ .key = .word_left, .len = 2 },
        'f' => return .{ .key = .word_right, .len = 2 },
        0x7f, 0x08 => return .{ .key = .delete_word, .len = 2 },
        else => return .{ .key = .escape, .len = 1 },
    }
}

/// ESC [ params final: the parameters are digits and ';', the final byte is 0x40..0x7e.
fn csi(bytes: []const u8) ?Decoded {
    var i: usize = 2;
    while (i < bytes.len) : (i += 1) {
        const b = bytes[i];
        if (b >= 0x40 and b <= 0x7e) break;
        if (b < 0x20 or b > 0x3f) return .{ .key = .unknown, .len = i }; // not a CSI after all
    } else return null;
    const params = bytes[2..i];
    const len = i + 1;
    const modified = std.mem.indexOfScalar(u8, params, ';') != null; // e.g. 1;5D: Ctrl-Left
    const key: Key = switch (bytes[i]) {
        'A' => if (std.mem.eql(u8, params, "1;3")) .alt_up else .up,
        'B' => .down,
        'C' => if (modified) .word_right else .right,
        'D' => if (modified) .word_left else .left,
        'H' => .home,
        'F' => .end,
        '~' => if (std.mem.eql(u8, params, "27;2;13")) .newline else tilde(params),
        'u' => if (std.mem.eql(u8, params, "13;2")) .newline else .unknown,
        else => .unknown,
    };
    return .{ .key = key, .len = len };
}

fn tilde(params: []const u8) Key {
    const table = [_]struct { []const u8, Key }{
        .{ "1", .home },          .{ "7", .home },
        .{ "4", .end },           .{ "8", .end },
        .{ "3", .delete },        .{ "200", .paste_start },
        .{ "201", .paste_end },
    };
    for (table) |entry| if (std.mem.eql(u8, entry[0], params)) return entry[1];
    return .unknown;
}

fn expectKey(bytes: []const u8, key: Key, len: usize) !void {
    const d = decode(bytes) orelse return error.TestUnexpectedResult;
    try std.testing.expectEqual(len, d.len);
    try std.testing.expectEqualDeep(key, d.key);
}

test "control keys, text and the usual escape sequences" {
    try expectKey("\r", .enter, 1);
    try expectKey("\x7f", .backspace, 1);
    try expectKey("\x01x", .{ .ctrl = 'a' }, 1);
    try expectKey("\x03", .{ .ctrl = 'c' }, 1);
    try expectKey("\x17", .{ .ctrl = 'w' }, 1);
    try expectKey("é!", .{ .char = "é" }, 2);
    try expectKey("\x1b[A", .up, 3);
    try expectKey("\x1bOB", .down, 3);
    try expectKey("\x1b[1;5D", .word_left, 6);
    try expectKey("\x1b[1;3A", .alt_up, 6);
    try expectKey("\x1b[3~x", .delete, 4);
    try expectKey("\x1b[1~", .home, 4);
    try expectKey("\x1b[F", .end, 3);
    try expectKey("\x1b[200~", .paste_start, 6);
    try expectKey("\x1b[15~", .unknown, 5); // F5: no use
    try expectKey("\x1b", .escape, 1);
    try expectKey("\x1bb", .word_left, 2);
    try expectKey("\x1b\rx", .alt_enter, 2);
    try expectKey("\x1b[13;2u", .newline, 7); // Shift-Enter (CSI u)
    try expectKey("\x1b[27;2;13~", .newline, 10); // Shift-Enter (xterm modifyOtherKeys)
    try expectKey("\x1b[13u", .unknown, 5);
}

test "a sequence cut by the read waits for the rest; bad UTF-8 is skipped a byte at a time" {
    try std.testing.expectEqual(null, decode("\x1b["));
    try std.testing.expectEqual(null, decode("\x1b[1;5"));
    try std.testing.expectEqual(null, decode("\x1bO"));
    try std.testing.expectEqual(null, decode("\xc3"));
    try expectKey("\xff", .unknown, 1);
    try expectKey("\xc3(", .unknown, 1);
}
