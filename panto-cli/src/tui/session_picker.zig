//! A list of sessions to pick one from, a row each; ↑/↓ (Ctrl-P/N) move, Enter takes the one
//! shown in reverse, Esc or Ctrl-C leaves. The list is taken off the screen after.
//! --resume and /resume: this folder's sessions, newest first (their last change, message
//! count, name and first prompt); /tree: the fork tree's rows (session_tree.zig); /model:
//! the catalog's models of the provider.
const std = @import("std");
const panto = @import("panto");
const keys = @import("keys.zig");
const terminal = @import("terminal.zig");
const session_list = @import("../session_list.zig");

const Writer = std.Io.Writer;
const stdin_fd: std.c.fd_t = 0;
const stdout_fd: std.c.fd_t = 1;

/// A row of the list: what picking it gives (a session's id, a model's name) and the text
/// shown for it (one line).
pub const Row = struct { id: []const u8, text: []const u8 };

/// --resume, before interactive mode: the terminal is made raw for the picker alone. The id
/// picked (borrowed from `sessions`), or null when the user left.
pub fn pick(arena: std.mem.Allocator, sessions: []const panto.session.Listed, out: *Writer) !?[]const u8 {
    var raw = try terminal.Raw.enter(stdin_fd);
    defer raw.restore();
    return choose(arena, try rowsOf(arena, sessions), try resumeTitle(arena, sessions.len), 0, out);
}

/// The header of the sessions' list.
pub fn resumeTitle(arena: std.mem.Allocator, count: usize) ![]const u8 {
    return std.fmt.allocPrint(arena, "\x1b[1mResume a session\x1b[0m \x1b[2m({d} in this folder; type to filter, ↑/↓, Enter resumes, Esc leaves)\x1b[0m", .{count});
}

/// The sessions' rows (`row`), in the arena.
pub fn rowsOf(arena: std.mem.Allocator, sessions: []const panto.session.Listed) ![]Row {
    const rows = try arena.alloc(Row, sessions.len);
    for (sessions, rows) |l, *r| {
        var w: Writer.Allocating = .init(arena);
        row(&w.writer, l) catch return error.OutOfMemory;
        r.* = .{ .id = l.id, .text = w.written() };
    }
    return rows;
}

/// The picker on a terminal already raw (interactive mode's, whose input is not flushed):
/// `title` is its header's line; `selected` is the row selected first. Typed text filters the
/// rows (those holding it, case aside; Backspace takes it back). The id picked (borrowed from
/// `rows`), or null when the user left. `gpa` holds the filtered list while it runs.
pub fn choose(gpa: std.mem.Allocator, rows: []const Row, title: []const u8, selected: usize, out: *Writer) !?[]const u8 {
    std.debug.assert(rows.len > 0);
    var view: View = .{ .rows = rows, .matches = try gpa.alloc(usize, rows.len) };
    defer gpa.free(view.matches);
    view.refilter();
    view.selected = @min(selected, rows.len - 1);
    var pending: [64]u8 = undefined;
    var pending_len: usize = 0;
    var char: [4]u8 = undefined;
    while (true) {
        try view.draw(out, title, terminal.size(stdout_fd));
        try out.flush();
        const key = readKey(&pending, &pending_len, &char) orelse return view.leave(out, null);
        switch (key) {
            .up => view.move(-1),
            .down => view.move(1),
            .enter => if (view.shown > 0) return view.leave(out, rows[view.matches[view.selected]].id),
            .escape => return view.leave(out, null),
            .char => |text| view.typed(text),
            .backspace => view.untype(),
            .ctrl => |c| switch (c) {
                'p' => view.move(-1),
                'n' => view.move(1),
                'c', 'd' => return view.leave(out, null),
                else => {},
            },
            else => {},
        }
    }
}

