//! --mode rpc: a program drives panto (an editor plugin) through JSON lines, commands on
//! stdin, events and answers on stdout; docs/cli.md "RPC mode" lists every message.
//!
//! A reader thread takes the lines. `abort`, `approve`, `deny`, `steer`, `follow_up` and
//! `dequeue` act on the turn that runs, so it answers them at once; the other commands queue for the main
//! thread, which runs them in order (a `prompt`'s turn to its end, its events written as
//! --json writes them). A call that asks waits on the main thread for its `approve` or
//! `deny`, or for an abort or the end of stdin (which cancel the turn). One lock guards the
//! queue, the calls waiting, the early steers and stdout. At the end the main thread wakes
//! the reader (a byte on a pipe it polls with stdin), joins it and frees what it holds.
const std = @import("std");
const panto = @import("panto");
const c = std.c;
const App = @import("app.zig").App;
const turn = @import("turn.zig");
const permissions = @import("permissions.zig");
const json_events = @import("json_events.zig");
const exit_codes = @import("exit_codes.zig");

const Stringify = std.json.Stringify;
const Parsed = std.json.Parsed(std.json.Value);

/// The commands the main thread runs, in the order they came.
const queued_commands = [_][]const u8{ "prompt", "get_state", "set_model", "set_thinking", "new_session", "fork", "get_messages", "compact", "get_commands" };

const all_commands = "prompt, steer, follow_up, dequeue, abort, approve, deny, extension_ui_response, get_state, set_model, set_thinking, new_session, fork, get_messages, compact, get_commands";

/// A call of the approval request on screen (the client's to answer) and its answer once given.
const Waiting = struct {
    id: []u8,
    answer: ?turn.Answer = null,
    /// A deny's reason, owned.
    reason: []u8 = &.{},
};

const UiAnswer = union(enum) { confirmed: bool, value: []u8, cancelled };

const Early = struct { source: @import("app.zig").SteerSource, text: []u8 };

const Rpc = struct {
    app: *App,
    out: *std.Io.Writer,
    lock: c.pthread_mutex_t = c.PTHREAD_MUTEX_INITIALIZER,
    changed: c.pthread_cond_t = c.PTHREAD_COND_INITIALIZER,
    queue: std.ArrayList(Parsed) = .empty,
    waiting: std.ArrayList(Waiting) = .empty,
    /// stdin ended: the queue is the last of the commands; no answer to a call will come.
    eof: bool = false,
    /// A turn runs (set by the main thread), and it was aborted (the reader's abort).
    running: bool = false,
    aborted: bool = false,
    /// What runs is a prompt's turn (not a compaction): the early steers are for it.
    in_turn: bool = false,
    /// stdout could not be written: the client is gone.
    broken: bool = false,
    /// Steers and follow-ups for a turn that is starting (its stream not made yet), or for
    /// the prompt queued next: given to the stream at the turn's first event.
    early: std.ArrayList(Early) = .empty,
    /// The extension's question asked (ext.ui.confirm/select/input: one at a time, Lua runs on the
    /// main thread), its number, and its answer once the client gave it.
    ui_asked: ?u64 = null,
    ui_count: u64 = 0,
    ui_answer: ?UiAnswer = null,
    /// Messages an extension sent (ctx.send) that no turn took: each a turn of its own once
    /// the command or turn that runs is over (main thread only).
    sends: std.ArrayList([]u8) = .empty,

    /// The main thread's wake-up of the reader: [read end, write end].
    wake: [2]c.fd_t = .{ -1, -1 },

    /// After the reader thread was joined: what it queued and nobody ran, and the lists.
    fn deinit(r: *Rpc) void {
        const gpa = r.app.gpa;
        for (r.queue.items) |q| q.deinit();
        r.queue.deinit(gpa);
        r.clearWaiting();
        r.waiting.deinit(gpa);
        r.clearEarly();
        r.early.deinit(gpa);
        if (r.ui_answer) |a| if (a == .value) gpa.free(a.value);
        for (r.sends.items) |t| gpa.free(t);
        r.sends.deinit(gpa);
    }

    fn acquire(r: *Rpc) void {
        _ = c.pthread_mutex_lock(&r.lock);
    }

    fn release(r: *Rpc) void {
        _ = c.pthread_mutex_unlock(&r.lock);
    }

    /// Ends a line written under the lock; a client gone cancels the turn.
    fn flushLine(r: *Rpc) void {
        r.out.flush() catch {
            r.broken = true;
            r.app.cancelTurn();
        };
    }

    fn clearEarly(r: *Rpc) void {
        for (r.early.items) |e| r.app.gpa.free(e.text);
        r.early.clearRetainingCapacity();
    }

    fn clearWaiting(r: *Rpc) void {
        for (r.waiting.items) |w| {
            r.app.gpa.free(w.id);
            r.app.gpa.free(w.reason);
        }
        r.waiting.clearRetainingCapacity();
    }
};

