//! The set-up the tests of Anthropic's kept blocks share (server_block_test, citations_test):
//! a decoder and an assembly fed a stream's data lines one by one, the message committed as
//! claude-a's, and a request written from the conversation.
const std = @import("std");
const anthropic = @import("providers/anthropic/decode.zig");
const Assembly = @import("assembly.zig").Assembly;
const errors = @import("errors.zig");
const conversation = @import("conversation.zig");
const providers = @import("providers.zig");
const Provider = @import("config.zig").Provider;

pub const Fixture = struct {
    arena: std.heap.ArenaAllocator,
    assembly: Assembly,
    detail: errors.Detail = .{},
    decoder: anthropic.Decoder = .{},

    pub fn init(gpa: std.mem.Allocator) Fixture {
        return .{ .arena = .init(gpa), .assembly = .init(gpa) };
    }

    pub fn deinit(f: *Fixture) void {
        f.detail.deinit(f.assembly.gpa);
        f.assembly.deinit();
        f.arena.deinit();
    }

    /// Decodes one data line. Its events wait in `assembly` (pop them), and their strings
    /// last until the next line.
    pub fn handle(f: *Fixture, data: []const u8) !void {
        _ = f.arena.reset(.retain_capacity);
        try f.decoder.handle(&f.assembly, f.arena.allocator(), .{ .type = "message", .data = data }, &f.detail);
    }

    /// Decodes the lines, their events dropped.
    pub fn feed(f: *Fixture, lines: []const []const u8) !void {
        for (lines) |data| {
            try f.handle(data);
            while (f.assembly.pop()) |_| {}
        }
    }

    /// Commits the message decoded (stop end_turn, by anthropic claude-a, with its usage),
    /// after a user turn `user` when given.
    pub fn commit(f: *Fixture, conv: *conversation.Conversation, user: ?[]const u8) !void {
        if (user) |text| try conv.appendUserText(text);
        try f.assembly.commit(conv, &.{}, .{ .stop_reason = .end_turn, .provider = "anthropic", .model = "claude-a", .usage = f.assembly.usage });
    }
};

/// The body of the request `provider` and `model` would be sent for `conv` (cache off, no tools).
pub fn request(gpa: std.mem.Allocator, provider: Provider, model: []const u8, conv: *const conversation.Conversation) ![]u8 {
    var out: std.Io.Writer.Allocating = .init(gpa);
    defer out.deinit();
    try providers.writeRequest(provider, &out.writer, .{ .config = .{ .provider = provider, .model = model, .request = .{ .cache = .{ .mode = .off } } }, .conversation = conv, .tools = &.{}, .granted = &.{} });
    return out.toOwnedSlice();
}
