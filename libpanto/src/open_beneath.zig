//! Opens a regular file beneath a directory, for the read tool: nothing outside the directory
//! is reached, even through a symlink swapped in between a check and the open, and opening
//! never blocks (a FIFO would wait for a writer forever; cancel could not end it).
//!
//! Symlinks inside the directory are followed while they stay beneath it: a relative target
//! that resolves inside is read; an absolute target, or one leading out, is refused as
//! outside (even an absolute one that points back inside). Only regular files are opened:
//! directories, FIFOs, sockets and devices are refused, and none is opened in a way that
//! blocks (O_NONBLOCK; a regular file ignores it when read).
//!
//! Linux 5.6 and later resolve the whole path in the kernel, with openat2's RESOLVE_BENEATH.
//! Elsewhere (or where a sandbox forbids openat2) the path is walked one component at a time
//! with openat and O_NOFOLLOW from directory handles, and each symlink is read and resolved
//! here, under the same rules.
const std = @import("std");
const builtin = @import("builtin");
const c = std.c;
const linux = std.os.linux;

pub const Error = error{ OutOfMemory, OutsideRoot, NotFound, IsDirectory, NotRegularFile, Unreadable };

/// How a path is resolved; tests try both.
pub const Strategy = enum { kernel, walk };

/// Symlinks followed in one path before giving up, as the kernel does (ELOOP).
const max_links = 40;

/// Set when openat2 turned out to be missing or forbidden: walk from then on.
var kernel_missing: std.atomic.Value(bool) = .init(builtin.os.tag != .linux);

/// Opens `path` (relative, '/'-separated) beneath the directory `dir` for reading, if it is
/// a regular file. The caller closes the returned descriptor.
pub fn openRegular(gpa: std.mem.Allocator, dir: c.fd_t, path: []const u8) Error!c.fd_t {
    if (!kernel_missing.load(.monotonic)) {
        if (openWith(.kernel, gpa, dir, path)) |fd| return fd else |err| switch (err) {
            error.Unsupported => kernel_missing.store(true, .monotonic),
            else => |e| return e,
        }
    }
    return openWith(.walk, gpa, dir, path) catch |err| switch (err) {
        error.Unsupported => error.Unreadable, // the walk needs nothing special: not reached
        else => |e| e,
    };
}

/// `path` opened for reading from `dir` (absolute, or relative to it) with no rule of where
/// it leads: symlinks followed, `..` allowed (a read tool not confined to its root). Still a
/// regular file only.
pub fn openRegularAnywhere(dir: c.fd_t, path: []const u8) Error!c.fd_t {
    var path_z: [c.PATH_MAX]u8 = undefined;
    if (path.len == 0 or path.len >= path_z.len or std.mem.indexOfScalar(u8, path, 0) != null) return error.NotFound;
    @memcpy(path_z[0..path.len], path);
    path_z[path.len] = 0;
    const fd = c.openat(dir, path_z[0..path.len :0], read_flags);
    if (fd < 0) return switch (c.errno(fd)) {
        .NOENT, .NOTDIR => error.NotFound,
        else => error.Unreadable,
    };
    errdefer _ = c.close(fd);
    switch (try fileType(fd)) {
        c.S.IFREG => return fd,
        c.S.IFDIR => return error.IsDirectory,
        else => return error.NotRegularFile,
    }
}

pub fn openWith(strategy: Strategy, gpa: std.mem.Allocator, dir: c.fd_t, path: []const u8) (Error || error{Unsupported})!c.fd_t {
    var path_z: [c.PATH_MAX]u8 = undefined;
    if (path.len >= path_z.len or std.mem.indexOfScalar(u8, path, 0) != null) return error.NotFound;
    @memcpy(path_z[0..path.len], path);
    path_z[path.len] = 0;
    const fd = switch (strategy) {
        .kernel => try openat2Beneath(dir, path_z[0..path.len :0]),
        .walk => try walk(gpa, dir, path, .open),
    };
    errdefer _ = c.close(fd);
    switch (try fileType(fd)) {
        c.S.IFREG => return fd,
        c.S.IFDIR => return error.IsDirectory,
        else => return error.NotRegularFile,
    }
}

/// The flags of the final open: read only, never block, never take a terminal.
const read_flags: c.O = .{ .ACCMODE = .RDONLY, .NONBLOCK = true, .NOCTTY = true, .CLOEXEC = true };

