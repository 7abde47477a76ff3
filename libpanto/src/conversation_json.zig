//! A conversation as JSON, format v1 (include/panto.h, docs/conversations.md): the one writer of
//! messages (panto_agent_conversation, export, the session file) and the parser that checks
//! what comes back (import, the session loader).
//!
//! Writing:
//!   writeMessage(s: *std.json.Stringify, m: Message)   one message object
//!   writeMessages(w: *std.Io.Writer, messages)          the "messages" array
//!   writeExport(w: *std.Io.Writer, messages)            {"version": 1, "messages": [...]}
//! Reading (strings owned by `gpa`; free with conversation.freeMessage / freeMessages):
//!   parseExport(gpa, json_text, diag) ![]Message        a whole document, checked
//!   parseMessageJson(gpa, json_text, diag) !Message     the text of one message object
//!   parseMessageValue(gpa, value, diag) !Message        one message already parsed
//!                                                        (parse with .parse_numbers = false)
//!   checkFollows(prev, m, index, diag)                   tool results of `m` answer exactly
//!                                                        the calls of `prev` (a loader that
//!                                                        parses message by message calls it)
//!   checkNoOpenCalls(last, count, diag)                  the last message's calls got results
//! Every failure is error.InvalidConversation with `diag` naming the first problem and its
//! place ("messages[3].content[1]: ..."), or error.OutOfMemory; nothing is left allocated.
//! A document written by the writer parses back into messages the writer writes byte for byte
//! the same (a tool call's input is kept as compact JSON, numbers as written).
const std = @import("std");
const Allocator = std.mem.Allocator;
const Value = std.json.Value;
const conversation = @import("conversation.zig");
const Message = conversation.Message;
const Block = conversation.Block;
const ev = @import("event.zig");
const media = @import("media.zig");
const json_depth = @import("json_depth.zig");
const tools = @import("tools.zig");
const providers = @import("providers.zig");
const content = @import("content.zig");

pub const version = 1;

// ---- Writing ----------------------------------------------------------------------------

pub fn writeExport(w: *std.Io.Writer, messages: []const Message) std.Io.Writer.Error!void {
    var s: std.json.Stringify = .{ .writer = w };
    try s.beginObject();
    try s.objectField("version");
    try s.write(version);
    try s.objectField("messages");
    try writeArray(&s, messages);
    try s.endObject();
}

pub fn writeMessages(w: *std.Io.Writer, messages: []const Message) std.Io.Writer.Error!void {
    var s: std.json.Stringify = .{ .writer = w };
    try writeArray(&s, messages);
}

fn writeArray(s: *std.json.Stringify, messages: []const Message) std.Io.Writer.Error!void {
    try s.beginArray();
    for (messages) |m| try writeMessage(s, m);
    try s.endArray();
}

/// One message: role, content, then (a user message the caller marked) cache, (assistant)
/// provider, model, stop_reason, usage, then (a summary) compaction.
pub fn writeMessage(s: *std.json.Stringify, m: Message) std.Io.Writer.Error!void {
    try s.beginObject();
    try s.objectField("role");
    try s.write(@tagName(m.role));
    try s.objectField("content");
    try s.beginArray();
    for (m.blocks) |b| try writeBlock(s, b);
    try s.endArray();
    if (m.cache) {
        try s.objectField("cache");
        try s.write(true);
    }
    if (m.role == .assistant) {
        try s.objectField("provider");
        try s.write(m.provider);
        try s.objectField("model");
        try s.write(m.model);
        try s.objectField("stop_reason");
        try s.write(@tagName(m.stop_reason));
        try s.objectField("usage");
        try s.write(m.usage); // (the server tools' counts only when not 0: Usage.jsonStringify)
        if (m.container.len > 0) {
            try s.objectField("container");
            try s.write(m.container);
        }
        // A JSON array as a string, as a server block's JSON.
        if (m.reasoning_details.len > 0) {
            try s.objectField("reasoning_details");
            try s.write(m.reasoning_details);
        }
    }
    if (m.compaction) |c| {
        try s.objectField("compaction");
        try s.beginObject();
        try s.objectField("message_count");
        try s.write(c.message_count);
        try s.objectField("tokens_before");
        try s.write(c.tokens_before);
        try s.endObject();
    }
    try s.endObject();
}

