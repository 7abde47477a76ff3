//! Tab after `@` in the prompt: the path typed so far completed from the files there (the
//! one name that fits, with "/" for a folder or a space for a file; several: what they
//! share). Hidden names only when the typed part starts with ".".
const std = @import("std");

pub const Completion = struct {
    /// What to insert at the cursor (owned by the caller's allocator).
    insert: []u8,
};

/// null: nothing fits (or the folder cannot be read).
pub fn complete(gpa: std.mem.Allocator, io: std.Io, typed: []const u8) std.mem.Allocator.Error!?Completion {
    const slash = if (std.mem.lastIndexOfScalar(u8, typed, '/')) |i| i + 1 else 0;
    const dir_path = if (slash == 0) "." else typed[0..slash];
    const base = typed[slash..];
    var dir = std.Io.Dir.cwd().openDir(io, dir_path, .{ .iterate = true }) catch return null;
    defer dir.close(io);
    var common: ?std.ArrayList(u8) = null;
    defer if (common) |*c| c.deinit(gpa);
    var count: usize = 0;
    var is_dir = false;
    var it = dir.iterate();
    while (it.next(io) catch null) |entry| {
        if (!std.mem.startsWith(u8, entry.name, base)) continue;
        if (entry.name.len > 0 and entry.name[0] == '.' and !std.mem.startsWith(u8, base, ".")) continue;
        count += 1;
        is_dir = entry.kind == .directory;
        if (common) |*c| {
            c.shrinkRetainingCapacity(std.mem.indexOfDiff(u8, c.items, entry.name) orelse c.items.len);
        } else {
            common = .empty;
            try common.?.appendSlice(gpa, entry.name);
        }
    }
    const shared = (common orelse return null).items;
    var insert: std.ArrayList(u8) = .empty;
    errdefer insert.deinit(gpa);
    try insert.appendSlice(gpa, shared[base.len..]);
    if (count == 1) try insert.append(gpa, if (is_dir) '/' else ' ');
    if (insert.items.len == 0) {
        insert.deinit(gpa);
        return null;
    }
    return .{ .insert = try insert.toOwnedSlice(gpa) };
}

test "one name: completed with a space, a folder with a slash; several: what they share" {
    const io = std.testing.io;
    var tmp = std.testing.tmpDir(.{});
    defer tmp.cleanup();
    try tmp.dir.createDirPath(io, "src");
    try tmp.dir.writeFile(io, .{ .sub_path = "src/main.zig", .data = "" });
    try tmp.dir.writeFile(io, .{ .sub_path = "src/math.zig", .data = "" });
    try tmp.dir.writeFile(io, .{ .sub_path = "notes.txt", .data = "" });
    // The test's folder, by its path from the working directory.
    var buf: [256]u8 = undefined;
    const root = try std.fmt.bufPrint(&buf, ".zig-cache/tmp/{s}/", .{tmp.sub_path});
    const gpa = std.testing.allocator;
    var typed: [300]u8 = undefined;
    const cases = [_]struct { []const u8, ?[]const u8 }{
        .{ "no", "tes.txt " },
        .{ "sr", "c/" },
        .{ "src/m", "a" },
        .{ "src/mai", "n.zig " },
        .{ "zz", null },
    };
    for (cases) |case| {
        const t = try std.fmt.bufPrint(&typed, "{s}{s}", .{ root, case[0] });
        const got = try complete(gpa, io, t);
        defer if (got) |g| gpa.free(g.insert);
        if (case[1]) |want| try std.testing.expectEqualStrings(want, got.?.insert) else try std.testing.expect(got == null);
    }
}
