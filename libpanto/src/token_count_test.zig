//! Token counting against a loopback server (token_count.zig, transport/oneshot.zig): the
//! request each provider's counting endpoint is sent (the turn's request without what is not
//! prompt), answers with a Content-Length and chunked, a provider's error body as its typed
//! error, a timeout, and the estimate where a provider has no endpoint.
const std = @import("std");
const Agent = @import("agent.zig").Agent;
const errors = @import("errors.zig");
const stream_test = @import("stream_test.zig");
const TestServer = stream_test.TestServer;

const gpa = std.testing.allocator;

fn answer(body: []const u8, framing: stream_test.Framing) stream_test.Answer {
    return .{ .content_type = "application/json", .body = body, .framing = framing };
}

/// Counts "How many?" once against `a` and returns what the server was sent.
fn countOnce(config: @import("config.zig").Config, a: stream_test.Answer, want_tokens: u64, sent: *std.ArrayList(u8)) !void {
    var server: TestServer = undefined;
    try server.startRecorded(a, &.{}, sent);
    defer server.stop();
    const agent = try stream_test.loopbackAgent(server.port, config);
    defer agent.deinit();
    var detail: errors.Detail = .{};
    defer detail.deinit(gpa);
    const got = try agent.countTokens(.{ .text = "How many?" }, &detail);
    try std.testing.expectEqual(want_tokens, got.input_tokens);
    try std.testing.expect(!got.estimated);
    try std.testing.expectEqual(@as(usize, 0), agent.conversation.messages.items.len); // nothing appended
}

test "anthropic: count_tokens is sent the turn's prompt (system, thinking, messages) without max_tokens or stream" {
    var sent: std.ArrayList(u8) = .empty;
    defer sent.deinit(gpa);
    try countOnce(.{ .provider = .anthropic, .model = "claude-sonnet-4-5", .system = "Be brief.", .request = .{ .thinking_budget = 2048, .temperature = 0.5 } }, answer("{\"input_tokens\":31}", .content_length), 31, &sent);
    try std.testing.expectEqualStrings("POST /v1/messages/count_tokens HTTP/1.1\r\n" ++
        "{\"model\":\"claude-sonnet-4-5\",\"thinking\":{\"type\":\"enabled\",\"budget_tokens\":2048}," ++
        "\"system\":[{\"type\":\"text\",\"text\":\"Be brief.\",\"cache_control\":{\"type\":\"ephemeral\"}}]," ++
        "\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"How many?\",\"cache_control\":{\"type\":\"ephemeral\"}}]}]}\n", sent.items);
}

test "gemini: countTokens is sent the turn's request as its generateContentRequest, a chunked answer" {
    var sent: std.ArrayList(u8) = .empty;
    defer sent.deinit(gpa);
    var a = answer("{\"totalTokens\": 12, \"promptTokensDetails\": [{\"modality\": \"TEXT\", \"tokenCount\": 12}]}", .chunked);
    a.piece = 7;
    try countOnce(.{ .provider = .gemini, .model = "gemini-2.5-flash" }, a, 12, &sent);
    try std.testing.expect(std.mem.startsWith(u8, sent.items, "POST /v1beta/models/gemini-2.5-flash:countTokens HTTP/1.1\r\n{\"generateContentRequest\":{\"model\":\"models/gemini-2.5-flash\",\"contents\":[{\"role\":\"user\",\"parts\":[{\"text\":\"How many?\"}]}]"));
    try std.testing.expect(std.mem.endsWith(u8, sent.items, "}}\n"));
}

test "openai-responses: input_tokens is sent the input items without store, include or stream" {
    var sent: std.ArrayList(u8) = .empty;
    defer sent.deinit(gpa);
    try countOnce(.{ .provider = .@"openai-responses", .model = "gpt-5" }, answer("{\"object\":\"response.input_tokens\",\"input_tokens\":9}", .content_length), 9, &sent);
    try std.testing.expect(std.mem.startsWith(u8, sent.items, "POST /v1/responses/input_tokens HTTP/1.1\r\n{\"model\":\"gpt-5\",\"input\":["));
    try std.testing.expect(std.mem.indexOf(u8, sent.items, "stream") == null);
    try std.testing.expect(std.mem.indexOf(u8, sent.items, "max_output_tokens") == null);
}

