//! The request parameters (config.zig's RequestOptions): their config keys, read from JSON,
//! and the rules that check them, the one that refuses a parameter the agent's provider
//! does not have included. `check` runs on every configuration an agent takes (panto_agent_new,
//! set_config, a turn's options, a Zig `Config`), so a request never carries a parameter its
//! provider would refuse or silently drop.
const std = @import("std");
const Allocator = std.mem.Allocator;
const config_mod = @import("config.zig");
const Config = config_mod.Config;
const RequestOptions = config_mod.RequestOptions;
const Diagnostic = config_mod.Diagnostic;
const Provider = config_mod.Provider;
const json_depth = @import("json_depth.zig");
const strict_schema = @import("strict_schema.zig");
const provider_schema = @import("provider_schema.zig");
const tools = @import("tools.zig");
const providers = @import("providers.zig");
const Value = std.json.Value;

/// The config keys of the request parameters ("thinking" is config.zig's: a level, or
/// {"budget_tokens": N}).
pub const keys = [_][]const u8{ "temperature", "top_p", "top_k", "stop", "seed", "presence_penalty", "frequency_penalty", "metadata", "user", "parallel_tool_calls", "tool_choice", "service_tier", "reasoning_effort", "interleaved_thinking", "response_format", "cache", "extra_headers", "extra_body", "server_tools", "hosted_mcp_servers" };

/// Headers panto writes itself: extra_headers may not hold them (anthropic-beta is merged
/// with panto's own, user-agent replaces panto's).
pub const reserved_headers = [_][]const u8{ "authorization", "x-api-key", "content-type", "content-length", "host", "accept", "accept-encoding", "connection", "transfer-encoding", "anthropic-version", "x-goog-api-key" };

/// Body keys panto writes for one provider or the other: extra_body may not hold them.
pub const reserved_body_keys = [_][]const u8{ "model", "messages", "system", "tools", "stream", "stream_options", "max_tokens", "max_completion_tokens", "temperature", "top_p", "top_k", "stop", "stop_sequences", "seed", "presence_penalty", "frequency_penalty", "metadata", "user", "parallel_tool_calls", "tool_choice", "service_tier", "thinking", "reasoning_effort", "response_format", "output_config", "cache_control", "prompt_cache_key", "prompt_cache_retention", "mcp_servers" };

pub const reasoning_efforts = [_][]const u8{ "minimal", "low", "medium", "high" };
pub const cache_retentions = [_][]const u8{ "in_memory", "24h" };
/// Anthropic's smallest thinking budget.
pub const min_budget_tokens: u32 = 1024;
pub const max_budget_tokens: u32 = 1 << 30;
/// OpenAI's limit.
pub const max_metadata = 16;
pub const max_extra_headers = 64;

/// Sets the parameters `obj` names (null unsets one). Strings stay in `obj`'s arena; JSON
/// values are kept as compact JSON text. Ranges and providers are `check`'s.
pub fn apply(arena: Allocator, r: *RequestOptions, obj: std.json.ObjectMap, diag: *Diagnostic) config_mod.ParseError!void {
    if (obj.get("temperature")) |v| r.temperature = try number(v, "temperature", diag);
    if (obj.get("top_p")) |v| r.top_p = try number(v, "top_p", diag);
    if (obj.get("top_k")) |v| r.top_k = if (v == .null) null else try config_mod.integer(u32, v, 1, std.math.maxInt(u32), "top_k", diag);
    if (obj.get("stop")) |v| r.stop = try stop(arena, v, diag);
    if (obj.get("seed")) |v| r.seed = switch (v) {
        .null => null,
        .integer => |i| i,
        else => return diag.fail("seed must be an integer", .{}),
    };
    if (obj.get("presence_penalty")) |v| r.presence_penalty = try number(v, "presence_penalty", diag);
    if (obj.get("frequency_penalty")) |v| r.frequency_penalty = try number(v, "frequency_penalty", diag);
    if (obj.get("metadata")) |v| r.metadata = try metadata(arena, v, diag);
    if (obj.contains("user")) r.user = try config_mod.optionalString(obj, "user", diag);
    if (obj.get("parallel_tool_calls")) |v| r.parallel_tool_calls = try boolean(v, "parallel_tool_calls", diag);
    if (obj.get("tool_choice")) |v| r.tool_choice = try toolChoice(v, diag);
    if (obj.contains("service_tier")) r.service_tier = try config_mod.optionalString(obj, "service_tier", diag);
    if (obj.contains("reasoning_effort")) r.reasoning_effort = try config_mod.optionalString(obj, "reasoning_effort", diag);
    if (obj.get("interleaved_thinking")) |v| r.interleaved_thinking = try boolean(v, "interleaved_thinking", diag);
    if (obj.get("response_format")) |v| r.response_format = try responseFormat(arena, v, diag);
    if (obj.get("cache")) |v| try applyCache(&r.cache, v, diag);
    if (obj.get("extra_headers")) |v| r.extra_headers = try extraHeaders(arena, v, diag);
    if (obj.get("extra_body")) |v| r.extra_body = try extraBody(arena, v, diag);
    if (obj.get("server_tools")) |v| r.server_tools = try serverTools(arena, v, diag);
    if (obj.get("hosted_mcp_servers")) |v| r.hosted_mcp_servers = try hostedMcpServers(arena, v, diag);
}

/// The value of "thinking" when it is an object: {"budget_tokens": N}.
pub fn thinkingBudget(v: Value, diag: *Diagnostic) error{InvalidConfig}!u32 {
    const sub = try config_mod.object(v, "thinking", &.{"budget_tokens"}, diag);
    const n = sub.get("budget_tokens") orelse return diag.fail("thinking {{\"budget_tokens\": N}} needs budget_tokens", .{});
    return config_mod.integer(u32, n, min_budget_tokens, max_budget_tokens, "thinking.budget_tokens", diag);
}

fn number(v: Value, name: []const u8, diag: *Diagnostic) error{InvalidConfig}!?f64 {
    return switch (v) {
        .null => null,
        .integer => |i| @floatFromInt(i),
        .float => |f| f,
        else => diag.fail("{s} must be a number", .{name}),
    };
}

fn boolean(v: Value, name: []const u8, diag: *Diagnostic) error{InvalidConfig}!?bool {
    return switch (v) {
        .null => null,
        .bool => |b| b,
        else => diag.fail("{s} must be true or false", .{name}),
    };
}

