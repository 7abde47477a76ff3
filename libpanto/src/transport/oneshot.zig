//! A one-shot request on an agent's connections: a JSON body out, a JSON answer read whole
//! (Content-Length or chunked), under the agent's timeouts, with a non-2xx answer's body read
//! as the provider's error the way a streaming request's is (transport.zig). The agent's
//! parked connection is taken first and the answer's connection kept after, so a count
//! between two turns rides the turns' connection. Token counting sends it (token_count.zig),
//! and the model list its GETs (model_list.zig);
//! an MCP Streamable HTTP client's POSTs are the same shape (docs/design/mcp.md).
const std = @import("std");
const Allocator = std.mem.Allocator;
const Agent = @import("../agent.zig").Agent;
const errors = @import("../errors.zig");
const TurnError = errors.TurnError;
const providers = @import("../providers.zig");
const request_mod = @import("../request.zig");
const watchdog = @import("watchdog.zig");
const tunnel = @import("tunnel.zig");
const Link = @import("link.zig").Link;
const std_http = @import("std_http_internals.zig");
const network = @import("network.zig");
const transport = @import("transport.zig");
const deadlineAfter = transport.deadlineAfter;
const earliest = transport.earliest;
const unixNow = transport.unixNow;
const hostOf = transport.hostOf;

/// The most of an answer (or an error body) read, unless the request says more.
const default_max_answer = 1024 * 1024;

pub const Request = struct {
    /// POST, or GET (`body` then empty, and not sent).
    method: std.http.Method = .POST,
    url: []const u8,
    body: []const u8,
    /// The caller's headers (a provider's, the user's); accept and a signature are added.
    headers: *request_mod.Headers,
    /// Whose error bodies a non-2xx answer holds, and who signs the request; null: neither.
    provider: ?providers.Provider = null,
    /// The config's api_key, for a provider whose key is one of its signing credentials.
    api_key: ?[]const u8 = null,
    /// The most of the answer read (a larger one is a protocol error).
    max_answer: usize = default_max_answer,
    /// What the answer may be (an MCP server's: JSON or an SSE stream).
    accept: []const u8 = "application/json",
    /// A limit of the caller's own for the answer's head (CLOCK_MONOTONIC ns, an MCP
    /// request's), in place of timeouts.first_byte_ms and total_ms; 0: the agent's timeouts.
    deadline_ns: u64 = 0,
    /// Readable once the caller's turn is canceled (an eventfd): the wait for the answer's
    /// head ends with Canceled. -1: none.
    cancel_fd: std.c.fd_t = -1,
};

/// One exchange's connection while it is open.
const Exchange = struct {
    agent: *Agent,
    watch: watchdog.Watch = .{},
    link: Link = .{},
    got_head: bool = false,
    detail: *errors.Detail,

    /// Closes the connection: a request that failed leaves nothing worth keeping.
    fn close(x: *Exchange) void {
        x.link.close(&x.agent.keep_alive, &x.watch, .unread);
    }

    /// The answer was read to its end: the connection is the agent's for its next request.
    fn park(x: *Exchange) void {
        x.link.park(&x.agent.keep_alive, &x.watch, x.agent.config.keep_alive.idle_ms);
    }
};

/// Sends `req` and returns the answer's body (in `arena`) when its status is 2xx. A failure
/// is the typed error a turn's request would fail with, its detail in `detail`.
pub fn send(agent: *Agent, arena: Allocator, req: Request, detail: *errors.Detail) TurnError![]const u8 {
    var answer: Answer = undefined;
    try open(&answer, agent, arena, req, detail);
    defer answer.end();
    const x = &answer.x;
    const error_type_header = if (req.provider) |p| providers.errorTypeHeader(p) else null;
    var error_type: ?[]const u8 = null;
    if (error_type_header) |name| if (answer.header(name)) |value| {
        error_type = try arena.dupe(u8, value);
    };
    var buffer: [8192]u8 = undefined;
    const reader = answer.response.reader(&buffer);
    const body = reader.allocRemaining(arena, .limited(req.max_answer)) catch |err| return answer.readFailure(err);
    // A socket the watchdog shut down may read as the body's end: the answer is cut short.
    if (timedOut(x)) |e| return e;
    if (answer.status < 200 or answer.status > 299) return httpFailure(x, req, arena, answer.status, body, error_type);
    x.park();
    return body;
}

