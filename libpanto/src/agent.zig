//! An agent: configuration, the conversation it keeps across turns, and its HTTP client.
const std = @import("std");
const Allocator = std.mem.Allocator;
const config_mod = @import("config.zig");
const Config = config_mod.Config;
const conversation_mod = @import("conversation.zig");
const Conversation = conversation_mod.Conversation;
const session_mod = @import("session/session.zig");
const conversation_json = @import("conversation_json.zig");
const Origin = @import("assembly.zig").Origin;
const content = @import("content.zig");
const Stream = @import("stream.zig").Stream;
const tools = @import("tools.zig");
const read_tool = @import("read_tool.zig");
const network = @import("network.zig");
const providers = @import("providers.zig");
const Dialer = @import("dial.zig").Dialer;
const KeepAlive = @import("keep_alive.zig").KeepAlive;
const compaction = @import("compaction.zig");
const request_options = @import("request_options.zig");
const log_mod = @import("log.zig");

pub const RunError = error{ Busy, OutOfMemory, SessionWrite };
/// A turn with options: they may be refused (InvalidConfig, the reason in the Diagnostic).
pub const RunWithError = RunError || error{InvalidConfig};
pub const AddToolError = error{ Busy, InvalidConfig, OutOfMemory };
/// Making an agent: its configuration refused, or its session (session.Error, the detail in
/// the Diagnostic).
pub const InitError = AddToolError || session_mod.Error;
pub const SetConfigError = AddToolError || error{SessionWrite};
pub const ImportError = error{ Busy, InvalidConversation, OutOfMemory, SessionWrite };
pub const TruncateError = error{ Busy, InvalidConversation, OutOfRange, OutOfMemory, SessionWrite };
/// NothingToCompact: no message is older than compaction.keep_recent_tokens.
pub const CompactError = error{ Busy, NothingToCompact, OutOfMemory };

