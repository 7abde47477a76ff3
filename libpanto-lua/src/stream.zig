//! panto.Stream: one turn. next() and the events() iterator read its events (one
//! panto_next_event a call), run the handlers of awaited tool calls between two events (each in
//! its coroutine: tool_runs.zig), and raise the turn's error; close(), __close and __gc free
//! it. The helpers over the event loop (text, final_message, final_json) are in
//! stream_helpers.zig.

const std = @import("std");
const c = @import("c");
const h = @import("helpers.zig");
const errors = @import("errors.zig");
const events = @import("events.zig");
const parts = @import("parts.zig");
const timer = @import("timer.zig");
const tool_runs = @import("tool_runs.zig");
const stream_helpers = @import("stream_helpers.zig");
const Timer = timer.Timer;

const State = h.State;
const pop = h.pop;
const isNil = h.isNil;
const optBoolean = h.optBoolean;
const protectedCall = h.protectedCall;
const fail = h.fail;
const pushSimpleError = errors.pushSimpleError;
const method_upvalues = events.method_upvalues;

pub const tname: [*:0]const u8 = "panto.Stream";

/// User value slots.
const uv_agent = 1; // the agent userdata, kept alive while the stream is
const uv_error = 2; // the error table of a failed turn, raised again by next()
pub const uv_calls = tool_runs.uv_calls; // the host tool calls of the round that have a handler
pub const uv_handlers = tool_runs.uv_handlers; // the agent's table tool name -> handler function
pub const uv_request_ids = 5; // the request ids of the turn's messages so far
const uv_asked = 6; // with an approval function: the calls approval_request events listed, unanswered
const user_values = 6;

pub const Phase = enum(u8) {
    /// Holds a C handle; the turn has not ended.
    open,
    /// The turn ended: next() returns nil. The C handle stays, for final_message and
    /// final_json, until the stream is closed or its agent starts another turn.
    done,
    /// The turn failed: next() raises the error in user value 2. The C handle stays, for
    /// reopen(), until the stream is closed (unless close_after freed it).
    failed,
    /// Closed by close(), `__close`, `__gc` or the agent's close().
    closed,
};

pub const Stream = struct {
    handle: ?*c.PantoStream,
    phase: Phase,
    /// Whether next() runs the handlers of awaited tool calls itself.
    run_tools: bool,
    /// Set while `handle` is: the list of its agent's streams that links this stream.
    list: ?*List = null,
    prev: ?*Stream = null,
    next: ?*Stream = null,
    /// The armed cancel_after() or close_after() timer, if any.
    timer: ?*Timer = null,
    /// The round's calls (user value 3): `live` counts those whose handler has not finished
    /// (next() runs a pass over them before it reads on); `started` once the round's
    /// TOOL_CALL_STARTs are all read (panto said a result is pending: the handlers run; until
    /// then, next() only reads on); `in_handler` while a handler's coroutine runs (reading
    /// the stream from it is refused).
    round: tool_runs.Round = .{ .driver = &round_driver },
};

/// The stream as the driver of its round (tool_runs.zig).
const round_driver: tool_runs.Driver = .{ .is_open = roundIsOpen, .submit = roundSubmit, .progress = roundProgress };

fn ofRound(r: *tool_runs.Round) *Stream {
    return @fieldParentPtr("round", r);
}

fn roundIsOpen(r: *tool_runs.Round) bool {
    return ofRound(r).phase == .open;
}

fn roundSubmit(L: State, r: *tool_runs.Round, si: c_int, id: c_int, content: c_int, parts_box: c_int, is_error: bool) c_int {
    return submit(L, ofRound(r), si, id, content, parts_box, is_error);
}

fn roundProgress(L: State, r: *tool_runs.Round, id: c_int, text: c.PantoString, fraction: f64) c_int {
    return toolProgress(L, ofRound(r), id, text, fraction);
}

/// The longest single sleep while a timer is armed on the stream: cancel_after or close_after
/// fire from another thread, which cannot wake this one, so it looks again this often.
const timer_slice_s: f64 = 0.02;

/// panto has nothing to give until more results come: sleeps until the earliest wake-up of a
/// started call (none when one is runnable already). The stream's value at `si`.
fn waitForCalls(L: State, s: *Stream, si: c_int) void {
    const earliest = tool_runs.earliestWake(L, si);
    if (earliest == std.math.inf(f64)) return; // a call waits to start: the next pass starts it
    var delay = earliest - tool_runs.now();
    if (s.timer != null) delay = @min(delay, timer_slice_s);
    tool_runs.sleepFor(delay);
}

/// The streams of an agent that still hold a C handle, so that agent:close() closes them.
pub const List = struct {
    first: ?*Stream = null,

    pub fn closeAll(list: *List) void {
        while (list.first) |s| release(s, .closed);
    }

    /// Frees the handles of the finished turns: the agent starts another.
    pub fn releaseDone(list: *List) void {
        var it = list.first;
        while (it) |s| {
            it = s.next;
            if (s.phase == .done) release(s, .done);
        }
    }
};

