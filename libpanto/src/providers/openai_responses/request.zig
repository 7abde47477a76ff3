//! OpenAI Responses API: the streaming request, stateless (`store: false`): the whole
//! conversation goes as `input` items every time, reasoning items with their encrypted
//! content in place (reasoning_item.zig).
//! https://platform.openai.com/docs/api-reference/responses/create
const std = @import("std");
const conversation = @import("../../conversation.zig");
const Block = conversation.Block;
const writeRawJson = conversation.writeRawJson;
const call_id = @import("../../call_id.zig");
const config_mod = @import("../../config.zig");
const strict_schema = @import("../../strict_schema.zig");
const provider_schema = @import("../../provider_schema.zig");
const optional = @import("../../request.zig").writeOptional;
const reasoning_item = @import("reasoning_item.zig");

pub const endpoint = "/v1/responses";

pub const RequestParts = @import("../../request.zig").RequestParts;

pub fn writeRequest(w: *std.Io.Writer, parts: RequestParts) std.Io.Writer.Error!void {
    const config = parts.config;
    var s: std.json.Stringify = .{ .writer = w };
    try s.beginObject();
    try s.objectField("model");
    try s.write(config.model);
    if (config.system) |system| {
        try s.objectField("instructions");
        try s.write(system);
    }
    if (!parts.counting()) {
        try s.objectField("max_output_tokens");
        try s.write(config.max_tokens);
    }
    try writeReasoning(&s, parts);
    try s.objectField("input");
    try s.beginArray();
    for (parts.conversation.messages.items) |m| switch (m.role) {
        .user => try writeUserItems(&s, m.blocks),
        .assistant => try writeAssistantItems(&s, m.blocks, parts.sendsThinking(m)),
    };
    try s.endArray();
    try writeTools(&s, parts);
    try writeParams(&s, parts);
    if (!parts.counting()) {
        try s.objectField("store");
        try s.write(false);
        try s.objectField("include");
        try s.beginArray();
        try s.write("reasoning.encrypted_content");
        try s.endArray();
        try s.objectField("stream");
        try s.write(true);
    }
    try parts.writeExtraBody(&s);
    try s.endObject();
}

/// `"reasoning": {"effort", "summary": "auto"}`: the effort as set, else the thinking level's
/// name; none when thinking is off and no effort is set (the model's default then).
fn writeReasoning(s: *std.json.Stringify, parts: RequestParts) std.Io.Writer.Error!void {
    const config = parts.config;
    const effort = config.request.reasoning_effort orelse if (config.thinking != .off) @tagName(config.thinking) else return;
    try s.objectField("reasoning");
    try s.beginObject();
    try s.objectField("effort");
    try s.write(effort);
    try s.objectField("summary");
    try s.write("auto");
    try s.endObject();
}

/// A user message: each tool result a function_call_output item, then its text and media as
/// one user message (none when it has neither).
fn writeUserItems(s: *std.json.Stringify, blocks: []const Block) std.Io.Writer.Error!void {
    var id_buf: call_id.Buffer = undefined;
    var content: usize = 0;
    for (blocks) |b| switch (b.kind) {
        .tool_result => {
            try s.beginObject();
            try s.objectField("type");
            try s.write("function_call_output");
            try s.objectField("call_id");
            try s.write(call_id.forWire(b.id, &id_buf));
            try s.objectField("output");
            if (b.parts.len == 0) try s.write(b.text) else {
                try s.beginArray();
                for (b.parts) |p| if (p.kind != .text or p.text.len > 0) try writeInputPart(s, p);
                try s.endArray();
            }
            try s.endObject();
        },
        .text => content += @intFromBool(b.text.len > 0),
        .image, .document => content += 1,
        else => {},
    };
    if (content == 0) return;
    try s.beginObject();
    try s.objectField("role");
    try s.write("user");
    try s.objectField("content");
    try s.beginArray();
    for (blocks) |b| switch (b.kind) {
        .text => if (b.text.len > 0) try writeInputPart(s, b),
        .image, .document => try writeInputPart(s, b),
        else => {},
    };
    try s.endArray();
    try s.endObject();
}

