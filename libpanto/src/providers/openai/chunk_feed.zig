//! The OpenAI decode tests' way to give the decoder one chunk as the stream does: as received
//! bytes to the hot path first (`hotQueued`), else as the SSE parser's event (`handle`).
//! Test-only.
const std = @import("std");
const openai = @import("decode.zig");
const Assembly = @import("../../assembly.zig").Assembly;
const errors = @import("../../errors.zig");

/// `data`, one SSE event's data; `from_bytes` false skips the hot path. The arena holds the
/// framed bytes and what the decoder keeps of them until the caller resets it.
pub fn feed(d: *openai.Decoder, a: *Assembly, arena: std.mem.Allocator, data: []const u8, from_bytes: bool, detail: *errors.Detail) !void {
    if (from_bytes) {
        const framed = try std.fmt.allocPrint(arena, "data: {s}\n\n", .{data});
        if (try d.hotQueued(a, arena, framed) != null) return;
    }
    try d.handle(a, arena, .{ .type = "message", .data = data }, detail);
}
