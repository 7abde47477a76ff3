//! The screen's colors: `NO_COLOR` (set and not empty, no-color.org) takes every SGR sequence
//! out of what is written; a theme (the config file's "theme") gives the renderer's roles
//! colors of the user's choosing. The renderer and the prompt write their roles as fixed SGR
//! sequences (render.zig: red for errors, cyan for the accent, dim for what is muted); the
//! writer here, between them and the terminal, drops or rewrites those sequences, so no part
//! of the screen's code carries a color setting of its own.
const std = @import("std");

const Writer = std.Io.Writer;

/// What a theme names: a role, and the SGR parameters the renderer writes for it.
pub const Role = enum {
    /// Errors (render.zig `red`).
    @"error",
    /// Tool names, the accent (render.zig `cyan`).
    accent,
    /// Notes, thinking, the status line (render.zig `dim`).
    muted,

    fn sgr(r: Role) []const u8 {
        return switch (r) {
            .@"error" => "31",
            .accent => "36",
            .muted => "2",
        };
    }
};

/// The color names a theme may give a role, as SGR parameters.
pub const names = [_]struct { name: []const u8, sgr: []const u8 }{
    .{ .name = "black", .sgr = "30" },        .{ .name = "red", .sgr = "31" },
    .{ .name = "green", .sgr = "32" },        .{ .name = "yellow", .sgr = "33" },
    .{ .name = "blue", .sgr = "34" },         .{ .name = "magenta", .sgr = "35" },
    .{ .name = "cyan", .sgr = "36" },         .{ .name = "white", .sgr = "37" },
    .{ .name = "gray", .sgr = "90" },         .{ .name = "bright-red", .sgr = "91" },
    .{ .name = "bright-green", .sgr = "92" }, .{ .name = "bright-yellow", .sgr = "93" },
    .{ .name = "bright-blue", .sgr = "94" },  .{ .name = "bright-magenta", .sgr = "95" },
    .{ .name = "bright-cyan", .sgr = "96" },  .{ .name = "bright-white", .sgr = "97" },
    .{ .name = "dim", .sgr = "2" },           .{ .name = "bold", .sgr = "1" },
    .{ .name = "default", .sgr = "39" },
};

pub fn sgrOf(name: []const u8) ?[]const u8 {
    for (names) |n| if (std.mem.eql(u8, n.name, name)) return n.sgr;
    return null;
}

pub const Palette = struct {
    /// NO_COLOR: no SGR sequence at all.
    strip: bool = false,
    /// The theme's color of each role (SGR parameters), null: the renderer's own.
    roles: [std.meta.fields(Role).len]?[]const u8 = @splat(null),

    /// Whatever is written goes to the terminal as it is.
    pub fn plain(p: Palette) bool {
        if (p.strip) return false;
        for (p.roles) |r| if (r != null) return false;
        return true;
    }

    fn map(p: *const Palette, params: []const u8) []const u8 {
        inline for (std.meta.fields(Role), 0..) |f, i| {
            if (std.mem.eql(u8, params, @as(Role, @enumFromInt(f.value)).sgr())) if (p.roles[i]) |to| return to;
        }
        return params;
    }
};

/// A writer that applies a palette to what goes through it, to `out`.
pub const Filter = struct {
    out: *Writer,
    palette: Palette,
    /// An escape sequence begun and not yet ended (a write may cut one).
    seq: [32]u8 = undefined,
    seq_len: usize = 0,
    writer: Writer,

    pub fn init(out: *Writer, palette: Palette, buffer: []u8) Filter {
        return .{ .out = out, .palette = palette, .writer = .{ .buffer = buffer, .vtable = &.{ .drain = drain, .flush = flush } } };
    }

    fn drain(w: *Writer, data: []const []const u8, splat: usize) Writer.Error!usize {
        const f: *Filter = @alignCast(@fieldParentPtr("writer", w));
        try f.feed(w.buffered());
        w.end = 0;
        var n: usize = 0;
        for (data[0 .. data.len - 1]) |d| {
            try f.feed(d);
            n += d.len;
        }
        const last = data[data.len - 1];
        for (0..splat) |_| try f.feed(last);
        return n + last.len * splat;
    }

    fn flush(w: *Writer) Writer.Error!void {
        const f: *Filter = @alignCast(@fieldParentPtr("writer", w));
        try f.feed(w.buffered());
        w.end = 0;
        try f.out.flush();
    }

    fn feed(f: *Filter, bytes: []const u8) Writer.Error!void {
        var from: usize = 0; // plain text not yet written
        for (bytes, 0..) |b, i| {
            if (f.seq_len == 0) {
                if (b != 0x1b) continue;
                try f.out.writeAll(bytes[from..i]);
                from = i + 1;
                f.seq[0] = b;
                f.seq_len = 1;
                continue;
            }
            from = i + 1;
            f.seq[f.seq_len] = b;
            f.seq_len += 1;
            if (f.seq_len == 2) {
                if (b != '[') try f.pass(); // not a CSI sequence: as it came
                continue;
            }
            if (b >= 0x40 and b <= 0x7e) {
                if (b == 'm') try f.sgr() else try f.pass();
            } else if (f.seq_len == f.seq.len) try f.pass();
        }
        try f.out.writeAll(bytes[from..]);
    }

    fn pass(f: *Filter) Writer.Error!void {
        try f.out.writeAll(f.seq[0..f.seq_len]);
        f.seq_len = 0;
    }

    fn sgr(f: *Filter) Writer.Error!void {
        defer f.seq_len = 0;
        if (f.palette.strip) return;
        try f.out.print("\x1b[{s}m", .{f.palette.map(f.seq[2 .. f.seq_len - 1])});
    }
};

fn filtered(palette: Palette, pieces: []const []const u8) ![]u8 {
    var out: Writer.Allocating = .init(std.testing.allocator);
    defer out.deinit();
    var buf: [4]u8 = undefined;
    var f: Filter = .init(&out.writer, palette, &buf);
    for (pieces) |p| try f.writer.writeAll(p);
    try f.writer.flush();
    return std.testing.allocator.dupe(u8, out.written());
}

test "NO_COLOR: every SGR sequence out, other sequences kept, even cut across writes" {
    const got = try filtered(.{ .strip = true }, &.{ "\x1b[2mdim\x1b[0m and \x1b[", "1;31mred\x1b[0m\x1b[K\r\x1b[2A" });
    defer std.testing.allocator.free(got);
    try std.testing.expectEqualStrings("dim and red\x1b[K\r\x1b[2A", got);
}

test "a theme rewrites its roles' sequences, the rest as they came" {
    var p: Palette = .{};
    p.roles[@intFromEnum(Role.@"error")] = sgrOf("magenta").?;
    p.roles[@intFromEnum(Role.muted)] = sgrOf("gray").?;
    const got = try filtered(p, &.{"\x1b[31merror\x1b[0m \x1b[2mnote\x1b[0m \x1b[36mtool\x1b[0m"});
    defer std.testing.allocator.free(got);
    try std.testing.expectEqualStrings("\x1b[35merror\x1b[0m \x1b[90mnote\x1b[0m \x1b[36mtool\x1b[0m", got);
}