/// An assistant message, block by block in order: its reasoning items (only to the provider
/// and model that wrote them, only with their encrypted content, and only followed by the
/// text or call they led to: the API refuses a reasoning item without its following item, as
/// a canceled message's last one would be), text as assistant messages, tool calls as
/// function_call items.
fn writeAssistantItems(s: *std.json.Stringify, blocks: []const Block, thinking: bool) std.Io.Writer.Error!void {
    var id_buf: call_id.Buffer = undefined;
    for (blocks, 0..) |b, i| switch (b.kind) {
        .thinking => if (thinking and b.signature.len > 0 and followed(blocks[i + 1 ..])) try reasoning_item.write(s, b.text, b.signature),
        .text => if (b.text.len > 0) {
            try s.beginObject();
            try s.objectField("type");
            try s.write("message");
            try s.objectField("role");
            try s.write("assistant");
            try s.objectField("content");
            try s.write(b.text);
            try s.endObject();
        },
        .tool_call => {
            try s.beginObject();
            try s.objectField("type");
            try s.write("function_call");
            try s.objectField("call_id");
            try s.write(call_id.forWire(b.id, &id_buf));
            try s.objectField("name");
            try s.write(b.name);
            try s.objectField("arguments");
            try s.write(b.text); // a JSON string, as the API streams it
            try s.endObject();
        },
        // Another provider's redacted thinking and server blocks mean nothing here.
        else => {},
    };
}

/// Whether a reasoning item has an item after it: text that is sent, or a call.
fn followed(after: []const Block) bool {
    for (after) |b| switch (b.kind) {
        .tool_call => return true,
        .text => if (b.text.len > 0) return true,
        else => {},
    };
    return false;
}

/// A content part of a user message or of a tool's output: input_text, input_image (a data
/// URL, detail "auto" as the API's default), input_file (a PDF as a data URL).
fn writeInputPart(s: *std.json.Stringify, b: Block) std.Io.Writer.Error!void {
    try s.beginObject();
    try s.objectField("type");
    switch (b.kind) {
        .image => {
            try s.write("input_image");
            try s.objectField("detail"); // (required by the API's type)
            try s.write("auto");
            try s.objectField("image_url");
            try writeDataUrl(s, b);
        },
        .document => {
            try s.write("input_file");
            try s.objectField("filename");
            try s.write(if (b.name.len > 0) b.name else "document.pdf");
            try s.objectField("file_data");
            try writeDataUrl(s, b);
        },
        else => {
            try s.write("input_text");
            try s.objectField("text");
            try s.write(b.text);
        },
    }
    try s.endObject();
}

/// `data:<media type>;base64,<data>` (base64 needs no escaping).
fn writeDataUrl(s: *std.json.Stringify, b: Block) std.Io.Writer.Error!void {
    try s.beginWriteRaw();
    try s.writer.writeAll("\"data:");
    try std.json.Stringify.encodeJsonStringChars(b.media_type, .{}, s.writer);
    try s.writer.writeAll(";base64,");
    try s.writer.writeAll(b.text);
    try s.writer.writeByte('"');
    s.endWriteRaw();
}

/// Function tools, flat (`{"type":"function","name",..}`), strict as the API's default only
/// when the schema meets the strict rules: a strict tool with a schema that breaks them is
/// refused with a 400.
fn writeTools(s: *std.json.Stringify, parts: RequestParts) std.Io.Writer.Error!void {
    if (!parts.hasTools()) return;
    try s.objectField("tools");
    try s.beginArray();
    for (parts.tools) |t| if (t.allowedWith(parts.granted)) {
        try s.beginObject();
        try s.objectField("type");
        try s.write("function");
        try s.objectField("name");
        try s.write(t.name);
        try s.objectField("description");
        try s.write(t.description);
        // Strict closes the schema's objects as the request writes them (strict_schema.zig
        // counts an object without "additionalProperties" as closed).
        const strict = strict_schema.meetsStrictRules(t.schema);
        try s.objectField("parameters");
        if (t.schema == .null) try writeRawJson(s, t.schema_json) else try provider_schema.write(s, t.schema, .openai, if (strict) .strict_tool else .tool);
        try s.objectField("strict");
        try s.write(strict);
        try s.endObject();
    };
    try s.endArray();
}