/// Pushes a new stream userdata, with no C handle yet: the userdata exists before the
/// stream does, so that no error can leak the stream. The agent's userdata is at `agent`, its
/// table of handlers at `handlers`.
pub fn push(L: State, agent: c_int, handlers: c_int, run_tools: bool) *Stream {
    const a = c.lua_absindex(L, agent);
    const t = c.lua_absindex(L, handlers);
    const s: *Stream = @ptrCast(@alignCast(c.lua_newuserdatauv(L, @sizeOf(Stream), user_values).?));
    s.* = .{ .handle = null, .phase = .closed, .run_tools = run_tools };
    c.luaL_setmetatable(L, tname);
    c.lua_pushvalue(L, a);
    _ = c.lua_setiuservalue(L, -2, uv_agent);
    c.lua_pushvalue(L, t);
    _ = c.lua_setiuservalue(L, -2, uv_handlers);
    return s;
}

/// The stream now holds `handle` and is linked in `list`.
pub fn attach(s: *Stream, handle: *c.PantoStream, list: *List) void {
    s.handle = handle;
    s.phase = .open;
    s.list = list;
    s.next = list.first;
    if (list.first) |n| n.prev = s;
    list.first = s;
}

pub fn toStream(L: State, idx: c_int) *Stream {
    return @ptrCast(@alignCast(c.luaL_checkudata(L, idx, tname).?));
}

/// Stops the stream's timer (one that fired finishes first); when it was close_after's and
/// freed the stream, the stream lets go of its handle.
fn disarmTimer(s: *Stream) void {
    const t = s.timer orelse return;
    s.timer = null;
    if (t.disarm()) forget(s);
}

/// The stream holds no C handle any more: it is unlinked from its agent's list.
fn forget(s: *Stream) void {
    s.handle = null;
    if (s.list) |list| {
        if (s.prev) |p| p.next = s.next else list.first = s.next;
        if (s.next) |n| n.prev = s.prev;
        s.list = null;
        s.prev = null;
        s.next = null;
    }
}

/// Frees the stream's C handle, if it holds one, and unlinks it from its agent's list.
pub fn release(s: *Stream, phase: Phase) void {
    disarmTimer(s);
    if (s.handle) |handle| c.panto_stream_free(handle);
    forget(s);
    s.phase = phase;
    s.round.live = 0; // the coroutines of its round are let go (tool_runs.abandon)
    s.round.started = false;
}

/// The handle, for a use by this thread that ends with doneWith(s); null when close_after's
/// timer freed it (see timer.zig): then the stream failed with "canceled" (timerClosed).
/// Without a close timer, one branch.
pub fn useHandle(s: *Stream) ?*c.PantoStream {
    const t = s.timer orelse return s.handle;
    if (t.action != .close) return s.handle;
    return t.enter();
}

pub fn doneWith(s: *Stream) void {
    const t = s.timer orelse return;
    if (t.action == .close) t.leave();
}

/// close_after's timer freed the stream while this thread was not using it: the turn fails
/// with "canceled", as when the timer fires during a next(). Raises it. The stream's value
/// is at `si`.
fn timerClosed(L: State, s: *Stream, si: c_int) noreturn {
    disarmTimer(s); // the timer's thread is done: this only joins it
    forget(s);
    tool_runs.abandon(L, &s.round, si);
    var err = errors.newError();
    err.code = c.PANTO_ERR_CANCELED;
    err.type = .{ .ptr = "canceled_error", .len = "canceled_error".len };
    const msg = "the stream was freed by close_after before the turn ended";
    err.message = .{ .ptr = msg, .len = msg.len };
    errors.pushError(L, &err, c.PANTO_ERR_CANCELED);
    c.lua_pushvalue(L, -1);
    _ = c.lua_setiuservalue(L, si, uv_error);
    s.phase = .failed;
    _ = c.lua_error(L);
    unreachable;
}

/// What one panto_next_event (or panto_step_event) gave.
const Fetched = enum {
    /// The event's table, or nil once the turn is over, is at the top.
    value,
    /// PANTO_ERR_RESULT_PENDING: a host tool call awaits its result. Nothing pushed.
    pending,
    /// PANTO_WOULD_BLOCK (a step only): the wait it filled says what to wait for.
    would_block,
    /// PANTO_ERR_APPROVAL_PENDING: a call the approval_request listed waits for
    /// stream:approve / stream:deny. Nothing pushed.
    approval_pending,
};

