//! One round of tool calls: what the model asked for in one assistant message, how each call is
//! handled (by the host, by a native tool, or answered by panto itself), and the results.
const std = @import("std");
const Allocator = std.mem.Allocator;
const Agent = @import("agent.zig").Agent;
const Assembly = @import("assembly.zig").Assembly;
const tools = @import("tools.zig");
const schema = @import("schema.zig");
const json_depth = @import("json_depth.zig");
const read_tool = @import("read_tool.zig");
const conversation = @import("conversation.zig");
const content = @import("content.zig");
const ev = @import("event.zig");
const utf8 = @import("utf8.zig");
const approval = @import("approval.zig");
const mcp_client = @import("mcp/client.zig");
const pending_round = @import("turn/pending_round.zig");
const Journal = @import("session/journal.zig").Journal;

pub const Handling = enum {
    /// The embedding program runs it and submits the result.
    host,
    /// A tool inside libpanto runs it.
    native,
    /// panto answered it already (unknown tool, invalid input).
    answered,
    /// One of the agent's MCP servers runs it (mcp/servers.zig).
    mcp,
};

pub const Call = struct {
    id: []u8,
    name: []u8,
    /// The input as compact JSON text; `{}` when the model sent none.
    input: []u8,
    handling: Handling,
    native: ?tools.Native = null,
    /// The MCP server that runs it (`.mcp`).
    mcp_server: u32 = 0,
    /// The call must run alone (its tool is sequential, or the agent's tool_execution).
    sequential: bool = false,
    /// The result's text: all of it, or with `parts`, its text parts joined (content.zig).
    result: ?[]u8 = null,
    is_error: bool = false,
    /// A result with media: its blocks in order, and what the ToolResult event says of each.
    parts: []conversation.Block = &.{},
    infos: []ev.PartInfo = &.{},
    /// Where the call is with a person's answer (approval.zig decided it asks).
    approval: Approval = .none,
    /// Its ToolCallStart was handed out.
    started: bool = false,

    pub const Approval = enum { none, waiting, approved, denied };

    /// Where the call is, as a pending round records it (turn/pending_round.zig).
    pub fn pendingState(c: *const Call) pending_round.State {
        if (c.approval == .waiting) return .ask;
        if (c.result != null) return .answered;
        return if (c.started) .started else .to_run;
    }

    /// The call may start: it needs no answer, or has one.
    pub fn startable(c: *const Call) bool {
        return !c.started and c.approval != .waiting;
    }

    /// Panto runs it now (a native or MCP call): it has no result and waits for no answer.
    fn due(c: Call) bool {
        return c.result == null and c.approval != .waiting;
    }

    fn deinit(c: *Call, gpa: Allocator) void {
        gpa.free(c.id);
        gpa.free(c.name);
        gpa.free(c.input);
        c.freeResult(gpa);
    }

    fn freeResult(c: *Call, gpa: Allocator) void {
        if (c.result) |r| gpa.free(r);
        conversation.freeBlocks(gpa, c.parts);
        gpa.free(c.infos);
        c.parts = &.{};
        c.infos = &.{};
    }

    /// The result as the conversation keeps it (borrowing the call's strings).
    pub fn resultBlock(c: *const Call) conversation.Block {
        return .{ .kind = .tool_result, .id = c.id, .text = c.result orelse "", .parts = c.parts, .is_error = c.is_error };
    }

    pub fn setResult(c: *Call, gpa: Allocator, text: []const u8, is_error: bool) Allocator.Error!void {
        const copy = try gpa.dupe(u8, text);
        c.setContent(gpa, .{ .text = copy }, is_error);
    }

    /// Takes an assembled result (content.toolResult), which the call now owns.
    pub fn setContent(c: *Call, gpa: Allocator, result: content.Content, is_error: bool) void {
        c.freeResult(gpa);
        c.result = result.text;
        c.parts = result.blocks;
        c.infos = result.infos;
        c.is_error = is_error;
    }
};

/// A progress report of a host or MCP call, queued until the stream hands it out.
const Progress = struct {
    /// The call's index in the round.
    call: usize,
    text: []u8,
    fraction: ?f64,
};

