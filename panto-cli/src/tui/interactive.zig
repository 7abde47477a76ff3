//! Interactive mode: the prompt loop. The terminal's input is raw for the whole session:
//! at the prompt the line editor reads the keys; while a turn (or a command) runs, a watcher
//! thread reads them, cancels the turn on Ctrl-C and keeps the rest for the next prompt.
//! docs/cli.md, "Interactive mode", is its manual. The parts:
//!
//!   terminal.zig        raw input mode, the size, the terminal put back on SIGTERM/SIGHUP
//!   keys.zig            bytes -> keys (UTF-8, control keys, escape sequences)
//!   line_editor.zig     the prompt's line: editing, history browsing and search, completion
//!   history.zig         the persistent history file
//!   watcher.zig         the thread reading the keyboard during a turn (Ctrl-C, Esc cancel)
//!   turn_input.zig      the prompt during a turn: Enter steers, Alt-Enter queues a follow-up
//!   external_editor.zig Ctrl-G: the prompt's text in $EDITOR
//!   approval_prompt.zig the question before a call that asks: allow once / for the session /
//!                       deny (with a reason) / cancel
//!   ext_dialogs.zig     ext.ui's notices and questions (confirm, select)
//!   render.zig          a turn's events on the terminal (text, thinking, tool calls, notes)
//!   summary.zig         one-line summaries of a tool call's input and result
//!   status.zig          the status line (context, tokens, cost)
//!   replay.zig          the earlier conversation, shown on resume
//!   slash_commands.zig  /model, /thinking, /session, /compact, /help, /quit, extensions'
//!   width.zig           terminal columns of text
//!   colors.zig          NO_COLOR and the theme: the SGR sequences written, dropped or changed
const std = @import("std");
const panto = @import("panto");
const App = @import("../app.zig").App;
const turn = @import("../turn.zig");
const terminal = @import("terminal.zig");
const keys = @import("keys.zig");
const history_mod = @import("history.zig");
const Editor = @import("line_editor.zig").Editor;
const Renderer = @import("render.zig").Renderer;
const style = @import("render.zig");
const status = @import("status.zig");
const slash = @import("slash_commands.zig");
const replay = @import("replay.zig");
const Watcher = @import("watcher.zig").Watcher;
const TurnInput = @import("turn_input.zig").TurnInput;
const Asker = @import("approval_prompt.zig").Asker;
const external_editor = @import("external_editor.zig");
const colors = @import("colors.zig");
const exit_codes = @import("../exit_codes.zig");
const ext_dialogs = @import("ext_dialogs.zig");
const at_files = @import("../at_files.zig");
const Host = @import("../lua/host.zig").Host;

const stdin_fd: std.c.fd_t = 0;
const stdout_fd: std.c.fd_t = 1;
const prompt = "> ";
/// Bracketed paste on: a pasted newline does not send the line.
const enter_sequence = "\x1b[?2004h";

/// The prompt loop until Ctrl-D or /quit: the process's exit code.
pub fn run(app: *App) !u8 {
    var out_buf: [4096]u8 = undefined;
    var stdout = std.Io.File.stdout().writerStreaming(app.io, &out_buf);
    // NO_COLOR or a theme: the colors are taken out or changed on the way (colors.zig).
    var color_buf: [4096]u8 = undefined;
    var filter = colors.Filter.init(&stdout.interface, app.settings.palette, &color_buf);
    const out = if (app.settings.palette.plain()) &stdout.interface else &filter.writer;
    var raw = terminal.Raw.enter(stdin_fd) catch {
        try out.writeAll("panto: interactive mode needs a terminal; use -p PROMPT (or a prompt on stdin)\n");
        try out.flush();
        return 2;
    };
    defer raw.restore();
    terminal.restoreOnSignals(raw);
    try out.writeAll(enter_sequence);
    defer {
        out.writeAll(terminal.leave_sequence) catch {};
        out.flush() catch {};
    }

    const history_path = try history_mod.defaultPath(app.gpa);
    defer if (history_path) |p| app.gpa.free(p);
    var history = history_mod.History.init(app.gpa, app.io, history_path, app.settings.history_size);
    defer history.deinit();
    var loop: Loop = .{
        .app = app,
        .out = out,
        .renderer = .init(app.gpa, out),
        .editor = .init(app.gpa, &history),
        .raw = &raw,
        .asker = .{ .gpa = app.gpa },
        .input = undefined,
    };
    loop.renderer.io = app.io;
    loop.input = .{ .app = app, .editor = &loop.editor, .renderer = &loop.renderer, .prompt = prompt };
    defer loop.input.deinit();
    defer loop.renderer.deinit();
    defer loop.asker.deinit();
    defer loop.typed.deinit(app.gpa);
    defer loop.editor.deinit();
    defer loop.deinitSends();
    app.host.frontend = .{ .ctx = &loop, .vtable = &frontend_vtable };
    defer app.host.frontend = null;
    history.load() catch |err| try loop.historyFailed(err);
    const completions = try slash.names(app.gpa, app);
    defer app.gpa.free(completions);
    loop.editor.completions = completions;
    loop.editor.io = app.io;
    try loop.banner();
    return loop.prompts();
}

