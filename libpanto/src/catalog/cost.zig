//! The cost in USD of one request's usage, at the model's list prices (catalog data or the
//! config's model_info). Unknown when a price the usage needs is unknown: never a guess.
const std = @import("std");
const model = @import("model.zig");
const Usage = @import("../event.zig").Usage;

pub const CacheTtl = enum { @"5m", @"1h" };

/// `usage` is one request's (a message's): the long-context tier applies to a whole request
/// whose prompt, cached tokens included, passes the tier's threshold. `input_tokens` excludes
/// cached tokens (every provider's usage is normalized so); `output_tokens` includes
/// reasoning tokens, billed at the output price unless the model prices them apart.
/// `ttl`: the lifetime the cache writes were made with (Anthropic's cache.ttl).
pub fn cost(m: model.Model, usage: Usage, ttl: CacheTtl) ?f64 {
    var p = m.price;
    const prompt = usage.input_tokens +| usage.cache_read_tokens +| usage.cache_write_tokens;
    if (m.long) |tier| if (prompt > tier.above) {
        // A price the tier does not name stays the base one.
        inline for (.{ "input", "output", "cache_read", "cache_write_5m", "cache_write_1h" }) |name| {
            if (@field(tier, name)) |x| @field(p, name) = x;
        }
    };
    var total = per(usage.input_tokens, p.input) orelse return null;
    const reasoning = if (p.reasoning != null) @min(usage.reasoning_tokens, usage.output_tokens) else 0;
    total += per(usage.output_tokens - reasoning, p.output) orelse return null;
    total += per(reasoning, p.reasoning) orelse return null;
    total += per(usage.cache_read_tokens, p.cache_read) orelse return null;
    total += per(usage.cache_write_tokens, switch (ttl) {
        .@"5m" => p.cache_write_5m,
        .@"1h" => p.cache_write_1h,
    }) orelse return null;
    return total;
}

/// The cost of `tokens` at `price` per million; no tokens cost nothing, priced or not.
fn per(tokens: u64, price: ?f64) ?f64 {
    if (tokens == 0) return 0;
    return @as(f64, @floatFromInt(tokens)) * (price orelse return null) / 1_000_000;
}

const testing = std.testing;

fn expectCost(expected: f64, got: ?f64) !void {
    try testing.expectApproxEqRel(expected, got.?, 1e-12);
}

const sonnet: model.Model = .{ .family = .anthropic, .name = "s", .price = .{ .input = 3, .output = 15, .cache_read = 0.3, .cache_write_5m = 3.75, .cache_write_1h = 6 } };

test "cost: input, output, cache reads and writes at their prices, by the cache's lifetime" {
    try expectCost(3 + 15, cost(sonnet, .{ .input_tokens = 1_000_000, .output_tokens = 1_000_000 }, .@"5m"));
    const cached: Usage = .{ .input_tokens = 100, .output_tokens = 50, .cache_read_tokens = 2000, .cache_write_tokens = 1000 };
    try expectCost((100 * 3 + 50 * 15 + 2000 * 0.3 + 1000 * 3.75) / 1e6, cost(sonnet, cached, .@"5m"));
    try expectCost((100 * 3 + 50 * 15 + 2000 * 0.3 + 1000 * 6.0) / 1e6, cost(sonnet, cached, .@"1h"));
    try expectCost(0, cost(sonnet, .{}, .@"5m"));
}

test "cost: the long-context tier prices the whole request once the prompt with its cache passes it" {
    var m = sonnet;
    m.long = .{ .above = 200_000, .input = 6, .output = 22.5, .cache_read = 0.6 };
    // 150k uncached + 60k read = 210k > 200k: every token at the tier's price, the cache
    // write (not named by the tier) at the base price.
    const u: Usage = .{ .input_tokens = 150_000, .output_tokens = 1000, .cache_read_tokens = 60_000, .cache_write_tokens = 10 };
    try expectCost((150_000 * 6 + 1000 * 22.5 + 60_000 * 0.6 + 10 * 3.75) / 1e6, cost(m, u, .@"5m"));
    // At the threshold: still the base prices.
    try expectCost((200_000 * 3.0) / 1e6, cost(m, .{ .input_tokens = 200_000 }, .@"5m"));
}

test "cost: reasoning billed apart only where the model prices it apart" {
    const u: Usage = .{ .input_tokens = 0, .output_tokens = 1000, .reasoning_tokens = 400 };
    try expectCost(1000.0 * 15 / 1e6, cost(sonnet, u, .@"5m"));
    var m = sonnet;
    m.price.reasoning = 5;
    try expectCost((600.0 * 15 + 400 * 5) / 1e6, cost(m, u, .@"5m"));
}

test "cost: unknown when a price the usage needs is unknown" {
    try testing.expectEqual(null, cost(.{ .family = .openai, .name = "x" }, .{ .input_tokens = 1 }, .@"5m"));
    const no_cache: model.Model = .{ .family = .openai, .name = "x", .price = .{ .input = 1, .output = 2 } };
    try testing.expectEqual(null, cost(no_cache, .{ .input_tokens = 1, .cache_read_tokens = 5 }, .@"5m"));
    try testing.expectEqual(null, cost(no_cache, .{ .cache_write_tokens = 5 }, .@"1h"));
    // No tokens of a kind: its price is not needed.
    try expectCost(1e-6, cost(no_cache, .{ .input_tokens = 1 }, .@"5m"));
}
