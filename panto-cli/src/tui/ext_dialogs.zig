//! The questions an extension asks on the terminal (ext.ui.confirm, ext.ui.select) and its
//! notices (ext.ui.notify). The keys are read from the terminal itself, as the approval
//! prompt's: the caller has stopped the watcher thread.
const std = @import("std");
const Asker = @import("approval_prompt.zig").Asker;
const Renderer = @import("render.zig").Renderer;
const style = @import("render.zig");
const Level = @import("../lua/ext_ui.zig").Level;

const Writer = std.Io.Writer;
const yellow = "\x1b[33m";

/// One line: info plain, a warning yellow, an error red, each marked.
pub fn notify(r: *Renderer, level: Level, text: []const u8) Writer.Error!void {
    try r.freshLine();
    const color, const mark = switch (level) {
        .info => .{ "", "· " },
        .warning => .{ yellow, "! " },
        .@"error" => .{ style.red, "✗ " },
    };
    try r.out.print("{s}{s}", .{ color, mark });
    try r.clipped(text, r.cols -| 3);
    try r.out.print("{s}\n", .{style.reset});
    try r.out.flush();
}

/// The title and text, then y/n (Enter is no answer: a stray one must not say yes). null:
/// the terminal went away. Esc and Ctrl-C say no.
pub fn confirm(a: *Asker, r: *Renderer, title: []const u8, text: []const u8) Writer.Error!?bool {
    try r.freshLine();
    try r.out.print("{s}{s}? {s}{s}\n", .{ style.bold, style.cyan, title, style.reset });
    if (text.len > 0) try r.textLine(text);
    try r.out.print("{s}[y] yes  [n] no{s}\n", .{ style.dim, style.reset });
    try r.out.flush();
    while (true) {
        const key = a.readKey() orelse return null;
        const yes = switch (key) {
            .char => |ch| switch (ch[0]) {
                'y', 'Y' => true,
                'n', 'N' => false,
                else => continue,
            },
            .escape => false,
            .ctrl => |c| if (c == 'c') false else continue,
            else => continue,
        };
        try r.out.print("{s}  {s}{s}\n", .{ style.dim, if (yes) "yes" else "no", style.reset });
        try r.out.flush();
        return yes;
    }
}

pub const Picked = union(enum) { index: usize, none, closed };

/// The options, one a row, the chosen one marked; ↑/↓ move, Enter picks, a digit 1-9 picks
/// that option, Esc or Ctrl-C picks none.
pub fn select(a: *Asker, r: *Renderer, title: []const u8, options: []const []const u8) Writer.Error!Picked {
    try r.freshLine();
    try r.out.print("{s}{s}? {s}{s}\n", .{ style.bold, style.cyan, title, style.reset });
    var at: usize = 0;
    try drawOptions(r, options, at);
    try r.out.print("{s}↑/↓ move · Enter pick · Esc none{s}\n", .{ style.dim, style.reset });
    try r.out.flush();
    while (true) {
        const key = a.readKey() orelse return .closed;
        const picked: Picked = switch (key) {
            .up, .down => {
                at = if (key == .up) (if (at == 0) options.len - 1 else at - 1) else (at + 1) % options.len;
                // Back to the first option's row, the rows written again.
                try r.out.print("\x1b[{d}A\r", .{options.len + 1});
                try drawOptions(r, options, at);
                try r.out.writeAll("\x1b[1B\r");
                try r.out.flush();
                continue;
            },
            .enter => .{ .index = at },
            .char => |ch| if (ch[0] >= '1' and ch[0] <= '9' and ch[0] - '1' < options.len) .{ .index = ch[0] - '1' } else continue,
            .escape => .none,
            .ctrl => |c| if (c == 'c') .none else continue,
            else => continue,
        };
        try r.out.writeAll(style.dim ++ "  ");
        switch (picked) {
            .index => |i| try r.clipped(options[i], r.cols -| 3),
            else => try r.out.writeAll("none"),
        }
        try r.out.print("{s}\n", .{style.reset});
        try r.out.flush();
        return picked;
    }
}

fn drawOptions(r: *Renderer, options: []const []const u8, at: usize) Writer.Error!void {
    for (options, 0..) |option, i| {
        try r.out.writeAll("\x1b[2K");
        if (i == at) try r.out.writeAll(style.bold ++ "› ") else try r.out.writeAll("  ");
        if (i < 9) try r.out.print("{d}. ", .{i + 1}) else try r.out.writeAll("   ");
        try r.clipped(option, r.cols -| 6);
        try r.out.print("{s}\n", .{style.reset});
    }
}