pub const Agent = struct {
    gpa: Allocator,
    /// Holds the configuration's strings.
    config_arena: std.heap.ArenaAllocator,
    config: Config,
    /// The tool registry: enabled native tools first, then host tools in registration order.
    tools: tools.Set,
    conversation: Conversation,
    /// The session the conversation is kept in (config "session"), or null. Its journal is
    /// the conversation's.
    session: ?*session_mod.Session = null,
    http: std.http.Client,
    /// The agent's I/O: blocking, on the caller's thread (no thread pool, no signal handlers:
    /// the host program, be it Python or Go, owns those), with connects bounded by
    /// timeouts.connect_ms and watched (see dial.zig).
    dialer: Dialer,
    /// The connection kept alive between requests (see keep_alive.zig).
    keep_alive: KeepAlive = .{},
    /// Where the debug log goes (log.zig); off by default.
    log: log_mod.Sink = .{},
    /// Proxies and trusted certificates from the environment.
    network: network.Settings,
    /// True while a stream of this agent is unfinished: one turn at a time.
    busy: bool = false,
    /// Streams not yet destroyed, finished or not: each still points at this agent.
    live_streams: u32 = 0,
    /// `deinit` was called while streams were alive: the last one to go frees the agent
    /// (sqlite's "zombie" connection), so no order of frees is a use-after-free.
    released: bool = false,

    /// Creates an agent, copying the configuration. A missing API key is read from the
    /// provider's environment variable.
    pub fn init(gpa: Allocator, config: Config) InitError!*Agent {
        var diag: config_mod.Diagnostic = .{};
        return initWithDiagnostic(gpa, config, &diag);
    }

    /// Like `init`, with the reason a configuration or its session is refused (two tools of
    /// one name, a session locked by another agent...). With a session the conversation is
    /// the session's, replayed from its file, and the configuration is recorded in it.
    pub fn initWithDiagnostic(gpa: Allocator, config: Config, diag: *config_mod.Diagnostic) InitError!*Agent {
        const a = try gpa.create(Agent);
        errdefer gpa.destroy(a);
        a.* = .{
            .gpa = gpa,
            .config_arena = .init(gpa),
            .config = undefined,
            .conversation = .init(gpa),
            .tools = .init(gpa),
            .http = undefined,
            .dialer = undefined,
            .network = .init(gpa),
        };
        a.dialer.init();
        a.http = .{ .allocator = gpa, .io = a.dialer.io() };
        errdefer a.network.deinit();
        errdefer a.config_arena.deinit();
        errdefer a.tools.deinit();
        const arena = a.config_arena.allocator();
        a.config = .{
            .provider = config.provider,
            .model = try arena.dupe(u8, config.model),
            .base_url = try arena.dupe(u8, config.base_url orelse try envBaseUrl(arena, config.provider)),
            .api_key = if (config.api_key) |k| try arena.dupe(u8, k) else try envKey(arena, config.provider),
            .system = if (config.system) |s| try arena.dupe(u8, s) else null,
            .max_tokens = config.max_tokens,
            .capabilities = try tools.dupeStrings(arena, config.capabilities),
            .max_tool_iterations = config.max_tool_iterations,
            .read_tool = if (config.read_tool) |rt| .{ .root = try arena.dupe(u8, rt.root), .max_bytes = rt.max_bytes } else null,
        };
        a.config.thinking = config.thinking;
        a.config.retry = config.retry;
        a.config.timeouts = config.timeouts;
        a.config.keep_alive = config.keep_alive;
        a.config.compaction = config.compaction;
        a.config.tool_execution = config.tool_execution;
        if (config.compaction.prompt) |p| a.config.compaction.prompt = try arena.dupe(u8, p);
        a.config.tool_execution = config.tool_execution;
        if (config.log) |log| a.config.log = .{ .level = log.level, .file = if (log.file) |f| try arena.dupe(u8, f) else null };
        a.log = .open(a.config.log, a.config.api_key);
        a.keep_alive.log = .{ .on = a.log.on(), .sink = &a.log };
        a.config.request = try request_options.dupe(arena, config.request);
        try config_mod.checkWireStrings(a.config, keySource(config.api_key), diag);
        try config_mod.checkBaseUrl(a.config.base_url.?, baseUrlSource(config), diag);
        try request_options.check(a.config, diag);
        try a.syncNativeTools();
        for (config.tools) |t| try a.addParsedTool(t, diag); // the errdefers above free `a`
        if (config.session) |options| {
            errdefer a.conversation.deinit();
            const s = try session_mod.Session.open(gpa, options, &a.conversation, diag);
            errdefer s.close();
            s.recordConfig(a.config) catch |err| return sessionWriteFailed(s, err, diag);
            a.session = s;
            a.conversation.journal = &s.journal;
        }
        return a;
    }

    /// Changes the configuration from a JSON object of the keys to change.
    /// The keys a session records (entry.ConfigRecord) are written to it first: when that
    /// fails (SessionWrite), nothing changes.
    pub fn setConfig(a: *Agent, json: []const u8, diag: *config_mod.Diagnostic) SetConfigError!void {
        if (a.busy) return error.Busy;
        const arena = a.config_arena.allocator();
        var changed = a.config;
        try config_mod.patchJson(arena, &changed, json, diag);
        if (changed.read_tool != null and a.config.read_tool == null) {
            if (a.findTool(read_tool.name) != null) return diag.fail("a host tool named \"read\" is registered: the native read tool cannot be enabled", .{});
        }
        const url_source = baseUrlSource(changed);
        if (changed.base_url == null) changed.base_url = try envBaseUrl(arena, changed.provider);
        const key_source = keySource(changed.api_key);
        if (changed.api_key == null) changed.api_key = try envKey(arena, changed.provider);
        try config_mod.checkWireStrings(changed, key_source, diag);
        try config_mod.checkBaseUrl(changed.base_url.?, url_source, diag);
        if (a.session) |session| session.recordConfig(changed) catch |err| return sessionWriteFailed(session, err, diag);
        a.config = changed;
        // The log follows the configuration (and masks its key); a connection's log lines too.
        a.log.close();
        a.log = .open(a.config.log, a.config.api_key);
        a.keep_alive.log.on = a.log.on();
        try a.syncNativeTools();
    }

    /// Adds or removes the native read tool to match the configuration.
    fn syncNativeTools(a: *Agent) Allocator.Error!void {
        if (a.tools.find(read_tool.name)) |t| if (t.native == .read) {
            if (a.config.read_tool == null) a.tools.remove(read_tool.name);
            return;
        };
        if (a.config.read_tool == null) return;
        var diag: config_mod.Diagnostic = .{};
        a.tools.add(.{
            .name = read_tool.name,
            .description = read_tool.description,
            .schema_json = read_tool.schema,
            .schema = .null,
            .capabilities = &.{read_tool.capability},
            .native = .read,
        }, &diag) catch |err| switch (err) {
            error.OutOfMemory => return error.OutOfMemory,
            error.InvalidConfig => unreachable, // (setConfig and init keep the name free)
        };
        a.tools.moveLastFirst();
    }

    /// Registers a tool from an already parsed spec (a copy is kept). Names are unique.
    pub fn addParsedTool(a: *Agent, t: tools.Tool, diag: *config_mod.Diagnostic) AddToolError!void {
        if (a.busy) return error.Busy;
        var host = t;
        host.native = null; // only the configuration enables native tools
        try a.tools.add(host, diag);
    }

    /// Registers a host tool from its JSON spec (see panto_agent_add_tool).
    pub fn addTool(a: *Agent, spec_json: []const u8, diag: *config_mod.Diagnostic) AddToolError!void {
        if (a.busy) return error.Busy;
        try a.tools.addJson(spec_json, diag);
    }

    pub fn findTool(a: *const Agent, name: []const u8) ?*const tools.Tool {
        return a.tools.find(name);
    }

    /// Writes the registry as a JSON array in `format`, optionally only the usable tools.
    pub fn exportTools(a: *const Agent, w: *std.Io.Writer, format: tools.Format, only_allowed: bool) std.Io.Writer.Error!void {
        try a.tools.writeExport(w, format, if (only_allowed) a.config.capabilities else null);
    }

    /// Frees the agent, or, while some of its streams are alive, lets the last of them free it.
    pub fn deinit(a: *Agent) void {
        if (a.live_streams > 0) {
            a.released = true;
            return;
        }
        a.keep_alive.closeParked(.agent_freed);
        a.keep_alive.closeIdle(&a.http, .agent_freed);
        a.log.close();
        a.http.deinit();
        a.network.deinit();
        a.conversation.deinit();
        if (a.session) |session| session.close();
        a.tools.deinit();
        a.config_arena.deinit();
        a.gpa.destroy(a);
    }

    /// What the agent's connections did so far (see keep_alive.zig).
    pub const Connections = struct {
        /// Connections opened: TCP connections, and CONNECT tunnels through a proxy.
        opened: u32,
        /// Requests sent on a connection kept alive from an earlier request.
        reused: u32,
    };

    pub fn connections(a: *const Agent) Connections {
        return .{ .opened = a.keep_alive.opened, .reused = a.keep_alive.reused };
    }

    /// Appends `text` as a user message and returns the stream of the turn. Nothing is sent
    /// before the stream's first `next()`. The text is taken as it is (a NUL is a character),
    /// except that invalid UTF-8 sequences become U+FFFD.
    pub fn run(a: *Agent, text: []const u8) RunError!*Stream {
        return a.runInput(.{ .text = text });
    }

    /// What a turn starts with: the user message's text, then more of it as parts (text,
    /// images, PDFs; see content.zig).
    pub const Input = struct {
        text: []const u8 = "",
        parts: []const content.Part = &.{},
    };

    /// As `run`, with parts: the media are fitted now (what cannot be sent becomes a note).
    pub fn runInput(a: *Agent, input: Input) RunError!*Stream {
        if (a.busy) return error.Busy;
        return a.begin(input, .init(a.gpa), null, .{ .config = a.config });
    }

    /// As `runInput`, with this turn's options (`options_json`, PantoInput.options): request
    /// parameters, max_tokens and system that override the configuration for this turn only
    /// (every request of the turn, a compaction's summary request included), and
    /// "cache_breakpoint": true, kept on the user message. Refused like set_config
    /// (InvalidConfig, the reason in `diag`; nothing is appended). The agent's configuration
    /// is unchanged.
    pub fn runWith(a: *Agent, input: Input, options_json: ?[]const u8, diag: *config_mod.Diagnostic) RunWithError!*Stream {
        if (a.busy) return error.Busy;
        const json = options_json orelse return a.runInput(input);
        var turn_arena: std.heap.ArenaAllocator = .init(a.gpa);
        const options, const turn = blk: {
            errdefer turn_arena.deinit(); // (then `begin` owns it)
            const options = try turn_arena.allocator().dupe(u8, json);
            break :blk .{ options, try config_mod.parseTurnOptions(turn_arena.allocator(), a.config, options, diag) };
        };
        return a.begin(input, turn_arena, options, turn);
    }

    /// Appends the user message and makes the turn's stream, which takes `turn_arena` (the
    /// memory of the turn's options and configuration), also when this fails.
    fn begin(a: *Agent, input: Input, turn_arena: std.heap.ArenaAllocator, options: ?[]const u8, turn: config_mod.TurnOptions) RunError!*Stream {
        var arena = turn_arena;
        errdefer arena.deinit();
        const blocks = try content.userTurn(a.gpa, input.text, input.parts);
        a.conversation.appendOwnedMessage(.{ .role = .user, .blocks = blocks, .cache = turn.cache_breakpoint }) catch |err| {
            // Not in the session file (its write was cut back off): not in memory either.
            if (err == error.SessionWrite) conversation_mod.freeMessage(a.gpa, a.conversation.messages.pop().?);
            return err;
        };
        errdefer a.conversation.dropLast() catch {};
        const s = try Stream.create(a);
        s.setTurn(arena, options, turn.config);
        a.busy = true;
        a.live_streams += 1;
        return s;
    }

    /// Compacts the conversation now: the messages older than about
    /// compaction.keep_recent_tokens are summarized by the model (see compaction.zig). The
    /// stream gives COMPACTION_START, COMPACTION_END and MESSAGE_COMPLETE (the summary
    /// request's stop reason and usage); it is read, canceled and closed like a turn's, and
    /// one that fails leaves the conversation unchanged.
    pub fn compact(a: *Agent) CompactError!*Stream {
        if (a.busy) return error.Busy;
        const plan = compaction.planManual(&a.conversation, a.config) orelse return error.NothingToCompact;
        const summarizing = try compaction.Run.create(a.gpa, plan);
        const s = Stream.createCompaction(a, summarizing) catch |err| {
            summarizing.destroy();
            return err;
        };
        a.busy = true;
        a.live_streams += 1;
        return s;
    }

    /// The provider and model the next request goes to, which its answer is recorded with.
    pub fn origin(a: *const Agent) Origin {
        return .{ .provider = @tagName(a.config.provider), .model = a.config.model };
    }

    pub fn messageCount(a: *const Agent) usize {
        return a.conversation.messages.items.len;
    }

    /// Writes the conversation as a versioned document (conversation_json.zig).
    pub fn exportJson(a: *const Agent, w: *std.Io.Writer) std.Io.Writer.Error!void {
        try conversation_json.writeExport(w, a.conversation.messages.items);
    }

    /// Replaces the conversation with a document of `exportJson`, checked whole first: on
    /// error the conversation is unchanged and `diag` names the first problem.
    pub fn importJson(a: *Agent, json: []const u8, diag: *conversation_json.Diagnostic) ImportError!void {
        if (a.busy) return error.Busy;
        const messages = try conversation_json.parseExport(a.gpa, json, diag);
        a.conversation.replace(messages) catch |err| {
            conversation_mod.freeMessages(a.gpa, messages);
            return err;
        };
    }

    /// Keeps the first `count` messages. Refused (nothing changes) while a turn runs, past
    /// the end (OutOfRange), or when the last message kept has tool calls, whose results
    /// would be cut off (InvalidConversation, `diag` says so).
    pub fn truncate(a: *Agent, count: usize, diag: *conversation_json.Diagnostic) TruncateError!void {
        if (a.busy) return error.Busy;
        const messages = a.conversation.messages.items;
        if (count > messages.len) return error.OutOfRange;
        if (count > 0 and count < messages.len) conversation_json.checkNoOpenCalls(&messages[count - 1], count, diag) catch
            return diag.fail("cannot keep {d} messages: messages[{d}] has tool calls whose results are in messages[{d}]", .{ count, count - 1, count });
        try a.conversation.truncate(count);
    }

    /// The agent's session: its id, its file, whether it existed when the agent opened it,
    /// and the bytes of a torn last line cut off then. null without a session. Strings are
    /// the session's (valid until the agent forks or is freed). (panto_agent_session)
    pub const SessionInfo = struct { id: []const u8, path: []const u8, resumed: bool, torn_bytes: u64 };

    pub fn sessionInfo(a: *const Agent) ?SessionInfo {
        const s = a.session orelse return null;
        return .{ .id = s.id, .path = s.path, .resumed = s.resumed, .torn_bytes = s.torn_bytes };
    }

    pub const ForkError = session_mod.Error || error{ Busy, State, InvalidArgument, InvalidConversation };

    /// Forks the session at `message_count` (panto_agent_fork_session): a new session
    /// `new_id` (null: a new id) in the same directory, whose header names this one as its
    /// parent, holding the first message_count messages; the agent goes on in it with its
    /// conversation cut to them, and lets go of the old session, whose file is unchanged.
    /// Busy while a stream is unfinished, State without a session, InvalidArgument when
    /// message_count is past the end, InvalidConversation when it would keep tool calls
    /// without their results; the session's errors (the id taken: SessionExists). Nothing
    /// changes on failure.
    pub fn forkSession(a: *Agent, message_count: usize, new_id: ?[]const u8, diag: *config_mod.Diagnostic) ForkError!void {
        if (a.busy) return error.Busy;
        const old = a.session orelse return error.State;
        const messages = a.conversation.messages.items;
        if (message_count > messages.len) return error.InvalidArgument;
        // (truncate's rule: see Agent.truncate)
        if (message_count > 0 and message_count < messages.len) for (messages[message_count - 1].blocks) |b| if (b.kind == .tool_call) {
            diag.fail("cannot keep {d} messages: messages[{d}] has tool calls whose results are in messages[{d}]", .{ message_count, message_count - 1, message_count }) catch {};
            return error.InvalidConversation;
        };
        const child = try old.fork(&a.conversation, message_count, new_id, diag);
        child.recordConfig(a.config) catch |err| {
            _ = std.c.unlink(child.path);
            const e = sessionWriteFailed(child, err, diag);
            child.close();
            return e;
        };
        // Memory follows the new file (the old one keeps the messages after the fork).
        while (a.conversation.messages.items.len > message_count) conversation_mod.freeMessage(a.gpa, a.conversation.messages.pop().?);
        old.close();
        a.session = child;
        a.conversation.journal = &child.journal;
    }

    /// Called by a stream as it is destroyed.
    /// (A stream that ended has let go of `busy` already; a newer stream may hold it now.)
    pub fn streamDestroyed(a: *Agent) void {
        a.live_streams -= 1;
        if (a.released and a.live_streams == 0) a.deinit();
    }
};

