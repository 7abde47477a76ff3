//! Fuzz target `config`: any bytes as a configuration string, three ways: the configuration
//! of a new agent (panto_agent_new), a tool spec (panto_agent_add_tool) and a change of
//! configuration (panto_agent_set_config). What is accepted must then export (the tools in
//! each format, the request the agent would send) as JSON; what is refused must say why in
//! UTF-8.
const std = @import("std");
const Allocator = std.mem.Allocator;
const config = @import("../src/config.zig");
const Agent = @import("../src/agent.zig").Agent;
const anthropic = @import("../src/anthropic.zig");
const openai = @import("../src/openai.zig");
const turn = @import("turn.zig");
const invariants = @import("invariants.zig");
const Context = @import("context.zig").Context;

pub fn run(ctx: Context, input: []const u8) !void {
    const gpa = ctx.gpa;
    {
        var arena: std.heap.ArenaAllocator = .init(gpa);
        defer arena.deinit();
        var diag: config.Diagnostic = .{};
        if (config.parseJson(arena.allocator(), input, &diag)) |parsed| {
            const agent = Agent.initWithDiagnostic(gpa, parsed, &diag) catch |err| switch (err) {
                error.InvalidConfig => return expectReason(&diag),
                else => |e| return e,
            };
            defer agent.deinit();
            try exportAgent(gpa, agent);
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
            try exportAgent(gpa, agent);
        } else |err| switch (err) {
            error.InvalidConfig => expectReason(&diag),
            else => |e| return e,
        }
        if (agent.setConfig(input, &diag)) {
            try exportAgent(gpa, agent);
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

/// The tools in every export format, and the request for a first message.
fn exportAgent(gpa: Allocator, agent: *Agent) !void {
    var out: std.Io.Writer.Allocating = .init(gpa);
    defer out.deinit();
    for ([_]@import("../src/tools.zig").Format{ .anthropic, .openai, .panto }) |format| {
        for ([_]bool{ false, true }) |only_allowed| {
            out.clearRetainingCapacity();
            try agent.exportTools(&out.writer, format, only_allowed);
            try invariants.expectJson(gpa, out.written(), "the tools' export");
        }
    }
    try agent.conversation.appendUserText("Hello");
    const parts: anthropic.RequestParts = .{
        .config = agent.config,
        .conversation = &agent.conversation,
        .tools = agent.tools.items,
        .granted = agent.config.capabilities,
    };
    out.clearRetainingCapacity();
    try anthropic.writeRequest(&out.writer, parts);
    try invariants.expectJson(gpa, out.written(), "the Anthropic request");
    out.clearRetainingCapacity();
    try openai.writeRequest(&out.writer, parts);
    try invariants.expectJson(gpa, out.written(), "the OpenAI request");
}
