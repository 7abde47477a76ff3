//! Where sessions are kept: the default directory, and making a directory with its parents.
const std = @import("std");
const Allocator = std.mem.Allocator;

/// $XDG_DATA_HOME/panto/sessions, or ~/.local/share/panto/sessions (XDG base directories:
/// an XDG_DATA_HOME that is empty or relative is ignored). null without a HOME either.
pub fn default(gpa: Allocator) Allocator.Error!?[]u8 {
    if (env("XDG_DATA_HOME")) |data| if (data.len > 0 and data[0] == '/')
        return try std.fmt.allocPrint(gpa, "{s}/panto/sessions", .{std.mem.trimEnd(u8, data, "/")});
    const home = env("HOME") orelse return null;
    if (home.len == 0) return null;
    return try std.fmt.allocPrint(gpa, "{s}/.local/share/panto/sessions", .{std.mem.trimEnd(u8, home, "/")});
}

fn env(name: [*:0]const u8) ?[]const u8 {
    return std.mem.span(std.c.getenv(name) orelse return null);
}

pub const MakeError = error{ Unwritable, NameTooLong };

/// Makes `path` and its missing parents (mode 0700: sessions hold private conversations).
/// An existing directory is fine.
pub fn makePath(path: []const u8) MakeError!void {
    var buf: [std.c.PATH_MAX]u8 = undefined;
    if (path.len == 0) return error.Unwritable;
    if (path.len >= buf.len) return error.NameTooLong;
    @memcpy(buf[0..path.len], path);
    buf[path.len] = 0;
    // Each prefix ending before a '/', then the whole path.
    var i: usize = 1;
    while (i <= path.len) : (i += 1) {
        if (i < path.len and path[i] != '/') continue;
        const saved = buf[i];
        buf[i] = 0;
        defer buf[i] = saved;
        if (std.c.mkdir(@ptrCast(&buf), 0o700) == 0) continue;
        switch (std.c.errno(-1)) {
            .EXIST => {},
            else => return error.Unwritable,
        }
    }
    if (!isDirectory(buf[0..path.len :0])) return error.Unwritable;
}

fn isDirectory(path: [:0]const u8) bool {
    const fd = std.c.open(path, .{ .ACCMODE = .RDONLY, .DIRECTORY = true, .CLOEXEC = true });
    if (fd < 0) return false;
    _ = std.c.close(fd);
    return true;
}

extern "c" fn setenv(name: [*:0]const u8, value: [*:0]const u8, overwrite: c_int) c_int;
extern "c" fn unsetenv(name: [*:0]const u8) c_int;

test "the default directory follows XDG_DATA_HOME, else HOME" {
    const gpa = std.testing.allocator;
    const saved_xdg = if (env("XDG_DATA_HOME")) |v| try gpa.dupeZ(u8, v) else null;
    defer if (saved_xdg) |v| {
        _ = setenv("XDG_DATA_HOME", v, 1);
        gpa.free(v);
    } else {
        _ = unsetenv("XDG_DATA_HOME");
    };
    _ = setenv("XDG_DATA_HOME", "/data/", 1);
    const a = (try default(gpa)).?;
    defer gpa.free(a);
    try std.testing.expectEqualStrings("/data/panto/sessions", a);
    _ = setenv("XDG_DATA_HOME", "relative", 1); // not absolute: ignored
    const b = (try default(gpa)).?;
    defer gpa.free(b);
    try std.testing.expect(std.mem.endsWith(u8, b, "/.local/share/panto/sessions"));
}

test "makePath makes the parents, accepts an existing directory, refuses a file in the way" {
    var tmp = std.testing.tmpDir(.{});
    defer tmp.cleanup();
    var buf: [std.c.PATH_MAX]u8 = undefined;
    const base = try tmpPath(&tmp, &buf);
    var path_buf: [std.c.PATH_MAX]u8 = undefined;
    const deep = try std.fmt.bufPrint(&path_buf, "{s}/a/b/c", .{base});
    try makePath(deep);
    try makePath(deep);
    const file = try std.fmt.bufPrintZ(&path_buf, "{s}/a/file", .{base});
    const fd = std.c.open(file, .{ .ACCMODE = .WRONLY, .CREAT = true }, @as(std.c.mode_t, 0o600));
    try std.testing.expect(fd >= 0);
    _ = std.c.close(fd);
    try std.testing.expectError(error.Unwritable, makePath(file));
    const under_file = try std.fmt.bufPrint(&path_buf, "{s}/a/file/x", .{base});
    try std.testing.expectError(error.Unwritable, makePath(under_file));
}

/// The path of a testing temporary directory (relative to the test's working directory).
pub fn tmpPath(tmp: *std.testing.TmpDir, buf: *[std.c.PATH_MAX]u8) ![]const u8 {
    return std.fmt.bufPrint(buf, ".zig-cache/tmp/{s}", .{tmp.sub_path});
}