pub const Round = struct {
    gpa: Allocator,
    calls: std.ArrayList(Call) = .empty,
    /// Progress reported and not yet handed out; `progress[0..handed]` were handed out and
    /// stay valid until the next `takeProgress`. Under `lock`: MCP calls queue theirs from
    /// the round's threads.
    progress: std.ArrayList(Progress) = .empty,
    handed: usize = 0,
    lock: std.c.pthread_mutex_t = std.c.PTHREAD_MUTEX_INITIALIZER,
    /// The calls running on threads since `startCalls`, until `finish`.
    run: ?Run = null,
    /// The calls that wait for an answer, as the ApprovalRequest event lists them (their
    /// strings are the calls'), and whether that event was handed out.
    asked: std.ArrayList(ev.ApprovalCall) = .empty,
    announced: bool = false,
    /// The pending_round entry this round wrote to the session last (`record`).
    recorded: std.ArrayList(u8) = .empty,

    pub fn deinit(r: *Round) void {
        r.finish() catch {};
        r.clear();
        r.calls.deinit(r.gpa);
        r.progress.deinit(r.gpa);
        r.asked.deinit(r.gpa);
        r.recorded.deinit(r.gpa);
    }

    pub fn clear(r: *Round) void {
        for (r.calls.items) |*c| c.deinit(r.gpa);
        r.calls.clearRetainingCapacity();
        r.dropProgress(r.progress.items.len);
        r.asked.clearRetainingCapacity();
        r.announced = false;
        r.recorded.clearRetainingCapacity();
    }

    /// Writes where the round's calls are to the session (a `pending_round` entry), when the
    /// round asks a person about a call and something changed since the last one: so that a
    /// process killed while it waits leaves a session another process can go on from. A
    /// round that asks nothing writes nothing (its calls run without waiting for anyone).
    pub fn record(r: *Round, journal: ?*Journal) Journal.Error!void {
        const j = journal orelse return;
        if (r.asked.items.len == 0) return;
        const calls = try r.gpa.alloc(@import("session/entry.zig").PendingCall, r.calls.items.len);
        defer r.gpa.free(calls);
        var results: std.ArrayList(conversation.Block) = .empty;
        defer results.deinit(r.gpa);
        for (r.calls.items, calls) |*c, *out| {
            const state = c.pendingState();
            out.* = .{ .id = c.id, .state = @tagName(state) };
            if (state == .answered) try results.append(r.gpa, c.resultBlock());
        }
        try j.pendingRound(calls, results.items, &r.recorded);
    }

    /// The round as the agent keeps it when the turn stops while a call waits for a person
    /// (Stream.abort): the calls' states and copies of the results. `message_count`: the
    /// conversation's length, its last message the round's.
    pub fn toPending(r: *const Round, message_count: usize) Allocator.Error!pending_round.PendingRound {
        const gpa = r.gpa;
        var calls: std.ArrayList(pending_round.Call) = .empty;
        errdefer {
            for (calls.items) |c| gpa.free(c.id);
            calls.deinit(gpa);
        }
        var results: std.ArrayList(conversation.Block) = .empty;
        errdefer {
            for (results.items) |b| conversation.freeBlock(gpa, b);
            results.deinit(gpa);
        }
        for (r.calls.items) |*c| {
            const state = c.pendingState();
            try calls.ensureUnusedCapacity(gpa, 1);
            calls.appendAssumeCapacity(.{ .id = try gpa.dupe(u8, c.id), .state = state });
            if (state == .answered) {
                try results.ensureUnusedCapacity(gpa, 1);
                results.appendAssumeCapacity(try conversation.copyBlock(gpa, c.resultBlock()));
            }
        }
        const owned_calls = try calls.toOwnedSlice(gpa);
        errdefer {
            for (owned_calls) |c| gpa.free(c.id);
            gpa.free(owned_calls);
        }
        const blocks = try results.toOwnedSlice(gpa);
        return .{
            .calls = owned_calls,
            .results = .{ .role = .user, .blocks = blocks },
            .message_count = message_count,
        };
    }

    /// The round of the conversation's last message `last` (the assistant's) as `left`
    /// describes it (Agent.resumeTurn): answered calls keep their results, a call that started
    /// and left none gets `pending_round.ended_text`, asked calls wait again (the
    /// ApprovalRequest lists them anew), and the others start. Each call's handling is decided
    /// again from the agent's tools (a tool gone since is an unknown tool).
    pub fn restore(r: *Round, agent: *const Agent, last: *const conversation.Message, left: *const pending_round.PendingRound) Allocator.Error!void {
        r.clear();
        for (last.blocks) |b| {
            if (b.kind != .tool_call) continue;
            try r.calls.ensureUnusedCapacity(r.gpa, 1);
            var call: Call = .{ .id = try r.gpa.dupe(u8, b.id), .name = undefined, .input = undefined, .handling = .answered };
            call.name = r.gpa.dupe(u8, b.name) catch |err| {
                r.gpa.free(call.id);
                return err;
            };
            call.input = r.gpa.dupe(u8, b.text) catch |err| {
                r.gpa.free(call.id);
                r.gpa.free(call.name);
                return err;
            };
            r.calls.appendAssumeCapacity(call);
            const c = &r.calls.items[r.calls.items.len - 1];
            c.sequential = agent.config.tool_execution == .sequential;
            const state = left.stateOf(b.id) orelse .started;
            switch (state) {
                .answered => if (left.resultOf(b.id)) |result| {
                    const parts = try conversation.copyBlocks(r.gpa, result.parts);
                    errdefer conversation.freeBlocks(r.gpa, parts);
                    const text = try r.gpa.dupe(u8, result.text);
                    errdefer r.gpa.free(text);
                    const infos = try content.describe(r.gpa, parts);
                    c.setContent(r.gpa, .{ .text = text, .blocks = parts, .infos = infos }, result.is_error);
                } else try c.setResult(r.gpa, pending_round.ended_text, true),
                .started => try c.setResult(r.gpa, pending_round.ended_text, true),
                .ask, .to_run => {
                    const tool = agent.findTool(c.name) orelse {
                        const msg = try std.fmt.allocPrint(r.gpa, "Unknown tool: {s}", .{c.name});
                        defer r.gpa.free(msg);
                        try c.setResult(r.gpa, msg, true);
                        continue;
                    };
                    c.sequential = c.sequential or tool.sequential;
                    setHandling(c, tool);
                    if (state == .ask) c.approval = .waiting else c.approval = .approved;
                },
            }
        }
        for (r.calls.items) |c| if (c.approval == .waiting) try r.asked.append(r.gpa, .{
            .id = .of(c.id),
            .name = .of(c.name),
            .input = .of(c.input),
        });
    }

    /// Gives the calls that started and have no result `message` (the turn stopped while
    /// they ran), leaving those that wait for a person or did not start.
    pub fn answerStartedWith(r: *Round, message: []const u8) Allocator.Error!void {
        for (r.calls.items) |*c| if (c.started and c.result == null) try c.setResult(r.gpa, message, true);
    }

    fn dropProgress(r: *Round, count: usize) void {
        _ = std.c.pthread_mutex_lock(&r.lock);
        defer _ = std.c.pthread_mutex_unlock(&r.lock);
        r.dropProgressLocked(count);
    }

    fn dropProgressLocked(r: *Round, count: usize) void {
        for (r.progress.items[0..count]) |p| r.gpa.free(p.text);
        r.progress.replaceRangeAssumeCapacity(0, count, &.{});
        r.handed = 0;
    }

    pub const ProgressError = error{ NoSuchCall, InvalidArgument, OutOfMemory };

    /// Queues progress of the host call `id`, which must still await its result. `fraction`:
    /// 0 to 1, negative for none; above 1 or NaN is refused. Invalid UTF-8 in `text` becomes
    /// U+FFFD.
    pub fn queueProgress(r: *Round, id: []const u8, text: []const u8, fraction: f64) ProgressError!void {
        if (std.math.isNan(fraction) or fraction > 1) return error.InvalidArgument;
        const call = r.awaiting(id) orelse return error.NoSuchCall;
        return r.queue(call, text, if (fraction < 0) null else fraction);
    }

    fn queue(r: *Round, call: usize, text: []const u8, fraction: ?f64) Allocator.Error!void {
        var copy: std.ArrayList(u8) = .empty;
        errdefer copy.deinit(r.gpa);
        try utf8.appendLossy(&copy, r.gpa, text);
        _ = std.c.pthread_mutex_lock(&r.lock);
        defer _ = std.c.pthread_mutex_unlock(&r.lock);
        try r.progress.ensureUnusedCapacity(r.gpa, 1);
        r.progress.appendAssumeCapacity(.{ .call = call, .text = try copy.toOwnedSlice(r.gpa), .fraction = fraction });
    }

    /// The next progress report queued, valid until the next call; the ones handed out
    /// before are freed now.
    pub fn takeProgress(r: *Round) ?ev.ToolProgress {
        _ = std.c.pthread_mutex_lock(&r.lock);
        defer _ = std.c.pthread_mutex_unlock(&r.lock);
        if (r.handed > 0) r.dropProgressLocked(r.handed);
        if (r.progress.items.len == 0) return null;
        const p = r.progress.items[0];
        r.handed = 1;
        const c = r.calls.items[p.call];
        return .{ .id = c.id, .name = c.name, .text = p.text, .fraction = p.fraction };
    }

    /// Collects the tool calls of the assembled message, normalizing each input and deciding
    /// how it is handled.
    pub fn collect(r: *Round, agent: *const Agent, a: *Assembly) Allocator.Error!void {
        r.clear();
        for (a.blocksSoFar()) |*b| {
            if (b.kind != .tool_call) continue;
            try r.calls.ensureUnusedCapacity(r.gpa, 1);
            var call: Call = .{
                .id = try r.gpa.dupe(u8, b.id.items),
                .name = undefined,
                .input = undefined,
                .handling = .answered,
            };
            call.name = r.gpa.dupe(u8, b.name.items) catch |err| {
                r.gpa.free(call.id);
                return err;
            };
            r.calls.appendAssumeCapacity(call);
            const c = &r.calls.items[r.calls.items.len - 1];
            c.input = try r.gpa.dupe(u8, "{}");
            try r.decide(agent, c, b.text.items);
        }
        for (r.calls.items) |c| if (c.approval == .waiting) try r.asked.append(r.gpa, .{
            .id = .of(c.id),
            .name = .of(c.name),
            .input = .of(c.input),
        });
    }

    fn decide(r: *Round, agent: *const Agent, c: *Call, raw_input: []const u8) Allocator.Error!void {
        c.sequential = agent.config.tool_execution == .sequential;
        var scratch: std.heap.ArenaAllocator = .init(r.gpa);
        defer scratch.deinit();
        // An input nested too deeply is neither re-written nor checked (see json_depth.zig):
        // it keeps `{}`, which the conversation and the next request can carry.
        const too_deep = json_depth.textTooDeep(raw_input);
        // Numbers stay as the model wrote them: re-written as doubles, 1e300 would come back
        // as 301 digits and 0.1 + 0.2 style values could change.
        const parsed = if (too_deep) null else std.json.parseFromSliceLeaky(std.json.Value, scratch.allocator(), raw_input, .{ .parse_numbers = false }) catch null;
        if (parsed) |value| if (value == .object) {
            const compact = try std.json.Stringify.valueAlloc(r.gpa, value, .{});
            r.gpa.free(c.input);
            c.input = compact;
        };
        const tool = agent.findTool(c.name) orelse {
            const msg = try std.fmt.allocPrint(r.gpa, "Unknown tool: {s}", .{c.name});
            defer r.gpa.free(msg);
            return c.setResult(r.gpa, msg, true);
        };
        c.sequential = c.sequential or tool.sequential;
        if (too_deep) return r.invalid(c, "the input is " ++ json_depth.nested_too_deep);
        const value = parsed orelse return r.invalid(c, "the input is not valid JSON");
        var problem: schema.Problem = .{};
        if (!schema.validate(value, tool.schema, &problem)) return r.invalid(c, problem.message());
        if (tool.native) |n| {
            if (!nativeInputOk(n, value, &problem)) return r.invalid(c, problem.message());
        }
        const verdict = approval.decide(agent.config.approval_rules, tool.approval, c.name, value);
        switch (verdict.decision) {
            .allow => {},
            .ask => c.approval = .waiting,
            .deny => {
                const msg = try std.fmt.allocPrint(r.gpa, "The approval rules do not allow this call{s}{s}", .{
                    if (verdict.reason != null) ": " else ".", verdict.reason orelse "",
                });
                defer r.gpa.free(msg);
                return c.setResult(r.gpa, msg, true);
            },
        }
        setHandling(c, tool);
    }

    /// Who runs the call: its tool's kind.
    fn setHandling(c: *Call, tool: *const tools.Tool) void {
        if (tool.native) |n| {
            c.handling = .native;
            c.native = n;
        } else if (tool.mcp_server) |server| {
            c.handling = .mcp;
            c.mcp_server = server;
        } else c.handling = .host;
    }

    fn invalid(r: *Round, c: *Call, problem: []const u8) Allocator.Error!void {
        const msg = try std.fmt.allocPrint(r.gpa, "Invalid input for tool {s}: {s}", .{ c.name, problem });
        defer r.gpa.free(msg);
        try c.setResult(r.gpa, msg, true);
    }

    /// The first call of a tool the agent may not use, if any.
    pub fn refused(r: *const Round, agent: *const Agent) ?*const Call {
        for (r.calls.items) |*c| {
            const tool = agent.findTool(c.name) orelse continue;
            if (!tool.allowedWith(agent.config.capabilities)) return c;
        }
        return null;
    }

    /// The index of the host call `id` that still awaits its result, if any (a call that
    /// waits for a person's answer awaits no result yet).
    pub fn awaiting(r: *const Round, id: []const u8) ?usize {
        for (r.calls.items, 0..) |c, i| {
            if (c.handling == .host and c.result == null and c.approval != .waiting and std.mem.eql(u8, c.id, id)) return i;
        }
        return null;
    }

    /// Whether a host call still awaits its result.
    pub fn pending(r: *const Round) bool {
        for (r.calls.items) |c| if (c.handling == .host and c.result == null and c.approval != .waiting) return true;
        return false;
    }

    /// Whether a call still waits for a person's answer.
    pub fn waiting(r: *const Round) bool {
        for (r.calls.items) |c| if (c.approval == .waiting) return true;
        return false;
    }

    /// The next call whose ToolCallStart is due (in call order, those that wait for an answer
    /// left out until they have one), marked started.
    pub fn nextStart(r: *Round) ?*const Call {
        for (r.calls.items) |*c| if (c.startable()) {
            c.started = true;
            return c;
        };
        return null;
    }

    pub const AnswerError = error{ InvalidArgument, OutOfMemory };

    /// A person's yes for call `id`, which must wait for it: its ToolCallStart comes next.
    pub fn approve(r: *Round, id: []const u8) AnswerError!void {
        const c = r.waitingCall(id) orelse return error.InvalidArgument;
        c.approval = .approved;
    }

    /// A person's no for call `id`, which must wait for an answer: its result is an error
    /// that gives the model `reason` (may be empty).
    pub fn deny(r: *Round, id: []const u8, reason: []const u8) AnswerError!void {
        const c = r.waitingCall(id) orelse return error.InvalidArgument;
        var text: std.ArrayList(u8) = .empty;
        defer text.deinit(r.gpa);
        try text.appendSlice(r.gpa, if (reason.len > 0) "The user denied this call: " else "The user denied this call.");
        try utf8.appendLossy(&text, r.gpa, reason);
        try c.setResult(r.gpa, text.items, true);
        c.approval = .denied;
        c.handling = .answered;
    }

    /// Answers every call still waiting for a person with the error `message` (the user
    /// steered instead): each gets its ToolCallStart, awaiting no result, as a denied call.
    pub fn skipWaiting(r: *Round, message: []const u8) Allocator.Error!void {
        for (r.calls.items) |*c| if (c.approval == .waiting) {
            try c.setResult(r.gpa, message, true);
            c.approval = .denied;
            c.handling = .answered;
        };
    }

    fn waitingCall(r: *Round, id: []const u8) ?*Call {
        for (r.calls.items) |*c| if (c.approval == .waiting and std.mem.eql(u8, c.id, id)) return c;
        return null;
    }

    /// Starts the native and MCP calls. Without MCP calls they run here, as `runNative`; with
    /// some, every unit of `runNative` runs on a thread of its own and this returns at once:
    /// the stream waits for `signalFd` (written on each progress report of an MCP call and
    /// each unit's end), hands out the progress (`takeProgress`) and, once `done`, `finish`es.
    pub fn startCalls(r: *Round, agent: *Agent, cancel_fd: std.c.fd_t) Allocator.Error!void {
        std.debug.assert(r.run == null);
        const has_mcp = for (r.calls.items) |c| {
            if (c.handling == .mcp and c.due()) break true;
        } else false;
        if (!has_mcp) return r.runNative(agent, cancel_fd);
        const fd = std.c.eventfd(0, std.os.linux.EFD.CLOEXEC | std.os.linux.EFD.NONBLOCK);
        if (fd < 0) return r.runNative(agent, cancel_fd); // (its progress then comes at the end)
        errdefer _ = std.c.close(fd);
        const starts = try r.unitStarts();
        defer r.gpa.free(starts);
        const threads = try r.gpa.alloc(?std.Thread, r.calls.items.len);
        @memset(threads, null);
        r.run = .{ .threads = threads, .signal_fd = fd };
        const run = &r.run.?;
        // Counted before any thread starts: one that ends at once must not make it 0 early.
        for (starts) |start| {
            if (start) run.unfinished.raw += 1;
        }
        for (r.calls.items, threads, starts) |*c, *t, start| {
            if (!start) continue;
            t.* = std.Thread.spawn(.{}, runUnit, .{ r, agent, c, cancel_fd }) catch blk: {
                runUnit(r, agent, c, cancel_fd);
                break :blk null;
            };
        }
    }

    /// Written when a running unit ends or an MCP call reports progress (-1: nothing runs).
    pub fn signalFd(r: *const Round) std.c.fd_t {
        return if (r.run) |run| run.signal_fd else -1;
    }

    /// Every unit `startCalls` began has ended.
    pub fn done(r: *const Round) bool {
        const run = r.run orelse return true;
        return run.unfinished.load(.acquire) == 0;
    }

    /// Waits for the calls `startCalls` began (a cancel through its `cancel_fd` ends the MCP
    /// calls' waits), and frees what ran them.
    pub fn finish(r: *Round) Allocator.Error!void {
        const run = r.run orelse return;
        for (run.threads) |t| if (t) |thread| thread.join();
        r.gpa.free(run.threads);
        _ = std.c.close(run.signal_fd);
        r.run = null;
        if (run.failed.load(.acquire)) return error.OutOfMemory;
    }

    fn runUnit(r: *Round, agent: *Agent, c: *Call, cancel_fd: std.c.fd_t) void {
        const run = &r.run.?;
        if (c.handling == .native) runOne(r.gpa, agent, c, &run.failed.raw) else runServerCalls(r, agent, c.mcp_server, cancel_fd, &run.failed.raw);
        _ = run.unfinished.fetchSub(1, .acq_rel);
        run.signal();
    }

    /// Runs the native and MCP calls, on threads when there are several: each native call on
    /// its own, each MCP server's calls in order on one (a server's connection carries one
    /// request at a time here), so that different servers and native tools run at once.
    /// `cancel_fd` (or -1): readable once the turn is canceled, which ends the MCP calls' waits.
    pub fn runNative(r: *Round, agent: *Agent, cancel_fd: std.c.fd_t) Allocator.Error!void {
        const starts = try r.unitStarts();
        defer r.gpa.free(starts);
        var count: usize = 0;
        for (starts) |start| {
            if (start) count += 1;
        }
        if (count == 0) return;
        var failed = false;
        if (count == 1) {
            for (r.calls.items, starts) |*c, start| {
                if (!start) continue;
                if (c.handling == .native) runOne(r.gpa, agent, c, &failed) else runServerCalls(r, agent, c.mcp_server, cancel_fd, &failed);
            }
        } else {
            const threads = try r.gpa.alloc(?std.Thread, r.calls.items.len);
            defer r.gpa.free(threads);
            for (r.calls.items, threads, starts) |*c, *t, start| {
                t.* = null;
                if (!start) continue;
                // A thread that cannot start runs its calls here instead.
                if (c.handling == .native) {
                    t.* = std.Thread.spawn(.{}, runOne, .{ r.gpa, agent, c, &failed }) catch blk: {
                        runOne(r.gpa, agent, c, &failed);
                        break :blk null;
                    };
                } else {
                    t.* = std.Thread.spawn(.{}, runServerCalls, .{ r, agent, c.mcp_server, cancel_fd, &failed }) catch blk: {
                        runServerCalls(r, agent, c.mcp_server, cancel_fd, &failed);
                        break :blk null;
                    };
                }
            }
            for (threads) |t| if (t) |thread| thread.join();
        }
        if (failed) return error.OutOfMemory;
    }

    /// Which calls start a unit (a thread): each native call, and each server's first MCP call
    /// (its unit runs all of that server's calls). Decided, all of it, before any unit starts:
    /// a unit sets results as it goes, and a server whose first call is answered would else
    /// make its next call look first, starting a second unit on the server's one connection
    /// (two requests at once on one stdin and stdout, one thread taking the other's reply).
    /// Owned by the caller.
    fn unitStarts(r: *const Round) Allocator.Error![]bool {
        const starts = try r.gpa.alloc(bool, r.calls.items.len);
        for (r.calls.items, starts, 0..) |c, *start, i| start.* = c.due() and (c.handling == .native or r.firstOfServer(i));
        return starts;
    }

    /// Whether call `i` is the first MCP call of its server still to run.
    fn firstOfServer(r: *const Round, i: usize) bool {
        const c = r.calls.items[i];
        if (c.handling != .mcp or !c.due()) return false;
        for (r.calls.items[0..i]) |before| {
            if (before.handling == .mcp and before.due() and before.mcp_server == c.mcp_server) return false;
        }
        return true;
    }

    /// Appends the results to the conversation as one user message, in call order.
    /// `after`: blocks of the same user message after the results (what the user steered).
    pub fn commitResults(r: *const Round, conv: *conversation.Conversation, after: []const conversation.Block) conversation.AppendError!void {
        const blocks = try r.gpa.alloc(conversation.Block, r.calls.items.len + after.len);
        defer r.gpa.free(blocks);
        for (r.calls.items, blocks[0..r.calls.items.len]) |*c, *b| b.* = c.resultBlock();
        @memcpy(blocks[r.calls.items.len..], after);
        try conv.appendCopy(.user, blocks);
    }

    /// Gives every call without a result the same error result (the turn is ending), so the
    /// conversation stays one the provider accepts: every tool call has its result.
    pub fn answerAllWith(r: *Round, message: []const u8) Allocator.Error!void {
        for (r.calls.items) |*c| if (c.result == null) try c.setResult(r.gpa, message, true);
    }
};

