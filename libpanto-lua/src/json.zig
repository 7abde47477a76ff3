//! JSON between Lua values and text: the encoder that writes tool specs, configurations and
//! handler results, and the decoder of tool inputs; panto.json_encode, panto.json_decode,
//! panto.array and panto.null.

const std = @import("std");
const c = @import("c");
const h = @import("helpers.zig");
const media = @import("media.zig");

const State = h.State;
const gpa = h.gpa;
const Where = h.Where;
const fail = h.fail;
const pop = h.pop;
const pushSlice = h.pushSlice;
const toSlice = h.toSlice;
const typeName = h.typeName;
const isNoneOrNil = h.isNoneOrNil;

/// The metatable of decoded JSON arrays (and of tables marked with panto.array), so that an
/// empty one encodes back as `[]`.
pub const array_tname: [*:0]const u8 = "panto.array";
/// Boxes: Zig memory owned by a userdata, freed by its __gc if a Lua error skips the
/// explicit free.
const writer_tname: [*:0]const u8 = "panto.JsonWriter";
const arena_tname: [*:0]const u8 = "panto.JsonArena";

/// JSON null in Lua: a light userdata, panto.null.
var null_sentinel: u8 = 0;

/// Nesting limit of JSON values, both ways (a deeper table is likely a cycle).
const max_depth = 200;

pub fn pushNull(L: State) void {
    c.lua_pushlightuserdata(L, &null_sentinel);
}

pub fn isNull(L: State, idx: c_int) bool {
    return c.lua_type(L, idx) == c.LUA_TLIGHTUSERDATA and c.lua_touserdata(L, idx) == @as(*anyopaque, &null_sentinel);
}

pub const Writer = struct {
    list: std.ArrayList(u8),

    pub fn write(w: *Writer, L: State, bytes: []const u8) void {
        w.list.appendSlice(gpa, bytes) catch {
            _ = c.luaL_error(L, "not enough memory");
        };
    }
};

/// Pushes a new writer box and returns it.
pub fn newWriter(L: State) *Writer {
    const w: *Writer = @ptrCast(@alignCast(c.lua_newuserdatauv(L, @sizeOf(Writer), 0).?));
    w.* = .{ .list = .empty };
    c.luaL_setmetatable(L, writer_tname);
    return w;
}

fn writerGc(L: State) callconv(.c) c_int {
    const w: *Writer = @ptrCast(@alignCast(c.luaL_checkudata(L, 1, writer_tname).?));
    w.list.deinit(gpa);
    w.list = .empty;
    return 0;
}

/// Pushes what `w` holds as a string and frees its memory (the box stays where it is).
pub fn pushWritten(L: State, w: *Writer) void {
    pushSlice(L, w.list.items);
    w.list.deinit(gpa);
    w.list = .empty;
}

/// Writes `s` as a JSON string literal: its bytes as they are, control characters escaped.
/// Whether they are UTF-8 is panto's to judge (include/panto.h: text the model reads has
/// invalid sequences replaced, JSON that is not UTF-8 is refused), not the encoder's.
pub fn writeString(L: State, w: *Writer, s: []const u8) void {
    const hex = "0123456789abcdef";
    w.write(L, "\"");
    var start: usize = 0;
    for (s, 0..) |ch, i| {
        const esc: ?u8 = switch (ch) {
            '"' => '"',
            '\\' => '\\',
            '\n' => 'n',
            '\r' => 'r',
            '\t' => 't',
            0x08 => 'b',
            0x0c => 'f',
            else => if (ch < 0x20) 'u' else null,
        };
        const e = esc orelse continue;
        w.write(L, s[start..i]);
        if (e == 'u') {
            const u = [_]u8{ '\\', 'u', '0', '0', hex[ch >> 4], hex[ch & 15] };
            w.write(L, &u);
        } else {
            w.write(L, &.{ '\\', e });
        }
        start = i + 1;
    }
    w.write(L, s[start..]);
    w.write(L, "\"");
}

pub fn writeNumber(L: State, w: *Writer, idx: c_int, where: ?*const Where) void {
    var buf: [64]u8 = undefined;
    var isint: c_int = 0;
    const i = c.lua_tointegerx(L, idx, &isint);
    if (c.lua_isinteger(L, idx) != 0 and isint != 0) {
        w.write(L, std.fmt.bufPrint(&buf, "{d}", .{i}) catch unreachable);
        return;
    }
    const f: f64 = c.lua_tonumberx(L, idx, null);
    if (!std.math.isFinite(f)) fail(L, where, "cannot encode {d} as JSON", .{f});
    const a = @abs(f);
    const text = if (a >= 1e21 or (a != 0 and a < 1e-6))
        std.fmt.bufPrint(&buf, "{e}", .{f}) catch unreachable
    else
        std.fmt.bufPrint(&buf, "{d}", .{f}) catch unreachable;
    w.write(L, text);
    // A float stays a float: 2.0 is "2.0", as in Python.
    if (std.mem.indexOfAny(u8, text, ".e") == null) w.write(L, ".0");
}

