//! The decode tests' transcript of an SSE byte stream (frames of `event:` and `data:` lines, as
//! Gemini and the Responses API send them): the events a decoder made of it, one line each,
//! then the blocks' signatures. Test-only.
const std = @import("std");
const sse = @import("../sse.zig");
const Assembly = @import("../assembly.zig").Assembly;
const errors = @import("../errors.zig");

/// The transcript of `bytes` through a `Decoder` (one with `handle` and `finish`); the caller
/// frees it.
pub fn transcript(comptime Decoder: type, bytes: []const u8) ![]u8 {
    const gpa = std.testing.allocator;
    var out: std.Io.Writer.Allocating = .init(gpa);
    errdefer out.deinit();
    var arena: std.heap.ArenaAllocator = .init(gpa);
    defer arena.deinit();
    var a = Assembly.init(gpa);
    defer a.deinit();
    var detail: errors.Detail = .{};
    defer detail.deinit(gpa);
    var d: Decoder = .{};
    var frames = std.mem.splitSequence(u8, bytes, "\n\n");
    while (frames.next()) |frame| {
        if (frame.len == 0) continue;
        var event: sse.Event = .{ .type = "message", .data = "" };
        var fields = std.mem.splitScalar(u8, frame, '\n');
        while (fields.next()) |line| {
            if (std.mem.startsWith(u8, line, "event: ")) event.type = line["event: ".len..];
            if (std.mem.startsWith(u8, line, "data: ")) event.data = line["data: ".len..];
        }
        d.handle(&a, arena.allocator(), event, &detail) catch |err| {
            try out.writer.print("error {s} {s}: {s}\n", .{ @errorName(err), detail.error_type.items, detail.message.items });
            return out.toOwnedSlice();
        };
        try render(&a, &out.writer);
    }
    d.finish(&a, &detail) catch |err| try out.writer.print("error {s}: {s}\n", .{ @errorName(err), detail.message.items });
    try render(&a, &out.writer);
    for (a.blocksSoFar()) |b| if (b.signature.items.len > 0) try out.writer.print("signature {d} {s}\n", .{ b.index, b.signature.items });
    return out.toOwnedSlice();
}

pub fn expectTranscript(comptime Decoder: type, bytes: []const u8, expected: []const u8) !void {
    const got = try transcript(Decoder, bytes);
    defer std.testing.allocator.free(got);
    try std.testing.expectEqualStrings(expected, got);
}

fn render(a: *Assembly, w: *std.Io.Writer) !void {
    while (a.pop()) |e| switch (e) {
        .message_start => |m| try w.print("start {s} {s}\n", .{ m.id, m.model }),
        .block_start => |b| try w.print("block {d} {t}\n", .{ b.index, b.kind }),
        .tool_details => |t| try w.print("details {d} {s} {s}\n", .{ t.index, t.id, t.name }),
        .content_delta => |c| try w.print("delta {d} {s}\n", .{ c.index, c.text }),
        .block_complete => |c| try w.print("complete {d} {s}\n", .{ c.index, c.text }),
        .message_end => |m| try w.print("end {t} {s} in={d} out={d} cached={d} reasoning={d}\n", .{ m.stop_reason, m.provider_stop_reason, m.usage.input_tokens, m.usage.output_tokens, m.usage.cache_read_tokens, m.usage.reasoning_tokens }),
        else => try w.print("{t}\n", .{e}),
    };
}
