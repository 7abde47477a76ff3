//! The `mcp_servers` config key: one MCP server per name, a command (stdio) or a URL
//! (Streamable HTTP), whose tools the agent offers (docs/design/mcp.md, decision 7). Parsed
//! and checked here; started by servers.zig.
const std = @import("std");
const Allocator = std.mem.Allocator;
const config_mod = @import("../config.zig");
const Diagnostic = config_mod.Diagnostic;
const stdio = @import("stdio.zig");
const http = @import("http.zig");

pub const ServerConfig = struct {
    /// The config key: the prefix of its tools' names (tool_name.zig).
    name: []const u8,
    /// The stdio server's command; "" for a server reached at `url`.
    command: []const u8,
    args: []const []const u8 = &.{},
    /// Added to the minimal environment the server gets (PATH and HOME).
    env: []const stdio.EnvVar = &.{},
    cwd: ?[]const u8 = null,
    /// Only these MCP tool names are offered; null: all of the server's tools.
    tools: ?[]const []const u8 = null,
    /// Capabilities every tool of the server requires (the capability guard, tools.zig).
    requires: []const []const u8 = &.{},
    /// Each request's limit.
    timeout_ms: u64 = 60_000,
    /// The handshake's (a server started through `npx` may fetch a package first).
    init_timeout_ms: u64 = 30_000,
    /// A Streamable HTTP server's endpoint (`command` is then ""), and the headers sent on
    /// each of its requests (a bearer token is one).
    url: ?[]const u8 = null,
    headers: []const http.Header = &.{},
};

const keys = [_][]const u8{ "command", "args", "env", "cwd", "tools", "requires", "timeout_ms", "init_timeout_ms", "url", "headers" };
/// The headers of the transport itself, which the config's `headers` may not set.
const mcp_headers = [_][]const u8{ "mcp-session-id", "mcp-protocol-version", "accept", "content-type", "content-length", "host", "transfer-encoding", "connection" };
const validHeaderName = @import("../request_options.zig").validHeaderName;
/// Only a spawned server has these.
const stdio_keys = [_][]const u8{ "command", "args", "env", "cwd" };

/// A server's name: a letter, then letters, digits, '_' or '-' (24 at most), without "__" (the
/// separator of the prefixed tool names).
pub fn validName(name: []const u8) bool {
    if (name.len == 0 or name.len > 24 or !std.ascii.isAlphabetic(name[0])) return false;
    for (name) |c| if (!(std.ascii.isAlphanumeric(c) or c == '_' or c == '-')) return false;
    return std.mem.indexOf(u8, name, "__") == null;
}

/// Parses `{"NAME": {"command": ..., ...}, ...}`; strings stay in `value`'s arena.
pub fn parse(arena: Allocator, value: std.json.Value, diag: *Diagnostic) config_mod.ParseError![]const ServerConfig {
    if (value != .object) return diag.fail("mcp_servers must be a JSON object of servers by name", .{});
    const list = try arena.alloc(ServerConfig, value.object.count());
    var it = value.object.iterator();
    var i: usize = 0;
    while (it.next()) |entry| : (i += 1) {
        const name = entry.key_ptr.*;
        if (!validName(name))
            return diag.fail("mcp_servers: \"{s}\" is not a server name: a letter, then up to 23 letters, digits, '_' or '-', without \"__\"", .{name});
        list[i] = try parseOne(arena, name, entry.value_ptr.*, diag);
    }
    // In name order, whatever the order of the JSON object's keys (a Lua table or a Go map
    // has none): the tools a request offers are then the same from every language.
    std.mem.sort(ServerConfig, list, {}, byName);
    return list;
}

fn byName(_: void, a: ServerConfig, b: ServerConfig) bool {
    return std.mem.lessThan(u8, a.name, b.name);
}

fn parseOne(arena: Allocator, name: []const u8, value: std.json.Value, diag: *Diagnostic) config_mod.ParseError!ServerConfig {
    if (value != .object) return diag.fail("mcp_servers.{s} must be a JSON object", .{name});
    var it = value.object.iterator();
    while (it.next()) |entry| {
        for (keys) |k| {
            if (std.mem.eql(u8, k, entry.key_ptr.*)) break;
        } else return diag.fail("unknown mcp_servers.{s} key \"{s}\"", .{ name, entry.key_ptr.* });
    }
    const obj = value.object;
    var server: ServerConfig = .{ .name = name, .command = "" };
    if (obj.get("url")) |url| return parseHttp(arena, name, obj, url, server, diag);
    if (obj.get("headers") != null) return diag.fail("mcp_servers.{s}: \"headers\" are for a server at a \"url\"", .{name});
    const command = obj.get("command") orelse return diag.fail("mcp_servers.{s} needs \"command\" (stdio) or \"url\" (Streamable HTTP)", .{name});
    if (command != .string or command.string.len == 0) return diag.fail("mcp_servers.{s}.command must be a non-empty string", .{name});
    server.command = command.string;
    if (obj.get("args")) |v| server.args = try strings(arena, v, name, "args", diag);
    if (obj.get("cwd")) |v| {
        if (v != .string or v.string.len == 0) return diag.fail("mcp_servers.{s}.cwd must be a directory path", .{name});
        server.cwd = v.string;
    }
    if (obj.get("env")) |v| {
        if (v != .object) return diag.fail("mcp_servers.{s}.env must be a JSON object of strings", .{name});
        const env = try arena.alloc(stdio.EnvVar, v.object.count());
        var env_it = v.object.iterator();
        for (env) |*e| {
            const entry = env_it.next().?;
            if (entry.value_ptr.* != .string or entry.key_ptr.len == 0 or std.mem.indexOfScalar(u8, entry.key_ptr.*, '=') != null)
                return diag.fail("mcp_servers.{s}.env must be a JSON object of strings", .{name});
            e.* = .{ .name = entry.key_ptr.*, .value = entry.value_ptr.string };
        }
        server.env = env;
    }
    return try commonKeys(arena, name, obj, server, diag);
}

