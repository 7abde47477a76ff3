//! OpenAI Responses API: the decoding of its streaming events.
//! https://platform.openai.com/docs/api-reference/responses-streaming
//! Items are tracked by `output_index` (the block's provider index): some gateways give every
//! event a new item id. Where a `.done` event repeats a whole text or arguments, it is taken
//! over the deltas (it can be longer): what it adds streams as one more delta.
const std = @import("std");
const Allocator = std.mem.Allocator;
const assembly = @import("../../assembly.zig");
const Assembly = assembly.Assembly;
const errors = @import("../../errors.zig");
const fast_json = @import("../../fast_json.zig");
const sse = @import("../../sse.zig");
const BlockKind = @import("../../event.zig").BlockKind;

const WireItem = struct {
    type: []const u8 = "",
    id: []const u8 = "",
    call_id: []const u8 = "",
    name: []const u8 = "",
    arguments: ?[]const u8 = null,
    encrypted_content: ?[]const u8 = null,
};

const WireError = struct {
    code: ?[]const u8 = null,
    type: ?[]const u8 = null,
    message: []const u8 = "",
};

const WireResponse = struct {
    id: []const u8 = "",
    model: []const u8 = "",
    status: []const u8 = "",
    incomplete_details: ?struct { reason: ?[]const u8 = null } = null,
    @"error": ?WireError = null,
    usage: ?struct {
        input_tokens: u64 = 0,
        output_tokens: u64 = 0,
        input_tokens_details: ?struct { cached_tokens: ?u64 = null } = null,
        output_tokens_details: ?struct { reasoning_tokens: ?u64 = null } = null,
    } = null,
};

pub const WireEvent = struct {
    type: []const u8 = "",
    output_index: u32 = 0,
    summary_index: u32 = 0,
    delta: ?[]const u8 = null,
    text: ?[]const u8 = null,
    refusal: ?[]const u8 = null,
    arguments: ?[]const u8 = null,
    item: ?WireItem = null,
    response: ?WireResponse = null,
    // The `error` event: its fields at the top, or (some servers) in an `error` object.
    code: ?[]const u8 = null,
    message: ?[]const u8 = null,
    @"error": ?WireError = null,
};

