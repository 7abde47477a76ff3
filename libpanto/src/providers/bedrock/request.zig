//! Bedrock: the ConverseStream request. Stateless: the whole conversation goes as `messages`
//! every time, reasoning (with its signature) to the same model only (docs/design/bedrock.md,
//! "The request").
//! https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ConverseStream.html
const std = @import("std");
const conversation = @import("../../conversation.zig");
const Block = conversation.Block;
const Message = conversation.Message;
const writeRawJson = conversation.writeRawJson;
const optional = @import("../../request.zig").writeOptional;
const request = @import("../../request.zig");
const call_id = @import("../../call_id.zig");

pub const RequestParts = request.RequestParts;

pub fn writeRequest(w: *std.Io.Writer, parts: RequestParts) std.Io.Writer.Error!void {
    const config = parts.config;
    var s: std.json.Stringify = .{ .writer = w };
    try s.beginObject();
    if (config.system) |system| {
        try s.objectField("system");
        try s.beginArray();
        try writeText(&s, system);
        try s.endArray();
    }
    try s.objectField("messages");
    try messages_format.write(&s, parts);
    // CountTokens' `converse` input has no inferenceConfig (what the answer may be).
    if (!parts.counting()) try writeInferenceConfig(&s, parts);
    try writeToolConfig(&s, parts);
    try writeAdditionalFields(&s, parts);
    try parts.writeExtraBody(&s);
    try s.endObject();
}

/// Whether a message has a block to send: Bedrock refuses a message with empty content.
fn sendsMessage(parts: RequestParts, m: Message) bool {
    if (m.role == .user) return m.blocks.len > 0;
    const signed = parts.sendsThinking(m);
    for (m.blocks) |b| if (assistantBlock(b, signed)) return true;
    return false;
}

/// Whether an assistant block is sent: text that is not blank (Bedrock refuses blank text),
/// calls, and reasoning with its signature (or redacted) to the model that made it.
fn assistantBlock(b: Block, signed: bool) bool {
    return switch (b.kind) {
        .text => std.mem.trim(u8, b.text, " \t\r\n").len > 0,
        .tool_call => true,
        .thinking => signed and b.signature.len > 0,
        .redacted_thinking => signed,
        else => false, // server blocks: another provider's
    };
}

fn writeAssistantBlock(s: *std.json.Stringify, b: Block) std.Io.Writer.Error!void {
    switch (b.kind) {
        .tool_call => {
            try s.beginObject();
            try s.objectField("toolUse");
            try s.beginObject();
            try s.objectField("toolUseId");
            var id_buf: call_id.Buffer = undefined;
            try s.write(call_id.forWire(b.id, &id_buf)); // (another provider's id may hold more)
            try s.objectField("name");
            try s.write(b.name);
            try s.objectField("input");
            try writeRawJson(s, if (b.text.len > 0) b.text else "{}");
            try s.endObject();
            try s.endObject();
        },
        .thinking, .redacted_thinking => {
            try s.beginObject();
            try s.objectField("reasoningContent");
            try s.beginObject();
            if (b.kind == .redacted_thinking) {
                try s.objectField("redactedContent");
                try s.write(b.text);
            } else {
                try s.objectField("reasoningText");
                try s.beginObject();
                try s.objectField("text");
                try s.write(b.text);
                try s.objectField("signature");
                try s.write(b.signature);
                try s.endObject();
            }
            try s.endObject();
            try s.endObject();
        },
        else => try writeText(s, b.text),
    }
}

const messages_format: request.PartsMessages = .{
    .assistant_role = "assistant",
    .content = "content",
    .sends = sendsMessage,
    .writeResult = writeToolResult,
    .writeUserBlock = writeUserBlock,
    .writeAssistant = writeAssistant,
};

fn writeAssistant(s: *std.json.Stringify, parts: RequestParts, m: Message) std.Io.Writer.Error!void {
    const signed = parts.sendsThinking(m);
    for (m.blocks) |b| if (assistantBlock(b, signed)) try writeAssistantBlock(s, b);
}

fn writeUserBlock(s: *std.json.Stringify, b: Block) std.Io.Writer.Error!void {
    switch (b.kind) {
        .text => if (std.mem.trim(u8, b.text, " \t\r\n").len > 0) try writeText(s, b.text),
        .image, .document => try writeMedia(s, b),
        else => {},
    }
}