/// A string or an array of strings; null and [] unset it.
fn stop(arena: Allocator, v: Value, diag: *Diagnostic) config_mod.ParseError![]const []const u8 {
    switch (v) {
        .null => return &.{},
        .string => |s| {
            const one = try arena.alloc([]const u8, 1);
            one[0] = s;
            return one;
        },
        .array => |a| {
            const list = try arena.alloc([]const u8, a.items.len);
            for (a.items, list) |item, *s| {
                if (item != .string) return diag.fail("stop must be a string or an array of strings", .{});
                s.* = item.string;
            }
            return list;
        },
        else => return diag.fail("stop must be a string or an array of strings", .{}),
    }
}

fn metadata(arena: Allocator, v: Value, diag: *Diagnostic) config_mod.ParseError!?[]const u8 {
    if (v == .null) return null;
    if (v != .object) return diag.fail("metadata must be an object of string values", .{});
    if (v.object.count() > max_metadata) return diag.fail("metadata takes at most {d} keys", .{max_metadata});
    var it = v.object.iterator();
    while (it.next()) |e| if (e.value_ptr.* != .string)
        return diag.fail("metadata must be an object of string values (\"{s}\" is not a string)", .{e.key_ptr.*});
    return try compact(arena, v);
}

fn toolChoice(v: Value, diag: *Diagnostic) error{InvalidConfig}!?config_mod.ToolChoice {
    const choices = "tool_choice must be \"auto\", \"none\", \"required\" (or \"any\") or {{\"name\": tool}}";
    switch (v) {
        .null => return null,
        .string => |s| {
            if (std.mem.eql(u8, s, "auto")) return .auto;
            if (std.mem.eql(u8, s, "none")) return .none;
            if (std.mem.eql(u8, s, "required") or std.mem.eql(u8, s, "any")) return .required;
            return diag.fail(choices ++ ", not \"{s}\"", .{s});
        },
        .object => {
            const sub = try config_mod.object(v, "tool_choice", &.{"name"}, diag);
            const name = sub.get("name") orelse return diag.fail(choices, .{});
            if (name != .string or name.string.len == 0) return diag.fail("tool_choice.name must be a tool's name", .{});
            return .{ .tool = name.string };
        },
        else => return diag.fail(choices, .{}),
    }
}

fn responseFormat(arena: Allocator, v: Value, diag: *Diagnostic) config_mod.ParseError!?config_mod.ResponseFormat {
    if (v == .null) return null;
    const sub = try config_mod.object(v, "response_format", &.{ "type", "schema", "name", "strict" }, diag);
    const kind = sub.get("type") orelse return diag.fail("response_format needs \"type\": \"text\", \"json_object\" or \"json_schema\"", .{});
    if (kind != .string) return diag.fail("response_format.type must be \"text\", \"json_object\" or \"json_schema\"", .{});
    const t = kind.string;
    const is_schema = std.mem.eql(u8, t, "json_schema");
    if (!is_schema) for ([_][]const u8{ "schema", "name", "strict" }) |k| if (sub.contains(k))
        return diag.fail("response_format.{s} goes with \"type\": \"json_schema\"", .{k});
    if (std.mem.eql(u8, t, "text")) return .text;
    if (std.mem.eql(u8, t, "json_object")) return .json_object;
    if (!is_schema) return diag.fail("response_format.type must be \"text\", \"json_object\" or \"json_schema\", not \"{s}\"", .{t});
    const schema = sub.get("schema") orelse return diag.fail("response_format \"json_schema\" needs \"schema\"", .{});
    if (schema != .object) return diag.fail("response_format.schema must be a JSON object schema", .{});
    if (schema.object.get("type")) |st| if (st != .string or !std.mem.eql(u8, st.string, "object"))
        return diag.fail("response_format.schema must be an object schema (\"type\": \"object\")", .{});
    if (json_depth.valueTooDeep(schema)) return diag.fail("response_format.schema is nested too deeply", .{});
    var format: config_mod.ResponseFormat.JsonSchema = .{ .schema = try compact(arena, schema) };
    format.parsed = parseSchema(arena, format.schema);
    if (sub.get("name")) |n| {
        if (n != .string or !validSchemaName(n.string)) return diag.fail("response_format.name must be 1 to 64 of a-z A-Z 0-9 _ -", .{});
        format.name = n.string;
    }
    if (sub.get("strict")) |s| {
        if (s != .bool) return diag.fail("response_format.strict must be true or false", .{});
        format.strict = s.bool;
    } else format.strict = strict_schema.meetsStrictRules(schema);
    return .{ .json_schema = format };
}

/// OpenAI's rule for a json_schema name.
fn validSchemaName(name: []const u8) bool {
    if (name.len == 0 or name.len > 64) return false;
    for (name) |c| if (!std.ascii.isAlphanumeric(c) and c != '_' and c != '-') return false;
    return true;
}

/// The "cache" object: the keys it names change, the others stay; null resets it.
fn applyCache(c: *config_mod.Cache, v: Value, diag: *Diagnostic) error{InvalidConfig}!void {
    if (v == .null) {
        c.* = .{};
        return;
    }
    const sub = try config_mod.object(v, "cache", &.{ "mode", "ttl", "key", "retention" }, diag);
    if (sub.get("mode")) |m| {
        if (m != .string) return diag.fail("cache.mode must be \"auto\" or \"off\"", .{});
        c.mode = std.meta.stringToEnum(config_mod.Cache.Mode, m.string) orelse
            return diag.fail("cache.mode must be \"auto\" or \"off\", not \"{s}\"", .{m.string});
    }
    if (sub.get("ttl")) |t| c.ttl = switch (t) {
        .null => null,
        .string => |s| std.meta.stringToEnum(config_mod.Cache.Ttl, s) orelse
            return diag.fail("cache.ttl must be \"5m\" or \"1h\", not \"{s}\"", .{s}),
        else => return diag.fail("cache.ttl must be \"5m\" or \"1h\"", .{}),
    };
    if (sub.contains("key")) c.key = try config_mod.optionalString(sub, "key", diag);
    if (sub.contains("retention")) c.retention = try config_mod.optionalString(sub, "retention", diag);
}