pub const Decoder = struct {
    /// response.created came: the message started.
    started: bool = false,
    /// response.completed or .incomplete came: the message ended.
    finished: bool = false,
    /// A function call came: a completed response ends with tool use.
    called: bool = false,
    refused: bool = false,

    pub fn handle(d: *Decoder, a: *Assembly, arena: Allocator, event: sse.Event, detail: *errors.Detail) errors.TurnError!void {
        if (d.finished) return; // nothing belongs to the message after its end
        const wire = fast_json.decode(WireEvent, arena, event.data) catch |err| switch (err) {
            error.OutOfMemory => return error.OutOfMemory,
            else => return protocol(a, detail, "a data line of the Responses stream is not the JSON expected"),
        };
        const kind = if (wire.type.len > 0) wire.type else event.type;
        if (eql(kind, "error")) return failWith(a, detail, wire.@"error" orelse .{ .code = wire.code, .message = wire.message orelse "" });
        if (eql(kind, "response.failed")) {
            const r = wire.response orelse return protocol(a, detail, "response.failed without a response");
            return failWith(a, detail, r.@"error" orelse .{ .code = "server_error", .message = "the response failed" });
        }
        if (eql(kind, "response.created") or eql(kind, "response.in_progress")) {
            if (d.started) return;
            const r = wire.response orelse return protocol(a, detail, "response.created without a response");
            d.started = true;
            return a.startMessage(r.id, r.model);
        }
        if (!std.mem.startsWith(u8, kind, "response.")) return; // (keep-alives, and types added later)
        if (!d.started) {
            var buf: [96]u8 = undefined;
            return protocol(a, detail, std.fmt.bufPrint(&buf, "{s} before response.created", .{kind}) catch "an event before response.created");
        }
        if (eql(kind, "response.output_item.added")) {
            const item = wire.item orelse return protocol(a, detail, "output_item.added without an item");
            if (eql(item.type, "reasoning")) {
                _ = try start(a, wire.output_index, .thinking);
            } else if (eql(item.type, "function_call")) {
                try startCall(d, a, wire.output_index, item);
                if (item.arguments) |t| try appendTo(a, wire.output_index, .tool_call, t);
            }
            // A message's text block starts with its first text; other items (hosted and
            // custom tools' calls) are not panto's.
        } else if (eql(kind, "response.output_text.delta") or eql(kind, "response.refusal.delta")) {
            if (eql(kind, "response.refusal.delta")) d.refused = true;
            try appendTo(a, wire.output_index, .text, wire.delta orelse "");
        } else if (eql(kind, "response.output_text.done") or eql(kind, "response.refusal.done")) {
            try finishText(a, wire.output_index, .text, wire.text orelse wire.refusal orelse "");
        } else if (eql(kind, "response.reasoning_summary_text.delta") or eql(kind, "response.reasoning_text.delta")) {
            try appendTo(a, wire.output_index, .thinking, wire.delta orelse "");
        } else if (eql(kind, "response.reasoning_summary_part.added")) {
            // Parts of one summary are paragraphs of one thinking block.
            if (wire.summary_index > 0) if (a.findOpen(wire.output_index)) |b| if (b.text.items.len > 0) try a.appendDelta(b, "\n\n");
        } else if (eql(kind, "response.function_call_arguments.delta")) {
            try appendTo(a, wire.output_index, .tool_call, wire.delta orelse "");
        } else if (eql(kind, "response.function_call_arguments.done")) {
            try finishText(a, wire.output_index, .tool_call, wire.arguments orelse "");
        } else if (eql(kind, "response.output_item.done")) {
            const item = wire.item orelse return protocol(a, detail, "output_item.done without an item");
            try itemDone(d, a, wire.output_index, item);
        } else if (eql(kind, "response.completed") or eql(kind, "response.incomplete")) {
            const r = wire.response orelse return protocol(a, detail, "the response's end without a response");
            try d.end(a, r);
        }
        // Other response.* events (content_part.added, in_progress, annotations, hosted tools'
        // progress) carry nothing panto keeps.
    }

    /// The body ended: a stream that stops before response.completed (or .incomplete) was cut short.
    pub fn finish(d: *Decoder, a: *Assembly, detail: *errors.Detail) errors.TurnError!void {
        if (!d.finished) return protocol(a, detail, "the Responses stream ended before response.completed");
    }

    /// response.completed or .incomplete: the usage, the stop reason, the message's end.
    fn end(d: *Decoder, a: *Assembly, r: WireResponse) errors.TurnError!void {
        d.finished = true;
        if (r.usage) |u| {
            const cached = if (u.input_tokens_details) |x| x.cached_tokens orelse 0 else 0;
            // input_tokens includes the cached tokens; panto's input_tokens does not.
            a.usage.input_tokens = u.input_tokens -| cached;
            a.usage.cache_read_tokens = cached;
            a.usage.output_tokens = u.output_tokens;
            a.usage.reasoning_tokens = if (u.output_tokens_details) |x| x.reasoning_tokens orelse 0 else 0;
        }
        const reason: []const u8 = if (r.incomplete_details) |x| x.reason orelse r.status else r.status;
        try a.setStopReason(if (reason.len > 0) reason else "completed");
        a.stop_override = if (eql(reason, "max_output_tokens"))
            .max_tokens
        else if (eql(reason, "content_filter"))
            .content_filter
        else if (d.refused)
            .refusal
        else if (d.called)
            .tool_use
        else
            .end_turn;
        try a.completeMessage();
    }
};

