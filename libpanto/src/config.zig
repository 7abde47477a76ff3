//! The agent configuration, and its JSON form (the one `panto_agent_new` takes).
const std = @import("std");
const utf8 = @import("utf8.zig");
const providers = @import("providers.zig");
const Allocator = std.mem.Allocator;

/// The providers panto speaks (providers.zig).
pub const Provider = providers.Provider;

pub const default_max_tokens: u32 = 4096;
pub const default_max_tool_iterations: u32 = 10;

const tools = @import("tools.zig");
const read_tool = @import("read_tool.zig");
const session_id = @import("session/id.zig");
const request_options = @import("request_options.zig");
const endpoint = @import("endpoint.zig");
const mcp_config = @import("mcp/server_config.zig");
const catalog = @import("catalog/catalog.zig");
const approval = @import("approval.zig");

/// A configuration with borrowed strings; `Agent.init` copies what it keeps.
pub const Config = struct {
    provider: Provider,
    model: []const u8,
    /// null: read from ANTHROPIC_BASE_URL or OPENAI_BASE_URL, else the provider's public
    /// endpoint (endpoint.zig).
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
    thinking: Thinking = .off,
    retry: Retry = .{},
    timeouts: Timeouts = .{},
    keep_alive: KeepAlive = .{},
    /// Automatic compaction of long conversations (compaction.zig).
    compaction: Compaction = .{},
    /// The session the conversation is kept in on disk (session/); panto_agent_new only.
    session: ?Session = null,
    /// Whether the host tool calls of one message may run at the same time.
    tool_execution: ToolExecution = .parallel,
    /// PANTO_LOG's settings as a config key (log.zig); null: from the environment.
    log: ?Log = null,
    /// Request parameters (request_options.zig checks them per provider; providers/ write them).
    request: RequestOptions = .{},
    /// MCP servers whose tools the agent offers (mcp/server_config.zig); panto_agent_new only.
    mcp_servers: []const mcp_config.ServerConfig = &.{},
    /// What the user says of the model, over the catalog's entry (catalog/override.zig).
    model_info: ?catalog.Override = null,
    /// Which tool calls wait for a person's answer, first match wins (approval.zig).
    approval_rules: []const approval.Rule = &.{},
    /// What a turn may spend before it ends, normally, with the stop reason `budget`.
    budget: Budget = .{},
};

/// A turn's budgets (issue 36); null: none. Reaching one ends the turn with the stop reason
/// `budget` and the budget's name as provider_stop_reason (stream.zig, `endByBudget`), not
/// with an error: max_tool_iterations and timeouts.total_ms stay the runaway guards that fail
/// a turn.
pub const Budget = struct {
    /// The turn's output tokens, summed at each message's end: once reached, the turn does
    /// not go on to another tool round or continuation.
    output_tokens: ?u64 = null,
    /// Tool rounds (and pause_turn continuations) the turn may take; the calls of one more are
    /// answered "Skipped: the turn's budget is spent." and the turn ends.
    tool_rounds: ?u32 = null,
    /// From the turn's first request: a deadline that ends the turn where it is (the message
    /// streaming kept as a cancel keeps it), counted in the approval waits too.
    wall_ms: ?u64 = null,
    /// The turn's cost in US dollars at the model's list prices (the model catalog, or the
    /// config's model_info), summed at each message's end as output_tokens is. A model whose
    /// prices are unknown cannot be held to it: the turn fails before its first request
    /// (`Config`), rather than running unbounded.
    cost_usd: ?f64 = null,

    pub const Kind = enum { output_tokens, tool_rounds, wall_ms, cost_usd };
};

pub const ToolExecution = enum { parallel, sequential };

pub const Log = struct {
    level: Level = .off,
    /// null: stderr.
    file: ?[]const u8 = null,

    pub const Level = enum { off, debug, body };
};

/// What the user sets on a request. null (empty): not sent, the provider's default applies.
/// JSON values are kept as compact JSON text, written into the body as they are.
pub const RequestOptions = struct {
    temperature: ?f64 = null,
    top_p: ?f64 = null,
    /// Anthropic only.
    top_k: ?u32 = null,
    stop: []const []const u8 = &.{},
    /// OpenAI only.
    seed: ?i64 = null,
    presence_penalty: ?f64 = null,
    frequency_penalty: ?f64 = null,
    /// OpenAI only: a JSON object of strings.
    metadata: ?[]const u8 = null,
    /// Anthropic metadata.user_id, OpenAI user.
    user: ?[]const u8 = null,
    parallel_tool_calls: ?bool = null,
    tool_choice: ?ToolChoice = null,
    service_tier: ?[]const u8 = null,
    /// Anthropic thinking budget set explicitly ({"budget_tokens": N}): wins over the level.
    thinking_budget: ?u32 = null,
    /// OpenAI only: wins over the thinking level.
    reasoning_effort: ?[]const u8 = null,
    /// Anthropic only; null: on when thinking is on and the agent has tools.
    interleaved_thinking: ?bool = null,
    response_format: ?ResponseFormat = null,
    cache: Cache = .{},
    extra_headers: []const Header = &.{},
    /// Members merged into the JSON body.
    extra_body: []const BodyMember = &.{},
    /// Provider-hosted tools (Anthropic's web search, web fetch, code execution, the MCP
    /// connector's toolsets), sent in the request's tools as they are given.
    server_tools: []const ServerTool = &.{},
    /// The remote MCP servers Anthropic's MCP connector reaches (the body's `mcp_servers`), as
    /// given; an `mcp_toolset` in server_tools names one. (Not the agent's own MCP servers,
    /// which panto runs: those are `mcp_servers`.)
    hosted_mcp_servers: []const HostedMcpServer = &.{},
};

