//! The status line after each turn: the model, the context used against the model's window
//! (when known), the turn's tokens, and its cost (for models of the price table below).
//!
//!   claude-sonnet-4-5 · context 12.3k/200k (6%) · turn 10.2k in, 340 out · $0.0358
const std = @import("std");
const panto = @import("panto");

/// US dollars per million tokens: input, output, cache read, cache write; by the longest
/// prefix of the model's name. The providers' list prices when this was written (docs/cli.md
/// says the cost is an estimate); a model not here shows no cost.
const Price = struct { []const u8, f64, f64, f64, f64 };
const prices = [_]Price{
    .{ "claude-opus-4-5", 5, 25, 0.5, 6.25 },
    .{ "claude-opus-4", 15, 75, 1.5, 18.75 },
    .{ "claude-3-opus", 15, 75, 1.5, 18.75 },
    .{ "claude-sonnet-4", 3, 15, 0.3, 3.75 },
    .{ "claude-3-7-sonnet", 3, 15, 0.3, 3.75 },
    .{ "claude-3-5-sonnet", 3, 15, 0.3, 3.75 },
    .{ "claude-haiku-4-5", 1, 5, 0.1, 1.25 },
    .{ "claude-3-5-haiku", 0.8, 4, 0.08, 1 },
    .{ "claude-3-haiku", 0.25, 1.25, 0.03, 0.3 },
    .{ "gpt-5-nano", 0.05, 0.4, 0.005, 0.05 },
    .{ "gpt-5-mini", 0.25, 2, 0.025, 0.25 },
    .{ "gpt-5-pro", 15, 120, 15, 15 },
    .{ "gpt-5", 1.25, 10, 0.125, 1.25 },
    .{ "gpt-4.1-nano", 0.1, 0.4, 0.025, 0.1 },
    .{ "gpt-4.1-mini", 0.4, 1.6, 0.1, 0.4 },
    .{ "gpt-4.1", 2, 8, 0.5, 2 },
    .{ "gpt-4o-mini", 0.15, 0.6, 0.075, 0.15 },
    .{ "gpt-4o", 2.5, 10, 1.25, 2.5 },
    .{ "o4-mini", 1.1, 4.4, 0.275, 1.1 },
    .{ "o3-mini", 1.1, 4.4, 0.55, 1.1 },
    .{ "o3-pro", 20, 80, 20, 20 },
    .{ "o3", 2, 8, 0.5, 2 },
    .{ "o1-mini", 1.1, 4.4, 0.55, 1.1 },
    .{ "o1-pro", 150, 600, 150, 150 },
    .{ "o1", 15, 60, 7.5, 15 },
};

/// The turn's cost in dollars, or null for a model without a known price.
pub fn cost(model: []const u8, u: panto.Usage) ?f64 {
    var best: ?Price = null;
    for (prices) |p| {
        if (std.mem.startsWith(u8, model, p[0]) and (best == null or p[0].len > best.?[0].len)) best = p;
    }
    const p = best orelse return null;
    const per = 1_000_000.0;
    return (@as(f64, @floatFromInt(u.input_tokens)) * p[1] + @as(f64, @floatFromInt(u.output_tokens)) * p[2] +
        @as(f64, @floatFromInt(u.cache_read_tokens)) * p[3] + @as(f64, @floatFromInt(u.cache_write_tokens)) * p[4]) / per;
}

pub const Line = struct {
    model: []const u8,
    /// Tokens the context holds after the turn (the last request's input and output).
    context_tokens: u64,
    /// The model's window, when known (config compaction.context_window, else the table).
    window: ?u64,
    /// The turn's usage (every request of the turn summed), null for a turn that failed
    /// before any.
    usage: ?panto.Usage,
};

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
    const u = line.usage orelse return;
    try w.writeAll(" · turn ");
    try tokens(w, u.input_tokens +| u.cache_read_tokens +| u.cache_write_tokens);
    try w.writeAll(" in, ");
    try tokens(w, u.output_tokens);
    try w.writeAll(" out");
    if (cost(line.model, u)) |dollars| try w.print(" · ${d:.4}", .{dollars});
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
    } });
    // 10000*3 + 340*15 + 200*0.3 = 35160 micro-dollars
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
    try std.testing.expectEqual(null, cost("emu-1", .{}));
    try std.testing.expectEqual(@as(?f64, 15.0 + 75.0), cost("claude-opus-4-1", .{ .input_tokens = 1_000_000, .output_tokens = 1_000_000 }));
    // The longest prefix wins: a -mini or -pro is not priced as its family's base model.
    try std.testing.expectEqual(@as(?f64, 1.1 + 4.4), cost("o3-mini-2025-01-31", .{ .input_tokens = 1_000_000, .output_tokens = 1_000_000 }));
    try std.testing.expectEqual(@as(?f64, 15.0 + 120.0), cost("gpt-5-pro", .{ .input_tokens = 1_000_000, .output_tokens = 1_000_000 }));
}
