//! The memory of one SSE event's decoding (escaped strings, std.json's answers), freed as a
//! whole before the next event. Most events allocate nothing at all: this arena remembers
//! whether it was used, so that resetting it costs nothing then.
const std = @import("std");
const Allocator = std.mem.Allocator;
const Alignment = std.mem.Alignment;

pub const EventArena = struct {
    arena: std.heap.ArenaAllocator,
    used: bool = false,

    pub fn init(gpa: Allocator) EventArena {
        return .{ .arena = .init(gpa) };
    }

    pub fn deinit(e: *EventArena) void {
        e.arena.deinit();
    }

    /// Frees what the last event took, keeping the capacity.
    pub fn reset(e: *EventArena) void {
        if (!e.used) return;
        _ = e.arena.reset(.retain_capacity);
        e.used = false;
    }

    pub fn allocator(e: *EventArena) Allocator {
        return .{ .ptr = e, .vtable = &.{ .alloc = alloc, .resize = resize, .remap = remap, .free = free } };
    }

    fn alloc(ctx: *anyopaque, len: usize, alignment: Alignment, ret_addr: usize) ?[*]u8 {
        const e: *EventArena = @ptrCast(@alignCast(ctx));
        e.used = true;
        return e.arena.allocator().rawAlloc(len, alignment, ret_addr);
    }

    fn resize(ctx: *anyopaque, memory: []u8, alignment: Alignment, new_len: usize, ret_addr: usize) bool {
        const e: *EventArena = @ptrCast(@alignCast(ctx));
        return e.arena.allocator().rawResize(memory, alignment, new_len, ret_addr);
    }

    fn remap(ctx: *anyopaque, memory: []u8, alignment: Alignment, new_len: usize, ret_addr: usize) ?[*]u8 {
        const e: *EventArena = @ptrCast(@alignCast(ctx));
        e.used = true;
        return e.arena.allocator().rawRemap(memory, alignment, new_len, ret_addr);
    }

    fn free(ctx: *anyopaque, memory: []u8, alignment: Alignment, ret_addr: usize) void {
        const e: *EventArena = @ptrCast(@alignCast(ctx));
        e.arena.allocator().rawFree(memory, alignment, ret_addr);
    }
};

test "an arena reset only after use, and its memory reused" {
    var e = EventArena.init(std.testing.allocator);
    defer e.deinit();
    e.reset(); // nothing to do
    const a = e.allocator();
    const first = try a.alloc(u8, 100);
    try std.testing.expect(e.used);
    e.reset();
    try std.testing.expect(!e.used);
    const second = try a.alloc(u8, 100);
    try std.testing.expectEqual(first.ptr, second.ptr); // the same memory again
}
