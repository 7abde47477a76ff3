//! The host tool calls of a round, each handler in its own coroutine, so that the calls of a
//! round overlap (include/panto.h, PantoEvent.sequential). stream.zig records a call when it
//! hands out its TOOL_CALL_START; once they are all out (panto says a result is pending),
//! each next() runs a pass before it reads: the pass starts the calls that may start,
//! resumes the coroutines that may go on, and submits each result the moment its handler
//! returns. When panto has nothing to give until more results come, next() sleeps
//! until the earliest wake-up (wait). A handler gives way with panto.sleep(seconds) (a wake-up
//! time) or coroutine.yield() (runnable again at the next pass); panto.progress(text,
//! fraction) queues a TOOL_PROGRESS event for its call at once.
//!
//! A sequential call starts once every earlier call has finished, and no later call starts
//! before it finishes. A canceled, failed or closed stream abandons its round: the suspended
//! coroutines are reset (their to-be-closed variables closed) and let go.
//!
//! A call is a Lua table (below, `rec_*`) in the list of calls of its round's holder (a
//! userdata whose user values `uv_calls` and `uv_handlers` are the calls and the table tool
//! name -> handler), in call order; a weak-keyed table of the registry maps each running
//! coroutine to its call, which is how panto.sleep and panto.progress know they run inside a
//! handler.
//!
//! Who drives the round is a `Round`'s `Driver`: the Lua stream (stream.zig), or a program
//! that embeds this module and reads the core's stream itself (the panto command's Lua host,
//! through panto_lua.embed). The driver submits results and progress; this file does the rest.

const std = @import("std");
const c = @import("c");
const h = @import("helpers.zig");
const events = @import("events.zig");

const State = h.State;
const pop = h.pop;
const isNil = h.isNil;
const protectedCall = h.protectedCall;

/// Indices in a call table.
const rec_id = 1;
const rec_name = 2;
const rec_event = 3;
const rec_handler = 4;
const rec_thread = 5; // the coroutine, false before it starts and once it finished
const rec_wake = 6; // monotonic seconds before which it is not resumed (0: runnable)
const rec_state = 7; // a Phase
const rec_sequential = 8;
const rec_holder = 9; // the round's holder, kept alive while its calls are
const rec_round = 10; // the Round, a light userdata, for panto.sleep and panto.progress

/// The user values of a round's holder.
pub const uv_calls = 3; // the calls of the round that have a handler
pub const uv_handlers = 4; // the table tool name -> handler function

/// A round of host tool calls and the driver that gives their results to the core.
pub const Round = struct {
    driver: *const Driver,
    /// The calls whose handler has not finished: the driver runs passes while there are some.
    live: u32 = 0,
    /// The round's TOOL_CALL_STARTs are all read: the handlers run (the Lua stream's rule).
    started: bool = false,
    /// A handler's coroutine runs.
    in_handler: bool = false,
    /// The coroutine that runs, while it runs: a host that interrupts running code (the panto
    /// command's Ctrl-C) arms a hook on it.
    running: State = null,
};

pub const Driver = struct {
    /// Whether the turn still takes results (a handler may have closed its stream).
    is_open: *const fn (r: *Round) bool,
    /// Submits the result of the call whose id is the string at `id`: the string at
    /// `content` and the parts in the box at `parts_box` (parts.ofBox; nil: none). On a
    /// failure, pushes an error value and returns a negative PANTO_ERR_* (NO_SUCH_CALL: the
    /// call was answered already). The holder is at `si`; the indices may be relative.
    submit: *const fn (L: State, r: *Round, si: c_int, id: c_int, content: c_int, parts_box: c_int, is_error: bool) c_int,
    /// Queues a TOOL_PROGRESS for the call whose id is the string at `id` (`fraction` -1:
    /// none). On a failure, pushes an error value and returns a negative PANTO_ERR_*.
    progress: *const fn (L: State, r: *Round, id: c_int, text: c.PantoString, fraction: f64) c_int,
};

const Phase = enum(c.lua_Integer) { waiting = 0, started = 1, finished = 2 };

/// The registry's weak-keyed table coroutine -> call.
const threads_key: [*:0]const u8 = "panto.tool_threads";