/// A provider-hosted tool: its JSON object as compact text, its "type" (which says the beta
/// header it needs, if any) and its "name" (which a tool_choice may name). An MCP toolset
/// (type "mcp_toolset") has no name: `mcp_server` is the server it takes the tools of.
pub const ServerTool = struct { type: []const u8, name: []const u8, json: []const u8, mcp_server: []const u8 = "" };

/// A remote MCP server for Anthropic's MCP connector: its "name" and its JSON object as
/// compact text.
pub const HostedMcpServer = struct { name: []const u8, json: []const u8 };

pub const ToolChoice = union(enum) {
    auto,
    none,
    /// "required" (OpenAI) = "any" (Anthropic).
    required,
    /// The named tool.
    tool: []const u8,
};

pub const ResponseFormat = union(enum) {
    text,
    /// OpenAI only.
    json_object,
    json_schema: JsonSchema,

    pub const JsonSchema = struct {
        name: []const u8 = "response",
        /// The schema as compact JSON text (an object schema).
        schema: []const u8,
        /// OpenAI's strict mode. Null: strict exactly when the schema meets the strict rules
        /// (strict_schema.zig), decided when the agent takes the configuration.
        strict: ?bool = null,
        /// The schema parsed, set when the agent takes the configuration: requests write it
        /// as the provider takes it (provider_schema.zig); null: `schema` as it is.
        parsed: ?std.json.Value = null,
    };
};

pub const Cache = struct {
    mode: Mode = .auto,
    /// Anthropic only; null: not sent (the provider's 5 minutes).
    ttl: ?Ttl = null,
    /// OpenAI only: prompt_cache_key.
    key: ?[]const u8 = null,
    /// OpenAI only: prompt_cache_retention ("in_memory" or "24h").
    retention: ?[]const u8 = null,

    pub const Mode = enum { auto, off };
    pub const Ttl = enum { @"5m", @"1h" };
};

pub const Header = struct { name: []const u8, value: []const u8 };

/// One member of extra_body: its key, and its value as compact JSON text.
pub const BodyMember = struct { key: []const u8, value: []const u8 };

pub const Compaction = struct {
    enabled: bool = true,
    /// null: the model's, from the table in compaction.zig (none for an unknown model).
    context_window: ?u64 = null,
    reserve_tokens: u64 = 16_384,
    keep_recent_tokens: u64 = 20_000,
    /// null: the default summarization prompt (compaction.zig).
    prompt: ?[]const u8 = null,
};

pub const Session = struct {
    /// null: $XDG_DATA_HOME/panto/sessions, else ~/.local/share/panto/sessions.
    dir: ?[]const u8 = null,
    /// null: a new id is made.
    id: ?[]const u8 = null,
    mode: Mode = .open,
    fsync: bool = true,

    pub const Mode = enum { open, @"resume", create };
};

/// How much the model may think before answering.
pub const Thinking = enum {
    off,
    minimal,
    low,
    medium,
    high,

    /// Anthropic's budget_tokens for the level.
    pub fn budgetTokens(t: Thinking) u32 {
        return switch (t) {
            .off => 0,
            .minimal => 1024,
            .low => 2048,
            .medium => 8192,
            .high => 16384,
        };
    }
};

pub const Retry = struct {
    max_retries: u32 = 2,
    initial_delay_ms: u64 = 500,
    max_delay_ms: u64 = 8000,
    /// A provider asking to wait longer than this is not retried: its error is returned.
    max_retry_after_ms: u64 = 60_000,
};

/// 0 disables a timeout.
pub const Timeouts = struct {
    /// Opening a connection: the TCP connect, a proxy's CONNECT tunnel and the TLS handshake.
    connect_ms: u64 = 10_000,
    /// From sending a request (once connected) to the response head.
    first_byte_ms: u64 = 60_000,
    /// Between two events that carry progress; pings and SSE comments do not count.
    idle_ms: u64 = 90_000,
    /// All the provider calls of one turn.
    total_ms: u64 = 600_000,
};

/// The connections kept open between an agent's requests (see keep_alive.zig).
pub const KeepAlive = struct {
    /// How long a connection may stay unused and still be reused (servers usually close
    /// theirs after 60 s or more; one closed meanwhile is replaced silently). 0: no
    /// connection is kept alive (one connection per request, closed after its response).
    idle_ms: u64 = 60_000,
};

/// Why a configuration was refused, for the user to read.
pub const Diagnostic = struct {
    buffer: [256]u8 = undefined,
    len: usize = 0,

    pub fn message(d: *const Diagnostic) []const u8 {
        return d.buffer[0..d.len];
    }

    pub fn fail(d: *Diagnostic, comptime fmt: []const u8, args: anytype) error{InvalidConfig} {
        // A message that does not fit (a long value quoted in it) is cut at a whole character.
        const written = std.fmt.bufPrint(&d.buffer, fmt, args) catch d.buffer[0..utf8.wholePrefix(&d.buffer)];
        d.len = written.len;
        return error.InvalidConfig;
    }
};

pub const ParseError = error{ InvalidConfig, OutOfMemory };

const known_keys = [_][]const u8{ "provider", "model", "base_url", "api_key", "system", "max_tokens", "tools", "capabilities", "max_tool_iterations", "read_tool", "thinking", "retry", "timeouts", "keep_alive", "compaction", "session", "tool_execution", "log", "mcp_servers", "model_info", "approval_rules", "budget" } ++ request_options.keys;

/// The keys a turn's options may set (PantoInput.options, Agent.runWith).
const turn_keys = [_][]const u8{ "max_tokens", "system", "thinking", "cache_breakpoint", "budget" } ++ request_options.keys;

