//! When a failed provider request is tried again, and after how long: the policy of both
//! official SDKs (backoff 0.5 s·2ⁿ capped at 8 s with jitter; Retry-After honored up to a
//! limit; x-should-retry honored), applied only before any content of the message reached
//! the user.
const std = @import("std");
const TurnError = @import("errors.zig").TurnError;
const Retry = @import("config.zig").Retry;
const entropy = @import("entropy.zig");

pub const Failure = struct {
    err: TurnError,
    http_status: u16,
    /// The connection went away mid-body (as opposed to a body that made no sense).
    dropped: bool,
    content_delivered: bool,
    /// Retries of this message so far.
    attempt: u32,
    retry_after_ms: ?u64,
    should_retry: ?bool,
};

/// The delay before the next attempt, or null when the failure is final.
pub fn decide(f: Failure, policy: Retry) ?u64 {
    if (f.content_delivered or f.attempt >= policy.max_retries) return null;
    if (f.should_retry) |wanted| {
        if (!wanted) return null;
    } else if (!retryable(f)) return null;
    if (f.retry_after_ms) |ms| {
        if (ms > policy.max_retry_after_ms) return null; // the provider asks for too long a pause
        return ms;
    }
    return backoff(f.attempt, policy, jitter());
}

fn retryable(f: Failure) bool {
    return switch (f.err) {
        error.Connection => true,
        error.RateLimit, error.Overloaded => true,
        error.Server => true, // 5xx, or an api_error event
        error.Protocol => f.dropped,
        else => switch (f.http_status) {
            408, 409 => true,
            else => false,
        },
    };
}

/// initial·2^attempt capped at max, scaled by `factor` in [0.75, 1].
pub fn backoff(attempt: u32, policy: Retry, factor: f64) u64 {
    const shift: u6 = @intCast(@min(attempt, 30));
    const raw = policy.initial_delay_ms *| (@as(u64, 1) << shift);
    const capped = @min(raw, policy.max_delay_ms);
    return @intFromFloat(@as(f64, @floatFromInt(capped)) * factor);
}

fn jitter() f64 {
    var seed: u64 = undefined;
    entropy.fill(std.mem.asBytes(&seed));
    var prng = std.Random.DefaultPrng.init(seed);
    return 1.0 - 0.25 * prng.random().float(f64);
}

/// `retry-after-ms`: milliseconds, possibly fractional (see `parseDelay`).
pub fn parseRetryAfterMs(value: []const u8) ?u64 {
    return parseDelay(value, 1);
}

/// `Retry-After`: seconds (fractional ones too, as the official SDKs read them), or an HTTP
/// date (RFC 9110 IMF-fixdate) relative to `now` (Unix s).
pub fn parseRetryAfter(value: []const u8, now: i64) ?u64 {
    if (parseDelay(value, 1000)) |ms| return ms;
    const when = parseHttpDate(std.mem.trim(u8, value, " \t")) orelse return null;
    return if (when <= now) 0 else @as(u64, @intCast(when - now)) *| 1000;
}

/// A decimal number of `unit_ms` milliseconds (`1500`, `1500.5`, `1e3`), in whole
/// milliseconds. One too large for a u64 (`1e308`, `inf`) is maxInt(u64): a wait beyond any
/// limit, refused by `decide` like any other too long. Negative, NaN or not a decimal number
/// (hex floats and `_` separators included, which parseFloat would take): null, not given.
fn parseDelay(value: []const u8, unit_ms: f64) ?u64 {
    const v = std.mem.trim(u8, value, " \t");
    const infinite = std.ascii.eqlIgnoreCase(v, "inf") or std.ascii.eqlIgnoreCase(v, "infinity");
    if (!infinite) for (v) |c| switch (c) {
        '0'...'9', '.', 'e', 'E', '+', '-' => {},
        else => return null,
    };
    const ms = (std.fmt.parseFloat(f64, v) catch return null) * unit_ms;
    if (!(ms >= 0)) return null;
    // 2^64 exactly: every float below it fits a u64.
    const beyond_u64: f64 = 18446744073709551616.0;
    if (ms >= beyond_u64) return std.math.maxInt(u64);
    return @intFromFloat(ms);
}

/// "Sun, 06 Nov 1994 08:49:37 GMT" → Unix seconds.
fn parseHttpDate(v: []const u8) ?i64 {
    if (v.len != 29 or !std.mem.endsWith(u8, v, " GMT")) return null;
    const day = std.fmt.parseInt(u8, v[5..7], 10) catch return null;
    const months = [_][]const u8{ "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec" };
    const month: u8 = for (months, 1..) |m, i| {
        if (std.mem.eql(u8, m, v[8..11])) break @intCast(i);
    } else return null;
    const year = std.fmt.parseInt(i64, v[12..16], 10) catch return null;
    const hour = std.fmt.parseInt(i64, v[17..19], 10) catch return null;
    const minute = std.fmt.parseInt(i64, v[20..22], 10) catch return null;
    const second = std.fmt.parseInt(i64, v[23..25], 10) catch return null;
    // Days from the civil date (Howard Hinnant's algorithm).
    const y = if (month <= 2) year - 1 else year;
    const era = @divFloor(y, 400);
    const yoe = y - era * 400;
    const mp: i64 = if (month > 2) month - 3 else month + 9;
    const doy = @divFloor(153 * mp + 2, 5) + day - 1;
    const doe = yoe * 365 + @divFloor(yoe, 4) - @divFloor(yoe, 100) + doy;
    const days = era * 146097 + doe - 719468;
    return days * 86400 + hour * 3600 + minute * 60 + second;
}

