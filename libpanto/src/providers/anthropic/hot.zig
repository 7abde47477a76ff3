//! The Anthropic hot path: the text deltas that are nearly every event of a stream, read by
//! hand from the received bytes (one pass instead of the SSE parser's lines and fields, then
//! JSON). Anything else, or any doubt, answers null and takes the general decoding
//! (decode.zig), whose result for these events is the same (hot_shapes_test.zig checks).
const std = @import("std");
const Allocator = std.mem.Allocator;
const Assembly = @import("../../assembly.zig").Assembly;
const errors = @import("../../errors.zig");
const fast_json = @import("../../fast_json.zig");
const Event = @import("../../event.zig").Event;
const protocol = @import("decode.zig").protocol;

/// The block index and the text (or thinking, or tool input) of a hot delta.
pub const HotDelta = struct { index: u32, fragment: []const u8 };

/// Nearly every event of a stream is a content_block_delta the API writes exactly so:
///     {"type":"content_block_delta","index":N,"delta":{"type":"text_delta","text":"..."}}
/// (or thinking_delta/thinking, input_json_delta/partial_json), maybe padded with spaces
/// before its last braces. Recognized byte for byte, its text decoded as fast_json does; any
/// other event, or any difference, goes to the general decoding (null).
pub fn hotDelta(arena: Allocator, data: []const u8) Allocator.Error!?HotDelta {
    var s = fast_json.Shape.init(arena, data);
    const delta = try hotFields(&s, "") orelse return null;
    if (!s.token('}') or !s.token('}') or !s.end()) return null;
    return delta;
}

/// A hot delta's whole SSE event, framed as the API frames it,
///     event: content_block_delta\ndata: {hot delta}\n\n
/// read from the received bytes without the SSE parser: the same event, one pass instead of
/// three (lines, fields, JSON). `len` is how many bytes it took. Null for anything else,
/// including an event `bytes` does not hold whole: the SSE parser reads those.
pub fn hotEvent(arena: Allocator, bytes: []const u8) Allocator.Error!?struct { delta: HotDelta, len: usize } {
    var s = fast_json.Shape.init(arena, bytes);
    const delta = try hotFields(&s, "event: content_block_delta\ndata: ") orelse return null;
    // No padding here: whitespace could hide a line end, which the SSE parser would see.
    if (!s.literal("}}\n\n")) return null;
    return .{ .delta = delta, .len = s.position() };
}

/// A hot delta after `framing`, up to its text, which ends at its closing quote. No
/// whitespace between the tokens: a CR or LF there would end the SSE data line (hotEvent).
inline fn hotFields(s: *fast_json.Shape, comptime framing: []const u8) Allocator.Error!?HotDelta {
    if (!s.literal(framing ++ "{\"type\":\"content_block_delta\",\"index\":")) return null;
    // The index: nearly always one digit; else a plain integer, no whitespace before it.
    const index = s.digitBefore(',') orelse blk: {
        if (!s.nextIsDigit()) return null;
        break :blk s.integer(u32) orelse return null;
    };
    if (!s.literal(",\"delta\":{\"type\":\"")) return null;
    // text, thinking and tool input all add to their block alike (see applyDelta).
    if (!s.literal("text_delta\",\"text\":\"") and
        !s.literal("thinking_delta\",\"thinking\":\"") and
        !s.literal("input_json_delta\",\"partial_json\":\"")) return null;
    const fragment = try s.stringAfterQuote() orelse return null;
    return .{ .index = index, .fragment = fragment };
}

/// A hot delta's event, for a decoder that hands it out at once: the text added to its
/// block. Null when it makes no event (empty text).
pub inline fn hotDeltaEvent(a: *Assembly, detail: *errors.Detail, hot: HotDelta) errors.TurnError!?Event {
    const b = a.findOpen(hot.index) orelse return protocol(a, detail, "a delta for a block that is not open");
    if (hot.fragment.len == 0) return null;
    return try a.delta(b, hot.fragment);
}
