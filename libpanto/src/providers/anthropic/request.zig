//! Anthropic Messages API: the streaming request.
//! https://docs.anthropic.com/en/api/messages
const std = @import("std");
const conversation = @import("../../conversation.zig");
const writeRawJson = conversation.writeRawJson;
const Block = conversation.Block;
const call_id = @import("../../call_id.zig");
const json_member = @import("../../json_member.zig");
const config_mod = @import("../../config.zig");
const cache = @import("cache.zig");
const provider_schema = @import("../../provider_schema.zig");
const params = @import("params.zig");
pub const interleaved_thinking_beta = params.interleaved_thinking_beta;
pub const interleavedThinking = params.interleavedThinking;

pub const endpoint = "/v1/messages";
pub const api_version = "2023-06-01";

/// What a request is made of, beside the conversation.
const request = @import("../../request.zig");
pub const RequestParts = request.RequestParts;

pub fn writeRequest(w: *std.Io.Writer, parts: RequestParts) std.Io.Writer.Error!void {
    const config = parts.config;
    var s: std.json.Stringify = .{ .writer = w };
    try s.beginObject();
    try s.objectField("model");
    try s.write(config.model);
    try params.writeLimits(&s, parts);
    const breakpoints = cache.plan(parts);
    try cache.writeSystem(&s, config.system, &breakpoints);
    try s.objectField("messages");
    try s.beginArray();
    var runs = parts.runs(sendsMessage);
    while (runs.next()) |run| {
        try s.beginObject();
        try s.objectField("role");
        try s.write(@tagName(run.role));
        try s.objectField("content");
        try s.beginArray();
        // A run of user messages is one message here (the API takes no two in a row), its
        // tool_result blocks first: the API requires them before any other block.
        if (run.role == .user) try writeRun(&s, parts, run, &breakpoints, .tool_results);
        try writeRun(&s, parts, run, &breakpoints, if (run.role == .user) .others else .all);
        try s.endArray();
        try s.endObject();
    }
    try s.endArray();
    try cache.writeTools(&s, parts, &breakpoints);
    try params.write(&s, parts);
    if (!parts.counting()) try writeContainer(&s, parts);
    if (!parts.counting()) {
        try writeOutputConfig(&s, config.request.response_format);
        try s.objectField("stream");
        try s.write(true);
    }
    try parts.writeExtraBody(&s);
    try s.endObject();
}

/// The container code execution last ran in (the last Anthropic message that named one), so
/// that the conversation's files and state carry over (the response gives an object, the
/// request takes its id). Only with hosted tools (a compaction's summary request has none),
/// and not when extra_body sets "container" itself.
fn writeContainer(s: *std.json.Stringify, parts: RequestParts) std.Io.Writer.Error!void {
    const r = parts.config.request;
    if (r.server_tools.len == 0) return;
    for (r.extra_body) |m| if (std.mem.eql(u8, m.key, "container")) return;
    const messages = parts.conversation.messages.items;
    var i = messages.len;
    const id = while (i > 0) {
        i -= 1;
        const m = messages[i];
        if (m.container.len > 0 and std.mem.eql(u8, m.provider, "anthropic")) break m.container;
    } else return;
    try s.objectField("container");
    try s.write(id);
}

/// Whether a message has a block to send (hasContent): thinking and server blocks go back
/// only to the provider and model that wrote them.
fn sendsMessage(parts: RequestParts, m: conversation.Message) bool {
    return hasContent(m, m.role == .assistant and parts.sendsThinking(m), dropsUnpaired(parts, m));
}

/// A paused message (pause_turn) sent back before another message, the next turn's after a
/// turn that failed on the tool-iteration limit, leaves out its server tool calls that have
/// no result in it: the API refuses such a call ("server_tool_use without
/// web_search_tool_result", anthropic-sdk-python#961). As the last message (the continuation
/// of its own turn) it goes back unchanged, the call and all.
fn dropsUnpaired(parts: RequestParts, m: conversation.Message) bool {
    if (m.role != .assistant or m.stop_reason != .pause_turn) return false;
    const messages = parts.conversation.messages.items;
    return messages[messages.len - 1].blocks.ptr != m.blocks.ptr;
}

