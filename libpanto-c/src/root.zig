//! The C ABI of panto (include/panto.h). Only the exported functions live here: each one
//! checks its arguments, calls the core and translates its answer.
const std = @import("std");
const panto = @import("panto");
const abi = @import("abi.zig");
const names = @import("names.zig");
const parts = @import("parts.zig");
const CallError = @import("call_error.zig").CallError;
const StreamHandle = @import("stream_handle.zig").StreamHandle;

pub const Status = abi.Status;
pub const PantoEvent = abi.Event;
pub const PantoError = abi.Error;
pub const PantoString = abi.String;
pub const PantoUsage = abi.Usage;
pub const PantoPart = abi.Part;
pub const PantoWait = abi.Wait;
/// PantoPart arrays read as the core's parts (for the panto command, which embeds the Lua module).
pub const part_reader = parts;

/// libc's malloc: thread-safe, and the allocator the host program already uses.
const gpa = std.heap.c_allocator;

/// No signal stack: std gives each thread that runs Zig code a 256 KiB thread-local one
/// (`std.Thread.maybeAttachSignalStack`, for the panic handler's stack traces), and a
/// library's thread-locals are set up, zeroed, in every thread of the host program that
/// touches them: 256 KiB of RSS a thread (1,000 streams on 1,000 threads: 284 MB of the
/// 349 MB). The host program owns signal handling, and the watchdog thread needs none.
pub const std_options: std.Options = .{ .signal_stack_size = null };

/// The object behind `PantoAgent*`: the core agent, or only the reason it could not be made.
pub const PantoAgent = struct {
    agent: ?*panto.Agent,
    last_error: CallError = .{},
    conversation_json: std.Io.Writer.Allocating,
    /// The detail of the last failed provider request of panto_agent_count_tokens or
    /// panto_agent_list_models (last_error points at it).
    request_detail: panto.errors.Detail = .{},

    fn clearError(h: *PantoAgent) c_int {
        return h.last_error.clear();
    }

    fn setError(h: *PantoAgent, status: abi.Status, message: []const u8) c_int {
        return h.last_error.set(status, message);
    }
};

/// The object behind `PantoStream*` (stream_handle.zig).
pub const PantoStream = StreamHandle;

/// The object behind `PantoTools*`: a tool set without an agent.
pub const PantoTools = struct {
    set: panto.tools.Set,
    last_error: CallError = .{},
    export_json: std.Io.Writer.Allocating,
};

fn code(s: abi.Status) c_int {
    return @intFromEnum(s);
}

// ---- Version and names ----------------------------------------------------------------

pub export fn panto_abi_version() u32 {
    return abi.abi_version;
}

pub export fn panto_version() [*:0]const u8 {
    return panto.version;
}

pub export fn panto_status_name(status: c_int) [*:0]const u8 {
    return names.status(status);
}

pub export fn panto_event_kind_name(kind: c_int) [*:0]const u8 {
    return names.eventKind(kind);
}

pub export fn panto_block_kind_name(kind: c_int) [*:0]const u8 {
    return names.blockKind(kind);
}

pub export fn panto_stop_reason_name(reason: c_int) [*:0]const u8 {
    return names.stopReason(reason);
}

pub export fn panto_part_kind_name(kind: c_int) [*:0]const u8 {
    return names.partKind(kind);
}

// ---- Agent ----------------------------------------------------------------------------

pub export fn panto_agent_new(config_json: PantoString, out_agent: ?*?*PantoAgent) c_int {
    const out = out_agent orelse return code(.invalid_argument);
    out.* = null;
    if (config_json.ptr == null) return code(.invalid_argument);
    const json = config_json.bytes() orelse return code(.invalid_argument);

    const h = gpa.create(PantoAgent) catch return code(.out_of_memory);
    h.* = .{ .agent = null, .conversation_json = .init(gpa) };

    var arena: std.heap.ArenaAllocator = .init(gpa);
    defer arena.deinit();
    var diag: panto.config.Diagnostic = .{};
    const config = panto.config.parseJson(arena.allocator(), json, &diag) catch |err| switch (err) {
        error.OutOfMemory => {
            panto_agent_free(h);
            return code(.out_of_memory);
        },
        error.InvalidConfig => {
            // Like sqlite3_open: the handle carries the reason; the caller frees it.
            out.* = h;
            return h.setError(.config, diag.message());
        },
    };
    h.agent = panto.Agent.initWithDiagnostic(gpa, config, &diag) catch |err| switch (err) {
        error.InvalidConfig, error.Busy => {
            out.* = h;
            return h.setError(.config, diag.message());
        },
        error.SessionWrite, error.SessionCorrupt, error.SessionExists, error.SessionLocked, error.NoSuchSession => |e| {
            out.* = h;
            return h.setError(abi.Status.fromSessionError(e), diag.message());
        },
        error.OutOfMemory => {
            panto_agent_free(h);
            return code(.out_of_memory);
        },
    };
    out.* = h;
    return code(.ok);
}

pub export fn panto_agent_free(agent: ?*PantoAgent) void {
    const h = agent orelse return;
    if (h.agent) |a| a.deinit();
    h.last_error.deinit();
    h.request_detail.deinit(gpa);
    h.conversation_json.deinit();
    gpa.destroy(h);
}

pub export fn panto_agent_error(agent: ?*const PantoAgent, out_error: ?*PantoError) c_int {
    const h = agent orelse return code(.invalid_argument);
    return h.last_error.report(out_error);
}

pub export fn panto_agent_set_config(agent: ?*PantoAgent, config_json: PantoString) c_int {
    const h = agent orelse return code(.invalid_argument);
    const a = h.agent orelse return h.setError(.invalid_argument, "this agent was not created: see panto_agent_error");
    if (config_json.ptr == null) return h.setError(.invalid_argument, "config_json is NULL");
    const json = config_json.bytes() orelse return h.setError(.invalid_argument, "config_json is NULL");
    var diag: panto.config.Diagnostic = .{};
    a.setConfig(json, &diag) catch |err| return switch (err) {
        error.Busy => h.setError(.busy, "the configuration cannot change while a stream of the agent is unfinished"),
        error.InvalidConfig => h.setError(.config, diag.message()),
        error.OutOfMemory => h.setError(.out_of_memory, "out of memory"),
        error.SessionWrite => h.setError(.session, diag.message()),
    };
    return h.clearError();
}

pub export fn panto_agent_settings(agent: ?*PantoAgent, out_json: ?*PantoString) c_int {
    const h = agent orelse return code(.invalid_argument);
    const out = out_json orelse return h.setError(.invalid_argument, "out_json is NULL");
    const a = h.agent orelse return h.setError(.invalid_argument, "this agent was not created: see panto_agent_error");
    h.conversation_json.clearRetainingCapacity(); // the agent's one borrowed-string buffer
    panto.settings_json.write(&h.conversation_json.writer, &a.config) catch return h.setError(.out_of_memory, "out of memory");
    out.* = .from(h.conversation_json.written());
    return h.clearError();
}