/// A whole item: a reasoning item keeps its encrypted content (the last one seen: `.added`'s
/// can be stale) with its id as the block's signature; a function call gets what its
/// arguments lacked. Its block ends.
fn itemDone(d: *Decoder, a: *Assembly, index: u32, item: WireItem) errors.TurnError!void {
    if (eql(item.type, "reasoning")) {
        const b = a.findOpen(index) orelse try start(a, index, .thinking);
        b.signature.clearRetainingCapacity();
        if (item.encrypted_content) |content| if (content.len > 0) {
            // (reasoning_item.zig reads it back)
            try b.signature.appendSlice(a.gpa, item.id);
            try b.signature.append(a.gpa, ' ');
            try b.signature.appendSlice(a.gpa, content);
        };
        return a.completeBlock(b);
    }
    if (eql(item.type, "function_call")) {
        if (a.findOpen(index) == null) try startCall(d, a, index, item);
        try finishText(a, index, .tool_call, item.arguments orelse "");
    }
    if (a.findOpen(index)) |b| try a.completeBlock(b);
}

fn startCall(d: *Decoder, a: *Assembly, index: u32, item: WireItem) errors.TurnError!void {
    d.called = true;
    try a.completeOpenBlocks(); // blocks never interleave
    _ = try a.startToolBlock(index, item.call_id, item.name);
}

/// A new block for item `index`, closing the one before (blocks never interleave).
fn start(a: *Assembly, index: u32, kind: BlockKind) errors.TurnError!*assembly.Block {
    try a.completeOpenBlocks();
    return a.startBlock(index, kind);
}

fn appendTo(a: *Assembly, index: u32, kind: BlockKind, fragment: []const u8) errors.TurnError!void {
    if (fragment.len == 0) return;
    const b = a.findOpen(index) orelse (if (kind == .tool_call) return else try start(a, index, kind));
    try a.appendDelta(b, fragment);
}

/// A `.done` text or arguments: what it has beyond the deltas received streams as one more
/// delta. One that does not go on from them (a gateway's rewrite) is left: the deltas were
/// already handed out.
fn finishText(a: *Assembly, index: u32, kind: BlockKind, whole: []const u8) errors.TurnError!void {
    const b = a.findOpen(index) orelse {
        if (kind != .tool_call) try appendTo(a, index, kind, whole);
        return;
    };
    if (whole.len > b.text.items.len and std.mem.startsWith(u8, whole, b.text.items))
        try a.appendDelta(b, whole[b.text.items.len..]);
}

/// An error event or a failed response: the detail has its code as the API gave it; the
/// error is the one that code means.
fn failWith(a: *Assembly, detail: *errors.Detail, e: WireError) errors.TurnError {
    const code = e.code orelse e.type orelse "server_error";
    detail.set(a.gpa, 0, code, e.message);
    return errors.fromErrorType(errorType(code));
}

/// The Responses API's error codes, as the error types errors.zig maps (its own names, such
/// as invalid_request_error and rate_limit_error, pass as they are).
fn errorType(code: []const u8) []const u8 {
    const table = [_]struct { []const u8, []const u8 }{
        .{ "rate_limit_exceeded", "rate_limit_error" },
        .{ "insufficient_quota", "rate_limit_error" },
        .{ "invalid_prompt", "invalid_request_error" },
        .{ "context_length_exceeded", "invalid_request_error" },
        .{ "invalid_api_key", "authentication_error" },
        .{ "server_is_overloaded", "overloaded_error" },
        .{ "slow_down", "overloaded_error" },
    };
    for (table) |entry| if (eql(entry[0], code)) return entry[1];
    return code;
}

fn protocol(a: *Assembly, detail: *errors.Detail, message: []const u8) errors.TurnError {
    detail.set(a.gpa, 0, "protocol_error", message);
    return error.Protocol;
}

fn eql(x: []const u8, y: []const u8) bool {
    return std.mem.eql(u8, x, y);
}

/// Parses an OpenAI error body `{"error":{"message":..,"type":..,"code":..}}`.
pub fn parseErrorBody(arena: Allocator, body: []const u8) ?errors.ProviderError {
    const Body = struct { @"error": ?WireError = null };
    const parsed = std.json.parseFromSliceLeaky(Body, arena, body, .{ .ignore_unknown_fields = true }) catch return null;
    const e = parsed.@"error" orelse return null;
    return .{ .type = e.type orelse e.code orelse "error", .message = e.message, .request_id = null };
}
