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
};

/// Why a configuration was refused, for the user to read.
pub const Diagnostic = struct {
    buffer: [256]u8 = undefined,
    len: usize = 0,

    pub fn message(d: *const Diagnostic) []const u8 {
        return d.buffer[0..d.len];
    }

    fn fail(d: *Diagnostic, comptime fmt: []const u8, args: anytype) error{InvalidConfig} {
        const written = std.fmt.bufPrint(&d.buffer, fmt, args) catch d.buffer[0..];
        d.len = written.len;
        return error.InvalidConfig;
    }
};

pub const ParseError = error{ InvalidConfig, OutOfMemory };

const known_keys = [_][]const u8{ "provider", "model", "base_url", "api_key", "system", "max_tokens" };

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
