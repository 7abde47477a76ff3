//! panto.Error: the error tables the module raises (or returns), made from a PantoError, and
//! their __tostring.

const std = @import("std");
const c = @import("c");
const h = @import("helpers.zig");
const json = @import("json.zig");

const State = h.State;
const slice = h.slice;
const toSlice = h.toSlice;
const setString = h.setString;
const setCString = h.setCString;
const setInteger = h.setInteger;
const reg = h.reg;

pub const tname: [*:0]const u8 = "panto.Error";

/// Pushes an error table {code, http_status, type, message, request_id, retry_after, headers,
/// output} with the metatable panto.Error. Absent details (HTTP status 0, empty strings, a
/// retry_after of -1) are left nil; headers is always a table (empty without an HTTP answer).
pub fn pushError(L: State, err: *const c.PantoError, fallback_code: c_int) void {
    const code = if (err.code != 0) err.code else fallback_code;
    c.lua_createtable(L, 0, 8);
    setCString(L, "code", c.panto_status_name(code));
    if (err.http_status != 0) setInteger(L, "http_status", err.http_status);
    const typ = slice(err.type);
    if (typ.len > 0) setString(L, "type", typ);
    const msg = slice(err.message);
    if (msg.len > 0) setString(L, "message", msg) else setCString(L, "message", c.panto_status_name(code));
    const rid = slice(err.request_id);
    if (rid.len > 0) setString(L, "request_id", rid);
    if (err.retry_after >= 0) {
        c.lua_pushnumber(L, err.retry_after);
        c.lua_setfield(L, -2, "retry_after");
    }
    pushHeaders(L, slice(err.headers));
    c.lua_setfield(L, -2, "headers");
    const output = slice(err.output);
    if (output.len > 0 or code == c.PANTO_ERR_OUTPUT) setString(L, "output", output);
    _ = c.lua_getfield(L, c.LUA_REGISTRYINDEX, tname);
    _ = c.lua_setmetatable(L, -2);
}

pub fn newError() c.PantoError {
    var err = std.mem.zeroes(c.PantoError);
    err.size = @sizeOf(c.PantoError);
    err.retry_after = -1; // what a library older than the field leaves means "not said"
    return err;
}

/// Pushes the headers JSON object of an error as a table name -> value; an empty table when
/// there is none or it is not an object of strings (panto writes it: it always is).
fn pushHeaders(L: State, text: []const u8) void {
    if (text.len > 2) {
        h.pushSlice(L, text);
        if (h.protectedCall(L, json.jsonDecode, 1, 1) and c.lua_type(L, -1) == c.LUA_TTABLE) return;
        h.pop(L, 1);
    }
    c.lua_createtable(L, 0, 0);
}

/// Pushes an error table with `code` and `message` alone.
pub fn pushSimpleError(L: State, code: c_int, message: []const u8) void {
    var err = newError();
    err.code = code;
    err.message = .{ .ptr = message.ptr, .len = message.len };
    pushError(L, &err, code);
}

/// The value at the top is the message of a refused declaration (raised by a protected
/// call): raises it as a panto.Error with code "config".
pub fn raiseConfigError(L: State) noreturn {
    if (c.lua_type(L, -1) != c.LUA_TSTRING) _ = c.lua_error(L); // not a message: as it is
    pushSimpleError(L, c.PANTO_ERR_CONFIG, toSlice(L, -1));
    _ = c.lua_error(L);
    unreachable;
}
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


/// Raises the error detail `err` (filled by a failed call that returned `rc`) as an error
/// table.
pub fn raise(L: State, err: *const c.PantoError, rc: c_int) noreturn {
    pushError(L, err, rc);
    _ = c.lua_error(L);
    unreachable;
}

const meta = [_]c.luaL_Reg{ reg("__tostring", errorToString), h.reg_end };

pub fn open(L: State) void {
    h.createMetatable(L, tname, &meta, null, null);
}
