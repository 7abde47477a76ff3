//! panto.Registry, a named collection of tool tables, and panto.tool_schema. A registry holds
//! panto's tool set (PantoTools) beside its Lua tables: panto checks each spec when it is
//! registered (its name rule, schema shape, unique names) and writes the exports, with the
//! capability filter; the registry keeps the tables, with their handlers, in order.

const std = @import("std");
const c = @import("c");
const h = @import("helpers.zig");
const errors = @import("errors.zig");
const json = @import("json.zig");
const decl = @import("tool_declarations.zig");

const State = h.State;
const Where = h.Where;
const fail = h.fail;
const field = h.field;
const pop = h.pop;
const pushSlice = h.pushSlice;
const toSlice = h.toSlice;
const typeName = h.typeName;
const slice = h.slice;
const isNil = h.isNil;
const isNoneOrNil = h.isNoneOrNil;
const protectedCall = h.protectedCall;

pub const tname: [*:0]const u8 = "panto.Registry";

/// User value slot: the sequence of tool tables, in the order they were registered.
const uv_tools = 1;

const Registry = struct {
    /// panto's set of the same tools' specs; null only once __gc has run, or when it could
    /// not be made.
    tools: ?*c.PantoTools,
};

fn checkRegistry(L: State, idx: c_int) *Registry {
    const r: *Registry = @ptrCast(@alignCast(c.luaL_checkudata(L, idx, tname).?));
    if (r.tools == null) _ = c.luaL_error(L, "panto: the registry's tool set is gone");
    return r;
}

/// Pushes the sequence of tool tables that `idx` holds: a list of tools, or a panto.Registry.
pub fn pushToolList(L: State, idx_: c_int, where: ?*const Where) void {
    const idx = c.lua_absindex(L, idx_);
    if (c.luaL_testudata(L, idx, tname) != null) {
        _ = c.lua_getiuservalue(L, idx, uv_tools);
        return;
    }
    if (c.lua_type(L, idx) != c.LUA_TTABLE or (json.arrayLength(L, idx) == null and !json.emptyTable(L, idx)))
        fail(L, where, "must be a list of tools or a panto.Registry, got a {s}", .{typeName(L, idx)});
    c.lua_pushvalue(L, idx);
}

/// Pushes a new, empty registry and returns it. The userdata exists before the tool set does,
/// so that no error can leak the set.
fn newRegistry(L: State) *Registry {
    const r: *Registry = @ptrCast(@alignCast(c.lua_newuserdatauv(L, @sizeOf(Registry), 1).?));
    r.* = .{ .tools = null };
    c.luaL_setmetatable(L, tname);
    c.lua_createtable(L, 0, 0);
    _ = c.lua_setiuservalue(L, -2, uv_tools);
    const rc = c.panto_tools_new(&r.tools);
    if (rc < 0 or r.tools == null) {
        errors.pushSimpleError(L, rc, "cannot make a tool set");
        _ = c.lua_error(L);
    }
    return r;
}

fn registryGc(L: State) callconv(.c) c_int {
    const r: *Registry = @ptrCast(@alignCast(c.luaL_checkudata(L, 1, tname).?));
    if (r.tools) |tools| {
        r.tools = null;
        c.panto_tools_free(tools);
    }
    return 0;
}

/// Raises the tool set's last error as a panto.Error.
fn raiseToolsError(L: State, r: *Registry, rc: c_int) noreturn {
    var err = errors.newError();
    _ = c.panto_tools_error(r.tools, &err);
    errors.raise(L, &err, rc);
}

/// The index in the list (at `list`) of the tool named like the string at the top, or 0.
fn findTool(L: State, list: c_int) c.lua_Integer {
    const n = c.lua_rawlen(L, list);
    var i: c.lua_Integer = 1;
    while (i <= n) : (i += 1) {
        _ = c.lua_rawgeti(L, list, i);
        _ = field(L, -1, "name");
        const same = c.lua_rawequal(L, -1, -3) != 0;
        pop(L, 2);
        if (same) return i;
    }
    return 0;
}