/// The stream's turn goes on: reads the next event (with `wait`, steps: never waits); raises
/// the turn's error. The stream's value is at index `si` (a stack index or, in the iterator of
/// events(), its upvalue).
fn fetch(L: State, s: *Stream, si: c_int, wait: ?*c.PantoWait) Fetched {
    // panto_next_event fills every field of an event of its size: nothing to clear first.
    var ev: c.PantoEvent = undefined;
    ev.size = @sizeOf(c.PantoEvent);
    const handle = useHandle(s) orelse timerClosed(L, s, si);
    const rc = if (wait) |w| c.panto_step_event(handle, &ev, w) else c.panto_next_event(handle, &ev);
    if (rc == c.PANTO_WOULD_BLOCK) {
        doneWith(s);
        return .would_block;
    }
    if (rc == c.PANTO_EVENT) {
        // The event's strings are the stream's: copied while it is in use.
        events.pushEvent(L, &ev);
        doneWith(s);
        switch (ev.kind) {
            c.PANTO_EVENT_TOOL_CALL_START => if (ev.awaiting_result != 0 and s.run_tools) tool_runs.add(L, &s.round, si),
            c.PANTO_EVENT_MESSAGE_START => if (ev.request_id.len > 0) addRequestId(L, si),
            c.PANTO_EVENT_APPROVAL_REQUEST => noteAsked(L, si),
            else => {},
        }
        return .value;
    }
    if (rc == c.PANTO_DONE) {
        doneWith(s);
        // The turn is over: the timer has nothing left to do. The handle stays for
        // final_message (its agent's next turn frees it).
        disarmTimer(s);
        s.phase = .done;
        c.lua_pushnil(L);
        return .value;
    }
    if (rc == c.PANTO_ERR_RESULT_PENDING) {
        doneWith(s);
        return .pending;
    }
    if (rc == c.PANTO_ERR_APPROVAL_PENDING) {
        doneWith(s);
        // The agent's approval function answers, and the turn goes on.
        if (decideApprovals(L, s, si)) return fetch(L, s, si, wait);
        return .approval_pending;
    }
    if (rc >= 0) {
        doneWith(s);
        _ = c.luaL_error(L, "panto_next_event returned the unexpected status %d", rc);
        unreachable;
    }
    var err = errors.newError();
    // Read and copied while in use: a close_after timer that fired frees the stream after.
    _ = c.panto_stream_error(handle, &err);
    errors.pushError(L, &err, rc);
    doneWith(s);
    // next() on a stream step() reads, or step() on one next() read: refused, the stream
    // unchanged (not sticky), as the C ABI says.
    if (rc == c.PANTO_ERR_STATE) _ = c.lua_error(L);
    c.lua_pushvalue(L, -1);
    _ = c.lua_setiuservalue(L, si, uv_error);
    // The handle stays for reopen() (unless close_after's timer freed it); the core closed
    // the connection already. The round's coroutines are let go.
    disarmTimer(s);
    s.phase = .failed;
    tool_runs.abandon(L, &s.round, si);
    _ = c.lua_error(L);
    unreachable;
}

/// Pushes the agent's approval function (the handlers table's `true`), or nil; returns
/// whether there is one.
fn pushApprovalFunction(L: State, si: c_int) bool {
    if (c.lua_getiuservalue(L, si, uv_handlers) != c.LUA_TTABLE) {
        pop(L, 1);
        c.lua_pushnil(L);
        return false;
    }
    c.lua_pushboolean(L, 1);
    const kind = c.lua_rawget(L, -2);
    c.lua_remove(L, -2);
    return kind == c.LUA_TFUNCTION;
}

/// With an approval function: keeps the calls of the approval_request event at the top, for
/// decideApprovals.
fn noteAsked(L: State, si: c_int) void {
    const has = pushApprovalFunction(L, si);
    pop(L, 1);
    if (!has) return;
    const ev = c.lua_absindex(L, -1);
    if (c.lua_getiuservalue(L, si, uv_asked) != c.LUA_TTABLE) {
        pop(L, 1);
        c.lua_createtable(L, 2, 0);
        c.lua_pushvalue(L, -1);
        _ = c.lua_setiuservalue(L, si, uv_asked);
    }
    _ = c.lua_getfield(L, ev, "calls");
    const n = c.lua_rawlen(L, -1);
    var i: c.lua_Integer = 1;
    while (i <= n) : (i += 1) {
        _ = c.lua_rawgeti(L, -1, i);
        c.lua_rawseti(L, -3, @intCast(c.lua_rawlen(L, -3) + 1));
    }
    pop(L, 2);
}

/// The agent's approval function answers each call the stream's approval_request events
/// listed: `true` approves; `false [, reason]` denies (the model reads the reason); an error
/// in it denies with its message. false when there is no function, or nothing to answer.
fn decideApprovals(L: State, s: *Stream, si: c_int) bool {
    const top = c.lua_gettop(L);
    defer c.lua_settop(L, top);
    if (!pushApprovalFunction(L, si)) return false;
    const func = c.lua_absindex(L, -1);
    if (c.lua_getiuservalue(L, si, uv_asked) != c.LUA_TTABLE or c.lua_rawlen(L, -1) == 0) return false;
    const asked = c.lua_absindex(L, -1);
    c.lua_pushnil(L);
    _ = c.lua_setiuservalue(L, si, uv_asked); // (answered below, whatever happens)
    const n = c.lua_rawlen(L, asked);
    var i: c.lua_Integer = 1;
    while (i <= n) : (i += 1) {
        const base = c.lua_gettop(L);
        _ = c.lua_rawgeti(L, asked, i); // the call
        _ = c.lua_getfield(L, -1, "id");
        const id = h.toPantoString(L, -1); // (kept on the stack while used)
        c.lua_pushvalue(L, func);
        c.lua_pushvalue(L, base + 1);
        var approved = false;
        var reason: c.PantoString = .{ .ptr = null, .len = 0 };
        if (c.lua_pcallk(L, 1, 2, 0, 0, null) == c.LUA_OK) {
            approved = c.lua_toboolean(L, -2) != 0;
            if (!approved and c.lua_type(L, -1) == c.LUA_TSTRING) reason = h.toPantoString(L, -1);
        } else {
            _ = c.lua_pushfstring(L, "the approval function failed: %s", c.luaL_tolstring(L, -1, null));
            reason = h.toPantoString(L, -1);
        }
        const handle = useHandle(s) orelse return false;
        _ = if (approved) c.panto_stream_approve(handle, id) else c.panto_stream_deny(handle, id, reason);
        doneWith(s);
        c.lua_settop(L, base);
    }
    return true;
}

