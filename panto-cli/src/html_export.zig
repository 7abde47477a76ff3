//! A conversation as one self-contained HTML file (`/export FILE.html`): the Markdown
//! export's layout (markdown_export.zig: a section per message under its role, thinking in a
//! collapsed <details>, tool calls and results in <pre>, media by kind and name), with its
//! style inline and no script. Every text of the conversation is escaped: a message holding
//! `<script>` shows it, never runs it.
const std = @import("std");
const panto = @import("panto");
const markdown_export = @import("markdown_export.zig");

const Writer = std.Io.Writer;
const Message = panto.conversation.Message;
const Block = panto.conversation.Block;
pub const Header = markdown_export.Header;

const style =
    \\body{font:15px/1.5 system-ui,sans-serif;max-width:52rem;margin:2rem auto;padding:0 1rem;color:#222}
    \\h1{font-size:1.4rem}h2{font-size:1rem;margin:1.5rem 0 .5rem;color:#555}
    \\section{border-left:3px solid #ccc;padding-left:1rem}section.user{border-color:#36c}
    \\section.assistant{border-color:#393}section.summary{border-color:#c93}
    \\pre{white-space:pre-wrap;word-wrap:break-word;background:#f5f5f5;padding:.5rem;border-radius:4px}
    \\.text{white-space:pre-wrap}.failed{color:#b00}.meta{color:#777;font-style:italic}
    \\details{color:#666}
;

pub fn write(w: *Writer, header: Header, messages: []const Message) Writer.Error!void {
    try w.writeAll("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">\n<title>");
    try titleOf(w, header);
    try w.print("</title>\n<style>\n{s}\n</style></head>\n<body>\n<h1>", .{style});
    try titleOf(w, header);
    try w.print("</h1>\n<p class=\"meta\">{d} message{s}; ", .{ messages.len, if (messages.len == 1) "" else "s" });
    try escape(w, header.provider);
    try w.writeAll(", ");
    try escape(w, header.model);
    try w.writeAll("</p>\n");
    for (messages) |m| {
        if (m.compaction) |c| {
            try w.print("<section class=\"summary\"><h2>Summary of {d} earlier message{s}</h2>\n", .{ c.message_count, if (c.message_count == 1) "" else "s" });
        } else if (m.role == .user) {
            try w.writeAll(if (markdown_export.onlyResults(m)) "<section class=\"results\"><h2>Tool results</h2>\n" else "<section class=\"user\"><h2>User</h2>\n");
        } else {
            try w.writeAll("<section class=\"assistant\"><h2>Assistant");
            if (m.model.len > 0) {
                try w.writeAll(" (");
                try escape(w, m.model);
                try w.writeAll(")");
            }
            try w.writeAll("</h2>\n");
        }
        for (m.blocks) |b| try writeBlock(w, b, messages);
        if (m.stop_reason == .aborted) try w.writeAll("<p class=\"meta\">(canceled)</p>\n");
        try w.writeAll("</section>\n");
    }
    try w.writeAll("</body></html>\n");
}

fn titleOf(w: *Writer, header: Header) Writer.Error!void {
    if (header.session.len == 0) return w.writeAll("panto conversation");
    try w.writeAll("panto session ");
    try escape(w, header.session);
}

fn writeBlock(w: *Writer, b: Block, messages: []const Message) Writer.Error!void {
    switch (b.kind) {
        .text => try tagged(w, "<div class=\"text\">", b.text, "</div>\n"),
        .thinking => try tagged(w, "<details><summary>Thinking</summary><div class=\"text\">", b.text, "</div></details>\n"),
        .redacted_thinking => try w.writeAll("<p class=\"meta\">(thinking, redacted by the provider)</p>\n"),
        .tool_call => {
            try tagged(w, "<p><b>Tool call</b> <code>", b.name, "</code></p>\n");
            try tagged(w, "<pre>", b.text, "</pre>\n");
        },
        .tool_result => {
            try tagged(w, "<p><b>Result of</b> <code>", markdown_export.callName(messages, b.id), "</code>");
            if (b.is_error) try w.writeAll(" <span class=\"failed\">✗ (failed)</span>");
            try w.writeAll("</p>\n");
            try tagged(w, "<pre>", b.text, "</pre>\n");
            for (b.parts) |p| if (p.kind == .image or p.kind == .document) try media(w, p);
        },
        .image, .document => try media(w, b),
        .server_block => try tagged(w, "<p class=\"meta\">(provider tool block <code>", b.name, "</code>)</p>\n"),
    }
}

fn media(w: *Writer, b: Block) Writer.Error!void {
    try w.print("<p class=\"meta\">[{s}", .{@tagName(b.kind)});
    if (b.name.len > 0) try tagged(w, " ", b.name, "");
    try tagged(w, ", ", b.media_type, "]</p>\n");
}

/// `open`, `text` escaped (its last newlines dropped), `close`.
fn tagged(w: *Writer, open: []const u8, text: []const u8, close: []const u8) Writer.Error!void {
    try w.writeAll(open);
    try escape(w, std.mem.trimEnd(u8, text, "\n"));
    try w.writeAll(close);
}

/// Text as HTML: the five characters that could open markup or end an attribute escaped.
pub fn escape(w: *Writer, text: []const u8) Writer.Error!void {
    var start: usize = 0;
    for (text, 0..) |c, i| {
        const entity = switch (c) {
            '&' => "&amp;",
            '<' => "&lt;",
            '>' => "&gt;",
            '"' => "&quot;",
            '\'' => "&#39;",
            else => continue,
        };
        try w.writeAll(text[start..i]);
        try w.writeAll(entity);
        start = i + 1;
    }
    try w.writeAll(text[start..]);
}

const testing = std.testing;

test "markup in a conversation is escaped, everywhere it can be" {
    var question = [_]Block{.{ .kind = .text, .text = "<script>alert('x')</script> & \"more\"" }};
    var call = [_]Block{.{ .kind = .tool_call, .id = "t1", .name = "<b>", .text = "{\"a\":\"</pre><script>\"}" }};
    var result = [_]Block{.{ .kind = .tool_result, .id = "t1", .text = "</pre>", .is_error = true }};
    const messages = [_]Message{
        .{ .role = .user, .blocks = &question },
        .{ .role = .assistant, .blocks = &call, .model = "<m>" },
        .{ .role = .user, .blocks = &result },
    };
    var out: Writer.Allocating = .init(testing.allocator);
    defer out.deinit();
    try write(&out.writer, .{ .session = "<s>", .provider = "anthropic", .model = "<m>" }, &messages);
    const html = out.written();
    // The document's own tags only: none from the conversation.
    try testing.expect(std.mem.indexOf(u8, html, "<script") == null);
    try testing.expectEqual(@as(usize, 2), std.mem.count(u8, html, "<pre>"));
    try testing.expectEqual(@as(usize, 2), std.mem.count(u8, html, "</pre>"));
    try testing.expect(std.mem.indexOf(u8, html, "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;more&quot;") != null);
    try testing.expect(std.mem.indexOf(u8, html, "<title>panto session &lt;s&gt;</title>") != null);
    try testing.expect(std.mem.indexOf(u8, html, "<b>Result of</b> <code>&lt;b&gt;</code> <span class=\"failed\">") != null);
}
