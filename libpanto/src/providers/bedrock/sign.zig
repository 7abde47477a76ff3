//! Bedrock's `signRequest` for the seam (providers.zig): the Bedrock API key as a bearer
//! token, else SigV4 over the request as sent (credentials.zig's order, then the shared AWS
//! files' profile: profile_files.zig), made again on every attempt. The environment is
//! passed in, as in credentials.zig.
const std = @import("std");
const req = @import("../../request.zig");
const credentials = @import("credentials.zig");
const sigv4 = @import("sigv4.zig");
const profile_files = @import("profile_files.zig");

/// The host of the base URL derived without a region (provider.zig's default_base_url).
pub const regionless_host = "bedrock-runtime.amazonaws.com";

const no_region = "no AWS region: set AWS_REGION or AWS_DEFAULT_REGION";

pub fn signRequest(h: *req.Headers, signing: req.Signing, api_key: ?[]const u8, env: credentials.Env) req.SignError!void {
    const gpa = h.gpa;
    if (std.mem.eql(u8, signing.host, regionless_host)) {
        signing.detail.set(gpa, 0, "config_error", no_region);
        return error.Config;
    }
    var profile: ?profile_files.Profile = null;
    defer if (profile) |*p| p.deinit(gpa);
    const c: sigv4.Credentials = switch (credentials.auth(api_key, env)) {
        .bearer => |key| return h.bearer(key),
        .sigv4 => |c| c,
        .none => found: {
            profile = try profile_files.load(gpa, env);
            break :found profile.?.credentials orelse {
                signing.detail.set(gpa, 0, "authentication_error", "no AWS credentials: set " ++ credentials.looked_for ++ " (or the config key api_key)");
                return error.Authentication;
            };
        },
    };
    const region = credentials.region(env) orelse region: {
        if (profile == null) profile = try profile_files.load(gpa, env);
        break :region profile.?.region;
    } orelse {
        signing.detail.set(gpa, 0, "config_error", no_region);
        return error.Config;
    };
    const date = sigv4.amzDate(@intCast(@max(signing.now, 0)));
    @memcpy(h.date_buffer[0..date.len], &date);
    try h.add("x-amz-date", h.date_buffer[0..date.len]);
    // The authorization, then the session token, in the headers' own buffer: a profile's
    // strings are freed when this returns, the request is sent after.
    h.auth_buffer.clearRetainingCapacity();
    var w: std.Io.Writer.Allocating = .fromArrayList(gpa, h.auth_buffer);
    sigv4.writeAuthorization(&w.writer, c, .{ .region = region, .service = "bedrock" }, .{
        .method = signing.method,
        .host = signing.host,
        .path = signing.path,
        .headers = &.{.{ .name = "content-type", .value = "application/json" }},
        .body = signing.body,
    }, date) catch {
        h.auth_buffer.* = w.toArrayList();
        return error.OutOfMemory;
    };
    h.auth_buffer.* = w.toArrayList();
    const authorization_len = h.auth_buffer.items.len;
    if (c.session_token) |token| try h.auth_buffer.appendSlice(gpa, token);
    h.authorization = .{ .override = h.auth_buffer.items[0..authorization_len] };
    if (c.session_token != null) try h.add("x-amz-security-token", h.auth_buffer.items[authorization_len..]);
}

const TestEnv = struct {
    var table: []const [2][]const u8 = &.{};
    fn lookup(name: [:0]const u8) ?[]const u8 {
        for (table) |entry| if (std.mem.eql(u8, entry[0], name)) return entry[1];
        return null;
    }
};

test "bedrock signRequest: a bearer key, a SigV4 signature with its date and token, or a typed failure" {
    const gpa = std.testing.allocator;
    var list: std.ArrayList(std.http.Header) = .empty;
    defer list.deinit(gpa);
    var auth: std.ArrayList(u8) = .empty;
    defer auth.deinit(gpa);
    var beta: std.ArrayList(u8) = .empty;
    defer beta.deinit(gpa);
    var detail: @import("../../errors.zig").Detail = .{};
    defer detail.deinit(gpa);
    const signing: req.Signing = .{ .host = "127.0.0.1:8080", .path = "/model/m%3A0/converse-stream", .body = "{}", .now = 1440938160, .detail = &detail };

    var h: req.Headers = .{ .list = &list, .auth_buffer = &auth, .beta_buffer = &beta, .gpa = gpa };
    TestEnv.table = &.{.{ "AWS_BEARER_TOKEN_BEDROCK", "bt" }};
    try signRequest(&h, signing, null, TestEnv.lookup);
    try std.testing.expectEqualStrings("Bearer bt", h.authorization.override);

    auth.clearRetainingCapacity();
    h = .{ .list = &list, .auth_buffer = &auth, .beta_buffer = &beta, .gpa = gpa };
    TestEnv.table = &.{ .{ "AWS_ACCESS_KEY_ID", "AKIDEXAMPLE" }, .{ "AWS_SECRET_ACCESS_KEY", "secret" }, .{ "AWS_SESSION_TOKEN", "tok" }, .{ "AWS_REGION", "us-east-1" } };
    try signRequest(&h, signing, null, TestEnv.lookup);
    try std.testing.expectEqualStrings("x-amz-date", list.items[0].name);
    try std.testing.expectEqualStrings("20150830T123600Z", list.items[0].value);
    try std.testing.expectEqualStrings("tok", list.items[1].value);
    try std.testing.expect(std.mem.startsWith(u8, h.authorization.override, "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/bedrock/aws4_request, SignedHeaders=content-type;host;x-amz-date;x-amz-security-token, Signature="));

    TestEnv.table = &.{ .{ "AWS_ACCESS_KEY_ID", "AKIDEXAMPLE" }, .{ "AWS_SECRET_ACCESS_KEY", "secret" } };
    try std.testing.expectError(error.Config, signRequest(&h, signing, null, TestEnv.lookup));
    TestEnv.table = &.{};
    try std.testing.expectError(error.Authentication, signRequest(&h, signing, null, TestEnv.lookup));
    try std.testing.expectEqualStrings("authentication_error", detail.error_type.items);

    // The base derived without a region: refused before any credentials are looked at.
    TestEnv.table = &.{.{ "AWS_BEARER_TOKEN_BEDROCK", "bt" }};
    var regionless = signing;
    regionless.host = regionless_host;
    try std.testing.expectError(error.Config, signRequest(&h, regionless, null, TestEnv.lookup));
    try std.testing.expectEqualStrings("config_error", detail.error_type.items);
}
