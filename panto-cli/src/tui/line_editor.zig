//! The prompt's line editor: one text, which newlines (Alt-Enter, Shift-Enter, a paste) make
//! rows of, the prompt growing a terminal row for each; the cursor's row scrolls sideways
//! when it is wider than the terminal. Keys in, actions out; drawing is a separate call, so
//! both are testable without a terminal.
//!
//!   Left/Right, Ctrl-B/F       a character        Home/End, Ctrl-A/E   start/end of line
//!   Ctrl-Left/Right, Alt-B/F   a word             Backspace, Delete    a character
//!   Ctrl-U / Ctrl-K            to the start/end   Ctrl-W, Alt-Bksp     the word before
//!   Up/Down, Ctrl-P/N          history            Tab                  complete a /command, an @path
//!   Ctrl-C  clear the line     Ctrl-D  exit (empty line) or delete     Ctrl-L  clear screen
//!   Ctrl-T  show/hide thinking         Ctrl-Z  suspend (fg continues)
//!   Alt-Enter, Shift-Enter  a newline  Ctrl-G  the text in $EDITOR
//!   Ctrl-R  search the history (again: an older match; Enter sends, Esc/Ctrl-G gives up,
//!           another key keeps the match to edit)
const std = @import("std");
const path_complete = @import("path_complete.zig");
const Allocator = std.mem.Allocator;
const keys = @import("keys.zig");
const width = @import("width.zig");
const History = @import("history.zig").History;

pub const Action = union(enum) {
    none,
    /// Enter: the line (owned by the editor until the next key).
    submit: []const u8,
    /// Ctrl-D on an empty line.
    eof,
    /// Ctrl-C: the line was cleared (`had_text` false: it was empty already).
    interrupt: struct { had_text: bool },
    clear_screen,
    toggle_thinking,
    /// Ctrl-O: the last tool result whole, and the later ones (again: folded).
    show_result,
    /// Ctrl-Z: stop as a shell's job.
    suspend_job,
    /// Ctrl-G: edit the text in $EDITOR (the caller runs it, then `setText`).
    edit_externally,
};