/// Parses a JSON object into a Config whose strings live in `arena`. Unknown keys, wrong
/// types and missing required keys are refused with a message in `diag`.
pub fn parseJson(arena: Allocator, json: []const u8, diag: *Diagnostic) ParseError!Config {
    const obj = try parseObject(arena, json, diag);
    const provider_name = try requiredString(obj, "provider", diag);
    _ = try requiredString(obj, "model", diag);
    var config: Config = .{ .provider = parseProvider(provider_name) orelse
        return diag.fail("provider must be " ++ providers.choices ++ ", not \"{s}\"", .{provider_name}), .model = "" };
    try apply(arena, &config, obj, diag);
    return config;
}

/// Applies a JSON object of changes (set_config) onto `config`. On error `config` is
/// unchanged. "tools" cannot be changed this way. Returns which of base_url and api_key the
/// changes name (endpoint.zig settles them).
pub fn patchJson(arena: Allocator, config: *Config, json: []const u8, diag: *Diagnostic) ParseError!endpoint.Named {
    const obj = try parseObject(arena, json, diag);
    if (obj.contains("tools")) return diag.fail("tools cannot be changed by set_config: add them with add_tool", .{});
    if (obj.contains("session")) return diag.fail("session cannot be changed by set_config: an agent keeps the session it was made with (fork_session starts another)", .{});
    // Its servers run with the agent, and their tools are in its registry: an agent keeps them.
    if (obj.contains("mcp_servers")) return diag.fail("mcp_servers cannot be changed by set_config: an agent keeps the servers it was made with", .{});
    var changed = config.*;
    try apply(arena, &changed, obj, diag);
    config.* = changed;
    return .{ .base_url = obj.contains("base_url"), .api_key = obj.contains("api_key") };
}

/// A turn's configuration: the agent's, with a turn's options applied (PantoInput.options).
pub const TurnOptions = struct {
    config: Config,
    /// The user message is a cache breakpoint (kept on it in the conversation).
    cache_breakpoint: bool = false,
};

/// Applies a turn's options (a JSON object of request parameters, max_tokens, system and
/// cache_breakpoint) onto a copy of `base`, whose strings stay; the copy's new strings live in
/// `arena`. Refused like set_config, with the reason in `diag`.
pub fn parseTurnOptions(arena: Allocator, base: Config, json: []const u8, diag: *Diagnostic) ParseError!TurnOptions {
    const root = try parseJsonText(arena, json, "options", diag);
    if (root != .object) return diag.fail("options must be a JSON object", .{});
    var obj = root.object;
    var it = obj.iterator();
    while (it.next()) |entry| {
        const key = entry.key_ptr.*;
        for (turn_keys) |k| {
            if (std.mem.eql(u8, k, key)) break;
        } else {
            for (known_keys) |k| if (std.mem.eql(u8, k, key))
                return diag.fail("\"{s}\" cannot be set for one turn: a turn's options are the request parameters, max_tokens, system, cache_breakpoint and budget", .{key});
            return diag.fail("unknown option \"{s}\"", .{key});
        }
    }
    var turn: TurnOptions = .{ .config = base };
    if (obj.fetchSwapRemove("cache_breakpoint")) |kv| {
        if (kv.value != .bool) return diag.fail("cache_breakpoint must be true or false", .{});
        turn.cache_breakpoint = kv.value.bool;
    }
    try apply(arena, &turn.config, obj, diag);
    return turn;
}

/// Parses JSON text given to the library (a config, a tool spec, a capability list), refused
/// with a reason that names `what`: text that is not UTF-8 is said to be so, not only "not
/// valid JSON".
pub fn parseJsonText(arena: Allocator, text: []const u8, comptime what: []const u8, diag: *Diagnostic) ParseError!std.json.Value {
    if (!std.unicode.utf8ValidateSlice(text)) return diag.fail(what ++ " is not valid UTF-8 text", .{});
    return std.json.parseFromSliceLeaky(std.json.Value, arena, text, .{}) catch |err| switch (err) {
        error.OutOfMemory => return error.OutOfMemory,
        else => return diag.fail(what ++ " is not valid JSON ({s})", .{@errorName(err)}),
    };
}

fn parseObject(arena: Allocator, json: []const u8, diag: *Diagnostic) ParseError!std.json.ObjectMap {
    const root = try parseJsonText(arena, json, "config", diag);
    if (root != .object) return diag.fail("config must be a JSON object", .{});
    var it = root.object.iterator();
    while (it.next()) |entry| {
        const key = entry.key_ptr.*;
        for (known_keys) |k| {
            if (std.mem.eql(u8, k, key)) break;
        } else return diag.fail("unknown config key \"{s}\"", .{key});
    }
    return root.object;
}

fn parseProvider(name: []const u8) ?Provider {
    return std.meta.stringToEnum(Provider, name);
}