/// Runs until stdin ends (after the commands queued and the turn that runs), or stdout goes
/// away. The process's exit code: 0, or 1 when stdout failed.
pub fn run(app: *App, out: *std.Io.Writer) u8 {
    var r: Rpc = .{ .app = app, .out = out };
    defer r.deinit();
    // The reader waits on stdin and on this pipe: a byte in it (stdout gone) ends the reader
    // while stdin is still open, so the main thread can join it and free what it holds.
    if (c.pipe(&r.wake) != 0) return exit_codes.internal;
    defer for (r.wake) |fd| {
        _ = c.close(fd);
    };
    if (app.agent.sessionInfo()) |info| {
        json_events.writeSession(out, info, app.agent.messageCount()) catch {};
        r.flushLine();
    }
    app.host.frontend = .{ .ctx = &r, .vtable = &frontend_vtable };
    defer app.host.frontend = null;
    const reader = std.Thread.spawn(.{}, readCommands, .{&r}) catch return exit_codes.internal;
    defer {
        _ = c.write(r.wake[1], "x", 1);
        reader.join();
    }
    while (true) {
        r.acquire();
        while (r.queue.items.len == 0 and !r.eof and !r.broken) _ = c.pthread_cond_wait(&r.changed, &r.lock);
        if (r.broken or r.queue.items.len == 0) {
            r.release();
            break;
        }
        const command = r.queue.orderedRemove(0);
        r.release();
        defer command.deinit();
        runQueued(&r, command.value.object);
        runSends(&r);
    }
    return if (r.broken) exit_codes.internal else exit_codes.ok;
}

// ---- the reader thread ----

fn readCommands(r: *Rpc) void {
    const gpa = r.app.gpa;
    var line: std.ArrayList(u8) = .empty;
    defer line.deinit(gpa);
    var buf: [4096]u8 = undefined;
    while (true) {
        var fds = [_]c.pollfd{
            .{ .fd = 0, .events = c.POLL.IN, .revents = 0 },
            .{ .fd = r.wake[0], .events = c.POLL.IN, .revents = 0 },
        };
        const ready = c.poll(&fds, fds.len, -1);
        if (ready < 0 and c.errno(ready) == .INTR) continue;
        if (ready < 0) break;
        if (fds[1].revents != 0) break; // the main thread is done: stop reading
        const n = c.read(0, &buf, buf.len);
        if (n < 0 and c.errno(n) == .INTR) continue;
        if (n <= 0) break;
        var rest = buf[0..@intCast(n)];
        while (std.mem.indexOfScalar(u8, rest, '\n')) |nl| {
            line.appendSlice(gpa, rest[0..nl]) catch {};
            take(r, line.items);
            line.clearRetainingCapacity();
            rest = rest[nl + 1 ..];
        }
        line.appendSlice(gpa, rest) catch {};
    }
    if (line.items.len > 0) take(r, line.items); // a last line without its newline
    r.acquire();
    r.eof = true;
    _ = c.pthread_cond_broadcast(&r.changed);
    r.release();
}

/// One line from the client: answered now, or queued for the main thread.
fn take(r: *Rpc, raw: []const u8) void {
    const text = std.mem.trim(u8, raw, " \t\r");
    if (text.len == 0) return;
    const parsed = std.json.parseFromSlice(std.json.Value, r.app.gpa, text, .{}) catch |err| {
        const why = if (err == error.OutOfMemory) "out of memory" else "the line is not JSON";
        return respondError(r, null, null, "malformed", why);
    };
    if (parsed.value != .object) {
        parsed.deinit();
        return respondError(r, null, null, "malformed", "a command is a JSON object");
    }
    const command = parsed.value.object;
    const id = command.get("id");
    const kind = stringField(command, "type") orelse {
        respondError(r, id, null, "malformed", "a command needs \"type\", a string");
        return parsed.deinit();
    };
    if (isQueued(kind)) {
        r.acquire();
        defer r.release();
        r.queue.append(r.app.gpa, parsed) catch {
            respondErrorLocked(r, id, kind, "failed", "out of memory");
            return parsed.deinit();
        };
        _ = c.pthread_cond_broadcast(&r.changed);
        return;
    }
    defer parsed.deinit();
    if (std.mem.eql(u8, kind, "abort")) {
        abort(r);
        respond(r, id, kind, .{});
    } else if (std.mem.eql(u8, kind, "approve") or std.mem.eql(u8, kind, "deny")) {
        answerCall(r, command, id, kind);
    } else if (std.mem.eql(u8, kind, "steer") or std.mem.eql(u8, kind, "follow_up")) {
        steer(r, command, id, kind);
    } else if (std.mem.eql(u8, kind, "extension_ui_response")) {
        answerUi(r, command, id, kind);
    } else if (std.mem.eql(u8, kind, "dequeue")) {
        dequeue(r, id, kind);
    } else {
        respondError(r, id, kind, "unknown_command", "the commands: " ++ all_commands);
    }
}

