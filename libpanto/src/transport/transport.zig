//! The transport of a stream's provider requests: the URL and headers, connecting (TCP, a
//! proxy's tunnel, TLS) or taking a kept-alive connection, sending the request once more when
//! a kept-alive connection turns out closed, the response head (status, content type, request
//! id, retry headers), a non-2xx answer's error body, and closing or parking the connection
//! when the message is done. What each failure means goes into the stream's `detail`.
//!
//! Its functions take the stream (they use its connection fields, watch, deadlines and
//! detail) and are the stream's methods by name (`s.open()`, see Stream): the turn's logic in
//! stream.zig reads as "open, read, close" and never touches std.http. What panto reads of
//! std.http's internal state is in std_http_internals.zig.
const std = @import("std");
const Allocator = std.mem.Allocator;
const Stream = @import("../stream.zig").Stream;
const errors = @import("../errors.zig");
const TurnError = errors.TurnError;
const providers = @import("../providers.zig");
const RequestHeaders = @import("../request.zig").Headers;
const Purpose = @import("../request.zig").Purpose;
const watchdog = @import("watchdog.zig");
const retry = @import("../retry.zig");
const tunnel = @import("tunnel.zig");
const Reason = @import("connection_log.zig").Reason;
const network = @import("network.zig");
const std_http = @import("std_http_internals.zig");
const abilities = @import("../catalog/abilities.zig");
const catalog = @import("../catalog/catalog.zig");
const Config = @import("../config.zig").Config;

/// The most of an error body read for its message.
const max_error_body = 64 * 1024;

/// Closes the request's connection, for `reason` (for the debug log; a cancel or timeout
/// that fired says so instead).
pub fn closeConnection(s: *Stream, reason: Reason) void {
    // Nothing to watch until the next request, even when no connection was made: a
    // deadline left armed would fire during a retry's wait and fail the next attempt.
    watchdog.arm(&s.watch, 0, 0);
    defer s.body.release();
    if (!s.link.connected) return;
    const k = &s.agent.keep_alive;
    s.link.close(k, &s.watch, if (k.log.on) closeReason(s, reason) else reason);
}

/// Why the connection is closed, for the debug log: a cancel or timeout that fired says
/// so, else `reason`.
fn closeReason(s: *const Stream, reason: Reason) Reason {
    if (s.watch.canceled.load(.acquire)) return .canceled;
    return switch (s.watch.fired.load(.acquire)) {
        .timeout => .timed_out,
        .canceled => .canceled,
        .none => reason,
    };
}

/// The message ended: its connection is kept for the agent's next request, which reads
/// the rest of the body first (see keep_alive.zig).
pub fn parkConnection(s: *Stream) void {
    if (!s.link.connected) return closeConnection(s, .unread);
    watchdog.arm(&s.watch, 0, 0);
    s.link.park(&s.agent.keep_alive, &s.watch, s.agent.config.keep_alive.idle_ms);
    s.body.release(); // the parked body reader has no buffer (see KeepAlive.park)
}

