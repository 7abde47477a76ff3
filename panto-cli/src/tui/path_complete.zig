//! Tab after `@` in the prompt: the path typed so far completed from the files there (the
//! one name that fits, with "/" for a folder or a space for a file; several: what they
//! share). Hidden names only when the typed part starts with ".". A name with a space is
//! quoted: `@"my file.txt" ` (at_files.zig reads that form on send).
const std = @import("std");

pub const Completion = struct {
    /// What to insert at the cursor (owned by the caller's allocator).
    insert: []u8,
    /// The word must become quoted (a name with a space): a `"` goes right after its `@`.
    open_quote: bool = false,
};

/// The `@` word that ends at the cursor: where its path starts, and whether it is quoted
/// (`@"my fi`, no closing quote yet). null: the cursor is not in such a word.
pub const Word = struct { path_start: usize, quoted: bool };

pub fn wordAt(before: []const u8) ?Word {
    if (std.mem.lastIndexOf(u8, before, "@\"")) |i| {
        const at_start = i == 0 or std.ascii.isWhitespace(before[i - 1]);
        if (at_start and std.mem.indexOfScalarPos(u8, before, i + 2, '"') == null) return .{ .path_start = i + 2, .quoted = true };
    }
    const start = if (std.mem.lastIndexOfAny(u8, before, " \t\n")) |i| i + 1 else 0;
    if (start < before.len and before[start] == '@' and std.mem.indexOfScalarPos(u8, before, start, '"') == null)
        return .{ .path_start = start + 1, .quoted = false };
    return null;
}

/// null: nothing fits (or the folder cannot be read). `quoted`: the word is `@"...` already.
pub fn complete(gpa: std.mem.Allocator, io: std.Io, typed: []const u8, quoted: bool) std.mem.Allocator.Error!?Completion {
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
    const open_quote = !quoted and std.mem.indexOfScalar(u8, insert.items, ' ') != null;
    if (count == 1) {
        if (is_dir) try insert.append(gpa, '/') else {
            if (quoted or open_quote) try insert.append(gpa, '"');
            try insert.append(gpa, ' ');
        }
    }
    if (insert.items.len == 0) {
        insert.deinit(gpa);
        return null;
    }
    return .{ .insert = try insert.toOwnedSlice(gpa), .open_quote = open_quote };
}

test "the @ word at the cursor: plain, quoted, none" {
    try std.testing.expectEqual(Word{ .path_start = 5, .quoted = false }, wordAt("see @src/ma").?);
    try std.testing.expectEqual(Word{ .path_start = 6, .quoted = true }, wordAt("see @\"my fi").?);
    try std.testing.expectEqual(Word{ .path_start = 2, .quoted = true }, wordAt("@\"a b/c d").?);
    try std.testing.expectEqual(@as(?Word, null), wordAt("see @\"my file.txt\" and"));
    try std.testing.expectEqual(@as(?Word, null), wordAt("mail@x"));
    try std.testing.expectEqual(@as(?Word, null), wordAt("plain"));
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
        const got = try complete(gpa, io, t, false);
        defer if (got) |g| gpa.free(g.insert);
        if (case[1]) |want| try std.testing.expectEqualStrings(want, got.?.insert) else try std.testing.expect(got == null);
    }
}
