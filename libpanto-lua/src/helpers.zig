//! Small helpers every file of the Lua module shares: Lua stack shortcuts, strings between
//! C and Lua, and raising errors with context from Zig frames.

const std = @import("std");
const c = @import("c");

pub const State = ?*c.lua_State;
pub const gpa = std.heap.c_allocator;

pub fn slice(s: c.PantoString) []const u8 {
    if (s.len == 0 or s.ptr == null) return "";
    return s.ptr[0..s.len];
}

pub fn pushSlice(L: State, s: []const u8) void {
    _ = c.lua_pushlstring(L, s.ptr, s.len); // copies: borrowed C strings die at the next call
}

/// The string at `idx`, which must be a string (lua_tolstring would convert a number in place).
pub fn toSlice(L: State, idx: c_int) []const u8 {
    var len: usize = 0;
    const p = c.lua_tolstring(L, idx, &len);
    return p[0..len];
}

/// The string at `idx` as a PantoString, borrowed while the string is on the stack.
pub fn toPantoString(L: State, idx: c_int) c.PantoString {
    var len: usize = 0;
    const p = c.lua_tolstring(L, idx, &len);
    return .{ .ptr = p, .len = len };
}

/// The optional string argument at `idx` as a PantoString ("" when absent), borrowed while it
/// is on the stack. Raises a bad-argument error for another type.
pub fn optPantoString(L: State, idx: c_int) c.PantoString {
    var len: usize = 0;
    const p = c.luaL_optlstring(L, idx, "", &len);
    return .{ .ptr = p, .len = len };
}

pub fn typeName(L: State, idx: c_int) []const u8 {
    return std.mem.span(c.lua_typename(L, c.lua_type(L, idx)));
}

pub fn pop(L: State, n: c_int) void {
    c.lua_settop(L, -n - 1);
}

pub fn setString(L: State, key: [*:0]const u8, s: []const u8) void {
    pushSlice(L, s);
    c.lua_setfield(L, -2, key);
}

pub fn setCString(L: State, key: [*:0]const u8, s: [*c]const u8) void {
    _ = c.lua_pushstring(L, s);
    c.lua_setfield(L, -2, key);
}

pub fn setInteger(L: State, key: [*:0]const u8, n: anytype) void {
    const v: c.lua_Integer = std.math.cast(c.lua_Integer, n) orelse std.math.maxInt(c.lua_Integer);
    c.lua_pushinteger(L, v);
    c.lua_setfield(L, -2, key);
}

pub fn isNil(L: State, idx: c_int) bool {
    return c.lua_type(L, idx) == c.LUA_TNIL;
}

pub fn isNoneOrNil(L: State, idx: c_int) bool {
    return c.lua_type(L, idx) <= c.LUA_TNIL;
}

/// A function, or a value with a __call metamethod.
pub fn isCallable(L: State, idx: c_int) bool {
    if (c.lua_type(L, idx) == c.LUA_TFUNCTION) return true;
    if (c.luaL_getmetafield(L, idx, "__call") == c.LUA_TNIL) return false;
    pop(L, 1);
    return true;
}

/// Where a declaration error is, for its message: "tool 'get_weather': parameter 'city': ".
pub const Where = struct {
    parent: ?*const Where = null,
    label: []const u8,
    name: []const u8 = "",

    pub fn write(w: *const Where, out: *std.Io.Writer) void {
        if (w.parent) |p| p.write(out);
        if (w.name.len > 0)
            out.print("{s} '{s}': ", .{ w.label, w.name }) catch {}
        else
            out.print("{s}: ", .{w.label}) catch {};
    }
};

/// Raises a Lua error "<where>: <message>". Only a stack buffer is live in Zig frames here.
pub fn fail(L: State, where: ?*const Where, comptime fmt: []const u8, args: anytype) noreturn {
    var buf: [600]u8 = undefined;
    var w: std.Io.Writer = .fixed(buf[0 .. buf.len - 1]);
    if (where) |p| p.write(&w);
    w.print(fmt, args) catch {};
    const n = w.end;
    buf[n] = 0;
    _ = c.luaL_error(L, "%s", @as([*:0]const u8, buf[0..n :0].ptr));
    unreachable;
}

/// Calls the C function `f` with the `nargs` values at the top, protected. Returns whether
/// it succeeded; the results (or the error value) are at the top.
pub fn protectedCall(L: State, f: c.lua_CFunction, nargs: c_int, nresults: c_int) bool {
    c.lua_pushcclosure(L, f, 0);
    c.lua_rotate(L, -nargs - 1, 1);
    return c.lua_pcallk(L, nargs, nresults, 0, 0, null) == c.LUA_OK;
}

/// Pushes a new sequence holding the elements of the sequence at `idx` (raw).
pub fn pushCopy(L: State, idx_: c_int) void {
    const idx = c.lua_absindex(L, idx_);
    const n = c.lua_rawlen(L, idx);
    c.lua_createtable(L, @intCast(n), 0);
    var i: c.lua_Integer = 1;
    while (i <= n) : (i += 1) {
        _ = c.lua_rawgeti(L, idx, i);
        c.lua_rawseti(L, -2, i);
    }
}

/// Pushes t[key] (raw) and returns its type.
pub fn field(L: State, t_: c_int, key: [*:0]const u8) c_int {
    const t = c.lua_absindex(L, t_);
    _ = c.lua_pushstring(L, key);
    return c.lua_rawget(L, t);
}

pub fn optBoolean(L: State, idx: c_int) bool {
    if (isNoneOrNil(L, idx)) return false;
    c.luaL_checktype(L, idx, c.LUA_TBOOLEAN);
    return c.lua_toboolean(L, idx) != 0;
}

/// The entries of a luaL_Reg list.
pub fn reg(comptime name: [*:0]const u8, comptime f: c.lua_CFunction) c.luaL_Reg {
    return .{ .name = name, .func = f };
}
pub const reg_end: c.luaL_Reg = .{ .name = null, .func = null };

/// Creates the metatable `tname` in the registry, unless it exists (a second load of the
/// module shares it), with the metamethods `meta` and an __index table of `methods`. With
/// `push_upvalues`, the methods get the values it pushes (given the metatable's index) as
/// upvalues; it returns how many.
pub fn createMetatable(
    L: State,
    tname: [*:0]const u8,
    meta: []const c.luaL_Reg,
    methods: ?[]const c.luaL_Reg,
    push_upvalues: ?*const fn (State, c_int) c_int,
) void {
    if (c.luaL_newmetatable(L, tname) != 0) {
        const mt = c.lua_absindex(L, -1);
        c.luaL_setfuncs(L, meta.ptr, 0);
        if (methods) |m| {
            c.lua_createtable(L, 0, @intCast(m.len - 1));
            const n = if (push_upvalues) |push| push(L, mt) else 0;
            c.luaL_setfuncs(L, m.ptr, n);
            c.lua_setfield(L, -2, "__index");
        }
    }
    c.lua_settop(L, -2);
}