fn openat2Beneath(dir: c.fd_t, path: [:0]const u8) (Error || error{Unsupported})!c.fd_t {
    if (builtin.os.tag != .linux) return error.Unsupported;
    const OpenHow = extern struct { flags: u64, mode: u64, resolve: u64 };
    const resolve_no_magiclinks = 0x02;
    const resolve_beneath = 0x08;
    const how: OpenHow = .{
        .flags = @as(u32, @bitCast(read_flags)),
        .mode = 0,
        .resolve = resolve_beneath | resolve_no_magiclinks,
    };
    while (true) {
        const rc = linux.syscall4(.openat2, @as(usize, @bitCast(@as(isize, dir))), @intFromPtr(path.ptr), @intFromPtr(&how), @sizeOf(OpenHow));
        return switch (linux.errno(rc)) {
            .SUCCESS => @intCast(rc),
            .INTR => continue,
            // Missing (before 5.6), or refused by a seccomp sandbox.
            .NOSYS, .PERM => error.Unsupported,
            .XDEV => error.OutsideRoot,
            else => |e| mapOpenError(e),
        };
    }
}

/// Whether `path` stays beneath `dir` by the rules of openRegular, for a file that is to be
/// written: what exists of it is resolved (its symlinks followed beneath `dir`), and what does
/// not exist yet, which a write creates as plain folders and a file, may not climb out with
/// `..` either. A path that names something other than a regular file is not refused here
/// (the write that follows says what it is). Checked, not opened: a symlink swapped in after
/// the check is not seen.
pub fn checkBeneath(gpa: std.mem.Allocator, dir: c.fd_t, path: []const u8) Error!void {
    const fd = walk(gpa, dir, path, .probe) catch |err| switch (err) {
        error.OutsideRoot, error.OutOfMemory => |e| return e,
        else => return, // IsDirectory, NotFound past what exists (checked), Unreadable: not outside
    };
    if (fd >= 0) _ = c.close(fd);
}

/// What a walk does with the path's last component: open it to read, or only see where it is.
const WalkMode = enum { open, probe };

/// Resolves `path` one component at a time from directory handles, never letting the kernel
/// follow a symlink: each one is read and its target resolved here, beneath `root`.
fn walk(gpa: std.mem.Allocator, root: c.fd_t, path: []const u8, mode: WalkMode) Error!c.fd_t {
    // Directories entered, innermost last; `root` itself is not in it (nor closed).
    var dirs: [max_components]c.fd_t = undefined;
    var depth: usize = 0;
    defer for (dirs[0..depth]) |d| {
        _ = c.close(d);
    };
    // Components still to resolve, next last; they point into `path` and into symlink
    // targets, which `targets` holds.
    var pending: [max_components][]const u8 = undefined;
    var pending_len: usize = 0;
    var targets: std.heap.ArenaAllocator = .init(gpa);
    defer targets.deinit();
    var links: usize = 0;
    try pushComponents(&pending, &pending_len, path);
    if (pending_len == 0) return error.IsDirectory; // the root itself

    while (pending_len > 0) {
        pending_len -= 1;
        const name = pending[pending_len];
        const last = pending_len == 0;
        if (std.mem.eql(u8, name, ".")) {
            if (last) return error.IsDirectory;
            continue;
        }
        if (std.mem.eql(u8, name, "..")) {
            if (depth == 0) return error.OutsideRoot;
            depth -= 1;
            _ = c.close(dirs[depth]);
            if (last) return error.IsDirectory;
            continue;
        }
        const here = if (depth == 0) root else dirs[depth - 1];
        var name_z: [256]u8 = undefined; // NAME_MAX + 1
        if (name.len >= name_z.len) return error.NotFound;
        @memcpy(name_z[0..name.len], name);
        name_z[name.len] = 0;
        const z = name_z[0..name.len :0];

        var flags: c.O = if (last) read_flags else .{ .ACCMODE = .RDONLY, .DIRECTORY = true, .CLOEXEC = true };
        if (last and mode == .probe) flags = .{ .ACCMODE = .RDONLY, .PATH = true, .CLOEXEC = true };
        flags.NOFOLLOW = true;
        // O_PATH with O_NOFOLLOW opens a symlink itself instead of refusing it: read it first.
        if (last and mode == .probe and isSymlink(here, z)) {
            links += 1;
            if (links > max_links) return error.Unreadable;
            try resolveLink(&targets, here, z, &pending, &pending_len);
            continue;
        }
        const fd = c.openat(here, z, flags);
        if (fd >= 0) {
            if (last) return fd;
            if (depth == dirs.len) {
                _ = c.close(fd);
                return error.NotFound;
            }
            dirs[depth] = fd;
            depth += 1;
            continue;
        }
        const open_errno = c.errno(fd);
        if (open_errno == .INTR) {
            pending_len += 1; // try the same component again
            continue;
        }
        // O_NOFOLLOW refuses a symlink with ELOOP (ENOTDIR where a directory was wanted, on
        // some systems): read it and resolve its target in its place.
        if ((open_errno == .LOOP or open_errno == .NOTDIR) and isSymlink(here, z)) {
            links += 1;
            if (links > max_links) return error.Unreadable;
            try resolveLink(&targets, here, z, &pending, &pending_len);
            continue;
        }
        // Probing a path to write: what is missing will be made as plain folders; it must not
        // climb out from where the existing part ended.
        if (mode == .probe and open_errno == .NOENT) {
            var d: usize = depth;
            for (0..pending_len + 1) |k| {
                const part = if (k == 0) name else pending[pending_len - k];
                if (std.mem.eql(u8, part, "..")) {
                    if (d == 0) return error.OutsideRoot;
                    d -= 1;
                } else if (!std.mem.eql(u8, part, ".")) d += 1;
            }
            return error.NotFound;
        }
        return mapOpenError(open_errno);
    }
    return error.NotFound; // not reached: the last component returns
}