fn extraHeaders(arena: Allocator, v: Value, diag: *Diagnostic) config_mod.ParseError![]const config_mod.Header {
    if (v == .null) return &.{};
    if (v != .object) return diag.fail("extra_headers must be an object of header name -> string value", .{});
    const list = try arena.alloc(config_mod.Header, v.object.count());
    var it = v.object.iterator();
    var i: usize = 0;
    while (it.next()) |e| : (i += 1) {
        if (e.value_ptr.* != .string) return diag.fail("extra_headers \"{s}\" must be a string", .{e.key_ptr.*});
        list[i] = .{ .name = e.key_ptr.*, .value = e.value_ptr.string };
    }
    return list;
}

fn extraBody(arena: Allocator, v: Value, diag: *Diagnostic) config_mod.ParseError![]const config_mod.BodyMember {
    if (v == .null) return &.{};
    if (v != .object) return diag.fail("extra_body must be a JSON object", .{});
    if (json_depth.valueTooDeep(v)) return diag.fail("extra_body is nested too deeply", .{});
    const list = try arena.alloc(config_mod.BodyMember, v.object.count());
    var it = v.object.iterator();
    var i: usize = 0;
    while (it.next()) |e| : (i += 1) list[i] = .{ .key = e.key_ptr.*, .value = try compact(arena, e.value_ptr.*) };
    return list;
}

/// An array of JSON objects, each with a string "type" and "name" (the provider checks the
/// rest: they are its tools' definitions), an MCP toolset with "mcp_server_name" instead of
/// "name"; null and [] unset it.
fn serverTools(arena: Allocator, v: Value, diag: *Diagnostic) config_mod.ParseError![]const config_mod.ServerTool {
    if (v == .null) return &.{};
    if (v != .array) return diag.fail("server_tools must be an array of tool objects", .{});
    if (json_depth.valueTooDeep(v)) return diag.fail("server_tools is nested too deeply", .{});
    const list = try arena.alloc(config_mod.ServerTool, v.array.items.len);
    for (v.array.items, list, 0..) |item, *t, i| {
        if (item != .object) return diag.fail("server_tools[{d}] must be a JSON object", .{i});
        const type_name = try nonEmptyString(item, "type", "server_tools", i, diag);
        if (std.mem.eql(u8, type_name, mcp_toolset)) {
            const server = try nonEmptyString(item, "mcp_server_name", "server_tools", i, diag);
            for (list[0..i]) |before| if (std.mem.eql(u8, before.mcp_server, server))
                return diag.fail("server_tools has two MCP toolsets of the server \"{s}\"", .{server});
            t.* = .{ .type = type_name, .name = "", .mcp_server = server, .json = try compact(arena, item) };
            continue;
        }
        const name = try nonEmptyString(item, "name", "server_tools", i, diag);
        for (list[0..i]) |before| if (std.mem.eql(u8, before.name, name))
            return diag.fail("server_tools has two tools named \"{s}\"", .{name});
        t.* = .{ .type = type_name, .name = name, .json = try compact(arena, item) };
    }
    return list;
}

/// The type of the MCP connector's tool: the tools of one server of hosted_mcp_servers.
pub const mcp_toolset = "mcp_toolset";

/// An array of JSON objects, each with a string "type" and "name" (unique) and the rest the
/// provider's to judge (url, authorization_token...); null and [] unset it.
fn hostedMcpServers(arena: Allocator, v: Value, diag: *Diagnostic) config_mod.ParseError![]const config_mod.HostedMcpServer {
    if (v == .null) return &.{};
    if (v != .array) return diag.fail("hosted_mcp_servers must be an array of server objects", .{});
    if (json_depth.valueTooDeep(v)) return diag.fail("hosted_mcp_servers is nested too deeply", .{});
    const list = try arena.alloc(config_mod.HostedMcpServer, v.array.items.len);
    for (v.array.items, list, 0..) |item, *m, i| {
        if (item != .object) return diag.fail("hosted_mcp_servers[{d}] must be a JSON object", .{i});
        _ = try nonEmptyString(item, "type", "hosted_mcp_servers", i, diag);
        const name = try nonEmptyString(item, "name", "hosted_mcp_servers", i, diag);
        for (list[0..i]) |before| if (std.mem.eql(u8, before.name, name))
            return diag.fail("hosted_mcp_servers has two servers named \"{s}\"", .{name});
        m.* = .{ .name = name, .json = try compact(arena, item) };
    }
    return list;
}

/// `item`'s member `key`, a non-empty string, or a failure naming `list`[`i`].
fn nonEmptyString(item: Value, comptime key: []const u8, comptime list: []const u8, i: usize, diag: *Diagnostic) error{InvalidConfig}![]const u8 {
    const example = if (comptime std.mem.eql(u8, list, "hosted_mcp_servers"))
        "{{\"type\": \"url\", \"url\": \"https://...\", \"name\": \"docs\"}}"
    else
        "{{\"type\": \"web_search_20250305\", \"name\": \"web_search\"}}";
    const field = item.object.get(key) orelse return diag.fail(list ++ "[{d}] needs \"" ++ key ++ "\" (e.g. " ++ example ++ ")", .{i});
    if (field != .string or field.string.len == 0) return diag.fail(list ++ "[{d}]." ++ key ++ " must be a non-empty string", .{i});
    return field.string;
}

fn compact(arena: Allocator, v: Value) Allocator.Error![]const u8 {
    return std.json.Stringify.valueAlloc(arena, v, .{});
}

