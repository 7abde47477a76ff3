//! From received bytes to events: how a stream reads the response body (stream.zig is the
//! turn's logic around it). Each SSE event is read by the SSE parser (sse.zig) and decoded
//! by the provider's decoder into the assembly's queue (providers.zig), unless it is the
//! provider's hot event, read straight from the received bytes: one pass instead of three
//! (lines, fields, JSON), and for Anthropic's text deltas no queue either, the event goes to
//! the stream's `current`. The hot paths are speed tricks only: without them the same events
//! come out (hot_shapes_test.zig, the fuzz targets). And the read-ahead of a batch
//! (`peekBuffered`): what can be decoded from bytes received already, never waiting.
//! What each hot path saves, measured: docs/internals.md, "The hot paths".
const std = @import("std");
const Stream = @import("stream.zig").Stream;
const TurnError = @import("errors.zig").TurnError;
const ev = @import("event.zig");
const sse = @import("sse.zig");
const batch = @import("batch.zig");
const transport = @import("transport/transport.zig");

/// Reads one SSE event and decodes it into queued events (maybe none).
pub fn readEvent(s: *Stream) TurnError!void {
    if (try readHotChunk(s)) return;
    try readSseEvent(s);
}

/// The provider's hot queued event (as nearly every OpenAI chunk), decoded into queued
/// events straight from the received bytes when they start with one whole (see
/// providers.zig): true when it was.
fn readHotChunk(s: *Stream) TurnError!bool {
    if (!s.decoder.hasHotQueued() or !s.parser.atEventStart()) return false;
    s.event_arena.reset();
    const len = try s.decoder.hotQueued(&s.assembly, s.event_allocator, s.body.buffered()) orelse return false;
    s.body.toss(len);
    return true;
}

/// Reads one SSE event with the SSE parser and decodes it into queued events.
fn readSseEvent(s: *Stream) TurnError!void {
    s.event_arena.reset();
    const maybe_event = s.parser.next(&s.body) catch |err| return transport.readFailure(s, err);
    const arena = s.event_allocator;
    const a = &s.assembly;
    const d = &s.detail;
    if (maybe_event) |event| return s.decoder.handle(a, arena, event, d);
    s.decoder.finish(a, d) catch |err| {
        s.dropped = true; // the body ended early: the connection went away
        return err;
    };
    if (s.assembly.queue.items.len == 0) {
        s.detail.set(s.agent.gpa, 0, "protocol_error", "the stream ended without completing the message");
        s.dropped = true;
        return error.Protocol;
    }
}

/// The provider's hot event (as nearly every Anthropic event, a text delta), decoded
/// straight from the received bytes when they start with one whole (see providers.zig),
/// into `current`: true when it was. False: not such an event (or one without text), for
/// readEvent. Only while nothing is queued.
pub inline fn readHotDelta(s: *Stream) TurnError!bool {
    if (!s.decoder.hasHotEvent() or !s.parser.atEventStart()) return false;
    const len = try s.decoder.hotEvent(&s.assembly, &s.event_arena, s.event_allocator, s.body.buffered(), &s.detail, &s.current) orelse return false;
    s.body.toss(len);
    return true;
}

/// The next event, left undelivered, when `next()` would return it at once from what was
/// already received and it continues the message being streamed (a BlockStart,
/// ContentDelta, BlockComplete or ToolDetails); null otherwise. Decodes received SSE
/// events as needed; never reads from the connection. A failure met while decoding waits
/// for the next `next()`.
pub fn peekBuffered(s: *Stream) ?ev.Event {
    if (s.state != .streaming or s.phase != .messages or !s.link.connected) return null;
    if (s.pending_failure != null or s.read_ahead_failure != null or s.batch.unread > 0) return null;
    if (s.watch.canceled.load(.acquire)) return null;
    while (true) {
        if (s.assembly.peek()) |e| return if (batch.canGiveBack(e)) e else null;
        const decoded = decodeReceived(s) catch |err| {
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
    if (try readHotDelta(s)) {
        try s.assembly.push(s.current);
        return true;
    }
    if (try readHotChunk(s)) return true;
    if (!s.parser.hasBufferedEvent(&s.body)) {
        // The body reader may hold only part of what the connection received (a chunked
        // body is decoded one chunk at a time): take more, if no wait.
        if (!transport.bodyFillsWithoutWaiting(s)) return false;
        s.body.fillMore() catch |err| return transport.readFailure(s, err);
        return true;
    }
    try readSseEvent(s);
    return true;
}