pub const Editor = struct {
    gpa: Allocator,
    buf: std.ArrayList(u8) = .empty,
    /// Byte offset of the cursor, on a character boundary.
    cursor: usize = 0,
    /// The first byte shown (the line scrolls when wider than the terminal).
    scroll: usize = 0,
    history: *History,
    /// The history entry shown, or null for the line being written.
    browse: ?usize = null,
    /// The line being written, kept while browsing the history.
    draft: std.ArrayList(u8) = .empty,
    /// Inside a bracketed paste: Enter is a newline in the line.
    pasting: bool = false,
    /// What Tab completes a leading "/" word against.
    completions: []const []const u8 = &.{},
    /// For Tab after "@": the files (none: no path completion).
    io: ?std.Io = null,
    submitted: std.ArrayList(u8) = .empty,
    /// Columns the last draw's widest row took (a terminal made narrower than this reflowed it).
    drawn_width: usize = 0,
    /// The rows the last draw took, and the one the cursor was left on (from the first, 0):
    /// the next draw starts that many rows up.
    drawn_rows: usize = 0,
    cursor_row: usize = 0,
    /// Ctrl-R: the history search under way.
    search: ?Search = null,

    const Search = struct {
        query: std.ArrayList(u8) = .empty,
        /// The history entry matched.
        at: ?usize = null,
        failed: bool = false,
    };

    pub fn init(gpa: Allocator, history: *History) Editor {
        return .{ .gpa = gpa, .history = history };
    }

    pub fn deinit(e: *Editor) void {
        e.buf.deinit(e.gpa);
        e.draft.deinit(e.gpa);
        e.submitted.deinit(e.gpa);
        if (e.search) |*search| search.query.deinit(e.gpa);
    }

    pub fn line(e: *const Editor) []const u8 {
        return e.buf.items;
    }

    pub fn handle(e: *Editor, key: keys.Key) Allocator.Error!Action {
        if (e.search != null and !e.pasting) return e.searchKey(key);
        switch (key) {
            .char => |s| try e.insert(s),
            .tab => if (e.pasting) try e.insert("\t") else try e.complete(),
            .enter => if (e.pasting) try e.insert("\n") else return e.submit(),
            .newline, .alt_enter => try e.insert("\n"),
            .paste_start => e.pasting = true,
            .paste_end => e.pasting = false,
            .backspace => e.deleteRange(e.prevChar(e.cursor), e.cursor),
            .delete => e.deleteRange(e.cursor, e.nextChar(e.cursor)),
            .left => e.cursor = e.prevChar(e.cursor),
            .right => e.cursor = e.nextChar(e.cursor),
            .home => e.cursor = 0,
            .end => e.cursor = e.buf.items.len,
            .word_left => e.cursor = e.prevWord(e.cursor),
            .word_right => e.cursor = e.nextWord(e.cursor),
            .delete_word => e.deleteRange(e.prevWord(e.cursor), e.cursor),
            .up => try e.historyStep(.older),
            .down => try e.historyStep(.newer),
            .ctrl => |letter| return e.control(letter),
            // Alt-Up: the queued lines back, during a turn (turn_input.zig); nothing at the prompt.
            .escape, .unknown, .alt_up => {},
        }
        return .none;
    }

    fn control(e: *Editor, letter: u8) Allocator.Error!Action {
        switch (letter) {
            'a' => e.cursor = 0,
            'e' => e.cursor = e.buf.items.len,
            'b' => e.cursor = e.prevChar(e.cursor),
            'f' => e.cursor = e.nextChar(e.cursor),
            'u' => e.deleteRange(0, e.cursor),
            'k' => e.deleteRange(e.cursor, e.buf.items.len),
            'w' => e.deleteRange(e.prevWord(e.cursor), e.cursor),
            'p' => try e.historyStep(.older),
            'n' => try e.historyStep(.newer),
            'l' => return .clear_screen,
            't' => return .toggle_thinking,
            'o' => return .show_result,
            'r' => try e.startSearch(),
            'z' => return .suspend_job,
            'g' => return .edit_externally,
            'c' => {
                const had_text = e.buf.items.len > 0;
                e.reset();
                return .{ .interrupt = .{ .had_text = had_text } };
            },
            'd' => {
                if (e.buf.items.len == 0) return .eof;
                e.deleteRange(e.cursor, e.nextChar(e.cursor));
            },
            else => {},
        }
        return .none;
    }

    /// The text, replaced (by $EDITOR's), the cursor at its end.
    pub fn setText(e: *Editor, text: []const u8) Allocator.Error!void {
        e.buf.clearRetainingCapacity();
        try e.buf.appendSlice(e.gpa, text);
        e.cursor = text.len;
        e.browse = null;
    }

    fn submit(e: *Editor) Allocator.Error!Action {
        e.submitted.clearRetainingCapacity();
        try e.submitted.appendSlice(e.gpa, e.buf.items);
        e.reset();
        return .{ .submit = e.submitted.items };
    }

    fn reset(e: *Editor) void {
        e.buf.clearRetainingCapacity();
        e.draft.clearRetainingCapacity();
        e.cursor = 0;
        e.scroll = 0;
        e.browse = null;
        e.pasting = false;
    }

    fn insert(e: *Editor, s: []const u8) Allocator.Error!void {
        try e.buf.insertSlice(e.gpa, e.cursor, s);
        e.cursor += s.len;
    }

    fn deleteRange(e: *Editor, from: usize, to: usize) void {
        if (from >= to) return;
        e.buf.replaceRangeAssumeCapacity(from, to - from, &.{});
        e.cursor = from;
    }

    fn prevChar(e: *const Editor, at: usize) usize {
        var i = at;
        while (i > 0) {
            i -= 1;
            if (e.buf.items[i] & 0xc0 != 0x80) break;
        }
        return i;
    }

    fn nextChar(e: *const Editor, at: usize) usize {
        var i = at;
        if (i >= e.buf.items.len) return i;
        i += 1;
        while (i < e.buf.items.len and e.buf.items[i] & 0xc0 == 0x80) i += 1;
        return i;
    }

    fn prevWord(e: *const Editor, at: usize) usize {
        const b = e.buf.items;
        var i = at;
        while (i > 0 and isSpace(b[i - 1])) i -= 1;
        while (i > 0 and !isSpace(b[i - 1])) i -= 1;
        return i;
    }

    fn nextWord(e: *const Editor, at: usize) usize {
        const b = e.buf.items;
        var i = at;
        while (i < b.len and isSpace(b[i])) i += 1;
        while (i < b.len and !isSpace(b[i])) i += 1;
        return i;
    }

    fn historyStep(e: *Editor, direction: enum { older, newer }) Allocator.Error!void {
        const n = e.history.len();
        if (n == 0) return;
        const next: ?usize = switch (direction) {
            .older => if (e.browse) |i| (if (i == 0) return else i - 1) else n - 1,
            .newer => if (e.browse) |i| (if (i + 1 < n) i + 1 else null) else return,
        };
        if (e.browse == null) {
            e.draft.clearRetainingCapacity();
            try e.draft.appendSlice(e.gpa, e.buf.items);
        }
        e.browse = next;
        e.buf.clearRetainingCapacity();
        try e.buf.appendSlice(e.gpa, if (next) |i| e.history.get(i) else e.draft.items);
        e.cursor = e.buf.items.len;
    }

    /// Tab on "/wor": the one command starting so is completed; several: their common prefix.
    /// Tab on a word "@pa" or "@\"my f": the path (path_complete.zig), when `io` was given.
    fn complete(e: *Editor) Allocator.Error!void {
        const b = e.buf.items;
        if (e.io) |io| if (path_complete.wordAt(b[0..e.cursor])) |word| {
            const got = try path_complete.complete(e.gpa, io, b[word.path_start..e.cursor], word.quoted) orelse return;
            defer e.gpa.free(got.insert);
            if (got.open_quote) {
                try e.buf.insert(e.gpa, word.path_start, '"');
                e.cursor += 1;
            }
            return e.insert(got.insert);
        };
        if (b.len == 0 or b[0] != '/' or e.cursor != b.len or std.mem.indexOfScalar(u8, b, ' ') != null) return;
        const typed = b[1..];
        var common: ?[]const u8 = null;
        for (e.completions) |name| {
            if (!std.mem.startsWith(u8, name, typed)) continue;
            common = if (common) |so_far| so_far[0 .. std.mem.indexOfDiff(u8, so_far, name) orelse so_far.len] else name;
        }
        const found = common orelse return;
        var unique = true;
        for (e.completions) |name| {
            if (std.mem.startsWith(u8, name, typed) and !std.mem.eql(u8, name, found)) unique = false;
        }
        try e.insert(found[typed.len..]);
        if (unique) try e.insert(" ");
    }

    fn startSearch(e: *Editor) Allocator.Error!void {
        e.draft.clearRetainingCapacity();
        try e.draft.appendSlice(e.gpa, e.buf.items);
        e.browse = null;
        e.search = .{};
    }

    fn endSearch(e: *Editor, keep_match: bool) Allocator.Error!void {
        var search = e.search orelse return;
        search.query.deinit(e.gpa);
        e.search = null;
        if (keep_match) return;
        e.buf.clearRetainingCapacity();
        try e.buf.appendSlice(e.gpa, e.draft.items);
        e.cursor = e.buf.items.len;
    }

    fn searchKey(e: *Editor, key: keys.Key) Allocator.Error!Action {
        const search = &e.search.?;
        const newest = e.history.len() -| 1;
        switch (key) {
            .char => |ch| {
                try search.query.appendSlice(e.gpa, ch);
                try e.find(search.at orelse newest);
            },
            .backspace => {
                const q = search.query.items;
                var i = q.len;
                while (i > 0) {
                    i -= 1;
                    if (q[i] & 0xc0 != 0x80) break;
                }
                search.query.shrinkRetainingCapacity(i);
                try e.find(newest);
            },
            .escape => try e.endSearch(false),
            .ctrl => |letter| switch (letter) {
                'r' => if (search.at) |at| {
                    if (at > 0) try e.find(at - 1) else search.failed = true;
                },
                'g' => try e.endSearch(false),
                else => {
                    try e.endSearch(true);
                    return e.handle(key);
                },
            },
            else => {
                try e.endSearch(true);
                return e.handle(key);
            },
        }
        return .none;
    }

    /// The newest entry at or before `from` holding the query goes in the line, the cursor
    /// at the match; none: the search says it failed, the line stays.
    fn find(e: *Editor, from: usize) Allocator.Error!void {
        const search = &e.search.?;
        const query = search.query.items;
        var i = @min(from + 1, e.history.len());
        while (i > 0) {
            i -= 1;
            const entry = e.history.get(i);
            const pos = std.mem.indexOf(u8, entry, query) orelse continue;
            search.at = i;
            search.failed = false;
            e.buf.clearRetainingCapacity();
            try e.buf.appendSlice(e.gpa, entry);
            e.cursor = pos;
            return;
        }
        search.failed = true;
    }

    /// Draws the prompt and the text from the row the last draw started on (a row for each
    /// of the text's rows, the later ones indented under the first), the cursor placed.
    pub fn draw(e: *Editor, w: *std.Io.Writer, normal_prompt: []const u8, cols: usize) std.Io.Writer.Error!void {
        var prompt_buf: [128]u8 = undefined;
        const prompt = if (e.search) |search| std.fmt.bufPrint(&prompt_buf, "({s}search: {s}) ", .{
            if (search.failed) "failed " else "", search.query.items,
        }) catch "(search) " else normal_prompt;
        const prompt_cols = width.of(prompt);
        const room = if (cols > prompt_cols + 1) cols - prompt_cols - 1 else 1;
        const b = e.buf.items;
        // The cursor's row scrolls sideways to keep the cursor shown; the others show their start.
        const row_start = if (std.mem.lastIndexOfScalar(u8, b[0..e.cursor], '\n')) |i| i + 1 else 0;
        const cursor_row_end = std.mem.indexOfScalarPos(u8, b, e.cursor, '\n') orelse b.len;
        if (e.scroll < row_start or e.scroll > cursor_row_end) {
            e.scroll = row_start; // the cursor went to another row: it shows from its start
        } else if (e.scroll > e.cursor) e.scroll = e.cursor;
        while (shownWidth(b[e.scroll..e.cursor]) > room) e.scroll = e.nextChar(e.scroll);
        const rows_before = e.drawn_rows;
        if (e.cursor_row > 0) try w.print("\x1b[{d}A", .{e.cursor_row});
        var rows = std.mem.splitScalar(u8, b, '\n');
        var row: usize = 0;
        var at_row: usize = 0;
        var start: usize = 0;
        e.drawn_width = 0;
        while (rows.next()) |text| {
            defer {
                row += 1;
                start += text.len + 1;
            }
            const from = if (start == row_start) e.scroll else start;
            if (start == row_start) at_row = row;
            var end = from;
            const row_end = start + text.len;
            while (end < row_end and shownWidth(b[from..e.nextChar(end)]) <= room) end = e.nextChar(end);
            if (row == 0) {
                try w.writeAll("\r\x1b[1m");
                try w.writeAll(prompt);
                try w.writeAll("\x1b[0m");
            } else {
                try w.writeAll("\n\r");
                try w.splatByteAll(' ', prompt_cols);
            }
            try writeShown(w, b[from..end]);
            e.drawn_width = @max(e.drawn_width, prompt_cols + shownWidth(b[from..end]));
            try w.writeAll("\x1b[K");
        }
        // Rows of a taller text drawn before are cleared.
        if (rows_before > row) try w.writeAll("\x1b[J");
        if (row - 1 > at_row) try w.print("\x1b[{d}A", .{row - 1 - at_row});
        try w.writeAll("\r");
        const at = prompt_cols + shownWidth(b[e.scroll..e.cursor]);
        if (at > 0) try w.print("\x1b[{d}C", .{at});
        e.drawn_rows = row;
        e.cursor_row = at_row;
    }

    /// Takes the drawn prompt off the screen, the cursor where its first row was, before
    /// something else is written there (the line sent, a note).
    pub fn erase(e: *Editor, w: *std.Io.Writer) std.Io.Writer.Error!void {
        if (e.cursor_row > 0) try w.print("\x1b[{d}A", .{e.cursor_row});
        try w.writeAll("\r\x1b[J");
        e.forget();
    }

    /// What was drawn is no longer where the editor thinks (the screen cleared, a shell's
    /// output after a suspend, a reflow): the next draw starts on the cursor's row.
    pub fn forget(e: *Editor) void {
        e.cursor_row = 0;
        e.drawn_rows = 0;
    }
};

