//! The Streamable HTTP transport of an MCP session (revision 2025-06-18 and later): each
//! message the client sends is a POST of its own on the agent's connections
//! (transport/oneshot.zig: TLS, proxy, CA file, keep-alive, deadlines), answered by a 202
//! (a notification or a reply), a JSON message, or an SSE stream (`text/event-stream`) of
//! messages: the server's requests and notifications (progress), then the reply. It gives the
//! client the seam stdio.zig gives: "send a line", "next line before a deadline".
//! `Mcp-Session-Id` from the server is sent on every later request, the negotiated
//! `MCP-Protocol-Version` once known; a 404 on a session is `SessionExpired` (the client
//! shakes hands again); `close` DELETEs the session. The optional GET stream (messages the
//! server sends outside any request) is not opened: a list change a server sends there is
//! missed (one sent on a request's SSE answer is seen).
const std = @import("std");
const Allocator = std.mem.Allocator;
const c = std.c;
const Agent = @import("../agent.zig").Agent;
const oneshot = @import("../transport/oneshot.zig");
const errors = @import("../errors.zig");
const request_mod = @import("../request.zig");
const stdio = @import("stdio.zig");

pub const Header = struct { name: []const u8, value: []const u8 };

pub const Options = struct {
    url: []const u8,
    /// The config's headers (a bearer token is one), sent on every request.
    headers: []const Header = &.{},
    /// A message longer than this is refused (`LineTooLong`), as over stdio.
    max_line_bytes: usize = 16 * 1024 * 1024,
};

pub const IoError = stdio.IoError || error{
    /// The server forgot the session (a 404 on it): a new handshake is due.
    SessionExpired,
    /// The exchange failed: a non-2xx answer, no connection, an answer neither JSON nor SSE.
    /// Why: `problem`.
    HttpFailed,
    OutOfMemory,
};

