//! Content parts as a caller gives them (text, or the raw bytes of an image or a PDF) made into
//! what the conversation keeps and events report: media fitted by media.zig and kept inline as
//! base64, what cannot be sent turned into a text note, text mended to UTF-8.
const std = @import("std");
const Allocator = std.mem.Allocator;
const media = @import("media.zig");
const conversation = @import("conversation.zig");
const Block = conversation.Block;
const ev = @import("event.zig");
const utf8 = @import("utf8.zig");

/// A part as given: text, or media (raw bytes, a media-type hint, a name).
pub const Part = union(enum) {
    text: []const u8,
    media: media.Given,
};

/// A tool result made of parts, ready for the conversation and the ToolResult event.
pub const Content = struct {
    /// The result when `blocks` is empty (a plain result); else its text parts joined with "\n".
    text: []u8,
    /// Text, image and document blocks in order; empty when every part is text.
    blocks: []Block = &.{},
    /// One per block, borrowing the blocks' strings.
    infos: []ev.PartInfo = &.{},

    pub fn deinit(c: Content, gpa: Allocator) void {
        gpa.free(c.text);
        conversation.freeBlocks(gpa, c.blocks);
        gpa.free(c.infos);
    }
};

/// A tool result: `text` (when not empty) then `parts`. A result whose parts are all text
/// after fitting is plain: one string, the texts joined with "\n".
pub fn toolResult(gpa: Allocator, text: []const u8, parts: []const Part) Allocator.Error!Content {
    if (parts.len == 0) { // the result of nearly every tool: one copy, as before parts
        var mended: std.ArrayList(u8) = .empty;
        defer mended.deinit(gpa);
        return .{ .text = try gpa.dupe(u8, try utf8.valid(gpa, &mended, text)) };
    }
    const blocks = try fitAll(gpa, text, parts);
    var owned = true;
    defer if (owned) conversation.freeBlocks(gpa, blocks);
    const joined = try joinText(gpa, blocks);
    for (blocks) |b| if (b.kind != .text) {
        errdefer gpa.free(joined);
        const infos = try describe(gpa, blocks);
        owned = false;
        return .{ .text = joined, .blocks = blocks, .infos = infos };
    };
    return .{ .text = joined };
}

/// A user turn's blocks, owned by `gpa` (conversation.freeBlocks): one text block without
/// parts (as a turn always was), else `text` (when not empty) then the parts in order.
pub fn userTurn(gpa: Allocator, text: []const u8, parts: []const Part) Allocator.Error![]Block {
    if (parts.len == 0) {
        var mended: std.ArrayList(u8) = .empty;
        defer mended.deinit(gpa);
        return conversation.copyBlocks(gpa, &.{.{ .kind = .text, .text = try utf8.valid(gpa, &mended, text) }});
    }
    return fitAll(gpa, text, parts);
}

/// Blocks for `text` (when not empty) and each part: media fitted (or its note as text).
fn fitAll(gpa: Allocator, text: []const u8, parts: []const Part) Allocator.Error![]Block {
    var blocks: std.ArrayList(Block) = .empty;
    defer {
        for (blocks.items) |b| conversation.freeBlock(gpa, b);
        blocks.deinit(gpa);
    }
    try blocks.ensureTotalCapacity(gpa, parts.len + 1);
    if (text.len > 0) blocks.appendAssumeCapacity(try textBlock(gpa, text));
    for (parts) |p| blocks.appendAssumeCapacity(switch (p) {
        .text => |t| try textBlock(gpa, t),
        .media => |m| try mediaBlock(gpa, m),
    });
    const owned = try blocks.toOwnedSlice(gpa);
    return owned;
}

fn textBlock(gpa: Allocator, text: []const u8) Allocator.Error!Block {
    var mended: std.ArrayList(u8) = .empty;
    defer mended.deinit(gpa);
    return conversation.copyBlock(gpa, .{ .kind = .text, .text = try utf8.valid(gpa, &mended, text) });
}

