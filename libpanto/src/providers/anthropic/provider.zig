//! Anthropic Messages API, behind panto's provider seam (../../providers.zig says what each
//! declaration is for). request.zig writes the request, decode.zig decodes the stream and
//! hot.zig is its hot path.
const std = @import("std");
const Allocator = std.mem.Allocator;
const model_list = @import("../../model_list.zig");
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

/// The model list (model_list.zig): `GET /v1/models`, pages of at most 1000 after
/// `after_id`, answered `{"data": [{"id", "display_name", "created_at"}], "has_more",
/// "last_id"}`.
pub fn writeListPath(gpa: Allocator, out: *std.ArrayList(u8), cursor: ?[]const u8) Allocator.Error!void {
    try out.appendSlice(gpa, "/v1/models?limit=1000");
    if (cursor) |c| {
        try out.appendSlice(gpa, "&after_id=");
        try model_list.appendQueryValue(gpa, out, c);
    }
}
pub fn parseModelPage(arena: Allocator, body: []const u8) error{ OutOfMemory, NotAPage }!model_list.Page {
    const Entry = struct { id: []const u8, display_name: ?[]const u8 = null, created_at: ?[]const u8 = null };
    const Body = struct { data: []const Entry, has_more: bool = false, last_id: ?[]const u8 = null };
    const page = try model_list.parse(Body, arena, body);
    const models = try arena.alloc(model_list.Listed, page.data.len);
    for (page.data, models) |e, *m| m.* = .{ .id = e.id, .display_name = e.display_name, .created = e.created_at };
    const last = if (page.data.len > 0) page.data[page.data.len - 1].id else null;
    return .{ .models = models, .next = if (page.has_more) page.last_id orelse last else null };
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
