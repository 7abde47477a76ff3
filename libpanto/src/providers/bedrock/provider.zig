//! AWS Bedrock's ConverseStream API, behind panto's provider seam (../../providers.zig says
//! what each declaration is for; docs/design/bedrock.md the decisions). request.zig writes the
//! request, framer.zig reads the binary event-stream body, decode.zig decodes its events,
//! sign.zig signs each attempt with the credentials credentials.zig finds in the environment.
//!
//! panto's `api_key` is a Bedrock API key (sent as a bearer token, no signing); its
//! environment variable is AWS_BEARER_TOKEN_BEDROCK. Without one, the access key of
//! AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY (/ AWS_SESSION_TOKEN) signs with SigV4.
const std = @import("std");
const Allocator = std.mem.Allocator;
const errors = @import("../../errors.zig");
const req = @import("../../request.zig");
const credentials = @import("credentials.zig");
const request = @import("request.zig");
const decode = @import("decode.zig");
const sign = @import("sign.zig");

/// The base without a region, which no request may go to: signRequest refuses it with a
/// config error naming the region's variables (the region is read when the base is derived).
pub const default_base_url = "https://" ++ sign.regionless_host;
/// The service's own endpoint variable, then every service's (as the AWS SDKs read them).
pub const base_url_variables: []const [:0]const u8 = &.{ "AWS_ENDPOINT_URL_BEDROCK_RUNTIME", "AWS_ENDPOINT_URL" };
pub const api_key_variables: []const [:0]const u8 = &.{"AWS_BEARER_TOKEN_BEDROCK"};
pub const accept = "application/vnd.amazon.eventstream";
const profile_files = @import("profile_files.zig");
pub const checkOptions = @import("options.zig").check;
pub const writeRequest = request.writeRequest;
pub const writeEndpoint = credentials.writeEndpoint;
pub const Decoder = decode.Decoder;
pub const Framer = @import("framer.zig").Framer;

/// Token counting (token_count.zig): CountTokens, `/model/M/count-tokens`, the turn's
/// Converse request as `{"input": {"converse": ...}}`, answered `{"inputTokens": N}`.
pub const writeCountEndpoint = credentials.writeCountEndpoint;
pub fn writeCountBody(w: *std.Io.Writer, parts: req.RequestParts) std.Io.Writer.Error!void {
    try w.writeAll("{\"input\":{\"converse\":");
    try request.writeRequest(w, parts);
    try w.writeAll("}}");
}
pub fn parseCount(arena: Allocator, body: []const u8) ?u64 {
    return @import("../../token_count.zig").member(arena, body, "inputTokens");
}

/// The model list (model_list.zig): ListFoundationModels, `GET /foundation-models` on the
/// control plane (`bedrock.{region}`, not `bedrock-runtime.`: writeListBaseUrl), signed as
/// the runtime's requests are (service `bedrock`), answered `{"modelSummaries": [{"modelId",
/// "modelName", ...}]}` in one page.
pub fn writeListPath(gpa: Allocator, out: *std.ArrayList(u8), _: ?[]const u8) Allocator.Error!void {
    try out.appendSlice(gpa, "/foundation-models");
}
pub fn parseModelPage(arena: Allocator, body: []const u8) error{ OutOfMemory, NotAPage }!@import("../../model_list.zig").Page {
    const model_list = @import("../../model_list.zig");
    const Entry = struct { modelId: []const u8, modelName: ?[]const u8 = null };
    const Body = struct { modelSummaries: []const Entry };
    const page = try model_list.parse(Body, arena, body);
    const models = try arena.alloc(model_list.Listed, page.modelSummaries.len);
    for (page.modelSummaries, models) |e, *m| m.* = .{ .id = e.modelId, .display_name = e.modelName };
    return .{ .models = models };
}

/// The control plane's base: AWS_ENDPOINT_URL_BEDROCK (as the AWS SDKs read it), else the
/// runtime's base with its `bedrock-runtime.` host as `bedrock.`, else the base as it is (a
/// proxy or an emulator answering both).
pub fn writeListBaseUrl(gpa: Allocator, out: *std.ArrayList(u8), base: []const u8) Allocator.Error!void {
    if (environment("AWS_ENDPOINT_URL_BEDROCK")) |url| if (url.len > 0) return out.appendSlice(gpa, url);
    const runtime = "://bedrock-runtime.";
    const at = std.mem.indexOf(u8, base, runtime) orelse return out.appendSlice(gpa, base);
    try out.appendSlice(gpa, base[0..at]);
    try out.appendSlice(gpa, "://bedrock.");
    try out.appendSlice(gpa, base[at + runtime.len ..]);
}