fn isSpace(b: u8) bool {
    return b == ' ' or b == '\t' or b == '\n';
}

/// The line as shown: a newline as ↵, a tab as a space.
fn writeShown(w: *std.Io.Writer, s: []const u8) std.Io.Writer.Error!void {
    for (s) |b| switch (b) {
        '\n' => try w.writeAll("↵"),
        '\t' => try w.writeByte(' '),
        else => try w.writeByte(b),
    };
}

fn shownWidth(s: []const u8) usize {
    var n = width.of(s);
    for (s) |b| if (b == '\n' or b == '\t') {
        n += 1;
    };
    return n;
}

const testing = std.testing;

fn feed(e: *Editor, bytes: []const u8) !Action {
    var last: Action = .none;
    var rest = bytes;
    while (rest.len > 0) {
        const d = keys.decode(rest) orelse return error.TestUnexpectedResult;
        last = try e.handle(d.key);
        rest = rest[d.len..];
    }
    return last;
}

test "editing: insert, move, delete, words, kill to either end" {
    var h = History.init(testing.allocator, testing.io, null, 10);
    defer h.deinit();
    var e = Editor.init(testing.allocator, &h);
    defer e.deinit();
    _ = try feed(&e, "hello world");
    _ = try feed(&e, "\x1b[D\x1b[D\x1b[D\x1b[D\x1b[D"); // before "world"
    _ = try feed(&e, "big ");
    try testing.expectEqualStrings("hello big world", e.line());
    _ = try feed(&e, "\x17"); // Ctrl-W: "big "
    try testing.expectEqualStrings("hello world", e.line());
    _ = try feed(&e, "\x01\x1b[3~"); // Home, Delete
    try testing.expectEqualStrings("ello world", e.line());
    _ = try feed(&e, "\x05\x7f\x7f"); // End, Backspace x2
    try testing.expectEqualStrings("ello wor", e.line());
    _ = try feed(&e, "\x1bb\x0b"); // Alt-B, Ctrl-K
    try testing.expectEqualStrings("ello ", e.line());
    _ = try feed(&e, "é\x1b[D\x15"); // a two-byte char, Left, Ctrl-U
    try testing.expectEqualStrings("é", e.line());
    try testing.expectEqual(@as(usize, 0), e.cursor);
}