fn isQueued(kind: []const u8) bool {
    for (queued_commands) |q| if (std.mem.eql(u8, q, kind)) return true;
    return false;
}

/// Cancels the turn that runs, if any: a call waiting for its answer is denied, and the turn
/// ends with a `canceled` error line. Nothing runs: nothing to do.
fn abort(r: *Rpc) void {
    r.acquire();
    defer r.release();
    if (!r.running) return;
    r.aborted = true;
    _ = c.pthread_cond_broadcast(&r.changed);
    r.app.cancelTurn();
}

/// `steer`/`follow_up`: the text joins the turn that runs (App.steerTurn), or the one about to
/// start (a prompt queued or starting: held until its stream exists). None: `no_turn`.
fn steer(r: *Rpc, command: std.json.ObjectMap, id: ?std.json.Value, kind: []const u8) void {
    const text = stringField(command, "text") orelse return respondError(r, id, kind, "invalid_argument", "\"text\" (a string) is needed");
    if (std.mem.trim(u8, text, " \t\r\n").len == 0) return respondError(r, id, kind, "invalid_argument", "\"text\" is empty");
    const source: @import("app.zig").SteerSource = if (std.mem.eql(u8, kind, "steer")) .steer else .follow_up;
    r.acquire();
    defer r.release();
    r.app.steerTurn(source, text) catch |err| switch (err) {
        error.NoTurn => if (r.running or promptQueued(r)) {
            const copy = r.app.gpa.dupe(u8, text) catch return respondErrorLocked(r, id, kind, "failed", "out of memory");
            r.early.append(r.app.gpa, .{ .source = source, .text = copy }) catch {
                r.app.gpa.free(copy);
                return respondErrorLocked(r, id, kind, "failed", "out of memory");
            };
        } else return respondErrorLocked(r, id, kind, "no_turn", "no turn runs: send a prompt"),
        error.Ended => return respondErrorLocked(r, id, kind, "no_turn", "the turn takes no more (it is ending, or was canceled): send a prompt"),
        error.OutOfMemory => return respondErrorLocked(r, id, kind, "failed", "out of memory"),
        error.InvalidArgument => return respondErrorLocked(r, id, kind, "invalid_argument", "\"text\" is empty"),
    };
    respondLocked(r, id, kind, .{});
}

/// `dequeue`: the steers and follow-ups sent that no turn took yet, taken back in the order
/// sent (those held for a turn about to start, then the running turn's: App.withdrawQueued),
/// as `messages`: they will not reach the model.
fn dequeue(r: *Rpc, id: ?std.json.Value, kind: []const u8) void {
    const gpa = r.app.gpa;
    r.acquire();
    defer r.release();
    var taken: std.ArrayList(panto.Stream.Queued) = .empty;
    defer {
        for (taken.items) |m| gpa.free(m.text);
        taken.deinit(gpa);
    }
    r.app.withdrawQueued(&taken) catch return respondErrorLocked(r, id, kind, "failed", "out of memory");
    var messages: std.ArrayList(Early) = .empty;
    defer messages.deinit(gpa);
    messages.appendSlice(gpa, r.early.items) catch return respondErrorLocked(r, id, kind, "failed", "out of memory");
    for (taken.items) |m| messages.append(gpa, .{ .source = std.meta.stringToEnum(@import("app.zig").SteerSource, @tagName(m.source)).?, .text = m.text }) catch
        return respondErrorLocked(r, id, kind, "failed", "out of memory");
    respondLocked(r, id, kind, .{ .messages = messages.items });
    r.clearEarly();
}

fn promptQueued(r: *const Rpc) bool {
    for (r.queue.items) |q| if (std.mem.eql(u8, stringField(q.value.object, "type").?, "prompt")) return true;
    return false;
}

