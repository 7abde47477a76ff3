//! Driving a stream without blocking (issue 28, docs/design/native-async.md): `step()` gives
//! the next event, the turn's end, its error, or `would_block` with what to wait for (a
//! descriptor, a direction, a deadline). The turn's code is the one `next()` runs, unchanged,
//! on a fiber of the stream's own; its waits switch back here instead of blocking
//! (transport/poll_io.zig). A stream is stepped or next()'ed, not both: the first call decides,
//! the other way fails with error.Usage (`checkNext`, `start`).
const std = @import("std");
const stream_mod = @import("stream.zig");
const Stream = stream_mod.Stream;
const NextError = stream_mod.NextError;
const ev = @import("event.zig");
const poll_io = @import("transport/poll_io.zig");
const fiber = @import("transport/fiber.zig");
const watchdog = @import("transport/watchdog.zig");

pub const Wait = poll_io.Wait;
pub const Direction = poll_io.Direction;

pub const Step = union(enum) {
    /// Valid until the next call on the stream (as `nextRef`'s).
    event: *const ev.Event,
    /// The turn is over.
    done,
    /// Nothing can be done before the wait is over: wait, then step again. A deadline that
    /// passes fails the next step with the turn's Timeout.
    would_block: Wait,
};

pub const StepError = NextError || error{ OutOfMemory, Unsupported };

/// `next()` on a stepped stream: from its own fiber (the turn's code), or once the turn is
/// over (its end and its sticky error read no socket: finalMessage works), else Usage: a
/// `next()` while the fiber is parked would run the turn on a second stack over the same
/// state.
pub fn checkNext(s: *Stream) error{Usage}!void {
    if (s.stepper) |st| if (poll_io.current() == &st.driver) return;
    if (s.state == .done or s.state == .failed) return;
    return error.Usage;
}

/// The fiber of a stepped stream and the outcome of its last `nextRef`.
pub const Stepper = struct {
    driver: poll_io.Driver,
    stream: *Stream,
    outcome: NextError!?*const ev.Event = null,

    fn body(arg: *anyopaque) void {
        const st: *Stepper = @ptrCast(@alignCast(arg));
        while (true) {
            st.outcome = st.stream.nextRef();
            st.driver.fiber.yield();
        }
    }
};

/// The next step of the turn (see the file's comment). Not from two threads at once, as
/// `next()`.
pub fn step(s: *Stream) StepError!Step {
    const st = s.stepper orelse if (s.stepped and over(s)) return end(s) else try start(s);
    if (st.driver.run()) return .{ .would_block = st.driver.wait };
    const outcome = st.outcome;
    if (over(s)) finish(s);
    const e = try outcome orelse return .done;
    return .{ .event = e };
}

fn over(s: *const Stream) bool {
    return s.state == .done or s.state == .failed;
}

/// The end of a turn whose fiber is gone (`finish`): its sticky end, read on the caller's
/// stack (it reads no socket).
fn end(s: *Stream) StepError!Step {
    const e = try s.nextRef() orelse return .done;
    return .{ .event = e };
}

/// The turn is over: its fiber goes back to the pool now, not at the stream's release, so
/// that a finished stream kept by its caller (a loop that frees its streams when all are
/// over) holds no stack pages: the turn's end touched some below the fiber's top. A step after
/// that reads the end without a fiber (`end`); a reopened turn gets a new one.
fn finish(s: *Stream) void {
    // No cancel may write to the wake descriptor once closed (its number can come back).
    if (s.stepper.?.driver.wake_fd >= 0) watchdog.setWake(&s.watch, -1);
    release(s);
}

pub const BatchStep = union(enum) {
    /// As `Stream.nextBatch`'s: valid until the next call on the stream; empty when the turn
    /// is over.
    events: []const ev.Event,
    would_block: Wait,
};

/// `Stream.nextBatch` without blocking: the first event as `step` gives it (or the wait
/// before it), then the events that continue the message and were received already, read on
/// the caller's stack (the fiber is between two events: nothing of the turn runs on it).
pub fn stepBatch(s: *Stream, max: usize) StepError!BatchStep {
    const b = &s.batch;
    if (b.unread > 0) {
        if (!s.watch.canceled.load(.acquire)) return .{ .events = b.takeUnreadBatch(@max(max, 1)) };
        // Canceled meanwhile: the fiber's next() ends the turn, keeping the message without them.
        switch (try step(s)) {
            .would_block => |w| return .{ .would_block = w },
            .event, .done => {},
        }
        b.clear();
        return .{ .events = b.events.items };
    }
    const limit = try s.startBatch(max);
    const first = switch (try step(s)) {
        .event => |e| e,
        .done => return .{ .events = b.events.items },
        .would_block => |w| return .{ .would_block = w },
    };
    return .{ .events = try s.fillBatch(first, limit) };
}

fn start(s: *Stream) StepError!*Stepper {
    // Read by next() already: its turn may be half-way through a read on the caller's stack.
    if (s.read_by_next) return error.Usage;
    if (!fiber.supported) return error.Unsupported;
    const gpa = s.agent.gpa;
    const st = try gpa.create(Stepper);
    errdefer gpa.destroy(st);
    st.* = .{ .driver = .{ .fiber = undefined, .watch = &s.watch }, .stream = s };
    try st.driver.fiber.init(fiber.default_stack_size, Stepper.body, st);
    // Its deadlines are the caller's to keep, from the waits it is given: no watchdog thread.
    s.watch.polled = true;
    s.stepper = st;
    s.stepped = true;
    return st;
}

/// Before a stepped stream closes: a fiber parked in the middle of the turn (in std.http, in
/// a connect, in a retry's wait) is resumed canceled, so that it unwinds through its own
/// error paths and defers (which release what they hold) before the stream's memory goes.
pub fn unwind(s: *Stream) void {
    const st = s.stepper orelse return;
    if (st.driver.parked) {
        s.cancel();
        // A canceled wait returns at once; the turn ends Canceled without parking again.
        while (st.driver.run()) {}
    }
}

/// Frees the fiber (after `unwind`, at the stream's release).
pub fn release(s: *Stream) void {
    const st = s.stepper orelse return;
    st.driver.deinit();
    st.driver.fiber.deinit();
    s.agent.gpa.destroy(st);
    s.stepper = null;
}
