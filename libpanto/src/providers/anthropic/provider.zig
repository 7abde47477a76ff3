//! Anthropic Messages API, behind panto's provider seam (../../providers.zig says what each
//! declaration is for). request.zig writes the request, decode.zig decodes the stream and
//! hot.zig is its hot path.
const Allocator = @import("std").mem.Allocator;
const token_count = @import("../../token_count.zig");
const Headers = @import("../../request.zig").Headers;
const RequestParts = @import("../../request.zig").RequestParts;
const request = @import("request.zig");
const decode = @import("decode.zig");
const server_tools = @import("server_tools.zig");

pub const default_base_url = "https://api.anthropic.com";
pub const base_url_variables: []const [:0]const u8 = &.{"ANTHROPIC_BASE_URL"};
pub const api_key_variables: []const [:0]const u8 = &.{"ANTHROPIC_API_KEY"};
pub const endpoint = request.endpoint;
/// Anthropic takes a temperature up to 1 (the others up to 2).
pub const max_temperature: f64 = 1;
pub const checkOptions = @import("options.zig").check;
pub const writeRequest = request.writeRequest;
pub const parseErrorBody = decode.parseErrorBody;
pub const Decoder = decode.Decoder;

/// Token counting (token_count.zig): the turn's request without what is not prompt, to
/// `count_tokens`, answered `{"input_tokens": N}`.
pub const count_endpoint = "/v1/messages/count_tokens";
pub const writeCountBody = request.writeRequest;
pub fn parseCount(arena: Allocator, body: []const u8) ?u64 {
    return token_count.member(arena, body, "input_tokens");
}

pub fn addHeaders(h: *Headers, parts: RequestParts) error{OutOfMemory}!void {
    try h.add("anthropic-version", request.api_version);
    if (parts.config.api_key) |key| try h.add("x-api-key", key);
    // The beta features the request uses: panto's, then the user's.
    if (request.interleavedThinking(parts)) try h.beta_buffer.appendSlice(h.gpa, request.interleaved_thinking_beta);
    try server_tools.appendBetas(h.gpa, h.beta_buffer, parts.config.request.server_tools);
    try server_tools.appendMcpBeta(h.gpa, h.beta_buffer, parts.config.request);
    if (h.beta_buffer.items.len > 0) try h.joinBeta(parts.config.request.extra_headers);
}
