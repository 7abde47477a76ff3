//! OpenAI Chat Completions: the request parameters the user sets (config.zig's
//! RequestOptions), in the Chat Completions form. Prompt caching (prompt_cache_key,
//! prompt_cache_retention) and structured output (response_format) are written with the
//! rest of the request by request.zig.
//! https://platform.openai.com/docs/api-reference/chat/create
const std = @import("std");
const RequestParts = @import("../../request.zig").RequestParts;
const optional = @import("../../request.zig").writeOptional;
const writeRawJson = @import("../../conversation.zig").writeRawJson;

/// `"reasoning_effort"`: as set, else the thinking level's name (none when off).
pub fn writeReasoning(s: *std.json.Stringify, parts: RequestParts) std.Io.Writer.Error!void {
    const config = parts.config;
    const effort = config.request.reasoning_effort orelse if (config.thinking != .off) @tagName(config.thinking) else return;
    try s.objectField("reasoning_effort");
    try s.write(effort);
}

/// The sampling and routing parameters, after the tools: tool_choice and
/// parallel_tool_calls (only with tools), temperature, top_p, stop, seed, presence_penalty,
/// frequency_penalty, metadata, user, service_tier.
pub fn write(s: *std.json.Stringify, parts: RequestParts) std.Io.Writer.Error!void {
    const r = parts.config.request;
    if (parts.hasTools()) {
        if (r.tool_choice) |c| {
            try s.objectField("tool_choice");
            switch (c) {
                .auto => try s.write("auto"),
                .none => try s.write("none"),
                .required => try s.write("required"),
                .tool => |name| {
                    try s.beginObject();
                    try s.objectField("type");
                    try s.write("function");
                    try s.objectField("function");
                    try s.beginObject();
                    try s.objectField("name");
                    try s.write(name);
                    try s.endObject();
                    try s.endObject();
                },
            }
        }
        try optional(s, "parallel_tool_calls", r.parallel_tool_calls);
    }
    try optional(s, "temperature", r.temperature);
    try optional(s, "top_p", r.top_p);
    if (r.stop.len > 0) {
        try s.objectField("stop");
        try s.write(r.stop);
    }
    try optional(s, "seed", r.seed);
    try optional(s, "presence_penalty", r.presence_penalty);
    try optional(s, "frequency_penalty", r.frequency_penalty);
    if (r.metadata) |json| {
        try s.objectField("metadata");
        try writeRawJson(s, json);
    }
    try optional(s, "user", r.user);
    try optional(s, "service_tier", r.service_tier);
}
