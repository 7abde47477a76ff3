//! Tool declarations: a Lua tool table {name=, description=, params= | schema=,
//! capabilities=, handler=} becomes the spec JSON of panto_agent_add_tool; `params` is the
//! Lua sugar for a JSON Schema of an object.

const std = @import("std");
const c = @import("c");
const h = @import("helpers.zig");
const json = @import("json.zig");

const State = h.State;
const gpa = h.gpa;
const Where = h.Where;
const fail = h.fail;
const field = h.field;
const pop = h.pop;
const pushSlice = h.pushSlice;
const toSlice = h.toSlice;
const typeName = h.typeName;
const isCallable = h.isCallable;
const Writer = json.Writer;
const newWriter = json.newWriter;
const pushWritten = json.pushWritten;
const writeString = json.writeString;
const writeNumber = json.writeNumber;
const writeValue = json.writeValue;
const arrayLength = json.arrayLength;
const emptyTable = json.emptyTable;
const sortedKeys = json.sortedKeys;

const param_keys = [_][]const u8{ "type", "description", "required", "default", "enum", "items", "params", "minimum", "maximum" };

fn keyList(comptime keys: []const []const u8) []const u8 {
    comptime {
        var s: []const u8 = "";
        for (keys, 0..) |k, i| s = s ++ (if (i == 0) "" else ", ") ++ k;
        return s;
    }
}

fn isOneOf(name: []const u8, comptime keys: []const []const u8) bool {
    inline for (keys) |k| if (std.mem.eql(u8, k, name)) return true;
    return false;
}

/// Refuses keys of the table at `idx` that are not in `keys`.
fn checkKeys(L: State, idx_: c_int, comptime keys: []const []const u8, where: ?*const Where) void {
    const idx = c.lua_absindex(L, idx_);
    c.lua_pushnil(L);
    while (c.lua_next(L, idx) != 0) {
        if (c.lua_type(L, -2) != c.LUA_TSTRING)
            fail(L, where, "keys must be strings, got a {s} key", .{typeName(L, -2)});
        const k = toSlice(L, -2);
        if (!isOneOf(k, keys)) fail(L, where, "unknown key '{s}' (the keys are " ++ keyList(keys) ++ ")", .{k});
        pop(L, 1);
    }
}

const ParamType = enum { string, integer, number, boolean, array, object };

/// Whether the value at `idx` is a `t`.
fn hasType(L: State, idx: c_int, t: ParamType) bool {
    return switch (t) {
        .string => c.lua_type(L, idx) == c.LUA_TSTRING,
        .number => c.lua_type(L, idx) == c.LUA_TNUMBER,
        .integer => c.lua_type(L, idx) == c.LUA_TNUMBER and blk: {
            var isint: c_int = 0;
            _ = c.lua_tointegerx(L, idx, &isint);
            break :blk isint != 0;
        },
        .boolean => c.lua_type(L, idx) == c.LUA_TBOOLEAN,
        .array => c.lua_type(L, idx) == c.LUA_TTABLE and (arrayLength(L, idx) != null or emptyTable(L, idx)),
        .object => c.lua_type(L, idx) == c.LUA_TTABLE and arrayLength(L, idx) == null,
    };
}

fn writeTypedValue(L: State, w: *Writer, idx: c_int, t: ParamType, where: *const Where, what: []const u8) void {
    if (!hasType(L, idx, t)) fail(L, where, "{s} must be a{s} {s}, got a {s}", .{ what, if (t == .integer or t == .array or t == .object) "n" else "", @tagName(t), typeName(L, idx) });
    if (t == .array and arrayLength(L, idx) == null) return w.write(L, "[]"); // an empty table
    writeValue(L, w, idx, 0, where);
}

/// Whether the parameter spec at `idx` (already checked) is required.
fn paramRequired(L: State, idx: c_int) bool {
    if (c.lua_type(L, idx) != c.LUA_TTABLE) return true; // a type name
    const t = field(L, idx, "required");
    const explicit = c.lua_toboolean(L, -1) != 0;
    pop(L, 1);
    if (t == c.LUA_TBOOLEAN) return explicit;
    const has_default = field(L, idx, "default") != c.LUA_TNIL;
    pop(L, 1);
    return !has_default;
}