/// Sends the request and reads the response head. A non-2xx answer becomes the typed
/// error its status means, with the provider's error type and message.
pub fn open(s: *Stream) TurnError!void {
    const agent = s.agent;
    const gpa = agent.gpa;
    const config = s.config;
    // Not inlined, nor are writeRequestBody, the headers, signRequest and `network.apply`
    // below: inlined, their frames stayed under the connect, the request's write and the
    // head's read, the deepest calls of a turn, in the stack of every thread that runs a
    // stream, and of every stepped stream while it waits for its answer (open's frame: 9.7 KB,
    // then 4.6 KB; 20.4 KB once Bedrock's credential files were read under signRequest, and
    // probed, so resident, page by page).
    try @call(.never_inline, checkRequest, .{s});

    writeUrl(gpa, &s.url, config.base_url.?, config.provider, config.model, .turn) catch return error.OutOfMemory;
    const uri = std.Uri.parse(s.url.items) catch {
        s.detail.set(gpa, 0, "connection_error", "the base_url does not make a valid URL");
        return error.Connection;
    };
    try @call(.never_inline, writeRequestBody, .{s});
    const log = &agent.log;
    if (log.on()) {
        log.print("POST {s}", .{s.url.items});
        log.body(gpa, s.request_body.written());
    }
    const sent_ns = watchdog.nowNs();

    var headers: RequestHeaders = .{ .list = &s.header_list, .auth_buffer = &s.auth_header, .beta_buffer = &s.beta_header, .gpa = gpa };
    headers.list.clearRetainingCapacity();
    headers.beta_buffer.clearRetainingCapacity();
    try @call(.never_inline, addHeaders, .{ s, &headers });
    try @call(.never_inline, signRequest, .{ s, &headers, uri });

    const timeouts = config.timeouts;
    const now = watchdog.nowNs();
    if (s.turn_deadline_ns == 0 and timeouts.total_ms > 0) s.turn_deadline_ns = now + timeouts.total_ms * std.time.ns_per_ms;
    // A user turn's wall budget (not a compaction's asked for), from its first request.
    if (s.wall_deadline_ns == 0 and s.user_turn_appended != null) {
        if (config.budget.wall_ms) |ms| s.wall_deadline_ns = now + ms * std.time.ns_per_ms;
    }
    // Connecting (TCP, a proxy's tunnel, TLS) has connect_ms; then the answer has
    // first_byte_ms from the moment the request goes out. The turn's deadline bounds both.
    const connect_deadline = deadlineAfter(now, timeouts.connect_ms);
    watchdog.arm(&s.watch, earliest(connect_deadline, s.hardDeadline()), 0);

    var problem: [256]u8 = @splat(0);
    const route = @call(.never_inline, network.Settings.apply, .{ &agent.network, &agent.http, uri, &problem }) catch |err| switch (err) {
        error.OutOfMemory => return error.OutOfMemory,
        error.BadProxy, error.BadCaFile => {
            s.detail.set(gpa, 0, "connection_error", std.mem.sliceTo(&problem, 0));
            return error.Connection;
        },
    };
    const idle_ms = config.keep_alive.idle_ms;
    const options: std.http.Client.RequestOptions = .{
        .redirect_behavior = .unhandled,
        // keep_alive.idle_ms 0: the server is told the connection ends with the response.
        .keep_alive = idle_ms > 0,
        .headers = .{
            .content_type = .{ .override = "application/json" },
            .accept_encoding = .{ .override = "identity" },
            .user_agent = .{ .override = headers.user_agent },
            .authorization = headers.authorization,
        },
        .extra_headers = headers.items(),
    };
    // The sockets opened from here are bounded by connect_ms and watched (dial.zig), and
    // so are the name lookups (resolve.zig).
    agent.dialer.resolv_conf = agent.network.resolvConf();
    agent.dialer.begin(&s.watch, connect_deadline);
    defer agent.dialer.end();
    var host_buf: [std.Io.net.HostName.max_len]u8 = undefined;
    const tunnel_key: ?tunnel.Key = switch (route) {
        .std_http => null,
        .tunnel => |proxy| .{
            .proxy = proxy,
            .host = (uri.getHost(&host_buf) catch return connectFailure(s, error.UriMissingHost)).bytes,
            .port = uri.port orelse 443,
        },
    };
    const kept = agent.keep_alive.reclaim(&agent.http, &s.watch, idle_ms, tunnel_key);
    const reused = try connect(s, uri, options, tunnel_key, kept);
    watchdog.arm(&s.watch, earliest(deadlineAfter(watchdog.nowNs(), timeouts.first_byte_ms), s.hardDeadline()), 0);
    s.response = exchange(s) catch |err| retry: {
        if (!reused or !s.link.nothingReceived(&s.watch, err)) return connectFailure(s, s.link.causeOf(err));
        // The server closed the kept-alive connection while it was idle: send the
        // request again, once, on a new connection, as if nothing happened. The body
        // again too: sending it uses it as the write buffer, which a failed send leaves
        // shifted (what was written is gone from its start).
        closeConnection(s, .server_closed);
        try writeRequestBody(s);
        agent.keep_alive.closeIdle(&agent.http, .server_closed);
        agent.dialer.begin(&s.watch, deadlineAfter(watchdog.nowNs(), timeouts.connect_ms));
        watchdog.arm(&s.watch, earliest(deadlineAfter(watchdog.nowNs(), timeouts.connect_ms), s.hardDeadline()), 0);
        _ = try connect(s, uri, options, tunnel_key, null);
        watchdog.arm(&s.watch, earliest(deadlineAfter(watchdog.nowNs(), timeouts.first_byte_ms), s.hardDeadline()), 0);
        break :retry exchange(s) catch |e| return connectFailure(s, s.link.causeOf(e));
    };

    s.got_head = true;
    if (log.on()) log.print("POST {s}: HTTP {d} after {d} ms", .{ s.url.items, @intFromEnum(s.response.head.status), (watchdog.nowNs() - sent_ns) / std.time.ns_per_ms });
    watchdog.arm(&s.watch, s.hardDeadline(), timeouts.idle_ms * std.time.ns_per_ms);
    return readHead(s);
}

