//! A tool_use (or server_tool_use) whose `input` comes whole in content_block_start and then
//! streams input_json_delta too: the streamed input replaces the whole one, as the SDKs'
//! accumulators do (anthropic-sdk-python `accumulate_event`: the JSON buffer starts empty,
//! and once it holds anything the input is what it parses to); fragments of "" leave the
//! whole input. The block's events join to the input it ends with.
const std = @import("std");
const Fixture = @import("../../anthropic_decode_fixture.zig").Fixture;

fn events(comptime block: []const u8, comptime fragments: []const []const u8) [4 + fragments.len][]const u8 {
    var lines: [4 + fragments.len][]const u8 = undefined;
    lines[0] = "{\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"model\":\"claude-a\",\"content\":[]}}";
    lines[1] = "{\"type\":\"content_block_start\",\"index\":0,\"content_block\":" ++ block ++ "}";
    inline for (fragments, 0..) |f, i| lines[2 + i] = "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"" ++ f ++ "\"}}";
    lines[2 + fragments.len] = "{\"type\":\"content_block_stop\",\"index\":0}";
    lines[3 + fragments.len] = "{\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"}}";
    return lines;
}

/// The block's deltas joined, and its block_complete's text.
fn decode(lines: []const []const u8, joined: *std.ArrayList(u8), complete: *std.ArrayList(u8)) !void {
    const gpa = std.testing.allocator;
    var f: Fixture = .init(gpa);
    defer f.deinit();
    for (lines) |data| {
        try f.handle(data);
        while (f.assembly.pop()) |e| switch (e) {
            .content_delta => |c| try joined.appendSlice(gpa, c.text),
            .block_complete => |c| try complete.appendSlice(gpa, c.text),
            else => {},
        };
    }
}

test "input given whole and then streamed: the streamed input, alone; fragments of \"\" keep the whole one" {
    const gpa = std.testing.allocator;
    const tool = "{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"get_weather\",\"input\":{\"city\":\"Rome\"}}";
    const server = "{\"type\":\"server_tool_use\",\"id\":\"srvtoolu_1\",\"name\":\"web_fetch\",\"input\":{\"url\":\"https://a.example\"}}";
    const cases = [_]struct { []const []const u8, []const u8, []const u8 }{
        .{ &events(tool, &.{ "{\\\"city\\\":", "\\\"Paris\\\"}" }), "{\"city\":\"Paris\"}", "{\"city\":\"Paris\"}" },
        .{ &events(tool, &.{""}), "{\"city\":\"Rome\"}", "{\"city\":\"Rome\"}" },
        .{ &events(tool, &.{}), "{\"city\":\"Rome\"}", "{\"city\":\"Rome\"}" },
        .{ &events(server, &.{"{\\\"url\\\":\\\"https://b.example\\\"}"}), "{\"url\":\"https://b.example\"}", "{\"type\":\"server_tool_use\",\"id\":\"srvtoolu_1\",\"name\":\"web_fetch\",\"input\":{\"url\":\"https://b.example\"}}" },
        .{ &events(server, &.{}), "{\"url\":\"https://a.example\"}", server },
    };
    for (cases) |c| {
        var joined: std.ArrayList(u8) = .empty;
        defer joined.deinit(gpa);
        var complete: std.ArrayList(u8) = .empty;
        defer complete.deinit(gpa);
        try decode(c[0], &joined, &complete);
        try std.testing.expectEqualStrings(c[1], joined.items);
        try std.testing.expectEqualStrings(c[2], complete.items);
    }
}