/// The keys of every server, stdio or HTTP.
fn commonKeys(arena: Allocator, name: []const u8, obj: std.json.ObjectMap, given: ServerConfig, diag: *Diagnostic) config_mod.ParseError!ServerConfig {
    var server = given;
    if (obj.get("requires")) |v| server.requires = try strings(arena, v, name, "requires", diag);
    if (obj.get("tools")) |v| server.tools = try strings(arena, v, name, "tools", diag);
    if (obj.get("timeout_ms")) |v| server.timeout_ms = try config_mod.integer(u64, v, 1, 86_400_000, "mcp_servers timeout_ms", diag);
    if (obj.get("init_timeout_ms")) |v| server.init_timeout_ms = try config_mod.integer(u64, v, 1, 86_400_000, "mcp_servers init_timeout_ms", diag);
    return server;
}

/// A server at `url`: http or https, with its headers; none of a spawned server's keys.
fn parseHttp(arena: Allocator, name: []const u8, obj: std.json.ObjectMap, url: std.json.Value, common: ServerConfig, diag: *Diagnostic) config_mod.ParseError!ServerConfig {
    for (stdio_keys) |k| if (obj.contains(k))
        return diag.fail("mcp_servers.{s}: \"url\" and \"{s}\" do not go together: a server is a command (stdio) or a URL (Streamable HTTP)", .{ name, k });
    var server = common;
    if (url != .string) return diag.fail("mcp_servers.{s}.url must be an http or https URL", .{name});
    const uri = std.Uri.parse(url.string) catch return diag.fail("mcp_servers.{s}.url must be an http or https URL", .{name});
    const web = std.ascii.eqlIgnoreCase(uri.scheme, "http") or std.ascii.eqlIgnoreCase(uri.scheme, "https");
    if (!web or uri.host == null)
        return diag.fail("mcp_servers.{s}.url must be an http or https URL", .{name});
    server.url = url.string;
    if (obj.get("headers")) |v| {
        const bad = "mcp_servers.{s}.headers must be a JSON object of strings";
        if (v != .object) return diag.fail(bad, .{name});
        const headers = try arena.alloc(http.Header, v.object.count());
        var it = v.object.iterator();
        for (headers) |*h| {
            const entry = it.next().?;
            if (entry.value_ptr.* != .string or !validHeaderName(entry.key_ptr.*) or config_mod.hasControl(entry.value_ptr.string)) return diag.fail(bad, .{name});
            for (mcp_headers) |own| if (std.ascii.eqlIgnoreCase(own, entry.key_ptr.*))
                return diag.fail("mcp_servers.{s}.headers cannot set \"{s}\": panto writes it", .{ name, entry.key_ptr.* });
            h.* = .{ .name = entry.key_ptr.*, .value = entry.value_ptr.string };
        }
        server.headers = headers;
    }
    return try commonKeys(arena, name, obj, server, diag);
}

fn strings(arena: Allocator, v: std.json.Value, server: []const u8, key: []const u8, diag: *Diagnostic) config_mod.ParseError![]const []const u8 {
    if (v != .array) return diag.fail("mcp_servers.{s}.{s} must be an array of strings", .{ server, key });
    const out = try arena.alloc([]const u8, v.array.items.len);
    for (v.array.items, out) |item, *s| {
        if (item != .string) return diag.fail("mcp_servers.{s}.{s} must be an array of strings", .{ server, key });
        s.* = item.string;
    }
    return out;
}

