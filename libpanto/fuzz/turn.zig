//! One turn of a real Stream, fed a response body from memory instead of a connection: the
//! path every streamed byte takes in production (the SSE parser or the hot readers, the
//! provider's decoder, the assembly, the tool round: schema check, host and native tools),
//! without a socket. The stream is put in the state `open()` leaves it in once the response
//! head is read; the turn stops where the next request would be sent, and the request that
//! would be sent is written instead (exports.zig).
const std = @import("std");
const Allocator = std.mem.Allocator;
const Agent = @import("../src/agent.zig").Agent;
const config = @import("../src/config.zig");
const StepReader = @import("../src/body.zig").StepReader;
const Transcript = @import("transcript.zig").Transcript;
const invariants = @import("invariants.zig");
const exports = @import("exports.zig");
const Context = @import("context.zig").Context;

/// A host tool whose schema uses every keyword the schema check knows.
pub const probe_tool =
    \\{"name":"probe","description":"Every schema keyword.","capabilities":["net"],"input_schema":{"type":"object",
    \\"properties":{"s":{"type":"string"},"n":{"type":"integer","minimum":0,"maximum":100},"f":{"type":"number"},
    \\"b":{"type":"boolean"},"e":{"enum":["x",1,null,true]},"u":{"type":["string","null"]},
    \\"a":{"type":"array","items":{"type":"object","properties":{"k":{"type":"integer"}},"required":["k"]}},
    \\"o":{"type":"object","additionalProperties":false,"properties":{"p":{"type":"array","items":{"type":"array"}}}}},
    \\"required":["s"]}}
;

pub const api_key = "sk-fuzz-key-0123";

/// An agent as a fuzzed turn runs against: both tools usable, no retries (a retry would wait
/// and reconnect), and a base URL that is never dialed.
pub fn newAgent(gpa: Allocator, provider: config.Provider, root: []const u8) !*Agent {
    const agent = try Agent.init(gpa, .{
        .provider = provider,
        .model = "fuzz-model",
        .base_url = "http://127.0.0.1:9",
        .api_key = api_key,
        .system = "Be brief.",
        .capabilities = &.{ "fs.read", "net" },
        .read_tool = .{ .root = root },
        .retry = .{ .max_retries = 0 },
    });
    errdefer agent.deinit();
    var diag: config.Diagnostic = .{};
    try agent.addTool(probe_tool, &diag);
    return agent;
}

/// Runs a turn of `agent` over `body`, arriving `step` bytes per read, writing what the user
/// sees to `transcript`. Panics when the events break panto's contract (invariants.zig).
pub fn run(ctx: Context, agent: *Agent, body: []const u8, step: usize, transcript: *Transcript) !void {
    const gpa = ctx.gpa;
    const stream = try agent.run("Hello");
    defer stream.destroy();
    // As `open()` leaves a stream whose response head said 200 text/event-stream.
    var source: StepReader = .init(body, @max(step, 1));
    source.interface.buffer = try stream.body.buffer();
    stream.body.reader = &source.interface;
    stream.state = .streaming;

    var rules: invariants.EventRules = .{ .strict = ctx.strict };
    var host_calls: std.ArrayList([]u8) = .empty;
    defer {
        for (host_calls.items) |id| gpa.free(id);
        host_calls.deinit(gpa);
    }
    var results: usize = 0;
    var calls: usize = 0;
    while (true) {
        const maybe_event = stream.next() catch |err| switch (err) {
            error.ResultPending => {
                // The host runs its tools: each awaited call gets a result.
                for (host_calls.items) |id| try stream.submitToolResult(id, "{\"ok\":true}", false);
                for (host_calls.items) |id| gpa.free(id);
                host_calls.clearRetainingCapacity();
                continue;
            },
            else => |e| {
                const detail = stream.failureDetail() orelse @panic("a failed stream has no failure detail");
                try transcript.failure(e, detail);
                invariants.expectFailureDetail(e, detail, api_key);
                // A failure is sticky.
                if (stream.next()) |_| @panic("next() after a failure did not fail again") else |again| {
                    if (again != e) std.debug.panic("next() after {t} failed with {t}", .{ e, again });
                }
                break;
            },
        };
        const e = maybe_event orelse {
            rules.expectDone();
            if ((stream.next() catch @panic("next() after the end failed")) != null) @panic("next() after the end returned an event");
            break;
        };
        rules.see(e);
        try transcript.event(e);
        switch (e) {
            .tool_call_start => |s| {
                calls += 1;
                if (s.awaiting_result) try host_calls.append(gpa, try gpa.dupe(u8, s.id));
            },
            .tool_result => {
                results += 1;
                // The round is over: the next call of next() would send the next request.
                if (results == calls) break;
            },
            else => {},
        }
    }
    try exports.expectJson(gpa, agent);
}
