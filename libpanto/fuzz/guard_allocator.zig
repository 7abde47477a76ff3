//! The allocator a fuzz target runs the library with: it counts what is live, so that a leak
//! (anything live once an input is done) and a memory blow-up (more live than `limit`) stop
//! the run like a crash, with the input that caused them. libFuzzer's own -malloc_limit_mb
//! needs a sanitizer's malloc hooks, which a Zig build does not have. Thread-safe: the native
//! tools of a round run on threads.
const std = @import("std");
const Allocator = std.mem.Allocator;
const Alignment = std.mem.Alignment;

/// No input of a fuzz run (at most a few MB) needs this much: the library buffers at most one
/// SSE event (32 MiB) and one file of the read tool (64 MiB) at a time.
pub const default_limit: usize = 256 * 1024 * 1024;

pub const GuardAllocator = struct {
    backing: Allocator,
    limit: usize = default_limit,
    live_bytes: usize = 0,
    live_count: usize = 0,

    pub fn init(backing: Allocator) GuardAllocator {
        return .{ .backing = backing };
    }

    pub fn allocator(g: *GuardAllocator) Allocator {
        return .{ .ptr = g, .vtable = &.{ .alloc = alloc, .resize = resize, .remap = remap, .free = free } };
    }

    /// Panics unless everything allocated was freed.
    pub fn expectNoLeaks(g: *const GuardAllocator) void {
        const count = g.liveCount();
        if (count != 0) std.debug.panic("leak: {d} allocations ({d} bytes) still live after the input", .{ count, @atomicLoad(usize, &g.live_bytes, .seq_cst) });
    }

    pub fn liveCount(g: *const GuardAllocator) usize {
        return @atomicLoad(usize, &g.live_count, .seq_cst);
    }

    fn grow(g: *GuardAllocator, n: usize) void {
        const before = @atomicRmw(usize, &g.live_bytes, .Add, n, .seq_cst);
        if (before + n > g.limit) std.debug.panic("memory blow-up: {d} bytes live (limit {d})", .{ before + n, g.limit });
    }

    fn shrink(g: *GuardAllocator, n: usize) void {
        _ = @atomicRmw(usize, &g.live_bytes, .Sub, n, .seq_cst);
    }

    fn alloc(ctx: *anyopaque, len: usize, alignment: Alignment, ret_addr: usize) ?[*]u8 {
        const g: *GuardAllocator = @ptrCast(@alignCast(ctx));
        g.grow(len);
        const p = g.backing.rawAlloc(len, alignment, ret_addr) orelse {
            g.shrink(len);
            return null;
        };
        _ = @atomicRmw(usize, &g.live_count, .Add, 1, .seq_cst);
        return p;
    }

    fn resize(ctx: *anyopaque, memory: []u8, alignment: Alignment, new_len: usize, ret_addr: usize) bool {
        const g: *GuardAllocator = @ptrCast(@alignCast(ctx));
        if (new_len > memory.len) g.grow(new_len - memory.len);
        if (!g.backing.rawResize(memory, alignment, new_len, ret_addr)) {
            if (new_len > memory.len) g.shrink(new_len - memory.len);
            return false;
        }
        if (new_len < memory.len) g.shrink(memory.len - new_len);
        return true;
    }

    fn remap(ctx: *anyopaque, memory: []u8, alignment: Alignment, new_len: usize, ret_addr: usize) ?[*]u8 {
        const g: *GuardAllocator = @ptrCast(@alignCast(ctx));
        if (new_len > memory.len) g.grow(new_len - memory.len);
        const p = g.backing.rawRemap(memory, alignment, new_len, ret_addr) orelse {
            if (new_len > memory.len) g.shrink(new_len - memory.len);
            return null;
        };
        if (new_len < memory.len) g.shrink(memory.len - new_len);
        return p;
    }

    fn free(ctx: *anyopaque, memory: []u8, alignment: Alignment, ret_addr: usize) void {
        const g: *GuardAllocator = @ptrCast(@alignCast(ctx));
        g.backing.rawFree(memory, alignment, ret_addr);
        g.shrink(memory.len);
        _ = @atomicRmw(usize, &g.live_count, .Sub, 1, .seq_cst);
    }
};

test "the guard counts what is live, through every way of resizing" {
    var g: GuardAllocator = .init(std.testing.allocator);
    const a = g.allocator();
    var list: std.ArrayList(u8) = .empty;
    try list.appendNTimes(a, 'x', 100);
    try list.appendNTimes(a, 'y', 10_000); // grows: resize or remap
    const other = try a.alloc(u8, 7);
    try std.testing.expectEqual(@as(usize, 2), g.liveCount());
    try std.testing.expectEqual(list.capacity + 7, g.live_bytes);
    list.shrinkAndFree(a, 5);
    try std.testing.expectEqual(@as(usize, 5 + 7), g.live_bytes);
    list.deinit(a);
    a.free(other);
    try std.testing.expectEqual(@as(usize, 0), g.liveCount());
    try std.testing.expectEqual(@as(usize, 0), g.live_bytes);
}
