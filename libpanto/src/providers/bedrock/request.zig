//! Bedrock: the ConverseStream request. Stateless: the whole conversation goes as `messages`
//! every time, reasoning (with its signature) to the same model only (docs/design/bedrock.md,
//! "The request"). Prompt caching: cachePoint blocks where providers/cache_plan.zig puts
//! the points, for the models Bedrock caches for (`cachesPrompts`).
//! https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ConverseStream.html
const std = @import("std");
const conversation = @import("../../conversation.zig");
const Block = conversation.Block;
const Message = conversation.Message;
const writeRawJson = conversation.writeRawJson;
const optional = @import("../../request.zig").writeOptional;
const request = @import("../../request.zig");
const call_id = @import("../../call_id.zig");
const cache_plan = @import("../cache_plan.zig");
const request_options = @import("../../request_options.zig");
const provider_schema = @import("../../provider_schema.zig");
const JsonStringWriter = @import("../../json_string_writer.zig").JsonStringWriter;

pub const RequestParts = request.RequestParts;

pub fn writeRequest(w: *std.Io.Writer, parts: RequestParts) std.Io.Writer.Error!void {
    const config = parts.config;
    // (a count asks for no cache: its body has no cache points)
    const marks: cache_plan.Plan = if (cachesPrompts(config.model) and !parts.counting()) cache_plan.plan(parts) else .{};
    var s: std.json.Stringify = .{ .writer = w };
    try s.beginObject();
    if (config.system) |system| {
        try s.objectField("system");
        try s.beginArray();
        try writeText(&s, system);
        if (marks.system) try writeCachePoint(&s, &marks);
        try s.endArray();
    }
    try s.objectField("messages");
    try messages_format.writeMarked(&s, parts, &marks);
    // CountTokens' `converse` input has no inferenceConfig (what the answer may be).
    if (!parts.counting()) try writeInferenceConfig(&s, parts);
    try writeToolConfig(&s, parts, &marks);
    try writeAdditionalFields(&s, parts);
    if (!parts.counting()) try writeOutputConfig(&s, config.request.response_format);
    try parts.writeExtraBody(&s);
    try s.endObject();
}

/// Bedrock caches prompts for Anthropic's Claude and Amazon's Nova models (their ids, and the
/// inference profiles named after them: `us.anthropic.claude-...`); a cachePoint sent with
/// another model is refused, so none is. An application inference profile's ARN names no
/// model: its requests go without cache points.
pub fn cachesPrompts(model: []const u8) bool {
    return std.mem.indexOf(u8, model, "anthropic.claude") != null or std.mem.indexOf(u8, model, "amazon.nova") != null;
}

