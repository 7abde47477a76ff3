//! Tests of the event-stream decoder: messages whole and cut into every piece size, CRC and
//! length errors, a body cut short.
const std = @import("std");
const testing = std.testing;
const eventstream = @import("eventstream.zig");
const Decoder = eventstream.Decoder;

/// A frame made with Python's zlib.crc32 and struct, not with this file's encoder:
///   frame([str(":event-type", "contentBlockDelta"), str(":content-type", "application/json"),
///          str(":message-type", "event")], b'{"contentBlockIndex":0,"delta":{"text":"Hi"},"p":"abcd"}')
/// where a string header is bytes([len(n)]) + n + b"\x07" + struct.pack(">H", len(v)) + v, the
/// prelude struct.pack(">II", total, len(headers)) + its crc32, and the frame ends with the
/// crc32 of all the bytes before.
const python_frame_hex = "0000009f00000057c37babff0b3a6576656e742d74797065070011636f6e74656e74426c6f636b44656c74610d3a636f6e74656e742d747970650700106170706c69636174696f6e2f6a736f6e0d3a6d6573736167652d747970650700056576656e747b22636f6e74656e74426c6f636b496e646578223a302c2264656c7461223a7b2274657874223a224869227d2c2270223a2261626364227df2ace5ff";

fn pythonFrame(buf: []u8) []u8 {
    return std.fmt.hexToBytes(buf, python_frame_hex) catch unreachable;
}

const Header = struct { []const u8, []const u8 };

/// Encodes a message with string headers (the tests' other frames).
pub fn encode(gpa: std.mem.Allocator, out: *std.ArrayList(u8), headers: []const Header, payload: []const u8) !void {
    const begin = out.items.len;
    try out.appendNTimes(gpa, 0, 12);
    for (headers) |h| {
        try out.append(gpa, @intCast(h[0].len));
        try out.appendSlice(gpa, h[0]);
        try out.append(gpa, 7);
        var len: [2]u8 = undefined;
        std.mem.writeInt(u16, &len, @intCast(h[1].len), .big);
        try out.appendSlice(gpa, &len);
        try out.appendSlice(gpa, h[1]);
    }
    const headers_len = out.items.len - begin - 12;
    try out.appendSlice(gpa, payload);
    const total = out.items.len - begin + 4;
    const prelude = out.items[begin..][0..12];
    std.mem.writeInt(u32, prelude[0..4], @intCast(total), .big);
    std.mem.writeInt(u32, prelude[4..8], @intCast(headers_len), .big);
    std.mem.writeInt(u32, prelude[8..12], std.hash.Crc32.hash(prelude[0..8]), .big);
    var crc: [4]u8 = undefined;
    std.mem.writeInt(u32, &crc, std.hash.Crc32.hash(out.items[begin..]), .big);
    try out.appendSlice(gpa, &crc);
}

test "eventstream: a frame made by another encoder decodes" {
    var buf: [python_frame_hex.len / 2]u8 = undefined;
    var d = Decoder.init(testing.allocator);
    defer d.deinit();
    try d.push(pythonFrame(&buf));
    const m = (try d.next()).?;
    try testing.expectEqualStrings("event", m.message_type);
    try testing.expectEqualStrings("contentBlockDelta", m.type);
    try testing.expectEqualStrings("{\"contentBlockIndex\":0,\"delta\":{\"text\":\"Hi\"},\"p\":\"abcd\"}", m.payload);
    try testing.expectEqual(null, try d.next());
    try d.finish();
}

test "eventstream: messages cut into pieces of every size come out the same" {
    const gpa = testing.allocator;
    var body: std.ArrayList(u8) = .empty;
    defer body.deinit(gpa);
    try encode(gpa, &body, &.{ .{ ":event-type", "messageStart" }, .{ ":message-type", "event" } }, "{\"role\":\"assistant\"}");
    try encode(gpa, &body, &.{ .{ ":message-type", "event" }, .{ ":event-type", "contentBlockDelta" }, .{ ":content-type", "application/json" } }, "{\"delta\":{\"text\":\"x\"}}");
    try encode(gpa, &body, &.{ .{ ":exception-type", "throttlingException" }, .{ ":message-type", "exception" } }, "{\"message\":\"slow down\"}");
    try encode(gpa, &body, &.{ .{ ":message-type", "error" }, .{ ":error-code", "InternalFailure" }, .{ ":error-message", "boom" } }, "");

    for (1..body.items.len + 1) |piece| {
        var d = Decoder.init(gpa);
        defer d.deinit();
        var seen: std.ArrayList(u8) = .empty;
        defer seen.deinit(gpa);
        var at: usize = 0;
        while (at < body.items.len) {
            const end = @min(at + piece, body.items.len);
            try d.push(body.items[at..end]);
            at = end;
            while (try d.next()) |m| {
                try seen.print(gpa, "{s}/{s}/{s}/{s};", .{ m.message_type, m.type, m.error_message, m.payload });
            }
        }
        try d.finish();
        try testing.expectEqualStrings(
            "event/messageStart//{\"role\":\"assistant\"};" ++
                "event/contentBlockDelta//{\"delta\":{\"text\":\"x\"}};" ++
                "exception/throttlingException//{\"message\":\"slow down\"};" ++
                "error/InternalFailure/boom/;",
            seen.items,
        );
    }
}

