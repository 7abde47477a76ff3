//! Fuzz target `tool_input`: any bytes as the input a model gives a tool call. They are
//! streamed (Anthropic framing) as the input of three calls in one message: the native `read`
//! tool (over a small root, sandbox.zig), a host tool whose schema uses every keyword the
//! schema check knows (turn.probe_tool), and a tool the agent does not have. The turn then
//! runs as in production: the input is parsed and normalized, checked against the schema,
//! the tools run, and the next request (with the inputs and results) is written.
const std = @import("std");
const Allocator = std.mem.Allocator;
const turn = @import("turn.zig");
const Transcript = @import("transcript.zig").Transcript;
const Context = @import("context.zig").Context;

const tools = [_][]const u8{ "read", "probe", "missing" };

pub fn run(ctx: Context, input: []const u8) !void {
    const gpa = ctx.gpa;
    var body: std.ArrayList(u8) = .empty;
    defer body.deinit(gpa);
    try writeBody(gpa, &body, input);
    var transcript: Transcript = .init(gpa);
    defer transcript.deinit();
    const agent = try turn.newAgent(gpa, .anthropic, ctx.root);
    defer agent.deinit();
    try turn.run(ctx, agent, body.items, body.items.len, &transcript);
}

/// An Anthropic stream whose message calls each of `tools` with `input`.
pub fn writeBody(gpa: Allocator, body: *std.ArrayList(u8), input: []const u8) Allocator.Error!void {
    try body.appendSlice(gpa,
        \\event: message_start
        \\data: {"type":"message_start","message":{"id":"msg_fuzz","model":"fuzz-model","usage":{"input_tokens":1,"output_tokens":1}}}
        \\
        \\
    );
    for (tools, 0..) |name, i| {
        try body.print(gpa,
            \\event: content_block_start
            \\data: {{"type":"content_block_start","index":{d},"content_block":{{"type":"tool_use","id":"toolu_{d}","name":"{s}","input":{{}}}}}}
            \\
            \\event: content_block_delta
            \\data: {{"type":"content_block_delta","index":{d},"delta":{{"type":"input_json_delta","partial_json":"
        , .{ i, i, name, i });
        try writeEscaped(gpa, body, input);
        try body.print(gpa,
            \\"}}}}
            \\
            \\event: content_block_stop
            \\data: {{"type":"content_block_stop","index":{d}}}
            \\
            \\
        , .{i});
    }
    try body.appendSlice(gpa,
        \\event: message_delta
        \\data: {"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":9}}
        \\
        \\event: message_stop
        \\data: {"type":"message_stop"}
        \\
        \\
    );
}

/// The bytes as the inside of a JSON string, escaping what JSON requires; other bytes go as
/// they are (bytes that are not UTF-8 make the stream invalid, as they would from a server).
fn writeEscaped(gpa: Allocator, out: *std.ArrayList(u8), bytes: []const u8) Allocator.Error!void {
    for (bytes) |c| switch (c) {
        '"' => try out.appendSlice(gpa, "\\\""),
        '\\' => try out.appendSlice(gpa, "\\\\"),
        0...0x1f => try out.print(gpa, "\\u{x:0>4}", .{c}),
        else => try out.append(gpa, c),
    };
}