pub export fn panto_agent_run(agent: ?*PantoAgent, input: ?*const abi.Input, out_stream: ?*?*PantoStream) c_int {
    const out = out_stream orelse return code(.invalid_argument);
    out.* = null;
    const h = agent orelse return code(.invalid_argument);
    const a = h.agent orelse return h.setError(.invalid_argument, "this agent was not created: see panto_agent_error");
    const in = input orelse return h.setError(.invalid_argument, "input is NULL");
    const fields = abi.readSized(abi.Input, in, "text") orelse
        return h.setError(.invalid_argument, "input.size is too small: initialise it with PANTO_INPUT_INIT");
    const text = fields.text.bytes() orelse return h.setError(.invalid_argument, "input.text.ptr is NULL but its len is not 0");
    var problem: parts.Problem = .{};
    const given = parts.read(gpa, fields.parts, fields.part_count, "input.parts", &problem) catch |err| return switch (err) {
        error.Invalid => h.setError(.invalid_argument, problem.message()),
        error.OutOfMemory => h.setError(.out_of_memory, "out of memory"),
    };
    defer gpa.free(given);
    const given_options = fields.options.bytes() orelse return h.setError(.invalid_argument, "input.options.ptr is NULL but its len is not 0");
    const options: ?[]const u8 = if (given_options.len == 0) null else given_options; // ({NULL, 0}: none)
    var diag: panto.config.Diagnostic = .{};
    const s = a.runWith(.{ .text = text, .parts = given }, options, &diag) catch |err| return switch (err) {
        error.Busy => h.setError(.busy, "the agent already has an unfinished stream; free it first"),
        error.OutOfMemory => h.setError(.out_of_memory, "out of memory"),
        error.SessionWrite => h.setError(.session, "the user message could not be written to the session file"),
        error.InvalidConfig => h.setError(.config, diag.message()),
    };
    out.* = StreamHandle.create(s) catch {
        s.close(); // (the user message stays, as for a turn freed before its first event)
        return h.setError(.out_of_memory, "out of memory");
    };
    return h.clearError();
}

pub export fn panto_agent_continue(agent: ?*PantoAgent, options: PantoString, out_stream: ?*?*PantoStream) c_int {
    return optionsTurn(agent, options, out_stream, panto.Agent.continueTurn, struct {
        fn refused(h: *PantoAgent) c_int {
            return h.setError(.conversation, "the conversation does not end with a user message: there is nothing to answer");
        }
    }.refused);
}

/// A turn started with only its options (continue, resume): `start` makes its stream; one it
/// refuses for its own reason (the one error beyond run's) is `refused`'s to say.
fn optionsTurn(agent: ?*PantoAgent, options: PantoString, out_stream: ?*?*PantoStream, comptime start: anytype, comptime refused: fn (*PantoAgent) c_int) c_int {
    const out = out_stream orelse return code(.invalid_argument);
    out.* = null;
    const h = agent orelse return code(.invalid_argument);
    const a = h.agent orelse return h.setError(.invalid_argument, "this agent was not created: see panto_agent_error");
    const given_options = options.bytes() orelse return h.setError(.invalid_argument, "options.ptr is NULL but its len is not 0");
    var diag: panto.config.Diagnostic = .{};
    const s = start(a, if (given_options.len == 0) null else given_options, &diag) catch |err| return switch (err) {
        error.Busy => h.setError(.busy, "the agent already has an unfinished stream; free it first"),
        error.OutOfMemory => h.setError(.out_of_memory, "out of memory"),
        error.SessionWrite => h.setError(.session, "the session file could not be written"),
        error.InvalidConfig => h.setError(.config, diag.message()),
        else => refused(h),
    };
    out.* = StreamHandle.create(s) catch {
        s.close(); // (nothing of the turn happened: a pending round stays pending)
        return h.setError(.out_of_memory, "out of memory");
    };
    return h.clearError();
}

pub export fn panto_agent_pending_round(agent: ?*PantoAgent, out_calls: ?*?[*]const abi.PendingCall, out_count: ?*usize) c_int {
    const calls_out = out_calls orelse return code(.invalid_argument);
    const count_out = out_count orelse return code(.invalid_argument);
    calls_out.* = null;
    count_out.* = 0;
    const h = agent orelse return code(.invalid_argument);
    const a = h.agent orelse return h.setError(.invalid_argument, "this agent was not created: see panto_agent_error");
    if (a.busy) return h.setError(.busy, "the agent has an unfinished stream: its round is that stream's");
    const calls = a.pendingCalls() catch return h.setError(.out_of_memory, "out of memory");
    calls_out.* = abi.PendingCall.fromCore(calls);
    count_out.* = calls.len;
    return h.clearError();
}

pub export fn panto_agent_resume(agent: ?*PantoAgent, options: PantoString, out_stream: ?*?*PantoStream) c_int {
    return optionsTurn(agent, options, out_stream, panto.Agent.resumeTurn, struct {
        fn refused(h: *PantoAgent) c_int {
            return h.setError(.state, "no tool round waits for an answer: there is nothing to resume");
        }
    }.refused);
}

pub export fn panto_agent_conversation(agent: ?*PantoAgent, out_json: ?*PantoString) c_int {
    const h = agent orelse return code(.invalid_argument);
    const out = out_json orelse return code(.invalid_argument);
    const a = h.agent orelse return h.setError(.invalid_argument, "this agent was not created: see panto_agent_error");
    h.conversation_json.clearRetainingCapacity();
    a.conversation.writeJson(&h.conversation_json.writer) catch return h.setError(.out_of_memory, "out of memory");
    out.* = .from(h.conversation_json.written());
    return code(.ok);
}

pub export fn panto_agent_export(agent: ?*PantoAgent, out_json: ?*PantoString) c_int {
    const h = agent orelse return code(.invalid_argument);
    const out = out_json orelse return h.setError(.invalid_argument, "out_json is NULL");
    const a = h.agent orelse return h.setError(.invalid_argument, "this agent was not created: see panto_agent_error");
    h.conversation_json.clearRetainingCapacity();
    a.exportJson(&h.conversation_json.writer) catch return h.setError(.out_of_memory, "out of memory");
    out.* = .from(h.conversation_json.written());
    return h.clearError();
}

pub export fn panto_agent_import(agent: ?*PantoAgent, json: PantoString) c_int {
    const h = agent orelse return code(.invalid_argument);
    const a = h.agent orelse return h.setError(.invalid_argument, "this agent was not created: see panto_agent_error");
    if (json.ptr == null) return h.setError(.invalid_argument, "json is NULL");
    const text = json.bytes() orelse return h.setError(.invalid_argument, "json is NULL");
    var diag: panto.conversation_json.Diagnostic = .{};
    a.importJson(text, &diag) catch |err| return switch (err) {
        error.Busy => h.setError(.busy, "the conversation cannot be replaced while a stream of the agent is unfinished"),
        error.InvalidConversation => h.setError(.conversation, diag.message()),
        error.OutOfMemory => h.setError(.out_of_memory, "out of memory"),
        error.SessionWrite => h.setError(.session, session_write_failed),
    };
    return h.clearError();
}

