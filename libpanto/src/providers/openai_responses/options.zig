//! The request parameters the Responses API does not take (Anthropic's, and the Chat
//! Completions ones it dropped), and the body members its writer owns (request_options.check
//! runs this for an openai-responses agent, through the provider seam).
const config_mod = @import("../../config.zig");
const request_options = @import("../../request_options.zig");
const Config = config_mod.Config;
const Diagnostic = config_mod.Diagnostic;
const openai_options = @import("../openai/options.zig");

/// Body keys panto writes for openai-responses alone (other providers may take them).
pub const body_keys = [_][]const u8{ "input", "instructions", "max_output_tokens", "reasoning", "text", "store", "include" };

pub fn check(config: Config, diag: *Diagnostic) error{InvalidConfig}!void {
    const r = config.request;
    const p = config.provider;
    if (r.server_tools.len > 0) return request_options.noServerTools(diag, p);
    if (r.hosted_mcp_servers.len > 0) return request_options.noHostedMcpServers(diag, p);
    inline for (.{ "top_k", "interleaved_thinking" }) |name| {
        if (@field(r, name) != null) return request_options.notFor(diag, name, "an Anthropic", p);
    }
    if (r.thinking_budget != null) return request_options.notFor(diag, "thinking {\"budget_tokens\"}", "an Anthropic", p);
    if (r.cache.ttl != null) return request_options.notFor(diag, "cache.ttl", "an Anthropic", p);
    inline for (.{ "seed", "presence_penalty", "frequency_penalty" }) |name| {
        if (@field(r, name) != null) return diag.fail(name ++ " is a Chat Completions parameter: openai-responses does not take it", .{});
    }
    if (r.stop.len > 0) return diag.fail("stop is a Chat Completions parameter: openai-responses does not take it", .{});
    try request_options.checkBodyKeys(r, &body_keys, diag);
    if (r.service_tier) |tier| try request_options.checkServiceTier(tier, &openai_options.service_tiers, p, diag);
}