/// What fails a request before it is sent: no API key for the provider's public endpoint
/// (a custom base_url may go without one), a named tool_choice whose tool the agent may
/// not use, and a hosted tool named like one of the agent's. All are the caller's to fix
/// (set_config, then reopen).
/// Whether the turn's cost can be counted: the model's input and output prices are known
/// (the catalog's, or the config's model_info).
fn pricesKnown(config: Config) bool {
    const m = catalog.resolve(@tagName(config.provider), config.model, config.model_info) orelse return false;
    return m.price.input != null and m.price.output != null;
}

fn checkRequest(s: *Stream) TurnError!void {
    const gpa = s.agent.gpa;
    const config = s.config;
    var key_buf: [128]u8 = undefined;
    if (missingKey(config, &key_buf)) |msg| {
        s.detail.set(gpa, 0, "authentication_error", msg);
        return error.Authentication;
    }
    const parts = s.requestParts();
    if (s.phase != .summary) {
        var buf: [320]u8 = undefined;
        if (abilities.refusal(config, parts.conversation.messages.items, &buf)) |msg| {
            s.detail.set(gpa, 0, "config_error", msg);
            return error.Config;
        }
    }
    if (config.budget.cost_usd != null and !pricesKnown(config)) {
        var buf: [320]u8 = undefined;
        const msg = std.fmt.bufPrint(&buf, "budget.cost_usd needs the prices of {s} model \"{s}\", which the model catalog does not give: set them in the config's model_info, or lift the budget", .{ @tagName(config.provider), config.model }) catch "budget.cost_usd needs the model's prices";
        s.detail.set(gpa, 0, "config_error", msg);
        return error.Config;
    }
    if (config.request.tool_choice) |choice| if (choice == .tool and s.phase != .summary) {
        // A hosted tool (server_tools) may be named too.
        const hosted = for (config.request.server_tools) |t| {
            if (std.mem.eql(u8, t.name, choice.tool)) break true;
        } else false;
        const usable = hosted or for (parts.tools) |t| {
            if (std.mem.eql(u8, t.name, choice.tool) and t.allowedWith(parts.granted)) break true;
        } else false;
        if (!usable) {
            var buf: [256]u8 = undefined;
            const msg = std.fmt.bufPrint(&buf, "tool_choice names the tool \"{s}\", which this agent may not use (no such tool, or a capability it was not granted)", .{choice.tool}) catch "tool_choice names a tool this agent may not use";
            s.detail.set(gpa, 0, "config_error", msg);
            return error.Config;
        }
    };
    // A hosted tool named like a tool of the agent's that the request offers: the API refuses
    // the request (tool names are unique), and a call by that name could not be told apart.
    if (s.phase != .summary) for (config.request.server_tools) |hosted| if (hosted.name.len > 0) for (parts.tools) |t| {
        if (!std.mem.eql(u8, t.name, hosted.name) or !t.allowedWith(parts.granted)) continue;
        var buf: [256]u8 = undefined;
        const msg = std.fmt.bufPrint(&buf, "server_tools has a tool named \"{s}\", like one of the agent's tools: rename one of them", .{t.name}) catch "server_tools has a tool named like one of the agent's tools";
        s.detail.set(gpa, 0, "config_error", msg);
        return error.Config;
    };
}

