//! The turn on the terminal, as its events arrive: text streamed; thinking dim, folded to one
//! line when its block ends (unless shown); each tool call as its name and a one-line summary
//! of its input, then its result's size or its error; the driver's notes dim. Model text is
//! written without its control characters, so an answer cannot move the cursor or recolor
//! the screen.
const std = @import("std");
const panto = @import("panto");
const Event = panto.Event;
const width = @import("width.zig");
const summary = @import("summary.zig");
const edit_diff = @import("edit_diff.zig");

const Writer = std.Io.Writer;

pub const dim = "\x1b[2m";
pub const bold = "\x1b[1m";
pub const red = "\x1b[31m";
pub const cyan = "\x1b[36m";
pub const reset = "\x1b[0m";

pub const Renderer = struct {
    out: *Writer,
    /// The terminal's size, read before each turn.
    cols: usize = 80,
    rows: usize = 24,
    /// Thinking stays shown after its block ends (/thinking show, Ctrl-T).
    show_thinking: bool = false,
    /// Tool results are shown whole, not folded (Ctrl-O).
    show_results: bool = false,
    /// The column the cursor is at (0: at the start of a line).
    col: usize = 0,
    /// Rows written since the thinking block began (0 outside one).
    thinking_rows: usize = 0,
    in_thinking: bool = false,
    /// Rows of live lines at the bottom (a tool's input streaming, or the running tools'
    /// progress, a line each), the cursor at the end of the last: the next output replaces them.
    live_rows: usize = 0,
    /// The column the cursor is at on the last live line (`col` is the rest's).
    live_col: usize = 0,
    /// The last progress of each tool that reported one and has no result yet, in the order
    /// they first reported: the live lines while tools run.
    progress: std.ArrayList(Progress) = .empty,
    /// The turn's thinking, kept so /thinking show can print what was folded.
    thinking: std.ArrayList(u8) = .empty,
    gpa: std.mem.Allocator,
    /// For reading an edited file (lineInFile); null: not read.
    io: ?std.Io = null,
    /// An error writing to the terminal: the turn goes on, the loop reports it after.
    write_failed: bool = false,
    /// The input of each `edit` call awaiting its result: its diff is drawn under the result.
    edits: std.ArrayList(Call) = .empty,
    /// The last tool result shown folded, whole, for Ctrl-O; and its tool's name.
    last_result: std.ArrayList(u8) = .empty,
    last_result_name: std.ArrayList(u8) = .empty,

    const Call = struct { id: []u8, input: []u8 };
    /// A tool result's lines shown under its summary; Ctrl-O shows the rest.
    pub const folded_lines = 3;
    /// The rows of one tool's progress at most (its text's last lines).
    pub const progress_lines = 3;

    pub fn init(gpa: std.mem.Allocator, out: *Writer) Renderer {
        return .{ .gpa = gpa, .out = out };
    }

    pub fn deinit(r: *Renderer) void {
        r.thinking.deinit(r.gpa);
        r.clearProgress();
        r.progress.deinit(r.gpa);
        r.clearEdits();
        r.edits.deinit(r.gpa);
        r.last_result.deinit(r.gpa);
        r.last_result_name.deinit(r.gpa);
    }

    fn clearEdits(r: *Renderer) void {
        for (r.edits.items) |e| {
            r.gpa.free(e.id);
            r.gpa.free(e.input);
        }
        r.edits.clearRetainingCapacity();
    }

    /// The edit call `id`'s input, taken out (the caller frees it); null when not kept.
    fn takeEdit(r: *Renderer, id: []const u8) ?[]u8 {
        for (r.edits.items, 0..) |e, i| if (std.mem.eql(u8, e.id, id)) {
            r.gpa.free(e.id);
            _ = r.edits.orderedRemove(i);
            return e.input;
        };
        return null;
    }

    pub fn beginTurn(r: *Renderer) void {
        r.thinking.clearRetainingCapacity();
        r.col = 0;
        r.in_thinking = false;
        r.live_rows = 0;
        r.clearProgress();
        r.clearEdits();
    }

    pub fn event(r: *Renderer, e: *const Event) void {
        r.eventOrFail(e) catch {
            r.write_failed = true;
        };
    }

    fn eventOrFail(r: *Renderer, e: *const Event) Writer.Error!void {
        switch (e.*) {
            .block_start => |b| try r.blockStart(b.kind),
            .content_delta => |d| switch (d.kind) {
                .text => try r.text(d.text),
                .thinking => {
                    try r.text(d.text);
                    r.thinking.appendSlice(r.gpa, d.text) catch {};
                },
                else => {},
            },
            .block_complete => |b| try r.blockComplete(b.kind),
            .tool_details => |t| {
                try r.freshLine();
                try r.out.print("{s}⚙ {s}…{s}", .{ dim, t.name, reset });
                r.live_rows = 1;
                r.live_col = width.of("⚙ ") + width.of(t.name) + width.of("…");
            },
            .tool_call_start => |t| {
                try r.toolCall(t.name, t.input);
                if (std.mem.eql(u8, t.name, "edit")) r.keepEdit(t.id, t.input) catch {};
            },
            .tool_progress => |p| {
                r.setProgress(p) catch {}; // (out of memory: the line shows the older text)
                try r.freshLine();
                try r.drawProgress();
            },
            .tool_result => |t| try r.toolResult(t),
            .provider_retry => |p| {
                var buf: [160]u8 = undefined;
                try r.noteLine(std.fmt.bufPrint(&buf, "retrying in {d:.1}s (HTTP {d} {s}, attempt {d})", .{
                    @as(f64, @floatFromInt(p.delay_ms)) / 1000, p.http_status, p.reason, p.attempt,
                }) catch "retrying");
            },
            .compaction_start => |c| {
                var buf: [120]u8 = undefined;
                try r.noteLine(std.fmt.bufPrint(&buf, "compacting the conversation ({s}, about {d} tokens)…", .{ c.reason, c.tokens_before }) catch "compacting…");
            },
            .compaction_end => |c| {
                var buf: [160]u8 = undefined;
                try r.noteLine(std.fmt.bufPrint(&buf, "compacted {d} message{s}: about {d} → {d} tokens", .{
                    c.message_count, if (c.message_count == 1) "" else "s", c.tokens_before, c.tokens_after,
                }) catch "compacted");
            },
            .message_complete => try r.freshLine(),
            .message_start, .message_end => {},
            // The question is the observer's (approval_prompt.zig), a call at a time.
            .approval_request => {},
            // What the user typed during the turn, now in the conversation (turn_input.zig).
            .user_message => |m| {
                try r.freshLine();
                try writeSent(r.out, "> ", m.text);
            },
        }
        try r.out.flush();
    }

    fn blockStart(r: *Renderer, kind: panto.BlockKind) Writer.Error!void {
        switch (kind) {
            .thinking => {
                try r.freshLine();
                try r.out.writeAll(dim);
                r.in_thinking = true;
                r.thinking_rows = 0;
            },
            .redacted_thinking => {
                try r.freshLine();
                try r.out.print("{s}▸ thinking (redacted by the provider){s}\n", .{ dim, reset });
            },
            .text => try r.clearLive(),
            else => {},
        }
    }

    fn blockComplete(r: *Renderer, kind: panto.BlockKind) Writer.Error!void {
        switch (kind) {
            .thinking => {
                try r.out.writeAll(reset);
                r.in_thinking = false;
                if (!r.show_thinking and r.thinking_rows + 1 < r.rows) {
                    // Back to the block's first row, then everything below it erased.
                    try r.out.writeAll("\r");
                    if (r.thinking_rows > 0) try r.out.print("\x1b[{d}A", .{r.thinking_rows});
                    try r.out.writeAll("\x1b[J");
                    r.col = 0;
                    // A block of no text (a signature only) leaves no line.
                    if (std.mem.trim(u8, r.thinkingOfBlock(), " \n\t").len > 0) {
                        try r.foldedThinking();
                        try r.out.writeAll("\n");
                    }
                } else try r.freshLine();
                r.endThinkingBlock();
            },
            .text => try r.freshLine(),
            .tool_call => try r.clearLive(),
            else => {},
        }
    }

    /// "▸ thinking: its first words… (N words, Ctrl-T shows)"
    fn foldedThinking(r: *Renderer) Writer.Error!void {
        return r.foldedThinkingOf(r.thinkingOfBlock());
    }

    /// The folded line of a thinking block's text, on a line of its own (replay.zig).
    pub fn foldedThinkingLine(r: *Renderer, thinking_text: []const u8) Writer.Error!void {
        try r.freshLine();
        try r.foldedThinkingOf(thinking_text);
        try r.out.writeAll("\n");
    }

    fn foldedThinkingOf(r: *Renderer, thinking_text: []const u8) Writer.Error!void {
        const all = std.mem.trim(u8, thinking_text, " \n\t");
        var words: usize = 0;
        var it = std.mem.tokenizeAny(u8, all, " \n\t");
        while (it.next()) |_| words += 1;
        var tail_buf: [48]u8 = undefined;
        const tail = std.fmt.bufPrint(&tail_buf, " ({d} words, Ctrl-T shows)", .{words}) catch "";
        try r.out.print("{s}▸ thinking: ", .{dim});
        try r.clipped(all, r.cols -| (13 + tail.len + 1));
        try r.out.print("{s}{s}", .{ tail, reset });
    }

    /// The current block's thinking: what came after the last block separator.
    fn thinkingOfBlock(r: *const Renderer) []const u8 {
        const t = r.thinking.items;
        const start = if (std.mem.lastIndexOfScalar(u8, t, 0)) |i| i + 1 else 0;
        return t[start..];
    }

    fn toolCall(r: *Renderer, name: []const u8, input: []const u8) Writer.Error!void {
        try r.freshLine();
        try r.out.print("{s}⚙ {s}{s} ", .{ cyan, name, reset });
        var buf: [512]u8 = undefined;
        const line = summary.ofInput(&buf, input);
        try r.clipped(line, r.cols -| (width.of(name) + 3));
        try r.out.writeAll("\n");
    }

    fn toolResult(r: *Renderer, t: panto.event.ToolResult) Writer.Error!void {
        try r.clearLive();
        try r.freshLine();
        r.dropProgress(t.id);
        if (t.is_error) {
            try r.out.print("  {s}✗ {s}: ", .{ red, t.name });
            const first = std.mem.sliceTo(std.mem.trim(u8, t.content, " \n"), '\n');
            try r.clipped(first, r.cols -| (width.of(t.name) + 6));
            try r.out.print("{s}\n", .{reset});
        } else {
            var buf: [96]u8 = undefined;
            try r.out.print("  {s}↳ {s}: {s}{s}\n", .{ dim, t.name, summary.ofResult(&buf, t.content, t.parts), reset });
            if (r.takeEdit(t.id)) |input| {
                defer r.gpa.free(input);
                try r.editDiff(input, t.content);
            } else try r.foldedResult(t.name, t.content);
        }
        try r.drawProgress(); // the tools still running
    }

    fn keepEdit(r: *Renderer, id: []const u8, input: []const u8) std.mem.Allocator.Error!void {
        const id_copy = try r.gpa.dupe(u8, id);
        errdefer r.gpa.free(id_copy);
        const input_copy = try r.gpa.dupe(u8, input);
        errdefer r.gpa.free(input_copy);
        try r.edits.append(r.gpa, .{ .id = id_copy, .input = input_copy });
    }

    /// The diff of an edit that succeeded, from its input's `old` and `new`, numbered from the
    /// line its result names ("... at line N", the bundled edit's), else from where `new`
    /// is in the file now (an edit tool of the user's that does not say), else from 1.
    fn editDiff(r: *Renderer, input: []const u8, result: []const u8) Writer.Error!void {
        const Input = struct { path: []const u8 = "", old: []const u8 = "", new: []const u8 = "" };
        const parsed = std.json.parseFromSlice(Input, r.gpa, input, .{ .ignore_unknown_fields = true }) catch return;
        defer parsed.deinit();
        const v = parsed.value;
        const at = if (std.mem.lastIndexOf(u8, result, "at line ")) |i| blk: {
            const digits = result[i + 8 ..];
            const end = std.mem.indexOfNone(u8, digits, "0123456789") orelse digits.len;
            break :blk std.fmt.parseInt(usize, digits[0..end], 10) catch 1;
        } else r.lineInFile(v.path, v.new) orelse 1;
        try edit_diff.write(r.out, v.old, v.new, at, r.cols);
    }

    /// The line where `wanted` starts in the file at `path`, when it occurs there once (read
    /// through `io`; none: no file reading, as when a session is replayed).
    fn lineInFile(r: *Renderer, path: []const u8, wanted: []const u8) ?usize {
        const io = r.io orelse return null;
        if (path.len == 0 or wanted.len == 0) return null;
        const bytes = std.Io.Dir.cwd().readFileAlloc(io, path, r.gpa, .limited(@import("../at_files.zig").max_bytes)) catch return null;
        defer r.gpa.free(bytes);
        const first = std.mem.indexOf(u8, bytes, wanted) orelse return null;
        if (std.mem.indexOfPos(u8, bytes, first + 1, wanted) != null) return null; // where, of several?
        return std.mem.count(u8, bytes[0..first], "\n") + 1;
    }

    /// The first lines of a result (bash's: the last, where a failure says why), dim, and how
    /// many more; the whole is kept for Ctrl-O. All of it after Ctrl-O (show_results).
    fn foldedResult(r: *Renderer, name: []const u8, content: []const u8) Writer.Error!void {
        const body = std.mem.trimEnd(u8, content, "\n");
        if (body.len == 0) return;
        r.last_result.clearRetainingCapacity();
        r.last_result_name.clearRetainingCapacity();
        r.last_result.appendSlice(r.gpa, body) catch {};
        r.last_result_name.appendSlice(r.gpa, name) catch {};
        const total = std.mem.count(u8, body, "\n") + 1;
        const shown = if (r.show_results) total else @min(total, folded_lines);
        const from_end = std.mem.eql(u8, name, "bash");
        var start: usize = 0;
        if (from_end) {
            start = body.len - lastLines(body, shown).len;
            if (total > shown) try r.moreLines(total - shown, true);
        }
        var it = std.mem.splitScalar(u8, body[start..], '\n');
        var n: usize = 0;
        while (it.next()) |line| : (n += 1) {
            if (n == shown) break;
            try r.out.writeAll(dim ++ "    ");
            try r.clipped(line, r.cols -| 5);
            try r.out.print("{s}\n", .{reset});
        }
        if (!from_end and total > shown) try r.moreLines(total - shown, false);
    }

    fn moreLines(r: *Renderer, n: usize, above: bool) Writer.Error!void {
        try r.out.print("{s}    … {d} {s}line{s}{s} (Ctrl-O shows the whole result){s}\n", .{ dim, n, if (above) "" else "more ", if (n == 1) "" else "s", if (above) " above" else "", reset });
    }

    /// Ctrl-O: the last result whole and the later ones unfolded; again: folded again.
    pub fn toggleResults(r: *Renderer) Writer.Error!void {
        r.show_results = !r.show_results;
        if (r.show_results) try r.printLastResult();
        try r.out.print("{s}tool results {s}{s}\n", .{ dim, if (r.show_results) "shown whole" else "folded", reset });
        try r.out.flush();
    }

    /// The last result, whole.
    pub fn printLastResult(r: *Renderer) Writer.Error!void {
        if (r.last_result.items.len == 0) {
            try r.out.print("{s}no tool result to show{s}\n", .{ dim, reset });
            return r.out.flush();
        }
        try r.freshLine();
        try r.out.print("{s}↳ {s}, whole:{s}\n", .{ dim, r.last_result_name.items, reset });
        var it = std.mem.splitScalar(u8, r.last_result.items, '\n');
        while (it.next()) |line| {
            try r.out.writeAll("    ");
            try r.clipped(line, r.cols -| 5);
            try r.out.writeAll("\n");
        }
        try r.out.flush();
    }

    const Progress = struct { id: []u8, name: []u8, text: []u8 };

    /// Keeps `p` as its tool's latest progress.
    fn setProgress(r: *Renderer, p: panto.event.ToolProgress) std.mem.Allocator.Error!void {
        const text_ = try r.gpa.dupe(u8, p.text);
        for (r.progress.items) |*old| if (std.mem.eql(u8, old.id, p.id)) {
            r.gpa.free(old.text);
            old.text = text_;
            return;
        };
        errdefer r.gpa.free(text_);
        const id = try r.gpa.dupe(u8, p.id);
        errdefer r.gpa.free(id);
        const name = try r.gpa.dupe(u8, p.name);
        errdefer r.gpa.free(name);
        try r.progress.append(r.gpa, .{ .id = id, .name = name, .text = text_ });
    }

    fn dropProgress(r: *Renderer, id: []const u8) void {
        for (r.progress.items, 0..) |p, i| if (std.mem.eql(u8, p.id, id)) {
            freeProgress(r.gpa, p);
            _ = r.progress.orderedRemove(i);
            return;
        };
    }

    fn clearProgress(r: *Renderer) void {
        for (r.progress.items) |p| freeProgress(r.gpa, p);
        r.progress.clearRetainingCapacity();
    }

    fn freeProgress(gpa: std.mem.Allocator, p: Progress) void {
        gpa.free(p.id);
        gpa.free(p.name);
        gpa.free(p.text);
    }

    /// The running tools' progress, live lines (none when no tool reported any): a text of
    /// several lines (bash's output) shows its last `progress_lines`, under the first row's
    /// "… name:". Each row is cut to the width, so that none wraps and the rows to go back up
    /// are known.
    fn drawProgress(r: *Renderer) Writer.Error!void {
        try r.clearLive();
        var rows: usize = 0;
        for (r.progress.items) |p| {
            const body = std.mem.trimEnd(u8, p.text, "\n");
            var lines = std.mem.splitScalar(u8, lastLines(body, progress_lines), '\n');
            var first = true;
            while (lines.next()) |line| {
                if (rows > 0) try r.out.writeAll("\n");
                rows += 1;
                const lead = if (first) width.of(p.name) + 6 else 6;
                if (first) try r.out.print("{s}  … {s}: ", .{ dim, p.name }) else try r.out.writeAll(dim ++ "      ");
                first = false;
                const used = try r.clippedWidth(line, r.cols -| (lead + 1));
                try r.out.writeAll(reset);
                r.live_col = lead + used;
            }
        }
        r.live_rows = rows;
    }

    /// A dim line of the driver's (the adaptive thinking fallback, a retry).
    pub fn note(r: *Renderer, text_: []const u8) void {
        r.noteLine(text_) catch {
            r.write_failed = true;
        };
        r.out.flush() catch {
            r.write_failed = true;
        };
    }

    fn noteLine(r: *Renderer, text_: []const u8) Writer.Error!void {
        try r.clearLive();
        try r.freshLine();
        try r.out.writeAll(dim);
        try r.clipped(text_, r.cols -| 1);
        try r.out.print("{s}\n", .{reset});
    }

    /// Starts a line unless the cursor is at the start of one (a live line is replaced).
    pub fn freshLine(r: *Renderer) Writer.Error!void {
        try r.clearLive();
        if (r.col != 0) {
            if (r.in_thinking) r.thinking_rows += 1;
            try r.out.writeAll("\n");
            r.col = 0;
        }
    }

    /// Erases the live lines: back to the first one's start, everything below it erased.
    fn clearLive(r: *Renderer) Writer.Error!void {
        if (r.live_rows == 0) return;
        try r.out.writeAll("\r");
        if (r.live_rows > 1) try r.out.print("\x1b[{d}A", .{r.live_rows - 1});
        try r.out.writeAll("\x1b[J");
        r.live_rows = 0;
        r.col = 0;
    }

    /// Streamed model text: control characters dropped (newlines and tabs kept), the cursor's
    /// column and the rows written kept track of, wrapping at the terminal's width.
    fn text(r: *Renderer, s: []const u8) Writer.Error!void {
        try r.clearLive();
        var i: usize = 0;
        while (i < s.len) {
            const n = std.unicode.utf8ByteSequenceLength(s[i]) catch 1;
            const ch = s[i..@min(s.len, i + n)];
            i += ch.len;
            if (ch.len == 1 and ch[0] == '\n') {
                try r.out.writeByte('\n');
                r.col = 0;
                if (r.in_thinking) r.thinking_rows += 1;
                continue;
            }
            if (ch.len == 1 and ch[0] == '\t') {
                const to = @min(r.cols, (r.col / 8 + 1) * 8);
                try r.out.splatByteAll(' ', to - r.col);
                r.col = to;
                continue;
            }
            if (ch.len == 1 and (ch[0] < 0x20 or ch[0] == 0x7f)) continue;
            if (ch.len == 2 and ch[0] == 0xc2 and ch[1] < 0xa0) continue; // C1 controls
            const w = width.of(ch);
            if (r.col + w > r.cols) {
                r.col = 0;
                if (r.in_thinking) r.thinking_rows += 1;
            }
            try r.out.writeAll(ch);
            r.col += w;
        }
    }

    /// Model text as a turn streams it (wrapped, control characters dropped), then a new
    /// line (replay.zig).
    pub fn textLine(r: *Renderer, s: []const u8) Writer.Error!void {
        try r.text(s);
        try r.freshLine();
    }

    /// The column the cursor is at: on the last live line when there are live lines.
    pub fn cursorCol(r: *const Renderer) usize {
        return if (r.live_rows > 0) r.live_col else r.col;
    }

    /// One line of `s` in at most `cols` columns, newlines shown as spaces, cut with "…".
    pub fn clipped(r: *Renderer, s: []const u8, cols: usize) Writer.Error!void {
        _ = try r.clippedWidth(s, cols);
    }

    /// As `clipped`; the columns written.
    fn clippedWidth(r: *Renderer, s: []const u8, cols: usize) Writer.Error!usize {
        var used: usize = 0;
        var i: usize = 0;
        while (i < s.len) {
            const n = std.unicode.utf8ByteSequenceLength(s[i]) catch 1;
            const ch = s[i..@min(s.len, i + n)];
            const w = if (ch[0] < 0x20) 1 else width.of(ch);
            if (used + w + 1 > cols and i + ch.len < s.len) {
                try r.out.writeAll("…");
                return used + 1;
            }
            if (ch[0] < 0x20 or ch[0] == 0x7f) try r.out.writeByte(' ') else try r.out.writeAll(ch);
            used += w;
            i += ch.len;
        }
        return used;
    }

    /// Prints the turn's thinking in full (dim): /thinking show after it was folded.
    pub fn printThinking(r: *Renderer) Writer.Error!void {
        if (r.thinking.items.len == 0) return;
        try r.freshLine();
        try r.out.writeAll(dim);
        var it = std.mem.splitScalar(u8, r.thinking.items, 0);
        while (it.next()) |block| {
            try r.text(block);
            try r.freshLine();
        }
        try r.out.writeAll(reset);
        try r.out.flush();
    }

    /// Marks the end of a thinking block in the kept text (blocks are separated by a 0 byte).
    fn endThinkingBlock(r: *Renderer) void {
        r.thinking.append(r.gpa, 0) catch {};
    }
};