pub fn now() f64 {
    var ts: c.struct_timespec = undefined;
    _ = c.clock_gettime(c.CLOCK_MONOTONIC, &ts);
    return @as(f64, @floatFromInt(ts.tv_sec)) + @as(f64, @floatFromInt(ts.tv_nsec)) / std.time.ns_per_s;
}

pub fn sleepFor(seconds: f64) void {
    if (!(seconds > 0)) return;
    const whole = @floor(seconds);
    var req: c.struct_timespec = .{ .tv_sec = @intFromFloat(whole), .tv_nsec = @intFromFloat((seconds - whole) * std.time.ns_per_s) };
    var rem: c.struct_timespec = undefined;
    while (c.nanosleep(&req, &rem) != 0) req = rem; // EINTR: the rest
}

fn phaseOf(L: State, rec: c_int) Phase {
    _ = c.lua_rawgeti(L, rec, rec_state);
    const p: Phase = @enumFromInt(c.lua_tointegerx(L, -1, null));
    pop(L, 1);
    return p;
}

fn setPhase(L: State, rec: c_int, p: Phase) void {
    c.lua_pushinteger(L, @intFromEnum(p));
    c.lua_rawseti(L, rec, rec_state);
}

fn numberAt(L: State, rec: c_int, i: c.lua_Integer) f64 {
    _ = c.lua_rawgeti(L, rec, i);
    const n = c.lua_tonumberx(L, -1, null);
    pop(L, 1);
    return n;
}

fn flagAt(L: State, rec: c_int, i: c.lua_Integer) bool {
    _ = c.lua_rawgeti(L, rec, i);
    const b = c.lua_toboolean(L, -1) != 0;
    pop(L, 1);
    return b;
}

/// Pushes the registry's table coroutine -> call.
fn pushThreads(L: State) void {
    _ = c.lua_getfield(L, c.LUA_REGISTRYINDEX, threads_key);
}

/// The TOOL_CALL_START event at the top awaits its result: when its tool has a handler, the
/// call joins the round (its holder at `si`, see stream.fetch). Needs the stream methods'
/// upvalues (the event keys).
pub fn add(L: State, r: *Round, si: c_int) void {
    addWith(L, r, si, events.pushField);
}

/// As `add`, for an event table made by another driver: a plain table with the fields id,
/// name, sequential and input of a tool_call_start event.
pub fn addPlain(L: State, r: *Round, si: c_int) void {
    addWith(L, r, si, pushPlainField);
}

fn pushPlainField(L: State, ev: c_int, key: events.Key) c_int {
    return c.lua_getfield(L, ev, @tagName(key));
}

fn addWith(L: State, r: *Round, si: c_int, comptime pushField: fn (State, c_int, events.Key) c_int) void {
    const ev = c.lua_absindex(L, -1);
    const top = c.lua_gettop(L);
    defer c.lua_settop(L, top);
    if (c.lua_getiuservalue(L, si, uv_handlers) != c.LUA_TTABLE) return;
    _ = pushField(L, ev, .name);
    if (c.lua_rawget(L, -2) == c.LUA_TNIL) return;
    c.lua_createtable(L, rec_round, 0);
    c.lua_rotate(L, -2, 1); // the call table, the handler
    const rec = c.lua_absindex(L, -2);
    c.lua_rawseti(L, rec, rec_handler);
    _ = pushField(L, ev, .id);
    c.lua_rawseti(L, rec, rec_id);
    _ = pushField(L, ev, .name);
    c.lua_rawseti(L, rec, rec_name);
    c.lua_pushvalue(L, ev);
    c.lua_rawseti(L, rec, rec_event);
    c.lua_pushboolean(L, 0);
    c.lua_rawseti(L, rec, rec_thread);
    c.lua_pushnumber(L, 0);
    c.lua_rawseti(L, rec, rec_wake);
    setPhase(L, rec, .waiting);
    _ = pushField(L, ev, .sequential);
    c.lua_rawseti(L, rec, rec_sequential);
    c.lua_pushvalue(L, si);
    c.lua_rawseti(L, rec, rec_holder);
    c.lua_pushlightuserdata(L, r);
    c.lua_rawseti(L, rec, rec_round);
    if (c.lua_getiuservalue(L, si, uv_calls) != c.LUA_TTABLE) {
        pop(L, 1);
        c.lua_createtable(L, 4, 0);
        c.lua_pushvalue(L, -1);
        _ = c.lua_setiuservalue(L, si, uv_calls);
    }
    c.lua_pushvalue(L, rec);
    c.lua_rawseti(L, -2, @intCast(c.lua_rawlen(L, -2) + 1));
    r.live += 1;
}

