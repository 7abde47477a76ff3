//! The small directory the native `read` tool gets as its root while fuzzing: files of each
//! kind its answers differ on (lines, an empty file, more lines than the default limit, a line
//! over the byte cap, bytes that are not UTF-8, a subfolder, symlinks out of the root and to
//! themselves, a FIFO, whose reading would wait for a writer: a hang the fuzzer reports).
const std = @import("std");

/// Fills `root` (created if missing; existing files are rewritten, so it is the same every run).
pub fn prepare(root: []const u8) !void {
    var buf: [std.c.PATH_MAX]u8 = undefined;
    try mkdir(try path(&buf, root, ""));
    try mkdir(try path(&buf, root, "sub"));
    try write(try path(&buf, root, "a.txt"), "one\ntwo\nthree\n");
    try write(try path(&buf, root, "empty.txt"), "");
    try write(try path(&buf, root, "sub/b.txt"), "inner\n");
    try write(try path(&buf, root, "bad.bin"), "ok\n\xff\xfe\xc0\x80\n");
    var long: [3000 * 6]u8 = undefined;
    for (0..3000) |i| _ = std.fmt.bufPrint(long[i * 6 ..][0..6], "{d:0>5}\n", .{i}) catch unreachable;
    try write(try path(&buf, root, "long.txt"), &long);
    const wide: [100 * 1024]u8 = @splat('w');
    try write(try path(&buf, root, "wide.txt"), &wide);
    try symlink("/etc", try path(&buf, root, "out"));
    try symlink("loop", try path(&buf, root, "loop"));
    const fifo = try path(&buf, root, "fifo");
    if (mkfifo(fifo, 0o644) != 0 and std.c._errno().* != @intFromEnum(std.c.E.EXIST)) return error.CannotPrepareRoot;
}

extern "c" fn mkfifo(path: [*:0]const u8, mode: std.c.mode_t) c_int;

fn path(buf: *[std.c.PATH_MAX]u8, root: []const u8, name: []const u8) ![:0]const u8 {
    return std.fmt.bufPrintZ(buf, "{s}/{s}", .{ root, name });
}

fn mkdir(p: [:0]const u8) !void {
    if (std.c.mkdir(p, 0o755) != 0 and std.c._errno().* != @intFromEnum(std.c.E.EXIST)) return error.CannotPrepareRoot;
}

fn write(p: [:0]const u8, bytes: []const u8) !void {
    const fd = std.c.open(p, .{ .ACCMODE = .WRONLY, .CREAT = true, .TRUNC = true, .CLOEXEC = true }, @as(std.c.mode_t, 0o644));
    if (fd < 0) return error.CannotPrepareRoot;
    defer _ = std.c.close(fd);
    if (std.c.write(fd, bytes.ptr, bytes.len) != @as(isize, @intCast(bytes.len))) return error.CannotPrepareRoot;
}

fn symlink(target: [:0]const u8, p: [:0]const u8) !void {
    _ = std.c.unlink(p);
    if (std.c.symlink(target, p) != 0) return error.CannotPrepareRoot;
}
