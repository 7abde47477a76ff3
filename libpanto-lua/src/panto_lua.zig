//! The Lua 5.4 module `panto`: a Lua C module written in Zig on top of panto's C ABI
//! (include/panto.h). libpanto-lua/README.md documents the Lua API.
//!
//! Lua raises errors with longjmp, which skips Zig `defer`s and any cleanup a Zig frame would
//! do after the call that raised. So no function here holds a resource that only a Zig frame
//! knows about across a Lua call that can raise (argument checks, lua_push* when memory runs
//! out, lua_error): every C handle goes into its userdata, whose __gc frees it, the moment it
//! exists, and strings are built in Lua buffers.

const std = @import("std");
const c = @import("c"); // lua.h, lauxlib.h and panto.h, translated by build.zig

comptime {
    // Compiles the C ABI into this module: the extern functions of panto.h bind to its exports.
    _ = @import("panto_c");
}

const State = ?*c.lua_State;

const agent_tname: [*:0]const u8 = "panto.Agent";
const stream_tname: [*:0]const u8 = "panto.Stream";
const error_tname: [*:0]const u8 = "panto.Error";

/// User value slots of a stream userdata.
const uv_stream_agent = 1; // the agent userdata: keeps the agent alive while the stream is
const uv_stream_error = 2; // the error table of a failed turn, raised again by every next()

// ---- Userdata ---------------------------------------------------------------------------

const Agent = struct {
    handle: ?*c.PantoAgent,
    /// The agent's streams that still hold a C handle, so that closing the agent frees them
    /// first (panto.h: an agent's streams must be freed before the agent).
    streams: ?*Stream,
};

const Phase = enum(u8) {
    /// Holds a C handle; the turn has not ended.
    open,
    /// The turn ended: next() returns nil. The C handle is already freed.
    done,
    /// The turn failed: next() raises the error in user value 2. The C handle is freed.
    failed,
    /// Closed by close(), `__close`, `__gc` or the agent's close().
    closed,
};

const Stream = struct {
    handle: ?*c.PantoStream,
    phase: Phase,
    /// Set while `handle` is: the agent whose list links this stream.
    agent: ?*Agent,
    prev: ?*Stream,
    next: ?*Stream,
};

fn toAgent(L: State, idx: c_int) *Agent {
    return @ptrCast(@alignCast(c.luaL_checkudata(L, idx, agent_tname).?));
}

fn toStream(L: State, idx: c_int) *Stream {
    return @ptrCast(@alignCast(c.luaL_checkudata(L, idx, stream_tname).?));
}

fn checkOpenAgent(L: State, idx: c_int) *Agent {
    const a = toAgent(L, idx);
    if (a.handle == null) _ = c.luaL_error(L, "attempt to use a closed %s", agent_tname);
    return a;
}

/// Frees the stream's C handle, if it holds one, and unlinks it from its agent.
fn releaseStream(s: *Stream, phase: Phase) void {
    if (s.handle) |h| {
        s.handle = null;
        c.panto_stream_free(h);
    }
    if (s.agent) |a| {
        if (s.prev) |p| p.next = s.next else a.streams = s.next;
        if (s.next) |n| n.prev = s.prev;
        s.agent = null;
        s.prev = null;
        s.next = null;
    }
    s.phase = phase;
}

fn closeAgent(a: *Agent) void {
    while (a.streams) |s| releaseStream(s, .closed);
    if (a.handle) |h| {
        a.handle = null;
        c.panto_agent_free(h);
    }
}

// ---- Small helpers ------------------------------------------------------------------------

fn slice(s: c.PantoString) []const u8 {
    if (s.len == 0 or s.ptr == null) return "";
    return s.ptr[0..s.len];
}

fn pushSlice(L: State, s: []const u8) void {
    _ = c.lua_pushlstring(L, s.ptr, s.len); // copies: borrowed C strings die at the next call
}

fn setString(L: State, key: [*:0]const u8, s: []const u8) void {
    pushSlice(L, s);
    c.lua_setfield(L, -2, key);
}

fn setCString(L: State, key: [*:0]const u8, s: [*c]const u8) void {
    _ = c.lua_pushstring(L, s);
    c.lua_setfield(L, -2, key);
}

