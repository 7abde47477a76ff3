//! Anthropic Messages API: the decoding of its SSE events.
//! https://docs.anthropic.com/en/api/messages-streaming
const std = @import("std");
const Allocator = std.mem.Allocator;
const Assembly = @import("../../assembly.zig").Assembly;
const Block = @import("../../assembly.zig").Block;
const errors = @import("../../errors.zig");
const fast_json = @import("../../fast_json.zig");
const sse = @import("../../sse.zig");
const hot = @import("hot.zig");
const Event = @import("../../event.zig").Event;
const json_member = @import("../../json_member.zig");

const WireUsage = struct {
    input_tokens: ?u64 = null,
    output_tokens: ?u64 = null,
    cache_creation_input_tokens: ?u64 = null,
    cache_read_input_tokens: ?u64 = null,
    output_tokens_details: ?struct { thinking_tokens: ?u64 = null } = null,
    server_tool_use: ?struct { web_search_requests: ?u64 = null, web_fetch_requests: ?u64 = null } = null,
};

/// The delta of content_block_delta (text, thinking, tool input, signature) and of
/// message_delta (stop_reason).
pub const WireDelta = struct {
    type: ?[]const u8 = null,
    text: ?[]const u8 = null,
    thinking: ?[]const u8 = null,
    partial_json: ?[]const u8 = null,
    signature: ?[]const u8 = null,
    stop_reason: ?[]const u8 = null,
    /// message_delta: the container code execution ran in.
    container: ?Container = null,
};

/// A response's container ({"id", "expires_at", ...}): its id is what a request carries.
const Container = struct { id: []const u8 = "" };

/// A content block as content_block_start gives it (or message_start's content, whole).
pub const WireBlock = struct {
    type: []const u8 = "",
    text: ?[]const u8 = null,
    thinking: ?[]const u8 = null,
    id: []const u8 = "",
    name: []const u8 = "",
    data: ?[]const u8 = null,
    signature: ?[]const u8 = null,
};

pub const WireEvent = struct {
    type: []const u8 = "",
    index: u32 = 0,
    message: ?struct {
        id: []const u8 = "",
        model: []const u8 = "",
        usage: ?WireUsage = null,
        /// Given here by some servers, the message whole, message_stop following.
        content: []const WireBlock = &.{},
        stop_reason: ?[]const u8 = null,
        container: ?Container = null,
    } = null,
    content_block: ?WireBlock = null,
    delta: ?WireDelta = null,
    usage: ?WireUsage = null,
    @"error": ?struct {
        type: []const u8 = "",
        message: []const u8 = "",
    } = null,
};

