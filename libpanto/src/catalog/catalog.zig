//! The model catalog: what panto knows of a provider's model (limits, prices, abilities), from
//! the generated table (data.zig) and the config's `model_info` override. A model the catalog
//! lacks is unknown (null): nothing is guessed from a similar name.
const std = @import("std");
const data = @import("data.zig");
const model = @import("model.zig");
const override_mod = @import("override.zig");

pub const Model = model.Model;
pub const Family = model.Family;
pub const Price = model.Price;
pub const LongContext = model.LongContext;
pub const Abilities = model.Abilities;
pub const Override = override_mod.Override;
pub const parseOverride = override_mod.parse;
pub const cost = @import("cost.zig").cost;
pub const CacheTtl = @import("cost.zig").CacheTtl;
/// A conversation's usage and cost so far, each message at its own model's prices.
pub const Spent = @import("spent.zig").Spent;
pub const spent = @import("spent.zig").spent;
pub const requestCost = @import("spent.zig").requestCost;
pub const addCost = @import("spent.zig").addCost;
/// The catalog's source and its version ("litellm 1.110.2").
pub const source = data.source;
/// A model as JSON, in the keys of the config's model_info (panto_model_info).
pub const json = @import("json.zig");

/// The family whose models a provider (by its config name) serves; null for a provider the
/// catalog does not cover. Both OpenAI APIs serve the same models at the same prices.
pub fn familyOf(provider: []const u8) ?Family {
    if (std.mem.eql(u8, provider, "openai-responses")) return .openai;
    return std.meta.stringToEnum(Family, provider);
}

/// The catalog's entry for a model: its exact name, else (Gemini) without the `models/`
/// prefix the API also takes, else a dated version of a listed alias
/// (`claude-sonnet-4-5-20250929` when only `claude-sonnet-4-5` were listed). Null: unknown.
pub fn lookup(family: Family, name: []const u8) ?*const Model {
    if (exact(family, name)) |m| return m;
    if (family == .gemini and std.mem.startsWith(u8, name, "models/")) return lookup(family, name["models/".len..]);
    if (undated(name)) |base| return exact(family, base);
    return null;
}

/// The model as the config sees it: the catalog's entry with the override's fields over it;
/// the override alone for a model the catalog lacks; null when neither knows it.
pub fn resolve(provider: []const u8, name: []const u8, override: ?Override) ?Model {
    const known: ?Model = if (familyOf(provider)) |f| (if (lookup(f, name)) |m| m.* else null) else null;
    const o = override orelse return known;
    return o.over(known orelse .{ .family = familyOf(provider) orelse .openai, .name = name });
}

/// Every model the catalog knows of a family, sorted by name (a model picker's list).
pub fn models(family: Family) []const Model {
    var first: usize = 0;
    while (first < data.models.len and data.models[first].family != family) first += 1;
    var end = first;
    while (end < data.models.len and data.models[end].family == family) end += 1;
    return data.models[first..end];
}

fn exact(family: Family, name: []const u8) ?*const Model {
    // Sorted by family, then name (the generator's order).
    const Ctx = struct { family: Family, name: []const u8 };
    const i = std.sort.binarySearch(Model, &data.models, Ctx{ .family = family, .name = name }, struct {
        fn order(ctx: Ctx, m: Model) std.math.Order {
            const by_family = std.math.order(@intFromEnum(ctx.family), @intFromEnum(m.family));
            return if (by_family != .eq) by_family else std.mem.order(u8, ctx.name, m.name);
        }
    }.order) orelse return null;
    return &data.models[i];
}

/// The name without a trailing date (`-20250929`, `-2025-09-29`), or null when it has none.
fn undated(name: []const u8) ?[]const u8 {
    inline for (.{ "-dddddddd", "-dddd-dd-dd" }) |shape| {
        if (name.len > shape.len and matches(name[name.len - shape.len ..], shape)) return name[0 .. name.len - shape.len];
    }
    return null;
}

fn matches(text: []const u8, shape: []const u8) bool {
    for (text, shape) |c, s| {
        if (s == 'd' and !std.ascii.isDigit(c)) return false;
        if (s != 'd' and c != s) return false;
    }
    return true;
}