/// What a native tool needs of its input beyond the schema (numbers that fit, say).
fn nativeInputOk(n: tools.Native, input: std.json.Value, problem: *schema.Problem) bool {
    return switch (n) {
        .read => read_tool.readInput(input, problem) != null,
    };
}

/// The calls of a round running on threads (`Round.startCalls`).
const Run = struct {
    threads: []?std.Thread,
    /// Units (threads) not ended yet.
    unfinished: std.atomic.Value(usize) = .init(0),
    failed: std.atomic.Value(bool) = .init(false),
    /// An eventfd: see `Round.signalFd`.
    signal_fd: std.c.fd_t,

    fn signal(run: *const Run) void {
        const one: u64 = 1;
        _ = std.c.write(run.signal_fd, std.mem.asBytes(&one), 8);
    }
};

/// Where an MCP call's progress goes: a ToolProgress of call `call` of the round.
const McpProgress = struct {
    round: *Round,
    call: usize,

    fn report(context: *anyopaque, p: mcp_client.Progress) void {
        const self: *McpProgress = @ptrCast(@alignCast(context));
        var buf: [64]u8 = undefined;
        // A fraction when the server knows the total; its message, else the count, as text.
        const fraction: ?f64 = if (p.total) |t| (if (t > 0 and p.progress >= 0 and p.progress <= t) p.progress / t else null) else null;
        const text = p.message orelse (if (p.total) |t| std.fmt.bufPrint(&buf, "{d}/{d}", .{ p.progress, t }) catch "" else std.fmt.bufPrint(&buf, "{d}", .{p.progress}) catch "");
        // A report that cannot be queued (out of memory) is dropped: the call goes on.
        self.round.queue(self.call, text, fraction) catch return;
        if (self.round.run) |*run| run.signal();
    }
};