/// An answer whose head was read, its body left to the caller (an MCP server's SSE stream is
/// read message by message). Pinned: the watchdog and the response point into it.
pub const Answer = struct {
    x: Exchange,
    response: std.http.Client.Response,
    status: u16,

    /// A header of the answer's head; valid until the body is read.
    pub fn header(a: *Answer, name: []const u8) ?[]const u8 {
        var it = a.response.head.iterateHeaders();
        while (it.next()) |h| if (std.ascii.eqlIgnoreCase(h.name, name)) return h.value;
        return null;
    }

    /// The socket the answer comes on, for a wait on it (poll).
    pub fn socket(a: *const Answer) std.c.fd_t {
        return a.x.watch.fd;
    }

    /// Whether the connection holds bytes received and not yet read (then a read does not
    /// wait on the socket).
    pub fn holdsBytes(a: *const Answer) bool {
        const request = &a.x.link.request;
        if (std_http.heldBytes(request) > 0) return true;
        const connection = request.connection orelse return false;
        return connection.stream_reader.interface.bufferedLen() > 0;
    }

    /// Moves the limit of the reads to come (CLOCK_MONOTONIC ns).
    pub fn setDeadline(a: *Answer, deadline_ns: u64) void {
        watchdog.arm(&a.x.watch, deadline_ns, 0);
    }

    /// Whether the watchdog ended a read (a deadline passed).
    pub fn timedOut(a: *Answer) bool {
        return a.x.watch.fired.load(.acquire) == .timeout;
    }

    /// The body was read to its end: the connection is kept for the agent's next request.
    pub fn park(a: *Answer) void {
        a.x.park();
    }

    /// Ends the exchange: a connection not parked is closed.
    pub fn end(a: *Answer) void {
        a.x.close();
        watchdog.arm(&a.x.watch, 0, 0);
        watchdog.forget(&a.x.watch);
    }

    fn readFailure(a: *Answer, err: anyerror) TurnError {
        return readFailureOf(&a.x, &a.response, err);
    }
};

/// Sends `req` and reads the answer's head, whatever its status, into `answer`; the caller
/// reads the body and calls `answer.end()`. A failure is the typed error a turn's request
/// would fail with, its detail in `detail`, and leaves nothing to end.
pub fn open(answer: *Answer, agent: *Agent, arena: Allocator, req: Request, detail: *errors.Detail) TurnError!void {
    const gpa = agent.gpa;
    detail.clearResponse(gpa);
    const uri = std.Uri.parse(req.url) catch {
        detail.set(gpa, 0, "connection_error", "the base_url does not make a valid URL");
        return error.Connection;
    };
    try req.headers.add("accept", req.accept);
    try sign(req, uri, detail);
    const log = &agent.log;
    if (log.on()) {
        log.print("{s} {s}", .{ @tagName(req.method), req.url });
        log.body(gpa, req.body);
    }

    answer.* = .{ .x = .{ .agent = agent, .detail = detail }, .response = undefined, .status = 0 };
    const x = &answer.x;
    errdefer watchdog.forget(&x.watch);
    errdefer watchdog.arm(&x.watch, 0, 0);
    const timeouts = agent.config.timeouts;
    const total_deadline = if (req.deadline_ns != 0) req.deadline_ns else deadlineAfter(watchdog.nowNs(), timeouts.total_ms);
    const connect_deadline = deadlineAfter(watchdog.nowNs(), timeouts.connect_ms);
    watchdog.arm(&x.watch, earliest(connect_deadline, total_deadline), 0);

    var problem: [256]u8 = @splat(0);
    const route = network.Settings.apply(&agent.network, &agent.http, uri, &problem) catch |err| switch (err) {
        error.OutOfMemory => return error.OutOfMemory,
        error.BadProxy, error.BadCaFile => {
            detail.set(gpa, 0, "connection_error", std.mem.sliceTo(&problem, 0));
            return error.Connection;
        },
    };
    const idle_ms = agent.config.keep_alive.idle_ms;
    const options: std.http.Client.RequestOptions = .{
        .redirect_behavior = .unhandled,
        .keep_alive = idle_ms > 0,
        .headers = .{
            .content_type = .{ .override = "application/json" },
            .accept_encoding = .{ .override = "identity" },
            .user_agent = .{ .override = req.headers.user_agent },
            .authorization = req.headers.authorization,
        },
        .extra_headers = req.headers.items(),
    };
    agent.dialer.resolv_conf = agent.network.resolvConf();
    agent.dialer.begin(&x.watch, connect_deadline);
    defer agent.dialer.end();
    var host_buf: [std.Io.net.HostName.max_len]u8 = undefined;
    const tunnel_key: ?tunnel.Key = switch (route) {
        .std_http => null,
        .tunnel => |proxy| .{
            .proxy = proxy,
            .host = (uri.getHost(&host_buf) catch return failure(x, req.url, error.UriMissingHost)).bytes,
            .port = uri.port orelse 443,
        },
    };
    const kept = agent.keep_alive.reclaim(&agent.http, &x.watch, idle_ms, tunnel_key);
    errdefer x.close();
    const reused = try connect(x, req, uri, options, tunnel_key, kept);
    const first_byte = if (req.deadline_ns != 0) total_deadline else earliest(deadlineAfter(watchdog.nowNs(), timeouts.first_byte_ms), total_deadline);
    watchdog.arm(&x.watch, first_byte, 0);
    answer.response = exchange(x, arena, req, first_byte) catch |err| again: {
        // A kept-alive connection the server closed while it was idle: once more, anew.
        if (!reused or !x.link.nothingReceived(&x.watch, err)) return failure(x, req.url, x.link.causeOf(err));
        x.close();
        agent.keep_alive.closeIdle(&agent.http, .server_closed);
        agent.dialer.begin(&x.watch, deadlineAfter(watchdog.nowNs(), timeouts.connect_ms));
        watchdog.arm(&x.watch, earliest(deadlineAfter(watchdog.nowNs(), timeouts.connect_ms), total_deadline), 0);
        _ = try connect(x, req, uri, options, tunnel_key, null);
        const again_first_byte = if (req.deadline_ns != 0) total_deadline else earliest(deadlineAfter(watchdog.nowNs(), timeouts.first_byte_ms), total_deadline);
        watchdog.arm(&x.watch, again_first_byte, 0);
        break :again exchange(x, arena, req, again_first_byte) catch |e| return failure(x, req.url, x.link.causeOf(e));
    };
    x.got_head = true;
    // The answer is read whole, within idle_ms (and the total).
    const read_deadline = if (req.deadline_ns != 0) total_deadline else earliest(deadlineAfter(watchdog.nowNs(), timeouts.idle_ms), total_deadline);
    watchdog.arm(&x.watch, read_deadline, 0);

    var it = answer.response.head.iterateHeaders();
    while (it.next()) |h| {
        if (errors.Detail.ofInterest(h.name)) detail.addHeader(gpa, h.name, h.value);
        if (std.ascii.eqlIgnoreCase(h.name, "request-id") or std.ascii.eqlIgnoreCase(h.name, "x-request-id") or std.ascii.eqlIgnoreCase(h.name, "x-amzn-requestid"))
            detail.setRequestId(gpa, h.value);
    }
    answer.status = @intFromEnum(answer.response.head.status);
    if (log.on()) log.print("{s} {s}: HTTP {d}", .{ @tagName(req.method), req.url, answer.status });
}

