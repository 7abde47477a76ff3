//! Bedrock's body framing for the seam (providers.zig's `Framer`): eventstream.zig's messages
//! read from the response body and handed out as sse.Events (type: the event or exception
//! type, data: the JSON payload) for decode.zig. A broken frame, and an `error` message,
//! are error.Framing with the reason in `problem()`.
const std = @import("std");
const Allocator = std.mem.Allocator;
const eventstream = @import("eventstream.zig");
const sse = @import("../../sse.zig");

pub const Framer = struct {
    frames: eventstream.Decoder,
    /// The source said EndOfStream: it is not asked again.
    ended: bool = false,
    reason: []const u8 = "",

    pub fn init(gpa: Allocator) Framer {
        return .{ .frames = .init(gpa) };
    }

    pub fn deinit(f: *Framer) void {
        f.frames.deinit();
    }

    /// The next message as an event, or null at the body's end; valid until the next call.
    pub fn next(f: *Framer, source: anytype) !?sse.Event {
        while (true) {
            const maybe = f.frames.next() catch |err| return f.fail(err);
            if (maybe) |m| {
                if (std.mem.eql(u8, m.message_type, "error")) {
                    f.reason = "an error message";
                    return error.Framing;
                }
                return .{ .type = m.type, .data = m.payload };
            }
            if (f.ended) {
                f.frames.finish() catch |err| return f.fail(err);
                return null;
            }
            const bytes = source.buffered();
            if (bytes.len > 0) {
                try f.frames.push(bytes);
                source.toss(bytes.len);
                continue;
            }
            source.fillMore() catch |err| switch (err) {
                error.EndOfStream => f.ended = true,
                else => |e| return e,
            };
        }
    }

    fn fail(f: *Framer, err: eventstream.Error) error{ OutOfMemory, Framing } {
        if (err == error.OutOfMemory) return error.OutOfMemory;
        f.reason = @errorName(err);
        return error.Framing;
    }

    pub fn problem(f: *const Framer) []const u8 {
        return f.reason;
    }

    /// The hot paths are SSE's only: always at a start.
    pub fn atEventStart(_: *const Framer) bool {
        return true;
    }

    /// Whether a whole message is in the decoder's rest and the source's received bytes.
    pub fn hasBufferedEvent(f: *const Framer, source: anytype) bool {
        const rest = f.frames.buffer.items[f.frames.start..];
        const received: []const u8 = source.buffered();
        if (rest.len + received.len < 12) return false;
        var prelude: [4]u8 = undefined;
        for (&prelude, 0..) |*b, i| b.* = if (i < rest.len) rest[i] else received[i - rest.len];
        return rest.len + received.len >= std.mem.readInt(u32, &prelude, .big);
    }
};

const encode = @import("eventstream_test.zig").encode;
const StepReader = @import("../../body.zig").StepReader;

test "bedrock framer: messages read from a body in pieces, then its end; a cut frame is Framing" {
    const gpa = std.testing.allocator;
    var body: std.ArrayList(u8) = .empty;
    defer body.deinit(gpa);
    try encode(gpa, &body, &.{ .{ ":message-type", "event" }, .{ ":event-type", "contentBlockDelta" } }, "{\"a\":1}");
    try encode(gpa, &body, &.{ .{ ":message-type", "exception" }, .{ ":exception-type", "throttlingException" } }, "{\"message\":\"slow\"}");
    for ([_]usize{ 1, 5, 64 }) |step| {
        var reader = StepReader.init(body.items, step);
        var buf: [32]u8 = undefined;
        reader.interface.buffer = &buf;
        var f = Framer.init(gpa);
        defer f.deinit();
        const a = (try f.next(&reader.interface)).?;
        try std.testing.expectEqualStrings("contentBlockDelta", a.type);
        try std.testing.expectEqualStrings("{\"a\":1}", a.data);
        const b = (try f.next(&reader.interface)).?;
        try std.testing.expectEqualStrings("throttlingException", b.type);
        try std.testing.expectEqualStrings("{\"message\":\"slow\"}", b.data);
        try std.testing.expectEqual(null, try f.next(&reader.interface));
    }
    var reader = StepReader.init(body.items[0 .. body.items.len - 3], 7);
    var buf: [32]u8 = undefined;
    reader.interface.buffer = &buf;
    var f = Framer.init(gpa);
    defer f.deinit();
    _ = (try f.next(&reader.interface)).?;
    try std.testing.expectError(error.Framing, f.next(&reader.interface));
    try std.testing.expectEqualStrings("Truncated", f.problem());
}
