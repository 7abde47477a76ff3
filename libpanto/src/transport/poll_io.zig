//! The waits of a stream driven without blocking (Stream.step, issue 28): the turn runs its
//! unchanged code on a fiber (fiber.zig), and every network wait on the way — a socket read
//! or write that would block, a connect in progress, a name lookup's reply — switches back to
//! the caller instead, leaving behind *what* to wait for (`Wait`: a descriptor, a direction,
//! a deadline). The caller's loop waits for that however it likes (poll, epoll, asyncio, Go's
//! netpoller) and steps again; the fiber goes on where it stopped and tries the syscall again.
//!
//! Deadlines come from the stream's watch (watchdog.zig) as on the blocking path, but no
//! thread enforces them: a polled watch is never listed with the watchdog thread. A wait
//! resumed past its deadline marks the watch timed out and fails the operation, which the
//! stream reports as the turn's Timeout exactly as if the watchdog had shut the socket down.
//! A cancel from another thread shuts the socket down as before (watchdog.cancel), so a loop
//! waiting on it wakes; the resumed wait sees the flag and fails the same way.
//!
//! The agent's Io (dial.zig) routes its reads and writes here; with no fiber running on
//! this thread (`current()` null: every blocking stream) they are Threaded's, unchanged.
//! Sockets stay blocking: the fiber's reads and writes pass MSG_DONTWAIT, so one connection
//! can be kept alive from a stepped stream and reused by a blocking one, and back.
const std = @import("std");
const c = std.c;
const net = std.Io.net;
const linux = std.os.linux;
const watchdog = @import("watchdog.zig");
const Fiber = @import("fiber.zig").Fiber;
const stack_trim = @import("stack_trim.zig");

pub const Direction = enum(u8) { none = 0, read = 1, write = 2 };

/// What a stepped stream waits for before it can go on: `fd` ready for `direction`, or
/// `deadline_ns` (CLOCK_MONOTONIC; 0: none), whichever comes first. `fd` -1: only the
/// deadline.
pub const Wait = struct {
    fd: c.fd_t = -1,
    direction: Direction = .none,
    deadline_ns: u64 = 0,
};

