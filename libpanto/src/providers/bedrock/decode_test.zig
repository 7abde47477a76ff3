//! The Bedrock decoder on byte streams as ConverseStream frames them (event-stream messages
//! fed to eventstream.zig in small pieces): text without start or stop events, reasoning with
//! its signature then a tool call, usage after messageStop, exceptions, a body cut short.
const std = @import("std");
const bedrock = @import("decode.zig");
const eventstream = @import("eventstream.zig");
const encode = @import("eventstream_test.zig").encode;
const sse = @import("../../sse.zig");
const Assembly = @import("../../assembly.zig").Assembly;
const errors = @import("../../errors.zig");

const Frame = struct { []const u8, []const u8 };

/// The body: one event frame per (type, payload), an exception frame for a type ending in
/// "Exception"; `cut` bytes are left off its end.
fn body(gpa: std.mem.Allocator, frames: []const Frame, cut: usize) !std.ArrayList(u8) {
    var out: std.ArrayList(u8) = .empty;
    errdefer out.deinit(gpa);
    for (frames) |f| {
        if (std.mem.endsWith(u8, f[0], "Exception")) {
            try encode(gpa, &out, &.{ .{ ":message-type", "exception" }, .{ ":exception-type", f[0] }, .{ ":content-type", "application/json" } }, f[1]);
        } else {
            try encode(gpa, &out, &.{ .{ ":event-type", f[0] }, .{ ":content-type", "application/json" }, .{ ":message-type", "event" } }, f[1]);
        }
    }
    out.shrinkRetainingCapacity(out.items.len - cut);
    return out;
}

/// The events of the frames, one line each, and the blocks' signatures; the body is fed to
/// the frame decoder 7 bytes at a time.
fn transcript(frames: []const Frame, cut: usize) ![]u8 {
    const gpa = std.testing.allocator;
    var bytes = try body(gpa, frames, cut);
    defer bytes.deinit(gpa);
    var out: std.Io.Writer.Allocating = .init(gpa);
    errdefer out.deinit();
    var arena: std.heap.ArenaAllocator = .init(gpa);
    defer arena.deinit();
    var a = Assembly.init(gpa);
    defer a.deinit();
    var detail: errors.Detail = .{};
    defer detail.deinit(gpa);
    var frames_in = eventstream.Decoder.init(gpa);
    defer frames_in.deinit();
    var d: bedrock.Decoder = .{};
    var at: usize = 0;
    while (at < bytes.items.len) {
        const end = @min(at + 7, bytes.items.len);
        try frames_in.push(bytes.items[at..end]);
        at = end;
        while (try frames_in.next()) |m| {
            d.handle(&a, arena.allocator(), .{ .type = m.type, .data = m.payload }, &detail) catch |err| {
                try render(&a, &out.writer);
                try out.writer.print("error {s} {s}: {s}\n", .{ @errorName(err), detail.error_type.items, detail.message.items });
                return out.toOwnedSlice();
            };
        }
    }
    frames_in.finish() catch |err| try out.writer.print("frames {s}\n", .{@errorName(err)});
    d.finish(&a, &detail) catch |err| try out.writer.print("error {s}: {s}\n", .{ @errorName(err), detail.message.items });
    try render(&a, &out.writer);
    for (a.blocksSoFar()) |b| if (b.signature.items.len > 0) try out.writer.print("signature {d} {s}\n", .{ b.index, b.signature.items });
    return out.toOwnedSlice();
}

fn render(a: *Assembly, w: *std.Io.Writer) !void {
    while (a.pop()) |e| switch (e) {
        .message_start => try w.print("start\n", .{}),
        .block_start => |b| try w.print("block {d} {t}\n", .{ b.index, b.kind }),
        .tool_details => |t| try w.print("details {d} {s} {s}\n", .{ t.index, t.id, t.name }),
        .content_delta => |c| try w.print("delta {d} {s}\n", .{ c.index, c.text }),
        .block_complete => |c| try w.print("complete {d} {s}\n", .{ c.index, c.text }),
        .message_end => |m| try w.print("end {t} {s} in={d} out={d} cache_read={d} cache_write={d}\n", .{ m.stop_reason, m.provider_stop_reason, m.usage.input_tokens, m.usage.output_tokens, m.usage.cache_read_tokens, m.usage.cache_write_tokens }),
        else => try w.print("{t}\n", .{e}),
    };
}

fn expectTranscript(frames: []const Frame, cut: usize, expected: []const u8) !void {
    const got = try transcript(frames, cut);
    defer std.testing.allocator.free(got);
    try std.testing.expectEqualStrings(expected, got);
}

test "bedrock: text with no messageStart nor block events, usage after messageStop" {
    try expectTranscript(&.{
        .{ "contentBlockDelta", "{\"contentBlockIndex\":0,\"delta\":{\"text\":\"Hel\"},\"p\":\"abcdefgh\"}" },
        .{ "contentBlockDelta", "{\"contentBlockIndex\":0,\"delta\":{\"text\":\"lo \\\"you\\\"\"},\"p\":\"ab\"}" },
        .{ "messageStop", "{\"stopReason\":\"end_turn\",\"p\":\"abcd\"}" },
        .{ "metadata", "{\"usage\":{\"inputTokens\":12,\"outputTokens\":3,\"totalTokens\":40,\"cacheReadInputTokens\":20,\"cacheWriteInputTokens\":5},\"metrics\":{\"latencyMs\":321},\"p\":\"a\"}" },
    }, 0,
        \\start
        \\block 0 text
        \\delta 0 Hel
        \\delta 0 lo "you"
        \\complete 0 Hello "you"
        \\end end_turn end_turn in=12 out=3 cache_read=20 cache_write=5
        \\
    );
}