/// A journal write failed (the conversation is unchanged).
const session_write_failed = "the change could not be written to the session file; the conversation is unchanged";

pub export fn panto_agent_message_count(agent: ?*const PantoAgent, out_count: ?*usize) c_int {
    const h = agent orelse return code(.invalid_argument);
    const out = out_count orelse return code(.invalid_argument);
    const a = h.agent orelse return code(.invalid_argument);
    out.* = a.messageCount();
    return code(.ok);
}

pub export fn panto_agent_spent(agent: ?*const PantoAgent, out_usage: ?*PantoUsage, out_cost: ?*f64) c_int {
    const h = agent orelse return code(.invalid_argument);
    const a = h.agent orelse return code(.invalid_argument);
    const spent = a.spent();
    if (out_usage) |u| u.* = .{
        .input_tokens = spent.usage.input_tokens,
        .output_tokens = spent.usage.output_tokens,
        .cache_read_tokens = spent.usage.cache_read_tokens,
        .cache_write_tokens = spent.usage.cache_write_tokens,
        .reasoning_tokens = spent.usage.reasoning_tokens,
    };
    if (out_cost) |c| c.* = spent.cost orelse -1;
    return code(.ok);
}

pub export fn panto_agent_truncate(agent: ?*PantoAgent, message_count: usize) c_int {
    const h = agent orelse return code(.invalid_argument);
    const a = h.agent orelse return h.setError(.invalid_argument, "this agent was not created: see panto_agent_error");
    var diag: panto.conversation_json.Diagnostic = .{};
    a.truncate(message_count, &diag) catch |err| return switch (err) {
        error.Busy => h.setError(.busy, "the conversation cannot change while a stream of the agent is unfinished"),
        error.OutOfRange => h.setError(.invalid_argument, "message_count is larger than the number of messages"),
        error.InvalidConversation => h.setError(.conversation, diag.message()),
        error.OutOfMemory => h.setError(.out_of_memory, "out of memory"),
        error.SessionWrite => h.setError(.session, session_write_failed),
    };
    return h.clearError();
}

pub export fn panto_agent_rollback_turn(agent: ?*PantoAgent, out_removed: ?*usize) c_int {
    if (out_removed) |out| out.* = 0;
    const h = agent orelse return code(.invalid_argument);
    const a = h.agent orelse return h.setError(.invalid_argument, "this agent was not created: see panto_agent_error");
    const removed = a.rollbackTurn() catch |err| return switch (err) {
        error.Busy => h.setError(.busy, "the conversation cannot change while a stream of the agent is unfinished"),
        error.OutOfMemory => h.setError(.out_of_memory, "out of memory"),
        error.SessionWrite => h.setError(.session, session_write_failed),
    };
    if (out_removed) |out| out.* = removed;
    return h.clearError();
}

// ---- The model catalog ----------------------------------------------------------------

/// snprintf's shape: the whole JSON's length in *out_len, as much of it as fits in buf.
pub export fn panto_model_info(provider: PantoString, model: PantoString, buf: ?[*]c_char, capacity: usize, out_len: ?*usize) c_int {
    const len_out = out_len orelse return code(.invalid_argument);
    const p = provider.bytes() orelse return code(.invalid_argument);
    const m = model.bytes() orelse return code(.invalid_argument);
    if (buf == null and capacity != 0) return code(.invalid_argument);
    // The longest entry is well under this; a model name past it is no catalog's.
    var scratch: [4096]u8 = undefined;
    var w: std.Io.Writer = .fixed(&scratch);
    panto.catalog.json.writeResolved(&w, p, m, null) catch {
        w = .fixed(&scratch);
        w.writeAll("null") catch unreachable;
    };
    const json = w.buffered();
    len_out.* = json.len;
    const n = @min(capacity, json.len);
    if (buf) |b| @memcpy(@as([*]u8, @ptrCast(b))[0..n], json[0..n]);
    return code(.ok);
}

pub export fn panto_agent_model_info(agent: ?*PantoAgent, out_json: ?*PantoString) c_int {
    const h = agent orelse return code(.invalid_argument);
    const out = out_json orelse return h.setError(.invalid_argument, "out_json is NULL");
    const a = h.agent orelse return h.setError(.invalid_argument, "this agent was not created: see panto_agent_error");
    h.conversation_json.clearRetainingCapacity(); // the agent's one borrowed-string buffer
    panto.catalog.json.writeResolved(&h.conversation_json.writer, @tagName(a.config.provider), a.config.model, a.config.model_info) catch
        return h.setError(.out_of_memory, "out of memory");
    out.* = .from(h.conversation_json.written());
    return h.clearError();
}

// ---- Token counting --------------------------------------------------------------------

pub export fn panto_agent_count_tokens(agent: ?*PantoAgent, input: ?*const abi.Input, out: ?*abi.TokenCount) c_int {
    const h = agent orelse return code(.invalid_argument);
    const out_count = out orelse return h.setError(.invalid_argument, "out is NULL");
    const a = h.agent orelse return h.setError(.invalid_argument, "this agent was not created: see panto_agent_error");
    if (out_count.size < @offsetOf(abi.TokenCount, "input_tokens") + @sizeOf(u64))
        return h.setError(.invalid_argument, "out.size is too small: initialise it with PANTO_TOKEN_COUNT_INIT");
    var given: []const panto.content.Part = &.{};
    defer gpa.free(given);
    const turn_input: ?panto.Agent.Input = if (input) |in| blk: {
        const fields = abi.readSized(abi.Input, in, "text") orelse
            return h.setError(.invalid_argument, "input.size is too small: initialise it with PANTO_INPUT_INIT");
        const text = fields.text.bytes() orelse return h.setError(.invalid_argument, "input.text.ptr is NULL but its len is not 0");
        var problem: parts.Problem = .{};
        given = parts.read(gpa, fields.parts, fields.part_count, "input.parts", &problem) catch |err| return switch (err) {
            error.Invalid => h.setError(.invalid_argument, problem.message()),
            error.OutOfMemory => h.setError(.out_of_memory, "out of memory"),
        };
        break :blk .{ .text = text, .parts = given };
    } else null;
    h.request_detail.clearResponse(gpa);
    const got = a.countTokens(turn_input, &h.request_detail) catch |err| return switch (err) {
        error.Busy => h.setError(.busy, "the agent has an unfinished stream; free it first"),
        error.OutOfMemory => h.setError(.out_of_memory, "out of memory"),
        else => |e| h.last_error.setRequest(.fromTurnError(e), &h.request_detail),
    };
    abi.writeSized(abi.TokenCount, out_count, .{ .input_tokens = got.input_tokens, .estimated = @intFromBool(got.estimated) });
    return h.clearError();
}

// ---- Model lists -----------------------------------------------------------------------

