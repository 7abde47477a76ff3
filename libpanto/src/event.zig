//! The events a turn streams, the same vocabulary for every provider.
//! Strings in an event are borrowed from the stream until its next `next()` call.
const std = @import("std");

/// What a content block holds. Values match `PantoBlockKind` in include/panto.h.
pub const BlockKind = enum(i32) {
    none = 0,
    text = 1,
    thinking = 2,
    tool_call = 3,
    /// Thinking the provider keeps encrypted: the block's text is its opaque data.
    redacted_thinking = 4,
    /// A block of the provider's that panto keeps without reading it (Anthropic's server
    /// tools' calls and results, compaction, types added later): its deltas are its input's
    /// JSON as it streams (a server_tool_use's), its BlockComplete's text is the block's JSON
    /// object as received and `name` its type.
    server_block = 5,
};

/// Why the model stopped, normalized across providers. Values match `PantoStopReason`.
pub const StopReason = enum(i32) {
    none = 0,
    end_turn = 1,
    max_tokens = 2,
    stop_sequence = 3,
    tool_use = 4,
    refusal = 5,
    content_filter = 6,
    pause_turn = 7,
    aborted = 8,
    other = 9,
    /// The turn's budget (config `budget`) is spent: only on the turn's MessageComplete, whose
    /// provider_stop_reason names the budget (`BudgetKind`).
    budget = 10,

    /// Maps a provider's own stop value (Anthropic `stop_reason` or OpenAI `finish_reason`).
    pub fn fromProvider(raw: []const u8) StopReason {
        const table = [_]struct { []const u8, StopReason }{
            .{ "end_turn", .end_turn },         .{ "stop", .end_turn },
            .{ "max_tokens", .max_tokens },     .{ "length", .max_tokens },
            .{ "stop_sequence", .stop_sequence }, .{ "tool_use", .tool_use },
            .{ "tool_calls", .tool_use },       .{ "function_call", .tool_use },
            .{ "refusal", .refusal },           .{ "content_filter", .content_filter },
            .{ "pause_turn", .pause_turn },
        };
        for (table) |entry| if (std.mem.eql(u8, entry[0], raw)) return entry[1];
        return .other;
    }
};

/// Token counts. `input_tokens` never includes cached tokens, whatever the provider's convention.
pub const Usage = struct {
    input_tokens: u64 = 0,
    output_tokens: u64 = 0,
    cache_read_tokens: u64 = 0,
    cache_write_tokens: u64 = 0,
    reasoning_tokens: u64 = 0,
    /// Anthropic's server tools run for the message (`usage.server_tool_use`): billed per request.
    web_search_requests: u64 = 0,
    web_fetch_requests: u64 = 0,

    /// As JSON (a conversation's export, the panto command's events): the token counts, then
    /// the server tools' only when not 0, so that usage without them reads as it always did.
    pub fn jsonStringify(u: Usage, s: anytype) !void {
        try s.beginObject();
        inline for (std.meta.fields(Usage)) |f| {
            const n = @field(u, f.name);
            const optional = comptime std.mem.endsWith(u8, f.name, "_requests");
            if (!optional or n != 0) {
                try s.objectField(f.name);
                try s.write(n);
            }
        }
        try s.endObject();
    }
};

/// `request_id`: the provider's request id header (request-id, x-request-id), "" when none.
pub const MessageStart = struct { id: []const u8, model: []const u8, request_id: []const u8 = "" };
pub const BlockStart = struct { index: u32, kind: BlockKind };
pub const ContentDelta = struct { index: u32, kind: BlockKind, text: []const u8 };
/// `name`: a server block's type ("server_tool_use", ...), else "". `citations`: a text
/// block's citations, a JSON array of the citation objects as received, or "" for none.
pub const BlockComplete = struct { index: u32, kind: BlockKind, text: []const u8, name: []const u8 = "", citations: []const u8 = "" };
/// How an assistant message, or the whole turn, ended.
pub const MessageComplete = struct {
    stop_reason: StopReason,
    provider_stop_reason: []const u8,
    usage: Usage,
    /// The usage's cost in USD at the model's list prices (catalog/cost.zig); null when a
    /// price it needs is unknown (a model the catalog lacks, without config model_info).
    cost: ?f64 = null,
};
/// The model named a tool; its input follows as content deltas of the block.
pub const ToolDetails = struct { index: u32, id: []const u8, name: []const u8 };
/// A tool call is about to be handled. `input` is a JSON object. When `awaiting_result`, the
/// host runs the tool and submits the result; the round's results wait for every one.
/// `sequential`: the call must run alone (its tool says so, or the agent's tool_execution).
pub const ToolCallStart = struct { id: []const u8, name: []const u8, input: []const u8, awaiting_result: bool, sequential: bool = false };
/// A host tool reported progress while it runs (Stream.toolProgress). `fraction`: 0 to 1, or
/// null when the tool gave text only.
pub const ToolProgress = struct { id: []const u8, name: []const u8, text: []const u8, fraction: ?f64 = null };
/// `parts` is empty for a result that is one text (`content` is all of it); else it lists every
/// part in order and `content` is the text parts joined with "\n".
pub const ToolResult = struct { id: []const u8, name: []const u8, content: []const u8, is_error: bool, parts: []const PartInfo = &.{} };