const View = struct {
    rows: []const Row,
    /// The indexes of the rows that hold the filter, the first `shown` of them.
    matches: []usize,
    shown: usize = 0,
    filter: [64]u8 = undefined,
    filter_len: usize = 0,
    /// Of the rows shown (an index of `matches`).
    selected: usize = 0,
    /// The first session shown (the list scrolls to keep the selected one on screen).
    top: usize = 0,
    /// The rows drawn last, the cursor left on the last.
    drawn: usize = 0,

    fn move(v: *View, by: i2) void {
        if (by < 0 and v.selected > 0) v.selected -= 1;
        if (by > 0 and v.selected + 1 < v.shown) v.selected += 1;
    }

    fn typed(v: *View, text: []const u8) void {
        if (v.filter_len + text.len > v.filter.len) return;
        @memcpy(v.filter[v.filter_len..][0..text.len], text);
        v.filter_len += text.len;
        v.refilter();
    }

    fn untype(v: *View) void {
        if (v.filter_len == 0) return;
        v.filter_len -= 1;
        while (v.filter_len > 0 and v.filter[v.filter_len] & 0xc0 == 0x80) v.filter_len -= 1; // a whole character
        v.refilter();
    }

    /// The rows holding the filter; the first of them selected.
    fn refilter(v: *View) void {
        const f = v.filter[0..v.filter_len];
        v.shown = 0;
        for (v.rows, 0..) |r, i| if (f.len == 0 or std.ascii.indexOfIgnoreCase(r.text, f) != null) {
            v.matches[v.shown] = i;
            v.shown += 1;
        };
        v.selected = 0;
        v.top = 0;
    }

    fn draw(v: *View, out: *Writer, title: []const u8, size: terminal.Size) !void {
        // A header, the rows, a row left for the cursor: at least one session shown.
        const room: usize = @max(1, @as(usize, size.rows) -| 3);
        if (v.selected < v.top) v.top = v.selected;
        if (v.selected >= v.top + room) v.top = v.selected + 1 - room;
        const shown = v.matches[v.top..@min(v.shown, v.top + room)];
        try v.erase(out);
        try out.print("{s}", .{title});
        if (v.filter_len > 0) try out.print(" filter: {s}", .{v.filter[0..v.filter_len]});
        try out.writeAll("\x1b[K");
        for (shown, v.top..) |r, i| {
            try out.writeAll("\r\n");
            if (i == v.selected) try out.writeAll("\x1b[7m");
            try cut(out, v.rows[r].text, size.cols);
            try out.writeAll("\x1b[0m\x1b[K");
        }
        if (shown.len == 0) try out.writeAll("\r\n\x1b[2m(no row holds it: Backspace)\x1b[0m\x1b[K");
        v.drawn = @max(shown.len, 1) + 1;
    }

    /// Back to the header's row, what was drawn cleared a row at a time (tmux keeps a screen
    /// cleared from its top corner with ESC [J in its scrollback).
    fn erase(v: *View, out: *Writer) !void {
        if (v.drawn > 1) try out.print("\x1b[{d}A", .{v.drawn - 1});
        for (0..v.drawn) |i| try out.writeAll(if (i + 1 < v.drawn) "\r\x1b[2K\x1b[B" else "\r\x1b[2K");
        if (v.drawn > 1) try out.print("\x1b[{d}A", .{v.drawn - 1});
        try out.writeAll("\r");
        v.drawn = 0;
    }

    fn leave(v: *View, out: *Writer, id: ?[]const u8) !?[]const u8 {
        try v.erase(out);
        try out.flush();
        return id;
    }
};

/// "2026-12-06 14:35    4  [name] first prompt".
fn row(w: *Writer, l: panto.session.Listed) !void {
    try session_list.writeMinutes(w, l.updated);
    try w.print("  {d:>4}  ", .{l.message_count});
    if (l.name) |n| try w.print("[{s}] ", .{n});
    try session_list.writePrompt(w, l.first_user_text);
}

/// `text` cut to the terminal's width: whole characters, so the row stays one row.
fn cut(out: *Writer, text: []const u8, cols: u16) !void {
    var it = (std.unicode.Utf8View.init(text) catch return out.writeAll(text)).iterator();
    var n: usize = 0;
    while (it.nextCodepointSlice()) |cp| : (n += 1) {
        if (n + 1 >= cols) break;
        try out.writeAll(if (cp.len == 1 and cp[0] < 0x20) " " else cp);
    }
}

/// One key; null when the terminal is closed. A lone ESC waits a moment for the rest of a
/// sequence (an arrow key is no Escape). A character's text is copied to `char`.
fn readKey(pending: *[64]u8, len: *usize, char: *[4]u8) ?keys.Key {
    while (true) {
        if (len.* > 0) {
            const lone_escape = len.* == 1 and pending[0] == 0x1b;
            if (!lone_escape or !moreWithin(50)) if (keys.decode(pending[0..len.*])) |d| {
                var key = d.key;
                if (key == .char) {
                    // (its text points at the bytes about to move)
                    @memcpy(char[0..key.char.len], key.char);
                    key = .{ .char = char[0..key.char.len] };
                }
                std.mem.copyForwards(u8, pending[0 .. len.* - d.len], pending[d.len..len.*]);
                len.* -= d.len;
                return key;
            };
        }
        if (len.* == pending.len) len.* = 0; // too long to be one key
        const n = std.c.read(stdin_fd, pending[len.*..].ptr, pending.len - len.*);
        if (n == 0) return null;
        if (n < 0) {
            if (std.c.errno(n) == .INTR) continue;
            return null;
        }
        len.* += @intCast(n);
    }
}

fn moreWithin(ms: c_int) bool {
    var fds = [_]std.c.pollfd{.{ .fd = stdin_fd, .events = std.c.POLL.IN, .revents = 0 }};
    return std.c.poll(&fds, 1, ms) > 0;
}

test "typed text filters the rows, case aside; Backspace takes back a whole character" {
    const rows = [_]Row{
        .{ .id = "a", .text = "claude-haiku-4-5  200k in" },
        .{ .id = "b", .text = "claude-sonnet-4-5  200k in" },
        .{ .id = "c", .text = "Crème brûlée" },
    };
    var matches: [rows.len]usize = undefined;
    var v: View = .{ .rows = &rows, .matches = &matches };
    v.refilter();
    try std.testing.expectEqual(@as(usize, 3), v.shown);
    v.typed("HAIKU");
    try std.testing.expectEqual(@as(usize, 1), v.shown);
    try std.testing.expectEqualStrings("a", rows[v.matches[v.selected]].id);
    v.move(1); // (one row: stays)
    try std.testing.expectEqual(@as(usize, 0), v.selected);
    for (0..5) |_| v.untype();
    v.typed("û");
    try std.testing.expectEqual(@as(usize, 1), v.shown);
    try std.testing.expectEqualStrings("c", rows[v.matches[0]].id);
    v.untype(); // both bytes of û
    try std.testing.expectEqual(@as(usize, 0), v.filter_len);
    try std.testing.expectEqual(@as(usize, 3), v.shown);
    v.typed("zz");
    try std.testing.expectEqual(@as(usize, 0), v.shown);
}