/// The block of fitted media, base64 inline; a text block with the note when it was dropped.
fn mediaBlock(gpa: Allocator, given: media.Given) Allocator.Error!Block {
    const outcome = try media.fit(gpa, given);
    defer outcome.deinit(gpa);
    const fitted = switch (outcome) {
        .dropped => |note| return textBlock(gpa, note),
        .fitted => |f| f,
    };
    const encoder = std.base64.standard.Encoder;
    const data = try gpa.alloc(u8, encoder.calcSize(fitted.data.len));
    errdefer gpa.free(data);
    _ = encoder.encode(data, fitted.data);
    var mended: std.ArrayList(u8) = .empty;
    defer mended.deinit(gpa);
    var block = try conversation.copyBlock(gpa, .{
        .kind = switch (fitted.kind) {
            .image => .image,
            .document => .document,
        },
        .text = "",
        .media_type = fitted.media_type,
        .name = try utf8.valid(gpa, &mended, given.name),
        .width = fitted.width,
        .height = fitted.height,
    });
    // The encoding (up to 4.5 MiB) becomes the block's own text rather than being copied.
    gpa.free(block.text);
    block.text = data;
    return block;
}

/// The text blocks' texts joined with "\n".
pub fn joinText(gpa: Allocator, blocks: []const Block) Allocator.Error![]u8 {
    var out: std.ArrayList(u8) = .empty;
    errdefer out.deinit(gpa);
    var first = true;
    for (blocks) |b| if (b.kind == .text) {
        if (!first) try out.append(gpa, '\n');
        try out.appendSlice(gpa, b.text);
        first = false;
    };
    return out.toOwnedSlice(gpa);
}

/// What events report of each block.
pub fn describe(gpa: Allocator, blocks: []const Block) Allocator.Error![]ev.PartInfo {
    const infos = try gpa.alloc(ev.PartInfo, blocks.len);
    for (blocks, infos) |b, *info| info.* = switch (b.kind) {
        .image, .document => .{
            .kind = if (b.kind == .image) .image else .document,
            .width = b.width,
            .height = b.height,
            .media_type = .of(b.media_type),
            .name = .of(b.name),
            .data = .of(b.text),
            .byte_size = decodedSize(b.text),
        },
        else => .{ .kind = .text, .text = .of(b.text) },
    };
    return infos;
}

/// The size of the bytes that padded base64 `text` holds, computed from its length alone: a
/// block's base64 may come from an import (checked there, but no assertion rests on it).
fn decodedSize(text: []const u8) u64 {
    const padding = @min(2, text.len - std.mem.trimEnd(u8, text, "=").len);
    return (text.len / 4) * 3 -| padding;
}

const png_1x1 = @import("test_png.zig").bytes;

test "a tool result of text parts is one string, joined with newlines, content first" {
    const gpa = std.testing.allocator;
    const c = try toolResult(gpa, "found", &.{ .{ .text = "line 2" }, .{ .text = "bad \xff" } });
    defer c.deinit(gpa);
    try std.testing.expectEqualStrings("found\nline 2\nbad \u{FFFD}", c.text);
    try std.testing.expectEqual(@as(usize, 0), c.blocks.len);
    try std.testing.expectEqual(@as(usize, 0), c.infos.len);
    // Nothing at all is the empty result, as before parts; text alone is taken as it is.
    const empty = try toolResult(gpa, "", &.{});
    defer empty.deinit(gpa);
    try std.testing.expectEqualStrings("", empty.text);
    const alone = try toolResult(gpa, "a\x00b \xff", &.{});
    defer alone.deinit(gpa);
    try std.testing.expectEqualStrings("a\x00b \u{FFFD}", alone.text);
}