/// Writes `"properties":{...}` and, when some are required, `,"required":[...]` for the table
/// name -> parameter spec at `idx`; `closed` adds `"additionalProperties":false` to it and to
/// each object inside (what structured output asks of a schema).
fn writeProperties(L: State, w: *Writer, idx_: c_int, where: *const Where, closed: bool) void {
    const idx = c.lua_absindex(L, idx_);
    const names = sortedKeys(L, idx, where, "parameter names"); // pushes a box
    w.write(L, "\"properties\":{");
    for (names, 0..) |name, i| {
        if (i > 0) w.write(L, ",");
        const pw: Where = .{ .parent = where, .label = "parameter", .name = name };
        writeString(L, w, name);
        w.write(L, ":");
        pushSlice(L, name);
        _ = c.lua_rawget(L, idx);
        writeParam(L, w, -1, &pw, true, closed);
        pop(L, 1);
    }
    w.write(L, "}");
    var first = true;
    for (names) |name| {
        pushSlice(L, name);
        _ = c.lua_rawget(L, idx);
        const required = paramRequired(L, -1);
        pop(L, 1);
        if (!required) continue;
        w.write(L, if (first) ",\"required\":[" else ",");
        first = false;
        writeString(L, w, name);
    }
    if (!first) w.write(L, "]");
    if (closed) w.write(L, ",\"additionalProperties\":false");
    pop(L, 1); // the names
}

/// Writes the JSON Schema of one parameter spec: a type name, or a table {type=, description=,
/// required=, default=, enum=, items=, params=, minimum=, maximum=}. `top`: a parameter of
/// the tool or an object (required and default mean something), else array items.
fn writeParam(L: State, w: *Writer, idx_: c_int, where: *const Where, top: bool, closed: bool) void {
    const idx = c.lua_absindex(L, idx_);
    c.luaL_checkstack(L, 8, "parameters nested too deeply");
    const types = "string, integer, number, boolean, array or object";
    if (c.lua_type(L, idx) == c.LUA_TSTRING) {
        const name = toSlice(L, idx);
        _ = std.meta.stringToEnum(ParamType, name) orelse fail(L, where, "unknown type '{s}' (the types are " ++ types ++ ")", .{name});
        w.write(L, "{\"type\":");
        writeString(L, w, name);
        w.write(L, "}");
        return;
    }
    if (c.lua_type(L, idx) != c.LUA_TTABLE)
        fail(L, where, "must be a type name or a table {{type=, description=, ...}}, got a {s}", .{typeName(L, idx)});
    checkKeys(L, idx, &param_keys, where);

    if (field(L, idx, "type") != c.LUA_TSTRING) fail(L, where, "'type' must be one of " ++ types ++ ", got a {s}", .{typeName(L, -1)});
    const type_name = toSlice(L, -1);
    const t = std.meta.stringToEnum(ParamType, type_name) orelse fail(L, where, "unknown type '{s}' (the types are " ++ types ++ ")", .{type_name});
    pop(L, 1);
    w.write(L, "{\"type\":\"");
    w.write(L, @tagName(t));
    w.write(L, "\"");

    switch (field(L, idx, "description")) {
        c.LUA_TNIL => {},
        c.LUA_TSTRING => {
            w.write(L, ",\"description\":");
            writeString(L, w, toSlice(L, -1));
        },
        else => fail(L, where, "'description' must be a string, got a {s}", .{typeName(L, -1)}),
    }
    pop(L, 1);

    switch (field(L, idx, "enum")) {
        c.LUA_TNIL => {},
        c.LUA_TTABLE => {
            const n = arrayLength(L, -1) orelse fail(L, where, "'enum' must be a non-empty list of values", .{});
            if (n == 0) fail(L, where, "'enum' must be a non-empty list of values", .{});
            w.write(L, ",\"enum\":[");
            for (1..n + 1) |i| {
                if (i > 1) w.write(L, ",");
                _ = c.lua_rawgeti(L, -1, @intCast(i));
                var buf: [32]u8 = undefined;
                writeTypedValue(L, w, -1, t, where, std.fmt.bufPrint(&buf, "enum[{d}]", .{i}) catch "an enum value");
                pop(L, 1);
            }
            w.write(L, "]");
        },
        else => fail(L, where, "'enum' must be a list of values, got a {s}", .{typeName(L, -1)}),
    }
    pop(L, 1);

    const has_default = field(L, idx, "default") != c.LUA_TNIL;
    if (has_default) {
        if (!top) fail(L, where, "'default' is for parameters, not array items", .{});
        w.write(L, ",\"default\":");
        writeTypedValue(L, w, -1, t, where, "'default'");
    }
    pop(L, 1);

    switch (field(L, idx, "required")) {
        c.LUA_TNIL => {},
        c.LUA_TBOOLEAN => {
            if (!top) fail(L, where, "'required' is for parameters, not array items", .{});
            if (c.lua_toboolean(L, -1) != 0 and has_default)
                fail(L, where, "a parameter with a default is optional: drop required=true or the default", .{});
        },
        else => fail(L, where, "'required' must be a boolean, got a {s}", .{typeName(L, -1)}),
    }
    pop(L, 1);

    inline for (.{ "minimum", "maximum" }) |key| {
        switch (field(L, idx, key)) {
            c.LUA_TNIL => {},
            c.LUA_TNUMBER => {
                if (t != .integer and t != .number) fail(L, where, "'" ++ key ++ "' is for integer and number parameters", .{});
                w.write(L, ",\"" ++ key ++ "\":");
                writeNumber(L, w, -1, where);
            },
            else => fail(L, where, "'" ++ key ++ "' must be a number, got a {s}", .{typeName(L, -1)}),
        }
        pop(L, 1);
    }

    switch (field(L, idx, "items")) {
        c.LUA_TNIL => {},
        else => {
            if (t != .array) fail(L, where, "'items' is for array parameters", .{});
            const iw: Where = .{ .parent = where, .label = "items" };
            w.write(L, ",\"items\":");
            writeParam(L, w, -1, &iw, false, closed);
        },
    }
    pop(L, 1);

    switch (field(L, idx, "params")) {
        c.LUA_TNIL => {},
        c.LUA_TTABLE => {
            if (t != .object) fail(L, where, "'params' is for object parameters", .{});
            w.write(L, ",");
            writeProperties(L, w, -1, where, closed);
        },
        else => fail(L, where, "'params' must be a table of parameters, got a {s}", .{typeName(L, -1)}),
    }
    pop(L, 1);
    w.write(L, "}");
}