test "Enter submits and clears; Ctrl-C clears; Ctrl-D exits only on an empty line" {
    var h = History.init(testing.allocator, testing.io, null, 10);
    defer h.deinit();
    var e = Editor.init(testing.allocator, &h);
    defer e.deinit();
    _ = try feed(&e, "abc");
    try testing.expectEqualDeep(Action{ .interrupt = .{ .had_text = true } }, try feed(&e, "\x03"));
    try testing.expectEqualStrings("", e.line());
    try testing.expectEqualDeep(Action{ .interrupt = .{ .had_text = false } }, try feed(&e, "\x03"));
    _ = try feed(&e, "xy\x01");
    try testing.expectEqual(Action.none, try feed(&e, "\x04")); // deletes the x
    try testing.expectEqualStrings("y", e.line());
    const a = try feed(&e, "\r");
    try testing.expectEqualStrings("y", a.submit);
    try testing.expectEqualStrings("", e.line());
    try testing.expectEqual(Action.eof, try feed(&e, "\x04"));
}

test "history: Up goes back, Down returns to the draft; a paste keeps its newlines" {
    var h = History.init(testing.allocator, testing.io, null, 10);
    defer h.deinit();
    try h.add("one");
    try h.add("two");
    var e = Editor.init(testing.allocator, &h);
    defer e.deinit();
    _ = try feed(&e, "dra");
    _ = try feed(&e, "\x1b[A");
    try testing.expectEqualStrings("two", e.line());
    _ = try feed(&e, "\x1b[A\x1b[A"); // stops at the oldest
    try testing.expectEqualStrings("one", e.line());
    _ = try feed(&e, "\x1b[B\x1b[B");
    try testing.expectEqualStrings("dra", e.line());
    _ = try feed(&e, "\x15\x1b[200~a\rb\x1b[201~");
    const a = try feed(&e, "\r");
    try testing.expectEqualStrings("a\nb", a.submit);
}

