//! A fiber: a function running on a stack of its own, which can switch back to whoever
//! resumed it and be resumed later where it stopped. The stream driven without blocking
//! (poll_io.zig) runs its unchanged turn code on one, so that a wait deep inside std.http or
//! the TLS client becomes "switch back to the caller" instead of a blocking syscall.
//!
//! The context switch is std's (`std.Io.fiber`, the one std.Io.Uring and Dispatch use), but on
//! aarch64 our own copy of it (`switchAarch64`: std's names registers LLVM keeps across it);
//! the stack is an mmap of `stack_size` with a PROT_NONE guard page below it (a frame that runs
//! over faults instead of writing into other memory), MAP_NORESERVE: only the pages the turn
//! touches become resident. Stacks of the default size come from a per-process pool
//! (`pool`): a fiber's stack goes back to it trimmed when the fiber is freed, so that a turn
//! after a turn costs no mmap, no munmap and no fresh page faults for its top pages.
const std = @import("std");
const builtin = @import("builtin");
const ctx = std.Io.fiber;

/// x86_64 and aarch64 (riscv64 steps once a test runs it there). Where this is false, step()
/// is refused and every binding reads by blocking.
pub const supported = builtin.os.tag == .linux and switch (builtin.cpu.arch) {
    .x86_64, .aarch64 => true,
    else => false,
};

