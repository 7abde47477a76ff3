//! The C ABI's types, mirroring include/panto.h field for field. The test at the end checks
//! every size, offset and enum value against the header itself.
const std = @import("std");
const panto = @import("panto");

pub const abi_version: u32 = 3;

pub const Status = enum(c_int) {
    ok = 0,
    event = 1,
    done = 2,
    would_block = 3,
    invalid_argument = -1,
    out_of_memory = -2,
    config = -3,
    busy = -4,
    result_pending = -5,
    no_such_call = -6,
    state = -7,
    approval_pending = -8,
    authentication = -10,
    permission = -11,
    not_found = -12,
    invalid_request = -13,
    rate_limit = -14,
    overloaded = -15,
    server = -16,
    timeout = -17,
    connection = -18,
    protocol = -19,
    canceled = -20,
    tool_loop = -21,
    capability = -22,
    conversation = -23,
    session = -24,
    session_locked = -25,
    no_such_session = -26,
    output = -27,

    pub fn fromTurnError(err: panto.TurnError) Status {
        return switch (err) {
            error.Authentication => .authentication,
            error.PermissionDenied => .permission,
            error.NotFound => .not_found,
            error.InvalidRequest => .invalid_request,
            error.RateLimit => .rate_limit,
            error.Overloaded => .overloaded,
            error.Server => .server,
            error.Timeout => .timeout,
            error.Connection => .connection,
            error.Protocol => .protocol,
            error.Canceled => .canceled,
            error.ToolLoop => .tool_loop,
            error.Capability => .capability,
            error.OutOfMemory => .out_of_memory,
            error.SessionWrite => .session,
            error.Config => .config,
        };
    }

    /// A failure of panto_stream_final_json (panto.structured_output.FinalJsonError): the
    /// turn's, or the answer's (PANTO_ERR_OUTPUT), or no JSON asked for (PANTO_ERR_STATE).
    pub fn fromFinalJsonError(err: panto.structured_output.FinalJsonError) Status {
        return switch (err) {
            error.Output => .output,
            error.State => .state,
            error.ResultPending => .result_pending,
            error.ApprovalPending => .approval_pending,
            else => |e| fromTurnError(e),
        };
    }

    /// A session's failure (panto.session.Error, but for OutOfMemory).
    pub fn fromSessionError(err: anyerror) Status {
        return switch (err) {
            error.SessionLocked => .session_locked,
            error.NoSuchSession => .no_such_session,
            else => .session,
        };
    }
};

pub const EventKind = enum(i32) {
    message_start = 1,
    block_start = 2,
    content_delta = 3,
    block_complete = 4,
    message_complete = 5,
    message_end = 6,
    tool_details = 7,
    tool_call_start = 8,
    tool_result = 9,
    provider_retry = 10,
    compaction_start = 11,
    compaction_end = 12,
    tool_progress = 13,
    approval_request = 14,
    user_message = 15,
};

/// PantoToolFormat: the core's export formats, whose values are the header's.
pub const ToolFormat = panto.tools.Format;

pub const String = extern struct {
    ptr: ?[*]const u8 = null,
    len: usize = 0,

    pub fn from(s: []const u8) String {
        return .{ .ptr = s.ptr, .len = s.len };
    }

    /// The bytes of a caller's string; null when ptr is NULL but len is not 0.
    pub fn bytes(s: String) ?[]const u8 {
        const p = s.ptr orelse return if (s.len == 0) "" else null;
        return p[0..s.len];
    }
};

pub const Usage = extern struct {
    input_tokens: u64 = 0,
    output_tokens: u64 = 0,
    cache_read_tokens: u64 = 0,
    cache_write_tokens: u64 = 0,
    reasoning_tokens: u64 = 0,
};

pub const Event = extern struct {
    size: u32 = @sizeOf(Event),
    kind: i32 = 0,
    index: u32 = 0,
    block_kind: i32 = 0,
    text: String = .{},
    id: String = .{},
    model: String = .{},
    stop_reason: i32 = 0,
    is_error: i32 = 0,
    provider_stop_reason: String = .{},
    usage: Usage = .{},
    name: String = .{},
    awaiting_result: i32 = 0,
    attempt: u32 = 0,
    http_status: i32 = 0,
    reserved0: i32 = 0,
    delay_ms: u64 = 0,
    parts: ?[*]const PartInfo = null,
    part_count: usize = 0,
    tokens_before: u64 = 0,
    tokens_after: u64 = 0,
    message_count: u64 = 0,
    fraction: f64 = 0,
    sequential: i32 = 0,
    reserved1: i32 = 0,
    request_id: String = .{},
    web_search_requests: u64 = 0,
    web_fetch_requests: u64 = 0,
    cost: f64 = 0,
    approvals: ?[*]const ApprovalCall = null,
    approval_count: usize = 0,
};

