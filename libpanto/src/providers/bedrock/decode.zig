//! Bedrock: the decoding of ConverseStream's events, one event-stream message each
//! (eventstream.zig), handed over as an `sse.Event` whose type is the message's event type
//! (or exception type) and whose data is its JSON payload. docs/design/bedrock.md, "The events".
//!
//! Blocks are keyed by `contentBlockIndex`. As recorded streams show, `messageStart` may be
//! missing and a text block may have no start or stop event (a delta starts it, the next
//! block or the message's end completes it); `metadata` (usage) may come after
//! `messageStop`, so the message ends at the body's end, once `messageStop` came.
const std = @import("std");
const Allocator = std.mem.Allocator;
const assembly = @import("../../assembly.zig");
const Assembly = assembly.Assembly;
const errors = @import("../../errors.zig");
const sse = @import("../../sse.zig");
const BlockKind = @import("../../event.zig").BlockKind;
const StopReason = @import("../../event.zig").StopReason;

const BlockStart = struct {
    contentBlockIndex: u32 = 0,
    start: ?struct {
        toolUse: ?struct { toolUseId: []const u8 = "", name: []const u8 = "" } = null,
    } = null,
};

const BlockDelta = struct {
    contentBlockIndex: u32 = 0,
    delta: ?struct {
        text: ?[]const u8 = null,
        toolUse: ?struct { input: []const u8 = "" } = null,
        reasoningContent: ?struct {
            text: ?[]const u8 = null,
            signature: ?[]const u8 = null,
            redactedContent: ?[]const u8 = null,
        } = null,
    } = null,
};

const BlockStop = struct { contentBlockIndex: u32 = 0 };

const MessageStop = struct { stopReason: []const u8 = "" };

const Metadata = struct {
    usage: ?struct {
        inputTokens: u64 = 0,
        outputTokens: u64 = 0,
        cacheReadInputTokens: u64 = 0,
        cacheWriteInputTokens: u64 = 0,
    } = null,
};

const Exception = struct { message: []const u8 = "" };

pub const Decoder = struct {
    /// `messageStop` came: the message ends with the body.
    stopped: bool = false,
    /// The message had a tool call.
    calls: bool = false,

    pub fn handle(d: *Decoder, a: *Assembly, arena: Allocator, event: sse.Event, detail: *errors.Detail) errors.TurnError!void {
        if (std.mem.endsWith(u8, event.type, "Exception")) {
            const e = try parse(Exception, a, arena, event.data, detail);
            detail.set(a.gpa, 0, event.type, e.message);
            return errors.fromErrorType(errorType(event.type));
        }
        if (!a.started) try a.startMessage("", "");
        if (std.mem.eql(u8, event.type, "contentBlockStart")) {
            const e = try parse(BlockStart, a, arena, event.data, detail);
            const call = (e.start orelse return).toolUse orelse return;
            try a.completeOpenBlocks(); // blocks never interleave
            d.calls = true;
            _ = try a.startToolBlock(e.contentBlockIndex, call.toolUseId, call.name);
        } else if (std.mem.eql(u8, event.type, "contentBlockDelta")) {
            const e = try parse(BlockDelta, a, arena, event.data, detail);
            const delta = e.delta orelse return;
            const index = e.contentBlockIndex;
            if (delta.text) |text| return a.appendDelta(try block(a, index, .text), text);
            if (delta.toolUse) |t| {
                const b = a.findOpen(index) orelse return protocol(a, detail, "a toolUse delta for a block that is not an open tool call");
                if (b.kind != .tool_call) return protocol(a, detail, "a toolUse delta for a block that is not an open tool call");
                return a.appendDelta(b, t.input);
            }
            if (delta.reasoningContent) |r| {
                if (r.redactedContent) |data| return a.appendDelta(try block(a, index, .redacted_thinking), data);
                const b = try block(a, index, .thinking);
                if (r.text) |text| try a.appendDelta(b, text);
                if (r.signature) |sig| try b.signature.appendSlice(a.gpa, sig);
            }
        } else if (std.mem.eql(u8, event.type, "contentBlockStop")) {
            const e = try parse(BlockStop, a, arena, event.data, detail);
            if (a.findOpen(e.contentBlockIndex)) |b| try a.completeBlock(b);
        } else if (std.mem.eql(u8, event.type, "messageStop")) {
            const e = try parse(MessageStop, a, arena, event.data, detail);
            d.stopped = true;
            try a.setStopReason(e.stopReason);
            a.stop_override = stopReason(e.stopReason);
        } else if (std.mem.eql(u8, event.type, "metadata")) {
            const e = try parse(Metadata, a, arena, event.data, detail);
            if (e.usage) |u| {
                // inputTokens counts neither cache reads nor writes (as Anthropic's input_tokens).
                a.usage.input_tokens = u.inputTokens;
                a.usage.output_tokens = u.outputTokens;
                a.usage.cache_read_tokens = u.cacheReadInputTokens;
                a.usage.cache_write_tokens = u.cacheWriteInputTokens;
            }
        }
        // messageStart (its role is always assistant) and event types added later: nothing.
    }

    /// The body ended: the message is complete when `messageStop` came, else cut short.
    pub fn finish(d: *Decoder, a: *Assembly, detail: *errors.Detail) errors.TurnError!void {
        if (!d.stopped) return protocol(a, detail, "the Bedrock stream ended before messageStop");
        // A model that called a tool but ended with end_turn: the calls must still be run.
        if (d.calls and a.stop_override.? == .end_turn) a.stop_override = .tool_use;
        try a.completeMessage();
    }
};