test "a tool result with media keeps its parts in order, base64 inline, and describes each" {
    const gpa = std.testing.allocator;
    const c = try toolResult(gpa, "", &.{
        .{ .text = "here" },
        .{ .media = .{ .bytes = png_1x1, .hint = "image/jpeg", .name = "dot.png" } },
        .{ .media = .{ .bytes = "%PDF-1.4 tiny", .name = "a.pdf" } },
        .{ .media = .{ .bytes = "not media", .name = "junk.bin" } },
    });
    defer c.deinit(gpa);
    try std.testing.expectEqual(@as(usize, 4), c.blocks.len);
    try std.testing.expectEqual(.text, c.blocks[0].kind);
    try std.testing.expectEqual(.image, c.blocks[1].kind);
    try std.testing.expectEqualStrings("image/png", c.blocks[1].media_type); // the bytes win
    var decoded: [png_1x1.len]u8 = undefined;
    try std.base64.standard.Decoder.decode(&decoded, c.blocks[1].text);
    try std.testing.expectEqualStrings(png_1x1, &decoded);
    try std.testing.expectEqual(.document, c.blocks[2].kind);
    try std.testing.expectEqualStrings("a.pdf", c.blocks[2].name);
    try std.testing.expectEqualStrings("JVBERi0xLjQgdGlueQ==", c.blocks[2].text);
    try std.testing.expectEqual(.text, c.blocks[3].kind);
    try std.testing.expect(std.mem.startsWith(u8, c.blocks[3].text, "[attachment junk.bin dropped: "));
    // The event's text: the text parts (the note too) joined.
    try std.testing.expect(std.mem.startsWith(u8, c.text, "here\n[attachment junk.bin dropped: "));

    try std.testing.expectEqual(.text, c.infos[0].kind);
    try std.testing.expectEqualStrings("here", c.infos[0].text.slice());
    try std.testing.expectEqual(.image, c.infos[1].kind);
    try std.testing.expectEqual(@as(u64, png_1x1.len), c.infos[1].byte_size);
    try std.testing.expectEqualStrings(c.blocks[1].text, c.infos[1].data.slice());
    try std.testing.expectEqualStrings("dot.png", c.infos[1].name.slice());
    try std.testing.expectEqual(.document, c.infos[2].kind);
    try std.testing.expectEqual(@as(u64, 13), c.infos[2].byte_size);
    try std.testing.expectEqualStrings("application/pdf", c.infos[2].media_type.slice());
    try std.testing.expectEqual(.text, c.infos[3].kind);
}

test "a user turn: one text block without parts, else text then the parts in order" {
    const gpa = std.testing.allocator;
    const plain = try userTurn(gpa, "hi \xff", &.{});
    defer conversation.freeBlocks(gpa, plain);
    try std.testing.expectEqual(@as(usize, 1), plain.len);
    try std.testing.expectEqualStrings("hi \u{FFFD}", plain[0].text);
    const empty = try userTurn(gpa, "", &.{});
    defer conversation.freeBlocks(gpa, empty);
    try std.testing.expectEqual(@as(usize, 1), empty.len);

    const blocks = try userTurn(gpa, "", &.{ .{ .text = "What is this?" }, .{ .media = .{ .bytes = png_1x1 } }, .{ .text = "and this" } });
    defer conversation.freeBlocks(gpa, blocks);
    try std.testing.expectEqual(@as(usize, 3), blocks.len);
    try std.testing.expectEqual(.text, blocks[0].kind);
    try std.testing.expectEqual(.image, blocks[1].kind);
    try std.testing.expectEqualStrings("and this", blocks[2].text);
}

test "assembling parts frees everything when memory runs out" {
    try std.testing.checkAllAllocationFailures(std.testing.allocator, struct {
        fn run(gpa: Allocator) !void {
            const parts: []const Part = &.{ .{ .text = "a" }, .{ .media = .{ .bytes = png_1x1, .name = "x.png" } }, .{ .media = .{ .bytes = "?" } } };
            const c = try toolResult(gpa, "t", parts);
            c.deinit(gpa);
            conversation.freeBlocks(gpa, try userTurn(gpa, "t", parts));
        }
    }.run, .{});
}