/// A session write failed while the agent was being made, configured or forked: the reason
/// names the file.
fn sessionWriteFailed(s: *session_mod.Session, err: session_mod.Journal.Error, diag: *config_mod.Diagnostic) session_mod.Journal.Error {
    if (err == error.SessionWrite) diag.fail("the session file {s} could not be written", .{s.path}) catch {};
    return err;
}

/// Where the agent's key comes from: the configuration's, or else the environment's.
fn keySource(configured: ?[]const u8) config_mod.KeySource {
    return if (configured != null) .config else .environment;
}

/// What a message about the base URL calls it: the configuration's key, or the environment
/// variable it will be read from.
fn baseUrlSource(config: Config) []const u8 {
    return if (config.base_url != null) "base_url" else providers.baseUrlVariable(config.provider);
}

/// The provider's base URL from its environment variable (ANTHROPIC_BASE_URL,
/// OPENAI_BASE_URL, as the official SDKs read them), else its public endpoint.
fn envBaseUrl(arena: Allocator, provider: config_mod.Provider) Allocator.Error![]const u8 {
    const value = std.c.getenv(providers.baseUrlVariable(provider)) orelse return providers.defaultBaseUrl(provider);
    const url = std.mem.span(value);
    if (url.len == 0) return providers.defaultBaseUrl(provider);
    return try arena.dupe(u8, url);
}