fn isSymlink(dir: c.fd_t, name: [*:0]const u8) bool {
    var buf: [1]u8 = undefined;
    return c.readlinkat(dir, name, &buf, buf.len) >= 0;
}

/// Queues the target of the symlink `name` (in `dir`) in its place; an absolute target is
/// outside.
fn resolveLink(targets: *std.heap.ArenaAllocator, dir: c.fd_t, name: [*:0]const u8, pending: *[max_components][]const u8, pending_len: *usize) Error!void {
    const target = try targets.allocator().alloc(u8, c.PATH_MAX);
    const n = c.readlinkat(dir, name, target.ptr, target.len);
    if (n < 0) return error.Unreadable;
    const text = target[0..@intCast(n)];
    if (text.len == 0 or text.len == target.len) return error.NotFound;
    if (text[0] == '/') return error.OutsideRoot;
    try pushComponents(pending, pending_len, text);
}

/// Deepest path the walk follows (components pending, or directories entered).
const max_components = 256;

/// Queues the components of `path` in front of the pending ones (pending is a stack).
fn pushComponents(pending: *[max_components][]const u8, len: *usize, path: []const u8) Error!void {
    var count: usize = 0;
    var it = std.mem.tokenizeScalar(u8, path, '/');
    while (it.next()) |_| count += 1;
    if (len.* + count > pending.len) return error.NotFound;
    var i = len.* + count;
    it.reset();
    while (it.next()) |part| {
        i -= 1;
        pending[i] = part;
    }
    len.* += count;
}

fn mapOpenError(e: anytype) Error {
    return switch (e) {
        .NOENT, .NOTDIR, .NAMETOOLONG => error.NotFound,
        // A socket (or a device without a driver) cannot be opened as a file.
        .NXIO, .NODEV, .OPNOTSUPP => error.NotRegularFile,
        .ISDIR => error.IsDirectory,
        else => error.Unreadable,
    };
}

/// The file's type bits (S.IFMT) of an open descriptor.
fn fileType(fd: c.fd_t) Error!u32 {
    if (builtin.os.tag == .linux) {
        var st: linux.Statx = undefined;
        // The syscall, not libc's statx (glibc 2.28+): the library is built for glibc 2.17.
        if (linux.errno(linux.statx(fd, "", linux.AT.EMPTY_PATH, .{ .TYPE = true }, &st)) != .SUCCESS) return error.Unreadable;
        return st.mode & c.S.IFMT;
    } else {
        var st: c.Stat = undefined;
        if (c.fstat(fd, &st) != 0) return error.Unreadable;
        return @intCast(st.mode & c.S.IFMT);
    }
}

/// A directory to open things beneath: `root/` holds files, links and special files, next to
/// `outside.txt`, which nothing beneath `root` may reach.
const Fixture = struct {
    tmp: std.testing.TmpDir,
    root: c.fd_t,

    fn init() !Fixture {
        var f: Fixture = .{ .tmp = std.testing.tmpDir(.{}), .root = -1 };
        errdefer f.tmp.cleanup();
        const top = f.tmp.dir.handle;
        try writeAt(top, "outside.txt", "secret");
        if (c.mkdirat(top, "root", 0o755) != 0) return error.Setup;
        f.root = c.openat(top, "root", .{ .ACCMODE = .RDONLY, .DIRECTORY = true, .CLOEXEC = true });
        if (f.root < 0) return error.Setup;
        const r = f.root;
        try writeAt(r, "a.txt", "a");
        if (c.mkdirat(r, "sub", 0o755) != 0) return error.Setup;
        try writeAt(r, "sub/b.txt", "b");
        const links = [_]struct { [:0]const u8, [:0]const u8 }{
            .{ "a.txt", "to_a" },
            .{ "../a.txt", "sub/up_to_a" },
            .{ "sub", "to_sub" },
            .{ "to_sub/b.txt", "to_b_through_link" },
            .{ "../outside.txt", "escape" },
            .{ "..", "escape_dir" },
            .{ "sub/../../outside.txt", "escape_late" },
            .{ "/etc/hostname", "absolute" },
            .{ "loop2", "loop1" },
            .{ "loop1", "loop2" },
            .{ "missing.txt", "dangling" },
        };
        for (links) |l| if (c.symlinkat(l[0], r, l[1]) != 0) return error.Setup;
        if (builtin.os.tag == .linux) {
            if (linux.errno(linux.mknodat(r, "fifo", linux.S.IFIFO | 0o644, 0)) != .SUCCESS) return error.Setup;
        }
        return f;
    }

    fn deinit(f: *Fixture) void {
        _ = c.close(f.root);
        f.tmp.cleanup();
    }
};

