//! The earlier conversation, shown when a session is resumed (--continue, --session): its
//! last messages as the turns showed them live (the prompt, the answer's text, thinking
//! folded, tool calls and their results), each text cut to its first lines, so that the
//! screen says where the conversation stands without filling up with it.
const std = @import("std");
const panto = @import("panto");
const Renderer = @import("render.zig").Renderer;
const style = @import("render.zig");

const Writer = std.Io.Writer;
const Message = panto.conversation.Message;

/// The messages shown at most; the earlier ones are counted in one dim line.
pub const max_messages = 10;
/// The lines of one text shown at most.
pub const max_lines = 6;

/// The session `agent` resumed: its last messages, then a line naming it.
pub fn resumed(r: *Renderer, agent: *panto.Agent, prompt: []const u8) Writer.Error!void {
    const info = agent.sessionInfo() orelse return;
    try show(r, agent.conversation.messages.items, prompt);
    try r.out.print("{s}resumed session {s} ({d} messages){s}\n", .{ style.dim, info.id, agent.messageCount(), style.reset });
}

pub fn show(r: *Renderer, messages: []const Message, prompt: []const u8) Writer.Error!void {
    const first = messages.len -| max_messages;
    if (first > 0) try r.out.print("{s}… {d} earlier message{s}{s}\n", .{ style.dim, first, if (first == 1) "" else "s", style.reset });
    for (messages[first..]) |m| {
        if (m.compaction) |c| {
            try r.out.print("{s}▸ summary of {d} earlier message{s}{s}\n", .{ style.dim, c.message_count, if (c.message_count == 1) "" else "s", style.reset });
            continue;
        }
        for (m.blocks) |b| switch (b.kind) {
            .text => if (m.role == .user) {
                try r.out.print("\x1b[1m{s}\x1b[0m", .{prompt});
                try cutText(r, b.text);
            } else try cutText(r, b.text),
            .thinking => if (std.mem.trim(u8, b.text, " \n\t").len > 0) try r.foldedThinkingLine(b.text),
            .redacted_thinking => r.event(&.{ .block_start = .{ .index = 0, .kind = .redacted_thinking } }),
            .tool_call => r.event(&.{ .tool_call_start = .{ .id = b.id, .name = b.name, .input = b.text, .awaiting_result = false } }),
            .tool_result => r.event(&.{ .tool_result = .{ .id = b.id, .name = callName(messages, b.id), .content = b.text, .is_error = b.is_error } }),
            .image, .document => try r.out.print("{s}[{s}{s}{s}]{s}\n", .{ style.dim, @tagName(b.kind), if (b.name.len > 0) " " else "", b.name, style.reset }),
            .server_block => {},
        };
    }
    try r.out.flush();
}

/// The first `max_lines` lines of `text`, then how many more there are.
fn cutText(r: *Renderer, text: []const u8) Writer.Error!void {
    const trimmed = std.mem.trim(u8, text, " \n\t");
    var end: usize = 0;
    var lines: usize = 0;
    while (lines < max_lines and end < trimmed.len) : (lines += 1) {
        end = if (std.mem.indexOfScalarPos(u8, trimmed, end, '\n')) |nl| nl + 1 else trimmed.len;
    }
    try r.textLine(std.mem.trimEnd(u8, trimmed[0..end], "\n"));
    if (end < trimmed.len) {
        const more = std.mem.count(u8, trimmed[end..], "\n") + 1;
        try r.out.print("{s}  … {d} more line{s}{s}\n", .{ style.dim, more, if (more == 1) "" else "s", style.reset });
    }
}

/// The name of the tool call `id` answers (the call is in an earlier message).
fn callName(messages: []const Message, id: []const u8) []const u8 {
    var i = messages.len;
    while (i > 0) {
        i -= 1;
        for (messages[i].blocks) |b| {
            if (b.kind == .tool_call and std.mem.eql(u8, b.id, id)) return b.name;
        }
    }
    return "tool";
}

const testing = std.testing;

test "the last messages as the turns showed them, texts cut to their first lines" {
    var out: Writer.Allocating = .init(testing.allocator);
    defer out.deinit();
    var r = Renderer.init(testing.allocator, &out.writer);
    defer r.deinit();
    var call = [_]panto.conversation.Block{
        .{ .kind = .text, .text = "Reading." },
        .{ .kind = .tool_call, .id = "t1", .name = "read", .text = "{\"path\":\"a.txt\"}" },
    };
    var result = [_]panto.conversation.Block{.{ .kind = .tool_result, .id = "t1", .text = "x\ny\n" }};
    var answer = [_]panto.conversation.Block{.{ .kind = .text, .text = "1\n2\n3\n4\n5\n6\n7\n8\n" }};
    var prompt = [_]panto.conversation.Block{.{ .kind = .text, .text = "Read a.txt" }};
    const messages = [_]Message{
        .{ .role = .user, .blocks = &prompt },
        .{ .role = .assistant, .blocks = &call },
        .{ .role = .user, .blocks = &result },
        .{ .role = .assistant, .blocks = &answer },
    };
    try show(&r, &messages, "> ");
    try testing.expectEqualStrings("\x1b[1m> \x1b[0mRead a.txt\nReading.\n" ++
        style.cyan ++ "⚙ read" ++ style.reset ++ " a.txt\n" ++
        "  " ++ style.dim ++ "↳ read: 2 lines, 4 B" ++ style.reset ++ "\n" ++
        style.dim ++ "    x" ++ style.reset ++ "\n" ++ style.dim ++ "    y" ++ style.reset ++ "\n" ++
        "1\n2\n3\n4\n5\n6\n" ++ style.dim ++ "  … 2 more lines" ++ style.reset ++ "\n", out.written());
}
