//! One turn, driven to its end. Owned by h-cli.
const std = @import("std");
const panto = @import("panto");
const App = @import("app.zig").App;
const thinking_fallback = @import("thinking_fallback.zig");
const json_events = @import("json_events.zig");
const exit_codes = @import("exit_codes.zig");
const Host = @import("lua/host.zig").Host;
const gate_mod = @import("gate.zig");

/// Who watches a turn: print mode, --json, the interactive renderer.
pub const Observer = struct {
    ctx: *anyopaque,
    /// Every event of the turn, in order (borrowed until the call returns).
    event: *const fn (ctx: *anyopaque, e: *const panto.Event) void,
    /// A one-line remark of the driver for the user, shown dim (the adaptive thinking fallback:
    /// "thinking high is not supported by M: trying medium").
    note: *const fn (ctx: *anyopaque, text: []const u8) void,
    /// The answer to a call that asks before it runs (an ApprovalRequest's call the session
    /// has not allowed yet): interactive mode's prompt, print mode's refusal. The call and a
    /// `deny` reason are borrowed until the call returns.
    approve: *const fn (ctx: *anyopaque, call: *const panto.event.ApprovalCall) Answer,
};

/// What the user said about a call that asks (docs/cli.md, "Approvals").
pub const Answer = union(enum) {
    allow_once,
    /// This call, and every later call of its tool in this run (App.allowTool).
    allow_tool,
    /// This call, and every later call the entry matches in this run (App.allowRule): a
    /// `TOOL(PATTERN)` of permissions.ruleFor, borrowed until the call returns.
    allow_rule: []const u8,
    /// Denied: the model gets the reason ("" for none) in the call's error result.
    deny: []const u8,
    /// Denied, and the turn canceled (Esc, Ctrl-C): the calls after it are denied unasked.
    cancel,
};

pub const Failure = struct {
    err: anyerror,
    /// The provider's or panto's message, valid until the next turn.
    message: []const u8,
    /// The HTTP status of a provider's answer (0: none) and its error type ("" when none,
    /// or panto's own: "connection_error", ...), valid until the next turn.
    http_status: u16 = 0,
    error_type: []const u8 = "",
};

pub const Outcome = union(enum) {
    complete: panto.event.MessageComplete,
    /// Ctrl-C: the partial answer is kept in the conversation as the core keeps it.
    canceled,
    failed: Failure,
};

/// Runs `input` as a user turn: the events go to `observer` and to the Lua host's ext.on
/// subscribers (turn_start, message_end, tool_call, tool_result, compaction_start/end,
/// turn_end); host tool calls go to the Lua host.
pub fn run(app: *App, input: []const u8, observer: Observer) Outcome {
    return runInput(app, .{ .text = input }, observer);
}

/// As `run`, the user message's text followed by parts (a piped image: main.zig).
pub fn runInput(app: *App, input: panto.Agent.Input, observer: Observer) Outcome {
    emit(app, "turn_start", .{ .input = input.text });
    const outcome = drive(app, input, observer);
    switch (outcome) {
        .complete => |m| emit(app, "turn_end", .{ .stop_reason = @tagName(m.stop_reason) }),
        .canceled => emit(app, "turn_end", .{ .@"error" = "canceled", .message = "the turn was canceled" }),
        .failed => |f| emit(app, "turn_end", .{ .@"error" = exit_codes.name(f.err), .message = f.message }),
    }
    return outcome;
}

