//! Protected calls of the host: every call into extension code goes through `call`, whose
//! message handler makes the error one line that says where it happened (file:line), so that
//! a failure is reported and the command goes on.
const std = @import("std");
const c = @import("c");
const interrupt = @import("interrupt.zig");

pub const State = ?*c.lua_State;

/// Calls the function below the `nargs` arguments at the top, protected. True on success
/// (the `nresults` results at the top); false with the error's text at the top.
pub fn call(L: State, nargs: c_int, nresults: c_int) bool {
    interrupt.enter(); // Ctrl-C may interrupt the code while it runs
    defer interrupt.leave();
    const func = c.lua_gettop(L) - nargs;
    c.lua_pushcclosure(L, messageHandler, 0);
    c.lua_rotate(L, func, 1);
    const ok = c.lua_pcallk(L, nargs, nresults, func, 0, null) == c.LUA_OK;
    c.lua_rotate(L, func, -1); // the handler to the top
    c.lua_settop(L, -2);
    return ok;
}

/// The error value as text; when it does not start with a position, the file and line of the
/// innermost Lua function are put in front (an error raised from C, or error(msg, 0)).
fn messageHandler(L: State) callconv(.c) c_int {
    if (c.lua_type(L, 1) != c.LUA_TSTRING) {
        if (c.luaL_callmeta(L, 1, "__tostring") == 0 or c.lua_type(L, -1) != c.LUA_TSTRING)
            _ = c.lua_pushfstring(L, "(error object is a %s value)", c.lua_typename(L, c.lua_type(L, 1)));
        c.lua_replace(L, 1);
    }
    var ar: c.lua_Debug = undefined;
    var level: c_int = 1;
    while (c.lua_getstack(L, level, &ar) != 0) : (level += 1) {
        if (c.lua_getinfo(L, "Sl", &ar) == 0 or ar.currentline <= 0) continue;
        const src = std.mem.sliceTo(&ar.short_src, 0);
        const msg = toSlice(L, 1);
        if (std.mem.startsWith(u8, msg, src)) break;
        _ = c.lua_pushfstring(L, "%s:%d: %s", &ar.short_src, ar.currentline, c.lua_tolstring(L, 1, null));
        return 1;
    }
    c.lua_settop(L, 1);
    return 1;
}

pub fn toSlice(L: State, idx: c_int) []const u8 {
    var len: usize = 0;
    const p = c.lua_tolstring(L, idx, &len) orelse return "";
    return p[0..len];
}

pub fn pushSlice(L: State, s: []const u8) void {
    _ = c.lua_pushlstring(L, s.ptr, s.len);
}

pub fn pop(L: State, n: c_int) void {
    c.lua_settop(L, -n - 1);
}
