//! The shared AWS files, as the AWS SDKs read them: a profile's access key from the
//! credentials file (`AWS_SHARED_CREDENTIALS_FILE`, else ~/.aws/credentials: `[NAME]`
//! sections), else from the config file (`AWS_CONFIG_FILE`, else ~/.aws/config:
//! `[profile NAME]`, `[default]`), and its region from the config file. The profile is
//! `AWS_PROFILE`, else "default". Read when the environment holds no credentials (or no
//! region), at each signing: small files, and a key rotated on disk is taken at the next
//! attempt. Not read: `credential_process`, SSO, `role_arn` (docs/design/bedrock.md).
const std = @import("std");
const Allocator = std.mem.Allocator;
const sigv4 = @import("sigv4.zig");
const Env = @import("credentials.zig").Env;

/// What the files give a profile; strings in the files' bytes, owned.
pub const Profile = struct {
    credentials_text: []u8 = &.{},
    config_text: []u8 = &.{},
    credentials: ?sigv4.Credentials = null,
    region: ?[]const u8 = null,

    pub fn deinit(p: *Profile, gpa: Allocator) void {
        gpa.free(p.credentials_text);
        gpa.free(p.config_text);
        p.* = .{};
    }
};

/// A file larger than this is not an AWS file panto reads (a mistake): taken as absent.
const max_file = 1 << 20;

pub fn load(gpa: Allocator, env: Env) Allocator.Error!Profile {
    const name = get(env, "AWS_PROFILE") orelse "default";
    var p: Profile = .{};
    errdefer p.deinit(gpa);
    p.credentials_text = try readFile(gpa, env, "AWS_SHARED_CREDENTIALS_FILE", ".aws/credentials");
    p.config_text = try readFile(gpa, env, "AWS_CONFIG_FILE", ".aws/config");
    if (section(p.credentials_text, name, false)) |s| p.credentials = keys(s);
    const config_section = section(p.config_text, name, true);
    if (p.credentials == null) if (config_section) |s| {
        p.credentials = keys(s);
    };
    if (config_section) |s| p.region = value(s, "region");
    return p;
}

fn keys(s: []const u8) ?sigv4.Credentials {
    return .{
        .access_key_id = value(s, "aws_access_key_id") orelse return null,
        .secret_access_key = value(s, "aws_secret_access_key") orelse return null,
        .session_token = value(s, "aws_session_token"),
    };
}

/// The body of section `name` (the lines after its header, up to the next header): `[name]`
/// in the credentials file; `[profile name]` in the config file, or `[default]` for
/// "default". Null when the file has none.
pub fn section(text: []const u8, name: []const u8, config_file: bool) ?[]const u8 {
    var pos: usize = 0;
    var body: ?usize = null;
    while (pos < text.len) {
        const nl = std.mem.indexOfScalarPos(u8, text, pos, '\n') orelse text.len;
        const next = @min(nl + 1, text.len);
        const line = std.mem.trim(u8, text[pos..nl], " \t\r");
        if (line.len >= 2 and line[0] == '[' and line[line.len - 1] == ']') {
            if (body) |b| return text[b..pos];
            if (names(std.mem.trim(u8, line[1 .. line.len - 1], " \t"), name, config_file)) body = next;
        }
        pos = next;
    }
    return if (body) |b| text[b..] else null;
}

/// Whether a section header names profile `name`.
fn names(header: []const u8, name: []const u8, config_file: bool) bool {
    if (!config_file or std.mem.eql(u8, header, "default")) return std.mem.eql(u8, header, name);
    if (!std.mem.startsWith(u8, header, "profile ")) return false;
    return std.mem.eql(u8, std.mem.trim(u8, header["profile ".len..], " \t"), name);
}

/// The value of `key = value` in a section's body (comments `#`, `;` skipped); null when it
/// is not there or is empty.
pub fn value(body: []const u8, key: []const u8) ?[]const u8 {
    var lines = std.mem.splitScalar(u8, body, '\n');
    while (lines.next()) |raw| {
        const line = std.mem.trim(u8, raw, " \t\r");
        if (line.len == 0 or line[0] == '#' or line[0] == ';') continue;
        const eq = std.mem.indexOfScalar(u8, line, '=') orelse continue;
        if (!std.mem.eql(u8, std.mem.trim(u8, line[0..eq], " \t"), key)) continue;
        const v = std.mem.trim(u8, line[eq + 1 ..], " \t");
        return if (v.len == 0) null else v;
    }
    return null;
}

/// The file the variable names, else ~/`home_path`; empty when it cannot be read.
fn readFile(gpa: Allocator, env: Env, variable: [:0]const u8, home_path: []const u8) Allocator.Error![]u8 {
    var path_buf: [std.c.PATH_MAX]u8 = undefined;
    const path = if (get(env, variable)) |p|
        std.fmt.bufPrintZ(&path_buf, "{s}", .{p}) catch return &.{}
    else if (get(env, "HOME")) |home|
        std.fmt.bufPrintZ(&path_buf, "{s}/{s}", .{ home, home_path }) catch return &.{}
    else
        return &.{};
    const fd = std.c.open(path, .{ .ACCMODE = .RDONLY, .CLOEXEC = true });
    if (fd < 0) return &.{};
    defer _ = std.c.close(fd);
    var out: std.ArrayList(u8) = .empty;
    errdefer out.deinit(gpa);
    var buf: [4096]u8 = undefined;
    while (true) {
        const n = std.c.read(fd, &buf, buf.len);
        if (n < 0) {
            out.deinit(gpa);
            return &.{};
        }
        if (n == 0) break;
        if (out.items.len + @as(usize, @intCast(n)) > max_file) {
            out.deinit(gpa);
            return &.{};
        }
        try out.appendSlice(gpa, buf[0..@intCast(n)]);
    }
    return out.toOwnedSlice(gpa);
}