/// Runs the round's calls of MCP server `server`, in call order.
fn runServerCalls(r: *Round, agent: *Agent, server: u32, cancel_fd: std.c.fd_t, failed: *bool) void {
    for (r.calls.items, 0..) |*c, i| {
        if (c.handling != .mcp or c.mcp_server != server or !c.due()) continue;
        var progress: McpProgress = .{ .round = r, .call = i };
        const outcome = agent.mcp.call(server, c.name, c.input, cancel_fd, .{ .context = &progress, .report = McpProgress.report }) catch {
            @atomicStore(bool, failed, true, .seq_cst);
            return;
        };
        c.setContent(r.gpa, outcome.content, outcome.is_error);
    }
}

fn runOne(gpa: Allocator, agent: *const Agent, c: *Call, failed: *bool) void {
    const result = runNativeTool(gpa, agent, c) catch {
        @atomicStore(bool, failed, true, .seq_cst);
        return;
    };
    c.setContent(gpa, result.content, result.is_error);
}

/// What a native tool returned.
const NativeResult = struct { content: content.Content, is_error: bool };

fn runNativeTool(gpa: Allocator, agent: *const Agent, c: *const Call) Allocator.Error!NativeResult {
    var scratch: std.heap.ArenaAllocator = .init(gpa);
    defer scratch.deinit();
    const input = std.json.parseFromSliceLeaky(std.json.Value, scratch.allocator(), c.input, .{}) catch return error.OutOfMemory;
    switch (c.native.?) {
        .read => {
            const result = try read_tool.run(gpa, agent.config.read_tool.?, input);
            defer result.deinit(gpa);
            const parts: []const content.Part = if (result.attachment) |bytes| &.{.{ .media = .{ .bytes = bytes, .name = result.name } }} else &.{};
            return .{ .content = try content.toolResult(gpa, result.content, parts), .is_error = result.is_error };
        },
    }
}

