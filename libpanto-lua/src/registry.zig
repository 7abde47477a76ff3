//! panto.Registry, a named collection of tool tables, and panto.tool_schema: tools checked
//! and exported without an agent.

const std = @import("std");
const c = @import("c");
const h = @import("helpers.zig");
const errors = @import("errors.zig");
const json = @import("json.zig");
const decl = @import("tool_declarations.zig");
const agent = @import("agent.zig");

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
const Writer = json.Writer;
const newWriter = json.newWriter;
const pushWritten = json.pushWritten;
const writeStringList = decl.writeStringList;
const writeToolArray = decl.writeToolArray;
const toolSpec = decl.toolSpec;
const newError = errors.newError;
const pushError = errors.pushError;
const raiseConfigError = errors.raiseConfigError;

pub const tname: [*:0]const u8 = "panto.Registry";

/// User value slot: the sequence of tool tables.
const uv_tools = 1;

/// Pushes the sequence of tool tables that `idx` holds: a list of tools, or a panto.Registry.
pub fn pushToolList(L: State, idx_: c_int, where: ?*const Where) void {
    const idx = c.lua_absindex(L, idx_);
    if (c.luaL_testudata(L, idx, tname) != null) {
        _ = c.lua_getiuservalue(L, idx, uv_tools);
        return;
    }
    if (c.lua_type(L, idx) != c.LUA_TTABLE or (json.arrayLength(L, idx) == null and !decl.emptyTable(L, idx)))
        fail(L, where, "must be a list of tools or a panto.Registry, got a {s}", .{typeName(L, idx)});
    c.lua_pushvalue(L, idx);
}

/// Pushes the JSON export of the tools in the sequence at `list` (absolute) in `format`, as
/// panto's core writes it: they go through a scratch agent (no network). With `caps` (an
/// absolute index, or 0) only the tools those capabilities allow.
fn exportTools(L: State, list: c_int, caps: c_int, format: [*:0]const u8) void {
    const w = newWriter(L);
    w.write(L, "{\"provider\":\"anthropic\",\"model\":\"panto-export\",\"api_key\":\"-\",\"tools\":");
    c.lua_pushvalue(L, list);
    c.lua_pushlightuserdata(L, w);
    if (!protectedCall(L, writeToolsProtected, 2, 0)) raiseConfigError(L);
    if (caps != 0) {
        w.write(L, ",\"capabilities\":");
        writeStringList(L, w, caps, null, "capabilities");
    }
    w.write(L, "}");
    pushWritten(L, w);
    const a = agent.newAgentUserdata(L);
    var handle: ?*c.PantoAgent = null;
    const rc = c.panto_agent_new(c.lua_tolstring(L, -2, null), &handle);
    a.handle = handle;
    if (rc < 0 or handle == null) {
        var err = newError();
        if (handle) |ah| _ = c.panto_agent_error(ah, &err);
        pushError(L, &err, rc); // copies the detail before the agent goes
        agent.closeAgent(a);
        _ = c.lua_error(L);
    }
    var out = std.mem.zeroes(c.PantoString);
    const trc = c.panto_agent_tools(a.handle, format, @intFromBool(caps != 0), &out);
    if (trc < 0) agent.raiseAgentError(L, a, trc);
    pushSlice(L, slice(out));
    agent.closeAgent(a);
    c.lua_rotate(L, -4, 1); // the JSON below the writer, the config and the agent
    pop(L, 3);
}

/// writeToolsProtected(list, writer): writeToolArray under a protected call.
fn writeToolsProtected(L: State) callconv(.c) c_int {
    const w: *Writer = @ptrCast(@alignCast(c.lua_touserdata(L, 2).?));
    writeToolArray(L, w, 1, 0);
    return 0;
}

/// panto.tool_schema(tool [, format]): the tool as the provider sees it, a JSON object in
/// "anthropic" (default), "openai" or "panto" format.
fn toolSchema(L: State) callconv(.c) c_int {
    c.luaL_checkany(L, 1);
    const format = c.luaL_optlstring(L, 2, "anthropic", null);
    c.lua_settop(L, 2);
    c.lua_createtable(L, 1, 0); // 3: {tool}
    c.lua_pushvalue(L, 1);
    c.lua_rawseti(L, 3, 1);
    exportTools(L, 3, 0, format);
    // "[{...}]" -> "{...}"
    const text = toSlice(L, -1);
    if (text.len < 2) return c.luaL_error(L, "panto exported no tool");
    pushSlice(L, text[1 .. text.len - 1]);
    return 1;
}

fn checkRegistry(L: State, idx: c_int) void {
    _ = c.luaL_checkudata(L, idx, tname);
}

/// Pushes a new, empty registry.
fn newRegistry(L: State) void {
    _ = c.lua_newuserdatauv(L, 1, 1);
    c.luaL_setmetatable(L, tname);
    c.lua_createtable(L, 0, 0);
    _ = c.lua_setiuservalue(L, -2, uv_tools);
}

/// The index in the registry's list (at `list`) of the tool named like the string at the
/// top, or 0.
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

/// panto.Registry([tools]): a new registry, with the tools of the list `tools`.
fn registryNew(L: State) callconv(.c) c_int {
    c.lua_settop(L, 1);
    newRegistry(L); // 2
    if (isNil(L, 1)) return 1;
    c.luaL_checktype(L, 1, c.LUA_TTABLE);
    const n = c.lua_rawlen(L, 1);
    var i: c.lua_Integer = 1;
    while (i <= n) : (i += 1) {
        c.lua_pushcclosure(L, registryRegister, 0);
        c.lua_pushvalue(L, 2);
        _ = c.lua_rawgeti(L, 1, i);
        c.lua_callk(L, 2, 0, 0, null);
    }
    c.lua_settop(L, 2);
    return 1;
}