pub export fn panto_agent_list_models(agent: ?*PantoAgent, out_json: ?*PantoString) c_int {
    const h = agent orelse return code(.invalid_argument);
    const out = out_json orelse return h.setError(.invalid_argument, "out_json is NULL");
    const a = h.agent orelse return h.setError(.invalid_argument, "this agent was not created: see panto_agent_error");
    h.request_detail.clearResponse(gpa);
    h.conversation_json.clearRetainingCapacity(); // the agent's one borrowed-string buffer
    a.listModels(&h.conversation_json.writer, &h.request_detail) catch |err| return switch (err) {
        error.Busy => h.setError(.busy, "the agent has an unfinished stream; free it first"),
        error.OutOfMemory => h.setError(.out_of_memory, "out of memory"),
        else => |e| h.last_error.setRequest(.fromTurnError(e), &h.request_detail),
    };
    out.* = .from(h.conversation_json.written());
    return h.clearError();
}

// ---- Compaction and sessions ----------------------------------------------------------

pub export fn panto_agent_compact(agent: ?*PantoAgent, out_stream: ?*?*PantoStream) c_int {
    return panto_agent_compact_with(agent, .{}, out_stream);
}

pub export fn panto_agent_compact_with(agent: ?*PantoAgent, instructions: abi.String, out_stream: ?*?*PantoStream) c_int {
    const out = out_stream orelse return code(.invalid_argument);
    out.* = null;
    const h = agent orelse return code(.invalid_argument);
    const a = h.agent orelse return h.setError(.invalid_argument, "this agent was not created: see panto_agent_error");
    const text = instructions.bytes() orelse return h.setError(.invalid_argument, "instructions: ptr is NULL but len is not 0");
    const s = a.compactWith(if (text.len > 0) text else null) catch |err| return switch (err) {
        error.Busy => h.setError(.busy, "the agent already has an unfinished stream; free it first"),
        error.NothingToCompact => h.setError(.state, "nothing to compact: no message is older than compaction.keep_recent_tokens"),
        error.OutOfMemory => h.setError(.out_of_memory, "out of memory"),
        error.SessionWrite => h.setError(.session, "the answers of the pending tool round could not be written to the session file"),
    };
    out.* = StreamHandle.create(s) catch {
        s.close(); // (nothing was sent: the conversation is unchanged)
        return h.setError(.out_of_memory, "out of memory");
    };
    return h.clearError();
}

pub export fn panto_agent_session(agent: ?*PantoAgent, out_info: ?*abi.SessionInfo) c_int {
    const h = agent orelse return code(.invalid_argument);
    const out = out_info orelse return h.setError(.invalid_argument, "out_info is NULL");
    if (out.size < @offsetOf(abi.SessionInfo, "resumed")) return h.setError(.invalid_argument, "out_info.size is too small: initialise it with PANTO_SESSION_INFO_INIT");
    const a = h.agent orelse return h.setError(.invalid_argument, "this agent was not created: see panto_agent_error");
    const info = a.sessionInfo() orelse return h.setError(.state, "this agent has no session (config key \"session\")");
    abi.writeSized(abi.SessionInfo, out, .{
        .resumed = @intFromBool(info.resumed),
        .id = .from(info.id),
        .path = .from(info.path),
        .torn_bytes = info.torn_bytes,
    });
    return h.clearError();
}

pub export fn panto_agent_fork_session(agent: ?*PantoAgent, message_count: usize, new_id: PantoString) c_int {
    const h = agent orelse return code(.invalid_argument);
    const a = h.agent orelse return h.setError(.invalid_argument, "this agent was not created: see panto_agent_error");
    const id = new_id.bytes() orelse return h.setError(.invalid_argument, "new_id.ptr is NULL but its len is not 0");
    var diag: panto.config.Diagnostic = .{};
    a.forkSession(message_count, if (id.len == 0) null else id, &diag) catch |err| return switch (err) {
        error.Busy => h.setError(.busy, "the session cannot be forked while a stream of the agent is unfinished"),
        error.State => h.setError(.state, "this agent has no session (config key \"session\")"),
        error.InvalidArgument => h.setError(.invalid_argument, "message_count is larger than the number of messages"),
        error.InvalidConversation => h.setError(.conversation, diag.message()),
        error.OutOfMemory => h.setError(.out_of_memory, "out of memory"),
        error.SessionWrite, error.SessionCorrupt, error.SessionExists, error.SessionLocked, error.NoSuchSession => |e| h.setError(abi.Status.fromSessionError(e), diag.message()),
    };
    return h.clearError();
}

/// The object behind `PantoSessionList*`: the listing as JSON, or the reason it failed.
pub const PantoSessionList = struct {
    json: std.Io.Writer.Allocating,
    last_error: CallError = .{},
};

pub export fn panto_session_list(dir: PantoString, out_list: ?*?*PantoSessionList) c_int {
    const out = out_list orelse return code(.invalid_argument);
    out.* = null;
    const given = dir.bytes() orelse return code(.invalid_argument);
    const l = gpa.create(PantoSessionList) catch return code(.out_of_memory);
    l.* = .{ .json = .init(gpa) };
    var arena: std.heap.ArenaAllocator = .init(gpa);
    defer arena.deinit();
    const path = if (given.len > 0) given else (panto.session.default_dir(arena.allocator()) catch {
        panto_session_list_free(l);
        return code(.out_of_memory);
    }) orelse {
        out.* = l;
        return l.last_error.set(.session, "no session directory: neither XDG_DATA_HOME nor HOME is set");
    };
    var diag: panto.config.Diagnostic = .{};
    const listed = panto.session.list(gpa, arena.allocator(), path, &diag) catch |err| switch (err) {
        error.OutOfMemory => {
            panto_session_list_free(l);
            return code(.out_of_memory);
        },
        error.SessionWrite => {
            out.* = l; // like panto_agent_new: the handle carries the reason
            return l.last_error.set(.session, diag.message());
        },
    };
    panto.session.writeListJson(&l.json.writer, listed) catch {
        panto_session_list_free(l);
        return code(.out_of_memory);
    };
    out.* = l;
    return code(.ok);
}

pub export fn panto_session_list_json(list: ?*const PantoSessionList, out_json: ?*PantoString) c_int {
    const l = list orelse return code(.invalid_argument);
    const out = out_json orelse return code(.invalid_argument);
    if (l.last_error.status != .ok) {
        out.* = .{};
        return @intFromEnum(l.last_error.status);
    }
    out.* = .from(l.json.writer.buffered());
    return code(.ok);
}

pub export fn panto_session_list_error(list: ?*const PantoSessionList, out_error: ?*PantoError) c_int {
    const l = list orelse return code(.invalid_argument);
    return l.last_error.report(out_error);
}

pub export fn panto_session_list_free(list: ?*PantoSessionList) void {
    const l = list orelse return;
    l.json.deinit();
    l.last_error.deinit();
    gpa.destroy(l);
}

