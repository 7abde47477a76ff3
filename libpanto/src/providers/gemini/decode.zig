//! Gemini: the decoding of `streamGenerateContent?alt=sse`, one GenerateContentResponse per
//! data line. https://ai.google.dev/api/generate-content#method:-models.streamgeneratecontent
//! A chunk's parts continue the message: consecutive text parts make one text block,
//! consecutive thought parts one thinking block, each function call part a tool call block
//! (Gemini sends a call whole). A part's `thoughtSignature` stays on the block of that part
//! (docs/design/gemini.md). The message ends at the body's end, once a `finishReason` came:
//! a chunk after it may still carry usage.
const std = @import("std");
const Allocator = std.mem.Allocator;
const assembly = @import("../../assembly.zig");
const Assembly = assembly.Assembly;
const errors = @import("../../errors.zig");
const fast_json = @import("../../fast_json.zig");
const sse = @import("../../sse.zig");
const BlockKind = @import("../../event.zig").BlockKind;
const StopReason = @import("../../event.zig").StopReason;

const WirePart = struct {
    text: ?[]const u8 = null,
    thought: bool = false,
    thoughtSignature: ?[]const u8 = null,
    functionCall: ?struct {
        id: ?[]const u8 = null,
        name: []const u8 = "",
        args: ?std.json.Value = null,
    } = null,
};

const WireCandidate = struct {
    content: ?struct { parts: []const WirePart = &.{} } = null,
    finishReason: ?[]const u8 = null,
};

pub const WireError = struct {
    code: ?i64 = null,
    message: []const u8 = "",
    status: ?[]const u8 = null,
    /// google.rpc details; an ErrorInfo's `reason` says what the status does not.
    details: []const struct { reason: ?[]const u8 = null } = &.{},
};

pub const WireChunk = struct {
    candidates: []const WireCandidate = &.{},
    promptFeedback: ?struct { blockReason: ?[]const u8 = null } = null,
    usageMetadata: ?struct {
        promptTokenCount: u64 = 0,
        candidatesTokenCount: u64 = 0,
        cachedContentTokenCount: u64 = 0,
        thoughtsTokenCount: u64 = 0,
    } = null,
    modelVersion: []const u8 = "",
    responseId: []const u8 = "",
    @"error": ?WireError = null,
};

pub const Decoder = struct {
    /// A finishReason (or a prompt's blockReason) came: the message ends with the body.
    finished: bool = false,
    /// The message's tool calls so far: ids are made from their count.
    calls: u32 = 0,
    /// The provider index of the next block (one per run of parts).
    next_index: u32 = 0,
    /// The open block and its kind, which a part of the same kind continues.
    open_kind: ?BlockKind = null,

    pub fn handle(d: *Decoder, a: *Assembly, arena: Allocator, event: sse.Event, detail: *errors.Detail) errors.TurnError!void {
        if (event.data.len == 0) return;
        const chunk = fast_json.decode(WireChunk, arena, event.data) catch |err| switch (err) {
            error.OutOfMemory => return error.OutOfMemory,
            else => return protocol(a, detail, "a data line of the Gemini stream is not the JSON expected"),
        };
        if (chunk.@"error") |e| return failWith(a, detail, e);
        if (!a.started) try a.startMessage(chunk.responseId, chunk.modelVersion);
        if (chunk.usageMetadata) |u| {
            // promptTokenCount includes the cached tokens, panto's input_tokens does not;
            // thoughts are counted apart from candidates, panto's output includes them.
            a.usage.input_tokens = u.promptTokenCount -| u.cachedContentTokenCount;
            a.usage.cache_read_tokens = u.cachedContentTokenCount;
            a.usage.output_tokens = u.candidatesTokenCount +| u.thoughtsTokenCount;
            a.usage.reasoning_tokens = u.thoughtsTokenCount;
        }
        if (chunk.promptFeedback) |f| if (f.blockReason) |reason| {
            // The prompt was blocked: no candidate comes.
            if (chunk.candidates.len == 0) return d.end(a, reason, .content_filter);
        };
        if (chunk.candidates.len == 0) return;
        const candidate = chunk.candidates[0]; // (panto asks for one)
        if (candidate.content) |content| for (content.parts) |part| try d.addPart(a, arena, chunk.responseId, part);
        if (candidate.finishReason) |reason| try d.end(a, reason, stopReason(reason));
    }

    /// The body ended: the message is complete when a finishReason came, else cut short.
    pub fn finish(d: *Decoder, a: *Assembly, detail: *errors.Detail) errors.TurnError!void {
        if (!d.finished) return protocol(a, detail, "the Gemini stream ended before a finishReason");
        if (d.calls > 0 and a.stop_override.? == .end_turn) a.stop_override = .tool_use;
        try a.completeMessage();
    }

    fn end(d: *Decoder, a: *Assembly, reason: []const u8, stop: StopReason) errors.TurnError!void {
        if (d.finished) return;
        d.finished = true;
        try a.setStopReason(reason);
        a.stop_override = stop;
    }

    fn addPart(d: *Decoder, a: *Assembly, arena: Allocator, response_id: []const u8, part: WirePart) errors.TurnError!void {
        if (part.functionCall) |call| {
            try a.completeOpenBlocks(); // blocks never interleave
            var buf: [32]u8 = undefined;
            const made = if (response_id.len > 0)
                try std.fmt.allocPrint(arena, "call_{s}_{d}", .{ response_id, d.calls })
            else
                std.fmt.bufPrint(&buf, "call_{d}", .{d.calls}) catch unreachable;
            const id = if (call.id) |given| (if (given.len > 0) given else made) else made;
            d.calls += 1;
            const b = try a.startToolBlock(d.takeIndex(), id, call.name);
            d.open_kind = null; // a call is whole: the next part starts a new block
            if (part.thoughtSignature) |sig| try b.signature.appendSlice(a.gpa, sig);
            if (call.args) |args| if (args == .object and args.object.count() > 0)
                try a.appendDelta(b, try std.json.Stringify.valueAlloc(arena, args, .{}));
            return a.completeBlock(b);
        }
        const text = part.text orelse "";
        const kind: BlockKind = if (part.thought) .thinking else .text;
        const signature = part.thoughtSignature orelse "";
        if (text.len == 0 and !part.thought) {
            // A part that carries only a signature (often the last chunk's `{"text": ""}`):
            // the text block before it takes it, else an empty text block keeps it.
            if (signature.len == 0) return;
            if (d.lastBlock(a)) |b| if (b.kind == .text and b.signature.items.len == 0) return b.signature.appendSlice(a.gpa, signature);
            try a.completeOpenBlocks();
            const b = try a.startBlock(d.takeIndex(), .text);
            d.open_kind = null;
            try b.signature.appendSlice(a.gpa, signature);
            return a.completeBlock(b);
        }
        var b = d.openBlock(a, kind);
        // A signed part after a signed one of the same kind is a new part of its own.
        if (b != null and signature.len > 0 and b.?.signature.items.len > 0) b = null;
        const block = b orelse blk: {
            try a.completeOpenBlocks();
            d.open_kind = kind;
            break :blk try a.startBlock(d.takeIndex(), kind);
        };
        try a.appendDelta(block, text);
        if (signature.len > 0) try block.signature.appendSlice(a.gpa, signature);
    }

    /// The open block that a part of `kind` continues, if any.
    fn openBlock(d: *Decoder, a: *Assembly, kind: BlockKind) ?*assembly.Block {
        if (d.open_kind != kind or d.next_index == 0) return null;
        return a.findOpen(d.next_index - 1);
    }

    fn lastBlock(d: *Decoder, a: *Assembly) ?*assembly.Block {
        _ = d;
        const blocks = a.blocksSoFar();
        return if (blocks.len == 0) null else &blocks[blocks.len - 1];
    }

    fn takeIndex(d: *Decoder) u32 {
        d.next_index += 1;
        return d.next_index - 1;
    }
};

