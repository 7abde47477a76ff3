//! A conversation as Markdown (`/export`): a document a person reads or shares, not one panto
//! reads back (the session file is that). Each message under a heading with its role (and the
//! model of an answer), texts as they are, thinking in a collapsed <details>, a tool call as
//! its name and input in a ```json fence, its result in a plain fence (✗ when it failed),
//! media by kind and name, a compaction's summary marked as one.
const std = @import("std");
const panto = @import("panto");

const Writer = std.Io.Writer;
const Message = panto.conversation.Message;
const Block = panto.conversation.Block;

pub const Header = struct {
    /// The session's id, or "" without one.
    session: []const u8 = "",
    provider: []const u8,
    model: []const u8,
};

pub fn write(w: *Writer, header: Header, messages: []const Message) Writer.Error!void {
    if (header.session.len > 0) try w.print("# panto session {s}\n\n", .{header.session}) else try w.writeAll("# panto conversation\n\n");
    try w.print("_{d} message{s}; {s}, {s}_\n", .{ messages.len, if (messages.len == 1) "" else "s", header.provider, header.model });
    for (messages) |m| {
        try w.writeAll("\n");
        if (m.compaction) |c| {
            try w.print("## Summary of {d} earlier message{s}\n\n", .{ c.message_count, if (c.message_count == 1) "" else "s" });
        } else if (m.role == .user) {
            try w.writeAll(if (onlyResults(m)) "## Tool results\n\n" else "## User\n\n");
        } else if (m.model.len > 0) {
            try w.print("## Assistant ({s})\n\n", .{m.model});
        } else try w.writeAll("## Assistant\n\n");
        for (m.blocks, 0..) |b, i| {
            if (i > 0) try w.writeAll("\n");
            try writeBlock(w, b, messages);
        }
        if (m.stop_reason == .aborted) try w.writeAll("\n_(canceled)_\n");
    }
}

fn writeBlock(w: *Writer, b: Block, messages: []const Message) Writer.Error!void {
    switch (b.kind) {
        .text => try w.print("{s}\n", .{std.mem.trimEnd(u8, b.text, "\n")}),
        .thinking => {
            try w.writeAll("<details><summary>Thinking</summary>\n\n");
            try w.print("{s}\n\n</details>\n", .{std.mem.trimEnd(u8, b.text, "\n")});
        },
        .redacted_thinking => try w.writeAll("_(thinking, redacted by the provider)_\n"),
        .tool_call => {
            try w.print("**Tool call** `{s}`\n\n", .{b.name});
            try fence(w, "json", b.text);
        },
        .tool_result => {
            try w.print("**Result of** `{s}`{s}\n\n", .{ callName(messages, b.id), if (b.is_error) " ✗ (failed)" else "" });
            try fence(w, "", b.text);
            for (b.parts) |p| if (p.kind == .image or p.kind == .document) try media(w, p);
        },
        .image, .document => try media(w, b),
        .server_block => try w.print("_(provider tool block `{s}`)_\n", .{b.name}),
    }
}

fn media(w: *Writer, b: Block) Writer.Error!void {
    try w.print("_[{s}{s}{s}, {s}]_\n", .{ @tagName(b.kind), if (b.name.len > 0) " " else "", b.name, b.media_type });
}

/// A fenced block long enough that no run of backticks inside closes it.
fn fence(w: *Writer, info: []const u8, text: []const u8) Writer.Error!void {
    const ticks = fenceLength(text);
    try w.splatByteAll('`', ticks);
    try w.print("{s}\n{s}\n", .{ info, std.mem.trimEnd(u8, text, "\n") });
    try w.splatByteAll('`', ticks);
    try w.writeByte('\n');
}

/// The backticks of a fence no run inside `text` closes: 3, or one more than its longest run.
pub fn fenceLength(text: []const u8) usize {
    var longest: usize = 0;
    var run: usize = 0;
    for (text) |c| {
        run = if (c == '`') run + 1 else 0;
        longest = @max(longest, run);
    }
    return @max(3, longest + 1);
}

pub fn onlyResults(m: Message) bool {
    if (m.blocks.len == 0) return false;
    for (m.blocks) |b| if (b.kind != .tool_result) return false;
    return true;
}

/// The name of the tool call `id` answers (the call is in an earlier message).
pub fn callName(messages: []const Message, id: []const u8) []const u8 {
    var i = messages.len;
    while (i > 0) {
        i -= 1;
        for (messages[i].blocks) |b| if (b.kind == .tool_call and std.mem.eql(u8, b.id, id)) return b.name;
    }
    return "tool";
}

const testing = std.testing;

test "a conversation as Markdown: roles, the answer's model, thinking folded, calls and results fenced" {
    var question = [_]Block{.{ .kind = .text, .text = "Read a.txt" }};
    var call = [_]Block{
        .{ .kind = .thinking, .text = "It wants the file." },
        .{ .kind = .tool_call, .id = "t1", .name = "read", .text = "{\"path\":\"a.txt\"}" },
    };
    var result = [_]Block{.{ .kind = .tool_result, .id = "t1", .text = "has ``` inside\n", .is_error = true }};
    var answer = [_]Block{.{ .kind = .text, .text = "It failed.\n" }};
    const messages = [_]Message{
        .{ .role = .user, .blocks = &question },
        .{ .role = .assistant, .blocks = &call, .model = "claude-test" },
        .{ .role = .user, .blocks = &result },
        .{ .role = .assistant, .blocks = &answer, .model = "claude-test", .stop_reason = .aborted },
    };
    var out: Writer.Allocating = .init(testing.allocator);
    defer out.deinit();
    try write(&out.writer, .{ .session = "s1", .provider = "anthropic", .model = "claude-test" }, &messages);
    try testing.expectEqualStrings(
        \\# panto session s1
        \\
        \\_4 messages; anthropic, claude-test_
        \\
        \\## User
        \\
        \\Read a.txt
        \\
        \\## Assistant (claude-test)
        \\
        \\<details><summary>Thinking</summary>
        \\
        \\It wants the file.
        \\
        \\</details>
        \\
        \\**Tool call** `read`
        \\
        \\```json
        \\{"path":"a.txt"}
        \\```
        \\
        \\## Tool results
        \\
        \\**Result of** `read` ✗ (failed)
        \\
        \\````
        \\has ``` inside
        \\````
        \\
        \\## Assistant (claude-test)
        \\
        \\It failed.
        \\
        \\_(canceled)_
        \\
    , out.written());
}
