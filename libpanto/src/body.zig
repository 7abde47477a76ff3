//! The response body as a stream reads it: the HTTP body reader, and the buffer it reads into.
//!
//! The buffer starts at 64 KiB, inside the stream, and grows once, to 256 KiB on the heap,
//! when one read brings half of it: the socket held more than the buffer could take, so the
//! server sends faster than we decode (a local server, a replay). Reads of 256 KiB spend
//! about a third less time in the kernel than reads of 64 KiB on such a stream (a quarter of
//! the calls, and fewer window updates sent back to the server). A stream from a remote API, whose reads
//! bring a few hundred bytes each, never grows and keeps 64 KiB.
//!
//! It has the three methods the SSE parser pulls from (`buffered`, `toss`, `fillMore`), and
//! `capacity`. Bytes from `buffered()` stay valid until the next `fillMore()`, as with any
//! `std.Io.Reader` (which may move them to the buffer's start).
const std = @import("std");
const Allocator = std.mem.Allocator;

pub const small_len = 64 * 1024;
pub const large_len = 256 * 1024;

pub const Body = struct {
    /// Where the grown buffer comes from.
    gpa: Allocator,
    /// The current response's body reader, set (over `buffer()`) once its head is read.
    reader: *std.Io.Reader = undefined,
    small: [small_len]u8 = undefined,
    /// The grown buffer, owned; empty until the body is read fast enough to need it.
    large: []u8 = &.{},

    /// The buffer a new response's body reader gets: the grown one once the stream has one,
    /// as a stream that was fast stays fast (its next request goes to the same server).
    pub fn buffer(b: *Body) []u8 {
        return if (b.large.len > 0) b.large else &b.small;
    }

    pub fn deinit(b: *Body) void {
        b.gpa.free(b.large);
        b.large = &.{};
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

    /// Reads more (one read), growing the buffer after it if that read brought half the
    /// small buffer. Without memory to grow, reading goes on in the small one.
    pub fn fillMore(b: *Body) std.Io.Reader.Error!void {
        const r = b.reader;
        const before = r.bufferedLen();
        try r.fillMore();
        if (r.bufferedLen() - before >= small_len / 2 and b.large.len == 0 and r.buffer.ptr == &b.small) {
            b.grow();
        }
    }

    fn grow(b: *Body) void {
        const large = b.gpa.alloc(u8, large_len) catch return;
        const r = b.reader;
        const held = r.buffered();
        @memcpy(large[0..held.len], held);
        r.buffer = large;
        r.seek = 0;
        r.end = held.len;
        b.large = large;
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

/// Reads all of `bytes`, arriving `step` at a time, through a Body that takes a little less
/// than all it holds each time (so that held bytes move with each rebase or growth), and
/// checks that it read them all, in order. Returns whether the buffer grew.
fn readThrough(gpa: Allocator, bytes: []const u8, step: usize) !bool {
    var source: StepReader = .init(bytes, step);
    var b: Body = .{ .gpa = gpa };
    defer b.deinit();
    source.interface.buffer = b.buffer();
    b.reader = &source.interface;
    var got: std.ArrayList(u8) = .empty;
    defer got.deinit(std.testing.allocator);
    while (true) {
        b.fillMore() catch |err| switch (err) {
            error.EndOfStream => break,
            else => |e| return e,
        };
        const held = b.buffered();
        const take = held.len - held.len / 8;
        try got.appendSlice(std.testing.allocator, held[0..take]);
        b.toss(take);
    }
    try got.appendSlice(std.testing.allocator, b.buffered());
    try std.testing.expectEqualSlices(u8, bytes, got.items);
    try std.testing.expectEqual(b.large.len > 0, b.capacity() == large_len);
    return b.large.len > 0;
}

fn testBytes() ![]u8 {
    const bytes = try std.testing.allocator.alloc(u8, 1 << 20);
    for (bytes, 0..) |*c, i| c.* = @truncate(i *% 2654435761 >> 7);
    return bytes;
}

test "a body that arrives in large reads grows the buffer once, keeping what it held" {
    const bytes = try testBytes();
    defer std.testing.allocator.free(bytes);
    try std.testing.expect(try readThrough(std.testing.allocator, bytes, small_len / 2));
    try std.testing.expect(try readThrough(std.testing.allocator, bytes, 1 << 20));
}

test "a body that arrives in small reads keeps the small buffer" {
    const bytes = try testBytes();
    defer std.testing.allocator.free(bytes);
    try std.testing.expect(!try readThrough(std.testing.allocator, bytes, 100));
    try std.testing.expect(!try readThrough(std.testing.allocator, bytes, small_len / 2 - 1));
}

test "without memory to grow, the body is read in the small buffer" {
    const bytes = try testBytes();
    defer std.testing.allocator.free(bytes);
    var failing: std.testing.FailingAllocator = .init(std.testing.allocator, .{ .fail_index = 0 });
    try std.testing.expect(!try readThrough(failing.allocator(), bytes, 1 << 20));
    try std.testing.expect(failing.has_induced_failure);
}
