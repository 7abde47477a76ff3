//! Anthropic Messages API: the streaming request.
//! https://docs.anthropic.com/en/api/messages
const std = @import("std");
const conversation = @import("../../conversation.zig");
const writeRawJson = conversation.writeRawJson;
const Block = conversation.Block;
const call_id = @import("../../call_id.zig");
const params = @import("params.zig");
pub const interleaved_thinking_beta = params.interleaved_thinking_beta;
pub const interleavedThinking = params.interleavedThinking;

pub const endpoint = "/v1/messages";
pub const api_version = "2023-06-01";

/// What a request is made of, beside the conversation.
pub const RequestParts = @import("../../request.zig").RequestParts;

pub fn writeRequest(w: *std.Io.Writer, parts: RequestParts) std.Io.Writer.Error!void {
    const config = parts.config;
    var s: std.json.Stringify = .{ .writer = w };
    try s.beginObject();
    try s.objectField("model");
    try s.write(config.model);
    try params.writeLimits(&s, parts);
    if (config.system) |system| {
        try s.objectField("system");
        try s.write(system);
    }
    try s.objectField("messages");
    try s.beginArray();
    for (parts.conversation.messages.items) |m| {
        const thinking = m.role == .assistant and parts.sendsThinking(m);
        if (!hasContent(m, thinking)) continue; // (its thinking was for another model)
        var id_buf: call_id.Buffer = undefined;
        try s.beginObject();
        try s.objectField("role");
        try s.write(@tagName(m.role));
        try s.objectField("content");
        try s.beginArray();
        for (m.blocks) |b| switch (b.kind) {
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
            .text => try writeText(&s, b.text),
            .image, .document => try writeMedia(&s, b),
            .tool_call => {
                try s.beginObject();
                try s.objectField("type");
                try s.write("tool_use");
                try s.objectField("id");
                try s.write(call_id.forWire(b.id, &id_buf));
                try s.objectField("name");
                try s.write(b.name);
                try s.objectField("input");
                try writeRawJson(&s, b.text);
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
                        .image, .document => try writeMedia(&s, p),
                        else => try writeText(&s, p.text),
                    };
                    try s.endArray();
                }
                if (b.is_error) {
                    try s.objectField("is_error");
                    try s.write(true);
                }
                try s.endObject();
            },
        };
        try s.endArray();
        try s.endObject();
    }
    try s.endArray();
    try parts.writeTools(&s, .anthropic);
    try params.write(&s, parts);
    try s.objectField("stream");
    try s.write(true);
    try parts.writeExtraBody(&s);
    try s.endObject();
}

/// Whether a message has a block to send: an assistant message whose only blocks are thinking
/// for another model is left out (the API refuses empty content).
fn hasContent(m: conversation.Message, thinking: bool) bool {
    for (m.blocks) |b| switch (b.kind) {
        .thinking => if (thinking and b.signature.len > 0) return true,
        .redacted_thinking => if (thinking) return true,
        else => return true,
    };
    return false;
}

fn writeText(s: *std.json.Stringify, text: []const u8) std.Io.Writer.Error!void {
    try s.beginObject();
    try s.objectField("type");
    try s.write("text");
    try s.objectField("text");
    try s.write(text);
    try s.endObject();
}

/// An image or document block: base64 inline; a document's name as its title.
fn writeMedia(s: *std.json.Stringify, b: Block) std.Io.Writer.Error!void {
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
    try s.endObject();
}
