//! One turn, driven to its end. Owned by h-cli.
const std = @import("std");
const panto = @import("panto");
const App = @import("app.zig").App;

/// Who watches a turn: print mode, --json, the interactive renderer.
pub const Observer = struct {
    ctx: *anyopaque,
    /// Every event of the turn, in order (borrowed until the call returns).
    event: *const fn (ctx: *anyopaque, e: *const panto.Event) void,
    /// A one-line remark of the driver for the user, shown dim (the adaptive thinking fallback:
    /// "thinking high is not supported by M: trying medium").
    note: *const fn (ctx: *anyopaque, text: []const u8) void,
};

pub const Failure = struct {
    err: anyerror,
    /// The provider's or panto's message, valid until the next turn.
    message: []const u8,
};

pub const Outcome = union(enum) {
    complete: panto.event.MessageComplete,
    /// Ctrl-C: the partial answer is kept in the conversation as the core keeps it.
    canceled,
    failed: Failure,
};

/// Runs `input` as a user turn: the events go to `observer` and to the Lua host's ext.on
/// subscribers (turn_start, message_end, tool_call, tool_result, compaction_start/end,
/// turn_end); host tool calls go to the Lua host.
pub fn run(app: *App, input: []const u8, observer: Observer) Outcome {
    _ = app;
    _ = input;
    _ = observer;
    return .{ .failed = .{ .err = error.Unimplemented, .message = "turn.run: not written yet" } };
}
