//! The stream of one turn. It owns the HTTP response reader and the SSE parser: each `next()`
//! reads just enough of the body to produce one event. No threads, no callbacks.
const std = @import("std");
const Allocator = std.mem.Allocator;
const Agent = @import("agent.zig").Agent;
const ev = @import("event.zig");
const errors = @import("errors.zig");
const sse = @import("sse.zig");
const Assembly = @import("assembly.zig").Assembly;
const anthropic = @import("anthropic.zig");
const openai = @import("openai.zig");
const Round = @import("tool_round.zig").Round;
const watchdog = @import("watchdog.zig");
const retry = @import("retry.zig");
const batch = @import("batch.zig");
const tunnel = @import("tunnel.zig");
const EventArena = @import("event_arena.zig").EventArena;
const Body = @import("body.zig").Body;
const Reason = @import("connection_log.zig").Reason;
const network = @import("network.zig");
const stack_trim = @import("stack_trim.zig");
const utf8 = @import("utf8.zig");

const TurnError = errors.TurnError;
/// `next()` fails with a TurnError (sticky), or ResultPending: a host tool call still awaits
/// its result; nothing changed, submit it and call again.
pub const NextError = TurnError || error{ResultPending};

const max_error_body = 64 * 1024;

pub const Stream = struct {
    agent: *Agent,
    state: State = .unsent,
    /// The connection is up (TCP, a proxy's tunnel, TLS) and `request` (and `tunnel`, if
    /// set) must be closed.
    connected: bool = false,
    failure: TurnError = error.Protocol, // meaningful only when state == .failed
    detail: errors.Detail = .{},

    request: std.http.Client.Request = undefined,
    /// HTTPS through a proxy: panto's CONNECT tunnel, which `request` is read from.
    tunnel: ?*tunnel.Tunnel = null,
    response: std.http.Client.Response = undefined,
    body: Body,
    request_body: std.Io.Writer.Allocating,
    url: std.ArrayList(u8) = .empty,
    auth_header: std.ArrayList(u8) = .empty,

    parser: sse.Parser,
    /// Holds the decoded JSON of the current SSE event; reset (keeping its memory) per event.
    event_arena: EventArena,
    /// `event_arena.allocator()`, made once and used everywhere: the hot readers take it from
    /// memory written long ago. Made afresh per event, it is two stores the callee reads back
    /// as one wide load, which waits for them (a store-forwarding stall, some 10 cycles an
    /// event).
    event_allocator: Allocator = undefined,
    assembly: Assembly,
    decoder: union(enum) { anthropic: anthropic.Decoder, openai: openai.Decoder },

    /// The tool calls of the last assistant message, while they are handled.
    round: Round,
    phase: Phase = .messages,
    /// Which call of the round the next tool event is about.
    cursor: usize = 0,
    /// Tool rounds done in this turn.
    rounds: u32 = 0,
    turn_usage: ev.Usage = .{},
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

    const State = enum { unsent, streaming, retry_wait, done, failed };
    const Phase = enum { messages, tool_starts, tool_results, complete };

    pub fn create(agent: *Agent) Allocator.Error!*Stream {
        const gpa = agent.gpa;
        const s = try gpa.create(Stream);
        s.* = .{
            .agent = agent,
            .request_body = .init(gpa),
            .body = .{},
            .parser = .init(gpa),
            .event_arena = .init(gpa),
            .assembly = .init(gpa),
            .decoder = newDecoder(agent),
            .round = .{ .gpa = gpa },
        };
        s.event_allocator = s.event_arena.allocator(); // (the stream does not move)
        return s;
    }

    fn newDecoder(agent: *const Agent) @FieldType(Stream, "decoder") {
        return switch (agent.config.provider) {
            .anthropic => .{ .anthropic = .{} },
            .openai => .{ .openai = .{} },
        };
    }

    /// Ends the turn by the close policy, then frees the stream. A turn not yet over is
    /// canceled and ends as `next()` would end it then (see `abort`): what the user saw of the
    /// message stays in the conversation marked aborted, unanswered tool calls get an error
    /// result, and the agent can run the next turn. The agent may have been released
    /// already: then this frees it too. Not while another thread is in a call on the stream
    /// (the C ABI's panto_stream_free allows that: libpanto-c/src/stream_handle.zig).
    pub fn close(s: *Stream) void {
        if (s.state != .done and s.state != .failed) {
            s.cancel();
            s.abort() catch {}; // (its error is the one next() would return: Canceled)
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
        s.parser.deinit();
        s.event_arena.deinit();
        s.assembly.deinit();
        s.round.deinit();
        s.batch.deinit(gpa);
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
            .complete => {
                s.state = .done;
                s.agent.busy = false;
                return s.hold(.{ .message_complete = .{
                    .stop_reason = s.last_end.stop_reason,
                    .provider_stop_reason = s.last_end.provider_stop_reason,
                    .usage = s.turn_usage,
                } });
            },
            .tool_starts => {
                if (s.cursor < s.round.calls.items.len) {
                    const c = &s.round.calls.items[s.cursor];
                    s.cursor += 1;
                    return s.hold(.{ .tool_call_start = .{ .id = c.id, .name = c.name, .input = c.input, .awaiting_result = c.handling == .host } });
                }
                if (s.round.pending()) return error.ResultPending;
                s.round.runNative(s.agent) catch |err| return s.fail(err);
                s.phase = .tool_results;
                s.cursor = 0;
                return s.nextAny();
            },
            .tool_results => {
                if (s.cursor < s.round.calls.items.len) {
                    const c = &s.round.calls.items[s.cursor];
                    s.cursor += 1;
                    return s.hold(.{ .tool_result = .{ .id = c.id, .name = c.name, .content = c.result orelse "", .is_error = c.is_error } });
                }
                // The round is over: its results go to the model in the next request.
                s.round.commitResults(&s.agent.conversation) catch |err| return s.fail(err);
                s.round.clear();
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
            s.open() catch |err| return s.hold(try s.failOrRetry(err, true));
            s.state = .streaming;
        }
        while (true) {
            if (try s.queuedOrHot()) |e| return e;
            s.readEvent() catch |err| return s.hold(try s.failOrRetry(err, false));
        }
    }

    /// Keeps `e` as the event handed out.
    inline fn hold(s: *Stream, e: ?ev.Event) ?*const ev.Event {
        s.current = e orelse return null;
        return &s.current;
    }

    /// Reads one SSE event and decodes it into queued events (maybe none).
    fn readEvent(s: *Stream) TurnError!void {
        if (try s.readHotChunk()) return;
        try s.readSseEvent();
    }

    /// The event of nearly every OpenAI stream, a chunk framed as the API frames it, decoded
    /// (into queued events) straight from the received bytes when they start with one whole
    /// (see openai_hot.parseEvent): true when it was.
    fn readHotChunk(s: *Stream) TurnError!bool {
        if (s.decoder != .openai or !s.parser.atEventStart()) return false;
        s.event_arena.reset();
        const len = try s.decoder.openai.handleHotEvent(&s.assembly, s.event_allocator, s.body.buffered()) orelse return false;
        s.body.toss(len);
        return true;
    }

    /// Reads one SSE event with the SSE parser and decodes it into queued events.
    fn readSseEvent(s: *Stream) TurnError!void {
        s.event_arena.reset();
        const maybe_event = s.parser.next(&s.body) catch |err| return s.readFailure(err);
        const arena = s.event_allocator;
        const a = &s.assembly;
        const d = &s.detail;
        if (maybe_event) |event| {
            return switch (s.decoder) {
                .anthropic => |*dec| dec.handle(a, arena, event, d),
                .openai => |*dec| dec.handle(a, arena, event, d),
            };
        }
        const finished = switch (s.decoder) {
            .anthropic => |*dec| dec.finish(a, d),
            .openai => |*dec| dec.finish(a, d),
        };
        finished catch |err| {
            s.dropped = true; // the body ended early: the connection went away
            return err;
        };
        if (s.assembly.queue.items.len == 0) {
            s.detail.set(s.agent.gpa, 0, "protocol_error", "the stream ended without completing the message");
            s.dropped = true;
            return error.Protocol;
        }
    }

    /// The event of nearly every Anthropic stream, a text delta framed as the API frames it,
    /// decoded straight from the received bytes when they start with one whole (see
    /// anthropic.hotEvent), into `current`: true when it was. False: not such an event (or
    /// one without text), for readEvent. Only while nothing is queued.
    inline fn readHotDelta(s: *Stream) TurnError!bool {
        if (s.decoder != .anthropic or !s.parser.atEventStart()) return false;
        s.event_arena.reset();
        const hot = try anthropic.hotEvent(s.event_allocator, s.body.buffered()) orelse return false;
        s.current = try anthropic.hotDeltaEvent(&s.assembly, &s.detail, hot.delta) orelse return false;
        s.body.toss(hot.len);
        return true;
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
        const b = &s.batch;
        if (b.unread > 0) {
            if (!s.watch.canceled.load(.acquire)) return b.takeUnreadBatch(@max(max, 1));
            // Canceled meanwhile: next() ends the turn, keeping the message without them.
            _ = try s.next();
            b.clear();
            return b.events.items;
        }
        const limit = @min(@max(max, 1), batch.max_events);
        // Room first: running out of memory after taking an event would lose it.
        b.reserve(s.agent.gpa, limit) catch return s.fail(error.OutOfMemory);
        const first = (try s.nextRef()) orelse return b.events.items;
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

    /// The next event, left undelivered, when `next()` would return it at once from what was
    /// already received and it continues the message being streamed (a BlockStart,
    /// ContentDelta, BlockComplete or ToolDetails); null otherwise. Decodes received SSE
    /// events as needed; never reads from the connection. A failure met while decoding waits
    /// for the next `next()`.
    pub fn peekBuffered(s: *Stream) ?ev.Event {
        if (s.state != .streaming or s.phase != .messages or !s.connected) return null;
        if (s.pending_failure != null or s.read_ahead_failure != null or s.batch.unread > 0) return null;
        if (s.watch.canceled.load(.acquire)) return null;
        while (true) {
            if (s.assembly.peek()) |e| return if (batch.canGiveBack(e)) e else null;
            const decoded = s.decodeReceived() catch |err| {
                s.read_ahead_failure = err;
                return null;
            };
            if (!decoded) return null;
        }
    }

    /// Decodes the next event from bytes received already, queueing its events (or takes
    /// more of them into the body's buffer), without waiting on the network. False when
    /// nothing more can be done without waiting.
    fn decodeReceived(s: *Stream) TurnError!bool {
        if (try s.readHotDelta()) {
            try s.assembly.push(s.current);
            return true;
        }
        if (try s.readHotChunk()) return true;
        if (!sse.hasBufferedEvent(&s.parser, &s.body)) {
            // The body reader may hold only part of what the connection received (a chunked
            // body is decoded one chunk at a time): take more, if no wait.
            if (!s.bodyFillsWithoutWaiting()) return false;
            s.body.fillMore() catch |err| return s.readFailure(err);
            return true;
        }
        try s.readSseEvent();
        return true;
    }

    /// Whether `s.body.fillMore()` would return from bytes the connection already holds
    /// (received and, over TLS, decrypted), without waiting on the network: for a
    /// Content-Length body, any; for a chunked one, enough to reach the next chunk's data.
    fn bodyFillsWithoutWaiting(s: *Stream) bool {
        const r = &s.request.reader;
        if (s.body.reader == r.in) return false; // a body read to the connection's end: nothing more is held
        if (s.body.buffered().len == s.body.capacity()) return false; // no room (an event larger than it)
        var held: []const u8 = r.in.buffered();
        switch (r.state) {
            .body_remaining_content_length => return held.len > 0,
            .body_remaining_chunk_len => |left| switch (left) {
                .head => {},
                .n => held = if (held.len >= 1) held[1..] else return false,
                .rn => held = if (held.len >= 2) held[2..] else return false,
                else => return held.len > 0, // inside a chunk's data
            },
            else => return false,
        }
        var chunk: std.http.ChunkParser = .init;
        const head_len = chunk.feed(held);
        // The last chunk (length 0) is followed by trailers, which may not all be there.
        return chunk.state == .data and chunk.chunk_len > 0 and head_len < held.len;
    }

    /// Gives back the last `count` events of the last batch, which the user did not see: the
    /// next call (`next()` or `nextBatch`) returns them again, and a turn canceled meanwhile
    /// keeps its message without them. Only events that continue a message can be given
    /// back (see `peekBuffered`), and only the batch's, while no newer event was handed out.
    pub fn unread(s: *Stream, count: usize) error{InvalidArgument}!void {
        const b = &s.batch;
        const handed = b.events.items.len - b.unread;
        if (count > handed) return error.InvalidArgument;
        for (b.events.items[handed - count .. handed]) |e| {
            if (!batch.canGiveBack(e)) return error.InvalidArgument;
        }
        b.unread += count;
    }

    /// Cancels the turn from any thread: a blocked `next()` returns error.Canceled promptly.
    pub fn cancel(s: *Stream) void {
        watchdog.cancel(&s.watch);
    }

    /// Runs a turn that failed at the provider-open boundary again, with the agent's current
    /// configuration, without adding the user message twice.
    pub fn reopen(s: *Stream) error{ State, Busy }!void {
        if (s.state != .failed or !s.failed_at_open) return error.State;
        if (s.agent.busy) return error.Busy;
        s.agent.busy = true;
        s.state = .unsent;
        s.failed_at_open = false;
        s.detail.set(s.agent.gpa, 0, "", "");
        s.detail.setRequestId(s.agent.gpa, "");
        s.retry_attempt = 0;
        s.turn_deadline_ns = 0;
        s.watch.fired.store(.none, .release);
        s.resetMessage();
        s.decoder = newDecoder(s.agent);
    }

    /// Gives the result of a host tool call announced by ToolCallStart with awaiting_result.
    /// The content is taken as it is (a NUL is a character), except that invalid UTF-8
    /// sequences become U+FFFD; a call id that is not UTF-8 is refused (InvalidArgument).
    pub fn submitToolResult(s: *Stream, call_id: []const u8, content: []const u8, is_error: bool) error{ NoSuchCall, InvalidArgument, OutOfMemory }!void {
        if (!std.unicode.utf8ValidateSlice(call_id)) return error.InvalidArgument;
        if (s.phase != .tool_starts or s.state == .failed) return error.NoSuchCall;
        for (s.round.calls.items) |*c| {
            if (c.handling == .host and c.result == null and std.mem.eql(u8, c.id, call_id)) {
                var mended: std.ArrayList(u8) = .empty;
                defer mended.deinit(s.agent.gpa);
                return c.setResult(s.agent.gpa, try utf8.valid(s.agent.gpa, &mended, content), is_error);
            }
        }
        return error.NoSuchCall;
    }

    /// Prepares the stream for the next provider call of the same turn.
    fn startNextMessage(s: *Stream) void {
        s.resetMessage();
        s.state = .unsent;
        s.retry_attempt = 0;
        s.detail.setRequestId(s.agent.gpa, "");
    }

    /// Forgets the current message and its request, keeping buffers.
    fn resetMessage(s: *Stream) void {
        s.closeConnection(.failed); // (a finished message's connection is parked already)
        s.assembly.reset();
        s.decoder = newDecoder(s.agent);
        s.parser.deinit();
        s.parser = .init(s.agent.gpa);
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
            if (s.turn_deadline_ns != 0 and now >= s.turn_deadline_ns) {
                s.watch.fired.store(.timeout, .release);
                return error.Timeout;
            }
            if (now >= until) return;
            const step = @min(until - now, 20 * std.time.ns_per_ms);
            const ts: std.c.timespec = .{ .sec = 0, .nsec = @intCast(step) };
            _ = std.c.nanosleep(&ts, null);
        }
    }

    fn timeoutMessage(s: *const Stream) []const u8 {
        if (s.turn_deadline_ns != 0 and watchdog.nowNs() >= s.turn_deadline_ns) return "the turn took longer than timeouts.total_ms";
        if (!s.connected) return "no connection to the provider within timeouts.connect_ms";
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
                s.assembly.commitPartial(&s.agent.conversation) catch {};
            },
            .tool_starts, .tool_results => {
                s.round.answerAllWith("The turn was canceled before this tool call finished.") catch {};
                s.round.commitResults(&s.agent.conversation) catch {};
                s.round.clear();
            },
            .complete => {},
        }
        s.detail.set(gpa, 0, "canceled_error", "the turn was canceled");
        return s.fail(error.Canceled);
    }

    /// The detail of the failure (valid until the stream is destroyed), or null.
    pub fn failureDetail(s: *const Stream) ?*const errors.Detail {
        return if (s.state == .failed) &s.detail else null;
    }

    /// Hands out `current`, an event of the message being streamed.
    inline fn deliverCurrent(s: *Stream) NextError!?*const ev.Event {
        const e = &s.current;
        watchdog.progress(&s.watch);
        if (e.* != .message_start) s.content_delivered = true;
        if (e.* == .message_end) {
            s.endMessage(e.message_end) catch |err| return s.fail(err);
        }
        return e;
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
        try s.assembly.commit(&agent.conversation, inputs, end.stop_reason);

        const wants_tools = s.round.calls.items.len > 0 and switch (end.stop_reason) {
            .tool_use, .end_turn, .none => true,
            else => false, // cut short (max_tokens, refusal...): its calls may be incomplete
        };
        if (!wants_tools) {
            if (s.round.calls.items.len > 0) {
                try s.round.answerAllWith("The tool call was not run: the message was cut short.");
                try s.round.commitResults(&agent.conversation);
            }
            s.phase = .complete;
            return;
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

    /// Fails the turn at the next call, answering the round's calls with the reason so that
    /// the conversation stays valid for another turn.
    fn failRound(s: *Stream, err: TurnError, error_type: []const u8, message: []const u8) TurnError!void {
        const gpa = s.agent.gpa;
        s.detail.set(gpa, 0, error_type, message);
        try s.round.answerAllWith(message);
        try s.round.commitResults(&s.agent.conversation);
        s.round.clear();
        s.pending_failure = err;
    }

    fn fail(s: *Stream, err: TurnError) TurnError {
        s.pending_failure = null;
        if (s.agent.config.api_key) |key| s.detail.scrub(key);
        if (s.detail.message.items.len == 0) s.detail.set(s.agent.gpa, s.detail.http_status, "", @errorName(err));
        s.closeConnection(.failed);
        s.state = .failed;
        s.failure = err;
        s.agent.busy = false;
        return err;
    }

    /// Closes the request's connection, for `reason` (for the debug log; a cancel or timeout
    /// that fired says so instead).
    fn closeConnection(s: *Stream, reason: Reason) void {
        // Nothing to watch until the next request, even when no connection was made: a
        // deadline left armed would fire during a retry's wait and fail the next attempt.
        watchdog.arm(&s.watch, 0, 0);
        if (!s.connected) return;
        // The watchdog must forget the socket before it is closed and its number reused.
        watchdog.setSocket(&s.watch, -1);
        const k = &s.agent.keep_alive;
        const why = if (k.log.on) s.closeReason(reason) else reason;
        // A request that failed, was canceled, timed out or did not read its body to the end
        // closes its connection: std.http would pool one whose request failed while being
        // written (its response not begun), and the next request would fail on it.
        if (s.request.connection) |c| {
            if (k.log.on) k.log.closedConnection(c, why);
            c.closing = true;
        }
        s.request.deinit();
        if (s.tunnel) |t| k.closeTunnel(t, why);
        s.tunnel = null;
        s.connected = false;
        s.body.release();
    }

    /// Why the connection is closed, for the debug log: a cancel or timeout that fired says
    /// so, else `reason`.
    fn closeReason(s: *const Stream, reason: Reason) Reason {
        if (s.watch.canceled.load(.acquire)) return .canceled;
        return switch (s.watch.fired.load(.acquire)) {
            .timeout => .timed_out,
            .canceled => .canceled,
            .none => reason,
        };
    }

    /// The message ended: its connection is kept for the agent's next request, which reads
    /// the rest of the body first (see keep_alive.zig).
    fn parkConnection(s: *Stream) void {
        if (!s.connected) return s.closeConnection(.unread);
        watchdog.arm(&s.watch, 0, 0);
        watchdog.setSocket(&s.watch, -1);
        s.agent.keep_alive.park(&s.request, s.tunnel, s.agent.config.keep_alive.idle_ms);
        s.tunnel = null;
        s.connected = false;
        s.body.release(); // the parked body reader has no buffer (see KeepAlive.park)
    }

    /// Sends the request and reads the response head. A non-2xx answer becomes the typed
    /// error its status means, with the provider's error type and message.
    fn open(s: *Stream) TurnError!void {
        const agent = s.agent;
        const gpa = agent.gpa;
        const config = agent.config;

        writeUrl(gpa, &s.url, config.base_url.?, switch (config.provider) {
            .anthropic => anthropic.endpoint,
            .openai => openai.endpoint,
        }) catch return error.OutOfMemory;
        const uri = std.Uri.parse(s.url.items) catch {
            s.detail.set(gpa, 0, "connection_error", "the base_url does not make a valid URL");
            return error.Connection;
        };
        // Not inlined, nor is `network.apply` below: inlined, their frames stayed under the
        // connect, the request's write and the head's read, the deepest calls of a turn, in
        // the stack of every thread that runs a stream (open's frame: 9.7 KB, now 4.6 KB).
        try @call(.never_inline, writeRequestBody, .{s});

        var extra: [4]std.http.Header = undefined;
        var n_extra: usize = 0;
        extra[n_extra] = .{ .name = "accept", .value = "text/event-stream" };
        n_extra += 1;
        var authorization: std.http.Client.Request.Headers.Value = .omit;
        switch (config.provider) {
            .anthropic => {
                extra[n_extra] = .{ .name = "anthropic-version", .value = anthropic.api_version };
                n_extra += 1;
                if (config.api_key) |key| {
                    extra[n_extra] = .{ .name = "x-api-key", .value = key };
                    n_extra += 1;
                }
            },
            .openai => if (config.api_key) |key| {
                s.auth_header.appendSlice(gpa, "Bearer ") catch return error.OutOfMemory;
                s.auth_header.appendSlice(gpa, key) catch return error.OutOfMemory;
                authorization = .{ .override = s.auth_header.items };
            },
        }

        const timeouts = config.timeouts;
        const now = watchdog.nowNs();
        if (s.turn_deadline_ns == 0 and timeouts.total_ms > 0) s.turn_deadline_ns = now + timeouts.total_ms * std.time.ns_per_ms;
        // Connecting (TCP, a proxy's tunnel, TLS) has connect_ms; then the answer has
        // first_byte_ms from the moment the request goes out. The turn's deadline bounds both.
        const connect_deadline = deadlineAfter(now, timeouts.connect_ms);
        watchdog.arm(&s.watch, earliest(connect_deadline, s.turn_deadline_ns), 0);

        var problem: [256]u8 = @splat(0);
        const route = @call(.never_inline, network.Settings.apply, .{ &agent.network, &agent.http, uri, &problem }) catch |err| switch (err) {
            error.OutOfMemory => return error.OutOfMemory,
            error.BadProxy, error.BadCaFile => {
                s.detail.set(gpa, 0, "connection_error", std.mem.sliceTo(&problem, 0));
                return error.Connection;
            },
        };
        const idle_ms = config.keep_alive.idle_ms;
        const options: std.http.Client.RequestOptions = .{
            .redirect_behavior = .unhandled,
            // keep_alive.idle_ms 0: the server is told the connection ends with the response.
            .keep_alive = idle_ms > 0,
            .headers = .{
                .content_type = .{ .override = "application/json" },
                .accept_encoding = .{ .override = "identity" },
                .user_agent = .{ .override = "panto/0.1.0" },
                .authorization = authorization,
            },
            .extra_headers = extra[0..n_extra],
        };
        // The sockets opened from here are bounded by connect_ms and watched (dial.zig), and
        // so are the name lookups (resolve.zig).
        agent.dialer.resolv_conf = agent.network.resolvConf();
        agent.dialer.begin(&s.watch, connect_deadline);
        defer agent.dialer.end();
        var host_buf: [std.Io.net.HostName.max_len]u8 = undefined;
        const tunnel_key: ?tunnel.Key = switch (route) {
            .std_http => null,
            .tunnel => |proxy| .{
                .proxy = proxy,
                .host = (uri.getHost(&host_buf) catch return s.connectFailure(error.UriMissingHost)).bytes,
                .port = uri.port orelse 443,
            },
        };
        const kept = agent.keep_alive.reclaim(&agent.http, &s.watch, idle_ms, tunnel_key);
        const reused = try s.connect(uri, options, tunnel_key, kept);
        watchdog.arm(&s.watch, earliest(deadlineAfter(watchdog.nowNs(), timeouts.first_byte_ms), s.turn_deadline_ns), 0);
        s.response = s.exchange() catch |err| retry: {
            if (!reused or !s.nothingReceived(err)) return s.connectFailure(s.causeOf(err));
            // The server closed the kept-alive connection while it was idle: send the
            // request again, once, on a new connection, as if nothing happened. The body
            // again too: sending it uses it as the write buffer, which a failed send leaves
            // shifted (what was written is gone from its start).
            s.closeConnection(.server_closed);
            try s.writeRequestBody();
            agent.keep_alive.closeIdle(&agent.http, .server_closed);
            agent.dialer.begin(&s.watch, deadlineAfter(watchdog.nowNs(), timeouts.connect_ms));
            watchdog.arm(&s.watch, earliest(deadlineAfter(watchdog.nowNs(), timeouts.connect_ms), s.turn_deadline_ns), 0);
            _ = try s.connect(uri, options, tunnel_key, null);
            watchdog.arm(&s.watch, earliest(deadlineAfter(watchdog.nowNs(), timeouts.first_byte_ms), s.turn_deadline_ns), 0);
            break :retry s.exchange() catch |e| return s.connectFailure(s.causeOf(e));
        };

        s.got_head = true;
        watchdog.arm(&s.watch, s.turn_deadline_ns, timeouts.idle_ms * std.time.ns_per_ms);
        const head = s.response.head;
        var it = head.iterateHeaders();
        while (it.next()) |h| {
            if (std.ascii.eqlIgnoreCase(h.name, "request-id") or std.ascii.eqlIgnoreCase(h.name, "x-request-id")) {
                s.detail.setRequestId(gpa, h.value);
            } else if (std.ascii.eqlIgnoreCase(h.name, "retry-after-ms")) {
                if (retry.parseRetryAfterMs(h.value)) |ms| s.retry_after_ms = ms;
            } else if (std.ascii.eqlIgnoreCase(h.name, "retry-after")) {
                if (s.retry_after_ms == null) s.retry_after_ms = retry.parseRetryAfter(h.value, unixNow());
            } else if (std.ascii.eqlIgnoreCase(h.name, "x-should-retry")) {
                if (std.ascii.eqlIgnoreCase(h.value, "true")) s.should_retry = true;
                if (std.ascii.eqlIgnoreCase(h.value, "false")) s.should_retry = false;
            }
        }
        const status: u16 = @intFromEnum(head.status);
        const content_type = head.content_type orelse "";
        if (status < 200 or status > 299) return s.httpFailure(status);
        if (!std.ascii.startsWithIgnoreCase(content_type, "text/event-stream")) {
            var msg_buf: [160]u8 = undefined;
            const msg = std.fmt.bufPrint(&msg_buf, "expected a text/event-stream answer, got \"{s}\"", .{content_type[0..@min(content_type.len, 80)]}) catch "expected a text/event-stream answer";
            s.detail.set(gpa, status, "protocol_error", msg);
            return error.Protocol;
        }
        s.body.reader = s.response.reader(s.body.buffer());
    }

    /// The request's JSON body, from the conversation as it is now.
    fn writeRequestBody(s: *Stream) error{OutOfMemory}!void {
        const agent = s.agent;
        const config = agent.config;
        s.request_body.clearRetainingCapacity();
        const w = &s.request_body.writer;
        const parts: anthropic.RequestParts = .{
            .config = config,
            .conversation = &agent.conversation,
            .tools = agent.tools.items(),
            .granted = config.capabilities,
        };
        const written = switch (config.provider) {
            .anthropic => anthropic.writeRequest(w, parts),
            .openai => openai.writeRequest(w, parts),
        };
        written catch return error.OutOfMemory;
    }

    /// Opens the request's connection (TCP and TLS, or a tunnel through a proxy and TLS in
    /// it), or takes a kept-alive one: from std.http's pool, or `kept`, the agent's tunnel to
    /// `tunnel_key`. True when the connection was reused.
    fn connect(s: *Stream, uri: std.Uri, options: std.http.Client.RequestOptions, tunnel_key: ?tunnel.Key, kept: ?*tunnel.Tunnel) TurnError!bool {
        const agent = s.agent;
        const k = &agent.keep_alive;
        // A new TLS connection's handshake leaves ~200 KB of dead stack pages resident below
        // this frame, for the thread's life: give them back (stack_trim.zig).
        const https = std.ascii.eqlIgnoreCase(uri.scheme, "https");
        const key = tunnel_key orelse {
            const free_before = agent.http.connection_pool.free_len;
            s.request = agent.http.request(.POST, uri, options) catch |err| {
                if (https) stack_trim.giveBack();
                return s.connectFailure(err);
            };
            s.connected = true; // from here on the request must be closed
            const reused = k.count(&agent.http, &s.request, free_before);
            if (https and !reused) stack_trim.giveBack();
            watchdog.setSocket(&s.watch, s.request.connection.?.stream_reader.stream.socket.handle);
            return reused;
        };
        const t = kept orelse open: {
            defer stack_trim.giveBack();
            var problem: tunnel.Problem = .{};
            break :open tunnel.Tunnel.open(&agent.http, key, &problem) catch |err| switch (err) {
                error.OutOfMemory => return error.OutOfMemory,
                else => {
                    s.detail.set(agent.gpa, 0, "connection_error", problem.message());
                    return error.Connection;
                },
            };
        };
        k.countTunnel(t, kept != null);
        s.tunnel = t;
        s.request = t.request(&agent.http, .POST, uri, options);
        s.connected = true; // from here on the tunnel must be closed
        watchdog.setSocket(&s.watch, t.socket());
        return kept != null;
    }

    /// Writes the request and reads the response head, on std.http's connection or inside
    /// the tunnel.
    fn exchange(s: *Stream) anyerror!std.http.Client.Response {
        if (s.tunnel) |t| {
            try t.sendBodyComplete(&s.request, s.request_body.written());
            return t.receiveHead(&s.request);
        }
        try s.request.sendBodyComplete(s.request_body.written());
        return s.request.receiveHead(&.{});
    }

    /// What made an exchange fail, for its message: inside a tunnel, the socket's or TLS's
    /// error rather than the reader's or writer's.
    fn causeOf(s: *const Stream, err: anyerror) anyerror {
        const t = s.tunnel orelse return err;
        return switch (err) {
            error.WriteFailed => t.writeError() orelse err,
            error.ReadFailed => t.readError() orelse err,
            else => err,
        };
    }

    /// Whether a failed exchange got nothing of the response (and was neither canceled nor
    /// timed out): the request may be sent again elsewhere.
    fn nothingReceived(s: *Stream, err: anyerror) bool {
        if (s.watch.fired.load(.acquire) != .none) return false;
        return switch (err) {
            error.WriteFailed, error.HttpConnectionClosing => true,
            error.ReadFailed => s.request.reader.in.bufferedLen() == 0,
            else => false,
        };
    }

    fn httpFailure(s: *Stream, status: u16) TurnError {
        const gpa = s.agent.gpa;
        const reader = s.response.reader(s.body.buffer());
        const arena = s.event_allocator;
        const body = reader.allocRemaining(arena, .limited(max_error_body)) catch "";
        const parsed = switch (s.agent.config.provider) {
            .anthropic => anthropic.parseErrorBody(arena, body),
            .openai => openai.parseErrorBody(arena, body),
        };
        if (parsed) |p| {
            s.detail.set(gpa, status, p.type, p.message);
            if (p.request_id) |id| if (s.detail.request_id.items.len == 0) s.detail.setRequestId(gpa, id);
        } else {
            var msg_buf: [96]u8 = undefined;
            const msg = std.fmt.bufPrint(&msg_buf, "HTTP {d} without a provider error body", .{status}) catch "HTTP error";
            s.detail.set(gpa, status, "", msg);
        }
        return errors.fromHttpStatus(status);
    }

    fn connectFailure(s: *Stream, err: anyerror) TurnError {
        if (err == error.OutOfMemory) return error.OutOfMemory;
        var msg_buf: [160]u8 = undefined;
        const msg = std.fmt.bufPrint(&msg_buf, "could not reach {s}: {s}", .{ hostOf(s.url.items), @errorName(err) }) catch @errorName(err);
        s.detail.set(s.agent.gpa, 0, "connection_error", msg);
        return error.Connection;
    }

    /// What a failed body read means: a malformed or cut chunked body is a protocol error,
    /// anything else (reset, closed) a connection error.
    fn readFailure(s: *Stream, err: anyerror) TurnError {
        const gpa = s.agent.gpa;
        switch (err) {
            error.OutOfMemory => return error.OutOfMemory,
            error.EventTooLarge => {
                s.detail.set(gpa, 0, "protocol_error", "an SSE event is larger than the limit");
                return error.Protocol;
            },
            else => {},
        }
        if (s.response.bodyErr()) |body_err| {
            if (body_err == error.HttpChunkTruncated) s.dropped = true;
            s.detail.set(gpa, 0, "protocol_error", switch (body_err) {
                error.HttpChunkTruncated => "the chunked body was cut short",
                error.HttpChunkInvalid => "the chunked body is malformed",
                error.HttpHeadersOversize => "the chunk trailers are too large",
            });
            return error.Protocol;
        }
        var msg_buf: [128]u8 = undefined;
        const read_error: ?anyerror = if (s.request.connection) |c| c.getReadError() else if (s.tunnel) |t| t.readError() else null;
        const reason = @errorName(read_error orelse err);
        const msg = std.fmt.bufPrint(&msg_buf, "the connection failed while streaming: {s}", .{reason}) catch "the connection failed while streaming";
        s.detail.set(gpa, 0, "connection_error", msg);
        return error.Connection;
    }
};

/// `ms` after `now` (CLOCK_MONOTONIC ns), or 0 (no deadline) for 0 ms.
fn deadlineAfter(now: u64, ms: u64) u64 {
    return if (ms > 0) now + ms * std.time.ns_per_ms else 0;
}

/// The earlier of two deadlines, 0 standing for none.
fn earliest(a: u64, b: u64) u64 {
    if (a == 0) return b;
    if (b == 0) return a;
    return @min(a, b);
}

fn unixNow() i64 {
    var ts: std.c.timespec = undefined;
    _ = std.c.clock_gettime(.REALTIME, &ts);
    return @intCast(ts.sec);
}

/// scheme://host:port of a URL, without any user:password part or path (no secrets in errors).
fn hostOf(url: []const u8) []const u8 {
    const scheme_end = (std.mem.indexOf(u8, url, "://") orelse return "the provider") + 3;
    const rest = url[scheme_end..];
    const end = std.mem.indexOfAny(u8, rest, "/?#") orelse rest.len;
    if (std.mem.lastIndexOfScalar(u8, rest[0..end], '@') != null) return "the provider (credentials in base_url hidden)";
    return url[0 .. scheme_end + end];
}

/// base_url + endpoint, where a base ending in "/v1" (the OpenAI SDK convention) is not
/// given a second "/v1".
fn writeUrl(gpa: Allocator, out: *std.ArrayList(u8), base: []const u8, endpoint: []const u8) Allocator.Error!void {
    out.clearRetainingCapacity();
    const trimmed = std.mem.trimEnd(u8, base, "/");
    try out.appendSlice(gpa, trimmed);
    if (std.mem.endsWith(u8, trimmed, "/v1")) {
        try out.appendSlice(gpa, endpoint["/v1".len..]);
    } else {
        try out.appendSlice(gpa, endpoint);
    }
}

test "urls from base urls with and without /v1" {
    var out: std.ArrayList(u8) = .empty;
    defer out.deinit(std.testing.allocator);
    try writeUrl(std.testing.allocator, &out, "http://127.0.0.1:9", "/v1/messages");
    try std.testing.expectEqualStrings("http://127.0.0.1:9/v1/messages", out.items);
    try writeUrl(std.testing.allocator, &out, "https://api.openai.com/v1/", "/v1/chat/completions");
    try std.testing.expectEqualStrings("https://api.openai.com/v1/chat/completions", out.items);
}
