//! App: what a run of the command holds. Owned by h-cli; h-tui and h-ext use what is public.
const std = @import("std");
const panto = @import("panto");
const Host = @import("lua/host.zig").Host;
const settings_mod = @import("settings.zig");
const Settings = settings_mod.Settings;

/// Where a message typed during a turn goes: `steer` or `follow_up` (Stream.steer/followUp).
pub const SteerSource = @FieldType(panto.event.UserMessage, "source");

pub const App = struct {
    gpa: std.mem.Allocator,
    io: std.Io,
    agent: *panto.Agent,
    host: *Host,
    /// The settings the agent was made from (history_size, the tools offered, ...).
    settings: *const Settings,
    /// The stream of the turn that runs, for cancelTurn from another thread.
    current: std.atomic.Value(?*panto.Stream) = .init(null),
    /// cancelTurn and steerTurn calls under way: the turn waits for them before it frees its
    /// stream.
    cancelers: std.atomic.Value(u32) = .init(0),
    /// What a turn's Outcome borrows, kept until the next turn (turn.zig).
    failure_message: std.ArrayList(u8) = .empty,
    failure_type: std.ArrayList(u8) = .empty,
    stop_reason: std.ArrayList(u8) = .empty,
    /// The tools whose calls the user allowed for the rest of this run ("allow this tool" at
    /// an approval prompt): their calls are approved without asking.
    allowed_tools: std.ArrayList([]u8) = .empty,
    /// The session's usage and cost so far (the status line's and /session's totals): its
    /// messages' when it starts, resumed, forked or new (`countSpent`), then every turn's and
    /// compaction's as it ends, a canceled or failed turn's ended messages too (turn.zig).
    spent: panto.catalog.Spent = .{},

    /// The totals from the conversation the agent holds now.
    pub fn countSpent(app: *App) void {
        app.spent = app.agent.spent();
    }

    pub fn toolAllowed(app: *const App, name: []const u8) bool {
        for (app.allowed_tools.items) |t| if (std.mem.eql(u8, t, name)) return true;
        return false;
    }

    /// Out of memory: the tool is not remembered, and its next call asks again.
    pub fn allowTool(app: *App, name: []const u8) void {
        if (app.toolAllowed(name)) return;
        const copy = app.gpa.dupe(u8, name) catch return;
        app.allowed_tools.append(app.gpa, copy) catch app.gpa.free(copy);
    }

    /// Switches to model `name`, and to `provider` when given (the core then takes that
    /// provider's key and endpoint from its environment), with the new model's max_tokens
    /// unless the user gave one (/model, RPC mode's set_model). A refusal's reason is in `diag`.
    pub fn switchModel(app: *App, provider: ?panto.Provider, name: []const u8, diag: *panto.config.Diagnostic) !void {
        var json: std.Io.Writer.Allocating = .init(app.gpa);
        defer json.deinit();
        const w = &json.writer;
        if (provider) |p|
            try w.print("{{\"provider\":\"{s}\",\"model\":{f}}}", .{ @tagName(p), std.json.fmt(name, .{}) })
        else
            try w.print("{{\"model\":{f}}}", .{std.json.fmt(name, .{})});
        try app.agent.setConfig(json.written(), diag);
        if (!app.settings.max_tokens_from_model) return;
        const most = settings_mod.modelMaxTokens(app.agent.config);
        if (most == app.agent.config.max_tokens) return;
        var buf: [48]u8 = undefined;
        try app.agent.setConfig(std.fmt.bufPrint(&buf, "{{\"max_tokens\":{d}}}", .{most}) catch unreachable, diag);
    }

    /// Cancels the turn that runs, if any, from any thread (the interactive mode's Ctrl-C
    /// watcher, print mode's SIGINT): the stream's next() returns error.Canceled and the Lua
    /// host kills the processes its tools started.
    pub fn cancelTurn(app: *App) void {
        _ = app.cancelers.fetchAdd(1, .seq_cst);
        if (app.current.load(.seq_cst)) |s| s.cancel();
        _ = app.cancelers.fetchSub(1, .seq_cst);
        app.host.cancelAsync();
    }

    /// Queues `text` for the turn that runs, from any thread (a line typed during the turn, RPC
    /// mode's steer and follow_up): a steer reaches the model after the current tool round, a
    /// follow-up is a turn of its own after this one (the core's Stream.steer/followUp).
    /// NoTurn: no turn's stream runs (yet); Ended: the turn takes no more (it is ending, failed
    /// or was canceled).
    pub fn steerTurn(app: *App, source: SteerSource, text: []const u8) (panto.Stream.SteerError || error{NoTurn})!void {
        _ = app.cancelers.fetchAdd(1, .seq_cst);
        defer _ = app.cancelers.fetchSub(1, .seq_cst);
        const s = app.current.load(.seq_cst) orelse return error.NoTurn;
        return switch (source) {
            .steer => s.steer(text),
            .follow_up => s.followUp(text),
        };
    }

    /// The turn is over: no cancelTurn may reach its stream any more (turn.zig, before it
    /// closes the stream).
    pub fn releaseCurrent(app: *App) void {
        app.current.store(null, .seq_cst);
        while (app.cancelers.load(.seq_cst) != 0) std.atomic.spinLoopHint();
    }

    pub fn deinit(app: *App) void {
        app.failure_message.deinit(app.gpa);
        app.failure_type.deinit(app.gpa);
        app.stop_reason.deinit(app.gpa);
        for (app.allowed_tools.items) |t| app.gpa.free(t);
        app.allowed_tools.deinit(app.gpa);
    }
};