fn writeBlock(s: *std.json.Stringify, b: Block) std.Io.Writer.Error!void {
    try s.beginObject();
    try s.objectField("type");
    try s.write(@tagName(b.kind));
    switch (b.kind) {
        .text, .thinking, .redacted_thinking => {
            try s.objectField("text");
            try s.write(b.text);
            if (b.signature.len > 0) {
                try s.objectField("signature");
                try s.write(b.signature);
            }
            if (b.kind == .thinking and b.name.len > 0) {
                try s.objectField("name");
                try s.write(b.name);
            }
            // A JSON array as a string, as a server block's JSON (see below).
            if (b.citations.len > 0) {
                try s.objectField("citations");
                try s.write(b.citations);
            }
        },
        .tool_call => {
            try s.objectField("id");
            try s.write(b.id);
            try s.objectField("name");
            try s.write(b.name);
            try s.objectField("input");
            try conversation.writeRawJson(s, b.text);
            if (b.signature.len > 0) {
                try s.objectField("signature");
                try s.write(b.signature);
            }
        },
        .tool_result => {
            try s.objectField("id");
            try s.write(b.id);
            try s.objectField("content");
            if (b.parts.len == 0) try s.write(b.text) else {
                try s.beginArray();
                for (b.parts) |p| try writeBlock(s, p);
                try s.endArray();
            }
            try s.objectField("is_error");
            try s.write(b.is_error);
        },
        .image, .document => {
            try s.objectField("media_type");
            try s.write(b.media_type);
            try s.objectField("data");
            try s.write(b.text);
            if (b.name.len > 0) {
                try s.objectField("name");
                try s.write(b.name);
            }
        },
        // Its JSON as a string: every language carries it byte for byte (a JSON value would
        // be re-encoded, its keys reordered, on the way through a binding).
        .server_block => {
            try s.objectField("name");
            try s.write(b.name);
            try s.objectField("json");
            try s.write(b.text);
        },
    }
    try s.endObject();
}

// ---- Reading ----------------------------------------------------------------------------

pub const ParseError = error{ InvalidConversation, OutOfMemory };

/// The first problem found (config.Diagnostic's message buffer, this module's error).
pub const Diagnostic = struct {
    inner: @import("config.zig").Diagnostic = .{},

    pub fn message(d: *const Diagnostic) []const u8 {
        return d.inner.message();
    }

    pub fn fail(d: *Diagnostic, comptime fmt: []const u8, args: anytype) error{InvalidConversation} {
        d.inner.fail(fmt, args) catch {};
        return error.InvalidConversation;
    }
};

/// Where a problem is: "messages[3]." in a document, "" in a lone message; then the block.
const Place = struct {
    message: ?usize,
    block: ?usize = null,
    part: ?usize = null,

    pub fn format(p: Place, w: *std.Io.Writer) std.Io.Writer.Error!void {
        if (p.message) |i| try w.print("messages[{d}]", .{i});
        if (p.block) |j| {
            if (p.message != null) try w.writeByte('.');
            try w.print("content[{d}]", .{j});
            if (p.part) |k| try w.print(".content[{d}]", .{k});
        }
        if (p.message == null and p.block == null) try w.writeAll("message");
    }
};

const parse_options: std.json.ParseOptions = .{ .parse_numbers = false };