/// The message of a request that needs an API key and has none (the provider's public
/// endpoint, a provider that does not sign), or null.
pub fn missingKey(config: @import("../config.zig").Config, buf: []u8) ?[]const u8 {
    if (config.api_key != null or providers.signs(config.provider) or !std.mem.eql(u8, config.base_url.?, providers.defaultBaseUrl(config.provider))) return null;
    return std.fmt.bufPrint(buf, "no API key: set {s} (or the config key api_key)", .{providers.apiKeyChoices(config.provider)}) catch "no API key";
}

/// The response head: its request id and retry headers noted, then a non-2xx status (with
/// the provider's error body) or a content type other than SSE fails the request; else the
/// body is read from here on.
fn readHead(s: *Stream) TurnError!void {
    const gpa = s.agent.gpa;
    const head = s.response.head;
    const error_type_header = providers.errorTypeHeader(s.config.provider);
    var error_type: ?[]const u8 = null; // (copied: reading the body reuses the head's buffer)
    var it = head.iterateHeaders();
    while (it.next()) |h| {
        if (errors.Detail.ofInterest(h.name)) s.detail.addHeader(gpa, h.name, h.value);
        if (error_type_header) |name| if (error_type == null and std.ascii.eqlIgnoreCase(h.name, name)) {
            error_type = s.event_allocator.dupe(u8, h.value) catch return error.OutOfMemory;
        };
        if (std.ascii.eqlIgnoreCase(h.name, "request-id") or std.ascii.eqlIgnoreCase(h.name, "x-request-id") or std.ascii.eqlIgnoreCase(h.name, "x-amzn-requestid")) {
            s.detail.setRequestId(gpa, h.value);
        } else if (std.ascii.eqlIgnoreCase(h.name, "retry-after-ms")) {
            if (retry.parseRetryAfterMs(h.value)) |ms| s.retry_after_ms = ms;
        } else if (std.ascii.eqlIgnoreCase(h.name, "retry-after")) {
            if (s.retry_after_ms == null) s.retry_after_ms = retry.parseRetryAfter(h.value, unixNow());
        } else if (std.ascii.eqlIgnoreCase(h.name, "x-should-retry")) {
            if (std.ascii.eqlIgnoreCase(h.value, "true")) s.should_retry = true;
            if (std.ascii.eqlIgnoreCase(h.value, "false")) s.should_retry = false;
        }
    }
    if (s.retry_after_ms) |ms| s.detail.retry_after = @as(f64, @floatFromInt(ms)) / 1000;
    const status: u16 = @intFromEnum(head.status);
    const content_type = head.content_type orelse "";
    if (status < 200 or status > 299) return httpFailure(s, status, error_type);
    const accept = providers.accept(s.config.provider);
    if (!std.ascii.startsWithIgnoreCase(content_type, accept)) {
        var msg_buf: [200]u8 = undefined;
        const msg = std.fmt.bufPrint(&msg_buf, "expected a {s} answer, got \"{s}\"", .{ accept, content_type[0..@min(content_type.len, 80)] }) catch "expected another content type";
        s.detail.set(gpa, status, "protocol_error", msg);
        return error.Protocol;
    }
    s.body.reader = s.response.reader(try s.body.buffer());
}

/// The request's headers beside std.http's own and the signature's.
fn addHeaders(s: *Stream, headers: *RequestHeaders) TurnError!void {
    try headers.add("accept", providers.accept(s.config.provider));
    try providers.addHeaders(s.config.provider, headers, s.requestParts());
    try headers.addUser(s.config.request.extra_headers);
}

/// The provider's signature (providers.signRequest) over the request as it goes out: its
/// host, path and body. Made again on every attempt (a signature holds its time).
fn signRequest(s: *Stream, headers: *RequestHeaders, uri: std.Uri) TurnError!void {
    const provider = s.config.provider;
    if (!providers.signs(provider)) return;
    var host_buf: [std.Io.net.HostName.max_len + 8]u8 = undefined;
    var host_w: std.Io.Writer = .fixed(&host_buf);
    uri.writeToStream(&host_w, .{ .authority = true }) catch return error.OutOfMemory;
    var path_buf: std.Io.Writer.Allocating = .init(s.agent.gpa);
    defer path_buf.deinit();
    uri.writeToStream(&path_buf.writer, .{ .path = true }) catch return error.OutOfMemory;
    const host = std.mem.trimStart(u8, host_w.buffered(), "/");
    providers.signRequest(provider, headers, .{
        .host = host,
        .path = path_buf.written(),
        .body = s.request_body.written(),
        .now = unixNow(),
        .detail = &s.detail,
        .api_key = s.config.api_key,
    }) catch |err| return err;
}