test "eventstream: headers of every value type are skipped over" {
    const gpa = testing.allocator;
    // Headers of types 0..9 (bool, bool, byte, short, int, long, bytes, string, timestamp, uuid)
    // before :event-type, so that a wrong length for any of them would misread it.
    var headers: std.ArrayList(u8) = .empty;
    defer headers.deinit(gpa);
    const values = [_][]const u8{ "", "", "\x01", "\x00\x02", "\x00\x00\x00\x04", "\x00" ** 8, "\x00\x03abc", "\x00\x01p", "\x00" ** 8, "\x11" ** 16 };
    for (values, 0..) |v, t| {
        try headers.appendSlice(gpa, "\x01h");
        try headers.append(gpa, @intCast(t));
        try headers.appendSlice(gpa, v);
    }
    try headers.appendSlice(gpa, "\x0b:event-type\x07\x00\x0bmessageStop");
    var frame: std.ArrayList(u8) = .empty;
    defer frame.deinit(gpa);
    // Built by hand around the raw headers: prelude, headers, empty payload, CRC.
    var prelude: [12]u8 = undefined;
    std.mem.writeInt(u32, prelude[0..4], @intCast(16 + headers.items.len), .big);
    std.mem.writeInt(u32, prelude[4..8], @intCast(headers.items.len), .big);
    std.mem.writeInt(u32, prelude[8..12], std.hash.Crc32.hash(prelude[0..8]), .big);
    try frame.appendSlice(gpa, &prelude);
    try frame.appendSlice(gpa, headers.items);
    var crc: [4]u8 = undefined;
    std.mem.writeInt(u32, &crc, std.hash.Crc32.hash(frame.items), .big);
    try frame.appendSlice(gpa, &crc);

    var d = Decoder.init(gpa);
    defer d.deinit();
    try d.push(frame.items);
    const m = (try d.next()).?;
    try testing.expectEqualStrings("messageStop", m.type);
    try testing.expectEqualStrings("", m.payload);

    // An unknown value type (10) cannot be skipped: its length is unknown.
    frame.items[12 + 2] = 10;
    std.mem.writeInt(u32, frame.items[frame.items.len - 4 ..][0..4], std.hash.Crc32.hash(frame.items[0 .. frame.items.len - 4]), .big);
    var d2 = Decoder.init(gpa);
    defer d2.deinit();
    try d2.push(frame.items);
    try testing.expectError(error.BadHeader, d2.next());
}

test "eventstream: a bad CRC is an error" {
    var buf: [python_frame_hex.len / 2]u8 = undefined;
    {
        const frame = pythonFrame(&buf);
        frame[frame.len - 10] ^= 1; // a payload byte
        var d = Decoder.init(testing.allocator);
        defer d.deinit();
        try d.push(frame);
        try testing.expectError(error.BadMessageCrc, d.next());
    }
    {
        const frame = pythonFrame(&buf);
        frame[3] ^= 1; // the total length
        var d = Decoder.init(testing.allocator);
        defer d.deinit();
        try d.push(frame[0..12]); // checked as soon as the prelude is in
        try testing.expectError(error.BadPreludeCrc, d.next());
    }
}

test "eventstream: impossible lengths and a header past its end are errors" {
    const gpa = testing.allocator;
    const cases = [_]struct { total: u32, headers: u32, err: eventstream.Error }{
        .{ .total = 15, .headers = 0, .err = error.BadLength },
        .{ .total = 20, .headers = 5, .err = error.BadLength },
        .{ .total = eventstream.max_message_bytes + 1, .headers = 0, .err = error.BadLength },
    };
    for (cases) |c| {
        var prelude: [12]u8 = undefined;
        std.mem.writeInt(u32, prelude[0..4], c.total, .big);
        std.mem.writeInt(u32, prelude[4..8], c.headers, .big);
        std.mem.writeInt(u32, prelude[8..12], std.hash.Crc32.hash(prelude[0..8]), .big);
        var d = Decoder.init(gpa);
        defer d.deinit();
        try d.push(&prelude);
        try testing.expectError(c.err, d.next());
    }
    // A string header whose length runs past the headers' end (CRCs right).
    var frame: std.ArrayList(u8) = .empty;
    defer frame.deinit(gpa);
    try encode(gpa, &frame, &.{.{ ":event-type", "messageStop" }}, "{}");
    frame.items[12 + 1 + 11 + 1 + 1] = 0x20; // the value's length, 12 -> 32
    std.mem.writeInt(u32, frame.items[frame.items.len - 4 ..][0..4], std.hash.Crc32.hash(frame.items[0 .. frame.items.len - 4]), .big);
    var d = Decoder.init(gpa);
    defer d.deinit();
    try d.push(frame.items);
    try testing.expectError(error.BadHeader, d.next());
}

test "eventstream: a body that ends inside a message is truncated" {
    var buf: [python_frame_hex.len / 2]u8 = undefined;
    const frame = pythonFrame(&buf);
    var d = Decoder.init(testing.allocator);
    defer d.deinit();
    try d.push(frame);
    try d.push(frame[0 .. frame.len - 1]);
    try testing.expect(try d.next() != null);
    try testing.expectEqual(null, try d.next());
    try testing.expectError(error.Truncated, d.finish());
}
