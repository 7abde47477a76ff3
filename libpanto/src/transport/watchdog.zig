//! Ends blocked network reads from outside: a stream's deadline passing (timeouts) or another
//! thread canceling. One process-wide thread sleeps until the earliest armed deadline (waking
//! now and then to sample the progress of streams with an idle limit) and then shuts the
//! stream's socket down, which makes any read blocked on it return at once, wherever
//! inside std.http it is. Cancellation shuts the socket down the same way, under the same lock,
//! so a socket is never shut down after its stream closed it.
const std = @import("std");
const c = std.c;

pub const Reason = enum(u8) { none = 0, timeout = 1, canceled = 2 };

/// A stream's registration. Lives inside the stream.
pub const Watch = struct {
    /// The socket to shut down, or -1 while the stream has no connection.
    fd: c.fd_t = -1,
    /// CLOCK_MONOTONIC nanoseconds; 0 when no hard deadline is armed.
    deadline_ns: u64 = 0,
    /// With `idle_ns` > 0, the socket is also shut down `idle_ns` after the last progress.
    idle_ns: u64 = 0,
    /// Events delivered so far. The stream bumps it on every event (reading no clock: that
    /// would cost more than the rest of a small event); the watchdog thread samples it.
    progress_count: std.atomic.Value(u64) = .init(0),
    /// Under the lock: the count the watchdog thread last saw, and when it first saw it.
    /// The last progress was at or before `seen_at_ns`, so the idle deadline it gives is
    /// never early; and, sampled at least every `idle_ns / 8`, late by at most that.
    seen_count: u64 = 0,
    seen_at_ns: u64 = 0,
    /// Why the socket was shut down, if it was.
    fired: std.atomic.Value(Reason) = .init(.none),
    canceled: std.atomic.Value(bool) = .init(false),
    /// A stream driven without blocking (poll_io.zig) keeps its own deadlines: its watch is
    /// never listed with the watchdog thread (cancel still shuts its socket down).
    polled: bool = false,
    /// A polled stream's eventfd (poll_io.zig), which its loop waits on when there is no
    /// socket to wait on (a retry's delay): a cancel writes to it. -1: none.
    wake_fd: c.fd_t = -1,
    next: ?*Watch = null,
    prev: ?*Watch = null,
    listed: bool = false,
};

var mutex: c.pthread_mutex_t = c.PTHREAD_MUTEX_INITIALIZER;
var cond: c.pthread_cond_t = .{};
var head: ?*Watch = null;
var thread_started = false;

pub fn nowNs() u64 {
    var ts: c.timespec = undefined;
    _ = c.clock_gettime(.MONOTONIC, &ts);
    return @as(u64, @intCast(ts.sec)) * std.time.ns_per_s + @as(u64, @intCast(ts.nsec));
}

/// Sets the socket of a stream's connection (or -1 when it closes it: call this before
/// closing the socket).
pub fn setSocket(w: *Watch, fd: c.fd_t) void {
    lock();
    defer unlock();
    w.fd = fd;
    if (fd >= 0 and w.canceled.load(.acquire)) shutdownLocked(w, .canceled);
}

/// Registers the socket a connection is being opened on (or a name lookup's UDP socket: shut
/// down, it wakes a poll() for replies too), unless the stream already has one. Returns
/// whether it was registered.
pub fn claimSocket(w: *Watch, fd: c.fd_t) bool {
    lock();
    defer unlock();
    if (w.fd >= 0) return false;
    w.fd = fd;
    if (w.canceled.load(.acquire)) shutdownLocked(w, .canceled);
    return true;
}

/// Forgets `fd` if it is the stream's socket: call it before closing any socket that may
/// have been registered, so that the watchdog never shuts down a reused descriptor.
pub fn releaseSocket(w: *Watch, fd: c.fd_t) void {
    lock();
    defer unlock();
    if (w.fd == fd) w.fd = -1;
}

/// Records that a deadline passed, for a wait the stream bounded itself (a TCP connect).
pub fn expire(w: *Watch) void {
    _ = w.fired.cmpxchgStrong(.none, .timeout, .acq_rel, .acquire);
}

/// Marks progress: the idle deadline moves on. Lock-free, cheap enough for every event.
pub fn progress(w: *Watch) void {
    // Only the stream's own thread writes the count: a load and a store, no locked add.
    w.progress_count.store(w.progress_count.load(.monotonic) +% 1, .monotonic);
}

/// Arms (or moves) the hard deadline and the idle limit; both 0 disarms. Starts the watchdog
/// thread on first use.
pub fn arm(w: *Watch, deadline_ns: u64, idle_ns: u64) void {
    lock();
    defer unlock();
    w.deadline_ns = deadline_ns;
    w.idle_ns = idle_ns;
    if (idle_ns > 0) {
        w.seen_count = w.progress_count.load(.monotonic);
        w.seen_at_ns = nowNs();
    }
    if ((deadline_ns == 0 and idle_ns == 0) or w.polled) {
        unlink(w);
        return;
    }
    if (!w.listed) {
        w.next = head;
        w.prev = null;
        if (head) |h| h.prev = w;
        head = w;
        w.listed = true;
    }
    if (!thread_started) {
        // The thread runs this library's code until the process ends, so the library must
        // never be unloaded (a Lua state closing, a dlclose): pin it first.
        pinLibrary();
        // Without a thread, deadlines only take effect between reads; say nothing and go on.
        if (std.Thread.spawn(.{}, run, .{})) |t| {
            t.detach();
            thread_started = true;
        } else |_| {}
    }
    _ = c.pthread_cond_signal(&cond);
}