const json_depth_test_tool =
    \\{"name":"echo","input_schema":{"type":"object","properties":{"a":{}}}}
;

/// A message of tool calls, one per (tool name, input), collected into a round of `agent`.
fn collectCalls(agent: *Agent, round: *Round, calls: []const struct { []const u8, []const u8 }) !void {
    var a: Assembly = .init(std.testing.allocator);
    defer a.deinit();
    try a.startMessage("msg_1", "m");
    for (calls, 0..) |call, i| {
        var id_buf: [16]u8 = undefined;
        const b = try a.startToolBlock(@intCast(i), try std.fmt.bufPrint(&id_buf, "toolu_{d}", .{i}), call[0]);
        try a.appendDelta(b, call[1]);
        try a.completeBlock(b);
    }
    try round.collect(agent, &a);
    const inputs = try std.testing.allocator.alloc([]const u8, round.calls.items.len);
    defer std.testing.allocator.free(inputs);
    for (round.calls.items, inputs) |c, *input| input.* = c.input;
    try a.commit(&agent.conversation, inputs, .{ .stop_reason = .tool_use });
    try round.commitResults(&agent.conversation, &.{});
}

fn nestedInput(gpa: Allocator, depth: usize) ![]u8 {
    var text: std.ArrayList(u8) = .empty;
    errdefer text.deinit(gpa);
    try text.appendSlice(gpa, "{\"a\":");
    try text.appendNTimes(gpa, '[', depth - 1);
    try text.appendNTimes(gpa, ']', depth - 1);
    try text.append(gpa, '}');
    return text.toOwnedSlice(gpa);
}