/// Parses and checks a whole document; the messages are owned by `gpa` (freeMessages).
pub fn parseExport(gpa: Allocator, json_text: []const u8, diag: *Diagnostic) ParseError![]Message {
    var arena: std.heap.ArenaAllocator = .init(gpa);
    defer arena.deinit();
    const top = try parseValue(arena.allocator(), json_text, "the conversation", diag);
    if (top != .object) return diag.fail("the conversation is not a JSON object", .{});
    var it = top.object.iterator();
    while (it.next()) |entry| {
        const key = entry.key_ptr.*;
        if (!std.mem.eql(u8, key, "version") and !std.mem.eql(u8, key, "messages"))
            return diag.fail("unknown key \"{s}\" in the conversation", .{key});
    }
    const v = top.object.get("version") orelse return diag.fail("the conversation has no \"version\"", .{});
    const n = count(v) orelse return diag.fail("\"version\" is not a non-negative integer", .{});
    if (n != version) return diag.fail("unsupported conversation version {d}", .{n});
    const list = top.object.get("messages") orelse return diag.fail("the conversation has no \"messages\"", .{});
    if (list != .array) return diag.fail("\"messages\" is not an array", .{});

    const items = list.array.items;
    const out = try gpa.alloc(Message, items.len);
    var filled: usize = 0;
    errdefer {
        for (out[0..filled]) |m| conversation.freeMessage(gpa, m);
        gpa.free(out);
    }
    for (items, 0..) |item, i| {
        out[i] = try parseMessageAt(gpa, item, .{ .message = i }, diag);
        filled += 1;
        try checkFollows(if (i > 0) &out[i - 1] else null, &out[i], i, diag);
    }
    if (filled > 0) try checkNoOpenCalls(&out[filled - 1], filled, diag);
    return out;
}

/// Parses the text of one message object (no pairing checks: see checkFollows).
pub fn parseMessageJson(gpa: Allocator, json_text: []const u8, diag: *Diagnostic) ParseError!Message {
    var arena: std.heap.ArenaAllocator = .init(gpa);
    defer arena.deinit();
    const value = try parseValue(arena.allocator(), json_text, "the message", diag);
    return parseMessageAt(gpa, value, .{ .message = null }, diag);
}

/// Checks one message already parsed as a std.json.Value (numbers as strings:
/// `.parse_numbers = false`, nesting checked with json_depth).
pub fn parseMessageValue(gpa: Allocator, value: Value, diag: *Diagnostic) ParseError!Message {
    return parseMessageAt(gpa, value, .{ .message = null }, diag);
}

fn parseValue(arena: Allocator, json_text: []const u8, what: []const u8, diag: *Diagnostic) ParseError!Value {
    // The writer and the tool-input copy re-write values with std.json.Stringify, which
    // asserts its depth: bounded first (json_depth.zig).
    if (json_depth.textTooDeep(json_text)) return diag.fail("{s} is " ++ json_depth.nested_too_deep, .{what});
    return std.json.parseFromSliceLeaky(Value, arena, json_text, parse_options) catch |err| switch (err) {
        error.OutOfMemory => error.OutOfMemory,
        error.DuplicateField => diag.fail("{s} has a key twice", .{what}),
        else => diag.fail("{s} is not valid JSON", .{what}),
    };
}

/// The tool results of `m` (messages[index]) answer exactly the tool calls of `prev`, one
/// each, and a message after tool calls is a user message that answers them.
pub fn checkFollows(prev: ?*const Message, m: *const Message, index: usize, diag: *Diagnostic) error{InvalidConversation}!void {
    const calls: []const Block = if (prev) |p| (if (p.role == .assistant) p.blocks else &.{}) else &.{};
    const call_count = countKind(calls, .tool_call);
    if (call_count > 0 and m.role != .user)
        return diag.fail("messages[{d}]: tool call \"{s}\" of messages[{d}] gets no result (an assistant message follows)", .{ index, firstCallId(calls), index - 1 });
    var results: usize = 0;
    for (m.blocks, 0..) |b, j| {
        if (b.kind != .tool_result) continue;
        results += 1;
        const answered = for (calls) |c| {
            if (c.kind == .tool_call and std.mem.eql(u8, c.id, b.id)) break true;
        } else false;
        if (!answered) {
            if (index == 0) return diag.fail("messages[0].content[{d}]: tool_result \"{s}\" answers no tool call", .{ j, b.id });
            return diag.fail("messages[{d}].content[{d}]: tool_result \"{s}\" answers no tool call of messages[{d}]", .{ index, j, b.id, index - 1 });
        }
        for (m.blocks[0..j]) |earlier| if (earlier.kind == .tool_result and std.mem.eql(u8, earlier.id, b.id))
            return diag.fail("messages[{d}].content[{d}]: a second tool_result for \"{s}\"", .{ index, j, b.id });
    }
    if (results < call_count) for (calls) |c| {
        if (c.kind != .tool_call) continue;
        const found = for (m.blocks) |b| {
            if (b.kind == .tool_result and std.mem.eql(u8, c.id, b.id)) break true;
        } else false;
        if (!found) return diag.fail("messages[{d}]: no tool_result for tool call \"{s}\" of messages[{d}]", .{ index, c.id, index - 1 });
    };
}

