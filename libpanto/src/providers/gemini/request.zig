//! Gemini: the `streamGenerateContent` request. Stateless: the whole conversation goes as
//! `contents` every time, each thought signature on the part it came on, to the same model
//! only (docs/design/gemini.md).
//! https://ai.google.dev/api/generate-content#request-body
const std = @import("std");
const conversation = @import("../../conversation.zig");
const Block = conversation.Block;
const Message = conversation.Message;
const writeRawJson = conversation.writeRawJson;
const provider_schema = @import("../../provider_schema.zig");
const optional = @import("../../request.zig").writeOptional;
const request = @import("../../request.zig");

pub const RequestParts = request.RequestParts;

pub fn writeRequest(w: *std.Io.Writer, parts: RequestParts) std.Io.Writer.Error!void {
    const config = parts.config;
    var s: std.json.Stringify = .{ .writer = w };
    try s.beginObject();
    if (parts.counting()) {
        // countTokens takes the request as `generateContentRequest` (provider.zig), which
        // names its model, with its collection.
        try s.objectField("model");
        try s.beginWriteRaw();
        try s.writer.writeByte('"');
        if (std.mem.indexOfScalar(u8, config.model, '/') == null) try s.writer.writeAll("models/");
        try std.json.Stringify.encodeJsonStringChars(config.model, s.options, s.writer);
        try s.writer.writeByte('"');
        s.endWriteRaw();
    }
    if (config.system) |system| {
        try s.objectField("systemInstruction");
        try s.beginObject();
        try s.objectField("parts");
        try s.beginArray();
        try writeText(&s, system, "");
        try s.endArray();
        try s.endObject();
    }
    try s.objectField("contents");
    try contents_format.write(&s, parts);
    try writeTools(&s, parts);
    try writeGenerationConfig(&s, parts);
    try parts.writeExtraBody(&s);
    try s.endObject();
}

/// Whether a message has a part to send: Gemini refuses a content without parts.
fn sendsMessage(parts: RequestParts, m: Message) bool {
    if (m.role == .user) return m.blocks.len > 0;
    const signed = parts.sendsThinking(m);
    for (m.blocks) |b| if (modelPart(b, signed)) return true;
    return false;
}

/// Whether an assistant block is a part of the model's content: text (an empty one only for
/// its signature), a call, and signed thoughts, the signatures only to the model that made them.
fn modelPart(b: Block, signed: bool) bool {
    return switch (b.kind) {
        .text => b.text.len > 0 or (signed and b.signature.len > 0),
        .tool_call => true,
        .thinking => signed and b.signature.len > 0,
        else => false, // another provider's redacted thinking and server blocks
    };
}

/// The signature Google documents for calls that no Gemini model signed (a conversation from
/// another provider or model): a Gemini 3 model refuses an unsigned call of the current turn.
/// https://ai.google.dev/gemini-api/docs/thought-signatures#faqs
const unsigned_call_signature = "skip_thought_signature_validator";

fn writeModelParts(s: *std.json.Stringify, blocks: []const Block, signed: bool) std.Io.Writer.Error!void {
    var first_call = true;
    for (blocks) |b| if (modelPart(b, signed)) {
        // The first call of a content is the signed one (parallel calls carry one signature).
        const placeholder = !signed and b.kind == .tool_call and first_call;
        if (b.kind == .tool_call) first_call = false;
        const signature = if (signed) b.signature else if (placeholder) unsigned_call_signature else "";
        switch (b.kind) {
            .tool_call => {
                try s.beginObject();
                try s.objectField("functionCall");
                try s.beginObject();
                try s.objectField("name");
                try s.write(b.name);
                try s.objectField("args");
                try writeRawJson(s, if (b.text.len > 0) b.text else "{}");
                try s.endObject();
                try writeSignature(s, signature);
                try s.endObject();
            },
            .thinking => {
                try s.beginObject();
                try s.objectField("text");
                try s.write(b.text);
                try s.objectField("thought");
                try s.write(true);
                try writeSignature(s, signature);
                try s.endObject();
            },
            else => try writeText(s, b.text, signature),
        }
    };
}