test "a tool input of any depth gets a result; the conversation and the next request carry it" {
    const gpa = std.testing.allocator;
    const agent = try Agent.init(gpa, .{ .provider = .anthropic, .model = "m", .api_key = "k" });
    defer agent.deinit();
    var diag: @import("config.zig").Diagnostic = .{};
    try agent.addTool(json_depth_test_tool, &diag);

    const at_limit = try nestedInput(gpa, json_depth.max_depth);
    defer gpa.free(at_limit);
    const deep = try nestedInput(gpa, 300);
    defer gpa.free(deep);
    const deeper = try nestedInput(gpa, 10_000);
    defer gpa.free(deeper);
    var round: Round = .{ .gpa = gpa };
    defer round.deinit();
    try collectCalls(agent, &round, &.{
        .{ "echo", at_limit }, .{ "echo", deep }, .{ "echo", deeper }, .{ "nobody", deeper },
    });

    const calls = round.calls.items;
    try std.testing.expectEqual(.host, calls[0].handling);
    try std.testing.expectEqualStrings(at_limit, calls[0].input);
    const refused = "Invalid input for tool echo: the input is nested more than 128 levels deep";
    for (calls[1..3]) |c| {
        try std.testing.expectEqual(.answered, c.handling);
        try std.testing.expectEqualStrings("{}", c.input);
        try std.testing.expectEqualStrings(refused, c.result.?);
        try std.testing.expect(c.is_error);
    }
    try std.testing.expectEqualStrings("{}", calls[3].input);
    try std.testing.expectEqualStrings("Unknown tool: nobody", calls[3].result.?);

    // What is kept can be written: the conversation, and the next request of each provider.
    var out: std.Io.Writer.Allocating = .init(gpa);
    defer out.deinit();
    try agent.conversation.writeJson(&out.writer);
    try std.testing.expect(std.mem.indexOf(u8, out.written(), at_limit) != null);
    const parts: @import("request.zig").RequestParts = .{ .config = agent.config, .conversation = &agent.conversation, .tools = agent.tools.items(), .granted = &.{} };
    out.clearRetainingCapacity();
    try @import("providers.zig").writeRequest(.anthropic, &out.writer, parts);
    try std.testing.expect(try std.json.validate(gpa, out.written()));
    out.clearRetainingCapacity();
    try @import("providers.zig").writeRequest(.openai, &out.writer, parts);
    try std.testing.expect(try std.json.validate(gpa, out.written()));
}

