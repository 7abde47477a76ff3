//! OpenAI Chat Completions (and compatible servers), behind panto's provider seam
//! (../../providers.zig says what each declaration is for). request.zig writes the request,
//! decode.zig decodes the stream and hot.zig is its hot path.
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

/// The model list (model_list.zig): `GET /v1/models` (openai/models.zig).
pub const writeListPath = @import("models.zig").writeListPath;
pub const parseModelPage = @import("models.zig").parseModelPage;

pub fn addHeaders(h: *Headers, parts: RequestParts) error{OutOfMemory}!void {
    if (parts.config.api_key) |key| try h.bearer(key);
}