/// Sets the fields `obj` names. Strings stay in `obj`'s arena.
fn apply(arena: Allocator, config: *Config, obj: std.json.ObjectMap, diag: *Diagnostic) ParseError!void {
    if (try optionalString(obj, "provider", diag)) |name| {
        config.provider = parseProvider(name) orelse
            return diag.fail("provider must be " ++ providers.choices ++ ", not \"{s}\"", .{name});
    }
    if (try optionalString(obj, "model", diag)) |model| {
        if (model.len == 0) return diag.fail("model must not be empty", .{});
        config.model = model;
    }
    if (obj.contains("base_url")) config.base_url = try optionalString(obj, "base_url", diag);
    if (obj.contains("api_key")) config.api_key = try optionalString(obj, "api_key", diag);
    if (obj.contains("system")) config.system = try optionalString(obj, "system", diag);
    if (obj.get("max_tokens")) |v| config.max_tokens = try integer(u32, v, 1, std.math.maxInt(u32), "max_tokens", diag);
    if (obj.get("max_tool_iterations")) |v| config.max_tool_iterations = try integer(u32, v, 0, 1000, "max_tool_iterations", diag);
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
        if (v == .null) {
            config.read_tool = null;
        } else {
            const sub = try object(v, "read_tool", &.{ "root", "max_bytes", "confined" }, diag);
            var rt: read_tool.Config = .{ .root = "" };
            if (sub.get("root")) |root| {
                if (root != .string or root.string.len == 0) return diag.fail("read_tool.root must be a directory path", .{});
                rt.root = root.string;
            } else return diag.fail("read_tool needs \"root\"", .{});
            if (sub.get("max_bytes")) |m| rt.max_bytes = try integer(usize, m, 64, 1 << 30, "read_tool.max_bytes", diag);
            if (sub.get("confined")) |b| rt.confined = if (b == .bool) b.bool else return diag.fail("read_tool.confined must be true or false", .{});
            config.read_tool = rt;
        }
    }
    if (obj.get("thinking")) |v| switch (v) {
        // A level replaces an explicit budget, and a budget wins over the level.
        .string => |level| {
            config.thinking = std.meta.stringToEnum(Thinking, level) orelse
                return diag.fail("thinking must be one of off, minimal, low, medium, high, not \"{s}\"", .{level});
            config.request.thinking_budget = null;
        },
        .object => config.request.thinking_budget = try request_options.thinkingBudget(v, diag),
        else => return diag.fail("thinking must be one of off, minimal, low, medium, high, or {{\"budget_tokens\": N}}", .{}),
    };
    if (obj.get("tool_execution")) |v| {
        if (v != .string) return diag.fail("tool_execution must be \"parallel\" or \"sequential\"", .{});
        config.tool_execution = std.meta.stringToEnum(ToolExecution, v.string) orelse
            return diag.fail("tool_execution must be \"parallel\" or \"sequential\", not \"{s}\"", .{v.string});
    }
    if (obj.get("log")) |v| config.log = try parseLog(v, diag);
    if (obj.get("approval_rules")) |v| config.approval_rules = try approval.parseRules(arena, v, diag);
    try request_options.apply(arena, &config.request, obj, diag);
    if (obj.get("retry")) |v| {
        const sub = try object(v, "retry", &.{ "max_retries", "initial_delay_ms", "max_delay_ms", "max_retry_after_ms" }, diag);
        if (sub.get("max_retries")) |n| config.retry.max_retries = try integer(u32, n, 0, 100, "retry.max_retries", diag);
        if (sub.get("initial_delay_ms")) |n| config.retry.initial_delay_ms = try integer(u64, n, 0, 3_600_000, "retry.initial_delay_ms", diag);
        if (sub.get("max_delay_ms")) |n| config.retry.max_delay_ms = try integer(u64, n, 0, 3_600_000, "retry.max_delay_ms", diag);
        if (sub.get("max_retry_after_ms")) |n| config.retry.max_retry_after_ms = try integer(u64, n, 0, 86_400_000, "retry.max_retry_after_ms", diag);
    }
    if (obj.get("timeouts")) |v| {
        const sub = try object(v, "timeouts", &.{ "connect_ms", "first_byte_ms", "idle_ms", "total_ms" }, diag);
        if (sub.get("connect_ms")) |n| config.timeouts.connect_ms = try integer(u64, n, 0, 86_400_000, "timeouts.connect_ms", diag);
        if (sub.get("first_byte_ms")) |n| config.timeouts.first_byte_ms = try integer(u64, n, 0, 86_400_000, "timeouts.first_byte_ms", diag);
        if (sub.get("idle_ms")) |n| config.timeouts.idle_ms = try integer(u64, n, 0, 86_400_000, "timeouts.idle_ms", diag);
        if (sub.get("total_ms")) |n| config.timeouts.total_ms = try integer(u64, n, 0, 86_400_000, "timeouts.total_ms", diag);
    }
    if (obj.get("budget")) |v| try applyBudget(&config.budget, v, diag);
    if (obj.get("keep_alive")) |v| {
        const sub = try object(v, "keep_alive", &.{"idle_ms"}, diag);
        if (sub.get("idle_ms")) |n| config.keep_alive.idle_ms = try integer(u64, n, 0, 86_400_000, "keep_alive.idle_ms", diag);
    }
    if (obj.get("compaction")) |v| try applyCompaction(&config.compaction, v, diag);
    if (obj.get("session")) |v| config.session = try parseSession(v, diag);
    if (obj.get("mcp_servers")) |v| config.mcp_servers = try mcp_config.parse(arena, v, diag);
    if (obj.get("model_info")) |v| config.model_info = if (v == .null) null else try catalog.parseOverride(v, diag);
    try checkWireStrings(config.*, .config, diag);
    try request_options.check(config.*, diag);
    if (config.base_url) |url| try checkBaseUrl(url, "base_url", diag);
}

/// budget.cost_usd: a number above 0, at most a million.
fn dollars(v: std.json.Value, diag: *Diagnostic) error{InvalidConfig}!f64 {
    const x: f64 = switch (v) {
        .integer => |i| @floatFromInt(i),
        .float => |f| f,
        .number_string => |t| std.fmt.parseFloat(f64, t) catch std.math.nan(f64),
        else => std.math.nan(f64),
    };
    if (!(x > 0 and x <= 1_000_000)) return diag.fail("budget.cost_usd must be a number of dollars above 0, at most 1000000", .{});
    return x;
}

