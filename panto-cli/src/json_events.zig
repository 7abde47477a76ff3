//! --json: one JSON object a line per event of the turn, in the conformance transcript's
//! shape (tests/conformance/README.md, "The normalized transcript"), so scripts read the
//! same words as every binding prints.
const std = @import("std");
const panto = @import("panto");
const exit_codes = @import("exit_codes.zig");

const Stringify = std.json.Stringify;

pub fn writeEvent(w: *std.Io.Writer, e: *const panto.Event) std.Io.Writer.Error!void {
    var s: Stringify = .{ .writer = w };
    try s.beginObject();
    try field(&s, "event", @tagName(e.*));
    switch (e.*) {
        .message_start => |m| {
            try field(&s, "id", m.id);
            try field(&s, "model", m.model);
        },
        .block_start => |b| {
            try field(&s, "index", b.index);
            try field(&s, "kind", @tagName(b.kind));
        },
        .content_delta => |d| {
            try field(&s, "index", d.index);
            try field(&s, "kind", @tagName(d.kind));
            try field(&s, "text", d.text);
        },
        .block_complete => |b| {
            try field(&s, "index", b.index);
            try field(&s, "kind", @tagName(b.kind));
            try field(&s, "text", b.text);
        },
        .message_end, .message_complete => |m| try complete(&s, m),
        .tool_details => |t| {
            try field(&s, "index", t.index);
            try field(&s, "id", t.id);
            try field(&s, "name", t.name);
        },
        .tool_call_start => |t| {
            try field(&s, "id", t.id);
            try field(&s, "name", t.name);
            try field(&s, "input", RawJson{ .text = t.input });
            try field(&s, "awaiting_result", t.awaiting_result);
        },
        .tool_progress => |p| {
            try field(&s, "id", p.id);
            try field(&s, "name", p.name);
            try field(&s, "text", p.text);
            try field(&s, "fraction", p.fraction);
        },
        .user_message => |u| {
            try field(&s, "source", @tagName(u.source));
            try field(&s, "text", u.text);
        },
        .approval_request => |a| {
            try s.objectField("calls");
            try s.beginArray();
            for (a.calls) |c| {
                try s.beginObject();
                try field(&s, "id", c.id.slice());
                try field(&s, "name", c.name.slice());
                try field(&s, "input", RawJson{ .text = c.input.slice() });
                try s.endObject();
            }
            try s.endArray();
        },
        .tool_result => |r| {
            try field(&s, "id", r.id);
            try field(&s, "name", r.name);
            try field(&s, "content", r.content);
            try field(&s, "is_error", r.is_error);
            try s.objectField("parts");
            try s.beginArray();
            for (r.parts) |p| {
                try s.beginObject();
                try field(&s, "kind", @tagName(p.kind));
                try field(&s, "text", p.text.slice());
                try field(&s, "media_type", p.media_type.slice());
                try field(&s, "name", p.name.slice());
                try field(&s, "byte_size", p.byte_size);
                try field(&s, "width", p.width);
                try field(&s, "height", p.height);
                try field(&s, "data_len", p.data.len);
                try s.endObject();
            }
            try s.endArray();
        },
        .provider_retry => |r| {
            try field(&s, "attempt", r.attempt);
            try field(&s, "delay_ms", r.delay_ms);
            try field(&s, "http_status", r.http_status);
            try field(&s, "reason", r.reason);
        },
        .compaction_start => |c| {
            try field(&s, "tokens_before", c.tokens_before);
            try field(&s, "reason", c.reason);
        },
        .compaction_end => |c| {
            try field(&s, "tokens_before", c.tokens_before);
            try field(&s, "tokens_after", c.tokens_after);
            try field(&s, "message_count", c.message_count);
            try field(&s, "summary", c.summary);
        },
    }
    try s.endObject();
    try w.writeByte('\n');
}

fn complete(s: *Stringify, m: panto.event.MessageComplete) !void {
    try field(s, "stop_reason", @tagName(m.stop_reason));
    try field(s, "provider_stop_reason", m.provider_stop_reason);
    try field(s, "usage", m.usage);
}

/// The line after a turn that ended: {"event":"done"}.
pub fn writeDone(w: *std.Io.Writer) std.Io.Writer.Error!void {
    try w.writeAll("{\"event\":\"done\"}\n");
}

/// The last line of a turn that failed: the transcript's error line.
pub fn writeError(w: *std.Io.Writer, err: anyerror, http_status: u16, error_type: []const u8, message: []const u8) std.Io.Writer.Error!void {
    var s: Stringify = .{ .writer = w };
    try s.beginObject();
    try field(&s, "event", "error");
    try field(&s, "code", exit_codes.name(err));
    try field(&s, "http_status", http_status);
    try field(&s, "type", error_type);
    try field(&s, "message", message);
    try s.endObject();
    try w.writeByte('\n');
}

/// A remark of the command (the adaptive thinking fallback): {"event":"note","text":...}.
pub fn writeNote(w: *std.Io.Writer, text: []const u8) std.Io.Writer.Error!void {
    var s: Stringify = .{ .writer = w };
    try s.beginObject();
    try field(&s, "event", "note");
    try field(&s, "text", text);
    try s.endObject();
    try w.writeByte('\n');
}

/// The first line of a run that keeps a session: which one, so a script can go on with it
/// (--session ID).
pub fn writeSession(w: *std.Io.Writer, info: panto.Agent.SessionInfo, message_count: usize) std.Io.Writer.Error!void {
    var s: Stringify = .{ .writer = w };
    try s.beginObject();
    try field(&s, "event", "session");
    try field(&s, "id", info.id);
    try field(&s, "resumed", info.resumed);
    try field(&s, "message_count", message_count);
    try s.endObject();
    try w.writeByte('\n');
}

fn field(s: *Stringify, name: []const u8, value: anytype) !void {
    try s.objectField(name);
    try s.write(value);
}

/// A tool call's input: the JSON the model sent as it is, or a string when it is not JSON.
pub const RawJson = struct {
    text: []const u8,

    pub fn jsonStringify(r: RawJson, s: *Stringify) !void {
        if (std.json.validate(std.heap.smp_allocator, r.text) catch false) {
            try s.beginWriteRaw();
            try s.writer.writeAll(r.text);
            s.endWriteRaw();
        } else try s.write(r.text);
    }
};

test "a delta line" {
    var out: std.Io.Writer.Allocating = .init(std.testing.allocator);
    defer out.deinit();
    const e: panto.Event = .{ .content_delta = .{ .index = 0, .kind = .text, .text = "a\"b" } };
    try writeEvent(&out.writer, &e);
    try std.testing.expectEqualStrings("{\"event\":\"content_delta\",\"index\":0,\"kind\":\"text\",\"text\":\"a\\\"b\"}\n", out.written());
}
