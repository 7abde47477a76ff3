//! Tool specs: the name, description, input schema and required capabilities of a tool; how
//! they are parsed from JSON, checked against an agent's capabilities, and exported in each
//! provider's format. The rules of a spec and of a list of them (`Set`) live here alone: an
//! agent's registry and a binding's tool set (panto_tools_*) are both a `Set`.
const std = @import("std");
const Allocator = std.mem.Allocator;
const config_mod = @import("config.zig");
const Diagnostic = config_mod.Diagnostic;
const writeRawJson = @import("conversation.zig").writeRawJson;
const json_depth = @import("json_depth.zig");
const approval = @import("approval.zig");

/// Tools that run inside libpanto.
pub const Native = enum { read };

pub const Tool = struct {
    name: []const u8,
    description: []const u8,
    /// The input schema as compact JSON text (what the providers are sent) ...
    schema_json: []const u8,
    /// ... and parsed (what inputs are checked against).
    schema: std.json.Value,
    capabilities: []const []const u8,
    native: ?Native = null,
    /// Its calls run alone: after the calls before them finish, before the calls after start.
    sequential: bool = false,
    /// A tool of the agent's MCP server of this index (mcp/servers.zig), which runs its calls.
    mcp_server: ?u32 = null,
    /// Whether its calls wait for a person's answer when no approval rule matches them.
    approval: approval.ToolApproval = .never,

    /// Whether an agent granted `granted` may use this tool.
    pub fn allowedWith(t: Tool, granted: []const []const u8) bool {
        for (t.capabilities) |needed| {
            for (granted) |g| {
                if (std.mem.eql(u8, g, needed)) break;
            } else return false;
        }
        return true;
    }
};

/// The export formats; the values are panto.h's PantoToolFormat.
pub const Format = enum(i32) { panto = 1, anthropic = 2, openai = 3 };

pub const AddError = error{ InvalidConfig, OutOfMemory };

/// A list of tools with unique names, in registration order, owning their strings: the
/// registry of an agent, or a tool set without one.
pub const Set = struct {
    arena: std.heap.ArenaAllocator,
    list: std.ArrayList(Tool) = .empty,

    pub fn init(gpa: Allocator) Set {
        return .{ .arena = .init(gpa) };
    }

    pub fn deinit(set: *Set) void {
        set.arena.deinit();
    }

    pub fn items(set: *const Set) []const Tool {
        return set.list.items;
    }

    pub fn has(set: *const Set, name: []const u8) bool {
        return set.find(name) != null;
    }

    pub fn find(set: *const Set, name: []const u8) ?*const Tool {
        for (set.list.items) |*t| if (std.mem.eql(u8, t.name, name)) return t;
        return null;
    }

    /// Checks a spec given as JSON text (see parseSpec) and adds it.
    pub fn addJson(set: *Set, spec_json: []const u8, diag: *Diagnostic) AddError!void {
        var scratch: std.heap.ArenaAllocator = .init(set.arena.child_allocator);
        defer scratch.deinit();
        const value = try config_mod.parseJsonText(scratch.allocator(), spec_json, "the tool spec", diag);
        try set.add(try parseSpec(scratch.allocator(), value, diag), diag);
    }

    /// Adds a copy of a parsed tool. Its name must be new to the set.
    pub fn add(set: *Set, t: Tool, diag: *Diagnostic) AddError!void {
        if (set.find(t.name) != null) return diag.fail("a tool named \"{s}\" is already registered", .{t.name});
        // parseSpec checks this too; a Tool a Zig program built itself comes straight here.
        if (json_depth.textTooDeep(t.schema_json))
            return diag.fail("tool \"{s}\": input_schema is " ++ json_depth.nested_too_deep, .{t.name});
        const arena = set.arena.allocator();
        try set.list.append(arena, .{
            .name = try arena.dupe(u8, t.name),
            .description = try arena.dupe(u8, t.description),
            .schema_json = try arena.dupe(u8, t.schema_json),
            .schema = std.json.parseFromSliceLeaky(std.json.Value, arena, t.schema_json, .{}) catch return error.OutOfMemory,
            .capabilities = try dupeStrings(arena, t.capabilities),
            .native = t.native,
            .sequential = t.sequential,
            .mcp_server = t.mcp_server,
            .approval = t.approval,
        });
    }

    /// Removes the tool named `name`, if there is one.
    pub fn remove(set: *Set, name: []const u8) void {
        for (set.list.items, 0..) |t, i| if (std.mem.eql(u8, t.name, name)) {
            _ = set.list.orderedRemove(i);
            return;
        };
    }

    /// Puts the last tool added first (native tools come before host tools).
    pub fn moveLastFirst(set: *Set) void {
        const t = set.list.pop() orelse return;
        set.list.insertAssumeCapacity(0, t);
    }

    /// Writes the tools as a JSON array in `format`; with `granted`, only the tools it allows.
    pub fn writeExport(set: *const Set, w: *std.Io.Writer, format: Format, granted: ?[]const []const u8) std.Io.Writer.Error!void {
        try writeExportList(w, set.list.items, format, granted);
    }

    /// As writeExport, the capabilities granted given as a JSON array of strings (null: all
    /// tools); a malformed array is refused with a reason.
    pub fn writeExportJson(set: *const Set, w: *std.Io.Writer, format: Format, capabilities_json: ?[]const u8, diag: *Diagnostic) (AddError || std.Io.Writer.Error)!void {
        const json = capabilities_json orelse return set.writeExport(w, format, null);
        var scratch: std.heap.ArenaAllocator = .init(set.arena.child_allocator);
        defer scratch.deinit();
        const value = try config_mod.parseJsonText(scratch.allocator(), json, "the capabilities", diag);
        const granted = try stringArray(scratch.allocator(), value) orelse
            return diag.fail("the capabilities must be a JSON array of strings", .{});
        try set.writeExport(w, format, granted);
    }
};

