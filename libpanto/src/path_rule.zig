//! The one rule of where file tools may go: paths inside a root directory (the read tool's
//! root; the working directory, for the `panto` command's read, write and edit), relative to
//! it or absolute; nothing outside it, whether by an absolute path, by `..` or through a
//! symlink. The read tool applies it (with open_beneath's open); a host's own file tools call
//! `check` before they touch a file.
const std = @import("std");
const open_beneath = @import("open_beneath.zig");

pub const Error = error{ OutOfMemory, OutsideRoot, NoRoot };

/// The message of a refused path, naming the rule: `path "../x" is outside the working
/// directory`, with `root_name` the directory's name in words.
pub fn refusal(gpa: std.mem.Allocator, path: []const u8, root_name: []const u8) std.mem.Allocator.Error![]u8 {
    return std.fmt.allocPrint(gpa, "path \"{s}\" is outside the {s}: only paths inside it may be used", .{ path, root_name });
}

/// `path` relative to `root`, checked by the words alone: an absolute path inside the root
/// (its real path, as getcwd gives it) loses the root's part; one elsewhere, a `..` that
/// climbs above the root, an empty path or the root itself are OutsideRoot. The result is
/// `path` or a part of it.
pub fn relative(gpa: std.mem.Allocator, root: []const u8, path: []const u8) Error![]const u8 {
    var rel = path;
    if (path.len > 0 and path[0] == '/') {
        const real = try realRoot(gpa, root);
        defer gpa.free(real);
        rel = insideOf(real, path) orelse return error.OutsideRoot;
    }
    var depth: isize = 0;
    var parts = std.mem.tokenizeScalar(u8, rel, '/');
    while (parts.next()) |part| {
        if (std.mem.eql(u8, part, "..")) depth -= 1 else if (!std.mem.eql(u8, part, ".")) depth += 1;
        if (depth < 0) return error.OutsideRoot;
    }
    if (depth == 0) return error.OutsideRoot;
    return rel;
}

/// The rule for a file that is to be written (and may not exist yet): `relative`, then what
/// exists of the path is resolved beneath the root, symlinks included
/// (open_beneath.checkBeneath). Returns the path relative to the root, a part of `path`.
pub fn check(gpa: std.mem.Allocator, root: []const u8, path: []const u8) Error![]const u8 {
    const rel = try relative(gpa, root, path);
    const root_z = try gpa.dupeZ(u8, root);
    defer gpa.free(root_z);
    const root_fd = std.c.open(root_z, .{ .ACCMODE = .RDONLY, .DIRECTORY = true, .CLOEXEC = true });
    if (root_fd < 0) return error.NoRoot;
    defer _ = std.c.close(root_fd);
    open_beneath.checkBeneath(gpa, root_fd, rel) catch |err| switch (err) {
        error.OutOfMemory, error.OutsideRoot => |e| return e,
        else => {},
    };
    return rel;
}

/// The root's real path (symlinks resolved, absolute).
fn realRoot(gpa: std.mem.Allocator, root: []const u8) Error![]u8 {
    const root_z = try gpa.dupeZ(u8, root);
    defer gpa.free(root_z);
    var buf: [std.c.PATH_MAX]u8 = undefined;
    const real = std.c.realpath(root_z, &buf) orelse return error.NoRoot;
    return gpa.dupe(u8, std.mem.sliceTo(real, 0));
}

/// The part of the absolute `path` below `root` ("." for the root itself), or null.
fn insideOf(root: []const u8, path: []const u8) ?[]const u8 {
    const r = std.mem.trimEnd(u8, root, "/");
    if (!std.mem.startsWith(u8, path, r)) return null;
    const rest = path[r.len..];
    if (rest.len == 0) return ".";
    if (rest[0] != '/') return null; // /root2 is not inside /root
    const below = std.mem.trimStart(u8, rest, "/");
    return if (below.len == 0) "." else below;
}

test "relative: paths inside the root, relative or absolute, are kept; the rest is outside" {
    const gpa = std.testing.allocator;
    var tmp = std.testing.tmpDir(.{});
    defer tmp.cleanup();
    var buf: [std.c.PATH_MAX]u8 = undefined;
    const root_rel = try std.fmt.bufPrint(&buf, ".zig-cache/tmp/{s}", .{tmp.sub_path});
    const real = try realRoot(gpa, root_rel);
    defer gpa.free(real);
    const inside = try std.fmt.allocPrint(gpa, "{s}/sub/a.txt", .{real});
    defer gpa.free(inside);
    try std.testing.expectEqualStrings("a.txt", try relative(gpa, root_rel, "a.txt"));
    try std.testing.expectEqualStrings("sub/../a.txt", try relative(gpa, root_rel, "sub/../a.txt"));
    try std.testing.expectEqualStrings("sub/a.txt", try relative(gpa, root_rel, inside));
    const sibling = try std.fmt.allocPrint(gpa, "{s}x/a.txt", .{real});
    defer gpa.free(sibling);
    for ([_][]const u8{ "../x", "sub/../../x", "", ".", "/etc/passwd", real, sibling }) |path| {
        try std.testing.expectError(error.OutsideRoot, relative(gpa, root_rel, path));
    }
}

test "check: a path to write is refused when what exists of it leads out through a symlink" {
    const gpa = std.testing.allocator;
    var tmp = std.testing.tmpDir(.{});
    defer tmp.cleanup();
    const top = tmp.dir.handle;
    if (std.c.mkdirat(top, "root", 0o755) != 0 or std.c.mkdirat(top, "root/sub", 0o755) != 0) return error.Setup;
    const links = [_]struct { [:0]const u8, [:0]const u8 }{
        .{ "..", "root/out_dir" },
        .{ "../new.txt", "root/out_file" },
        .{ "/tmp", "root/absolute" },
        .{ "sub", "root/to_sub" },
        .{ "sub/later.txt", "root/dangling_inside" },
        .{ "..", "root/sub/up" },
    };
    for (links) |l| if (std.c.symlinkat(l[0], top, l[1]) != 0) return error.Setup;
    var buf: [std.c.PATH_MAX]u8 = undefined;
    const root = try std.fmt.bufPrint(&buf, ".zig-cache/tmp/{s}/root", .{tmp.sub_path});
    for ([_][]const u8{ "new.txt", "sub/new.txt", "a/b/c.txt", "to_sub/x.txt", "dangling_inside", "sub/up/x.txt", "a/../b.txt" }) |path| {
        _ = check(gpa, root, path) catch |err| {
            std.debug.print("{s}\n", .{path});
            return err;
        };
    }
    for ([_][]const u8{ "out_dir/x.txt", "out_file", "absolute/x.txt", "../x", "sub/up/../x", "sub/up/missing/../../x" }) |path| {
        std.testing.expectError(error.OutsideRoot, check(gpa, root, path)) catch |err| {
            std.debug.print("{s}\n", .{path});
            return err;
        };
    }
}
