//! A Server-Sent Events parser following the WHATWG event-stream rules: LF, CRLF and CR line
//! ends; comments; multi-line `data`; any split across network reads.
//!
//! It pulls bytes from a source that has `buffered() []u8`, `toss(n)` and `fillMore() !void`
//! (a `*std.Io.Reader` has all three, and its `buffer`, which this reads more into; another
//! source tells its buffer's size with `capacity()`), so each `next()` reads just enough for
//! one event. An event whole in the source's buffer is handed out as slices of it, without a
//! copy (the common case, recognized in one pass when it is a plain `event:`/`data:` pair);
//! otherwise lines are parsed in place and only a line cut by a read is copied. Buffers are
//! reused, so a warmed-up parser allocates nothing per event.
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
    /// The source said EndOfStream: it is not asked again.
    ended: bool = false,

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
        clear(&p.data);
        clear(&p.event_type);
        if (try p.nextInBuffer(source)) |event| return event;
        clear(&p.data);
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
            const field, const value = splitField(line);
            if (field == .data) {
                if (p.data.items.len + value.len + 1 > p.max_event_bytes) return error.EventTooLarge;
                if (has_data) try p.data.append(p.gpa, '\n');
                try p.data.appendSlice(p.gpa, value);
                has_data = true;
            } else if (field == .event) {
                p.event_type.clearRetainingCapacity();
                try p.event_type.appendSlice(p.gpa, value);
            }
            // `id` and `retry` matter only to reconnecting browsers; other fields are ignored.
        }
    }

    /// The common case, without copying: the whole event is in the source's buffer (reading
    /// more into it while it has room), and its type and data are handed out as slices of it,
    /// valid until the next call reads again. Only data of several lines is joined in `data`.
    /// Null leaves the event to the line-by-line path (nothing consumed but a LF owed to a CR):
    /// events larger than the buffer, the end of the stream, events over the size limit.
    fn nextInBuffer(p: *Parser, source: anytype) (Error || FillError(@TypeOf(source)))!?Event {
        while (true) {
            const bytes = p.buffered(source);
            switch (try p.eventIn(bytes)) {
                .found => |found| {
                    source.toss(found.len);
                    p.skip_lf = found.skip_lf;
                    return found.event;
                },
                .too_large => return null,
                .incomplete => {
                    if (p.ended or p.skip_lf or bytes.len >= bufferCapacity(source)) return null;
                    source.fillMore() catch |err| switch (err) {
                        error.EndOfStream => {
                            p.ended = true;
                            return null;
                        },
                        else => |e| return e,
                    };
                },
            }
        }
    }

    const Scan = union(enum) {
        found: struct { event: Event, len: usize, skip_lf: bool },
        /// The bytes end before the event does.
        incomplete,
        /// The event is over the limit: the line path reports it.
        too_large,
    };

    /// Looks for the first complete event in `bytes`, as the line path would parse it.
    fn eventIn(p: *Parser, bytes: []const u8) Error!Scan {
        if (plainEventIn(p, bytes)) |found| return found;
        var pos: usize = 0;
        var event_type: []const u8 = "";
        var data: ?[]const u8 = null;
        var joined = false;
        while (true) {
            const rest = bytes[pos..];
            const end = lineEnd(rest) orelse return .incomplete;
            const line = rest[0..end];
            if (line.len > p.max_event_bytes) return .too_large;
            pos += end + 1;
            var skip_lf = false;
            if (rest[end] == '\r') {
                if (pos == bytes.len) {
                    skip_lf = true; // its LF, if any, is not read yet
                } else if (bytes[pos] == '\n') pos += 1;
            }
            if (line.len == 0) {
                if (data) |d| return .{ .found = .{
                    .event = .{ .type = if (event_type.len == 0) "message" else event_type, .data = d },
                    .len = pos,
                    .skip_lf = skip_lf,
                } };
                event_type = ""; // an event without data is not dispatched
            }
            if (skip_lf) return .incomplete; // the event goes on past the bytes
            if (line.len == 0 or line[0] == ':') continue; // a blank line, or a comment
            const field, const value = splitField(line);
            if (field == .data) {
                if (data) |so_far| {
                    // Several data lines: joined in `data`, as the line path does.
                    if (so_far.len + value.len + 1 > p.max_event_bytes) return .too_large;
                    if (!joined) {
                        p.data.clearRetainingCapacity();
                        try p.data.appendSlice(p.gpa, so_far);
                        joined = true;
                    }
                    try p.data.append(p.gpa, '\n');
                    try p.data.appendSlice(p.gpa, value);
                    data = p.data.items;
                } else {
                    if (value.len + 1 > p.max_event_bytes) return .too_large;
                    data = value;
                }
            } else if (field == .event) {
                event_type = value;
            }
        }
    }

    /// The source's buffered bytes start where the next event does: a reader that knows the
    /// event there may take it from them (and toss it) instead of calling `next`.
    pub fn atEventStart(p: *const Parser) bool {
        return !p.skip_lf;
    }

    /// The source's buffered bytes, past the LF owed to a CR that ended the last read.
    fn buffered(p: *Parser, source: anytype) []u8 {
        const bytes = source.buffered();
        if (!p.skip_lf or bytes.len == 0) return bytes;
        p.skip_lf = false;
        if (bytes[0] != '\n') return bytes;
        source.toss(1);
        return bytes[1..];
    }

    /// Returns the next line without its line end, or null at the end of the stream.
    fn nextLine(p: *Parser, source: anytype) (Error || FillError(@TypeOf(source)))!?[]const u8 {
        p.partial_line.clearRetainingCapacity();
        while (true) {
            const bytes = p.buffered(source);
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
            if (p.ended) return null;
            source.fillMore() catch |err| switch (err) {
                error.EndOfStream => {
                    p.ended = true;
                    return null;
                },
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


/// Empties a list; most are empty already, and then this skips clearRetainingCapacity's
/// memset of safe builds (a call per event).
fn clear(list: *std.ArrayList(u8)) void {
    if (list.items.len > 0) list.clearRetainingCapacity();
}

/// The event of nearly every stream, `event: TYPE` (or none), `data: DATA`, a blank line,
/// all ended by LF, recognized in one pass; null for anything else (eventIn reads it).
inline fn plainEventIn(p: *const Parser, bytes: []const u8) ?Parser.Scan {
    var pos: usize = 0;
    var event_type: []const u8 = "";
    if (bytes.len >= 6 and std.mem.readInt(u32, bytes[0..4], .little) == std.mem.readInt(u32, "even", .little) and bytes[4] == 't' and bytes[5] == ':') {
        const end = lineEnd(bytes) orelse return null;
        if (bytes[end] != '\n') return null;
        event_type = dropSpace(bytes[6..end]);
        pos = end + 1;
    }
    const rest = bytes[pos..];
    if (rest.len < 5 or std.mem.readInt(u32, rest[0..4], .little) != std.mem.readInt(u32, "data", .little) or rest[4] != ':') return null;
    const end = lineEnd(rest) orelse return null;
    if (rest[end] != '\n' or end + 1 >= rest.len or rest[end + 1] != '\n') return null;
    const data = dropSpace(rest[5..end]);
    if (pos > p.max_event_bytes or end > p.max_event_bytes or data.len + 1 > p.max_event_bytes) return null;
    return .{ .found = .{
        .event = .{ .type = if (event_type.len == 0) "message" else event_type, .data = data },
        .len = pos + end + 2,
        .skip_lf = false,
    } };
}

const Field = enum { data, event, other };

/// A line's field and value: `field: value` (one space after the colon dropped), or a field
/// name alone. `id`, `retry` and unknown fields are `other`: nothing here uses them.
inline fn splitField(line: []const u8) struct { Field, []const u8 } {
    // data and event, nearly every line, are known by their first bytes.
    if (line.len >= 5 and std.mem.readInt(u32, line[0..4], .little) == std.mem.readInt(u32, "data", .little) and line[4] == ':')
        return .{ .data, dropSpace(line[5..]) };
    if (line.len >= 6 and std.mem.readInt(u32, line[0..4], .little) == std.mem.readInt(u32, "even", .little) and line[4] == 't' and line[5] == ':')
        return .{ .event, dropSpace(line[6..]) };
    const colon = std.mem.indexOfScalar(u8, line, ':') orelse line.len;
    const field: Field = if (std.mem.eql(u8, line[0..colon], "data"))
        .data
    else if (std.mem.eql(u8, line[0..colon], "event")) .event else .other;
    return .{ field, if (colon == line.len) "" else dropSpace(line[colon + 1 ..]) };
}

inline fn dropSpace(value: []const u8) []const u8 {
    return if (value.len > 0 and value[0] == ' ') value[1..] else value;
}

/// The index of the first CR or LF, found 32 bytes at a time.
fn lineEnd(bytes: []const u8) ?usize {
    const V = @Vector(32, u8);
    var i: usize = 0;
    while (i + 32 <= bytes.len) : (i += 32) {
        const v: V = bytes[i..][0..32].*;
        const lf: u32 = @bitCast(v == @as(V, @splat('\n')));
        const cr: u32 = @bitCast(v == @as(V, @splat('\r')));
        if (lf | cr != 0) return i + @ctz(lf | cr);
    }
    while (i < bytes.len) : (i += 1) {
        if (bytes[i] == '\n' or bytes[i] == '\r') return i;
    }
    return null;
}

/// How many bytes the source's buffer holds at most (its `capacity()`, or a `*std.Io.Reader`'s
/// buffer), or 0 for a source that cannot be asked to read more in place. It may grow as the
/// source reads (stream's Body), so ask again after each read.
fn bufferCapacity(source: anytype) usize {
    const Child = @typeInfo(@TypeOf(source)).pointer.child;
    if (@hasDecl(Child, "capacity")) return source.capacity();
    if (@hasField(Child, "buffer")) return source.buffer.len;
    return 0;
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
        try expectParsed(&source, expected);
        // A real reader too, whose buffer the parser reads more into: buffers smaller than an
        // event (the line path), just large enough, and roomy.
        for ([_]usize{ 1, 5, 16, 64, 4096 }) |buffer_len| {
            var buffer: [4096]u8 = undefined;
            var reader: std.testing.Reader = .init(buffer[0..buffer_len], &.{.{ .buffer = input }});
            reader.artificial_limit = .limited(step);
            try expectParsed(&reader.interface, expected);
        }
    }
}

fn expectParsed(source: anytype, expected: []const Event) !void {
    var parser = Parser.init(std.testing.allocator);
    defer parser.deinit();
    for (expected) |want| {
        const got = (try parser.next(source)) orelse return error.TestUnexpectedEnd;
        try std.testing.expectEqualStrings(want.type, got.type);
        try std.testing.expectEqualStrings(want.data, got.data);
    }
    try std.testing.expectEqual(null, try parser.next(source));
    try std.testing.expectEqual(null, try parser.next(source)); // and again: the end is sticky
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
    const input = "data: 0123456789\n\n";
    var source: TrickleSource = .{ .bytes = input, .step = 4 };
    var parser = Parser.init(std.testing.allocator);
    parser.max_event_bytes = 8;
    defer parser.deinit();
    try std.testing.expectError(error.EventTooLarge, parser.next(&source));

    var buffer: [64]u8 = undefined;
    var reader: std.testing.Reader = .init(&buffer, &.{.{ .buffer = input }});
    var in_buffer = Parser.init(std.testing.allocator);
    in_buffer.max_event_bytes = 8;
    defer in_buffer.deinit();
    try std.testing.expectError(error.EventTooLarge, in_buffer.next(&reader.interface));
}

test "random streams parse the same whole, in a buffer, and line by line" {
    const pieces = [_][]const u8{ "data: x", "data: {\"a\": 1}", "data:", "data", "event: t", "event:", ": ping", "id: 7", "", "", "" };
    const ends = [_][]const u8{ "\n", "\n", "\n", "\r\n", "\r" };
    var prng = std.Random.DefaultPrng.init(0x5e5e);
    const random = prng.random();
    var input: std.ArrayList(u8) = .empty;
    defer input.deinit(std.testing.allocator);
    var want: std.ArrayList(Event) = .empty;
    defer want.deinit(std.testing.allocator);
    var arena: std.heap.ArenaAllocator = .init(std.testing.allocator);
    defer arena.deinit();
    for (0..300) |_| {
        input.clearRetainingCapacity();
        want.clearRetainingCapacity();
        _ = arena.reset(.retain_capacity);
        for (0..random.uintLessThan(usize, 30)) |_| {
            try input.appendSlice(std.testing.allocator, pieces[random.uintLessThan(usize, pieces.len)]);
            try input.appendSlice(std.testing.allocator, ends[random.uintLessThan(usize, ends.len)]);
        }
        // One byte at a time, the parser can only go line by line: the reference.
        var reference: TrickleSource = .{ .bytes = input.items, .step = 1 };
        var parser = Parser.init(std.testing.allocator);
        defer parser.deinit();
        while (try parser.next(&reference)) |e| try want.append(std.testing.allocator, .{
            .type = try arena.allocator().dupe(u8, e.type),
            .data = try arena.allocator().dupe(u8, e.data),
        });
        for ([_]usize{ 8, 32, 4096 }) |buffer_len| {
            var buffer: [4096]u8 = undefined;
            var reader: std.testing.Reader = .init(buffer[0..buffer_len], &.{.{ .buffer = input.items }});
            reader.artificial_limit = .limited(1 + random.uintLessThan(usize, 64));
            try expectParsed(&reader.interface, want.items);
        }
        var whole: TrickleSource = .{ .bytes = input.items, .step = input.items.len + 1 };
        try expectParsed(&whole, want.items);
    }
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
