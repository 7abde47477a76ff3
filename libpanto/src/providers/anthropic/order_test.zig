//! The Anthropic decoder keeps panto's event order whatever a server sends: one message_start
//! first, blocks that never interleave. A stream that breaks the order is a protocol error
//! (found by `make fuzz FUZZ_STRICT=1`).
const std = @import("std");
const anthropic = @import("decode.zig");
const Assembly = @import("../../assembly.zig").Assembly;
const errors = @import("../../errors.zig");

/// Decodes the events' data in order; returns the protocol error's message, or "" when the
/// stream was accepted whole.
fn decode(events: []const []const u8) ![]const u8 {
    const gpa = std.testing.allocator;
    var arena: std.heap.ArenaAllocator = .init(gpa);
    defer arena.deinit();
    var a = Assembly.init(gpa);
    defer a.deinit();
    var detail: errors.Detail = .{};
    defer detail.deinit(gpa);
    var d: anthropic.Decoder = .{};
    for (events) |data| {
        d.handle(&a, arena.allocator(), .{ .type = "message", .data = data }, &detail) catch |err| {
            try std.testing.expectEqual(error.Protocol, err);
            return messages.put(detail.message.items);
        };
        while (a.pop()) |_| {}
    }
    return "";
}

/// Keeps a copy of the last message past the decoder's lifetime.
const messages = struct {
    var buf: [256]u8 = undefined;
    fn put(m: []const u8) []const u8 {
        const n = @min(m.len, buf.len);
        @memcpy(buf[0..n], m[0..n]);
        return buf[0..n];
    }
};

const start = "{\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"model\":\"claude\"}}";
const text_start = "{\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}";
const text_start_1 = "{\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}";
const delta = "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hi\"}}";
const stop_0 = "{\"type\":\"content_block_stop\",\"index\":0}";
const message_stop = "{\"type\":\"message_stop\"}";
const ping = "{\"type\":\"ping\"}";

test "a well-ordered stream is accepted, pings before message_start included" {
    try std.testing.expectEqualStrings("", try decode(&.{ ping, start, text_start, delta, stop_0, text_start_1, message_stop }));
}

test "a second message_start in one message is a protocol error" {
    try std.testing.expectEqualStrings("a second message_start in one message", try decode(&.{ start, text_start, start }));
}

test "a block that starts while another is open is a protocol error: blocks never interleave" {
    try std.testing.expectEqualStrings("content_block_start while another block is open", try decode(&.{ start, text_start, text_start_1 }));
}

test "message content before message_start is a protocol error" {
    try std.testing.expectEqualStrings("content_block_start before message_start", try decode(&.{ text_start, delta }));
    try std.testing.expectEqualStrings("message_stop before message_start", try decode(&.{message_stop}));
    try std.testing.expectEqualStrings("message_delta before message_start", try decode(&.{"{\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"}}"}));
}
