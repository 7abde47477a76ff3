//! OpenAI Chat Completions (and compatible servers): the streaming request.
//! https://platform.openai.com/docs/api-reference/chat/create
const std = @import("std");
const conversation = @import("../../conversation.zig");
const call_id = @import("../../call_id.zig");
const config_mod = @import("../../config.zig");
const params = @import("params.zig");

pub const endpoint = "/v1/chat/completions";

pub const RequestParts = @import("../../request.zig").RequestParts;

pub fn writeRequest(w: *std.Io.Writer, parts: RequestParts) std.Io.Writer.Error!void {
    const config = parts.config;
    var s: std.json.Stringify = .{ .writer = w };
    try s.beginObject();
    try s.objectField("model");
    try s.write(config.model);
    try s.objectField("max_completion_tokens");
    try s.write(config.max_tokens);
    try params.writeReasoning(&s, parts);
    try s.objectField("messages");
    try s.beginArray();
    if (config.system) |system| try writeMessage(&s, "system", system);
    for (parts.conversation.messages.items) |m| switch (m.role) {
        .user => {
            var id_buf: call_id.Buffer = undefined;
            // Tool results are messages of their own (role "tool"); text goes as a user message.
            var attachments = false;
            for (m.blocks) |b| if (b.kind == .tool_result) {
                try s.beginObject();
                try s.objectField("role");
                try s.write("tool");
                try s.objectField("tool_call_id");
                try s.write(call_id.forWire(b.id, &id_buf));
                try s.objectField("content");
                if (b.parts.len == 0) try s.write(b.text) else try writeToolText(&s, b);
                try s.endObject();
                if (b.parts.len > 0) attachments = true;
            };
            // Tool messages cannot carry media: the round's go in one user message after them.
            if (attachments) try writeAttachments(&s, m.blocks);
            if (hasKind(m.blocks, .image) or hasKind(m.blocks, .document) or countKind(m.blocks, .text) > 1) {
                try s.beginObject();
                try s.objectField("role");
                try s.write("user");
                try s.objectField("content");
                try s.beginArray();
                for (m.blocks) |b| switch (b.kind) {
                    .image, .document => try writeUserPart(&s, b),
                    .text => if (b.text.len > 0) try writeUserPart(&s, b), // (never an empty text part)
                    else => {},
                };
                try s.endArray();
                try s.endObject();
            } else if (hasKind(m.blocks, .text)) {
                try s.beginObject();
                try s.objectField("role");
                try s.write("user");
                try s.objectField("content");
                try writeJoinedText(&s, m.blocks);
                try s.endObject();
            }
        },
        .assistant => {
            // Thinking goes back only as DeepSeek asks (writeReasoningContent): a message of
            // thinking alone is left out.
            if (!hasKind(m.blocks, .text) and !hasKind(m.blocks, .tool_call)) continue;
            var id_buf: call_id.Buffer = undefined;
            try s.beginObject();
            try s.objectField("role");
            try s.write("assistant");
            try s.objectField("content");
            if (hasKind(m.blocks, .text)) try writeJoinedText(&s, m.blocks) else try s.write(null);
            if (hasKind(m.blocks, .tool_call) and parts.sendsThinking(m)) {
                try writeReasoningContent(&s, m.blocks);
                try writeReasoningDetails(&s, m);
            }
            if (hasKind(m.blocks, .tool_call)) {
                try s.objectField("tool_calls");
                try s.beginArray();
                for (m.blocks) |b| if (b.kind == .tool_call) {
                    try s.beginObject();
                    try s.objectField("id");
                    try s.write(call_id.forWire(b.id, &id_buf));
                    try s.objectField("type");
                    try s.write("function");
                    try s.objectField("function");
                    try s.beginObject();
                    try s.objectField("name");
                    try s.write(b.name);
                    try s.objectField("arguments");
                    try s.write(b.text); // Chat Completions carries arguments as a JSON string
                    try s.endObject();
                    try s.endObject();
                };
                try s.endArray();
            }
            try s.endObject();
        },
    };
    try s.endArray();
    try parts.writeTools(&s, .openai);
    try params.write(&s, parts);
    try writeResponseFormat(&s, config.request.response_format);
    try writeCacheOptions(&s, config.request.cache);
    try s.objectField("stream");
    try s.write(true);
    try s.objectField("stream_options");
    try s.beginObject();
    try s.objectField("include_usage");
    try s.write(true);
    try s.endObject();
    try parts.writeExtraBody(&s);
    try s.endObject();
}