/// Raises "result_pending": a call awaits a result that no handler of this stream gives.
fn raisePending(L: State) c_int {
    pushSimpleError(L, c.PANTO_ERR_RESULT_PENDING, "a tool call awaits its result: give it with stream:submit_tool_result(id, content) before the next event");
    return c.lua_error(L);
}

/// next()'s `nil, "approval_pending"`: a call the approval_request listed waits for its answer
/// (stream:approve / stream:deny), then next() goes on. Not an error: nothing changed.
fn approvalPending(L: State) c_int {
    c.lua_settop(L, 0);
    c.lua_pushnil(L);
    _ = c.lua_pushstring(L, "approval_pending");
    return 2;
}

/// The MESSAGE_START event at the top has a request id: appended to the stream's list.
fn addRequestId(L: State, si: c_int) void {
    const ev = c.lua_absindex(L, -1);
    if (c.lua_getiuservalue(L, si, uv_request_ids) != c.LUA_TTABLE) {
        pop(L, 1);
        c.lua_createtable(L, 2, 0);
        c.lua_pushvalue(L, -1);
        _ = c.lua_setiuservalue(L, si, uv_request_ids);
    }
    _ = events.pushField(L, ev, .request_id);
    c.lua_rawseti(L, -2, @intCast(c.lua_rawlen(L, -2) + 1));
    pop(L, 1);
}

/// stream:next(): the next event table, nil once the turn is over (and again after), or
/// raises the turn's panto.Error (the same table again on every later call). Before reading
/// on, runs the handler of the tool call the previous event announced.
fn streamNext(L: State) callconv(.c) c_int {
    const s = toStreamInMethod(L, 1);
    c.lua_settop(L, 1);
    return nextOf(L, s);
}

/// toStream in a stream method, which has the stream metatable as an upvalue: what
/// luaL_checkudata checks, without looking the metatable up by name in the registry.
fn toStreamInMethod(L: State, idx: c_int) *Stream {
    if (c.lua_type(L, idx) == c.LUA_TUSERDATA and c.lua_getmetatable(L, idx) != 0) {
        const same = c.lua_rawequal(L, -1, events.stream_metatable_upvalue) != 0;
        pop(L, 1);
        if (same) return @ptrCast(@alignCast(c.lua_touserdata(L, idx).?));
    }
    return toStream(L, idx); // raises the usual bad-argument error
}

/// The iterator of stream:events(): next() of the stream in the upvalue after the method
/// upvalues (so the generic for's arguments need no type check). An event of an open turn
/// with no tool call to run first, the usual case, is read with the stream left in its
/// upvalue: the for loop's arguments stay below the result, unread.
fn streamIterate(L: State) callconv(.c) c_int {
    const si = c.lua_upvalueindex(method_upvalues + 1);
    const s: *Stream = @ptrCast(@alignCast(c.lua_touserdata(L, si).?));
    if (s.phase == .open and s.round.live == 0 and !s.round.in_handler) {
        return switch (fetch(L, s, si, null)) {
            .value => 1,
            .pending => raisePending(L),
            .approval_pending => approvalPending(L),
            .would_block => unreachable, // (a step only)
        };
    }
    c.lua_settop(L, 0);
    c.lua_pushvalue(L, si);
    return nextOf(L, s);
}

/// next() of the stream at index 1, the only value on the stack. Once the round's
/// TOOL_CALL_STARTs are read, a pass over its tool calls before each read; while panto waits
/// for their results, sleeps until one of them may go on.
pub fn nextOf(L: State, s: *Stream) c_int {
    if (s.round.in_handler) return c.luaL_error(L, "panto: a tool handler cannot read the stream its call came from");
    while (true) {
        c.lua_settop(L, 1);
        if (s.phase != .open) return dispatch(L, s);
        if (s.round.live > 0 and s.round.started) {
            tool_runs.runPass(L, &s.round, 1);
            if (s.phase != .open) return dispatch(L, s); // a handler closed the stream
        }
        switch (fetch(L, s, 1, null)) {
            .value => return 1,
            .pending => {
                if (s.round.live == 0) return raisePending(L);
                if (s.round.started) waitForCalls(L, s, 1) else s.round.started = true;
            },
            .approval_pending => return approvalPending(L),
            .would_block => unreachable, // (a step only)
        }
    }
}