/// The rules of the request parameters for the configuration's provider: ranges, choices, and
/// a parameter the provider does not have refused by name ("top_k is an Anthropic parameter:
/// openai does not take it").
pub fn check(config: Config, diag: *Diagnostic) error{InvalidConfig}!void {
    const r = config.request;
    const p = config.provider;
    // What this provider does not take, and its own ranges (providers/NAME/options.zig).
    try providers.checkOptions(p, config, diag);
    const max_temperature = providers.maxTemperature(p);
    if (r.temperature) |t| if (!(t >= 0 and t <= max_temperature))
        return diag.fail("temperature must be a number from 0 to {d} for {s}", .{ max_temperature, @tagName(p) });
    if (r.top_p) |t| if (!(t >= 0 and t <= 1)) return diag.fail("top_p must be a number from 0 to 1", .{});
    if (r.top_k) |k| if (k < 1) return diag.fail("top_k must be an integer from 1", .{});
    inline for (.{ "presence_penalty", "frequency_penalty" }) |name| {
        if (@field(r, name)) |x| if (!(x >= -2 and x <= 2)) return diag.fail(name ++ " must be a number from -2 to 2", .{});
    }
    for (r.stop) |s| if (s.len == 0) return diag.fail("stop sequences must not be empty", .{});
    if (r.reasoning_effort) |e| if (!oneOf(e, &reasoning_efforts))
        return diag.fail("reasoning_effort must be one of minimal, low, medium, high, not \"{s}\"", .{e});
    if (r.thinking_budget) |b| if (b < min_budget_tokens or b > max_budget_tokens)
        return diag.fail("thinking.budget_tokens must be an integer from {d} to {d}", .{ min_budget_tokens, max_budget_tokens });
    if (r.cache.retention) |ret| if (!oneOf(ret, &cache_retentions))
        return diag.fail("cache.retention must be \"in_memory\" or \"24h\", not \"{s}\"", .{ret});
    if (r.tool_choice) |c| if (c == .tool and c.tool.len == 0) return diag.fail("tool_choice.name must be a tool's name", .{});
    try checkMcp(r, diag);
    try checkHeaders(r.extra_headers, diag);
    for (r.extra_body) |m| if (oneOf(m.key, &reserved_body_keys))
        return diag.fail("extra_body cannot set \"{s}\": panto writes it (use its config key, if it has one)", .{m.key});
}

/// hosted_mcp_servers are Anthropic's MCP connector's (the other providers' hosted MCP is
/// not supported).
pub fn noHostedMcpServers(diag: *Diagnostic, p: Provider) error{InvalidConfig} {
    return diag.fail("hosted_mcp_servers are for Anthropic's MCP connector: provider {s} cannot take them", .{@tagName(p)});
}

/// Each MCP toolset takes the tools of a server of hosted_mcp_servers: the API refuses one whose
/// server is not there (the two keys are set apart, per turn too: checked on the result).
fn checkMcp(r: RequestOptions, diag: *Diagnostic) error{InvalidConfig}!void {
    for (r.server_tools) |t| if (t.mcp_server.len > 0) {
        const found = for (r.hosted_mcp_servers) |m| {
            if (std.mem.eql(u8, m.name, t.mcp_server)) break true;
        } else false;
        if (!found) return diag.fail("server_tools has an MCP toolset of the server \"{s}\", which hosted_mcp_servers does not name", .{t.mcp_server});
    };
}

/// server_tools are Anthropic's hosted tools: Chat Completions has none, and panto does not
/// read the Responses API's hosted-tool output items yet.
pub fn noServerTools(diag: *Diagnostic, p: Provider) error{InvalidConfig} {
    return diag.fail("server_tools are Anthropic's hosted tools (web search, web fetch, code execution): provider {s} cannot take them", .{@tagName(p)});
}

/// "NAME is OWNER parameter: PROVIDER does not take it".
pub fn notFor(diag: *Diagnostic, comptime name: []const u8, comptime owner: []const u8, p: Provider) error{InvalidConfig} {
    return diag.fail("{s} is {s} parameter: {s} does not take it", .{ name, owner, @tagName(p) });
}

/// The service tier `tier` among `tiers` (a provider's), or refused naming them.
pub fn checkServiceTier(tier: []const u8, comptime tiers: []const []const u8, p: Provider, diag: *Diagnostic) error{InvalidConfig}!void {
    if (oneOf(tier, tiers)) return;
    comptime var list: []const u8 = "";
    inline for (tiers, 0..) |t, i| list = list ++ (if (i == 0) "" else ", ") ++ t;
    return diag.fail("service_tier for {s} must be one of " ++ list ++ ", not \"{s}\"", .{ @tagName(p), tier });
}

/// extra_body may not set a member the provider's request writes.
pub fn checkBodyKeys(r: RequestOptions, comptime written: []const []const u8, diag: *Diagnostic) error{InvalidConfig}!void {
    for (r.extra_body) |m| if (oneOf(m.key, written))
        return diag.fail("extra_body cannot set \"{s}\": panto writes it (use its config key, if it has one)", .{m.key});
}

fn checkHeaders(headers: []const config_mod.Header, diag: *Diagnostic) error{InvalidConfig}!void {
    if (headers.len > max_extra_headers) return diag.fail("extra_headers takes at most {d} headers", .{max_extra_headers});
    for (headers, 0..) |h, i| {
        if (!validHeaderName(h.name)) return diag.fail("extra_headers: \"{s}\" is not a header name", .{h.name});
        for (reserved_headers) |name| if (std.ascii.eqlIgnoreCase(name, h.name))
            return diag.fail("extra_headers cannot set \"{s}\": panto writes it", .{h.name});
        if (config_mod.hasControl(h.value)) return diag.fail("extra_headers \"{s}\" contains a control character (its value is not shown)", .{h.name});
        for (headers[0..i]) |before| if (std.ascii.eqlIgnoreCase(before.name, h.name))
            return diag.fail("extra_headers sets \"{s}\" twice", .{h.name});
    }
}

/// An HTTP token (RFC 9110): what a header's name is made of.
pub fn validHeaderName(name: []const u8) bool {
    if (name.len == 0 or name.len > 256) return false;
    for (name) |c| {
        const ok = std.ascii.isAlphanumeric(c) or std.mem.indexOfScalar(u8, "!#$%&'*+-.^_`|~", c) != null;
        if (!ok) return false;
    }
    return true;
}

pub fn oneOf(s: []const u8, choices: []const []const u8) bool {
    for (choices) |c| if (std.mem.eql(u8, c, s)) return true;
    return false;
}