test "the read tool's line numbers are refused as invalid input when they do not fit, in any notation" {
    const gpa = std.testing.allocator;
    const agent = try Agent.init(gpa, .{ .provider = .anthropic, .model = "m", .api_key = "k", .read_tool = .{ .root = "." } });
    defer agent.deinit();
    var round: Round = .{ .gpa = gpa };
    defer round.deinit();
    try collectCalls(agent, &round, &.{
        .{ "read", "{\"path\":\"a.txt\",\"offset\":1e20}" },
        .{ "read", "{\"path\":\"a.txt\",\"limit\":1e20}" },
        .{ "read", "{\"path\":\"a.txt\",\"offset\":1.0,\"limit\":-0}" },
        .{ "read", "{\"path\":\"a.txt\",\"offset\":1.0,\"limit\":1e2}" },
    });
    const calls = round.calls.items;
    try std.testing.expectEqualStrings("Invalid input for tool read: property \"offset\" must be a whole number from 0 to 9223372036854775807", calls[0].result.?);
    try std.testing.expectEqualStrings("Invalid input for tool read: property \"limit\" must be a whole number from 1 to 9223372036854775807", calls[1].result.?);
    try std.testing.expectEqualStrings("Invalid input for tool read: property \"limit\" must be at least 1", calls[2].result.?);
    for (calls[0..3]) |c| try std.testing.expectEqual(.answered, c.handling);
    try std.testing.expectEqual(.native, calls[3].handling);
    try std.testing.expectEqual(null, calls[3].result);
    // The inputs keep the numbers as the model wrote them.
    try std.testing.expectEqualStrings("{\"path\":\"a.txt\",\"offset\":1e20}", calls[0].input);
    try std.testing.expectEqualStrings("{\"path\":\"a.txt\",\"offset\":1.0,\"limit\":1e2}", calls[3].input);
}