/// stream:step(): next() that never waits (panto_step_event), for a program that drives many
/// streams on one event loop. Returns the next event table, or nil once the turn is over, or
/// raises the turn's error, as next() does; where next() would wait, returns `nil, fd, dir,
/// deadline`: step again once the descriptor `fd` is ready for `dir` ("r" readable, "w"
/// writable) or at `deadline` (seconds on panto.monotonic's clock, CLOCK_MONOTONIC), whichever
/// comes first. `fd` is false (and `dir` nil) when there is only the deadline, `deadline` nil
/// when there is none. While the handlers of a tool round wait (panto.sleep), the wait is
/// theirs: no descriptor, the deadline of the earliest. Handlers run inside step() as they
/// do inside next().
fn streamStep(L: State) callconv(.c) c_int {
    const s = toStreamInMethod(L, 1);
    c.lua_settop(L, 1);
    if (s.round.in_handler) return c.luaL_error(L, "panto: a tool handler cannot read the stream its call came from");
    while (true) {
        c.lua_settop(L, 1);
        if (s.phase != .open) return dispatch(L, s);
        if (s.round.live > 0 and s.round.started) {
            tool_runs.runPass(L, &s.round, 1);
            if (s.phase != .open) return dispatch(L, s); // a handler closed the stream
        }
        var wait: c.PantoWait = .{ .size = @sizeOf(c.PantoWait), .fd = -1, .events = 0, .reserved0 = 0, .deadline_ns = -1 };
        switch (fetch(L, s, 1, &wait)) {
            .value => return 1,
            .approval_pending => return approvalPending(L),
            .would_block => return pushWait(L, wait.fd, wait.events, if (wait.deadline_ns < 0) null else @as(f64, @floatFromInt(wait.deadline_ns)) / std.time.ns_per_s),
            .pending => {
                if (s.round.live == 0) return raisePending(L);
                if (!s.round.started) {
                    s.round.started = true;
                    continue;
                }
                // The handlers wait: step again at the earliest one's wake-up (at once when a
                // call waits to start), sooner while a timer may cancel the turn.
                const now = tool_runs.now();
                var deadline = @min(tool_runs.earliestWake(L, 1), std.math.floatMax(f64));
                if (deadline == std.math.floatMax(f64)) deadline = now;
                if (s.timer != null) deadline = @min(deadline, now + timer_slice_s);
                return pushWait(L, -1, 0, deadline);
            },
        }
    }
}

/// Pushes step()'s `nil, fd, dir, deadline` (fd -1: false; deadline null: nil).
fn pushWait(L: State, fd: c_int, wanted: u32, deadline: ?f64) c_int {
    c.lua_settop(L, 0);
    c.lua_pushnil(L);
    if (fd < 0) {
        c.lua_pushboolean(L, 0);
        c.lua_pushnil(L);
    } else {
        c.lua_pushinteger(L, fd);
        _ = c.lua_pushstring(L, if (wanted & @as(u32, @intCast(c.PANTO_WAIT_WRITE)) != 0) "w" else "r");
    }
    if (deadline) |d| c.lua_pushnumber(L, d) else c.lua_pushnil(L);
    return 4;
}

fn dispatch(L: State, s: *Stream) c_int {
    switch (s.phase) {
        .open => unreachable,
        .done => {
            c.lua_pushnil(L);
            return 1;
        },
        .failed => {
            _ = c.lua_getiuservalue(L, 1, uv_error);
            return c.lua_error(L);
        },
        .closed => return c.luaL_error(L, "attempt to use a closed %s", tname),
    }
}

/// Submits the result of the call whose id is the string at `id`: the string at `content`,
/// as it is (NUL bytes included: what it may hold is panto's to judge), and the parts in the
/// box at `parts_box` (nil: none). On a failure, pushes its panto.Error (the stream's detail).
/// The stream's value is at `si`.
pub fn submit(L: State, s: *Stream, si: c_int, id: c_int, content: c_int, parts_box: c_int, is_error: bool) c_int {
    const given = parts.ofBox(L, parts_box);
    const result: c.PantoToolResult = .{
        .size = @sizeOf(c.PantoToolResult),
        .is_error = @intFromBool(is_error),
        .call_id = h.toPantoString(L, id),
        .content = h.toPantoString(L, content),
        .parts = given.ptr,
        .part_count = given.len,
    };
    const handle = useHandle(s) orelse timerClosed(L, s, si);
    const rc = c.panto_stream_submit_tool_result(handle, &result);
    if (rc < 0) pushStreamError(L, handle, rc);
    doneWith(s);
    return rc;
}

/// Pushes the detail of the stream's last failed call (panto_stream_error) as a panto.Error.
pub fn pushStreamError(L: State, handle: *c.PantoStream, rc: c_int) void {
    var err = errors.newError();
    _ = c.panto_stream_error(handle, &err);
    errors.pushError(L, &err, rc);
}

