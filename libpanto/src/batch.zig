//! The events of one batch (Stream.nextBatch, panto_next_events): many events handed out by
//! one call, so that a binding whose every call into the library is costly (Python's ctypes,
//! Go's cgo) pays it once per batch. Decoding the next event reuses the buffers the previous
//! event's strings point into, so a batch copies its events' strings into one block it owns,
//! each followed by a NUL byte: C strings for C callers, and a block that a binding can split
//! at once (Python decodes a batch of deltas with one `split`).
//! Events given back unseen (Stream.unread) are kept here until they are read again.
const std = @import("std");
const Allocator = std.mem.Allocator;
const ev = @import("event.zig");

/// The most events one batch holds, whatever the caller's capacity.
pub const max_events = 1024;
/// The string block's first size, and the most it grows to for batching large events (an
/// event that does not fit ends the batch before it; the next batch starts with it).
const initial_string_bytes = 4 * 1024;
const max_string_bytes = 1024 * 1024;

pub const Batch = struct {
    /// The last batch; its strings point into `strings`.
    events: std.ArrayList(ev.Event) = .empty,
    strings: std.ArrayList(u8) = .empty,
    /// The last `unread` events were given back and are handed out again first.
    unread: usize = 0,
    /// The capacity of `strings` the next batch starts with.
    want_string_bytes: usize = initial_string_bytes,

    pub fn deinit(b: *Batch, gpa: Allocator) void {
        b.events.deinit(gpa);
        b.strings.deinit(gpa);
    }

    /// Empties the batch, keeping its memory: its events are no longer the last handed out.
    pub fn clear(b: *Batch) void {
        // Not clearRetainingCapacity: in safe builds it first fills the memory (kilobytes a
        // batch) with a marker.
        b.events.items.len = 0;
        b.strings.items.len = 0;
        b.unread = 0;
    }

    /// Room for up to `max` events and the string block, before the first event is taken.
    /// A block grown past the usual size for one large event (a long message's BlockComplete)
    /// is given back, not kept for the stream's life.
    pub fn reserve(b: *Batch, gpa: Allocator, max: usize) Allocator.Error!void {
        b.clear();
        if (b.strings.capacity > max_string_bytes) b.strings.clearAndFree(gpa);
        try b.events.ensureTotalCapacity(gpa, max);
        try b.strings.ensureTotalCapacity(gpa, b.want_string_bytes);
    }

    /// Adds the batch's first event, growing the string block when it does not fit.
    pub fn addFirst(b: *Batch, gpa: Allocator, e: ev.Event) Allocator.Error!void {
        try b.strings.ensureUnusedCapacity(gpa, stringBytes(e));
        b.events.appendAssumeCapacity(b.copied(e));
    }

    /// Whether `e` can join the batch without moving the strings already copied; when it
    /// cannot, the next batch starts with a block large enough for it and more like it.
    pub fn fits(b: *Batch, e: ev.Event) bool {
        if (b.events.items.len == b.events.capacity) return false;
        const need = stringBytes(e);
        if (need <= b.strings.capacity - b.strings.items.len) return true;
        b.want_string_bytes = @min(max_string_bytes, @max(b.want_string_bytes, b.strings.capacity + 2 * need));
        return false;
    }

    /// Adds an event that `fits`.
    pub fn add(b: *Batch, e: ev.Event) void {
        b.events.appendAssumeCapacity(b.copied(e));
    }

    /// The events given back and not read again.
    pub fn unseen(b: *const Batch) []const ev.Event {
        return b.events.items[b.events.items.len - b.unread ..];
    }

    /// The next event given back, for `Stream.next()`; when there is none, the batch is no
    /// longer the last thing handed out (a newer event is), so nothing of it can be given back.
    pub fn takeUnread(b: *Batch) ?ev.Event {
        if (b.unread == 0) {
            b.events.items.len = 0; // see clear
            return null;
        }
        const e = b.events.items[b.events.items.len - b.unread];
        b.unread -= 1;
        return e;
    }

    /// Up to `max` of the events given back, handed out again.
    pub fn takeUnreadBatch(b: *Batch, max: usize) []const ev.Event {
        const start = b.events.items.len - b.unread;
        const n = @min(max, b.unread);
        b.unread -= n;
        return b.events.items[start..][0..n];
    }

    /// `e` with its strings copied into the block (which has room for them).
    fn copied(b: *Batch, e: ev.Event) ev.Event {
        return mapStrings(e, b, copyString);
    }

    fn copyString(b: *Batch, s: []const u8) []const u8 {
        const start = b.strings.items.len;
        b.strings.appendSliceAssumeCapacity(s);
        b.strings.appendAssumeCapacity(0);
        return b.strings.items[start..][0..s.len];
    }
};