/// The request's JSON body, from the conversation as it is now (or a compaction's summary
/// request, see Stream.requestParts).
fn writeRequestBody(s: *Stream) error{OutOfMemory}!void {
    s.request_body.clearRetainingCapacity();
    const w = &s.request_body.writer;
    providers.writeRequest(s.agent.config.provider, w, s.requestParts()) catch return error.OutOfMemory;
}

/// Opens the request's connection, or takes a kept-alive one (Link.connect). True when the
/// connection was reused.
fn connect(s: *Stream, uri: std.Uri, options: std.http.Client.RequestOptions, tunnel_key: ?tunnel.Key, kept: ?*tunnel.Tunnel) TurnError!bool {
    var problem: tunnel.Problem = .{};
    return s.link.connect(s.agent, &s.watch, .POST, uri, options, tunnel_key, kept, &problem) catch |err| switch (err) {
        error.TunnelFailed => {
            s.detail.set(s.agent.gpa, 0, "connection_error", problem.message());
            return error.Connection;
        },
        else => connectFailure(s, err),
    };
}

/// Writes the request and reads the response head (Link.exchange), dropping the body once
/// it is sent.
fn exchange(s: *Stream) anyerror!std.http.Client.Response {
    try s.link.sendBody(s.request_body.written());
    dropRequestBody(s);
    return s.link.receiveHead();
}

/// The request is sent: its body (the whole conversation, images included) is not needed
/// while the answer is awaited, which may take long (a retry, a tool round's request write it
/// again), so a waiting stream does not hold it.
fn dropRequestBody(s: *Stream) void {
    s.request_body.deinit();
    s.request_body = .init(s.agent.gpa);
}

fn httpFailure(s: *Stream, status: u16, error_type: ?[]const u8) TurnError {
    const gpa = s.agent.gpa;
    const reader = s.response.reader(s.body.buffer() catch return error.OutOfMemory);
    const arena = s.event_allocator;
    const body = reader.allocRemaining(arena, .limited(max_error_body)) catch "";
    if (providers.parseErrorBody(s.agent.config.provider, arena, body, error_type)) |p| {
        s.detail.set(gpa, status, p.type, p.message);
        if (p.request_id) |id| if (s.detail.request_id.items.len == 0) s.detail.setRequestId(gpa, id);
        if (p.kind) |kind| return kind;
    } else {
        var msg_buf: [96]u8 = undefined;
        const msg = std.fmt.bufPrint(&msg_buf, "HTTP {d} without a provider error body", .{status}) catch "HTTP error";
        s.detail.set(gpa, status, "", msg);
    }
    return errors.fromHttpStatus(status);
}

fn connectFailure(s: *Stream, err: anyerror) TurnError {
    if (err == error.OutOfMemory) return error.OutOfMemory;
    var msg_buf: [160]u8 = undefined;
    const msg = std.fmt.bufPrint(&msg_buf, "could not reach {s}: {s}", .{ hostOf(s.url.items), @errorName(err) }) catch @errorName(err);
    s.detail.set(s.agent.gpa, 0, "connection_error", msg);
    return error.Connection;
}

