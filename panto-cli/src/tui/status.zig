//! The status line after each turn: the model, the context used against the model's window
//! (when known), the turn's tokens and cost (the core's, at the model catalog's list prices;
//! none for a model the catalog lacks), then the session's so far (App.spent).
//!
//!   claude-sonnet-4-5 · context 12.3k/200k (6%) · turn 10.2k in, 340 out · $0.0358 · session 31k in (20k cache read), 1.1k out · $0.0871
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
    /// The session's usage and cost so far, this turn's included; null: not shown.
    session: ?panto.catalog.Spent = null,
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
    if (line.session) |s| if (s.usage.input_tokens > 0 or s.usage.output_tokens > 0 or s.usage.cache_read_tokens > 0 or s.usage.cache_write_tokens > 0) {
        try w.writeAll(" · session ");
        try totals(w, s);
    };
    for (line.segments) |seg| try w.print(" · {s}", .{seg.text});
}

/// A session's totals: `31k in (20k cache read, 2k cache write), 1.1k out · $0.0871`, the
/// cache's parts only when not 0, the cost only when known (/session shows them too).
pub fn totals(w: *std.Io.Writer, s: panto.catalog.Spent) std.Io.Writer.Error!void {
    const u = s.usage;
    try tokens(w, u.input_tokens +| u.cache_read_tokens +| u.cache_write_tokens);
    try w.writeAll(" in");
    if (u.cache_read_tokens > 0 or u.cache_write_tokens > 0) {
        try w.writeAll(" (");
        if (u.cache_read_tokens > 0) {
            try tokens(w, u.cache_read_tokens);
            try w.writeAll(" cache read");
        }
        if (u.cache_write_tokens > 0) {
            if (u.cache_read_tokens > 0) try w.writeAll(", ");
            try tokens(w, u.cache_write_tokens);
            try w.writeAll(" cache write");
        }
        try w.writeAll(")");
    }
    try w.writeAll(", ");
    try tokens(w, u.output_tokens);
    try w.writeAll(" out");
    if (s.cost) |dollars| try w.print(" · ${d:.4}", .{dollars});
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

test "the session's totals after the turn's: cache parts when not 0, the cost when known" {
    var buf: [300]u8 = undefined;
    var w: std.Io.Writer = .fixed(&buf);
    try write(&w, .{ .model = "m", .context_tokens = 0, .window = null, .usage = .{ .input_tokens = 5, .output_tokens = 7 }, .cost = 0.5, .session = .{
        .usage = .{ .input_tokens = 1000, .cache_read_tokens = 20_000, .cache_write_tokens = 10_000, .output_tokens = 1100 },
        .cost = 0.08714,
    } });
    try std.testing.expectEqualStrings("m · turn 5 in, 7 out · $0.5000 · session 31k in (20k cache read, 10k cache write), 1.1k out · $0.0871", w.buffered());
    // A failed turn (no usage) still shows the session's; an unknown cost is not shown.
    w = .fixed(&buf);
    try write(&w, .{ .model = "m", .context_tokens = 0, .window = null, .usage = null, .session = .{ .usage = .{ .input_tokens = 5, .cache_write_tokens = 2, .output_tokens = 7 }, .cost = null } });
    try std.testing.expectEqualStrings("m · session 7 in (2 cache write), 7 out", w.buffered());
    // Nothing spent yet: no session part.
    w = .fixed(&buf);
    try write(&w, .{ .model = "m", .context_tokens = 0, .window = null, .usage = null, .session = .{} });
    try std.testing.expectEqualStrings("m", w.buffered());
}
