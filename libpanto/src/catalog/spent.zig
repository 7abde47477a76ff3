//! What a conversation's requests have cost so far: the usage of its assistant messages summed,
//! and each priced at the model that wrote it (a conversation may change models), so that a
//! resumed session starts from what it had spent (the panto command's running totals).
const std = @import("std");
const catalog = @import("catalog.zig");
const Message = @import("../conversation.zig").Message;
const ev = @import("../event.zig");
const Config = @import("../config.zig").Config;

pub const Spent = struct {
    usage: ev.Usage = .{},
    /// USD at the catalog's list prices; null once one request's cost is unknown (a model the
    /// catalog lacks, or a message that does not say which model wrote it): never a guess.
    cost: ?f64 = 0,

    /// One more request (a MESSAGE_END's usage and cost).
    pub fn add(s: *Spent, usage: ev.Usage, cost: ?f64) void {
        ev.addUsage(&s.usage, usage);
        s.cost = addCost(s.cost, cost);
    }
};

/// A sum of costs that stays unknown (null) once one of them is: never a guess.
pub fn addCost(sum: ?f64, cost: ?f64) ?f64 {
    return if (sum) |total| (if (cost) |c| total + c else null) else null;
}

/// One request's cost, written by `provider`/`model`, at the catalog's list prices (the
/// config's `model_info` over them when the request is the config's own model; its cache
/// lifetime prices the cache writes). null: a model no one prices.
pub fn requestCost(config: *const Config, provider: []const u8, model: []const u8, usage: ev.Usage) ?f64 {
    if (provider.len == 0) return null; // a message that does not say which model wrote it
    const own = std.mem.eql(u8, provider, @tagName(config.provider)) and std.mem.eql(u8, model, config.model);
    const priced = catalog.resolve(provider, model, if (own) config.model_info else null) orelse return null;
    const ttl: catalog.CacheTtl = if (config.request.cache.ttl == .@"1h") .@"1h" else .@"5m";
    return catalog.cost(priced, usage, ttl);
}

/// The assistant messages' usage and cost. The config's `model_info` prices only the messages
/// of its own provider and model; its cache lifetime prices every cache write (a message does
/// not record the lifetime it was written with).
pub fn spent(messages: []const Message, config: *const Config) Spent {
    var total: Spent = .{};
    for (messages) |m| {
        if (m.role != .assistant) continue;
        total.add(m.usage, requestCost(config, m.provider, m.model, m.usage));
    }
    return total;
}

const testing = std.testing;

test "spent: each assistant message at its own model's prices, user messages not counted" {
    var msgs = [_]Message{
        .{ .role = .user, .blocks = &.{}, .usage = .{ .input_tokens = 999 } },
        .{ .role = .assistant, .blocks = &.{}, .provider = "anthropic", .model = "claude-sonnet-4-5", .usage = .{ .input_tokens = 1_000_000, .output_tokens = 100_000, .cache_read_tokens = 1_000_000 } },
        .{ .role = .assistant, .blocks = &.{}, .provider = "openai", .model = "gpt-4.1", .usage = .{ .input_tokens = 1_000_000 } },
    };
    const config: Config = .{ .provider = .anthropic, .model = "claude-sonnet-4-5" };
    const s = spent(&msgs, &config);
    try testing.expectEqual(@as(u64, 2_000_000), s.usage.input_tokens);
    try testing.expectEqual(@as(u64, 100_000), s.usage.output_tokens);
    try testing.expectEqual(@as(u64, 1_000_000), s.usage.cache_read_tokens);
    // sonnet 4.5: $3 in, $15 out, $0.30 cache read; gpt-4.1: $2 in.
    try testing.expectApproxEqRel(@as(f64, 3 + 1.5 + 0.3 + 2), s.cost.?, 1e-9);
}

test "spent: a model the catalog lacks makes the cost unknown, unless model_info prices it" {
    var msgs = [_]Message{
        .{ .role = .assistant, .blocks = &.{}, .provider = "anthropic", .model = "emu-1", .usage = .{ .input_tokens = 1_000_000 } },
    };
    var config: Config = .{ .provider = .anthropic, .model = "emu-1" };
    try testing.expectEqual(@as(?f64, null), spent(&msgs, &config).cost);
    config.model_info = .{ .price = .{ .input = 4 } };
    try testing.expectApproxEqRel(@as(f64, 4), spent(&msgs, &config).cost.?, 1e-9);
    // The override is the current model's: a message of another model is not priced by it.
    config.model = "emu-2";
    try testing.expectEqual(@as(?f64, null), spent(&msgs, &config).cost);
    // No messages: nothing spent, at a known price.
    try testing.expectEqual(@as(?f64, 0), spent(&.{}, &config).cost);
}
