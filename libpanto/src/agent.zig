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
const approval = @import("approval.zig");
const read_tool = @import("read_tool.zig");
const network = @import("transport/network.zig");
const providers = @import("providers.zig");
const endpoint = @import("endpoint.zig");
const Dialer = @import("transport/dial.zig").Dialer;
const KeepAlive = @import("transport/keep_alive.zig").KeepAlive;
const compaction = @import("compaction.zig");
const request_options = @import("request_options.zig");
const log_mod = @import("log.zig");
const mcp_servers = @import("mcp/servers.zig");
const mcp_config = @import("mcp/server_config.zig");
const token_count = @import("token_count.zig");
const model_list = @import("model_list.zig");
const pending_round = @import("turn/pending_round.zig");

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
pub const CompactError = error{ Busy, NothingToCompact, OutOfMemory, SessionWrite };

pub const Agent = struct {
    gpa: Allocator,
    /// Holds the configuration's strings.
    config_arena: std.heap.ArenaAllocator,
    config: Config,
    /// Whether config.base_url and config.api_key are the caller's or the provider's
    /// environment's or defaults: a provider switch derives the latter again (endpoint.zig).
    origins: endpoint.Origins,
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
    /// The MCP servers of config.mcp_servers: started by a turn that needs their tools.
    mcp: mcp_servers.Servers = .{ .gpa = std.heap.page_allocator },
    /// True while a stream of this agent is unfinished: one turn at a time.
    busy: bool = false,
    /// Streams not yet destroyed, finished or not: each still points at this agent.
    live_streams: u32 = 0,
    /// `deinit` was called while streams were alive: the last one to go frees the agent
    /// (sqlite's "zombie" connection), so no order of frees is a use-after-free.
    released: bool = false,
    /// The last turn failed or was canceled after keeping something (a partial answer, tool
    /// rounds), and the conversation was not edited since: rollbackTurn removes it.
    unfinished_turn: bool = false,
    /// A tool round left waiting for a person (turn/pending_round.zig): a stream closed or
    /// canceled while a call waited for its answer, or a session that ended so (a process
    /// killed while it waited, or during a round). `resumeTurn` goes on with it; `run` and
    /// the other turns first answer what it left (`settleSuspended`). Only while the
    /// conversation's last message is the round's (`pendingRound` checks).
    suspended: ?pending_round.PendingRound = null,

    /// Creates an agent, copying the configuration. A missing base URL or API key comes from
    /// the provider's environment variable (endpoint.zig), a missing base URL else from its
    /// public endpoint.
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
            .origins = undefined,
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
        var located = config;
        a.origins = try endpoint.settle(arena, &located, .both, null);
        a.config = .{
            .provider = config.provider,
            .model = try arena.dupe(u8, config.model),
            .base_url = try arena.dupe(u8, located.base_url.?),
            .api_key = if (located.api_key) |k| try arena.dupe(u8, k) else null,
            .system = if (config.system) |s| try arena.dupe(u8, s) else null,
            .max_tokens = config.max_tokens,
            .capabilities = try tools.dupeStrings(arena, config.capabilities),
            .max_tool_iterations = config.max_tool_iterations,
            .read_tool = if (config.read_tool) |rt| .{ .root = try arena.dupe(u8, rt.root), .max_bytes = rt.max_bytes, .confined = rt.confined } else null,
        };
        a.config.thinking = config.thinking;
        a.config.retry = config.retry;
        a.config.timeouts = config.timeouts;
        a.config.keep_alive = config.keep_alive;
        a.config.compaction = config.compaction;
        a.config.model_info = config.model_info;
        a.config.tool_execution = config.tool_execution;
        if (config.compaction.prompt) |p| a.config.compaction.prompt = try arena.dupe(u8, p);
        a.config.tool_execution = config.tool_execution;
        if (config.log) |log| a.config.log = .{ .level = log.level, .file = if (log.file) |f| try arena.dupe(u8, f) else null };
        a.log = .open(a.config.log, a.config.api_key);
        a.keep_alive.log = .{ .on = a.log.on(), .sink = &a.log };
        a.config.request = try request_options.dupe(arena, config.request);
        a.config.mcp_servers = try mcp_config.dupe(arena, config.mcp_servers);
        a.mcp = try .init(gpa, a.config.mcp_servers);
        errdefer a.mcp.deinit();
        a.config.approval_rules = try approval.dupeRules(arena, config.approval_rules);
        a.config.budget = config.budget;
        try config_mod.checkWireStrings(a.config, keySource(a.origins.api_key), diag);
        try config_mod.checkBaseUrl(a.config.base_url.?, baseUrlSource(a.origins.base_url, a.config.provider), diag);
        try request_options.check(a.config, diag);
        try a.syncNativeTools();
        for (config.tools) |t| try a.addParsedTool(t, diag); // the errdefers above free `a`
        if (config.session) |options| {
            errdefer a.conversation.deinit();
            const s = try session_mod.Session.open(gpa, options, &a.conversation, diag);
            errdefer s.close();
            s.recordConfig(a.config) catch |err| return sessionWriteFailed(s, err, diag);
            a.suspended = try pending_round.fromSession(gpa, &a.conversation, s.loaded.pending_round);
            a.session = s;
            a.conversation.journal = &s.journal;
        }
        return a;
    }

    /// Changes the configuration from a JSON object of the keys to change. A provider switch
    /// derives base_url and api_key again for the new provider unless they were given
    /// (endpoint.zig).
    /// The keys a session records (entry.ConfigRecord) are written to it first: when that
    /// fails (SessionWrite), nothing changes.
    pub fn setConfig(a: *Agent, json: []const u8, diag: *config_mod.Diagnostic) SetConfigError!void {
        if (a.busy) return error.Busy;
        const arena = a.config_arena.allocator();
        var changed = a.config;
        const named = try config_mod.patchJson(arena, &changed, json, diag);
        if (changed.read_tool != null and a.config.read_tool == null) {
            if (a.findTool(read_tool.name) != null) return diag.fail("a host tool named \"read\" is registered: the native read tool cannot be enabled", .{});
        }
        const origins = try endpoint.settle(arena, &changed, named, .{ .provider = a.config.provider, .origins = a.origins });
        try config_mod.checkWireStrings(changed, keySource(origins.api_key), diag);
        try config_mod.checkBaseUrl(changed.base_url.?, baseUrlSource(origins.base_url, changed.provider), diag);
        if (a.session) |session| session.recordConfig(changed) catch |err| return sessionWriteFailed(session, err, diag);
        a.config = changed;
        a.origins = origins;
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
        a.mcp.deinit();
        a.log.close();
        a.http.deinit();
        a.network.deinit();
        a.dropSuspended();
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

    /// How many MCP servers the agent has (config `mcp_servers`), for `mcpStatus`.
    pub fn mcpServerCount(a: *const Agent) usize {
        return a.mcp.list.len;
    }

    /// Where MCP server `index` (in name order) stands: state, its `initialize` answer, its
    /// tools, why it failed. Strings borrowed until the next turn. Not while a stream runs on
    /// another thread.
    pub fn mcpStatus(a: *Agent, index: usize) mcp_servers.Status {
        return a.mcp.status(index);
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
        return a.startTurn(input, options_json, diag);
    }

    /// NothingToAnswer: the conversation does not end with a user message.
    pub const ContinueError = RunWithError || error{NothingToAnswer};

    /// Starts a turn that answers the conversation as it is, appending no user message: its
    /// last message must be the user's (a turn's text, a tool round's results: a
    /// conversation imported from another process or worker, say). Options as `runWith`. The
    /// turn is a turn like any (steers, follow-ups, budgets); one that fails keeping nothing
    /// leaves the conversation as it was, its last message not being this turn's to take back.
    pub fn continueTurn(a: *Agent, options_json: ?[]const u8, diag: *config_mod.Diagnostic) ContinueError!*Stream {
        if (a.busy) return error.Busy;
        try a.settleSuspended();
        const messages = a.conversation.messages.items;
        if (messages.len == 0 or messages[messages.len - 1].role != .user) return error.NothingToAnswer;
        return a.startTurn(null, options_json, diag);
    }

    /// A turn: its user message appended (`input`), or none (continueTurn).
    fn startTurn(a: *Agent, input: ?Input, options_json: ?[]const u8, diag: *config_mod.Diagnostic) RunWithError!*Stream {
        if (a.busy) return error.Busy;
        const json = options_json orelse return a.begin(input, .init(a.gpa), null, .{ .config = a.config });
        var turn_arena: std.heap.ArenaAllocator = .init(a.gpa);
        const options, const turn = blk: {
            errdefer turn_arena.deinit(); // (then `begin` owns it)
            const options = try turn_arena.allocator().dupe(u8, json);
            break :blk .{ options, try config_mod.parseTurnOptions(turn_arena.allocator(), a.config, options, diag) };
        };
        return a.begin(input, turn_arena, options, turn);
    }

    /// NothingPending: no tool round waits (`pendingRound` is null).
    pub const ResumeError = RunWithError || error{NothingPending};

    /// Goes on with the tool round a stream left waiting for a person (`pendingRound`): the
    /// stream starts with the round as it was, its ApprovalRequest listing the calls still
    /// asked about (answered on this stream with approve / deny), then the ToolCallStarts of
    /// the others (a call answered already is announced again with its result, one that
    /// started and left no result gets "The process ended before this call finished."), and
    /// the turn goes on as any. Options as `runWith`. A stream closed again while a call
    /// waits leaves the round pending again.
    pub fn resumeTurn(a: *Agent, options_json: ?[]const u8, diag: *config_mod.Diagnostic) ResumeError!*Stream {
        if (a.busy) return error.Busy;
        _ = a.pendingRound() orelse return error.NothingPending;
        const s = try a.startTurn(null, options_json, diag);
        s.resumeRound(a.suspended.?);
        a.suspended = null;
        return s;
    }

    /// The tool round waiting for a person, if any: its calls and where each is. Valid until
    /// the agent's next turn or edit of the conversation.
    pub fn pendingRound(a: *Agent) ?*pending_round.PendingRound {
        const p = &(a.suspended orelse return null);
        if (!p.fits(&a.conversation)) {
            a.dropSuspended();
            return null;
        }
        return p;
    }

    /// The pending round's calls with their names and inputs (the C ABI's array): empty
    /// when none waits. Valid as `pendingRound`.
    pub fn pendingCalls(a: *Agent) Allocator.Error![]const pending_round.View {
        const p = a.pendingRound() orelse return &.{};
        const messages = a.conversation.messages.items;
        return p.views(a.gpa, &messages[messages.len - 1]);
    }

    /// The user moves on from a pending round (a new turn, a compaction): every call gets a
    /// result, those it has, else an error saying why it has none (pending_round.settleText),
    /// one user message, so that no request carries a call without its result.
    fn settleSuspended(a: *Agent) (Allocator.Error || conversation_mod.AppendError)!void {
        const p = a.pendingRound() orelse return;
        const messages = a.conversation.messages.items;
        const blocks = try p.settle(a.gpa, &messages[messages.len - 1]);
        a.conversation.appendOwned(.user, blocks) catch |err| {
            // Not in the session file (its write was cut back off): not in memory either. The
            // round stays pending. (appendOwned frees the blocks when the append fails.)
            if (err == error.SessionWrite) conversation_mod.freeMessage(a.gpa, a.conversation.messages.pop().?);
            return err;
        };
        a.dropSuspended();
    }

    /// A stream stopped while a call waited for a person (Stream.abort): the agent keeps the
    /// round, which `p` describes.
    pub fn suspendRound(a: *Agent, p: pending_round.PendingRound) void {
        a.dropSuspended();
        a.suspended = p;
    }

    fn dropSuspended(a: *Agent) void {
        if (a.suspended) |*p| p.deinit(a.gpa);
        a.suspended = null;
    }

    /// Appends a turn's user message (a run's, or a follow-up's: Stream.followUp).
    pub fn appendUserTurn(a: *Agent, input: Input, cache: bool) (Allocator.Error || conversation_mod.AppendError)!void {
        const blocks = try content.userTurn(a.gpa, input.text, input.parts);
        a.conversation.appendOwnedMessage(.{ .role = .user, .blocks = blocks, .cache = cache }) catch |err| {
            // Not in the session file (its write was cut back off): not in memory either.
            if (err == error.SessionWrite) conversation_mod.freeMessage(a.gpa, a.conversation.messages.pop().?);
            return err;
        };
    }

    /// Appends the user message and makes the turn's stream, which takes `turn_arena` (the
    /// memory of the turn's options and configuration), also when this fails.
    fn begin(a: *Agent, input: ?Input, turn_arena: std.heap.ArenaAllocator, options: ?[]const u8, turn: config_mod.TurnOptions) RunError!*Stream {
        var arena = turn_arena;
        errdefer arena.deinit();
        if (input != null) try a.settleSuspended();
        if (input) |in| try a.appendUserTurn(in, turn.cache_breakpoint);
        errdefer if (input != null) a.conversation.dropLast() catch {};
        const s = try Stream.create(a);
        s.setTurn(arena, options, turn.config);
        s.continued = input == null;
        a.unfinished_turn = false;
        s.user_turn_appended = a.conversation.appended;
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
        return a.compactWith(null);
    }

    /// `compact`, with the user's instructions for the summary (what to keep, what to stress):
    /// appended to the compaction prompt of this summary request alone (compaction.zig,
    /// `Run.focus`). null or blank: none.
    pub fn compactWith(a: *Agent, instructions: ?[]const u8) CompactError!*Stream {
        if (a.busy) return error.Busy;
        a.settleSuspended() catch |err| switch (err) {
            error.OutOfMemory => return error.OutOfMemory,
            error.SessionWrite => return error.SessionWrite,
        };
        const plan = compaction.planManual(&a.conversation, a.config) orelse return error.NothingToCompact;
        const summarizing = try compaction.Run.create(a.gpa, plan);
        if (instructions) |text| summarizing.focus(a.config.compaction.prompt orelse compaction.default_prompt, text) catch |err| {
            summarizing.destroy();
            return err;
        };
        const s = Stream.createCompaction(a, summarizing) catch |err| {
            summarizing.destroy();
            return err;
        };
        a.unfinished_turn = false;
        a.busy = true;
        a.live_streams += 1;
        return s;
    }

    /// The input tokens of the request the next turn would send with `input` (null: the
    /// conversation as it is), asked of the provider, or estimated where it has no counting
    /// endpoint (token_count.zig). Busy while a stream is unfinished; a failure's detail in
    /// `detail`.
    pub fn countTokens(a: *Agent, input: ?Input, detail: *@import("errors.zig").Detail) token_count.Error!token_count.TokenCount {
        return token_count.count(a, input, detail);
    }

    /// The models the provider lists for the account, every page, each joined with the
    /// catalog's entry, as a JSON array written to `w` (model_list.zig). Busy while a stream
    /// is unfinished; a failure's detail in `detail`.
    pub fn listModels(a: *Agent, w: *std.Io.Writer, detail: *@import("errors.zig").Detail) model_list.Error!void {
        return model_list.write(a, w, detail);
    }

    /// The provider and model the next request goes to, which its answer is recorded with.
    pub fn origin(a: *const Agent) Origin {
        return .{ .provider = @tagName(a.config.provider), .model = a.config.model };
    }

    pub fn messageCount(a: *const Agent) usize {
        return a.conversation.messages.items.len;
    }

    /// What the conversation's assistant messages used and cost (catalog/spent.zig).
    pub fn spent(a: *const Agent) @import("catalog/catalog.zig").Spent {
        return @import("catalog/catalog.zig").spent(a.conversation.messages.items, &a.config);
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
        a.dropSuspended();
        a.unfinished_turn = false;
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
        if (count < messages.len) a.dropSuspended();
        a.unfinished_turn = false;
    }

    pub const RollbackError = error{ Busy, OutOfMemory, SessionWrite };

    /// Rolls back the last turn when it failed or was canceled (panto_agent_rollback_turn):
    /// its user message and what it kept (a partial answer, tool calls and their results)
    /// are removed; returns how many messages were. 0 when there is nothing to roll back:
    /// the last turn ended well, or kept nothing (it was rolled back as it failed: see
    /// Stream.settleFailedTurn), or the conversation was edited or compacted since. Nothing
    /// changes on failure.
    pub fn rollbackTurn(a: *Agent) RollbackError!usize {
        if (a.busy) return error.Busy;
        if (!a.unfinished_turn) return 0;
        const messages = a.conversation.messages.items;
        const start = turnStart(messages) orelse {
            a.unfinished_turn = false;
            return 0;
        };
        try a.conversation.truncate(start);
        a.unfinished_turn = false;
        a.dropSuspended();
        return messages.len - start;
    }

    /// The agent's session: its id, its file, whether it existed when the agent opened it,
    /// and the bytes of a torn last line cut off then. null without a session. Strings are
    /// the session's (valid until the agent forks or is freed). (panto_agent_session)
    /// `name`: the one its user gave it last (setSessionName), null if none.
    pub const SessionInfo = struct { id: []const u8, path: []const u8, resumed: bool, torn_bytes: u64, name: ?[]const u8 = null };

    pub fn sessionInfo(a: *const Agent) ?SessionInfo {
        const s = a.session orelse return null;
        return .{ .id = s.id, .path = s.path, .resumed = s.resumed, .torn_bytes = s.torn_bytes, .name = s.loaded.name };
    }

    /// Names the session (a name entry in its file; session lists show it). Busy while a
    /// stream is unfinished, State without a session, InvalidArgument for a name that is
    /// empty, longer than 200 bytes, not UTF-8 or holding a control character; the file's
    /// SessionWrite.
    pub fn setSessionName(a: *Agent, name: []const u8, diag: *config_mod.Diagnostic) (session_mod.Journal.Error || error{ Busy, State, InvalidArgument })!void {
        if (a.busy) return error.Busy;
        const s = a.session orelse return error.State;
        if (!isSessionName(name)) {
            diag.fail("a session name is 1 to 200 bytes of UTF-8 text on one line", .{}) catch {};
            return error.InvalidArgument;
        }
        s.setName(name) catch |err| {
            if (err == error.SessionWrite) diag.fail("the session file {s} could not be written", .{s.path}) catch {};
            return err;
        };
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
        a.unfinished_turn = false;
    }

    /// Called by a stream as it is destroyed.
    /// (A stream that ended has let go of `busy` already; a newer stream may hold it now.)
    pub fn streamDestroyed(a: *Agent) void {
        a.live_streams -= 1;
        if (a.released and a.live_streams == 0) a.deinit();
    }
};