/// The last message (of `count`) leaves no tool call without its result.
pub fn checkNoOpenCalls(last: *const Message, message_count: usize, diag: *Diagnostic) error{InvalidConversation}!void {
    if (last.role == .assistant and countKind(last.blocks, .tool_call) > 0)
        return diag.fail("messages[{d}]: tool call \"{s}\" gets no result (the conversation ends)", .{ message_count - 1, firstCallId(last.blocks) });
}

fn firstCallId(blocks: []const Block) []const u8 {
    for (blocks) |b| if (b.kind == .tool_call) return b.id;
    return "";
}

fn countKind(blocks: []const Block, kind: conversation.BlockKind) usize {
    var n: usize = 0;
    for (blocks) |b| n += @intFromBool(b.kind == kind);
    return n;
}

fn parseMessageAt(gpa: Allocator, value: Value, place: Place, diag: *Diagnostic) ParseError!Message {
    if (value != .object) return diag.fail("{f}: not a JSON object", .{place});
    const obj = value.object;
    const role_value = obj.get("role") orelse return diag.fail("{f}: no \"role\"", .{place});
    if (role_value != .string) return diag.fail("{f}: \"role\" is not a string", .{place});
    const role: conversation.Role = std.meta.stringToEnum(conversation.Role, role_value.string) orelse
        return diag.fail("{f}: role must be \"user\" or \"assistant\", not \"{s}\"", .{ place, role_value.string });

    const allowed: []const []const u8 = switch (role) {
        .user => &.{ "role", "content", "cache", "compaction" },
        .assistant => &.{ "role", "content", "provider", "model", "stop_reason", "usage", "container", "reasoning_details" },
    };
    var it = obj.iterator();
    while (it.next()) |entry| if (!isOneOf(entry.key_ptr.*, allowed))
        return diag.fail("{f}: unknown key \"{s}\" in a{s} {s} message", .{ place, entry.key_ptr.*, if (role == .user) "" else "n", @tagName(role) });

    var m: Message = .{ .role = role, .blocks = &.{} };
    errdefer conversation.freeMessage(gpa, m);
    if (role == .assistant) {
        if (obj.get("provider")) |p| {
            if (p != .string) return diag.fail("{f}: \"provider\" is not a string", .{place});
            if (p.string.len > 0 and std.meta.stringToEnum(providers.Provider, p.string) == null)
                return diag.fail("{f}: provider must be " ++ providers.choices ++ ", not \"{s}\"", .{ place, p.string });
            m.provider = try gpa.dupe(u8, p.string);
        }
        if (obj.get("model")) |model| {
            if (model != .string) return diag.fail("{f}: \"model\" is not a string", .{place});
            m.model = try gpa.dupe(u8, model.string);
        }
        if (obj.get("stop_reason")) |r| {
            if (r != .string) return diag.fail("{f}: \"stop_reason\" is not a string", .{place});
            m.stop_reason = std.meta.stringToEnum(ev.StopReason, r.string) orelse
                return diag.fail("{f}: unknown stop_reason \"{s}\"", .{ place, r.string });
        }
        if (obj.get("usage")) |u| m.usage = try parseUsage(u, place, diag);
        if (obj.get("container")) |c| {
            if (c != .string or c.string.len == 0) return diag.fail("{f}: \"container\" is not a non-empty string", .{place});
            m.container = try gpa.dupe(u8, c.string);
        }
        if (obj.get("reasoning_details")) |d| {
            if (d != .string) return diag.fail("{f}: \"reasoning_details\" is not a string", .{place});
            try checkReasoningDetails(gpa, d.string, place, diag);
            m.reasoning_details = try gpa.dupe(u8, d.string);
        }
    } else {
        if (obj.get("compaction")) |c| m.compaction = try parseCompaction(c, place, diag);
        if (obj.get("cache")) |c| {
            if (c != .bool) return diag.fail("{f}: \"cache\" is not true or false", .{place});
            m.cache = c.bool; // (written only when true)
        }
    }

    const content_value = obj.get("content") orelse return diag.fail("{f}: no \"content\"", .{place});
    if (content_value != .array) return diag.fail("{f}: \"content\" is not an array", .{place});
    if (content_value.array.items.len == 0) return diag.fail("{f}: \"content\" is empty", .{place});
    m.blocks = try parseBlocks(gpa, content_value.array.items, role, place, diag);
    if (role == .assistant) {
        for (m.blocks, 0..) |b, j| if (b.kind == .tool_call) for (m.blocks[0..j]) |earlier| {
            if (earlier.kind == .tool_call and std.mem.eql(u8, earlier.id, b.id))
                return diag.fail("{f}: a second tool call with id \"{s}\"", .{ Place{ .message = place.message, .block = j }, b.id });
        };
    }
    return m;
}