fn get(env: Env, name: [:0]const u8) ?[]const u8 {
    const v = env(name) orelse return null;
    return if (v.len == 0) null else v;
}

const testing = std.testing;

test "profile files: a section's keys, the config file's profile prefix, comments and blanks" {
    const credentials =
        \\# comment
        \\[default]
        \\aws_access_key_id = AKIDDEFAULT
        \\aws_secret_access_key=secretdefault
        \\
        \\[work]
        \\aws_access_key_id = AKIDWORK
        \\; aws_secret_access_key = commented
        \\aws_secret_access_key = secretwork
        \\aws_session_token = tok
    ;
    const work = section(credentials, "work", false).?;
    try testing.expectEqualStrings("AKIDWORK", value(work, "aws_access_key_id").?);
    try testing.expectEqualStrings("secretwork", value(work, "aws_secret_access_key").?);
    try testing.expectEqualStrings("tok", value(work, "aws_session_token").?);
    const default = section(credentials, "default", false).?;
    try testing.expectEqualStrings("secretdefault", value(default, "aws_secret_access_key").?);
    try testing.expectEqual(null, value(default, "aws_session_token")); // (not the next section's)
    try testing.expectEqual(null, section(credentials, "missing", false));

    const config =
        \\[default]
        \\region = us-east-1
        \\[profile work]
        \\region = eu-west-3
        \\[work]
        \\region = wrong
    ;
    try testing.expectEqualStrings("eu-west-3", value(section(config, "work", true).?, "region").?);
    try testing.expectEqualStrings("us-east-1", value(section(config, "default", true).?, "region").?);
}

test "profile files: AWS_PROFILE's keys from the credentials file, its region from the config file" {
    var tmp = testing.tmpDir(.{});
    defer tmp.cleanup();
    try tmp.dir.writeFile(testing.io, .{ .sub_path = "credentials", .data = "[work]\naws_access_key_id = AKIDWORK\naws_secret_access_key = s\n" });
    try tmp.dir.writeFile(testing.io, .{ .sub_path = "config", .data = "[profile work]\nregion = eu-west-3\n[profile keys]\naws_access_key_id = AKIDCFG\naws_secret_access_key = c\n" });
    var dir_buf: [std.c.PATH_MAX]u8 = undefined;
    const dir_len = try tmp.dir.realPath(testing.io, &dir_buf);
    const dir = dir_buf[0..dir_len];
    const paths = struct {
        var credentials: [std.c.PATH_MAX]u8 = undefined;
        var config: [std.c.PATH_MAX]u8 = undefined;
        var creds_len: usize = 0;
        var config_len: usize = 0;
        var profile: []const u8 = "work";
        fn lookup(name: [:0]const u8) ?[]const u8 {
            if (std.mem.eql(u8, name, "AWS_SHARED_CREDENTIALS_FILE")) return credentials[0..creds_len];
            if (std.mem.eql(u8, name, "AWS_CONFIG_FILE")) return config[0..config_len];
            if (std.mem.eql(u8, name, "AWS_PROFILE")) return profile;
            return null;
        }
    };
    paths.creds_len = (try std.fmt.bufPrint(&paths.credentials, "{s}/credentials", .{dir})).len;
    paths.config_len = (try std.fmt.bufPrint(&paths.config, "{s}/config", .{dir})).len;
    var p = try load(testing.allocator, paths.lookup);
    defer p.deinit(testing.allocator);
    try testing.expectEqualStrings("AKIDWORK", p.credentials.?.access_key_id);
    try testing.expectEqual(null, p.credentials.?.session_token);
    try testing.expectEqualStrings("eu-west-3", p.region.?);
    // Keys only in the config file's profile.
    paths.profile = "keys";
    var k = try load(testing.allocator, paths.lookup);
    defer k.deinit(testing.allocator);
    try testing.expectEqualStrings("AKIDCFG", k.credentials.?.access_key_id);
    try testing.expectEqual(null, k.region);
    // A profile in neither file; a file that is not there.
    paths.profile = "none";
    var none = try load(testing.allocator, paths.lookup);
    defer none.deinit(testing.allocator);
    try testing.expectEqual(null, none.credentials);
    paths.creds_len = (try std.fmt.bufPrint(&paths.credentials, "{s}/nowhere", .{dir})).len;
    paths.profile = "work";
    var missing = try load(testing.allocator, paths.lookup);
    defer missing.deinit(testing.allocator);
    try testing.expectEqual(null, missing.credentials);
    try testing.expectEqualStrings("eu-west-3", missing.region.?);
}
