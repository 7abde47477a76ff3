//! The end of a turn for the short programs: the turn read through to its MessageComplete and
//! the text of its last assistant message (panto_stream_final_message), and that text checked
//! against the JSON the turn's response_format asked for (panto_stream_final_json).
//!
//!   Stream.finalMessage() !FinalMessage   reads what is left of the turn; its end and text
//!   Stream.finalJson() ![]const u8       the same, then the text checked: error.Output
//!                                         (s.final.problem says why, s.final.text is the
//!                                         text) or error.State (no JSON response_format)
//!   check(gpa, format, text, problem)     the check alone
//!
//! A json_schema format is checked by the rules tool inputs are (schema.zig); json_object
//! asks for a JSON object.
const std = @import("std");
const Allocator = std.mem.Allocator;
const Stream = @import("stream.zig").Stream;
const NextError = @import("stream.zig").NextError;
const ev = @import("event.zig");
const config = @import("config.zig");
const schema = @import("schema.zig");
const json_depth = @import("json_depth.zig");
const conversation = @import("conversation.zig");

/// What a stream keeps for its final helpers, valid until it is freed.
pub const Final = struct {
    /// The text of the turn's last assistant message, its text blocks joined.
    text: std.ArrayList(u8) = .empty,
    /// Why the text is not the JSON the turn asked for (after error.Output).
    problem: schema.Problem = .{},
    /// The stream of a compaction asked for (Agent.compact): it has no answer of its own.
    compaction: bool = false,

    pub fn deinit(f: *Final, gpa: Allocator) void {
        f.text.deinit(gpa);
    }
};

pub const FinalMessage = struct {
    /// The turn's MESSAGE_COMPLETE: the last message's stop reason, the turn's usage.
    complete: ev.MessageComplete,
    /// The text of the turn's last assistant message ("" when it had none).
    text: []const u8,
};

/// Reads the rest of the turn (events not read yet are read and let go) and gives its end.
/// Fails as `next()` does: an error of the turn (sticky), or ResultPending while a host tool
/// call awaits its result (submit it, call again). Once the turn is over, gives the same end
/// again.
pub fn finalMessage(s: *Stream) NextError!FinalMessage {
    while (try s.next()) |_| {}
    const gpa = s.agent.gpa;
    s.final.text.clearRetainingCapacity();
    if (!s.final.compaction) if (lastAnswer(s.agent.conversation.messages.items)) |m| {
        for (m.blocks) |b| if (b.kind == .text) s.final.text.appendSlice(gpa, b.text) catch return error.OutOfMemory;
    };
    return .{
        // (what the turn's MessageComplete said: see Stream.nextAny)
        .complete = .{ .stop_reason = s.last_end.stop_reason, .provider_stop_reason = s.last_end.provider_stop_reason, .usage = s.turn_usage, .cost = s.turn_cost },
        .text = s.final.text.items,
    };
}

/// The turn's last assistant message: the last message, or the one before a last message of
/// tool results only (the answers to calls of a message cut short).
fn lastAnswer(messages: []const conversation.Message) ?*const conversation.Message {
    var n = messages.len;
    if (n > 0 and messages[n - 1].role == .user and onlyToolResults(messages[n - 1])) n -= 1;
    if (n == 0 or messages[n - 1].role != .assistant) return null;
    return &messages[n - 1];
}

fn onlyToolResults(m: conversation.Message) bool {
    for (m.blocks) |b| if (b.kind != .tool_result) return false;
    return m.blocks.len > 0;
}

pub const FinalJsonError = NextError || error{ Output, State };

/// As `finalMessage`, then the text checked against the turn's response_format: the text as
/// it came when it is the JSON asked for, else error.Output (`s.final.problem` says why,
/// `s.final.text` holds the text). error.State, before reading anything, when the turn asked
/// for no JSON (no response_format, or {"type": "text"}), or is a compaction.
pub fn finalJson(s: *Stream) FinalJsonError![]const u8 {
    const format = turnFormat(s) orelse return error.State;
    const end = try finalMessage(s);
    try check(s.agent.gpa, format, end.text, &s.final.problem);
    return end.text;
}

/// The JSON response_format of the stream's turn, or null.
fn turnFormat(s: *Stream) ?config.ResponseFormat {
    if (s.final.compaction) return null;
    const format = s.requestParts().config.request.response_format orelse return null;
    return if (format == .text) null else format;
}