/// A stream's fiber and what it is parked on.
pub const Driver = struct {
    fiber: Fiber,
    watch: *watchdog.Watch,
    /// Set when the fiber switched back because it must wait.
    wait: Wait = .{},
    parked: bool = false,
    /// The eventfd of the waits without a socket (`wakeFd`), or -1.
    wake_fd: c.fd_t = -1,

    /// Closes the wake descriptor (after `watchdog.forget`: no cancel writes to it then).
    pub fn deinit(d: *Driver) void {
        if (d.wake_fd >= 0) _ = c.close(d.wake_fd);
        d.wake_fd = -1;
    }

    /// What a wait without a socket (a retry's delay) gives the caller's loop to wait on, so
    /// that a cancel from another thread wakes it as it does a socket wait: an eventfd made
    /// at the first such wait, which watchdog.cancel writes to. -1 (the deadline alone) when
    /// none can be made.
    fn wakeFd(d: *Driver) c.fd_t {
        if (d.wake_fd >= 0) return d.wake_fd;
        const fd = c.eventfd(0, linux.EFD.CLOEXEC | linux.EFD.NONBLOCK);
        if (fd < 0) return -1;
        d.wake_fd = fd;
        watchdog.setWake(d.watch, fd);
        return fd;
    }

    /// Runs the fiber until it parks or yields a result; true when it parked (see `wait`).
    pub fn run(d: *Driver) bool {
        const outer = running;
        running = d;
        defer running = outer;
        d.parked = false;
        d.fiber.resumeFiber();
        return d.parked;
    }

    /// The deadline of the watch as the watchdog thread would see it: the hard deadline, or
    /// the idle limit from the last progress (sampled here: the stream's own thread bumps
    /// the count, so a change since the last look means progress just now).
    fn watchDeadline(d: *Driver, now: u64) u64 {
        const w = d.watch;
        var due: u64 = w.deadline_ns;
        if (w.idle_ns != 0) {
            const count = w.progress_count.load(.monotonic);
            if (count != w.seen_count) {
                w.seen_count = count;
                w.seen_at_ns = now;
            }
            const idle_due = w.seen_at_ns + w.idle_ns;
            due = if (due == 0) idle_due else @min(due, idle_due);
        }
        return due;
    }

    /// Why a wait ended early: the watch's deadline passed or the stream was canceled (the
    /// watch says which, as the watchdog would have).
    fn fired(d: *Driver, now: u64) bool {
        const w = d.watch;
        if (w.fired.load(.acquire) != .none) return true;
        if (w.canceled.load(.acquire)) {
            _ = w.fired.cmpxchgStrong(.none, .canceled, .acq_rel, .acquire);
            return true;
        }
        const due = d.watchDeadline(now);
        if (due != 0 and now >= due) {
            watchdog.expire(w);
            return true;
        }
        return false;
    }

    pub const Parked = enum { ready, own_deadline, fired };

    /// Switches back to the caller until `fd` is ready for `direction`, `own_deadline_ns`
    /// passes (0: none) or the watch's deadline does; says which it was (ready may be
    /// spurious: the caller tries again). Returns `fired` at once, without switching, when the
    /// watch fired already.
    pub fn park(d: *Driver, fd: c.fd_t, direction: Direction, own_deadline_ns: u64) Parked {
        var now = watchdog.nowNs();
        if (d.fired(now)) return .fired;
        if (own_deadline_ns != 0 and now >= own_deadline_ns) return .own_deadline;
        var due = d.watchDeadline(now);
        if (own_deadline_ns != 0) due = if (due == 0) own_deadline_ns else @min(due, own_deadline_ns);
        d.wait = .{ .fd = fd, .direction = direction, .deadline_ns = due };
        d.parked = true;
        // What the turn touched below this frame is dead while it waits, which may be long
        // (a provider's answer): give it back, so that a waiting stream holds its live frames
        // only (one madvise a wait).
        stack_trim.giveBack();
        d.fiber.yield();
        now = watchdog.nowNs();
        if (d.fired(now)) return .fired;
        if (own_deadline_ns != 0 and now >= own_deadline_ns) return .own_deadline;
        return .ready;
    }
};

/// The driver whose fiber runs on this thread, if any.
threadlocal var running: ?*Driver = null;

/// Never inlined: a fiber may resume on another thread (Go), and on aarch64 LLVM keeps a
/// threadlocal's address for the whole function that reads it (fiber.zig's switchAarch64).
pub noinline fn current() ?*Driver {
    return running;
}

/// poll() of one descriptor for its `events`, waiting at most `timeout_ms` (-1: no limit of
/// its own): on a fiber, parked instead of blocked. A fired watch ends the wait with 0, as a
/// timeout would (the callers check the watch next).
pub fn poll(pfd: *c.pollfd, timeout_ms: c_int) c_int {
    const d = current() orelse return c.poll(pfd[0..1].ptr, 1, timeout_ms);
    const now_ready = c.poll(pfd[0..1].ptr, 1, 0);
    if (now_ready != 0) return now_ready;
    const own: u64 = if (timeout_ms < 0) 0 else watchdog.nowNs() + @as(u64, @intCast(timeout_ms)) * std.time.ns_per_ms;
    const direction: Direction = if (pfd.events & c.POLL.OUT != 0) .write else .read;
    return switch (d.park(pfd.fd, direction, own)) {
        .fired, .own_deadline => 0,
        .ready => c.poll(pfd[0..1].ptr, 1, 0),
    };
}