/// The last `n` lines of `text` (which has no newline at its end).
fn lastLines(text: []const u8, n: usize) []const u8 {
    var start = text.len;
    var i: usize = 0;
    while (i < n and start > 0) : (i += 1) start = if (std.mem.lastIndexOfScalar(u8, text[0 .. start - 1], '\n')) |nl| nl + 1 else 0;
    return text[start..];
}

/// A line the user sent, as the prompt showed it (bold prompt, the text's later rows indented
/// under the first), then a newline: the scrollback keeps the whole of it.
pub fn writeSent(out: *Writer, prompt: []const u8, line: []const u8) Writer.Error!void {
    try out.print("{s}{s}{s}", .{ bold, prompt, reset });
    var rows = std.mem.splitScalar(u8, line, '\n');
    var first = true;
    while (rows.next()) |row| : (first = false) {
        if (!first) {
            try out.writeAll("\n");
            try out.splatByteAll(' ', width.of(prompt));
        }
        try out.writeAll(row);
    }
    try out.writeAll("\n");
}

const testing = std.testing;

fn play(r: *Renderer, events: []const Event) void {
    for (events) |*e| r.event(e);
}

test "text streams as it comes, its control characters dropped" {
    var out: Writer.Allocating = .init(testing.allocator);
    defer out.deinit();
    var r = Renderer.init(testing.allocator, &out.writer);
    defer r.deinit();
    play(&r, &.{
        .{ .block_start = .{ .index = 0, .kind = .text } },
        .{ .content_delta = .{ .index = 0, .kind = .text, .text = "Hello \x1b[2Jworld\r" } },
        .{ .content_delta = .{ .index = 0, .kind = .text, .text = "\u{9b}!" } },
        .{ .block_complete = .{ .index = 0, .kind = .text, .text = "" } },
    });
    try testing.expectEqualStrings("Hello [2Jworld!\n", out.written());
}