fn setInteger(L: State, key: [*:0]const u8, n: anytype) void {
    const v: c.lua_Integer = std.math.cast(c.lua_Integer, n) orelse std.math.maxInt(c.lua_Integer);
    c.lua_pushinteger(L, v);
    c.lua_setfield(L, -2, key);
}

/// Pushes `s` as a JSON string literal (quoted and escaped), built in a Lua buffer.
fn pushJsonString(L: State, s: []const u8) void {
    var b: c.luaL_Buffer = undefined;
    const out: [*]u8 = c.luaL_buffinitsize(L, &b, s.len * 6 + 2);
    const hex = "0123456789abcdef";
    var n: usize = 0;
    out[n] = '"';
    n += 1;
    for (s) |ch| {
        const esc: ?u8 = switch (ch) {
            '"' => '"',
            '\\' => '\\',
            '\n' => 'n',
            '\r' => 'r',
            '\t' => 't',
            0x08 => 'b',
            0x0c => 'f',
            else => null,
        };
        if (esc) |e| {
            out[n] = '\\';
            out[n + 1] = e;
            n += 2;
        } else if (ch < 0x20) {
            @memcpy(out[n .. n + 4], "\\u00");
            out[n + 4] = hex[ch >> 4];
            out[n + 5] = hex[ch & 15];
            n += 6;
        } else {
            out[n] = ch;
            n += 1;
        }
    }
    out[n] = '"';
    n += 1;
    c.luaL_pushresultsize(&b, n);
}

/// Pushes an error table {code, http_status, type, message, request_id} with the metatable
/// panto.Error. Absent details (HTTP status 0, empty strings) are left nil.
fn pushError(L: State, err: *const c.PantoError, fallback_code: c_int) void {
    const code = if (err.code != 0) err.code else fallback_code;
    c.lua_createtable(L, 0, 5);
    setCString(L, "code", c.panto_status_name(code));
    if (err.http_status != 0) setInteger(L, "http_status", err.http_status);
    const typ = slice(err.type);
    if (typ.len > 0) setString(L, "type", typ);
    const msg = slice(err.message);
    if (msg.len > 0) setString(L, "message", msg) else setCString(L, "message", c.panto_status_name(code));
    const rid = slice(err.request_id);
    if (rid.len > 0) setString(L, "request_id", rid);
    _ = c.lua_getfield(L, c.LUA_REGISTRYINDEX, error_tname);
    _ = c.lua_setmetatable(L, -2);
}

fn newError() c.PantoError {
    var err = std.mem.zeroes(c.PantoError);
    err.size = @sizeOf(c.PantoError);
    return err;
}

/// Raises the agent's last error (after a failed panto_agent_run, say) as an error table.
fn raiseAgentError(L: State, a: *Agent, rc: c_int) c_int {
    var err = newError();
    _ = c.panto_agent_error(a.handle, &err);
    pushError(L, &err, rc);
    return c.lua_error(L);
}

// ---- panto.Agent{...} -------------------------------------------------------------------

const Option = struct {
    name: [:0]const u8,
    integer: bool = false,
};

/// The agent options of panto_agent_new (include/panto.h), in the order they are encoded.
const options = [_]Option{
    .{ .name = "provider" },
    .{ .name = "model" },
    .{ .name = "base_url" },
    .{ .name = "api_key" },
    .{ .name = "system" },
    .{ .name = "max_tokens", .integer = true },
};

const option_list: [:0]const u8 = blk: {
    var s: [:0]const u8 = "";
    for (options, 0..) |o, i| s = s ++ (if (i == 0) "" else ", ") ++ o.name;
    break :blk s;
};

fn isOption(name: []const u8) bool {
    for (options) |o| if (std.mem.eql(u8, o.name, name)) return true;
    return false;
}

/// Returns nil, <message made with lua_pushfstring>, "config".
fn configError(L: State, comptime fmt: [*:0]const u8, args: anytype) c_int {
    c.lua_pushnil(L);
    _ = @call(.auto, c.lua_pushfstring, .{ L, fmt } ++ args);
    _ = c.lua_pushstring(L, c.panto_status_name(c.PANTO_ERR_CONFIG));
    return 3;
}