test "Tab completes a slash command: the unique one with a space, else the common prefix" {
    var h = History.init(testing.allocator, testing.io, null, 10);
    defer h.deinit();
    var e = Editor.init(testing.allocator, &h);
    defer e.deinit();
    e.completions = &.{ "model", "session", "search" };
    _ = try feed(&e, "/mo\t");
    try testing.expectEqualStrings("/model ", e.line());
    _ = try feed(&e, "\x15/s\t");
    try testing.expectEqualStrings("/se", e.line()); // session and search share "se"
    _ = try feed(&e, "\t");
    try testing.expectEqualStrings("/se", e.line());
    _ = try feed(&e, "s\t");
    try testing.expectEqualStrings("/session ", e.line());
}

test "drawing: prompt, line, cursor column; a long line scrolls to keep the cursor shown" {
    var h = History.init(testing.allocator, testing.io, null, 10);
    defer h.deinit();
    var e = Editor.init(testing.allocator, &h);
    defer e.deinit();
    var out: std.Io.Writer.Allocating = .init(testing.allocator);
    defer out.deinit();
    _ = try feed(&e, "xy\x1b[D");
    try e.draw(&out.writer, "> ", 80);
    try testing.expectEqualStrings("\r\x1b[1m> \x1b[0mxy\x1b[K\r\x1b[3C", out.written());
    out.clearRetainingCapacity();
    _ = try feed(&e, "\x05\x15abcdefghij");
    try e.draw(&out.writer, "> ", 8); // room for 5 columns
    try testing.expectEqualStrings("\r\x1b[1m> \x1b[0mfghij\x1b[K\r\x1b[7C", out.written());
}