/// What a failed body read means: a malformed or cut chunked body is a protocol error,
/// anything else (reset, closed) a connection error.
pub fn readFailure(s: *Stream, err: anyerror) TurnError {
    const gpa = s.agent.gpa;
    switch (err) {
        error.OutOfMemory => return error.OutOfMemory,
        error.Framing => {
            var msg_buf: [160]u8 = undefined;
            const msg = std.fmt.bufPrint(&msg_buf, "the body's framing is broken: {s}", .{s.parser.problem()}) catch "the body's framing is broken";
            s.detail.set(gpa, 0, "protocol_error", msg);
            return error.Protocol;
        },
        error.EventTooLarge => {
            s.detail.set(gpa, 0, "protocol_error", "an SSE event is larger than the limit");
            return error.Protocol;
        },
        else => {},
    }
    if (s.response.bodyErr()) |body_err| {
        if (body_err == error.HttpChunkTruncated) s.dropped = true;
        s.detail.set(gpa, 0, "protocol_error", switch (body_err) {
            error.HttpChunkTruncated => "the chunked body was cut short",
            error.HttpChunkInvalid => "the chunked body is malformed",
            error.HttpHeadersOversize => "the chunk trailers are too large",
        });
        return error.Protocol;
    }
    var msg_buf: [128]u8 = undefined;
    const read_error = s.link.readError();
    const reason = @errorName(read_error orelse err);
    const msg = std.fmt.bufPrint(&msg_buf, "the connection failed while streaming: {s}", .{reason}) catch "the connection failed while streaming";
    s.detail.set(gpa, 0, "connection_error", msg);
    return error.Connection;
}

/// Whether `s.body.fillMore()` would return from bytes the connection already holds,
/// without waiting on the network (see std_http_internals.fillsWithoutWaiting).
pub fn bodyFillsWithoutWaiting(s: *Stream) bool {
    return std_http.fillsWithoutWaiting(&s.link.request, s.body.reader, s.body.buffered().len < s.body.capacity());
}

/// `ms` after `now` (CLOCK_MONOTONIC ns), or 0 (no deadline) for 0 ms.
pub fn deadlineAfter(now: u64, ms: u64) u64 {
    return if (ms > 0) now + ms * std.time.ns_per_ms else 0;
}

/// The earlier of two deadlines, 0 standing for none.
pub fn earliest(a: u64, b: u64) u64 {
    if (a == 0) return b;
    if (b == 0) return a;
    return @min(a, b);
}

pub fn unixNow() i64 {
    var ts: std.c.timespec = undefined;
    _ = std.c.clock_gettime(.REALTIME, &ts);
    return @intCast(ts.sec);
}

/// scheme://host:port of a URL, without any user:password part or path (no secrets in errors).
pub fn hostOf(url: []const u8) []const u8 {
    const scheme_end = (std.mem.indexOf(u8, url, "://") orelse return "the provider") + 3;
    const rest = url[scheme_end..];
    const end = std.mem.indexOfAny(u8, rest, "/?#") orelse rest.len;
    if (std.mem.lastIndexOfScalar(u8, rest[0..end], '@') != null) return "the provider (credentials in base_url hidden)";
    return url[0 .. scheme_end + end];
}

/// base_url + endpoint (the turn's, or the token-counting one), where a base ending in
/// "/v1" (the OpenAI SDK convention) is not given a second "/v1".
pub fn writeUrl(gpa: Allocator, out: *std.ArrayList(u8), base: []const u8, provider: providers.Provider, model: []const u8, purpose: Purpose) Allocator.Error!void {
    out.clearRetainingCapacity();
    const trimmed = std.mem.trimEnd(u8, base, "/");
    try out.appendSlice(gpa, trimmed);
    const at = out.items.len;
    switch (purpose) {
        .turn => try providers.writeEndpoint(provider, gpa, out, model),
        .count => try providers.writeCountEndpoint(provider, gpa, out, model),
    }
    dropRepeatedSegment(out, trimmed, at);
}

/// The model list's URL for the page after `cursor` (model_list.zig), by writeUrl's rule.
pub fn writeListUrl(gpa: Allocator, out: *std.ArrayList(u8), base: []const u8, provider: providers.Provider, cursor: ?[]const u8) Allocator.Error!void {
    out.clearRetainingCapacity();
    try providers.writeListBaseUrl(provider, gpa, out, base);
    out.items.len = std.mem.trimEnd(u8, out.items, "/").len;
    const at = out.items.len;
    try providers.writeListPath(provider, gpa, out, cursor);
    dropRepeatedSegment(out, out.items[0..at], at); // (read before anything is moved)
}

