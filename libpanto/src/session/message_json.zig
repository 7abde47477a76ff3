//! A message as one JSON object, for session entries: the export format's own writer and
//! parser (conversation_json.zig), so a session file and an export hold the same bytes.
const std = @import("std");
const Allocator = std.mem.Allocator;
const conversation_json = @import("../conversation_json.zig");
const Message = @import("../conversation.zig").Message;

pub fn write(w: *std.Io.Writer, m: *const Message) std.Io.Writer.Error!void {
    var s: std.json.Stringify = .{ .writer = w };
    try conversation_json.writeMessage(&s, m.*);
}

pub const ParseError = error{ OutOfMemory, Invalid };

/// Reads one message object (as `write` writes it), checked like an import's; strings owned
/// by `gpa`.
pub fn parse(gpa: Allocator, text: []const u8) ParseError!Message {
    var diag: conversation_json.Diagnostic = .{};
    return conversation_json.parseMessageJson(gpa, text, &diag) catch |err| switch (err) {
        error.OutOfMemory => error.OutOfMemory,
        error.InvalidConversation => error.Invalid,
    };
}