pub const Session = struct {
    gpa: Allocator,
    agent: *Agent,
    options: Options,
    /// Taken while a request is opened on the agent's connections (their pool, the kept-alive
    /// connection and the dialer are the agent's, and a round calls servers on threads).
    lock: *c.pthread_mutex_t,
    /// The server's `Mcp-Session-Id`, once given.
    session_id: ?[]u8 = null,
    /// The negotiated protocol version, sent once the handshake set it.
    protocol_version: ?[]const u8 = null,
    /// The SSE answer being read, if one is open.
    stream: ?*oneshot.Answer = null,
    stream_reader: ?*std.Io.Reader = null,
    stream_buffer: [16 * 1024]u8 = undefined,
    /// Messages read from a JSON answer, not handed out yet (at most one).
    queued: ?[]u8 = null,
    /// The message last handed out (readLine's result lives until the next read).
    line: std.ArrayList(u8) = .empty,
    /// Why the last exchange failed, for an error message (as a stdio server's stderr tail).
    problem: [512]u8 = undefined,
    problem_len: usize = 0,
    /// Readable once the wait should end (a turn's cancel). -1: none.
    cancel_fd: c.fd_t = -1,

    pub fn open(gpa: Allocator, agent: *Agent, lock: *c.pthread_mutex_t, options: Options) Allocator.Error!*Session {
        const s = try gpa.create(Session);
        s.* = .{ .gpa = gpa, .agent = agent, .options = options, .lock = lock };
        return s;
    }

    /// Ends the session: the open answer closed, the session DELETEd (its failure ignored:
    /// the server forgets idle sessions anyway).
    pub fn close(s: *Session) void {
        s.endStream();
        if (s.session_id != null) {
            var arena_state: std.heap.ArenaAllocator = .init(s.gpa);
            defer arena_state.deinit();
            var answer: oneshot.Answer = undefined;
            if (s.post(arena_state.allocator(), &answer, .DELETE, "", stdio.deadlineIn(5_000))) {
                s.endAnswer(&answer);
            } else |_| {}
        }
        s.dropQueued();
        if (s.session_id) |id| s.gpa.free(id);
        s.line.deinit(s.gpa);
        s.gpa.destroy(s);
    }

    /// As a stdio server's kill: the open answer is dropped (the session stays for `close`).
    pub fn kill(s: *Session) void {
        s.endStream();
        s.dropQueued();
    }

    /// Why the last exchange failed.
    pub fn problemText(s: *const Session) []const u8 {
        return s.problem[0..s.problem_len];
    }

    /// POSTs one message. A 202 takes it; a JSON answer is queued for `readLine`; an SSE answer
    /// becomes the stream `readLine` reads (the one before it ends: its reply was read).
    pub fn writeLine(s: *Session, line: []const u8, deadline_ns: i64) IoError!void {
        var arena_state: std.heap.ArenaAllocator = .init(s.gpa);
        defer arena_state.deinit();
        const arena = arena_state.allocator();
        const answer = try s.gpa.create(oneshot.Answer);
        var kept = false;
        defer if (!kept) s.gpa.destroy(answer);
        try s.post(arena, answer, .POST, line, deadline_ns);
        defer if (!kept) s.endAnswer(answer);
        const status = answer.status;
        if (status == 202) return s.discardBody(answer);
        if (status == 404 and s.session_id != null) {
            s.gpa.free(s.session_id.?);
            s.session_id = null;
            s.setProblem("the server forgot the session (HTTP 404)", .{});
            return error.SessionExpired;
        }
        if (status < 200 or status > 299) {
            var buf: [200]u8 = undefined;
            const body = s.bodyStart(answer, &buf);
            s.setProblem("HTTP {d}{s}{s}", .{ status, if (body.len > 0) ": " else "", body });
            return error.HttpFailed;
        }
        if (answer.header("mcp-session-id")) |id| if (s.session_id == null) {
            s.session_id = try s.gpa.dupe(u8, id);
        };
        const content_type = answer.header("content-type") orelse "";
        if (startsWithIgnoreCase(content_type, "application/json")) {
            var buffer: [8192]u8 = undefined;
            const reader = answer.response.reader(&buffer);
            const body = reader.allocRemaining(s.gpa, .limited(s.options.max_line_bytes)) catch |err| return s.readFailed(answer, err);
            s.endStream(); // (a stream before it was read to its reply)
            s.dropQueued();
            s.queued = body;
            s.parkAnswer(answer);
            return;
        }
        if (startsWithIgnoreCase(content_type, "text/event-stream")) {
            s.endStream();
            s.stream = answer;
            s.stream_reader = answer.response.reader(&s.stream_buffer);
            kept = true;
            return;
        }
        s.setProblem("an answer neither JSON nor an SSE stream (content-type \"{s}\")", .{content_type[0..@min(content_type.len, 80)]});
        return error.HttpFailed;
    }

    /// The next message of the exchange: the queued JSON answer, or the SSE stream's next
    /// `message` event. The stream's end before the reply is `ServerExited`: the reply would
    /// come on the GET stream, which is not opened.
    pub fn readLine(s: *Session, deadline_ns: i64) IoError![]const u8 {
        if (s.queued) |q| {
            s.line.clearRetainingCapacity();
            try s.line.appendSlice(s.gpa, q);
            s.dropQueued();
            return s.line.items;
        }
        const answer = s.stream orelse {
            s.setProblem("the server's answer ended without the reply", .{});
            return error.ServerExited;
        };
        answer.setDeadline(@intCast(deadline_ns));
        const reader = s.stream_reader.?;
        s.line.clearRetainingCapacity();
        var data: std.Io.Writer.Allocating = .fromArrayList(s.gpa, &s.line);
        defer s.line = data.toArrayList();
        var has_data = false;
        var is_message = true;
        while (true) {
            if (reader.bufferedLen() == 0 and !answer.holdsBytes()) try s.waitReadable(answer, deadline_ns);
            // One line of the stream: its field name, then its value.
            var line_buf: std.Io.Writer.Allocating = .init(s.gpa);
            defer line_buf.deinit();
            _ = reader.streamDelimiterLimit(&line_buf.writer, '\n', .limited(s.options.max_line_bytes)) catch |err| switch (err) {
                error.StreamTooLong => {
                    s.endStream();
                    return error.LineTooLong;
                },
                error.WriteFailed => return error.OutOfMemory,
                error.ReadFailed => return s.streamFailed(),
            };
            // Stopped at the '\n' (still buffered), or at the stream's end.
            _ = reader.peekByte() catch |err| switch (err) {
                error.ReadFailed => return s.streamFailed(),
                error.EndOfStream => {
                    if (answer.timedOut()) return s.timeout();
                    s.endStream();
                    s.setProblem("the server's answer ended without the reply", .{});
                    return error.ServerExited;
                },
            };
            reader.toss(1);
            const text = std.mem.trimEnd(u8, line_buf.written(), "\r");
            if (text.len == 0) {
                // An event's end: a message event with data is a message (an empty one is
                // a server's priming event, for resuming the stream: nothing to read).
                if (has_data and is_message and data.written().len > 0) return data.written();
                data.clearRetainingCapacity();
                has_data = false;
                is_message = true;
                continue;
            }
            if (text[0] == ':') continue; // a comment (a keep-alive)
            const colon = std.mem.indexOfScalar(u8, text, ':') orelse text.len;
            const name = text[0..colon];
            var value = if (colon < text.len) text[colon + 1 ..] else "";
            if (value.len > 0 and value[0] == ' ') value = value[1..];
            if (std.mem.eql(u8, name, "data")) {
                if (has_data) data.writer.writeByte('\n') catch return error.OutOfMemory;
                data.writer.writeAll(value) catch return error.OutOfMemory;
                has_data = true;
                if (data.written().len > s.options.max_line_bytes) {
                    s.endStream();
                    return error.LineTooLong;
                }
            } else if (std.mem.eql(u8, name, "event")) {
                is_message = std.mem.eql(u8, value, "message");
            }
            // id and retry: for resuming a stream, which this client does not do.
        }
    }

    /// Waits until the stream's socket is readable, the deadline passes or `cancel_fd` is.
    fn waitReadable(s: *Session, answer: *oneshot.Answer, deadline_ns: i64) IoError!void {
        var fds = [_]c.pollfd{
            .{ .fd = answer.socket(), .events = c.POLL.IN, .revents = 0 },
            .{ .fd = s.cancel_fd, .events = c.POLL.IN, .revents = 0 },
        };
        while (true) {
            const left = deadline_ns - stdio.now();
            if (left <= 0) return s.timeout();
            const wait_ms: c_int = @intCast(@min(@divTrunc(left, std.time.ns_per_ms) + 1, std.math.maxInt(c_int)));
            const count: c.nfds_t = if (s.cancel_fd >= 0) 2 else 1;
            const n = c.poll(&fds, count, wait_ms);
            if (n < 0) continue; // (EINTR)
            if (n == 0) continue;
            if (s.cancel_fd >= 0 and fds[1].revents != 0) {
                s.endStream();
                return error.Canceled;
            }
            return;
        }
    }

    fn timeout(s: *Session) IoError {
        s.endStream();
        s.setProblem("no answer in time", .{});
        return error.Timeout;
    }

    fn streamFailed(s: *Session) IoError {
        const answer = s.stream.?;
        if (answer.timedOut()) return s.timeout();
        s.endStream();
        s.setProblem("the connection failed while reading the answer", .{});
        return error.HttpFailed;
    }

    /// Opens a request to the server with the session's headers; its head is read.
    fn post(s: *Session, arena: Allocator, answer: *oneshot.Answer, method: std.http.Method, body: []const u8, deadline_ns: i64) IoError!void {
        var header_list: std.ArrayList(std.http.Header) = .empty;
        var auth: std.ArrayList(u8) = .empty;
        var beta: std.ArrayList(u8) = .empty;
        var headers: request_mod.Headers = .{ .list = &header_list, .auth_buffer = &auth, .beta_buffer = &beta, .gpa = arena };
        for (s.options.headers) |h| {
            if (std.ascii.eqlIgnoreCase(h.name, "authorization")) {
                headers.authorization = .{ .override = h.value };
            } else try headers.add(h.name, h.value);
        }
        if (s.session_id) |id| try headers.add("mcp-session-id", id);
        if (s.protocol_version) |v| try headers.add("mcp-protocol-version", v);
        var detail: errors.Detail = .{};
        defer detail.deinit(s.gpa);
        _ = c.pthread_mutex_lock(s.lock);
        defer _ = c.pthread_mutex_unlock(s.lock);
        oneshot.open(answer, s.agent, arena, .{
            .method = method,
            .url = s.options.url,
            .body = body,
            .headers = &headers,
            .accept = "application/json, text/event-stream",
            .deadline_ns = @intCast(@max(deadline_ns, 1)),
            .cancel_fd = s.cancel_fd,
        }, &detail) catch |err| switch (err) {
            error.OutOfMemory => return error.OutOfMemory,
            error.Timeout => {
                s.setProblem("no answer in time", .{});
                return error.Timeout;
            },
            error.Canceled => return error.Canceled,
            else => {
                s.setProblem("{s}", .{detail.message.items});
                return error.HttpFailed;
            },
        };
    }

    fn readFailed(s: *Session, answer: *oneshot.Answer, err: anyerror) IoError {
        if (err == error.OutOfMemory) return error.OutOfMemory;
        if (answer.timedOut()) {
            s.setProblem("no answer in time", .{});
            return error.Timeout;
        }
        if (err == error.StreamTooLong) return error.LineTooLong;
        s.setProblem("the connection failed while reading the answer", .{});
        return error.HttpFailed;
    }

    /// Reads a 202's body (usually none) so that the connection is kept.
    fn discardBody(s: *Session, answer: *oneshot.Answer) IoError!void {
        var buffer: [1024]u8 = undefined;
        const reader = answer.response.reader(&buffer);
        _ = reader.discardRemaining() catch |err| return s.readFailed(answer, err);
        s.parkAnswer(answer);
    }

    /// The start of a failure's body, for its message.
    fn bodyStart(s: *Session, answer: *oneshot.Answer, out: []u8) []const u8 {
        _ = s;
        var buffer: [1024]u8 = undefined;
        const reader = answer.response.reader(&buffer);
        const n = reader.readSliceShort(out) catch 0;
        return std.mem.trim(u8, out[0..n], " \r\n\t");
    }

    /// An answer read to its end: its connection kept for the agent's next request.
    fn parkAnswer(s: *Session, answer: *oneshot.Answer) void {
        _ = c.pthread_mutex_lock(s.lock);
        defer _ = c.pthread_mutex_unlock(s.lock);
        answer.park();
    }

    fn endAnswer(s: *Session, answer: *oneshot.Answer) void {
        _ = c.pthread_mutex_lock(s.lock);
        defer _ = c.pthread_mutex_unlock(s.lock);
        answer.end();
    }

    fn endStream(s: *Session) void {
        const answer = s.stream orelse return;
        s.endAnswer(answer);
        s.gpa.destroy(answer);
        s.stream = null;
        s.stream_reader = null;
    }

    fn dropQueued(s: *Session) void {
        if (s.queued) |q| s.gpa.free(q);
        s.queued = null;
    }

    fn setProblem(s: *Session, comptime fmt: []const u8, args: anytype) void {
        const text = std.fmt.bufPrint(&s.problem, fmt, args) catch s.problem[0..];
        s.problem_len = text.len;
    }
};

fn startsWithIgnoreCase(text: []const u8, prefix: []const u8) bool {
    return text.len >= prefix.len and std.ascii.eqlIgnoreCase(text[0..prefix.len], prefix);
}
