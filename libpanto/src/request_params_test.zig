//! The request parameters on the wire: each provider's body and headers for a configuration
//! (docs/requests.md).
const std = @import("std");
const testing = std.testing;
const config_mod = @import("config.zig");
const Conversation = @import("conversation.zig").Conversation;
const request = @import("request.zig");
const providers = @import("providers.zig");
const tools = @import("tools.zig");

const weather: tools.Tool = .{ .name = "get_weather", .description = "d", .schema_json = "{\"type\":\"object\"}", .schema = .null, .capabilities = &.{} };

fn body(arena: std.mem.Allocator, json: []const u8, with_tools: bool) ![]const u8 {
    var diag: config_mod.Diagnostic = .{};
    const config = try config_mod.parseJson(arena, json, &diag);
    var conv: Conversation = .init(arena);
    try conv.appendUserText("Hi");
    var out: std.Io.Writer.Allocating = .init(arena);
    const parts: request.RequestParts = .{ .config = config, .conversation = &conv, .tools = if (with_tools) &.{weather} else &.{}, .granted = &.{} };
    try providers.writeRequest(config.provider, &out.writer, parts);
    return out.written();
}

fn expectHas(haystack: []const u8, needle: []const u8) !void {
    if (std.mem.indexOf(u8, haystack, needle) == null) {
        std.debug.print("missing {s}\n in {s}\n", .{ needle, haystack });
        return error.TestExpectedEqual;
    }
}

test "Anthropic: sampling, stop_sequences, metadata.user_id, service_tier, tool_choice, thinking budget, extra_body last" {
    var arena: std.heap.ArenaAllocator = .init(testing.allocator);
    defer arena.deinit();
    const b = try body(arena.allocator(),
        \\{"provider":"anthropic","model":"m","max_tokens":100,"temperature":0.5,"top_p":0.9,"top_k":20,"stop":["END"],"user":"u-1",
        \\ "service_tier":"auto","tool_choice":{"name":"get_weather"},"parallel_tool_calls":false,"thinking":{"budget_tokens":2000},
        \\ "extra_body":{"speed":"fast"}}
    , true);
    try expectHas(b, "\"max_tokens\":2100,\"thinking\":{\"type\":\"enabled\",\"budget_tokens\":2000}");
    try expectHas(b, "\"tool_choice\":{\"type\":\"tool\",\"name\":\"get_weather\",\"disable_parallel_tool_use\":true},\"temperature\":0.5,\"top_p\":0.9,\"top_k\":20,\"stop_sequences\":[\"END\"],\"metadata\":{\"user_id\":\"u-1\"},\"service_tier\":\"auto\",\"stream\":true,\"speed\":\"fast\"}");
    // parallel_tool_calls false alone; "any"; no tool_choice without tools.
    try expectHas(try body(arena.allocator(), "{\"provider\":\"anthropic\",\"model\":\"m\",\"parallel_tool_calls\":false}", true), "\"tool_choice\":{\"type\":\"auto\",\"disable_parallel_tool_use\":true}");
    try expectHas(try body(arena.allocator(), "{\"provider\":\"anthropic\",\"model\":\"m\",\"tool_choice\":\"required\"}", true), "\"tool_choice\":{\"type\":\"any\"}");
    try expectHas(try body(arena.allocator(), "{\"provider\":\"anthropic\",\"model\":\"m\",\"tool_choice\":\"none\",\"parallel_tool_calls\":false}", true), "\"tool_choice\":{\"type\":\"none\"}");
    const bare = try body(arena.allocator(), "{\"provider\":\"anthropic\",\"model\":\"m\",\"tool_choice\":\"auto\",\"parallel_tool_calls\":false}", false);
    try testing.expect(std.mem.indexOf(u8, bare, "tool_choice") == null);
    try testing.expect(std.mem.indexOf(u8, bare, "temperature") == null);
}