/// The strings of a JSON array of strings, or null when `value` is not one.
fn stringArray(arena: Allocator, value: std.json.Value) Allocator.Error!?[]const []const u8 {
    if (value != .array) return null;
    const out = try arena.alloc([]const u8, value.array.items.len);
    for (value.array.items, out) |item, *s| {
        if (item != .string) return null;
        s.* = item.string;
    }
    return out;
}

pub fn dupeStrings(arena: Allocator, strings: []const []const u8) Allocator.Error![]const []const u8 {
    const out = try arena.alloc([]const u8, strings.len);
    for (strings, out) |src, *dst| dst.* = try arena.dupe(u8, src);
    return out;
}

/// Parses a tool spec `{"name", "description", "input_schema", "capabilities", "sequential",
/// "approval"}`; its strings
/// and schema are copied into `arena`.
pub fn parseSpec(arena: Allocator, value: std.json.Value, diag: *Diagnostic) error{ InvalidConfig, OutOfMemory }!Tool {
    if (value != .object) return diag.fail("a tool spec must be a JSON object", .{});
    const obj = value.object;
    var it = obj.iterator();
    while (it.next()) |entry| {
        const known = [_][]const u8{ "name", "description", "input_schema", "capabilities", "sequential", "approval" };
        for (known) |k| {
            if (std.mem.eql(u8, k, entry.key_ptr.*)) break;
        } else return diag.fail("unknown tool spec key \"{s}\"", .{entry.key_ptr.*});
    }
    const name_value = obj.get("name") orelse return diag.fail("a tool spec needs \"name\"", .{});
    if (name_value != .string or !validName(name_value.string))
        return diag.fail("a tool name must be 1 to 64 letters, digits, '_' or '-'", .{});
    const name = name_value.string;
    const description: []const u8 = if (obj.get("description")) |d| switch (d) {
        .string => |s| s,
        else => return diag.fail("tool \"{s}\": description must be a string", .{name}),
    } else "";
    const schema: std.json.Value = obj.get("input_schema") orelse emptyObjectSchema(arena) catch return error.OutOfMemory;
    if (schema != .object) return diag.fail("tool \"{s}\": input_schema must be a JSON object", .{name});
    if (json_depth.valueTooDeep(schema))
        return diag.fail("tool \"{s}\": input_schema is " ++ json_depth.nested_too_deep, .{name});
    if (schema.object.get("type")) |t| if (t != .string or !std.mem.eql(u8, t.string, "object"))
        return diag.fail("tool \"{s}\": input_schema must describe an object (\"type\": \"object\")", .{name});
    var caps: std.ArrayList([]const u8) = .empty;
    if (obj.get("capabilities")) |c| {
        if (c != .array) return diag.fail("tool \"{s}\": capabilities must be an array of strings", .{name});
        for (c.array.items) |cap| {
            if (cap != .string) return diag.fail("tool \"{s}\": capabilities must be an array of strings", .{name});
            try caps.append(arena, try arena.dupe(u8, cap.string));
        }
    }
    const sequential = if (obj.get("sequential")) |v| switch (v) {
        .bool => |b| b,
        else => return diag.fail("tool \"{s}\": sequential must be true or false", .{name}),
    } else false;
    const needs_approval: approval.ToolApproval = if (obj.get("approval")) |v| switch (v) {
        .string => |a| std.meta.stringToEnum(approval.ToolApproval, a) orelse
            return diag.fail("tool \"{s}\": approval must be \"always\" or \"never\"", .{name}),
        else => return diag.fail("tool \"{s}\": approval must be \"always\" or \"never\"", .{name}),
    } else .never;
    const schema_json = try std.json.Stringify.valueAlloc(arena, schema, .{});
    return .{
        .name = try arena.dupe(u8, name),
        .description = try arena.dupe(u8, description),
        .schema_json = schema_json,
        // Re-parsed so that the schema lives in `arena`, whatever owned `value`.
        .schema = std.json.parseFromSliceLeaky(std.json.Value, arena, schema_json, .{}) catch return error.OutOfMemory,
        .capabilities = caps.items,
        .sequential = sequential,
        .approval = needs_approval,
    };
}