test "drawing: a newline (Alt-Enter, Shift-Enter, a paste) grows the prompt a row; the next draw starts at its top" {
    var h = History.init(testing.allocator, testing.io, null, 10);
    defer h.deinit();
    var e = Editor.init(testing.allocator, &h);
    defer e.deinit();
    var out: std.Io.Writer.Allocating = .init(testing.allocator);
    defer out.deinit();
    _ = try feed(&e, "ab\x1b\rcd\x1b[13;2uef\x1b[D");
    try testing.expectEqualStrings("ab\ncd\nef", e.line());
    try e.draw(&out.writer, "> ", 80);
    // Three rows, the cursor on the last one before "f".
    try testing.expectEqualStrings("\r\x1b[1m> \x1b[0mab\x1b[K\n\r  cd\x1b[K\n\r  ef\x1b[K\r\x1b[3C", out.written());
    out.clearRetainingCapacity();
    _ = try feed(&e, "\x1b[A"); // history (empty): nothing moves
    _ = try feed(&e, "\x01"); // Home: the start of the text, on the first row
    try e.draw(&out.writer, "> ", 80);
    try testing.expectEqualStrings("\x1b[2A\r\x1b[1m> \x1b[0mab\x1b[K\n\r  cd\x1b[K\n\r  ef\x1b[K\x1b[2A\r\x1b[2C", out.written());
    out.clearRetainingCapacity();
    _ = try feed(&e, "\x0b"); // Ctrl-K: one row left, the two below cleared
    try e.draw(&out.writer, "> ", 80);
    try testing.expectEqualStrings("\r\x1b[1m> \x1b[0m\x1b[K\x1b[J\r\x1b[2C", out.written());
    out.clearRetainingCapacity();
    _ = try feed(&e, "x\x1b\ry");
    try e.draw(&out.writer, "> ", 80);
    out.clearRetainingCapacity();
    _ = try feed(&e, "\x7f\x7f"); // the second row taken off: the first shows whole, the cursor on it
    try e.draw(&out.writer, "> ", 80);
    try testing.expectEqualStrings("\x1b[1A\r\x1b[1m> \x1b[0mx\x1b[K\x1b[J\r\x1b[3C", out.written());
    _ = try feed(&e, "\x1b\ry");
    try e.draw(&out.writer, "> ", 80);
    try e.erase(&out.writer);
    try testing.expect(std.mem.endsWith(u8, out.written(), "\x1b[1A\r\x1b[J"));
    try testing.expectEqual(Action.edit_externally, try feed(&e, "\x07"));
    try e.setText("from the editor\n");
    try testing.expectEqualStrings("from the editor\n", e.line());
}