/// panto.Agent{provider=, model=, base_url=, api_key=, system=, max_tokens=}: a new agent, or
/// nil, message, "config" when the configuration is refused.
fn agentNew(L: State) callconv(.c) c_int {
    c.luaL_checktype(L, 1, c.LUA_TTABLE);
    c.lua_settop(L, 1);

    // Refuse keys that are not options before anything else.
    c.lua_pushnil(L);
    while (c.lua_next(L, 1) != 0) {
        if (c.lua_type(L, -2) != c.LUA_TSTRING)
            return configError(L, "option names must be strings, got a %s key", .{c.lua_typename(L, c.lua_type(L, -2))});
        var len: usize = 0;
        const name = c.lua_tolstring(L, -2, &len);
        if (!isOption(name[0..len]))
            return configError(L, "unknown option '%s' (the options are " ++ option_list ++ ")", .{name});
        c.lua_settop(L, -2);
    }

    // Encode the options as the JSON object panto_agent_new reads, in a string at index 2.
    _ = c.lua_pushstring(L, "{");
    var count: usize = 0;
    for (options) |o| {
        _ = c.lua_pushstring(L, o.name.ptr);
        const t = c.lua_rawget(L, 1); // index 3
        if (t == c.LUA_TNIL) {
            c.lua_settop(L, 2);
            continue;
        }
        if (o.integer) {
            var isint: c_int = 0;
            const n = c.lua_tointegerx(L, 3, &isint);
            if (t != c.LUA_TNUMBER)
                return configError(L, "option '%s' must be an integer, got a %s", .{ o.name.ptr, c.lua_typename(L, t) });
            if (isint == 0)
                return configError(L, "option '%s' must be an integer, got %f", .{ o.name.ptr, c.lua_tonumberx(L, 3, null) });
            _ = c.lua_pushfstring(L, "%s\"%s\":%I", @as([*:0]const u8, if (count == 0) "" else ","), o.name.ptr, n);
        } else {
            if (t != c.LUA_TSTRING)
                return configError(L, "option '%s' must be a string, got a %s", .{ o.name.ptr, c.lua_typename(L, t) });
            var len: usize = 0;
            const p = c.lua_tolstring(L, 3, &len);
            const value = p[0..len];
            if (!std.unicode.utf8ValidateSlice(value))
                return configError(L, "option '%s' is not valid UTF-8", .{o.name.ptr});
            _ = c.lua_pushfstring(L, "%s\"%s\":", @as([*:0]const u8, if (count == 0) "" else ","), o.name.ptr);
            pushJsonString(L, value);
            c.lua_concat(L, 2);
        }
        // Stack: table, json so far, value, new member.
        c.lua_rotate(L, 3, -1);
        c.lua_settop(L, -2);
        c.lua_concat(L, 2);
        count += 1;
    }
    _ = c.lua_pushstring(L, "}");
    c.lua_concat(L, 2);
    const json = c.lua_tolstring(L, 2, null);

    // The userdata exists before the agent does, so that no error can leak the agent.
    const a: *Agent = @ptrCast(@alignCast(c.lua_newuserdatauv(L, @sizeOf(Agent), 0).?)); // index 3
    a.* = .{ .handle = null, .streams = null };
    c.luaL_setmetatable(L, agent_tname);
    var handle: ?*c.PantoAgent = null;
    const rc = c.panto_agent_new(json, &handle);
    a.handle = handle;
    if (rc >= 0 and handle != null) return 1;

    c.lua_pushnil(L);
    if (handle) |h| {
        var err = newError();
        const code = c.panto_agent_error(h, &err);
        const msg = slice(err.message);
        if (msg.len > 0) pushSlice(L, msg) else _ = c.lua_pushstring(L, c.panto_status_name(rc));
        _ = c.lua_pushstring(L, c.panto_status_name(if (code != 0) code else rc));
        closeAgent(a);
    } else {
        _ = c.lua_pushfstring(L, "cannot create the agent: %s", c.panto_status_name(rc));
        _ = c.lua_pushstring(L, c.panto_status_name(rc));
    }
    return 3;
}

// ---- Agent methods ----------------------------------------------------------------------