test "OpenAI: sampling, stop, seed, penalties, metadata, user, tool_choice, parallel_tool_calls, reasoning_effort, extra_body last" {
    var arena: std.heap.ArenaAllocator = .init(testing.allocator);
    defer arena.deinit();
    const b = try body(arena.allocator(),
        \\{"provider":"openai","model":"m","temperature":1.5,"top_p":0.5,"stop":"END","seed":42,"presence_penalty":-1,"frequency_penalty":0.5,
        \\ "metadata":{"team":"a"},"user":"u-1","service_tier":"flex","tool_choice":{"name":"get_weather"},"parallel_tool_calls":false,
        \\ "thinking":"high","reasoning_effort":"minimal","extra_body":{"verbosity":"low","logit_bias":{"50256":-100}}}
    , true);
    try expectHas(b, "\"max_completion_tokens\":4096,\"reasoning_effort\":\"minimal\",\"messages\"");
    try expectHas(b, "\"tool_choice\":{\"type\":\"function\",\"function\":{\"name\":\"get_weather\"}},\"parallel_tool_calls\":false,\"temperature\":1.5,\"top_p\":0.5,\"stop\":[\"END\"],\"seed\":42,\"presence_penalty\":-1,\"frequency_penalty\":0.5,\"metadata\":{\"team\":\"a\"},\"user\":\"u-1\",\"service_tier\":\"flex\",\"stream\":true,\"stream_options\":{\"include_usage\":true},\"verbosity\":\"low\",\"logit_bias\":{\"50256\":-100}}");
    try expectHas(try body(arena.allocator(), "{\"provider\":\"openai\",\"model\":\"m\",\"tool_choice\":\"any\"}", true), "\"tool_choice\":\"required\"");
    const bare = try body(arena.allocator(), "{\"provider\":\"openai\",\"model\":\"m\",\"tool_choice\":\"none\",\"parallel_tool_calls\":true}", false);
    try testing.expect(std.mem.indexOf(u8, bare, "tool_choice") == null);
    try testing.expect(std.mem.indexOf(u8, bare, "parallel_tool_calls") == null);
}

test "headers: interleaved thinking's beta joined with the user's, extra headers, user-agent replaced" {
    var arena: std.heap.ArenaAllocator = .init(testing.allocator);
    defer arena.deinit();
    const gpa = testing.allocator;
    var list: std.ArrayList(std.http.Header) = .empty;
    defer list.deinit(gpa);
    var auth: std.ArrayList(u8) = .empty;
    defer auth.deinit(gpa);
    var beta: std.ArrayList(u8) = .empty;
    defer beta.deinit(gpa);
    var diag: config_mod.Diagnostic = .{};
    const config = try config_mod.parseJson(arena.allocator(),
        \\{"provider":"anthropic","model":"m","api_key":"k","thinking":"low","extra_headers":{"anthropic-beta":"files-api","X-Trace":"t","User-Agent":"me/1"}}
    , &diag);
    var conv: Conversation = .init(arena.allocator());
    var parts: request.RequestParts = .{ .config = config, .conversation = &conv, .tools = &.{weather}, .granted = &.{} };
    var h: request.Headers = .{ .list = &list, .auth_buffer = &auth, .beta_buffer = &beta, .gpa = gpa };
    try providers.addHeaders(.anthropic, &h, parts);
    try h.addUser(config.request.extra_headers);
    const want = [_][2][]const u8{ .{ "anthropic-version", "2023-06-01" }, .{ "x-api-key", "k" }, .{ "anthropic-beta", "interleaved-thinking-2025-05-14,files-api" }, .{ "X-Trace", "t" } };
    try testing.expectEqual(want.len, h.items().len);
    for (want, h.items()) |w, got| {
        try testing.expectEqualStrings(w[0], got.name);
        try testing.expectEqualStrings(w[1], got.value);
    }
    try testing.expectEqualStrings("me/1", h.user_agent);
    // Without tools (or with interleaved_thinking false) the user's beta goes alone.
    list.clearRetainingCapacity();
    beta.clearRetainingCapacity();
    parts.tools = &.{};
    h = .{ .list = &list, .auth_buffer = &auth, .beta_buffer = &beta, .gpa = gpa };
    try providers.addHeaders(.anthropic, &h, parts);
    try h.addUser(config.request.extra_headers);
    try testing.expectEqualStrings("anthropic-beta", h.items()[2].name);
    try testing.expectEqualStrings("files-api", h.items()[2].value);
}