fn hasArrayMetatable(L: State, idx: c_int) bool {
    if (c.lua_getmetatable(L, idx) == 0) return false;
    _ = c.lua_getfield(L, c.LUA_REGISTRYINDEX, array_tname);
    const same = c.lua_rawequal(L, -1, -2) != 0;
    pop(L, 2);
    return same;
}

/// The length of the table at `idx` when it encodes as a JSON array: marked with panto.array,
/// or its keys are exactly 1..n with n >= 1. null: an object.
pub fn arrayLength(L: State, idx_: c_int) ?usize {
    const idx = c.lua_absindex(L, idx_);
    const raw: usize = @intCast(c.lua_rawlen(L, idx));
    if (hasArrayMetatable(L, idx)) return raw;
    var count: usize = 0;
    c.lua_pushnil(L);
    while (c.lua_next(L, idx) != 0) {
        var isint: c_int = 0;
        const k = c.lua_tointegerx(L, -2, &isint);
        if (c.lua_isinteger(L, -2) == 0 or k < 1 or @as(u64, @intCast(k)) > raw) {
            pop(L, 2);
            return null;
        }
        count += 1;
        pop(L, 1);
    }
    if (count == 0 or count != raw) return null;
    return raw;
}

/// Pushes a box holding the keys of the table at `idx`, sorted, and returns them. They point
/// into the table's key strings, alive while the table is unchanged and on the stack.
pub fn sortedKeys(L: State, idx_: c_int, where: ?*const Where, what: []const u8) []const []const u8 {
    const idx = c.lua_absindex(L, idx_);
    var n: usize = 0;
    c.lua_pushnil(L);
    while (c.lua_next(L, idx) != 0) {
        if (c.lua_type(L, -2) != c.LUA_TSTRING) {
            fail(L, where, "{s} must be strings, got a {s} key", .{ what, typeName(L, -2) });
        }
        n += 1;
        pop(L, 1);
    }
    const mem = c.lua_newuserdatauv(L, @max(n, 1) * @sizeOf([]const u8), 0).?;
    const keys: [*][]const u8 = @ptrCast(@alignCast(mem));
    var i: usize = 0;
    c.lua_pushnil(L);
    while (c.lua_next(L, idx) != 0) : (i += 1) {
        keys[i] = toSlice(L, -2);
        pop(L, 1);
    }
    const list = keys[0..n];
    std.mem.sort([]const u8, list, {}, struct {
        fn lt(_: void, a: []const u8, b: []const u8) bool {
            return std.mem.order(u8, a, b) == .lt;
        }
    }.lt);
    return list;
}

/// Writes the Lua value at `idx` as compact JSON: nil and panto.null are null; a table is an
/// array when arrayLength says so, else an object with string keys, written sorted.
pub fn writeValue(L: State, w: *Writer, idx_: c_int, depth: u32, where: ?*const Where) void {
    const idx = c.lua_absindex(L, idx_);
    switch (c.lua_type(L, idx)) {
        c.LUA_TNIL => w.write(L, "null"),
        c.LUA_TBOOLEAN => w.write(L, if (c.lua_toboolean(L, idx) != 0) "true" else "false"),
        c.LUA_TNUMBER => writeNumber(L, w, idx, where),
        c.LUA_TSTRING => writeString(L, w, toSlice(L, idx)),
        c.LUA_TTABLE => {
            // Bytes that JSON would mangle: media is sent as a part, not as a value.
            if (media.isMedia(L, idx)) fail(L, where, "cannot encode media (panto.Media) as JSON: return it as a part or an attachment", .{});
            if (depth >= max_depth) fail(L, where, "cannot encode tables nested more than {d} deep (a cycle?)", .{max_depth});
            c.luaL_checkstack(L, 8, "tables nested too deeply");
            if (arrayLength(L, idx)) |n| {
                w.write(L, "[");
                for (1..n + 1) |i| {
                    if (i > 1) w.write(L, ",");
                    _ = c.lua_rawgeti(L, idx, @intCast(i));
                    writeValue(L, w, -1, depth + 1, where);
                    pop(L, 1);
                }
                w.write(L, "]");
            } else {
                const keys = sortedKeys(L, idx, where, "the keys of a JSON object");
                w.write(L, "{");
                for (keys, 0..) |k, i| {
                    if (i > 0) w.write(L, ",");
                    writeString(L, w, k);
                    w.write(L, ":");
                    pushSlice(L, k);
                    _ = c.lua_rawget(L, idx);
                    writeValue(L, w, -1, depth + 1, where);
                    pop(L, 1);
                }
                w.write(L, "}");
                pop(L, 1); // the keys
            }
        },
        else => {
            if (isNull(L, idx)) return w.write(L, "null");
            fail(L, where, "cannot encode a {s} as JSON", .{typeName(L, idx)});
        },
    }
}

pub fn emptyTable(L: State, idx_: c_int) bool {
    const idx = c.lua_absindex(L, idx_);
    c.lua_pushnil(L);
    if (c.lua_next(L, idx) == 0) return true;
    pop(L, 2);
    return false;
}

