//! An MCP session with one server, over stdio or Streamable HTTP (connection.zig): the handshake (`initialize` with version
//! negotiation, then `notifications/initialized`), `tools/list` with pagination and
//! `tools/call`. Every request waits under a deadline; the server's own requests (ping) are
//! answered while waiting, and its notifications noted. A server that exits, writes garbage
//! or a line over the limit is ended at once (its process group killed): it cannot be trusted
//! with the next request, and every later request fails with the same typed error. A request
//! that times out is canceled (`notifications/cancelled`) and the server kept. Over HTTP, a
//! server that forgot the session (a 404) gets a new handshake, once per message.
const std = @import("std");
const Allocator = std.mem.Allocator;
const Value = std.json.Value;
const jsonrpc = @import("jsonrpc.zig");
const stdio = @import("stdio.zig");
const http = @import("http.zig");
const Connection = @import("connection.zig").Connection;

pub const Error = error{
    /// The server exited, crashed or closed its stdout (its stderr's tail: `stderrTail`).
    ServerExited,
    /// No answer before the request's deadline.
    Timeout,
    /// A line that is not JSON-RPC, or a reply that is not what MCP says.
    Garbage,
    /// A line longer than the limit (`max_line_bytes`).
    LineTooLong,
    /// The server answered `initialize` with a protocol version panto does not speak.
    UnsupportedVersion,
    /// A JSON-RPC error reply: its code and message are `last_error`.
    ServerError,
    /// The process's `cancel_fd` woke the wait: the request was canceled (the server told).
    Canceled,
    /// An HTTP exchange failed (a non-2xx answer, no connection, an answer neither JSON nor
    /// SSE): why is `stderrTail`.
    HttpFailed,
    OutOfMemory,
};

/// The protocol revisions this client speaks, newest first; the first is asked for.
pub const supported_versions = [_][]const u8{ "2025-11-25", "2025-06-18", "2025-03-26" };

pub const Options = struct {
    /// Each request's limit, from when it is sent.
    timeout_ms: u64 = 60_000,
    /// The handshake's (a server started through `npx` may fetch a package first).
    init_timeout_ms: u64 = 30_000,
    /// A call's absolute limit: each progress notification pushes its deadline `timeout_ms`
    /// further, never past this from when it was sent.
    max_call_ms: u64 = 600_000,
};

/// A `notifications/progress` of a call: `progress` grows; `total` when the server knows it.
pub const Progress = struct {
    progress: f64,
    total: ?f64,
    message: ?[]const u8,
};

/// Where a call's progress goes (called on the thread that waits for the call).
pub const ProgressSink = struct {
    context: *anyopaque,
    report: *const fn (context: *anyopaque, progress: Progress) void,
};

pub const Tool = struct {
    name: []const u8,
    title: ?[]const u8,
    description: []const u8,
    /// `inputSchema` as the server wrote it, compact JSON.
    input_schema_json: []const u8,
};

pub const Media = struct {
    /// Base64, as the server sent it.
    data: []const u8,
    mime_type: []const u8,
};

pub const Content = union(enum) {
    text: []const u8,
    image: Media,
    audio: Media,
    /// An embedded resource or a resource link: its URI, and its text when embedded as text.
    resource: struct { uri: []const u8, text: ?[]const u8, mime_type: ?[]const u8 },
    /// A part of a kind this client does not know, as compact JSON.
    other: []const u8,
};

pub const CallResult = struct {
    content: []Content,
    /// `structuredContent` as compact JSON, when the server sent one.
    structured_json: ?[]const u8,
    /// The tool failed (the server's `isError`): the content says why. Not a protocol error.
    is_error: bool,
};

pub const StartError = Error || stdio.SpawnError;

/// What a server that failed to start wrote to stderr last (its process is gone by then).
pub const StartFailure = struct {
    buf: [stdio.stderr_tail_bytes]u8 = undefined,
    len: usize = 0,

    pub fn stderrTail(f: *const StartFailure) []const u8 {
        return f.buf[0..f.len];
    }
};