/// A call that waits for a person's answer, as APPROVAL_REQUEST lists it: the core's
/// `event.ApprovalCall`, which has this very layout (the test below checks it), so the
/// event's array is handed out as it is.
pub const ApprovalCall = extern struct {
    id: String = .{},
    name: String = .{},
    input: String = .{},

    pub fn fromCore(calls: []const panto.event.ApprovalCall) ?[*]const ApprovalCall {
        return if (calls.len == 0) null else @ptrCast(calls.ptr);
    }
};

/// A call of the pending round (panto_agent_pending_round): the core's
/// `pending_round.View`, which has this very layout (the test below checks it), so the
/// agent's array is handed out as it is.
pub const PendingCall = extern struct {
    id: String = .{},
    name: String = .{},
    input: String = .{},
    state: i32 = 0,
    reserved: i32 = 0,

    pub fn fromCore(calls: []const panto.pending_round.View) ?[*]const PendingCall {
        return if (calls.len == 0) null else @ptrCast(calls.ptr);
    }
};
/// PantoPendingState: the core's, whose values are the header's.
pub const PendingState = panto.pending_round.State;

/// PantoPartKind: the core's, whose values are the header's.
pub const PartKind = panto.event.PartKind;

/// A part the caller gives (text or media).
pub const Part = extern struct {
    kind: i32 = 0,
    reserved0: u32 = 0,
    text: String = .{},
    media_type: String = .{},
    name: String = .{},
    data: ?*const anyopaque = null,
    data_len: usize = 0,
};

/// A part as events report it: the core's `event.PartInfo`, which has this very layout (the
/// test below checks it), so a result's array is handed out as it is.
pub const PartInfo = extern struct {
    kind: i32 = 0,
    width: u32 = 0,
    height: u32 = 0,
    reserved0: u32 = 0,
    text: String = .{},
    media_type: String = .{},
    name: String = .{},
    data: String = .{},
    byte_size: u64 = 0,

    pub fn fromCore(infos: []const panto.event.PartInfo) ?[*]const PartInfo {
        return if (infos.len == 0) null else @ptrCast(infos.ptr);
    }
};

pub const Error = extern struct {
    size: u32 = @sizeOf(Error),
    code: i32 = 0,
    http_status: i32 = 0,
    reserved0: i32 = 0,
    type: String = .{},
    message: String = .{},
    request_id: String = .{},
    retry_after: f64 = -1,
    headers: String = .from("{}"),
    output: String = .{},
};

pub const Input = extern struct {
    size: u32 = @sizeOf(Input),
    reserved0: u32 = 0,
    text: String = .{},
    parts: ?[*]const Part = null,
    part_count: usize = 0,
    options: String = .{},
};

pub const ToolResult = extern struct {
    size: u32 = @sizeOf(ToolResult),
    is_error: i32 = 0,
    call_id: String = .{},
    content: String = .{},
    parts: ?[*]const Part = null,
    part_count: usize = 0,
};

pub const Connections = extern struct {
    size: u32 = @sizeOf(Connections),
    reserved0: u32 = 0,
    opened: u64 = 0,
    reused: u64 = 0,
};

/// PantoMcpState, PantoMcpTransport: the core's, whose values are the header's.
pub const McpState = panto.mcp_status.State;
pub const McpTransport = panto.mcp_status.Transport;

pub const McpStatus = extern struct {
    size: u32 = @sizeOf(McpStatus),
    state: i32 = 0,
    transport: i32 = 0,
    reserved0: u32 = 0,
    name: String = .{},
    protocol_version: String = .{},
    server_name: String = .{},
    server_version: String = .{},
    tool_count: u64 = 0,
    @"error": String = .{},
    stderr_tail: String = .{},
};

pub const SessionInfo = extern struct {
    size: u32 = @sizeOf(SessionInfo),
    resumed: i32 = 0,
    id: String = .{},
    path: String = .{},
    torn_bytes: u64 = 0,
};

/// PantoWait.events: what the descriptor must be ready for (the core's poll_io.Direction,
/// whose values are these).
pub const WaitEvents = enum(u32) {
    read = 1,
    write = 2,
};

/// What a stepped stream waits for (PANTO_WOULD_BLOCK): `fd` ready for `events`, or
/// `deadline_ns` (CLOCK_MONOTONIC), whichever first.
pub const Wait = extern struct {
    size: u32 = @sizeOf(Wait),
    fd: i32 = -1,
    events: u32 = 0,
    reserved0: u32 = 0,
    deadline_ns: i64 = -1,

    pub fn fromCore(w: panto.stream_step.Wait) Wait {
        return .{
            .fd = w.fd,
            .events = @intFromEnum(w.direction),
            .deadline_ns = if (w.deadline_ns == 0) -1 else @intCast(@min(w.deadline_ns, std.math.maxInt(i64))),
        };
    }
};

