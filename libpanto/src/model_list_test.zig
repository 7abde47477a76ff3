//! Model lists against a loopback server (model_list.zig, transport/oneshot.zig's GET): each
//! provider's path and pages followed to the last, answers with a Content-Length and chunked,
//! the catalog joined, and a provider's error body as its typed error.
const std = @import("std");
const errors = @import("errors.zig");
const stream_test = @import("stream_test.zig");
const TestServer = stream_test.TestServer;

const gpa = std.testing.allocator;

fn answer(body: []const u8, framing: stream_test.Framing) stream_test.Answer {
    return .{ .content_type = "application/json", .body = body, .framing = framing };
}

/// Lists the models of `config`'s provider against `answers` (one request each); returns the
/// list's JSON in `out` and what the server was sent in `sent`.
fn listOnce(config: @import("config.zig").Config, answers: []const stream_test.Answer, out: *std.Io.Writer.Allocating, sent: *std.ArrayList(u8)) !void {
    var server: TestServer = undefined;
    try server.startRecorded(answers[0], answers[1..], sent);
    defer server.stop();
    const agent = try stream_test.loopbackAgent(server.port, config);
    defer agent.deinit();
    var detail: errors.Detail = .{};
    defer detail.deinit(gpa);
    try agent.listModels(&out.writer, &detail);
}

fn ids(text: []const u8, want: []const []const u8) !std.json.Parsed(std.json.Value) {
    const parsed = try std.json.parseFromSlice(std.json.Value, gpa, text, .{});
    errdefer parsed.deinit();
    const items = parsed.value.array.items;
    try std.testing.expectEqual(want.len, items.len);
    for (items, want) |item, id| try std.testing.expectEqualStrings(id, item.object.get("id").?.string);
    return parsed;
}

test "anthropic: every page followed (after_id), in order, each joined with the catalog or null" {
    var sent: std.ArrayList(u8) = .empty;
    defer sent.deinit(gpa);
    var out: std.Io.Writer.Allocating = .init(gpa);
    defer out.deinit();
    var second = answer("{\"data\":[{\"type\":\"model\",\"id\":\"claude-unknown-1\",\"display_name\":\"Nobody\",\"created_at\":\"2026-01-01T00:00:00Z\"}],\"has_more\":false,\"first_id\":\"claude-unknown-1\",\"last_id\":\"claude-unknown-1\"}", .chunked);
    second.piece = 5;
    try listOnce(.{ .provider = .anthropic, .model = "m" }, &.{
        answer("{\"data\":[{\"type\":\"model\",\"id\":\"claude-sonnet-4-5-20250929\",\"display_name\":\"Claude Sonnet 4.5\",\"created_at\":\"2025-09-29T00:00:00Z\"},{\"type\":\"model\",\"id\":\"claude-opus-4-1-20250805\",\"display_name\":\"Claude Opus 4.1\",\"created_at\":\"2025-08-05T00:00:00Z\"}],\"has_more\":true,\"first_id\":\"claude-sonnet-4-5-20250929\",\"last_id\":\"claude-opus-4-1-20250805\"}", .content_length),
        second,
    }, &out, &sent);
    try std.testing.expectEqualStrings("GET /v1/models?limit=1000 HTTP/1.1\r\n\n" ++
        "GET /v1/models?limit=1000&after_id=claude-opus-4-1-20250805 HTTP/1.1\r\n\n", sent.items);
    const parsed = try ids(out.written(), &.{ "claude-sonnet-4-5-20250929", "claude-opus-4-1-20250805", "claude-unknown-1" });
    defer parsed.deinit();
    const first = parsed.value.array.items[0].object;
    try std.testing.expectEqualStrings("Claude Sonnet 4.5", first.get("display_name").?.string);
    try std.testing.expectEqualStrings("2025-09-29T00:00:00Z", first.get("created").?.string);
    try std.testing.expect(first.get("model_info").?.object.get("max_output_tokens") != null);
    try std.testing.expect(parsed.value.array.items[2].object.get("model_info").? == .null);
}