/// `approve`/`deny` a call of the approval request that waits for its answer.
fn answerCall(r: *Rpc, command: std.json.ObjectMap, id: ?std.json.Value, kind: []const u8) void {
    const gpa = r.app.gpa;
    const call_id = stringField(command, "call_id") orelse return respondError(r, id, kind, "invalid_argument", "\"call_id\" (a string) is needed: the id of a call of the approval_request");
    const approve = std.mem.eql(u8, kind, "approve");
    const reason = stringField(command, "reason") orelse "";
    const remember = if (command.get("remember")) |v| v == .bool and v.bool else false;
    // "Allow this rule": the calls it matches are approved for the rest of the run.
    const rule: ?[]const u8 = if (!approve) null else if (command.get("rule")) |v| blk: {
        if (v != .string or permissions.Entry.parse(v.string) == null)
            return respondError(r, id, kind, "invalid_argument", "\"rule\" must be \"TOOL\" or \"TOOL(PATTERN)\", as \"bash(git status*)\"");
        break :blk v.string;
    } else null;
    r.acquire();
    defer r.release();
    for (r.waiting.items) |*w| {
        if (!std.mem.eql(u8, w.id, call_id) or w.answer != null) continue;
        if (rule) |entry| {
            w.reason = gpa.dupe(u8, entry) catch return respondErrorLocked(r, id, kind, "failed", "out of memory");
            w.answer = .{ .allow_rule = w.reason };
        } else if (approve) {
            w.answer = if (remember) .allow_tool else .allow_once;
        } else {
            w.reason = gpa.dupe(u8, reason) catch return respondErrorLocked(r, id, kind, "failed", "out of memory");
            w.answer = .{ .deny = w.reason };
        }
        _ = c.pthread_cond_broadcast(&r.changed);
        return respondLocked(r, id, kind, .{});
    }
    respondErrorLocked(r, id, kind, "unknown_call", "no call waits for an answer under this call_id (answered already, or not asked)");
}

// ---- the main thread's commands ----

fn runQueued(r: *Rpc, command: std.json.ObjectMap) void {
    const id = command.get("id");
    const kind = stringField(command, "type").?;
    const agent = r.app.agent;
    if (std.mem.eql(u8, kind, "prompt")) {
        const text = stringField(command, "text") orelse return respondError(r, id, kind, "invalid_argument", "\"text\" (a string) is needed");
        if (std.mem.trim(u8, text, " \t\r\n").len == 0) return respondError(r, id, kind, "invalid_argument", "\"text\" is empty");
        respond(r, id, kind, .{});
        if (!runExtensionCommand(r, text)) runTurn(r, text);
    } else if (std.mem.eql(u8, kind, "get_commands")) {
        const Listed = struct { name: []const u8, description: []const u8, source: []const u8 = "extension" };
        var listed: std.ArrayList(Listed) = .empty;
        defer listed.deinit(r.app.gpa);
        for (r.app.host.commands()) |cmd| listed.append(r.app.gpa, .{ .name = cmd.name, .description = cmd.description }) catch
            return respondError(r, id, kind, "failed", "out of memory");
        respond(r, id, kind, .{ .commands = listed.items });
    } else if (std.mem.eql(u8, kind, "get_state")) {
        const info = agent.sessionInfo();
        respond(r, id, kind, .{
            .provider = @tagName(agent.config.provider),
            .model = agent.config.model,
            .thinking = @tagName(agent.config.thinking),
            .max_tokens = agent.config.max_tokens,
            .session = if (info) |i| i.id else null,
            .session_file = if (info) |i| i.path else null,
            .message_count = agent.messageCount(),
            // The session's so far (as the status line's): tokens, and USD (null: unknown).
            .spent = .{ .usage = r.app.spent.usage, .cost_usd = r.app.spent.cost },
        });
    } else if (std.mem.eql(u8, kind, "set_model")) {
        const model = stringField(command, "model") orelse return respondError(r, id, kind, "invalid_argument", "\"model\" (a string) is needed");
        var provider: ?panto.Provider = null;
        if (stringField(command, "provider")) |name| provider = std.meta.stringToEnum(panto.Provider, name) orelse
            return respondError(r, id, kind, "invalid_argument", "\"provider\" must be one of anthropic, openai, openai-responses, gemini, bedrock");
        var diag: panto.config.Diagnostic = .{};
        r.app.switchModel(provider, model, &diag) catch |err|
            return respondError(r, id, kind, "invalid_argument", if (err == error.InvalidConfig) diag.message() else @errorName(err));
        respond(r, id, kind, .{ .provider = @tagName(agent.config.provider), .model = agent.config.model, .max_tokens = agent.config.max_tokens });
    } else if (std.mem.eql(u8, kind, "set_thinking")) {
        const level = stringField(command, "level") orelse return respondError(r, id, kind, "invalid_argument", "\"level\" (a string) is needed: off, minimal, low, medium or high");
        var json: std.Io.Writer.Allocating = .init(r.app.gpa);
        defer json.deinit();
        json.writer.print("{{\"thinking\":{f}}}", .{std.json.fmt(level, .{})}) catch return respondError(r, id, kind, "failed", "out of memory");
        var diag: panto.config.Diagnostic = .{};
        agent.setConfig(json.written(), &diag) catch |err|
            return respondError(r, id, kind, "invalid_argument", if (err == error.InvalidConfig) diag.message() else @errorName(err));
        respond(r, id, kind, .{ .thinking = @tagName(agent.config.thinking) });
    } else if (std.mem.eql(u8, kind, "new_session")) {
        const old = if (agent.sessionInfo()) |i| r.app.gpa.dupe(u8, i.id) catch return respondError(r, id, kind, "failed", "out of memory") else null;
        defer if (old) |o| r.app.gpa.free(o);
        if (old == null) {
            var diag: panto.conversation_json.Diagnostic = .{};
            agent.truncate(0, &diag) catch |err| return respondError(r, id, kind, "failed", @errorName(err));
        } else forkAt(r, id, kind, 0) catch return;
        r.app.countSpent();
        const info = agent.sessionInfo();
        respond(r, id, kind, .{ .session = if (info) |i| i.id else null, .parent = old });
    } else if (std.mem.eql(u8, kind, "fork")) {
        if (agent.sessionInfo() == null) return respondError(r, id, kind, "no_session", "no session to fork (--no-session)");
        const count: usize = if (command.get("message_count")) |v| switch (v) {
            .integer => |n| if (n >= 0) @intCast(n) else return respondError(r, id, kind, "invalid_argument", "\"message_count\" is a number of messages, 0 or more"),
            else => return respondError(r, id, kind, "invalid_argument", "\"message_count\" is a number of messages, 0 or more"),
        } else agent.messageCount();
        forkAt(r, id, kind, count) catch return;
        respond(r, id, kind, .{ .session = agent.sessionInfo().?.id, .message_count = agent.messageCount() });
    } else if (std.mem.eql(u8, kind, "get_messages")) {
        var json: std.Io.Writer.Allocating = .init(r.app.gpa);
        defer json.deinit();
        panto.conversation_json.writeMessages(&json.writer, agent.conversation.messages.items) catch return respondError(r, id, kind, "failed", "out of memory");
        respond(r, id, kind, .{ .messages = json_events.RawJson{ .text = json.written() } });
    } else if (std.mem.eql(u8, kind, "compact")) {
        respondCompact(r, id, kind, stringField(command, "instructions"));
    } else unreachable; // only queued_commands are queued
}

