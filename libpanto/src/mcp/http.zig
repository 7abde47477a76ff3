//! The Streamable HTTP transport of an MCP session (revision 2025-06-18 and later): each
//! message the client sends is a POST of its own on the agent's connections
//! (transport/oneshot.zig: TLS, proxy, CA file, keep-alive, deadlines), answered by a 202
//! (a notification or a reply), a JSON message, or an SSE stream (`text/event-stream`) of
//! messages: the server's requests and notifications (progress), then the reply. It gives the
//! client the seam stdio.zig gives: "send a line", "next line before a deadline".
//! `Mcp-Session-Id` from the server is sent on every later request, the negotiated
//! `MCP-Protocol-Version` once known; a 404 on a session is `SessionExpired` (the client
//! shakes hands again); `close` DELETEs the session. An SSE answer that breaks before its
//! reply is resumed with a GET carrying `Last-Event-ID` when the server gave its events ids
//! (the spec's "Resumability"); an answer that is a JSON-RPC batch (an array, 2025-03-26) is
//! handed out one message at a time. After the handshake the optional GET stream (messages
//! the server sends outside any request) is opened and read by a `Listener` thread (see why
//! there); a `tools/list_changed` on it is noted for the client's next request.
const std = @import("std");
const Allocator = std.mem.Allocator;
const c = std.c;
const Agent = @import("../agent.zig").Agent;
const oneshot = @import("../transport/oneshot.zig");
const errors = @import("../errors.zig");
const request_mod = @import("../request.zig");
const stdio = @import("stdio.zig");
const jsonrpc = @import("jsonrpc.zig");