test "bedrock: reasoning with an empty delta before its signature, then a tool call" {
    try expectTranscript(&.{
        .{ "messageStart", "{\"role\":\"assistant\"}" },
        .{ "contentBlockDelta", "{\"contentBlockIndex\":0,\"delta\":{\"reasoningContent\":{\"text\":\"Need the weather.\"}}}" },
        .{ "contentBlockDelta", "{\"contentBlockIndex\":0,\"delta\":{\"reasoningContent\":{\"text\":\"\"}}}" },
        .{ "contentBlockDelta", "{\"contentBlockIndex\":0,\"delta\":{\"reasoningContent\":{\"signature\":\"c2ln\"}}}" },
        .{ "contentBlockStop", "{\"contentBlockIndex\":0}" },
        .{ "contentBlockStart", "{\"contentBlockIndex\":1,\"start\":{\"toolUse\":{\"toolUseId\":\"tooluse_abc123\",\"name\":\"weather\"}}}" },
        .{ "contentBlockDelta", "{\"contentBlockIndex\":1,\"delta\":{\"toolUse\":{\"input\":\"{\\\"city\\\":\"}}}" },
        .{ "contentBlockDelta", "{\"contentBlockIndex\":1,\"delta\":{\"toolUse\":{\"input\":\"\\\"Paris\\\"}\"}}}" },
        .{ "contentBlockStop", "{\"contentBlockIndex\":1}" },
        .{ "contentBlockStart", "{\"contentBlockIndex\":2,\"start\":{\"toolUse\":{\"toolUseId\":\"tooluse_def456\",\"name\":\"clock\"}}}" },
        .{ "contentBlockDelta", "{\"contentBlockIndex\":2,\"delta\":{\"toolUse\":{\"input\":\"\"}}}" },
        .{ "contentBlockStop", "{\"contentBlockIndex\":2}" },
        .{ "metadata", "{\"usage\":{\"inputTokens\":50,\"outputTokens\":30}}" },
        .{ "messageStop", "{\"stopReason\":\"tool_use\"}" },
    }, 0,
        \\start
        \\block 0 thinking
        \\delta 0 Need the weather.
        \\complete 0 Need the weather.
        \\block 1 tool_call
        \\details 1 tooluse_abc123 weather
        \\delta 1 {"city":
        \\delta 1 "Paris"}
        \\complete 1 {"city":"Paris"}
        \\block 2 tool_call
        \\details 2 tooluse_def456 clock
        \\complete 2 {}
        \\end tool_use tool_use in=50 out=30 cache_read=0 cache_write=0
        \\signature 0 c2ln
        \\
    );
}

test "bedrock: redacted reasoning, and guardrail and unknown stop reasons" {
    try expectTranscript(&.{
        .{ "contentBlockDelta", "{\"contentBlockIndex\":0,\"delta\":{\"reasoningContent\":{\"redactedContent\":\"ZW5jcnlwdGVk\"}}}" },
        .{ "contentBlockDelta", "{\"contentBlockIndex\":1,\"delta\":{\"text\":\"I can\"}}" },
        .{ "messageStop", "{\"stopReason\":\"guardrail_intervened\"}" },
    }, 0,
        \\start
        \\block 0 redacted_thinking
        \\delta 0 ZW5jcnlwdGVk
        \\complete 0 ZW5jcnlwdGVk
        \\block 1 text
        \\delta 1 I can
        \\complete 1 I can
        \\end content_filter guardrail_intervened in=0 out=0 cache_read=0 cache_write=0
        \\
    );
    try expectTranscript(&.{.{ "messageStop", "{\"stopReason\":\"model_context_window_exceeded\"}" }}, 0,
        \\start
        \\end other model_context_window_exceeded in=0 out=0 cache_read=0 cache_write=0
        \\
    );
}

test "bedrock: exception frames are typed errors" {
    try expectTranscript(&.{
        .{ "messageStart", "{\"role\":\"assistant\"}" },
        .{ "throttlingException", "{\"message\":\"Too many requests, please wait before trying again.\"}" },
    }, 0,
        \\start
        \\error RateLimit throttlingException: Too many requests, please wait before trying again.
        \\
    );
    try expectTranscript(&.{.{ "modelStreamErrorException", "{\"message\":\"Model stream error\",\"originalStatusCode\":500}" }}, 0,
        \\error Server modelStreamErrorException: Model stream error
        \\
    );
    try expectTranscript(&.{.{ "validationException", "{\"message\":\"bad input\"}" }}, 0,
        \\error InvalidRequest validationException: bad input
        \\
    );
    try expectTranscript(&.{.{ "serviceUnavailableException", "{\"message\":\"later\"}" }}, 0,
        \\error Overloaded serviceUnavailableException: later
        \\
    );
}

test "bedrock: a body cut short, inside a frame or before messageStop, is a protocol error" {
    const frames = [_]Frame{
        .{ "contentBlockDelta", "{\"contentBlockIndex\":0,\"delta\":{\"text\":\"Hi\"}}" },
        .{ "messageStop", "{\"stopReason\":\"end_turn\"}" },
    };
    try expectTranscript(&frames, 3,
        \\frames Truncated
        \\error Protocol: the Bedrock stream ended before messageStop
        \\start
        \\block 0 text
        \\delta 0 Hi
        \\
    );
    try expectTranscript(frames[0..1], 0,
        \\error Protocol: the Bedrock stream ended before messageStop
        \\start
        \\block 0 text
        \\delta 0 Hi
        \\
    );
    try expectTranscript(&.{.{ "contentBlockDelta", "{\"contentBlockIndex\":0,\"delta\":{\"text\":" }}, 0,
        \\start
        \\error Protocol protocol_error: an event of the Bedrock stream is not the JSON expected
        \\
    );
}