/// Whether `text` is the JSON `format` asks for; error.Output with `problem` saying why not.
pub fn check(gpa: Allocator, format: config.ResponseFormat, text: []const u8, problem: *schema.Problem) error{ Output, OutOfMemory }!void {
    var arena: std.heap.ArenaAllocator = .init(gpa);
    defer arena.deinit();
    // The schema check walks the value recursively: bounded first, as tool inputs are.
    if (json_depth.textTooDeep(text)) return fail(problem, "the answer is " ++ json_depth.nested_too_deep, .{});
    const value = std.json.parseFromSliceLeaky(std.json.Value, arena.allocator(), text, .{ .parse_numbers = false }) catch |err| switch (err) {
        error.OutOfMemory => return error.OutOfMemory,
        else => return fail(problem, "the answer is not valid JSON", .{}),
    };
    switch (format) {
        .text => {},
        .json_object => if (value != .object) return fail(problem, "the answer is JSON but not an object", .{}),
        .json_schema => |js| {
            // (config checked the schema: text that does not parse is out of memory here)
            const wanted = std.json.parseFromSliceLeaky(std.json.Value, arena.allocator(), js.schema, .{}) catch return error.OutOfMemory;
            var why: schema.Problem = .{};
            if (!schema.validateNamed(value, wanted, "the answer", &why))
                return fail(problem, "the answer does not match the schema: {s}", .{why.message()});
        },
    }
}

fn fail(problem: *schema.Problem, comptime fmt: []const u8, args: anytype) error{Output} {
    problem.set(fmt, args);
    return error.Output;
}

// ---- Tests --------------------------------------------------------------------------------

const testing = std.testing;
const Agent = @import("agent.zig").Agent;
const stream_test = @import("stream_test.zig");

const weather_schema =
    \\{"type":"object","properties":{"city":{"type":"string"},"days":{"type":"integer","minimum":1}},"required":["city"],"additionalProperties":false}
;

fn expectCheck(format: config.ResponseFormat, text: []const u8, want: ?[]const u8) !void {
    var problem: schema.Problem = .{};
    if (want) |message| {
        try testing.expectError(error.Output, check(testing.allocator, format, text, &problem));
        try testing.expectEqualStrings(message, problem.message());
    } else try check(testing.allocator, format, text, &problem);
}

test "an answer is checked against the response_format: JSON, an object, the schema" {
    const js: config.ResponseFormat = .{ .json_schema = .{ .schema = weather_schema } };
    try expectCheck(js, " {\"city\":\"Paris\",\"days\":2}\n", null);
    try expectCheck(js, "{\"city\":\"Paris\",\"days\":1e2}", null);
    try expectCheck(js, "```json\n{\"city\":\"Paris\"}\n```", "the answer is not valid JSON");
    try expectCheck(js, "", "the answer is not valid JSON");
    try expectCheck(js, "{\"city\":\"Paris\"", "the answer is not valid JSON");
    try expectCheck(js, "{\"days\":2}", "the answer does not match the schema: missing required property \"city\"");
    try expectCheck(js, "{\"city\":7}", "the answer does not match the schema: property \"city\" must be a string, not a number");
    try expectCheck(js, "{\"city\":\"P\",\"days\":0}", "the answer does not match the schema: property \"days\" must be at least 1");
    try expectCheck(js, "{\"city\":\"P\",\"when\":\"now\"}", "the answer does not match the schema: unexpected property \"when\"");
    try expectCheck(js, "[\"Paris\"]", "the answer does not match the schema: the answer must be an object, not an array");
    try expectCheck(js, "[" ** 200 ++ "]" ** 200, "the answer is nested more than 128 levels deep");
    try expectCheck(.json_object, "{\"anything\":[1,2]}", null);
    try expectCheck(.json_object, "42", "the answer is JSON but not an object");
    try expectCheck(.json_object, "{\"a\":1} trailing", "the answer is not valid JSON");
}

/// An Anthropic stream whose one text block streams `pieces`, then stops for `stop_reason`.
fn textBody(comptime pieces: []const []const u8, comptime stop_reason: []const u8) []const u8 {
    comptime var body: []const u8 = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"model\":\"m\",\"usage\":{\"input_tokens\":3,\"output_tokens\":1}}}\n\n" ++
        "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n";
    inline for (pieces) |p| body = body ++ "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"" ++ p ++ "\"}}\n\n";
    return body ++ "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n" ++
        "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"" ++ stop_reason ++ "\"},\"usage\":{\"output_tokens\":5}}\n\n" ++
        "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";
}