/// The keys of a tool table that are Lua's own: `params` and `schema` become the spec's
/// `input_schema`, `handler` stays in Lua. Every other key goes into the spec as it is, and
/// panto judges the spec (its name rule, its keys, the schema's shape).
const sugar_keys = [_][]const u8{ "params", "schema", "handler" };

/// Writes the spec of the tool table at `idx` (the JSON object of panto_tools_add and
/// panto_agent_add_tool). Raises "tool 'NAME': ..." on what cannot become a spec: a bad
/// `params` declaration, a value JSON cannot hold, a handler that is not callable. Leaves the
/// stack as it found it.
fn writeToolSpec(L: State, w: *Writer, idx_: c_int) void {
    const idx = c.lua_absindex(L, idx_);
    if (c.lua_type(L, idx) != c.LUA_TTABLE)
        fail(L, null, "a tool must be a table {{name=, description=, params=, handler=}}, got a {s}", .{typeName(L, idx)});
    // The name, for messages only; it stays alive in the table.
    const name = if (field(L, idx, "name") == c.LUA_TSTRING) toSlice(L, -1) else "";
    pop(L, 1);
    const where: Where = .{ .label = "tool", .name = name };
    const keys = sortedKeys(L, idx, &where, "the keys of a tool"); // pushes a box
    w.write(L, "{");
    var first = true;
    for (keys) |k| {
        if (isOneOf(k, &sugar_keys)) continue;
        if (!first) w.write(L, ",");
        first = false;
        writeString(L, w, k);
        w.write(L, ":");
        pushSlice(L, k);
        _ = c.lua_rawget(L, idx);
        const kw: Where = .{ .parent = &where, .label = "key", .name = k };
        json.writeField(L, w, k, -1, &kw);
        pop(L, 1);
    }

    const params_type = field(L, idx, "params");
    const schema_type = field(L, idx, "schema");
    if (params_type != c.LUA_TNIL and schema_type != c.LUA_TNIL) fail(L, &where, "give 'params' or 'schema', not both", .{});
    if (schema_type != c.LUA_TNIL or params_type != c.LUA_TNIL) w.write(L, if (first) "\"input_schema\":" else ",\"input_schema\":");
    switch (schema_type) {
        c.LUA_TNIL => {},
        c.LUA_TSTRING => writeSchemaText(L, w, -1, &where, "'schema'"),
        c.LUA_TTABLE => {
            const sw: Where = .{ .parent = &where, .label = "schema" };
            writeValue(L, w, -1, 0, &sw);
        },
        else => fail(L, &where, "'schema' must be a JSON Schema (a table or JSON text), got a {s}", .{typeName(L, -1)}),
    }
    pop(L, 1);
    switch (params_type) {
        c.LUA_TNIL => {},
        c.LUA_TTABLE => writeParamsSchema(L, w, -1, &where, false),
        else => fail(L, &where, "'params' must be a table of parameters, got a {s}", .{typeName(L, -1)}),
    }
    pop(L, 1);

    if (field(L, idx, "handler") != c.LUA_TNIL and !isCallable(L, -1))
        fail(L, &where, "'handler' must be a function (or callable), got a {s}", .{typeName(L, -1)});
    pop(L, 1);
    w.write(L, "}");
    pop(L, 1); // the keys
}