/// The provider's signature over the request as it goes out, for a provider that signs.
fn sign(req: Request, uri: std.Uri, detail: *errors.Detail) TurnError!void {
    const provider = req.provider orelse return;
    if (!providers.signs(provider)) return;
    var host_buf: [std.Io.net.HostName.max_len + 8]u8 = undefined;
    var host_w: std.Io.Writer = .fixed(&host_buf);
    uri.writeToStream(&host_w, .{ .authority = true }) catch return error.OutOfMemory;
    var path_buf: std.Io.Writer.Allocating = .init(req.headers.gpa);
    defer path_buf.deinit();
    uri.writeToStream(&path_buf.writer, .{ .path = true }) catch return error.OutOfMemory;
    providers.signRequest(provider, req.headers, .{
        .method = @tagName(req.method),
        .host = std.mem.trimStart(u8, host_w.buffered(), "/"),
        .path = path_buf.written(),
        .body = req.body,
        .now = unixNow(),
        .detail = detail,
        .api_key = req.api_key,
    }) catch |err| return err;
}

/// Opens the connection, or takes a kept-alive one (Link.connect). True when it was reused.
fn connect(x: *Exchange, req: Request, uri: std.Uri, options: std.http.Client.RequestOptions, tunnel_key: ?tunnel.Key, kept: ?*tunnel.Tunnel) TurnError!bool {
    var problem: tunnel.Problem = .{};
    return x.link.connect(x.agent, &x.watch, req.method, uri, options, tunnel_key, kept, &problem) catch |err| switch (err) {
        error.TunnelFailed => {
            x.detail.set(x.agent.gpa, 0, "connection_error", problem.message());
            return error.Connection;
        },
        else => failure(x, req.url, err),
    };
}

/// Writes the request and reads the answer's head. The body is sent from a copy: sending
/// uses it as the write buffer, which a failed send leaves shifted.
fn exchange(x: *Exchange, arena: Allocator, req: Request, deadline_ns: u64) anyerror!std.http.Client.Response {
    try x.link.sendBody(try arena.dupe(u8, req.body));
    try awaitHead(x, req.cancel_fd, deadline_ns);
    return x.link.receiveHead();
}

