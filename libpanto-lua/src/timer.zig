//! The native timer of stream:cancel_after(ms) and stream:close_after(ms): a one-shot thread
//! that cancels or frees the stream when its deadline passes, so that a next() blocked in the
//! Lua thread returns. Lua has no threads of its own.
//!
//! cancel: panto_stream_cancel is thread-safe (include/panto.h), and the handle stays alive
//! until the Lua thread disarms the timer (under the mutex, then joins the thread), so the
//! thread never touches a freed stream and never outlives the Timer.
//!
//! close: the timer frees the handle, so the Lua thread must not be using it then, nor use it
//! after. Every use of the handle by the Lua thread goes between enter() and leave(), under
//! the mutex. At the deadline, if the handle is not in use, the timer frees it; if it is (a
//! next() blocked for the provider, say), the timer cancels it, which makes the blocked call
//! return at once, and frees it when leave() says the Lua thread let go. enter() returns null
//! once it is freed. panto_stream_free would be safe during the blocked call too, but nothing
//! can tell the timer that the Lua thread is already inside the call and not about to enter
//! it (then the call would use a freed stream); cancel first, free after, is what is safe.

const std = @import("std");
const c = @import("c");

const gpa = std.heap.c_allocator;

/// The longest delay a timer takes: 30 days.
pub const max_ms: f64 = 30 * 24 * 3600 * 1000;

pub const Action = enum { cancel, close };

pub const Timer = struct {
    mutex: c.pthread_mutex_t,
    cond: c.pthread_cond_t,
    action: Action,
    stream: *c.PantoStream,
    /// Until disarm(): whether the timer may still fire.
    armed: bool,
    /// close: the Lua thread is between enter() and leave().
    in_use: bool = false,
    /// close: the timer freed the stream.
    freed: bool = false,
    /// CLOCK_MONOTONIC, the clock `cond` waits on.
    deadline: c.struct_timespec,
    thread: std.Thread,

    /// Starts a timer that acts on `stream` after `ms` (finite, 0 to max_ms). Null when the
    /// system refuses a thread.
    pub fn arm(stream: *c.PantoStream, action: Action, ms: f64) ?*Timer {
        const t = gpa.create(Timer) catch return null;
        t.* = .{ .mutex = undefined, .cond = undefined, .action = action, .stream = stream, .armed = true, .deadline = undefined, .thread = undefined };
        var attr: c.pthread_condattr_t = undefined;
        _ = c.pthread_condattr_init(&attr);
        _ = c.pthread_condattr_setclock(&attr, c.CLOCK_MONOTONIC);
        _ = c.pthread_cond_init(&t.cond, &attr);
        _ = c.pthread_condattr_destroy(&attr);
        _ = c.pthread_mutex_init(&t.mutex, null);
        _ = c.clock_gettime(c.CLOCK_MONOTONIC, &t.deadline);
        // ms is at most max_ms: the sum fits.
        const total_ns: u64 = @as(u64, @intCast(t.deadline.tv_nsec)) + @as(u64, @intFromFloat(ms * std.time.ns_per_ms));
        t.deadline.tv_sec += @intCast(total_ns / std.time.ns_per_s);
        t.deadline.tv_nsec = @intCast(total_ns % std.time.ns_per_s);
        // Little stack: the thread only waits and calls panto_stream_cancel or _free.
        t.thread = std.Thread.spawn(.{ .stack_size = 128 * 1024 }, run, .{t}) catch {
            t.destroy();
            return null;
        };
        return t;
    }

    /// Stops the timer if it has not fired (then it never will); lets one that fired finish
    /// (a close timer frees the stream then: the caller, the Lua thread, is not using it).
    /// Waits for its thread, which returns at once, and frees the timer. Returns whether the
    /// timer freed the stream.
    pub fn disarm(t: *Timer) bool {
        _ = c.pthread_mutex_lock(&t.mutex);
        t.armed = false;
        t.in_use = false;
        _ = c.pthread_cond_signal(&t.cond);
        _ = c.pthread_mutex_unlock(&t.mutex);
        t.thread.join();
        const freed = t.freed;
        t.destroy();
        return freed;
    }

    /// The Lua thread starts using the stream: its handle, or null when the timer freed it.
    /// A close timer's only; leave() when done.
    pub fn enter(t: *Timer) ?*c.PantoStream {
        _ = c.pthread_mutex_lock(&t.mutex);
        defer _ = c.pthread_mutex_unlock(&t.mutex);
        if (t.freed) return null;
        t.in_use = true;
        return t.stream;
    }

    /// The Lua thread is done with the stream (the timer may free it now).
    pub fn leave(t: *Timer) void {
        _ = c.pthread_mutex_lock(&t.mutex);
        t.in_use = false;
        _ = c.pthread_cond_signal(&t.cond);
        _ = c.pthread_mutex_unlock(&t.mutex);
    }

    fn run(t: *Timer) void {
        _ = c.pthread_mutex_lock(&t.mutex);
        defer _ = c.pthread_mutex_unlock(&t.mutex);
        // Until the deadline (woken early by disarm(), or spuriously: the loop decides).
        while (t.armed and !passed(&t.deadline))
            _ = c.pthread_cond_timedwait(&t.cond, &t.mutex, &t.deadline);
        if (!t.armed) return;
        // Fired: from here on, disarm() waits for the timer to finish.
        _ = c.panto_stream_cancel(t.stream);
        if (t.action == .close) {
            // The cancel makes a call in progress return; leave() or disarm() wakes this
            // thread then.
            while (t.in_use) _ = c.pthread_cond_wait(&t.cond, &t.mutex);
            c.panto_stream_free(t.stream);
            t.freed = true;
        }
    }

    fn passed(deadline: *const c.struct_timespec) bool {
        var now: c.struct_timespec = undefined;
        _ = c.clock_gettime(c.CLOCK_MONOTONIC, &now);
        return now.tv_sec > deadline.tv_sec or (now.tv_sec == deadline.tv_sec and now.tv_nsec >= deadline.tv_nsec);
    }

    fn destroy(t: *Timer) void {
        _ = c.pthread_cond_destroy(&t.cond);
        _ = c.pthread_mutex_destroy(&t.mutex);
        gpa.destroy(t);
    }
};
