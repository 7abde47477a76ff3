//! The request parameters Chat Completions does not take, and its own limits
//! (request_options.check runs this for an openai agent, through the provider seam).
const config_mod = @import("../../config.zig");
const request_options = @import("../../request_options.zig");
const Config = config_mod.Config;
const Diagnostic = config_mod.Diagnostic;

pub const service_tiers = [_][]const u8{ "auto", "default", "flex", "scale", "priority" };
/// Chat Completions takes at most this many stop sequences.
pub const max_stop = 4;

pub fn check(config: Config, diag: *Diagnostic) error{InvalidConfig}!void {
    const r = config.request;
    const p = config.provider;
    inline for (.{ "top_k", "interleaved_thinking" }) |name| {
        if (@field(r, name) != null) return request_options.notFor(diag, name, "an Anthropic", p);
    }
    if (r.thinking_budget != null) return request_options.notFor(diag, "thinking {\"budget_tokens\"}", "an Anthropic", p);
    if (r.cache.ttl != null) return request_options.notFor(diag, "cache.ttl", "an Anthropic", p);
    if (r.server_tools.len > 0) return request_options.noServerTools(diag, p);
    if (r.hosted_mcp_servers.len > 0) return request_options.noHostedMcpServers(diag, p);
    if (r.stop.len > max_stop) return diag.fail("stop takes at most {d} sequences for openai", .{max_stop});
    if (r.service_tier) |tier| try request_options.checkServiceTier(tier, &service_tiers, p, diag);
}