const contents_format: request.PartsMessages = .{
    .assistant_role = "model",
    .content = "parts",
    .sends = sendsMessage,
    .writeResult = writeResult,
    .writeUserBlock = writeUserBlock,
    .writeAssistant = writeModelContent,
};

fn writeModelContent(s: *std.json.Stringify, parts: RequestParts, m: Message) std.Io.Writer.Error!void {
    try writeModelParts(s, m.blocks, parts.sendsThinking(m));
}

/// A function response, its media after it as inlineData parts.
fn writeResult(s: *std.json.Stringify, parts: RequestParts, run: request.Run, b: Block) std.Io.Writer.Error!void {
    try writeFunctionResponse(s, b, callName(parts.conversation.messages.items[0..run.start], b.id));
    for (b.parts) |p| if (p.kind == .image or p.kind == .document) try writeInlineData(s, p);
}

fn writeUserBlock(s: *std.json.Stringify, b: Block) std.Io.Writer.Error!void {
    switch (b.kind) {
        .text => if (b.text.len > 0) try writeText(s, b.text, ""),
        .image, .document => try writeInlineData(s, b),
        else => {},
    }
}

/// `{"functionResponse": {"name", "response": {"output"}}}`, `{"error"}` for a failed tool;
/// the result's media follow it as inlineData parts.
fn writeFunctionResponse(s: *std.json.Stringify, b: Block, name: []const u8) std.Io.Writer.Error!void {
    try s.beginObject();
    try s.objectField("functionResponse");
    try s.beginObject();
    try s.objectField("name");
    try s.write(name);
    try s.objectField("response");
    try s.beginObject();
    try s.objectField(if (b.is_error) "error" else "output");
    try s.write(b.text);
    try s.endObject();
    try s.endObject();
    try s.endObject();
}

/// The name of the call `id` answers, from the latest message that made it: Gemini pairs a
/// response with its call by name and order, not by id.
fn callName(before: []const Message, id: []const u8) []const u8 {
    var i = before.len;
    while (i > 0) {
        i -= 1;
        for (before[i].blocks) |b| if (b.kind == .tool_call and std.mem.eql(u8, b.id, id)) return b.name;
    }
    return "";
}

fn writeText(s: *std.json.Stringify, text: []const u8, signature: []const u8) std.Io.Writer.Error!void {
    try s.beginObject();
    try s.objectField("text");
    try s.write(text);
    try writeSignature(s, signature);
    try s.endObject();
}

fn writeSignature(s: *std.json.Stringify, signature: []const u8) std.Io.Writer.Error!void {
    if (signature.len == 0) return;
    try s.objectField("thoughtSignature");
    try s.write(signature);
}

/// `{"inlineData": {"mimeType", "data"}}`: an image or a PDF, base64.
fn writeInlineData(s: *std.json.Stringify, b: Block) std.Io.Writer.Error!void {
    try s.beginObject();
    try s.objectField("inlineData");
    try s.beginObject();
    try s.objectField("mimeType");
    try s.write(b.media_type);
    try s.objectField("data");
    try s.beginWriteRaw(); // (base64 needs no escaping)
    try s.writer.writeByte('"');
    try s.writer.writeAll(b.text);
    try s.writer.writeByte('"');
    s.endWriteRaw();
    try s.endObject();
    try s.endObject();
}

/// One tool of `functionDeclarations`, the schema as JSON Schema (`parametersJsonSchema`,
/// which takes what `parameters`' OpenAPI subset refuses: refs, closed objects, type
/// arrays); then tool_choice as `toolConfig`.
fn writeTools(s: *std.json.Stringify, parts: RequestParts) std.Io.Writer.Error!void {
    if (!parts.hasTools()) return;
    try s.objectField("tools");
    try s.beginArray();
    try s.beginObject();
    try s.objectField("functionDeclarations");
    try s.beginArray();
    for (parts.tools) |t| if (t.allowedWith(parts.granted)) {
        try s.beginObject();
        try s.objectField("name");
        try s.write(t.name);
        try s.objectField("description");
        try s.write(t.description);
        try s.objectField("parametersJsonSchema");
        if (t.schema == .null) try writeRawJson(s, t.schema_json) else try provider_schema.write(s, t.schema, .plain, .tool);
        try s.endObject();
    };
    try s.endArray();
    try s.endObject();
    try s.endArray();
    const choice = parts.config.request.tool_choice orelse return;
    try s.objectField("toolConfig");
    try s.beginObject();
    try s.objectField("functionCallingConfig");
    try s.beginObject();
    try s.objectField("mode");
    switch (choice) {
        .auto => try s.write("AUTO"),
        .none => try s.write("NONE"),
        .required => try s.write("ANY"),
        .tool => |name| {
            try s.write("ANY");
            try s.objectField("allowedFunctionNames");
            try s.beginArray();
            try s.write(name);
            try s.endArray();
        },
    }
    try s.endObject();
    try s.endObject();
}