/// Whether block `j` of `m` is a server tool's call (it has an "id") that no later block of
/// the message answers (a "tool_use_id" naming it).
fn unpairedCall(m: conversation.Message, j: usize) bool {
    const b = m.blocks[j];
    if (b.kind != .server_block) return false;
    var buf: [4096]u8 = undefined;
    var fixed: std.heap.FixedBufferAllocator = .init(&buf);
    const id = topLevelString(fixed.allocator(), b.text, "id") orelse return false;
    for (m.blocks[j + 1 ..]) |later| if (later.kind == .server_block) {
        fixed.reset();
        const answered = topLevelString(fixed.allocator(), later.text, "tool_use_id") orelse continue;
        if (std.mem.eql(u8, answered, id)) return false;
    };
    return true;
}

/// The raw bytes (quotes included) of top-level string member `key`, or null (no such string,
/// or too deeply nested to tell: then the block is kept as it is).
fn topLevelString(scratch: std.mem.Allocator, json: []const u8, key: []const u8) ?[]const u8 {
    const at = (json_member.find(scratch, json, key) catch return null) orelse return null;
    const v = json[at.start..at.end];
    return if (v.len >= 2 and v[0] == '"') v else null;
}

/// The blocks of the run's messages that `which` selects, in order, each message's with its
/// cache breakpoint.
fn writeRun(s: *std.json.Stringify, parts: RequestParts, run: request.Run, breakpoints: *const cache.Plan, which: enum { all, tool_results, others }) std.Io.Writer.Error!void {
    const messages = parts.conversation.messages.items;
    for (run.start..run.end) |i| {
        const m = messages[i];
        if (!sendsMessage(parts, m)) continue;
        const thinking = m.role == .assistant and parts.sendsThinking(m);
        const drops = dropsUnpaired(parts, m);
        const marked: ?usize = if (breakpoints.marksMessage(i)) cache.markable(m) else null;
        for (m.blocks, 0..) |b, j| {
            const wanted = switch (which) {
                .all => true,
                .tool_results => b.kind == .tool_result,
                .others => b.kind != .tool_result,
            };
            if (drops and unpairedCall(m, j)) continue;
            if (wanted) try writeBlock(s, b, thinking, if (marked == j) breakpoints else null);
        }
    }
}

/// One block of a message (nothing for thinking and server blocks that do not go back, nor
/// for empty text, which the API refuses), with the message's
/// cache breakpoint when `mark` is given (cache.zig).
fn writeBlock(s: *std.json.Stringify, b: Block, thinking: bool, mark: ?*const cache.Plan) std.Io.Writer.Error!void {
    var id_buf: call_id.Buffer = undefined;
    switch (b.kind) {
        // Thinking goes back with its signature (the API checks it) to the model that
        // wrote it; unsigned thinking, as from a canceled message, cannot.
        .thinking => if (thinking and b.signature.len > 0) {
            try s.beginObject();
            try s.objectField("type");
            try s.write("thinking");
            try s.objectField("thinking");
            try s.write(b.text);
            try s.objectField("signature");
            try s.write(b.signature);
            try s.endObject();
        },
        .redacted_thinking => if (thinking) {
            try s.beginObject();
            try s.objectField("type");
            try s.write("redacted_thinking");
            try s.objectField("data");
            try s.write(b.text);
            try s.endObject();
        },
        // Its citations go back with it to the model that wrote them (the rule of thinking).
        .text => if (b.text.len > 0) try writeText(s, b.text, if (thinking) b.citations else "", mark),
        // As the API sent it, ids and all (cache.markable never marks it).
        .server_block => if (thinking) try writeRawJson(s, b.text),
        .image, .document => try writeMedia(s, b, mark),
        .tool_call => {
            try s.beginObject();
            try s.objectField("type");
            try s.write("tool_use");
            try s.objectField("id");
            try s.write(call_id.forWire(b.id, &id_buf));
            try s.objectField("name");
            try s.write(b.name);
            try s.objectField("input");
            try writeRawJson(s, b.text);
            if (mark) |p| try cache.writeControl(p, s);
            try s.endObject();
        },
        .tool_result => {
            try s.beginObject();
            try s.objectField("type");
            try s.write("tool_result");
            try s.objectField("tool_use_id");
            try s.write(call_id.forWire(b.id, &id_buf));
            try s.objectField("content");
            if (b.parts.len == 0) try s.write(b.text) else {
                try s.beginArray();
                for (b.parts) |p| switch (p.kind) {
                    .image, .document => try writeMedia(s, p, null),
                    else => if (p.text.len > 0) try writeText(s, p.text, "", null),
                };
                try s.endArray();
            }
            if (b.is_error) {
                try s.objectField("is_error");
                try s.write(true);
            }
            if (mark) |p| try cache.writeControl(p, s);
            try s.endObject();
        },
    }
}