/// With a `cancel_fd`, waits for the answer's first bytes or the cancel (the deadline is the
/// watchdog's, which shuts the socket down: readable then too).
fn awaitHead(x: *Exchange, cancel_fd: std.c.fd_t, deadline_ns: u64) error{Canceled}!void {
    if (cancel_fd < 0 or x.watch.fd < 0) return;
    var fds = [_]std.c.pollfd{
        .{ .fd = x.watch.fd, .events = std.c.POLL.IN, .revents = 0 },
        .{ .fd = cancel_fd, .events = std.c.POLL.IN, .revents = 0 },
    };
    while (true) {
        const now = watchdog.nowNs();
        const wait_ms: c_int = if (deadline_ns == 0) -1 else if (deadline_ns <= now) 0 else @intCast(@min((deadline_ns - now) / std.time.ns_per_ms + 1, std.math.maxInt(c_int)));
        const n = std.c.poll(&fds, fds.len, wait_ms);
        if (n < 0) continue; // (EINTR)
        if (fds[1].revents != 0) return error.Canceled;
        return; // readable, or the deadline: the read that follows says which
    }
}

/// A failure before the answer's head: a timeout if the watchdog ended it, else the
/// connection's.
fn failure(x: *Exchange, url: []const u8, err: anyerror) TurnError {
    if (err == error.OutOfMemory) return error.OutOfMemory;
    if (err == error.Canceled) {
        x.detail.set(x.agent.gpa, 0, "canceled", "the request was canceled");
        return error.Canceled;
    }
    if (timedOut(x)) |e| return e;
    var msg_buf: [160]u8 = undefined;
    const msg = std.fmt.bufPrint(&msg_buf, "could not reach {s}: {s}", .{ hostOf(url), @errorName(err) }) catch @errorName(err);
    x.detail.set(x.agent.gpa, 0, "connection_error", msg);
    return error.Connection;
}

fn timedOut(x: *Exchange) ?TurnError {
    if (x.watch.fired.load(.acquire) != .timeout) return null;
    const msg = if (!x.link.connected) "no connection to the provider within timeouts.connect_ms" else if (!x.got_head) "no answer from the provider within timeouts.first_byte_ms (or timeouts.total_ms)" else "the answer was not read within timeouts.idle_ms (or timeouts.total_ms)";
    x.detail.set(x.agent.gpa, 0, "timeout_error", msg);
    return error.Timeout;
}

fn readFailureOf(x: *Exchange, response: *std.http.Client.Response, err: anyerror) TurnError {
    if (err == error.OutOfMemory) return error.OutOfMemory;
    if (timedOut(x)) |e| return e;
    const gpa = x.agent.gpa;
    if (err == error.StreamTooLong) {
        x.detail.set(gpa, 0, "protocol_error", "the answer is larger than the limit");
        return error.Protocol;
    }
    if (response.bodyErr()) |body_err| {
        x.detail.set(gpa, 0, "protocol_error", switch (body_err) {
            error.HttpChunkTruncated => "the chunked body was cut short",
            error.HttpChunkInvalid => "the chunked body is malformed",
            error.HttpHeadersOversize => "the chunk trailers are too large",
        });
        return error.Protocol;
    }
    var msg_buf: [128]u8 = undefined;
    const read_error = x.link.readError();
    const msg = std.fmt.bufPrint(&msg_buf, "the connection failed while reading the answer: {s}", .{@errorName(read_error orelse err)}) catch "the connection failed while reading the answer";
    x.detail.set(gpa, 0, "connection_error", msg);
    return error.Connection;
}

fn httpFailure(x: *Exchange, req: Request, arena: Allocator, status: u16, body: []const u8, error_type: ?[]const u8) TurnError {
    const gpa = x.agent.gpa;
    x.park(); // (read to its end: the connection stays good)
    if (req.provider) |p| if (providers.parseErrorBody(p, arena, body, error_type)) |e| {
        x.detail.set(gpa, status, e.type, e.message);
        if (e.request_id) |id| if (x.detail.request_id.items.len == 0) x.detail.setRequestId(gpa, id);
        return e.kind orelse errors.fromHttpStatus(status);
    };
    var msg_buf: [96]u8 = undefined;
    const msg = std.fmt.bufPrint(&msg_buf, "HTTP {d} without a provider error body", .{status}) catch "HTTP error";
    x.detail.set(gpa, status, "", msg);
    return errors.fromHttpStatus(status);
}
