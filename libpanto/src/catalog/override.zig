//! The config's `model_info`: what the user says of a model, over the catalog's entry (a
//! model it lacks, a negotiated price, a newer limit). Every key is optional:
//! {"max_input_tokens": N, "max_output_tokens": N,
//!  "price": {"input", "output", "cache_read", "cache_write_5m", "cache_write_1h", "reasoning"},
//!  "long_context": {"above": N, "input", "output", "cache_read", "cache_write_5m", "cache_write_1h"},
//!  "abilities": {"tools", "images", "pdfs", "thinking", "structured_output", "caching"}}
//! (prices in USD per million tokens, abilities true or false).
const std = @import("std");
const model = @import("model.zig");
const Diagnostic = @import("../config.zig").Diagnostic;
const config_mod = @import("../config.zig");

pub const Override = struct {
    max_input: ?u64 = null,
    max_output: ?u64 = null,
    /// Each price given replaces the catalog's.
    price: model.Price = .{},
    /// Replaces the catalog's tier as a whole.
    long: ?model.LongContext = null,
    can: struct {
        tools: ?bool = null,
        images: ?bool = null,
        pdfs: ?bool = null,
        thinking: ?bool = null,
        structured_output: ?bool = null,
        caching: ?bool = null,
    } = .{},

    /// `base` with this override's fields over it.
    pub fn over(o: Override, base: model.Model) model.Model {
        var m = base;
        if (o.max_input) |n| m.max_input = n;
        if (o.max_output) |n| m.max_output = n;
        inline for (@typeInfo(model.Price).@"struct".fields) |f| {
            if (@field(o.price, f.name)) |p| @field(m.price, f.name) = p;
        }
        if (o.long) |l| m.long = l;
        inline for (@typeInfo(model.Abilities).@"struct".fields) |f| {
            if (@field(o.can, f.name)) |b| @field(m.can, f.name) = b;
        }
        return m;
    }
};

const price_keys = [_][]const u8{ "input", "output", "cache_read", "cache_write_5m", "cache_write_1h", "reasoning" };

/// The "model_info" object.
pub fn parse(v: std.json.Value, diag: *Diagnostic) error{InvalidConfig}!Override {
    const sub = try config_mod.object(v, "model_info", &.{ "max_input_tokens", "max_output_tokens", "price", "long_context", "abilities" }, diag);
    var o: Override = .{};
    if (sub.get("max_input_tokens")) |n| o.max_input = try config_mod.integer(u64, n, 1, 1 << 40, "model_info.max_input_tokens", diag);
    if (sub.get("max_output_tokens")) |n| o.max_output = try config_mod.integer(u64, n, 1, 1 << 40, "model_info.max_output_tokens", diag);
    if (sub.get("price")) |p| {
        const prices = try config_mod.object(p, "model_info.price", &price_keys, diag);
        inline for (price_keys) |k| if (prices.get(k)) |n| {
            @field(o.price, k) = try dollars(n, "model_info.price." ++ k, diag);
        };
    }
    if (sub.get("long_context")) |l| {
        const tier = try config_mod.object(l, "model_info.long_context", &(.{"above"} ++ price_keys[0..5].*), diag);
        const above = tier.get("above") orelse return diag.fail("model_info.long_context needs \"above\" (the prompt tokens past which its prices apply)", .{});
        var long: model.LongContext = .{ .above = try config_mod.integer(u64, above, 1, 1 << 40, "model_info.long_context.above", diag) };
        inline for (price_keys[0..5]) |k| if (tier.get(k)) |n| {
            @field(long, k) = try dollars(n, "model_info.long_context." ++ k, diag);
        };
        o.long = long;
    }
    if (sub.get("abilities")) |a| {
        const names = comptime std.meta.fieldNames(model.Abilities);
        const can = try config_mod.object(a, "model_info.abilities", names, diag);
        inline for (names) |k| if (can.get(k)) |b| {
            if (b != .bool) return diag.fail("model_info.abilities." ++ k ++ " must be true or false", .{});
            @field(o.can, k) = b.bool;
        };
    }
    return o;
}

/// A price: a number from 0 (USD per million tokens).
fn dollars(v: std.json.Value, comptime name: []const u8, diag: *Diagnostic) error{InvalidConfig}!f64 {
    const x: f64 = switch (v) {
        .integer => |i| @floatFromInt(i),
        .float => |f| f,
        else => return diag.fail(name ++ " must be a number (USD per million tokens)", .{}),
    };
    if (!(x >= 0) or !std.math.isFinite(x)) return diag.fail(name ++ " must be a number from 0 (USD per million tokens)", .{});
    return x;
}

const testing = std.testing;

fn parsed(json: []const u8, diag: *Diagnostic) !Override {
    const v = try std.json.parseFromSlice(std.json.Value, testing.allocator, json, .{});
    defer v.deinit();
    return parse(v.value, diag);
}

test "model_info: every key, and the mistakes refused by name" {
    var diag: Diagnostic = .{};
    const o = try parsed(
        \\{"max_input_tokens": 1000, "max_output_tokens": 100, "price": {"input": 2, "output": 8.5, "cache_write_1h": 4},
        \\ "long_context": {"above": 500, "input": 4}, "abilities": {"images": false, "thinking": true}}
    , &diag);
    try testing.expectEqual(@as(?u64, 1000), o.max_input);
    try testing.expectEqual(@as(?u64, 100), o.max_output);
    try testing.expectEqual(@as(?f64, 2.0), o.price.input);
    try testing.expectEqual(@as(?f64, 8.5), o.price.output);
    try testing.expectEqual(@as(?f64, 4.0), o.price.cache_write_1h);
    try testing.expectEqual(@as(?f64, null), o.price.cache_read);
    try testing.expectEqual(@as(u64, 500), o.long.?.above);
    try testing.expectEqual(@as(?bool, false), o.can.images);
    try testing.expectEqual(@as(?bool, true), o.can.thinking);
    try testing.expectEqual(@as(?bool, null), o.can.tools);

    try testing.expectError(error.InvalidConfig, parsed("{\"price\": {\"input\": -1}}", &diag));
    try testing.expectEqualStrings("model_info.price.input must be a number from 0 (USD per million tokens)", diag.message());
    try testing.expectError(error.InvalidConfig, parsed("{\"prices\": {}}", &diag));
    try testing.expectEqualStrings("unknown model_info key \"prices\"", diag.message());
    try testing.expectError(error.InvalidConfig, parsed("{\"long_context\": {\"input\": 1}}", &diag));
    try testing.expectError(error.InvalidConfig, parsed("{\"abilities\": {\"images\": 1}}", &diag));
}