/// Sets the budgets `v` names (a JSON object; a budget's null removes it), the others stay:
/// a turn's options change one budget of the agent's.
fn applyBudget(budget: *Budget, v: std.json.Value, diag: *Diagnostic) error{InvalidConfig}!void {
    const sub = try object(v, "budget", &.{ "output_tokens", "tool_rounds", "wall_ms", "cost_usd" }, diag);
    if (sub.get("output_tokens")) |n| budget.output_tokens = if (n == .null) null else try integer(u64, n, 1, std.math.maxInt(u32), "budget.output_tokens", diag);
    if (sub.get("tool_rounds")) |n| budget.tool_rounds = if (n == .null) null else try integer(u32, n, 0, 1000, "budget.tool_rounds", diag);
    if (sub.get("wall_ms")) |n| budget.wall_ms = if (n == .null) null else try integer(u64, n, 1, 86_400_000, "budget.wall_ms", diag);
    if (sub.get("cost_usd")) |n| budget.cost_usd = if (n == .null) null else try dollars(n, diag);
}

/// A base URL is an http:// or https:// URL, wherever it came from (`name`: "base_url", or
/// the environment variable it was read from): one that is not would fail every request as a
/// connection error, retried, instead of at once as what it is.
pub fn checkBaseUrl(url: []const u8, name: []const u8, diag: *Diagnostic) error{InvalidConfig}!void {
    const uri = std.Uri.parse(url) catch return diag.fail("{s} \"{s}\" is not a URL", .{ name, url });
    if (!std.mem.eql(u8, uri.scheme, "http") and !std.mem.eql(u8, uri.scheme, "https"))
        return diag.fail("{s} must start with http:// or https://", .{name});
}

/// The "log" key: {"level": "off"|"debug"|"body", "file": path}; null: from the environment.
fn parseLog(v: std.json.Value, diag: *Diagnostic) error{InvalidConfig}!?Log {
    if (v == .null) return null;
    const sub = try object(v, "log", &.{ "level", "file" }, diag);
    var log: Log = .{};
    if (sub.get("level")) |l| {
        if (l != .string) return diag.fail("log.level must be one of off, debug, body", .{});
        log.level = std.meta.stringToEnum(Log.Level, l.string) orelse
            return diag.fail("log.level must be one of off, debug, body, not \"{s}\"", .{l.string});
    }
    if (sub.get("file")) |f| switch (f) {
        .null => {},
        .string => |path| {
            if (path.len == 0 or std.mem.indexOfScalar(u8, path, 0) != null) return diag.fail("log.file must be a file path", .{});
            log.file = path;
        },
        else => return diag.fail("log.file must be a file path", .{}),
    };
    return log;
}

/// The "session" key: {"dir": D, "id": I, "mode": "open"|"resume"|"create", "fsync": bool},
/// each optional; null leaves the agent without a session.
fn parseSession(v: std.json.Value, diag: *Diagnostic) error{InvalidConfig}!?Session {
    if (v == .null) return null;
    const sub = try object(v, "session", &.{ "dir", "id", "mode", "fsync" }, diag);
    var session: Session = .{};
    if (sub.get("dir")) |d| switch (d) {
        .null => {},
        .string => |path| {
            if (path.len == 0 or std.mem.indexOfScalar(u8, path, 0) != null) return diag.fail("session.dir must be a directory path", .{});
            session.dir = path;
        },
        else => return diag.fail("session.dir must be a directory path", .{}),
    };
    if (sub.get("id")) |i| switch (i) {
        .null => {},
        .string => |name| {
            if (!session_id.isValid(name)) return diag.fail("session.id must be 1 to 128 of A-Z a-z 0-9 . _ - (not starting with \".\")", .{});
            session.id = name;
        },
        else => return diag.fail("session.id must be a string", .{}),
    };
    if (sub.get("mode")) |m| {
        if (m != .string) return diag.fail("session.mode must be one of open, resume, create", .{});
        session.mode = std.meta.stringToEnum(Session.Mode, m.string) orelse
            return diag.fail("session.mode must be one of open, resume, create, not \"{s}\"", .{m.string});
    }
    if (session.mode == .@"resume" and session.id == null) return diag.fail("session.mode \"resume\" needs session.id", .{});
    if (sub.get("fsync")) |f| {
        if (f != .bool) return diag.fail("session.fsync must be true or false", .{});
        session.fsync = f.bool;
    }
    return session;
}

/// The "compaction" object: the keys it names change, the others stay.
fn applyCompaction(c: *Compaction, v: std.json.Value, diag: *Diagnostic) error{InvalidConfig}!void {
    const sub = try object(v, "compaction", &.{ "enabled", "context_window", "reserve_tokens", "keep_recent_tokens", "prompt" }, diag);
    if (sub.get("enabled")) |e| {
        if (e != .bool) return diag.fail("compaction.enabled must be true or false", .{});
        c.enabled = e.bool;
    }
    if (sub.get("context_window")) |n| {
        c.context_window = if (n == .null) null else try integer(u64, n, 1, 1 << 40, "compaction.context_window", diag);
    }
    if (sub.get("reserve_tokens")) |n| c.reserve_tokens = try integer(u64, n, 0, 1 << 40, "compaction.reserve_tokens", diag);
    if (sub.get("keep_recent_tokens")) |n| c.keep_recent_tokens = try integer(u64, n, 0, 1 << 40, "compaction.keep_recent_tokens", diag);
    if (sub.get("prompt")) |p| switch (p) {
        .null => c.prompt = null,
        .string => |text| {
            if (std.mem.trim(u8, text, " \t\r\n").len == 0) return diag.fail("compaction.prompt must not be empty (null: the default prompt)", .{});
            c.prompt = text;
        },
        else => return diag.fail("compaction.prompt must be a string or null", .{}),
    };
    if (c.context_window) |window| if (c.reserve_tokens >= window)
        return diag.fail("compaction.reserve_tokens ({d}) must be less than context_window ({d})", .{ c.reserve_tokens, window });
}

/// Where the API key came from, for the message that refuses it.
pub const KeySource = enum { config, environment };