test "thinking: dim while it streams, then folded to one line, kept for /thinking show" {
    var out: Writer.Allocating = .init(testing.allocator);
    defer out.deinit();
    var r = Renderer.init(testing.allocator, &out.writer);
    defer r.deinit();
    r.cols = 10;
    play(&r, &.{
        .{ .block_start = .{ .index = 0, .kind = .thinking } },
        .{ .content_delta = .{ .index = 0, .kind = .thinking, .text = "one two\nthree four five" } },
        .{ .block_complete = .{ .index = 0, .kind = .thinking, .text = "" } },
    });
    // Three rows (the second line wraps at 10 columns): up two, erase, the folded line.
    try testing.expectEqualStrings(dim ++ "one two\nthree four five" ++ reset ++ "\r\x1b[2A\x1b[J" ++ dim ++
        "▸ thinking: … (5 words, Ctrl-T shows)" ++ reset ++ "\n", out.written());
    out.clearRetainingCapacity();
    try r.printThinking();
    try testing.expectEqualStrings(dim ++ "one two\nthree four five\n" ++ reset, out.written());
}

test "thinking shown stays; one taller than the screen is not folded" {
    var out: Writer.Allocating = .init(testing.allocator);
    defer out.deinit();
    var r = Renderer.init(testing.allocator, &out.writer);
    defer r.deinit();
    r.show_thinking = true;
    const block = [_]Event{
        .{ .block_start = .{ .index = 0, .kind = .thinking } },
        .{ .content_delta = .{ .index = 0, .kind = .thinking, .text = "a\nb\nc\nd" } },
        .{ .block_complete = .{ .index = 0, .kind = .thinking, .text = "" } },
    };
    play(&r, &block);
    try testing.expectEqualStrings(dim ++ "a\nb\nc\nd" ++ reset ++ "\n", out.written());
    out.clearRetainingCapacity();
    r.show_thinking = false;
    r.rows = 4;
    play(&r, &block);
    try testing.expect(std.mem.indexOf(u8, out.written(), "\x1b[J") == null);
}