/// A TLS handshake's frames reach ~300 KB (stack_trim.zig); the rest of a turn a few KB. A
/// Debug build's frames are larger: its handshake overran 512 KB (the guard page faulted in
/// ML-KEM's key generation, stack_trim_test.zig's stepped handshake), hence 1 MB there.
pub const default_stack_size: usize = if (builtin.mode == .Debug) 1024 * 1024 else 512 * 1024;

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
        const mapping = pool.take(size) orelse try mapStack(size);
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

    /// Gives the stack back to the pool (trimmed), or to the OS when the pool is full. The
    /// fiber must be finished or never to be resumed again.
    pub fn deinit(f: *Fiber) void {
        pool.put(f.mapping);
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
        _ = contextSwitch(&s);
    }

    /// From inside the fiber: back to the caller of `resumeFiber`, which returns.
    pub fn yield(f: *Fiber) void {
        const s: ctx.Switch = .{ .old = &f.context, .new = &f.caller };
        _ = contextSwitch(&s);
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

/// A stack mapping of `size` bytes, its first page a PROT_NONE guard.
fn mapStack(size: usize) Fiber.CreateError![]align(std.heap.page_size_min) u8 {
    const mapping = std.posix.mmap(null, size, .{ .READ = true, .WRITE = true }, .{ .TYPE = .PRIVATE, .ANONYMOUS = true, .NORESERVE = true }, -1, 0) catch return error.OutOfMemory;
    if (std.c.mprotect(@ptrCast(mapping.ptr), std.heap.pageSize(), .{}) != 0) {
        std.posix.munmap(mapping);
        return error.OutOfMemory;
    }
    return mapping;
}

/// The process's free stacks (of the default size: the only one the library uses; other
/// sizes are mapped and unmapped each time). Bounded, so that a burst of 10,000 streams does
/// not keep 10,000 stacks once it is over; what is kept is trimmed to its top `kept_top`
/// bytes (the pages a plain-HTTP turn touches, which the next turn would fault in again),
/// so the pool holds at most `bound * kept_top` resident bytes, not the ~300 KB a TLS
/// handshake dirties below them.
pub const StackPool = struct {
    /// Free stacks kept at most (`bound * kept_top`: 1 MB resident at most).
    pub const bound = 64;
    /// What a stack keeps resident at its top when it goes back to the pool.
    pub const kept_top = 16 * 1024;
    mutex: std.c.pthread_mutex_t = std.c.PTHREAD_MUTEX_INITIALIZER,
    free: [bound][*]align(std.heap.page_size_min) u8 = undefined,
    count: usize = 0,

    fn pooledLen() usize {
        return std.mem.alignForward(usize, default_stack_size, std.heap.pageSize()) + std.heap.pageSize();
    }

    /// A kept stack of `size` bytes (its guard page included), or null: map one.
    fn take(p: *StackPool, size: usize) ?[]align(std.heap.page_size_min) u8 {
        if (size != pooledLen()) return null;
        _ = std.c.pthread_mutex_lock(&p.mutex);
        defer _ = std.c.pthread_mutex_unlock(&p.mutex);
        if (p.count == 0) return null;
        p.count -= 1;
        return p.free[p.count][0..size];
    }

    /// Keeps `mapping` for the next fiber, trimmed, or unmaps it (another size, pool full).
    fn put(p: *StackPool, mapping: []align(std.heap.page_size_min) u8) void {
        if (mapping.len == pooledLen()) {
            trim(mapping);
            _ = std.c.pthread_mutex_lock(&p.mutex);
            const kept = p.count < bound;
            if (kept) {
                p.free[p.count] = mapping.ptr;
                p.count += 1;
            }
            _ = std.c.pthread_mutex_unlock(&p.mutex);
            if (kept) return;
        }
        std.posix.munmap(mapping);
    }

    /// Free stacks held now (for the tests).
    pub fn held(p: *StackPool) usize {
        _ = std.c.pthread_mutex_lock(&p.mutex);
        defer _ = std.c.pthread_mutex_unlock(&p.mutex);
        return p.count;
    }

    /// Whether `ptr` is one of the free stacks (for the tests).
    pub fn holds(p: *StackPool, ptr: [*]const u8) bool {
        _ = std.c.pthread_mutex_lock(&p.mutex);
        defer _ = std.c.pthread_mutex_unlock(&p.mutex);
        for (p.free[0..p.count]) |kept| if (@intFromPtr(kept) == @intFromPtr(ptr)) return true;
        return false;
    }
};

pub var pool: StackPool = .{};

/// MADV_DONTNEED of a stack's pages below its kept top: the next touch maps a zero page. The
/// fiber is over: nothing on the stack is live.
fn trim(mapping: []align(std.heap.page_size_min) u8) void {
    const page = std.heap.pageSize();
    const low = page; // above the guard
    const high = mapping.len -| std.mem.alignForward(usize, StackPool.kept_top, page);
    if (high <= low) return;
    _ = std.c.madvise(@ptrCast(@alignCast(mapping.ptr + low)), high - low, std.c.MADV.DONTNEED);
}

/// How many pages of `f`'s stack are resident (mincore), for the tests and the measurements;
/// null where that cannot be told.
pub fn residentPages(f: *const Fiber) ?usize {
    const page = std.heap.pageSize();
    const b = f.stackBounds();
    var vec: [256]u8 = undefined;
    var resident: usize = 0;
    var at = b.low;
    while (at < b.high) {
        const len = @min(b.high - at, vec.len * page);
        if (std.c.mincore(@ptrFromInt(at), len, &vec) != 0) return null;
        for (vec[0 .. len / page]) |v| resident += v & 1;
        at += len;
    }
    return resident;
}

/// Saves the running context in `s.old` and goes on from `s.new`: std's switch on x86_64; on
/// aarch64 std's instructions with two more registers said to be clobbered, x18 and x30 (see
/// `switchAarch64`).
inline fn contextSwitch(s: *const ctx.Switch) *const ctx.Switch {
    return switch (builtin.cpu.arch) {
        .aarch64 => switchAarch64(s),
        else => ctx.contextSwitch(s),
    };
}

/// std.Io.fiber.contextSwitch's aarch64 code, with the clobbers fixed. std's list says `.x30`,
/// which LLVM does not take for the link register (it needs `.lr`), so values the compiler
/// kept in x30 across the switch came back as the other side's (stepped turns crashed: "switch
/// on corrupt value", a SIGSEGV in the Go tests); and it leaves out x18, a temporary on Linux.
/// One hazard no clobber can say: LLVM reads the thread pointer (TPIDR_EL0) once a function
/// and keeps a threadlocal's address across the switch, so code on a fiber must not read a
/// threadlocal after a yield in the function that yielded: a Go goroutine resumes its fiber
/// on another thread (poll_io.current is noinline for this).
inline fn switchAarch64(s: *const ctx.Switch) *const ctx.Switch {
    return asm volatile (
        \\ ldp x0, x2, [x1]
        \\ ldr x3, [x2, #16]
        \\ mov x4, sp
        \\ stp x4, fp, [x0]
        \\ adr x5, 0f
        \\ ldp x4, fp, [x2]
        \\ str x5, [x0, #16]
        \\ mov sp, x4
        \\ br x3
        \\0:
        : [received_message] "={x1}" (-> *const ctx.Switch),
        : [message_to_send] "{x1}" (s),
        : .{
          .x0 = true,
          .x1 = true,
          .x2 = true,
          .x3 = true,
          .x4 = true,
          .x5 = true,
          .x6 = true,
          .x7 = true,
          .x8 = true,
          .x9 = true,
          .x10 = true,
          .x11 = true,
          .x12 = true,
          .x13 = true,
          .x14 = true,
          .x15 = true,
          .x16 = true,
          .x17 = true,
          .x18 = true, // a temporary on Linux, which LLVM allocates
          .x19 = true,
          .x20 = true,
          .x21 = true,
          .x22 = true,
          .x23 = true,
          .x24 = true,
          .x25 = true,
          .x26 = true,
          .x27 = true,
          .x28 = true,
          .lr = true, // LLVM ignores `.x30` and kept values in x30 across the switch
          .z0 = true,
          .z1 = true,
          .z2 = true,
          .z3 = true,
          .z4 = true,
          .z5 = true,
          .z6 = true,
          .z7 = true,
          .z8 = true,
          .z9 = true,
          .z10 = true,
          .z11 = true,
          .z12 = true,
          .z13 = true,
          .z14 = true,
          .z15 = true,
          .z16 = true,
          .z17 = true,
          .z18 = true,
          .z19 = true,
          .z20 = true,
          .z21 = true,
          .z22 = true,
          .z23 = true,
          .z24 = true,
          .z25 = true,
          .z26 = true,
          .z27 = true,
          .z28 = true,
          .z29 = true,
          .z30 = true,
          .z31 = true,
          .p0 = true,
          .p1 = true,
          .p2 = true,
          .p3 = true,
          .p4 = true,
          .p5 = true,
          .p6 = true,
          .p7 = true,
          .p8 = true,
          .p9 = true,
          .p10 = true,
          .p11 = true,
          .p12 = true,
          .p13 = true,
          .p14 = true,
          .p15 = true,
          .fpcr = true,
          .fpsr = true,
          .ffr = true,
          .memory = true,
        });
}

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

test "a freed fiber's stack goes back to the pool trimmed, and the next fiber takes it" {
    if (!supported) return error.SkipZigTest;
    const Toucher = struct {
        fiber: Fiber = undefined,
        fn body(arg: *anyopaque) void {
            const t: *@This() = @ptrCast(@alignCast(arg));
            var deep: [200 * 1024]u8 = undefined; // as a TLS handshake's frames would
            @memset(&deep, 0xaa);
            std.mem.doNotOptimizeAway(&deep);
            t.fiber.yield();
        }
    };
    var first: Toucher = .{};
    try first.fiber.init(default_stack_size, Toucher.body, &first);
    first.fiber.resumeFiber();
    const touched = residentPages(&first.fiber).?;
    try std.testing.expect(touched * std.heap.pageSize() >= 200 * 1024);
    const stack = first.fiber.mapping.ptr;
    first.fiber.deinit();
    try std.testing.expect(pool.holds(stack));

    var second: Toucher = .{};
    try second.fiber.init(default_stack_size, Toucher.body, &second);
    defer second.fiber.deinit();
    try std.testing.expectEqual(stack, second.fiber.mapping.ptr);
    try std.testing.expect(!pool.holds(stack));
    // Only the kept top stayed resident; the rest was given back.
    try std.testing.expect(residentPages(&second.fiber).? * std.heap.pageSize() <= StackPool.kept_top);
}

test "the stack pool keeps at most its bound; the stacks over it are unmapped" {
    if (!supported) return error.SkipZigTest;
    const Idle = struct {
        fn body(_: *anyopaque) void {}
    };
    const n = StackPool.bound + 3;
    var fibers: [n]Fiber = undefined;
    var dummy: u8 = 0;
    for (&fibers) |*f| try f.init(default_stack_size, Idle.body, &dummy);
    for (&fibers) |*f| f.deinit();
    try std.testing.expectEqual(@as(usize, StackPool.bound), pool.held());
}