fn drive(app: *App, input: panto.Agent.Input, observer: Observer) Outcome {
    const stream = app.agent.runInput(input) catch |err| return failed(app, err, switch (err) {
        error.Busy => "a turn is already running",
        error.SessionWrite => "the session file could not be written",
        error.OutOfMemory => "out of memory",
    }, null);
    app.current.store(stream, .seq_cst);
    defer {
        app.releaseCurrent();
        stream.close();
    }
    var calls_started = false;
    var complete: ?panto.event.MessageComplete = null;
    var asked: std.ArrayList(panto.event.ApprovalCall) = .empty;
    defer asked.deinit(app.gpa);
    // The session's totals take each turn's MessageComplete (which counts an automatic
    // compaction's summary request too); a turn that ends without one, what its ended
    // messages spent.
    var unsettled: panto.catalog.Spent = .{};
    defer app.spent.add(unsettled.usage, unsettled.cost);
    while (true) {
        const next = stream.next() catch |err| switch (err) {
            error.ResultPending => {
                app.host.pump(stream) catch |pump_err| {
                    app.host.abandonCalls();
                    if (pump_err == error.Canceled) return .canceled; // Ctrl-C while tools ran
                    return failed(app, pump_err, "the extension tool host failed", null);
                };
                continue;
            },
            error.Canceled => {
                if (calls_started) app.host.abandonCalls();
                return .canceled;
            },
            else => {
                if (thinking_fallback.retry(app, stream, err, observer)) continue;
                if (calls_started) app.host.abandonCalls();
                return failed(app, err, "", stream.failureDetail());
            },
        };
        var e = next orelse break;
        if (e == .approval_request and app.ungated_rules != null) {
            // Only the calls a person must answer stay in the request (gate.zig).
            asked.clearRetainingCapacity();
            gate_mod.filter(app, stream, e.approval_request.calls, &asked);
            if (asked.items.len == 0) continue;
            e.approval_request.calls = asked.items;
        }
        observer.event(observer.ctx, &e);
        switch (e) {
            .message_end => |m| {
                unsettled.add(m.usage, m.cost);
                emit(app, "message_end", .{ .stop_reason = @tagName(m.stop_reason), .usage = m.usage });
            },
            .tool_call_start => |call| {
                // A call the host runs: its tool_call subscribers may block or rewrite it.
                const ours = call.awaiting_result and app.host.hasTool(call.name);
                // (A call the core runs went through the gate at its approval: gate.zig.)
                const seen = app.ungated_rules != null and gate_mod.wasGated(app, call.id);
                const gate: Host.Gate = if (seen) .pass else emitGated(app, "tool_call", .{ .id = call.id, .name = call.name, .input = json_events.RawJson{ .text = call.input } }, ours);
                if (call.awaiting_result) {
                    if (ours) switch (gate) {
                        .block => |reason| blocked(stream, call.id, reason),
                        .rewrite => |rewritten| {
                            var changed = call;
                            changed.input = rewritten;
                            app.host.startCall(changed);
                            calls_started = true;
                        },
                        .pass => {
                            app.host.startCall(call);
                            calls_started = true;
                        },
                    } else {
                        // Only the host's tools are registered as host tools; say so rather than hang.
                        stream.submitToolResult(call.id, "no handler for this tool in the panto command", true) catch {};
                    }
                }
            },
            // Answered before the next `next()`: the round's calls wait for nothing else.
            .approval_request => |request| answerApprovals(app, stream, request.calls, observer),
            .tool_result => |r| emit(app, "tool_result", .{ .id = r.id, .name = r.name, .content = r.content, .is_error = r.is_error }),
            .compaction_start => |c| emit(app, "compaction_start", .{ .tokens_before = c.tokens_before, .reason = c.reason }),
            .compaction_end => |c| emit(app, "compaction_end", .{ .tokens_before = c.tokens_before, .tokens_after = c.tokens_after, .message_count = c.message_count, .summary = c.summary }),
            .message_complete => |m| {
                app.spent.add(m.usage, m.cost);
                unsettled = .{};
                complete = m;
                app.stop_reason.clearRetainingCapacity();
                app.stop_reason.appendSlice(app.gpa, m.provider_stop_reason) catch {};
                complete.?.provider_stop_reason = app.stop_reason.items;
            },
            else => {},
        }
    }
    if (complete) |m| return .{ .complete = m };
    return failed(app, error.Protocol, "the turn ended without its message_complete", null);
}

pub const CompactOutcome = union(enum) {
    /// Every message is recent: nothing was summarized.
    nothing,
    compacted: struct { tokens_before: u64, tokens_after: u64, message_count: u64 },
    canceled,
    failed: Failure,
};

