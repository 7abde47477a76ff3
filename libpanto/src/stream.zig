//! The stream of one turn: its state machine (messages, tool rounds, retries, failures, a
//! cancel) over the provider requests it makes. It owns the HTTP response reader and the SSE
//! parser: each `next()` reads just enough of the body to produce one event. No threads, no
//! callbacks. The connection is transport.zig's, the decoding of received bytes (and its hot
//! paths) stream_read.zig's, the provider's formats providers.zig's.
const std = @import("std");
const Allocator = std.mem.Allocator;
const Agent = @import("agent.zig").Agent;
const ev = @import("event.zig");
const errors = @import("errors.zig");
const sse = @import("sse.zig");
const Assembly = @import("assembly.zig").Assembly;
const providers = @import("providers.zig");
const tool_round = @import("tool_round.zig");
const Round = tool_round.Round;
const watchdog = @import("transport/watchdog.zig");
const mcp_servers = @import("mcp/servers.zig");
const retry = @import("retry.zig");
const batch = @import("batch.zig");
const Link = @import("transport/link.zig").Link;
const steering = @import("turn/steering.zig");
const pending_round = @import("turn/pending_round.zig");
const transport = @import("transport/transport.zig");
const poll_io = @import("transport/poll_io.zig");
const stream_step = @import("stream_step.zig");
const read = @import("stream_read.zig");
const EventArena = @import("event_arena.zig").EventArena;
const Body = @import("body.zig").Body;
const content = @import("content.zig");
const compaction = @import("compaction.zig");
const RequestParts = @import("request.zig").RequestParts;
const structured_output = @import("structured_output.zig");
const config_mod = @import("config.zig");
const conversation = @import("conversation.zig");
const Config = config_mod.Config;
const Budget = config_mod.Budget;
const catalog = @import("catalog/catalog.zig");

/// The result of a call the turn's budget did not let run.
pub const budget_skipped = "Skipped: the turn's budget is spent.";
/// What a call still waiting for a person's answer gets when the user steers instead.
pub const steer_skipped = "Skipped: the user steered.";

const TurnError = errors.TurnError;
/// `next()` fails with a TurnError (sticky), or ResultPending: a host tool call still awaits
/// its result; nothing changed, submit it and call again. Or ApprovalPending: every call that
/// could run is done and a call waits for a person's answer (`approve` / `deny`); nothing
/// changed (ResultPending wins when both are true). Or Usage: the stream is driven by
/// `step()` (a stream is stepped or next()'ed, never both; the first call decides), and its
/// turn is not over; nothing changed.
pub const NextError = TurnError || error{ ResultPending, ApprovalPending, Usage };