/// A copy of `r` whose strings live in `arena` (Agent.init keeps one).
pub fn dupe(arena: Allocator, r: RequestOptions) Allocator.Error!RequestOptions {
    var out = r;
    out.stop = try tools.dupeStrings(arena, r.stop);
    out.metadata = try dupeOpt(arena, r.metadata);
    out.user = try dupeOpt(arena, r.user);
    if (r.tool_choice) |c| if (c == .tool) {
        out.tool_choice = .{ .tool = try arena.dupe(u8, c.tool) };
    };
    out.service_tier = try dupeOpt(arena, r.service_tier);
    out.reasoning_effort = try dupeOpt(arena, r.reasoning_effort);
    if (r.response_format) |f| if (f == .json_schema) {
        const schema = try arena.dupe(u8, f.json_schema.schema);
        out.response_format = .{ .json_schema = .{
            .name = try arena.dupe(u8, f.json_schema.name),
            .schema = schema,
            .strict = f.json_schema.strict orelse strictByRules(arena, schema),
            .parsed = parseSchema(arena, schema),
        } };
    };
    out.cache.key = try dupeOpt(arena, r.cache.key);
    out.cache.retention = try dupeOpt(arena, r.cache.retention);
    const headers = try arena.alloc(config_mod.Header, r.extra_headers.len);
    for (r.extra_headers, headers) |h, *o| o.* = .{ .name = try arena.dupe(u8, h.name), .value = try arena.dupe(u8, h.value) };
    out.extra_headers = headers;
    const body = try arena.alloc(config_mod.BodyMember, r.extra_body.len);
    for (r.extra_body, body) |m, *o| o.* = .{ .key = try arena.dupe(u8, m.key), .value = try arena.dupe(u8, m.value) };
    out.extra_body = body;
    const hosted = try arena.alloc(config_mod.ServerTool, r.server_tools.len);
    for (r.server_tools, hosted) |t, *o| o.* = .{ .type = try arena.dupe(u8, t.type), .name = try arena.dupe(u8, t.name), .json = try arena.dupe(u8, t.json), .mcp_server = try arena.dupe(u8, t.mcp_server) };
    out.server_tools = hosted;
    const servers = try arena.alloc(config_mod.HostedMcpServer, r.hosted_mcp_servers.len);
    for (r.hosted_mcp_servers, servers) |m, *o| o.* = .{ .name = try arena.dupe(u8, m.name), .json = try arena.dupe(u8, m.json) };
    out.hosted_mcp_servers = servers;
    return out;
}

/// The default of a Zig Config's strict: the rules on its schema text (not strict when the
/// text is not JSON: nothing can be said of it).
fn strictByRules(arena: Allocator, schema: []const u8) bool {
    var scratch: std.heap.ArenaAllocator = .init(arena);
    defer scratch.deinit();
    const v = std.json.parseFromSliceLeaky(Value, scratch.allocator(), schema, .{}) catch return false;
    return !json_depth.valueTooDeep(v) and strict_schema.meetsStrictRules(v);
}

/// The schema parsed into `arena`, or null when it is not JSON or nests too deeply (then it
/// is sent as it is).
fn parseSchema(arena: Allocator, schema: []const u8) ?Value {
    const v = std.json.parseFromSliceLeaky(Value, arena, schema, .{}) catch return null;
    return if (json_depth.valueTooDeep(v)) null else v;
}

fn dupeOpt(arena: Allocator, s: ?[]const u8) Allocator.Error!?[]const u8 {
    return if (s) |x| try arena.dupe(u8, x) else null;
}

/// Whether thinking is on for a request of `config` (a level, or an explicit budget).
pub fn thinkingOn(config: Config) bool {
    return config.thinking != .off or config.request.thinking_budget != null;
}

/// Anthropic's budget_tokens for `config`: the explicit budget, else the level's (0: off).
pub fn budgetTokens(config: Config) u32 {
    return config.request.thinking_budget orelse config.thinking.budgetTokens();
}

const testing = std.testing;

fn parsed(arena: Allocator, json: []const u8) !Config {
    var diag: Diagnostic = .{};
    return config_mod.parseJson(arena, json, &diag) catch |err| {
        std.debug.print("refused: {s}\n", .{diag.message()});
        return err;
    };
}

test "response_format's strict: as given, else the schema's strict rules decide, for JSON and Zig configs" {
    var arena: std.heap.ArenaAllocator = .init(testing.allocator);
    defer arena.deinit();
    const a = arena.allocator();
    const closed = "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"string\"}},\"required\":[\"a\"],\"additionalProperties\":false}";
    const open = "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"string\"}}}";
    const cases = [_]struct { []const u8, ?bool }{
        .{ "{\"provider\":\"openai\",\"model\":\"m\",\"response_format\":{\"type\":\"json_schema\",\"schema\":" ++ closed ++ "}}", true },
        .{ "{\"provider\":\"openai\",\"model\":\"m\",\"response_format\":{\"type\":\"json_schema\",\"schema\":" ++ open ++ "}}", false },
        .{ "{\"provider\":\"openai\",\"model\":\"m\",\"response_format\":{\"type\":\"json_schema\",\"schema\":" ++ open ++ ",\"strict\":true}}", true },
        .{ "{\"provider\":\"openai\",\"model\":\"m\",\"response_format\":{\"type\":\"json_schema\",\"schema\":" ++ closed ++ ",\"strict\":false}}", false },
    };
    for (cases) |c| try testing.expectEqual(c[1], (try parsed(a, c[0])).request.response_format.?.json_schema.strict);
    // A Zig Config leaves it null; the agent's copy (dupe) decides by the same rules.
    const zig_cases = [_]struct { []const u8, ?bool, ?bool }{
        .{ closed, null, true }, .{ open, null, false }, .{ open, true, true }, .{ "not json", null, false },
    };
    for (zig_cases) |c| {
        const r = try dupe(a, .{ .response_format = .{ .json_schema = .{ .schema = c[0], .strict = c[1] } } });
        try testing.expectEqual(c[2], r.response_format.?.json_schema.strict);
    }
}

