//! panto.Stream: one turn. next() and the events() iterator read its events (one
//! panto_next_event a call), run the handlers of awaited tool calls between two events, and
//! raise the turn's error; close(), __close and __gc free it.

const std = @import("std");
const c = @import("c");
const h = @import("helpers.zig");
const errors = @import("errors.zig");
const events = @import("events.zig");
const parts = @import("parts.zig");
const timer = @import("timer.zig");
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
const uv_pending = 3; // the tool call to run before the next event
const uv_handlers = 4; // the agent's table tool name -> handler function
const user_values = 4;

/// Indices in a pending call table.
const pending_id = 1;
const pending_name = 2;
const pending_event = 3;
const pending_handler = 4;

pub const Phase = enum(u8) {
    /// Holds a C handle; the turn has not ended.
    open,
    /// The turn ended: next() returns nil. The C handle is already freed.
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
    /// User value 3 may hold a pending tool call (set with it): next() looks only then.
    may_have_pending: bool = false,
};

/// The streams of an agent that still hold a C handle, so that agent:close() closes them.
pub const List = struct {
    first: ?*Stream = null,

    pub fn closeAll(list: *List) void {
        while (list.first) |s| release(s, .closed);
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

fn toStream(L: State, idx: c_int) *Stream {
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
}

/// The handle, for a use by this thread that ends with doneWith(s); null when close_after's
/// timer freed it (see timer.zig): then the stream failed with "canceled" (timerClosed).
/// Without a close timer, one branch.
fn useHandle(s: *Stream) ?*c.PantoStream {
    const t = s.timer orelse return s.handle;
    if (t.action != .close) return s.handle;
    return t.enter();
}

fn doneWith(s: *Stream) void {
    const t = s.timer orelse return;
    if (t.action == .close) t.leave();
}

/// close_after's timer freed the stream while this thread was not using it: the turn fails
/// with "canceled", as when the timer fires during a next(). Raises it. The stream's value
/// is at `si`.
fn timerClosed(L: State, s: *Stream, si: c_int) noreturn {
    disarmTimer(s); // the timer's thread is done: this only joins it
    forget(s);
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

/// The stream's turn goes on: reads the next event. The stream's value is at index `si` (a
/// stack index or, in the iterator of events(), its upvalue).
fn fetchEvent(L: State, s: *Stream, si: c_int) c_int {
    // panto_next_event fills every field of an event of its size: nothing to clear first.
    var ev: c.PantoEvent = undefined;
    ev.size = @sizeOf(c.PantoEvent);
    const handle = useHandle(s) orelse timerClosed(L, s, si);
    const rc = c.panto_next_event(handle, &ev);
    if (rc == c.PANTO_EVENT) {
        // The event's strings are the stream's: copied while it is in use.
        events.pushEvent(L, &ev);
        doneWith(s);
        if (ev.kind == c.PANTO_EVENT_TOOL_CALL_START and ev.awaiting_result != 0 and s.run_tools)
            rememberCall(L, s, si);
        return 1;
    }
    if (rc == c.PANTO_DONE) {
        doneWith(s);
        // The turn is over: free the stream (and its connection) now rather than at __gc.
        release(s, .done);
        c.lua_pushnil(L);
        return 1;
    }
    if (rc == c.PANTO_ERR_RESULT_PENDING) {
        doneWith(s);
        // Not sticky: the stream is unchanged.
        pushSimpleError(L, rc, "a tool call awaits its result: give it with stream:submit_tool_result(id, content) before the next event");
        return c.lua_error(L);
    }
    if (rc >= 0) {
        doneWith(s);
        return c.luaL_error(L, "panto_next_event returned the unexpected status %d", rc);
    }
    var err = errors.newError();
    // Read and copied while in use: a close_after timer that fired frees the stream after.
    _ = c.panto_stream_error(handle, &err);
    errors.pushError(L, &err, rc);
    doneWith(s);
    c.lua_pushvalue(L, -1);
    _ = c.lua_setiuservalue(L, si, uv_error);
    // The handle stays for reopen() (unless close_after's timer freed it); the core closed
    // the connection already.
    disarmTimer(s);
    s.phase = .failed;
    return c.lua_error(L);
}

/// The TOOL_CALL_START event at the top awaits a result: when its tool has a handler, the next
/// next() runs it. The stream's value at `si` (see fetchEvent).
fn rememberCall(L: State, s: *Stream, si: c_int) void {
    const ev = c.lua_absindex(L, -1);
    if (c.lua_getiuservalue(L, si, uv_handlers) != c.LUA_TTABLE) return pop(L, 1);
    _ = c.lua_getfield(L, ev, "name");
    if (c.lua_rawget(L, -2) == c.LUA_TNIL) return pop(L, 2);
    c.lua_createtable(L, 4, 0);
    c.lua_rotate(L, -2, 1);
    c.lua_rawseti(L, -2, pending_handler);
    _ = c.lua_getfield(L, ev, "id");
    c.lua_rawseti(L, -2, pending_id);
    _ = c.lua_getfield(L, ev, "name");
    c.lua_rawseti(L, -2, pending_name);
    c.lua_pushvalue(L, ev);
    c.lua_rawseti(L, -2, pending_event);
    _ = c.lua_setiuservalue(L, si, uv_pending);
    s.may_have_pending = true;
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
    if (s.phase == .open and !s.may_have_pending) return fetchEvent(L, s, si);
    c.lua_settop(L, 0);
    c.lua_pushvalue(L, si);
    return nextOf(L, s);
}

/// next() of the stream at index 1, the only value on the stack.
fn nextOf(L: State, s: *Stream) c_int {
    if (s.phase == .open and s.may_have_pending and c.lua_getiuservalue(L, 1, uv_pending) == c.LUA_TTABLE) {
        s.may_have_pending = false;
        // Stack: stream, pending call. It runs once, whatever happens.
        c.lua_pushnil(L);
        _ = c.lua_setiuservalue(L, 1, uv_pending);
        _ = c.lua_rawgeti(L, 2, pending_handler); // 3
        _ = c.lua_rawgeti(L, 2, pending_event); // 5 after the next line
        _ = c.lua_getfield(L, -1, "input");
        c.lua_rotate(L, -2, 1); // handler, input, event
        // lua_pcallk: the handler may yield when next() runs in a coroutine.
        return toolDone(L, c.lua_pcallk(L, 2, 2, 0, 0, toolDone), 0);
    }
    c.lua_settop(L, 1);
    return dispatch(L, s);
}

fn dispatch(L: State, s: *Stream) c_int {
    switch (s.phase) {
        .open => return fetchEvent(L, s, 1),
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

/// The handler returned (or raised, or resumed after a yield): submits its result, then
/// reads on. Stack: stream, pending call, then the two results or the error value.
fn toolDone(L: State, status: c_int, ctx: c.lua_KContext) callconv(.c) c_int {
    _ = ctx;
    const s = toStream(L, 1);
    const ok = status == c.LUA_OK or status == c.LUA_YIELD;
    if (!ok) c.lua_settop(L, 3);
    // contentOf(ok, v1, v2) -> content, is_error, parts; protected, since __tostring may
    // raise, and so does a result that cannot be sent.
    c.lua_pushboolean(L, @intFromBool(ok));
    c.lua_rotate(L, 3, 1);
    c.lua_settop(L, 5);
    // Called with copies: the parts borrow the strings of the handler's value, which stays.
    c.lua_pushvalue(L, 3);
    c.lua_pushvalue(L, 4);
    c.lua_pushvalue(L, 5);
    if (!protectedCall(L, contentOf, 3, 3)) {
        const why: [*c]const u8 = if (c.lua_type(L, -1) == c.LUA_TSTRING) c.lua_tolstring(L, -1, null) else "an error value that is not a string";
        _ = c.lua_rawgeti(L, 2, pending_name);
        _ = c.lua_pushfstring(L, "panto: the result of tool '%s' cannot be sent: %s", c.lua_tolstring(L, -1, null), why);
        c.lua_pushboolean(L, 1);
        c.lua_pushnil(L);
    }
    // Stack top: content, is_error, parts.
    if (s.phase == .open) {
        _ = c.lua_rawgeti(L, 2, pending_id);
        const rc = submit(L, s, 1, -1, -4, -2, c.lua_toboolean(L, -3) != 0);
        // NO_SUCH_CALL: the handler answered the call itself, with submit_tool_result.
        if (rc < 0 and rc != c.PANTO_ERR_NO_SUCH_CALL) return c.lua_error(L);
    }
    c.lua_settop(L, 1);
    return dispatch(L, s); // the handler may have closed the stream
}

/// Submits the result of the call whose id is the string at `id`: the string at `content`,
/// as it is (NUL bytes included: what it may hold is panto's to judge), and the parts in the
/// box at `parts_box` (nil: none). On a failure, pushes its panto.Error (the stream's detail).
/// The stream's value is at `si`.
fn submit(L: State, s: *Stream, si: c_int, id: c_int, content: c_int, parts_box: c_int, is_error: bool) c_int {
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
fn pushStreamError(L: State, handle: *c.PantoStream, rc: c_int) void {
    var err = errors.newError();
    _ = c.panto_stream_error(handle, &err);
    errors.pushError(L, &err, rc);
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
    parts.pushResult(L, 2);
    c.lua_pushboolean(L, 0);
    c.lua_rotate(L, -2, 1);
    return 3;
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
    switch (s.phase) {
        .open => {},
        .closed => return c.luaL_error(L, "attempt to use a closed %s", tname),
        .done, .failed => {
            pushSimpleError(L, c.PANTO_ERR_NO_SUCH_CALL, "the turn is over: no tool call awaits a result");
            return c.lua_error(L);
        },
    }
    if (submit(L, s, 1, 2, 4, 5, is_error) < 0) return c.lua_error(L);
    // Answered by hand: the handler of that call does not run.
    if (c.lua_getiuservalue(L, 1, uv_pending) == c.LUA_TTABLE) {
        _ = c.lua_rawgeti(L, -1, pending_id);
        if (c.lua_rawequal(L, -1, 2) != 0) {
            c.lua_pushnil(L);
            _ = c.lua_setiuservalue(L, 1, uv_pending);
        }
    }
    return 0;
}

/// stream:events(): the generic-for quadruple `next, stream, nil, stream`. The fourth value is
/// to-be-closed, so leaving the loop early (break, error) closes the stream.
fn streamEvents(L: State) callconv(.c) c_int {
    const s = toStream(L, 1);
    if (s.phase == .closed) return c.luaL_error(L, "attempt to use a closed %s", tname);
    events.pushOwnUpvalues(L);
    c.lua_pushvalue(L, 1);
    c.lua_pushcclosure(L, streamIterate, method_upvalues + 1);
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
    c.lua_pushnil(L);
    _ = c.lua_setiuservalue(L, 1, uv_pending);
    return 0;
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
    c.lua_pushnil(L);
    _ = c.lua_setiuservalue(L, 1, uv_pending);
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
    h.reg("__close", streamClose),
    h.reg("__tostring", streamToString),
    h.reg_end,
};
const methods = [_]c.luaL_Reg{
    h.reg("next", streamNext),
    h.reg("events", streamEvents),
    h.reg("submit_tool_result", streamSubmit),
    h.reg("cancel", streamCancel),
    h.reg("cancel_after", streamCancelAfter),
    h.reg("close_after", streamCloseAfter),
    h.reg("reopen", streamReopen),
    h.reg("close", streamClose),
    h.reg_end,
};

pub fn open(L: State) void {
    h.createMetatable(L, tname, &meta, &methods, events.pushMethodUpvalues);
}
