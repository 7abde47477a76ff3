//! Wall-clock time for session files: RFC 3339 timestamps (UTC, milliseconds) and the stamp
//! that begins a made session id.
const std = @import("std");
const epoch = std.time.epoch;

/// Milliseconds since the Unix epoch, now.
pub fn nowMs() i64 {
    var ts: std.c.timespec = undefined;
    if (std.c.clock_gettime(.REALTIME, &ts) != 0) return 0;
    return @as(i64, ts.sec) * 1000 + @divTrunc(@as(i64, ts.nsec), std.time.ns_per_ms);
}

/// "2026-12-01T22:20:40.123Z": 24 bytes. Times before 1970 are written as 1970.
pub fn rfc3339(buf: *[24]u8, ms: i64) []const u8 {
    const p = parts(ms);
    return std.fmt.bufPrint(buf, "{d:0>4}-{d:0>2}-{d:0>2}T{d:0>2}:{d:0>2}:{d:0>2}.{d:0>3}Z", .{ p.year, p.month, p.day, p.hour, p.minute, p.second, p.ms }) catch unreachable; // (fixed width: fits)
}

/// "20261201T222040Z": 16 bytes, the start of a made session id (sorts by time).
pub fn compact(buf: *[16]u8, ms: i64) []const u8 {
    const p = parts(ms);
    return std.fmt.bufPrint(buf, "{d:0>4}{d:0>2}{d:0>2}T{d:0>2}{d:0>2}{d:0>2}Z", .{ p.year, p.month, p.day, p.hour, p.minute, p.second }) catch unreachable; // (fixed width: fits)
}

const Parts = struct { year: u16, month: u8, day: u8, hour: u8, minute: u8, second: u8, ms: u16 };

fn parts(ms: i64) Parts {
    const clamped: u64 = @intCast(std.math.clamp(ms, 0, 253402300799999)); // up to 9999-12-31
    const secs: epoch.EpochSeconds = .{ .secs = clamped / 1000 };
    const year_day = secs.getEpochDay().calculateYearDay();
    const month_day = year_day.calculateMonthDay();
    const day_secs = secs.getDaySeconds();
    return .{
        .year = year_day.year,
        .month = month_day.month.numeric(),
        .day = @as(u8, month_day.day_index) + 1,
        .hour = day_secs.getHoursIntoDay(),
        .minute = day_secs.getMinutesIntoHour(),
        .second = day_secs.getSecondsIntoMinute(),
        .ms = @intCast(clamped % 1000),
    };
}

test "timestamps are RFC 3339 in UTC with milliseconds, and the id stamp is their compact form" {
    var buf: [24]u8 = undefined;
    var short: [16]u8 = undefined;
    const ms: i64 = 1_796_163_640_123; // 2026-12-01T22:20:40.123Z
    try std.testing.expectEqualStrings("2026-12-01T22:20:40.123Z", rfc3339(&buf, ms));
    try std.testing.expectEqualStrings("20261201T222040Z", compact(&short, ms));
    try std.testing.expectEqualStrings("1970-01-01T00:00:00.000Z", rfc3339(&buf, -5));
    try std.testing.expectEqualStrings("9999-12-31T23:59:59.999Z", rfc3339(&buf, std.math.maxInt(i64)));
}