/// Whether the stream may take `e` back (Stream.unread): the events that continue a message
/// change nothing but the message being assembled; the others end or change the turn.
pub fn canGiveBack(e: ev.Event) bool {
    return switch (e) {
        .block_start, .content_delta, .block_complete, .tool_details => true,
        else => false,
    };
}

/// The bytes the strings of an event take in the block, their NULs included.
pub fn stringBytes(e: ev.Event) usize {
    var total: usize = 0;
    _ = mapStrings(e, &total, addLength);
    return total;
}

fn addLength(total: *usize, s: []const u8) []const u8 {
    total.* += s.len + 1;
    return s;
}

/// `e` with `f(ctx, s)` in place of each of its strings.
fn mapStrings(e: ev.Event, ctx: anytype, comptime f: fn (@TypeOf(ctx), []const u8) []const u8) ev.Event {
    switch (e) {
        inline else => |payload, tag| {
            var p = payload;
            inline for (std.meta.fields(@TypeOf(p))) |field| {
                if (field.type == []const u8) @field(p, field.name) = f(ctx, @field(p, field.name));
            }
            return @unionInit(ev.Event, @tagName(tag), p);
        },
    }
}

test "a batch copies its events' strings into one block and gives events back in order" {
    const gpa = std.testing.allocator;
    var b: Batch = .{};
    defer b.deinit(gpa);
    try b.reserve(gpa, 3);
    var source = "hello world".*;
    try b.addFirst(gpa, .{ .message_start = .{ .id = source[0..5], .model = source[6..] } });
    const delta: ev.Event = .{ .content_delta = .{ .index = 0, .kind = .text, .text = source[0..4] } };
    try std.testing.expect(b.fits(delta));
    b.add(delta);
    source = "XXXXXXXXXXX".*; // the originals change: the batch holds copies
    try std.testing.expectEqualStrings("hello", b.events.items[0].message_start.id);
    try std.testing.expectEqualStrings("world", b.events.items[0].message_start.model);
    try std.testing.expectEqualStrings("hell", b.events.items[1].content_delta.text);
    // (the MessageStart's request id is "": a NUL alone)
    try std.testing.expectEqualStrings("hello\x00world\x00\x00hell\x00", b.strings.items);
    try std.testing.expectEqual(@as(usize, 18), stringBytes(b.events.items[0]) + stringBytes(b.events.items[1]));
    // Each string is followed by a NUL, also an empty one.
    const copied = b.copied(.{ .tool_result = .{ .id = "", .name = "n", .content = "c", .is_error = false } });
    try std.testing.expectEqual(@as(u8, 0), copied.tool_result.id.ptr[0]);
    try std.testing.expectEqual(@as(u8, 0), copied.tool_result.content.ptr[1]);

    b.unread = 1;
    try std.testing.expectEqual(@as(usize, 1), b.unseen().len);
    try std.testing.expectEqualStrings("hell", b.takeUnread().?.content_delta.text);
    try std.testing.expectEqual(@as(usize, 0), b.unseen().len);
    try std.testing.expectEqual(null, b.takeUnread()); // a newer event comes: the batch is over
    try std.testing.expectEqual(@as(usize, 0), b.events.items.len);
}

test "an event whose strings do not fit ends the batch and grows the next one" {
    const gpa = std.testing.allocator;
    var b: Batch = .{};
    defer b.deinit(gpa);
    try b.reserve(gpa, 4);
    const big = [_]u8{'x'} ** (initial_string_bytes * 2);
    // The first event always gets in, however large.
    try b.addFirst(gpa, .{ .block_complete = .{ .index = 0, .kind = .text, .text = &big } });
    const next: ev.Event = .{ .block_complete = .{ .index = 1, .kind = .text, .text = &big } };
    try std.testing.expect(!b.fits(next));
    try std.testing.expect(b.want_string_bytes >= 3 * big.len);
    try b.reserve(gpa, 4);
    try b.addFirst(gpa, next);
    try std.testing.expect(b.fits(next));
    // A block grown for one huge event is not kept.
    const huge = try gpa.alloc(u8, max_string_bytes + 1);
    defer gpa.free(huge);
    @memset(huge, 'y');
    try b.reserve(gpa, 4);
    try b.addFirst(gpa, .{ .block_complete = .{ .index = 0, .kind = .text, .text = huge } });
    try std.testing.expect(b.strings.capacity > max_string_bytes);
    try b.reserve(gpa, 4);
    try std.testing.expect(b.strings.capacity <= max_string_bytes);
}
