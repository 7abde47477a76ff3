//! The parts of a tool_result event as Lua tables: {kind = "text", text = ...}, or
//! {kind = "image" | "document", media_type, name, byte_size, width, height, base64} as sent
//! to the model. The base64 text is the stream's until the next event, so it is copied; the
//! bytes (`data`) are decoded from it only when a program reads them, then kept in the table.

const std = @import("std");
const c = @import("c");
const h = @import("helpers.zig");

const State = h.State;
const slice = h.slice;
const pop = h.pop;

pub const tname: [*:0]const u8 = "panto.Part";

/// Pushes the list of the event's parts (empty for a result that is one text).
pub fn push(L: State, ev: *const c.PantoEvent) void {
    const infos: []const c.PantoPartInfo = if (ev.part_count > 0 and ev.parts != null) ev.parts[0..ev.part_count] else &.{};
    c.lua_createtable(L, @intCast(@min(infos.len, std.math.maxInt(c_int))), 0);
    for (infos, 1..) |*info, i| {
        pushInfo(L, info);
        c.lua_rawseti(L, -2, @intCast(i));
    }
}

fn pushInfo(L: State, info: *const c.PantoPartInfo) void {
    c.lua_createtable(L, 0, 8);
    h.setCString(L, "kind", c.panto_part_kind_name(info.kind));
    if (info.kind == c.PANTO_PART_TEXT) {
        h.setString(L, "text", slice(info.text));
        return;
    }
    h.setString(L, "media_type", slice(info.media_type));
    const name = slice(info.name);
    if (name.len > 0) h.setString(L, "name", name);
    h.setInteger(L, "byte_size", info.byte_size);
    if (info.kind == c.PANTO_PART_IMAGE) {
        h.setInteger(L, "width", info.width);
        h.setInteger(L, "height", info.height);
    }
    h.setString(L, "base64", slice(info.data));
    c.luaL_setmetatable(L, tname);
}

/// part.data: the bytes, decoded from part.base64 at the first read and kept (rawset), so
/// that a program that never reads them never pays for them.
fn index(L: State) callconv(.c) c_int {
    c.lua_settop(L, 2);
    if (c.lua_type(L, 2) != c.LUA_TSTRING or !std.mem.eql(u8, h.toSlice(L, 2), "data")) return 0;
    if (h.field(L, 1, "base64") != c.LUA_TSTRING) return 0;
    const text = h.toSlice(L, 3);
    const decoder = std.base64.standard.Decoder;
    const size = decoder.calcSizeForSlice(text) catch return c.luaL_error(L, "panto: the part's base64 is not valid");
    // The bytes are made in a box the collector frees, then copied into the string.
    const mem: [*]u8 = @ptrCast(c.lua_newuserdatauv(L, @max(size, 1), 0).?);
    decoder.decode(mem[0..size], text) catch return c.luaL_error(L, "panto: the part's base64 is not valid");
    _ = c.lua_pushlstring(L, mem, size);
    c.lua_pushvalue(L, -1);
    c.lua_setfield(L, 1, "data"); // raw: the table has no __newindex
    return 1;
}

const meta = [_]c.luaL_Reg{ h.reg("__index", index), h.reg_end };

pub fn open(L: State) void {
    h.createMetatable(L, tname, &meta, null, null);
}
