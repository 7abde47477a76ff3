//! A Server-Sent Events parser following the WHATWG event-stream rules: LF, CRLF and CR line
//! ends; comments; multi-line `data`; any split across network reads.
//!
//! It pulls bytes from a source that has `buffered() []u8`, `toss(n)` and `fillMore() !void`
//! (a `*std.Io.Reader` has all three), so each `next()` reads just enough for one event.
//! Complete lines inside the source's buffer are parsed in place; only a line cut by a read
//! is copied. Buffers are reused, so a warmed-up parser allocates nothing per event.
const std = @import("std");
const Allocator = std.mem.Allocator;

pub const Event = struct {
    /// The `event:` field, or "message" when the event had none.
    type: []const u8,
    /// The `data:` lines joined with "\n".
    data: []const u8,
};

pub const Error = error{ OutOfMemory, EventTooLarge };

pub const Parser = struct {
    gpa: Allocator,
    /// The largest event (all of its data lines) or line accepted, in bytes.
    max_event_bytes: usize = 32 * 1024 * 1024,
    /// The part of a line that arrived before the buffer ran out.
    partial_line: std.ArrayList(u8) = .empty,
    data: std.ArrayList(u8) = .empty,
    event_type: std.ArrayList(u8) = .empty,
    /// The last line ended in CR: a LF that starts the next read belongs to it.
    skip_lf: bool = false,

    pub fn init(gpa: Allocator) Parser {
        return .{ .gpa = gpa };
    }

    pub fn deinit(p: *Parser) void {
        p.partial_line.deinit(p.gpa);
        p.data.deinit(p.gpa);
        p.event_type.deinit(p.gpa);
    }

    /// Returns the next event, or null at the end of the stream (an event not closed by a
    /// blank line is dropped, as the standard says). The event is valid until the next call.
    pub fn next(p: *Parser, source: anytype) (Error || FillError(@TypeOf(source)))!?Event {
        // Start the new event afresh: the previous one's data was handed out already.
        p.data.clearRetainingCapacity();
        p.event_type.clearRetainingCapacity();
        var has_data = false;
        while (true) {
            const line = (try p.nextLine(source)) orelse return null;
            if (line.len == 0) {
                if (!has_data) {
                    p.event_type.clearRetainingCapacity();
                    continue;
                }
                return .{
                    .type = if (p.event_type.items.len == 0) "message" else p.event_type.items,
                    .data = p.data.items,
                };
            }
            if (line[0] == ':') continue; // a comment, e.g. a keep-alive
            const colon = std.mem.indexOfScalar(u8, line, ':');
            const field = if (colon) |c| line[0..c] else line;
            var value: []const u8 = if (colon) |c| line[c + 1 ..] else "";
            if (value.len > 0 and value[0] == ' ') value = value[1..];

            if (std.mem.eql(u8, field, "data")) {
                if (p.data.items.len + value.len + 1 > p.max_event_bytes) return error.EventTooLarge;
                if (has_data) try p.data.append(p.gpa, '\n');
                try p.data.appendSlice(p.gpa, value);
                has_data = true;
            } else if (std.mem.eql(u8, field, "event")) {
                p.event_type.clearRetainingCapacity();
                try p.event_type.appendSlice(p.gpa, value);
            }
            // `id` and `retry` matter only to reconnecting browsers; other fields are ignored.
        }
    }

    /// Returns the next line without its line end, or null at the end of the stream.
    fn nextLine(p: *Parser, source: anytype) (Error || FillError(@TypeOf(source)))!?[]const u8 {
        p.partial_line.clearRetainingCapacity();
        while (true) {
            var bytes = source.buffered();
            if (p.skip_lf and bytes.len > 0) {
                p.skip_lf = false;
                if (bytes[0] == '\n') {
                    source.toss(1);
                    bytes = bytes[1..];
                }
            }
            if (lineEnd(bytes)) |end| {
                source.toss(end + 1);
                p.skip_lf = bytes[end] == '\r';
                if (p.partial_line.items.len == 0) return bytes[0..end];
                if (p.partial_line.items.len + end > p.max_event_bytes) return error.EventTooLarge;
                try p.partial_line.appendSlice(p.gpa, bytes[0..end]);
                return p.partial_line.items;
            }
            if (p.partial_line.items.len + bytes.len > p.max_event_bytes) return error.EventTooLarge;
            try p.partial_line.appendSlice(p.gpa, bytes);
            source.toss(bytes.len);
            source.fillMore() catch |err| switch (err) {
                error.EndOfStream => return null,
                else => |e| return e,
            };
        }
    }
};

/// Whether `p.next(source)` would return an event from the bytes `source` already holds,
/// without reading more: they hold a blank line ending an event that has data. For reading
/// ahead without waiting on the network (Stream.peekBuffered). Changes neither the parser nor
/// the source; false when in doubt (a line the buffer cuts, an event without data so far).
pub fn hasBufferedEvent(p: *const Parser, source: anytype) bool {
    var bytes: []const u8 = source.buffered();
    if (p.skip_lf and bytes.len > 0 and bytes[0] == '\n') bytes = bytes[1..];
    var has_data = false;
    while (lineEnd(bytes)) |end| {
        const line = bytes[0..end];
        const crlf = bytes[end] == '\r' and end + 1 < bytes.len and bytes[end + 1] == '\n';
        bytes = bytes[end + @as(usize, if (crlf) 2 else 1) ..];
        if (line.len == 0) {
            if (has_data) return true;
            continue; // a blank line without data dispatches nothing
        }
        const field = line[0 .. std.mem.indexOfScalar(u8, line, ':') orelse line.len];
        if (std.mem.eql(u8, field, "data")) has_data = true;
    }
    return false;
}

