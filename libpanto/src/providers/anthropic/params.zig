//! Anthropic Messages API: the request parameters the user sets (config.zig's RequestOptions),
//! in the Messages API's form. Prompt caching (cache_control) and structured output
//! (output_config) are written with the rest of the request by request.zig.
//! https://docs.anthropic.com/en/api/messages
const std = @import("std");
const RequestParts = @import("../../request.zig").RequestParts;
const request_options = @import("../../request_options.zig");
const optional = @import("../../request.zig").writeOptional;
const server_tools = @import("server_tools.zig");

/// The beta feature that lets the model think between tool calls.
pub const interleaved_thinking_beta = "interleaved-thinking-2025-05-14";

/// Whether the request asks for interleaved thinking (its beta header): as set, else on when
/// thinking is on and tools are offered.
pub fn interleavedThinking(parts: RequestParts) bool {
    return parts.config.request.interleaved_thinking orelse
        (request_options.thinkingOn(parts.config) and parts.hasTools());
}

/// `"max_tokens"` and `"thinking"`: the API wants max_tokens above the thinking budget, so the
/// budget comes on top when it is not.
pub fn writeLimits(s: *std.json.Stringify, parts: RequestParts) std.Io.Writer.Error!void {
    const config = parts.config;
    const budget = request_options.budgetTokens(config);
    if (!parts.counting()) {
        try s.objectField("max_tokens");
        try s.write(if (budget > 0 and config.max_tokens <= budget) config.max_tokens +| budget else config.max_tokens);
    }
    if (budget > 0) {
        try s.objectField("thinking");
        try s.beginObject();
        try s.objectField("type");
        try s.write("enabled");
        try s.objectField("budget_tokens");
        try s.write(budget);
        try s.endObject();
    }
}

/// The sampling and routing parameters, after the tools: tool_choice (only with tools, client
/// or hosted),
/// temperature, top_p, top_k, stop_sequences, metadata.user_id, service_tier.
pub fn write(s: *std.json.Stringify, parts: RequestParts) std.Io.Writer.Error!void {
    const r = parts.config.request;
    if (parts.hasTools() or r.server_tools.len > 0) try writeToolChoice(s, r.tool_choice, r.parallel_tool_calls);
    // count_tokens takes the prompt's members only: the tools' choice and MCP servers.
    if (parts.counting()) return server_tools.writeMcpServers(s, r.hosted_mcp_servers);
    try optional(s, "temperature", r.temperature);
    try optional(s, "top_p", r.top_p);
    try optional(s, "top_k", r.top_k);
    if (r.stop.len > 0) {
        try s.objectField("stop_sequences");
        try s.write(r.stop);
    }
    if (r.user) |user| {
        try s.objectField("metadata");
        try s.beginObject();
        try s.objectField("user_id");
        try s.write(user);
        try s.endObject();
    }
    try optional(s, "service_tier", r.service_tier);
    try server_tools.writeMcpServers(s, r.hosted_mcp_servers);
}

/// {"type": auto|none|any|tool, "name", "disable_parallel_tool_use"}; parallel_tool_calls
/// false alone is {"type": "auto", "disable_parallel_tool_use": true}.
fn writeToolChoice(s: *std.json.Stringify, choice: ?@import("../../config.zig").ToolChoice, parallel: ?bool) std.Io.Writer.Error!void {
    const serial = parallel == false;
    const c = choice orelse if (serial) .auto else return;
    try s.objectField("tool_choice");
    try s.beginObject();
    try s.objectField("type");
    try s.write(switch (c) {
        .auto => "auto",
        .none => "none",
        .required => "any",
        .tool => "tool",
    });
    if (c == .tool) {
        try s.objectField("name");
        try s.write(c.tool);
    }
    if (serial and c != .none) {
        try s.objectField("disable_parallel_tool_use");
        try s.write(true);
    }
    try s.endObject();
}
