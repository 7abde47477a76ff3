//! Where an agent's requests go and with which key: its base_url and api_key, each either
//! given by the caller (the config, set_config) or derived for the provider: its environment
//! variable (ANTHROPIC_BASE_URL / OPENAI_BASE_URL, ANTHROPIC_API_KEY / OPENAI_API_KEY, as the
//! official SDKs read them), else its public endpoint (a key has no default).
//!
//! A provider switch (set_config changing "provider") derives both again for the new
//! provider, except what the caller gave: a given base_url stays (a gateway, or a server
//! that speaks both formats), and a given api_key stays only with the given base_url it went
//! to, so that a key never reaches another provider's server. A value named in the switching
//! call itself is taken as it is (null: derive it). Without a switch, what set_config does not
//! name stays.
const std = @import("std");
const Allocator = std.mem.Allocator;
const config_mod = @import("config.zig");
const providers = @import("providers.zig");
const Config = config_mod.Config;
const Provider = config_mod.Provider;

pub const Origin = enum {
    /// The caller's: the config's or set_config's value.
    given,
    /// The provider's environment variable, else its public endpoint (base_url only).
    derived,
};

/// Where an agent's base_url and api_key came from.
pub const Origins = struct {
    base_url: Origin,
    api_key: Origin,
};

/// Which of the two a change names (a string: the caller's; null: derive it).
pub const Named = struct {
    base_url: bool,
    api_key: bool,

    pub const both: Named = .{ .base_url = true, .api_key = true };
};

/// The agent's state before a change.
pub const Before = struct {
    provider: Provider,
    origins: Origins,
};

/// Settles `config.base_url` and `config.api_key` after a change (`before` null: at the
/// agent's creation, where both are named). `config` holds the changed configuration: the two
/// fields are what the change set them to, or the old values where it did not name them.
/// Derived strings live in `arena`.
pub fn settle(arena: Allocator, config: *Config, named: Named, before: ?Before) Allocator.Error!Origins {
    const switched = if (before) |b| b.provider != config.provider else false;
    const old: Origins = if (before) |b| b.origins else .{ .base_url = .derived, .api_key = .derived };
    const base_url_stays = !named.base_url and (!switched or old.base_url == .given);
    const api_key_stays = !named.api_key and (!switched or (old.api_key == .given and old.base_url == .given and base_url_stays));
    return .{
        .base_url = if (base_url_stays) old.base_url else take(&config.base_url, named.base_url, try baseUrlFromEnvironment(arena, config.provider)),
        .api_key = if (api_key_stays) old.api_key else take(&config.api_key, named.api_key, try keyFromEnvironment(arena, config.provider)),
    };
}

/// The caller's value when the change names one, else `derived`.
fn take(field: *?[]const u8, named: bool, derived: ?[]const u8) Origin {
    if (named) if (field.* != null) return .given;
    field.* = derived;
    return .derived;
}

/// The provider's base URL from its environment variable, else its public endpoint.
fn baseUrlFromEnvironment(arena: Allocator, provider: Provider) Allocator.Error![]const u8 {
    const v = providers.fromEnvironment(providers.baseUrlVariables(provider)) orelse return defaultBaseUrl(arena, provider);
    return try arena.dupe(u8, v.value);
}

/// The provider's public endpoint (which may depend on the environment: a region).
fn defaultBaseUrl(arena: Allocator, provider: Provider) Allocator.Error![]const u8 {
    var out: std.ArrayList(u8) = .empty;
    try providers.writeDefaultBaseUrl(provider, arena, &out);
    return out.items;
}

fn keyFromEnvironment(arena: Allocator, provider: Provider) Allocator.Error!?[]const u8 {
    const v = providers.fromEnvironment(providers.apiKeyVariables(provider)) orelse return null;
    return try arena.dupe(u8, v.value);
}