fn envKey(arena: Allocator, provider: config_mod.Provider) Allocator.Error!?[]const u8 {
    const value = std.c.getenv(providers.apiKeyVariable(provider)) orelse return null;
    return try arena.dupe(u8, std.mem.span(value));
}

extern "c" fn setenv(name: [*:0]const u8, value: [*:0]const u8, overwrite: c_int) c_int;
extern "c" fn unsetenv(name: [*:0]const u8) c_int;

test "freeing an ended stream while a newer one runs leaves the agent busy" {
    const gpa = std.testing.allocator;
    const agent = try Agent.init(gpa, .{ .provider = .anthropic, .model = "m", .api_key = "k", .base_url = "http://127.0.0.1:9" });
    defer agent.deinit();
    const first = try agent.run("one");
    first.cancel();
    try std.testing.expectError(error.Canceled, first.next());
    const second = try agent.run("two");
    first.destroy();
    try std.testing.expectError(error.Busy, agent.run("three"));
    second.destroy();
    const third = try agent.run("three");
    third.destroy();
}

test "an agent refuses wire strings with control characters: its config, the environment's key, set_config" {
    const gpa = std.testing.allocator;
    var diag: config_mod.Diagnostic = .{};
    try std.testing.expectError(error.InvalidConfig, Agent.initWithDiagnostic(gpa, .{ .provider = .openai, .model = "m", .api_key = "sk-s3cret\r\nX-Injected: yes" }, &diag));
    try std.testing.expectEqualStrings("api_key contains a control character (its value is not shown)", diag.message());
    try std.testing.expectError(error.InvalidConfig, Agent.initWithDiagnostic(gpa, .{ .provider = .openai, .model = "m", .api_key = "k", .base_url = "http://h/\r\nX: y" }, &diag));
    try std.testing.expectEqualStrings("base_url contains a space or a control character", diag.message());

    // The key read from OPENAI_API_KEY, at creation and when set_config changes the provider.
    try std.testing.expectEqual(@as(c_int, 0), setenv("OPENAI_API_KEY", "sk-s3cret\r\nX-Injected: yes", 1));
    defer _ = unsetenv("OPENAI_API_KEY");
    try std.testing.expectError(error.InvalidConfig, Agent.initWithDiagnostic(gpa, .{ .provider = .openai, .model = "m" }, &diag));
    try std.testing.expectEqualStrings("OPENAI_API_KEY contains a control character (its value is not shown)", diag.message());
    const agent = try Agent.initWithDiagnostic(gpa, .{ .provider = .anthropic, .model = "m", .api_key = "k" }, &diag);
    defer agent.deinit();
    try std.testing.expectError(error.InvalidConfig, agent.setConfig("{\"provider\":\"openai\",\"api_key\":null}", &diag));
    try std.testing.expectEqualStrings("OPENAI_API_KEY contains a control character (its value is not shown)", diag.message());
    try std.testing.expectError(error.InvalidConfig, agent.setConfig("{\"model\":\"m\\r\\n\"}", &diag));
    try std.testing.expectEqualStrings("model contains a control character", diag.message());
    // Nothing changed.
    try std.testing.expectEqual(config_mod.Provider.anthropic, agent.config.provider);
    try std.testing.expectEqualStrings("k", agent.config.api_key.?);
    try std.testing.expectEqualStrings("m", agent.config.model);
}