test "every request parameter parses into RequestOptions" {
    var arena: std.heap.ArenaAllocator = .init(testing.allocator);
    defer arena.deinit();
    const a = try parsed(arena.allocator(),
        \\{"provider":"anthropic","model":"m","temperature":0.5,"top_p":1,"top_k":40,"stop":["END","##"],"user":"u-1",
        \\ "parallel_tool_calls":false,"tool_choice":{"name":"get_weather"},"service_tier":"standard_only",
        \\ "thinking":{"budget_tokens":3000},"interleaved_thinking":true,"cache":{"mode":"off","ttl":"1h"},
        \\ "response_format":{"type":"json_schema","schema":{"type":"object","properties":{"a":{"type":"string"}}}},
        \\ "extra_headers":{"anthropic-beta":"x-1","X-Trace":"t"},"extra_body":{"container":{"id":"c"}},
        \\ "tool_execution":"sequential","log":{"level":"body","file":"/tmp/p.log"}}
    );
    const r = a.request;
    try testing.expectEqual(@as(?f64, 0.5), r.temperature);
    try testing.expectEqual(@as(?f64, 1), r.top_p);
    try testing.expectEqual(@as(?u32, 40), r.top_k);
    try testing.expectEqualStrings("##", r.stop[1]);
    try testing.expectEqualStrings("u-1", r.user.?);
    try testing.expectEqual(@as(?bool, false), r.parallel_tool_calls);
    try testing.expectEqualStrings("get_weather", r.tool_choice.?.tool);
    try testing.expectEqual(@as(?u32, 3000), r.thinking_budget);
    try testing.expectEqual(@as(u32, 3000), budgetTokens(a));
    try testing.expect(thinkingOn(a));
    try testing.expectEqual(config_mod.Cache.Mode.off, r.cache.mode);
    try testing.expectEqual(config_mod.Cache.Ttl.@"1h", r.cache.ttl.?);
    try testing.expectEqualStrings("response", r.response_format.?.json_schema.name);
    try testing.expectEqualStrings("{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"string\"}}}", r.response_format.?.json_schema.schema);
    try testing.expectEqualStrings("X-Trace", r.extra_headers[1].name);
    try testing.expectEqualStrings("{\"id\":\"c\"}", r.extra_body[0].value);
    try testing.expectEqual(config_mod.ToolExecution.sequential, a.tool_execution);
    try testing.expectEqual(config_mod.Log.Level.body, a.log.?.level);

    const o = try parsed(arena.allocator(),
        \\{"provider":"openai","model":"m","temperature":2,"stop":"END","seed":-7,"presence_penalty":-2,"frequency_penalty":1.5,
        \\ "metadata":{"team":"a","run":"7"},"user":"u","tool_choice":"any","service_tier":"flex","reasoning_effort":"minimal",
        \\ "response_format":{"type":"json_object"},"cache":{"key":"k","retention":"24h"}}
    );
    try testing.expectEqualStrings("END", o.request.stop[0]);
    try testing.expectEqual(@as(?i64, -7), o.request.seed);
    try testing.expectEqualStrings("{\"team\":\"a\",\"run\":\"7\"}", o.request.metadata.?);
    try testing.expectEqual(config_mod.ToolChoice.required, o.request.tool_choice.?);
    try testing.expectEqualStrings("k", o.request.cache.key.?);
    // A level replaces an explicit budget.
    var c = try parsed(arena.allocator(), "{\"provider\":\"anthropic\",\"model\":\"m\",\"thinking\":{\"budget_tokens\":2000}}");
    var diag: Diagnostic = .{};
    _ = try config_mod.patchJson(arena.allocator(), &c, "{\"thinking\":\"low\"}", &diag);
    try testing.expectEqual(null, c.request.thinking_budget);
    try testing.expectEqual(@as(u32, 2048), budgetTokens(c));
}