/// Structured output: a json_schema response_format is output_config.format (the API has no
/// other format: "text" is its default, json_object is refused at configuration).
fn writeOutputConfig(s: *std.json.Stringify, format: ?config_mod.ResponseFormat) std.Io.Writer.Error!void {
    const f = format orelse return;
    if (f != .json_schema) return;
    try s.objectField("output_config");
    try s.beginObject();
    try s.objectField("format");
    try s.beginObject();
    try s.objectField("type");
    try s.write("json_schema");
    try s.objectField("schema");
    if (f.json_schema.parsed) |v| try provider_schema.write(s, v, .anthropic, .output) else try writeRawJson(s, f.json_schema.schema);
    try s.endObject();
    try s.endObject();
}

/// Whether a message has a block to send: an assistant message whose only blocks are thinking
/// or server blocks for another model, or a message of empty text, is left out (the API
/// refuses empty content and empty text blocks).
fn hasContent(m: conversation.Message, thinking: bool, drops_unpaired: bool) bool {
    for (m.blocks, 0..) |b, j| switch (b.kind) {
        .thinking => if (thinking and b.signature.len > 0) return true,
        .redacted_thinking => if (thinking) return true,
        .server_block => if (thinking and !(drops_unpaired and unpairedCall(m, j))) return true,
        .text => if (b.text.len > 0) return true,
        else => return true,
    };
    return false;
}

/// `citations`: a JSON array as received, or "" for none.
fn writeText(s: *std.json.Stringify, text: []const u8, citations: []const u8, mark: ?*const cache.Plan) std.Io.Writer.Error!void {
    try s.beginObject();
    try s.objectField("type");
    try s.write("text");
    try s.objectField("text");
    try s.write(text);
    if (citations.len > 0) {
        try s.objectField("citations");
        try writeRawJson(s, citations);
    }
    if (mark) |p| try cache.writeControl(p, s);
    try s.endObject();
}

/// An image or document block: base64 inline; a document's name as its title.
fn writeMedia(s: *std.json.Stringify, b: Block, mark: ?*const cache.Plan) std.Io.Writer.Error!void {
    try s.beginObject();
    try s.objectField("type");
    try s.write(@tagName(b.kind));
    try s.objectField("source");
    try s.beginObject();
    try s.objectField("type");
    try s.write("base64");
    try s.objectField("media_type");
    try s.write(b.media_type);
    try s.objectField("data");
    try s.write(b.text);
    try s.endObject();
    if (b.kind == .document and b.name.len > 0) {
        try s.objectField("title");
        try s.write(b.name);
    }
    if (mark) |p| try cache.writeControl(p, s);
    try s.endObject();
}