/// The core's session fork at `count` messages; a refusal answered with its reason.
fn forkAt(r: *Rpc, id: ?std.json.Value, kind: []const u8, count: usize) error{Refused}!void {
    const agent = r.app.agent;
    var diag: panto.config.Diagnostic = .{};
    agent.forkSession(count, null, &diag) catch |err| {
        var buf: [96]u8 = undefined;
        const why = if (err == error.InvalidArgument)
            std.fmt.bufPrint(&buf, "{d} is past the conversation's end ({d} messages)", .{ count, agent.messageCount() }) catch "past the end"
        else if (diag.message().len > 0) diag.message() else @errorName(err);
        respondError(r, id, kind, if (err == error.InvalidArgument or err == error.InvalidConversation) "invalid_argument" else "failed", why);
        return error.Refused;
    };
    r.app.countSpent(); // the new session's totals: its messages'
}

/// `compact` (optional `instructions` for the summary): its events (compaction_start,
/// compaction_end, ...), then the response; an abort cancels it as it does a turn.
fn respondCompact(r: *Rpc, id: ?std.json.Value, kind: []const u8, instructions: ?[]const u8) void {
    r.acquire();
    r.running = true;
    r.aborted = false;
    r.release();
    const outcome = turn.compact(r.app, instructions, .{ .ctx = r, .event = onEvent, .note = onNote, .approve = onApproval });
    r.acquire();
    r.running = false;
    r.release();
    switch (outcome) {
        .nothing => respondError(r, id, kind, "nothing_to_compact", "every message is recent"),
        .compacted => |done| respond(r, id, kind, .{ .tokens_before = done.tokens_before, .tokens_after = done.tokens_after, .message_count = done.message_count }),
        .canceled => respondError(r, id, kind, "canceled", "the compaction was canceled"),
        .failed => |f| respondError(r, id, kind, exit_codes.name(f.err), f.message),
    }
}