/// `{"toolResult": {"toolUseId", "content": [text, image, document blocks], "status"}}`,
/// status "error" for a failed tool.
fn writeToolResult(s: *std.json.Stringify, _: RequestParts, _: request.Run, b: Block) std.Io.Writer.Error!void {
    try s.beginObject();
    try s.objectField("toolResult");
    try s.beginObject();
    try s.objectField("toolUseId");
    var id_buf: call_id.Buffer = undefined;
    try s.write(call_id.forWire(b.id, &id_buf));
    try s.objectField("content");
    try s.beginArray();
    if (b.parts.len == 0) {
        try writeText(s, b.text);
    } else for (b.parts) |p| switch (p.kind) {
        .image, .document => try writeMedia(s, p),
        else => try writeText(s, p.text),
    };
    try s.endArray();
    if (b.is_error) {
        try s.objectField("status");
        try s.write("error");
    }
    try s.endObject();
    try s.endObject();
}

fn writeText(s: *std.json.Stringify, text: []const u8) std.Io.Writer.Error!void {
    try s.beginObject();
    try s.objectField("text");
    try s.write(text);
    try s.endObject();
}

/// `{"image": {"format", "source": {"bytes"}}}`, or a document (`"name"` too, which Bedrock
/// requires): the format is the media type's subtype (`image/png` png, `application/pdf` pdf).
fn writeMedia(s: *std.json.Stringify, b: Block) std.Io.Writer.Error!void {
    const subtype = if (std.mem.indexOfScalar(u8, b.media_type, '/')) |slash| b.media_type[slash + 1 ..] else b.media_type;
    try s.beginObject();
    try s.objectField(if (b.kind == .image) "image" else "document");
    try s.beginObject();
    try s.objectField("format");
    try s.write(subtype);
    if (b.kind == .document) {
        try s.objectField("name");
        try s.write(if (b.name.len > 0) b.name else "document");
    }
    try s.objectField("source");
    try s.beginObject();
    try s.objectField("bytes");
    try s.beginWriteRaw(); // (base64 needs no escaping)
    try s.writer.writeByte('"');
    try s.writer.writeAll(b.text);
    try s.writer.writeByte('"');
    s.endWriteRaw();
    try s.endObject();
    try s.endObject();
    try s.endObject();
}

/// `inferenceConfig`: the sampling parameters every Bedrock model takes.
fn writeInferenceConfig(s: *std.json.Stringify, parts: RequestParts) std.Io.Writer.Error!void {
    const config = parts.config;
    const r = config.request;
    try s.objectField("inferenceConfig");
    try s.beginObject();
    try s.objectField("maxTokens");
    try s.write(config.max_tokens);
    try optional(s, "temperature", r.temperature);
    try optional(s, "topP", r.top_p);
    if (r.stop.len > 0) {
        try s.objectField("stopSequences");
        try s.write(r.stop);
    }
    try s.endObject();
}

/// `toolConfig`: the tools as `toolSpec`s and tool_choice (`none` has no Bedrock form: the
/// tools are sent without a choice).
fn writeToolConfig(s: *std.json.Stringify, parts: RequestParts) std.Io.Writer.Error!void {
    if (!parts.hasTools()) return;
    try s.objectField("toolConfig");
    try s.beginObject();
    try s.objectField("tools");
    try s.beginArray();
    for (parts.tools) |t| if (t.allowedWith(parts.granted)) {
        try s.beginObject();
        try s.objectField("toolSpec");
        try s.beginObject();
        try s.objectField("name");
        try s.write(t.name);
        try s.objectField("description");
        try s.write(t.description);
        try s.objectField("inputSchema");
        try s.beginObject();
        try s.objectField("json");
        try writeRawJson(s, t.schema_json);
        try s.endObject();
        try s.endObject();
        try s.endObject();
    };
    try s.endArray();
    if (parts.config.request.tool_choice) |choice| switch (choice) {
        .none => {},
        .auto, .required => {
            try s.objectField("toolChoice");
            try s.beginObject();
            try s.objectField(if (choice == .auto) "auto" else "any");
            try s.beginObject();
            try s.endObject();
            try s.endObject();
        },
        .tool => |name| {
            try s.objectField("toolChoice");
            try s.beginObject();
            try s.objectField("tool");
            try s.beginObject();
            try s.objectField("name");
            try s.write(name);
            try s.endObject();
            try s.endObject();
        },
    };
    try s.endObject();
}

/// `additionalModelRequestFields`: what Converse leaves to the model's own body: Claude's
/// `thinking` budget and `top_k`.
fn writeAdditionalFields(s: *std.json.Stringify, parts: RequestParts) std.Io.Writer.Error!void {
    const r = parts.config.request;
    if (r.thinking_budget == null and r.top_k == null) return;
    try s.objectField("additionalModelRequestFields");
    try s.beginObject();
    if (r.thinking_budget) |budget| {
        try s.objectField("thinking");
        try s.beginObject();
        try s.objectField("type");
        try s.write("enabled");
        try s.objectField("budget_tokens");
        try s.write(budget);
        try s.endObject();
    }
    try optional(s, "top_k", r.top_k);
    try s.endObject();
}