/// 1 to 200 bytes of UTF-8 on one line, without control characters.
fn isSessionName(name: []const u8) bool {
    if (name.len == 0 or name.len > 200 or !std.unicode.utf8ValidateSlice(name)) return false;
    for (name) |b| if (b < 0x20 or b == 0x7f) return false;
    return true;
}

/// Where the last turn begins: its user message, the last one that holds no tool results.
/// null when there is none, or when it is a compaction's summary (the turn's start was
/// summarized).
fn turnStart(messages: []const conversation_mod.Message) ?usize {
    var i = messages.len;
    while (i > 0) {
        i -= 1;
        const m = messages[i];
        if (m.role != .user) continue;
        const results = for (m.blocks) |b| {
            if (b.kind == .tool_result) break true;
        } else false;
        if (results) continue;
        return if (m.compaction == null) i else null;
    }
    return null;
}

/// A session write failed while the agent was being made, configured or forked: the reason
/// names the file.
fn sessionWriteFailed(s: *session_mod.Session, err: session_mod.Journal.Error, diag: *config_mod.Diagnostic) session_mod.Journal.Error {
    if (err == error.SessionWrite) diag.fail("the session file {s} could not be written", .{s.path}) catch {};
    return err;
}

/// Where the agent's key comes from, for the message that refuses it.
fn keySource(origin: endpoint.Origin) config_mod.KeySource {
    return switch (origin) {
        .given => .config,
        .derived => .environment,
    };
}

