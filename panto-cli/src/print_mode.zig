//! Print mode: one turn, its answer streamed to stdout as it comes (a flush per delta), or
//! with --json its events as JSON lines; the typed error on stderr; the exit code of its
//! family (exit_codes.zig). SIGINT cancels the turn: a thread waits for it with sigwait
//! (SIGINT is blocked in every thread, see blockSigint) and calls app.cancelTurn; started
//! before the extensions load, it interrupts a load that does not end too (Sigint).
const std = @import("std");
const panto = @import("panto");
const App = @import("app.zig").App;
const Host = @import("lua/host.zig").Host;
const turn = @import("turn.zig");
const json_events = @import("json_events.zig");
const exit_codes = @import("exit_codes.zig");
const at_files = @import("at_files.zig");

pub const Options = struct {
    json: bool = false,
    stdout: *std.Io.Writer,
    stderr: *std.Io.Writer,
    /// stderr is a terminal and NO_COLOR is not set: notes are dim.
    stderr_tty: bool = false,
};

/// Blocks SIGINT in the calling thread and every thread it starts later: call it first thing,
/// before any thread exists, so that only the watcher's sigwait takes the signal.
pub fn blockSigint() void {
    var set = std.posix.sigemptyset();
    std.posix.sigaddset(&set, .INT);
    std.posix.sigprocmask(std.posix.SIG.BLOCK, &set, null);
}

/// SIGINT of print mode, watched from before the extensions load (the Lua code that runs is
/// interrupted: Host.cancelAsync) to the end of the turn (App.cancelTurn, once there is an App).
pub const Sigint = struct {
    host: *Host,
    app: std.atomic.Value(?*App) = .init(null),
    /// SIGINT came. A signal taken before the turn's stream was current (the set-up, the
    /// instant after run()) cancels at the turn's first event.
    interrupted: std.atomic.Value(bool) = .init(false),

    /// Starts the watcher thread (SIGINT must be blocked already: blockSigint). The Sigint
    /// outlives it: the process exits after the turn.
    pub fn watch(s: *Sigint) void {
        if (std.Thread.spawn(.{ .stack_size = 64 * 1024 }, watchSigint, .{s})) |t| t.detach() else |_| {}
    }

    fn cancel(s: *Sigint) void {
        if (s.app.load(.seq_cst)) |app| app.cancelTurn() else s.host.cancelAsync();
    }
};

/// What the turn is given: the prompt's text, and an image or PDF piped on stdin.
pub const Prompt = struct {
    text: []const u8,
    media: ?[]const u8 = null,
    /// The bytes of `text` that came from the command line (-p PROMPT): their `@path` words
    /// attach files as interactive mode's do (at_files.zig); piped text's do not.
    given_len: usize = 0,
};

/// Runs `prompt` as one turn; the process's exit code.
pub fn run(app: *App, prompt: Prompt, options: Options, sigint: *Sigint) u8 {
    var p: Printer = .{ .o = options, .app = app, .sigint = sigint };
    sigint.app.store(app, .seq_cst);
    if (options.json) if (app.agent.sessionInfo()) |info| {
        json_events.writeSession(options.stdout, info, app.agent.messageCount()) catch {};
        options.stdout.flush() catch {};
    };
    if (sigint.interrupted.load(.seq_cst)) return p.finish(.canceled); // Ctrl-C during the set-up
    const out_of_memory: turn.Outcome = .{ .failed = .{ .err = error.OutOfMemory, .message = "out of memory" } };
    var attached = at_files.expandWith(app.gpa, app.io, prompt.text[0..prompt.given_len], prompt.text[prompt.given_len..]) catch
        return p.finish(out_of_memory);
    defer attached.deinit();
    for (attached.notes) |n| Printer.note(&p, n);
    // The files named, then what was piped.
    var parts: std.ArrayList(panto.content.Part) = .empty;
    defer parts.deinit(app.gpa);
    parts.appendSlice(app.gpa, attached.parts) catch return p.finish(out_of_memory);
    if (prompt.media) |bytes| parts.append(app.gpa, .{ .media = .{ .bytes = bytes } }) catch return p.finish(out_of_memory);
    const input: panto.Agent.Input = .{ .text = attached.text, .parts = parts.items };
    const outcome = turn.runInput(app, input, .{ .ctx = &p, .event = Printer.event, .note = Printer.note, .approve = Printer.refuse });
    return p.finish(outcome);
}