/// The strings written into the request line and headers (and the model, into the body) hold
/// no control characters: a CR LF in the API key would end its header and start others of
/// the key's making, one in base_url would split the request line. A space in base_url
/// splits the request line too. Messages name the key, never quote its value (a secret).
pub fn checkWireStrings(config: Config, key_source: KeySource, diag: *Diagnostic) error{InvalidConfig}!void {
    if (hasControl(config.model)) return diag.fail("model contains a control character", .{});
    if (config.base_url) |url| if (hasControl(url) or std.mem.indexOfScalar(u8, url, ' ') != null)
        return diag.fail("base_url contains a space or a control character", .{});
    if (config.api_key) |key| if (hasControl(key)) return switch (key_source) {
        .config => diag.fail("api_key contains a control character (its value is not shown)", .{}),
        .environment => diag.fail("{s} contains a control character (its value is not shown)", .{providers.variableRead(providers.apiKeyVariables(config.provider), providers.apiKeyChoices(config.provider))}),
    };
}

/// Whether `s` holds an ASCII control character (C0 or DEL), which no header value may.
pub fn hasControl(s: []const u8) bool {
    for (s) |c| if (c < 0x20 or c == 0x7f) return true;
    return false;
}

pub fn integer(comptime T: type, v: std.json.Value, min: i64, max: u64, name: []const u8, diag: *Diagnostic) error{InvalidConfig}!T {
    if (v != .integer or v.integer < min or @as(u64, @intCast(@max(0, v.integer))) > max)
        return diag.fail("{s} must be an integer from {d} to {d}", .{ name, min, max });
    return @intCast(v.integer);
}

pub fn object(v: std.json.Value, name: []const u8, keys: []const []const u8, diag: *Diagnostic) error{InvalidConfig}!std.json.ObjectMap {
    if (v != .object) return diag.fail("{s} must be a JSON object", .{name});
    var it = v.object.iterator();
    while (it.next()) |entry| {
        for (keys) |k| {
            if (std.mem.eql(u8, k, entry.key_ptr.*)) break;
        } else return diag.fail("unknown {s} key \"{s}\"", .{ name, entry.key_ptr.* });
    }
    return v.object;
}

fn requiredString(obj: std.json.ObjectMap, key: []const u8, diag: *Diagnostic) ![]const u8 {
    return (try optionalString(obj, key, diag)) orelse diag.fail("config needs \"{s}\"", .{key});
}

pub fn optionalString(obj: std.json.ObjectMap, key: []const u8, diag: *Diagnostic) !?[]const u8 {
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
        .{ "{\"provider\":\"openai\",\"model\":\"m\xff\"}", "config is not valid UTF-8 text" },
        .{ "[]", "must be a JSON object" },
        .{ "{\"provider\":\"anthropic\"}", "needs \"model\"" },
        .{ "{\"provider\":\"x\",\"model\":\"m\"}", "provider must be" },
        .{ "{\"provider\":\"openai\",\"model\":\"m\",\"colour\":1}", "unknown config key \"colour\"" },
        .{ "{\"provider\":\"openai\",\"model\":\"m\",\"max_tokens\":-1}", "max_tokens" },
        .{ "{\"provider\":\"openai\",\"model\":\"m\",\"thinking\":\"lots\"}", "thinking must be one of" },
        .{ "{\"provider\":\"openai\",\"model\":\"m\",\"retry\":{\"tries\":3}}", "unknown retry key \"tries\"" },
        .{ "{\"provider\":\"openai\",\"model\":\"m\",\"timeouts\":{\"idle_ms\":-5}}", "timeouts.idle_ms must be" },
        .{ "{\"provider\":\"openai\",\"model\":\"m\",\"timeouts\":{\"connect_ms\":\"5s\"}}", "timeouts.connect_ms must be" },
        .{ "{\"provider\":\"openai\",\"model\":\"m\",\"timeouts\":{\"dns_ms\":5}}", "unknown timeouts key \"dns_ms\"" },
        .{ "{\"provider\":\"openai\",\"model\":\"m\",\"base_url\":\"ftp://x\"}", "http://" },
        .{ "{\"provider\":\"openai\",\"model\":\"m\",\"keep_alive\":{\"idle_ms\":-1}}", "keep_alive.idle_ms must be an integer from 0 to 86400000" },
        .{ "{\"provider\":\"openai\",\"model\":\"m\",\"keep_alive\":{\"idle_ms\":86400001}}", "keep_alive.idle_ms must be an integer from 0 to 86400000" },
        .{ "{\"provider\":\"openai\",\"model\":\"m\",\"keep_alive\":{\"idle_ms\":1.5}}", "keep_alive.idle_ms must be an integer" },
        .{ "{\"provider\":\"openai\",\"model\":\"m\",\"keep_alive\":{\"idle_ms\":\"60s\"}}", "keep_alive.idle_ms must be an integer" },
        .{ "{\"provider\":\"openai\",\"model\":\"m\",\"keep_alive\":{\"max\":2}}", "unknown keep_alive key \"max\"" },
        .{ "{\"provider\":\"openai\",\"model\":\"m\",\"keep_alive\":false}", "keep_alive must be a JSON object" },
    };
    for (cases) |case| {
        var diag: Diagnostic = .{};
        try std.testing.expectError(error.InvalidConfig, parseJson(arena.allocator(), case[0], &diag));
        try std.testing.expect(std.mem.indexOf(u8, diag.message(), case[1]) != null);
    }
}

