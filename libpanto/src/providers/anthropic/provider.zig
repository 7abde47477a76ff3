//! Anthropic Messages API, behind panto's provider seam (../../providers.zig says what each
//! declaration is for). request.zig writes the request, decode.zig decodes the stream and
//! hot.zig is its hot path.
const Headers = @import("../../request.zig").Headers;
const request = @import("request.zig");
const decode = @import("decode.zig");

pub const default_base_url = "https://api.anthropic.com";
pub const api_key_variable = "ANTHROPIC_API_KEY";
pub const endpoint = request.endpoint;
pub const writeRequest = request.writeRequest;
pub const parseErrorBody = decode.parseErrorBody;
pub const Decoder = decode.Decoder;

pub fn addHeaders(h: *Headers, api_key: ?[]const u8) error{OutOfMemory}!void {
    h.add("anthropic-version", request.api_version);
    if (api_key) |key| h.add("x-api-key", key);
}