/// What a message about the base URL calls it: the configuration's key, or the environment
/// variable it was read from (a provider's default is always a URL).
fn baseUrlSource(origin: endpoint.Origin, provider: config_mod.Provider) []const u8 {
    return switch (origin) {
        .given => "base_url",
        .derived => providers.variableRead(providers.baseUrlVariables(provider), providers.baseUrlChoices(provider)),
    };
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

test "set_config switching provider sends to the new provider's variables, not the old one's" {
    const gpa = std.testing.allocator;
    const vars = [_][2][*:0]const u8{
        .{ "ANTHROPIC_BASE_URL", "http://anthropic.test" }, .{ "ANTHROPIC_API_KEY", "ant-key" },
        .{ "OPENAI_BASE_URL", "http://openai.test/v1" },    .{ "OPENAI_API_KEY", "oai-key" },
    };
    for (vars) |v| try std.testing.expectEqual(@as(c_int, 0), setenv(v[0], v[1], 1));
    defer for (vars) |v| {
        _ = unsetenv(v[0]);
    };
    const agent = try Agent.init(gpa, .{ .provider = .anthropic, .model = "m" });
    defer agent.deinit();
    try std.testing.expectEqualStrings("http://anthropic.test", agent.config.base_url.?);
    var diag: config_mod.Diagnostic = .{};
    try agent.setConfig("{\"provider\":\"openai\",\"model\":\"gpt-4o-mini\"}", &diag);
    try std.testing.expectEqualStrings("http://openai.test/v1", agent.config.base_url.?);
    try std.testing.expectEqualStrings("oai-key", agent.config.api_key.?);
    // And back.
    try agent.setConfig("{\"provider\":\"anthropic\"}", &diag);
    try std.testing.expectEqualStrings("http://anthropic.test", agent.config.base_url.?);
    try std.testing.expectEqualStrings("ant-key", agent.config.api_key.?);
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