/// A prompt "/name args" naming an extension's command runs that command (as pi's RPC mode
/// does): its output as a `command_output` line, then `done`. false: no such command (the
/// text is sent to the model as it is).
fn runExtensionCommand(r: *Rpc, text: []const u8) bool {
    const line = std.mem.trim(u8, text, " \t\r\n");
    if (line.len < 2 or line[0] != '/') return false;
    const end = std.mem.indexOfAny(u8, line, " \t") orelse line.len;
    const name = line[1..end];
    const args = std.mem.trim(u8, line[end..], " \t");
    for (r.app.host.commands()) |cmd| {
        if (!std.mem.eql(u8, cmd.name, name)) continue;
        var out: std.Io.Writer.Allocating = .init(r.app.gpa);
        defer out.deinit();
        _ = r.app.host.runCommand(name, args, &out.writer);
        r.acquire();
        defer r.release();
        var s: Stringify = .{ .writer = r.out };
        s.beginObject() catch {};
        s.objectField("event") catch {};
        s.write("command_output") catch {};
        s.objectField("command") catch {};
        s.write(name) catch {};
        s.objectField("text") catch {};
        s.write(out.written()) catch {};
        endLine(r, &s);
        json_events.writeDone(r.out) catch {};
        r.flushLine();
        return true;
    }
    return false;
}

/// The messages the extensions sent that no turn took, each a turn, in order (a turn's own
/// handlers may send more).
fn runSends(r: *Rpc) void {
    while (r.sends.items.len > 0 and !r.broken) {
        const text = r.sends.orderedRemove(0);
        defer r.app.gpa.free(text);
        runTurn(r, text);
    }
}

fn runTurn(r: *Rpc, text: []const u8) void {
    r.acquire();
    r.running = true;
    r.in_turn = true;
    r.aborted = false;
    r.release();
    const outcome = turn.run(r.app, text, .{ .ctx = r, .event = onEvent, .note = onNote, .approve = onApproval });
    r.acquire();
    defer r.release();
    r.running = false;
    r.in_turn = false;
    r.clearWaiting();
    r.clearEarly(); // (a turn that failed before its first event)
    const out = r.out;
    switch (outcome) {
        .complete => json_events.writeDone(out) catch {},
        .canceled => json_events.writeError(out, error.Canceled, 0, "canceled_error", "the turn was canceled") catch {},
        .failed => |f| json_events.writeError(out, f.err, f.http_status, f.error_type, f.message) catch {},
    }
    r.flushLine();
}

fn onEvent(ctx: *anyopaque, e: *const panto.Event) void {
    const r: *Rpc = @ptrCast(@alignCast(ctx));
    r.acquire();
    defer r.release();
    // An abort that came before the turn's stream was current cancels it now; the steers
    // that came then join it now.
    if (r.aborted) r.app.cancelTurn();
    if (r.in_turn) {
        for (r.early.items) |m| r.app.steerTurn(m.source, m.text) catch {
            json_events.writeNote(r.out, "a steer or follow-up sent as the turn started could not join it") catch {};
            r.flushLine();
        };
        r.clearEarly();
    }
    if (r.broken) return;
    // The calls are waited for from the moment the client can see them.
    if (e.* == .approval_request) {
        r.clearWaiting();
        for (e.approval_request.calls) |call| {
            const copy = r.app.gpa.dupe(u8, call.id.slice()) catch continue;
            r.waiting.append(r.app.gpa, .{ .id = copy }) catch r.app.gpa.free(copy);
        }
    }
    json_events.writeEvent(r.out, e) catch {};
    r.flushLine();
}

fn onNote(ctx: *anyopaque, text: []const u8) void {
    const r: *Rpc = @ptrCast(@alignCast(ctx));
    r.acquire();
    defer r.release();
    json_events.writeNote(r.out, text) catch {};
    r.flushLine();
}

/// A call that asks: the client's approve or deny, or a cancel when the turn was aborted or
/// no answer can come (stdin ended, stdout gone).
fn onApproval(ctx: *anyopaque, call: *const panto.event.ApprovalCall) turn.Answer {
    const r: *Rpc = @ptrCast(@alignCast(ctx));
    r.acquire();
    defer r.release();
    while (true) {
        if (r.aborted or r.eof or r.broken) return .cancel;
        const w = find(r, call.id.slice()) orelse return .cancel; // not in the request (out of memory): never asked
        if (w.answer) |answer| return answer;
        _ = c.pthread_cond_wait(&r.changed, &r.lock);
    }
}

fn find(r: *Rpc, call_id: []const u8) ?*Waiting {
    for (r.waiting.items) |*w| if (std.mem.eql(u8, w.id, call_id)) return w;
    return null;
}

// ---- answers ----