/// `generationConfig`: the sampling parameters Gemini has (request_options.zig refuses the
/// others), structured output, and thinking.
fn writeGenerationConfig(s: *std.json.Stringify, parts: RequestParts) std.Io.Writer.Error!void {
    const config = parts.config;
    const r = config.request;
    try s.objectField("generationConfig");
    try s.beginObject();
    try s.objectField("maxOutputTokens");
    try s.write(config.max_tokens);
    try optional(s, "temperature", r.temperature);
    try optional(s, "topP", r.top_p);
    try optional(s, "topK", r.top_k);
    if (r.stop.len > 0) {
        try s.objectField("stopSequences");
        try s.write(r.stop);
    }
    try optional(s, "seed", r.seed);
    try optional(s, "presencePenalty", r.presence_penalty);
    try optional(s, "frequencyPenalty", r.frequency_penalty);
    if (r.response_format) |f| switch (f) {
        .text => {},
        .json_object => {
            try s.objectField("responseMimeType");
            try s.write("application/json");
        },
        .json_schema => |js| {
            try s.objectField("responseMimeType");
            try s.write("application/json");
            try s.objectField("responseJsonSchema");
            if (js.parsed) |v| try provider_schema.write(s, v, .plain, .output) else try writeRawJson(s, js.schema);
        },
    };
    // Thinking: a budget as set, else the level (Gemini 3's thinkingLevel); thoughts are
    // shown whenever thinking is asked for. Off sends nothing: the model's default.
    if (r.thinking_budget != null or config.thinking != .off) {
        try s.objectField("thinkingConfig");
        try s.beginObject();
        try s.objectField("includeThoughts");
        try s.write(true);
        if (r.thinking_budget) |budget| {
            try s.objectField("thinkingBudget");
            try s.write(budget);
        } else {
            try s.objectField("thinkingLevel");
            try s.write(@tagName(config.thinking));
        }
        try s.endObject();
    }
    try s.endObject();
}