test "set_config patches only the keys it names, and nothing on error" {
    var arena: std.heap.ArenaAllocator = .init(std.testing.allocator);
    defer arena.deinit();
    var diag: Diagnostic = .{};
    var c = try parseJson(arena.allocator(), "{\"provider\":\"anthropic\",\"model\":\"m\",\"thinking\":\"high\"}", &diag);
    _ = try patchJson(arena.allocator(), &c, "{\"thinking\":\"off\",\"timeouts\":{\"idle_ms\":5,\"connect_ms\":250}}", &diag);
    try std.testing.expectEqual(Thinking.off, c.thinking);
    try std.testing.expectEqual(@as(u64, 5), c.timeouts.idle_ms);
    try std.testing.expectEqual(@as(u64, 250), c.timeouts.connect_ms);
    try std.testing.expectEqual(@as(u64, 60_000), c.timeouts.first_byte_ms);
    try std.testing.expectEqual(@as(u64, 600_000), c.timeouts.total_ms);
    try std.testing.expectEqualStrings("m", c.model);
    try std.testing.expectEqual(@as(u64, 60_000), c.keep_alive.idle_ms);
    _ = try patchJson(arena.allocator(), &c, "{\"keep_alive\":{\"idle_ms\":0}}", &diag);
    try std.testing.expectEqual(@as(u64, 0), c.keep_alive.idle_ms);
    try std.testing.expectError(error.InvalidConfig, patchJson(arena.allocator(), &c, "{\"keep_alive\":{\"idle_ms\":5},\"max_tokens\":0}", &diag));
    try std.testing.expectEqual(@as(u64, 0), c.keep_alive.idle_ms);
    try std.testing.expectError(error.InvalidConfig, patchJson(arena.allocator(), &c, "{\"model\":\"x\",\"max_tokens\":0}", &diag));
    try std.testing.expectEqualStrings("m", c.model);
}

test "wire strings with a control character are refused, naming the key, never quoting it" {
    var arena: std.heap.ArenaAllocator = .init(std.testing.allocator);
    defer arena.deinit();
    const cases = [_]struct { []const u8, []const u8 }{
        .{ "{\"provider\":\"openai\",\"model\":\"m\",\"api_key\":\"sk-s3cret\\r\\nX-Injected: yes\"}", "api_key contains a control character" },
        .{ "{\"provider\":\"anthropic\",\"model\":\"m\",\"api_key\":\"sk-s3cret\\u0000\"}", "api_key contains a control character" },
        .{ "{\"provider\":\"openai\",\"model\":\"m\",\"base_url\":\"http://127.0.0.1:9/v1 HTTP/1.1\\r\\nX-Injected: yes\\r\\n\"}", "base_url contains a space or a control character" },
        .{ "{\"provider\":\"openai\",\"model\":\"m\",\"base_url\":\"http://127.0.0.1:9/a b\"}", "base_url contains a space or a control character" },
        .{ "{\"provider\":\"openai\",\"model\":\"gpt\\u0001\"}", "model contains a control character" },
        .{ "{\"provider\":\"openai\",\"model\":\"gpt\\u007f\"}", "model contains a control character" },
    };
    for (cases) |case| {
        var diag: Diagnostic = .{};
        try std.testing.expectError(error.InvalidConfig, parseJson(arena.allocator(), case[0], &diag));
        try std.testing.expectEqualStrings(case[1], diag.message()[0..case[1].len]);
        try std.testing.expect(std.mem.indexOf(u8, diag.message(), "s3cret") == null);
        try std.testing.expect(std.mem.indexOf(u8, diag.message(), "Injected") == null);
    }
    // set_config: refused, nothing changed.
    var diag: Diagnostic = .{};
    var c = try parseJson(arena.allocator(), "{\"provider\":\"openai\",\"model\":\"m\",\"api_key\":\"k\"}", &diag);
    try std.testing.expectError(error.InvalidConfig, patchJson(arena.allocator(), &c, "{\"max_tokens\":9,\"api_key\":\"k\\r\\nX: y\"}", &diag));
    try std.testing.expectEqualStrings("api_key contains a control character (its value is not shown)", diag.message());
    try std.testing.expectEqualStrings("k", c.api_key.?);
    try std.testing.expectEqual(default_max_tokens, c.max_tokens);
    // A key from the environment is named by its variable.
    c.api_key = "k\n";
    try std.testing.expectError(error.InvalidConfig, checkWireStrings(c, .environment, &diag));
    try std.testing.expectEqualStrings("OPENAI_API_KEY contains a control character (its value is not shown)", diag.message());
    // UTF-8 and tabs-free printable text pass.
    c.api_key = "sk-proj-AbC_123";
    c.model = "gpt-4o-mini-\xc3\xa9";
    try checkWireStrings(c, .config, &diag);
}

test "a config message too long for its buffer is cut at a whole character" {
    var diag: Diagnostic = .{};
    const name = "\u{e9}" ** 300; // 600 bytes of 2-byte characters
    for ([_][]const u8{ "", "x" }) |shift| { // the cut falls after a lead byte, then not
        diag.fail("provider must be \"anthropic\" or \"openai\", not \"{s}{s}\"", .{ shift, name }) catch {};
        try std.testing.expect(std.unicode.utf8ValidateSlice(diag.message()));
        try std.testing.expect(diag.message().len >= diag.buffer.len - 3);
    }
}