/// Cancels from any thread: a blocked read returns at once.
pub fn cancel(w: *Watch) void {
    lock();
    defer unlock();
    w.canceled.store(true, .release);
    if (w.fd >= 0) shutdownLocked(w, .canceled);
    if (w.wake_fd >= 0) writeWake(w.wake_fd);
}

/// Sets a polled stream's wake descriptor (see `Watch.wake_fd`), or -1: none; written at once
/// if the stream is canceled already.
pub fn setWake(w: *Watch, fd: c.fd_t) void {
    lock();
    defer unlock();
    w.wake_fd = fd;
    if (fd >= 0 and w.canceled.load(.acquire)) writeWake(fd);
}

fn writeWake(fd: c.fd_t) void {
    const one: u64 = 1;
    _ = c.write(fd, std.mem.asBytes(&one), @sizeOf(u64));
}

/// Removes the stream from the watchdog; call before the stream's memory goes.
pub fn forget(w: *Watch) void {
    lock();
    defer unlock();
    unlink(w);
    w.fd = -1;
    w.wake_fd = -1;
}

fn unlink(w: *Watch) void {
    if (!w.listed) return;
    if (w.prev) |p| p.next = w.next else head = w.next;
    if (w.next) |n| n.prev = w.prev;
    w.next = null;
    w.prev = null;
    w.listed = false;
}

fn shutdownLocked(w: *Watch, reason: Reason) void {
    _ = w.fired.cmpxchgStrong(.none, reason, .acq_rel, .acquire);
    _ = c.shutdown(w.fd, 2); // SHUT_RDWR
}

const DlInfo = extern struct {
    dli_fname: ?[*:0]const u8,
    dli_fbase: ?*anyopaque,
    dli_sname: ?[*:0]const u8,
    dli_saddr: ?*anyopaque,
};
extern "c" fn dladdr(addr: *const anyopaque, info: *DlInfo) c_int;

/// Opens the shared object holding this code once more with RTLD_NODELETE, so that no
/// dlclose can unload it. In a program linked statically this reopens the program: harmless.
fn pinLibrary() void {
    var info: DlInfo = undefined;
    if (dladdr(@ptrCast(&run), &info) == 0) return;
    const path = info.dli_fname orelse return;
    _ = c.dlopen(path, .{ .NOW = true, .NODELETE = true, .NOLOAD = true });
}

fn effectiveDeadline(w: *const Watch) u64 {
    var due: u64 = std.math.maxInt(u64);
    if (w.deadline_ns != 0) due = w.deadline_ns;
    if (w.idle_ns != 0) due = @min(due, w.seen_at_ns + w.idle_ns);
    return due;
}

/// Notes whether the stream made progress since the last look (under the lock).
fn sample(w: *Watch, now: u64) void {
    const count = w.progress_count.load(.monotonic);
    if (count != w.seen_count) {
        w.seen_count = count;
        w.seen_at_ns = now;
    }
}

/// How often a stream with an idle limit is sampled: bounds how late its timeout may come.
fn sampleInterval(w: *const Watch) u64 {
    return @max(w.idle_ns / 8, std.time.ns_per_ms);
}

fn lock() void {
    _ = c.pthread_mutex_lock(&mutex);
}

fn unlock() void {
    _ = c.pthread_mutex_unlock(&mutex);
}

fn run() void {
    lock();
    while (true) {
        const now = nowNs();
        var earliest: u64 = 0;
        var it = head;
        while (it) |w| {
            it = w.next;
            if (w.idle_ns != 0) sample(w, now);
            const due = effectiveDeadline(w);
            if (due <= now) {
                if (w.fd >= 0) shutdownLocked(w, .timeout) else _ = w.fired.cmpxchgStrong(.none, .timeout, .acq_rel, .acquire);
                unlink(w);
                continue;
            }
            const wake = if (w.idle_ns != 0) @min(due, now + sampleInterval(w)) else due;
            if (earliest == 0 or wake < earliest) earliest = wake;
        }
        if (earliest == 0) {
            _ = c.pthread_cond_wait(&cond, &mutex);
        } else {
            // pthread_cond_timedwait takes CLOCK_REALTIME; convert the remaining time.
            var real: c.timespec = undefined;
            _ = c.clock_gettime(.REALTIME, &real);
            const wake = @as(u64, @intCast(real.sec)) * std.time.ns_per_s + @as(u64, @intCast(real.nsec)) + (earliest - now);
            const abstime: c.timespec = .{ .sec = @intCast(wake / std.time.ns_per_s), .nsec = @intCast(wake % std.time.ns_per_s) };
            _ = c.pthread_cond_timedwait(&cond, &mutex, &abstime);
        }
    }
}
