//! Content parts on the wire: a user turn with an image, and a tool round whose first result
//! has media (text, an image, a PDF) and whose second is plain, rendered by both providers and
//! exported, each checked as JSON against the shapes of issue 15.
const std = @import("std");
const conversation = @import("conversation.zig");
const content = @import("content.zig");
const providers = @import("providers.zig");
const Config = @import("config.zig").Config;

const png_1x1 = @import("test_png.zig").bytes;
const png_b64 = @import("test_png.zig").base64;
const pdf = "%PDF-1.4\n%%EOF\n";
const pdf_b64 = "JVBERi0xLjQKJSVFT0YK";

/// The conversation of the test: a user turn with an image, two tool calls, their results.
fn buildConversation(conv: *conversation.Conversation) !void {
    const gpa = conv.gpa;
    try conv.appendOwned(.user, try content.userTurn(gpa, "What is this?", &.{.{ .media = .{ .bytes = png_1x1 } }}));
    try conv.appendCopy(.assistant, &.{
        .{ .kind = .tool_call, .id = "call_1", .name = "shot", .text = "{}" },
        .{ .kind = .tool_call, .id = "call_2", .name = "shot", .text = "{}" },
    });
    const with_media = try content.toolResult(gpa, "two files", &.{
        .{ .media = .{ .bytes = png_1x1 } },
        .{ .media = .{ .bytes = pdf, .name = "r.pdf" } },
    });
    defer with_media.deinit(gpa);
    const plain = try content.toolResult(gpa, "plain", &.{.{ .text = "text" }});
    defer plain.deinit(gpa);
    try conv.appendCopy(.user, &.{
        .{ .kind = .tool_result, .id = "call_1", .text = with_media.text, .parts = with_media.blocks },
        .{ .kind = .tool_result, .id = "call_2", .text = plain.text, .parts = plain.blocks },
    });
}

/// The `messages` of the request `provider` makes of `conv`, as compact JSON.
fn renderMessages(gpa: std.mem.Allocator, provider: @import("config.zig").Provider, conv: *const conversation.Conversation) ![]u8 {
    var out: std.Io.Writer.Allocating = .init(gpa);
    defer out.deinit();
    // (no cache breakpoints: providers/anthropic/cache.zig tests them)
    try providers.writeRequest(provider, &out.writer, .{ .config = .{ .provider = provider, .model = "m", .request = .{ .cache = .{ .mode = .off } } }, .conversation = conv, .tools = &.{}, .granted = &.{} });
    const parsed = try std.json.parseFromSlice(std.json.Value, gpa, out.written(), .{});
    defer parsed.deinit();
    return std.json.Stringify.valueAlloc(gpa, parsed.value.object.get("messages").?, .{});
}