/// registry:register(tool): checks the declaration and adds the tool; returns it. Raises a
/// panto.Error with code "config" for a bad declaration or a name already registered.
fn registryRegister(L: State) callconv(.c) c_int {
    checkRegistry(L, 1);
    c.luaL_checkany(L, 2);
    c.lua_settop(L, 2);
    c.lua_pushvalue(L, 2);
    if (!protectedCall(L, toolSpec, 1, 2)) raiseConfigError(L);
    // Stack: registry, tool, spec, name.
    _ = c.lua_getiuservalue(L, 1, uv_tools); // 5
    c.lua_pushvalue(L, 4);
    if (findTool(L, 5) != 0) {
        _ = c.lua_pushfstring(L, "a tool named '%s' is already registered", c.lua_tolstring(L, 4, null));
        raiseConfigError(L);
    }
    c.lua_pushvalue(L, 2);
    c.lua_rawseti(L, 5, @intCast(c.lua_rawlen(L, 5) + 1));
    c.lua_settop(L, 2);
    return 1;
}

/// registry:get(name): the tool of that name, or nil.
fn registryGet(L: State) callconv(.c) c_int {
    checkRegistry(L, 1);
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
    checkRegistry(L, 1);
    _ = c.lua_getiuservalue(L, 1, uv_tools); // 2
    const n = c.lua_rawlen(L, 2);
    c.lua_createtable(L, @intCast(n), 0);
    var i: c.lua_Integer = 1;
    while (i <= n) : (i += 1) {
        _ = c.lua_rawgeti(L, 2, i);
        c.lua_rawseti(L, -2, i);
    }
    return 1;
}

/// Whether the tool at `tool` requires only capabilities in the list at `caps`.
fn toolAllowed(L: State, tool: c_int, caps: c_int) bool {
    if (field(L, tool, "capabilities") != c.LUA_TTABLE) {
        pop(L, 1);
        return true;
    }
    const need = c.lua_absindex(L, -1);
    defer pop(L, 1);
    const n = c.lua_rawlen(L, need);
    const m = c.lua_rawlen(L, caps);
    var i: c.lua_Integer = 1;
    outer: while (i <= n) : (i += 1) {
        _ = c.lua_rawgeti(L, need, i);
        var j: c.lua_Integer = 1;
        while (j <= m) : (j += 1) {
            _ = c.lua_rawgeti(L, caps, j);
            const same = c.lua_rawequal(L, -1, -2) != 0;
            pop(L, 1);
            if (same) {
                pop(L, 1);
                continue :outer;
            }
        }
        pop(L, 1);
        return false;
    }
    return true;
}

fn checkCapabilities(L: State, idx: c_int) void {
    c.luaL_checktype(L, idx, c.LUA_TTABLE);
    const n = c.lua_rawlen(L, idx);
    var i: c.lua_Integer = 1;
    while (i <= n) : (i += 1) {
        if (c.lua_rawgeti(L, idx, i) != c.LUA_TSTRING) _ = c.luaL_argerror(L, idx, "capabilities must be a list of strings");
        pop(L, 1);
    }
}

/// registry:filter(capabilities): a new registry of the tools those capabilities allow (a
/// tool's required capabilities are all among them).
fn registryFilter(L: State) callconv(.c) c_int {
    checkRegistry(L, 1);
    checkCapabilities(L, 2);
    c.lua_settop(L, 2);
    _ = c.lua_getiuservalue(L, 1, uv_tools); // 3
    newRegistry(L); // 4
    _ = c.lua_getiuservalue(L, 4, uv_tools); // 5
    const n = c.lua_rawlen(L, 3);
    var k: c.lua_Integer = 0;
    var i: c.lua_Integer = 1;
    while (i <= n) : (i += 1) {
        _ = c.lua_rawgeti(L, 3, i);
        if (toolAllowed(L, 6, 2)) {
            k += 1;
            c.lua_rawseti(L, 5, k);
        } else pop(L, 1);
    }
    c.lua_settop(L, 4);
    return 1;
}

/// registry:export(format [, capabilities]): the tools as a JSON array in `format`
/// ("anthropic", "openai" or "panto"), as panto sends them; with `capabilities`, only the
/// tools they allow.
fn registryExport(L: State) callconv(.c) c_int {
    checkRegistry(L, 1);
    const format = c.luaL_checklstring(L, 2, null);
    const has_caps = !isNoneOrNil(L, 3);
    if (has_caps) checkCapabilities(L, 3);
    c.lua_settop(L, 3);
    _ = c.lua_getiuservalue(L, 1, uv_tools); // 4
    exportTools(L, 4, if (has_caps) 3 else 0, format);
    return 1;
}

fn registryLen(L: State) callconv(.c) c_int {
    checkRegistry(L, 1);
    _ = c.lua_getiuservalue(L, 1, uv_tools);
    c.lua_pushinteger(L, @intCast(c.lua_rawlen(L, -1)));
    return 1;
}

fn registryToString(L: State) callconv(.c) c_int {
    checkRegistry(L, 1);
    _ = c.lua_getiuservalue(L, 1, uv_tools);
    _ = c.lua_pushfstring(L, "panto.Registry (%I tools)", @as(c.lua_Integer, @intCast(c.lua_rawlen(L, -1))));
    return 1;
}


const meta = [_]c.luaL_Reg{
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