test "a tool call: name and input summary, then the result's size or its error" {
    var out: Writer.Allocating = .init(testing.allocator);
    defer out.deinit();
    var r = Renderer.init(testing.allocator, &out.writer);
    defer r.deinit();
    play(&r, &.{
        .{ .tool_details = .{ .index = 0, .id = "t1", .name = "bash" } },
        .{ .block_complete = .{ .index = 0, .kind = .tool_call, .text = "" } },
        .{ .tool_call_start = .{ .id = "t1", .name = "bash", .input = "{\"command\":\"ls\"}", .awaiting_result = true } },
        .{ .tool_progress = .{ .id = "t1", .name = "bash", .text = "running" } },
        .{ .tool_result = .{ .id = "t1", .name = "bash", .content = "a\nb\n", .is_error = false } },
        .{ .tool_call_start = .{ .id = "t2", .name = "edit", .input = "{\"path\":\"x\"}", .awaiting_result = true } },
        .{ .tool_result = .{ .id = "t2", .name = "edit", .content = "old text not found\nmore", .is_error = true } },
    });
    try testing.expectEqualStrings(
        dim ++ "⚙ bash…" ++ reset ++ "\r\x1b[J" ++
            cyan ++ "⚙ bash" ++ reset ++ " ls\n" ++
            dim ++ "  … bash: running" ++ reset ++ "\r\x1b[J" ++
            "  " ++ dim ++ "↳ bash: 2 lines, 4 B" ++ reset ++ "\n" ++
            dim ++ "    a" ++ reset ++ "\n" ++ dim ++ "    b" ++ reset ++ "\n" ++
            cyan ++ "⚙ edit" ++ reset ++ " x\n" ++
            "  " ++ red ++ "✗ edit: old text not found" ++ reset ++ "\n",
        out.written(),
    );
}

