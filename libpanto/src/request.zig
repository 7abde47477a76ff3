//! What goes into a provider request: the configuration, the conversation and the tools the
//! agent may use. Each provider module renders it in its own format.
const Config = @import("config.zig").Config;
const Conversation = @import("conversation.zig").Conversation;
const std = @import("std");
const tools = @import("tools.zig");
const Tool = tools.Tool;

pub const RequestParts = struct {
    config: Config,
    conversation: *const Conversation,
    tools: []const Tool,
    granted: []const []const u8,

    /// Whether any tool may be sent: a request without usable tools has no tools field.
    pub fn hasTools(p: RequestParts) bool {
        for (p.tools) |t| if (t.allowedWith(p.granted)) return true;
        return false;
    }

    /// Writes the `"tools"` field in the provider's format, when any tool may be sent.
    pub fn writeTools(p: RequestParts, s: *std.json.Stringify, format: tools.Format) std.Io.Writer.Error!void {
        if (!p.hasTools()) return;
        try s.objectField("tools");
        try s.beginArray();
        for (p.tools) |t| if (t.allowedWith(p.granted)) try tools.writeOne(s, t, format);
        try s.endArray();
    }
};