/// One pass over the round: starts the calls that may start and resumes the coroutines whose
/// wake-up time has come, each once; submits what finished. Stops early when a handler
/// closed the stream. The holder at `si`.
pub fn runPass(L: State, r: *Round, si: c_int) void {
    const top = c.lua_gettop(L);
    defer c.lua_settop(L, top);
    if (c.lua_getiuservalue(L, si, uv_calls) != c.LUA_TTABLE) {
        r.live = 0;
        return;
    }
    const calls = c.lua_absindex(L, -1);
    const n = c.lua_rawlen(L, calls);
    const t = now();
    var earlier_unfinished = false;
    var sequential_unfinished = false;
    var i: c.lua_Integer = 1;
    while (i <= n) : (i += 1) {
        _ = c.lua_rawgeti(L, calls, i);
        const rec = c.lua_absindex(L, -1);
        const sequential = flagAt(L, rec, rec_sequential);
        switch (phaseOf(L, rec)) {
            .finished => {},
            .waiting => if (if (sequential) !earlier_unfinished else !sequential_unfinished) start(L, r, si, rec),
            .started => if (numberAt(L, rec, rec_wake) <= t) resumeCall(L, r, si, rec, 0),
        }
        if (!r.driver.is_open(r)) return;
        if (phaseOf(L, rec) != .finished) {
            earlier_unfinished = true;
            if (sequential) sequential_unfinished = true;
        }
        pop(L, 1);
    }
    if (r.live == 0) {
        r.started = false;
        c.lua_pushnil(L);
        _ = c.lua_setiuservalue(L, si, uv_calls);
    }
}

/// The earliest wake-up time of a started call (monotonic seconds), or infinity when none
/// has one: a call waits to start (the next pass starts it), or each waits for something
/// its driver watches (ext.exec's child). The holder at `si`.
pub fn earliestWake(L: State, si: c_int) f64 {
    const top = c.lua_gettop(L);
    defer c.lua_settop(L, top);
    if (c.lua_getiuservalue(L, si, uv_calls) != c.LUA_TTABLE) return std.math.inf(f64);
    const calls = c.lua_absindex(L, -1);
    const n = c.lua_rawlen(L, calls);
    var earliest = std.math.inf(f64);
    var i: c.lua_Integer = 1;
    while (i <= n) : (i += 1) {
        _ = c.lua_rawgeti(L, calls, i);
        if (phaseOf(L, -1) == .started) earliest = @min(earliest, numberAt(L, c.lua_absindex(L, -1), rec_wake));
        pop(L, 1);
    }
    return earliest;
}

/// Starts the call at `rec`: a new coroutine runs handler(input, event).
fn start(L: State, r: *Round, si: c_int, rec: c_int) void {
    const co = c.lua_newthread(L).?;
    c.lua_pushvalue(L, -1);
    c.lua_rawseti(L, rec, rec_thread);
    pushThreads(L);
    c.lua_pushvalue(L, -2);
    c.lua_pushvalue(L, rec);
    c.lua_rawset(L, -3);
    pop(L, 1);
    setPhase(L, rec, .started);
    _ = c.lua_rawgeti(L, rec, rec_handler);
    _ = c.lua_rawgeti(L, rec, rec_event);
    _ = c.lua_getfield(L, -1, "input");
    c.lua_rotate(L, -2, 1); // handler, input, event
    c.lua_xmove(L, co, 3);
    resumeCall(L, r, si, rec, 2);
    pop(L, 1); // the thread
}

