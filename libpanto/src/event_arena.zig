//! The memory of one SSE event's decoding (escaped strings, std.json's answers), freed as a
//! whole before the next event. Most events allocate nothing at all, and most others a few
//! bytes (an escaped text delta): those come from a small buffer of its own, by bumping an
//! index; the rest from an arena, reset only when it was used. The small buffer is made at
//! the first allocation (the bump's bounds check fails on the empty one, so the hot path
//! checks nothing more): a stream that waits for its answer does not hold it.
const std = @import("std");
const Allocator = std.mem.Allocator;
const Alignment = std.mem.Alignment;

pub const EventArena = struct {
    arena: std.heap.ArenaAllocator,
    used: bool = false,
    /// `small_len` bytes once an event allocated; empty before.
    small: []align(16) u8 = &.{},
    small_end: usize = 0,

    const small_len = 4096;

    pub fn init(gpa: Allocator) EventArena {
        return .{ .arena = .init(gpa) };
    }

    pub fn deinit(e: *EventArena) void {
        if (e.small.len > 0) e.arena.child_allocator.free(e.small);
        e.arena.deinit();
    }

    /// Frees what the last event took, keeping the capacity.
    pub fn reset(e: *EventArena) void {
        e.small_end = 0;
        if (!e.used) return;
        _ = e.arena.reset(.retain_capacity);
        e.used = false;
    }

    pub fn allocator(e: *EventArena) Allocator {
        return .{ .ptr = e, .vtable = &.{ .alloc = alloc, .resize = resize, .remap = remap, .free = free } };
    }

    fn alloc(ctx: *anyopaque, len: usize, alignment: Alignment, ret_addr: usize) ?[*]u8 {
        const e: *EventArena = @ptrCast(@alignCast(ctx));
        const base = @intFromPtr(e.small.ptr);
        const start = alignment.forward(base + e.small_end) - base;
        if (start <= e.small.len and len <= e.small.len - start) {
            e.small_end = start + len;
            return e.small[start..].ptr;
        }
        if (e.small.len == 0 and len <= small_len / 2 and alignment.compare(.lte, .@"16")) {
            // The first allocation: make the small buffer (its start is aligned for any
            // `alignment` a decoder asks), unless memory is short.
            if (e.arena.child_allocator.alignedAlloc(u8, .@"16", small_len)) |small| {
                e.small = small;
                e.small_end = len;
                return small.ptr;
            } else |_| {}
        }
        e.used = true;
        return e.arena.allocator().rawAlloc(len, alignment, ret_addr);
    }

    fn isSmall(e: *EventArena, memory: []u8) bool {
        return @intFromPtr(memory.ptr) >= @intFromPtr(e.small.ptr) and @intFromPtr(memory.ptr) < @intFromPtr(e.small.ptr) + e.small.len;
    }

    fn resize(ctx: *anyopaque, memory: []u8, alignment: Alignment, new_len: usize, ret_addr: usize) bool {
        const e: *EventArena = @ptrCast(@alignCast(ctx));
        if (e.isSmall(memory)) {
            // In place: shrinking, or growing the last allocation within the buffer.
            if (new_len <= memory.len) return true;
            const start = @intFromPtr(memory.ptr) - @intFromPtr(e.small.ptr);
            if (start + memory.len != e.small_end or new_len > e.small.len - start) return false;
            e.small_end = start + new_len;
            return true;
        }
        return e.arena.allocator().rawResize(memory, alignment, new_len, ret_addr);
    }

    fn remap(ctx: *anyopaque, memory: []u8, alignment: Alignment, new_len: usize, ret_addr: usize) ?[*]u8 {
        if (resize(ctx, memory, alignment, new_len, ret_addr)) return memory.ptr;
        const e: *EventArena = @ptrCast(@alignCast(ctx));
        if (e.isSmall(memory)) return null; // the caller allocates anew and copies
        e.used = true;
        return e.arena.allocator().rawRemap(memory, alignment, new_len, ret_addr);
    }

    fn free(ctx: *anyopaque, memory: []u8, alignment: Alignment, ret_addr: usize) void {
        const e: *EventArena = @ptrCast(@alignCast(ctx));
        if (e.isSmall(memory)) return; // freed with the rest at the reset
        e.arena.allocator().rawFree(memory, alignment, ret_addr);
    }
};

test "small allocations come from the buffer, large ones from the arena, both reused" {
    var e = EventArena.init(std.testing.allocator);
    defer e.deinit();
    e.reset(); // nothing to do
    const a = e.allocator();
    const small = try a.alloc(u8, 100);
    try std.testing.expect(e.isSmall(small) and !e.used);
    const aligned = try a.alloc(u64, 3);
    try std.testing.expect(e.isSmall(std.mem.sliceAsBytes(aligned)));
    try std.testing.expect(@intFromPtr(aligned.ptr) % @alignOf(u64) == 0);
    const large = try a.alloc(u8, 10_000);
    try std.testing.expect(!e.isSmall(large) and e.used);
    @memset(large, 1);
    e.reset();
    try std.testing.expect(!e.used and e.small_end == 0);
    try std.testing.expectEqual(small.ptr, (try a.alloc(u8, 100)).ptr); // the same memory again
    // A list that outgrows the buffer moves to the arena, its content kept.
    var list: std.ArrayList(u8) = .empty;
    for (0..10_000) |i| try list.append(a, @truncate(i));
    for (list.items, 0..) |b, i| try std.testing.expectEqual(@as(u8, @truncate(i)), b);
    try std.testing.expect(e.used);
}
