//! The agent's settings as JSON (panto_agent_settings): what it talks to and how, in the keys
//! and values that the config and set_config take, so a caller can read back the provider,
//! model and address that a switch (set_config, endpoint.zig's rule) or the environment gave.
//! Never a secret: api_key is not written. Tools are the caller's (add_tool) and not listed.
const std = @import("std");
const Config = @import("config.zig").Config;

pub fn write(w: *std.Io.Writer, config: *const Config) std.Io.Writer.Error!void {
    var s: std.json.Stringify = .{ .writer = w };
    try s.beginObject();
    try s.objectField("provider");
    try s.write(@tagName(config.provider));
    try s.objectField("model");
    try s.write(config.model);
    try s.objectField("base_url");
    try s.write(config.base_url);
    try s.objectField("system");
    try s.write(config.system);
    try s.objectField("max_tokens");
    try s.write(config.max_tokens);
    try s.objectField("thinking");
    try s.write(@tagName(config.thinking));
    try s.objectField("max_tool_iterations");
    try s.write(config.max_tool_iterations);
    try s.objectField("capabilities");
    try s.write(config.capabilities);
    try s.objectField("budget");
    try s.write(config.budget);
    try s.endObject();
}

test "the settings a config gives, without its key" {
    var out: std.Io.Writer.Allocating = .init(std.testing.allocator);
    defer out.deinit();
    const caps = [_][]const u8{"fs.read"};
    try write(&out.writer, &.{
        .provider = .openai,
        .model = "gpt-4o",
        .base_url = "https://api.openai.com/v1",
        .api_key = "sk-secret",
        .thinking = .low,
        .capabilities = &caps,
    });
    try std.testing.expectEqualStrings(
        \\{"provider":"openai","model":"gpt-4o","base_url":"https://api.openai.com/v1","system":null,"max_tokens":4096,"thinking":"low","max_tool_iterations":10,"capabilities":["fs.read"],"budget":{"output_tokens":null,"tool_rounds":null,"wall_ms":null,"cost_usd":null}}
    , out.written());
}
