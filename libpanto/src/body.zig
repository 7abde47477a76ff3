//! The response body as a stream reads it: the HTTP body reader, and the buffer it reads into.
//!
//! Each response's body is read into a small buffer (8 KiB): a stream from a remote API, whose
//! reads bring a few hundred bytes each, needs no more, and a stream that waits, on the network
//! or on its user, costs little. It is made with the response's body reader (`buffer`) and
//! freed with it (`release`): a stream waiting for its answer (10,000 of them, issue 28), or
//! between its messages, or over, holds none. (Inside the stream, it was resident from the
//! stream's making on: a safe build fills a new struct's undefined bytes with 0xAA.)
//!
//! Speed trick (memory for fewer system calls), kept to this file: when one read brings half
//! the small buffer, the socket held more than the buffer could take, so the server sends
//! faster than we decode (a local server, a replay), and the body moves to a large buffer
//! (256 KiB). Measured with bench/clients/panto_c.c, one stream of 1,000,000 deltas from
//! bench/sse_server.py on 2 cores (median of 7): Anthropic 8.8 M events/s and 0.076 µs of CPU
//! an event, against 7.2 M and 0.091 µs reading it all in the small buffer; OpenAI 2.1 M and
//! 0.200 µs against 1.6 M and 0.232 µs (64 KiB growing to 256 KiB, as before: 9.0 M and
//! 0.076 µs, 1.9 M and 0.205 µs). 100 streams of 1,000 deltas at once: 0.20 µs an event,
//! against 0.39 µs before (each stream then got a 256 KiB block from malloc, by mmap).
//! The large buffer goes back to the process's `Pool` as soon as it is not needed:
//!   - after a read that found the socket (nearly) empty: the body slowed to the network's
//!     pace, and what is held moves back to the small buffer;
//!   - when the response is done with (`release`, at the message's end: a stream waiting
//!     between messages, and the connection it parks for the agent's next request, hold none);
//!   - and the process holds at most `max_large_buffers` at once: 1,000 streams reading fast
//!     bodies would hold 256 MB, for reads no faster, as they share a few cores.
//!
//! It has the three methods the SSE parser pulls from (`buffered`, `toss`, `fillMore`), and
//! `capacity`. Bytes from `buffered()` stay valid until the next `fillMore()`, as with any
//! `std.Io.Reader` (which may move them to the buffer's start).
const std = @import("std");
const Allocator = std.mem.Allocator;

pub const small_len = 8 * 1024;
pub const large_len = 256 * 1024;

/// A read into the small buffer that brings this much moves the body to a large one.
const grow_at = small_len / 2;
/// A read into the large buffer that brings less than this, though it had room for more,
/// moves the body back to the small one (below `grow_at`, so that a body read at a steady
/// pace does not move back and forth).
const shrink_below = small_len / 4;

/// How many large buffers a pool holds at most. 16 of them (4 MiB) keep the speed trick for
/// as many fast streams as a machine has cores to decode them on.
pub const max_large_buffers = 16;

/// The large buffers of the process's streams, kept once made: a large buffer from the OS
/// (mmap, then a page fault a page, then munmap, whose TLB shootdown stops every thread of
/// the process) per fast message doubled the CPU of 100 concurrent streams of 200 deltas
/// (1.18 -> 2.18 µs an event). Not malloc's either, which keeps what is freed in blocks of
/// this size where it was freed (glibc raises its mmap threshold at the first such free):
/// 1,000 streams of 10,000 deltas held 128 MB after their turns that way, against 32 MB.
/// So the process holds at most `max_large_buffers` × 256 KiB for all its streams.
pub const Pool = struct {
    /// Where the buffers come from.
    pages: Allocator = std.heap.page_allocator,
    /// Buffers made so far.
    made: std.atomic.Value(u32) = .init(0),
    /// Buffers no body holds, one a slot.
    idle: [max_large_buffers]std.atomic.Value(?[*]u8) = @splat(.init(null)),

    /// An idle buffer, or a new one while fewer than `max_large_buffers` exist; null
    /// otherwise, or without memory.
    fn take(p: *Pool) ?[]u8 {
        for (&p.idle) |*slot| if (slot.swap(null, .acquire)) |ptr| return ptr[0..large_len];
        if (p.made.fetchAdd(1, .monotonic) >= max_large_buffers) {
            _ = p.made.fetchSub(1, .monotonic);
            return null;
        }
        return p.pages.alloc(u8, large_len) catch {
            _ = p.made.fetchSub(1, .monotonic);
            return null;
        };
    }

    fn give(p: *Pool, buffer: []u8) void {
        // Fewer buffers are idle than exist (this one is not): some slot is free, or will be
        // once a concurrent give or take settles.
        while (true) {
            for (&p.idle) |*slot| if (slot.cmpxchgStrong(null, buffer.ptr, .release, .monotonic) == null) return;
        }
    }

    fn idleCount(p: *Pool) usize {
        var n: usize = 0;
        for (&p.idle) |*slot| n += @intFromBool(slot.load(.acquire) != null);
        return n;
    }

    /// Frees the idle buffers (tests: the process's pool lives as long as the process).
    pub fn deinit(p: *Pool) void {
        for (&p.idle) |*slot| if (slot.swap(null, .acquire)) |ptr| p.pages.free(@as([]u8, ptr[0..large_len]));
    }
};

