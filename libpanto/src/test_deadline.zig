//! The deadline of the tests' servers. A server that stalls on purpose (so that only a timeout
//! or a cancel ends the turn) gives up after `limit_ms` and closes the connection: a client
//! whose watchdog is broken then sees the connection end, and its test fails on the wrong
//! error, instead of hanging the run.
const std = @import("std");
const c = std.c;

/// Far beyond any timeout or cancel the tests wait for (at most a few hundred milliseconds).
pub const limit_ms = 10_000;

/// Waits until the client of the connection `fd` goes away (or sends something), at most
/// `limit_ms`.
pub fn awaitPeer(fd: c.fd_t) void {
    var now: c.timespec = undefined;
    _ = c.clock_gettime(.MONOTONIC, &now);
    const deadline = msOf(now) + limit_ms;
    while (true) {
        _ = c.clock_gettime(.MONOTONIC, &now);
        if (msOf(now) >= deadline) return;
        var pfd = [1]c.pollfd{.{ .fd = fd, .events = c.POLL.IN, .revents = 0 }};
        // Interrupted (-1): wait for the rest.
        if (c.poll(&pfd, 1, @intCast(deadline - msOf(now))) >= 0) return;
    }
}

fn msOf(ts: c.timespec) i64 {
    return @as(i64, ts.sec) * std.time.ms_per_s + @divTrunc(@as(i64, ts.nsec), std.time.ns_per_ms);
}