/// The `models` list's entry `spec` ("NAME" or "PROVIDER:NAME") is the model `config` runs.
fn isModel(spec: []const u8, config: panto.Config) bool {
    if (std.mem.indexOfScalar(u8, spec, ':')) |i| if (std.meta.stringToEnum(panto.Provider, spec[0..i])) |p|
        return p == config.provider and std.mem.eql(u8, spec[i + 1 ..], config.model);
    return std.mem.eql(u8, spec, config.model);
}

const Loop = struct {
    app: *App,
    out: *std.Io.Writer,
    renderer: Renderer,
    editor: Editor,
    raw: *terminal.Raw,
    /// Input read but not yet used: the tail of a read, or what was typed during a turn.
    pending: std.ArrayList(u8) = .empty,
    history_warned: bool = false,
    /// The width the prompt was drawn for.
    drawn_cols: u16 = 0,
    /// The text of the last key read (a UTF-8 character: at most 4 bytes).
    key_bytes: [4]u8 = undefined,
    /// The thread reading the keyboard while a turn or a command runs (stopped while a
    /// question is asked), and what was typed before the question: for the next prompt.
    watcher: ?*Watcher = null,
    typed: std.ArrayList(u8) = .empty,
    asker: Asker,
    /// The prompt while a turn runs: what is typed then steers it or follows it up.
    input: TurnInput,
    /// Messages an extension's command sent (ctx.send): each a turn once the command is over.
    sends: std.ArrayList([]u8) = .empty,
    /// The sink of the watcher stopped while a question is asked.
    asking_sink: ?Watcher.Sink = null,

    fn deinitSends(l: *Loop) void {
        for (l.sends.items) |t| l.app.gpa.free(t);
        l.sends.deinit(l.app.gpa);
    }

    fn banner(l: *Loop) !void {
        const agent = l.app.agent;
        try l.out.print("{s}panto {s} · {s} · /help for commands, Ctrl-D to quit{s}\n", .{ style.dim, panto.version, agent.config.model, style.reset });
        if (agent.sessionInfo()) |info| if (info.resumed) {
            l.renderer.cols = terminal.size(stdout_fd).cols;
            try replay.resumed(&l.renderer, agent, prompt);
        };
        try l.out.flush();
    }

    fn prompts(l: *Loop) !u8 {
        defer l.pending.deinit(l.app.gpa);
        while (true) {
            l.drawn_cols = terminal.size(stdout_fd).cols;
            try l.editor.draw(l.out, prompt, l.drawn_cols);
            try l.out.flush();
            const key = switch (try l.readKey()) {
                .key => |k| k,
                .resized => {
                    // The old line no longer fits: where the terminal put it is anyone's
                    // guess (some reflow it, some cut it), so the prompt starts a new row.
                    if (l.editor.drawn_width >= terminal.size(stdout_fd).cols) {
                        try l.out.writeAll("\r\n");
                        l.editor.forget();
                    }
                    continue;
                },
                .closed => return 0,
            };
            if (key == .ctrl and key.ctrl == 'p' and l.app.settings.models.len > 0 and l.editor.search == null) {
                try l.cycleModel();
                continue;
            }
            switch (try l.editor.handle(key)) {
                .none => {},
                .submit => |line| {
                    try l.showSubmitted(line);
                    if (try l.submit(line) == .quit) return 0;
                    try l.runSends();
                },
                .eof => {
                    try l.out.writeAll("\n");
                    return 0;
                },
                .interrupt => |i| if (!i.had_text) {
                    try l.out.print("\n{s}(Ctrl-D or /quit to exit){s}\n", .{ style.dim, style.reset });
                },
                .clear_screen => {
                    try l.out.writeAll("\x1b[H\x1b[2J");
                    l.editor.forget();
                },
                .suspend_job => {
                    try l.out.writeAll("\n" ++ terminal.leave_sequence);
                    try l.out.flush();
                    terminal.suspendJob(l.raw);
                    try l.out.writeAll(enter_sequence);
                    l.editor.forget(); // the shell wrote below it
                },
                .edit_externally => try l.editExternally(),
                .show_result => {
                    try l.editor.erase(l.out);
                    try l.renderer.toggleResults();
                },
                .toggle_thinking => {
                    l.renderer.show_thinking = !l.renderer.show_thinking;
                    try l.editor.erase(l.out);
                    if (l.renderer.show_thinking) try l.renderer.printThinking();
                    try l.out.print("{s}thinking {s}{s}\n", .{ style.dim, if (l.renderer.show_thinking) "shown" else "folded", style.reset });
                },
            }
        }
    }

    /// The prompt's line again, whole (the editor showed only what fits on one row), wrapped
    /// by the terminal: the scrollback keeps what was sent. Flushed, so that what an extension
    /// writes to stderr starts on a line of its own.
    fn showSubmitted(l: *Loop, line: []const u8) !void {
        try l.editor.erase(l.out);
        try style.writeSent(l.out, prompt, line);
        try l.out.flush();
    }

    /// Ctrl-G: the text goes to $EDITOR and comes back as the prompt's, still to be sent. The
    /// prompt is taken off the screen meanwhile and drawn again after.
    fn editExternally(l: *Loop) !void {
        try l.editor.erase(l.out);
        try l.out.writeAll(terminal.leave_sequence);
        try l.out.flush();
        const outcome = try external_editor.edit(l.app.gpa, l.app.io, l.raw, l.editor.line());
        try l.out.writeAll(enter_sequence);
        switch (outcome) {
            .edited => |text| {
                defer l.app.gpa.free(text);
                try l.editor.setText(text);
            },
            .failed => |why| try l.out.print("{s}{s}{s}\n", .{ style.dim, why, style.reset }),
        }
    }

    fn submit(l: *Loop, line: []const u8) !slash.Outcome {
        if (std.mem.trim(u8, line, " \t\n").len == 0) return .done;
        l.editor.history.add(line) catch |err| try l.historyFailed(err);
        const size = terminal.size(stdout_fd);
        l.renderer.cols = size.cols;
        l.renderer.rows = size.rows;
        if (slash.readsKeys(line)) {
            // A picker (/resume, /tree): it reads the keys itself, no watcher beside it.
            const outcome = try slash.run(.{ .app = l.app, .renderer = &l.renderer, .out = l.out, .prompt = prompt }, line);
            try l.out.flush();
            return outcome;
        }
        var watcher = Watcher.start(l.app, stdin_fd);
        if (line[0] == '/') {
            watcher.spawn();
            l.watcher = &watcher;
            defer l.takeTyped(&watcher);
            const outcome = try slash.run(.{ .app = l.app, .renderer = &l.renderer, .out = l.out, .prompt = prompt }, line);
            try l.out.flush();
            return outcome;
        }
        // The editor is typed into during the turn: the turn's input is a copy of the line.
        const input = try l.app.gpa.dupe(u8, line);
        defer l.app.gpa.free(input);
        try l.startTurn(input, &watcher);
        return .done;
    }

    fn startTurn(l: *Loop, input: []const u8, watcher: *Watcher) !void {
        watcher.sink = l.input.sink();
        watcher.spawn();
        l.watcher = watcher;
        try l.runTurn(input, watcher);
    }

    /// The messages the command sent (ctx.send), each shown as a sent prompt and its turn run.
    fn runSends(l: *Loop) !void {
        while (l.sends.items.len > 0) {
            const text = l.sends.orderedRemove(0);
            defer l.app.gpa.free(text);
            try style.writeSent(l.out, prompt, text);
            try l.out.flush();
            const size = terminal.size(stdout_fd);
            l.renderer.cols = size.cols;
            l.renderer.rows = size.rows;
            var watcher = Watcher.start(l.app, stdin_fd);
            try l.startTurn(text, &watcher);
        }
    }

    /// What was typed during the turn goes before anything read later; Ctrl-C presses do not.
    fn takeTyped(l: *Loop, watcher: *Watcher) void {
        l.watcher = null;
        l.typed.appendSlice(l.app.gpa, watcher.stop()) catch {};
        l.pending.insertSlice(l.app.gpa, 0, l.typed.items) catch {};
        l.typed.clearRetainingCapacity();
    }

    /// The question about a call that asks (turn.Observer.approve): the watcher stops while
    /// the keys answer it, what was typed before is kept for the next prompt.
    fn approve(ctx: *anyopaque, call: *const panto.event.ApprovalCall) turn.Answer {
        const l: *Loop = @ptrCast(@alignCast(ctx));
        if (l.watcher == null) return .cancel;
        l.beginAsking();
        defer l.endAsking();
        return l.asker.ask(&l.renderer, call) catch |err| switch (err) {
            error.WriteFailed => .cancel, // no terminal to ask on
        };
    }

    /// The keys go to a question: the watcher stops (what was typed before is kept for the
    /// next prompt) and the turn's prompt is taken off.
    fn beginAsking(l: *Loop) void {
        if (l.watcher) |watcher| {
            l.asking_sink = watcher.sink;
            l.typed.appendSlice(l.app.gpa, watcher.stop()) catch {};
        }
        l.input.acquire();
        l.input.takeOff() catch {};
        l.input.release();
    }

    /// The question is answered: the watcher reads the keys again.
    fn endAsking(l: *Loop) void {
        const sink = l.asking_sink;
        l.asking_sink = null;
        // Keys typed after the answer: the turn's prompt's, or the next prompt's.
        if (sink) |s| s.bytes(s.ctx, l.asker.leftover()) else l.typed.appendSlice(l.app.gpa, l.asker.leftover()) catch {};
        const watcher = l.watcher orelse return;
        watcher.* = Watcher.start(l.app, stdin_fd);
        watcher.sink = sink;
        watcher.spawn();
    }

    fn runTurn(l: *Loop, input: []const u8, watcher: *Watcher) !void {
        const r = &l.renderer;
        r.beginTurn();
        const observer: turn.Observer = .{ .ctx = l, .event = onEvent, .note = onNote, .approve = approve };
        var attached = try at_files.expand(l.app.gpa, l.app.io, input);
        defer attached.deinit();
        for (attached.notes) |n| r.note(n);
        const outcome = turn.runInput(l.app, .{ .text = attached.text, .parts = attached.parts }, observer);
        l.takeTyped(watcher);
        try l.input.finish();
        try r.out.writeAll(style.reset);
        if (r.col != 0) try l.out.writeAll("\n");
        r.col = 0;
        var usage: ?panto.Usage = null;
        var cost: ?f64 = null;
        switch (outcome) {
            .complete => |m| {
                usage = m.usage;
                cost = m.cost;
            },
            .canceled => try l.out.print("{s}(canceled){s}\n", .{ style.dim, style.reset }),
            .failed => |f| try l.out.print("{s}error: {s}{s}{s}{s}\n", .{ style.red, exit_codes.name(f.err), if (f.message.len > 0) ": " else "", f.message, style.reset }),
        }
        try l.statusLine(usage, cost);
    }

    /// The status line (status.zig): after a turn, with its usage and cost; after Ctrl-P,
    /// the model switched to.
    fn statusLine(l: *Loop, usage: ?panto.Usage, cost: ?f64) !void {
        const agent = l.app.agent;
        try l.out.writeAll(style.dim);
        try status.write(l.out, .{
            .model = agent.config.model,
            // What the conversation holds now, whatever the outcome (a canceled turn's partial
            // answer counts), not what the last complete message said.
            .context_tokens = panto.compaction.estimate(&agent.conversation, agent.config.system),
            .window = panto.compaction.contextWindow(agent.config),
            .usage = usage,
            .cost = cost,
            .segments = l.app.host.status_segments.items,
            .session = l.app.spent,
        });
        try l.out.print("{s}\n", .{style.reset});
        try l.out.flush();
    }

    /// Ctrl-P with a `models` list in the config file: the next model of the list (after the
    /// current one; the first when the current one is not in it), shown on a status line.
    fn cycleModel(l: *Loop) !void {
        const list = l.app.settings.models;
        const config = l.app.agent.config;
        var next: usize = 0;
        for (list, 0..) |spec, i| if (isModel(spec, config)) {
            next = (i + 1) % list.len;
            break;
        };
        try l.editor.erase(l.out);
        var diag: panto.config.Diagnostic = .{};
        l.app.switchModelNamed(list[next], &diag) catch |err| {
            const why = if (err == error.InvalidConfig) diag.message() else @errorName(err);
            try l.out.print("{s}Ctrl-P: {s}: {s}{s}\n", .{ style.red, list[next], why, style.reset });
            return;
        };
        try l.statusLine(null, null);
    }

    const Input = union(enum) { key: keys.Key, resized, closed };

    /// One key: from what is pending, else read from the terminal.
    fn readKey(l: *Loop) !Input {
        while (true) {
            if (l.pending.items.len > 0) {
                const lone_escape = l.pending.items.len == 1 and l.pending.items[0] == 0x1b;
                // A lone ESC may be the start of a sequence split by the read: wait a moment.
                if (!lone_escape or !moreWithin(50)) {
                    if (keys.decode(l.pending.items)) |d| {
                        // The key may borrow from `pending`: copy it out before dropping the bytes.
                        const key = l.keep(d.key);
                        l.pending.replaceRangeAssumeCapacity(0, d.len, &.{});
                        return .{ .key = key };
                    }
                }
            }
            // Until a key comes, a look at the terminal's width now and then: a resized
            // terminal gets its prompt redrawn (no SIGWINCH handler: a signal would interrupt
            // the agent's system calls on other threads too).
            while (!moreWithin(250)) {
                if (terminal.size(stdout_fd).cols != l.drawn_cols) return .resized;
            }
            var buf: [256]u8 = undefined;
            const n = std.c.read(stdin_fd, &buf, buf.len);
            if (n == 0) return .closed;
            if (n < 0) {
                if (std.c.errno(n) == .INTR) continue;
                return .closed;
            }
            try l.pending.appendSlice(l.app.gpa, buf[0..@intCast(n)]);
        }
    }

    /// A key whose text borrows from `pending`, with its text moved to `key_bytes`.
    fn keep(l: *Loop, key: keys.Key) keys.Key {
        return switch (key) {
            .char => |ch| blk: {
                @memcpy(l.key_bytes[0..ch.len], ch);
                break :blk .{ .char = l.key_bytes[0..ch.len] };
            },
            else => key,
        };
    }

    /// Said once a run: the history goes on in memory.
    fn historyFailed(l: *Loop, err: anyerror) !void {
        if (l.history_warned) return;
        l.history_warned = true;
        const path = l.editor.history.path orelse "";
        const why = if (err == error.HistoryWrite) "cannot be written" else @errorName(err);
        try l.out.print("{s}history: {s} {s}: kept in memory for this run{s}\n", .{ style.dim, path, why, style.reset });
    }
};