/// Structured output: {"type": "text" | "json_object"}, or {"type": "json_schema",
/// "json_schema": {"name", "schema", "strict"}}.
fn writeResponseFormat(s: *std.json.Stringify, format: ?config_mod.ResponseFormat) std.Io.Writer.Error!void {
    const f = format orelse return;
    try s.objectField("response_format");
    try s.beginObject();
    try s.objectField("type");
    try s.write(@tagName(f));
    if (f == .json_schema) {
        try s.objectField("json_schema");
        try s.beginObject();
        try s.objectField("name");
        try s.write(f.json_schema.name);
        try s.objectField("schema");
        if (f.json_schema.parsed) |v| try @import("../../provider_schema.zig").write(s, v, .openai, if (f.json_schema.strict orelse false) .strict_output else .output) else try conversation.writeRawJson(s, f.json_schema.schema);
        try s.objectField("strict");
        try s.write(f.json_schema.strict orelse false); // (Agent.init decides a null one)
        try s.endObject();
    }
    try s.endObject();
}

/// Prompt caching is automatic here: the key and retention only steer it.
fn writeCacheOptions(s: *std.json.Stringify, cache: config_mod.Cache) std.Io.Writer.Error!void {
    if (cache.key) |key| {
        try s.objectField("prompt_cache_key");
        try s.write(key);
    }
    if (cache.retention) |retention| {
        try s.objectField("prompt_cache_retention");
        try s.write(retention);
    }
}

fn writeMessage(s: *std.json.Stringify, role: []const u8, content: []const u8) std.Io.Writer.Error!void {
    try s.beginObject();
    try s.objectField("role");
    try s.write(role);
    try s.objectField("content");
    try s.write(content);
    try s.endObject();
}

fn hasKind(blocks: []const conversation.Block, kind: conversation.BlockKind) bool {
    for (blocks) |b| if (b.kind == kind) return true;
    return false;
}

fn countKind(blocks: []const conversation.Block, kind: conversation.BlockKind) usize {
    var n: usize = 0;
    for (blocks) |b| n += @intFromBool(b.kind == kind);
    return n;
}

/// A tool message's content for a result with media: its text, then a line naming each
/// attachment, which follows in the next user message.
fn writeToolText(s: *std.json.Stringify, result: conversation.Block) std.Io.Writer.Error!void {
    try s.beginWriteRaw();
    try s.writer.writeByte('"');
    var written = hasKind(result.parts, .text);
    if (written) try std.json.Stringify.encodeJsonStringChars(result.text, .{}, s.writer);
    var n: usize = 0;
    for (result.parts) |p| if (p.kind != .text) {
        n += 1;
        if (written) try s.writer.writeAll("\\n");
        try s.writer.print("[attachment {d}: ", .{n});
        try std.json.Stringify.encodeJsonStringChars(p.media_type, .{}, s.writer);
        try s.writer.writeAll(", in the next user message]");
        written = true;
    };
    try s.writer.writeByte('"');
    s.endWriteRaw();
}

/// The user message after a round's tool messages that carries their media, each result's
/// under a line naming its call.
fn writeAttachments(s: *std.json.Stringify, blocks: []const conversation.Block) std.Io.Writer.Error!void {
    try s.beginObject();
    try s.objectField("role");
    try s.write("user");
    try s.objectField("content");
    try s.beginArray();
    for (blocks) |b| if (b.kind == .tool_result and b.parts.len > 0) {
        try s.beginObject();
        try s.objectField("type");
        try s.write("text");
        try s.objectField("text");
        try s.beginWriteRaw();
        try s.writer.writeAll("\"Attachments of tool result ");
        var id_buf: call_id.Buffer = undefined;
        try std.json.Stringify.encodeJsonStringChars(call_id.forWire(b.id, &id_buf), .{}, s.writer);
        try s.writer.writeAll(":\"");
        s.endWriteRaw();
        try s.endObject();
        for (b.parts) |p| if (p.kind != .text) try writeUserPart(s, p);
    };
    try s.endArray();
    try s.endObject();
}

/// A content part of a user message: text, an image as a data URL, a PDF as a file.
fn writeUserPart(s: *std.json.Stringify, b: conversation.Block) std.Io.Writer.Error!void {
    try s.beginObject();
    try s.objectField("type");
    switch (b.kind) {
        .image => {
            try s.write("image_url");
            try s.objectField("image_url");
            try s.beginObject();
            try s.objectField("url");
            try writeDataUrl(s, b);
            try s.endObject();
        },
        .document => {
            try s.write("file");
            try s.objectField("file");
            try s.beginObject();
            try s.objectField("file_data");
            try writeDataUrl(s, b);
            try s.objectField("filename");
            try s.write(if (b.name.len > 0) b.name else "document.pdf");
            try s.endObject();
        },
        else => {
            try s.write("text");
            try s.objectField("text");
            try s.write(b.text);
        },
    }
    try s.endObject();
}