fn parseUsage(value: Value, place: Place, diag: *Diagnostic) error{InvalidConversation}!ev.Usage {
    if (value != .object) return diag.fail("{f}: \"usage\" is not an object", .{place});
    var usage: ev.Usage = .{};
    var it = value.object.iterator();
    outer: while (it.next()) |entry| {
        inline for (std.meta.fields(ev.Usage)) |f| if (std.mem.eql(u8, f.name, entry.key_ptr.*)) {
            @field(usage, f.name) = count(entry.value_ptr.*) orelse
                return diag.fail("{f}: usage.{s} is not a non-negative integer", .{ place, f.name });
            continue :outer;
        };
        return diag.fail("{f}: unknown key \"{s}\" in usage", .{ place, entry.key_ptr.* });
    }
    return usage;
}

fn parseCompaction(value: Value, place: Place, diag: *Diagnostic) error{InvalidConversation}!conversation.Compaction {
    if (value != .object) return diag.fail("{f}: \"compaction\" is not an object", .{place});
    var it = value.object.iterator();
    while (it.next()) |entry| if (!isOneOf(entry.key_ptr.*, &.{ "message_count", "tokens_before" }))
        return diag.fail("{f}: unknown key \"{s}\" in compaction", .{ place, entry.key_ptr.* });
    var out: conversation.Compaction = .{ .message_count = 0, .tokens_before = 0 };
    inline for (.{ "message_count", "tokens_before" }) |name| {
        const v = value.object.get(name) orelse return diag.fail("{f}: compaction has no \"{s}\"", .{ place, name });
        @field(out, name) = count(v) orelse return diag.fail("{f}: compaction.{s} is not a non-negative integer", .{ place, name });
    }
    return out;
}

/// A non-negative integer written as digits (what the writer writes), or null.
fn count(value: Value) ?u64 {
    const digits = switch (value) {
        .number_string => |s| s,
        .integer => |i| return if (i < 0) null else @intCast(i),
        else => return null,
    };
    if (digits.len == 0 or digits[0] == '-') return null;
    return std.fmt.parseInt(u64, digits, 10) catch null;
}