/// Sleeps until `until_ns` (CLOCK_MONOTONIC), or parks until then on a fiber (waiting on the
/// driver's wake descriptor, so that a cancel wakes the caller's loop); false when the watch
/// fired first (a cancel, the turn's deadline).
pub fn sleepUntil(until_ns: u64) bool {
    const d = current() orelse {
        const now = watchdog.nowNs();
        if (now >= until_ns) return true;
        const step = until_ns - now;
        const ts: c.timespec = .{ .sec = @intCast(step / std.time.ns_per_s), .nsec = @intCast(step % std.time.ns_per_s) };
        _ = c.nanosleep(&ts, null);
        return true;
    };
    const wake_fd = d.wakeFd();
    return d.park(wake_fd, if (wake_fd < 0) .none else .read, until_ns) != .fired;
}

extern "c" fn recvmsg(fd: c.fd_t, msg: *c.msghdr, flags: u32) isize;

const max_iovecs = 16;

/// A socket read on a fiber: parked while nothing is there.
pub fn read(d: *Driver, fd: net.Socket.Handle, data: [][]u8) net.Stream.Reader.Error!usize {
    var iovecs: [max_iovecs]std.posix.iovec = undefined;
    var n: usize = 0;
    for (data) |buf| {
        if (n == iovecs.len) break;
        if (buf.len == 0) continue;
        iovecs[n] = .{ .base = buf.ptr, .len = buf.len };
        n += 1;
    }
    if (n == 0) return 0;
    var msg: c.msghdr = std.mem.zeroes(c.msghdr);
    msg.iov = &iovecs;
    msg.iovlen = @intCast(n);
    while (true) {
        const rc = recvmsg(fd, &msg, c.MSG.DONTWAIT);
        if (rc >= 0) return @intCast(rc);
        switch (c.errno(rc)) {
            .INTR => continue,
            .AGAIN => if (d.park(fd, .read, 0) == .fired) return error.ConnectionResetByPeer,
            .CONNRESET => return error.ConnectionResetByPeer,
            .TIMEDOUT => return error.Timeout,
            .NOTCONN => return error.SocketUnconnected,
            .NOBUFS, .NOMEM => return error.SystemResources,
            .NETDOWN => return error.NetworkDown,
            else => return error.Unexpected,
        }
    }
}

/// A socket write on a fiber: parked while the send buffer is full; may write less than
/// given, as the Writer allows.
pub fn write(d: *Driver, fd: net.Socket.Handle, header: []const u8, data: []const []const u8, splat: usize) net.Stream.Writer.Error!usize {
    var iovecs: [max_iovecs]std.posix.iovec_const = undefined;
    var n: usize = 0;
    const add = struct {
        fn add(v: []std.posix.iovec_const, len: *usize, bytes: []const u8) void {
            if (bytes.len == 0 or len.* == v.len) return;
            v[len.*] = .{ .base = bytes.ptr, .len = bytes.len };
            len.* += 1;
        }
    }.add;
    add(&iovecs, &n, header);
    for (data[0 .. data.len - 1]) |bytes| add(&iovecs, &n, bytes);
    const pattern = data[data.len - 1];
    for (0..@min(splat, iovecs.len)) |_| add(&iovecs, &n, pattern);
    if (n == 0) return 0;
    const msg: c.msghdr_const = .{ .name = null, .namelen = 0, .iov = &iovecs, .iovlen = @intCast(n), .control = null, .controllen = 0, .flags = 0 };
    while (true) {
        const rc = c.sendmsg(fd, &msg, c.MSG.DONTWAIT | c.MSG.NOSIGNAL);
        if (rc >= 0) return @intCast(rc);
        switch (c.errno(rc)) {
            .INTR => continue,
            .AGAIN => if (d.park(fd, .write, 0) == .fired) return error.ConnectionResetByPeer,
            .CONNRESET => return error.ConnectionResetByPeer,
            .PIPE, .NOTCONN => return error.SocketUnconnected,
            .NOBUFS, .NOMEM => return error.SystemResources,
            .HOSTUNREACH => return error.HostUnreachable,
            .NETUNREACH => return error.NetworkUnreachable,
            .NETDOWN => return error.NetworkDown,
            else => return error.Unexpected,
        }
    }
}