extern "c" fn setenv(name: [*:0]const u8, value: [*:0]const u8, overwrite: c_int) c_int;
extern "c" fn unsetenv(name: [*:0]const u8) c_int;

/// Both providers' variables set, to distinguishable values; unset by `unsetBoth`.
fn setBoth() !void {
    try std.testing.expectEqual(@as(c_int, 0), setenv("ANTHROPIC_BASE_URL", "http://anthropic.test", 1));
    try std.testing.expectEqual(@as(c_int, 0), setenv("ANTHROPIC_API_KEY", "ant-key", 1));
    try std.testing.expectEqual(@as(c_int, 0), setenv("OPENAI_BASE_URL", "http://openai.test/v1", 1));
    try std.testing.expectEqual(@as(c_int, 0), setenv("OPENAI_API_KEY", "oai-key", 1));
}

fn unsetBoth() void {
    for ([_][*:0]const u8{ "ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL", "OPENAI_API_KEY" }) |name| _ = unsetenv(name);
}

/// A config made with `made`, then changed: `patch`'s provider, and its base_url and api_key
/// where `named` says.
fn after(arena: Allocator, made: Config, patch: Config, named: Named) !struct { Config, Origins } {
    var config = made;
    const origins = try settle(arena, &config, .both, null);
    const before: Before = .{ .provider = config.provider, .origins = origins };
    config.provider = patch.provider;
    if (named.base_url) config.base_url = patch.base_url;
    if (named.api_key) config.api_key = patch.api_key;
    const changed = try settle(arena, &config, named, before);
    return .{ config, changed };
}

const none: Named = .{ .base_url = false, .api_key = false };

test "a provider switch derives the address and key of the environment's for the new provider" {
    try setBoth();
    defer unsetBoth();
    var arena_state: std.heap.ArenaAllocator = .init(std.testing.allocator);
    defer arena_state.deinit();
    const arena = arena_state.allocator();
    const c, const o = try after(arena, .{ .provider = .anthropic, .model = "m" }, .{ .provider = .openai, .model = "m" }, none);
    try std.testing.expectEqualStrings("http://openai.test/v1", c.base_url.?);
    try std.testing.expectEqualStrings("oai-key", c.api_key.?);
    try std.testing.expectEqual(Origins{ .base_url = .derived, .api_key = .derived }, o);
}

test "a provider switch replaces the old provider's public endpoint and drops its key when the new one has none" {
    unsetBoth();
    var arena_state: std.heap.ArenaAllocator = .init(std.testing.allocator);
    defer arena_state.deinit();
    const arena = arena_state.allocator();
    try std.testing.expectEqual(@as(c_int, 0), setenv("ANTHROPIC_API_KEY", "ant-key", 1));
    defer unsetBoth();
    const c, _ = try after(arena, .{ .provider = .anthropic, .model = "m" }, .{ .provider = .openai, .model = "m" }, none);
    try std.testing.expectEqualStrings(providers.defaultBaseUrl(.openai), c.base_url.?);
    try std.testing.expect(c.api_key == null);
}

test "a given key alone does not follow a provider switch: it would go to another provider's server" {
    try setBoth();
    defer unsetBoth();
    var arena_state: std.heap.ArenaAllocator = .init(std.testing.allocator);
    defer arena_state.deinit();
    const arena = arena_state.allocator();
    const c, const o = try after(arena, .{ .provider = .anthropic, .model = "m", .api_key = "mine" }, .{ .provider = .openai, .model = "m" }, none);
    try std.testing.expectEqualStrings("http://openai.test/v1", c.base_url.?);
    try std.testing.expectEqualStrings("oai-key", c.api_key.?);
    try std.testing.expectEqual(Origins{ .base_url = .derived, .api_key = .derived }, o);
}