/// Writes the JSON Schema text at `idx` as it is, once checked to be one JSON value (so that
/// the text cannot add keys to what it goes into). No Lua call between the allocation and its
/// free: validate frees on return.
fn writeSchemaText(L: State, w: *Writer, idx: c_int, where: *const Where, what: []const u8) void {
    const text = toSlice(L, idx);
    const ok = std.json.validate(gpa, text) catch fail(L, where, "not enough memory", .{});
    if (!ok) fail(L, where, "{s} is not valid JSON", .{what});
    w.write(L, text);
}

/// Writes the object schema of the table of parameters at `idx` (a tool's `params`).
fn writeParamsSchema(L: State, w: *Writer, idx: c_int, where: *const Where, closed: bool) void {
    w.write(L, "{\"type\":\"object\",");
    writeProperties(L, w, idx, where, closed);
    w.write(L, "}");
}

/// schemaOf(schema) -> JSON text: the JSON Schema of agent:parse's `schema`: JSON text, a
/// table with type = "object" (a JSON Schema, written as it is), or a table of parameters as
/// a tool's `params`, whose objects are closed ("additionalProperties": false: Anthropic's
/// structured output requires it, and OpenAI's strict mode). Raises on what cannot be one.
pub fn schemaOf(L: State) callconv(.c) c_int {
    c.lua_settop(L, 1);
    const w = newWriter(L); // 2
    const where: Where = .{ .label = "schema" };
    switch (c.lua_type(L, 1)) {
        c.LUA_TSTRING => writeSchemaText(L, w, 1, &where, "the text"),
        c.LUA_TTABLE => {
            const is_schema = field(L, 1, "type") == c.LUA_TSTRING and std.mem.eql(u8, toSlice(L, -1), "object");
            pop(L, 1);
            if (is_schema) writeValue(L, w, 1, 0, &where) else writeParamsSchema(L, w, 1, &where, true);
        },
        else => fail(L, null, "a schema is a table of parameters or a JSON Schema (a table or JSON text), got a {s}", .{typeName(L, 1)}),
    }
    pushWritten(L, w);
    return 1;
}

/// toolSpec(tool) -> spec JSON, name, handler (or nil). Raises on a bad declaration.
pub fn toolSpec(L: State) callconv(.c) c_int {
    c.lua_settop(L, 1);
    const w = newWriter(L); // 2
    writeToolSpec(L, w, 1);
    pushWritten(L, w); // 3
    _ = field(L, 1, "name"); // 4
    _ = field(L, 1, "handler"); // 5
    return 3;
}

/// Records the handler of the tool table at `tool`, if it has one, under its name in the table
/// at `handlers`. A name that is not a string is panto's to refuse: nothing is recorded.
pub fn recordHandler(L: State, tool: c_int, handlers: c_int) void {
    const t = c.lua_absindex(L, tool);
    if (field(L, t, "name") == c.LUA_TSTRING and field(L, t, "handler") != c.LUA_TNIL) {
        c.lua_rawset(L, handlers);
        return;
    }
    pop(L, 2);
}

/// Writes the tools of the sequence at `idx` as a JSON array of specs; with `handlers`
/// (a table index, or 0), records each handler under its tool's name.
pub fn writeToolArray(L: State, w: *Writer, idx_: c_int, handlers: c_int) void {
    const idx = c.lua_absindex(L, idx_);
    const n: usize = @intCast(c.lua_rawlen(L, idx));
    w.write(L, "[");
    for (1..n + 1) |i| {
        if (i > 1) w.write(L, ",");
        _ = c.lua_rawgeti(L, idx, @intCast(i));
        writeToolSpec(L, w, -1);
        if (handlers != 0) recordHandler(L, -1, handlers);
        pop(L, 1);
    }
    w.write(L, "]");
}


/// The PantoToolFormat named by the string at `idx` ("panto", "anthropic", "openai"), or 0
/// for another name, which panto refuses with PANTO_ERR_INVALID_ARGUMENT.
pub fn formatOf(L: State, idx: c_int) c_int {
    const name = std.mem.span(c.luaL_checklstring(L, idx, null));
    const formats = .{
        .{ "panto", c.PANTO_TOOL_FORMAT_PANTO },
        .{ "anthropic", c.PANTO_TOOL_FORMAT_ANTHROPIC },
        .{ "openai", c.PANTO_TOOL_FORMAT_OPENAI },
    };
    inline for (formats) |f| if (std.mem.eql(u8, name, f[0])) return f[1];
    return 0;
}