pub const Client = struct {
    gpa: Allocator,
    conn: Connection,
    options: Options,
    next_id: u64 = 1,
    /// Strings of the handshake and of `last_error`.
    arena: std.heap.ArenaAllocator,
    protocol_version: []const u8 = "",
    server_name: []const u8 = "",
    server_version: []const u8 = "",
    /// The server said its tools can change (`capabilities.tools.listChanged`) ...
    tools_can_change: bool = false,
    /// ... and a `notifications/tools/list_changed` came since the last `listTools`.
    tools_changed: bool = false,
    /// The JSON-RPC error of the last request that failed with `ServerError`.
    last_error: jsonrpc.RpcError = .{ .code = 0, .message = "" },
    /// Once the server broke the protocol or ended, every request fails with this.
    broken: ?Error = null,
    /// A new handshake is under way (an HTTP session the server forgot).
    renewing: bool = false,

    /// Spawns the server and makes the handshake. On failure the server is ended, and what it
    /// wrote to stderr last is kept in `failure`, when given.
    pub fn start(gpa: Allocator, process_options: stdio.Options, options: Options, failure: ?*StartFailure) StartError!*Client {
        const process = try stdio.Process.spawn(gpa, process_options);
        errdefer {
            if (failure) |f| {
                const tail = process.stderrTail();
                @memcpy(f.buf[0..tail.len], tail);
                f.len = tail.len;
            }
            process.close();
        }
        const client = try gpa.create(Client);
        errdefer gpa.destroy(client);
        client.* = .{ .gpa = gpa, .conn = .{ .stdio = process }, .options = options, .arena = .init(gpa) };
        errdefer client.arena.deinit();
        try client.initialize();
        return client;
    }

    /// Opens a Streamable HTTP session with the server at `http_options.url`, on `agent`'s
    /// connections (`lock` held while one is opened), and makes the handshake. On failure,
    /// why is kept in `failure`, when given.
    pub fn startHttp(gpa: Allocator, agent: *@import("../agent.zig").Agent, lock: *std.c.pthread_mutex_t, http_options: http.Options, options: Options, failure: ?*StartFailure) Error!*Client {
        const session = try http.Session.open(gpa, agent, lock, http_options);
        errdefer {
            if (failure) |f| {
                const why = session.problemText();
                @memcpy(f.buf[0..why.len], why);
                f.len = why.len;
            }
            session.close();
        }
        const client = try gpa.create(Client);
        errdefer gpa.destroy(client);
        client.* = .{ .gpa = gpa, .conn = .{ .http = session }, .options = options, .arena = .init(gpa) };
        errdefer client.arena.deinit();
        try client.initialize();
        return client;
    }

    /// Ends the server (its process group, or its HTTP session) and frees the client.
    pub fn close(c: *Client) void {
        c.conn.close();
        c.arena.deinit();
        c.gpa.destroy(c);
    }

    /// What the server wrote to stderr last (over HTTP: why its last exchange failed), for an
    /// error message.
    pub fn stderrTail(c: *const Client) []const u8 {
        return c.conn.stderrTail();
    }

    fn initialize(c: *Client) Error!void {
        var scratch: std.heap.ArenaAllocator = .init(c.gpa);
        defer scratch.deinit();
        const params = "{\"protocolVersion\":\"" ++ supported_versions[0] ++
            "\",\"capabilities\":{},\"clientInfo\":{\"name\":\"panto\",\"version\":\"" ++ @import("../panto.zig").version ++ "\"}}";
        const result = try c.request(scratch.allocator(), "initialize", params, c.options.init_timeout_ms);
        if (result != .object) return c.fail(error.Garbage);
        const version = stringField(result, "protocolVersion") orelse return c.fail(error.Garbage);
        // A server that does not speak the version asked answers with another one (not an
        // error): the client must check it, and disconnect when it cannot speak it.
        for (supported_versions) |v| {
            if (std.mem.eql(u8, v, version)) break;
        } else return c.fail(error.UnsupportedVersion);
        const arena = c.arena.allocator();
        c.protocol_version = try arena.dupe(u8, version);
        // Over HTTP, every later request says the version (MCP-Protocol-Version).
        if (c.conn == .http) c.conn.http.protocol_version = c.protocol_version;
        if (result.object.get("serverInfo")) |info| {
            c.server_name = try arena.dupe(u8, stringField(info, "name") orelse "");
            c.server_version = try arena.dupe(u8, stringField(info, "version") orelse "");
        }
        if (result.object.get("capabilities")) |caps| if (caps == .object) if (caps.object.get("tools")) |t| {
            if (t == .object) if (t.object.get("listChanged")) |changed| {
                c.tools_can_change = changed == .bool and changed.bool;
            };
        };
        try c.notify("notifications/initialized", null);
        // Messages outside any request come on the GET stream (Streamable HTTP).
        if (c.conn == .http) c.conn.http.listen();
    }

    /// Every tool of the server, all pages of `tools/list`. Strings live in `arena`.
    pub fn listTools(c: *Client, arena: Allocator) Error![]Tool {
        c.tools_changed = false;
        var list: std.ArrayList(Tool) = .empty;
        var cursor: ?[]const u8 = null;
        // A server that hands out cursors forever is broken, not large.
        for (0..max_pages) |_| {
            var params: std.Io.Writer.Allocating = .init(arena);
            if (cursor) |cur| {
                params.writer.writeAll("{\"cursor\":") catch return error.OutOfMemory;
                std.json.Stringify.encodeJsonString(cur, .{}, &params.writer) catch return error.OutOfMemory;
                params.writer.writeAll("}") catch return error.OutOfMemory;
            }
            const result = try c.request(arena, "tools/list", if (cursor == null) null else params.written(), c.options.timeout_ms);
            if (result != .object) return c.fail(error.Garbage);
            const tools = result.object.get("tools") orelse return c.fail(error.Garbage);
            if (tools != .array) return c.fail(error.Garbage);
            for (tools.array.items) |t| {
                const name = stringField(t, "name") orelse return c.fail(error.Garbage);
                const schema = t.object.get("inputSchema") orelse return c.fail(error.Garbage);
                try list.append(arena, .{
                    .name = name,
                    .title = stringField(t, "title"),
                    .description = stringField(t, "description") orelse "",
                    .input_schema_json = try std.json.Stringify.valueAlloc(arena, schema, .{}),
                });
            }
            cursor = stringField(result, "nextCursor") orelse return list.toOwnedSlice(arena);
        }
        return c.fail(error.Garbage);
    }

    const max_pages = 1000;

    /// Calls the tool `name` with `arguments_json` (a JSON object). A tool that fails is a
    /// result with `is_error`; an error of the protocol or the server is an error.
    /// With `progress`, the call asks for progress (its id as `progressToken`) and each
    /// `notifications/progress` of it is reported there and pushes its deadline forward.
    pub fn callTool(c: *Client, arena: Allocator, name: []const u8, arguments_json: []const u8, progress: ?ProgressSink) Error!CallResult {
        const id = c.takeId();
        var params: std.Io.Writer.Allocating = .init(arena);
        const w = &params.writer;
        w.writeAll("{\"name\":") catch return error.OutOfMemory;
        std.json.Stringify.encodeJsonString(name, .{}, w) catch return error.OutOfMemory;
        w.print(",\"arguments\":{s}", .{arguments_json}) catch return error.OutOfMemory;
        if (progress != null) w.print(",\"_meta\":{{\"progressToken\":{d}}}", .{id}) catch return error.OutOfMemory;
        w.writeAll("}") catch return error.OutOfMemory;
        const result = try c.exchange(arena, id, "tools/call", params.written(), c.options.timeout_ms, progress);
        if (result != .object) return c.fail(error.Garbage);
        var parts: std.ArrayList(Content) = .empty;
        if (result.object.get("content")) |content| {
            if (content != .array) return c.fail(error.Garbage);
            for (content.array.items) |part| try parts.append(arena, try contentOf(arena, part) orelse return c.fail(error.Garbage));
        }
        const structured = if (result.object.get("structuredContent")) |s| try std.json.Stringify.valueAlloc(arena, s, .{}) else null;
        const is_error = if (result.object.get("isError")) |e| e == .bool and e.bool else false;
        return .{ .content = try parts.toOwnedSlice(arena), .structured_json = structured, .is_error = is_error };
    }

    /// Asks the server whether it is alive.
    pub fn ping(c: *Client) Error!void {
        var scratch: std.heap.ArenaAllocator = .init(c.gpa);
        defer scratch.deinit();
        _ = try c.request(scratch.allocator(), "ping", null, c.options.timeout_ms);
    }

    /// Sends a request and waits for its reply, answering the server's requests and noting its
    /// notifications meanwhile. The result lives in `arena`.
    fn request(c: *Client, arena: Allocator, method: []const u8, params_json: ?[]const u8, timeout_ms: u64) Error!Value {
        return c.exchange(arena, c.takeId(), method, params_json, timeout_ms, null);
    }

    fn takeId(c: *Client) u64 {
        defer c.next_id += 1;
        return c.next_id;
    }

    /// `request` under a given id; with `progress`, the request's own progress notifications
    /// are reported there and push the deadline forward (under `max_call_ms`).
    fn exchange(c: *Client, arena: Allocator, id: u64, method: []const u8, params_json: ?[]const u8, timeout_ms: u64, progress: ?ProgressSink) Error!Value {
        if (c.broken) |err| return err;
        var deadline = stdio.deadlineIn(timeout_ms);
        const cap = stdio.deadlineIn(@max(timeout_ms, c.options.max_call_ms));
        var line: std.Io.Writer.Allocating = .init(c.gpa);
        defer line.deinit();
        jsonrpc.writeRequest(&line.writer, id, method, params_json) catch return error.OutOfMemory;
        try c.send(line.written(), deadline);
        while (true) {
            const text = c.conn.readLine(deadline) catch |err| switch (err) {
                error.Timeout => {
                    c.cancel(id, "timed out");
                    return error.Timeout;
                },
                error.Canceled => {
                    c.cancel(id, "the turn was canceled");
                    return error.Canceled;
                },
                error.OutOfMemory => return error.OutOfMemory,
                error.SessionExpired => return c.fail(error.HttpFailed), // (only a write meets it)
                else => |e| return c.fail(e),
            };
            const message = jsonrpc.parse(arena, text) catch |err| switch (err) {
                error.OutOfMemory => return error.OutOfMemory,
                error.Garbage => return c.fail(error.Garbage),
            };
            switch (message) {
                // A reply to another id is a late one to a request given up on: dropped.
                .reply => |reply| if (reply.id == id) return switch (reply.outcome) {
                    .result => |result| result,
                    .err => |e| {
                        c.last_error = .{ .code = e.code, .message = try c.arena.allocator().dupe(u8, e.message) };
                        return error.ServerError;
                    },
                },
                .notification => |n| if (progress) |sink| {
                    if (progressOf(n, id)) |p| {
                        sink.report(sink.context, p);
                        deadline = @min(cap, @max(deadline, stdio.deadlineIn(timeout_ms)));
                    } else c.noted(n);
                } else c.noted(n),
                .request => |r| try c.answer(r, deadline),
            }
        }
    }

    /// Reads, without blocking, what a server sent while no request waited: a
    /// `tools/list_changed` it sent between turns is noted (and its ping answered) before the
    /// next request, not only at the next exchange. A late reply is dropped; a server that
    /// broke the protocol or ended is marked so (`broken`, `conn.ended`).
    pub fn readPending(c: *Client) Allocator.Error!void {
        if (c.broken != null) return;
        if (c.conn == .http) {
            // Over HTTP, what the GET stream's listener noted.
            if (c.conn.http.takeToolsChanged()) c.tools_changed = true;
            return;
        }
        var scratch: std.heap.ArenaAllocator = .init(c.gpa);
        defer scratch.deinit();
        while (true) {
            _ = scratch.reset(.retain_capacity);
            const ready = c.conn.stdio.hasInput() catch false;
            if (!ready) return;
            // (A line begun is waited for: the server is writing it now.)
            const text = c.conn.readLine(stdio.deadlineIn(c.options.timeout_ms)) catch |err| switch (err) {
                error.Timeout, error.ServerExited, error.Canceled => return, // nothing more now
                error.OutOfMemory => return error.OutOfMemory,
                error.LineTooLong => {
                    c.breakOff(error.LineTooLong);
                    return;
                },
                error.HttpFailed, error.SessionExpired => return, // (stdio: never)
            };
            const message = jsonrpc.parse(scratch.allocator(), text) catch |err| switch (err) {
                error.OutOfMemory => return error.OutOfMemory,
                error.Garbage => {
                    c.breakOff(error.Garbage);
                    return;
                },
            };
            switch (message) {
                .reply => {},
                .notification => |n| c.noted(n),
                .request => |r| c.answer(r, stdio.deadlineIn(c.options.timeout_ms)) catch |err| switch (err) {
                    error.OutOfMemory => return error.OutOfMemory,
                    else => return,
                },
            }
        }
    }

    fn noted(c: *Client, n: jsonrpc.Notification) void {
        if (std.mem.eql(u8, n.method, "notifications/tools/list_changed")) c.tools_changed = true;
        // Log messages and progress of nothing asked for: dropped.
    }

    /// The server's requests: ping is answered; panto offers nothing else (no sampling,
    /// roots or elicitation), so the rest get "method not found".
    fn answer(c: *Client, r: jsonrpc.Request, deadline: i64) Error!void {
        var line: std.Io.Writer.Allocating = .init(c.gpa);
        defer line.deinit();
        if (std.mem.eql(u8, r.method, "ping")) {
            jsonrpc.writeResult(&line.writer, r.id_json, "{}") catch return error.OutOfMemory;
        } else {
            jsonrpc.writeError(&line.writer, r.id_json, jsonrpc.method_not_found, "panto offers no such method") catch return error.OutOfMemory;
        }
        try c.send(line.written(), deadline);
    }

    fn notify(c: *Client, method: []const u8, params_json: ?[]const u8) Error!void {
        var line: std.Io.Writer.Allocating = .init(c.gpa);
        defer line.deinit();
        jsonrpc.writeNotification(&line.writer, method, params_json) catch return error.OutOfMemory;
        try c.send(line.written(), stdio.deadlineIn(c.options.timeout_ms));
    }

    /// Writes one line (jsonrpc's writers end it with its newline).
    fn send(c: *Client, line: []const u8, deadline: i64) Error!void {
        const message = std.mem.trimEnd(u8, line, "\n");
        c.conn.writeLine(message, deadline) catch |err| switch (err) {
            // A server that does not read its stdin before the deadline is hung.
            error.Timeout => return error.Timeout,
            error.Canceled => return error.Canceled,
            error.SessionExpired => {
                // The HTTP server forgot the session: a new handshake, then the message again.
                if (c.renewing) return c.fail(error.HttpFailed);
                try c.renew();
                return c.send(line, deadline);
            },
            error.OutOfMemory => return error.OutOfMemory,
            else => |e| return c.fail(e),
        };
    }

    /// A new handshake, for an HTTP session the server forgot (a restart, an idle limit).
    fn renew(c: *Client) Error!void {
        c.renewing = true;
        defer c.renewing = false;
        c.conn.http.protocol_version = null;
        try c.initialize();
    }

    /// Tells the server that request `id` is given up on; a server that cannot take even
    /// that is left to the next request to find out.
    fn cancel(c: *Client, id: u64, reason: []const u8) void {
        // Told even when the wait was ended by `cancel_fd`, which stays readable.
        const cancel_fd = c.conn.cancelFd();
        c.conn.setCancelFd(-1);
        defer c.conn.setCancelFd(cancel_fd);
        var buf: [128]u8 = undefined;
        const params = std.fmt.bufPrint(&buf, "{{\"requestId\":{d},\"reason\":\"{s}\"}}", .{ id, reason }) catch return;
        c.notify("notifications/cancelled", params) catch {};
    }

    /// Marks the server broken and ends it: every later request fails with `err`.
    fn fail(c: *Client, err: Error) Error {
        c.breakOff(err);
        return err;
    }

    fn breakOff(c: *Client, err: Error) void {
        c.broken = err;
        c.conn.kill();
    }
};

