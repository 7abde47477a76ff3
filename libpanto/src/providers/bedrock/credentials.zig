//! Bedrock's credentials, region and URL (docs/design/bedrock.md, "Endpoint" and
//! "Credentials"): a Bedrock API key (the config's api_key, else AWS_BEARER_TOKEN_BEDROCK)
//! first, as the AWS SDKs take it; else an access key from the environment, signed with
//! SigV4. The environment is passed in (`Env`): the provider gives `std.c.getenv`, tests a table.
const std = @import("std");
const Allocator = std.mem.Allocator;
const sigv4 = @import("sigv4.zig");

/// Looks up an environment variable; an empty value counts as unset.
pub const Env = *const fn (name: [:0]const u8) ?[]const u8;

pub const Auth = union(enum) {
    /// `authorization: Bearer <key>`, no signing.
    bearer: []const u8,
    sigv4: sigv4.Credentials,
    /// Nothing found: an authentication error naming `looked_for`.
    none,
};

/// The variables read, in order, for the error when none gives credentials.
pub const looked_for = "AWS_BEARER_TOKEN_BEDROCK, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or a profile with keys in ~/.aws/credentials or ~/.aws/config (AWS_PROFILE)";

pub fn auth(api_key: ?[]const u8, env: Env) Auth {
    if (api_key) |key| if (key.len > 0) return .{ .bearer = key };
    if (get(env, "AWS_BEARER_TOKEN_BEDROCK")) |token| return .{ .bearer = token };
    const id = get(env, "AWS_ACCESS_KEY_ID") orelse return .none;
    const secret = get(env, "AWS_SECRET_ACCESS_KEY") orelse return .none;
    return .{ .sigv4 = .{ .access_key_id = id, .secret_access_key = secret, .session_token = get(env, "AWS_SESSION_TOKEN") } };
}

/// AWS_REGION, then AWS_DEFAULT_REGION; null is a config error (no guessed region: a request
/// signed for the wrong one fails with a confusing 403).
pub fn region(env: Env) ?[]const u8 {
    return get(env, "AWS_REGION") orelse get(env, "AWS_DEFAULT_REGION");
}

/// The public endpoint's base for `region_name`.
pub fn writeDefaultBaseUrl(gpa: Allocator, out: *std.ArrayList(u8), region_name: []const u8) Allocator.Error!void {
    try out.print(gpa, "https://bedrock-runtime.{s}.amazonaws.com", .{region_name});
}

/// The path of ConverseStream for `model`: a model id (`...-v1:0`), an inference profile
/// (`us.`...) or an ARN, every byte outside `[A-Za-z0-9._~-]` percent-encoded (an ARN's `:`
/// and `/` included).
pub fn writeEndpoint(gpa: Allocator, out: *std.ArrayList(u8), model: []const u8) Allocator.Error!void {
    try writeModelPath(gpa, out, model);
    try out.appendSlice(gpa, "/converse-stream");
}

/// `/model/{model}/count-tokens` (CountTokens).
pub fn writeCountEndpoint(gpa: Allocator, out: *std.ArrayList(u8), model: []const u8) Allocator.Error!void {
    try writeModelPath(gpa, out, model);
    try out.appendSlice(gpa, "/count-tokens");
}

/// `/model/{model}`, the model id percent-encoded as one path segment.
fn writeModelPath(gpa: Allocator, out: *std.ArrayList(u8), model: []const u8) Allocator.Error!void {
    try out.appendSlice(gpa, "/model/");
    for (model) |c| {
        if (std.ascii.isAlphanumeric(c) or c == '.' or c == '_' or c == '~' or c == '-') {
            try out.append(gpa, c);
        } else {
            try out.print(gpa, "%{X:0>2}", .{c});
        }
    }
}

fn get(env: Env, name: [:0]const u8) ?[]const u8 {
    const value = env(name) orelse return null;
    return if (value.len == 0) null else value;
}

const TestEnv = struct {
    var table: []const [2][]const u8 = &.{};
    fn lookup(name: [:0]const u8) ?[]const u8 {
        for (table) |entry| if (std.mem.eql(u8, entry[0], name)) return entry[1];
        return null;
    }
};

test "bedrock credentials: the API key first, then an access key, empty values unset" {
    TestEnv.table = &.{ .{ "AWS_BEARER_TOKEN_BEDROCK", "bt" }, .{ "AWS_ACCESS_KEY_ID", "AKID" }, .{ "AWS_SECRET_ACCESS_KEY", "secret" } };
    try std.testing.expectEqualStrings("cfg", auth("cfg", TestEnv.lookup).bearer);
    try std.testing.expectEqualStrings("bt", auth(null, TestEnv.lookup).bearer);
    TestEnv.table = &.{ .{ "AWS_BEARER_TOKEN_BEDROCK", "" }, .{ "AWS_ACCESS_KEY_ID", "AKID" }, .{ "AWS_SECRET_ACCESS_KEY", "secret" }, .{ "AWS_SESSION_TOKEN", "tok" } };
    const c = auth(null, TestEnv.lookup).sigv4;
    try std.testing.expectEqualStrings("AKID", c.access_key_id);
    try std.testing.expectEqualStrings("secret", c.secret_access_key);
    try std.testing.expectEqualStrings("tok", c.session_token.?);
    TestEnv.table = &.{.{ "AWS_ACCESS_KEY_ID", "AKID" }};
    try std.testing.expect(auth(null, TestEnv.lookup) == .none);
    try std.testing.expect(auth("", TestEnv.lookup) == .none);
}

test "bedrock credentials: the region, and the URL" {
    TestEnv.table = &.{ .{ "AWS_REGION", "" }, .{ "AWS_DEFAULT_REGION", "eu-west-3" } };
    try std.testing.expectEqualStrings("eu-west-3", region(TestEnv.lookup).?);
    TestEnv.table = &.{};
    try std.testing.expectEqual(null, region(TestEnv.lookup));

    const gpa = std.testing.allocator;
    var out: std.ArrayList(u8) = .empty;
    defer out.deinit(gpa);
    try writeDefaultBaseUrl(gpa, &out, "us-west-2");
    try writeEndpoint(gpa, &out, "anthropic.claude-3-5-sonnet-20240620-v1:0");
    try std.testing.expectEqualStrings("https://bedrock-runtime.us-west-2.amazonaws.com/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse-stream", out.items);
    out.clearRetainingCapacity();
    try writeEndpoint(gpa, &out, "arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.meta.llama3-2-1b-instruct-v1:0");
    try std.testing.expectEqualStrings("/model/arn%3Aaws%3Abedrock%3Aus-east-1%3A123456789012%3Ainference-profile%2Fus.meta.llama3-2-1b-instruct-v1%3A0/converse-stream", out.items);
}