pub export fn panto_agent_connections(agent: ?*const PantoAgent, out_connections: ?*abi.Connections) c_int {
    const h = agent orelse return code(.invalid_argument);
    const out = out_connections orelse return code(.invalid_argument);
    const a = h.agent orelse return code(.invalid_argument);
    const c = a.connections();
    abi.writeSized(abi.Connections, out, .{ .opened = c.opened, .reused = c.reused });
    return code(.ok);
}

// ---- MCP servers' status --------------------------------------------------------------

pub export fn panto_agent_mcp_count(agent: ?*PantoAgent, out_count: ?*usize) c_int {
    const h = agent orelse return code(.invalid_argument);
    const out = out_count orelse return h.setError(.invalid_argument, "out_count is NULL");
    const a = h.agent orelse return h.setError(.invalid_argument, "this agent was not created: see panto_agent_error");
    out.* = a.mcpServerCount();
    return h.clearError();
}

pub export fn panto_agent_mcp_status(agent: ?*PantoAgent, index: usize, out_status: ?*abi.McpStatus) c_int {
    const h = agent orelse return code(.invalid_argument);
    const out = out_status orelse return h.setError(.invalid_argument, "out_status is NULL");
    if (out.size < @offsetOf(abi.McpStatus, "state")) return h.setError(.invalid_argument, "out_status.size is too small: initialise it with PANTO_MCP_STATUS_INIT");
    const a = h.agent orelse return h.setError(.invalid_argument, "this agent was not created: see panto_agent_error");
    if (index >= a.mcpServerCount()) return h.setError(.invalid_argument, "index is past the agent's last MCP server (panto_agent_mcp_count)");
    const st = a.mcpStatus(index);
    abi.writeSized(abi.McpStatus, out, .{
        .state = @intFromEnum(st.state),
        .transport = @intFromEnum(st.transport),
        .name = .from(st.name),
        .protocol_version = .from(st.protocol_version),
        .server_name = .from(st.server_name),
        .server_version = .from(st.server_version),
        .tool_count = st.tool_count,
        .@"error" = .from(st.error_message),
        .stderr_tail = .from(st.stderr_tail),
    });
    return h.clearError();
}

// ---- Tools ----------------------------------------------------------------------------

pub export fn panto_agent_add_tool(agent: ?*PantoAgent, tool_json: PantoString) c_int {
    const h = agent orelse return code(.invalid_argument);
    const a = h.agent orelse return h.setError(.invalid_argument, "this agent was not created: see panto_agent_error");
    if (tool_json.ptr == null) return h.setError(.invalid_argument, "tool_json is NULL");
    const json = tool_json.bytes() orelse return h.setError(.invalid_argument, "tool_json is NULL");
    var diag: panto.config.Diagnostic = .{};
    a.addTool(json, &diag) catch |err| return switch (err) {
        error.Busy => h.setError(.busy, "tools cannot be added while a stream of the agent is unfinished"),
        error.InvalidConfig => h.setError(.config, diag.message()),
        error.OutOfMemory => h.setError(.out_of_memory, "out of memory"),
    };
    return h.clearError();
}

/// The export format `format` names, or null.
fn toolFormat(format: c_int) ?panto.tools.Format {
    return std.enums.fromInt(panto.tools.Format, format);
}

const bad_format = "format must be PANTO_TOOL_FORMAT_PANTO, PANTO_TOOL_FORMAT_ANTHROPIC or PANTO_TOOL_FORMAT_OPENAI";

pub export fn panto_agent_tools(agent: ?*PantoAgent, format: c_int, only_allowed: c_int, out_json: ?*PantoString) c_int {
    const h = agent orelse return code(.invalid_argument);
    const out = out_json orelse return h.setError(.invalid_argument, "out_json is NULL");
    const a = h.agent orelse return h.setError(.invalid_argument, "this agent was not created: see panto_agent_error");
    const f = toolFormat(format) orelse return h.setError(.invalid_argument, bad_format);
    h.conversation_json.clearRetainingCapacity();
    a.exportTools(&h.conversation_json.writer, f, only_allowed != 0) catch return h.setError(.out_of_memory, "out of memory");
    out.* = .from(h.conversation_json.written());
    return h.clearError();
}

pub export fn panto_tools_new(out_tools: ?*?*PantoTools) c_int {
    const out = out_tools orelse return code(.invalid_argument);
    out.* = null;
    const t = gpa.create(PantoTools) catch return code(.out_of_memory);
    t.* = .{ .set = .init(gpa), .export_json = .init(gpa) };
    out.* = t;
    return code(.ok);
}

pub export fn panto_tools_free(tools: ?*PantoTools) void {
    const t = tools orelse return;
    t.set.deinit();
    t.last_error.deinit();
    t.export_json.deinit();
    gpa.destroy(t);
}

pub export fn panto_tools_add(tools: ?*PantoTools, tool_json: PantoString) c_int {
    const t = tools orelse return code(.invalid_argument);
    if (tool_json.ptr == null) return t.last_error.set(.invalid_argument, "tool_json is NULL");
    const json = tool_json.bytes() orelse return t.last_error.set(.invalid_argument, "tool_json is NULL");
    var diag: panto.config.Diagnostic = .{};
    t.set.addJson(json, &diag) catch |err| return switch (err) {
        error.InvalidConfig => t.last_error.set(.config, diag.message()),
        error.OutOfMemory => t.last_error.set(.out_of_memory, "out of memory"),
    };
    return t.last_error.clear();
}

pub export fn panto_tools_export(tools: ?*PantoTools, format: c_int, capabilities_json: PantoString, out_json: ?*PantoString) c_int {
    const t = tools orelse return code(.invalid_argument);
    const out = out_json orelse return t.last_error.set(.invalid_argument, "out_json is NULL");
    out.* = .{};
    const f = toolFormat(format) orelse return t.last_error.set(.invalid_argument, bad_format);
    const caps: ?[]const u8 = if (capabilities_json.ptr == null and capabilities_json.len == 0) null else capabilities_json.bytes() orelse
        return t.last_error.set(.invalid_argument, "capabilities_json.ptr is NULL but its len is not 0");
    t.export_json.clearRetainingCapacity();
    var diag: panto.config.Diagnostic = .{};
    t.set.writeExportJson(&t.export_json.writer, f, caps, &diag) catch |err| return switch (err) {
        error.InvalidConfig => t.last_error.set(.config, diag.message()),
        error.OutOfMemory, error.WriteFailed => t.last_error.set(.out_of_memory, "out of memory"),
    };
    out.* = .from(t.export_json.written());
    return t.last_error.clear();
}

pub export fn panto_tools_error(tools: ?*const PantoTools, out_error: ?*PantoError) c_int {
    const t = tools orelse return code(.invalid_argument);
    return t.last_error.report(out_error);
}

