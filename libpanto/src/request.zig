//! What goes into a provider request: the configuration, the conversation and the tools the
//! agent may use, and its headers. Each provider (providers/) renders them in its own format.
const Config = @import("config.zig").Config;
const Header = @import("config.zig").Header;
const conversation = @import("conversation.zig");
const errors = @import("errors.zig");
const Conversation = conversation.Conversation;
const std = @import("std");
const tools = @import("tools.zig");
const CachePlan = @import("providers/cache_plan.zig").Plan;
const Tool = tools.Tool;

pub const Purpose = enum { turn, count };

pub const RequestParts = struct {
    config: Config,
    conversation: *const Conversation,
    tools: []const Tool,
    granted: []const []const u8,
    /// What the body is for: a turn's request, or the same request to the provider's
    /// token-counting endpoint, which takes only what makes the prompt (no max_tokens,
    /// sampling or streaming members: token_count.zig).
    purpose: Purpose = .turn,

    pub fn counting(p: RequestParts) bool {
        return p.purpose == .count;
    }

    /// Whether the thinking of assistant message `m` goes into this request: only to the
    /// provider and model that wrote it (its signature is theirs; another model takes it for
    /// text the user wrote).
    pub fn sendsThinking(p: RequestParts, m: conversation.Message) bool {
        return std.mem.eql(u8, m.provider, @tagName(p.config.provider)) and std.mem.eql(u8, m.model, p.config.model);
    }

    /// The conversation's messages as the request sends them, in runs (see `Runs`).
    pub fn runs(p: RequestParts, sends: *const fn (RequestParts, conversation.Message) bool) Runs {
        return .{ .parts = p, .sends = sends };
    }

    /// Whether any tool may be sent: a request without usable tools has no tools field.
    pub fn hasTools(p: RequestParts) bool {
        for (p.tools) |t| if (t.allowedWith(p.granted)) return true;
        return false;
    }

    /// Writes the `"tools"` field in the provider's format, when any tool may be sent.
    pub fn writeTools(p: RequestParts, s: *std.json.Stringify, format: tools.Format) std.Io.Writer.Error!void {
        if (!p.hasTools()) return;
        try s.objectField("tools");
        try s.beginArray();
        for (p.tools) |t| if (t.allowedWith(p.granted)) try tools.writeOne(s, t, format);
        try s.endArray();
    }

    /// The user's extra_body members, last: after panto's own keys (request_options.zig
    /// refuses the keys panto writes).
    pub fn writeExtraBody(p: RequestParts, s: *std.json.Stringify) std.Io.Writer.Error!void {
        if (p.counting()) return; // (members meant for the turn: a counting endpoint may refuse them)
        for (p.config.request.extra_body) |m| {
            try s.objectField(m.key);
            try conversation.writeRawJson(s, m.value);
        }
    }
};

/// Messages `start..end` of the conversation, sent as one wire message of `role`: those of
/// them the provider `sends` (one that sends nothing, such as an assistant message whose
/// thinking is another model's, is skipped inside a run).
pub const Run = struct { role: conversation.Role, start: usize, end: usize };

/// The runs of a request: one per message sent, except that consecutive user messages make
/// one run. A conversation can hold two user messages in a row (a compaction summary before
/// the kept user message, an imported document, a turn whose answer failed or was canceled,
/// an answer left out because its thinking belongs to another model), which Anthropic
/// refuses or combines on its own terms; the stored conversation keeps them apart.
pub const Runs = struct {
    parts: RequestParts,
    sends: *const fn (RequestParts, conversation.Message) bool,
    next_index: usize = 0,

    pub fn next(r: *Runs) ?Run {
        const messages = r.parts.conversation.messages.items;
        while (r.next_index < messages.len and !r.sends(r.parts, messages[r.next_index])) r.next_index += 1;
        if (r.next_index == messages.len) return null;
        const start = r.next_index;
        const role = messages[start].role;
        r.next_index += 1;
        if (role == .user) {
            var i = r.next_index;
            while (i < messages.len) : (i += 1) {
                if (!r.sends(r.parts, messages[i])) continue;
                if (messages[i].role != .user) break;
                r.next_index = i + 1;
            }
        }
        return .{ .role = role, .start = start, .end = r.next_index };
    }
};