fn parseBlocks(gpa: Allocator, items: []const Value, role: conversation.Role, place: Place, diag: *Diagnostic) ParseError![]Block {
    const blocks = try gpa.alloc(Block, items.len);
    var filled: usize = 0;
    errdefer {
        for (blocks[0..filled]) |b| conversation.freeBlock(gpa, b);
        gpa.free(blocks);
    }
    for (items, 0..) |item, j| {
        blocks[j] = try parseBlock(gpa, item, role, .{ .message = place.message, .block = j }, false, diag);
        filled += 1;
    }
    return blocks;
}

const Kind = conversation.BlockKind;

fn parseBlock(gpa: Allocator, value: Value, role: conversation.Role, place: Place, in_result: bool, diag: *Diagnostic) ParseError!Block {
    if (value != .object) return diag.fail("{f}: not a JSON object", .{place});
    const obj = value.object;
    const type_name = try string(obj, "type", place, diag);
    const kind = std.meta.stringToEnum(Kind, type_name) orelse
        return diag.fail("{f}: unknown block type \"{s}\"", .{ place, type_name });
    const fits = if (in_result) switch (kind) {
        .text, .image, .document => true,
        else => false,
    } else switch (role) {
        .user => switch (kind) {
            .text, .image, .document, .tool_result => true,
            else => false,
        },
        .assistant => switch (kind) {
            .text, .thinking, .redacted_thinking, .tool_call, .server_block => true,
            else => false,
        },
    };
    if (!fits) {
        if (in_result) return diag.fail("{f}: a tool_result's content holds text, image and document blocks, not {s}", .{ place, type_name });
        return diag.fail("{f}: a{s} {s} message cannot hold a {s} block", .{ place, if (role == .user) "" else "n", @tagName(role), type_name });
    }
    const keys: []const []const u8 = switch (kind) {
        .text => &.{ "type", "text", "signature", "citations" },
        .redacted_thinking => &.{ "type", "text" },
        .thinking => &.{ "type", "text", "signature", "name" },
        .tool_call => &.{ "type", "id", "name", "input", "signature" },
        .tool_result => &.{ "type", "id", "content", "is_error" },
        .image, .document => &.{ "type", "media_type", "data", "name" },
        .server_block => &.{ "type", "name", "json" },
    };
    var it = obj.iterator();
    while (it.next()) |entry| if (!isOneOf(entry.key_ptr.*, keys))
        return diag.fail("{f}: unknown key \"{s}\" in a {s} block", .{ place, entry.key_ptr.*, type_name });

    switch (kind) {
        .text, .thinking, .redacted_thinking => {
            const text = try string(obj, "text", place, diag);
            const signature = if (kind != .redacted_thinking and obj.get("signature") != null) try string(obj, "signature", place, diag) else "";
            const citations = if (kind == .text and obj.get("citations") != null) try string(obj, "citations", place, diag) else "";
            if (citations.len > 0) try checkCitations(gpa, citations, role, in_result, place, diag);
            const name = if (kind == .thinking and obj.get("name") != null) try string(obj, "name", place, diag) else "";
            return conversation.copyBlock(gpa, .{ .kind = kind, .text = text, .signature = signature, .citations = citations, .name = name });
        },
        .tool_call => {
            const id = try string(obj, "id", place, diag);
            if (id.len == 0 or id.len > 256) return diag.fail("{f}: a tool call id has 1 to 256 bytes", .{place});
            const name = try string(obj, "name", place, diag);
            if (!tools.validName(name)) return diag.fail("{f}: tool name \"{s}\" is not 1 to 64 of [a-zA-Z0-9_-]", .{ place, name });
            const input = obj.get("input") orelse return diag.fail("{f}: no \"input\"", .{place});
            if (input != .object) return diag.fail("{f}: \"input\" is not a JSON object", .{place});
            // Compact, numbers as written: the form the live path stores (tool_round.zig).
            const compact = try std.json.Stringify.valueAlloc(gpa, input, .{});
            defer gpa.free(compact);
            const signature = if (obj.get("signature") != null) try string(obj, "signature", place, diag) else "";
            return conversation.copyBlock(gpa, .{ .kind = .tool_call, .text = compact, .id = id, .name = name, .signature = signature });
        },
        .tool_result => {
            const id = try string(obj, "id", place, diag);
            if (id.len == 0 or id.len > 256) return diag.fail("{f}: a tool call id has 1 to 256 bytes", .{place});
            const is_error = obj.get("is_error") orelse return diag.fail("{f}: no \"is_error\"", .{place});
            if (is_error != .bool) return diag.fail("{f}: \"is_error\" is not true or false", .{place});
            const content_value = obj.get("content") orelse return diag.fail("{f}: no \"content\"", .{place});
            switch (content_value) {
                .string => |text| return conversation.copyBlock(gpa, .{ .kind = .tool_result, .text = text, .id = id, .is_error = is_error.bool }),
                .array => |arr| {
                    if (arr.items.len == 0) return diag.fail("{f}: \"content\" is an empty array", .{place});
                    const parts = try gpa.alloc(Block, arr.items.len);
                    var filled: usize = 0;
                    defer {
                        for (parts[0..filled]) |p| conversation.freeBlock(gpa, p);
                        gpa.free(parts);
                    }
                    for (arr.items, 0..) |item, k| {
                        parts[k] = try parseBlock(gpa, item, .user, .{ .message = place.message, .block = place.block, .part = k }, true, diag);
                        filled += 1;
                    }
                    const joined = try content.joinText(gpa, parts);
                    defer gpa.free(joined);
                    return conversation.copyBlock(gpa, .{ .kind = .tool_result, .text = joined, .id = id, .is_error = is_error.bool, .parts = parts });
                },
                else => return diag.fail("{f}: a tool_result's \"content\" is a string or an array", .{place}),
            }
        },
        .image, .document => {
            const media_type = try string(obj, "media_type", place, diag);
            const data = try string(obj, "data", place, diag);
            const name = if (obj.get("name") != null) try string(obj, "name", place, diag) else "";
            try checkMedia(gpa, kind, media_type, data, place, diag);
            return conversation.copyBlock(gpa, .{ .kind = kind, .text = data, .media_type = media_type, .name = name });
        },
        .server_block => {
            const name = try string(obj, "name", place, diag);
            const json = try string(obj, "json", place, diag);
            try checkServerBlock(gpa, name, json, place, diag);
            return conversation.copyBlock(gpa, .{ .kind = .server_block, .text = json, .name = name });
        },
    }
}