/// Registers the tool table at the top into the registry at `ri`: panto checks its spec,
/// then the table is appended to the list. Pops the tool.
fn add(L: State, ri: c_int, r: *Registry) void {
    c.lua_pushvalue(L, -1);
    if (!protectedCall(L, decl.toolSpec, 1, 1)) errors.raiseConfigError(L);
    // Stack: tool, spec.
    const rc = c.panto_tools_add(r.tools, h.toPantoString(L, -1));
    if (rc < 0) raiseToolsError(L, r, rc);
    pop(L, 1);
    _ = c.lua_getiuservalue(L, ri, uv_tools);
    c.lua_rotate(L, -2, 1);
    c.lua_rawseti(L, -2, @intCast(c.lua_rawlen(L, -2) + 1));
    pop(L, 1);
}

/// panto.Registry([tools]): a new registry, with the tools of the list `tools`.
fn registryNew(L: State) callconv(.c) c_int {
    c.lua_settop(L, 1);
    if (!isNil(L, 1)) c.luaL_checktype(L, 1, c.LUA_TTABLE);
    const r = newRegistry(L); // 2
    if (isNil(L, 1)) return 1;
    const n = c.lua_rawlen(L, 1);
    var i: c.lua_Integer = 1;
    while (i <= n) : (i += 1) {
        _ = c.lua_rawgeti(L, 1, i);
        add(L, 2, r);
    }
    return 1;
}

/// registry:register(tool): adds the tool; returns it. Raises a panto.Error with code
/// "config" for a declaration panto refuses (or that cannot become a spec) or a name already
/// registered.
fn registryRegister(L: State) callconv(.c) c_int {
    const r = checkRegistry(L, 1);
    c.luaL_checkany(L, 2);
    c.lua_settop(L, 2);
    c.lua_pushvalue(L, 2);
    add(L, 1, r);
    return 1;
}

/// registry:get(name): the tool of that name, or nil.
fn registryGet(L: State) callconv(.c) c_int {
    _ = checkRegistry(L, 1);
    _ = c.luaL_checklstring(L, 2, null);
    c.lua_settop(L, 2);
    _ = c.lua_getiuservalue(L, 1, uv_tools); // 3
    c.lua_pushvalue(L, 2);
    const i = findTool(L, 3);
    if (i == 0) c.lua_pushnil(L) else _ = c.lua_rawgeti(L, 3, i);
    return 1;
}

/// registry:list(): a new list of the tools, in the order they were registered.
fn registryList(L: State) callconv(.c) c_int {
    _ = checkRegistry(L, 1);
    _ = c.lua_getiuservalue(L, 1, uv_tools); // 2
    h.pushCopy(L, 2);
    return 1;
}

/// Pushes panto's export of the registry's tools in `format` (a PantoToolFormat): with the
/// value at `caps` (an index, or 0 for none), only the tools those capabilities allow.
fn pushExport(L: State, r: *Registry, format: c_int, caps: c_int) void {
    const top = c.lua_gettop(L);
    var caps_json: c.PantoString = .{ .ptr = null, .len = 0 };
    if (caps != 0) {
        const w = json.newWriter(L);
        json.writeField(L, w, "capabilities", caps, null);
        json.pushWritten(L, w);
        caps_json = h.toPantoString(L, -1);
    }
    var out: c.PantoString = .{ .ptr = null, .len = 0 };
    const rc = c.panto_tools_export(r.tools, format, caps_json, &out);
    if (rc < 0) raiseToolsError(L, r, rc);
    pushSlice(L, slice(out));
    // Only the export stays: not the capabilities' writer and JSON.
    c.lua_rotate(L, top + 1, 1);
    c.lua_settop(L, top + 1);
}