pub export fn panto_stream_submit_tool_result(stream: ?*PantoStream, result: ?*const abi.ToolResult) c_int {
    const h = stream orelse return code(.invalid_argument);
    const r = result orelse return h.setError(.invalid_argument, "result is NULL");
    const fields = abi.readSized(abi.ToolResult, r, "content") orelse
        return h.setError(.invalid_argument, "result.size is too small: initialise it with PANTO_TOOL_RESULT_INIT");
    if (fields.call_id.ptr == null) return h.setError(.invalid_argument, "result.call_id is NULL");
    const id = fields.call_id.bytes() orelse return h.setError(.invalid_argument, "result.call_id is NULL");
    const content = fields.content.bytes() orelse return h.setError(.invalid_argument, "result.content.ptr is NULL but its len is not 0");
    var problem: parts.Problem = .{};
    const given = parts.read(gpa, fields.parts, fields.part_count, "result.parts", &problem) catch |err| return switch (err) {
        error.Invalid => h.setError(.invalid_argument, problem.message()),
        error.OutOfMemory => h.setError(.out_of_memory, "out of memory"),
    };
    defer gpa.free(given);
    h.stream.submitToolResultParts(id, content, given, fields.is_error != 0) catch |err| return switch (err) {
        error.NoSuchCall => h.setError(.no_such_call, "no tool call with this id awaits a result"),
        error.InvalidArgument => h.setError(.invalid_argument, "result.call_id is not valid UTF-8"),
        error.OutOfMemory => h.setError(.out_of_memory, "out of memory"),
    };
    return code(.ok);
}

// ---- Stream ---------------------------------------------------------------------------

pub export fn panto_next_event(stream: ?*PantoStream, ev: ?*PantoEvent) c_int {
    const h = stream orelse return code(.invalid_argument);
    h.enter();
    return h.leave(nextEvent(h, ev));
}

inline fn nextEvent(h: *PantoStream, ev: ?*PantoEvent) c_int {
    const out = ev orelse return h.setError(.invalid_argument, "ev is NULL");
    if (out.size < @offsetOf(PantoEvent, "index")) return h.setError(.invalid_argument, "ev.size is too small: initialise it with PANTO_EVENT_INIT");
    const event = (h.stream.nextRef() catch |err| return h.nextFailed(err)) orelse return code(.done);
    // A caller built against this header (nearly all): filled in place, without the copy
    // writeSized makes for older, shorter structs.
    fill(out, out.size, event);
    return code(.event);
}

pub export fn panto_next_events(stream: ?*PantoStream, events: ?[*]PantoEvent, capacity: usize, out_count: ?*usize, out_strings: ?*PantoString) c_int {
    if (out_count) |c| c.* = 0;
    if (out_strings) |o| o.* = .{};
    const h = stream orelse return code(.invalid_argument);
    h.enter();
    const status = h.leave(nextEvents(h, events, capacity, out_count, out_strings));
    if (status == code(.canceled)) {
        // Freed meanwhile: the batch read is gone with the stream.
        if (out_count) |c| c.* = 0;
        if (out_strings) |o| o.* = .{};
    }
    return status;
}

fn nextEvents(h: *PantoStream, events: ?[*]PantoEvent, capacity: usize, out_count: ?*usize, out_strings: ?*PantoString) c_int {
    const count = out_count orelse return h.setError(.invalid_argument, "out_count is NULL");
    const array = events orelse return h.setError(.invalid_argument, "events is NULL");
    const stride = batchStride(array, capacity) orelse return h.setError(.invalid_argument, bad_batch);
    const batch = h.stream.nextBatch(capacity) catch |err| return h.nextFailed(err);
    return deliverBatch(h, batch, array, stride, count, out_strings);
}

const bad_batch = "capacity is 0, or events[0].size is not a PantoEvent's: initialise it with PANTO_EVENT_INIT";

/// The caller's sizeof(PantoEvent), from an older or newer header, which is the array's
/// stride; null when it cannot be one (or the capacity is 0).
fn batchStride(array: [*]PantoEvent, capacity: usize) ?usize {
    const stride: usize = array[0].size;
    if (capacity == 0 or stride < @offsetOf(PantoEvent, "index") or stride % @alignOf(PantoEvent) != 0) return null;
    return stride;
}

/// Copies a batch of the core into the caller's array: PANTO_EVENT, or PANTO_DONE when empty.
fn deliverBatch(h: *PantoStream, batch: []const panto.Event, array: [*]PantoEvent, stride: usize, count: *usize, out_strings: ?*PantoString) c_int {
    const s = h.stream;
    if (batch.len == 0) return code(.done);
    const bytes: [*]u8 = @ptrCast(array);
    for (batch, 0..) |event, i| {
        const dest: *PantoEvent = @ptrCast(@alignCast(bytes + i * stride));
        fill(dest, @intCast(stride), &event);
    }
    count.* = batch.len;
    if (out_strings) |o| o.* = .from(s.batch.strings.items);
    return code(.event);
}

pub export fn panto_step_event(stream: ?*PantoStream, ev: ?*PantoEvent, wait: ?*PantoWait) c_int {
    const h = stream orelse return code(.invalid_argument);
    h.enter();
    return h.leave(stepEvent(h, ev, wait));
}

fn stepEvent(h: *PantoStream, ev: ?*PantoEvent, wait: ?*PantoWait) c_int {
    const out = ev orelse return h.setError(.invalid_argument, "ev is NULL");
    if (out.size < @offsetOf(PantoEvent, "index")) return h.setError(.invalid_argument, "ev.size is too small: initialise it with PANTO_EVENT_INIT");
    const w = wait orelse return h.setError(.invalid_argument, "wait is NULL");
    if (abi.readSized(PantoWait, w, "deadline_ns") == null) return h.setError(.invalid_argument, bad_wait);
    const step = h.stream.step() catch |err| return h.stepFailed(err);
    switch (step) {
        .event => |event| {
            fill(out, out.size, event);
            return code(.event);
        },
        .done => return code(.done),
        .would_block => |core_wait| return wouldBlock(w, core_wait),
    }
}

const bad_wait = "wait is NULL or wait.size is too small: initialise it with PANTO_WAIT_INIT";

fn wouldBlock(out: *PantoWait, w: panto.stream_step.Wait) c_int {
    abi.writeSized(PantoWait, out, .fromCore(w));
    return code(.would_block);
}

pub export fn panto_step_events(stream: ?*PantoStream, events: ?[*]PantoEvent, capacity: usize, out_count: ?*usize, out_strings: ?*PantoString, wait: ?*PantoWait) c_int {
    if (out_count) |c| c.* = 0;
    if (out_strings) |o| o.* = .{};
    const h = stream orelse return code(.invalid_argument);
    h.enter();
    const status = h.leave(stepEvents(h, events, capacity, out_count, out_strings, wait));
    if (status == code(.canceled)) {
        // Freed meanwhile: the batch read is gone with the stream.
        if (out_count) |c| c.* = 0;
        if (out_strings) |o| o.* = .{};
    }
    return status;
}