/// `{"cachePoint": {"type": "default"[, "ttl"]}}`: the prefix up to here is cached.
fn writeCachePoint(s: *std.json.Stringify, marks: *const cache_plan.Plan) std.Io.Writer.Error!void {
    try s.beginObject();
    try s.objectField("cachePoint");
    try s.beginObject();
    try s.objectField("type");
    try s.write("default");
    if (marks.ttl) |ttl| {
        try s.objectField("ttl");
        try s.write(@tagName(ttl));
    }
    try s.endObject();
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
    .writeCachePoint = writeCachePoint,
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
        try writeDocumentName(s, b.name);
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

/// The thinking budget sent as Claude's `thinking`: an explicit budget for any model (as
/// given), a level for a Claude model as Anthropic's budget for it (0: none). Other families
/// think their own way (Nova's reasoningConfig, DeepSeek on its own): a level sends nothing.
fn thinkingBudget(config: @import("../../config.zig").Config) u32 {
    if (config.request.thinking_budget) |budget| return budget;
    if (std.mem.indexOf(u8, config.model, "anthropic.claude") == null) return 0;
    return request_options.budgetTokens(config);
}

/// A document's name as Converse takes it: letters, digits, single spaces, hyphens,
/// parentheses and square brackets, at most 200 characters. Anything else (the dot and
/// underscore of a file name) becomes a hyphen, runs of whitespace one space (none at the
/// ends):
/// "my_notes.pdf" is sent as "my-notes-pdf". An empty name is "document".
fn writeDocumentName(s: *std.json.Stringify, name: []const u8) std.Io.Writer.Error!void {
    try s.beginWriteRaw();
    try s.writer.writeByte('"');
    var written: usize = 0;
    var space = false; // whitespace seen since the last character written
    for (name) |c| {
        const out: u8 = switch (c) {
            'a'...'z', 'A'...'Z', '0'...'9', '-', '(', ')', '[', ']' => c,
            ' ', '\t', '\n', '\r' => {
                space = written > 0; // (none leading; written before the next character only)
                continue;
            },
            else => '-', // (each byte of a multi-byte character too: the name stays ASCII)
        };
        if (written + @intFromBool(space) >= max_document_name) break;
        if (space) try s.writer.writeByte(' ');
        written += @intFromBool(space);
        space = false;
        try s.writer.writeByte(out);
        written += 1;
    }
    if (written == 0) try s.writer.writeAll("document");
    try s.writer.writeByte('"');
    s.endWriteRaw();
}

const max_document_name = 200;

/// `inferenceConfig`: the sampling parameters every Bedrock model takes. maxTokens comes above
/// a thinking budget as Anthropic's API wants it (the budget on top when it is not).
fn writeInferenceConfig(s: *std.json.Stringify, parts: RequestParts) std.Io.Writer.Error!void {
    const config = parts.config;
    const r = config.request;
    const budget = thinkingBudget(config);
    try s.objectField("inferenceConfig");
    try s.beginObject();
    try s.objectField("maxTokens");
    try s.write(if (budget > 0 and config.max_tokens <= budget) config.max_tokens +| budget else config.max_tokens);
    try optional(s, "temperature", r.temperature);
    try optional(s, "topP", r.top_p);
    if (r.stop.len > 0) {
        try s.objectField("stopSequences");
        try s.write(r.stop);
    }
    try s.endObject();
}

/// `toolConfig`: the tools as `toolSpec`s (then a cachePoint when the plan caches them) and
/// tool_choice (`none` has no Bedrock form: the tools are sent without a choice).
fn writeToolConfig(s: *std.json.Stringify, parts: RequestParts, marks: *const cache_plan.Plan) std.Io.Writer.Error!void {
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
    if (marks.tools) try writeCachePoint(s, marks);
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

/// Structured output: a json_schema response_format is `outputConfig.textFormat`, the schema
/// (objects closed, as every provider's structured output wants) as a JSON *string* in
/// `structure.jsonSchema.schema`. json_object has no Converse form: refused at configuration.
fn writeOutputConfig(s: *std.json.Stringify, format: ?@import("../../config.zig").ResponseFormat) std.Io.Writer.Error!void {
    const f = format orelse return;
    if (f != .json_schema) return;
    const js = f.json_schema;
    try s.objectField("outputConfig");
    try s.beginObject();
    try s.objectField("textFormat");
    try s.beginObject();
    try s.objectField("type");
    try s.write("json_schema");
    try s.objectField("structure");
    try s.beginObject();
    try s.objectField("jsonSchema");
    try s.beginObject();
    try s.objectField("schema");
    try s.beginWriteRaw();
    try s.writer.writeByte('"');
    var buf: [256]u8 = undefined;
    var inside: JsonStringWriter = .init(s.writer, &buf);
    if (js.parsed) |v| {
        var schema_s: std.json.Stringify = .{ .writer = &inside.interface };
        try provider_schema.write(&schema_s, v, .plain, .output);
    } else try inside.interface.writeAll(js.schema);
    try inside.interface.flush();
    try s.writer.writeByte('"');
    s.endWriteRaw();
    try s.objectField("name");
    try s.write(js.name);
    try s.endObject();
    try s.endObject();
    try s.endObject();
    try s.endObject();
}

/// `additionalModelRequestFields`: what Converse leaves to the model's own body: Claude's
/// `thinking` budget (thinkingBudget) and `top_k`.
fn writeAdditionalFields(s: *std.json.Stringify, parts: RequestParts) std.Io.Writer.Error!void {
    const r = parts.config.request;
    const budget = thinkingBudget(parts.config);
    if (budget == 0 and r.top_k == null) return;
    try s.objectField("additionalModelRequestFields");
    try s.beginObject();
    if (budget > 0) {
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
