//! The stream of one turn. It owns the HTTP response reader and the SSE parser: each `next()`
//! reads just enough of the body to produce one event. No threads, no callbacks.
const std = @import("std");
const Allocator = std.mem.Allocator;
const Agent = @import("agent.zig").Agent;
const ev = @import("event.zig");
const errors = @import("errors.zig");
const sse = @import("sse.zig");
const Assembly = @import("assembly.zig").Assembly;
const anthropic = @import("anthropic.zig");
const openai = @import("openai.zig");

const TurnError = errors.TurnError;

const transfer_buffer_len = 16 * 1024;
const max_error_body = 64 * 1024;

pub const Stream = struct {
    agent: *Agent,
    state: State = .unsent,
    failure: TurnError = error.Protocol, // meaningful only when state == .failed
    detail: errors.Detail = .{},

    request: std.http.Client.Request = undefined,
    response: std.http.Client.Response = undefined,
    body: *std.Io.Reader = undefined,
    transfer_buffer: [transfer_buffer_len]u8 = undefined,
    request_body: std.Io.Writer.Allocating,
    url: std.ArrayList(u8) = .empty,
    auth_header: std.ArrayList(u8) = .empty,

    parser: sse.Parser,
    /// Holds the decoded JSON of the current SSE event; reset (keeping its memory) per event.
    event_arena: std.heap.ArenaAllocator,
    assembly: Assembly,
    decoder: union(enum) { anthropic: anthropic.Decoder, openai: openai.Decoder },

    const State = enum { unsent, streaming, done, failed };

    pub fn create(agent: *Agent) Allocator.Error!*Stream {
        const gpa = agent.gpa;
        const s = try gpa.create(Stream);
        s.* = .{
            .agent = agent,
            .request_body = .init(gpa),
            .parser = .init(gpa),
            .event_arena = .init(gpa),
            .assembly = .init(gpa),
            .decoder = switch (agent.config.provider) {
                .anthropic => .{ .anthropic = .{} },
                .openai => .{ .openai = .{} },
            },
        };
        return s;
    }

    /// Frees the stream and closes its connection. A turn freed before it ended commits no
    /// assistant message; its user message stays in the conversation. The agent may have been
    /// released already: then this frees it too.
    pub fn destroy(s: *Stream) void {
        const gpa = s.agent.gpa;
        const agent = s.agent;
        s.closeConnection();
        s.detail.deinit(gpa);
        s.request_body.deinit();
        s.url.deinit(gpa);
        s.auth_header.deinit(gpa);
        s.parser.deinit();
        s.event_arena.deinit();
        s.assembly.deinit();
        gpa.destroy(s);
        agent.streamDestroyed();
    }

    /// The next event of the turn; null once the turn is over (after MessageComplete).
    /// A failure is sticky: every later call returns the same error.
    pub fn next(s: *Stream) TurnError!?ev.Event {
        switch (s.state) {
            .done => return null,
            .failed => return s.failure,
            .unsent => {
                s.open() catch |err| return s.fail(err);
                s.state = .streaming;
            },
            .streaming => {},
        }
        while (true) {
            if (s.assembly.pop()) |e| return s.deliver(e);
            _ = s.event_arena.reset(.retain_capacity);
            const maybe_event = s.parser.next(s.body) catch |err| return s.fail(s.readFailure(err));
            const arena = s.event_arena.allocator();
            const a = &s.assembly;
            const d = &s.detail;
            if (maybe_event) |event| {
                const handled = switch (s.decoder) {
                    .anthropic => |*dec| dec.handle(a, arena, event, d),
                    .openai => |*dec| dec.handle(a, arena, event, d),
                };
                handled catch |err| return s.fail(err);
            } else {
                const finished = switch (s.decoder) {
                    .anthropic => |*dec| dec.finish(a, d),
                    .openai => |*dec| dec.finish(a, d),
                };
                finished catch |err| return s.fail(err);
                if (s.assembly.queue.items.len == 0) {
                    s.detail.set(s.agent.gpa, 0, "protocol_error", "the stream ended without completing the message");
                    return s.fail(error.Protocol);
                }
            }
        }
    }

    /// The detail of the failure (valid until the stream is destroyed), or null.
    pub fn failureDetail(s: *const Stream) ?*const errors.Detail {
        return if (s.state == .failed) &s.detail else null;
    }

    fn deliver(s: *Stream, e: ev.Event) TurnError!?ev.Event {
        if (e == .message_complete) {
            // The turn is over: keep the assistant message, free the agent for the next turn.
            s.assembly.commit(&s.agent.conversation) catch |err| return s.fail(err);
            s.closeConnection();
            s.state = .done;
            s.agent.busy = false;
        }
        return e;
    }

    fn fail(s: *Stream, err: TurnError) TurnError {
        if (s.detail.message.items.len == 0) s.detail.set(s.agent.gpa, s.detail.http_status, "", @errorName(err));
        s.closeConnection();
        s.state = .failed;
        s.failure = err;
        s.agent.busy = false;
        return err;
    }

    fn closeConnection(s: *Stream) void {
        if (s.state != .streaming) return;
        // A request that did not read its body to the end closes its connection: a half-read
        // stream can never be reused.
        s.request.deinit();
        s.state = .unsent; // the caller sets the real state next
    }

    /// Sends the request and reads the response head. A non-2xx answer becomes the typed
    /// error its status means, with the provider's error type and message.
    fn open(s: *Stream) TurnError!void {
        const agent = s.agent;
        const gpa = agent.gpa;
        const config = agent.config;

        writeUrl(gpa, &s.url, config.base_url.?, switch (config.provider) {
            .anthropic => anthropic.endpoint,
            .openai => openai.endpoint,
        }) catch return error.OutOfMemory;
        const uri = std.Uri.parse(s.url.items) catch {
            s.detail.set(gpa, 0, "connection_error", "the base_url does not make a valid URL");
            return error.Connection;
        };
        const w = &s.request_body.writer;
        const written = switch (config.provider) {
            .anthropic => anthropic.writeRequest(w, config, &agent.conversation),
            .openai => openai.writeRequest(w, config, &agent.conversation),
        };
        written catch return error.OutOfMemory;

        var extra: [4]std.http.Header = undefined;
        var n_extra: usize = 0;
        extra[n_extra] = .{ .name = "accept", .value = "text/event-stream" };
        n_extra += 1;
        var authorization: std.http.Client.Request.Headers.Value = .omit;
        switch (config.provider) {
            .anthropic => {
                extra[n_extra] = .{ .name = "anthropic-version", .value = anthropic.api_version };
                n_extra += 1;
                if (config.api_key) |key| {
                    extra[n_extra] = .{ .name = "x-api-key", .value = key };
                    n_extra += 1;
                }
            },
            .openai => if (config.api_key) |key| {
                s.auth_header.appendSlice(gpa, "Bearer ") catch return error.OutOfMemory;
                s.auth_header.appendSlice(gpa, key) catch return error.OutOfMemory;
                authorization = .{ .override = s.auth_header.items };
            },
        }
        for (extra[0..n_extra]) |h| {
            if (std.mem.indexOfAny(u8, h.value, "\r\n") != null) {
                s.detail.set(gpa, 0, "invalid_request_error", "a header value (the API key?) contains a line break");
                return error.InvalidRequest;
            }
        }

        s.request = agent.http.request(.POST, uri, .{
            .redirect_behavior = .unhandled,
            .keep_alive = true,
            .headers = .{
                .content_type = .{ .override = "application/json" },
                .accept_encoding = .{ .override = "identity" },
                .user_agent = .{ .override = "panto/0.1.0" },
                .authorization = authorization,
            },
            .extra_headers = extra[0..n_extra],
        }) catch |err| return s.connectFailure(err);
        s.state = .streaming; // from here on the request must be closed
        s.request.sendBodyComplete(s.request_body.written()) catch |err| return s.connectFailure(err);
        s.response = s.request.receiveHead(&.{}) catch |err| return s.connectFailure(err);

        const head = s.response.head;
        var it = head.iterateHeaders();
        while (it.next()) |h| {
            if (std.ascii.eqlIgnoreCase(h.name, "request-id") or std.ascii.eqlIgnoreCase(h.name, "x-request-id"))
                s.detail.setRequestId(gpa, h.value);
        }
        const status: u16 = @intFromEnum(head.status);
        const content_type = head.content_type orelse "";
        if (status < 200 or status > 299) return s.httpFailure(status);
        if (!std.ascii.startsWithIgnoreCase(content_type, "text/event-stream")) {
            var msg_buf: [160]u8 = undefined;
            const msg = std.fmt.bufPrint(&msg_buf, "expected a text/event-stream answer, got \"{s}\"", .{content_type[0..@min(content_type.len, 80)]}) catch "expected a text/event-stream answer";
            s.detail.set(gpa, status, "protocol_error", msg);
            return error.Protocol;
        }
        s.body = s.response.reader(&s.transfer_buffer);
    }

    fn httpFailure(s: *Stream, status: u16) TurnError {
        const gpa = s.agent.gpa;
        const reader = s.response.reader(&s.transfer_buffer);
        const arena = s.event_arena.allocator();
        const body = reader.allocRemaining(arena, .limited(max_error_body)) catch "";
        const parsed = switch (s.agent.config.provider) {
            .anthropic => anthropic.parseErrorBody(arena, body),
            .openai => openai.parseErrorBody(arena, body),
        };
        if (parsed) |p| {
            s.detail.set(gpa, status, p.type, p.message);
            if (p.request_id) |id| if (s.detail.request_id.items.len == 0) s.detail.setRequestId(gpa, id);
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
        const msg = std.fmt.bufPrint(&msg_buf, "could not reach {s}: {s}", .{ s.agent.config.base_url.?, @errorName(err) }) catch @errorName(err);
        s.detail.set(s.agent.gpa, 0, "connection_error", msg);
        return error.Connection;
    }

    /// What a failed body read means: a malformed or cut chunked body is a protocol error,
    /// anything else (reset, closed) a connection error.
    fn readFailure(s: *Stream, err: anyerror) TurnError {
        const gpa = s.agent.gpa;
        switch (err) {
            error.OutOfMemory => return error.OutOfMemory,
            error.EventTooLarge => {
                s.detail.set(gpa, 0, "protocol_error", "an SSE event is larger than the limit");
                return error.Protocol;
            },
            else => {},
        }
        if (s.response.bodyErr()) |body_err| {
            s.detail.set(gpa, 0, "protocol_error", switch (body_err) {
                error.HttpChunkTruncated => "the chunked body was cut short",
                error.HttpChunkInvalid => "the chunked body is malformed",
                error.HttpHeadersOversize => "the chunk trailers are too large",
            });
            return error.Protocol;
        }
        var msg_buf: [128]u8 = undefined;
        const reason = if (s.request.connection) |c| (if (c.getReadError()) |e| @errorName(e) else @errorName(err)) else @errorName(err);
        const msg = std.fmt.bufPrint(&msg_buf, "the connection failed while streaming: {s}", .{reason}) catch "the connection failed while streaming";
        s.detail.set(gpa, 0, "connection_error", msg);
        return error.Connection;
    }
};

/// base_url + endpoint, where a base ending in "/v1" (the OpenAI SDK convention) is not
/// given a second "/v1".
fn writeUrl(gpa: Allocator, out: *std.ArrayList(u8), base: []const u8, endpoint: []const u8) Allocator.Error!void {
    out.clearRetainingCapacity();
    const trimmed = std.mem.trimEnd(u8, base, "/");
    try out.appendSlice(gpa, trimmed);
    if (std.mem.endsWith(u8, trimmed, "/v1")) {
        try out.appendSlice(gpa, endpoint["/v1".len..]);
    } else {
        try out.appendSlice(gpa, endpoint);
    }
}

test "urls from base urls with and without /v1" {
    var out: std.ArrayList(u8) = .empty;
    defer out.deinit(std.testing.allocator);
    try writeUrl(std.testing.allocator, &out, "http://127.0.0.1:9", "/v1/messages");
    try std.testing.expectEqualStrings("http://127.0.0.1:9/v1/messages", out.items);
    try writeUrl(std.testing.allocator, &out, "https://api.openai.com/v1/", "/v1/chat/completions");
    try std.testing.expectEqualStrings("https://api.openai.com/v1/chat/completions", out.items);
}
