//! Gives back to the OS the stack pages a TLS handshake dirtied and left dead.
//!
//! std's TLS handshake has huge stack frames (from the disassembly of a ReleaseSafe build:
//! tls.Client.init 86 KB, CertificatePublicKey.verifySignature 104 KB, KeyShare.init 49 KB,
//! ML-KEM decapsulation 35 KB), and Zig probes every page of a frame over 4 KB, so all of it
//! becomes resident, and stays resident in the thread's stack for the thread's life: every
//! thread that ever opened a TLS connection (C threads, Go's cgo threads, Python threads)
//! holds it, a stream waiting on its thread included. So after a new TLS connection was
//! opened on this thread, the pages below the current frame, dead by the ABI, are handed back
//! with madvise(MADV_DONTNEED): the next touch maps a zero page.
//!
//! Safe by construction: only this thread's own stack as pthread_getattr_np reports it, above
//! its guard, and only when the stack pointer is inside it (not on another stack a coroutine
//! library switched to); never the `margin` just below the current frame (the red zone,
//! signal handlers, the madvise call itself); nothing when the bounds cannot be read; never
//! the main thread, whose reported low end lies below its mapped stack, in a gap another
//! thread's mmap may fill at any moment (one stack, not one per stream). Linux only; a no-op
//! elsewhere. On a stepped stream's fiber (poll_io.zig) the stack is the fiber's, whose
//! bounds are exact: its dead pages are given back the same way, on any thread.
//!
//! Measured (ReleaseSafe, 2 cores): 1,000 concurrent streams over TLS (bench streams1000,
//! https), KB of peak RSS a stream: C threads 297 -> 125, Python threads 476 -> 308, Go 146 ->
//! 138 (its goroutines handshake on a few threads); a handshake on a fresh thread left 33
//! pages resident below the caller, now 2 (stack_trim_test.zig). Cost: the bounds are read
//! once a thread, then one madvise a new TLS connection: ~1 us on a clean stack, 7-14 us
//! after a handshake's ~300 KB, and the next handshake faults those pages in again (tens of
//! us), against ~3 ms of CPU a handshake. Plain HTTP needs none: a connect with a name lookup
//! (resolve.zig, /etc/hosts or DNS) leaves 1-3 pages below the caller.
const std = @import("std");
const builtin = @import("builtin");
const poll_io = @import("poll_io.zig");

/// What is kept below the current frame: the red zone (128 bytes), a signal handler's frame
/// (a few KB, more with AVX-512 state), and the pages the next calls will touch anyway.
pub const margin = 16 * 1024;

/// The margin on a stepped stream's fiber: one page. Below the stack pointer is dead whatever
/// the margin (the margin spares re-faults, it is not needed for safety), and a fiber trims at
/// every park (poll_io.zig), where the pages kept are what a waiting stream holds: 12 KB a
/// stream less than `margin` (issue 28's 64 KB a waiting stream).
pub const fiber_margin = 4 * 1024;

const enabled = builtin.os.tag == .linux and builtin.link_libc;

/// The part of this thread's stack that may be trimmed: from above its guard up to its top.
const Range = struct { low: usize, high: usize };

const Known = enum(u8) { unread, usable, unusable };

/// Read once a thread (glibc's pthread_getattr_np asks the kernel for the thread's CPU set,
/// and allocates for it).
threadlocal var known: Known = .unread;
threadlocal var range: Range = .{ .low = 0, .high = 0 };

extern "c" fn pthread_getattr_np(thread: std.c.pthread_t, attr: *std.c.pthread_attr_t) c_int;
extern "c" fn pthread_attr_getstack(attr: *const std.c.pthread_attr_t, addr: *?*anyopaque, size: *usize) c_int;
extern "c" fn pthread_attr_getguardsize(attr: *const std.c.pthread_attr_t, size: *usize) c_int;

fn readRange() ?Range {
    const linux = std.os.linux;
    if (linux.gettid() == linux.getpid()) return null; // the main thread: see the file's comment
    var attr: std.c.pthread_attr_t = undefined;
    if (pthread_getattr_np(std.c.pthread_self(), &attr) != 0) return null;
    defer _ = std.c.pthread_attr_destroy(&attr);
    var addr: ?*anyopaque = null;
    var size: usize = 0;
    var guard: usize = 0;
    if (pthread_attr_getstack(&attr, &addr, &size) != 0) return null;
    if (pthread_attr_getguardsize(&attr, &guard) != 0) return null;
    const low = @intFromPtr(addr orelse return null);
    // glibc's low end is already above the guard; skipping it again costs one page at most,
    // and covers a libc that counts the guard in the stack.
    const above_guard = std.math.add(usize, low, guard) catch return null;
    const high = std.math.add(usize, low, size) catch return null;
    if (above_guard >= high) return null;
    return .{ .low = above_guard, .high = high };
}

fn thisThreadsRange() ?Range {
    switch (known) {
        .usable => return range,
        .unusable => return null,
        .unread => {
            const r = readRange();
            known = if (r == null) .unusable else .usable;
            if (r) |got| range = got;
            return r;
        },
    }
}

/// The stack `here` is on, and what to keep below the caller there: a stepped stream's
/// fiber's (its bounds are known exactly, whatever the thread, the main one included), else
/// this thread's own.
fn rangeOf(here: usize) ?struct { Range, usize } {
    if (poll_io.current()) |d| {
        const b = d.fiber.stackBounds();
        if (here > b.low and here <= b.high) return .{ .{ .low = b.low, .high = b.high }, fiber_margin };
    }
    return .{ thisThreadsRange() orelse return null, margin };
}

/// The pages of the stack between its low end and the margin below `here`, or null when there
/// is nothing that may be touched.
fn deadPages(here: usize) ?[]align(std.heap.page_size_min) u8 {
    const r, const keep = rangeOf(here) orelse return null;
    if (here <= r.low or here > r.high) return null; // on another stack
    const page = std.heap.pageSize();
    if (here - r.low <= keep + page) return null;
    const start = std.mem.alignForward(usize, r.low, page);
    const end = std.mem.alignBackward(usize, here - keep, page);
    if (end <= start) return null;
    const ptr: [*]align(std.heap.page_size_min) u8 = @ptrFromInt(start);
    return ptr[0 .. end - start];
}

/// Gives back the dead stack pages below the caller: call it after a new TLS connection was
/// opened (or failed to open) on this thread, from a frame above the handshake's.
pub noinline fn giveBack() void {
    if (!enabled) return;
    var here_marker: u8 = 0;
    std.mem.doNotOptimizeAway(&here_marker);
    const pages = deadPages(@intFromPtr(&here_marker)) orelse return;
    _ = std.c.madvise(pages.ptr, pages.len, std.c.MADV.DONTNEED);
}

/// How many of the dead pages below the caller are resident (mincore), for the tests and the
/// measurements; null where that cannot be told.
pub noinline fn residentBelowHere() ?usize {
    if (!enabled) return null;
    var here_marker: u8 = 0;
    std.mem.doNotOptimizeAway(&here_marker);
    const pages = deadPages(@intFromPtr(&here_marker)) orelse return null;
    const page = std.heap.pageSize();
    var vec: [256]u8 = undefined;
    var resident: usize = 0;
    var at: usize = 0;
    while (at < pages.len) {
        const len = @min(pages.len - at, vec.len * page);
        if (std.c.mincore(@ptrCast(@alignCast(pages.ptr + at)), len, &vec) != 0) return null;
        for (vec[0 .. len / page]) |v| resident += v & 1;
        at += len;
    }
    return resident;
}