test "a long progress text is cut to the terminal's width, its lines a row each" {
    var out: Writer.Allocating = .init(testing.allocator);
    defer out.deinit();
    var r = Renderer.init(testing.allocator, &out.writer);
    defer r.deinit();
    r.cols = 20;
    play(&r, &.{.{ .tool_progress = .{ .id = "t1", .name = "bash", .text = "line 1\nline 2 and much more" } }});
    // "  … bash: " takes 10 columns; the text gets the rest but one (a live line never fills
    // the row, so rewriting it never wraps), its last one the "…". A second line is a row of
    // its own, under the first.
    try testing.expectEqualStrings(dim ++ "  … bash: line 1" ++ reset ++ "\n" ++ dim ++ "      line 2 and m…" ++ reset, out.written());
    try testing.expectEqual(@as(usize, 2), r.live_rows);
}

test "an empty thinking block leaves no line" {
    var out: Writer.Allocating = .init(testing.allocator);
    defer out.deinit();
    var r = Renderer.init(testing.allocator, &out.writer);
    defer r.deinit();
    play(&r, &.{
        .{ .block_start = .{ .index = 0, .kind = .thinking } },
        .{ .block_complete = .{ .index = 0, .kind = .thinking, .text = "" } },
    });
    try testing.expectEqualStrings(dim ++ reset ++ "\r\x1b[J", out.written());
}

