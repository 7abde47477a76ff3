//! OpenAI Chat Completions (and compatible servers): the decoding of its chunks.
//! https://platform.openai.com/docs/api-reference/chat-streaming
const std = @import("std");
const Allocator = std.mem.Allocator;
const Assembly = @import("../../assembly.zig").Assembly;
const errors = @import("../../errors.zig");
const fast_json = @import("../../fast_json.zig");
const hot = @import("hot.zig");
const sse = @import("../../sse.zig");
const BlockKind = @import("../../event.zig").BlockKind;
const ReasoningPiece = @import("../../reasoning_details.zig").Piece;

pub const WireChunk = struct {
    id: []const u8 = "",
    model: []const u8 = "",
    choices: []const struct {
        index: u32 = 0,
        delta: ?WireDelta = null,
        finish_reason: ?[]const u8 = null,
    } = &.{},
    usage: ?WireUsage = null,
    @"error": ?WireError = null,
};

pub const WireUsage = struct {
    prompt_tokens: u64 = 0,
    completion_tokens: u64 = 0,
    /// Read only to tell where reasoning is counted (outputTokens). Wider than the counts: a
    /// server's total exceeds u64 when its counts are near it (they are not trusted; such a
    /// total is no protocol error, it just says nothing).
    total_tokens: ?u128 = null,
    prompt_tokens_details: ?struct { cached_tokens: ?u64 = null } = null,
    completion_tokens_details: ?struct { reasoning_tokens: ?u64 = null } = null,

    /// The tokens the model generated. OpenAI counts reasoning inside completion_tokens
    /// (total = prompt + completion); xAI counts it apart (total = prompt + completion +
    /// reasoning). The numbers say which: reasoning is added when the total counts it apart,
    /// or when it is more than completion_tokens (so it cannot be inside).
    pub fn outputTokens(u: WireUsage) u64 {
        const reasoning = u.reasoningTokens();
        if (reasoning == 0) return u.completion_tokens;
        const apart = u.prompt_tokens +| u.completion_tokens +| reasoning;
        const outside = (u.total() == apart) or reasoning > u.completion_tokens;
        return if (outside) u.completion_tokens +| reasoning else u.completion_tokens;
    }

    /// total_tokens when it is a count that fits, else null.
    fn total(u: WireUsage) ?u64 {
        return std.math.cast(u64, u.total_tokens orelse return null);
    }

    pub fn reasoningTokens(u: WireUsage) u64 {
        return if (u.completion_tokens_details) |c| c.reasoning_tokens orelse 0 else 0;
    }
};

pub const WireDelta = struct {
    content: ?[]const u8 = null,
    /// Reasoning text, by the names servers give it: `reasoning_content` (DeepSeek, vLLM,
    /// Together), `reasoning` (Groq, OpenRouter, newer vLLM), `reasoning_text`.
    reasoning_content: ?[]const u8 = null,
    reasoning: ?[]const u8 = null,
    reasoning_text: ?[]const u8 = null,
    /// OpenRouter's structured reasoning beside `reasoning` (reasoning_details.zig).
    reasoning_details: ?[]const ReasoningPiece = null,
    refusal: ?[]const u8 = null,
    tool_calls: []const struct {
        index: u32 = 0,
        id: ?[]const u8 = null,
        function: ?struct {
            name: ?[]const u8 = null,
            arguments: ?[]const u8 = null,
        } = null,
    } = &.{},

    /// The delta's reasoning text and its name: the first of its names that holds any. A
    /// server that sends two at once (vLLM: `reasoning` and `reasoning_content`) sends the
    /// same text twice.
    pub fn thinking(d: WireDelta) ?hot.Reasoning {
        const names = [_][]const u8{ "reasoning_content", "reasoning", "reasoning_text" };
        for ([_]?[]const u8{ d.reasoning_content, d.reasoning, d.reasoning_text }, names) |t, name| {
            if (t) |text| if (text.len > 0) return .{ .text = text, .name = name };
        }
        return null;
    }
};

const WireError = struct {
    message: []const u8 = "",
    type: ?[]const u8 = null,
    code: ?std.json.Value = null,
};

// OpenAI has no block indexes: panto numbers the blocks of a choice itself. Tool call `index`
// n is slot tool_slot_base + n.
const thinking_slot: u32 = 0;
const text_slot: u32 = 1;
const tool_slot_base: u32 = 1000;
/// Slots of calls that came under an index another call held (Ollama), past any a server's
/// index can reach below the saturation of tool_slot_base + index.
const moved_slot_base: u32 = 1 << 31;

