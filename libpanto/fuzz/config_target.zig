//! Fuzz target `config`: any bytes as a configuration string, three ways: the configuration
//! of a new agent (panto_agent_new), a tool spec (panto_agent_add_tool) and a change of
//! configuration (panto_agent_set_config). What is accepted must then export (the tools in
//! each format, the request the agent would send) as JSON; what is refused must say why in
//! UTF-8.
const std = @import("std");
const config = @import("../src/config.zig");
const Agent = @import("../src/agent.zig").Agent;
const turn = @import("turn.zig");
const exports = @import("exports.zig");
const Context = @import("context.zig").Context;

pub fn run(ctx: Context, input: []const u8) !void {
    const gpa = ctx.gpa;
    {
        var arena: std.heap.ArenaAllocator = .init(gpa);
        defer arena.deinit();
        var diag: config.Diagnostic = .{};
        if (config.parseJson(arena.allocator(), input, &diag)) |parsed_config| {
            // Its session is parsed but not opened: a fuzzed config must not create, lock or
            // replay files wherever its "dir" says (the session tests own that path).
            var parsed = parsed_config;
            parsed.session = null;
            const agent = Agent.initWithDiagnostic(gpa, parsed, &diag) catch |err| switch (err) {
                error.InvalidConfig => return expectReason(&diag),
                else => |e| return e,
            };
            defer agent.deinit();
            try exportAgent(agent);
        } else |err| switch (err) {
            error.InvalidConfig => expectReason(&diag),
            else => |e| return e,
        }
    }
    {
        const agent = try turn.newAgent(gpa, .openai, ctx.root);
        defer agent.deinit();
        var diag: config.Diagnostic = .{};
        if (agent.addTool(input, &diag)) {
            try exportAgent(agent);
        } else |err| switch (err) {
            error.InvalidConfig => expectReason(&diag),
            else => |e| return e,
        }
        if (agent.setConfig(input, &diag)) {
            try exportAgent(agent);
        } else |err| switch (err) {
            error.InvalidConfig => expectReason(&diag),
            else => |e| return e,
        }
    }
}

/// A refusal says why, in UTF-8 (the C ABI hands it out as a string).
fn expectReason(diag: *const config.Diagnostic) void {
    const message = diag.message();
    if (message.len == 0) @panic("a configuration was refused without a reason");
    if (!std.unicode.utf8ValidateSlice(message)) std.debug.panic("the reason a configuration was refused is not UTF-8: {s}", .{message});
}

/// What the agent writes out, with a first message in its conversation.
fn exportAgent(agent: *Agent) !void {
    try agent.conversation.appendUserText("Hello");
    try exports.expectJson(agent.gpa, agent);
}