test "backoff doubles from the initial delay up to the cap" {
    const p: Retry = .{};
    try std.testing.expectEqual(@as(u64, 500), backoff(0, p, 1.0));
    try std.testing.expectEqual(@as(u64, 1000), backoff(1, p, 1.0));
    try std.testing.expectEqual(@as(u64, 8000), backoff(5, p, 1.0));
    try std.testing.expectEqual(@as(u64, 6000), backoff(9, p, 0.75));
}

test "which failures are retried" {
    const base: Failure = .{ .err = error.Overloaded, .http_status = 529, .dropped = false, .content_delivered = false, .attempt = 0, .retry_after_ms = null, .should_retry = null };
    const p: Retry = .{};
    try std.testing.expect(decide(base, p) != null);
    var f = base;
    f.content_delivered = true;
    try std.testing.expectEqual(null, decide(f, p));
    f = base;
    f.attempt = 2;
    try std.testing.expectEqual(null, decide(f, p));
    f = base;
    f.err = error.Authentication;
    f.http_status = 401;
    try std.testing.expectEqual(null, decide(f, p));
    f.should_retry = true;
    try std.testing.expect(decide(f, p) != null);
    f = base;
    f.should_retry = false;
    try std.testing.expectEqual(null, decide(f, p));
    f = base;
    f.retry_after_ms = 1500;
    try std.testing.expectEqual(@as(?u64, 1500), decide(f, p));
    f.retry_after_ms = 61_000;
    try std.testing.expectEqual(null, decide(f, p));
    f = base;
    f.err = error.Protocol;
    try std.testing.expectEqual(null, decide(f, p));
    f.dropped = true;
    try std.testing.expect(decide(f, p) != null);
    f = base;
    f.err = error.InvalidRequest;
    f.http_status = 408;
    try std.testing.expect(decide(f, p) != null);
}

test "Retry-After values beyond any wait are refused by the policy; garbage is not given" {
    const max = std.math.maxInt(u64);
    try std.testing.expectEqual(@as(?u64, max), parseRetryAfterMs("1e308"));
    try std.testing.expectEqual(@as(?u64, max), parseRetryAfterMs("18446744073709551616"));
    try std.testing.expectEqual(@as(?u64, max), parseRetryAfterMs("inf"));
    try std.testing.expectEqual(@as(?u64, max), parseRetryAfterMs("Infinity"));
    try std.testing.expectEqual(@as(?u64, max), parseRetryAfter("1e308", 0));
    try std.testing.expectEqual(@as(?u64, max), parseRetryAfter("99999999999999999999", 0));
    try std.testing.expectEqual(@as(?u64, 1500), parseRetryAfterMs("1500.5"));
    try std.testing.expectEqual(@as(?u64, 1500), parseRetryAfter("1.5", 0));
    try std.testing.expectEqual(@as(?u64, 0), parseRetryAfterMs("0"));
    try std.testing.expectEqual(@as(?u64, 18446744073709549568), parseRetryAfterMs("18446744073709549568")); // the largest float below 2^64
    for ([_][]const u8{ "-1", "-1e308", "-inf", "nan", "NaN", "", " ", "soon", "0x10", "1_000", "1e", "+-1", "12abc" }) |garbage| {
        try std.testing.expectEqual(null, parseRetryAfterMs(garbage));
        try std.testing.expectEqual(null, parseRetryAfter(garbage, 0));
    }
    // Beyond max_retry_after_ms: the error is returned, not retried.
    const f: Failure = .{ .err = error.RateLimit, .http_status = 429, .dropped = false, .content_delivered = false, .attempt = 0, .retry_after_ms = parseRetryAfterMs("1e308"), .should_retry = null };
    try std.testing.expectEqual(null, decide(f, .{}));
}

test "Retry-After in seconds and as an HTTP date" {
    try std.testing.expectEqual(@as(?u64, 3000), parseRetryAfter("3", 0));
    try std.testing.expectEqual(@as(?u64, 1500), parseRetryAfterMs("1500.4"));
    // Sun, 06 Nov 1994 08:49:37 GMT is 784111777.
    try std.testing.expectEqual(@as(?u64, 10_000), parseRetryAfter("Sun, 06 Nov 1994 08:49:37 GMT", 784111767));
    try std.testing.expectEqual(@as(?u64, 0), parseRetryAfter("Sun, 06 Nov 1994 08:49:37 GMT", 784111800));
    try std.testing.expectEqual(null, parseRetryAfter("soon", 0));
}