/// Queues a TOOL_PROGRESS event for the call whose id is the string at `id` (panto.progress).
/// On a failure, pushes its panto.Error.
pub fn toolProgress(L: State, s: *Stream, id: c_int, text: c.PantoString, fraction: f64) c_int {
    const handle = useHandle(s) orelse return c.PANTO_ERR_NO_SUCH_CALL; // freed by close_after
    const rc = c.panto_stream_tool_progress(handle, h.toPantoString(L, id), text, fraction);
    if (rc < 0) pushStreamError(L, handle, rc);
    doneWith(s);
    return rc;
}

/// pushResult of the value at 1, for a protected call.
fn resultOf(L: State) callconv(.c) c_int {
    parts.pushResult(L, 1);
    return 2;
}

/// stream:submit_tool_result(id, content [, is_error]): gives the result of a tool call
/// announced by a tool_call_start event with awaiting_result. `content` is what a handler may
/// return: a string, media, {text =, attachments =}, a list of parts (other values are sent
/// as JSON). Raises a bad-argument error for content that cannot be sent (nothing is sent:
/// the call still awaits its result), a panto.Error with code "no_such_call" when no call with
/// that id awaits a result.
fn streamSubmit(L: State) callconv(.c) c_int {
    const s = toStream(L, 1);
    c.luaL_checktype(L, 2, c.LUA_TSTRING);
    c.luaL_checkany(L, 3);
    const is_error = optBoolean(L, 4);
    c.lua_settop(L, 3);
    c.lua_pushvalue(L, 3);
    if (!protectedCall(L, resultOf, 1, 2)) {
        const msg: [*c]const u8 = if (c.lua_type(L, -1) == c.LUA_TSTRING) c.lua_tolstring(L, -1, null) else "cannot be sent";
        return c.luaL_argerror(L, 3, msg);
    }
    // Stack: stream, id, value, content (4), parts (5).
    checkAwaiting(L, s);
    if (submit(L, s, 1, 2, 4, 5, is_error) < 0) return c.lua_error(L);
    // Answered by hand: the handler of that call does not run.
    tool_runs.answeredByHand(L, &s.round, 1, 2);
    return 0;
}

/// Raises unless the stream's turn is running, so that a call may await its result.
fn checkAwaiting(L: State, s: *Stream) void {
    switch (s.phase) {
        .open => {},
        .closed => _ = c.luaL_error(L, "attempt to use a closed %s", tname),
        .done, .failed => {
            pushSimpleError(L, c.PANTO_ERR_NO_SUCH_CALL, "the turn is over: no tool call awaits a result");
            _ = c.lua_error(L);
        },
    }
}

/// stream:approve(id) / stream:deny(id [, reason]): answers a call an approval_request event
/// listed. Approved, its tool_call_start comes next and its handler runs as any call's;
/// denied, its result is an error telling the model the reason. Raises a panto.Error with code
/// "invalid_argument" when no call with that id waits for an answer.
fn streamApprove(L: State) callconv(.c) c_int {
    return answer(L, false);
}

fn streamDeny(L: State) callconv(.c) c_int {
    return answer(L, true);
}

fn answer(L: State, deny: bool) c_int {
    const s = toStream(L, 1);
    c.luaL_checktype(L, 2, c.LUA_TSTRING);
    const reason = if (deny) h.optPantoString(L, 3) else c.PantoString{ .ptr = null, .len = 0 };
    if (s.phase == .closed) return c.luaL_error(L, "attempt to use a closed %s", tname);
    const handle = useHandle(s) orelse {
        pushSimpleError(L, c.PANTO_ERR_INVALID_ARGUMENT, "the stream was freed: no call waits for an answer");
        return c.lua_error(L);
    };
    const id = h.toPantoString(L, 2);
    const rc = if (deny) c.panto_stream_deny(handle, id, reason) else c.panto_stream_approve(handle, id);
    if (rc < 0) pushStreamError(L, handle, rc);
    doneWith(s);
    if (rc < 0) return c.lua_error(L);
    return 0;
}

/// stream:steer(text) / stream:follow_up(text): says something to the running turn. A steer
/// joins the conversation after the current tool round's results (the same user message);
/// with no round left, and a follow-up always, it starts a new turn of this stream once the
/// current one ends (next() goes on past its message_complete). A user_message event marks
/// where each entered. Raises a panto.Error with code "invalid_argument" for an empty text,
/// "state" once the stream's turns are over (run a new turn).
fn streamSteer(L: State) callconv(.c) c_int {
    return queueMessage(L, false);
}

fn streamFollowUp(L: State) callconv(.c) c_int {
    return queueMessage(L, true);
}

