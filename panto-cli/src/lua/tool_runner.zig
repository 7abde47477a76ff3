//! The host's tool calls, run by libpanto-lua's own round (tool_runs.zig, through
//! panto_lua.embed): each handler in a coroutine that may yield (panto.sleep,
//! coroutine.yield, ext.exec), its result submitted to the core's stream the moment it
//! returns. This file is the round's driver for a panto.Stream read by the turn driver
//! (turn.zig), and the wait between passes: the children's pipes, the handlers' wake-up
//! times and the cancel, in one poll.
const std = @import("std");
const c = @import("c");
const panto = @import("panto");
const embed = @import("panto_lua").embed;
const tool_runs = embed.tool_runs;
const exec = @import("exec.zig");
const p = @import("protect.zig");

const State = p.State;

pub const PumpError = error{
    /// The turn was canceled (Ctrl-C): the children are killed; the stream says Canceled next.
    Canceled,
    /// The core awaits a result that no handler of this host gives.
    NoHandler,
    /// The round could not go on (its error was reported).
    HandlerFailed,
};

pub const Runner = struct {
    gpa: std.mem.Allocator,
    round: tool_runs.Round = .{ .driver = &driver },
    /// The holder of the round's calls and the tools' handlers (tool_runs' user values).
    holder_ref: c_int = c.LUA_NOREF,
    /// The stream whose round runs, while pump runs.
    stream: ?*panto.Stream = null,
    /// Results and progress given to the stream: pump returns once it gave one.
    given: u64 = 0,
    children: exec.Children,

    pub fn init(gpa: std.mem.Allocator, L: State) Runner {
        var r: Runner = .{ .gpa = gpa, .children = .init() };
        _ = c.lua_newuserdatauv(L, 1, tool_runs.uv_handlers);
        c.lua_createtable(L, 0, 4);
        _ = c.lua_setiuservalue(L, -2, tool_runs.uv_handlers);
        r.holder_ref = c.luaL_ref(L, c.LUA_REGISTRYINDEX);
        return r;
    }

    pub fn deinit(r: *Runner) void {
        r.children.deinit(r.gpa);
    }

    /// Pushes the holder; returns its index.
    pub fn pushHolder(r: *const Runner, L: State) c_int {
        _ = c.lua_rawgeti(L, c.LUA_REGISTRYINDEX, r.holder_ref);
        return c.lua_gettop(L);
    }

    /// Pushes the table tool name -> handler.
    pub fn pushHandlers(r: *const Runner, L: State) void {
        _ = r.pushHolder(L);
        _ = c.lua_getiuservalue(L, -1, tool_runs.uv_handlers);
        c.lua_rotate(L, -2, 1);
        p.pop(L, 1);
    }

    /// A TOOL_CALL_START awaiting its result joins the round (a protected call: its input is
    /// decoded into the event table the handler gets). False when it could not.
    pub fn startCall(r: *Runner, L: State, call: panto.event.ToolCallStart) bool {
        if (r.round.live == 0) r.children.clearCancel(); // a new round
        const top = c.lua_gettop(L);
        defer c.lua_settop(L, top);
        c.lua_pushcclosure(L, addCall, 0);
        c.lua_pushlightuserdata(L, r);
        c.lua_pushlightuserdata(L, @constCast(&call));
        return p.call(L, 2, 0);
    }

    fn addCall(L: State) callconv(.c) c_int {
        const r: *Runner = @ptrCast(@alignCast(c.lua_touserdata(L, 1).?));
        const call: *const panto.event.ToolCallStart = @ptrCast(@alignCast(c.lua_touserdata(L, 2).?));
        const si = r.pushHolder(L);
        c.lua_createtable(L, 0, 7);
        setString(L, "kind", "tool_call_start");
        setString(L, "id", call.id);
        setString(L, "name", call.name);
        setString(L, "input_json", call.input);
        c.lua_pushboolean(L, 1);
        c.lua_setfield(L, -2, "awaiting_result");
        c.lua_pushboolean(L, @intFromBool(call.sequential));
        c.lua_setfield(L, -2, "sequential");
        // input: the decoded object; nil if the text is not JSON (panto checks it).
        c.lua_pushcclosure(L, embed.json.jsonDecode, 0);
        p.pushSlice(L, call.input);
        if (c.lua_pcallk(L, 1, 1, 0, 0, null) == c.LUA_OK) c.lua_setfield(L, -2, "input") else p.pop(L, 1);
        tool_runs.addPlain(L, &r.round, si);
        return 0;
    }

    /// Runs passes over the round until one more result or progress is given to `stream`, or
    /// no handler runs any more; between passes, waits for what the handlers wait for.
    pub fn pump(r: *Runner, L: State, report: anytype, stream: *panto.Stream) PumpError!void {
        r.stream = stream;
        defer r.stream = null;
        const before = r.given;
        const top = c.lua_gettop(L);
        defer c.lua_settop(L, top);
        const si = r.pushHolder(L);
        while (true) {
            if (r.children.isCanceled()) {
                r.children.killAll();
                return error.Canceled;
            }
            if (r.round.live == 0) return if (r.given != before) {} else error.NoHandler;
            c.lua_pushcclosure(L, pass, 0);
            c.lua_pushlightuserdata(L, r);
            c.lua_pushvalue(L, si);
            if (!p.call(L, 2, 0)) {
                report.reportLine("tool handler: {s}", .{p.toSlice(L, -1)});
                return error.HandlerFailed;
            }
            if (r.given != before or r.round.live == 0) return if (r.given != before) {} else error.NoHandler;
            var until = tool_runs.earliestWake(L, si);
            // Output held back by reportOutput's pace: shown once its tenth of a second passes.
            for (r.children.list.items) |ch| if (ch.progress_id != null and ch.output_bytes != ch.reported_bytes) {
                until = @min(until, ch.reported_at + 0.1);
            };
            if (until == std.math.inf(f64) and r.children.list.items.len == 0 and !r.children.isCanceled())
                return error.HandlerFailed; // nothing could wake a handler
            r.children.wait(r.gpa, tool_runs.now, until, L, wakeWaiter);
            r.reportOutput(stream);
            if (r.given != before) return;
        }
    }

    /// The last lines of each child that shows its output as its call's progress
    /// (ext.exec's `progress`), when it wrote more since, at most ten times a second (a
    /// chatty build would otherwise redraw the line for every read).
    fn reportOutput(r: *Runner, stream: *panto.Stream) void {
        const t = tool_runs.now();
        for (r.children.list.items) |ch| {
            const id = ch.progress_id orelse continue;
            if (ch.output_bytes == ch.reported_bytes or t - ch.reported_at < 0.1) continue;
            ch.reported_bytes = ch.output_bytes;
            ch.reported_at = t;
            const line = ch.lastLines(3);
            if (line.len == 0 or !std.unicode.utf8ValidateSlice(line)) continue;
            // The call may be answered already, or not be this stream's: nothing to show.
            stream.toolProgress(id, line, -1) catch continue; // -1: no fraction
            r.given += 1;
        }
    }

    fn pass(L: State) callconv(.c) c_int {
        const r: *Runner = @ptrCast(@alignCast(c.lua_touserdata(L, 1).?));
        tool_runs.runPass(L, &r.round, 2);
        return 0;
    }

    /// The round is over without its results: the suspended handlers are let go, the children
    /// they wait for killed.
    pub fn abandon(r: *Runner, L: State) void {
        const top = c.lua_gettop(L);
        defer c.lua_settop(L, top);
        const si = r.pushHolder(L);
        tool_runs.abandon(L, &r.round, si);
        var i: usize = r.children.list.items.len;
        while (i > 0) {
            i -= 1;
            const ch = r.children.list.items[i];
            if (ch.waiter == 0) continue;
            _ = r.children.list.swapRemove(i);
            c.luaL_unref(L, c.LUA_REGISTRYINDEX, ch.waiter);
            ch.destroy(r.gpa);
        }
        r.children.clearCancel();
    }

    /// Waits until `ch` is done (an ext.exec outside a tool handler).
    pub fn waitFor(r: *Runner, L: State, ch: *exec.Child) void {
        while (!ch.done()) r.children.wait(r.gpa, tool_runs.now, std.math.inf(f64), L, wakeWaiter);
    }

    /// In a tool handler of this round: its call waits for `ch` (the caller yields).
    pub fn suspendFor(r: *Runner, L: State, ch: *exec.Child) bool {
        if (!tool_runs.suspendCurrent(L, &r.round)) return false;
        _ = c.lua_pushthread(L);
        ch.waiter = c.luaL_ref(L, c.LUA_REGISTRYINDEX);
        return true;
    }

    /// A child is done: the handler waiting for it goes on at the next pass.
    fn wakeWaiter(L: State, ch: *exec.Child) void {
        if (ch.waiter == 0) return;
        _ = c.lua_rawgeti(L, c.LUA_REGISTRYINDEX, ch.waiter);
        tool_runs.wakeThread(L, -1);
        p.pop(L, 1);
    }

    /// The child's outcome was taken: it is let go.
    pub fn release(r: *Runner, L: State, ch: *exec.Child) void {
        r.children.remove(ch);
        if (ch.waiter != 0) c.luaL_unref(L, c.LUA_REGISTRYINDEX, ch.waiter);
        ch.destroy(r.gpa);
    }
};

