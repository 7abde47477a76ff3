//! The OpenAI decoder on streams as compatible servers and Azure send them: parallel tool
//! calls whose argument fragments interleave, and Azure's content-filter chunks. Each stream
//! is decoded twice, as the stream reads it: chunk by chunk from the SSE parser's events
//! (`handle`), and from the received bytes (`hotQueued`, else `handle`).
const std = @import("std");
const openai = @import("decode.zig");
const sse = @import("../../sse.zig");
const Assembly = @import("../../assembly.zig").Assembly;
const errors = @import("../../errors.zig");
const chunk_feed = @import("chunk_feed.zig");

/// The events of a stream of chunks (the data of each SSE event), one line each.
fn transcript(chunks: []const []const u8, from_bytes: bool) ![]u8 {
    const gpa = std.testing.allocator;
    var out: std.Io.Writer.Allocating = .init(gpa);
    errdefer out.deinit();
    var arena: std.heap.ArenaAllocator = .init(gpa);
    defer arena.deinit();
    var a = Assembly.init(gpa);
    defer a.deinit();
    var detail: errors.Detail = .{};
    defer detail.deinit(gpa);
    var d: openai.Decoder = .{};
    for (chunks) |data| {
        _ = arena.reset(.retain_capacity);
        chunk_feed.feed(&d, &a, arena.allocator(), data, from_bytes, &detail) catch |err| {
            try out.writer.print("error {s}: {s}\n", .{ @errorName(err), detail.message.items });
            break;
        };
        try render(&a, &out.writer); // (the events' strings last until the next chunk)
    } else {
        d.finish(&a, &detail) catch |err| try out.writer.print("error {s}: {s}\n", .{ @errorName(err), detail.message.items });
        try render(&a, &out.writer);
    }
    return out.toOwnedSlice();
}

fn render(a: *Assembly, w: *std.Io.Writer) !void {
    while (a.pop()) |e| switch (e) {
        .message_start => |m| try w.print("start {s} {s}\n", .{ m.id, m.model }),
        .block_start => |b| try w.print("block {d} {t}\n", .{ b.index, b.kind }),
        .tool_details => |t| try w.print("details {d} {s} {s}\n", .{ t.index, t.id, t.name }),
        .content_delta => |c| try w.print("delta {d} {s}\n", .{ c.index, c.text }),
        .block_complete => |c| try w.print("complete {d} {s}\n", .{ c.index, c.text }),
        .message_end => |m| try w.print("end {t} {s} {d}\n", .{ m.stop_reason, m.provider_stop_reason, m.usage.output_tokens }),
        else => try w.print("{t}\n", .{e}),
    };
}

fn expectTranscript(chunks: []const []const u8, expected: []const u8) !void {
    for ([_]bool{ false, true }) |from_bytes| {
        const got = try transcript(chunks, from_bytes);
        defer std.testing.allocator.free(got);
        try std.testing.expectEqualStrings(expected, got);
    }
}

const head = "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"model\":\"gpt-4o\",\"choices\":[{\"index\":0,";

fn call(comptime index: []const u8, comptime id: []const u8, comptime name: []const u8) []const u8 {
    return head ++ "\"delta\":{\"tool_calls\":[{\"index\":" ++ index ++ ",\"id\":\"" ++ id ++ "\",\"type\":\"function\",\"function\":{\"name\":\"" ++ name ++ "\",\"arguments\":\"\"}}]},\"finish_reason\":null}]}";
}

fn args(comptime index: []const u8, comptime fragment: []const u8) []const u8 {
    return head ++ "\"delta\":{\"tool_calls\":[{\"index\":" ++ index ++ ",\"function\":{\"arguments\":\"" ++ fragment ++ "\"}}]},\"finish_reason\":null}]}";
}

const role = head ++ "\"delta\":{\"role\":\"assistant\",\"content\":null},\"finish_reason\":null}]}";
const finish_tools = head ++ "\"delta\":{},\"finish_reason\":\"tool_calls\"}]}";
const usage = "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"model\":\"gpt-4o\",\"choices\":[],\"usage\":{\"prompt_tokens\":9,\"completion_tokens\":7}}";