/// agent:run(text): starts a turn and returns its stream. Raises a panto.Error (code "busy"
/// while another stream of the agent is unfinished).
fn agentRun(L: State) callconv(.c) c_int {
    const a = checkOpenAgent(L, 1);
    var len: usize = 0;
    const text = c.luaL_checklstring(L, 2, &len);
    if (std.mem.indexOfScalar(u8, text[0..len], 0) != null)
        return c.luaL_argerror(L, 2, "text contains a NUL byte");
    c.lua_settop(L, 2);

    // The userdata exists before the stream does, so that no error can leak the stream.
    const s: *Stream = @ptrCast(@alignCast(c.lua_newuserdatauv(L, @sizeOf(Stream), 2).?)); // index 3
    s.* = .{ .handle = null, .phase = .closed, .agent = null, .prev = null, .next = null };
    c.luaL_setmetatable(L, stream_tname);
    c.lua_pushvalue(L, 1);
    _ = c.lua_setiuservalue(L, 3, uv_stream_agent);

    var handle: ?*c.PantoStream = null;
    const rc = c.panto_agent_run(a.handle, text, &handle);
    if (handle) |h| {
        s.handle = h;
        s.phase = .open;
        s.agent = a;
        s.next = a.streams;
        if (a.streams) |n| n.prev = s;
        a.streams = s;
    }
    if (rc < 0) {
        releaseStream(s, .closed); // only if the library set it anyway
        return raiseAgentError(L, a, rc);
    }
    if (handle == null) return c.luaL_error(L, "panto_agent_run returned no stream");
    return 1;
}

/// agent:conversation(): the conversation so far as a JSON string (an array of
/// {"role", "content"} messages), or nil, message, code.
fn agentConversation(L: State) callconv(.c) c_int {
    const a = checkOpenAgent(L, 1);
    var json = std.mem.zeroes(c.PantoString);
    const rc = c.panto_agent_conversation(a.handle, &json);
    if (rc < 0) {
        var err = newError();
        const code = c.panto_agent_error(a.handle, &err);
        c.lua_pushnil(L);
        const msg = slice(err.message);
        if (msg.len > 0) pushSlice(L, msg) else _ = c.lua_pushstring(L, c.panto_status_name(rc));
        _ = c.lua_pushstring(L, c.panto_status_name(if (code != 0) code else rc));
        return 3;
    }
    pushSlice(L, slice(json));
    return 1;
}

/// agent:close(), __close and __gc: closes the agent's streams, then frees the agent. Safe to
/// call more than once.
fn agentClose(L: State) callconv(.c) c_int {
    closeAgent(toAgent(L, 1));
    return 0;
}

fn agentToString(L: State) callconv(.c) c_int {
    const a = toAgent(L, 1);
    if (a.handle) |h|
        _ = c.lua_pushfstring(L, "panto.Agent (%p)", @as(*const anyopaque, h))
    else
        _ = c.lua_pushstring(L, "panto.Agent (closed)");
    return 1;
}

// ---- Stream methods ---------------------------------------------------------------------

fn pushEvent(L: State, ev: *const c.PantoEvent) void {
    c.lua_createtable(L, 0, 4);
    setCString(L, "kind", c.panto_event_kind_name(ev.kind));
    switch (ev.kind) {
        c.PANTO_EVENT_MESSAGE_START => {
            setString(L, "id", slice(ev.id));
            setString(L, "model", slice(ev.model));
        },
        c.PANTO_EVENT_BLOCK_START, c.PANTO_EVENT_CONTENT_DELTA, c.PANTO_EVENT_BLOCK_COMPLETE => {
            setInteger(L, "index", ev.index);
            setCString(L, "block_kind", c.panto_block_kind_name(ev.block_kind));
            if (ev.kind != c.PANTO_EVENT_BLOCK_START) setString(L, "text", slice(ev.text));
        },
        c.PANTO_EVENT_MESSAGE_COMPLETE => {
            setCString(L, "stop_reason", c.panto_stop_reason_name(ev.stop_reason));
            setString(L, "provider_stop_reason", slice(ev.provider_stop_reason));
            c.lua_createtable(L, 0, 5);
            setInteger(L, "input_tokens", ev.usage.input_tokens);
            setInteger(L, "output_tokens", ev.usage.output_tokens);
            setInteger(L, "cache_read_tokens", ev.usage.cache_read_tokens);
            setInteger(L, "cache_write_tokens", ev.usage.cache_write_tokens);
            setInteger(L, "reasoning_tokens", ev.usage.reasoning_tokens);
            c.lua_setfield(L, -2, "usage");
        },
        else => {}, // a kind newer than this module: only its name
    }
}