/// Resumes the coroutine of the call at `rec` with the `nargs` values on its stack; when the
/// handler returned or raised, the call is finished and its result submitted.
fn resumeCall(L: State, r: *Round, si: c_int, rec: c_int, nargs: c_int) void {
    _ = c.lua_rawgeti(L, rec, rec_thread);
    const co = c.lua_tothread(L, -1) orelse return pop(L, 1);
    pop(L, 1); // the call table holds it
    c.lua_pushnumber(L, 0);
    c.lua_rawseti(L, rec, rec_wake); // a plain yield: runnable; panto.sleep sets a time
    var nres: c_int = 0;
    r.in_handler = true;
    r.running = co;
    const status = c.lua_resume(co, L, nargs, &nres);
    r.running = null;
    r.in_handler = false;
    if (status == c.LUA_YIELD) {
        c.lua_settop(co, -nres - 1); // what the handler yielded means nothing here
        return;
    }
    const ok = status == c.LUA_OK;
    if (ok) {
        // The first two results (a value, or nil and an error), nil when fewer.
        c.lua_settop(co, c.lua_gettop(co) - nres + 2);
        c.lua_xmove(co, L, 2);
    } else {
        c.lua_xmove(co, L, 1); // the error value
        c.lua_pushnil(L);
        _ = c.lua_resetthread(co); // closes its pending to-be-closed variables
    }
    finish(L, rec);
    r.live -|= 1;
    // Stack top: the two values. A handler that closed the stream: nothing to submit.
    if (r.driver.is_open(r)) deliver(L, r, si, rec, ok);
    pop(L, 2);
}

/// The call at `rec` is over: it lets go of its coroutine.
fn finish(L: State, rec: c_int) void {
    setPhase(L, rec, .finished);
    _ = c.lua_rawgeti(L, rec, rec_thread);
    if (c.lua_type(L, -1) == c.LUA_TTHREAD) {
        pushThreads(L);
        c.lua_pushvalue(L, -2);
        c.lua_pushnil(L);
        c.lua_rawset(L, -3);
        pop(L, 1);
    }
    pop(L, 1);
    c.lua_pushboolean(L, 0);
    c.lua_rawseti(L, rec, rec_thread);
}

/// Submits the outcome at the top (v1, v2: the handler's first two results, or its error value
/// and nil when `ok` is false) as the call's result. Raises when panto refuses it for a reason
/// other than the call being answered already (by hand, with submit_tool_result).
fn deliver(L: State, r: *Round, si: c_int, rec: c_int, ok: bool) void {
    const top = c.lua_gettop(L);
    defer c.lua_settop(L, top);
    // contentOf(ok, v1, v2) -> content, is_error, parts; protected, since __tostring may
    // raise, and so does a result that cannot be sent. Called with copies: the parts borrow
    // the strings of the handler's values, which stay below.
    c.lua_pushboolean(L, @intFromBool(ok));
    c.lua_pushvalue(L, top - 1);
    c.lua_pushvalue(L, top);
    if (!protectedCall(L, contentOf, 3, 3)) {
        const why: [*c]const u8 = if (c.lua_type(L, -1) == c.LUA_TSTRING) c.lua_tolstring(L, -1, null) else "an error value that is not a string";
        _ = c.lua_rawgeti(L, rec, rec_name);
        _ = c.lua_pushfstring(L, "panto: the result of tool '%s' cannot be sent: %s", c.lua_tolstring(L, -1, null), why);
        c.lua_pushboolean(L, 1);
        c.lua_pushnil(L);
    }
    // Stack top: content, is_error, parts.
    _ = c.lua_rawgeti(L, rec, rec_id);
    const rc = r.driver.submit(L, r, si, -1, -4, -2, c.lua_toboolean(L, -3) != 0);
    if (rc < 0 and rc != c.PANTO_ERR_NO_SUCH_CALL) _ = c.lua_error(L);
}

/// Text of an error value: a string or number as is, else tostring (__tostring, __name).
fn pushErrorText(L: State, idx: c_int) void {
    switch (c.lua_type(L, idx)) {
        c.LUA_TSTRING => c.lua_pushvalue(L, idx),
        c.LUA_TNIL => _ = c.lua_pushstring(L, "error (no message)"),
        else => _ = c.luaL_tolstring(L, idx, null),
    }
}

