//! What an agent writes out, whatever it received or was configured with: the request it
//! would send next (in each provider's format), its conversation and its tools (in each
//! export format). All must be JSON.
const std = @import("std");
const Allocator = std.mem.Allocator;
const Agent = @import("../src/agent.zig").Agent;
const providers = @import("../src/providers.zig");
const RequestParts = @import("../src/request.zig").RequestParts;
const tools = @import("../src/tools.zig");
const invariants = @import("invariants.zig");

pub fn expectJson(gpa: Allocator, agent: *const Agent) !void {
    var out: std.Io.Writer.Allocating = .init(gpa);
    defer out.deinit();
    const parts: RequestParts = .{
        .config = agent.config,
        .conversation = &agent.conversation,
        .tools = agent.tools.items(),
        .granted = agent.config.capabilities,
    };
    // Every provider's request from the same conversation: a turn may switch providers.
    for (std.enums.values(providers.Provider)) |provider| {
        out.clearRetainingCapacity();
        try providers.writeRequest(provider, &out.writer, parts);
        try invariants.expectJson(gpa, out.written(), @tagName(provider));
    }
    out.clearRetainingCapacity();
    try agent.conversation.writeJson(&out.writer);
    try invariants.expectJson(gpa, out.written(), "the conversation");
    for ([_]tools.Format{ .anthropic, .openai, .panto }) |format| {
        for ([_]bool{ false, true }) |only_allowed| {
            out.clearRetainingCapacity();
            try agent.exportTools(&out.writer, format, only_allowed);
            try invariants.expectJson(gpa, out.written(), "the tools' export");
        }
    }
}