/// `data:<media type>;base64,<data>` (base64 needs no escaping).
fn writeDataUrl(s: *std.json.Stringify, b: conversation.Block) std.Io.Writer.Error!void {
    try s.beginWriteRaw();
    try s.writer.writeAll("\"data:");
    try std.json.Stringify.encodeJsonStringChars(b.media_type, .{}, s.writer);
    try s.writer.writeAll(";base64,");
    try s.writer.writeAll(b.text);
    try s.writer.writeByte('"');
    s.endWriteRaw();
}

/// The thinking of a message with tool calls that came as `reasoning_content`, joined, as
/// `reasoning_content`: DeepSeek's thinking mode refuses (400) a later request whose tool-call
/// messages lack it. Thinking under another name is not sent: the servers that use those
/// (Groq, Cerebras) refuse a message field they do not know, and none documents wanting it.
fn writeReasoningContent(s: *std.json.Stringify, blocks: []const conversation.Block) std.Io.Writer.Error!void {
    if (!hasReasoningContent(blocks)) return;
    try s.objectField("reasoning_content");
    try s.beginWriteRaw();
    try s.writer.writeByte('"');
    for (blocks) |b| if (isReasoningContent(b)) try std.json.Stringify.encodeJsonStringChars(b.text, .{}, s.writer);
    try s.writer.writeByte('"');
    s.endWriteRaw();
}

/// OpenRouter's reasoning_details of a message with tool calls, as kept: it asks for them
/// back ("preserving reasoning blocks") so that the signed or encrypted reasoning of the
/// models behind it (Anthropic's, Gemini's) goes on across tool calls.
fn writeReasoningDetails(s: *std.json.Stringify, m: conversation.Message) std.Io.Writer.Error!void {
    if (m.reasoning_details.len == 0) return;
    try s.objectField("reasoning_details");
    try conversation.writeRawJson(s, m.reasoning_details);
}

fn isReasoningContent(b: conversation.Block) bool {
    return b.kind == .thinking and std.mem.eql(u8, b.name, "reasoning_content");
}

fn hasReasoningContent(blocks: []const conversation.Block) bool {
    for (blocks) |b| if (isReasoningContent(b)) return true;
    return false;
}

/// Chat Completions takes a message's content as one string; thinking is not sent back.
fn writeJoinedText(s: *std.json.Stringify, blocks: []const conversation.Block) std.Io.Writer.Error!void {
    try s.beginWriteRaw();
    try s.writer.writeByte('"');
    for (blocks) |b| if (b.kind == .text) try std.json.Stringify.encodeJsonStringChars(b.text, .{}, s.writer);
    try s.writer.writeByte('"');
    s.endWriteRaw();
}

test "structured output and the prompt cache key go on the request as Chat Completions names them" {
    const gpa = std.testing.allocator;
    var conv: conversation.Conversation = .init(gpa);
    defer conv.deinit();
    try conv.appendUserText("hi");
    const cases = [_]struct { config_mod.RequestOptions, []const u8 }{
        .{ .{}, "" },
        .{ .{ .response_format = .text, .cache = .{ .key = "user-7", .retention = "24h" } }, "\"response_format\":{\"type\":\"text\"},\"prompt_cache_key\":\"user-7\",\"prompt_cache_retention\":\"24h\"," },
        .{ .{ .response_format = .json_object }, "\"response_format\":{\"type\":\"json_object\"}," },
        .{ .{ .response_format = .{ .json_schema = .{ .schema = "{\"type\":\"object\"}", .strict = false } } }, "\"response_format\":{\"type\":\"json_schema\",\"json_schema\":{\"name\":\"response\",\"schema\":{\"type\":\"object\"},\"strict\":false}}," },
    };
    for (cases) |case| {
        var out: std.Io.Writer.Allocating = .init(gpa);
        defer out.deinit();
        try writeRequest(&out.writer, .{ .config = .{ .provider = .openai, .model = "m", .request = case[0] }, .conversation = &conv, .tools = &.{}, .granted = &.{} });
        const want = try std.mem.concat(gpa, u8, &.{ "{\"model\":\"m\",\"max_completion_tokens\":4096,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],", case[1], "\"stream\":true,\"stream_options\":{\"include_usage\":true}}" });
        defer gpa.free(want);
        try std.testing.expectEqualStrings(want, out.written());
    }
}
