//! The prompt while a turn runs (docs/cli.md, "Typing while a turn runs"). The watcher
//! thread gives it the keys, which edit the prompt's own line editor; Enter steers the turn
//! with the line (the core's Stream.steer: the model reads it after the current tool round),
//! Alt-Enter queues it as a follow-up (Stream.followUp: a turn of its own after this one).
//! The queued lines show above the prompt until their user_message event says they entered;
//! those a turn ends without (canceled, failed) come back to the prompt's text. Alt-Up takes
//! back those the turn has not taken yet (Stream.withdrawQueued) into the prompt's text, to
//! edit and send again (pi's "dequeue").
//!
//! The area (a hint, the queued lines, the prompt) is drawn below the turn's output, only
//! while it has something to show: a turn nobody types into looks as before. The main thread
//! takes it off before each of the renderer's writes and puts it back after; one lock
//! guards the terminal, the editor and the queue.
const std = @import("std");
const panto = @import("panto");
const App = @import("../app.zig").App;
const keys = @import("keys.zig");
const Editor = @import("line_editor.zig").Editor;
const Renderer = @import("render.zig").Renderer;
const style = @import("render.zig");

const Source = @import("../app.zig").SteerSource;

pub const TurnInput = struct {
    app: *App,
    editor: *Editor,
    renderer: *Renderer,
    prompt: []const u8,
    lock: std.c.pthread_mutex_t = std.c.PTHREAD_MUTEX_INITIALIZER,
    /// Sent and not yet in the conversation, in the order sent (texts owned).
    queued: std.ArrayList(Queued) = .empty,
    /// Bytes of a key cut by a read.
    pending: std.ArrayList(u8) = .empty,
    /// A line about the last key (a command cannot steer, the turn was ending), until the next.
    hint: ?[]const u8 = null,
    /// The area is on the screen: `up` rows above the cursor is the renderer's row, whose
    /// column was `col`.
    drawn: bool = false,
    up: usize = 0,
    col: usize = 0,

    const Queued = struct { source: Source, text: []u8 };

    pub fn deinit(t: *TurnInput) void {
        for (t.queued.items) |q| t.app.gpa.free(q.text);
        t.queued.deinit(t.app.gpa);
        t.pending.deinit(t.app.gpa);
    }

    pub fn acquire(t: *TurnInput) void {
        _ = std.c.pthread_mutex_lock(&t.lock);
    }

    pub fn release(t: *TurnInput) void {
        _ = std.c.pthread_mutex_unlock(&t.lock);
    }

    /// The watcher's sink (watcher.zig): keys typed during the turn, on the watcher's thread.
    pub fn sink(t: *TurnInput) @import("watcher.zig").Watcher.Sink {
        return .{ .ctx = t, .bytes = typed };
    }

    fn typed(ctx: *anyopaque, bytes: []const u8) void {
        const t: *TurnInput = @ptrCast(@alignCast(ctx));
        t.acquire();
        defer t.release();
        t.takeOff() catch {};
        t.pending.appendSlice(t.app.gpa, bytes) catch {};
        var used: usize = 0;
        while (used < t.pending.items.len) {
            const rest = t.pending.items[used..];
            // An ESC ending the read that more bytes follow (else the watcher took it for the
            // Escape key): the start of a key's sequence, cut by the read.
            if (rest.len == 1 and rest[0] == 0x1b) break;
            const d = keys.decode(rest) orelse break; // the rest: next read
            used += d.len;
            t.key(d.key) catch {};
        }
        t.pending.replaceRangeAssumeCapacity(0, used, &.{});
        t.putBack() catch {};
    }

    fn key(t: *TurnInput, k: keys.Key) !void {
        t.hint = null;
        if (k == .alt_up and t.editor.search == null) return t.takeBack();
        if (k == .alt_enter and t.editor.search == null) {
            const text = try t.app.gpa.dupe(u8, t.editor.line());
            defer t.app.gpa.free(text);
            try t.editor.setText("");
            return t.send(.follow_up, text);
        }
        switch (try t.editor.handle(k)) {
            .submit => |line| {
                const text = try t.app.gpa.dupe(u8, line);
                defer t.app.gpa.free(text);
                if (std.mem.trim(u8, text, " \t\n").len == 0) return;
                if (text[0] == '/') {
                    try t.editor.setText(text);
                    t.hint = "a /command waits for the turn's end: Enter then sends it";
                    return;
                }
                try t.send(.steer, text);
            },
            // Ctrl-D, Ctrl-L, Ctrl-T, Ctrl-Z, Ctrl-G: the prompt's, once the turn is over.
            else => {},
        }
    }

    /// The line to the turn; a turn that takes no more (it is ending) leaves it in the prompt.
    fn send(t: *TurnInput, source: Source, text: []const u8) !void {
        if (std.mem.trim(u8, text, " \t\n").len == 0) return;
        t.editor.history.add(text) catch {}; // (the prompt reports a history that fails)
        const copy = try t.app.gpa.dupe(u8, text);
        errdefer t.app.gpa.free(copy);
        try t.queued.append(t.app.gpa, .{ .source = source, .text = copy });
        t.app.steerTurn(source, text) catch {
            t.app.gpa.free(t.queued.pop().?.text);
            try t.editor.setText(text);
            t.hint = "the turn is ending: Enter at the prompt sends this";
        };
    }

    /// Alt-Up: the lines the turn has not taken yet leave its queue and come back to the
    /// prompt's text, before what is being typed; those it took already stay in the area
    /// until their user_message event.
    fn takeBack(t: *TurnInput) !void {
        var back: std.ArrayList(panto.Stream.Queued) = .empty;
        defer {
            for (back.items) |m| t.app.gpa.free(m.text);
            back.deinit(t.app.gpa);
        }
        try t.app.withdrawQueued(&back);
        if (back.items.len == 0) {
            t.hint = "nothing queued to take back (the turn took it already)";
            return;
        }
        for (back.items) |m| t.entered(m.text); // off the area's queue
        try t.intoPrompt(back.items);
    }

    /// The texts of `lines` (anything with a `text`), a line each, before the prompt's text.
    fn intoPrompt(t: *TurnInput, lines: anytype) !void {
        var text: std.ArrayList(u8) = .empty;
        defer text.deinit(t.app.gpa);
        for (lines) |l| {
            try text.appendSlice(t.app.gpa, l.text);
            try text.append(t.app.gpa, '\n');
        }
        if (t.editor.line().len > 0) try text.appendSlice(t.app.gpa, t.editor.line()) else _ = text.pop();
        try t.editor.setText(text.items);
    }

    /// A user_message event (under the lock, the area off): the queued line it is leaves
    /// the area (a steer no round took comes as a follow-up: matched by its text).
    pub fn entered(t: *TurnInput, text: []const u8) void {
        for (t.queued.items, 0..) |q, i| if (std.mem.eql(u8, q.text, text)) {
            t.app.gpa.free(q.text);
            _ = t.queued.orderedRemove(i);
            return;
        };
    }

    /// The turn is over (the watcher stopped): the area off the screen, and the lines no
    /// turn took back in the prompt's text, before what was being typed.
    pub fn finish(t: *TurnInput) !void {
        try t.takeOff();
        t.hint = null;
        t.pending.clearRetainingCapacity();
        if (t.queued.items.len == 0) return;
        defer {
            for (t.queued.items) |q| t.app.gpa.free(q.text);
            t.queued.clearRetainingCapacity();
        }
        try t.intoPrompt(t.queued.items);
    }

    fn shown(t: *const TurnInput) bool {
        return t.hint != null or t.queued.items.len > 0 or t.editor.line().len > 0 or t.editor.search != null;
    }

    /// Takes the area off: the cursor back where the renderer left it.
    pub fn takeOff(t: *TurnInput) !void {
        if (!t.drawn) return;
        t.drawn = false;
        t.editor.forget();
        const out = t.renderer.out;
        if (t.up > 0) try out.print("\x1b[{d}A", .{t.up});
        try out.writeAll("\r");
        const r = t.renderer;
        if (t.col < r.cols) {
            if (t.col > 0) try out.print("\x1b[{d}C", .{t.col});
            try out.writeAll("\x1b[J");
        } else {
            // The row was full, its wrap pending: the text goes on at the next row's start,
            // where the area began.
            try out.writeAll("\x1b[B\x1b[J");
            r.col = 0;
            if (r.in_thinking) r.thinking_rows += 1;
        }
        try out.flush();
    }

    /// Draws the area below the renderer's output, if it has anything to show.
    pub fn putBack(t: *TurnInput) !void {
        if (t.drawn or !t.shown()) return;
        const out = t.renderer.out;
        const r = t.renderer;
        t.col = r.cursorCol();
        t.up = 0;
        if (t.col != 0) {
            try out.writeAll("\n");
            t.up = 1;
        }
        if (t.hint) |h| try t.row("", h);
        for (t.queued.items) |q| try t.row(switch (q.source) {
            .steer => "steer: ",
            .follow_up => "follow-up: ",
        }, q.text);
        t.editor.forget();
        try t.editor.draw(out, t.prompt, r.cols);
        t.up += t.editor.cursor_row;
        t.drawn = true;
        try out.flush();
    }

    /// One dim row of the area, cut to the width.
    fn row(t: *TurnInput, label: []const u8, text: []const u8) !void {
        const out = t.renderer.out;
        try out.print("\r{s}  {s}", .{ style.dim, label });
        try t.renderer.clipped(text, t.renderer.cols -| (label.len + 3));
        try out.print("{s}\n", .{style.reset});
        t.up += 1;
    }
};

