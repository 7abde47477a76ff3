//! What the user says to a turn while it runs (docs/design/approvals-and-steering.md,
//! decision 4): a steer joins the turn at its next safe point (the end of a tool round, with
//! the round's results), a follow-up starts a new turn in the same stream once the current
//! one would end. Any thread may queue one; the stream takes them as it goes on, so nothing
//! needs waking. A steer that finds no tool round before the turn ends is taken as a
//! follow-up then.
const std = @import("std");
const Allocator = std.mem.Allocator;

pub const Source = enum(u8) { steer, follow_up };

pub const Message = struct {
    source: Source,
    /// Owned (the queue's allocator).
    text: []u8,
};

pub const PushError = error{
    OutOfMemory,
    /// The stream's turn is over (or failed, or was canceled), or it is a compaction's: there
    /// is no turn left for the message to join.
    Ended,
};

pub const Steering = struct {
    lock: std.c.pthread_mutex_t = std.c.PTHREAD_MUTEX_INITIALIZER,
    queue: std.ArrayList(Message) = .empty,
    ended: bool = false,

    /// Queues a copy of `text`.
    pub fn push(st: *Steering, gpa: Allocator, source: Source, text: []const u8) PushError!void {
        const copy = try gpa.dupe(u8, text);
        errdefer gpa.free(copy);
        _ = std.c.pthread_mutex_lock(&st.lock);
        defer _ = std.c.pthread_mutex_unlock(&st.lock);
        if (st.ended) return error.Ended;
        try st.queue.append(gpa, .{ .source = source, .text = copy });
    }

    /// Moves the queued steers, in order, to `out` (follow-ups stay queued).
    pub fn takeSteers(st: *Steering, gpa: Allocator, out: *std.ArrayList(Message)) Allocator.Error!void {
        _ = std.c.pthread_mutex_lock(&st.lock);
        defer _ = std.c.pthread_mutex_unlock(&st.lock);
        try out.ensureUnusedCapacity(gpa, st.queue.items.len);
        var kept: usize = 0;
        for (st.queue.items) |m| {
            if (m.source == .steer) {
                out.appendAssumeCapacity(m);
            } else {
                st.queue.items[kept] = m;
                kept += 1;
            }
        }
        st.queue.shrinkRetainingCapacity(kept);
    }

    /// Moves every message still queued, in order, to `out`: the user takes them back (pi's
    /// Alt-Up) before a round or a turn took them. Those already taken are not: they come
    /// as their UserMessage events.
    pub fn takeAll(st: *Steering, gpa: Allocator, out: *std.ArrayList(Message)) Allocator.Error!void {
        _ = std.c.pthread_mutex_lock(&st.lock);
        defer _ = std.c.pthread_mutex_unlock(&st.lock);
        try out.appendSlice(gpa, st.queue.items);
        st.queue.clearRetainingCapacity();
    }

    /// Whether a steer is queued (a call still waiting for a person's answer is then skipped:
    /// the user moved on).
    pub fn hasSteer(st: *Steering) bool {
        _ = std.c.pthread_mutex_lock(&st.lock);
        defer _ = std.c.pthread_mutex_unlock(&st.lock);
        for (st.queue.items) |m| if (m.source == .steer) return true;
        return false;
    }

    /// At a turn's end: the first message queued, which starts the next turn; or null, and
    /// the queue takes no more (`push` says Ended), so that nothing queued is left unread.
    pub fn nextTurnOrEnd(st: *Steering) ?Message {
        _ = std.c.pthread_mutex_lock(&st.lock);
        defer _ = std.c.pthread_mutex_unlock(&st.lock);
        if (st.queue.items.len == 0) {
            st.ended = true;
            return null;
        }
        return st.queue.orderedRemove(0);
    }

    /// The stream failed or was canceled: what is queued is dropped, and no more is taken.
    pub fn end(st: *Steering, gpa: Allocator) void {
        _ = std.c.pthread_mutex_lock(&st.lock);
        defer _ = std.c.pthread_mutex_unlock(&st.lock);
        st.ended = true;
        for (st.queue.items) |m| gpa.free(m.text);
        st.queue.clearRetainingCapacity();
    }

    /// The failed turn runs again (Stream.reopen): messages are taken again.
    pub fn reopen(st: *Steering) void {
        _ = std.c.pthread_mutex_lock(&st.lock);
        defer _ = std.c.pthread_mutex_unlock(&st.lock);
        st.ended = false;
    }

    pub fn deinit(st: *Steering, gpa: Allocator) void {
        st.end(gpa);
        st.queue.deinit(gpa);
    }
};

test "steers are taken at a safe point, follow-ups stay for the turn's end, in order" {
    const gpa = std.testing.allocator;
    var st: Steering = .{};
    defer st.deinit(gpa);
    try st.push(gpa, .follow_up, "then this");
    try st.push(gpa, .steer, "look at b");
    try st.push(gpa, .steer, "and c");
    var taken: std.ArrayList(Message) = .empty;
    defer {
        for (taken.items) |m| gpa.free(m.text);
        taken.deinit(gpa);
    }
    try st.takeSteers(gpa, &taken);
    try std.testing.expectEqual(@as(usize, 2), taken.items.len);
    try std.testing.expectEqualStrings("look at b", taken.items[0].text);
    try std.testing.expectEqualStrings("and c", taken.items[1].text);
    const next = st.nextTurnOrEnd().?;
    defer gpa.free(next.text);
    try std.testing.expectEqual(Source.follow_up, next.source);
    try std.testing.expectEqualStrings("then this", next.text);
    // Nothing left: the turn ends, and a late message is refused rather than lost.
    try std.testing.expect(st.nextTurnOrEnd() == null);
    try std.testing.expectError(error.Ended, st.push(gpa, .follow_up, "too late"));
}

test "what is still queued can be taken back, in order; the turn then ends as with nothing queued" {
    const gpa = std.testing.allocator;
    var st: Steering = .{};
    defer st.deinit(gpa);
    try st.push(gpa, .steer, "look at b");
    try st.push(gpa, .follow_up, "then this");
    var back: std.ArrayList(Message) = .empty;
    defer {
        for (back.items) |m| gpa.free(m.text);
        back.deinit(gpa);
    }
    try st.takeAll(gpa, &back);
    try std.testing.expectEqual(@as(usize, 2), back.items.len);
    try std.testing.expectEqualStrings("look at b", back.items[0].text);
    try std.testing.expectEqual(Source.follow_up, back.items[1].source);
    var taken: std.ArrayList(Message) = .empty;
    defer taken.deinit(gpa);
    try st.takeSteers(gpa, &taken);
    try std.testing.expectEqual(@as(usize, 0), taken.items.len);
    try std.testing.expect(st.nextTurnOrEnd() == null);
}

test "a stream that fails drops what is queued and takes no more" {
    const gpa = std.testing.allocator;
    var st: Steering = .{};
    defer st.deinit(gpa);
    try st.push(gpa, .steer, "x");
    st.end(gpa);
    try std.testing.expect(st.nextTurnOrEnd() == null);
    try std.testing.expectError(error.Ended, st.push(gpa, .steer, "y"));
}
