//! An MCP tool's result as a tool result of the turn (docs/design/mcp.md, decision 2): text
//! parts as text, images through the media pipeline (content.zig) as a host tool's image,
//! resources and resource links as text, `structuredContent` kept as one JSON text part when
//! no text part carries it, and `isError` as an error result.
const std = @import("std");
const Allocator = std.mem.Allocator;
const client = @import("client.zig");
const content = @import("../content.zig");

/// The result's content (owned by `gpa`); `scratch` holds what is only needed meanwhile.
pub fn toContent(gpa: Allocator, scratch: Allocator, r: client.CallResult) Allocator.Error!content.Content {
    var parts: std.ArrayList(content.Part) = .empty;
    var carried = false;
    for (r.content) |part| switch (part) {
        .text => |t| {
            // The spec asks servers to send structuredContent's JSON as a text part too: a
            // text part that is JSON is taken to be it.
            if (!carried) carried = std.json.validate(scratch, t) catch false;
            try parts.append(scratch, .{ .text = t });
        },
        .image => |m| {
            const decoder = std.base64.standard.Decoder;
            const size = decoder.calcSizeForSlice(m.data) catch 0;
            const bytes = try scratch.alloc(u8, size);
            if (size > 0) if (decoder.decode(bytes, m.data)) {
                try parts.append(scratch, .{ .media = .{ .bytes = bytes, .hint = m.mime_type } });
                continue;
            } else |_| {};
            try parts.append(scratch, .{ .text = try std.fmt.allocPrint(scratch, "[an image ({s}) that is not valid base64]", .{m.mime_type}) });
        },
        .audio => |m| try parts.append(scratch, .{ .text = try std.fmt.allocPrint(scratch, "[audio ({s}), not shown]", .{m.mime_type}) }),
        .resource => |res| try parts.append(scratch, .{ .text = try std.fmt.allocPrint(scratch, "[resource {s}{s}{s}{s}]{s}{s}", .{
            res.uri,
            if (res.mime_type != null) " (" else "",
            res.mime_type orelse "",
            if (res.mime_type != null) ")" else "",
            if (res.text != null) "\n" else "",
            res.text orelse "",
        }) }),
        .other => |json| try parts.append(scratch, .{ .text = json }),
    };
    if (r.structured_json) |json| if (!carried) try parts.append(scratch, .{ .text = json });
    return content.toolResult(gpa, "", parts.items);
}

test "mcp: an MCP result's parts become a tool result's content" {
    const gpa = std.testing.allocator;
    var arena_state: std.heap.ArenaAllocator = .init(gpa);
    defer arena_state.deinit();
    const arena = arena_state.allocator();
    var parts = [_]client.Content{
        .{ .text = "hello" },
        .{ .resource = .{ .uri = "file:///n.txt", .text = "notes", .mime_type = "text/plain" } },
        .{ .resource = .{ .uri = "file:///g.md", .text = null, .mime_type = null } },
    };
    const plain = try toContent(gpa, arena, .{ .content = &parts, .structured_json = "{\"sum\":3}", .is_error = false });
    defer plain.deinit(gpa);
    try std.testing.expectEqualStrings("hello\n[resource file:///n.txt (text/plain)]\nnotes\n[resource file:///g.md]\n{\"sum\":3}", plain.text);

    // structuredContent already carried by a JSON text part is not written twice.
    var carried = [_]client.Content{.{ .text = "{\"sum\": 3}" }};
    const once = try toContent(gpa, arena, .{ .content = &carried, .structured_json = "{\"sum\":3}", .is_error = false });
    defer once.deinit(gpa);
    try std.testing.expectEqualStrings("{\"sum\": 3}", once.text);

    const png = @import("../test_png.zig").bytes;
    const encoded = try arena.alloc(u8, std.base64.standard.Encoder.calcSize(png.len));
    var image = [_]client.Content{.{ .image = .{ .data = std.base64.standard.Encoder.encode(encoded, png), .mime_type = "image/png" } }};
    const with_image = try toContent(gpa, arena, .{ .content = &image, .structured_json = null, .is_error = false });
    defer with_image.deinit(gpa);
    try std.testing.expectEqual(@as(usize, 1), with_image.infos.len);
    try std.testing.expectEqualStrings("image/png", with_image.infos[0].media_type.slice());
}