test "request parameters are refused with a reason: values, and a provider that does not take them" {
    var arena: std.heap.ArenaAllocator = .init(testing.allocator);
    defer arena.deinit();
    const cases = [_]struct { []const u8, []const u8 }{
        .{ "\"provider\":\"openai\",\"top_k\":5", "top_k is an Anthropic parameter: openai does not take it" },
        .{ "\"provider\":\"openai\",\"interleaved_thinking\":true", "interleaved_thinking is an Anthropic parameter: openai does not take it" },
        .{ "\"provider\":\"openai\",\"thinking\":{\"budget_tokens\":2048}", "thinking {\"budget_tokens\"} is an Anthropic parameter: openai does not take it" },
        .{ "\"provider\":\"openai\",\"cache\":{\"ttl\":\"5m\"}", "cache.ttl is an Anthropic parameter: openai does not take it" },
        .{ "\"provider\":\"anthropic\",\"seed\":1", "seed is an OpenAI parameter: anthropic does not take it" },
        .{ "\"provider\":\"anthropic\",\"presence_penalty\":0", "presence_penalty is an OpenAI parameter: anthropic does not take it" },
        .{ "\"provider\":\"anthropic\",\"metadata\":{}", "metadata is an OpenAI parameter: anthropic does not take it" },
        .{ "\"provider\":\"anthropic\",\"reasoning_effort\":\"low\"", "reasoning_effort is an OpenAI parameter: anthropic does not take it" },
        .{ "\"provider\":\"anthropic\",\"response_format\":{\"type\":\"json_object\"}", "response_format {\"type\": \"json_object\"} is an OpenAI parameter" },
        .{ "\"provider\":\"anthropic\",\"cache\":{\"key\":\"k\"}", "cache.key is an OpenAI parameter: anthropic does not take it" },
        .{ "\"provider\":\"bedrock\",\"hosted_mcp_servers\":[{\"type\":\"url\",\"url\":\"https://x.example/mcp\",\"name\":\"x\"}]", "hosted_mcp_servers are for Anthropic's MCP connector: provider bedrock cannot take them" },
        .{ "\"provider\":\"bedrock\",\"seed\":1", "seed is not a Bedrock Converse parameter panto sends: bedrock does not take it" },
        .{ "\"provider\":\"bedrock\",\"cache\":{\"key\":\"k\"}", "cache.key is an OpenAI parameter: bedrock does not take it" },
        .{ "\"provider\":\"bedrock\",\"response_format\":{\"type\":\"json_object\"}", "response_format {\"type\": \"json_object\"} has no Bedrock Converse form" },
        .{ "\"provider\":\"bedrock\",\"extra_body\":{\"inferenceConfig\":{}}", "extra_body cannot set \"inferenceConfig\"" },
        .{ "\"provider\":\"anthropic\",\"temperature\":1.5", "temperature must be a number from 0 to 1 for anthropic" },
        .{ "\"provider\":\"openai\",\"temperature\":2.5", "temperature must be a number from 0 to 2 for openai" },
        .{ "\"provider\":\"openai\",\"temperature\":\"hot\"", "temperature must be a number" },
        .{ "\"provider\":\"openai\",\"top_p\":-0.1", "top_p must be a number from 0 to 1" },
        .{ "\"provider\":\"anthropic\",\"top_k\":0", "top_k must be an integer from 1" },
        .{ "\"provider\":\"openai\",\"stop\":[\"a\",\"b\",\"c\",\"d\",\"e\"]", "stop takes at most 4 sequences for openai" },
        .{ "\"provider\":\"anthropic\",\"stop\":[\"a\",\"\"]", "stop sequences must not be empty" },
        .{ "\"provider\":\"anthropic\",\"stop\":[1]", "stop must be a string or an array of strings" },
        .{ "\"provider\":\"openai\",\"seed\":1.5", "seed must be an integer" },
        .{ "\"provider\":\"openai\",\"frequency_penalty\":3", "frequency_penalty must be a number from -2 to 2" },
        .{ "\"provider\":\"openai\",\"metadata\":{\"a\":1}", "metadata must be an object of string values" },
        .{ "\"provider\":\"openai\",\"metadata\":{\"a1\":\"\",\"a2\":\"\",\"a3\":\"\",\"a4\":\"\",\"a5\":\"\",\"a6\":\"\",\"a7\":\"\",\"a8\":\"\",\"a9\":\"\",\"b1\":\"\",\"b2\":\"\",\"b3\":\"\",\"b4\":\"\",\"b5\":\"\",\"b6\":\"\",\"b7\":\"\",\"b8\":\"\"}", "metadata takes at most 16 keys" },
        .{ "\"provider\":\"openai\",\"parallel_tool_calls\":1", "parallel_tool_calls must be true or false" },
        .{ "\"provider\":\"openai\",\"tool_choice\":\"sometimes\"", "tool_choice must be \"auto\", \"none\", \"required\" (or \"any\") or {\"name\": tool}, not \"sometimes\"" },
        .{ "\"provider\":\"openai\",\"tool_choice\":{\"name\":\"\"}", "tool_choice.name must be a tool's name" },
        .{ "\"provider\":\"openai\",\"tool_choice\":{\"type\":\"tool\"}", "unknown tool_choice key \"type\"" },
        .{ "\"provider\":\"anthropic\",\"service_tier\":\"flex\"", "service_tier for anthropic must be one of auto, standard_only, not \"flex\"" },
        .{ "\"provider\":\"openai\",\"service_tier\":\"standard_only\"", "service_tier for openai must be one of auto, default, flex, scale, priority" },
        .{ "\"provider\":\"openai\",\"reasoning_effort\":\"extreme\"", "reasoning_effort must be one of minimal, low, medium, high" },
        .{ "\"provider\":\"anthropic\",\"thinking\":{\"budget_tokens\":1000}", "thinking.budget_tokens must be an integer from 1024" },
        .{ "\"provider\":\"anthropic\",\"thinking\":{\"budget\":2000}", "unknown thinking key \"budget\"" },
        .{ "\"provider\":\"anthropic\",\"thinking\":7", "thinking must be one of off, minimal, low, medium, high, or {\"budget_tokens\": N}" },
        .{ "\"provider\":\"anthropic\",\"response_format\":{\"type\":\"xml\"}", "response_format.type must be \"text\", \"json_object\" or \"json_schema\", not \"xml\"" },
        .{ "\"provider\":\"anthropic\",\"response_format\":{\"type\":\"json_schema\"}", "response_format \"json_schema\" needs \"schema\"" },
        .{ "\"provider\":\"anthropic\",\"response_format\":{\"type\":\"json_schema\",\"schema\":{\"type\":\"array\"}}", "response_format.schema must be an object schema" },
        .{ "\"provider\":\"anthropic\",\"response_format\":{\"type\":\"json_schema\",\"schema\":{},\"name\":\"a b\"}", "response_format.name must be 1 to 64" },
        .{ "\"provider\":\"anthropic\",\"response_format\":{\"type\":\"text\",\"strict\":true}", "response_format.strict goes with \"type\": \"json_schema\"" },
        .{ "\"provider\":\"anthropic\",\"cache\":{\"mode\":\"always\"}", "cache.mode must be \"auto\" or \"off\", not \"always\"" },
        .{ "\"provider\":\"anthropic\",\"cache\":{\"ttl\":\"2h\"}", "cache.ttl must be \"5m\" or \"1h\", not \"2h\"" },
        .{ "\"provider\":\"openai\",\"cache\":{\"retention\":\"1w\"}", "cache.retention must be \"in_memory\" or \"24h\", not \"1w\"" },
        .{ "\"provider\":\"openai\",\"extra_headers\":{\"Authorization\":\"Bearer x\"}", "extra_headers cannot set \"Authorization\": panto writes it" },
        .{ "\"provider\":\"anthropic\",\"extra_headers\":{\"anthropic-version\":\"2020\"}", "extra_headers cannot set \"anthropic-version\"" },
        .{ "\"provider\":\"openai\",\"extra_headers\":{\"X-A\":\"a\\r\\nX-B: b\"}", "extra_headers \"X-A\" contains a control character (its value is not shown)" },
        .{ "\"provider\":\"openai\",\"extra_headers\":{\"X A\":\"a\"}", "extra_headers: \"X A\" is not a header name" },
        .{ "\"provider\":\"openai\",\"extra_headers\":{\"X-A\":1}", "extra_headers \"X-A\" must be a string" },
        .{ "\"provider\":\"openai\",\"extra_headers\":{\"x-a\":\"1\",\"X-A\":\"2\"}", "extra_headers sets \"X-A\" twice" },
        .{ "\"provider\":\"openai\",\"extra_body\":{\"stream\":false}", "extra_body cannot set \"stream\": panto writes it" },
        .{ "\"provider\":\"anthropic\",\"extra_body\":{\"messages\":[]}", "extra_body cannot set \"messages\"" },
        .{ "\"provider\":\"anthropic\",\"extra_body\":{\"temperature\":0}", "extra_body cannot set \"temperature\"" },
        .{ "\"provider\":\"anthropic\",\"extra_body\":[]", "extra_body must be a JSON object" },
        .{ "\"provider\":\"anthropic\",\"tool_execution\":\"random\"", "tool_execution must be \"parallel\" or \"sequential\", not \"random\"" },
        .{ "\"provider\":\"anthropic\",\"log\":{\"level\":\"trace\"}", "log.level must be one of off, debug, body, not \"trace\"" },
    };
    for (cases) |case| {
        var diag: Diagnostic = .{};
        const json = try std.fmt.allocPrint(arena.allocator(), "{{\"model\":\"m\",{s}}}", .{case[0]});
        try testing.expectError(error.InvalidConfig, config_mod.parseJson(arena.allocator(), json, &diag));
        testing.expect(std.mem.startsWith(u8, diag.message(), case[1])) catch |err| {
            std.debug.print("{s}\n  got: {s}\n  want: {s}\n", .{ case[0], diag.message(), case[1] });
            return err;
        };
    }
}