comptime {
    for (std.meta.fields(WaitEvents)) |f| std.debug.assert(@intFromEnum(@field(panto.stream_step.Direction, f.name)) == f.value);
}

pub const TokenCount = extern struct {
    size: u32 = @sizeOf(TokenCount),
    estimated: i32 = 0,
    input_tokens: u64 = 0,
};

/// The caller's struct `T` with the fields its `size` leaves out zero, so that callers built
/// against an older header keep working: null when `size` does not even cover `min_field`.
pub fn readSized(comptime T: type, src: *const T, comptime min_field: []const u8) ?T {
    const caller_size = src.size;
    if (caller_size < @offsetOf(T, min_field) + @sizeOf(@FieldType(T, min_field))) return null;
    if (caller_size >= @sizeOf(T)) return src.*;
    var copy: T = .{};
    const from: [*]const u8 = @ptrCast(src);
    const to: [*]u8 = @ptrCast(&copy);
    @memcpy(to[0..caller_size], from[0..caller_size]);
    return copy;
}

/// Copies the fields of `full` that fit in the caller's struct, whose `size` says how large
/// the caller believes it is, so that callers built against an older header keep working.
pub fn writeSized(comptime T: type, dest: *T, full: T) void {
    const caller_size = @min(dest.size, @sizeOf(T));
    var copy = full;
    copy.size = dest.size;
    const src: [*]const u8 = @ptrCast(&copy);
    const dst: [*]u8 = @ptrCast(dest);
    @memcpy(dst[0..caller_size], src[0..caller_size]);
}

fn upper(comptime name: []const u8) []const u8 {
    comptime {
        @setEvalBranchQuota(10_000);
        var out: [name.len]u8 = undefined;
        for (name, 0..) |ch, i| out[i] = std.ascii.toUpper(ch);
        const final = out;
        return &final;
    }
}

/// Checks that every value of a Zig enum has the same value as PREFIX ++ NAME in panto.h.
fn expectEnumMatches(comptime c: type, comptime Enum: type, comptime prefix: []const u8) !void {
    inline for (std.meta.fields(Enum)) |f| {
        try std.testing.expectEqual(@as(c_int, @field(c, prefix ++ upper(f.name))), @as(c_int, f.value));
    }
}

test "the Zig types match include/panto.h" {
    const c = @cImport(@cInclude("panto.h"));
    inline for (.{ .{ Event, c.PantoEvent }, .{ Error, c.PantoError }, .{ Connections, c.PantoConnections }, .{ Usage, c.PantoUsage }, .{ String, c.PantoString }, .{ Input, c.PantoInput }, .{ ToolResult, c.PantoToolResult }, .{ SessionInfo, c.PantoSessionInfo }, .{ McpStatus, c.PantoMcpStatus }, .{ Part, c.PantoPart }, .{ PartInfo, c.PantoPartInfo }, .{ PartInfo, panto.event.PartInfo }, .{ Wait, c.PantoWait }, .{ ApprovalCall, c.PantoApprovalCall }, .{ ApprovalCall, panto.event.ApprovalCall }, .{ TokenCount, c.PantoTokenCount }, .{ PendingCall, c.PantoPendingCall }, .{ PendingCall, panto.pending_round.View } }) |pair| {
        const Z = pair[0];
        const C = pair[1];
        try std.testing.expectEqual(@sizeOf(C), @sizeOf(Z));
        try std.testing.expectEqual(@alignOf(C), @alignOf(Z));
        try std.testing.expectEqual(std.meta.fields(C).len, std.meta.fields(Z).len);
        inline for (std.meta.fields(Z)) |f| {
            try std.testing.expectEqual(@offsetOf(C, f.name), @offsetOf(Z, f.name));
        }
    }
    try std.testing.expectEqual(@as(c_int, c.PANTO_ABI_VERSION), @as(c_int, abi_version));
    try std.testing.expectEqualStrings(c.PANTO_VERSION, panto.version);
    inline for (std.meta.fields(Status)) |f| {
        const prefix = if (f.value < 0) "PANTO_ERR_" else "PANTO_";
        try std.testing.expectEqual(@as(c_int, @field(c, prefix ++ upper(f.name))), @as(c_int, f.value));
    }
    try expectEnumMatches(c, EventKind, "PANTO_EVENT_");
    try expectEnumMatches(c, panto.BlockKind, "PANTO_BLOCK_");
    try expectEnumMatches(c, panto.StopReason, "PANTO_STOP_");
    try expectEnumMatches(c, ToolFormat, "PANTO_TOOL_FORMAT_");
    try expectEnumMatches(c, PartKind, "PANTO_PART_");
    try expectEnumMatches(c, WaitEvents, "PANTO_WAIT_");
    try expectEnumMatches(c, PendingState, "PANTO_PENDING_");
    try expectEnumMatches(c, McpState, "PANTO_MCP_");
    try expectEnumMatches(c, McpTransport, "PANTO_MCP_");
}