/// A server block's `json` is a JSON object whose "type" is its `name` (kept as given: it goes
/// back to the provider as it is).
fn checkServerBlock(gpa: Allocator, name: []const u8, json: []const u8, place: Place, diag: *Diagnostic) ParseError!void {
    if (name.len == 0) return diag.fail("{f}: a server_block's \"name\" is empty", .{place});
    var arena: std.heap.ArenaAllocator = .init(gpa);
    defer arena.deinit();
    if (json_depth.textTooDeep(json)) return diag.fail("{f}: a server_block's \"json\" is " ++ json_depth.nested_too_deep, .{place});
    const value = std.json.parseFromSliceLeaky(Value, arena.allocator(), json, parse_options) catch |err| switch (err) {
        error.OutOfMemory => return error.OutOfMemory,
        else => return diag.fail("{f}: a server_block's \"json\" is not valid JSON", .{place}),
    };
    const type_value = if (value == .object) value.object.get("type") else null;
    const type_name = if (type_value) |t| (if (t == .string) t.string else null) else null;
    if (type_name == null or !std.mem.eql(u8, type_name.?, name))
        return diag.fail("{f}: a server_block's \"json\" is not an object of type \"{s}\"", .{ place, name });
}

/// A text block's `citations` is a JSON array of objects, on an assistant message's text (the
/// model's answer is what cites); kept as given, it goes back to the provider as it is.
fn checkCitations(gpa: Allocator, citations: []const u8, role: conversation.Role, in_result: bool, place: Place, diag: *Diagnostic) ParseError!void {
    if (role != .assistant or in_result) return diag.fail("{f}: only an assistant message's text has \"citations\"", .{place});
    var arena: std.heap.ArenaAllocator = .init(gpa);
    defer arena.deinit();
    if (json_depth.textTooDeep(citations)) return diag.fail("{f}: \"citations\" is " ++ json_depth.nested_too_deep, .{place});
    const value = std.json.parseFromSliceLeaky(Value, arena.allocator(), citations, parse_options) catch |err| switch (err) {
        error.OutOfMemory => return error.OutOfMemory,
        else => return diag.fail("{f}: \"citations\" is not valid JSON", .{place}),
    };
    if (value != .array) return diag.fail("{f}: \"citations\" is not a JSON array of objects", .{place});
    for (value.array.items) |c| if (c != .object) return diag.fail("{f}: \"citations\" is not a JSON array of objects", .{place});
}

