//! Google Gemini API (`streamGenerateContent?alt=sse`), behind panto's provider seam
//! (../../providers.zig says what each declaration is for). request.zig writes the request,
//! decode.zig decodes the stream. The model is in the request's path (writeEndpoint).
const std = @import("std");
const Allocator = std.mem.Allocator;
const Headers = @import("../../request.zig").Headers;
const RequestParts = @import("../../request.zig").RequestParts;
const request = @import("request.zig");
const decode = @import("decode.zig");

pub const default_base_url = "https://generativelanguage.googleapis.com";
pub const base_url_variables: []const [:0]const u8 = &.{"GOOGLE_GEMINI_BASE_URL"};
/// As google-genai reads them: GOOGLE_API_KEY first, then GEMINI_API_KEY.
pub const api_key_variables: []const [:0]const u8 = &.{ "GOOGLE_API_KEY", "GEMINI_API_KEY" };
pub const checkOptions = @import("options.zig").check;
pub const writeRequest = request.writeRequest;
pub const parseErrorBody = decode.parseErrorBody;
pub const Decoder = decode.Decoder;
const token_count = @import("../../token_count.zig");
const model_list = @import("../../model_list.zig");

/// The model list (model_list.zig): `GET /v1beta/models`, pages of at most 1000 from
/// `pageToken`, answered `{"models": [{"name": "models/ID", "displayName"}],
/// "nextPageToken"}`; the id without its `models/`.
pub fn writeListPath(gpa: Allocator, out: *std.ArrayList(u8), cursor: ?[]const u8) Allocator.Error!void {
    try out.appendSlice(gpa, "/v1beta/models?pageSize=1000");
    if (cursor) |c| {
        try out.appendSlice(gpa, "&pageToken=");
        try model_list.appendQueryValue(gpa, out, c);
    }
}
pub fn parseModelPage(arena: Allocator, body: []const u8) error{ OutOfMemory, NotAPage }!model_list.Page {
    const Entry = struct { name: []const u8, displayName: ?[]const u8 = null };
    const Body = struct { models: []const Entry = &.{}, nextPageToken: ?[]const u8 = null };
    const page = try model_list.parse(Body, arena, body);
    const models = try arena.alloc(model_list.Listed, page.models.len);
    for (page.models, models) |e, *m| {
        const id = if (std.mem.startsWith(u8, e.name, "models/")) e.name["models/".len..] else e.name;
        m.* = .{ .id = id, .display_name = e.displayName };
    }
    const next = if (page.nextPageToken) |t| (if (t.len > 0) t else null) else null;
    return .{ .models = models, .next = next };
}

/// Token counting (token_count.zig): `models/M:countTokens`, the turn's request as its
/// `generateContentRequest` (which names the model), answered `{"totalTokens": N, ...}`.
pub fn writeCountEndpoint(gpa: Allocator, out: *std.ArrayList(u8), model: []const u8) Allocator.Error!void {
    try writeModelPath(gpa, out, model);
    try out.appendSlice(gpa, ":countTokens");
}
pub fn writeCountBody(w: *std.Io.Writer, parts: RequestParts) std.Io.Writer.Error!void {
    try w.writeAll("{\"generateContentRequest\":");
    try request.writeRequest(w, parts);
    try w.writeAll("}");
}
pub fn parseCount(arena: Allocator, body: []const u8) ?u64 {
    return token_count.member(arena, body, "totalTokens");
}

/// `/v1beta/models/{model}:streamGenerateContent?alt=sse`; a model named with its
/// collection (`models/x`, `tunedModels/x`) as it is. Bytes a path segment may not hold are
/// percent-encoded, so a model name never changes the request's target.
pub fn writeEndpoint(gpa: Allocator, out: *std.ArrayList(u8), model: []const u8) Allocator.Error!void {
    try writeModelPath(gpa, out, model);
    try out.appendSlice(gpa, ":streamGenerateContent?alt=sse");
}

/// `/v1beta/models/{model}`, the model's path of every method.
fn writeModelPath(gpa: Allocator, out: *std.ArrayList(u8), model: []const u8) Allocator.Error!void {
    try out.appendSlice(gpa, "/v1beta/");
    if (std.mem.indexOfScalar(u8, model, '/') == null) try out.appendSlice(gpa, "models/");
    for (model) |c| {
        if (std.ascii.isAlphanumeric(c) or std.mem.indexOfScalar(u8, "-._~/", c) != null) {
            try out.append(gpa, c);
        } else {
            try out.print(gpa, "%{X:0>2}", .{c});
        }
    }
}

/// The key as `x-goog-api-key`, never in the URL (where logs would keep it).
pub fn addHeaders(h: *Headers, parts: RequestParts) error{OutOfMemory}!void {
    if (parts.config.api_key) |key| try h.add("x-goog-api-key", key);
}

test "gemini endpoint: the model in the path, named with its collection or not, odd bytes encoded" {
    const gpa = std.testing.allocator;
    var out: std.ArrayList(u8) = .empty;
    defer out.deinit(gpa);
    try writeEndpoint(gpa, &out, "gemini-2.5-flash");
    try std.testing.expectEqualStrings("/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse", out.items);
    out.clearRetainingCapacity();
    try writeEndpoint(gpa, &out, "tunedModels/my-model");
    try std.testing.expectEqualStrings("/v1beta/tunedModels/my-model:streamGenerateContent?alt=sse", out.items);
    out.clearRetainingCapacity();
    try writeEndpoint(gpa, &out, "x?y#z");
    try std.testing.expectEqualStrings("/v1beta/models/x%3Fy%23z:streamGenerateContent?alt=sse", out.items);
}