fn stepEvents(h: *PantoStream, events: ?[*]PantoEvent, capacity: usize, out_count: ?*usize, out_strings: ?*PantoString, wait: ?*PantoWait) c_int {
    const count = out_count orelse return h.setError(.invalid_argument, "out_count is NULL");
    const array = events orelse return h.setError(.invalid_argument, "events is NULL");
    const stride = batchStride(array, capacity) orelse return h.setError(.invalid_argument, bad_batch);
    const w = wait orelse return h.setError(.invalid_argument, bad_wait);
    if (abi.readSized(PantoWait, w, "deadline_ns") == null) return h.setError(.invalid_argument, bad_wait);
    return switch (h.stream.stepBatch(capacity) catch |err| return h.stepFailed(err)) {
        .events => |batch| deliverBatch(h, batch, array, stride, count, out_strings),
        .would_block => |core_wait| wouldBlock(w, core_wait),
    };
}

pub export fn panto_stream_unread(stream: ?*PantoStream, count: usize) c_int {
    const h = stream orelse return code(.invalid_argument);
    h.stream.unread(count) catch return h.setError(.invalid_argument, "only events of the last batch that continue the message (or the whole batch, from the MESSAGE_START that begins it), not given back already, can be given back, and only while no later event was read");
    return code(.ok);
}

fn toAbi(event: panto.Event) PantoEvent {
    return switch (event) {
        .message_start => |e| .{ .kind = @intFromEnum(abi.EventKind.message_start), .id = .from(e.id), .model = .from(e.model), .request_id = .from(e.request_id) },
        .block_start => |e| .{ .kind = @intFromEnum(abi.EventKind.block_start), .index = e.index, .block_kind = @intFromEnum(e.kind) },
        .content_delta => |*e| contentDelta(e),
        // `name` carries a server block's type, or a text block's citations (no field added).
        .block_complete => |e| .{ .kind = @intFromEnum(abi.EventKind.block_complete), .index = e.index, .block_kind = @intFromEnum(e.kind), .text = .from(e.text), .name = .from(if (e.kind == .text) e.citations else e.name) },
        .message_end => |e| messageEnd(.message_end, e),
        .message_complete => |e| messageEnd(.message_complete, e),
        .tool_details => |e| .{ .kind = @intFromEnum(abi.EventKind.tool_details), .index = e.index, .block_kind = @intFromEnum(panto.BlockKind.tool_call), .id = .from(e.id), .name = .from(e.name) },
        .tool_call_start => |e| .{ .kind = @intFromEnum(abi.EventKind.tool_call_start), .id = .from(e.id), .name = .from(e.name), .text = .from(e.input), .awaiting_result = @intFromBool(e.awaiting_result), .sequential = @intFromBool(e.sequential) },
        .tool_result => |e| .{ .kind = @intFromEnum(abi.EventKind.tool_result), .id = .from(e.id), .name = .from(e.name), .text = .from(e.content), .is_error = @intFromBool(e.is_error), .parts = abi.PartInfo.fromCore(e.parts), .part_count = e.parts.len },
        .provider_retry => |e| .{ .kind = @intFromEnum(abi.EventKind.provider_retry), .attempt = e.attempt, .delay_ms = e.delay_ms, .http_status = e.http_status, .text = .from(e.reason) },
        .compaction_start => |e| .{ .kind = @intFromEnum(abi.EventKind.compaction_start), .tokens_before = e.tokens_before, .text = .from(e.reason) },
        .compaction_end => |e| .{ .kind = @intFromEnum(abi.EventKind.compaction_end), .tokens_before = e.tokens_before, .tokens_after = e.tokens_after, .message_count = e.message_count, .text = .from(e.summary) },
        .tool_progress => |e| .{ .kind = @intFromEnum(abi.EventKind.tool_progress), .id = .from(e.id), .name = .from(e.name), .text = .from(e.text), .fraction = e.fraction orelse -1 },
        .approval_request => |e| .{ .kind = @intFromEnum(abi.EventKind.approval_request), .approvals = abi.ApprovalCall.fromCore(e.calls), .approval_count = e.calls.len },
        // `name` says where the message came from (no field added).
        .user_message => |e| .{ .kind = @intFromEnum(abi.EventKind.user_message), .text = .from(e.text), .name = .from(@tagName(e.source)) },
    };
}

/// Writes `event` into the caller's struct, whose size (from the caller's header) is `size`.
inline fn fill(out: *PantoEvent, size: u32, event: *const panto.Event) void {
    if (size != @sizeOf(PantoEvent)) {
        out.size = size; // (set in the first element of a batch only)
        abi.writeSized(PantoEvent, out, toAbi(event.*)); // another header's struct
    } else if (event.* == .content_delta) {
        // The event of nearly every call: written in place, without a temporary.
        out.* = contentDelta(&event.content_delta);
    } else out.* = toAbi(event.*);
}

inline fn contentDelta(e: *const panto.event.ContentDelta) PantoEvent {
    return .{
        .kind = @intFromEnum(abi.EventKind.content_delta),
        .index = loadField(u32, &e.index),
        .block_kind = @intFromEnum(loadField(panto.BlockKind, &e.kind)),
        .text = .{ .ptr = loadField([*]const u8, &e.text.ptr), .len = loadField(usize, &e.text.len) },
    };
}

/// Reads one field of an event just stored field by field (a hot delta). LLVM would merge
/// neighbouring reads into one wider load, which waits for all the narrower stores it spans to
/// reach the cache (a failed store forwarding, some 10 cycles per event); `volatile` keeps the
/// reads apart, each forwarded from its own store.
inline fn loadField(comptime T: type, p: *const T) T {
    return @as(*const volatile T, p).*;
}

fn messageEnd(kind: abi.EventKind, e: panto.event.MessageComplete) PantoEvent {
    return .{
        .kind = @intFromEnum(kind),
        .stop_reason = @intFromEnum(e.stop_reason),
        .provider_stop_reason = .from(e.provider_stop_reason),
        .usage = .{
            .input_tokens = e.usage.input_tokens,
            .output_tokens = e.usage.output_tokens,
            .cache_read_tokens = e.usage.cache_read_tokens,
            .cache_write_tokens = e.usage.cache_write_tokens,
            .reasoning_tokens = e.usage.reasoning_tokens,
        },
        .web_search_requests = e.usage.web_search_requests,
        .web_fetch_requests = e.usage.web_fetch_requests,
        .cost = e.cost orelse -1,
    };
}

pub export fn panto_stream_tool_progress(stream: ?*PantoStream, call_id: PantoString, text: PantoString, fraction: f64) c_int {
    const h = stream orelse return code(.invalid_argument);
    if (call_id.ptr == null) return h.setError(.invalid_argument, "call_id is NULL");
    const id = call_id.bytes() orelse return h.setError(.invalid_argument, "call_id is NULL");
    const said = text.bytes() orelse return h.setError(.invalid_argument, "text.ptr is NULL but its len is not 0");
    h.stream.toolProgress(id, said, fraction) catch |err| return switch (err) {
        error.NoSuchCall => h.setError(.no_such_call, "no tool call with this id awaits a result"),
        error.InvalidArgument => h.setError(.invalid_argument, "fraction is above 1 or NaN, or call_id is not valid UTF-8"),
        error.OutOfMemory => h.setError(.out_of_memory, "out of memory"),
    };
    return code(.ok);
}