test "gemini request: a tool round with thought signatures goes back to the same model on its parts, to another model without them" {
    const gpa = std.testing.allocator;
    var conv: conversation.Conversation = .init(gpa);
    defer conv.deinit();
    try conv.appendCopy(.user, &.{ .{ .kind = .text, .text = "Weather in Paris?" }, .{ .kind = .image, .text = "iVBO", .media_type = "image/png" } });
    try conv.appendMessage(.assistant, &.{
        .{ .kind = .thinking, .text = "Look it up.", .signature = "sigT" },
        .{ .kind = .tool_call, .id = "call_r1_0", .name = "get_weather", .text = "{\"city\":\"Paris\"}", .signature = "sigC" },
        .{ .kind = .tool_call, .id = "call_r1_1", .name = "get_time", .text = "{}" },
    }, .{ .provider = "gemini", .model = "gemini-3-flash" });
    try conv.appendCopy(.user, &.{
        .{ .kind = .tool_result, .id = "call_r1_0", .text = "sunny" },
        .{ .kind = .tool_result, .id = "call_r1_1", .text = "no clock", .is_error = true },
    });
    try conv.appendMessage(.assistant, &.{
        .{ .kind = .text, .text = "Sunny.", .signature = "sigX" },
        .{ .kind = .text, .text = "", .signature = "sigE" },
    }, .{ .provider = "gemini", .model = "gemini-3-flash" });
    try conv.appendUserText("Thanks");

    var arena: std.heap.ArenaAllocator = .init(gpa);
    defer arena.deinit();
    const schema_json = "{\"type\":\"object\",\"title\":\"W\",\"properties\":{\"city\":{\"type\":\"string\"}},\"required\":[\"city\"]}";
    const tools = [_]@import("../../tools.zig").Tool{
        .{ .name = "get_weather", .description = "Weather.", .schema_json = schema_json, .schema = try std.json.parseFromSliceLeaky(std.json.Value, arena.allocator(), schema_json, .{}), .capabilities = &.{} },
    };
    const user0 = "{\"role\":\"user\",\"parts\":[{\"text\":\"Weather in Paris?\"},{\"inlineData\":{\"mimeType\":\"image/png\",\"data\":\"iVBO\"}}]}";
    const results = "{\"role\":\"user\",\"parts\":[{\"functionResponse\":{\"name\":\"get_weather\",\"response\":{\"output\":\"sunny\"}}},{\"functionResponse\":{\"name\":\"get_time\",\"response\":{\"error\":\"no clock\"}}}]}";
    const thanks = "{\"role\":\"user\",\"parts\":[{\"text\":\"Thanks\"}]}";
    {
        var out: std.Io.Writer.Allocating = .init(gpa);
        defer out.deinit();
        try writeRequest(&out.writer, .{ .config = .{ .provider = .gemini, .model = "gemini-3-flash", .system = "Be brief.", .thinking = .high, .request = .{ .tool_choice = .required, .temperature = 0.5 } }, .conversation = &conv, .tools = &tools, .granted = &.{} });
        const want = "{\"systemInstruction\":{\"parts\":[{\"text\":\"Be brief.\"}]},\"contents\":[" ++ user0 ++
            ",{\"role\":\"model\",\"parts\":[{\"text\":\"Look it up.\",\"thought\":true,\"thoughtSignature\":\"sigT\"},{\"functionCall\":{\"name\":\"get_weather\",\"args\":{\"city\":\"Paris\"}},\"thoughtSignature\":\"sigC\"},{\"functionCall\":{\"name\":\"get_time\",\"args\":{}}}]}," ++ results ++
            ",{\"role\":\"model\",\"parts\":[{\"text\":\"Sunny.\",\"thoughtSignature\":\"sigX\"},{\"text\":\"\",\"thoughtSignature\":\"sigE\"}]}," ++ thanks ++
            "],\"tools\":[{\"functionDeclarations\":[{\"name\":\"get_weather\",\"description\":\"Weather.\",\"parametersJsonSchema\":{\"type\":\"object\",\"properties\":{\"city\":{\"type\":\"string\"}},\"required\":[\"city\"]}}]}],\"toolConfig\":{\"functionCallingConfig\":{\"mode\":\"ANY\"}}" ++
            ",\"generationConfig\":{\"maxOutputTokens\":4096,\"temperature\":0.5,\"thinkingConfig\":{\"includeThoughts\":true,\"thinkingLevel\":\"high\"}}}";
        try std.testing.expectEqualStrings(want, out.written());
    }
    // Another model: no thought, no signature-only part, and the placeholder signature on
    // the first call only.
    {
        var out: std.Io.Writer.Allocating = .init(gpa);
        defer out.deinit();
        try writeRequest(&out.writer, .{ .config = .{ .provider = .gemini, .model = "gemini-2.5-pro", .request = .{ .thinking_budget = 2048 } }, .conversation = &conv, .tools = &.{}, .granted = &.{} });
        const want = "{\"contents\":[" ++ user0 ++
            ",{\"role\":\"model\",\"parts\":[{\"functionCall\":{\"name\":\"get_weather\",\"args\":{\"city\":\"Paris\"}},\"thoughtSignature\":\"skip_thought_signature_validator\"},{\"functionCall\":{\"name\":\"get_time\",\"args\":{}}}]}," ++ results ++
            ",{\"role\":\"model\",\"parts\":[{\"text\":\"Sunny.\"}]}," ++ thanks ++
            "],\"generationConfig\":{\"maxOutputTokens\":4096,\"thinkingConfig\":{\"includeThoughts\":true,\"thinkingBudget\":2048}}}";
        try std.testing.expectEqualStrings(want, out.written());
    }
}
