//! The lines of a session file (see panto.h, "Sessions"): each entry is one JSON object on
//! one line, ending in "\n".
//!   {"type":"session","version":1,"id":I,"created":T,"cwd":C,"parent":null|{"id","message_count"}}
//!   {"type":"message","message":M}
//!   {"type":"truncate","message_count":K}
//!   {"type":"replace","messages":[M...]}
//!   {"type":"compaction","summary_message":M,"first_kept":K,"tokens_before":N,"tokens_after":N}
//!   {"type":"config","config":{provider, model, system, thinking, max_tokens: those set}}
//!   {"type":"name","name":N}   (the session named by its user; the last one holds)
//!   {"type":"pending_round","calls":[{"id","state"}...],"results"?:M}
//!       (the conversation's last message is a tool round's, waiting for a person: each
//!       call's state, turn/pending_round.zig, and M, a user message of the answered calls'
//!       tool_result blocks; the last one holds until an entry changes the messages)
//! M is a message object of the export format (conversation JSON).
const std = @import("std");
const Writer = std.Io.Writer;
const Message = @import("../conversation.zig").Message;
const Block = @import("../conversation.zig").Block;
const conversation_json = @import("../conversation_json.zig");

pub const format_version = 1;

pub const Parent = struct { id: []const u8, message_count: u64 };

pub const Header = struct {
    id: []const u8,
    /// RFC 3339, UTC, milliseconds.
    created: []const u8,
    cwd: []const u8,
    parent: ?Parent = null,
};

pub fn header(w: *Writer, h: Header) Writer.Error!void {
    var s: std.json.Stringify = .{ .writer = w };
    try s.beginObject();
    try field(&s, "type", "session");
    try s.objectField("version");
    try s.write(format_version);
    try field(&s, "id", h.id);
    try field(&s, "created", h.created);
    try field(&s, "cwd", h.cwd);
    try s.objectField("parent");
    if (h.parent) |p| {
        try s.beginObject();
        try field(&s, "id", p.id);
        try s.objectField("message_count");
        try s.write(p.message_count);
        try s.endObject();
    } else try s.write(null);
    try s.endObject();
    try w.writeByte('\n');
}

pub fn message(w: *Writer, m: *const Message) Writer.Error!void {
    try w.writeAll("{\"type\":\"message\",\"message\":");
    try writeMessage(w, m);
    try w.writeAll("}\n");
}

pub fn truncate(w: *Writer, message_count: usize) Writer.Error!void {
    try w.print("{{\"type\":\"truncate\",\"message_count\":{d}}}\n", .{message_count});
}

pub fn replace(w: *Writer, messages: []const Message) Writer.Error!void {
    try w.writeAll("{\"type\":\"replace\",\"messages\":[");
    for (messages, 0..) |*m, i| {
        if (i > 0) try w.writeByte(',');
        try writeMessage(w, m);
    }
    try w.writeAll("]}\n");
}

pub const Compaction = struct {
    summary_message: *const Message,
    /// The live conversation becomes [summary_message] + live[first_kept..].
    first_kept: usize,
    tokens_before: u64,
    tokens_after: u64,
};

pub fn compaction(w: *Writer, c: Compaction) Writer.Error!void {
    try w.writeAll("{\"type\":\"compaction\",\"summary_message\":");
    try writeMessage(w, c.summary_message);
    try w.print(",\"first_kept\":{d},\"tokens_before\":{d},\"tokens_after\":{d}}}\n", .{ c.first_kept, c.tokens_before, c.tokens_after });
}

/// The configuration keys a session records: what shapes the conversation, never a secret
/// (api_key) nor where requests go (base_url), nor anything else.
pub const ConfigRecord = struct {
    provider: ?[]const u8 = null,
    model: ?[]const u8 = null,
    /// Set: the system prompt, whose value may be null (none).
    system: ?(?[]const u8) = null,
    thinking: ?[]const u8 = null,
    max_tokens: ?u32 = null,

    pub fn isEmpty(r: ConfigRecord) bool {
        return r.provider == null and r.model == null and r.system == null and r.thinking == null and r.max_tokens == null;
    }
};

pub fn config(w: *Writer, r: ConfigRecord) Writer.Error!void {
    var s: std.json.Stringify = .{ .writer = w };
    try s.beginObject();
    try field(&s, "type", "config");
    try s.objectField("config");
    try s.beginObject();
    if (r.provider) |v| try field(&s, "provider", v);
    if (r.model) |v| try field(&s, "model", v);
    if (r.system) |v| {
        try s.objectField("system");
        try s.write(v);
    }
    if (r.thinking) |v| try field(&s, "thinking", v);
    if (r.max_tokens) |v| {
        try s.objectField("max_tokens");
        try s.write(v);
    }
    try s.endObject();
    try s.endObject();
    try w.writeByte('\n');
}

/// The session's name, as its user calls it (a picker shows it beside the first prompt).
pub fn named(w: *Writer, text: []const u8) Writer.Error!void {
    var s: std.json.Stringify = .{ .writer = w };
    try s.beginObject();
    try field(&s, "type", "name");
    try field(&s, "name", text);
    try s.endObject();
    try w.writeByte('\n');
}

/// A call of a round that waits for a person, and where it is (turn/pending_round.zig).
pub const PendingCall = struct { id: []const u8, state: []const u8 };

/// The round the conversation's last message began: its calls' states and the results of
/// those answered (tool_result blocks; none: no "results").
pub fn pendingRound(w: *Writer, calls: []const PendingCall, results: []const Block) Writer.Error!void {
    var s: std.json.Stringify = .{ .writer = w };
    try s.beginObject();
    try field(&s, "type", "pending_round");
    try s.objectField("calls");
    try s.beginArray();
    for (calls) |c| {
        try s.beginObject();
        try field(&s, "id", c.id);
        try field(&s, "state", c.state);
        try s.endObject();
    }
    try s.endArray();
    if (results.len > 0) {
        try s.objectField("results");
        try conversation_json.writeMessage(&s, .{ .role = .user, .blocks = @constCast(results) });
    }
    try s.endObject();
    try w.writeByte('\n');
}

/// A message object of the export format.
fn writeMessage(w: *Writer, m: *const Message) Writer.Error!void {
    var s: std.json.Stringify = .{ .writer = w };
    try conversation_json.writeMessage(&s, m.*);
}

fn field(s: *std.json.Stringify, name: []const u8, value: []const u8) Writer.Error!void {
    try s.objectField(name);
    try s.write(value);
}