test "Anthropic: image and document blocks in user messages and in tool results" {
    const gpa = std.testing.allocator;
    var conv: conversation.Conversation = .init(gpa);
    defer conv.deinit();
    try buildConversation(&conv);
    const messages = try renderMessages(gpa, .anthropic, &conv);
    defer gpa.free(messages);
    try std.testing.expectEqualStrings(
        \\[{"role":"user","content":[{"type":"text","text":"What is this?"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"
    ++ png_b64 ++
        \\"}}]},{"role":"assistant","content":[{"type":"tool_use","id":"call_1","name":"shot","input":{}},{"type":"tool_use","id":"call_2","name":"shot","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"call_1","content":[{"type":"text","text":"two files"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"
    ++ png_b64 ++
        \\"}},{"type":"document","source":{"type":"base64","media_type":"application/pdf","data":"
    ++ pdf_b64 ++
        \\"},"title":"r.pdf"}]},{"type":"tool_result","tool_use_id":"call_2","content":"plain\ntext"}]}]
    , messages);
}

test "OpenAI: content-part arrays for the user, attachment lines in tool messages, one user message of the round's media" {
    const gpa = std.testing.allocator;
    var conv: conversation.Conversation = .init(gpa);
    defer conv.deinit();
    try buildConversation(&conv);
    const messages = try renderMessages(gpa, .openai, &conv);
    defer gpa.free(messages);
    try std.testing.expectEqualStrings(
        \\[{"role":"user","content":[{"type":"text","text":"What is this?"},{"type":"image_url","image_url":{"url":"data:image/png;base64,
    ++ png_b64 ++
        \\"}}]},{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"shot","arguments":"{}"}},{"id":"call_2","type":"function","function":{"name":"shot","arguments":"{}"}}]},{"role":"tool","tool_call_id":"call_1","content":"two files\n[attachment 1: image/png, in the next user message]\n[attachment 2: application/pdf, in the next user message]"},{"role":"tool","tool_call_id":"call_2","content":"plain\ntext"},{"role":"user","content":[{"type":"text","text":"Attachments of tool result call_1:"},{"type":"image_url","image_url":{"url":"data:image/png;base64,
    ++ png_b64 ++
        \\"}},{"type":"file","file":{"file_data":"data:application/pdf;base64,
    ++ pdf_b64 ++
        \\","filename":"r.pdf"}}]}]
    , messages);
}

test "OpenAI: a user turn without parts stays a string; a result of media only has just its lines" {
    const gpa = std.testing.allocator;
    var conv: conversation.Conversation = .init(gpa);
    defer conv.deinit();
    try conv.appendOwned(.user, try content.userTurn(gpa, "hi", &.{}));
    try conv.appendCopy(.assistant, &.{.{ .kind = .tool_call, .id = "c", .name = "shot", .text = "{}" }});
    const result = try content.toolResult(gpa, "", &.{.{ .media = .{ .bytes = pdf } }});
    defer result.deinit(gpa);
    try conv.appendCopy(.user, &.{.{ .kind = .tool_result, .id = "c", .text = result.text, .parts = result.blocks }});
    const messages = try renderMessages(gpa, .openai, &conv);
    defer gpa.free(messages);
    try std.testing.expectEqualStrings(
        \\[{"role":"user","content":"hi"},{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"shot","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c","content":"[attachment 1: application/pdf, in the next user message]"},{"role":"user","content":[{"type":"text","text":"Attachments of tool result c:"},{"type":"file","file":{"file_data":"data:application/pdf;base64,
    ++ pdf_b64 ++
        \\","filename":"document.pdf"}}]}]
    , messages);
}

test "the conversation export keeps media inline: base64, media type, a document's name" {
    const gpa = std.testing.allocator;
    var conv: conversation.Conversation = .init(gpa);
    defer conv.deinit();
    try buildConversation(&conv);
    var out: std.Io.Writer.Allocating = .init(gpa);
    defer out.deinit();
    try conv.writeJson(&out.writer);
    try std.testing.expectEqualStrings(
        \\[{"role":"user","content":[{"type":"text","text":"What is this?"},{"type":"image","media_type":"image/png","data":"
    ++ png_b64 ++
        \\"}]},{"role":"assistant","content":[{"type":"tool_call","id":"call_1","name":"shot","input":{}},{"type":"tool_call","id":"call_2","name":"shot","input":{}}],"provider":"","model":"","stop_reason":"none","usage":{"input_tokens":0,"output_tokens":0,"cache_read_tokens":0,"cache_write_tokens":0,"reasoning_tokens":0}},{"role":"user","content":[{"type":"tool_result","id":"call_1","content":[{"type":"text","text":"two files"},{"type":"image","media_type":"image/png","data":"
    ++ png_b64 ++
        \\"},{"type":"document","media_type":"application/pdf","data":"
    ++ pdf_b64 ++
        \\","name":"r.pdf"}],"is_error":false},{"type":"tool_result","id":"call_2","content":"plain\ntext","is_error":false}]}]
    , out.written());
}