const testing = std.testing;
const History = @import("history.zig").History;

test "the area is drawn below a line cut short, and taken off back to where the text stopped" {
    var out: std.Io.Writer.Allocating = .init(testing.allocator);
    defer out.deinit();
    var r = Renderer.init(testing.allocator, &out.writer);
    defer r.deinit();
    var h = History.init(testing.allocator, testing.io, null, 10);
    defer h.deinit();
    var e = Editor.init(testing.allocator, &h);
    defer e.deinit();
    // (No App: nothing is sent.)
    var t: TurnInput = .{ .app = undefined, .editor = &e, .renderer = &r, .prompt = "> " };
    // Nothing typed: nothing drawn, nothing to take off.
    try t.putBack();
    try t.takeOff();
    try testing.expectEqualStrings("", out.written());
    r.col = 7; // "Partial" streamed
    try e.setText("ab");
    t.hint = "note";
    try t.putBack();
    try testing.expectEqualStrings("\n\r" ++ style.dim ++ "  note" ++ style.reset ++ "\n" ++
        "\r\x1b[1m> \x1b[0mab\x1b[K\r\x1b[4C", out.written());
    out.clearRetainingCapacity();
    try t.takeOff();
    // Two rows up (the hint's, the text's row), then the column after "Partial".
    try testing.expectEqualStrings("\x1b[2A\r\x1b[7C\x1b[J", out.written());
    try testing.expectEqual(0, e.cursor_row);
    // A row filled to its end: the text goes on at the next row's start.
    out.clearRetainingCapacity();
    t.hint = null;
    r.col = r.cols;
    try t.putBack();
    out.clearRetainingCapacity();
    try t.takeOff();
    try testing.expectEqualStrings("\x1b[1A\r\x1b[B\x1b[J", out.written());
    try testing.expectEqual(0, r.col);
}