/// registry:export(format [, capabilities]): the tools as a JSON array in `format`
/// ("anthropic", "openai" or "panto"), as panto sends them; with `capabilities` (a list of
/// strings), only the tools they allow.
fn registryExport(L: State) callconv(.c) c_int {
    const r = checkRegistry(L, 1);
    const format = decl.formatOf(L, 2);
    c.lua_settop(L, 3);
    pushExport(L, r, format, if (isNoneOrNil(L, 3)) 0 else 3);
    return 1;
}

/// registry:filter(capabilities): a new registry of the tools those capabilities allow (a
/// tool's required capabilities are all among them). panto filters: its export names the
/// tools, which the new registry takes from this one, in order.
fn registryFilter(L: State) callconv(.c) c_int {
    const r = checkRegistry(L, 1);
    c.luaL_checkany(L, 2);
    c.lua_settop(L, 2);
    pushExport(L, r, c.PANTO_TOOL_FORMAT_PANTO, 2); // 3
    if (!protectedCall(L, json.jsonDecode, 1, 1)) return c.lua_error(L); // 3: the specs
    _ = c.lua_getiuservalue(L, 1, uv_tools); // 4
    const filtered = newRegistry(L); // 5
    const n = c.lua_rawlen(L, 3);
    var i: c.lua_Integer = 1;
    while (i <= n) : (i += 1) {
        _ = c.lua_rawgeti(L, 3, i);
        _ = field(L, -1, "name");
        const k = findTool(L, 4);
        pop(L, 2);
        if (k == 0) continue; // a native tool: not in the list
        _ = c.lua_rawgeti(L, 4, k);
        add(L, 5, filtered);
    }
    return 1;
}

fn registryLen(L: State) callconv(.c) c_int {
    _ = c.luaL_checkudata(L, 1, tname);
    _ = c.lua_getiuservalue(L, 1, uv_tools);
    c.lua_pushinteger(L, @intCast(c.lua_rawlen(L, -1)));
    return 1;
}

fn registryToString(L: State) callconv(.c) c_int {
    _ = c.luaL_checkudata(L, 1, tname);
    _ = c.lua_getiuservalue(L, 1, uv_tools);
    _ = c.lua_pushfstring(L, "panto.Registry (%I tools)", @as(c.lua_Integer, @intCast(c.lua_rawlen(L, -1))));
    return 1;
}

/// panto.tool_schema(tool [, format]): the tool as the provider sees it, a JSON object in
/// "anthropic" (default), "openai" or "panto" format: panto's export of a registry of it.
fn toolSchema(L: State) callconv(.c) c_int {
    c.luaL_checkany(L, 1);
    const format = if (isNoneOrNil(L, 2)) c.PANTO_TOOL_FORMAT_ANTHROPIC else decl.formatOf(L, 2);
    c.lua_settop(L, 1);
    const r = newRegistry(L); // 2
    c.lua_pushvalue(L, 1);
    add(L, 2, r);
    pushExport(L, r, format, 0);
    // "[{...}]" -> "{...}"
    const text = toSlice(L, -1);
    if (text.len < 2) return c.luaL_error(L, "panto exported no tool");
    pushSlice(L, text[1 .. text.len - 1]);
    return 1;
}

const meta = [_]c.luaL_Reg{
    h.reg("__gc", registryGc),
    h.reg("__len", registryLen),
    h.reg("__tostring", registryToString),
    h.reg_end,
};
const methods = [_]c.luaL_Reg{
    h.reg("register", registryRegister),
    h.reg("get", registryGet),
    h.reg("list", registryList),
    h.reg("filter", registryFilter),
    h.reg("export", registryExport),
    h.reg_end,
};

/// The module's functions of this file.
pub const functions = [_]c.luaL_Reg{
    h.reg("Registry", registryNew),
    h.reg("tool_schema", toolSchema),
};

pub fn open(L: State) void {
    h.createMetatable(L, tname, &meta, &methods, null);
}