fn setString(L: State, key: [*:0]const u8, s: []const u8) void {
    p.pushSlice(L, s);
    c.lua_setfield(L, -2, key);
}

// ---- the round's driver over a panto.Stream ----

const driver: tool_runs.Driver = .{ .is_open = isOpen, .submit = submit, .progress = progress };

fn ofRound(round: *tool_runs.Round) *Runner {
    return @fieldParentPtr("round", round);
}

fn isOpen(round: *tool_runs.Round) bool {
    return ofRound(round).stream != null;
}

fn submit(L: State, round: *tool_runs.Round, si: c_int, id: c_int, content: c_int, parts_box: c_int, is_error: bool) c_int {
    _ = si;
    const r = ofRound(round);
    const stream = r.stream orelse return fail(L, c.PANTO_ERR_NO_SUCH_CALL, "the turn is over");
    const given = embed.ofBox(L, parts_box);
    var problem: embed.part_reader.Problem = .{};
    const parts = embed.part_reader.read(r.gpa, @ptrCast(given.ptr), given.len, "the result's parts", &problem) catch |err| return switch (err) {
        error.Invalid => fail(L, c.PANTO_ERR_INVALID_ARGUMENT, problem.message()),
        error.OutOfMemory => fail(L, c.PANTO_ERR_OUT_OF_MEMORY, "out of memory"),
    };
    const outcome = stream.submitToolResultParts(p.toSlice(L, id), p.toSlice(L, content), parts, is_error);
    r.gpa.free(parts); // before anything that may raise
    outcome catch |err| return switch (err) {
        error.NoSuchCall => fail(L, c.PANTO_ERR_NO_SUCH_CALL, "no tool call with this id awaits a result"),
        error.InvalidArgument => fail(L, c.PANTO_ERR_INVALID_ARGUMENT, "the call id is not valid UTF-8"),
        error.OutOfMemory => fail(L, c.PANTO_ERR_OUT_OF_MEMORY, "out of memory"),
    };
    r.given += 1;
    return 0;
}

fn progress(L: State, round: *tool_runs.Round, id: c_int, text: c.PantoString, fraction: f64) c_int {
    const r = ofRound(round);
    const stream = r.stream orelse return fail(L, c.PANTO_ERR_NO_SUCH_CALL, "the turn is over");
    const t: []const u8 = if (text.len == 0) "" else text.ptr[0..text.len];
    stream.toolProgress(p.toSlice(L, id), t, fraction) catch |err| return switch (err) {
        error.NoSuchCall => fail(L, c.PANTO_ERR_NO_SUCH_CALL, "no tool call with this id awaits a result"),
        error.InvalidArgument => fail(L, c.PANTO_ERR_INVALID_ARGUMENT, "fraction must be from 0 to 1"),
        error.OutOfMemory => fail(L, c.PANTO_ERR_OUT_OF_MEMORY, "out of memory"),
    };
    r.given += 1;
    return 0;
}

fn fail(L: State, code: c_int, message: []const u8) c_int {
    p.pushSlice(L, message);
    return code;
}