/// Two calls, each streamed whole, one after the other: what the interleaved streams must give.
const two_calls =
    \\start chatcmpl-1 gpt-4o
    \\block 0 tool_call
    \\details 0 call_a get_weather
    \\delta 0 {"city":
    \\delta 0 "Paris"}
    \\complete 0 {"city":"Paris"}
    \\block 1 tool_call
    \\details 1 call_b get_time
    \\delta 1 {"zone":
    \\delta 1 "CET"}
    \\complete 1 {"zone":"CET"}
    \\end tool_use tool_calls 7
    \\
;

test "parallel tool calls in order" {
    try expectTranscript(&.{
        role,                           call("0", "call_a", "get_weather"), args("0", "{\\\"city\\\":"), args("0", "\\\"Paris\\\"}"),
        call("1", "call_b", "get_time"), args("1", "{\\\"zone\\\":"),        args("1", "\\\"CET\\\"}"),     finish_tools,
        usage,                          "[DONE]",
    }, two_calls);
}

test "parallel tool calls whose fragments interleave by index: one call per index, as if in order" {
    try expectTranscript(&.{
        role,                 call("0", "call_a", "get_weather"), call("1", "call_b", "get_time"), args("0", "{\\\"city\\\":"),
        args("1", "{\\\"zone\\\":"), args("0", "\\\"Paris\\\"}"),         args("1", "\\\"CET\\\"}"),     finish_tools,
        usage,                "[DONE]",
    }, two_calls);
}

test "two calls' pieces in one chunk, again and again" {
    const both_start = head ++ "\"delta\":{\"tool_calls\":[" ++
        "{\"index\":0,\"id\":\"call_a\",\"type\":\"function\",\"function\":{\"name\":\"get_weather\",\"arguments\":\"{\\\"city\\\":\"}}," ++
        "{\"index\":1,\"id\":\"call_b\",\"type\":\"function\",\"function\":{\"name\":\"get_time\",\"arguments\":\"{\\\"zone\\\":\"}}]},\"finish_reason\":null}]}";
    const both_end = head ++ "\"delta\":{\"tool_calls\":[" ++
        "{\"index\":1,\"function\":{\"arguments\":\"\\\"CET\\\"}\"}}," ++
        "{\"index\":0,\"function\":{\"arguments\":\"\\\"Paris\\\"}\"}}]},\"finish_reason\":null}]}";
    try expectTranscript(&.{ role, both_start, both_end, finish_tools, usage, "[DONE]" }, two_calls);
}

test "text before the calls streams first; text between their fragments follows them" {
    const text = struct {
        fn of(comptime t: []const u8) []const u8 {
            return head ++ "\"delta\":{\"content\":\"" ++ t ++ "\"},\"finish_reason\":null}]}";
        }
    }.of;
    try expectTranscript(&.{
        role,                    text("Let me "),      text("look."),               call("0", "call_a", "get_weather"),
        call("1", "call_b", "get_time"), text("One moment."), args("1", "{\\\"zone\\\":\\\"CET\\\"}"), args("0", "{\\\"city\\\":\\\"Paris\\\"}"),
        finish_tools,            "[DONE]",
    },
        \\start chatcmpl-1 gpt-4o
        \\block 0 text
        \\delta 0 Let me 
        \\delta 0 look.
        \\complete 0 Let me look.
        \\block 1 tool_call
        \\details 1 call_a get_weather
        \\delta 1 {"city":"Paris"}
        \\complete 1 {"city":"Paris"}
        \\block 2 tool_call
        \\details 2 call_b get_time
        \\delta 2 {"zone":"CET"}
        \\complete 2 {"zone":"CET"}
        \\block 3 text
        \\delta 3 One moment.
        \\complete 3 One moment.
        \\end tool_use tool_calls 0
        \\
    );
}

test "a held call without arguments completes as {}" {
    try expectTranscript(&.{ role, call("0", "call_a", "get_weather"), call("1", "call_b", "get_time"), args("0", "{}"), finish_tools },
        \\start chatcmpl-1 gpt-4o
        \\block 0 tool_call
        \\details 0 call_a get_weather
        \\delta 0 {}
        \\complete 0 {}
        \\block 1 tool_call
        \\details 1 call_b get_time
        \\complete 1 {}
        \\end tool_use tool_calls 0
        \\
    );
}