test "tools running together: a progress line each, until each one's result" {
    var out: Writer.Allocating = .init(testing.allocator);
    defer out.deinit();
    var r = Renderer.init(testing.allocator, &out.writer);
    defer r.deinit();
    play(&r, &.{
        .{ .tool_progress = .{ .id = "a", .name = "fetch", .text = "a 1" } },
        .{ .tool_progress = .{ .id = "b", .name = "fetch", .text = "b 1" } },
        .{ .tool_progress = .{ .id = "a", .name = "fetch", .text = "a 2" } },
        .{ .tool_result = .{ .id = "a", .name = "fetch", .content = "x", .is_error = false } },
        .{ .tool_result = .{ .id = "b", .name = "fetch", .content = "y", .is_error = false } },
    });
    const a1 = dim ++ "  … fetch: a 1" ++ reset;
    const a2 = dim ++ "  … fetch: a 2" ++ reset;
    const b1 = dim ++ "  … fetch: b 1" ++ reset;
    try testing.expectEqualStrings(
        a1 ++ "\r\x1b[J" ++ a1 ++ "\n" ++ b1 ++ "\r\x1b[1A\x1b[J" ++ a2 ++ "\n" ++ b1 ++
            "\r\x1b[1A\x1b[J" ++ "  " ++ dim ++ "↳ fetch: 1 line, 1 B" ++ reset ++ "\n" ++
            dim ++ "    x" ++ reset ++ "\n" ++ b1 ++
            "\r\x1b[J" ++ "  " ++ dim ++ "↳ fetch: 1 line, 1 B" ++ reset ++ "\n" ++
            dim ++ "    y" ++ reset ++ "\n",
        out.written(),
    );
}

