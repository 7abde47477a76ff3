//! Abilities checked before a request: what the model cannot take by the catalog (or the
//! config's model_info) is refused with a clear reason instead of a provider's 400 after the
//! request: a max_tokens above the model's most output tokens, thinking for a model that
//! does not think, an image for a model that takes none. An unknown model, or an unknown
//! limit, is not checked; model_info overrides the catalog (`max_output_tokens`,
//! `abilities.thinking`, `abilities.images`).
const std = @import("std");
const catalog = @import("catalog.zig");
const Config = @import("../config.zig").Config;
const conversation = @import("../conversation.zig");

/// Why a request with `config` and `messages` cannot be sent to the model, written into
/// `buf`; null when nothing is known against it.
pub fn refusal(config: Config, messages: []const conversation.Message, buf: []u8) ?[]const u8 {
    const m = catalog.resolve(@tagName(config.provider), config.model, config.model_info) orelse return null;
    if (m.max_output) |most| if (config.max_tokens > most) {
        return std.fmt.bufPrint(buf, "max_tokens {d} is above the most output tokens of {s} ({d}, the model catalog): lower max_tokens, or set model_info.max_output_tokens", .{ config.max_tokens, config.model, most }) catch "max_tokens is above the model's most output tokens";
    };
    const thinks = config.thinking != .off or config.request.thinking_budget != null or config.request.reasoning_effort != null;
    if (thinks and !m.can.thinking) {
        return std.fmt.bufPrint(buf, "thinking is on, but {s} does not support it (the model catalog): turn thinking off, or set model_info.abilities.thinking to true", .{config.model}) catch "thinking is on, but the model does not support it";
    }
    if (!m.can.images and hasImage(messages)) {
        return std.fmt.bufPrint(buf, "the conversation has an image, but {s} takes none (the model catalog): remove it, or set model_info.abilities.images to true", .{config.model}) catch "the conversation has an image, but the model takes none";
    }
    return null;
}

fn hasImage(messages: []const conversation.Message) bool {
    for (messages) |msg| for (msg.blocks) |b| {
        if (b.kind == .image) return true;
        for (b.parts) |p| if (p.kind == .image) return true;
    };
    return false;
}

const testing = std.testing;

test "abilities: max_tokens, thinking and images refused for a model the catalog says cannot, overridable" {
    var buf: [300]u8 = undefined;
    var config: Config = .{ .provider = .anthropic, .model = "claude-sonnet-4-5", .max_tokens = 64_001 };
    try testing.expectEqualStrings("max_tokens 64001 is above the most output tokens of claude-sonnet-4-5 (64000, the model catalog): lower max_tokens, or set model_info.max_output_tokens", refusal(config, &.{}, &buf).?);
    config.model_info = .{ .max_output = 100_000 };
    try testing.expectEqual(null, refusal(config, &.{}, &buf));

    config = .{ .provider = .openai, .model = "gpt-4o", .thinking = .high };
    try testing.expect(std.mem.startsWith(u8, refusal(config, &.{}, &buf).?, "thinking is on, but gpt-4o does not support it"));
    config.thinking = .off;
    config.request.reasoning_effort = "low";
    try testing.expect(refusal(config, &.{}, &buf) != null);
    config.model_info = .{ .can = .{ .thinking = true } };
    try testing.expectEqual(null, refusal(config, &.{}, &buf));

    const image: conversation.Block = .{ .kind = .image, .text = "AAAA", .media_type = "image/png" };
    var blocks = [_]conversation.Block{image};
    const user: conversation.Message = .{ .role = .user, .blocks = &blocks };
    config = .{ .provider = .openai, .model = "o3-mini" };
    try testing.expect(std.mem.startsWith(u8, refusal(config, &.{user}, &buf).?, "the conversation has an image, but o3-mini takes none"));
    config.model_info = .{ .can = .{ .images = true } };
    try testing.expectEqual(null, refusal(config, &.{user}, &buf));
    // A model that takes images, and an unknown model: nothing refused.
    try testing.expectEqual(null, refusal(.{ .provider = .openai, .model = "gpt-4o" }, &.{user}, &buf));
    try testing.expectEqual(null, refusal(.{ .provider = .openai, .model = "gpt-test", .thinking = .high, .max_tokens = 1 << 30 }, &.{user}, &buf));
}