fn queueMessage(L: State, follow_up: bool) c_int {
    const s = toStream(L, 1);
    c.luaL_checktype(L, 2, c.LUA_TSTRING);
    if (s.phase == .closed) return c.luaL_error(L, "attempt to use a closed %s", tname);
    const handle = useHandle(s) orelse {
        pushSimpleError(L, c.PANTO_ERR_STATE, "the stream's turns are over: run a new turn");
        return c.lua_error(L);
    };
    const text = h.toPantoString(L, 2);
    const rc = if (follow_up) c.panto_stream_follow_up(handle, text) else c.panto_stream_steer(handle, text);
    doneWith(s);
    switch (rc) {
        c.PANTO_OK => return 0,
        c.PANTO_ERR_INVALID_ARGUMENT => pushSimpleError(L, rc, "the message is empty"),
        c.PANTO_ERR_STATE => pushSimpleError(L, rc, "the stream's turns are over: run a new turn"),
        else => pushSimpleError(L, rc, "the message could not be queued"),
    }
    return c.lua_error(L);
}

/// stream:withdraw_queued(): takes back the steers and follow-ups queued that the stream has
/// not taken yet (they will not reach the model); returns them in the order queued, an array
/// of {source = "steer" | "follow_up", text = ...} (empty when none is left, or the stream is
/// over). Raises a panto.Error when the library fails (out of memory).
fn streamWithdrawQueued(L: State) callconv(.c) c_int {
    const s = toStream(L, 1);
    if (s.phase == .closed) return c.luaL_error(L, "attempt to use a closed %s", tname);
    const handle = useHandle(s) orelse {
        c.lua_createtable(L, 0, 0);
        return 1;
    };
    var out: c.PantoString = .{ .ptr = null, .len = 0 };
    const rc = c.panto_stream_withdraw_queued(handle, &out);
    doneWith(s);
    if (rc < 0) {
        pushSimpleError(L, rc, "the queued messages could not be taken back");
        return c.lua_error(L);
    }
    const Taken = struct { source: []const u8, text: []const u8 };
    const json_text = if (out.len == 0) "[]" else h.slice(out);
    const parsed = std.json.parseFromSlice([]const Taken, std.heap.c_allocator, json_text, .{}) catch {
        pushSimpleError(L, c.PANTO_ERR_OUT_OF_MEMORY, "the queued messages could not be read");
        return c.lua_error(L);
    };
    defer parsed.deinit();
    c.lua_createtable(L, @intCast(parsed.value.len), 0);
    for (parsed.value, 1..) |m, i| {
        c.lua_createtable(L, 0, 2);
        _ = c.lua_pushlstring(L, m.source.ptr, m.source.len);
        c.lua_setfield(L, -2, "source");
        _ = c.lua_pushlstring(L, m.text.ptr, m.text.len);
        c.lua_setfield(L, -2, "text");
        c.lua_rawseti(L, -2, @intCast(i));
    }
    return 1;
}

/// stream:tool_progress(id, [text [, fraction]]): reports progress of a call answered by hand
/// (run_tools = false, a tool without a handler) that awaits its result: a tool_progress event
/// comes next. Raises a panto.Error with code "no_such_call" when no call with that id awaits a
/// result. (A handler reports with panto.progress.)
fn streamToolProgress(L: State) callconv(.c) c_int {
    const s = toStream(L, 1);
    c.luaL_checktype(L, 2, c.LUA_TSTRING);
    const text = h.optPantoString(L, 3);
    const fraction = tool_runs.checkFraction(L, 4);
    checkAwaiting(L, s);
    if (toolProgress(L, s, 2, text, fraction) < 0) return c.lua_error(L);
    return 0;
}

/// stream:events(): the generic-for quadruple `next, stream, nil, stream`. The fourth value is
/// to-be-closed, so leaving the loop early (break, error) closes the stream; a loop that ran
/// to the end leaves it readable (streamCloseScope).
fn streamEvents(L: State) callconv(.c) c_int {
    return pushForLoop(L, streamIterate);
}

/// The generic-for quadruple of the stream method at index 1 whose iterator is `iterate`: a
/// closure over the method upvalues and the stream, then the stream, nil and the stream (to
/// be closed).
pub fn pushForLoop(L: State, iterate: c.lua_CFunction) c_int {
    const s = toStream(L, 1);
    if (s.phase == .closed) return c.luaL_error(L, "attempt to use a closed %s", tname);
    events.pushOwnUpvalues(L);
    c.lua_pushvalue(L, 1);
    c.lua_pushcclosure(L, iterate, method_upvalues + 1);
    c.lua_pushvalue(L, 1);
    c.lua_pushnil(L);
    c.lua_pushvalue(L, 1);
    return 4;
}

/// stream:close(), __close and __gc: frees the stream. An unfinished turn ends by panto's
/// close policy (include/panto.h): what the model had said stays in the conversation (stop
/// reason "aborted"). No event is read ahead, so none is given back first. Safe to call more
/// than once.
fn streamClose(L: State) callconv(.c) c_int {
    const s = toStream(L, 1);
    if (s.phase != .closed) release(s, .closed);
    tool_runs.abandon(L, &s.round, 1);
    return 0;
}

/// __close: the end of a to-be-closed variable or of a generic for over events() or text().
/// Closes an unfinished turn (a break) as close() does; a finished one stays readable, so
/// that final_message() and request_ids() work after the loop (its agent's next turn, or the
/// garbage collector, frees it).
fn streamCloseScope(L: State) callconv(.c) c_int {
    if (toStream(L, 1).phase == .done) return 0;
    return streamClose(L);
}