fn emptyObjectSchema(arena: Allocator) !std.json.Value {
    return std.json.parseFromSliceLeaky(std.json.Value, arena, "{\"type\":\"object\",\"properties\":{}}", .{});
}

pub fn validName(name: []const u8) bool {
    if (name.len == 0 or name.len > 64) return false;
    for (name) |c| if (!(std.ascii.isAlphanumeric(c) or c == '_' or c == '-')) return false;
    return true;
}

fn writeExportList(w: *std.Io.Writer, list: []const Tool, format: Format, granted: ?[]const []const u8) std.Io.Writer.Error!void {
    var s: std.json.Stringify = .{ .writer = w };
    try s.beginArray();
    for (list) |t| {
        if (granted) |g| if (!t.allowedWith(g)) continue;
        try writeOne(&s, t, format);
    }
    try s.endArray();
}

pub fn writeOne(s: *std.json.Stringify, t: Tool, format: Format) std.Io.Writer.Error!void {
    try s.beginObject();
    try writeFields(s, t, format);
    try s.endObject();
}

/// The input schema as the provider takes it (provider_schema.zig); a tool made without its
/// parsed schema (`.null`) as its text.
fn writeProviderSchema(s: *std.json.Stringify, t: Tool, dialect: @import("provider_schema.zig").Dialect) std.Io.Writer.Error!void {
    if (t.schema == .null) return writeRawJson(s, t.schema_json);
    try @import("provider_schema.zig").write(s, t.schema, dialect, .tool);
}

/// The members of a tool's object in `format`, inside an object the caller began (and may
/// add to: a cache breakpoint, providers/anthropic/cache.zig).
pub fn writeFields(s: *std.json.Stringify, t: Tool, format: Format) std.Io.Writer.Error!void {
    switch (format) {
        .anthropic => {
            try s.objectField("name");
            try s.write(t.name);
            try s.objectField("description");
            try s.write(t.description);
            try s.objectField("input_schema");
            try writeProviderSchema(s, t, .anthropic);
        },
        .openai => {
            try s.objectField("type");
            try s.write("function");
            try s.objectField("function");
            try s.beginObject();
            try s.objectField("name");
            try s.write(t.name);
            try s.objectField("description");
            try s.write(t.description);
            try s.objectField("parameters");
            try writeProviderSchema(s, t, .openai);
            try s.endObject();
        },
        .panto => {
            try s.objectField("name");
            try s.write(t.name);
            try s.objectField("description");
            try s.write(t.description);
            try s.objectField("input_schema");
            try writeRawJson(s, t.schema_json);
            try s.objectField("capabilities");
            try s.write(t.capabilities);
            try s.objectField("native");
            try s.write(t.native != null);
            // Written only when set, so specs without it read as they were registered.
            if (t.sequential) {
                try s.objectField("sequential");
                try s.write(true);
            }
            if (t.approval == .always) {
                try s.objectField("approval");
                try s.write("always");
            }
        },
    }
}