/// The request parameters the Responses API has (request_options.zig refuses the others):
/// tool_choice and parallel_tool_calls (only with tools), temperature, top_p, metadata, user,
/// service_tier, structured output (`text.format`), prompt_cache_key and its retention.
fn writeParams(s: *std.json.Stringify, parts: RequestParts) std.Io.Writer.Error!void {
    const r = parts.config.request;
    if (parts.hasTools()) {
        if (r.tool_choice) |c| {
            try s.objectField("tool_choice");
            switch (c) {
                .auto => try s.write("auto"),
                .none => try s.write("none"),
                .required => try s.write("required"),
                .tool => |name| {
                    try s.beginObject();
                    try s.objectField("type");
                    try s.write("function");
                    try s.objectField("name");
                    try s.write(name);
                    try s.endObject();
                },
            }
        }
        try optional(s, "parallel_tool_calls", r.parallel_tool_calls);
    }
    // input_tokens takes what makes the prompt: tools, their choice, the text format.
    if (!parts.counting()) {
        try optional(s, "temperature", r.temperature);
        try optional(s, "top_p", r.top_p);
        if (r.metadata) |json| {
            try s.objectField("metadata");
            try writeRawJson(s, json);
        }
        try optional(s, "user", r.user);
        try optional(s, "service_tier", r.service_tier);
    }
    if (r.response_format) |f| {
        try s.objectField("text");
        try s.beginObject();
        try s.objectField("format");
        try s.beginObject();
        try s.objectField("type");
        try s.write(@tagName(f));
        if (f == .json_schema) {
            try s.objectField("name");
            try s.write(f.json_schema.name);
            try s.objectField("schema");
            if (f.json_schema.parsed) |v| try provider_schema.write(s, v, .openai, if (f.json_schema.strict orelse false) .strict_output else .output) else try writeRawJson(s, f.json_schema.schema);
            try s.objectField("strict");
            try s.write(f.json_schema.strict orelse false); // (Agent.init decides a null one)
        }
        try s.endObject();
        try s.endObject();
    }
    if (parts.counting()) return;
    try optional(s, "prompt_cache_key", r.cache.key);
    try optional(s, "prompt_cache_retention", r.cache.retention);
}