/// stream:next(): the next event table, nil once the turn is over (and again after), or
/// raises the turn's panto.Error (the same table again on every later call).
fn streamNext(L: State) callconv(.c) c_int {
    const s = toStream(L, 1);
    switch (s.phase) {
        .open => {},
        .done => {
            c.lua_pushnil(L);
            return 1;
        },
        .failed => {
            _ = c.lua_getiuservalue(L, 1, uv_stream_error);
            return c.lua_error(L);
        },
        .closed => return c.luaL_error(L, "attempt to use a closed %s", stream_tname),
    }
    var ev = std.mem.zeroes(c.PantoEvent);
    ev.size = @sizeOf(c.PantoEvent);
    const rc = c.panto_next_event(s.handle, &ev);
    if (rc == c.PANTO_EVENT) {
        pushEvent(L, &ev);
        return 1;
    }
    if (rc == c.PANTO_DONE) {
        // The turn is over: free the stream (and its connection) now rather than at __gc.
        releaseStream(s, .done);
        c.lua_pushnil(L);
        return 1;
    }
    if (rc >= 0) return c.luaL_error(L, "panto_next_event returned the unexpected status %d", rc);
    var err = newError();
    _ = c.panto_stream_error(s.handle, &err);
    pushError(L, &err, rc); // copies the detail, which dies with the handle
    c.lua_pushvalue(L, -1);
    _ = c.lua_setiuservalue(L, 1, uv_stream_error);
    releaseStream(s, .failed);
    return c.lua_error(L);
}

/// stream:events(): the generic-for quadruple `next, stream, nil, stream`. The fourth value is
/// to-be-closed, so leaving the loop early (break, error) closes the stream.
fn streamEvents(L: State) callconv(.c) c_int {
    const s = toStream(L, 1);
    if (s.phase == .closed) return c.luaL_error(L, "attempt to use a closed %s", stream_tname);
    c.lua_pushcclosure(L, streamNext, 0);
    c.lua_pushvalue(L, 1);
    c.lua_pushnil(L);
    c.lua_pushvalue(L, 1);
    return 4;
}

/// stream:close(), __close and __gc: frees the stream; an unfinished turn commits nothing.
/// Safe to call more than once.
fn streamClose(L: State) callconv(.c) c_int {
    const s = toStream(L, 1);
    if (s.phase != .closed) releaseStream(s, .closed);
    return 0;
}

fn streamToString(L: State) callconv(.c) c_int {
    const s = toStream(L, 1);
    switch (s.phase) {
        .closed => _ = c.lua_pushstring(L, "panto.Stream (closed)"),
        .open => _ = c.lua_pushfstring(L, "panto.Stream (%p)", @as(*const anyopaque, s.handle.?)),
        .done => _ = c.lua_pushfstring(L, "panto.Stream (%p, done)", @as(*const anyopaque, s)),
        .failed => _ = c.lua_pushfstring(L, "panto.Stream (%p, failed)", @as(*const anyopaque, s)),
    }
    return 1;
}

// ---- panto.Error --------------------------------------------------------------------------