/// An assistant message's `reasoning_details` (OpenRouter's) is a non-empty JSON array of
/// objects, each with a string "type" (what the server takes back; none is ""); kept as given.
fn checkReasoningDetails(gpa: Allocator, details: []const u8, place: Place, diag: *Diagnostic) ParseError!void {
    const not = "{f}: \"reasoning_details\" is not a non-empty JSON array of objects with a string \"type\"";
    var arena: std.heap.ArenaAllocator = .init(gpa);
    defer arena.deinit();
    if (json_depth.textTooDeep(details)) return diag.fail("{f}: \"reasoning_details\" is " ++ json_depth.nested_too_deep, .{place});
    const value = std.json.parseFromSliceLeaky(Value, arena.allocator(), details, parse_options) catch |err| switch (err) {
        error.OutOfMemory => return error.OutOfMemory,
        else => return diag.fail("{f}: \"reasoning_details\" is not valid JSON", .{place}),
    };
    if (value != .array or value.array.items.len == 0) return diag.fail(not, .{place});
    for (value.array.items) |e| {
        const t = if (e == .object) e.object.get("type") else null;
        if (t == null or t.? != .string) return diag.fail(not, .{place});
    }
}

/// The media type is one panto sends, and the data is base64 of bytes of that type.
fn checkMedia(gpa: Allocator, kind: Kind, media_type: []const u8, data: []const u8, place: Place, diag: *Diagnostic) ParseError!void {
    const expected: media.Format = if (kind == .document) blk: {
        if (!std.mem.eql(u8, media_type, "application/pdf")) return diag.fail("{f}: a document's media_type must be \"application/pdf\", not \"{s}\"", .{ place, media_type });
        break :blk .pdf;
    } else std.meta.stringToEnum(media.Format, if (std.mem.startsWith(u8, media_type, "image/")) media_type["image/".len..] else "") orelse
        return diag.fail("{f}: an image's media_type must be image/png, image/jpeg, image/gif or image/webp, not \"{s}\"", .{ place, media_type });
    if (expected == .bmp or expected == .pdf and kind == .image)
        return diag.fail("{f}: an image's media_type must be image/png, image/jpeg, image/gif or image/webp, not \"{s}\"", .{ place, media_type });
    const decoder = std.base64.standard.Decoder;
    const size = decoder.calcSizeForSlice(data) catch return diag.fail("{f}: \"data\" is not base64", .{place});
    const bytes = try gpa.alloc(u8, size);
    defer gpa.free(bytes);
    decoder.decode(bytes, data) catch return diag.fail("{f}: \"data\" is not base64", .{place});
    if (media.detect(bytes) != expected) return diag.fail("{f}: \"data\" does not hold {s} bytes", .{ place, media_type });
}

fn string(obj: std.json.ObjectMap, key: []const u8, place: Place, diag: *Diagnostic) error{InvalidConversation}![]const u8 {
    const v = obj.get(key) orelse return diag.fail("{f}: no \"{s}\"", .{ place, key });
    if (v != .string) return diag.fail("{f}: \"{s}\" is not a string", .{ place, key });
    return v.string;
}

fn isOneOf(s: []const u8, options: []const []const u8) bool {
    for (options) |o| if (std.mem.eql(u8, s, o)) return true;
    return false;
}