test "responses request: a conversation with a reasoning item, a tool round and an image round-trips as input items; a lone reasoning item does not" {
    const gpa = std.testing.allocator;
    var conv: conversation.Conversation = .init(gpa);
    defer conv.deinit();
    try conv.appendCopy(.user, &.{ .{ .kind = .text, .text = "Weather in Paris?" }, .{ .kind = .image, .text = "iVBO", .media_type = "image/png" } });
    try conv.appendMessage(.assistant, &.{
        .{ .kind = .thinking, .text = "Look it up.", .signature = "rs_1 gAAAA=" },
        .{ .kind = .tool_call, .id = "call_a", .name = "get_weather", .text = "{\"city\":\"Paris\"}" },
    }, .{ .provider = "openai-responses", .model = "gpt-5" });
    try conv.appendCopy(.user, &.{.{ .kind = .tool_result, .id = "call_a", .text = "sunny" }});
    try conv.appendMessage(.assistant, &.{.{ .kind = .text, .text = "Sunny." }}, .{ .provider = "openai-responses", .model = "gpt-5" });
    try conv.appendUserText("Thanks");
    // A canceled message that kept only its reasoning: nothing of it is sent.
    try conv.appendMessage(.assistant, &.{.{ .kind = .thinking, .text = "Hmm.", .signature = "rs_2 gBBB=" }}, .{ .stop_reason = .aborted, .provider = "openai-responses", .model = "gpt-5" });
    try conv.appendUserText("Go on");

    var arena: std.heap.ArenaAllocator = .init(gpa);
    defer arena.deinit();
    const schema_json = "{\"type\":\"object\",\"properties\":{\"city\":{\"type\":\"string\"}},\"required\":[\"city\"],\"additionalProperties\":false}";
    const loose_json = "{\"type\":\"object\",\"properties\":{\"q\":{\"type\":\"string\"}}}";
    // Strict once closed: the request closes it (and leaves its title out).
    const closable_json = "{\"type\":\"object\",\"properties\":{\"n\":{\"type\":\"integer\",\"title\":\"N\"}},\"required\":[\"n\"]}";
    const tools = [_]@import("../../tools.zig").Tool{
        .{ .name = "get_weather", .description = "Weather.", .schema_json = schema_json, .schema = try std.json.parseFromSliceLeaky(std.json.Value, arena.allocator(), schema_json, .{}), .capabilities = &.{} },
        .{ .name = "search", .description = "Search.", .schema_json = loose_json, .schema = try std.json.parseFromSliceLeaky(std.json.Value, arena.allocator(), loose_json, .{}), .capabilities = &.{} },
        .{ .name = "count", .description = "Count.", .schema_json = closable_json, .schema = try std.json.parseFromSliceLeaky(std.json.Value, arena.allocator(), closable_json, .{}), .capabilities = &.{} },
    };
    const want_input =
        \\"input":[{"role":"user","content":[{"type":"input_text","text":"Weather in Paris?"},{"type":"input_image","detail":"auto","image_url":"data:image/png;base64,iVBO"}]},{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"Look it up."}],"encrypted_content":"gAAAA="},{"type":"function_call","call_id":"call_a","name":"get_weather","arguments":"{\"city\":\"Paris\"}"},{"type":"function_call_output","call_id":"call_a","output":"sunny"},{"type":"message","role":"assistant","content":"Sunny."},{"role":"user","content":[{"type":"input_text","text":"Thanks"}]},{"role":"user","content":[{"type":"input_text","text":"Go on"}]}]
    ;
    const want_tools =
        \\"tools":[{"type":"function","name":"get_weather","description":"Weather.","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"],"additionalProperties":false},"strict":true},{"type":"function","name":"search","description":"Search.","parameters":{"type":"object","properties":{"q":{"type":"string"}}},"strict":false},{"type":"function","name":"count","description":"Count.","parameters":{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"],"additionalProperties":false},"strict":true}],
    ;
    const tail = "\"store\":false,\"include\":[\"reasoning.encrypted_content\"],\"stream\":true}";
    // The same model: the reasoning item goes back in place, before its call.
    {
        var out: std.Io.Writer.Allocating = .init(gpa);
        defer out.deinit();
        try writeRequest(&out.writer, .{ .config = .{ .provider = .@"openai-responses", .model = "gpt-5", .system = "Be brief.", .thinking = .high, .request = .{ .tool_choice = .{ .tool = "get_weather" }, .response_format = .json_object, .cache = .{ .key = "u7" } } }, .conversation = &conv, .tools = &tools, .granted = &.{} });
        const want = "{\"model\":\"gpt-5\",\"instructions\":\"Be brief.\",\"max_output_tokens\":4096,\"reasoning\":{\"effort\":\"high\",\"summary\":\"auto\"}," ++ want_input ++ "," ++ want_tools ++ "\"tool_choice\":{\"type\":\"function\",\"name\":\"get_weather\"},\"text\":{\"format\":{\"type\":\"json_object\"}},\"prompt_cache_key\":\"u7\"," ++ tail;
        try std.testing.expectEqualStrings(want, out.written());
    }
    // Another model: its reasoning is not sent.
    {
        var out: std.Io.Writer.Allocating = .init(gpa);
        defer out.deinit();
        try writeRequest(&out.writer, .{ .config = .{ .provider = .@"openai-responses", .model = "gpt-5-mini" }, .conversation = &conv, .tools = &.{}, .granted = &.{} });
        const reasoning = "{\"type\":\"reasoning\",\"id\":\"rs_1\",\"summary\":[{\"type\":\"summary_text\",\"text\":\"Look it up.\"}],\"encrypted_content\":\"gAAAA=\"},";
        const without = try std.mem.replaceOwned(u8, gpa, want_input, reasoning, "");
        defer gpa.free(without);
        const want = try std.mem.concat(gpa, u8, &.{ "{\"model\":\"gpt-5-mini\",\"max_output_tokens\":4096,", without, ",", tail });
        defer gpa.free(want);
        try std.testing.expectEqualStrings(want, out.written());
    }
}
