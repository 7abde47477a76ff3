//! An agent's MCP servers (config `mcp_servers`): started when a turn first needs its tools,
//! their tools put in the agent's registry under prefixed names (tool_name.zig), calls sent to
//! the right server under the tool's own name, results made content (result.zig), and the
//! servers ended with the agent. docs/design/mcp.md has the why of each rule.
const std = @import("std");
const Allocator = std.mem.Allocator;
const client_mod = @import("client.zig");
const Client = client_mod.Client;
const ServerConfig = @import("server_config.zig").ServerConfig;
const tool_name = @import("tool_name.zig");
const result = @import("result.zig");
const tools = @import("../tools.zig");
const content = @import("../content.zig");
const config_mod = @import("../config.zig");
const log_mod = @import("../log.zig");
const Agent = @import("../agent.zig").Agent;

const Server = struct {
    config: ServerConfig,
    client: ?*Client = null,
    /// The offered names of its tools and the server's own names, in `names_arena`.
    names: std.ArrayList(Name) = .empty,
    names_arena: std.heap.ArenaAllocator,

    /// Why it last failed (to start, or during a call) and its stderr tail then, owned by the
    /// gpa; empty once it is ready again.
    failure: []u8 = &.{},
    failure_tail: []u8 = &.{},

    const Name = struct { offered: []const u8, mcp: []const u8 };

    fn setFailure(s: *Server, gpa: Allocator, why: []const u8, tail: []const u8) void {
        s.clearFailure(gpa);
        s.failure = gpa.dupe(u8, why) catch &.{};
        s.failure_tail = gpa.dupe(u8, tail) catch &.{};
    }

    fn clearFailure(s: *Server, gpa: Allocator) void {
        gpa.free(s.failure);
        gpa.free(s.failure_tail);
        s.failure = &.{};
        s.failure_tail = &.{};
    }

    fn mcpName(s: *const Server, offered: []const u8) ?[]const u8 {
        for (s.names.items) |n| if (std.mem.eql(u8, n.offered, offered)) return n.mcp;
        return null;
    }

    fn stop(s: *Server) void {
        if (s.client) |c| c.close();
        s.client = null;
    }
};

/// Where a server stands (`Servers.status`).
pub const State = enum(u8) {
    /// No turn has needed it yet.
    not_started = 0,
    /// Its handshake made and its tools listed.
    ready = 1,
    /// It could not start, or broke during a call: started again at the next turn.
    failed = 2,
    /// Its process exited while no request waited (a stdio server): started again at the
    /// next turn.
    closed = 3,
};

pub const Transport = enum(u8) { stdio = 0, http = 1 };

/// A server as `Servers.status` shows it; strings borrowed until the servers next change.
pub const Status = struct {
    name: []const u8,
    transport: Transport,
    state: State,
    /// From its `initialize` answer: the protocol version agreed, its `serverInfo`.
    protocol_version: []const u8 = "",
    server_name: []const u8 = "",
    server_version: []const u8 = "",
    /// The tools of it the agent offers (after the allow-list).
    tool_count: usize = 0,
    /// failed: why, as the turn or the call was told.
    error_message: []const u8 = "",
    /// failed, closed: what it wrote to stderr last (over HTTP: why its last exchange failed).
    stderr_tail: []const u8 = "",
};

/// What a call of an MCP tool gave: content owned by the gpa, and whether it is an error.
pub const Outcome = struct { content: content.Content, is_error: bool };