// Azure OpenAI, as its documentation shows a stream (content filtering: the prompt's results
// first, then annotations of text already sent, without a delta, after the text and after
// the finish).
const azure_prompt_filter = "{\"choices\":[],\"created\":0,\"id\":\"\",\"model\":\"\",\"object\":\"\",\"prompt_filter_results\":[{\"prompt_index\":0,\"content_filter_results\":{\"hate\":{\"filtered\":false,\"severity\":\"safe\"},\"self_harm\":{\"filtered\":false,\"severity\":\"safe\"},\"sexual\":{\"filtered\":false,\"severity\":\"safe\"},\"violence\":{\"filtered\":false,\"severity\":\"safe\"}}}]}";
const azure_annotation = "{\"id\":\"\",\"object\":\"\",\"created\":0,\"model\":\"\",\"choices\":[{\"index\":0,\"finish_reason\":null,\"content_filter_results\":{\"hate\":{\"filtered\":false,\"severity\":\"safe\"}},\"content_filter_offsets\":{\"check_offset\":44,\"start_offset\":44,\"end_offset\":198}}],\"usage\":null}";

fn azure(comptime choice: []const u8) []const u8 {
    return "{\"choices\":[{\"content_filter_results\":{},\"index\":0,\"logprobs\":null," ++ choice ++ "}],\"created\":1748977994,\"id\":\"chatcmpl-BeRMQ\",\"model\":\"gpt-4o-2024-05-13\",\"object\":\"chat.completion.chunk\",\"system_fingerprint\":\"fp_ee1d74bde0\"}";
}

test "Azure: the prompt-filter chunk and content-filter annotations are no part of the message" {
    try expectTranscript(&.{
        azure_prompt_filter,
        azure("\"delta\":{\"content\":\"\",\"refusal\":null,\"role\":\"assistant\"},\"finish_reason\":null"),
        azure("\"delta\":{\"content\":\"Hello\"},\"finish_reason\":null"),
        azure_annotation,
        azure("\"delta\":{\"content\":\" there.\"},\"finish_reason\":null"),
        azure("\"delta\":{},\"finish_reason\":\"stop\""),
        azure_annotation,
        "[DONE]",
    },
        \\start chatcmpl-BeRMQ gpt-4o-2024-05-13
        \\block 0 text
        \\delta 0 Hello
        \\delta 0  there.
        \\complete 0 Hello there.
        \\end end_turn stop 0
        \\
    );
}

test "Azure: an answer the filter stopped ends as content_filter; a stream of filter results alone is cut short" {
    try expectTranscript(&.{
        azure_prompt_filter,
        azure("\"delta\":{\"content\":\"Hey\"},\"finish_reason\":null"),
        "{\"id\":\"\",\"object\":\"\",\"created\":0,\"model\":\"\",\"choices\":[{\"index\":0,\"finish_reason\":\"content_filter\",\"content_filter_results\":{\"protected_material_text\":{\"detected\":true,\"filtered\":true}}}],\"usage\":null}",
        "[DONE]",
    },
        \\start chatcmpl-BeRMQ gpt-4o-2024-05-13
        \\block 0 text
        \\delta 0 Hey
        \\complete 0 Hey
        \\end content_filter content_filter 0
        \\
    );
    try expectTranscript(&.{ azure_prompt_filter, "[DONE]" },
        \\error Protocol: the OpenAI stream ended before any chunk
        \\
    );
}

test "reasoning under the names compatible servers give it: reasoning_content, reasoning, reasoning_text; two at once give it once" {
    const delta = struct {
        fn of(comptime fields: []const u8) []const u8 {
            return head ++ "\"delta\":{" ++ fields ++ "},\"finish_reason\":null}]}";
        }
    }.of;
    try expectTranscript(&.{
        role,
        delta("\"reasoning\":\"Groq \""),
        delta("\"reasoning_text\":\"and \""),
        delta("\"reasoning_content\":\"vLLM, \",\"reasoning\":\"vLLM, \""),
        delta("\"reasoning\":\"\",\"reasoning_text\":\"first \""),
        delta("\"role\":\"assistant\",\"reasoning\":\"found.\",\"reasoning_content\":null"),
        delta("\"content\":\"Done.\",\"reasoning\":null"),
        head ++ "\"delta\":{},\"finish_reason\":\"stop\"}]}",
        "[DONE]",
    },
        \\start chatcmpl-1 gpt-4o
        \\block 0 thinking
        \\delta 0 Groq 
        \\delta 0 and 
        \\delta 0 vLLM, 
        \\delta 0 first 
        \\delta 0 found.
        \\complete 0 Groq and vLLM, first found.
        \\block 1 text
        \\delta 1 Done.
        \\complete 1 Done.
        \\end end_turn stop 0
        \\
    );
}