/// A deep copy into `arena` (the agent keeps its configuration's strings).
pub fn dupe(arena: Allocator, list: []const ServerConfig) Allocator.Error![]const ServerConfig {
    const dupeStrings = @import("../tools.zig").dupeStrings;
    const out = try arena.alloc(ServerConfig, list.len);
    for (list, out) |src, *dst| {
        dst.* = src;
        dst.name = try arena.dupe(u8, src.name);
        dst.command = try arena.dupe(u8, src.command);
        dst.args = try dupeStrings(arena, src.args);
        dst.requires = try dupeStrings(arena, src.requires);
        dst.tools = if (src.tools) |t| try dupeStrings(arena, t) else null;
        dst.cwd = if (src.cwd) |c| try arena.dupe(u8, c) else null;
        const env = try arena.alloc(stdio.EnvVar, src.env.len);
        for (src.env, env) |s, *d| d.* = .{ .name = try arena.dupe(u8, s.name), .value = try arena.dupe(u8, s.value) };
        dst.env = env;
        dst.url = if (src.url) |u| try arena.dupe(u8, u) else null;
        const headers = try arena.alloc(http.Header, src.headers.len);
        for (src.headers, headers) |s, *d| d.* = .{ .name = try arena.dupe(u8, s.name), .value = try arena.dupe(u8, s.value) };
        dst.headers = headers;
    }
    return out;
}

test "mcp_servers parses, and bad servers are refused with a reason" {
    var arena_state: std.heap.ArenaAllocator = .init(std.testing.allocator);
    defer arena_state.deinit();
    const arena = arena_state.allocator();
    var diag: Diagnostic = .{};
    const good = try std.json.parseFromSliceLeaky(std.json.Value, arena,
        \\{"files":{"command":"python3","args":["s.py"],"env":{"A":"1"},"cwd":"/tmp","tools":["echo"],"requires":["net"],"timeout_ms":5},"db":{"command":"db"}}
    , .{});
    const both = try parse(arena, good, &diag);
    try std.testing.expectEqual(@as(usize, 2), both.len);
    try std.testing.expectEqualStrings("db", both[0].name); // in name order
    const list = both[1..];
    try std.testing.expectEqualStrings("files", list[0].name);
    try std.testing.expectEqualStrings("s.py", list[0].args[0]);
    try std.testing.expectEqualStrings("1", list[0].env[0].value);
    try std.testing.expectEqualStrings("echo", list[0].tools.?[0]);
    try std.testing.expectEqual(@as(u64, 5), list[0].timeout_ms);

    const remote = try std.json.parseFromSliceLeaky(std.json.Value, arena,
        \\{"gh":{"url":"https://example.com/mcp","headers":{"Authorization":"Bearer t"},"tools":["a"],"timeout_ms":7}}
    , .{});
    const http_list = try parse(arena, remote, &diag);
    try std.testing.expectEqualStrings("https://example.com/mcp", http_list[0].url.?);
    try std.testing.expectEqualStrings("", http_list[0].command);
    try std.testing.expectEqualStrings("Bearer t", http_list[0].headers[0].value);
    try std.testing.expectEqualStrings("a", http_list[0].tools.?[0]);
    try std.testing.expectEqual(@as(u64, 7), http_list[0].timeout_ms);

    const cases = [_]struct { []const u8, []const u8 }{
        .{ "[]", "must be a JSON object of servers" },
        .{ "{\"a__b\":{\"command\":\"x\"}}", "is not a server name" },
        .{ "{\"9a\":{\"command\":\"x\"}}", "is not a server name" },
        .{ "{\"a\":{}}", "needs \"command\"" },
        .{ "{\"a\":{\"command\":\"x\",\"url\":\"http://h\"}}", "do not go together" },
        .{ "{\"a\":{\"url\":\"ftp://h\"}}", "must be an http or https URL" },
        .{ "{\"a\":{\"url\":\"http://h\",\"headers\":{\"X\":1}}}", "headers must be a JSON object of strings" },
        .{ "{\"a\":{\"url\":\"http://h\",\"headers\":{\"X\":\"a\\nb\"}}}", "headers must be a JSON object of strings" },
        .{ "{\"a\":{\"command\":\"x\",\"headers\":{}}}", "are for a server at a \"url\"" },
        .{ "{\"a\":{\"url\":\"http://h\",\"headers\":{\"Mcp-Session-Id\":\"1\"}}}", "panto writes it" },
        .{ "{\"a\":{\"command\":\"x\",\"bogus\":1}}", "unknown mcp_servers.a key \"bogus\"" },
        .{ "{\"a\":{\"command\":\"x\",\"args\":[1]}}", "mcp_servers.a.args must be an array of strings" },
        .{ "{\"a\":{\"command\":\"x\",\"env\":{\"A\":1}}}", "env must be a JSON object of strings" },
        .{ "{\"a\":{\"command\":\"x\",\"timeout_ms\":0}}", "timeout_ms must be an integer" },
    };
    for (cases) |case| {
        const value = try std.json.parseFromSliceLeaky(std.json.Value, arena, case[0], .{});
        try std.testing.expectError(error.InvalidConfig, parse(arena, value, &diag));
        std.testing.expect(std.mem.indexOf(u8, diag.message(), case[1]) != null) catch |err| {
            std.debug.print("{s}: {s}\n", .{ case[0], diag.message() });
            return err;
        };
    }
}