test "a base URL from the environment that is not an http(s) URL is a config error, at creation and at set_config" {
    const gpa = std.testing.allocator;
    var diag: config_mod.Diagnostic = .{};
    try std.testing.expectEqual(@as(c_int, 0), setenv("OPENAI_BASE_URL", "notaurl", 1));
    defer _ = unsetenv("OPENAI_BASE_URL");
    try std.testing.expectError(error.InvalidConfig, Agent.initWithDiagnostic(gpa, .{ .provider = .openai, .model = "m", .api_key = "k" }, &diag));
    try std.testing.expectEqualStrings("OPENAI_BASE_URL \"notaurl\" is not a URL", diag.message());
    try std.testing.expectEqual(@as(c_int, 0), setenv("OPENAI_BASE_URL", "localhost:8080", 1));
    try std.testing.expectError(error.InvalidConfig, Agent.initWithDiagnostic(gpa, .{ .provider = .openai, .model = "m", .api_key = "k" }, &diag));
    try std.testing.expectEqualStrings("OPENAI_BASE_URL must start with http:// or https://", diag.message());
    // A base URL configured is not the environment's; switching to the provider reads it.
    const agent = try Agent.initWithDiagnostic(gpa, .{ .provider = .openai, .model = "m", .api_key = "k", .base_url = "http://127.0.0.1:9" }, &diag);
    defer agent.deinit();
    try std.testing.expectError(error.InvalidConfig, agent.setConfig("{\"base_url\":null}", &diag));
    try std.testing.expectEqualStrings("OPENAI_BASE_URL must start with http:// or https://", diag.message());
    try std.testing.expectEqualStrings("http://127.0.0.1:9", agent.config.base_url.?);
}