/// The open block with this index and kind, or a new one (completing the others: a text
/// block may have had no stop event).
fn block(a: *Assembly, index: u32, kind: BlockKind) Allocator.Error!*assembly.Block {
    if (a.findOpen(index)) |b| if (b.kind == kind) return b;
    try a.completeOpenBlocks();
    return a.startBlock(index, kind);
}

fn parse(comptime T: type, a: *Assembly, arena: Allocator, data: []const u8, detail: *errors.Detail) errors.TurnError!T {
    // Strings copied: `data` lives in the frame decoder's buffer, which the next read reuses.
    return std.json.parseFromSliceLeaky(T, arena, data, .{ .ignore_unknown_fields = true, .allocate = .alloc_always }) catch |err| switch (err) {
        error.OutOfMemory => error.OutOfMemory,
        else => protocol(a, detail, "an event of the Bedrock stream is not the JSON expected"),
    };
}

/// ConverseStream's stopReason as panto's: guardrails and content filters are a content
/// filter; values added later are `other`. end_turn after a call is tool_use (finish).
pub fn stopReason(reason: []const u8) StopReason {
    const table = [_]struct { []const u8, StopReason }{
        .{ "end_turn", .end_turn },
        .{ "tool_use", .tool_use },
        .{ "max_tokens", .max_tokens },
        .{ "stop_sequence", .stop_sequence },
        .{ "guardrail_intervened", .content_filter },
        .{ "content_filtered", .content_filter },
    };
    for (table) |entry| if (std.mem.eql(u8, entry[0], reason)) return entry[1];
    return .other;
}

/// ConverseStream's exception events as the error types errors.zig maps; the model's own
/// stream errors and internal errors are server errors (retried while nothing was handed out).
pub fn errorType(exception: []const u8) []const u8 {
    const table = [_]struct { []const u8, []const u8 }{
        .{ "throttlingException", "rate_limit_error" },
        .{ "serviceUnavailableException", "overloaded_error" },
        .{ "validationException", "invalid_request_error" },
    };
    for (table) |entry| if (std.mem.eql(u8, entry[0], exception)) return entry[1];
    return exception;
}

fn protocol(a: *Assembly, detail: *errors.Detail, message: []const u8) errors.TurnError {
    detail.set(a.gpa, 0, "protocol_error", message);
    return error.Protocol;
}
