//! A few random bytes for ids and retry jitter. On Linux the getrandom syscall itself, not
//! libc's arc4random_buf (glibc 2.36+): the library is built for glibc 2.17 (manylinux2014).
const std = @import("std");
const builtin = @import("builtin");

/// Fills buf (a few bytes) with random bytes; with the monotonic clock's nanoseconds when the
/// kernel has no getrandom (Linux < 3.17), which still tell two calls apart.
pub fn fill(buf: []u8) void {
    if (builtin.os.tag == .linux) {
        // (getrandom of a few bytes never blocks once the pool is ready, and is not cut short)
        if (std.os.linux.errno(std.os.linux.getrandom(buf.ptr, buf.len, 0)) == .SUCCESS) return;
    } else return std.c.arc4random_buf(buf.ptr, buf.len);
    var ts: std.c.timespec = undefined;
    _ = std.c.clock_gettime(.MONOTONIC, &ts);
    var nsec: u64 = @bitCast(@as(i64, ts.nsec));
    for (buf) |*b| {
        b.* = @truncate(nsec);
        nsec = (nsec >> 8) | (nsec << 56);
    }
}

test "fills the buffer" {
    var a: [16]u8 = @splat(0);
    var b: [16]u8 = @splat(0);
    fill(&a);
    fill(&b);
    try std.testing.expect(!std.mem.eql(u8, &a, &b));
}