pub const Decoder = struct {
    /// The bytes chunks of this stream start with (hot.zig).
    prefix: hot.Prefix = .{},
    saw_done: bool = false,
    saw_finish: bool = false,
    refused: bool = false,
    /// Ollama gives every call of a message `index` 0, each with its own id: a call whose id
    /// differs from the one its index holds is a new call in a slot of its own, which the
    /// later pieces of that index (without an id) go on.
    moved: ?struct { index: u32, slot: u32 } = null,
    moved_calls: u32 = 0,

    pub fn handle(d: *Decoder, a: *Assembly, arena: Allocator, event: sse.Event, detail: *errors.Detail) errors.TurnError!void {
        if (d.saw_done) return; // nothing may follow [DONE]; ignore it rather than fail
        if (std.mem.eql(u8, event.data, "[DONE]")) {
            d.saw_done = true;
            if (!a.started) return protocol(a, detail, "the OpenAI stream ended before any chunk");
            return a.completeMessage();
        }
        if (try hot.parse(arena, event.data, &d.prefix)) |chunk| return d.applyHot(a, chunk);
        const chunk = fast_json.decode(WireChunk, arena, event.data) catch |err| switch (err) {
            error.OutOfMemory => return error.OutOfMemory,
            else => return protocol(a, detail, "a data line of the OpenAI stream is not the JSON expected"),
        };
        if (chunk.@"error") |e| {
            const t = e.type orelse "server_error";
            detail.set(a.gpa, 0, t, e.message);
            return errors.fromErrorType(t);
        }
        if (!a.started) {
            // Azure's first chunk, its prompt-filter results (empty id and model, no
            // choices), is no part of the message: it starts with the first that is.
            if (!partOfMessage(chunk)) return;
            try a.startMessage(chunk.id, chunk.model);
        }
        for (chunk.choices) |choice| {
            if (choice.index != 0) continue; // n > 1 is refused when the request is built
            // A choice without a delta is an Azure content-filter annotation of text already
            // sent (or the finish_reason of a filtered answer).
            if (choice.delta) |delta| {
                if (delta.thinking()) |r| try appendTo(a, thinking_slot, .thinking, r.name, r.text);
                if (delta.reasoning_details) |pieces| for (pieces) |p| try a.reasoning_details.add(a.gpa, p);
                if (delta.content) |t| try appendTo(a, text_slot, .text, "", t);
                if (delta.refusal) |t| if (t.len > 0) {
                    // A refusal streams as text; the message then ends as a refusal.
                    d.refused = true;
                    try appendTo(a, text_slot, .text, "", t);
                };
                for (delta.tool_calls) |call| {
                    const f = call.function orelse @as(@TypeOf(call.function.?), .{});
                    try d.applyToolCall(a, call.index, call.id orelse "", f.name orelse "", f.arguments);
                }
            }
            if (choice.finish_reason) |r| {
                d.saw_finish = true;
                try a.setStopReason(r);
                if (d.refused) a.stop_override = .refusal;
                try a.completeOpenBlocks();
            }
        }
        if (chunk.usage) |u| {
            const cached = if (u.prompt_tokens_details) |p| p.cached_tokens orelse 0 else 0;
            // OpenAI's prompt_tokens includes the cached tokens; panto's input_tokens does not.
            a.usage.input_tokens = u.prompt_tokens -| cached;
            a.usage.cache_read_tokens = cached;
            a.usage.output_tokens = u.outputTokens();
            a.usage.reasoning_tokens = u.reasoningTokens();
        }
    }

    /// The chunk of nearly every event, when `bytes` (received, not yet parsed) start with
    /// its whole SSE event (hot.parseEvent): decoded as `handle` would, and the
    /// number of bytes it took returned. Null: nothing done, for the SSE parser and `handle`.
    pub fn hotQueued(d: *Decoder, a: *Assembly, arena: Allocator, bytes: []const u8) errors.TurnError!?usize {
        if (d.saw_done) return null;
        const event = try hot.parseEvent(arena, bytes, &d.prefix) orelse return null;
        try d.applyHot(a, event.chunk);
        return event.len;
    }

    /// A chunk of the common kind (hot.zig): what the general path does with it.
    fn applyHot(d: *Decoder, a: *Assembly, chunk: hot.Chunk) errors.TurnError!void {
        if (!a.started) try a.startMessage(chunk.id, chunk.model);
        switch (chunk.delta) {
            .content => |t| try appendTo(a, text_slot, .text, "", t),
            .reasoning => |r| try appendTo(a, thinking_slot, .thinking, r.name, r.text),
            .tool_arguments => |call| try d.applyToolCall(a, call.index, "", "", call.arguments),
        }
    }

    /// A piece of tool call `index`. Its block starts (closing a text or thinking block
    /// before it) with the id and name given then, and stays open until the message's
    /// finish: servers may interleave the arguments of parallel calls (0, 1, 0, 1...), so a
    /// call can always go on. A call that starts while another's block is open is held, and
    /// streamed whole after it. A new id at an index that holds a call is a new call (moved).
    fn applyToolCall(d: *Decoder, a: *Assembly, index: u32, id: []const u8, name: []const u8, arguments: ?[]const u8) errors.TurnError!void {
        var slot = if (d.moved) |m| (if (m.index == index) m.slot else tool_slot_base +| index) else tool_slot_base +| index;
        if (id.len > 0) if (callId(a, slot)) |held| if (held.len > 0 and !std.mem.eql(u8, held, id)) {
            d.moved_calls += 1;
            slot = moved_slot_base +| d.moved_calls;
            d.moved = .{ .index = index, .slot = slot };
        };
        if (a.findOpen(slot)) |b| {
            if (arguments) |args| try a.appendDelta(b, args);
            return;
        }
        try startOrHold(a, slot, .tool_call, id, name, arguments orelse "");
    }

    /// The body ended. Some compatible servers omit [DONE]: a stream that reached a
    /// finish_reason is complete anyway; one that did not was cut short.
    pub fn finish(d: *Decoder, a: *Assembly, detail: *errors.Detail) errors.TurnError!void {
        if (d.saw_done) return;
        if (!d.saw_finish) return protocol(a, detail, "the OpenAI stream ended before a finish_reason");
        d.saw_done = true;
        try a.completeMessage();
    }
};