pub const Servers = struct {
    gpa: Allocator,
    list: []Server = &.{},
    /// Held while an HTTP server's request is opened on the agent's connections: a round
    /// calls its servers on threads of their own.
    http_lock: std.c.pthread_mutex_t = std.c.PTHREAD_MUTEX_INITIALIZER,

    /// `configs` must outlive the servers (the agent's config arena holds them).
    pub fn init(gpa: Allocator, configs: []const ServerConfig) Allocator.Error!Servers {
        const list = try gpa.alloc(Server, configs.len);
        for (configs, list) |c, *s| s.* = .{ .config = c, .names_arena = .init(gpa) };
        return .{ .gpa = gpa, .list = list };
    }

    /// Ends every server (its process group) and frees the list.
    pub fn deinit(s: *Servers) void {
        for (s.list) |*server| {
            server.stop();
            server.clearFailure(s.gpa);
            server.names_arena.deinit();
        }
        s.gpa.free(s.list);
        s.list = &.{};
    }

    pub const StartError = error{ McpServer, OutOfMemory };

    /// Starts the servers not running (never started, or ended by a failure: a server that
    /// died in a turn is started again for the next) and puts their tools in `registry`; a
    /// server whose tools changed (`notifications/tools/list_changed`) is listed again. A server
    /// that cannot start or list its tools: McpServer, its name and why in `diag`; the
    /// servers started before it keep running.
    pub fn ensureStarted(s: *Servers, agent: *Agent, registry: *tools.Set, log: *const log_mod.Sink, diag: *config_mod.Diagnostic) StartError!void {
        for (s.list, 0..) |*server, i| {
            if (server.client) |c| {
                try c.readPending(); // a list change sent between turns
                const gone = c.broken != null or c.conn.ended();
                if (!gone and !c.tools_changed) continue;
                if (gone) server.stop();
            }
            if (server.client == null and server.config.url != null) {
                var failure: client_mod.StartFailure = .{};
                server.client = Client.startHttp(s.gpa, agent, &s.http_lock, .{ .url = server.config.url.?, .headers = server.config.headers }, .{
                    .timeout_ms = server.config.timeout_ms,
                    .init_timeout_ms = server.config.init_timeout_ms,
                }, &failure) catch |err| return s.startFailed(server, err, failure.stderrTail(), diag);
            }
            if (server.client == null) {
                const argv = try s.gpa.alloc([]const u8, 1 + server.config.args.len);
                defer s.gpa.free(argv);
                argv[0] = server.config.command;
                @memcpy(argv[1..], server.config.args);
                var failure: client_mod.StartFailure = .{};
                server.client = Client.start(s.gpa, .{ .argv = argv, .env = server.config.env, .cwd = server.config.cwd, .log = log, .name = server.config.name }, .{
                    .timeout_ms = server.config.timeout_ms,
                    .init_timeout_ms = server.config.init_timeout_ms,
                }, &failure) catch |err| return s.startFailed(server, err, failure.stderrTail(), diag);
            }
            s.listInto(server, @intCast(i), registry, log) catch |err| switch (err) {
                error.OutOfMemory => return error.OutOfMemory,
                else => |e| {
                    const tail = server.client.?.stderrTail();
                    const why = s.startFailed(server, e, tail, diag);
                    server.stop();
                    return why;
                },
            };
            server.clearFailure(s.gpa);
        }
    }

    /// Where server `index` (of the config's, in name order) stands. A stdio server that
    /// exited since its last request is found so here (`closed`). Not while a turn runs.
    pub fn status(s: *Servers, index: usize) Status {
        const server = &s.list[index];
        var out: Status = .{
            .name = server.config.name,
            .transport = if (server.config.url != null) .http else .stdio,
            .state = .not_started,
            .error_message = server.failure,
            .stderr_tail = server.failure_tail,
        };
        if (server.failure.len > 0) out.state = .failed;
        const c = server.client orelse return out;
        out.protocol_version = c.protocol_version;
        out.server_name = c.server_name;
        out.server_version = c.server_version;
        out.tool_count = server.names.items.len;
        if (c.broken != null) {
            out.state = .failed;
        } else if (c.conn.ended()) {
            out.state = .closed;
            out.stderr_tail = c.stderrTail();
        } else out.state = .ready;
        return out;
    }

    /// A start that failed: why in `diag`, and kept for the server's status.
    fn startFailed(s: *Servers, server: *Server, err: anyerror, tail: ?[]const u8, diag: *config_mod.Diagnostic) StartError {
        if (err == error.OutOfMemory) return error.OutOfMemory;
        startFailedMessage(server, err, tail, diag);
        server.setFailure(s.gpa, diag.message(), tail orelse "");
        return error.McpServer;
    }

    /// Lists again, before a request of a turn under way, the running servers whose tools
    /// changed (a `notifications/tools/list_changed` came during a call), so that the request
    /// offers the new list. One that cannot be listed now loses its tools for the rest of the
    /// turn (logged) rather than failing it, and is listed again at the next turn.
    pub fn refreshChanged(s: *Servers, registry: *tools.Set, log: *const log_mod.Sink) Allocator.Error!void {
        for (s.list, 0..) |*server, i| {
            const c = server.client orelse continue;
            try c.readPending();
            if (c.broken != null or !c.tools_changed) continue;
            s.listInto(server, @intCast(i), registry, log) catch |err| switch (err) {
                error.OutOfMemory => return error.OutOfMemory,
                else => |e| {
                    log.print("MCP server \"{s}\": its tools could not be listed again ({s}): left out of this turn", .{ server.config.name, @errorName(e) });
                    c.tools_changed = true;
                },
            };
        }
    }

    /// Replaces the registry's tools of `server` (index `index`) with what it lists now.
    fn listInto(s: *Servers, server: *Server, index: u32, registry: *tools.Set, log: *const log_mod.Sink) client_mod.Error!void {
        for (server.names.items) |n| registry.remove(n.offered);
        server.names = .empty;
        _ = server.names_arena.reset(.free_all);
        const arena = server.names_arena.allocator();
        var scratch: std.heap.ArenaAllocator = .init(s.gpa);
        defer scratch.deinit();
        const listed = try server.client.?.listTools(scratch.allocator());
        for (listed) |t| {
            if (server.config.tools) |allowed| {
                for (allowed) |name| {
                    if (std.mem.eql(u8, name, t.name)) break;
                } else continue;
            }
            var buf: [tool_name.max_len]u8 = undefined;
            const offered = tool_name.make(&buf, server.config.name, t.name, registry);
            var diag: config_mod.Diagnostic = .{};
            // A schema panto cannot take (too deep, not an object) costs that tool, not the server.
            const schema_ok = t.input_schema_json.len > 0 and t.input_schema_json[0] == '{';
            if (!schema_ok) {
                log.print("MCP server \"{s}\": tool \"{s}\" left out: its inputSchema is not a JSON object", .{ server.config.name, t.name });
                continue;
            }
            registry.add(.{
                .name = offered,
                .description = t.description,
                .schema_json = t.input_schema_json,
                .schema = .null,
                .capabilities = server.config.requires,
                .mcp_server = index,
            }, &diag) catch |err| switch (err) {
                error.OutOfMemory => return error.OutOfMemory,
                error.InvalidConfig => {
                    log.print("MCP server \"{s}\": tool \"{s}\" left out: {s}", .{ server.config.name, t.name, diag.message() });
                    continue;
                },
            };
            try server.names.append(arena, .{ .offered = try arena.dupe(u8, offered), .mcp = try arena.dupe(u8, t.name) });
        }
    }

    /// Calls the tool offered as `offered` on server `index` with `input_json`. Whatever the
    /// server does, the call gets a result: a failure of the server is an error result that
    /// names it (the turn and its other tools go on). `cancel_fd` readable (the turn was
    /// canceled or closed, watchdog.zig) ends the wait: the server is told
    /// (`notifications/cancelled`) and the call answered as canceled. The call's progress
    /// notifications go to `progress`.
    pub fn call(s: *Servers, index: u32, offered: []const u8, input_json: []const u8, cancel_fd: std.c.fd_t, progress: ?client_mod.ProgressSink) Allocator.Error!Outcome {
        const server = &s.list[index];
        var scratch: std.heap.ArenaAllocator = .init(s.gpa);
        defer scratch.deinit();
        const a = scratch.allocator();
        const c = server.client orelse return failed(s.gpa, "MCP server \"{s}\" is not running", .{server.config.name});
        const mcp = server.mcpName(offered) orelse return failed(s.gpa, "MCP server \"{s}\" has no tool offered as {s}", .{ server.config.name, offered });
        c.conn.setCancelFd(cancel_fd);
        defer c.conn.setCancelFd(-1);
        const r = c.callTool(a, mcp, input_json, progress) catch |err| {
            const outcome = try s.callFailed(server, c, err);
            // A server that broke is ended: its status says why until it starts again.
            if (c.broken != null) server.setFailure(s.gpa, outcome.content.text, c.stderrTail());
            return outcome;
        };
        return .{ .content = try result.toContent(s.gpa, a, r), .is_error = r.is_error };
    }

    fn callFailed(s: *Servers, server: *const Server, c: *Client, err: client_mod.Error) Allocator.Error!Outcome {
        return switch (err) {
            error.OutOfMemory => error.OutOfMemory,
            error.Canceled => failed(s.gpa, canceled_message, .{}),
            error.ServerExited => failed(s.gpa, "MCP server \"{s}\" exited during the call{s}{s}", .{ server.config.name, if (lastLine(c.stderrTail()).len > 0) ": " else "", lastLine(c.stderrTail()) }),
            error.Timeout => failed(s.gpa, "MCP server \"{s}\" did not answer within {d} ms", .{ server.config.name, server.config.timeout_ms }),
            error.Garbage => failed(s.gpa, "MCP server \"{s}\" broke the protocol (a message that is not JSON-RPC) and was stopped", .{server.config.name}),
            error.LineTooLong => failed(s.gpa, "MCP server \"{s}\" sent a message over the size limit and was stopped", .{server.config.name}),
            error.ServerError => failed(s.gpa, "MCP server \"{s}\" refused the call: {s} (code {d})", .{ server.config.name, c.last_error.message, c.last_error.code }),
            error.UnsupportedVersion => failed(s.gpa, "MCP server \"{s}\" speaks an unsupported protocol version", .{server.config.name}),
            error.HttpFailed => failed(s.gpa, "MCP server \"{s}\" failed: {s}", .{ server.config.name, c.stderrTail() }),
        };
    }
};