test "the native read tool's image is a result with parts: the conversation keeps it, the event describes it" {
    const gpa = std.testing.allocator;
    var tmp = std.testing.tmpDir(.{});
    defer tmp.cleanup();
    const png_1x1 = @import("test_png.zig").bytes;
    try tmp.dir.writeFile(std.testing.io, .{ .sub_path = "dot.png", .data = png_1x1 });
    var root_buf: [std.c.PATH_MAX]u8 = undefined;
    const root = try std.fmt.bufPrint(&root_buf, ".zig-cache/tmp/{s}", .{tmp.sub_path});
    const agent = try Agent.init(gpa, .{ .provider = .anthropic, .model = "m", .api_key = "k", .read_tool = .{ .root = root } });
    defer agent.deinit();
    var round: Round = .{ .gpa = gpa };
    defer round.deinit();
    try collectCalls(agent, &round, &.{.{ "read", "{\"path\":\"dot.png\"}" }});
    try round.runNative(agent, -1);
    const c = round.calls.items[0];
    try std.testing.expect(!c.is_error);
    try std.testing.expectEqualStrings("", c.result.?);
    try std.testing.expectEqual(@as(usize, 1), c.infos.len);
    try std.testing.expectEqual(ev.PartKind.image, c.infos[0].kind);
    try std.testing.expectEqualStrings("image/png", c.infos[0].media_type.slice());
    try std.testing.expectEqualStrings("dot.png", c.infos[0].name.slice());
    try std.testing.expectEqual(@as(u64, png_1x1.len), c.infos[0].byte_size);

    try round.commitResults(&agent.conversation, &.{});
    var out: std.Io.Writer.Allocating = .init(gpa);
    defer out.deinit();
    try agent.conversation.writeJson(&out.writer);
    try std.testing.expect(std.mem.indexOf(u8, out.written(), "\"content\":[{\"type\":\"image\",\"media_type\":\"image/png\",\"data\":\"iVBORw0KGgo") != null);
}