test "an edit's diff under its result; a long result folded to its first lines, bash's to its last" {
    var out: Writer.Allocating = .init(testing.allocator);
    defer out.deinit();
    var r = Renderer.init(testing.allocator, &out.writer);
    defer r.deinit();
    play(&r, &.{
        .{ .tool_call_start = .{ .id = "e", .name = "edit", .input = "{\"path\":\"a\",\"old\":\"x = 1\\n\",\"new\":\"x = 2\\n\"}", .awaiting_result = true } },
        .{ .tool_result = .{ .id = "e", .name = "edit", .content = "Edited a: replaced 1 occurrence at line 7", .is_error = false } },
    });
    try testing.expect(std.mem.indexOf(u8, out.written(), red ++ "    7 - x = 1" ++ reset ++ "\n\x1b[32m    7 + x = 2") != null);
    out.clearRetainingCapacity();
    play(&r, &.{.{ .tool_result = .{ .id = "r", .name = "read", .content = "1\n2\n3\n4\n5\n", .is_error = false } }});
    try testing.expect(std.mem.endsWith(u8, out.written(), dim ++ "    3" ++ reset ++ "\n" ++ dim ++ "    … 2 more lines (Ctrl-O shows the whole result)" ++ reset ++ "\n"));
    out.clearRetainingCapacity();
    play(&r, &.{.{ .tool_result = .{ .id = "b", .name = "bash", .content = "1\n2\n3\n4\nerror: 5\n", .is_error = false } }});
    try testing.expect(std.mem.indexOf(u8, out.written(), dim ++ "    … 2 lines above (Ctrl-O shows the whole result)" ++ reset ++ "\n" ++ dim ++ "    3") != null);
    try testing.expect(std.mem.endsWith(u8, out.written(), dim ++ "    error: 5" ++ reset ++ "\n"));
    out.clearRetainingCapacity();
    try r.printLastResult();
    try testing.expect(std.mem.endsWith(u8, out.written(), "    1\n    2\n    3\n    4\n    error: 5\n"));
}