pub const Decoder = struct {
    /// message_start came: the message's content may follow (and no second message_start).
    started: bool = false,
    finished: bool = false,

    /// Turns one SSE event into panto events on `a`. Provider error events fail the turn
    /// with the matching error, recording the detail.
    pub fn handle(d: *Decoder, a: *Assembly, arena: Allocator, event: sse.Event, detail: *errors.Detail) errors.TurnError!void {
        if (try hot.hotDelta(arena, event.data)) |delta| {
            if (try hot.hotDeltaEvent(a, detail, delta)) |e| try a.push(e);
            return;
        }
        const wire = fast_json.decode(WireEvent, arena, event.data) catch |err| switch (err) {
            error.OutOfMemory => return error.OutOfMemory,
            else => {
                detail.set(a.gpa, 0, "protocol_error", "a data line of the Anthropic stream is not the JSON expected");
                return error.Protocol;
            },
        };
        const kind = if (wire.type.len > 0) wire.type else event.type;

        // panto's event order holds whatever the server sends: one message_start first, then
        // blocks that never interleave (tests in order_test.zig).
        if (!d.started and !eql(kind, "message_start") and isMessageContent(kind)) {
            var buf: [64]u8 = undefined;
            return protocol(a, detail, std.fmt.bufPrint(&buf, "{s} before message_start", .{kind}) catch "message content before message_start");
        }
        if (eql(kind, "message_start")) {
            if (d.started) return protocol(a, detail, "a second message_start in one message");
            d.started = true;
            const m = wire.message orelse return protocol(a, detail, "message_start without a message");
            try a.startMessage(m.id, m.model);
            if (m.usage) |u| applyUsage(a, u);
            if (m.content.len > 0) try wholeContent(a, arena, detail, event.data, m.content);
            if (m.stop_reason) |r| try a.setStopReason(r);
            if (m.container) |c| try setContainer(a, c);
        } else if (eql(kind, "content_block_start")) {
            const cb = wire.content_block orelse return protocol(a, detail, "content_block_start without a content_block");
            for (a.blocksSoFar()) |*open| if (open.open) return protocol(a, detail, "content_block_start while another block is open");
            // Only the blocks that keep bytes of it need the block's JSON cut out (a text
            // block's citations).
            const json = if (isPlain(cb.type) and !eql(cb.type, "text")) "" else try json_member.value(arena, event.data, "content_block") orelse
                return protocol(a, detail, "a content_block that is not a JSON object");
            _ = try startContent(a, arena, wire.index, cb, json);
        } else if (eql(kind, "content_block_delta")) {
            const delta = wire.delta orelse return protocol(a, detail, "content_block_delta without a delta");
            try applyDelta(a, arena, detail, wire.index, delta, event.data);
        } else if (eql(kind, "content_block_stop")) {
            const b = a.findOpen(wire.index) orelse return protocol(a, detail, "content_block_stop for a block that is not open");
            try endInput(a, arena, detail, b);
            try a.completeBlock(b);
        } else if (eql(kind, "message_delta")) {
            if (wire.delta) |delta| {
                if (delta.stop_reason) |r| try a.setStopReason(r);
                if (delta.container) |c| try setContainer(a, c);
            }
            if (wire.usage) |u| applyUsage(a, u);
        } else if (eql(kind, "message_stop")) {
            d.finished = true;
            try a.completeMessage();
        } else if (eql(kind, "error")) {
            const e = wire.@"error" orelse return protocol(a, detail, "an error event without an error");
            detail.set(a.gpa, 0, e.type, e.message);
            return errors.fromErrorType(e.type);
        }
        // ping and event types added later by the provider are skipped.
    }

    /// The event types that belong to a message (ping, error and unknown ones do not).
    fn isMessageContent(kind: []const u8) bool {
        const content = [_][]const u8{ "content_block_start", "content_block_delta", "content_block_stop", "message_delta", "message_stop" };
        for (content) |c| if (eql(kind, c)) return true;
        return false;
    }

    /// The hot path (hot.zig): when `bytes`, received and not yet parsed, start with a whole
    /// text delta event as the API frames it, its event, written into `out` for the stream
    /// to hand out at once (no SSE parser, no queue), and how many bytes it took. Null: not
    /// such an event, or one without text; nothing done, the SSE parser and `handle` read
    /// it. Only while nothing is queued.
    pub inline fn hotEvent(_: *Decoder, a: *Assembly, arena: Allocator, bytes: []const u8, detail: *errors.Detail, out: *Event) errors.TurnError!?usize {
        const framed = try hot.hotEvent(arena, bytes) orelse return null;
        // Written in place (no temporary): the C ABI reads it back field by field.
        out.* = try hot.hotDeltaEvent(a, detail, framed.delta) orelse return null;
        return framed.len;
    }

    /// The body ended: a stream that stops before message_stop was cut short.
    pub fn finish(d: *Decoder, a: *Assembly, detail: *errors.Detail) errors.TurnError!void {
        if (!d.finished) return protocol(a, detail, "the Anthropic stream ended before message_stop");
    }
};

/// A content_block_delta: more of an open block. `data`: the event's bytes as received.
fn applyDelta(a: *Assembly, arena: Allocator, detail: *errors.Detail, index: u32, delta: WireDelta, data: []const u8) errors.TurnError!void {
    const b = a.findOpen(index) orelse return protocol(a, detail, "a delta for a block that is not open");
    if (delta.text) |t| try a.appendDelta(b, t);
    if (delta.thinking) |t| try a.appendDelta(b, t);
    if (delta.partial_json) |t| try a.appendDelta(b, t);
    if (delta.signature) |sig| try b.signature.appendSlice(a.gpa, sig);
    if (b.kind == .text and delta.type != null and eql(delta.type.?, "citations_delta")) {
        const delta_json = try json_member.value(arena, data, "delta") orelse return protocol(a, detail, "a citations_delta that is not a JSON object");
        const citation = try json_member.value(arena, delta_json, "citation") orelse return protocol(a, detail, "a citations_delta without a citation");
        if (citation.len == 0 or citation[0] != '{') return protocol(a, detail, "a citation that is not a JSON object");
        try a.appendCitation(b, citation);
    }
    // A server block's delta of its own type (a compaction's compaction_delta: its summary and
    // encrypted_content): each member but `type` set in the block's JSON, as received.
    if (b.isServer() and delta.partial_json == null) try setServerMembers(a, arena, detail, b, data);
    // Unknown delta types carry no text for this block.
}