fn stringField(command: std.json.ObjectMap, name: []const u8) ?[]const u8 {
    const v = command.get(name) orelse return null;
    return if (v == .string) v.string else null;
}

/// {"event":"response","id":ID,"command":KIND,"ok":true, ...data's fields}.
fn respond(r: *Rpc, id: ?std.json.Value, kind: []const u8, data: anytype) void {
    r.acquire();
    defer r.release();
    respondLocked(r, id, kind, data);
}

fn respondLocked(r: *Rpc, id: ?std.json.Value, kind: []const u8, data: anytype) void {
    var s: Stringify = .{ .writer = r.out };
    writeHead(&s, id, kind, true) catch {};
    inline for (@typeInfo(@TypeOf(data)).@"struct".fields) |f| {
        s.objectField(f.name) catch {};
        s.write(@field(data, f.name)) catch {};
    }
    endLine(r, &s);
}

/// {"event":"response","id":ID,"command":KIND,"ok":false,"code":CODE,"message":...}; a
/// malformed line has no id nor command (null).
fn respondError(r: *Rpc, id: ?std.json.Value, kind: ?[]const u8, code: []const u8, message: []const u8) void {
    r.acquire();
    defer r.release();
    respondErrorLocked(r, id, kind, code, message);
}

fn respondErrorLocked(r: *Rpc, id: ?std.json.Value, kind: ?[]const u8, code: []const u8, message: []const u8) void {
    var s: Stringify = .{ .writer = r.out };
    writeHead(&s, id, kind, false) catch {};
    s.objectField("code") catch {};
    s.write(code) catch {};
    s.objectField("message") catch {};
    s.write(message) catch {};
    endLine(r, &s);
}

fn writeHead(s: *Stringify, id: ?std.json.Value, kind: ?[]const u8, ok: bool) !void {
    try s.beginObject();
    try s.objectField("event");
    try s.write("response");
    try s.objectField("id");
    const echoed: std.json.Value = id orelse .null;
    try s.write(echoed);
    try s.objectField("command");
    try s.write(kind);
    try s.objectField("ok");
    try s.write(ok);
}

fn endLine(r: *Rpc, s: *Stringify) void {
    s.endObject() catch {};
    r.out.writeByte('\n') catch {};
    r.flushLine();
}

// ---- ext.ui (lua/ext_ui.zig's Frontend): requests to the client ----

const Host = @import("lua/host.zig").Host;
const Level = @import("lua/ext_ui.zig").Level;

const frontend_vtable: Host.Frontend.VTable = .{
    .notify = uiNotify,
    .confirm = uiConfirm,
    .select = uiSelect,
    .input = uiInput,
    .send = uiSend,
    .set_model = uiSetModel,
    .status = uiStatus,
};

/// {"event":"extension_ui_request","request_id":"ui-N","method":METHOD, ...fields}
fn writeUiRequest(r: *Rpc, number: ?u64, method: []const u8, fields: anytype) void {
    var s: Stringify = .{ .writer = r.out };
    s.beginObject() catch {};
    s.objectField("event") catch {};
    s.write("extension_ui_request") catch {};
    if (number) |n| {
        var buf: [32]u8 = undefined;
        s.objectField("request_id") catch {};
        s.write(std.fmt.bufPrint(&buf, "ui-{d}", .{n}) catch "ui") catch {};
    }
    s.objectField("method") catch {};
    s.write(method) catch {};
    inline for (@typeInfo(@TypeOf(fields)).@"struct".fields) |f| {
        s.objectField(f.name) catch {};
        s.write(@field(fields, f.name)) catch {};
    }
    endLine(r, &s);
}

fn uiNotify(ctx: *anyopaque, level: Level, text: []const u8) void {
    const r: *Rpc = @ptrCast(@alignCast(ctx));
    r.acquire();
    defer r.release();
    writeUiRequest(r, null, "notify", .{ .message = text, .level = @tagName(level) });
}

fn uiStatus(ctx: *anyopaque, key: []const u8, text: []const u8) void {
    const r: *Rpc = @ptrCast(@alignCast(ctx));
    r.acquire();
    defer r.release();
    writeUiRequest(r, null, "set_status", .{ .key = key, .text = text });
}

/// Asks the client and waits for its extension_ui_response; null when none can come (an
/// abort, stdin ended, stdout gone). The caller holds the lock; the answer is taken out.
fn askClient(r: *Rpc, method: []const u8, fields: anytype) ?UiAnswer {
    r.ui_count += 1;
    r.ui_asked = r.ui_count;
    r.ui_answer = null;
    defer r.ui_asked = null;
    writeUiRequest(r, r.ui_count, method, fields);
    while (true) {
        if (r.ui_answer) |a| {
            r.ui_answer = null;
            return a;
        }
        if (r.aborted or r.eof or r.broken) return null;
        _ = c.pthread_cond_wait(&r.changed, &r.lock);
    }
}