/// What a content part is. Values match `PantoPartKind` in include/panto.h.
pub const PartKind = enum(i32) {
    text = 1,
    /// Given only: raw bytes panto fits (an image or a PDF).
    media = 2,
    image = 3,
    document = 4,
};

/// A part as it was sent to the model. Laid out as `PantoPartInfo` (include/panto.h), so the
/// C ABI hands out a result's array as it is, with no copy and nothing to allocate.
pub const PartInfo = extern struct {
    kind: PartKind,
    /// Images: pixels after fitting.
    width: u32 = 0,
    height: u32 = 0,
    reserved0: u32 = 0,
    /// Text: the text (a dropped attachment's note too).
    text: Bytes = .{},
    /// Images and documents: the media type sent.
    media_type: Bytes = .{},
    /// The name given, or empty.
    name: Bytes = .{},
    /// Images and documents: the bytes sent, base64.
    data: Bytes = .{},
    /// Images and documents: the size of the bytes sent (not of base64).
    byte_size: u64 = 0,
};

/// A borrowed string in an extern struct.
pub const Bytes = extern struct {
    ptr: [*]const u8 = "",
    len: usize = 0,

    pub fn of(s: []const u8) Bytes {
        return .{ .ptr = s.ptr, .len = s.len };
    }

    pub fn slice(b: Bytes) []const u8 {
        return b.ptr[0..b.len];
    }
};
/// A call that waits for a person's answer. Laid out as `PantoApprovalCall`
/// (include/panto.h), so the C ABI hands out the event's array as it is.
pub const ApprovalCall = extern struct { id: Bytes, name: Bytes, input: Bytes };
/// Calls of the round that wait for a person's answer (Stream.approve / deny): listed before
/// the ToolCallStarts of the round's other calls; an approved call's ToolCallStart comes
/// after its answer.
pub const ApprovalRequest = struct { calls: []const ApprovalCall };

/// A provider request failed in a way worth another try; the next `next()` waits, then asks again.
pub const ProviderRetry = struct { attempt: u32, delay_ms: u64, http_status: u16, reason: []const u8 };

/// The older messages are being summarized (compaction.zig): before a request whose context
/// would not fit ("threshold"), or asked for ("manual").
pub const CompactionStart = struct { tokens_before: u64, reason: []const u8 };
/// The summary replaced `message_count` messages; the context is now about `tokens_after`.
pub const CompactionEnd = struct { tokens_before: u64, tokens_after: u64, message_count: u64, summary: []const u8 };

pub const Event = union(enum) {
    message_start: MessageStart,
    block_start: BlockStart,
    content_delta: ContentDelta,
    block_complete: BlockComplete,
    /// One assistant message ended (its own stop reason and usage).
    message_end: MessageComplete,
    tool_details: ToolDetails,
    tool_call_start: ToolCallStart,
    tool_result: ToolResult,
    provider_retry: ProviderRetry,
    compaction_start: CompactionStart,
    compaction_end: CompactionEnd,
    tool_progress: ToolProgress,
    approval_request: ApprovalRequest,
    /// The turn's terminal event: `next()` after it returns null. Usage is the turn's sum.
    /// (After it, a follow-up's turn when one was queued: Stream.followUp.)
    message_complete: MessageComplete,
    /// A message of the user's entered the conversation during the stream: a steer, after
    /// a tool round's results; a follow-up, as the user message of the stream's next turn.
    user_message: UserMessage,
};

pub const UserMessage = struct {
    source: @import("turn/steering.zig").Source,
    text: []const u8,
};

pub fn addUsage(total: *Usage, u: Usage) void {
    // Saturating: the counts are the server's, and a huge one must not overflow the sum.
    total.input_tokens +|= u.input_tokens;
    total.output_tokens +|= u.output_tokens;
    total.cache_read_tokens +|= u.cache_read_tokens;
    total.cache_write_tokens +|= u.cache_write_tokens;
    total.reasoning_tokens +|= u.reasoning_tokens;
    total.web_search_requests +|= u.web_search_requests;
    total.web_fetch_requests +|= u.web_fetch_requests;
}

test "a turn's usage saturates instead of overflowing on a server's huge counts" {
    const max = std.math.maxInt(u64);
    var total: Usage = .{ .output_tokens = max, .input_tokens = 1 };
    addUsage(&total, .{ .output_tokens = max, .input_tokens = 2, .reasoning_tokens = max });
    try std.testing.expectEqual(@as(u64, max), total.output_tokens);
    try std.testing.expectEqual(@as(u64, 3), total.input_tokens);
    try std.testing.expectEqual(@as(u64, max), total.reasoning_tokens);
}

test "stop reasons of both providers map onto one set" {
    try std.testing.expectEqual(StopReason.end_turn, StopReason.fromProvider("stop"));
    try std.testing.expectEqual(StopReason.end_turn, StopReason.fromProvider("end_turn"));
    try std.testing.expectEqual(StopReason.max_tokens, StopReason.fromProvider("length"));
    try std.testing.expectEqual(StopReason.tool_use, StopReason.fromProvider("tool_calls"));
    try std.testing.expectEqual(StopReason.other, StopReason.fromProvider("something_new"));
}