/// As a turn's abort answers the calls it cuts short (stream.zig).
pub const canceled_message = "The turn was canceled before this tool call finished.";

fn failed(gpa: Allocator, comptime fmt: []const u8, args: anytype) Allocator.Error!Outcome {
    const text = try std.fmt.allocPrint(gpa, fmt, args);
    defer gpa.free(text);
    return .{ .content = try content.toolResult(gpa, text, &.{}), .is_error = true };
}

/// The last non-empty line of a server's stderr, for a message.
fn lastLine(tail: []const u8) []const u8 {
    const trimmed = std.mem.trimEnd(u8, tail, " \r\n\t");
    const start = if (std.mem.lastIndexOfScalar(u8, trimmed, '\n')) |i| i + 1 else 0;
    return trimmed[start..];
}

fn startFailedMessage(server: *const Server, err: anyerror, tail: ?[]const u8, diag: *config_mod.Diagnostic) void {
    const name = server.config.name;
    const why: []const u8 = switch (err) {
        error.Spawn => "its command could not be run",
        error.ServerExited => "it exited",
        error.Timeout => "it did not answer in time",
        error.Garbage => "it broke the protocol",
        error.LineTooLong => "it sent a message over the size limit",
        error.UnsupportedVersion => "it speaks an unsupported protocol version",
        error.ServerError => "it refused a request",
        error.HttpFailed => "its HTTP exchange failed",
        else => @errorName(err),
    };
    const line = lastLine(tail orelse "");
    _ = diag.fail("MCP server \"{s}\" could not start: {s}{s}{s}", .{ name, why, if (line.len > 0) ": " else "", line }) catch {};
}