test "a spec parses, is checked against capabilities and exports per provider" {
    var arena: std.heap.ArenaAllocator = .init(std.testing.allocator);
    defer arena.deinit();
    const a = arena.allocator();
    const value = try std.json.parseFromSliceLeaky(std.json.Value, a,
        \\{"name":"get_weather","description":"Weather.","input_schema":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]},"capabilities":["net"]}
    , .{});
    var diag: Diagnostic = .{};
    const t = try parseSpec(a, value, &diag);
    try std.testing.expect(!t.allowedWith(&.{}));
    try std.testing.expect(t.allowedWith(&.{ "fs.read", "net" }));

    var out: std.Io.Writer.Allocating = .init(std.testing.allocator);
    defer out.deinit();
    try writeExportList(&out.writer, &.{t}, .openai, null);
    try std.testing.expectEqualStrings(
        \\[{"type":"function","function":{"name":"get_weather","description":"Weather.","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}]
    , out.written());
    out.clearRetainingCapacity();
    try writeExportList(&out.writer, &.{t}, .anthropic, &.{});
    try std.testing.expectEqualStrings("[]", out.written());
}

test "bad specs are refused with a reason" {
    var arena: std.heap.ArenaAllocator = .init(std.testing.allocator);
    defer arena.deinit();
    const a = arena.allocator();
    const cases = [_]struct { []const u8, []const u8 }{
        .{ "[]", "must be a JSON object" },
        .{ "{}", "needs \"name\"" },
        .{ "{\"name\":\"has space\"}", "letters, digits" },
        .{ "{\"name\":\"t\",\"input_schema\":{\"type\":\"string\"}}", "describe an object" },
        .{ "{\"name\":\"t\",\"capabilities\":[1]}", "array of strings" },
        .{ "{\"name\":\"t\",\"handler\":1}", "unknown tool spec key \"handler\"" },
        .{ "{\"name\":\"t\",\"sequential\":1}", "sequential must be true or false" },
        .{ "{\"name\":\"t\",\"approval\":\"sometimes\"}", "approval must be \"always\" or \"never\"" },
        .{ "{\"name\":\"t\",\"input_schema\":{\"type\":\"object\",\"x\":" ++ "[" ** 300 ++ "]" ** 300 ++ "}}", "input_schema is nested more than 128 levels deep" },
    };
    for (cases) |case| {
        var diag: Diagnostic = .{};
        const value = try std.json.parseFromSliceLeaky(std.json.Value, a, case[0], .{});
        try std.testing.expectError(error.InvalidConfig, parseSpec(a, value, &diag));
        try std.testing.expect(std.mem.indexOf(u8, diag.message(), case[1]) != null);
    }
}

test "a set keeps names unique and exports with a capability filter given as JSON" {
    var set: Set = .init(std.testing.allocator);
    defer set.deinit();
    var diag: Diagnostic = .{};
    try set.addJson("{\"name\":\"fetch\",\"capabilities\":[\"net\"]}", &diag);
    try set.addJson("{\"name\":\"open\"}", &diag);
    try std.testing.expectError(error.InvalidConfig, set.addJson("{\"name\":\"open\",\"description\":\"again\"}", &diag));
    try std.testing.expectEqualStrings("a tool named \"open\" is already registered", diag.message());
    try std.testing.expectError(error.InvalidConfig, set.addJson("{\"name\":", &diag));
    try std.testing.expect(std.mem.startsWith(u8, diag.message(), "the tool spec is not valid JSON"));
    try std.testing.expectError(error.InvalidConfig, set.addJson("{\"name\":\"t\xc3\"}", &diag));
    try std.testing.expectEqualStrings("the tool spec is not valid UTF-8 text", diag.message());
    try std.testing.expectEqual(@as(usize, 2), set.items().len);

    var out: std.Io.Writer.Allocating = .init(std.testing.allocator);
    defer out.deinit();
    try set.writeExportJson(&out.writer, .anthropic, "[]", &diag);
    try std.testing.expectEqualStrings(
        \\[{"name":"open","description":"","input_schema":{"type":"object","properties":{}}}]
    , out.written());
    out.clearRetainingCapacity();
    try set.writeExportJson(&out.writer, .panto, null, &diag);
    try std.testing.expect(std.mem.indexOf(u8, out.written(), "\"name\":\"fetch\"") != null);
    try std.testing.expectError(error.InvalidConfig, set.writeExportJson(&out.writer, .panto, "[\"net\",2]", &diag));
    try std.testing.expectEqualStrings("the capabilities must be a JSON array of strings", diag.message());
    set.remove("fetch");
    try std.testing.expectEqual(@as(usize, 1), set.items().len);

    // "sequential" stays in the registered spec (and only where it was set).
    try set.addJson("{\"name\":\"alone\",\"sequential\":true}", &diag);
    try std.testing.expect(set.find("alone").?.sequential);
    try std.testing.expect(!set.find("open").?.sequential);
    out.clearRetainingCapacity();
    try set.writeExport(&out.writer, .panto, null);
    try std.testing.expectEqualStrings(
        \\[{"name":"open","description":"","input_schema":{"type":"object","properties":{}},"capabilities":[],"native":false},{"name":"alone","description":"","input_schema":{"type":"object","properties":{}},"capabilities":[],"native":false,"sequential":true}]
    , out.written());
}