/// Runs one turn against `body` with `format`, then `finalJson`: its result, the stream kept
/// for the caller to look at (and destroy, with the agent).
fn finalJsonOf(server: *stream_test.TestServer, body: []const u8, format: ?config.ResponseFormat) !struct { *Agent, *Stream } {
    try server.start(.{ .body = body });
    var url_buf: [64]u8 = undefined;
    const url = try std.fmt.bufPrint(&url_buf, "http://127.0.0.1:{d}", .{server.port});
    const agent = try Agent.init(testing.allocator, .{ .provider = .anthropic, .model = "m", .base_url = url, .api_key = "k", .retry = .{ .max_retries = 0 } });
    errdefer agent.deinit();
    agent.config.request.response_format = format; // (the strings are static)
    return .{ agent, try agent.run("weather?") };
}

test "finalJson reads the turn and gives its text when it is the JSON asked for, again when asked again" {
    var server: stream_test.TestServer = undefined;
    const agent, const stream = try finalJsonOf(&server, textBody(&.{ "{\\\"city\\\":", "\\\"Paris\\\"}" }, "end_turn"), .{ .json_schema = .{ .schema = weather_schema } });
    defer server.stop();
    defer agent.deinit();
    defer stream.destroy();
    // One event read by hand first: the helper reads the rest.
    try testing.expect((try stream.next()).? == .message_start);
    try testing.expectEqualStrings("{\"city\":\"Paris\"}", try stream.finalJson());
    try testing.expectEqualStrings("{\"city\":\"Paris\"}", try stream.finalJson());
    const end = try stream.finalMessage();
    try testing.expectEqual(.end_turn, end.complete.stop_reason);
    try testing.expectEqual(@as(u64, 5), end.complete.usage.output_tokens);
    try testing.expectEqual(null, try stream.next());
}

test "an answer that is not the JSON asked for is error.Output, its text kept; the turn is over and in the conversation" {
    var server: stream_test.TestServer = undefined;
    const agent, const stream = try finalJsonOf(&server, textBody(&.{ "It is ", "sunny." }, "end_turn"), .json_object);
    defer server.stop();
    defer agent.deinit();
    defer stream.destroy();
    try testing.expectError(error.Output, stream.finalJson());
    try testing.expectEqualStrings("It is sunny.", stream.final.text.items);
    try testing.expectEqualStrings("the answer is not valid JSON", stream.final.problem.message());
    try testing.expectEqual(@as(usize, 2), agent.conversation.messages.items.len);
    try testing.expect(!agent.busy);
    try testing.expectEqual(null, try stream.next());
}

test "finalJson without a JSON response_format is error.State and reads nothing; finalMessage then works" {
    for ([_]?config.ResponseFormat{ null, .text }) |format| {
        var server: stream_test.TestServer = undefined;
        const agent, const stream = try finalJsonOf(&server, textBody(&.{"plain"}, "max_tokens"), format);
        defer server.stop();
        defer agent.deinit();
        defer stream.destroy();
        try testing.expectError(error.State, stream.finalJson());
        try testing.expect((try stream.next()).? == .message_start); // nothing was read
        const end = try stream.finalMessage();
        try testing.expectEqualStrings("plain", end.text);
        try testing.expectEqual(.max_tokens, end.complete.stop_reason);
    }
}

test "a turn that fails gives its error to finalJson, sticky" {
    var server: stream_test.TestServer = undefined;
    const agent, const stream = try finalJsonOf(&server, textBody(&.{"{}"}, "end_turn")[0..200], .json_object);
    defer server.stop();
    defer agent.deinit();
    defer stream.destroy();
    try testing.expectError(error.Protocol, stream.finalJson());
    try testing.expectError(error.Protocol, stream.finalJson());
    try testing.expectError(error.Protocol, stream.next());
}

test "Anthropic asks for a json_schema answer with output_config.format, and for nothing else" {
    var c: conversation.Conversation = .init(testing.allocator);
    defer c.deinit();
    try c.appendUserText("hi");
    const cases = [_]struct { ?config.ResponseFormat, []const u8 }{
        .{ null, "" },
        .{ .text, "" },
        .{ .{ .json_schema = .{ .schema = weather_schema } }, "\"output_config\":{\"format\":{\"type\":\"json_schema\",\"schema\":" ++ weather_schema ++ "}}," },
    };
    for (cases) |case| {
        var out: std.Io.Writer.Allocating = .init(testing.allocator);
        defer out.deinit();
        try @import("providers/anthropic/request.zig").writeRequest(&out.writer, .{ .config = .{ .provider = .anthropic, .model = "m", .request = .{ .response_format = case[0], .cache = .{ .mode = .off } } }, .conversation = &c, .tools = &.{}, .granted = &.{} });
        const want = try std.mem.concat(testing.allocator, u8, &.{ "{\"model\":\"m\",\"max_tokens\":4096,\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"hi\"}]}],", case[1], "\"stream\":true}" });
        defer testing.allocator.free(want);
        try testing.expectEqualStrings(want, out.written());
    }
}