/// Whether stdin has input within `ms` milliseconds.
fn moreWithin(ms: c_int) bool {
    var fds = [_]std.c.pollfd{.{ .fd = stdin_fd, .events = std.c.POLL.IN, .revents = 0 }};
    return std.c.poll(&fds, 1, ms) > 0;
}

/// The turn's events and notes go to the screen with the turn's prompt taken off meanwhile.
fn onEvent(ctx: *anyopaque, e: *const panto.Event) void {
    const l: *Loop = @ptrCast(@alignCast(ctx));
    l.input.acquire();
    defer l.input.release();
    l.input.takeOff() catch {};
    l.renderer.event(e);
    if (e.* == .user_message) l.input.entered(e.user_message.text);
    l.input.putBack() catch {};
}

fn onNote(ctx: *anyopaque, text: []const u8) void {
    const l: *Loop = @ptrCast(@alignCast(ctx));
    l.input.acquire();
    defer l.input.release();
    l.input.takeOff() catch {};
    l.renderer.note(text);
    l.input.putBack() catch {};
}

// ---- ext.ui and a command's ctx (lua/ext_ui.zig's Frontend) ----

const frontend_vtable: Host.Frontend.VTable = .{
    .notify = uiNotify,
    .confirm = uiConfirm,
    .select = uiSelect,
    .input = uiInput,
    .send = uiSend,
    .set_model = uiSetModel,
};