var process_pool: Pool = .{};

/// What `Body.reader` reads between responses: nothing (its buffers are gone).
var no_body: std.Io.Reader = .fixed(&.{});

pub const Body = struct {
    /// Where the small buffer comes from.
    gpa: Allocator,
    /// Where the large buffer comes from, and goes back to.
    pool: *Pool = &process_pool,
    /// The current response's body reader, set (over `buffer()`) once its head is read.
    reader: *std.Io.Reader = &no_body,
    /// The small buffer (`small_len` bytes), owned while a response's body is read; else
    /// empty.
    small: []u8 = &.{},
    /// The large buffer, owned; empty unless the body arrives fast.
    large: []u8 = &.{},

    /// The buffer a new response's body reader gets: the small one, made unless it is still
    /// there (an error answer's body read after a head).
    pub fn buffer(b: *Body) Allocator.Error![]u8 {
        b.giveLarge();
        if (b.small.len == 0) b.small = try b.gpa.alloc(u8, small_len);
        return b.small;
    }

    /// Frees the buffers, once the body reader is done with them (its response closed, or
    /// parked with no buffer): a stream between responses holds none.
    pub fn release(b: *Body) void {
        b.reader = &no_body;
        b.giveLarge();
        if (b.small.len == 0) return;
        b.gpa.free(b.small);
        b.small = &.{};
    }

    fn giveLarge(b: *Body) void {
        if (b.large.len == 0) return;
        b.pool.give(b.large);
        b.large = &.{};
    }

    pub fn deinit(b: *Body) void {
        b.release();
    }

    // These two are std.Io.Reader's, written out: LLVM does not inline those, and they are
    // called for nearly every event.
    pub inline fn buffered(b: *Body) []u8 {
        const r = b.reader;
        return r.buffer[r.seek..r.end];
    }

    pub inline fn toss(b: *Body, n: usize) void {
        const r = b.reader;
        std.debug.assert(r.seek + n <= r.end);
        r.seek += n;
    }

    pub fn capacity(b: *const Body) usize {
        return b.reader.buffer.len;
    }

    /// Reads more (one read), then moves the body to the large buffer or back to the small
    /// one as that read says (see the top of this file). Without memory for the large
    /// buffer, reading goes on in the small one.
    pub fn fillMore(b: *Body) std.Io.Reader.Error!void {
        const r = b.reader;
        const before = r.bufferedLen();
        try r.fillMore();
        const got = r.bufferedLen() - before;
        if (r.buffer.ptr == b.small.ptr) {
            if (got >= grow_at) b.grow();
        } else if (b.large.len > 0 and r.buffer.ptr == b.large.ptr) {
            if (got < shrink_below and r.end < r.buffer.len) b.shrink();
        }
    }

    fn grow(b: *Body) void {
        const large = b.pool.take() orelse return;
        b.large = large;
        b.moveTo(large);
    }

    /// Back to the small buffer, when what is held fits in it.
    fn shrink(b: *Body) void {
        if (b.reader.bufferedLen() > small_len) return;
        b.moveTo(b.small);
        b.giveLarge();
    }

    fn moveTo(b: *Body, to: []u8) void {
        const r = b.reader;
        const held = r.buffered();
        @memcpy(to[0..held.len], held);
        r.buffer = to;
        r.seek = 0;
        r.end = held.len;
    }
};

