//! The questions an extension asks on the terminal (ext.ui.confirm, select, input) and its
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

/// The title, then a line to type on ("› ", the placeholder dim until the first key): Enter
/// gives the text (in `a.reason`, until the next question), Esc or Ctrl-C none (false).
pub fn input(a: *Asker, r: *Renderer, title: []const u8, placeholder: []const u8) Writer.Error!bool {
    try r.freshLine();
    try r.out.print("{s}{s}? {s}{s}\n", .{ style.bold, style.cyan, title, style.reset });
    try r.out.print("{s}Enter send · Esc none{s}\n", .{ style.dim, style.reset });
    try r.out.writeAll("› ");
    if (placeholder.len > 0) {
        try r.out.writeAll(style.dim);
        try r.clipped(placeholder, r.cols -| 3);
        try r.out.writeAll(style.reset ++ "\r› ");
    }
    try r.out.flush();
    if (try a.readLine(r.out, placeholder.len > 0)) return true;
    try r.out.print("\r\x1b[2K{s}  none{s}\n", .{ style.dim, style.reset });
    try r.out.flush();
    return false;
}

pub const Picked = union(enum) { index: usize, none, closed };

/// The options, one a row, the chosen one marked; ↑/↓ move, Enter picks, a digit 1-9 picks
/// that option, Esc or Ctrl-C picks none. More options than the screen has rows: a window of
/// them that follows the mark, the hint saying where it is.
pub fn select(a: *Asker, r: *Renderer, title: []const u8, options: []const []const u8) Writer.Error!Picked {
    try r.freshLine();
    try r.out.print("{s}{s}? {s}{s}\n", .{ style.bold, style.cyan, title, style.reset });
    const rows = @min(options.len, @max(r.rows -| 4, 3));
    var list: List = .{ .options = options, .rows = rows };
    try list.draw(r);
    try r.out.flush();
    while (true) {
        const key = a.readKey() orelse return .closed;
        const picked: Picked = switch (key) {
            .up, .down => {
                list.move(key == .up);
                // Back to the window's first row, its rows and the hint written again.
                try r.out.print("\x1b[{d}A\r", .{rows + 1});
                try list.draw(r);
                try r.out.flush();
                continue;
            },
            .enter => .{ .index = list.at },
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

/// The options' window: `rows` of them from `top`, the one at `at` marked.
const List = struct {
    options: []const []const u8,
    rows: usize,
    at: usize = 0,
    top: usize = 0,

    fn move(l: *List, up: bool) void {
        const n = l.options.len;
        l.at = if (up) (if (l.at == 0) n - 1 else l.at - 1) else (l.at + 1) % n;
        if (l.at < l.top) l.top = l.at;
        if (l.at >= l.top + l.rows) l.top = l.at + 1 - l.rows;
    }

    fn draw(l: *const List, r: *Renderer) Writer.Error!void {
        for (l.options[l.top .. l.top + l.rows], l.top..) |option, i| {
            try r.out.writeAll("\x1b[2K");
            if (i == l.at) try r.out.writeAll(style.bold ++ "› ") else try r.out.writeAll("  ");
            if (i < 9) try r.out.print("{d}. ", .{i + 1}) else try r.out.writeAll("   ");
            try r.clipped(option, r.cols -| 6);
            try r.out.print("{s}\n", .{style.reset});
        }
        try r.out.print("\x1b[2K{s}↑/↓ move · Enter pick · 1-9 pick · Esc none", .{style.dim});
        if (l.rows < l.options.len) try r.out.print(" · {d}/{d}", .{ l.at + 1, l.options.len });
        try r.out.print("{s}\n", .{style.reset});
    }
};
