//! What goes into a provider request: the configuration, the conversation and the tools the
//! agent may use, and its headers. Each provider (providers/) renders them in its own format.
const Config = @import("config.zig").Config;
const conversation = @import("conversation.zig");
const Conversation = conversation.Conversation;
const std = @import("std");
const tools = @import("tools.zig");
const Tool = tools.Tool;

pub const RequestParts = struct {
    config: Config,
    conversation: *const Conversation,
    tools: []const Tool,
    granted: []const []const u8,

    /// Whether the thinking of assistant message `m` goes into this request: only to the
    /// provider and model that wrote it (its signature is theirs; another model takes it for
    /// text the user wrote).
    pub fn sendsThinking(p: RequestParts, m: conversation.Message) bool {
        return std.mem.eql(u8, m.provider, @tagName(p.config.provider)) and std.mem.eql(u8, m.model, p.config.model);
    }

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

/// The request's headers beside std.http's own: accept, then the provider's (addHeaders).
pub const Headers = struct {
    extra: [4]std.http.Header = undefined,
    len: usize = 0,
    authorization: std.http.Client.Request.Headers.Value = .omit,
    /// Memory for an authorization value made of parts, kept until the request is sent.
    auth_buffer: *std.ArrayList(u8),
    gpa: std.mem.Allocator,

    pub fn add(h: *Headers, name: []const u8, value: []const u8) void {
        h.extra[h.len] = .{ .name = name, .value = value };
        h.len += 1;
    }

    /// `Authorization: Bearer KEY`.
    pub fn bearer(h: *Headers, key: []const u8) std.mem.Allocator.Error!void {
        try h.auth_buffer.appendSlice(h.gpa, "Bearer ");
        try h.auth_buffer.appendSlice(h.gpa, key);
        h.authorization = .{ .override = h.auth_buffer.items };
    }

    pub fn list(h: *const Headers) []const std.http.Header {
        return h.extra[0..h.len];
    }
};
