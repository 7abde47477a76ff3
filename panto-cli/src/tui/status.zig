//! The status line after each turn: the model, the context used against the model's window
//! (when known), the turn's tokens, and its cost (the core's, at the model catalog's list
//! prices; none for a model the catalog lacks).
//!
//!   claude-sonnet-4-5 · context 12.3k/200k (6%) · turn 10.2k in, 340 out · $0.0358
const std = @import("std");
const panto = @import("panto");

pub const Line = struct {
    model: []const u8,
    /// Tokens the context holds after the turn (the last request's input and output).
    context_tokens: u64,
    /// The model's window, when known (config compaction.context_window, else the catalog).
    window: ?u64,
    /// The turn's usage (every request of the turn summed), null for a turn that failed
    /// before any.
    usage: ?panto.Usage,
    /// The turn's cost in USD (MessageComplete's), null when unknown.
    cost: ?f64 = null,
    /// The extensions' segments (ext.ui.status), after the rest.
    segments: []const Segment = &.{},
};

const Segment = @import("../lua/ext_ui.zig").Segment;

pub fn write(w: *std.Io.Writer, line: Line) std.Io.Writer.Error!void {
    try w.writeAll(line.model);
    if (line.context_tokens > 0 or line.window != null) {
        try w.writeAll(" · context ");
        try tokens(w, line.context_tokens);
        if (line.window) |win| {
            try w.writeAll("/");
            try tokens(w, win);
            try w.print(" ({d}%)", .{line.context_tokens * 100 / @max(win, 1)});
        }
    }
    if (line.usage) |u| {
        try w.writeAll(" · turn ");
        try tokens(w, u.input_tokens +| u.cache_read_tokens +| u.cache_write_tokens);
        try w.writeAll(" in, ");
        try tokens(w, u.output_tokens);
        try w.writeAll(" out");
        if (line.cost) |dollars| try w.print(" · ${d:.4}", .{dollars});
    }
    for (line.segments) |seg| try w.print(" · {s}", .{seg.text});
}

/// 950, 12.3k, 1.2M
fn tokens(w: *std.Io.Writer, n: u64) std.Io.Writer.Error!void {
    const f: f64 = @floatFromInt(n);
    if (n < 1000) return w.print("{d}", .{n});
    if (n < 1_000_000) {
        if (n % 1000 == 0) return w.print("{d}k", .{n / 1000});
        return w.print("{d:.1}k", .{f / 1000});
    }
    return w.print("{d:.1}M", .{f / 1_000_000});
}

test "the status line: model, context against the window, the turn's tokens and cost" {
    var buf: [200]u8 = undefined;
    var w: std.Io.Writer = .fixed(&buf);
    try write(&w, .{ .model = "claude-sonnet-4-5", .context_tokens = 12_345, .window = 200_000, .usage = .{
        .input_tokens = 10_000,
        .cache_read_tokens = 200,
        .output_tokens = 340,
    }, .cost = 0.03516 });
    try std.testing.expectEqualStrings("claude-sonnet-4-5 · context 12.3k/200k (6%) · turn 10.2k in, 340 out · $0.0352", w.buffered());
}

test "an unknown model: no window, no cost; a failed turn: no usage" {
    var buf: [200]u8 = undefined;
    var w: std.Io.Writer = .fixed(&buf);
    try write(&w, .{ .model = "emu-1", .context_tokens = 900, .window = null, .usage = .{ .input_tokens = 5, .output_tokens = 7 } });
    try std.testing.expectEqualStrings("emu-1 · context 900 · turn 5 in, 7 out", w.buffered());
    w = .fixed(&buf);
    try write(&w, .{ .model = "emu-1", .context_tokens = 0, .window = null, .usage = null });
    try std.testing.expectEqualStrings("emu-1", w.buffered());
}

test "the extensions' segments come last" {
    var buf: [200]u8 = undefined;
    var w: std.Io.Writer = .fixed(&buf);
    var k1 = "git".*;
    var t1 = "main +2".*;
    var k2 = "tests".*;
    var t2 = "ok".*;
    const segs = [_]Segment{ .{ .key = &k1, .text = &t1 }, .{ .key = &k2, .text = &t2 } };
    try write(&w, .{ .model = "emu-1", .context_tokens = 0, .window = null, .usage = null, .segments = &segs });
    try std.testing.expectEqualStrings("emu-1 · main +2 · ok", w.buffered());
}