/// Writes the value at `idx` of the key `key` of a configuration or a tool spec. Like
/// writeValue, except that an empty table, which writeValue writes as `{}`, is `[]` where
/// panto wants a list: Lua cannot tell an empty list from an empty object.
pub fn writeField(L: State, w: *Writer, key: []const u8, idx: c_int, where: ?*const Where) void {
    if (std.mem.eql(u8, key, "capabilities") and c.lua_type(L, idx) == c.LUA_TTABLE and emptyTable(L, idx))
        return w.write(L, "[]");
    writeValue(L, w, idx, 0, where);
}

/// panto.json_encode(value): compact JSON text; raises on what JSON cannot hold.
pub fn jsonEncode(L: State) callconv(.c) c_int {
    c.luaL_checkany(L, 1);
    c.lua_settop(L, 1);
    const w = newWriter(L);
    writeValue(L, w, 1, 0, null);
    pushWritten(L, w);
    return 1;
}

// ---- JSON in: std.json.Value -> Lua values ----------------------------------------------

const ArenaBox = struct {
    arena: std.heap.ArenaAllocator,
    live: bool,
};

fn arenaGc(L: State) callconv(.c) c_int {
    const box: *ArenaBox = @ptrCast(@alignCast(c.luaL_checkudata(L, 1, arena_tname).?));
    if (box.live) {
        box.live = false;
        box.arena.deinit();
    }
    return 0;
}

pub fn pushJsonValue(L: State, v: std.json.Value, depth: u32) void {
    if (depth >= max_depth) _ = c.luaL_error(L, "JSON nested more than %d deep", @as(c_int, max_depth));
    c.luaL_checkstack(L, 4, "JSON nested too deeply");
    switch (v) {
        .null => pushNull(L),
        .bool => |b| c.lua_pushboolean(L, @intFromBool(b)),
        .integer => |i| c.lua_pushinteger(L, i),
        .float => |f| c.lua_pushnumber(L, f),
        // An integer beyond 64 bits, or a float beyond f64: the nearest float.
        .number_string => |s| c.lua_pushnumber(L, std.fmt.parseFloat(f64, s) catch std.math.nan(f64)),
        .string => |s| pushSlice(L, s),
        .array => |arr| {
            c.lua_createtable(L, @intCast(@min(arr.items.len, std.math.maxInt(c_int))), 0);
            for (arr.items, 1..) |item, i| {
                pushJsonValue(L, item, depth + 1);
                c.lua_rawseti(L, -2, @intCast(i));
            }
            c.luaL_setmetatable(L, array_tname);
        },
        .object => |obj| {
            c.lua_createtable(L, 0, @intCast(@min(obj.count(), std.math.maxInt(c_int))));
            var it = obj.iterator();
            while (it.next()) |entry| {
                pushSlice(L, entry.key_ptr.*);
                pushJsonValue(L, entry.value_ptr.*, depth + 1);
                c.lua_rawset(L, -3);
            }
        },
    }
}

/// panto.json_decode(text): the value (objects as tables, arrays as sequences marked with
/// panto.array, null as panto.null). Raises on invalid JSON.
pub fn jsonDecode(L: State) callconv(.c) c_int {
    var len: usize = 0;
    const p = c.luaL_checklstring(L, 1, &len);
    c.lua_settop(L, 1);
    const box: *ArenaBox = @ptrCast(@alignCast(c.lua_newuserdatauv(L, @sizeOf(ArenaBox), 0).?));
    box.* = .{ .arena = .init(gpa), .live = true };
    c.luaL_setmetatable(L, arena_tname);
    const value = std.json.parseFromSliceLeaky(std.json.Value, box.arena.allocator(), p[0..len], .{}) catch |err| {
        box.live = false;
        box.arena.deinit();
        if (err == error.OutOfMemory) _ = c.luaL_error(L, "not enough memory");
        fail(L, null, "invalid JSON ({s})", .{@errorName(err)});
    };
    pushJsonValue(L, value, 0);
    box.live = false;
    box.arena.deinit();
    return 1;
}

/// panto.array(t): marks `t` (default: a new table) as a JSON array, so that it encodes as
/// one even when empty; returns it.
pub fn markArray(L: State) callconv(.c) c_int {
    if (isNoneOrNil(L, 1)) {
        c.lua_settop(L, 0);
        c.lua_createtable(L, 0, 0);
    }
    c.luaL_checktype(L, 1, c.LUA_TTABLE);
    c.lua_settop(L, 1);
    c.luaL_setmetatable(L, array_tname);
    return 1;
}


const writer_meta = [_]c.luaL_Reg{ h.reg("__gc", writerGc), h.reg_end };
const arena_meta = [_]c.luaL_Reg{ h.reg("__gc", arenaGc), h.reg_end };
const array_meta = [_]c.luaL_Reg{h.reg_end};

/// The module's functions of this file.
pub const functions = [_]c.luaL_Reg{
    h.reg("array", markArray),
    h.reg("json_encode", jsonEncode),
    h.reg("json_decode", jsonDecode),
};

pub fn open(L: State) void {
    h.createMetatable(L, writer_tname, &writer_meta, null, null);
    h.createMetatable(L, arena_tname, &arena_meta, null, null);
    h.createMetatable(L, array_tname, &array_meta, null, null);
}