fn uiConfirm(ctx: *anyopaque, title: []const u8, text: []const u8) ?bool {
    const r: *Rpc = @ptrCast(@alignCast(ctx));
    r.acquire();
    defer r.release();
    return switch (askClient(r, "confirm", .{ .title = title, .message = text }) orelse return null) {
        .confirmed => |yes| yes,
        .value => |v| blk: {
            r.app.gpa.free(v);
            break :blk false;
        },
        .cancelled => false,
    };
}

fn uiSelect(ctx: *anyopaque, title: []const u8, options: []const []const u8) ?usize {
    const r: *Rpc = @ptrCast(@alignCast(ctx));
    r.acquire();
    defer r.release();
    const answer = askClient(r, "select", .{ .title = title, .options = options }) orelse return null;
    const value = switch (answer) {
        .value => |v| v,
        .confirmed, .cancelled => return null,
    };
    defer r.app.gpa.free(value);
    for (options, 0..) |o, i| if (std.mem.eql(u8, o, value)) return i;
    return null;
}

fn uiInput(ctx: *anyopaque, title: []const u8, placeholder: []const u8) ?[]u8 {
    const r: *Rpc = @ptrCast(@alignCast(ctx));
    r.acquire();
    defer r.release();
    return switch (askClient(r, "input", .{ .title = title, .placeholder = placeholder }) orelse return null) {
        .value => |v| v,
        .confirmed, .cancelled => null,
    };
}

/// Runs on the main thread (Lua's). A command's message is a turn after it; a handler's
/// follows up the turn that runs, or is a turn after it when the turn takes no more.
fn uiSend(ctx: *anyopaque, text: []const u8, from: Host.CtxKind) ?[]const u8 {
    const r: *Rpc = @ptrCast(@alignCast(ctx));
    if (std.mem.trim(u8, text, " \t\r\n").len == 0) return "an empty message";
    if (from == .handler) {
        if (r.app.steerTurn(.follow_up, text)) |_| return null else |err| switch (err) {
            error.NoTurn, error.Ended => {},
            else => return "the turn that runs takes no more messages",
        }
    }
    const copy = r.app.gpa.dupe(u8, text) catch return "not enough memory";
    r.sends.append(r.app.gpa, copy) catch {
        r.app.gpa.free(copy);
        return "not enough memory";
    };
    return null;
}

fn uiSetModel(ctx: *anyopaque, spec: []const u8) ?[]const u8 {
    const r: *Rpc = @ptrCast(@alignCast(ctx));
    return r.app.extensionSetModel(spec);
}

/// extension_ui_response {request_id, confirmed | value | cancelled}: the answer to the
/// question asked (a select's option or an input's text in `value`).
fn answerUi(r: *Rpc, command: std.json.ObjectMap, id: ?std.json.Value, kind: []const u8) void {
    const request_id = stringField(command, "request_id") orelse return respondError(r, id, kind, "invalid_argument", "\"request_id\" (a string) is needed: the request_id of the extension_ui_request");
    const answer: UiAnswer = if (command.get("cancelled")) |v| (if (v == .bool and v.bool) .cancelled else return respondError(r, id, kind, "invalid_argument", "\"cancelled\" is true when given")) else if (command.get("confirmed")) |v| switch (v) {
        .bool => |b| .{ .confirmed = b },
        else => return respondError(r, id, kind, "invalid_argument", "\"confirmed\" must be a boolean"),
    } else if (stringField(command, "value")) |v| .{ .value = r.app.gpa.dupe(u8, v) catch return respondError(r, id, kind, "failed", "out of memory") } else return respondError(r, id, kind, "invalid_argument", "one of \"confirmed\" (confirm), \"value\" (select) or \"cancelled\" is needed");
    r.acquire();
    defer r.release();
    var buf: [32]u8 = undefined;
    const asked = if (r.ui_asked) |n| std.fmt.bufPrint(&buf, "ui-{d}", .{n}) catch "" else "";
    if (asked.len == 0 or !std.mem.eql(u8, asked, request_id) or r.ui_answer != null) {
        if (answer == .value) r.app.gpa.free(answer.value);
        return respondErrorLocked(r, id, kind, "unknown_request", "no extension_ui_request waits for an answer under this request_id");
    }
    r.ui_answer = answer;
    _ = c.pthread_cond_broadcast(&r.changed);
    respondLocked(r, id, kind, .{});
}