/// A body that arrives `step` bytes per read, like a network at some speed (also the fuzz
/// targets' body, libpanto/fuzz/turn.zig). Set `interface.buffer` before reading.
pub const StepReader = struct {
    interface: std.Io.Reader,
    rest: []const u8,
    step: usize,

    pub fn init(bytes: []const u8, step: usize) StepReader {
        return .{
            .interface = .{ .buffer = &.{}, .seek = 0, .end = 0, .vtable = &.{ .stream = stream, .readVec = readVec } },
            .rest = bytes,
            .step = step,
        };
    }

    fn readVec(r: *std.Io.Reader, _: [][]u8) std.Io.Reader.Error!usize {
        const t: *StepReader = @fieldParentPtr("interface", r);
        if (t.rest.len == 0) return error.EndOfStream;
        const n = @min(t.step, t.rest.len, r.buffer.len - r.end);
        @memcpy(r.buffer[r.end..][0..n], t.rest[0..n]);
        r.end += n;
        t.rest = t.rest[n..];
        return 0;
    }

    fn stream(r: *std.Io.Reader, w: *std.Io.Writer, limit: std.Io.Limit) std.Io.Reader.StreamError!usize {
        const t: *StepReader = @fieldParentPtr("interface", r);
        if (t.rest.len == 0) return error.EndOfStream;
        const dest = limit.slice(try w.writableSliceGreedy(1));
        const n = @min(t.step, t.rest.len, dest.len);
        @memcpy(dest[0..n], t.rest[0..n]);
        w.advance(n);
        t.rest = t.rest[n..];
        return n;
    }
};

/// What a Body's buffer was while it read a body: its largest capacity, and its capacity
/// after the last read.
const Seen = struct { largest: usize, last: usize };

/// Reads all of `bytes` through a Body that takes a little less than all it holds each time
/// (so that held bytes move with each rebase, growth or shrink), and checks that it read them
/// all, in order, and gave its large buffer back to `pool`. They arrive `fast` bytes per read,
/// then from `slow_from` on `slow` per read.
fn readThrough(pool: *Pool, bytes: []const u8, fast: usize, slow_from: usize, slow: usize) !Seen {
    var source: StepReader = .init(bytes, fast);
    var b: Body = .{ .gpa = std.testing.allocator, .pool = pool };
    source.interface.buffer = try b.buffer();
    b.reader = &source.interface;
    var got: std.ArrayList(u8) = .empty;
    defer got.deinit(std.testing.allocator);
    var seen: Seen = .{ .largest = 0, .last = 0 };
    while (true) {
        if (bytes.len - source.rest.len >= slow_from) source.step = slow;
        b.fillMore() catch |err| switch (err) {
            error.EndOfStream => break,
            else => |e| return e,
        };
        seen.last = b.capacity();
        seen.largest = @max(seen.largest, seen.last);
        try std.testing.expectEqual(b.large.len > 0, seen.last == large_len);
        const held = b.buffered();
        const take = held.len - held.len / 8;
        try got.appendSlice(std.testing.allocator, held[0..take]);
        b.toss(take);
    }
    try got.appendSlice(std.testing.allocator, b.buffered());
    try std.testing.expectEqualSlices(u8, bytes, got.items);
    b.deinit();
    try std.testing.expectEqual(pool.made.load(.monotonic), pool.idleCount()); // all given back
    return seen;
}

fn testBytes() ![]u8 {
    const bytes = try std.testing.allocator.alloc(u8, 1 << 20);
    for (bytes, 0..) |*c, i| c.* = @truncate(i *% 2654435761 >> 7);
    return bytes;
}