/// Compacts the conversation now (/compact, RPC mode's compact): the events go to `observer`
/// and to the Lua host's compaction_start/end subscribers; cancelTurn cancels it.
pub fn compact(app: *App, instructions: ?[]const u8, observer: Observer) CompactOutcome {
    const stream = app.agent.compactWith(instructions) catch |err| return switch (err) {
        error.NothingToCompact => .nothing,
        error.Busy => .{ .failed = failed(app, err, "a turn is running", null).failed },
        error.OutOfMemory => .{ .failed = failed(app, err, "out of memory", null).failed },
        // (answering a tool round left pending, before compacting: the session refused it)
        error.SessionWrite => .{ .failed = failed(app, err, "the session file could not be written", null).failed },
    };
    app.current.store(stream, .seq_cst);
    defer {
        app.releaseCurrent();
        stream.destroy();
    }
    var done: ?@FieldType(CompactOutcome, "compacted") = null;
    while (true) {
        const e = stream.next() catch |err| {
            if (err == error.Canceled) return .canceled;
            return .{ .failed = failed(app, err, "", stream.failureDetail()).failed };
        } orelse break;
        observer.event(observer.ctx, &e);
        switch (e) {
            .compaction_start => |c| emit(app, "compaction_start", .{ .tokens_before = c.tokens_before, .reason = c.reason }),
            .compaction_end => |c| {
                emit(app, "compaction_end", .{ .tokens_before = c.tokens_before, .tokens_after = c.tokens_after, .message_count = c.message_count, .summary = c.summary });
                done = .{ .tokens_before = c.tokens_before, .tokens_after = c.tokens_after, .message_count = c.message_count };
            },
            .message_complete => |m| app.spent.add(m.usage, m.cost), // the summary request's
            else => {},
        }
    }
    if (done) |d| return .{ .compacted = d };
    return .{ .failed = failed(app, error.Protocol, "the compaction ended without its compaction_end", null).failed };
}

/// Every call of an ApprovalRequest answered: approved at once when its tool was allowed for
/// the session, else as the observer says. A cancel denies the rest and cancels the turn (the
/// stream's next `next()` is Canceled).
fn answerApprovals(app: *App, stream: *panto.Stream, calls: []const panto.event.ApprovalCall, observer: Observer) void {
    var canceled = false;
    for (calls) |*c| {
        const id = c.id.slice();
        if (canceled) {
            stream.deny(id, "the user canceled the turn") catch {};
        } else if (app.toolAllowed(c.name.slice()) or app.ruleAllowed(c.name.slice(), c.input.slice())) {
            stream.approve(id) catch {};
        } else switch (observer.approve(observer.ctx, c)) {
            .allow_once => stream.approve(id) catch {},
            .allow_tool => {
                app.allowTool(c.name.slice());
                stream.approve(id) catch {};
            },
            .allow_rule => |entry| {
                app.allowRule(entry);
                stream.approve(id) catch {};
            },
            .deny => |reason| stream.deny(id, reason) catch {},
            .cancel => {
                stream.deny(id, "the user canceled the turn") catch {};
                canceled = true;
            },
        }
    }
    if (canceled) app.cancelTurn();
}

/// A failure whose strings live in the App until the next turn.
fn failed(app: *App, err: anyerror, fallback: []const u8, detail: ?*const panto.errors.Detail) Outcome {
    app.failure_message.clearRetainingCapacity();
    app.failure_type.clearRetainingCapacity();
    var status: u16 = 0;
    if (detail) |d| {
        app.failure_message.appendSlice(app.gpa, d.message.items) catch {};
        app.failure_type.appendSlice(app.gpa, d.error_type.items) catch {};
        status = d.http_status;
    }
    if (app.failure_message.items.len == 0) app.failure_message.appendSlice(app.gpa, if (fallback.len > 0) fallback else @errorName(err)) catch {};
    return .{ .failed = .{ .err = err, .message = app.failure_message.items, .http_status = status, .error_type = app.failure_type.items } };
}

/// An ext.on event for the Lua host, its data as a JSON object.
pub fn emit(app: *App, name: []const u8, data: anytype) void {
    _ = emitGated(app, name, data, false);
}

/// As emit; `gated`: what the subscribers returned about the call (Host.Gate).
pub fn emitGated(app: *App, name: []const u8, data: anytype, gated: bool) Host.Gate {
    var out: std.Io.Writer.Allocating = .init(app.gpa);
    defer out.deinit();
    std.json.Stringify.value(data, .{}, &out.writer) catch return .pass;
    return app.host.emitGated(name, out.written(), gated);
}

/// A call an extension's tool_call subscriber blocked: its error result gives the model
/// the reason.
fn blocked(stream: *panto.Stream, id: []const u8, reason: []const u8) void {
    var buf: [1024]u8 = undefined;
    stream.submitToolResult(id, blockedText(&buf, reason), true) catch {};
}

/// "An extension blocked this call: REASON" in `buf` (a long reason cut).
pub fn blockedText(buf: []u8, reason: []const u8) []const u8 {
    const head = "An extension blocked this call: ";
    const said = if (reason.len > 0) reason else "no reason given";
    const n = @min(said.len, buf.len - head.len);
    @memcpy(buf[0..head.len], head);
    @memcpy(buf[head.len..][0..n], said[0..n]);
    return buf[0 .. head.len + n];
}
