//! OpenAI Chat Completions (and compatible servers): the streaming request.
//! https://platform.openai.com/docs/api-reference/chat/create
const std = @import("std");
const conversation = @import("../../conversation.zig");

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
    if (config.thinking != .off) {
        try s.objectField("reasoning_effort");
        try s.write(@tagName(config.thinking));
    }
    try s.objectField("messages");
    try s.beginArray();
    if (config.system) |system| try writeMessage(&s, "system", system);
    for (parts.conversation.messages.items) |m| switch (m.role) {
        .user => {
            // Tool results are messages of their own (role "tool"); text goes as a user message.
            for (m.blocks) |b| if (b.kind == .tool_result) {
                try s.beginObject();
                try s.objectField("role");
                try s.write("tool");
                try s.objectField("tool_call_id");
                try s.write(b.id);
                try s.objectField("content");
                try s.write(b.text);
                try s.endObject();
            };
            if (hasKind(m.blocks, .text)) {
                try s.beginObject();
                try s.objectField("role");
                try s.write("user");
                try s.objectField("content");
                try writeJoinedText(&s, m.blocks);
                try s.endObject();
            }
        },
        .assistant => {
            try s.beginObject();
            try s.objectField("role");
            try s.write("assistant");
            try s.objectField("content");
            if (hasKind(m.blocks, .text)) try writeJoinedText(&s, m.blocks) else try s.write(null);
            if (hasKind(m.blocks, .tool_call)) {
                try s.objectField("tool_calls");
                try s.beginArray();
                for (m.blocks) |b| if (b.kind == .tool_call) {
                    try s.beginObject();
                    try s.objectField("id");
                    try s.write(b.id);
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
    try s.objectField("stream");
    try s.write(true);
    try s.objectField("stream_options");
    try s.beginObject();
    try s.objectField("include_usage");
    try s.write(true);
    try s.endObject();
    try s.endObject();
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

/// Chat Completions takes a message's content as one string; thinking is not sent back.
fn writeJoinedText(s: *std.json.Stringify, blocks: []const conversation.Block) std.Io.Writer.Error!void {
    try s.beginWriteRaw();
    try s.writer.writeByte('"');
    for (blocks) |b| if (b.kind == .text) try std.json.Stringify.encodeJsonStringChars(b.text, .{}, s.writer);
    try s.writer.writeByte('"');
    s.endWriteRaw();
}