/// The wire's array of messages for the APIs whose messages are lists of typed parts
/// (Bedrock, Gemini): `{"role", CONTENT: [...]}` a run, a user run's tool results first (they
/// answer the calls of the message before), then its other blocks.
pub const PartsMessages = struct {
    /// The role an assistant run is sent as (a user run is `"user"`).
    assistant_role: []const u8,
    /// The member that holds a message's parts.
    content: []const u8,
    sends: *const fn (RequestParts, conversation.Message) bool,
    /// A tool result of the user run `run`.
    writeResult: *const fn (*std.json.Stringify, RequestParts, Run, conversation.Block) std.Io.Writer.Error!void,
    /// Any other block of a user run (text, media: the function skips what it does not send).
    writeUserBlock: *const fn (*std.json.Stringify, conversation.Block) std.Io.Writer.Error!void,
    /// An assistant message's parts.
    writeAssistant: *const fn (*std.json.Stringify, RequestParts, conversation.Message) std.Io.Writer.Error!void,
    /// A cache point, written after the parts of a run that holds a marked message (Bedrock's
    /// cachePoint block); null: the provider marks blocks itself, or does not cache.
    writeCachePoint: ?*const fn (*std.json.Stringify, *const CachePlan) std.Io.Writer.Error!void = null,

    pub fn write(f: PartsMessages, s: *std.json.Stringify, parts: RequestParts) std.Io.Writer.Error!void {
        return f.writeMarked(s, parts, null);
    }

    /// `write`, with the cache points of `marks` (see writeCachePoint).
    pub fn writeMarked(f: PartsMessages, s: *std.json.Stringify, parts: RequestParts, marks: ?*const CachePlan) std.Io.Writer.Error!void {
        const messages = parts.conversation.messages.items;
        try s.beginArray();
        var runs = parts.runs(f.sends);
        while (runs.next()) |run| {
            try s.beginObject();
            try s.objectField("role");
            try s.write(if (run.role == .user) "user" else f.assistant_role);
            try s.objectField(f.content);
            try s.beginArray();
            if (run.role == .user) {
                for (run.start..run.end) |i| for (messages[i].blocks) |b| if (b.kind == .tool_result) try f.writeResult(s, parts, run, b);
                for (run.start..run.end) |i| for (messages[i].blocks) |b| if (b.kind != .tool_result) try f.writeUserBlock(s, b);
            } else try f.writeAssistant(s, parts, messages[run.start]);
            if (f.writeCachePoint) |writePoint| if (marks) |plan| {
                for (run.start..run.end) |i| if (plan.marksMessage(i)) {
                    try writePoint(s, plan);
                    break;
                };
            };
            try s.endArray();
            try s.endObject();
        }
        try s.endArray();
    }
};

/// `"name": value` when the value is set.
pub fn writeOptional(s: *std.json.Stringify, name: []const u8, value: anytype) std.Io.Writer.Error!void {
    const v = value orelse return;
    try s.objectField(name);
    try s.write(v);
}

/// What a provider that signs its requests (providers.signRequest) signs: the request as it
/// goes out, once its body is written.
pub const Signing = struct {
    method: []const u8 = "POST",
    /// The URL's authority as sent in `host` (with its port when the URL names one).
    host: []const u8,
    /// The path as sent, percent-encoded.
    path: []const u8,
    body: []const u8,
    /// The time of signing, in seconds since the epoch.
    now: i64,
    /// A failure's detail (authentication or config: no credentials, no region).
    detail: *errors.Detail,
    /// The config's api_key, for a provider whose key is one of its credentials.
    api_key: ?[]const u8 = null,
};

pub const SignError = error{ OutOfMemory, Authentication, Config };

/// The request's headers beside std.http's own: accept, then the provider's (addHeaders),
/// then the user's (extra_headers, addUser). Their memory is the stream's, kept until the
/// request is sent.
pub const Headers = struct {
    list: *std.ArrayList(std.http.Header),
    authorization: std.http.Client.Request.Headers.Value = .omit,
    /// Memory for an authorization value made of parts, kept until the request is sent.
    auth_buffer: *std.ArrayList(u8),
    /// Memory for an anthropic-beta value joined from panto's and the user's.
    beta_buffer: *std.ArrayList(u8),
    /// The user's anthropic-beta went into panto's (joinBeta): addUser leaves it out.
    beta_joined: bool = false,
    /// Memory for a signer's short header value (a date), kept until the request is sent.
    date_buffer: [32]u8 = undefined,
    user_agent: []const u8 = "panto/" ++ @import("panto.zig").version,
    gpa: std.mem.Allocator,

    pub fn add(h: *Headers, name: []const u8, value: []const u8) std.mem.Allocator.Error!void {
        try h.list.append(h.gpa, .{ .name = name, .value = value });
    }

    /// `Authorization: Bearer KEY`.
    pub fn bearer(h: *Headers, key: []const u8) std.mem.Allocator.Error!void {
        try h.auth_buffer.appendSlice(h.gpa, "Bearer ");
        try h.auth_buffer.appendSlice(h.gpa, key);
        h.authorization = .{ .override = h.auth_buffer.items };
    }

    /// `anthropic-beta`: panto's own features (put in `beta_buffer`, comma-joined), joined
    /// with the user's (extra_headers' anthropic-beta), which addUser then leaves out.
    pub fn joinBeta(h: *Headers, extra: []const Header) std.mem.Allocator.Error!void {
        for (extra) |x| if (std.ascii.eqlIgnoreCase(x.name, "anthropic-beta")) {
            try h.beta_buffer.appendSlice(h.gpa, ",");
            try h.beta_buffer.appendSlice(h.gpa, x.value);
        };
        h.beta_joined = true;
        try h.add("anthropic-beta", h.beta_buffer.items);
    }

    /// The user's headers (checked by request_options.zig: none is one panto writes): a
    /// user-agent replaces panto's.
    pub fn addUser(h: *Headers, extra: []const Header) std.mem.Allocator.Error!void {
        for (extra) |x| {
            if (std.ascii.eqlIgnoreCase(x.name, "user-agent")) {
                h.user_agent = x.value;
            } else if (!(h.beta_joined and std.ascii.eqlIgnoreCase(x.name, "anthropic-beta"))) {
                try h.add(x.name, x.value);
            }
        }
    }

    pub fn items(h: *const Headers) []const std.http.Header {
        return h.list.items;
    }
};