/// A base that ends with the path's first segment (".../v1" and "/v1/messages",
/// ".../v1beta" and "/v1beta/models/...") does not repeat it.
fn dropRepeatedSegment(out: *std.ArrayList(u8), trimmed: []const u8, at: usize) void {
    const path = out.items[at..];
    const first = path[0 .. std.mem.indexOfScalarPos(u8, path, 1, '/') orelse path.len];
    if (first.len > 1 and std.mem.endsWith(u8, trimmed, first)) out.replaceRangeAssumeCapacity(at, first.len, &.{});
}

test "urls from base urls with and without the path's version" {
    var out: std.ArrayList(u8) = .empty;
    defer out.deinit(std.testing.allocator);
    try writeUrl(std.testing.allocator, &out, "http://127.0.0.1:9", .anthropic, "m", .turn);
    try std.testing.expectEqualStrings("http://127.0.0.1:9/v1/messages", out.items);
    try writeUrl(std.testing.allocator, &out, "https://api.openai.com/v1/", .openai, "m", .turn);
    try std.testing.expectEqualStrings("https://api.openai.com/v1/chat/completions", out.items);
    try writeUrl(std.testing.allocator, &out, "https://generativelanguage.googleapis.com", .gemini, "gemini-2.5-flash", .turn);
    try std.testing.expectEqualStrings("https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse", out.items);
    try writeUrl(std.testing.allocator, &out, "https://proxy.example/v1beta/", .gemini, "g", .turn);
    try std.testing.expectEqualStrings("https://proxy.example/v1beta/models/g:streamGenerateContent?alt=sse", out.items);
    try writeUrl(std.testing.allocator, &out, "https://api.openai.com/v1", .@"openai-responses", "m", .count);
    try std.testing.expectEqualStrings("https://api.openai.com/v1/responses/input_tokens", out.items);
    try writeUrl(std.testing.allocator, &out, "https://generativelanguage.googleapis.com", .gemini, "gemini-2.5-flash", .count);
    try std.testing.expectEqualStrings("https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:countTokens", out.items);
    try writeUrl(std.testing.allocator, &out, "https://bedrock-runtime.us-east-1.amazonaws.com", .bedrock, "anthropic.claude-sonnet-4-5-20250929-v1:0", .count);
    try std.testing.expectEqualStrings("https://bedrock-runtime.us-east-1.amazonaws.com/model/anthropic.claude-sonnet-4-5-20250929-v1%3A0/count-tokens", out.items);
}

test "model list urls: each provider's path and page query, Bedrock's control plane" {
    const gpa = std.testing.allocator;
    var out: std.ArrayList(u8) = .empty;
    defer out.deinit(gpa);
    try writeListUrl(gpa, &out, "https://api.anthropic.com/", .anthropic, null);
    try std.testing.expectEqualStrings("https://api.anthropic.com/v1/models?limit=1000", out.items);
    try writeListUrl(gpa, &out, "https://api.anthropic.com", .anthropic, "claude-x");
    try std.testing.expectEqualStrings("https://api.anthropic.com/v1/models?limit=1000&after_id=claude-x", out.items);
    try writeListUrl(gpa, &out, "https://api.openai.com/v1", .openai, null);
    try std.testing.expectEqualStrings("https://api.openai.com/v1/models", out.items);
    try writeListUrl(gpa, &out, "http://localhost:11434/v1", .@"openai-responses", "m 1");
    try std.testing.expectEqualStrings("http://localhost:11434/v1/models?after=m%201", out.items);
    try writeListUrl(gpa, &out, "https://generativelanguage.googleapis.com", .gemini, "a/b=");
    try std.testing.expectEqualStrings("https://generativelanguage.googleapis.com/v1beta/models?pageSize=1000&pageToken=a%2Fb%3D", out.items);
    try writeListUrl(gpa, &out, "https://bedrock-runtime.eu-west-3.amazonaws.com", .bedrock, null);
    try std.testing.expectEqualStrings("https://bedrock.eu-west-3.amazonaws.com/foundation-models", out.items);
    try writeListUrl(gpa, &out, "http://127.0.0.1:8080/", .bedrock, null);
    try std.testing.expectEqualStrings("http://127.0.0.1:8080/foundation-models", out.items);
}