fn watchSigint(s: *Sigint) void {
    var set = std.posix.sigemptyset();
    std.posix.sigaddset(&set, .INT);
    while (true) {
        var sig: c_int = 0;
        if (std.c.sigwait(&set, &sig) != 0) return;
        s.interrupted.store(true, .seq_cst);
        s.cancel();
    }
}

const Printer = struct {
    o: Options,
    app: *App,
    /// Text was written, and its last byte.
    wrote: bool = false,
    last: u8 = '\n',
    /// stdout went away (a closed pipe): the turn is canceled, the exit code says so.
    broken: bool = false,
    sigint: *Sigint,

    fn event(ctx: *anyopaque, e: *const panto.Event) void {
        const p: *Printer = @ptrCast(@alignCast(ctx));
        if (p.sigint.interrupted.load(.seq_cst)) p.app.cancelTurn();
        if (p.broken) return;
        if (p.o.json) {
            json_events.writeEvent(p.o.stdout, e) catch return p.outGone();
            p.o.stdout.flush() catch return p.outGone();
            return;
        }
        switch (e.*) {
            // The text of a later message of the turn (after a tool round) starts on a new line.
            .message_start => if (p.wrote and p.last != '\n') p.text("\n"),
            .content_delta => |d| if (d.kind == .text and d.text.len > 0) p.text(d.text),
            else => {},
        }
    }

    fn text(p: *Printer, t: []const u8) void {
        p.o.stdout.writeAll(t) catch return p.outGone();
        p.o.stdout.flush() catch return p.outGone();
        p.wrote = true;
        p.last = t[t.len - 1];
    }

    fn outGone(p: *Printer) void {
        p.broken = true;
        p.app.cancelTurn();
    }

    fn note(ctx: *anyopaque, t: []const u8) void {
        const p: *Printer = @ptrCast(@alignCast(ctx));
        if (p.o.json) {
            json_events.writeNote(p.o.stdout, t) catch return p.outGone();
            p.o.stdout.flush() catch return p.outGone();
            return;
        }
        const dim, const reset = if (p.o.stderr_tty) .{ "\x1b[2m", "\x1b[0m" } else .{ "", "" };
        p.o.stderr.print("{s}panto: {s}{s}\n", .{ dim, t, reset }) catch {};
        p.o.stderr.flush() catch {};
    }

    /// Print mode has nobody to ask: a call that asks is denied, with the reason for the
    /// model, and said on stderr (--json's stdout too: its tool_result holds the reason).
    fn refuse(ctx: *anyopaque, call: *const panto.event.ApprovalCall) turn.Answer {
        const p: *Printer = @ptrCast(@alignCast(ctx));
        const dim, const reset = if (p.o.stderr_tty) .{ "\x1b[2m", "\x1b[0m" } else .{ "", "" };
        p.o.stderr.print("{s}panto: a {s} call was denied: it asks for approval, and print mode cannot ask (--yolo or an approval rule allows it){s}\n", .{ dim, call.name.slice(), reset }) catch {};
        p.o.stderr.flush() catch {};
        return .{ .deny = "print mode (panto -p) cannot ask the user, so the call was not run; the user may allow it with --yolo or an approval rule" };
    }

    fn finish(p: *Printer, outcome: turn.Outcome) u8 {
        const out = p.o.stdout;
        if (!p.o.json and p.wrote and p.last != '\n' and !p.broken) out.writeAll("\n") catch {};
        defer {
            out.flush() catch {};
            p.o.stderr.flush() catch {};
        }
        if (p.broken) {
            p.o.stderr.writeAll("panto: stdout was closed: the turn was canceled\n") catch {};
            return exit_codes.internal;
        }
        switch (outcome) {
            .complete => {
                if (p.o.json) json_events.writeDone(out) catch {};
                return exit_codes.ok;
            },
            .canceled => {
                if (p.o.json) json_events.writeError(out, error.Canceled, 0, "canceled_error", "the turn was canceled") catch {};
                p.o.stderr.writeAll("panto: canceled\n") catch {};
                return exit_codes.canceled;
            },
            .failed => |f| {
                if (p.o.json) json_events.writeError(out, f.err, f.http_status, f.error_type, f.message) catch {};
                p.o.stderr.print("panto: {s}: {s}\n", .{ exit_codes.name(f.err), f.message }) catch {};
                return exit_codes.ofError(f.err);
            },
        }
    }
};