/// Gemini's finishReason as panto's stop reason: the safety family is a content filter;
/// a malformed or unexpected call, and values added later, are `other` (never an empty
/// success). STOP after a call is tool_use (Decoder.finish).
pub fn stopReason(reason: []const u8) StopReason {
    const table = [_]struct { []const u8, StopReason }{
        .{ "STOP", .end_turn },
        .{ "MAX_TOKENS", .max_tokens },
        .{ "SAFETY", .content_filter },
        .{ "RECITATION", .content_filter },
        .{ "BLOCKLIST", .content_filter },
        .{ "PROHIBITED_CONTENT", .content_filter },
        .{ "SPII", .content_filter },
        .{ "IMAGE_SAFETY", .content_filter },
        .{ "IMAGE_PROHIBITED_CONTENT", .content_filter },
    };
    for (table) |entry| if (std.mem.eql(u8, entry[0], reason)) return entry[1];
    return .other;
}

/// An error object (a non-2xx body's, or one in the stream): the detail has its status as
/// the API gave it; the error is the one that status means.
fn failWith(a: *Assembly, detail: *errors.Detail, e: WireError) errors.TurnError {
    const status = e.status orelse "INTERNAL";
    detail.set(a.gpa, 0, status, e.message);
    return errors.fromErrorType(errorType(status));
}

/// Google's canonical error statuses as the error types errors.zig maps.
pub fn errorType(status: []const u8) []const u8 {
    const table = [_]struct { []const u8, []const u8 }{
        .{ "RESOURCE_EXHAUSTED", "rate_limit_error" },
        .{ "INVALID_ARGUMENT", "invalid_request_error" },
        .{ "FAILED_PRECONDITION", "invalid_request_error" },
        .{ "OUT_OF_RANGE", "invalid_request_error" },
        .{ "UNAUTHENTICATED", "authentication_error" },
        .{ "PERMISSION_DENIED", "permission_error" },
        .{ "NOT_FOUND", "not_found_error" },
        .{ "UNAVAILABLE", "overloaded_error" },
    };
    for (table) |entry| if (std.mem.eql(u8, entry[0], status)) return entry[1];
    return status;
}

fn protocol(a: *Assembly, detail: *errors.Detail, message: []const u8) errors.TurnError {
    detail.set(a.gpa, 0, "protocol_error", message);
    return error.Protocol;
}

/// Parses a Google error body `{"error":{"code":..,"message":..,"status":..}}` (some proxies
/// wrap it in a one-element array).
pub fn parseErrorBody(arena: Allocator, body: []const u8) ?errors.ProviderError {
    const Body = struct { @"error": ?WireError = null };
    const options: std.json.ParseOptions = .{ .ignore_unknown_fields = true };
    const parsed = std.json.parseFromSliceLeaky(Body, arena, body, options) catch blk: {
        const list = std.json.parseFromSliceLeaky([]const Body, arena, body, options) catch return null;
        if (list.len == 0) return null;
        break :blk list[0];
    };
    const e = parsed.@"error" orelse return null;
    return .{ .type = e.status orelse "error", .message = e.message, .request_id = null, .kind = errorKind(e) };
}

/// A key Google does not take comes as 400 INVALID_ARGUMENT, its ErrorInfo's reason
/// API_KEY_INVALID: an authentication error, as every other provider's bad key is.
fn errorKind(e: WireError) ?errors.TurnError {
    for (e.details) |d| if (d.reason) |r| if (std.mem.eql(u8, r, "API_KEY_INVALID")) return error.Authentication;
    return null;
}