/// stream:cancel(): cancels the turn; the next next() raises a panto.Error with code
/// "canceled" and what the model had said stays in the conversation (stop reason "aborted").
/// Harmless on a turn that is over or a closed stream.
fn streamCancel(L: State) callconv(.c) c_int {
    const s = toStream(L, 1);
    if (s.phase == .open) {
        if (useHandle(s)) |handle| {
            _ = c.panto_stream_cancel(handle);
            doneWith(s);
        }
    }
    return 0;
}

/// stream:cancel_after(ms): cancels the turn `ms` milliseconds from now, from a native thread,
/// so that a next() blocked meanwhile returns (raising "canceled"). One timer per stream: a
/// second call (of this or close_after) replaces the first. The timer stops when the turn ends
/// or the stream is closed. Returns the stream.
fn streamCancelAfter(L: State) callconv(.c) c_int {
    return armTimer(L, .cancel);
}

/// stream:close_after(ms): frees the stream `ms` milliseconds from now, from a native thread:
/// the close policy, as close() would, while a next() may be blocked (it then raises
/// "canceled", and so does every later next()). Otherwise like cancel_after.
fn streamCloseAfter(L: State) callconv(.c) c_int {
    return armTimer(L, .close);
}

fn armTimer(L: State, action: timer.Action) c_int {
    const s = toStream(L, 1);
    const ms = c.luaL_checknumber(L, 2);
    if (!(ms >= 0 and ms <= timer.max_ms)) _ = c.luaL_argerror(L, 2, "ms must be a number from 0 to 30 days");
    c.lua_settop(L, 1);
    switch (s.phase) {
        .closed => return c.luaL_error(L, "attempt to use a closed %s", tname),
        .done, .failed => return 1, // nothing left to cancel
        .open => {},
    }
    disarmTimer(s);
    const handle = s.handle orelse return 1; // freed by the timer just disarmed
    s.timer = Timer.arm(handle, action, ms) orelse return c.luaL_error(L, "panto: cannot start a timer thread");
    return 1;
}

/// stream:reopen(): runs a turn that failed at the provider-open boundary (an HTTP error
/// answer, a connection failure before any event) again, typically after agent:set_config.
/// Returns true; raises a panto.Error with code "state" when the turn did not fail that way,
/// "busy" when another stream of the agent is unfinished.
fn streamReopen(L: State) callconv(.c) c_int {
    const s = toStream(L, 1);
    c.lua_settop(L, 1);
    const handle = switch (s.phase) {
        .closed => return c.luaL_error(L, "attempt to use a closed %s", tname),
        .done => null,
        .open, .failed => useHandle(s),
    } orelse {
        pushSimpleError(L, c.PANTO_ERR_STATE, "the turn is over: only a turn that failed when opening the provider call can be reopened");
        return c.lua_error(L);
    };
    const rc = c.panto_stream_reopen(handle);
    if (rc < 0) pushStreamError(L, handle, rc);
    doneWith(s);
    if (rc < 0) return c.lua_error(L);
    s.phase = .open;
    c.lua_pushnil(L);
    _ = c.lua_setiuservalue(L, 1, uv_error);
    tool_runs.abandon(L, &s.round, 1);
    c.lua_pushboolean(L, 1);
    return 1;
}

fn streamToString(L: State) callconv(.c) c_int {
    const s = toStream(L, 1);
    switch (s.phase) {
        .closed => _ = c.lua_pushstring(L, "panto.Stream (closed)"),
        .open => _ = c.lua_pushfstring(L, "panto.Stream (%p)", @as(*const anyopaque, s)),
        .done => _ = c.lua_pushfstring(L, "panto.Stream (%p, done)", @as(*const anyopaque, s)),
        .failed => _ = c.lua_pushfstring(L, "panto.Stream (%p, failed)", @as(*const anyopaque, s)),
    }
    return 1;
}

const meta = [_]c.luaL_Reg{
    h.reg("__gc", streamClose),
    h.reg("__close", streamCloseScope),
    h.reg("__tostring", streamToString),
    h.reg_end,
};
const methods = [_]c.luaL_Reg{
    h.reg("next", streamNext),
    h.reg("step", streamStep),
    h.reg("events", streamEvents),
    h.reg("submit_tool_result", streamSubmit),
    h.reg("tool_progress", streamToolProgress),
    h.reg("approve", streamApprove),
    h.reg("deny", streamDeny),
    h.reg("steer", streamSteer),
    h.reg("follow_up", streamFollowUp),
    h.reg("withdraw_queued", streamWithdrawQueued),
    h.reg("cancel", streamCancel),
    h.reg("cancel_after", streamCancelAfter),
    h.reg("close_after", streamCloseAfter),
    h.reg("reopen", streamReopen),
    h.reg("close", streamClose),
} ++ stream_helpers.methods ++ [_]c.luaL_Reg{h.reg_end};

pub fn open(L: State) void {
    h.createMetatable(L, tname, &meta, &methods, events.pushMethodUpvalues);
}