/// "panto: authentication: bad key (HTTP 401, authentication_error, request_id req_1)"
fn errorToString(L: State) callconv(.c) c_int {
    c.luaL_checktype(L, 1, c.LUA_TTABLE);
    c.lua_settop(L, 1);
    const code = c.lua_getfield(L, 1, "code"); // 2
    const message = c.lua_getfield(L, 1, "message"); // 3
    const http_status = c.lua_getfield(L, 1, "http_status"); // 4
    const typ = c.lua_getfield(L, 1, "type"); // 5
    const request_id = c.lua_getfield(L, 1, "request_id"); // 6
    _ = c.lua_pushstring(L, "panto: ");
    var n: c_int = 1;
    if (code == c.LUA_TSTRING) {
        _ = c.lua_pushfstring(L, "%s: ", c.lua_tolstring(L, 2, null));
        n += 1;
    }
    if (message == c.LUA_TSTRING) c.lua_pushvalue(L, 3) else _ = c.lua_pushstring(L, "error");
    n += 1;
    var details: c_int = 0;
    if (http_status == c.LUA_TNUMBER) {
        _ = c.lua_pushfstring(L, " (HTTP %I", c.lua_tointegerx(L, 4, null));
        details += 1;
    }
    if (typ == c.LUA_TSTRING) {
        _ = c.lua_pushfstring(L, "%s%s", @as([*:0]const u8, if (details == 0) " (" else ", "), c.lua_tolstring(L, 5, null));
        details += 1;
    }
    if (request_id == c.LUA_TSTRING) {
        _ = c.lua_pushfstring(L, "%srequest_id %s", @as([*:0]const u8, if (details == 0) " (" else ", "), c.lua_tolstring(L, 6, null));
        details += 1;
    }
    if (details > 0) _ = c.lua_pushstring(L, ")");
    c.lua_concat(L, n + details + @intFromBool(details > 0));
    return 1;
}

// ---- The module -------------------------------------------------------------------------

fn reg(comptime name: [*:0]const u8, comptime f: c.lua_CFunction) c.luaL_Reg {
    return .{ .name = name, .func = f };
}
const reg_end: c.luaL_Reg = .{ .name = null, .func = null };

const agent_meta = [_]c.luaL_Reg{
    reg("__gc", agentClose),
    reg("__close", agentClose),
    reg("__tostring", agentToString),
    reg_end,
};
const agent_methods = [_]c.luaL_Reg{
    reg("run", agentRun),
    reg("conversation", agentConversation),
    reg("close", agentClose),
    reg_end,
};
const stream_meta = [_]c.luaL_Reg{
    reg("__gc", streamClose),
    reg("__close", streamClose),
    reg("__tostring", streamToString),
    reg_end,
};
const stream_methods = [_]c.luaL_Reg{
    reg("next", streamNext),
    reg("events", streamEvents),
    reg("close", streamClose),
    reg_end,
};
const error_meta = [_]c.luaL_Reg{
    reg("__tostring", errorToString),
    reg_end,
};

/// Creates the metatable `tname` in the registry unless it exists (a second load of the
/// module shares it).
fn createMetatable(L: State, tname: [*:0]const u8, meta: []const c.luaL_Reg, methods: ?[]const c.luaL_Reg) void {
    if (c.luaL_newmetatable(L, tname) != 0) {
        c.luaL_setfuncs(L, meta.ptr, 0);
        if (methods) |m| {
            c.lua_createtable(L, 0, @intCast(m.len - 1));
            c.luaL_setfuncs(L, m.ptr, 0);
            c.lua_setfield(L, -2, "__index");
        }
    }
    c.lua_settop(L, -2);
}

/// require("panto"): a fresh table {_VERSION, abi_version, Agent} on every call.
export fn luaopen_panto(L: State) c_int {
    // luaL_checkversion is a macro: the same call, with the sizes this module was built with.
    c.luaL_checkversion_(L, c.LUA_VERSION_NUM, @sizeOf(c.lua_Integer) * 16 + @sizeOf(c.lua_Number));
    if (c.panto_abi_version() != c.PANTO_ABI_VERSION)
        return c.luaL_error(L, "panto: ABI version %d, but this module was built for %d", @as(c_int, @intCast(c.panto_abi_version())), @as(c_int, c.PANTO_ABI_VERSION));

    createMetatable(L, agent_tname, &agent_meta, &agent_methods);
    createMetatable(L, stream_tname, &stream_meta, &stream_methods);
    createMetatable(L, error_tname, &error_meta, null);

    c.lua_createtable(L, 0, 3);
    setCString(L, "_VERSION", c.panto_version());
    setInteger(L, "abi_version", c.panto_abi_version());
    c.lua_pushcclosure(L, agentNew, 0);
    c.lua_setfield(L, -2, "Agent");
    return 1;
}