test "gemini: pageToken followed, the ids without models/" {
    var sent: std.ArrayList(u8) = .empty;
    defer sent.deinit(gpa);
    var out: std.Io.Writer.Allocating = .init(gpa);
    defer out.deinit();
    try listOnce(.{ .provider = .gemini, .model = "m" }, &.{
        answer("{\"models\":[{\"name\":\"models/gemini-2.5-flash\",\"displayName\":\"Gemini 2.5 Flash\",\"inputTokenLimit\":1048576}],\"nextPageToken\":\"p/2=\"}", .chunked),
        answer("{\"models\":[{\"name\":\"models/gemini-2.5-pro\"}]}", .content_length),
    }, &out, &sent);
    try std.testing.expectEqualStrings("GET /v1beta/models?pageSize=1000 HTTP/1.1\r\n\n" ++
        "GET /v1beta/models?pageSize=1000&pageToken=p%2F2%3D HTTP/1.1\r\n\n", sent.items);
    const parsed = try ids(out.written(), &.{ "gemini-2.5-flash", "gemini-2.5-pro" });
    defer parsed.deinit();
    try std.testing.expectEqualStrings("Gemini 2.5 Flash", parsed.value.array.items[0].object.get("display_name").?.string);
    try std.testing.expect(parsed.value.array.items[1].object.get("display_name") == null);
}

test "openai and bedrock: one page each, OpenAI's created as RFC 3339" {
    var sent: std.ArrayList(u8) = .empty;
    defer sent.deinit(gpa);
    var out: std.Io.Writer.Allocating = .init(gpa);
    defer out.deinit();
    try listOnce(.{ .provider = .openai, .model = "m" }, &.{answer("{\"object\":\"list\",\"data\":[{\"id\":\"gpt-4o\",\"object\":\"model\",\"created\":1715367049,\"owned_by\":\"system\"}]}", .content_length)}, &out, &sent);
    try std.testing.expectEqualStrings("GET /v1/models HTTP/1.1\r\n\n", sent.items);
    const openai = try ids(out.written(), &.{"gpt-4o"});
    defer openai.deinit();
    try std.testing.expectEqualStrings("2024-05-10T18:50:49Z", openai.value.array.items[0].object.get("created").?.string);

    sent.clearRetainingCapacity();
    out.clearRetainingCapacity();
    try listOnce(.{ .provider = .bedrock, .model = "m" }, &.{answer("{\"modelSummaries\":[{\"modelArn\":\"arn:aws:bedrock:us-east-1::foundation-model/amazon.nova-pro-v1:0\",\"modelId\":\"amazon.nova-pro-v1:0\",\"modelName\":\"Nova Pro\",\"providerName\":\"Amazon\"}]}", .chunked)}, &out, &sent);
    try std.testing.expectEqualStrings("GET /foundation-models HTTP/1.1\r\n\n", sent.items);
    const bedrock = try ids(out.written(), &.{"amazon.nova-pro-v1:0"});
    defer bedrock.deinit();
    try std.testing.expectEqualStrings("Nova Pro", bedrock.value.array.items[0].object.get("display_name").?.string);
}

test "a provider's error body is its typed error, an answer that is no page a protocol error; nothing written" {
    var server: TestServer = undefined;
    try server.startMany(.{
        .status = "401 Unauthorized",
        .content_type = "application/json",
        .body = "{\"type\":\"error\",\"error\":{\"type\":\"authentication_error\",\"message\":\"invalid x-api-key\"}}",
        .framing = .content_length,
    }, &.{answer("{\"models\":3}", .chunked)});
    defer server.stop();
    const agent = try stream_test.loopbackAgent(server.port, .{ .provider = .anthropic, .model = "m" });
    defer agent.deinit();
    var detail: errors.Detail = .{};
    defer detail.deinit(gpa);
    var out: std.Io.Writer.Allocating = .init(gpa);
    defer out.deinit();
    try std.testing.expectError(error.Authentication, agent.listModels(&out.writer, &detail));
    try std.testing.expectEqual(@as(u16, 401), detail.http_status);
    try std.testing.expectEqualStrings("authentication_error", detail.error_type.items);
    try std.testing.expectEqualStrings("invalid x-api-key", detail.message.items);
    try std.testing.expectEqualStrings("req_test", detail.request_id.items);
    try std.testing.expectError(error.Protocol, agent.listModels(&out.writer, &detail));
    try std.testing.expectEqualStrings("protocol_error", detail.error_type.items);
    try std.testing.expectEqual(@as(usize, 0), out.written().len);
    agent.busy = true;
    defer agent.busy = false;
    try std.testing.expectError(error.Busy, agent.listModels(&out.writer, &detail));
}
