//! Sessions (include/panto.h): the session a panto.Agent keeps on disk (opened through the
//! options' `session` key), agent:session(), agent:fork(k [, id]) and
//! panto.list_sessions([dir]). Failures raise a panto.Error: code "session",
//! "session_locked", "no_such_session", or those of agent:truncate for a fork.

const std = @import("std");
const c = @import("c");
const h = @import("helpers.zig");
const agent = @import("agent.zig");
const errors = @import("errors.zig");
const json = @import("json.zig");

const State = h.State;
const slice = h.slice;
const pushSlice = h.pushSlice;
const pop = h.pop;
const isNoneOrNil = h.isNoneOrNil;

/// Box of a PantoSessionList: its __gc frees the list if a Lua error skips the explicit free.
const list_tname: [*:0]const u8 = "panto.SessionList";

/// Pushes the agent's session as a table {id, path, resumed, torn_bytes}; pushes nil and
/// returns false when the agent has none. Raises other failures.
fn pushInfo(L: State, a: *agent.Agent) bool {
    var info = std.mem.zeroes(c.PantoSessionInfo);
    info.size = @sizeOf(c.PantoSessionInfo);
    const rc = c.panto_agent_session(a.handle, &info);
    if (rc == c.PANTO_ERR_STATE) {
        c.lua_pushnil(L);
        return false;
    }
    if (rc < 0) agent.raiseAgentError(L, a, rc);
    c.lua_createtable(L, 0, 4);
    h.setString(L, "id", slice(info.id));
    h.setString(L, "path", slice(info.path));
    c.lua_pushboolean(L, info.resumed);
    c.lua_setfield(L, -2, "resumed");
    h.setInteger(L, "torn_bytes", info.torn_bytes);
    return true;
}

/// agent:session(): the agent's session, {id, path, resumed, torn_bytes} (resumed: the
/// session existed when the agent opened it; torn_bytes: the torn last line cut off then),
/// or nil when the agent has none.
fn agentSession(L: State) callconv(.c) c_int {
    const a = agent.checkOpenAgent(L, 1);
    _ = pushInfo(L, a);
    return 1;
}

/// agent:fork(k [, id]): a new session (id, or a new id when nil) holding the first k
/// messages, whose header names the old one; the agent goes on in it, the old one is
/// unchanged. Returns the new session's table (as agent:session()).
fn agentFork(L: State) callconv(.c) c_int {
    const a = agent.checkOpenAgent(L, 1);
    const k = c.luaL_checkinteger(L, 2);
    if (k < 0) _ = c.luaL_argerror(L, 2, "a count of messages must not be negative");
    var id: c.PantoString = .{ .ptr = null, .len = 0 };
    if (!isNoneOrNil(L, 3)) {
        c.luaL_checktype(L, 3, c.LUA_TSTRING);
        id = h.toPantoString(L, 3);
    }
    const rc = c.panto_agent_fork_session(a.handle, @intCast(k), id);
    if (rc < 0) agent.raiseAgentError(L, a, rc);
    _ = pushInfo(L, a);
    return 1;
}

fn freeList(box: *?*c.PantoSessionList) void {
    if (box.*) |list| {
        box.* = null;
        c.panto_session_list_free(list);
    }
}

fn listGc(L: State) callconv(.c) c_int {
    freeList(@ptrCast(@alignCast(c.luaL_checkudata(L, 1, list_tname).?)));
    return 0;
}

/// panto.list_sessions([dir]): the sessions of `dir` (nil: the default directory), newest
/// first: an array of {id, path, created, updated, message_count, first_user_text, cwd,
/// parent} where parent is nil or {id, message_count} (a fork's). A missing directory has
/// none. Raises a panto.Error with code "session" when the directory cannot be read.
fn listSessions(L: State) callconv(.c) c_int {
    var dir: c.PantoString = .{ .ptr = null, .len = 0 };
    if (!isNoneOrNil(L, 1)) {
        c.luaL_checktype(L, 1, c.LUA_TSTRING);
        dir = h.toPantoString(L, 1);
    }
    c.lua_settop(L, 1);
    // The box exists before the list does, so that no error can leak the list.
    const box: *?*c.PantoSessionList = @ptrCast(@alignCast(c.lua_newuserdatauv(L, @sizeOf(?*c.PantoSessionList), 0).?)); // 2
    box.* = null;
    c.luaL_setmetatable(L, list_tname);
    const rc = c.panto_session_list(dir, box);
    if (rc < 0) {
        var err = errors.newError();
        if (box.*) |list| _ = c.panto_session_list_error(list, &err);
        errors.pushError(L, &err, rc);
        freeList(box); // the error table holds copies
        return c.lua_error(L);
    }
    const list = box.* orelse return c.luaL_error(L, "panto_session_list returned no list");
    var out = std.mem.zeroes(c.PantoString);
    const jrc = c.panto_session_list_json(list, &out);
    if (jrc < 0) {
        errors.pushSimpleError(L, jrc, "cannot read the list of sessions");
        return c.lua_error(L);
    }
    c.lua_pushcclosure(L, json.jsonDecode, 0);
    pushSlice(L, slice(out));
    c.lua_callk(L, 1, 1, 0, null); // 3: the array
    freeList(box);
    // A session that is not a fork has no parent: nil rather than panto.null.
    const n = c.luaL_len(L, 3);
    var i: c.lua_Integer = 1;
    while (i <= n) : (i += 1) {
        _ = c.lua_rawgeti(L, 3, i);
        _ = c.lua_getfield(L, -1, "parent");
        if (json.isNull(L, -1)) {
            c.lua_pushnil(L);
            c.lua_setfield(L, -3, "parent");
        }
        pop(L, 2);
    }
    return 1;
}

/// The agent methods of this file.
pub const methods = [_]c.luaL_Reg{
    h.reg("session", agentSession),
    h.reg("fork", agentFork),
};

/// The module's functions of this file.
pub const functions = [_]c.luaL_Reg{h.reg("list_sessions", listSessions)};

const list_meta = [_]c.luaL_Reg{ h.reg("__gc", listGc), h.reg_end };

pub fn open(L: State) void {
    h.createMetatable(L, list_tname, &list_meta, null, null);
}