/// The index of the first CR or LF. LF ends nearly every line, so it is found with the
/// vectorized scan and CR only looked for before it.
fn lineEnd(bytes: []const u8) ?usize {
    const lf = std.mem.indexOfScalar(u8, bytes, '\n');
    const cr = std.mem.indexOfScalar(u8, bytes[0 .. lf orelse bytes.len], '\r');
    return cr orelse lf;
}

fn FillError(comptime Source: type) type {
    const Child = @typeInfo(Source).pointer.child;
    const ret = @typeInfo(@TypeOf(Child.fillMore)).@"fn".return_type.?;
    return @typeInfo(ret).error_union.error_set;
}

/// A test source that hands out its bytes `step` at a time, like a slow network.
const TrickleSource = struct {
    bytes: []const u8,
    step: usize,
    start: usize = 0,
    end: usize = 0,

    fn buffered(s: *TrickleSource) []u8 {
        return @constCast(s.bytes[s.start..s.end]);
    }
    fn toss(s: *TrickleSource, n: usize) void {
        s.start += n;
    }
    fn fillMore(s: *TrickleSource) error{EndOfStream}!void {
        if (s.end == s.bytes.len) return error.EndOfStream;
        s.end = @min(s.bytes.len, s.end + s.step);
    }
};

fn expectEvents(input: []const u8, expected: []const Event) !void {
    var step: usize = 1;
    while (step <= input.len + 1) : (step += 1) {
        var source: TrickleSource = .{ .bytes = input, .step = step };
        var parser = Parser.init(std.testing.allocator);
        defer parser.deinit();
        for (expected) |want| {
            const got = (try parser.next(&source)) orelse return error.TestUnexpectedEnd;
            try std.testing.expectEqualStrings(want.type, got.type);
            try std.testing.expectEqualStrings(want.data, got.data);
        }
        try std.testing.expectEqual(null, try parser.next(&source));
    }
}

test "events with LF, CRLF and CR line ends, at every split" {
    try expectEvents("event: a\ndata: 1\n\ndata: 2\r\n\r\nevent: c\rdata: 3\r\r", &.{
        .{ .type = "a", .data = "1" },
        .{ .type = "message", .data = "2" },
        .{ .type = "c", .data = "3" },
    });
}

test "comments, multi-line data, fields without a space or value" {
    try expectEvents(": keep-alive\n\ndata:x\ndata\ndata: y\nid: 7\nretry: 10\n\n", &.{
        .{ .type = "message", .data = "x\n\ny" },
    });
}

test "an event without data is not dispatched and resets the type" {
    try expectEvents("event: ping\n\ndata: z\n\n", &.{.{ .type = "message", .data = "z" }});
}

test "an unterminated event at the end is dropped" {
    try expectEvents("data: a\n\ndata: cut", &.{.{ .type = "message", .data = "a" }});
}

test "a CR at the end of one read and LF at the start of the next is one line end" {
    try expectEvents("data: a\r\n\r\ndata: b\r\n\r\n", &.{
        .{ .type = "message", .data = "a" },
        .{ .type = "message", .data = "b" },
    });
}

test "an event larger than the limit is refused" {
    var source: TrickleSource = .{ .bytes = "data: 0123456789\n\n", .step = 4 };
    var parser = Parser.init(std.testing.allocator);
    parser.max_event_bytes = 8;
    defer parser.deinit();
    try std.testing.expectError(error.EventTooLarge, parser.next(&source));
}

/// A source holding only the bytes that arrived so far: reading more would wait.
const ArrivedSource = struct {
    bytes: []const u8,
    start: usize = 0,

    fn buffered(s: *ArrivedSource) []u8 {
        return @constCast(s.bytes[s.start..]);
    }
    fn toss(s: *ArrivedSource, n: usize) void {
        s.start += n;
    }
    fn fillMore(_: *ArrivedSource) error{ WouldBlock, EndOfStream }!void {
        return error.WouldBlock;
    }
};

test "hasBufferedEvent says exactly when next() needs no more bytes, at every split" {
    const input = "event: a\ndata: 1\n\n: c\n\nevent: p\n\ndata: 2\r\n\r\ndata:3\rdata\r\rdata: 4\r\n\r\n";
    for (0..input.len + 1) |arrived| {
        var source: ArrivedSource = .{ .bytes = input[0..arrived] };
        var parser = Parser.init(std.testing.allocator);
        defer parser.deinit();
        var events: usize = 0;
        while (true) {
            const ready = hasBufferedEvent(&parser, &source);
            const got = parser.next(&source) catch |err| {
                try std.testing.expectEqual(error.WouldBlock, err);
                try std.testing.expect(!ready);
                break;
            };
            try std.testing.expect(ready);
            try std.testing.expect(got != null);
            events += 1;
        }
        // Every event whose blank line arrived was found.
        const complete: usize = if (arrived >= 67) 4 else if (arrived >= 57) 3 else if (arrived >= 43) 2 else if (arrived >= 18) 1 else 0;
        try std.testing.expectEqual(complete, events);
    }
}