test "the compaction key: parsed, validated, patched key by key" {
    var arena: std.heap.ArenaAllocator = .init(std.testing.allocator);
    defer arena.deinit();
    var diag: Diagnostic = .{};
    var c = try parseJson(arena.allocator(), "{\"provider\":\"anthropic\",\"model\":\"m\"}", &diag);
    try std.testing.expectEqual(@as(Compaction, .{}), c.compaction);
    c = try parseJson(arena.allocator(),
        \\{"provider":"anthropic","model":"m","compaction":{"enabled":false,"context_window":50000,"reserve_tokens":1000,"keep_recent_tokens":2000,"prompt":"Summarize."}}
    , &diag);
    try std.testing.expect(!c.compaction.enabled);
    try std.testing.expectEqual(@as(?u64, 50000), c.compaction.context_window);
    try std.testing.expectEqual(@as(u64, 1000), c.compaction.reserve_tokens);
    try std.testing.expectEqual(@as(u64, 2000), c.compaction.keep_recent_tokens);
    try std.testing.expectEqualStrings("Summarize.", c.compaction.prompt.?);
    // set_config changes the keys it names only.
    _ = try patchJson(arena.allocator(), &c, "{\"compaction\":{\"enabled\":true,\"prompt\":null}}", &diag);
    try std.testing.expect(c.compaction.enabled);
    try std.testing.expectEqual(null, c.compaction.prompt);
    try std.testing.expectEqual(@as(?u64, 50000), c.compaction.context_window);
    _ = try patchJson(arena.allocator(), &c, "{\"compaction\":{\"context_window\":null}}", &diag);
    try std.testing.expectEqual(null, c.compaction.context_window);
    // Refused, and nothing changed.
    const bad = [_]struct { []const u8, []const u8 }{
        .{ "{\"compaction\":true}", "compaction must be a JSON object" },
        .{ "{\"compaction\":{\"window\":5}}", "unknown compaction key \"window\"" },
        .{ "{\"compaction\":{\"enabled\":1}}", "compaction.enabled must be true or false" },
        .{ "{\"compaction\":{\"context_window\":0}}", "compaction.context_window must be an integer from 1" },
        .{ "{\"compaction\":{\"context_window\":\"200k\"}}", "compaction.context_window must be an integer" },
        .{ "{\"compaction\":{\"reserve_tokens\":-1}}", "compaction.reserve_tokens must be an integer from 0" },
        .{ "{\"compaction\":{\"keep_recent_tokens\":1.5}}", "compaction.keep_recent_tokens must be an integer" },
        .{ "{\"compaction\":{\"prompt\":\" \\n\"}}", "compaction.prompt must not be empty" },
        .{ "{\"compaction\":{\"prompt\":7}}", "compaction.prompt must be a string or null" },
        .{ "{\"compaction\":{\"context_window\":1000}}", "compaction.reserve_tokens (1000) must be less than context_window (1000)" },
        .{ "{\"max_tokens\":5,\"compaction\":{\"context_window\":8000,\"reserve_tokens\":9000}}", "compaction.reserve_tokens (9000) must be less than context_window (8000)" },
    };
    for (bad) |case| {
        try std.testing.expectError(error.InvalidConfig, patchJson(arena.allocator(), &c, case[0], &diag));
        try std.testing.expectEqualStrings(case[1], diag.message()[0..@min(case[1].len, diag.message().len)]);
    }
    try std.testing.expectEqual(@as(Compaction, .{ .enabled = true, .context_window = null, .reserve_tokens = 1000, .keep_recent_tokens = 2000, .prompt = null }), c.compaction);
    try std.testing.expectEqual(default_max_tokens, c.max_tokens);
}

test "budget: parsed, refused with a reason, patched by set_config and a turn's options one budget at a time" {
    var arena: std.heap.ArenaAllocator = .init(std.testing.allocator);
    defer arena.deinit();
    const a = arena.allocator();
    var diag: Diagnostic = .{};
    var c = try parseJson(a, "{\"provider\":\"openai\",\"model\":\"m\",\"budget\":{\"output_tokens\":500,\"tool_rounds\":0}}", &diag);
    try std.testing.expectEqual(@as(?u64, 500), c.budget.output_tokens);
    try std.testing.expectEqual(@as(?u32, 0), c.budget.tool_rounds);
    try std.testing.expectEqual(@as(?u64, null), c.budget.wall_ms);
    const refused = [_]struct { []const u8, []const u8 }{
        .{ "{\"budget\":{\"output_tokens\":0}}", "budget.output_tokens must be an integer from 1 to 4294967295" },
        .{ "{\"budget\":{\"tool_rounds\":1001}}", "budget.tool_rounds must be an integer from 0 to 1000" },
        .{ "{\"budget\":{\"wall_ms\":\"5s\"}}", "budget.wall_ms must be an integer from 1 to 86400000" },
        .{ "{\"budget\":{\"cost_usd\":0}}", "budget.cost_usd must be a number of dollars above 0, at most 1000000" },
        .{ "{\"budget\":{\"cost_usd\":\"1\"}}", "budget.cost_usd must be a number of dollars above 0, at most 1000000" },
        .{ "{\"budget\":{\"dollars\":1}}", "unknown budget key \"dollars\"" },
        .{ "{\"budget\":3}", "budget must be a JSON object" },
    };
    for (refused) |case| {
        try std.testing.expectError(error.InvalidConfig, patchJson(a, &c, case[0], &diag));
        try std.testing.expectEqualStrings(case[1], diag.message());
    }
    _ = try patchJson(a, &c, "{\"budget\":{\"cost_usd\":0.25}}", &diag);
    try std.testing.expectEqual(@as(?f64, 0.25), c.budget.cost_usd);
    _ = try patchJson(a, &c, "{\"budget\":{\"cost_usd\":null}}", &diag);
    try std.testing.expectEqual(@as(?f64, null), c.budget.cost_usd);
    try std.testing.expectEqual(@as(?u64, 500), c.budget.output_tokens); // (unchanged)
    _ = try patchJson(a, &c, "{\"budget\":{\"wall_ms\":2000,\"output_tokens\":null}}", &diag);
    try std.testing.expectEqual(Budget{ .tool_rounds = 0, .wall_ms = 2000 }, c.budget);
    const turn = try parseTurnOptions(a, c, "{\"budget\":{\"tool_rounds\":3}}", &diag);
    try std.testing.expectEqual(Budget{ .tool_rounds = 3, .wall_ms = 2000 }, turn.config.budget);
    try std.testing.expectEqual(Budget{ .tool_rounds = 0, .wall_ms = 2000 }, c.budget);
}
