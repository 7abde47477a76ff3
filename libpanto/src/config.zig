//! The agent configuration, and its JSON form (the one `panto_agent_new` takes).
const std = @import("std");
const Allocator = std.mem.Allocator;

pub const Provider = enum {
    anthropic,
    openai,

    pub fn defaultBaseUrl(p: Provider) []const u8 {
        return switch (p) {
            .anthropic => "https://api.anthropic.com",
            .openai => "https://api.openai.com/v1",
        };
    }

    pub fn apiKeyVariable(p: Provider) [:0]const u8 {
        return switch (p) {
            .anthropic => "ANTHROPIC_API_KEY",
            .openai => "OPENAI_API_KEY",
        };
    }
};

pub const default_max_tokens: u32 = 4096;
pub const default_max_tool_iterations: u32 = 10;

const tools = @import("tools.zig");
const read_tool = @import("read_tool.zig");

/// A configuration with borrowed strings; `Agent.init` copies what it keeps.
pub const Config = struct {
    provider: Provider,
    model: []const u8,
    /// null: the provider's public endpoint.
    base_url: ?[]const u8 = null,
    /// null: read from ANTHROPIC_API_KEY or OPENAI_API_KEY.
    api_key: ?[]const u8 = null,
    system: ?[]const u8 = null,
    max_tokens: u32 = default_max_tokens,
    /// Host tools, registered at creation (more can be added with `Agent.addTool`).
    tools: []const tools.Tool = &.{},
    /// What the agent is granted: only tools whose required capabilities are all here run.
    capabilities: []const []const u8 = &.{},
    /// Tool rounds a turn may take; one more fails it with a tool-loop error.
    max_tool_iterations: u32 = default_max_tool_iterations,
    /// Enables the native `read` tool.
    read_tool: ?read_tool.Config = null,
};

/// Why a configuration was refused, for the user to read.
pub const Diagnostic = struct {
    buffer: [256]u8 = undefined,
    len: usize = 0,

    pub fn message(d: *const Diagnostic) []const u8 {
        return d.buffer[0..d.len];
    }

    pub fn fail(d: *Diagnostic, comptime fmt: []const u8, args: anytype) error{InvalidConfig} {
        const written = std.fmt.bufPrint(&d.buffer, fmt, args) catch d.buffer[0..];
        d.len = written.len;
        return error.InvalidConfig;
    }
};

pub const ParseError = error{ InvalidConfig, OutOfMemory };

const known_keys = [_][]const u8{ "provider", "model", "base_url", "api_key", "system", "max_tokens", "tools", "capabilities", "max_tool_iterations", "read_tool" };