/// Whether a chunk carries anything of the message: an id or model, a choice's delta or
/// finish_reason, or the usage.
fn partOfMessage(chunk: WireChunk) bool {
    if (chunk.id.len > 0 or chunk.model.len > 0 or chunk.usage != null) return true;
    for (chunk.choices) |choice| if (choice.delta != null or choice.finish_reason != null) return true;
    return false;
}

/// The id of the call in `slot` (open or held), or null when there is none.
fn callId(a: *Assembly, slot: u32) ?[]const u8 {
    if (a.findOpen(slot)) |b| return b.id.items;
    if (a.findHeld(slot)) |h| return h.id.items;
    return null;
}

/// `name`: a thinking block's wire name (kept with it: the name it goes back under).
fn appendTo(a: *Assembly, slot: u32, kind: BlockKind, name: []const u8, text: []const u8) errors.TurnError!void {
    if (text.len == 0) return; // the role chunk's "" starts nothing
    if (a.findOpen(slot)) |b| return a.appendDelta(b, text);
    try startOrHold(a, slot, kind, "", name, text);
}

/// The first piece of a block (or more of a held one): held while a tool call's block is
/// open, else a new block, which closes the previous one (blocks never interleave).
fn startOrHold(a: *Assembly, slot: u32, kind: BlockKind, id: []const u8, name: []const u8, fragment: []const u8) errors.TurnError!void {
    const held = a.findHeld(slot) orelse if (openToolCall(a)) try a.hold(slot, kind) else null;
    if (held) |h| return a.holdPiece(h, id, name, fragment);
    try a.completeOpenBlocks();
    const b = if (kind == .tool_call) try a.startToolBlock(slot, id, name) else try a.startBlock(slot, kind);
    if (kind == .thinking) try b.name.appendSlice(a.gpa, name);
    try a.appendDelta(b, fragment);
}

fn openToolCall(a: *Assembly) bool {
    for (a.blocksSoFar()) |b| if (b.open and b.kind == .tool_call) return true;
    return false;
}

fn protocol(a: *Assembly, detail: *errors.Detail, message: []const u8) errors.TurnError {
    detail.set(a.gpa, 0, "protocol_error", message);
    return error.Protocol;
}

/// Parses an OpenAI error body `{"error":{"message":..,"type":..,"code":..}}`.
pub fn parseErrorBody(arena: Allocator, body: []const u8) ?errors.ProviderError {
    const Body = struct { @"error": ?WireError = null };
    const parsed = std.json.parseFromSliceLeaky(Body, arena, body, .{ .ignore_unknown_fields = true }) catch return null;
    const e = parsed.@"error" orelse return null;
    return .{ .type = e.type orelse "error", .message = e.message, .request_id = null };
}