pub const Stream = struct {
    agent: *Agent,
    /// The configuration of the turn's requests: the agent's, with the turn's options
    /// applied (Agent.runWith); made again from the agent's at `reopen`. The agent's own is
    /// unchanged.
    config: Config,
    /// The turn's options (JSON text), or null; they and the strings of `config` that are
    /// theirs live in `turn_arena`.
    options_json: ?[]const u8 = null,
    turn_arena: std.heap.ArenaAllocator,
    state: State = .unsent,
    failure: TurnError = error.Protocol, // meaningful only when state == .failed
    detail: errors.Detail = .{},

    /// The request and its connection, as transport.zig opens, parks and closes them.
    link: Link = .{},
    response: std.http.Client.Response = undefined,
    body: Body,
    request_body: std.Io.Writer.Allocating,
    url: std.ArrayList(u8) = .empty,
    auth_header: std.ArrayList(u8) = .empty,
    /// The request's headers beside std.http's own, and the memory of a joined anthropic-beta
    /// value (request.zig's Headers).
    header_list: std.ArrayList(std.http.Header) = .empty,
    beta_header: std.ArrayList(u8) = .empty,

    parser: providers.Framer,
    /// Holds the decoded JSON of the current SSE event; reset (keeping its memory) per event.
    event_arena: EventArena,
    /// `event_arena.allocator()`, made once and used everywhere: the hot readers take it from
    /// memory written long ago. Made afresh per event, it is two stores the callee reads back
    /// as one wide load, which waits for them (a store-forwarding stall, some 10 cycles an
    /// event).
    event_allocator: Allocator = undefined,
    assembly: Assembly,
    decoder: providers.Decoder,

    /// The tool calls of the last assistant message, while they are handled.
    round: Round,
    phase: Phase = .messages,
    /// Which call of the round the next tool event is about.
    cursor: usize = 0,
    /// Tool rounds done in this turn.
    rounds: u32 = 0,
    turn_usage: ev.Usage = .{},
    /// The sum of the turn's messages' costs; null once one of them is unknown.
    turn_cost: ?f64 = 0,
    /// The last message's end, repeated by the turn's MessageComplete.
    last_end: ev.MessageComplete = .{ .stop_reason = .none, .provider_stop_reason = "", .usage = .{} },
    /// A failure decided while delivering an event, returned by the next call.
    pending_failure: ?TurnError = null,
    /// A failure met while decoding received data ahead of the user (peekBuffered), returned
    /// by the next call, after the events that came before it.
    read_ahead_failure: ?TurnError = null,
    /// The event `nextRef` handed out last.
    current: ev.Event = undefined,
    /// The last batch of events (nextBatch), and the events given back (unread).
    batch: batch.Batch = .{},

    /// Timeouts and cancellation (see watchdog.zig).
    watch: watchdog.Watch = .{},
    /// When the turn's total timeout ends (CLOCK_MONOTONIC ns), 0 for none.
    turn_deadline_ns: u64 = 0,
    /// When the wall budget (config budget.wall_ms) ends the turn, set at its first request
    /// (CLOCK_MONOTONIC ns), 0 for none.
    wall_deadline_ns: u64 = 0,
    /// When `next()` last said ApprovalPending (0: it did not): the time a person takes to
    /// answer is not the turn's, and pushes `turn_deadline_ns` back.
    approval_wait_since: u64 = 0,
    /// The response head of the current request arrived.
    got_head: bool = false,
    /// Something beyond MessageStart of the current message reached the user: from then on
    /// the message is not retried.
    content_delivered: bool = false,
    /// The connection went away in the middle of the body (retryable, unlike a bad body).
    dropped: bool = false,
    /// The provider's wishes about retrying the failed request.
    retry_after_ms: ?u64 = null,
    should_retry: ?bool = null,
    /// Retries of the current message so far, and the reason of the last one.
    retry_attempt: u32 = 0,
    retry_delay_ms: u64 = 0,
    retry_reason: std.ArrayList(u8) = .empty,
    /// The turn failed at the provider-open boundary: reopen() may run it again.
    failed_at_open: bool = false,

    /// The compaction under way, in phase `summary` (its summary request is the current one).
    compaction: ?*compaction.Run = null,
    /// Whether the request about to go out needs a compaction first was decided.
    compaction_checked: bool = false,
    /// The agent's MCP servers were started for this turn (once a turn: a server that dies
    /// in it fails its calls, not the turn's next request; the next turn starts it again).
    mcp_started: bool = false,
    /// An eventfd made for a round whose MCP calls run while the stream has no wake fd of its
    /// own (the watchdog writes it on cancel), until the round's calls end; -1: none.
    round_wake_fd: std.c.fd_t = -1,
    /// What finalMessage and finalJson keep (structured_output.zig).
    final: structured_output.Final = .{},
    /// A stream driven by `step()`: its fiber (stream_step.zig).
    stepper: ?*stream_step.Stepper = null,
    /// `step()` drives the turn (`stepper` is its fiber, gone once the turn is over: given
    /// back at its end), so `next()` is refused until it is over.
    stepped: bool = false,
    /// `next()` (or nextBatch, finalMessage) read the turn: `step()` is refused from then on.
    read_by_next: bool = false,

    /// A user turn: the conversation's `appended` count right after its user message, so
    /// that a failure tells whether the turn kept anything; null for a compaction's stream.
    user_turn_appended: ?u64 = null,
    /// The turn's user message, taken back out of the conversation when the turn failed
    /// keeping nothing (settleFailedTurn); `reopen` puts it back.
    rolled_back: ?conversation.Message = null,

    /// The turn answers the conversation as it was (Agent.continueTurn): its last message, the
    /// user's, is not this turn's to take back when it fails.
    continued: bool = false,
    /// What the user says to the turn while it runs: steers and follow-ups (turn/steering.zig).
    steering: steering.Steering = .{},
    /// The messages the last safe point put in the conversation, handed out as UserMessage
    /// events in phase `entered` (cursor), freed when it ends; owned.
    entered: std.ArrayList(steering.Message) = .empty,
    /// The message that starts the next turn of this stream (phase `follow_up`); owned.
    next_turn: ?steering.Message = null,
    /// The tool round this stream goes on with (Agent.resumeTurn, phase `resuming`); owned
    /// until the round is made of it, given back to the agent if the stream ends before.
    resumed: ?pending_round.PendingRound = null,

    const State = enum { unsent, streaming, retry_wait, done, failed };
    /// `paused`: the last message stopped for pause_turn; the next request continues it.
    /// `entered`: the user's messages a safe point took are handed out (UserMessage), then the
    /// next request goes. `follow_up`: the turn's MessageComplete is out and `next_turn`
    /// starts another turn. `resuming`: the round `resumed` is made again, then `tool_starts`.
    const Phase = enum { messages, tool_starts, tool_results, paused, complete, summary, entered, follow_up, resuming };

    // The transport (transport.zig): the request's connection, opened, parked or closed.
    const open = transport.open;
    const closeConnection = transport.closeConnection;
    const parkConnection = transport.parkConnection;

    // From received bytes to events (stream_read.zig): the SSE parser, the provider's
    // decoder, and the hot paths that skip them.
    const readEvent = read.readEvent;
    const readHotDelta = read.readHotDelta;
    pub const peekBuffered = read.peekBuffered;

    // The turn's end for short programs (C panto_stream_final_message and _final_json too),
    // and its answer as JSON: structured_output.zig's, the only ones.
    pub const finalMessage = structured_output.finalMessage;
    pub const finalJson = structured_output.finalJson;

    // Driving the turn without blocking (stream_step.zig): the same turn, on a fiber.
    pub const step = stream_step.step;
    pub const stepBatch = stream_step.stepBatch;

    /// The stream of a compaction asked for (`Agent.compact`): COMPACTION_START,
    /// COMPACTION_END, MESSAGE_COMPLETE. It takes `run`.
    pub fn createCompaction(agent: *Agent, run: *compaction.Run) Allocator.Error!*Stream {
        const s = try create(agent);
        s.compaction = run;
        s.phase = .summary;
        s.final.compaction = true;
        s.steering.ended = true; // (no turn for a steer or a follow-up to join)
        return s;
    }

    pub fn create(agent: *Agent) Allocator.Error!*Stream {
        const gpa = agent.gpa;
        const s = try gpa.create(Stream);
        s.* = .{
            .agent = agent,
            .config = agent.config,
            .turn_arena = .init(gpa),
            .request_body = .init(gpa),
            .body = .{ .gpa = gpa },
            .parser = .init(agent.config.provider, gpa),
            .event_arena = .init(gpa),
            .assembly = .init(gpa),
            .decoder = .init(agent.config.provider),
            .round = .{ .gpa = gpa },
        };
        s.event_allocator = s.event_arena.allocator(); // (the stream does not move)
        return s;
    }

    /// The turn's options (see `config`): the stream takes `arena`, which holds `options`
    /// and the strings of `config` that are theirs.
    pub fn setTurn(s: *Stream, arena: std.heap.ArenaAllocator, options: ?[]const u8, config: Config) void {
        s.turn_arena.deinit();
        s.turn_arena = arena;
        s.options_json = options;
        s.config = config;
    }

    /// Ends the turn by the close policy, then frees the stream. A turn not yet over is
    /// canceled and ends as `next()` would end it then (see `abort`): what the user saw of the
    /// message stays in the conversation marked aborted, unanswered tool calls get an error
    /// result, and the agent can run the next turn. The agent may have been released
    /// already: then this frees it too. Not while another thread is in a call on the stream
    /// (the C ABI's panto_stream_free allows that: libpanto-c/src/stream_handle.zig).
    pub fn close(s: *Stream) void {
        stream_step.unwind(s);
        if (s.state != .done and s.state != .failed) {
            s.cancel();
            s.abort() catch {}; // (its error is the one next() would return: Canceled)
            s.agent.busy = false;
        }
        s.release();
    }

    /// The same as `close`.
    pub fn destroy(s: *Stream) void {
        s.close();
    }

    fn release(s: *Stream) void {
        const gpa = s.agent.gpa;
        const agent = s.agent;
        s.closeConnection(.unread);
        watchdog.forget(&s.watch);
        s.retry_reason.deinit(gpa);
        s.detail.deinit(gpa);
        s.request_body.deinit();
        s.body.deinit();
        s.url.deinit(gpa);
        s.auth_header.deinit(gpa);
        s.header_list.deinit(gpa);
        s.beta_header.deinit(gpa);
        s.parser.deinit();
        s.event_arena.deinit();
        s.assembly.deinit();
        s.finishRound() catch {};
        s.round.deinit();
        s.batch.deinit(gpa);
        s.final.deinit(gpa);
        if (s.compaction) |run| run.destroy();
        if (s.rolled_back) |m| conversation.freeMessage(gpa, m);
        s.freeEntered();
        s.entered.deinit(gpa);
        if (s.next_turn) |m| gpa.free(m.text);
        s.giveBackResumed();
        s.steering.deinit(gpa);
        s.turn_arena.deinit();
        stream_step.release(s);
        gpa.destroy(s);
        agent.streamDestroyed();
    }

    /// The next event of the turn; null once the turn is over (after MessageComplete).
    /// A failure is sticky: every later call returns the same error.
    pub fn next(s: *Stream) NextError!?ev.Event {
        const e = try s.nextRef() orelse return null;
        return e.*;
    }

    /// As `next`, the event left in the stream (valid until the next call) rather than
    /// copied out: the C ABI copies it once, into the caller's struct. Moving a large union
    /// through optionals and error unions costs more than decoding a small event.
    pub inline fn nextRef(s: *Stream) NextError!?*const ev.Event {
        if (s.stepped) try stream_step.checkNext(s);
        // The path of nearly every call, inlined into the caller: a message streaming,
        // nothing pending, the next event queued or a hot delta (else nextAny sees to it).
        if (s.state == .streaming and s.phase == .messages and s.pending_failure == null and
            s.read_ahead_failure == null and s.batch.events.items.len == 0 and
            !s.watch.canceled.load(.acquire))
        {
            if (try s.queuedOrHot()) |e| return e;
        }
        return s.nextAny();
    }

    /// The next event of the message being streamed when it is queued already or a hot
    /// delta at the start of the received bytes; null when it is neither (read on).
    inline fn queuedOrHot(s: *Stream) NextError!?*const ev.Event {
        if (s.assembly.pop()) |e| {
            s.current = e;
            return s.deliverCurrent();
        }
        const hot = s.readHotDelta() catch |err| return s.hold(try s.failOrRetry(err, false));
        return if (hot) s.deliverCurrent() else null;
    }

    fn nextAny(s: *Stream) NextError!?*const ev.Event {
        if (!s.stepped) s.read_by_next = true;
        if (s.state == .done) return null;
        if (s.state == .failed) return s.failure;
        if (s.watch.canceled.load(.acquire)) return s.abort();
        if (s.pending_failure) |err| return s.fail(err);
        if (s.batch.takeUnread()) |e| return s.hold(e);
        if (s.read_ahead_failure) |err| {
            s.read_ahead_failure = null;
            return s.hold(try s.failOrRetry(err, false));
        }
        switch (s.phase) {
            .messages => {},
            .complete => return s.hold(s.complete()),
            .tool_starts => {
                if (try s.nextOfToolStarts()) |e| return e;
                return s.nextAny();
            },
            .summary => return s.hold(try s.nextOfSummary()),
            .tool_results => {
                if (s.cursor < s.round.calls.items.len) {
                    const c = &s.round.calls.items[s.cursor];
                    s.cursor += 1;
                    return s.hold(.{ .tool_result = .{ .id = c.id, .name = c.name, .content = c.result orelse "", .is_error = c.is_error, .parts = c.infos } });
                }
                // The round is over: its results go to the model in the next request, and
                // what the user steered meanwhile with them, in the same user message (never
                // two user messages in a row).
                s.commitRoundWithSteers() catch |err| return s.fail(err);
                s.round.clear();
                s.rounds += 1;
                s.phase = .entered;
                s.cursor = 0;
                return s.nextAny();
            },
            .entered => {
                if (s.cursor < s.entered.items.len) {
                    const m = s.entered.items[s.cursor];
                    s.cursor += 1;
                    return s.hold(.{ .user_message = .{ .source = m.source, .text = m.text } });
                }
                s.freeEntered();
                // The wall budget spent meanwhile: the model is not asked again.
                if (s.wallSpent()) {
                    s.endByBudget(.wall_ms);
                    return s.hold(s.complete());
                }
                s.phase = .messages;
                s.startNextMessage();
            },
            .follow_up => return s.hold(s.startFollowUp() catch |err| return s.fail(err)),
            .resuming => {
                s.restoreRound() catch |err| {
                    s.giveBackResumed();
                    return s.fail(err);
                };
                return s.nextAny();
            },
            .paused => {
                // The paused message is the conversation's last: the next request sends it
                // back as it is, and the server goes on from it.
                s.rounds += 1;
                s.phase = .messages;
                s.startNextMessage();
            },
        }
        if (s.state == .retry_wait) {
            s.waitBeforeRetry() catch |err| return s.hold(try s.failOrRetry(err, false));
            s.state = .unsent;
        }
        if (s.state == .unsent) {
            if (!s.compaction_checked) {
                s.compaction_checked = true;
                if (try s.startThresholdCompaction()) return s.hold(try s.nextOfSummary());
            }
            s.startMcpServers() catch |err| return s.fail(err);
            s.open() catch |err| return s.hold(try s.failOrRetry(err, true));
            s.state = .streaming;
        }
        while (true) {
            if (try s.queuedOrHot()) |e| return e;
            s.readEvent() catch |err| return s.hold(try s.failOrRetry(err, false));
        }
    }

    /// The turn's terminal event (MessageComplete): the turn is over. When the user queued
    /// a follow-up (or a steer no tool round took), the stream goes on with another turn.
    fn complete(s: *Stream) ev.Event {
        const end: ev.Event = .{ .message_complete = .{
            .stop_reason = s.last_end.stop_reason,
            .provider_stop_reason = s.last_end.provider_stop_reason,
            .usage = s.turn_usage,
            .cost = s.turn_cost,
        } };
        if (s.steering.nextTurnOrEnd()) |m| {
            s.next_turn = .{ .source = .follow_up, .text = m.text }; // (a steer too, now)
            s.phase = .follow_up;
            return end;
        }
        s.state = .done;
        s.agent.busy = false;
        return end;
    }

    /// Queues a message for the turn, from any thread: a steer joins the conversation at
    /// the end of the current (or next) tool round, after its results, and the model reads
    /// it in the round's next request; with no tool round left, it starts a new turn of this
    /// stream once the current one ends, as a follow-up does. Empty: InvalidArgument. Ended:
    /// the stream's turn is over (or failed), or it is a compaction's.
    pub fn steer(s: *Stream, text: []const u8) SteerError!void {
        if (text.len == 0) return error.InvalidArgument;
        return s.steering.push(s.agent.gpa, .steer, text);
    }

    /// Queues a message that starts a new turn of this stream when the current one ends
    /// (after its MessageComplete; the stream is over after the last turn's). As `steer`.
    pub fn followUp(s: *Stream, text: []const u8) SteerError!void {
        if (text.len == 0) return error.InvalidArgument;
        return s.steering.push(s.agent.gpa, .follow_up, text);
    }

    pub const SteerError = steering.PushError || error{InvalidArgument};
    /// A steer or follow-up queued: its source and its text.
    pub const Queued = steering.Message;

    /// Takes back, from any thread, the steers and follow-ups still queued (in order, their
    /// texts the agent allocator's, for the caller to free): they will not reach the model.
    /// One a tool round or a turn already took is not among them (its UserMessage comes).
    pub fn withdrawQueued(s: *Stream, out: *std.ArrayList(Queued)) std.mem.Allocator.Error!void {
        return s.steering.takeAll(s.agent.gpa, out);
    }

    /// Commits the round's results with the steers queued so far after them, one user
    /// message; the steers are handed out next (phase `entered`).
    fn commitRoundWithSteers(s: *Stream) TurnError!void {
        const gpa = s.agent.gpa;
        try s.steering.takeSteers(gpa, &s.entered);
        const blocks = try gpa.alloc(conversation.Block, s.entered.items.len);
        defer gpa.free(blocks);
        for (s.entered.items, blocks) |m, *b| b.* = .{ .kind = .text, .text = m.text };
        try s.round.commitResults(&s.agent.conversation, blocks);
    }

    fn freeEntered(s: *Stream) void {
        for (s.entered.items) |m| s.agent.gpa.free(m.text);
        s.entered.clearRetainingCapacity();
    }

    /// Starts the turn `next_turn` asks for, in this stream: its user message is appended as
    /// Agent.run appends one, and the turn's counts (usage, cost, rounds, deadlines, budget)
    /// start again. The stream's turn options stay.
    fn startFollowUp(s: *Stream) TurnError!ev.Event {
        const gpa = s.agent.gpa;
        const m = s.next_turn.?;
        try s.entered.ensureUnusedCapacity(gpa, 1);
        try s.agent.appendUserTurn(.{ .text = m.text }, false);
        s.next_turn = null;
        s.continued = false;
        s.entered.appendAssumeCapacity(m);
        s.user_turn_appended = s.agent.conversation.appended;
        s.agent.unfinished_turn = false;
        s.rounds = 0;
        s.turn_usage = .{};
        s.turn_cost = 0;
        s.last_end = .{ .stop_reason = .none, .provider_stop_reason = "", .usage = .{} };
        s.turn_deadline_ns = 0;
        s.wall_deadline_ns = 0;
        s.approval_wait_since = 0;
        s.phase = .entered;
        s.cursor = 1; // (this event)
        return .{ .user_message = .{ .source = m.source, .text = m.text } };
    }

    /// Starts with the round `p` (Agent.resumeTurn), at the first read.
    pub fn resumeRound(s: *Stream, p: pending_round.PendingRound) void {
        s.resumed = p;
        s.phase = .resuming;
    }

    /// Makes the round `resumed` describes, of the conversation's last message: the MCP
    /// servers first (their tools are the agent's only once they run).
    fn restoreRound(s: *Stream) TurnError!void {
        try s.startMcpServers();
        const messages = s.agent.conversation.messages.items;
        try s.round.restore(s.agent, &messages[messages.len - 1], &s.resumed.?);
        var p = s.resumed.?;
        s.resumed = null;
        p.deinit(s.agent.gpa);
        s.phase = .tool_starts;
        s.cursor = 0;
    }

    /// A resumed round the stream ends without making (closed, canceled or failed first)
    /// stays the agent's.
    fn giveBackResumed(s: *Stream) void {
        const p = s.resumed orelse return;
        s.resumed = null;
        if (s.agent.suspended == null) s.agent.suspendRound(p) else {
            var owned = p;
            owned.deinit(s.agent.gpa);
        }
    }

    /// The turn's budget that is spent, if one is (config `budget`; a turn's options may
    /// change it): asked before the turn goes on to a tool round or a continuation.
    fn budgetSpent(s: *const Stream) ?Budget.Kind {
        const budget = s.config.budget;
        if (budget.output_tokens) |n| if (s.turn_usage.output_tokens >= n) return .output_tokens;
        if (budget.tool_rounds) |n| if (s.rounds >= n) return .tool_rounds;
        if (s.wallSpent()) return .wall_ms;
        // (A turn whose cost is unknown never gets here: checkRequest refuses it.)
        if (budget.cost_usd) |max| if (s.turn_cost) |spent| if (spent >= max) return .cost_usd;
        return null;
    }

    fn wallSpent(s: *const Stream) bool {
        return s.wall_deadline_ns != 0 and watchdog.nowNs() >= s.wall_deadline_ns;
    }

    /// The turn's hard deadline: timeouts.total_ms's or the wall budget's, the earlier; 0
    /// for none. The watch is armed with it; which one passed decides a failure or an end.
    pub fn hardDeadline(s: *const Stream) u64 {
        if (s.wall_deadline_ns == 0) return s.turn_deadline_ns;
        if (s.turn_deadline_ns == 0) return s.wall_deadline_ns;
        return @min(s.turn_deadline_ns, s.wall_deadline_ns);
    }

    /// The turn ends normally at the next call: its MessageComplete says `budget`, and names
    /// which in provider_stop_reason (the stop reason is panto's own, so that string is free,
    /// and no binding needs a new field for it).
    fn endByBudget(s: *Stream, kind: Budget.Kind) void {
        s.last_end.stop_reason = .budget;
        s.last_end.provider_stop_reason = @tagName(kind);
        s.phase = .complete;
    }

    /// The wall budget passed during a request (the watch ended its wait): the turn ends as
    /// a cancel ends it, keeping what the user saw of the message (stop reason `aborted`, no
    /// tool call), but normally, with MessageComplete. A compaction under way changes nothing.
    fn endRequestByBudget(s: *Stream) NextError!?ev.Event {
        s.closeConnection(.timed_out);
        switch (s.phase) {
            .messages => if (s.assembly.started) {
                const a = &s.assembly;
                a.forget(a.queue.items[a.queue_head..]);
                a.forget(s.batch.unseen());
                a.commitPartial(&s.agent.conversation, s.agent.origin()) catch |err| return s.fail(err);
            },
            .summary => if (s.compaction) |run| {
                run.destroy();
                s.compaction = null;
            },
            .tool_starts, .tool_results, .paused, .complete, .entered, .follow_up, .resuming => {},
        }
        s.endByBudget(.wall_ms);
        return s.complete();
    }

    /// The next event of a round whose calls are starting, or null once they all have their
    /// results (the phase is then `.tool_results`). Apart from nextAny (never inlined): its
    /// temporaries would widen nextAny's frame, which sits under every request of the turn
    /// (see transport/stack_trim_test.zig).
    noinline fn nextOfToolStarts(s: *Stream) NextError!?*const ev.Event {
        s.endApprovalWait();
        // Progress reported comes before anything else of the round.
        if (s.round.takeProgress()) |p| return s.hold(.{ .tool_progress = p });
        // The question first, so that a person reads it while the other calls run. A round
        // that asks is recorded in the session at each change (a call handed out, the wait
        // for the answer), so that a process that ends meanwhile leaves it to another.
        if (!s.round.announced and s.round.asked.items.len > 0) {
            s.round.announced = true;
            s.round.record(s.agent.conversation.journal) catch |err| return s.fail(err);
            return s.hold(.{ .approval_request = .{ .calls = s.round.asked.items } });
        }
        if (s.round.nextStart()) |c| {
            s.round.record(s.agent.conversation.journal) catch |err| return s.fail(err);
            return s.hold(.{ .tool_call_start = .{ .id = c.id, .name = c.name, .input = c.input, .awaiting_result = c.handling == .host, .sequential = c.sequential } });
        }
        if (s.round.pending()) return error.ResultPending;
        if (try s.runRound()) |p| return s.hold(.{ .tool_progress = p });
        if (s.round.waiting()) {
            // The user steered while a call waits for their answer: they moved on. The call
            // is not run ("Skipped: the user steered."), and the steer reaches the model with
            // the round's results (decision 4).
            if (s.steering.hasSteer()) {
                s.round.skipWaiting(steer_skipped) catch |err| return s.fail(err);
                return s.nextOfToolStarts();
            }
            s.round.record(s.agent.conversation.journal) catch |err| return s.fail(err);
            s.approval_wait_since = watchdog.nowNs();
            return error.ApprovalPending;
        }
        s.phase = .tool_results;
        s.cursor = 0;
        return null;
    }

    /// The wait for a person's answer is over (or goes on: counted up to now): timeouts.total_ms
    /// does not count it.
    fn endApprovalWait(s: *Stream) void {
        if (s.approval_wait_since == 0) return;
        if (s.turn_deadline_ns != 0) s.turn_deadline_ns +|= watchdog.nowNs() -| s.approval_wait_since;
        s.approval_wait_since = 0;
    }

    /// Keeps `e` as the event handed out.
    inline fn hold(s: *Stream, e: ?ev.Event) ?*const ev.Event {
        s.current = e orelse return null;
        return &s.current;
    }

    /// Up to `max` events (at least 1) in one call: the first as `next()` gives it, waiting
    /// for the provider as needed, then the events that continue the message and can be
    /// decoded from what was already received (`peekBuffered`), without waiting. So a batch
    /// ends before anything that ends or changes the turn, as a MessageEnd, and after a
    /// ToolCallStart, a MessageComplete or a ProviderRetry. An empty batch: the turn is over
    /// (as `next()` returning null). A failure met after the first event is returned by the
    /// next call, the events before it first. The events and their strings are valid until
    /// the next call on the stream. Events given back by `unread` come back first, as a
    /// batch of their own (unless the turn was canceled meanwhile).
    pub fn nextBatch(s: *Stream, max: usize) NextError![]const ev.Event {
        if (s.stepped) try stream_step.checkNext(s);
        const b = &s.batch;
        if (b.unread > 0) {
            if (!s.watch.canceled.load(.acquire)) return b.takeUnreadBatch(@max(max, 1));
            // Canceled meanwhile: next() ends the turn, keeping the message without them.
            _ = try s.next();
            b.clear();
            return b.events.items;
        }
        const limit = try s.startBatch(max);
        const first = (try s.nextRef()) orelse return b.events.items;
        return s.fillBatch(first, limit);
    }

    /// Empties the last batch and makes room for one of up to `max` events (at least 1):
    /// its limit. Room first: running out of memory after taking an event would lose it.
    pub fn startBatch(s: *Stream, max: usize) NextError!usize {
        const limit = @min(@max(max, 1), batch.max_events);
        s.batch.reserve(s.agent.gpa, limit) catch return s.fail(error.OutOfMemory);
        return limit;
    }

    /// The batch that begins with `first` (just taken, after `startBatch`), filled up to
    /// `limit` with the events that continue the message and were received already.
    pub fn fillBatch(s: *Stream, first: *const ev.Event, limit: usize) NextError![]const ev.Event {
        const b = &s.batch;
        b.addFirst(s.agent.gpa, first.*) catch return s.fail(error.OutOfMemory);
        while (b.events.items.len < limit) {
            const e = s.peekBuffered() orelse break;
            if (!b.fits(e)) break;
            _ = s.assembly.pop();
            s.current = e;
            // Delivering an event that continues a message cannot fail.
            b.add((s.deliverCurrent() catch unreachable).?.*);
        }
        return b.events.items;
    }

    /// Gives back the last `count` events of the last batch, which the user did not see: the
    /// next call (`next()` or `nextBatch`) returns them again, and a turn canceled meanwhile
    /// keeps its message without them. Only events that continue a message can be given
    /// back (see `peekBuffered`), and the MessageStart that begins a batch with the whole
    /// batch (a message the user never saw leaves nothing behind: `commitPartial` keeps no
    /// empty message); only the batch's, while no newer event was handed out.
    pub fn unread(s: *Stream, count: usize) error{InvalidArgument}!void {
        const b = &s.batch;
        const handed = b.events.items.len - b.unread;
        if (count > handed) return error.InvalidArgument;
        const first = handed - count;
        for (b.events.items[first..handed], first..) |e, i| {
            if (!batch.canGiveBack(e) and !(i == 0 and e == .message_start)) return error.InvalidArgument;
        }
        b.unread += count;
    }

    /// Cancels the turn from any thread: a blocked `next()` returns error.Canceled promptly.
    pub fn cancel(s: *Stream) void {
        watchdog.cancel(&s.watch);
    }

    /// Runs a turn that failed at the provider-open boundary again, with the agent's current
    /// configuration (and the turn's options applied again: InvalidConfig when they no longer
    /// fit it, the reason in `diag`), without adding the user message twice.
    pub fn reopen(s: *Stream) ReopenError!void {
        var diag: config_mod.Diagnostic = .{};
        return s.reopenWithDiagnostic(&diag);
    }

    /// State: the turn did not fail at open; SessionWrite: the user message taken back out at
    /// the failure could not be recorded again (nothing changed).
    pub const ReopenError = error{ State, Busy, InvalidConfig, OutOfMemory, SessionWrite };

    /// As `reopen`, with the reason the turn's options are refused.
    pub fn reopenWithDiagnostic(s: *Stream, diag: *config_mod.Diagnostic) ReopenError!void {
        if (s.state != .failed or !s.failed_at_open) return error.State;
        if (s.agent.busy) return error.Busy;
        s.config = if (s.options_json) |json|
            (try config_mod.parseTurnOptions(s.turn_arena.allocator(), s.agent.config, json, diag)).config
        else
            s.agent.config;
        // A compaction asked for is decided again: the conversation may have changed since.
        const manual: ?compaction.Plan = if (s.compaction) |run| switch (run.plan.reason) {
            .manual => compaction.planManual(&s.agent.conversation, s.agent.config) orelse return error.State,
            .threshold => null,
        } else null;
        try s.restoreUserMessage();
        s.steering.reopen();
        s.agent.busy = true;
        s.state = .unsent;
        s.failed_at_open = false;
        s.detail.set(s.agent.gpa, 0, "", "");
        s.detail.clearResponse(s.agent.gpa);
        s.retry_attempt = 0;
        s.turn_deadline_ns = 0;
        s.wall_deadline_ns = 0;
        s.watch.fired.store(.none, .release);
        s.resetMessage();
        s.decoder = .init(s.agent.config.provider);
        s.compaction_checked = false;
        if (s.compaction) |run| switch (run.plan.reason) {
            .manual => run.restart(manual.?),
            .threshold => { // decided again, by the configuration as it is now
                run.destroy();
                s.compaction = null;
                s.phase = .messages;
            },
        };
    }

    /// Gives the result of a host tool call announced by ToolCallStart with awaiting_result.
    /// The content is taken as it is (a NUL is a character), except that invalid UTF-8
    /// sequences become U+FFFD; a call id that is not UTF-8 is refused (InvalidArgument).
    pub fn submitToolResult(s: *Stream, call_id: []const u8, text: []const u8, is_error: bool) SubmitError!void {
        return s.submitToolResultParts(call_id, text, &.{}, is_error);
    }

    /// As `submitToolResult`, with more of the result after `text`: text and media parts
    /// (see content.zig), whose media are fitted now. Nothing changes when it fails.
    pub fn submitToolResultParts(s: *Stream, call_id: []const u8, text: []const u8, parts: []const content.Part, is_error: bool) SubmitError!void {
        if (!std.unicode.utf8ValidateSlice(call_id)) return error.InvalidArgument;
        if (s.phase != .tool_starts or s.state == .failed) return error.NoSuchCall;
        const i = s.round.awaiting(call_id) orelse return error.NoSuchCall;
        const result = try content.toolResult(s.agent.gpa, text, parts);
        s.round.calls.items[i].setContent(s.agent.gpa, result, is_error);
    }

    pub const SubmitError = error{ NoSuchCall, InvalidArgument, OutOfMemory };
    pub const AnswerError = tool_round.Round.AnswerError;

    /// Approves the call `call_id` that an ApprovalRequest listed: its ToolCallStart comes
    /// at the next call, and it runs as any call of the round. From any thread, as
    /// `submitToolResult` (not during another call on the stream). A call that waits for no
    /// answer (unknown, answered already, not of this round) is InvalidArgument.
    pub fn approve(s: *Stream, call_id: []const u8) AnswerError!void {
        if (s.phase != .tool_starts or s.state == .failed) return error.InvalidArgument;
        return s.round.approve(call_id);
    }

    /// Denies the call `call_id` that an ApprovalRequest listed: its result is an error that
    /// tells the model "The user denied this call: REASON" (invalid UTF-8 becomes U+FFFD).
    /// As `approve` otherwise.
    pub fn deny(s: *Stream, call_id: []const u8, reason: []const u8) AnswerError!void {
        if (s.phase != .tool_starts or s.state == .failed) return error.InvalidArgument;
        return s.round.deny(call_id, reason);
    }

    /// Reports progress of a host tool call that awaits its result: `next()` returns a
    /// ToolProgress event before anything else of the round. `fraction`: 0 to 1, negative for
    /// none (above 1 or NaN: InvalidArgument). Results may be submitted in any order; they
    /// go to the model, and come as ToolResult events, in call order.
    pub fn toolProgress(s: *Stream, call_id: []const u8, text: []const u8, fraction: f64) tool_round.Round.ProgressError!void {
        if (!std.unicode.utf8ValidateSlice(call_id)) return error.InvalidArgument;
        if (s.phase != .tool_starts or s.state == .failed) return error.NoSuchCall;
        return s.round.queueProgress(call_id, text, fraction);
    }

    /// The first host call of the round still awaiting its result, as its ToolCallStart (for
    /// a caller of `finalMessage` whose events were let go).
    pub fn pendingCall(s: *const Stream) ?ev.ToolCallStart {
        if (s.phase != .tool_starts or s.state == .failed) return null;
        for (s.round.calls.items) |c| if (c.handling == .host and c.result == null and c.approval != .waiting)
            return .{ .id = c.id, .name = c.name, .input = c.input, .awaiting_result = true, .sequential = c.sequential };
        return null;
    }

    /// Prepares the stream for the next provider call of the same turn.
    fn startNextMessage(s: *Stream) void {
        s.compaction_checked = false;
        s.resetMessage();
        s.state = .unsent;
        s.retry_attempt = 0;
        s.detail.clearResponse(s.agent.gpa);
    }

    /// Forgets the current message and its request, keeping buffers.
    fn resetMessage(s: *Stream) void {
        s.closeConnection(.failed); // (a finished message's connection is parked already)
        s.assembly.reset();
        s.decoder = .init(s.agent.config.provider);
        s.parser.deinit();
        s.parser = .init(s.agent.config.provider, s.agent.gpa);
        s.request_body.clearRetainingCapacity();
        s.auth_header.clearRetainingCapacity();
        s.content_delivered = false;
        s.dropped = false;
        s.got_head = false;
        s.retry_after_ms = null;
        s.should_retry = null;
    }

    /// A failure of the current request: retried when the policy allows (the user sees a
    /// ProviderRetry event), else the turn fails.
    fn failOrRetry(s: *Stream, err: TurnError, at_open: bool) NextError!?ev.Event {
        const gpa = s.agent.gpa;
        var e = err;
        switch (s.watch.fired.load(.acquire)) {
            .canceled => return s.abort(),
            .timeout => {
                if (s.wallSpent()) return s.endRequestByBudget();
                e = error.Timeout;
                s.detail.set(gpa, 0, "timeout_error", s.timeoutMessage());
            },
            .none => {},
        }
        if (s.agent.config.api_key) |key| s.detail.scrub(key);
        const policy = s.agent.config.retry;
        const decision = retry.decide(.{
            .err = e,
            .http_status = s.detail.http_status,
            .dropped = s.dropped,
            .content_delivered = s.content_delivered,
            .attempt = s.retry_attempt,
            .retry_after_ms = s.retry_after_ms,
            .should_retry = s.should_retry,
        }, policy);
        const log = &s.agent.log;
        if (log.on()) {
            const d = &s.detail;
            if (decision) |delay_ms|
                log.print("request failed ({s}, HTTP {d}: {s}): retry {d} in {d} ms", .{ @errorName(e), d.http_status, d.message.items, s.retry_attempt + 1, delay_ms })
            else
                log.print("request failed ({s}, HTTP {d}: {s}): not retried", .{ @errorName(e), d.http_status, d.message.items });
        }
        if (decision) |delay_ms| {
            s.retry_attempt += 1;
            s.retry_delay_ms = delay_ms;
            s.retry_reason.clearRetainingCapacity();
            s.retry_reason.print(gpa, "{s}{s}{s}", .{
                s.detail.error_type.items,
                if (s.detail.error_type.items.len > 0) ": " else "",
                s.detail.message.items,
            }) catch {};
            const status = s.detail.http_status;
            s.resetMessage();
            s.detail.set(gpa, 0, "", "");
            s.detail.clearResponse(gpa);
            s.state = .retry_wait;
            return .{ .provider_retry = .{
                .attempt = s.retry_attempt,
                .delay_ms = delay_ms,
                .http_status = status,
                .reason = s.retry_reason.items,
            } };
        }
        s.failed_at_open = at_open and e != error.Timeout;
        return s.fail(e);
    }

    /// Sleeps the retry delay in short steps, so that a cancel or the turn's deadline ends it.
    fn waitBeforeRetry(s: *Stream) TurnError!void {
        const until = watchdog.nowNs() + s.retry_delay_ms * std.time.ns_per_ms;
        while (true) {
            if (s.watch.canceled.load(.acquire)) return error.Canceled;
            const now = watchdog.nowNs();
            const deadline = s.hardDeadline();
            if (deadline != 0 and now >= deadline) {
                s.watch.fired.store(.timeout, .release);
                return error.Timeout;
            }
            if (now >= until) return;
            // Blocking, in short steps that look at the flag; stepped, parked until the
            // delay or the turn's deadline (a cancel is seen when the wait ends: no
            // descriptor wakes the caller's loop, see docs/design/native-async.md).
            var wake = if (poll_io.current() != null) until else @min(until, now + 20 * std.time.ns_per_ms);
            if (deadline != 0) wake = @min(wake, deadline);
            if (!poll_io.sleepUntil(wake)) return if (s.watch.canceled.load(.acquire)) error.Canceled else error.Timeout;
        }
    }

    fn timeoutMessage(s: *const Stream) []const u8 {
        if (s.turn_deadline_ns != 0 and watchdog.nowNs() >= s.turn_deadline_ns) return "the turn took longer than timeouts.total_ms";
        if (!s.link.connected) return "no connection to the provider within timeouts.connect_ms";
        if (!s.got_head) return "no answer from the provider within timeouts.first_byte_ms";
        return "no progress from the provider within timeouts.idle_ms";
    }

    /// Ends a canceled turn: what the user saw of the message stays in the conversation with
    /// the stop reason `aborted`; calls of a tool round get canceled results.
    fn abort(s: *Stream) NextError {
        const gpa = s.agent.gpa;
        s.closeConnection(.canceled);
        switch (s.phase) {
            .messages => if (s.assembly.started) {
                // Not part of what the user saw, latest first: the events decoded but not
                // handed out yet (one provider event can make several), then those given back.
                const a = &s.assembly;
                a.forget(a.queue.items[a.queue_head..]);
                a.forget(s.batch.unseen());
                s.assembly.commitPartial(&s.agent.conversation, s.agent.origin()) catch {};
            },
            .tool_starts, .tool_results => {
                s.finishRound() catch {}; // (its calls' waits end with the cancel)
                // A call that waits for a person keeps waiting, after the stream: the agent
                // holds the round (Agent.resumeTurn), and so does its session.
                if (!(s.phase == .tool_starts and s.round.waiting() and s.suspendRound())) {
                    s.round.answerAllWith(mcp_servers.canceled_message) catch {};
                    s.round.commitResults(&s.agent.conversation, &.{}) catch {};
                }
                s.round.clear();
            },
            .resuming => s.giveBackResumed(),
            // (A canceled compaction changes nothing; the messages a safe point entered are
            // in the conversation already, and a follow-up not started is dropped.)
            .paused, .complete, .summary, .entered, .follow_up => {},
        }
        s.detail.set(gpa, 0, "canceled_error", "the turn was canceled");
        return s.fail(error.Canceled);
    }

    /// The turn stops while a call of the round waits for a person: the calls that started
    /// get canceled results, and the agent keeps the round with its answers (the session
    /// records it). false when that cannot be done (out of memory): the round is then ended
    /// as any canceled round.
    fn suspendRound(s: *Stream) bool {
        const agent = s.agent;
        s.round.answerStartedWith(mcp_servers.canceled_message) catch return false;
        const p = s.round.toPending(agent.conversation.messages.items.len) catch return false;
        agent.suspendRound(p);
        // (A session that cannot record it keeps the round's last entry: another process
        // then sees the round as it was at that entry.)
        s.round.record(agent.conversation.journal) catch {};
        return true;
    }

    /// The detail of the failure (valid until the stream is destroyed), or null.
    pub fn failureDetail(s: *const Stream) ?*const errors.Detail {
        return if (s.state == .failed) &s.detail else null;
    }

    /// Hands out `current`, an event of the message being streamed.
    inline fn deliverCurrent(s: *Stream) NextError!?*const ev.Event {
        const e = &s.current;
        watchdog.progress(&s.watch);
        if (e.* == .message_start) {
            e.message_start.request_id = s.detail.request_id.items; // (from the response's head)
        } else s.content_delivered = true;
        if (e.* == .message_end) {
            e.message_end.cost = s.addCost(e.message_end.usage);
            s.endMessage(e.message_end) catch |err| return s.fail(err);
        }
        return e;
    }

    /// The cost of one request's usage at the turn's model's prices, added to the turn's.
    fn addCost(s: *Stream, usage: ev.Usage) ?f64 {
        const cost = catalog.requestCost(&s.config, @tagName(s.config.provider), s.config.model, usage);
        s.turn_cost = catalog.addCost(s.turn_cost, cost);
        return cost;
    }

    /// An assistant message ended: keep it in the conversation, then either handle its tool
    /// calls or end the turn.
    fn endMessage(s: *Stream, end: ev.MessageComplete) TurnError!void {
        const agent = s.agent;
        s.parkConnection();
        ev.addUsage(&s.turn_usage, end.usage);
        s.last_end = end;

        try s.round.collect(agent, &s.assembly);
        const inputs = try agent.gpa.alloc([]const u8, s.round.calls.items.len);
        defer agent.gpa.free(inputs);
        for (s.round.calls.items, inputs) |c, *input| input.* = c.input;
        const origin = agent.origin();
        try s.assembly.commit(&agent.conversation, inputs, .{ .stop_reason = end.stop_reason, .usage = end.usage, .provider = origin.provider, .model = origin.model });

        // A long server-tool turn paused by the server (Anthropic pause_turn) goes on with
        // another request, counted as a tool round is.
        if (end.stop_reason == .pause_turn and s.round.calls.items.len == 0) {
            if (s.budgetSpent()) |kind| return s.endByBudget(kind);
            if (s.rounds >= agent.config.max_tool_iterations) {
                var buf: [160]u8 = undefined;
                const msg = std.fmt.bufPrint(&buf, "the turn paused (pause_turn) after max_tool_iterations ({d}) tool rounds and continuations", .{agent.config.max_tool_iterations}) catch "too many tool rounds";
                s.detail.set(agent.gpa, 0, "tool_loop_error", msg);
                s.pending_failure = error.ToolLoop; // (no calls to answer)
                return;
            }
            s.phase = .paused;
            return;
        }
        const wants_tools = s.round.calls.items.len > 0 and switch (end.stop_reason) {
            .tool_use, .end_turn, .none => true,
            else => false, // cut short (max_tokens, refusal...): its calls may be incomplete
        };
        if (!wants_tools) {
            if (s.round.calls.items.len > 0) {
                try s.round.answerAllWith("The tool call was not run: the message was cut short.");
                try s.round.commitResults(&agent.conversation, &.{});
            }
            s.phase = .complete;
            return;
        }
        // A budget spent ends the turn before the round: no call runs, and each has a result.
        if (s.budgetSpent()) |kind| {
            try s.round.answerAllWith(budget_skipped);
            try s.round.commitResults(&agent.conversation, &.{});
            s.round.clear();
            return s.endByBudget(kind);
        }
        if (s.rounds >= agent.config.max_tool_iterations) {
            var buf: [160]u8 = undefined;
            const msg = std.fmt.bufPrint(&buf, "the model asked for tools more than max_tool_iterations ({d}) times in one turn", .{agent.config.max_tool_iterations}) catch "too many tool rounds";
            return s.failRound(error.ToolLoop, "tool_loop_error", msg);
        }
        if (s.round.refused(agent)) |c| {
            var buf: [200]u8 = undefined;
            const msg = std.fmt.bufPrint(&buf, "the model called tool \"{s}\", which needs capabilities this agent was not granted", .{c.name}) catch "a tool call needs capabilities this agent was not granted";
            return s.failRound(error.Capability, "capability_error", msg);
        }
        s.phase = .tool_starts;
        s.cursor = 0;
    }

    /// Runs the round's native and MCP calls until they end, or an MCP call reports progress:
    /// that is returned, and the next call goes on waiting (the calls run on the round's
    /// threads meanwhile). The wait is on the round's signal fd, so a stepped stream parks on
    /// it. The MCP calls wait on their servers: a cancel (or close) of the turn from another
    /// thread ends those waits through an eventfd the watchdog writes (the stream's own when
    /// it is polled, else one made for the round).
    fn runRound(s: *Stream) NextError!?ev.ToolProgress {
        if (s.round.run == null) {
            const has_mcp = for (s.round.calls.items) |c| {
                if (c.handling == .mcp and c.result == null) break true;
            } else false;
            if (has_mcp and s.watch.wake_fd < 0) {
                const fd = std.c.eventfd(0, std.os.linux.EFD.CLOEXEC | std.os.linux.EFD.NONBLOCK);
                // (without one, a cancel waits for the calls)
                if (fd >= 0) {
                    s.round_wake_fd = fd;
                    watchdog.setWake(&s.watch, fd);
                }
            }
            s.round.startCalls(s.agent, s.watch.wake_fd) catch |err| {
                s.finishRound() catch {};
                return s.fail(err);
            };
        }
        while (s.round.run != null) {
            if (s.round.takeProgress()) |p| return p;
            // Canceled: the calls' waits end with it; they are joined below. A stepped
            // stream's deadline that passed (its poll would return at once) waits there too.
            if (s.round.done() or s.watch.canceled.load(.acquire) or s.watch.fired.load(.acquire) != .none) break;
            var pfd: std.c.pollfd = .{ .fd = s.round.signalFd(), .events = std.c.POLL.IN, .revents = 0 };
            _ = poll_io.poll(&pfd, -1);
            var count: u64 = 0;
            _ = std.c.read(pfd.fd, std.mem.asBytes(&count), 8);
        }
        s.finishRound() catch |err| return s.fail(err);
        return null;
    }

    /// Joins the round's calls and lets go of the eventfd made for them.
    fn finishRound(s: *Stream) Allocator.Error!void {
        defer if (s.round_wake_fd >= 0) {
            watchdog.setWake(&s.watch, -1);
            _ = std.c.close(s.round_wake_fd);
            s.round_wake_fd = -1;
        };
        return s.round.finish();
    }

    /// Before the turn's first request offers their tools: the agent's MCP servers run and
    /// their tools are listed (mcp/servers.zig). A server that cannot start fails the turn
    /// with a config error naming it, before anything is sent. Before the turn's later
    /// requests, the servers whose tools changed are listed again.
    fn startMcpServers(s: *Stream) TurnError!void {
        const agent = s.agent;
        if (agent.mcp.list.len == 0 or s.phase == .summary) return;
        if (s.mcp_started) return agent.mcp.refreshChanged(&agent.tools, &agent.log);
        s.mcp_started = true;
        var diag: config_mod.Diagnostic = .{};
        agent.mcp.ensureStarted(agent, &agent.tools, &agent.log, &diag) catch |err| switch (err) {
            error.OutOfMemory => return error.OutOfMemory,
            error.McpServer => {
                s.detail.set(agent.gpa, 0, "mcp_server_error", diag.message());
                return error.Config;
            },
        };
    }

    /// Fails the turn at the next call, answering the round's calls with the reason so that
    /// the conversation stays valid for another turn.
    fn failRound(s: *Stream, err: TurnError, error_type: []const u8, message: []const u8) TurnError!void {
        const gpa = s.agent.gpa;
        s.detail.set(gpa, 0, error_type, message);
        try s.round.answerAllWith(message);
        try s.round.commitResults(&s.agent.conversation, &.{});
        s.round.clear();
        s.pending_failure = err;
    }

    /// What the current request sends: the conversation, or a compaction's summary request.
    pub fn requestParts(s: *const Stream) RequestParts {
        const agent = s.agent;
        if (s.phase == .summary) return .{
            .config = s.compaction.?.requestConfigOf(s.config),
            .conversation = &s.compaction.?.request,
            .tools = &.{},
            .granted = &.{},
        };
        return .{
            .config = s.config,
            .conversation = &agent.conversation,
            .tools = agent.tools.items(),
            .granted = agent.config.capabilities,
        };
    }

    /// Before a request of the turn: when the context is estimated past the window, the
    /// compaction starts (its COMPACTION_START), and its summary request goes first.
    fn startThresholdCompaction(s: *Stream) TurnError!bool {
        const agent = s.agent;
        const plan = compaction.planThreshold(&agent.conversation, agent.config) orelse return false;
        s.compaction = compaction.Run.create(agent.gpa, plan) catch |err| return s.fail(err);
        s.phase = .summary;
        return true;
    }

    /// The next event of a compaction: its start, then (the summary request read through,
    /// its retries shown) its end, with the conversation compacted.
    fn nextOfSummary(s: *Stream) NextError!?ev.Event {
        const run = s.compaction.?;
        if (!run.announced) {
            run.announced = true;
            return .{ .compaction_start = .{ .tokens_before = run.plan.tokens_before, .reason = @tagName(run.plan.reason) } };
        }
        run.prepare(&s.agent.conversation) catch return s.fail(error.OutOfMemory);
        if (s.state == .retry_wait) {
            s.waitBeforeRetry() catch |err| return s.failOrRetry(err, false);
            s.state = .unsent;
        }
        if (s.state == .unsent) {
            s.open() catch |err| return s.failOrRetry(err, true);
            s.state = .streaming;
        }
        while (true) {
            while (s.assembly.pop()) |e| {
                watchdog.progress(&s.watch); // (the summary's events count as progress)
                if (e == .message_end) return try s.endSummary(e.message_end);
            }
            s.readEvent() catch |err| return s.failOrRetry(err, false);
        }
    }

    /// The summary request ended: the summarized messages are replaced by the summary.
    fn endSummary(s: *Stream, end: ev.MessageComplete) TurnError!ev.Event {
        const agent = s.agent;
        const run = s.compaction.?;
        s.parkConnection();
        ev.addUsage(&s.turn_usage, end.usage);
        _ = s.addCost(end.usage);
        var texts: std.ArrayList([]const u8) = .empty;
        defer texts.deinit(agent.gpa);
        for (s.assembly.blocksSoFar()) |b| if (b.kind == .text or b.kind == .none) {
            texts.append(agent.gpa, b.text.items) catch return s.fail(error.OutOfMemory);
        };
        const done = run.finish(&agent.conversation, texts.items, s.config.system) catch |err| switch (err) {
            error.OutOfMemory => return s.fail(error.OutOfMemory),
            error.SessionWrite => return s.fail(error.SessionWrite),
            error.EmptySummary => {
                s.detail.set(agent.gpa, 0, "protocol_error", "empty summary: the summary request answered no text");
                return s.fail(error.Protocol);
            },
        };
        const event: ev.Event = .{ .compaction_end = .{
            .tokens_before = run.plan.tokens_before,
            .tokens_after = done.tokens_after,
            .message_count = run.plan.first_kept,
            .summary = done.summary, // (the conversation's, unchanged until the next call)
        } };
        const reason = run.plan.reason;
        run.destroy();
        s.compaction = null;
        switch (reason) {
            .manual => {
                s.last_end = end; // (the stream's MESSAGE_COMPLETE)
                s.phase = .complete;
            },
            .threshold => {
                s.phase = .messages;
                s.startNextMessage();
                s.compaction_checked = true; // (the request the compaction was for goes now)
            },
        }
        return event;
    }

    fn fail(s: *Stream, err: TurnError) TurnError {
        s.pending_failure = null;
        if (s.agent.config.api_key) |key| s.detail.scrub(key);
        if (s.detail.message.items.len == 0) s.detail.set(s.agent.gpa, s.detail.http_status, "", @errorName(err));
        s.closeConnection(.failed);
        const first = s.state != .failed;
        s.state = .failed;
        s.failure = err;
        s.agent.busy = false;
        s.steering.end(s.agent.gpa); // (what is queued has no turn left to join)
        if (first) s.settleFailedTurn(); // (once: a rolled-back turn has nothing more to take)
        return err;
    }

    /// The rule of a turn that fails or is canceled (docs/conversations.md, "A turn that
    /// fails"): one that kept nothing after its user message (no answer, not even a partial
    /// one) takes that message back out, so the conversation is as it was before the turn and
    /// the next request never carries two user messages in a row. One that kept something (a
    /// partial answer, tool rounds) stays whole, and Agent.rollbackTurn removes it on request.
    fn settleFailedTurn(s: *Stream) void {
        const appended = s.user_turn_appended orelse return; // (a compaction's stream)
        const agent = s.agent;
        if (agent.conversation.appended != appended) {
            agent.unfinished_turn = true;
            return;
        }
        if (s.continued) return; // (nothing of this turn's to take back)
        // (A session file that cannot record it keeps the message: rollbackTurn may retry.)
        s.rolled_back = agent.conversation.takeLast() catch {
            agent.unfinished_turn = true;
            return;
        };
    }

    /// Puts back the user message the failed turn took out (reopen: the same turn again), at
    /// the end: after any turn run meanwhile.
    fn restoreUserMessage(s: *Stream) ReopenError!void {
        const m = s.rolled_back orelse return;
        const conv = &s.agent.conversation;
        s.rolled_back = null;
        conv.appendOwnedMessage(m) catch |err| switch (err) {
            error.OutOfMemory => return error.OutOfMemory, // (the message went with it)
            error.SessionWrite => {
                s.rolled_back = conv.messages.pop().?; // (not in the file: not in memory)
                return error.SessionWrite;
            },
        };
        s.user_turn_appended = conv.appended;
        s.agent.unfinished_turn = false;
    }

};
