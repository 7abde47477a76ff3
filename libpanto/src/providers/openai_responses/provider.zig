//! OpenAI Responses API, behind panto's provider seam (../../providers.zig says what each
//! declaration is for). request.zig writes the request, decode.zig decodes the stream.
//! Stateless: `store: false`, and each reasoning item goes back with its encrypted content.
const Allocator = @import("std").mem.Allocator;
const token_count = @import("../../token_count.zig");
const Headers = @import("../../request.zig").Headers;
const RequestParts = @import("../../request.zig").RequestParts;
const request = @import("request.zig");
const decode = @import("decode.zig");

pub const default_base_url = "https://api.openai.com/v1";
pub const base_url_variables: []const [:0]const u8 = &.{"OPENAI_BASE_URL"};
pub const api_key_variables: []const [:0]const u8 = &.{"OPENAI_API_KEY"};
pub const endpoint = request.endpoint;
pub const checkOptions = @import("options.zig").check;
pub const writeRequest = request.writeRequest;
pub const parseErrorBody = decode.parseErrorBody;
pub const Decoder = decode.Decoder;

/// Token counting (token_count.zig): the turn's request without what is not prompt, to
/// `input_tokens`, answered `{"object": "response.input_tokens", "input_tokens": N}`.
pub const count_endpoint = "/v1/responses/input_tokens";
pub const writeCountBody = request.writeRequest;
pub fn parseCount(arena: Allocator, body: []const u8) ?u64 {
    return token_count.member(arena, body, "input_tokens");
}

/// The model list (model_list.zig): `GET /v1/models` (openai/models.zig).
pub const writeListPath = @import("../openai/models.zig").writeListPath;
pub const parseModelPage = @import("../openai/models.zig").parseModelPage;

pub fn addHeaders(h: *Headers, parts: RequestParts) error{OutOfMemory}!void {
    if (parts.config.api_key) |key| try h.bearer(key);
}