/// contentOf(ok, v1, v2) -> content, is_error, parts: a handler's outcome as a tool result. A
/// raised error or `return nil, err` is an error result with the error's text; any other
/// value is a result as parts.pushResult reads it (a string, media, attachments, a list of
/// parts, else JSON).
fn contentOf(L: State) callconv(.c) c_int {
    c.lua_settop(L, 3);
    if (c.lua_toboolean(L, 1) == 0 or (isNil(L, 2) and !isNil(L, 3))) {
        pushErrorText(L, if (c.lua_toboolean(L, 1) == 0) 2 else 3);
        c.lua_pushboolean(L, 1);
        c.lua_pushnil(L);
        return 3;
    }
    @import("parts.zig").pushResult(L, 2);
    c.lua_pushboolean(L, 0);
    c.lua_rotate(L, -2, 1);
    return 3;
}

/// The call whose id is the string at `id` was answered by hand: when its handler has not
/// started, it never will. The holder at `si`.
pub fn answeredByHand(L: State, r: *Round, si: c_int, id: c_int) void {
    const top = c.lua_gettop(L);
    defer c.lua_settop(L, top);
    const id_idx = c.lua_absindex(L, id);
    if (c.lua_getiuservalue(L, si, uv_calls) != c.LUA_TTABLE) return;
    const calls = c.lua_absindex(L, -1);
    const n = c.lua_rawlen(L, calls);
    var i: c.lua_Integer = 1;
    while (i <= n) : (i += 1) {
        _ = c.lua_rawgeti(L, calls, i);
        _ = c.lua_rawgeti(L, -1, rec_id);
        const same = c.lua_rawequal(L, -1, id_idx) != 0;
        pop(L, 1);
        if (same and phaseOf(L, -1) == .waiting) {
            setPhase(L, c.lua_absindex(L, -1), .finished);
            r.live -|= 1;
        }
        pop(L, 1);
    }
}

/// Ends the round without its results: each suspended coroutine is reset (its to-be-closed
/// variables closed) and let go. A handler running now (it closed its stream) is let go and
/// ends on its own. The holder at `si`.
pub fn abandon(L: State, r: *Round, si: c_int) void {
    r.live = 0;
    r.started = false;
    const top = c.lua_gettop(L);
    defer c.lua_settop(L, top);
    if (c.lua_getiuservalue(L, si, uv_calls) != c.LUA_TTABLE) return;
    c.lua_pushnil(L);
    _ = c.lua_setiuservalue(L, si, uv_calls);
    const calls = c.lua_absindex(L, -1);
    const n = c.lua_rawlen(L, calls);
    var i: c.lua_Integer = 1;
    while (i <= n) : (i += 1) {
        _ = c.lua_rawgeti(L, calls, i);
        const rec = c.lua_absindex(L, -1);
        _ = c.lua_rawgeti(L, rec, rec_thread);
        const co = c.lua_tothread(L, -1);
        pop(L, 1);
        finish(L, rec);
        if (co) |thread| {
            if (thread != L and c.lua_status(thread) == c.LUA_YIELD) _ = c.lua_resetthread(thread);
        }
        pop(L, 1);
    }
}

/// Pushes the call of the running coroutine and returns its round, or returns null (pushing
/// nothing) outside a handler's coroutine.
fn currentCall(L: State) ?*Round {
    pushThreads(L);
    if (c.lua_pushthread(L) != 0) { // the main thread: never a handler's
        pop(L, 2);
        return null;
    }
    if (c.lua_rawget(L, -2) != c.LUA_TTABLE) {
        pop(L, 2);
        return null;
    }
    c.lua_rotate(L, -2, 1);
    pop(L, 1);
    _ = c.lua_rawgeti(L, -1, rec_round);
    const r: ?*Round = @ptrCast(@alignCast(c.lua_touserdata(L, -1)));
    pop(L, 1);
    if (r == null) pop(L, 1);
    return r;
}