test "bedrock: CountTokens is sent the Converse request as input.converse, without inferenceConfig" {
    var sent: std.ArrayList(u8) = .empty;
    defer sent.deinit(gpa);
    try countOnce(.{ .provider = .bedrock, .model = "anthropic.claude-sonnet-4-5-20250929-v1:0" }, answer("{\"inputTokens\":14}", .content_length), 14, &sent);
    try std.testing.expect(std.mem.startsWith(u8, sent.items, "POST /model/anthropic.claude-sonnet-4-5-20250929-v1%3A0/count-tokens HTTP/1.1\r\n{\"input\":{\"converse\":{\"messages\":["));
    try std.testing.expect(std.mem.indexOf(u8, sent.items, "inferenceConfig") == null);
}

test "a provider's error body is its typed error; an answer without a count is a protocol error" {
    var server: TestServer = undefined;
    try server.startMany(.{
        .status = "429 Too Many Requests",
        .content_type = "application/json",
        .body = "{\"type\":\"error\",\"error\":{\"type\":\"rate_limit_error\",\"message\":\"slow down\"}}",
        .framing = .content_length,
    }, &.{answer("{\"tokens\":3}", .chunked)});
    defer server.stop();
    const agent = try stream_test.loopbackAgent(server.port, .{ .provider = .anthropic, .model = "m" });
    defer agent.deinit();
    var detail: errors.Detail = .{};
    defer detail.deinit(gpa);
    try std.testing.expectError(error.RateLimit, agent.countTokens(null, &detail));
    try std.testing.expectEqual(@as(u16, 429), detail.http_status);
    try std.testing.expectEqualStrings("rate_limit_error", detail.error_type.items);
    try std.testing.expectEqualStrings("slow down", detail.message.items);
    try std.testing.expectEqualStrings("req_test", detail.request_id.items);
    try std.testing.expectError(error.Protocol, agent.countTokens(null, &detail));
    try std.testing.expectEqualStrings("protocol_error", detail.error_type.items);
}

test "an answer that stops coming is a timeout (idle_ms), and the agent counts again after" {
    var server: TestServer = undefined;
    var stalled = answer("{\"input_tokens\":", .content_length);
    stalled.stall = true;
    try server.startMany(stalled, &.{answer("{\"input_tokens\":5}", .content_length)});
    defer server.stop();
    const agent = try stream_test.loopbackAgent(server.port, .{ .provider = .anthropic, .model = "m", .timeouts = .{ .idle_ms = 50 } });
    defer agent.deinit();
    var detail: errors.Detail = .{};
    defer detail.deinit(gpa);
    try std.testing.expectError(error.Timeout, agent.countTokens(null, &detail));
    try std.testing.expectEqualStrings("timeout_error", detail.error_type.items);
    try std.testing.expectEqual(@as(u64, 5), (try agent.countTokens(null, &detail)).input_tokens);
}

test "openai chat completions has no counting endpoint: compaction's estimate, marked; a busy agent is refused" {
    const agent = try Agent.init(gpa, .{ .provider = .openai, .model = "gpt-4o", .api_key = "k", .system = "sys" });
    defer agent.deinit();
    var detail: errors.Detail = .{};
    defer detail.deinit(gpa);
    const got = try agent.countTokens(.{ .text = "a question of some forty characters long" }, &detail);
    try std.testing.expect(got.estimated);
    try std.testing.expect(got.input_tokens > 0);
    const alone = try agent.countTokens(null, &detail);
    try std.testing.expect(alone.input_tokens < got.input_tokens);
    agent.busy = true;
    defer agent.busy = false;
    try std.testing.expectError(error.Busy, agent.countTokens(null, &detail));
}
