//! Fuzz targets `anthropic`, `openai`, `responses`, `gemini` and `bedrock`: any bytes as the
//! body of a provider's 200 answer,
//! through a real Stream (turn.zig), twice: read whole, and a few bytes per read. Both must
//! give the same events (the hot readers and the SSE parser agree) and keep panto's
//! promises (invariants.zig). The same bytes are also read as the body of an error answer and
//! as the value of a Retry-After header.
const std = @import("std");
const config = @import("../src/config.zig");
const providers = @import("../src/providers.zig");
const retry = @import("../src/retry.zig");
const turn = @import("turn.zig");
const Transcript = @import("transcript.zig").Transcript;
const Context = @import("context.zig").Context;

pub fn run(ctx: Context, provider: config.Provider, input: []const u8) !void {
    const gpa = ctx.gpa;
    var whole: Transcript = .init(gpa);
    defer whole.deinit();
    var trickled: Transcript = .init(gpa);
    defer trickled.deinit();
    const steps = [_]usize{ input.len, 1 + std.hash.Wyhash.hash(1, input) % 61 };
    for (steps, [_]*Transcript{ &whole, &trickled }) |step, transcript| {
        const agent = try turn.newAgent(gpa, provider, ctx.root);
        defer agent.deinit();
        try turn.run(ctx, agent, input, step, transcript);
    }
    whole.expectSame(&trickled, "read whole, and a few bytes per read");

    var arena: std.heap.ArenaAllocator = .init(gpa);
    defer arena.deinit();
    const first_line = input[0 .. std.mem.indexOfAny(u8, input, "\r\n") orelse input.len];
    _ = providers.parseErrorBody(provider, arena.allocator(), input, null);
    // With an error-type header's value too (Bedrock's x-amzn-errortype).
    _ = providers.parseErrorBody(provider, arena.allocator(), input, first_line);
    _ = retry.parseRetryAfterMs(first_line);
    _ = retry.parseRetryAfter(first_line, 1_700_000_000);
}