fn setServerMembers(a: *Assembly, arena: Allocator, detail: *errors.Detail, b: *Block, data: []const u8) errors.TurnError!void {
    const delta_json = try json_member.value(arena, data, "delta") orelse return protocol(a, detail, "a delta that is not a JSON object");
    const members = try json_member.members(arena, delta_json) orelse return protocol(a, detail, "a delta that is not a JSON object");
    for (members) |m| {
        if (eql(m.key, "type")) continue;
        if (!try json_member.set(a.gpa, arena, &b.json, m)) return protocol(a, detail, "a server block that is not a JSON object");
    }
}

fn isPlain(block_type: []const u8) bool {
    return eql(block_type, "text") or eql(block_type, "thinking") or eql(block_type, "redacted_thinking");
}

/// Starts a block as content_block_start gives it: `cb` decoded, `json` its bytes as received
/// (unused for the plain kinds, see isPlain).
fn startContent(a: *Assembly, arena: Allocator, index: u32, cb: WireBlock, json: []const u8) errors.TurnError!*Block {
    if (eql(cb.type, "tool_use")) {
        const b = try a.startToolBlock(index, cb.id, cb.name);
        // Kept aside until the block ends (endInput): streamed input would replace it.
        if (try wholeInput(arena, json)) |input| try b.json.appendSlice(a.gpa, input);
        return b;
    }
    if (eql(cb.type, "redacted_thinking")) {
        // Its data arrives whole here, with no deltas: a block of one piece.
        const b = try a.startBlock(index, .redacted_thinking);
        try b.text.appendSlice(a.gpa, cb.data orelse "");
        return b;
    }
    if (!isPlain(cb.type)) {
        // A block panto does not interpret: kept as the API sent it (server blocks).
        return a.startServerBlock(index, cb.type, json);
    }
    const b = try a.startBlock(index, if (eql(cb.type, "text")) .text else .thinking);
    if (cb.signature) |sig| try b.signature.appendSlice(a.gpa, sig);
    if (b.kind == .text) try startCitations(a, arena, b, json);
    if (cb.text) |t| try a.appendDelta(b, t);
    if (cb.thinking) |t| try a.appendDelta(b, t);
    return b;
}

/// A text block's citations given where it starts (a message whole in message_start; the
/// streamed start's list is empty, citations_delta fill it), each as received.
fn startCitations(a: *Assembly, arena: Allocator, b: *Block, block_json: []const u8) errors.TurnError!void {
    const list = try json_member.value(arena, block_json, "citations") orelse return;
    // (null, or not a list: none)
    for (try json_member.elements(arena, list) orelse return) |c| {
        if (c.len > 0 and c[0] == '{') try a.appendCitation(b, c);
    }
}

/// A message_start whose message holds its content already (some servers send the message
/// whole there, then message_stop): each block as its content_block_start would start it,
/// then complete.
fn wholeContent(a: *Assembly, arena: Allocator, detail: *errors.Detail, data: []const u8, content: []const WireBlock) errors.TurnError!void {
    const message = try json_member.value(arena, data, "message") orelse return protocol(a, detail, "message_start without a message");
    const content_json = try json_member.value(arena, message, "content") orelse return protocol(a, detail, "a message's content that is not a list");
    const jsons = try json_member.elements(arena, content_json) orelse return protocol(a, detail, "a message's content that is not a list");
    if (jsons.len != content.len) return protocol(a, detail, "a message's content that is not a list");
    for (content, jsons, 0..) |cb, json, i| {
        if (!isPlain(cb.type) and (json.len == 0 or json[0] != '{')) return protocol(a, detail, "a content block that is not a JSON object");
        const b = try startContent(a, arena, @intCast(i), cb, json);
        try endInput(a, arena, detail, b);
        try a.completeBlock(b);
    }
}