pub export fn panto_stream_approve(stream: ?*PantoStream, call_id: PantoString) c_int {
    const h = stream orelse return code(.invalid_argument);
    const id = call_id.bytes() orelse return h.setError(.invalid_argument, "call_id.ptr is NULL but its len is not 0");
    h.stream.approve(id) catch |err| return answerFailed(h, err);
    return h.call_error.clear();
}

pub export fn panto_stream_deny(stream: ?*PantoStream, call_id: PantoString, reason: PantoString) c_int {
    const h = stream orelse return code(.invalid_argument);
    const id = call_id.bytes() orelse return h.setError(.invalid_argument, "call_id.ptr is NULL but its len is not 0");
    const why = reason.bytes() orelse return h.setError(.invalid_argument, "reason.ptr is NULL but its len is not 0");
    h.stream.deny(id, why) catch |err| return answerFailed(h, err);
    return h.call_error.clear();
}

pub export fn panto_stream_steer(stream: ?*PantoStream, text: PantoString) c_int {
    return queueMessage(stream, text, panto.Stream.steer);
}

pub export fn panto_stream_follow_up(stream: ?*PantoStream, text: PantoString) c_int {
    return queueMessage(stream, text, panto.Stream.followUp);
}

pub export fn panto_stream_withdraw_queued(stream: ?*PantoStream, out_json: ?*PantoString) c_int {
    const out = out_json orelse return code(.invalid_argument);
    out.* = .{};
    const h = stream orelse return code(.invalid_argument);
    out.* = .from(h.withdraw() catch return code(.out_of_memory));
    return code(.ok);
}

/// Queues a steer or a follow-up. No detail is set: the call may come from another thread
/// than the one reading the stream, whose calls own it.
fn queueMessage(stream: ?*PantoStream, text: PantoString, queue: fn (*panto.Stream, []const u8) panto.Stream.SteerError!void) c_int {
    const h = stream orelse return code(.invalid_argument);
    const bytes = text.bytes() orelse return code(.invalid_argument);
    queue(h.stream, bytes) catch |err| return code(switch (err) {
        error.InvalidArgument => .invalid_argument,
        error.Ended => .state,
        error.OutOfMemory => .out_of_memory,
    });
    return code(.ok);
}

fn answerFailed(h: *PantoStream, err: panto.Stream.AnswerError) c_int {
    return switch (err) {
        error.InvalidArgument => h.setError(.invalid_argument, "no tool call with this id waits for an answer (unknown, answered already, or not of the current round)"),
        error.OutOfMemory => h.setError(.out_of_memory, "out of memory"),
    };
}

pub export fn panto_stream_final_message(stream: ?*PantoStream, out_complete: ?*PantoEvent, out_text: ?*PantoString) c_int {
    const h = stream orelse return code(.invalid_argument);
    if (out_text) |t| t.* = .{};
    if (out_complete) |o| if (o.size < @offsetOf(PantoEvent, "index"))
        return h.setError(.invalid_argument, "out_complete.size is too small: initialise it with PANTO_EVENT_INIT");
    h.enter();
    return h.leave(finalMessage(h, out_complete, out_text));
}

fn finalMessage(h: *PantoStream, out_complete: ?*PantoEvent, out_text: ?*PantoString) c_int {
    const final = h.stream.finalMessage() catch |err| {
        // A call awaits its result: the caller is shown which (its events were let go).
        if (err == error.ResultPending) if (out_complete) |o| if (h.stream.pendingCall()) |c| {
            fill(o, o.size, &.{ .tool_call_start = c });
        };
        return h.nextFailed(err);
    };
    if (out_complete) |o| fill(o, o.size, &.{ .message_complete = final.complete });
    if (out_text) |t| t.* = .from(final.text);
    return code(.ok);
}

pub export fn panto_stream_final_json(stream: ?*PantoStream, out_json: ?*PantoString) c_int {
    const h = stream orelse return code(.invalid_argument);
    if (out_json) |o| o.* = .{};
    h.enter();
    return h.leave(finalJson(h, out_json));
}

fn finalJson(h: *PantoStream, out_json: ?*PantoString) c_int {
    const text = h.stream.finalJson() catch |err| return switch (err) {
        // (the text is PantoError.output: see panto_stream_error)
        error.Output => h.setError(.output, h.stream.final.problem.message()),
        error.State => h.setError(.state, "the turn asked for no JSON response_format (or is a compaction)"),
        else => |e| h.nextFailed(e),
    };
    if (out_json) |o| o.* = .from(text);
    return code(.ok);
}

pub export fn panto_stream_cancel(stream: ?*PantoStream) c_int {
    const h = stream orelse return code(.invalid_argument);
    h.stream.cancel();
    return code(.ok);
}

pub export fn panto_stream_reopen(stream: ?*PantoStream) c_int {
    const h = stream orelse return code(.invalid_argument);
    var diag: panto.config.Diagnostic = .{};
    h.stream.reopenWithDiagnostic(&diag) catch |err| return switch (err) {
        error.State => h.setError(.state, "only a turn that failed at the provider-open boundary can be reopened"),
        error.Busy => h.setError(.busy, "the agent has another unfinished stream"),
        error.InvalidConfig => h.setError(.config, diag.message()),
        error.OutOfMemory => h.setError(.out_of_memory, "out of memory"),
        error.SessionWrite => h.setError(.session, "the session file could not record the turn's user message again"),
    };
    return h.call_error.clear();
}

pub export fn panto_stream_error(stream: ?*const PantoStream, out_error: ?*PantoError) c_int {
    const h = stream orelse return code(.invalid_argument);
    if (h.call_error.status != .ok) {
        const status = h.call_error.report(out_error);
        // panto_stream_final_json's PANTO_ERR_OUTPUT: the model's text.
        if (h.call_error.status == .output) if (out_error) |out| {
            if (out.size >= @offsetOf(PantoError, "output") + @sizeOf(PantoString)) out.output = .from(h.stream.final.text.items);
        };
        return status;
    }
    const s = h.stream;
    const detail = s.failureDetail() orelse {
        if (out_error) |out| abi.writeSized(PantoError, out, .{});
        return code(.ok);
    };
    const status: c_int = code(.fromTurnError(s.failure));
    if (out_error) |out| {
        abi.writeSized(PantoError, out, .{
            .code = status,
            .http_status = detail.http_status,
            .type = .from(detail.error_type.items),
            .message = .from(detail.message.items),
            .request_id = .from(detail.request_id.items),
            .retry_after = detail.retry_after orelse -1,
            .headers = .from(detail.headersJson()),
        });
    }
    return status;
}

pub export fn panto_stream_free(stream: ?*PantoStream) void {
    const h = stream orelse return;
    h.free();
}

test {
    _ = abi;
    _ = names;
    _ = parts;
    _ = @import("stream_handle.zig");
}
