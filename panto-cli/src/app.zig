//! App: what a run of the command holds. Owned by h-cli; h-tui and h-ext use what is public.
const std = @import("std");
const panto = @import("panto");
const Host = @import("lua/host.zig").Host;
const settings_mod = @import("settings.zig");
const permissions = @import("permissions.zig");
const Settings = settings_mod.Settings;

/// Where a message typed during a turn goes: `steer` or `follow_up` (Stream.steer/followUp).
pub const SteerSource = @FieldType(panto.event.UserMessage, "source");

pub const App = struct {
    /// Makes the agent of another session (main.zig's start-up again): /resume.
    pub const Maker = struct {
        ctx: *anyopaque,
        make: *const fn (ctx: *anyopaque, id: []const u8, problem: *[]const u8) MakeError!Made,
    };
    pub const Made = struct { agent: *panto.Agent, settings: *const Settings };
    /// Refused: the session or the settings (`problem` says why, in a line).
    pub const MakeError = error{ OutOfMemory, WriteFailed, Refused };

    gpa: std.mem.Allocator,
    io: std.Io,
    agent: *panto.Agent,
    host: *Host,
    /// The settings the agent was made from (history_size, the tools offered, ...).
    settings: *const Settings,
    /// null: no other session can be resumed in this run (tests, print mode).
    maker: ?Maker = null,
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
    /// The rules the user allowed for the rest of this run ("allow this rule": `bash(git
    /// status*)`, permissions.ruleFor): the calls they match are approved without asking.
    allowed_rules: std.ArrayList([]u8) = .empty,
    /// An extension's tool_call gate is on (gate.zig): the approval rules as they were before
    /// the gate's rule that makes every call ask; null: no gate.
    ungated_rules: ?[]const panto.approval.Rule = null,
    /// The calls the gate saw at their approval (a read, an MCP tool's): their tool_call
    /// event is not sent again when they start.
    gated_ids: std.ArrayList([]u8) = .empty,
    /// extensionSetModel's last refusal.
    refusal: [256]u8 = undefined,
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

    /// A call of `name` with the JSON `input` matches a rule allowed for the run.
    pub fn ruleAllowed(app: *const App, name: []const u8, input: []const u8) bool {
        if (app.allowed_rules.items.len == 0) return false;
        const parsed = std.json.parseFromSlice(std.json.Value, app.gpa, input, .{}) catch return false;
        defer parsed.deinit();
        for (app.allowed_rules.items) |entry| if (permissions.matches(entry, name, parsed.value)) return true;
        return false;
    }

    /// Out of memory: the rule is not remembered, and the next call it matches asks again.
    pub fn allowRule(app: *App, entry: []const u8) void {
        for (app.allowed_rules.items) |r| if (std.mem.eql(u8, r, entry)) return;
        const copy = app.gpa.dupe(u8, entry) catch return;
        app.allowed_rules.append(app.gpa, copy) catch app.gpa.free(copy);
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

    /// switchModel from "NAME" or "PROVIDER:NAME" (the provider is the part before the first
    /// `:` when it names one: a Bedrock model id keeps its own `:`).
    pub fn switchModelNamed(app: *App, spec: []const u8, diag: *panto.config.Diagnostic) !void {
        const colon = std.mem.indexOfScalar(u8, spec, ':');
        const provider = if (colon) |i| std.meta.stringToEnum(panto.Provider, spec[0..i]) else null;
        return app.switchModel(provider, if (provider != null) spec[colon.? + 1 ..] else spec, diag);
    }

    /// Goes on in the session `id` (an id or a unique prefix): a new agent made for it as at
    /// start-up (provider, model, thinking as --session restores them), then the old one let
    /// go. The new one is made first, so a refusal (no such session, one locked by another
    /// panto, a corrupt file) leaves the run in its session as it was. The current session's
    /// own id is AlreadyThere (its lock is this run's). Never during a turn.
    pub fn resumeSession(app: *App, id: []const u8, problem: *[]const u8) (MakeError || error{ AlreadyThere, NotHere })!void {
        const maker = app.maker orelse return error.NotHere;
        if (app.agent.sessionInfo()) |info| if (std.mem.eql(u8, info.id, id)) return error.AlreadyThere;
        const made = try maker.make(maker.ctx, id, problem);
        const old = app.agent;
        app.agent = made.agent;
        app.settings = made.settings;
        if (app.ungated_rules != null) app.ungated_rules = made.settings.config.approval_rules;
        old.deinit();
        app.countSpent(); // the resumed session's totals, not the old one's
    }

    /// An extension's ctx.set_model (interactive and RPC mode's frontends): switchModelNamed,
    /// a refusal's reason returned (kept in `refusal` until the next).
    pub fn extensionSetModel(app: *App, spec: []const u8) ?[]const u8 {
        var diag: panto.config.Diagnostic = .{};
        app.switchModelNamed(spec, &diag) catch |err| {
            const why = if (err == error.InvalidConfig) diag.message() else @errorName(err);
            const n = @min(why.len, app.refusal.len);
            @memcpy(app.refusal[0..n], why[0..n]);
            return app.refusal[0..n];
        };
        return null;
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

    /// Takes back the steers and follow-ups the turn that runs has not taken yet (Alt-Up),
    /// from any thread, into `out` (their texts gpa's, the caller's to free); none when no
    /// turn runs.
    pub fn withdrawQueued(app: *App, out: *std.ArrayList(panto.Stream.Queued)) error{OutOfMemory}!void {
        _ = app.cancelers.fetchAdd(1, .seq_cst);
        defer _ = app.cancelers.fetchSub(1, .seq_cst);
        const s = app.current.load(.seq_cst) orelse return;
        return s.withdrawQueued(out);
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
        for (app.allowed_rules.items) |r| app.gpa.free(r);
        app.allowed_rules.deinit(app.gpa);
        for (app.gated_ids.items) |id| app.gpa.free(id);
        app.gated_ids.deinit(app.gpa);
    }
};