/// A block's input as it ends. Its `input` may come whole where it starts (programmatic
/// tool calls, web fetch), and input_json_delta may stream it too: as the SDKs' accumulators
/// do, streamed input (any fragment not "") replaces the whole one, which is then dropped;
/// else the whole one is the input, added as one delta at the end, so that the block's
/// events join to its input either way. (A tool call keeps it in `json` meanwhile; a server
/// block's is in its JSON, where fillServerInput puts the streamed one.)
fn endInput(a: *Assembly, arena: Allocator, detail: *errors.Detail, b: *Block) errors.TurnError!void {
    if (b.kind == .tool_call) {
        if (b.text.items.len == 0 and b.json.items.len > 0) try a.appendDelta(b, b.json.items);
    } else if (b.isServer()) {
        if (b.text.items.len == 0) {
            if (try wholeInput(arena, b.json.items)) |input| try a.appendDelta(b, input);
        } else try fillServerInput(a, arena, detail, b);
    }
}

/// The `input` member of a block's JSON when it holds anything: not `{}`, which deltas fill.
fn wholeInput(arena: Allocator, block_json: []const u8) Allocator.Error!?[]const u8 {
    const input = try json_member.value(arena, block_json, "input") orelse return null;
    if (input.len == 0 or input[0] != '{' or isEmptyObject(input)) return null;
    return input;
}

/// Whether `json` is `{}`, maybe with whitespace inside.
fn isEmptyObject(json: []const u8) bool {
    const inner = std.mem.trim(u8, json, " \t\r\n");
    if (inner.len < 2 or inner[0] != '{' or inner[inner.len - 1] != '}') return false;
    return std.mem.trim(u8, inner[1 .. inner.len - 1], " \t\r\n").len == 0;
}

/// A server block's streamed input (a server_tool_use's input_json_delta) put in place of the
/// `input` it started with, the rest of its bytes as received.
fn fillServerInput(a: *Assembly, arena: Allocator, detail: *errors.Detail, b: *Block) errors.TurnError!void {
    const streamed = std.mem.trim(u8, b.text.items, " \t\r\n");
    if (streamed.len == 0) return; // nothing streamed: the block is whole as it started
    if (!try std.json.validate(arena, streamed))
        return protocol(a, detail, "a server block's streamed input is not JSON");
    const at = try json_member.find(arena, b.json.items, "input") orelse
        return protocol(a, detail, "input streamed for a server block that has none");
    try b.json.replaceRange(a.gpa, at.start, at.end - at.start, streamed);
}

fn setContainer(a: *Assembly, c: Container) error{OutOfMemory}!void {
    a.container.clearRetainingCapacity();
    try a.container.appendSlice(a.gpa, c.id);
}

fn applyUsage(a: *Assembly, u: WireUsage) void {
    // A field message_delta repeats overrides message_start's; a missing one keeps it.
    if (u.input_tokens) |n| a.usage.input_tokens = n;
    if (u.output_tokens) |n| a.usage.output_tokens = n;
    if (u.cache_read_input_tokens) |n| a.usage.cache_read_tokens = n;
    if (u.cache_creation_input_tokens) |n| a.usage.cache_write_tokens = n;
    if (u.output_tokens_details) |d| if (d.thinking_tokens) |n| {
        a.usage.reasoning_tokens = n;
    };
    if (u.server_tool_use) |s| {
        if (s.web_search_requests) |n| a.usage.web_search_requests = n;
        if (s.web_fetch_requests) |n| a.usage.web_fetch_requests = n;
    }
}

pub fn protocol(a: *Assembly, detail: *errors.Detail, message: []const u8) errors.TurnError {
    detail.set(a.gpa, 0, "protocol_error", message);
    return error.Protocol;
}

fn eql(a: []const u8, b: []const u8) bool {
    return std.mem.eql(u8, a, b);
}

/// Parses an Anthropic error body `{"type":"error","error":{"type":..,"message":..},"request_id":..}`.
pub fn parseErrorBody(arena: Allocator, body: []const u8) ?errors.ProviderError {
    const Body = struct {
        @"error": ?struct { type: []const u8 = "", message: []const u8 = "" } = null,
        request_id: ?[]const u8 = null,
    };
    const parsed = std.json.parseFromSliceLeaky(Body, arena, body, .{ .ignore_unknown_fields = true }) catch return null;
    const e = parsed.@"error" orelse return null;
    return .{ .type = e.type, .message = e.message, .request_id = parsed.request_id };
}