fn writeAt(dir: c.fd_t, path: [:0]const u8, bytes: []const u8) !void {
    const fd = c.openat(dir, path, .{ .ACCMODE = .WRONLY, .CREAT = true, .TRUNC = true, .CLOEXEC = true }, @as(c.mode_t, 0o644));
    if (fd < 0) return error.Setup;
    defer _ = c.close(fd);
    if (c.write(fd, bytes.ptr, bytes.len) != @as(isize, @intCast(bytes.len))) return error.Setup;
}

fn expectContent(strategy: Strategy, root: c.fd_t, path: []const u8, want: []const u8) !void {
    const fd = try openWith(strategy, std.testing.allocator, root, path);
    defer _ = c.close(fd);
    var buf: [16]u8 = undefined;
    const n = c.read(fd, &buf, buf.len);
    try std.testing.expectEqualStrings(want, buf[0..@intCast(n)]);
}

test "regular files beneath the root open, through links that stay inside; the rest is refused" {
    var f = try Fixture.init();
    defer f.deinit();
    for ([_]Strategy{ .kernel, .walk }) |strategy| {
        if (openWith(strategy, std.testing.allocator, f.root, "a.txt")) |fd| {
            _ = c.close(fd);
        } else |err| if (err == error.Unsupported) continue; // no openat2 in this kernel

        try expectContent(strategy, f.root, "a.txt", "a");
        try expectContent(strategy, f.root, "sub/b.txt", "b");
        try expectContent(strategy, f.root, "./sub//b.txt", "b");
        try expectContent(strategy, f.root, "sub/../a.txt", "a");
        try expectContent(strategy, f.root, "to_a", "a");
        try expectContent(strategy, f.root, "sub/up_to_a", "a");
        try expectContent(strategy, f.root, "to_sub/b.txt", "b");
        try expectContent(strategy, f.root, "to_b_through_link", "b");

        const refused = [_]struct { []const u8, anyerror }{
            .{ "escape", error.OutsideRoot },
            .{ "escape_dir/outside.txt", error.OutsideRoot },
            .{ "escape_late", error.OutsideRoot },
            .{ "../outside.txt", error.OutsideRoot },
            .{ "absolute", error.OutsideRoot },
            .{ "sub", error.IsDirectory },
            .{ "to_sub", error.IsDirectory },
            .{ "missing.txt", error.NotFound },
            .{ "dangling", error.NotFound },
            .{ "a.txt/x", error.NotFound },
            .{ "loop1", error.Unreadable },
        };
        for (refused) |case| {
            std.testing.expectError(case[1], openWith(strategy, std.testing.allocator, f.root, case[0])) catch |err| {
                std.debug.print("{s}: {s}\n", .{ @tagName(strategy), case[0] });
                return err;
            };
        }
    }
}

test "a FIFO or a socket is refused at once, without waiting for a writer" {
    if (builtin.os.tag != .linux) return error.SkipZigTest;
    var f = try Fixture.init();
    defer f.deinit();
    // A socket file: bound through a path relative to the fixture (short enough for sun_path).
    const sock = c.socket(c.AF.UNIX, c.SOCK.STREAM, 0);
    try std.testing.expect(sock >= 0);
    defer _ = c.close(sock);
    var addr: c.sockaddr.un = .{ .path = undefined };
    @memset(&addr.path, 0);
    const sock_path = try std.fmt.bufPrint(&addr.path, ".zig-cache/tmp/{s}/root/sock", .{f.tmp.sub_path});
    _ = sock_path;
    try std.testing.expectEqual(@as(c_int, 0), c.bind(sock, @ptrCast(&addr), @sizeOf(c.sockaddr.un)));
    for ([_]Strategy{ .kernel, .walk }) |strategy| {
        const fifo = openWith(strategy, std.testing.allocator, f.root, "fifo");
        if (fifo == error.Unsupported) continue;
        try std.testing.expectError(error.NotRegularFile, fifo);
        try std.testing.expectError(error.NotRegularFile, openWith(strategy, std.testing.allocator, f.root, "sock"));
    }
}