test "set_config that switches provider refuses the other's parameters unless it unsets them" {
    var arena: std.heap.ArenaAllocator = .init(testing.allocator);
    defer arena.deinit();
    var diag: Diagnostic = .{};
    var c = try parsed(arena.allocator(), "{\"provider\":\"anthropic\",\"model\":\"m\",\"top_k\":5,\"temperature\":0.3}");
    try testing.expectError(error.InvalidConfig, config_mod.patchJson(arena.allocator(), &c, "{\"provider\":\"openai\"}", &diag));
    try testing.expectEqualStrings("top_k is an Anthropic parameter: openai does not take it", diag.message());
    try testing.expectEqual(Provider.anthropic, c.provider);
    _ = try config_mod.patchJson(arena.allocator(), &c, "{\"provider\":\"openai\",\"top_k\":null}", &diag);
    try testing.expectEqual(Provider.openai, c.provider);
    try testing.expectEqual(null, c.request.top_k);
    try testing.expectEqual(@as(?f64, 0.3), c.request.temperature);
    // Unsetting: null, and [] for stop.
    _ = try config_mod.patchJson(arena.allocator(), &c, "{\"temperature\":null,\"stop\":\"x\"}", &diag);
    try testing.expectEqual(null, c.request.temperature);
    _ = try config_mod.patchJson(arena.allocator(), &c, "{\"stop\":[]}", &diag);
    try testing.expectEqual(@as(usize, 0), c.request.stop.len);
}

test "a recursive json_schema is refused for Anthropic, at set-up and at a switch, and taken for OpenAI" {
    var arena: std.heap.ArenaAllocator = .init(testing.allocator);
    defer arena.deinit();
    var diag: Diagnostic = .{};
    const tree = "\"response_format\":{\"type\":\"json_schema\",\"schema\":{\"$defs\":{\"Node\":{\"type\":\"object\",\"properties\":{\"kids\":{\"type\":\"array\",\"items\":{\"$ref\":\"#/$defs/Node\"}}},\"required\":[\"kids\"]}},\"$ref\":\"#/$defs/Node\"}}";
    try testing.expectError(error.InvalidConfig, config_mod.parseJson(arena.allocator(), "{\"provider\":\"anthropic\",\"model\":\"m\"," ++ tree ++ "}", &diag));
    try testing.expectEqualStrings("response_format.schema is recursive (\"$ref\": \"#/$defs/Node\" leads back into itself): Anthropic's structured outputs refuse a recursive schema", diag.message());
    var c = try parsed(arena.allocator(), "{\"provider\":\"openai\",\"model\":\"m\"," ++ tree ++ "}");
    try testing.expectError(error.InvalidConfig, config_mod.patchJson(arena.allocator(), &c, "{\"provider\":\"anthropic\",\"model\":\"m\"}", &diag));
    try testing.expectEqual(Provider.openai, c.provider);
}

test "a turn's options patch a copy of the configuration: request keys, max_tokens, system, cache_breakpoint" {
    var arena: std.heap.ArenaAllocator = .init(testing.allocator);
    defer arena.deinit();
    var diag: Diagnostic = .{};
    const base = try parsed(arena.allocator(), "{\"provider\":\"anthropic\",\"model\":\"m\",\"temperature\":0.3,\"system\":\"s\"}");
    const turn = try config_mod.parseTurnOptions(arena.allocator(), base,
        \\{"temperature":0.9,"max_tokens":99,"system":"turn","cache_breakpoint":true,"thinking":{"budget_tokens":1024}}
    , &diag);
    try testing.expect(turn.cache_breakpoint);
    try testing.expectEqual(@as(?f64, 0.9), turn.config.request.temperature);
    try testing.expectEqual(@as(u32, 99), turn.config.max_tokens);
    try testing.expectEqualStrings("turn", turn.config.system.?);
    try testing.expectEqual(@as(?f64, 0.3), base.request.temperature);
    const refused = [_]struct { []const u8, []const u8 }{
        .{ "{\"model\":\"x\"}", "\"model\" cannot be set for one turn" },
        .{ "{\"provider\":\"openai\"}", "\"provider\" cannot be set for one turn" },
        .{ "{\"colour\":1}", "unknown option \"colour\"" },
        .{ "{\"seed\":1}", "seed is an OpenAI parameter: anthropic does not take it" },
        .{ "{\"cache_breakpoint\":1}", "cache_breakpoint must be true or false" },
        .{ "[]", "options must be a JSON object" },
        .{ "{", "options is not valid JSON" },
    };
    for (refused) |case| {
        try testing.expectError(error.InvalidConfig, config_mod.parseTurnOptions(arena.allocator(), base, case[0], &diag));
        try testing.expectEqualStrings(case[1], diag.message()[0..@min(case[1].len, diag.message().len)]);
    }
}

test "a Zig Config is checked by the same rules when an agent is made" {
    const Agent = @import("agent.zig").Agent;
    var diag: Diagnostic = .{};
    try testing.expectError(error.InvalidConfig, Agent.initWithDiagnostic(testing.allocator, .{ .provider = .openai, .model = "m", .api_key = "k", .request = .{ .top_k = 3 } }, &diag));
    try testing.expectEqualStrings("top_k is an Anthropic parameter: openai does not take it", diag.message());
    const a = try Agent.initWithDiagnostic(testing.allocator, .{ .provider = .anthropic, .model = "m", .api_key = "k", .request = .{ .top_k = 3, .stop = &.{"END"}, .extra_body = &.{.{ .key = "speed", .value = "\"fast\"" }} } }, &diag);
    defer a.deinit();
    try testing.expectEqualStrings("END", a.config.request.stop[0]);
    try testing.expectEqualStrings("\"fast\"", a.config.request.extra_body[0].value);
}