test "a given base_url stays across a provider switch, and the key given with it" {
    try setBoth();
    defer unsetBoth();
    var arena_state: std.heap.ArenaAllocator = .init(std.testing.allocator);
    defer arena_state.deinit();
    const arena = arena_state.allocator();
    // With its key: both stay.
    var c, var o = try after(arena, .{ .provider = .openai, .model = "m", .base_url = "http://gateway", .api_key = "gw" }, .{ .provider = .anthropic, .model = "m" }, none);
    try std.testing.expectEqualStrings("http://gateway", c.base_url.?);
    try std.testing.expectEqualStrings("gw", c.api_key.?);
    try std.testing.expectEqual(Origins{ .base_url = .given, .api_key = .given }, o);
    // With the environment's key: the new provider's variable.
    c, o = try after(arena, .{ .provider = .openai, .model = "m", .base_url = "http://gateway" }, .{ .provider = .anthropic, .model = "m" }, none);
    try std.testing.expectEqualStrings("http://gateway", c.base_url.?);
    try std.testing.expectEqualStrings("ant-key", c.api_key.?);
    try std.testing.expectEqual(Origins{ .base_url = .given, .api_key = .derived }, o);
    // A new base_url in the switching call: the old key does not go to it.
    c, o = try after(arena, .{ .provider = .openai, .model = "m", .base_url = "http://gateway", .api_key = "gw" }, .{ .provider = .anthropic, .model = "m", .base_url = "http://other" }, .{ .base_url = true, .api_key = false });
    try std.testing.expectEqualStrings("http://other", c.base_url.?);
    try std.testing.expectEqualStrings("ant-key", c.api_key.?);
    try std.testing.expectEqual(Origins{ .base_url = .given, .api_key = .derived }, o);
}

test "values named in the switching call are taken as they are, null derives them" {
    try setBoth();
    defer unsetBoth();
    var arena_state: std.heap.ArenaAllocator = .init(std.testing.allocator);
    defer arena_state.deinit();
    const arena = arena_state.allocator();
    var c, var o = try after(arena, .{ .provider = .anthropic, .model = "m" }, .{ .provider = .openai, .model = "m", .base_url = "http://local/v1", .api_key = "sk-local" }, .both);
    try std.testing.expectEqualStrings("http://local/v1", c.base_url.?);
    try std.testing.expectEqualStrings("sk-local", c.api_key.?);
    try std.testing.expectEqual(Origins{ .base_url = .given, .api_key = .given }, o);
    c, o = try after(arena, .{ .provider = .openai, .model = "m", .base_url = "http://gateway", .api_key = "gw" }, .{ .provider = .anthropic, .model = "m" }, .both);
    try std.testing.expectEqualStrings("http://anthropic.test", c.base_url.?);
    try std.testing.expectEqualStrings("ant-key", c.api_key.?);
    try std.testing.expectEqual(Origins{ .base_url = .derived, .api_key = .derived }, o);
}

test "without a switch, what a change does not name stays, wherever it came from" {
    try setBoth();
    defer unsetBoth();
    var arena_state: std.heap.ArenaAllocator = .init(std.testing.allocator);
    defer arena_state.deinit();
    const arena = arena_state.allocator();
    var c, var o = try after(arena, .{ .provider = .anthropic, .model = "m" }, .{ .provider = .anthropic, .model = "m" }, none);
    try std.testing.expectEqualStrings("http://anthropic.test", c.base_url.?);
    try std.testing.expectEqualStrings("ant-key", c.api_key.?);
    try std.testing.expectEqual(Origins{ .base_url = .derived, .api_key = .derived }, o);
    // A new base_url keeps the key (the same provider's).
    c, o = try after(arena, .{ .provider = .anthropic, .model = "m", .api_key = "mine" }, .{ .provider = .anthropic, .model = "m", .base_url = "http://proxy" }, .{ .base_url = true, .api_key = false });
    try std.testing.expectEqualStrings("http://proxy", c.base_url.?);
    try std.testing.expectEqualStrings("mine", c.api_key.?);
    try std.testing.expectEqual(Origins{ .base_url = .given, .api_key = .given }, o);
}
