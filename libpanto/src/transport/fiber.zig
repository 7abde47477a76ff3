//! A fiber: a function running on a stack of its own, which can switch back to whoever
//! resumed it and be resumed later where it stopped. The stream driven without blocking
//! (poll_io.zig) runs its unchanged turn code on one, so that a wait deep inside std.http or
//! the TLS client becomes "switch back to the caller" instead of a blocking syscall.
//!
//! The context switch is std's (`std.Io.fiber`, the one std.Io.Uring and Dispatch use); the
//! stack is an mmap of `stack_size` with a PROT_NONE guard page below it (a frame that runs
//! over faults instead of writing into other memory), MAP_NORESERVE: only the pages the turn
//! touches become resident.
const std = @import("std");
const builtin = @import("builtin");
const ctx = std.Io.fiber;

/// x86_64 only for now: on aarch64 (the Go packaging test under qemu-aarch64) a stepped turn
/// panicked in the fiber ("switch on corrupt value"); other architectures step once a test
/// runs them. Where this is false, step() is refused and every binding reads by blocking.
pub const supported = ctx.supported and builtin.os.tag == .linux and builtin.cpu.arch == .x86_64;

/// A TLS handshake's frames reach ~300 KB (stack_trim.zig); the rest of a turn a few KB.
pub const default_stack_size = 512 * 1024;

pub const Fiber = struct {
    /// The whole mapping, guard page first.
    mapping: []align(std.heap.page_size_min) u8,
    /// Where the fiber goes on when resumed, and where it returns to when it yields.
    context: ctx.Context,
    caller: ctx.Context = undefined,
    entry: *const fn (arg: *anyopaque) void,
    arg: *anyopaque,
    /// The entry function returned: never resume again.
    finished: bool = false,

    pub const CreateError = error{OutOfMemory};

    /// A fiber that will run `entry(arg)` on its own stack at the first `resumeFiber`.
    /// `f` must not move afterwards (the stack points at it).
    pub fn init(f: *Fiber, stack_size: usize, entry: *const fn (arg: *anyopaque) void, arg: *anyopaque) CreateError!void {
        const page = std.heap.pageSize();
        const size = std.mem.alignForward(usize, stack_size, page) + page;
        const mapping = std.posix.mmap(null, size, .{ .READ = true, .WRITE = true }, .{ .TYPE = .PRIVATE, .ANONYMOUS = true, .NORESERVE = true }, -1, 0) catch return error.OutOfMemory;
        if (std.c.mprotect(@ptrCast(mapping.ptr), page, .{}) != 0) {
            std.posix.munmap(mapping);
            return error.OutOfMemory;
        }
        // The top of the stack holds a pointer to the fiber, which `start` takes as its
        // argument; below it the stack grows down, aligned as a call would leave it.
        const top = std.mem.alignBackward(usize, @intFromPtr(mapping.ptr) + mapping.len - @sizeOf(usize), 16);
        const slot: **Fiber = @ptrFromInt(top);
        slot.* = f;
        f.* = .{
            .mapping = mapping,
            .entry = entry,
            .arg = arg,
            .context = switch (builtin.cpu.arch) {
                .x86_64 => .{ .rsp = top - 8, .rbp = 0, .rip = @intFromPtr(&start) },
                .aarch64, .riscv64 => .{ .sp = top, .fp = 0, .pc = @intFromPtr(&start) },
                else => @compileError("no fibers on this architecture"),
            },
        };
    }

    pub fn deinit(f: *Fiber) void {
        std.posix.munmap(f.mapping);
        f.* = undefined;
    }

    /// The stack's usable bounds (above the guard page).
    pub fn stackBounds(f: *const Fiber) struct { low: usize, high: usize } {
        return .{ .low = @intFromPtr(f.mapping.ptr) + std.heap.pageSize(), .high = @intFromPtr(f.mapping.ptr) + f.mapping.len };
    }

    /// Runs the fiber until it yields or its entry function returns.
    pub fn resumeFiber(f: *Fiber) void {
        std.debug.assert(!f.finished);
        const s: ctx.Switch = .{ .old = &f.caller, .new = &f.context };
        _ = ctx.contextSwitch(&s);
    }

    /// From inside the fiber: back to the caller of `resumeFiber`, which returns.
    pub fn yield(f: *Fiber) void {
        const s: ctx.Switch = .{ .old = &f.context, .new = &f.caller };
        _ = ctx.contextSwitch(&s);
    }

    /// The first instruction a fiber runs: its stack pointer is just below the slot holding
    /// the fiber; pass that slot's address to `run` (as Uring's AsyncClosure.entry does).
    fn start() callconv(.naked) void {
        switch (builtin.cpu.arch) {
            .x86_64 => asm volatile (
                \\ leaq 8(%%rsp), %%rdi
                \\ jmp %[run:P]
                :
                : [run] "X" (&run),
            ),
            .aarch64 => asm volatile (
                \\ mov x0, sp
                \\ b %[run]
                :
                : [run] "X" (&run),
            ),
            .riscv64 => asm volatile (
                \\ mv a0, sp
                \\ tail %[run]@plt
                :
                : [run] "X" (&run),
            ),
            else => @compileError("no fibers on this architecture"),
        }
    }

    fn run(slot: *const *Fiber) callconv(.c) noreturn {
        const f = slot.*;
        f.entry(f.arg);
        f.finished = true;
        f.yield();
        unreachable; // a finished fiber is never resumed
    }
};

test "a fiber yields, is resumed where it stopped, and finishes" {
    if (!supported) return error.SkipZigTest;
    const Counter = struct {
        fiber: Fiber = undefined,
        steps: u32 = 0,
        fn body(arg: *anyopaque) void {
            const c: *@This() = @ptrCast(@alignCast(arg));
            var local: [3]u64 = .{ 1, 2, 3 }; // lives on the fiber's stack across yields
            for (0..3) |i| {
                c.steps += @intCast(local[i]);
                local[i] = 0;
                c.fiber.yield();
            }
        }
    };
    var c: Counter = .{};
    try c.fiber.init(64 * 1024, Counter.body, &c);
    defer c.fiber.deinit();
    c.fiber.resumeFiber();
    try std.testing.expectEqual(@as(u32, 1), c.steps);
    c.fiber.resumeFiber();
    try std.testing.expectEqual(@as(u32, 3), c.steps);
    c.fiber.resumeFiber();
    try std.testing.expectEqual(@as(u32, 6), c.steps);
    try std.testing.expect(!c.fiber.finished);
    c.fiber.resumeFiber();
    try std.testing.expect(c.fiber.finished);
}