const testing = std.testing;

test "the catalog is sorted as lookup's binary search needs" {
    for (data.models[0 .. data.models.len - 1], data.models[1..]) |a, b| {
        const by_family = std.math.order(@intFromEnum(a.family), @intFromEnum(b.family));
        try testing.expect(by_family == .lt or (by_family == .eq and std.mem.order(u8, a.name, b.name) == .lt));
    }
}

test "models: a family's, sorted by name" {
    const anthropic = models(.anthropic);
    try testing.expect(anthropic.len > 0);
    for (anthropic) |m| try testing.expectEqual(Family.anthropic, m.family);
    try testing.expect(lookup(.anthropic, "claude-sonnet-4-5") != null);
    var found = false;
    for (anthropic) |m| found = found or std.mem.eql(u8, m.name, "claude-sonnet-4-5");
    try testing.expect(found);
    var total: usize = 0;
    for (std.enums.values(Family)) |f| total += models(f).len;
    try testing.expectEqual(data.models.len, total);
}

test "lookup: aliases and dated versions, per family" {
    const alias = lookup(.anthropic, "claude-sonnet-4-5").?;
    const dated = lookup(.anthropic, "claude-sonnet-4-5-20250929").?;
    try testing.expectEqual(@as(?u64, 200_000), alias.max_input);
    try testing.expectEqual(@as(?u64, 64_000), dated.max_output);
    try testing.expectEqual(@as(?f64, 3.0), dated.price.input);
    try testing.expectEqual(@as(?f64, 3.75), dated.price.cache_write_5m);
    try testing.expectEqual(@as(?f64, 6.0), dated.price.cache_write_1h);
    try testing.expect(dated.can.images and dated.can.pdfs and dated.can.thinking and dated.can.tools);
    // A dated version the table does not list is its alias's.
    try testing.expectEqualStrings("gpt-5", lookup(.openai, "gpt-5-2099-01-01").?.name);
    try testing.expectEqualStrings("gemini-2.5-pro", lookup(.gemini, "models/gemini-2.5-pro").?.name);
    try testing.expectEqual(@as(u64, 200_000), lookup(.gemini, "gemini-2.5-pro").?.long.?.above);
    // A model of another family is not found under this one.
    try testing.expectEqual(null, lookup(.openai, "claude-sonnet-4-5"));
    try testing.expect(lookup(.bedrock, "anthropic.claude-sonnet-4-5-20250929-v1:0") != null);
}

test "lookup: an unknown model is unknown, never a neighbour's" {
    try testing.expectEqual(null, lookup(.anthropic, "claude-test"));
    try testing.expectEqual(null, lookup(.anthropic, "claude-sonnet-4-5-turbo"));
    try testing.expectEqual(null, lookup(.openai, "gpt-5-20250101x"));
    try testing.expectEqual(null, lookup(.openai, ""));
}

test "familyOf: the providers' names" {
    try testing.expectEqual(Family.openai, familyOf("openai-responses").?);
    try testing.expectEqual(Family.anthropic, familyOf("anthropic").?);
    try testing.expectEqual(Family.bedrock, familyOf("bedrock").?);
    try testing.expectEqual(null, familyOf("elsewhere"));
}

test "resolve: the override over the catalog, alone for an unknown model" {
    try testing.expectEqual(null, resolve("anthropic", "emu-1", null));
    const over: Override = .{ .max_output = 8000, .price = .{ .input = 1.0 } };
    const known = resolve("anthropic", "claude-sonnet-4-5", over).?;
    try testing.expectEqual(@as(?u64, 8000), known.max_output);
    try testing.expectEqual(@as(?u64, 200_000), known.max_input);
    try testing.expectEqual(@as(?f64, 1.0), known.price.input);
    try testing.expectEqual(@as(?f64, 15.0), known.price.output);
    const unknown = resolve("anthropic", "emu-1", over).?;
    try testing.expectEqual(@as(?u64, null), unknown.max_input);
    try testing.expectEqual(@as(?f64, null), unknown.price.output);
    try testing.expect(!unknown.can.images);
}
