//! One streamed turn from Zig: `zig build run -- BASE_URL` prints the text as it arrives.
const std = @import("std");
const panto = @import("panto");

pub fn main(init: std.process.Init) !void {
    const gpa = std.heap.c_allocator;
    var args = init.minimal.args.iterate();
    _ = args.skip();
    const base_url = args.next() orelse return error.MissingBaseUrl;

    const agent = try panto.Agent.init(gpa, .{ .provider = .anthropic, .model = "claude-sonnet-4-5", .base_url = base_url, .api_key = "demo-key" });
    defer agent.deinit();
    const stream = try agent.run("Say hello from Zig in one sentence.");
    defer stream.destroy();
    var out_buf: [256]u8 = undefined;
    var out = std.Io.File.stdout().writer(init.io, &out_buf);
    const w = &out.interface;
    try w.writeAll("[zig] ");
    while (try stream.next()) |event| switch (event) {
        .content_delta => |d| if (d.kind == .text) {
            try w.writeAll(d.text);
            try w.flush();
        },
        .message_complete => |m| try w.print("    ({s}, {d} tokens out)\n", .{ @tagName(m.stop_reason), m.usage.output_tokens }),
        else => {},
    };
    try w.flush();
}
