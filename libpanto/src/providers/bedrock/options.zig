//! The request parameters Bedrock's Converse API does not take (or panto does not send yet:
//! docs/design/bedrock.md), and the body members its writer owns (request_options.check runs
//! this for a bedrock agent, through the provider seam).
const config_mod = @import("../../config.zig");
const request_options = @import("../../request_options.zig");
const Config = config_mod.Config;
const Diagnostic = config_mod.Diagnostic;

/// Body keys panto writes for bedrock (ConverseStream's).
pub const body_keys = [_][]const u8{ "inferenceConfig", "toolConfig", "additionalModelRequestFields", "outputConfig" };

pub fn check(config: Config, diag: *Diagnostic) error{InvalidConfig}!void {
    const r = config.request;
    const p = config.provider;
    if (r.server_tools.len > 0) return request_options.noServerTools(diag, p);
    if (r.hosted_mcp_servers.len > 0) return request_options.noHostedMcpServers(diag, p);
    // Not written yet (docs/design/bedrock.md, "Next"): refused rather than dropped.
    inline for (.{ "seed", "presence_penalty", "frequency_penalty", "metadata", "user", "parallel_tool_calls", "service_tier", "reasoning_effort", "interleaved_thinking" }) |name| {
        if (@field(r, name) != null) return diag.fail(name ++ " is not a Bedrock Converse parameter panto sends: bedrock does not take it", .{});
    }
    if (r.response_format) |f| if (f == .json_object)
        return diag.fail("response_format {{\"type\": \"json_object\"}} has no Bedrock Converse form: give a json_schema", .{});
    // (mode and ttl shape its cachePoint blocks: request.zig)
    if (r.cache.key != null) return diag.fail("cache.key is an OpenAI parameter: bedrock does not take it", .{});
    if (r.cache.retention != null) return diag.fail("cache.retention is an OpenAI parameter: bedrock does not take it", .{});
    try request_options.checkBodyKeys(r, &body_keys, diag);
}