test "the small buffer is made with a response's body reader and freed with it" {
    var b: Body = .{ .gpa = std.testing.allocator };
    defer b.deinit();
    try std.testing.expectEqual(0, b.small.len); // a stream waiting for its answer holds none
    try std.testing.expectEqual(0, b.buffered().len);
    const first = try b.buffer();
    try std.testing.expectEqual(small_len, first.len);
    try std.testing.expectEqual(first.ptr, (try b.buffer()).ptr); // an error body after the head
    b.release(); // (the testing allocator fails the test if it is not freed)
    try std.testing.expectEqual(0, b.small.len);
    try std.testing.expectEqual(0, b.buffered().len); // between responses: nothing to read
    var failing: std.testing.FailingAllocator = .init(std.testing.allocator, .{ .fail_index = 0 });
    b.gpa = failing.allocator();
    try std.testing.expectError(error.OutOfMemory, b.buffer());
    try std.testing.expectEqual(0, b.small.len);
}

test "a body that arrives in large reads grows the buffer, keeping what it held" {
    const bytes = try testBytes();
    defer std.testing.allocator.free(bytes);
    var pool: Pool = .{ .pages = std.testing.allocator };
    defer pool.deinit();
    for ([_]usize{ small_len / 2, 1 << 20 }) |step| {
        const seen = try readThrough(&pool, bytes, step, bytes.len, step);
        try std.testing.expectEqual(large_len, seen.largest);
    }
    try std.testing.expectEqual(1, pool.made.load(.monotonic)); // made once, then reused
}

test "a body that arrives in small reads keeps the small buffer" {
    const bytes = try testBytes();
    defer std.testing.allocator.free(bytes);
    var pool: Pool = .{ .pages = std.testing.allocator };
    defer pool.deinit();
    for ([_]usize{ 100, small_len / 2 - 1 }) |step| {
        const seen = try readThrough(&pool, bytes, step, bytes.len, step);
        try std.testing.expectEqual(small_len, seen.largest);
    }
    try std.testing.expectEqual(0, pool.made.load(.monotonic));
}

test "a fast body that slows down goes back to the small buffer, keeping what it held" {
    const bytes = try testBytes();
    defer std.testing.allocator.free(bytes);
    var pool: Pool = .{ .pages = std.testing.allocator };
    defer pool.deinit();
    const seen = try readThrough(&pool, bytes, 1 << 20, bytes.len / 2, 100);
    try std.testing.expectEqual(large_len, seen.largest);
    try std.testing.expectEqual(small_len, seen.last);
}

test "at most max_large_buffers bodies of a pool hold a large buffer" {
    const bytes = try testBytes();
    defer std.testing.allocator.free(bytes);
    var pool: Pool = .{ .pages = std.testing.allocator };
    defer pool.deinit();
    var sources: [max_large_buffers + 1]StepReader = undefined;
    var bodies: [max_large_buffers + 1]Body = undefined;
    defer for (&bodies) |*b| b.deinit();
    for (&sources, &bodies) |*source, *b| {
        source.* = .init(bytes, 1 << 20);
        b.* = .{ .gpa = std.testing.allocator, .pool = &pool };
        source.interface.buffer = try b.buffer();
        b.reader = &source.interface;
        try b.fillMore();
    }
    for (bodies[0..max_large_buffers]) |*b| try std.testing.expectEqual(large_len, b.capacity());
    const last = &bodies[max_large_buffers];
    try std.testing.expectEqual(small_len, last.capacity()); // read on in the small buffer
    // One given back: the next fast read takes it.
    bodies[0].reader.buffer = &.{};
    bodies[0].release();
    last.toss(last.buffered().len);
    try last.fillMore();
    try std.testing.expectEqual(large_len, last.capacity());
    try std.testing.expectEqual(max_large_buffers, pool.made.load(.monotonic));
}

test "without memory to grow, the body is read in the small buffer" {
    const bytes = try testBytes();
    defer std.testing.allocator.free(bytes);
    var failing: std.testing.FailingAllocator = .init(std.testing.allocator, .{ .fail_index = 0 });
    var pool: Pool = .{ .pages = failing.allocator() };
    defer pool.deinit();
    const seen = try readThrough(&pool, bytes, 1 << 20, bytes.len, 1 << 20);
    try std.testing.expectEqual(small_len, seen.largest);
    try std.testing.expect(failing.has_induced_failure);
    try std.testing.expectEqual(0, pool.made.load(.monotonic));
}