/// The progress notification `n` of request `id` (its progress token), if it is one.
fn progressOf(n: jsonrpc.Notification, id: u64) ?Progress {
    if (!std.mem.eql(u8, n.method, "notifications/progress")) return null;
    const params = n.params orelse return null;
    if (params != .object) return null;
    const token = params.object.get("progressToken") orelse return null;
    if (token != .integer or token.integer != id) return null;
    return .{
        .progress = numberField(params, "progress") orelse return null,
        .total = numberField(params, "total"),
        .message = stringField(params, "message"),
    };
}

fn numberField(v: Value, name: []const u8) ?f64 {
    return switch (v.object.get(name) orelse return null) {
        .integer => |i| @floatFromInt(i),
        .float => |f| f,
        else => null,
    };
}

fn stringField(v: Value, name: []const u8) ?[]const u8 {
    if (v != .object) return null;
    const f = v.object.get(name) orelse return null;
    return if (f == .string) f.string else null;
}

/// One part of a tool result; null when it is not a JSON object with a string `type`.
fn contentOf(arena: Allocator, part: Value) Allocator.Error!?Content {
    const kind = stringField(part, "type") orelse return null;
    if (std.mem.eql(u8, kind, "text")) return .{ .text = stringField(part, "text") orelse return null };
    if (std.mem.eql(u8, kind, "image") or std.mem.eql(u8, kind, "audio")) {
        const media: Media = .{
            .data = stringField(part, "data") orelse return null,
            .mime_type = stringField(part, "mimeType") orelse return null,
        };
        return if (kind[0] == 'i') .{ .image = media } else .{ .audio = media };
    }
    if (std.mem.eql(u8, kind, "resource")) {
        const r = part.object.get("resource") orelse return null;
        return .{ .resource = .{
            .uri = stringField(r, "uri") orelse return null,
            .text = stringField(r, "text"),
            .mime_type = stringField(r, "mimeType"),
        } };
    }
    if (std.mem.eql(u8, kind, "resource_link")) return .{ .resource = .{
        .uri = stringField(part, "uri") orelse return null,
        .text = null,
        .mime_type = stringField(part, "mimeType"),
    } };
    return .{ .other = try std.json.Stringify.valueAlloc(arena, part, .{}) };
}