fn uiNotify(ctx: *anyopaque, level: @import("../lua/ext_ui.zig").Level, text: []const u8) void {
    const l: *Loop = @ptrCast(@alignCast(ctx));
    l.input.acquire();
    defer l.input.release();
    l.input.takeOff() catch {};
    ext_dialogs.notify(&l.renderer, level, text) catch {
        l.renderer.write_failed = true;
    };
    l.input.putBack() catch {};
}

fn uiConfirm(ctx: *anyopaque, title: []const u8, text: []const u8) ?bool {
    const l: *Loop = @ptrCast(@alignCast(ctx));
    l.beginAsking();
    defer l.endAsking();
    return ext_dialogs.confirm(&l.asker, &l.renderer, title, text) catch null;
}

fn uiSelect(ctx: *anyopaque, title: []const u8, options: []const []const u8) ?usize {
    const l: *Loop = @ptrCast(@alignCast(ctx));
    l.beginAsking();
    defer l.endAsking();
    return switch (ext_dialogs.select(&l.asker, &l.renderer, title, options) catch .closed) {
        .index => |i| i,
        .none, .closed => null,
    };
}

fn uiInput(ctx: *anyopaque, title: []const u8, placeholder: []const u8) ?[]u8 {
    const l: *Loop = @ptrCast(@alignCast(ctx));
    l.beginAsking();
    defer l.endAsking();
    if (!(ext_dialogs.input(&l.asker, &l.renderer, title, placeholder) catch false)) return null;
    return l.app.gpa.dupe(u8, l.asker.reason.items) catch null;
}

/// A command's message steers a turn that runs; a handler's follows it up (sent when it would
/// end). With no turn taking it, the message waits for the command's or the turn's end
/// (runSends).
fn uiSend(ctx: *anyopaque, text: []const u8, from: Host.CtxKind) ?[]const u8 {
    const l: *Loop = @ptrCast(@alignCast(ctx));
    if (std.mem.trim(u8, text, " \t\n").len == 0) return "an empty message";
    l.app.steerTurn(if (from == .command) .steer else .follow_up, text) catch |err| switch (err) {
        error.NoTurn, error.Ended => {
            const copy = l.app.gpa.dupe(u8, text) catch return "not enough memory";
            l.sends.append(l.app.gpa, copy) catch {
                l.app.gpa.free(copy);
                return "not enough memory";
            };
        },
        else => return "the turn that runs takes no more messages",
    };
    return null;
}

fn uiSetModel(ctx: *anyopaque, spec: []const u8) ?[]const u8 {
    const l: *Loop = @ptrCast(@alignCast(ctx));
    return l.app.extensionSetModel(spec);
}
