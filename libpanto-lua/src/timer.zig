//! The native timer of stream:cancel_after(ms): a one-shot thread that calls
//! panto_stream_cancel (thread-safe, include/panto.h) when its deadline passes, so that a
//! next() blocked in the Lua thread returns. Lua has no threads of its own.
//!
//! The stream's owner disarms it (under the mutex, then joins the thread) before the stream
//! can be freed, so the thread never touches a freed stream and never outlives the Timer.

const std = @import("std");
const c = @import("c");

const gpa = std.heap.c_allocator;

/// The longest delay a timer takes: 30 days.
pub const max_ms: f64 = 30 * 24 * 3600 * 1000;

pub const Timer = struct {
    mutex: c.pthread_mutex_t,
    cond: c.pthread_cond_t,
    /// The stream to cancel; null once fired or disarmed.
    target: ?*c.PantoStream,
    /// CLOCK_MONOTONIC, the clock `cond` waits on.
    deadline: c.struct_timespec,
    thread: std.Thread,

    /// Starts a timer that cancels `stream` after `ms` (finite, 0 to max_ms). Null when the
    /// system refuses a thread.
    pub fn arm(stream: *c.PantoStream, ms: f64) ?*Timer {
        const t = gpa.create(Timer) catch return null;
        t.target = stream;
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
        // Little stack: the thread only waits and calls panto_stream_cancel.
        t.thread = std.Thread.spawn(.{ .stack_size = 128 * 1024 }, run, .{t}) catch {
            t.destroy();
            return null;
        };
        return t;
    }

    /// Stops the timer (if it has not fired, it never will), waits for its thread, which
    /// returns at once, and frees it.
    pub fn disarm(t: *Timer) void {
        _ = c.pthread_mutex_lock(&t.mutex);
        t.target = null;
        _ = c.pthread_cond_signal(&t.cond);
        _ = c.pthread_mutex_unlock(&t.mutex);
        t.thread.join();
        t.destroy();
    }

    fn run(t: *Timer) void {
        _ = c.pthread_mutex_lock(&t.mutex);
        defer _ = c.pthread_mutex_unlock(&t.mutex);
        while (t.target) |stream| {
            var now: c.struct_timespec = undefined;
            _ = c.clock_gettime(c.CLOCK_MONOTONIC, &now);
            if (now.tv_sec > t.deadline.tv_sec or (now.tv_sec == t.deadline.tv_sec and now.tv_nsec >= t.deadline.tv_nsec)) {
                _ = c.panto_stream_cancel(stream);
                t.target = null;
                return;
            }
            // Woken early by disarm(), or spuriously: the loop decides.
            _ = c.pthread_cond_timedwait(&t.cond, &t.mutex, &t.deadline);
        }
    }

    fn destroy(t: *Timer) void {
        _ = c.pthread_cond_destroy(&t.cond);
        _ = c.pthread_mutex_destroy(&t.mutex);
        gpa.destroy(t);
    }
};
