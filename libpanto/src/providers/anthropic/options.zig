//! The request parameters Anthropic's Messages API does not take, and its own choices
//! (request_options.check runs this for an anthropic agent, through the provider seam).
const config_mod = @import("../../config.zig");
const request_options = @import("../../request_options.zig");
const Config = config_mod.Config;
const Diagnostic = config_mod.Diagnostic;
const provider_schema = @import("../../provider_schema.zig");

pub const service_tiers = [_][]const u8{ "auto", "standard_only" };

pub fn check(config: Config, diag: *Diagnostic) error{InvalidConfig}!void {
    const r = config.request;
    const p = config.provider;
    inline for (.{ "seed", "presence_penalty", "frequency_penalty", "metadata", "reasoning_effort" }) |name| {
        if (@field(r, name) != null) return request_options.notFor(diag, name, "an OpenAI", p);
    }
    if (r.response_format) |f| if (f == .json_object) return request_options.notFor(diag, "response_format {\"type\": \"json_object\"}", "an OpenAI", p);
    if (r.response_format) |f| if (f == .json_schema) if (f.json_schema.parsed) |schema| if (provider_schema.recursiveRef(schema)) |ref|
        return diag.fail("response_format.schema is recursive (\"$ref\": \"{s}\" leads back into itself): Anthropic's structured outputs refuse a recursive schema", .{ref});
    if (r.cache.key != null) return request_options.notFor(diag, "cache.key", "an OpenAI", p);
    if (r.cache.retention != null) return request_options.notFor(diag, "cache.retention", "an OpenAI", p);
    if (r.service_tier) |tier| try request_options.checkServiceTier(tier, &service_tiers, p, diag);
}
