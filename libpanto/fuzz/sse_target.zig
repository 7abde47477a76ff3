//! Fuzz target `sse`: any bytes through the SSE parser, read three ways that must agree: a
//! byte at a time into a small buffer (the line-by-line path), as much as fits at a time into
//! a large buffer (the in-buffer paths), and in reads of a few bytes into a mid-sized buffer
//! (both, switching).
const std = @import("std");
const Allocator = std.mem.Allocator;
const sse = @import("../src/sse.zig");
const StepReader = @import("../src/body.zig").StepReader;
const Context = @import("context.zig").Context;

/// Small enough that fuzzed inputs reach it (events and lines over it are refused). No buffer
/// below is larger, as in a stream (32 MiB against at most 256 KiB): a line whole in a buffer
/// is not measured against the limit, only one cut by a read.
const max_event_bytes = 4096;

pub fn run(ctx: Context, input: []const u8) !void {
    const gpa = ctx.gpa;
    const hash = std.hash.Wyhash.hash(0, input);
    const ways = [_]struct { step: usize, buffer_len: usize }{
        .{ .step = 1, .buffer_len = 8 },
        .{ .step = input.len, .buffer_len = max_event_bytes },
        .{ .step = 1 + hash % 13, .buffer_len = 16 + (hash >> 8) % 600 },
    };
    var reference: std.ArrayList(u8) = .empty;
    defer reference.deinit(gpa);
    var other: std.ArrayList(u8) = .empty;
    defer other.deinit(gpa);
    for (ways, 0..) |way, i| {
        const out = if (i == 0) &reference else &other;
        out.clearRetainingCapacity();
        const buffer = try gpa.alloc(u8, way.buffer_len);
        defer gpa.free(buffer);
        var source: StepReader = .init(input, @max(way.step, 1));
        source.interface.buffer = buffer;
        try parseAll(gpa, &source.interface, out);
        if (i > 0 and !std.mem.eql(u8, reference.items, other.items)) std.debug.panic(
            "the SSE parser read differently in reads of {d} bytes into {d}:\n--- byte by byte:\n{s}\n--- this way:\n{s}",
            .{ way.step, way.buffer_len, reference.items, other.items },
        );
    }
}

/// Parses to the end, writing each event (and a refusal) to `out`.
fn parseAll(gpa: Allocator, source: *std.Io.Reader, out: *std.ArrayList(u8)) !void {
    var parser = sse.Parser.init(gpa);
    defer parser.deinit();
    parser.max_event_bytes = max_event_bytes;
    while (true) {
        const event = parser.next(source) catch |err| switch (err) {
            error.EventTooLarge => return out.appendSlice(gpa, "<too large>"),
            else => |e| return e,
        };
        const e = event orelse break;
        if (e.data.len + 1 > max_event_bytes) std.debug.panic("an event of {d} bytes passed the limit of {d}", .{ e.data.len, max_event_bytes });
        try out.print(gpa, "[{d}:{s}][{d}:{s}]\n", .{ e.type.len, e.type, e.data.len, e.data });
    }
    // The end is sticky.
    if (try parser.next(source) != null) @panic("the SSE parser gave an event after the end");
}
