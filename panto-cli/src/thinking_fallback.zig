//! Adaptive thinking: a turn refused at open because the model does not take the thinking
//! (reasoning) setting runs again one level lower (high -> medium -> low -> minimal -> off),
//! through the public API only: agent.setConfig, then stream.reopen (the same turn, no second
//! user message). The observer is told in one note; at off there is nothing lower to try.
const std = @import("std");
const panto = @import("panto");
const App = @import("app.zig").App;
const Observer = @import("turn.zig").Observer;

/// Whether the failed `stream` was reopened one level lower (the caller reads on).
pub fn retry(app: *App, stream: *panto.Stream, err: anyerror, observer: Observer) bool {
    // InvalidRequest: the provider refused it; Config: the core did, by the model catalog.
    if ((err != error.InvalidRequest and err != error.Config) or !stream.failed_at_open) return false;
    const detail = stream.failureDetail() orelse return false;
    if (!aboutThinking(detail.message.items)) return false;
    const config = app.agent.config;
    // An explicit reasoning_effort is the user's word, not a level to lower.
    if (config.request.reasoning_effort != null) return false;
    if (config.thinking == .off and config.request.thinking_budget == null) return false;
    const lower = lowerLevel(config.thinking);
    var diag: panto.config.Diagnostic = .{};
    var json_buf: [64]u8 = undefined;
    const json = std.fmt.bufPrint(&json_buf, "{{\"thinking\":\"{s}\"}}", .{@tagName(lower)}) catch return false;
    var note_buf: [256]u8 = undefined;
    const from: []const u8 = if (config.request.thinking_budget != null) "budget" else @tagName(config.thinking);
    const note = std.fmt.bufPrint(&note_buf, "thinking {s} is not supported by {s}: trying {s}", .{ from, config.model, @tagName(lower) }) catch "thinking: trying a lower level";
    app.agent.setConfig(json, &diag) catch return false;
    stream.reopen() catch return false;
    observer.note(observer.ctx, note);
    return true;
}

/// One step down; off stays off.
pub fn lowerLevel(level: panto.config.Thinking) panto.config.Thinking {
    return switch (level) {
        .high => .medium,
        .medium => .low,
        .low => .minimal,
        .minimal, .off => .off,
    };
}

/// The provider's message is about the thinking or reasoning setting not being supported
/// (Anthropic: "... does not support thinking"; OpenAI: "Unsupported parameter:
/// 'reasoning_effort' ..."), case-insensitively.
pub fn aboutThinking(message: []const u8) bool {
    const names = contains(message, "thinking") or contains(message, "reasoning");
    return names and contains(message, "support");
}

fn contains(haystack: []const u8, needle: []const u8) bool {
    return std.ascii.indexOfIgnoreCase(haystack, needle) != null;
}

test "levels step down to off" {
    try std.testing.expectEqual(panto.config.Thinking.medium, lowerLevel(.high));
    try std.testing.expectEqual(panto.config.Thinking.off, lowerLevel(.minimal));
    try std.testing.expectEqual(panto.config.Thinking.off, lowerLevel(.off));
}

test "messages about thinking" {
    try std.testing.expect(aboutThinking("'claude-3-5-haiku' does not support thinking."));
    try std.testing.expect(aboutThinking("Unsupported parameter: 'reasoning_effort' is not supported with this model."));
    try std.testing.expect(!aboutThinking("max_tokens: must be positive"));
    try std.testing.expect(!aboutThinking("thinking.budget_tokens: must be at least 1024"));
}