test "a tool schema nested too deeply is a config error, from JSON or from Zig, and the agent stays usable" {
    const gpa = std.testing.allocator;
    const agent = try Agent.init(gpa, .{ .provider = .anthropic, .model = "m", .api_key = "k" });
    defer agent.deinit();
    const deep_schema = "{\"type\":\"object\",\"x\":" ++ "[" ** 300 ++ "]" ** 300 ++ "}";
    var diag: config_mod.Diagnostic = .{};
    try std.testing.expectError(error.InvalidConfig, agent.addTool("{\"name\":\"deep\",\"input_schema\":" ++ deep_schema ++ "}", &diag));
    try std.testing.expectEqualStrings("tool \"deep\": input_schema is nested more than 128 levels deep", diag.message());
    diag = .{};
    try std.testing.expectError(error.InvalidConfig, agent.addParsedTool(.{ .name = "deep", .description = "", .schema_json = deep_schema, .schema = .null, .capabilities = &.{} }, &diag));
    try std.testing.expectEqualStrings("tool \"deep\": input_schema is nested more than 128 levels deep", diag.message());
    try std.testing.expectEqual(@as(usize, 0), agent.tools.items().len);
    try agent.addTool("{\"name\":\"deep\"}", &diag);
    try std.testing.expectEqual(@as(usize, 1), agent.tools.items().len);
}
