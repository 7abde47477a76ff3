//! Counting the input tokens of the request the next turn would send (the conversation, the
//! given input as its user message, the system prompt, the tools, thinking), before sending
//! it: the provider's counting endpoint (providers.zig's `writeCountBody`, a one-shot request,
//! transport/oneshot.zig) with the body the turn's own request code writes, or, for a
//! provider without one (OpenAI Chat Completions), compaction's estimate, marked as such.
//! Nothing is appended to the conversation.
const std = @import("std");
const Allocator = std.mem.Allocator;
const agent_mod = @import("agent.zig");
const Agent = agent_mod.Agent;
const content = @import("content.zig");
const conversation = @import("conversation.zig");
const compaction = @import("compaction.zig");
const errors = @import("errors.zig");
const json_member = @import("json_member.zig");
const providers = @import("providers.zig");
const request = @import("request.zig");
const transport = @import("transport/transport.zig");
const oneshot = @import("transport/oneshot.zig");

pub const TokenCount = struct {
    input_tokens: u64,
    /// True when the count is panto's estimate (compaction.zig's), not the provider's.
    estimated: bool = false,
};

/// A count fails as the turn's request would (its detail in the caller's Detail), or with
/// Busy while a stream of the agent is unfinished.
pub const Error = errors.TurnError || error{Busy};

/// The count of the next turn's request with `input` (null: the conversation as it is).
pub fn count(agent: *Agent, input: ?agent_mod.Agent.Input, detail: *errors.Detail) Error!TokenCount {
    if (agent.busy) return error.Busy;
    const gpa = agent.gpa;
    const config = agent.config;
    // The conversation as the turn would have it: the agent's messages (not copied) and the
    // input's user message after them.
    var view: conversation.Conversation = .init(gpa);
    defer view.messages.deinit(gpa);
    try view.messages.ensureTotalCapacity(gpa, agent.conversation.messages.items.len + 1);
    view.messages.appendSliceAssumeCapacity(agent.conversation.messages.items);
    view.stale_usage_before = agent.conversation.stale_usage_before;
    const blocks: ?[]conversation.Block = if (input) |in| try content.userTurn(gpa, in.text, in.parts) else null;
    defer if (blocks) |b| conversation.freeBlocks(gpa, b);
    if (blocks) |b| view.messages.appendAssumeCapacity(.{ .role = .user, .blocks = b });

    if (!providers.counts(config.provider)) return .{ .input_tokens = compaction.estimate(&view, config.system), .estimated = true };

    var buf: [128]u8 = undefined;
    if (transport.missingKey(config, &buf)) |msg| {
        detail.set(gpa, 0, "authentication_error", msg);
        return error.Authentication;
    }
    const parts: request.RequestParts = .{
        .config = config,
        .conversation = &view,
        .tools = agent.tools.items(),
        .granted = config.capabilities,
        .purpose = .count,
    };
    var arena_state: std.heap.ArenaAllocator = .init(gpa);
    defer arena_state.deinit();
    const arena = arena_state.allocator();
    var url: std.ArrayList(u8) = .empty;
    try transport.writeUrl(arena, &url, config.base_url.?, config.provider, config.model, .count);
    var body: std.Io.Writer.Allocating = .init(arena);
    providers.writeCountBody(config.provider, &body.writer, parts) catch return error.OutOfMemory;

    var header_list: std.ArrayList(std.http.Header) = .empty;
    var auth: std.ArrayList(u8) = .empty;
    var beta: std.ArrayList(u8) = .empty;
    var headers: request.Headers = .{ .list = &header_list, .auth_buffer = &auth, .beta_buffer = &beta, .gpa = arena };
    try providers.addHeaders(config.provider, &headers, parts);
    try headers.addUser(config.request.extra_headers);

    const answer = try oneshot.send(agent, arena, .{
        .url = url.items,
        .body = body.written(),
        .headers = &headers,
        .provider = config.provider,
        .api_key = config.api_key,
    }, detail);
    const tokens = providers.parseCount(config.provider, arena, answer) orelse {
        detail.set(gpa, 0, "protocol_error", "the provider's answer holds no token count");
        return error.Protocol;
    };
    return .{ .input_tokens = tokens };
}

/// A top-level member of a counting answer that is a whole number of tokens (the providers'
/// parseCount), or null.
pub fn member(arena: Allocator, body: []const u8, key: []const u8) ?u64 {
    const value = (json_member.value(arena, body, key) catch return null) orelse return null;
    return std.fmt.parseInt(u64, value, 10) catch null;
}

test "a counting answer's member: a whole number, else null" {
    var arena_state: std.heap.ArenaAllocator = .init(std.testing.allocator);
    defer arena_state.deinit();
    const arena = arena_state.allocator();
    try std.testing.expectEqual(@as(?u64, 42), member(arena, "{\"input_tokens\":42}", "input_tokens"));
    try std.testing.expectEqual(@as(?u64, 7), member(arena, "{\"totalTokens\": 7, \"promptTokensDetails\": []}", "totalTokens"));
    try std.testing.expectEqual(@as(?u64, null), member(arena, "{\"input_tokens\":\"42\"}", "input_tokens"));
    try std.testing.expectEqual(@as(?u64, null), member(arena, "{\"other\":1}", "input_tokens"));
    try std.testing.expectEqual(@as(?u64, null), member(arena, "not json", "input_tokens"));
}
