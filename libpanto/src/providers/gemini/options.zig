//! The request parameters the Gemini API does not take, and the body members its writer
//! owns (request_options.check runs this for a gemini agent, through the provider seam).
const config_mod = @import("../../config.zig");
const request_options = @import("../../request_options.zig");
const Config = config_mod.Config;
const Diagnostic = config_mod.Diagnostic;

/// Body keys panto writes for gemini (its request has none of the others).
pub const body_keys = [_][]const u8{ "contents", "systemInstruction", "tools", "toolConfig", "generationConfig" };

pub fn check(config: Config, diag: *Diagnostic) error{InvalidConfig}!void {
    const r = config.request;
    const p = config.provider;
    if (r.server_tools.len > 0) return request_options.noServerTools(diag, p);
    if (r.hosted_mcp_servers.len > 0) return request_options.noHostedMcpServers(diag, p);
    inline for (.{ "metadata", "user", "parallel_tool_calls", "service_tier", "reasoning_effort", "interleaved_thinking" }) |name| {
        if (@field(r, name) != null) return diag.fail(name ++ " is not a Gemini parameter: gemini does not take it", .{});
    }
    if (r.cache.ttl != null or r.cache.key != null or r.cache.retention != null)
        return diag.fail("cache.ttl, cache.key and cache.retention are not Gemini parameters: gemini does not take them", .{});
    try request_options.checkBodyKeys(r, &body_keys, diag);
}