/// The longest wait before a reconnection a server's SSE `retry` can ask for.
pub const max_retry_ms = 5_000;

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
    /// Messages read and not handed out yet, from `queued_next` on: a JSON answer, or the
    /// messages of a batch (each owned by the gpa).
    queued: std.ArrayList([]u8) = .empty,
    queued_next: usize = 0,
    /// The id of the SSE answer's last whole event (`id:`), for resuming it; owned.
    last_event_id: ?[]u8 = null,
    /// Resumptions of the answer being read that brought no event (a bound: a server that
    /// breaks every stream at once would be resumed forever).
    fruitless_resumes: u8 = 0,
    /// The SSE `retry` the server gave last (ms): how long to wait before resuming its answer;
    /// at most `max_retry_ms`, so a server cannot stall a turn with it.
    retry_ms: u32 = 0,
    /// The message last handed out (readLine's result lives until the next read).
    line: std.ArrayList(u8) = .empty,
    /// Why the last exchange failed, for an error message (as a stdio server's stderr tail).
    problem: [512]u8 = undefined,
    problem_len: usize = 0,
    /// Readable once the wait should end (a turn's cancel). -1: none.
    cancel_fd: c.fd_t = -1,
    /// The GET stream's reader, once `listen` opened it.
    listener: ?*Listener = null,
    /// This session reads a listener's GET stream: its `close` does not end the server's session.
    is_listener: bool = false,
    /// Held while `stream` changes, and by `interrupt` (another thread) while it uses it.
    stream_lock: c.pthread_mutex_t = c.PTHREAD_MUTEX_INITIALIZER,

    pub fn open(gpa: Allocator, agent: *Agent, lock: *c.pthread_mutex_t, options: Options) Allocator.Error!*Session {
        const s = try gpa.create(Session);
        s.* = .{ .gpa = gpa, .agent = agent, .options = options, .lock = lock };
        return s;
    }

    /// Ends the session: the open answer closed, the session DELETEd (its failure ignored:
    /// the server forgets idle sessions anyway).
    pub fn close(s: *Session) void {
        s.stopListening();
        s.endStream();
        if (s.session_id != null and !s.is_listener) {
            var arena_state: std.heap.ArenaAllocator = .init(s.gpa);
            defer arena_state.deinit();
            var answer: oneshot.Answer = undefined;
            if (s.post(arena_state.allocator(), &answer, .DELETE, "", stdio.deadlineIn(5_000))) {
                s.endAnswer(&answer);
            } else |_| {}
        }
        s.dropQueued();
        s.queued.deinit(s.gpa);
        s.forgetEventId();
        if (s.session_id) |id| s.gpa.free(id);
        s.line.deinit(s.gpa);
        s.gpa.destroy(s);
    }

    /// As a stdio server's kill: the open answer is dropped (the session stays for `close`).
    pub fn kill(s: *Session) void {
        s.stopListening();
        s.endStream();
        s.dropQueued();
    }

    /// Opens the server's GET stream on a thread of its own (after the handshake, so that the
    /// session id and version are known); a listener before it (an old session's) is stopped.
    /// Without a thread or an eventfd there is no listener: only list changes sent on request
    /// answers are seen, as before.
    pub fn listen(s: *Session) void {
        s.stopListening();
        s.listener = Listener.start(s) catch null;
    }

    /// Whether the GET stream brought a `notifications/tools/list_changed` since last asked.
    pub fn takeToolsChanged(s: *Session) bool {
        const l = s.listener orelse return false;
        return l.tools_changed.swap(false, .acq_rel);
    }

    fn stopListening(s: *Session) void {
        const l = s.listener orelse return;
        l.stop();
        s.listener = null;
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
            s.parkAnswer(answer);
            return s.queue(body);
        }
        if (startsWithIgnoreCase(content_type, "text/event-stream")) {
            s.endStream();
            s.forgetEventId();
            s.fruitless_resumes = 0;
            s.retry_ms = 0;
            s.setStream(answer);
            kept = true;
            return;
        }
        s.setProblem("an answer neither JSON nor an SSE stream (content-type \"{s}\")", .{content_type[0..@min(content_type.len, 80)]});
        return error.HttpFailed;
    }

    /// The next message of the exchange: a queued one (a JSON answer, a batch's next), or the
    /// SSE stream's next `message` event. The stream's end before the reply is resumed when the
    /// server gave event ids, else `ServerExited`: the reply would come on the GET stream,
    /// which is not opened.
    pub fn readLine(s: *Session, deadline_ns: i64) IoError![]const u8 {
        while (true) {
            if (s.queued_next < s.queued.items.len) {
                const q = s.queued.items[s.queued_next];
                s.queued_next += 1;
                defer s.gpa.free(q);
                if (s.queued_next == s.queued.items.len) s.dropQueued();
                s.line.clearRetainingCapacity();
                try s.line.appendSlice(s.gpa, q);
                return s.line.items;
            }
            const text = try s.nextEvent(deadline_ns) orelse continue; // (resumed: read on)
            if (!isBatch(text)) return text;
            const batch = try s.gpa.dupe(u8, text);
            try s.queue(batch);
        }
    }

    /// The SSE stream's next `message` event's data, or null when the stream broke and was
    /// resumed (a new stream to read).
    fn nextEvent(s: *Session, deadline_ns: i64) IoError!?[]const u8 {
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
        // The event's `id:`, the stream's last event id once the event is whole.
        var event_id: std.ArrayList(u8) = .empty;
        defer event_id.deinit(s.gpa);
        var has_id = false;
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
                error.ReadFailed => {
                    if (answer.timedOut()) return s.timeout();
                    return s.resumeOr(deadline_ns, s.streamFailed());
                },
            };
            // Stopped at the '\n' (still buffered), or at the stream's end.
            _ = reader.peekByte() catch |err| switch (err) {
                error.ReadFailed => {
                    if (answer.timedOut()) return s.timeout();
                    return s.resumeOr(deadline_ns, s.streamFailed());
                },
                error.EndOfStream => {
                    if (answer.timedOut()) return s.timeout();
                    s.endStream();
                    s.setProblem("the server's answer ended without the reply", .{});
                    return s.resumeOr(deadline_ns, error.ServerExited);
                },
            };
            reader.toss(1);
            const text = std.mem.trimEnd(u8, line_buf.written(), "\r");
            if (text.len == 0) {
                // An event's end: its id is the stream's last (even without data: a
                // server's priming event), and a message event with data is a message.
                if (has_id) {
                    s.forgetEventId();
                    s.last_event_id = try s.gpa.dupe(u8, event_id.items);
                    s.fruitless_resumes = 0;
                }
                has_id = false;
                event_id.clearRetainingCapacity();
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
            } else if (std.mem.eql(u8, name, "id") and std.mem.indexOfScalar(u8, value, 0) == null) {
                event_id.clearRetainingCapacity();
                try event_id.appendSlice(s.gpa, value);
                has_id = true;
            } else if (std.mem.eql(u8, name, "retry")) {
                // How long to wait before resuming (SSE): only digits count, and it is capped.
                if (std.fmt.parseUnsigned(u64, value, 10)) |ms| {
                    s.retry_ms = @intCast(@min(ms, max_retry_ms));
                } else |_| {}
            }
        }
    }

    /// After the SSE answer broke (`why`): resumes it (a GET with `Last-Event-ID`, the server
    /// replaying what came after) when the server gave its events ids, and returns null so
    /// that the new stream is read; else `why`.
    fn resumeOr(s: *Session, deadline_ns: i64, why: IoError) IoError!?[]const u8 {
        const id = s.last_event_id orelse return why;
        if (s.fruitless_resumes >= max_fruitless_resumes) return why;
        s.fruitless_resumes += 1;
        s.endStream();
        try s.pause(s.retry_ms, deadline_ns);
        var arena_state: std.heap.ArenaAllocator = .init(s.gpa);
        defer arena_state.deinit();
        const answer = try s.gpa.create(oneshot.Answer);
        var kept = false;
        defer if (!kept) s.gpa.destroy(answer);
        try s.request(arena_state.allocator(), answer, .{ .method = .GET, .accept = "text/event-stream", .last_event_id = id }, deadline_ns);
        defer if (!kept) s.endAnswer(answer);
        const content_type = answer.header("content-type") orelse "";
        if (answer.status != 200 or !startsWithIgnoreCase(content_type, "text/event-stream")) {
            s.setProblem("the server's answer broke before the reply, and resuming it failed (HTTP {d})", .{answer.status});
            return why;
        }
        s.setStream(answer);
        kept = true;
        return null;
    }

    const max_fruitless_resumes = 3;

    /// Opens the GET stream (with `Last-Event-ID` when its events had ids, so the server
    /// replays what the drop lost): `none` when the server has none (405) or refuses it (4xx).
    fn openGet(s: *Session) IoError!enum { open, none, failed } {
        s.endStream();
        var arena_state: std.heap.ArenaAllocator = .init(s.gpa);
        defer arena_state.deinit();
        const answer = try s.gpa.create(oneshot.Answer);
        var kept = false;
        defer if (!kept) s.gpa.destroy(answer);
        try s.request(arena_state.allocator(), answer, .{ .method = .GET, .accept = "text/event-stream", .last_event_id = s.last_event_id }, stdio.deadlineIn(60_000));
        defer if (!kept) s.endAnswer(answer);
        const content_type = answer.header("content-type") orelse "";
        if (answer.status >= 400 and answer.status < 500) return .none;
        if (answer.status != 200 or !startsWithIgnoreCase(content_type, "text/event-stream")) return .failed;
        s.fruitless_resumes = 0;
        s.setStream(answer);
        kept = true;
        return .open;
    }

    /// Waits `ms` (the server's `retry`) before a reconnection, ended at once by `cancel_fd`
    /// (Canceled) and never past the request's deadline (Timeout).
    fn pause(s: *Session, ms: u32, deadline_ns: i64) IoError!void {
        const until = @min(stdio.deadlineIn(ms), deadline_ns);
        while (true) {
            const left = until - stdio.now();
            if (left <= 0) break;
            var fds = [1]c.pollfd{.{ .fd = s.cancel_fd, .events = c.POLL.IN, .revents = 0 }};
            const n = c.poll(&fds, if (s.cancel_fd >= 0) 1 else 0, @intCast(@divFloor(left + std.time.ns_per_ms - 1, std.time.ns_per_ms)));
            if (n > 0) return error.Canceled;
        }
        if (stdio.now() >= deadline_ns) return s.timeout();
    }

    /// Queues `text` (owned by the gpa: the session's now, freed on failure too): a batch's
    /// messages one by one (an empty batch is no message), anything else as it is (the client
    /// judges it).
    fn queue(s: *Session, text: []u8) IoError!void {
        if (!isBatch(text)) return s.queueWhole(text);
        var parsed = std.json.parseFromSlice(std.json.Value, s.gpa, text, .{}) catch |err| switch (err) {
            error.OutOfMemory => {
                s.gpa.free(text);
                return error.OutOfMemory;
            },
            else => return s.queueWhole(text), // not JSON: the client finds it garbage
        };
        defer parsed.deinit();
        if (parsed.value != .array) return s.queueWhole(text);
        defer s.gpa.free(text);
        for (parsed.value.array.items) |message| {
            try s.queueWhole(std.json.Stringify.valueAlloc(s.gpa, message, .{}) catch return error.OutOfMemory);
        }
    }

    fn queueWhole(s: *Session, text: []u8) IoError!void {
        s.queued.append(s.gpa, text) catch {
            s.gpa.free(text);
            return error.OutOfMemory;
        };
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

    fn post(s: *Session, arena: Allocator, answer: *oneshot.Answer, method: std.http.Method, body: []const u8, deadline_ns: i64) IoError!void {
        return s.request(arena, answer, .{ .method = method, .body = body }, deadline_ns);
    }

    const Exchange = struct {
        method: std.http.Method,
        body: []const u8 = "",
        accept: []const u8 = "application/json, text/event-stream",
        /// A GET resuming an SSE answer after this event.
        last_event_id: ?[]const u8 = null,
    };

    /// Opens a request to the server with the session's headers; its head is read.
    fn request(s: *Session, arena: Allocator, answer: *oneshot.Answer, x: Exchange, deadline_ns: i64) IoError!void {
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
        if (x.last_event_id) |id| try headers.add("last-event-id", id);
        var detail: errors.Detail = .{};
        defer detail.deinit(s.gpa);
        _ = c.pthread_mutex_lock(s.lock);
        defer _ = c.pthread_mutex_unlock(s.lock);
        oneshot.open(answer, s.agent, arena, .{
            .method = x.method,
            .url = s.options.url,
            .body = x.body,
            .headers = &headers,
            .accept = x.accept,
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
        _ = c.pthread_mutex_lock(&s.stream_lock);
        s.stream = null;
        s.stream_reader = null;
        _ = c.pthread_mutex_unlock(&s.stream_lock);
        s.endAnswer(answer);
        s.gpa.destroy(answer);
    }

    fn setStream(s: *Session, answer: *oneshot.Answer) void {
        _ = c.pthread_mutex_lock(&s.stream_lock);
        defer _ = c.pthread_mutex_unlock(&s.stream_lock);
        s.stream = answer;
        s.stream_reader = answer.response.reader(&s.stream_buffer);
    }

    /// From another thread: ends a read of the stream that blocks in the socket (a chunk begun,
    /// so the read did not wait on `cancel_fd` first): its deadline set to now, the watchdog
    /// shuts the socket down.
    fn interrupt(s: *Session) void {
        _ = c.pthread_mutex_lock(&s.stream_lock);
        defer _ = c.pthread_mutex_unlock(&s.stream_lock);
        if (s.stream) |answer| answer.setDeadline(1);
    }

    fn dropQueued(s: *Session) void {
        for (s.queued.items[s.queued_next..]) |q| s.gpa.free(q);
        s.queued.clearRetainingCapacity();
        s.queued_next = 0;
    }

    fn forgetEventId(s: *Session) void {
        if (s.last_event_id) |id| s.gpa.free(id);
        s.last_event_id = null;
    }

    fn setProblem(s: *Session, comptime fmt: []const u8, args: anytype) void {
        const text = std.fmt.bufPrint(&s.problem, fmt, args) catch s.problem[0..];
        s.problem_len = text.len;
    }
};

/// The reader of a session's GET stream. A thread of its own, not the stream's fd in the
/// round's wait: the stream is read between turns too (a list change must be known before the
/// next turn's first request, when no round waits), a round's MCP calls already run on threads
/// of their own (one per server), and the stepped path would otherwise need one more fd to park
/// on. The thread blocks only on the stream's socket and `stop_fd`; the client learns what it
/// read through an atomic flag, so no lock is held across the session's other requests.
/// It reconnects a stream that drops (with `Last-Event-ID` when the server gave ids, after the
/// server's `retry`, else 1 s, capped), at most `max_reconnects` times in a row without an
/// event; a 405 (the server has no GET stream) or another 4xx ends it at once.
pub const Listener = struct {
    gpa: Allocator,
    /// A session of its own (the server's session id and version, the agent's connections and
    /// the lock), whose SSE reading and resumption it shares with the requests' answers.
    reader: *Session,
    thread: std.Thread,
    /// Written at `stop`: ends the thread's waits (as a turn's cancel ends a request's).
    stop_fd: c.fd_t,
    tools_changed: std.atomic.Value(bool) = .init(false),
    /// How the last GET went, for tests and the log: opened, refused (405), gave up.
    outcome: std.atomic.Value(Outcome) = .init(.opening),

    pub const Outcome = enum(u8) { opening, open, none, gave_up, stopped };
    const max_reconnects = 5;
    const default_retry_ms = 1_000;

    fn start(parent: *Session) !*Listener {
        const gpa = parent.gpa;
        const l = try gpa.create(Listener);
        errdefer gpa.destroy(l);
        const fd = c.eventfd(0, std.os.linux.EFD.CLOEXEC);
        if (fd < 0) return error.SystemResources;
        errdefer _ = c.close(fd);
        const reader = try Session.open(gpa, parent.agent, parent.lock, parent.options);
        errdefer reader.close();
        reader.is_listener = true;
        reader.cancel_fd = fd;
        reader.protocol_version = parent.protocol_version;
        if (parent.session_id) |id| reader.session_id = try gpa.dupe(u8, id);
        l.* = .{ .gpa = gpa, .reader = reader, .thread = undefined, .stop_fd = fd };
        l.thread = try std.Thread.spawn(.{}, run, .{l});
        return l;
    }

    /// Ends the thread (its wait woken by `stop_fd`), joins it, closes the stream, frees all.
    fn stop(l: *Listener) void {
        // The thread's waits poll stop_fd; a read inside a chunk does not: interrupt it (after
        // the write, so a stream opened meanwhile is seen stopped by the thread's own check).
        _ = c.write(l.stop_fd, &std.mem.toBytes(@as(u64, 1)), 8);
        l.reader.interrupt();
        l.thread.join();
        l.reader.close();
        _ = c.close(l.stop_fd);
        l.gpa.destroy(l);
    }

    fn stopped(l: *Listener) bool {
        var fds = [1]c.pollfd{.{ .fd = l.stop_fd, .events = c.POLL.IN, .revents = 0 }};
        return c.poll(&fds, 1, 0) > 0;
    }

    fn run(l: *Listener) void {
        const s = l.reader;
        var failures: u8 = 0;
        while (failures <= max_reconnects) : (failures += 1) {
            if (failures > 0) {
                s.endStream();
                s.pause(if (s.retry_ms > 0) s.retry_ms else default_retry_ms, stdio.deadlineIn(max_retry_ms + 1_000)) catch {};
            }
            if (l.stopped()) return l.outcome.store(.stopped, .release);
            switch (s.openGet() catch .failed) {
                .none => return l.outcome.store(.none, .release),
                .failed => continue,
                .open => l.outcome.store(.open, .release),
            }
            if (l.stopped()) return l.outcome.store(.stopped, .release);
            while (true) {
                const text = s.readLine(stdio.deadlineIn(std.time.s_per_day * 1000)) catch break;
                failures = 0;
                l.take(text);
            }
            if (l.stopped()) return l.outcome.store(.stopped, .release);
        }
        l.outcome.store(.gave_up, .release);
    }

    /// One message of the stream: a list change is noted; the rest (log messages, the server's
    /// requests, which would need a POST of their own to answer) are dropped.
    fn take(l: *Listener, text: []const u8) void {
        var arena_state: std.heap.ArenaAllocator = .init(l.gpa);
        defer arena_state.deinit();
        const message = jsonrpc.parse(arena_state.allocator(), text) catch return;
        if (message == .notification and std.mem.eql(u8, message.notification.method, "notifications/tools/list_changed")) {
            l.tools_changed.store(true, .release);
        }
    }
};

/// A JSON-RPC batch: a JSON array (what else is in it is the parser's to judge).
fn isBatch(text: []const u8) bool {
    const trimmed = std.mem.trimStart(u8, text, " \t\r\n");
    return trimmed.len > 0 and trimmed[0] == '[';
}

fn startsWithIgnoreCase(text: []const u8, prefix: []const u8) bool {
    return text.len >= prefix.len and std.ascii.eqlIgnoreCase(text[0..prefix.len], prefix);
}
