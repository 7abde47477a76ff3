//! Media values: panto.media(bytes, hint, name), panto.image(bytes [, media_type [, name]]) and
//! panto.document(bytes [, name]) make a table {data = bytes, media_type = hint, name = name}
//! with the metatable panto.Media, printable and recognized (panto.is_media) where parts are
//! given: agent:run{...}, a handler's result, stream:submit_tool_result. They only carry the
//! bytes and the hints: panto finds the format by the bytes and fits them when they are sent.

const std = @import("std");
const c = @import("c");
const h = @import("helpers.zig");

const State = h.State;
const pop = h.pop;
const isNoneOrNil = h.isNoneOrNil;

pub const tname: [*:0]const u8 = "panto.Media";

/// Whether the value at `idx` is a media value (a table with the metatable panto.Media).
pub fn isMedia(L: State, idx: c_int) bool {
    if (c.lua_type(L, idx) != c.LUA_TTABLE or c.lua_getmetatable(L, idx) == 0) return false;
    _ = c.lua_getfield(L, c.LUA_REGISTRYINDEX, tname);
    const same = c.lua_rawequal(L, -1, -2) != 0;
    pop(L, 2);
    return same;
}

/// Pushes a media value of the bytes at `data`, with `hint` and the string or nil at `name`
/// (below the top: the new table goes above it).
fn pushMedia(L: State, data: c_int, hint: ?[]const u8, name: c_int) void {
    c.lua_createtable(L, 0, 3);
    c.lua_pushvalue(L, data);
    c.lua_setfield(L, -2, "data");
    if (hint) |s| h.setString(L, "media_type", s);
    if (!isNoneOrNil(L, name)) {
        c.lua_pushvalue(L, name);
        c.lua_setfield(L, -2, "name");
    }
    c.luaL_setmetatable(L, tname);
}

/// An optional string argument: nil, or a string (not a number, which Lua would convert).
fn optString(L: State, arg: c_int) ?[]const u8 {
    if (isNoneOrNil(L, arg)) return null;
    c.luaL_checktype(L, arg, c.LUA_TSTRING);
    return h.toSlice(L, arg);
}

/// panto.media(bytes [, hint [, name]]): media whose format the bytes decide; `hint` (a media
/// type such as "image/png") is used only when the bytes do not say.
fn media(L: State) callconv(.c) c_int {
    c.luaL_checktype(L, 1, c.LUA_TSTRING);
    c.lua_settop(L, 3);
    const hint = optString(L, 2);
    _ = optString(L, 3);
    pushMedia(L, 1, if (hint != null and hint.?.len > 0) hint else null, 3);
    return 1;
}

/// panto.image(bytes [, media_type [, name]]): an image (the same as panto.media; the name
/// says what the program means).
fn image(L: State) callconv(.c) c_int {
    return media(L);
}

/// panto.document(bytes [, name]): a PDF (hint "application/pdf").
fn document(L: State) callconv(.c) c_int {
    c.luaL_checktype(L, 1, c.LUA_TSTRING);
    c.lua_settop(L, 2);
    _ = optString(L, 2);
    pushMedia(L, 1, "application/pdf", 2);
    return 1;
}

/// panto.is_media(v): whether v is a media value.
fn isMediaFn(L: State) callconv(.c) c_int {
    c.luaL_checkany(L, 1);
    c.lua_pushboolean(L, @intFromBool(isMedia(L, 1)));
    return 1;
}

/// `panto.Media (image/png, 1234 bytes, "shot.png")`; what a field holds that it should not
/// is shown as `?` (fields are checked when the media is given).
fn toString(L: State) callconv(.c) c_int {
    c.luaL_checktype(L, 1, c.LUA_TTABLE);
    c.lua_settop(L, 1);
    _ = c.lua_pushstring(L, "panto.Media (");
    var n: c_int = 1;
    if (h.field(L, 1, "media_type") == c.LUA_TSTRING and c.lua_rawlen(L, -1) > 0) {
        _ = c.lua_pushstring(L, ", ");
        n += 2;
    } else pop(L, 1);
    if (h.field(L, 1, "data") == c.LUA_TSTRING) {
        const len = c.lua_rawlen(L, -1);
        pop(L, 1);
        _ = c.lua_pushfstring(L, "%I bytes", @as(c.lua_Integer, @intCast(len)));
    } else {
        pop(L, 1);
        _ = c.lua_pushstring(L, "? bytes");
    }
    n += 1;
    if (h.field(L, 1, "name") == c.LUA_TSTRING and c.lua_rawlen(L, -1) > 0) {
        const name = c.lua_tolstring(L, -1, null);
        pop(L, 1);
        _ = c.lua_pushfstring(L, ", \"%s\"", name);
        n += 1;
    } else pop(L, 1);
    _ = c.lua_pushstring(L, ")");
    c.lua_concat(L, n + 1);
    return 1;
}

const meta = [_]c.luaL_Reg{ h.reg("__tostring", toString), h.reg_end };

/// The module's functions of this file.
pub const functions = [_]c.luaL_Reg{
    h.reg("media", media),
    h.reg("image", image),
    h.reg("document", document),
    h.reg("is_media", isMediaFn),
};

pub fn open(L: State) void {
    h.createMetatable(L, tname, &meta, null, null);
}