/// `https://bedrock-runtime.{region}.amazonaws.com`, the region from AWS_REGION or
/// AWS_DEFAULT_REGION, else the profile's in the AWS config file; without one,
/// `default_base_url`.
pub fn writeDefaultBaseUrl(gpa: Allocator, out: *std.ArrayList(u8)) Allocator.Error!void {
    if (credentials.region(environment)) |name| return credentials.writeDefaultBaseUrl(gpa, out, name);
    var profile = try profile_files.load(gpa, environment);
    defer profile.deinit(gpa);
    const name = profile.region orelse return out.appendSlice(gpa, default_base_url);
    try credentials.writeDefaultBaseUrl(gpa, out, name);
}

/// Nothing before the body is known: the authorization is signRequest's.
pub fn addHeaders(_: *req.Headers, _: req.RequestParts) error{OutOfMemory}!void {}

pub fn signRequest(h: *req.Headers, signing: req.Signing) req.SignError!void {
    return sign.signRequest(h, signing, signing.api_key, environment);
}

/// The header that names a non-2xx answer's exception (`x-amzn-errortype`), passed to
/// parseErrorBody.
pub const error_type_header = "x-amzn-errortype";

/// Bedrock's error body, `{"message": ...}` (`Message` from AWS's front door, with the
/// exception's name in `__type` from some services); the error's type is the exception's
/// name, from `error_type_header` or else `__type`, and its kind the name's (`kind`) where
/// the status says less.
pub fn parseErrorBody(arena: Allocator, body: []const u8, error_type: ?[]const u8) ?errors.ProviderError {
    const Body = struct { message: ?[]const u8 = null, Message: ?[]const u8 = null, __type: ?[]const u8 = null };
    const parsed = std.json.parseFromSliceLeaky(Body, arena, body, .{ .ignore_unknown_fields = true }) catch return null;
    const message = parsed.message orelse parsed.Message orelse return null;
    const name = exceptionName(error_type orelse parsed.__type orelse "error");
    return .{ .type = name, .message = message, .kind = kind(name) };
}

/// What an exception's name says of the error where its status does not: AWS answers bad
/// or expired credentials with 403, as it answers a denied permission.
fn kind(name: []const u8) ?errors.TurnError {
    const authentication = [_][]const u8{ "UnrecognizedClientException", "InvalidSignatureException", "IncompleteSignatureException", "MissingAuthenticationTokenException", "ExpiredTokenException", "InvalidClientTokenId" };
    for (authentication) |a| if (std.mem.eql(u8, a, name)) return error.Authentication;
    if (std.mem.eql(u8, name, "AccessDeniedException")) return error.PermissionDenied;
    if (std.mem.eql(u8, name, "ThrottlingException")) return error.RateLimit;
    if (std.mem.eql(u8, name, "ValidationException")) return error.InvalidRequest;
    return null;
}

/// `com.amazon.coral.service#ValidationException:http://...` as `ValidationException`.
fn exceptionName(t: []const u8) []const u8 {
    const start = if (std.mem.lastIndexOfScalar(u8, t, '#')) |i| i + 1 else 0;
    const end = std.mem.indexOfScalarPos(u8, t, start, ':') orelse t.len;
    return t[start..end];
}

fn environment(name: [:0]const u8) ?[]const u8 {
    return if (std.c.getenv(name)) |value| std.mem.span(value) else null;
}

test "bedrock error bodies: message or Message, the exception's name from the header or the body, without its namespace" {
    var arena_state: std.heap.ArenaAllocator = .init(std.testing.allocator);
    defer arena_state.deinit();
    const arena = arena_state.allocator();
    const a = parseErrorBody(arena, "{\"message\":\"Too many requests\"}", null).?;
    try std.testing.expectEqualStrings("error", a.type);
    try std.testing.expectEqualStrings("Too many requests", a.message);
    try std.testing.expectEqual(null, a.kind);
    const b = parseErrorBody(arena, "{\"Message\":\"denied\",\"__type\":\"com.amazon.coral.service#AccessDeniedException:http://x\"}", null).?;
    try std.testing.expectEqualStrings("AccessDeniedException", b.type);
    try std.testing.expectEqualStrings("denied", b.message);
    try std.testing.expectEqual(error.PermissionDenied, b.kind.?);
    const c = parseErrorBody(arena, "{\"message\":\"The security token included in the request is invalid.\"}", "UnrecognizedClientException:http://internal.amazon.com/coral/com.amazon.coral.service/").?;
    try std.testing.expectEqualStrings("UnrecognizedClientException", c.type);
    try std.testing.expectEqual(error.Authentication, c.kind.?);
    try std.testing.expectEqual(null, parseErrorBody(arena, "<html>", null));
    try std.testing.expectEqual(null, parseErrorBody(arena, "{\"other\":1}", "ValidationException"));
}