test "Ctrl-R searches the history: newest match first, again for older; Esc gives up" {
    var h = History.init(testing.allocator, testing.io, null, 10);
    defer h.deinit();
    try h.add("git status");
    try h.add("make test");
    try h.add("git log");
    var e = Editor.init(testing.allocator, &h);
    defer e.deinit();
    _ = try feed(&e, "draft\x12gi");
    try testing.expectEqualStrings("git log", e.line());
    _ = try feed(&e, "\x12");
    try testing.expectEqualStrings("git status", e.line());
    _ = try feed(&e, "\x12"); // no older one: stays, says it failed
    try testing.expectEqualStrings("git status", e.line());
    try testing.expect(e.search.?.failed);
    var out: std.Io.Writer.Allocating = .init(testing.allocator);
    defer out.deinit();
    try e.draw(&out.writer, "> ", 80);
    try testing.expectEqualStrings("\r\x1b[1m(failed search: gi) \x1b[0mgit status\x1b[K\r\x1b[20C", out.written()); // the cursor on the match
    _ = try feed(&e, "\x1b");
    try testing.expectEqualStrings("draft", e.line());
    try testing.expectEqual(null, e.search);
    // Another key keeps the match and edits it; Enter sends it.
    _ = try feed(&e, "\x12make\x05!");
    try testing.expectEqualStrings("make test!", e.line());
    _ = try feed(&e, "\x15\x12tes\x7f\x7f\x7flog");
    try testing.expectEqualStrings("git log", e.line());
    const a = try feed(&e, "\r");
    try testing.expectEqualStrings("git log", a.submit);
}