test "reasoning tokens counted once: inside completion_tokens (OpenAI) or apart from them (xAI)" {
    const text = head ++ "\"delta\":{\"content\":\"Hi\"},\"finish_reason\":\"stop\"}]}";
    const cases = [_]struct { usage: []const u8, end: []const u8 }{
        // OpenAI: total = prompt + completion; reasoning inside.
        .{ .usage = "{\"prompt_tokens\":9,\"completion_tokens\":253,\"total_tokens\":262,\"completion_tokens_details\":{\"reasoning_tokens\":227}}", .end = "end end_turn stop 253\n" },
        // xAI: total = prompt + completion + reasoning.
        .{ .usage = "{\"prompt_tokens\":9,\"completion_tokens\":26,\"total_tokens\":262,\"completion_tokens_details\":{\"reasoning_tokens\":227}}", .end = "end end_turn stop 253\n" },
        // No total: more reasoning than completion cannot be inside it.
        .{ .usage = "{\"prompt_tokens\":9,\"completion_tokens\":26,\"completion_tokens_details\":{\"reasoning_tokens\":227}}", .end = "end end_turn stop 253\n" },
        .{ .usage = "{\"prompt_tokens\":9,\"completion_tokens\":30,\"completion_tokens_details\":{\"reasoning_tokens\":20}}", .end = "end end_turn stop 30\n" },
        // Equal: a total of prompt + completion says inside.
        .{ .usage = "{\"prompt_tokens\":9,\"completion_tokens\":20,\"total_tokens\":29,\"completion_tokens_details\":{\"reasoning_tokens\":20}}", .end = "end end_turn stop 20\n" },
        .{ .usage = "{\"prompt_tokens\":9,\"completion_tokens\":5}", .end = "end end_turn stop 5\n" },
        // Counts near u64's limit: the total overflows u64, which is no protocol error.
        .{ .usage = "{\"prompt_tokens\":5,\"completion_tokens\":18446744073709551615,\"total_tokens\":18446744073709551620}", .end = "end end_turn stop 18446744073709551615\n" },
    };
    for (cases) |c| {
        var arena: std.heap.ArenaAllocator = .init(std.testing.allocator);
        defer arena.deinit();
        const usage_chunk = try std.fmt.allocPrint(arena.allocator(), "{{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"model\":\"gpt-4o\",\"choices\":[],\"usage\":{s}}}", .{c.usage});
        const got = try transcript(&.{ text, usage_chunk, "[DONE]" }, false);
        defer std.testing.allocator.free(got);
        const expected = try std.fmt.allocPrint(arena.allocator(), "start chatcmpl-1 gpt-4o\nblock 0 text\ndelta 0 Hi\ncomplete 0 Hi\n{s}", .{c.end});
        try std.testing.expectEqualStrings(expected, got);
    }
}

test "Ollama: calls that all come as index 0, each whole with its own id, are one call each" {
    const whole = struct {
        fn of(comptime id: []const u8, comptime name: []const u8, comptime arguments: []const u8) []const u8 {
            return head ++ "\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"" ++ id ++ "\",\"type\":\"function\",\"function\":{\"name\":\"" ++ name ++ "\",\"arguments\":\"" ++ arguments ++ "\"}}]},\"finish_reason\":null}]}";
        }
    }.of;
    try expectTranscript(&.{
        role,
        whole("call_a", "get_weather", "{\\\"city\\\":\\\"Paris\\\"}"),
        whole("call_b", "get_time", "{\\\"zone\\\":\\\"CET\\\"}"),
        // The same id again (servers that repeat it) goes on the same call.
        head ++ "\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_b\",\"function\":{\"arguments\":\"\"}}]},\"finish_reason\":null}]}",
        finish_tools,
        "[DONE]",
    },
        \\start chatcmpl-1 gpt-4o
        \\block 0 tool_call
        \\details 0 call_a get_weather
        \\delta 0 {"city":"Paris"}
        \\complete 0 {"city":"Paris"}
        \\block 1 tool_call
        \\details 1 call_b get_time
        \\delta 1 {"zone":"CET"}
        \\complete 1 {"zone":"CET"}
        \\end tool_use tool_calls 0
        \\
    );
}