/// For a driver's own yielding functions (ext.exec): when the running coroutine is a handler
/// of `r` and may yield, its call waits until wakeThread (no wake-up time) and this returns
/// true; the caller then yields. Otherwise false, and the caller does its work in place.
pub fn suspendCurrent(L: State, r: *Round) bool {
    if (c.lua_isyieldable(L) == 0) return false;
    const top = c.lua_gettop(L);
    defer c.lua_settop(L, top);
    const mine = currentCall(L) orelse return false;
    if (mine != r) return false;
    c.lua_pushnumber(L, std.math.inf(f64));
    c.lua_rawseti(L, -2, rec_wake);
    return true;
}

/// The call whose coroutine is at `co` may go on: the next pass resumes it.
pub fn wakeThread(L: State, co: c_int) void {
    const thread = c.lua_absindex(L, co);
    pushThreads(L);
    c.lua_pushvalue(L, thread);
    if (c.lua_rawget(L, -2) == c.LUA_TTABLE) {
        c.lua_pushnumber(L, 0);
        c.lua_rawseti(L, -2, rec_wake);
    }
    pop(L, 2);
}

/// panto.sleep(seconds): inside a tool handler, lets the other calls of the round run and
/// comes back after `seconds`; elsewhere (or where a yield is not possible: inside a
/// metamethod, say), sleeps.
fn pantoSleep(L: State) callconv(.c) c_int {
    const seconds = c.luaL_checknumber(L, 1);
    if (!(seconds >= 0 and seconds < std.math.inf(f64))) return c.luaL_argerror(L, 1, "seconds must be a finite number >= 0");
    c.lua_settop(L, 0);
    if (c.lua_isyieldable(L) != 0) {
        if (currentCall(L)) |_| {
            c.lua_pushnumber(L, now() + seconds);
            c.lua_rawseti(L, -2, rec_wake);
            c.lua_settop(L, 0);
            return c.lua_yieldk(L, 0, 0, null);
        }
    }
    sleepFor(seconds);
    return 0;
}

/// The optional fraction argument at `idx`: 0 to 1, or -1 (the C ABI's none) when absent.
pub fn checkFraction(L: State, idx: c_int) f64 {
    if (h.isNoneOrNil(L, idx)) return -1;
    const fraction = c.luaL_checknumber(L, idx);
    if (!(fraction >= 0 and fraction <= 1)) _ = c.luaL_argerror(L, idx, "fraction must be from 0 to 1");
    return fraction;
}

/// panto.progress([text [, fraction]]): inside a tool handler, reports its progress (a
/// tool_progress event: text, fraction from 0 to 1 or nil); elsewhere does nothing.
fn pantoProgress(L: State) callconv(.c) c_int {
    const text = h.optPantoString(L, 1);
    const fraction = checkFraction(L, 2);
    c.lua_settop(L, 2);
    const r = currentCall(L) orelse return 0;
    if (!r.driver.is_open(r)) return 0;
    _ = c.lua_rawgeti(L, -1, rec_id);
    const rc = r.driver.progress(L, r, -1, text, fraction);
    // Answered by hand already, or the stream was freed: the progress has no call to go to.
    if (rc < 0 and rc != c.PANTO_ERR_NO_SUCH_CALL) return c.lua_error(L);
    return 0;
}

/// panto.monotonic(): seconds on a monotonic clock (from an unspecified start), the clock of
/// panto.sleep: for timing.
fn pantoMonotonic(L: State) callconv(.c) c_int {
    c.lua_pushnumber(L, now());
    return 1;
}

/// The module's functions of this file.
pub const functions = [_]c.luaL_Reg{
    h.reg("monotonic", pantoMonotonic),
    h.reg("sleep", pantoSleep),
    h.reg("progress", pantoProgress),
};

pub fn open(L: State) void {
    if (c.lua_getfield(L, c.LUA_REGISTRYINDEX, threads_key) == c.LUA_TTABLE) return pop(L, 1);
    pop(L, 1);
    c.lua_createtable(L, 0, 0);
    c.lua_createtable(L, 0, 1);
    _ = c.lua_pushstring(L, "k");
    c.lua_setfield(L, -2, "__mode");
    _ = c.lua_setmetatable(L, -2);
    c.lua_setfield(L, c.LUA_REGISTRYINDEX, threads_key);
}