/// Parses a JSON object into a Config whose strings live in `arena`. Unknown keys, wrong
/// types and missing required keys are refused with a message in `diag`.
pub fn parseJson(arena: Allocator, json: []const u8, diag: *Diagnostic) ParseError!Config {
    const root = std.json.parseFromSliceLeaky(std.json.Value, arena, json, .{}) catch |err| switch (err) {
        error.OutOfMemory => return error.OutOfMemory,
        else => return diag.fail("config is not valid JSON ({s})", .{@errorName(err)}),
    };
    if (root != .object) return diag.fail("config must be a JSON object", .{});
    const obj = root.object;
    var it = obj.iterator();
    while (it.next()) |entry| {
        const key = entry.key_ptr.*;
        for (known_keys) |k| {
            if (std.mem.eql(u8, k, key)) break;
        } else return diag.fail("unknown config key \"{s}\"", .{key});
    }

    const provider_name = try requiredString(obj, "provider", diag);
    const provider = std.meta.stringToEnum(Provider, provider_name) orelse
        return diag.fail("provider must be \"anthropic\" or \"openai\", not \"{s}\"", .{provider_name});
    var config: Config = .{ .provider = provider, .model = try requiredString(obj, "model", diag) };
    if (config.model.len == 0) return diag.fail("model must not be empty", .{});
    config.base_url = try optionalString(obj, "base_url", diag);
    config.api_key = try optionalString(obj, "api_key", diag);
    config.system = try optionalString(obj, "system", diag);
    if (obj.get("max_tokens")) |v| {
        if (v != .integer or v.integer < 1 or v.integer > std.math.maxInt(u32))
            return diag.fail("max_tokens must be a positive integer", .{});
        config.max_tokens = @intCast(v.integer);
    }
    if (obj.get("max_tool_iterations")) |v| {
        if (v != .integer or v.integer < 0 or v.integer > 1000)
            return diag.fail("max_tool_iterations must be an integer from 0 to 1000", .{});
        config.max_tool_iterations = @intCast(v.integer);
    }
    if (obj.get("capabilities")) |v| {
        if (v != .array) return diag.fail("capabilities must be an array of strings", .{});
        const caps = try arena.alloc([]const u8, v.array.items.len);
        for (v.array.items, caps) |item, *cap| {
            if (item != .string) return diag.fail("capabilities must be an array of strings", .{});
            cap.* = item.string;
        }
        config.capabilities = caps;
    }
    if (obj.get("tools")) |v| {
        if (v != .array) return diag.fail("tools must be an array of tool specs", .{});
        const list = try arena.alloc(tools.Tool, v.array.items.len);
        for (v.array.items, list) |item, *t| t.* = try tools.parseSpec(arena, item, diag);
        config.tools = list;
    }
    if (obj.get("read_tool")) |v| {
        if (v != .object) return diag.fail("read_tool must be an object {{\"root\": dir, \"max_bytes\": n}}", .{});
        var rt: read_tool.Config = .{ .root = "" };
        var it2 = v.object.iterator();
        while (it2.next()) |entry| {
            const key = entry.key_ptr.*;
            const val = entry.value_ptr.*;
            if (std.mem.eql(u8, key, "root")) {
                if (val != .string or val.string.len == 0) return diag.fail("read_tool.root must be a directory path", .{});
                rt.root = val.string;
            } else if (std.mem.eql(u8, key, "max_bytes")) {
                if (val != .integer or val.integer < 64) return diag.fail("read_tool.max_bytes must be an integer of at least 64", .{});
                rt.max_bytes = @intCast(val.integer);
            } else return diag.fail("unknown read_tool key \"{s}\"", .{key});
        }
        if (rt.root.len == 0) return diag.fail("read_tool needs \"root\"", .{});
        config.read_tool = rt;
    }
    if (config.base_url) |url| {
        const uri = std.Uri.parse(url) catch return diag.fail("base_url \"{s}\" is not a URL", .{url});
        if (!std.mem.eql(u8, uri.scheme, "http") and !std.mem.eql(u8, uri.scheme, "https"))
            return diag.fail("base_url must start with http:// or https://", .{});
    }
    return config;
}

fn requiredString(obj: std.json.ObjectMap, key: []const u8, diag: *Diagnostic) ![]const u8 {
    return (try optionalString(obj, key, diag)) orelse diag.fail("config needs \"{s}\"", .{key});
}

fn optionalString(obj: std.json.ObjectMap, key: []const u8, diag: *Diagnostic) !?[]const u8 {
    const v = obj.get(key) orelse return null;
    return switch (v) {
        .string => |s| s,
        .null => null,
        else => diag.fail("\"{s}\" must be a string", .{key}),
    };
}

test "a full config parses" {
    var arena: std.heap.ArenaAllocator = .init(std.testing.allocator);
    defer arena.deinit();
    var diag: Diagnostic = .{};
    const c = try parseJson(arena.allocator(),
        \\{"provider":"openai","model":"m","base_url":"http://127.0.0.1:9/v1","api_key":"k","system":"s","max_tokens":7}
    , &diag);
    try std.testing.expectEqual(Provider.openai, c.provider);
    try std.testing.expectEqual(@as(u32, 7), c.max_tokens);
    try std.testing.expectEqualStrings("s", c.system.?);
}

test "bad configs are refused with a reason" {
    var arena: std.heap.ArenaAllocator = .init(std.testing.allocator);
    defer arena.deinit();
    const cases = [_]struct { []const u8, []const u8 }{
        .{ "nope", "not valid JSON" },
        .{ "[]", "must be a JSON object" },
        .{ "{\"provider\":\"anthropic\"}", "needs \"model\"" },
        .{ "{\"provider\":\"x\",\"model\":\"m\"}", "provider must be" },
        .{ "{\"provider\":\"openai\",\"model\":\"m\",\"colour\":1}", "unknown config key \"colour\"" },
        .{ "{\"provider\":\"openai\",\"model\":\"m\",\"max_tokens\":-1}", "max_tokens" },
        .{ "{\"provider\":\"openai\",\"model\":\"m\",\"base_url\":\"ftp://x\"}", "http://" },
    };
    for (cases) |case| {
        var diag: Diagnostic = .{};
        try std.testing.expectError(error.InvalidConfig, parseJson(arena.allocator(), case[0], &diag));
        try std.testing.expect(std.mem.indexOf(u8, diag.message(), case[1]) != null);
    }
}
