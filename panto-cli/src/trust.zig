//! Trust: what a project folder brings with it (the Lua files of ./.panto/extensions/, which
//! run as code, and the project's AGENTS.md files, which instruct the model) is loaded only
//! once the user has trusted the folder: cloning a repository and running `panto` in it must
//! not run the repository's code. docs/cli.md, "Trust", is the manual.
//!
//! The project is the nearest folder from the working directory upward that holds `.git` or
//! `.panto` ($HOME only when it is the working directory: a dotfiles repository in $HOME does
//! not make every folder under it one project); with neither, the working directory. The
//! trusted folders are remembered by real path, one a line, in $XDG_STATE_HOME/panto/trusted
//! (else ~/.local/state/panto/trusted), mode 0600.
const std = @import("std");
const c = std.c;
const project_context = @import("project_context.zig");

pub const Project = struct {
    /// The project's folder, its real path.
    root: []const u8,
    /// The .lua files of ./.panto/extensions/ (empty when extension folders are off).
    extensions: []const []const u8,
    /// The AGENTS.md and CLAUDE.md files inside the project, between the working directory and
    /// the root.
    context_files: []const []const u8,
    /// ./.panto/config.json, whose `permissions` may allow calls unasked (settings.zig).
    settings: ?[]const u8 = null,

    /// Nothing to trust: no question, no refusal.
    pub fn bringsNothing(p: Project) bool {
        return p.extensions.len == 0 and p.context_files.len == 0 and p.settings == null;
    }
};

/// The working directory's project and what trusting it would load.
pub fn find(arena: std.mem.Allocator, io: std.Io, cwd: []const u8, home: ?[]const u8, with_extensions: bool) error{OutOfMemory}!Project {
    const home_dir = if (home) |h| std.mem.trimEnd(u8, h, "/") else "";
    var root: []const u8 = cwd;
    var dir: []const u8 = cwd;
    while (true) {
        if (try holds(arena, io, dir, ".git") or try holds(arena, io, dir, ".panto")) {
            root = dir;
            break;
        }
        const up = std.fs.path.dirname(dir) orelse break;
        if (std.mem.eql(u8, up, dir) or std.mem.eql(u8, up, home_dir)) break;
        dir = up;
    }

    var context: std.ArrayList([]const u8) = .empty;
    dir = cwd;
    while (true) {
        for (project_context.file_names) |name| if (try holds(arena, io, dir, name))
            try context.append(arena, try std.fs.path.join(arena, &.{ dir, name }));
        if (std.mem.eql(u8, dir, root)) break;
        dir = std.fs.path.dirname(dir) orelse break;
    }

    var extensions: std.ArrayList([]const u8) = .empty;
    if (with_extensions) {
        const ext_dir = try std.fs.path.join(arena, &.{ cwd, ".panto", "extensions" });
        if (std.Io.Dir.cwd().openDir(io, ext_dir, .{ .iterate = true })) |d| {
            var opened = d;
            defer opened.close(io);
            var it = opened.iterate();
            while (it.next(io) catch null) |entry| {
                if (entry.kind == .directory or !std.mem.endsWith(u8, entry.name, ".lua")) continue;
                try extensions.append(arena, try std.fs.path.join(arena, &.{ ext_dir, entry.name }));
            }
        } else |_| {}
        std.mem.sort([]const u8, extensions.items, {}, lessThan);
    }
    const settings: ?[]const u8 = if (try holds(arena, io, cwd, ".panto/config.json")) try std.fs.path.join(arena, &.{ cwd, ".panto", "config.json" }) else null;
    const real = std.Io.Dir.cwd().realPathFileAlloc(io, root, arena) catch null;
    return .{ .root = if (real) |r| r else root, .extensions = extensions.items, .context_files = context.items, .settings = settings };
}

fn holds(arena: std.mem.Allocator, io: std.Io, dir: []const u8, name: []const u8) error{OutOfMemory}!bool {
    const path = try std.fs.path.join(arena, &.{ dir, name });
    std.Io.Dir.cwd().access(io, path, .{}) catch return false;
    return true;
}

fn lessThan(_: void, a: []const u8, b: []const u8) bool {
    return std.mem.lessThan(u8, a, b);
}

/// $XDG_STATE_HOME/panto/trusted (an absolute one), else ~/.local/state/panto/trusted; null
/// without a home.
pub fn listPath(arena: std.mem.Allocator, xdg_state_home: ?[]const u8, home: ?[]const u8) error{OutOfMemory}!?[:0]const u8 {
    if (xdg_state_home) |x| if (x.len > 0 and x[0] == '/')
        return try std.fmt.allocPrintSentinel(arena, "{s}/panto/trusted", .{std.mem.trimEnd(u8, x, "/")}, 0);
    const h = home orelse return null;
    if (h.len == 0) return null;
    return try std.fmt.allocPrintSentinel(arena, "{s}/.local/state/panto/trusted", .{std.mem.trimEnd(u8, h, "/")}, 0);
}

/// `root` is in the list of trusted folders.
pub fn isTrusted(arena: std.mem.Allocator, io: std.Io, list_path: ?[:0]const u8, root: []const u8) bool {
    const path = list_path orelse return false;
    const text = std.Io.Dir.cwd().readFileAlloc(io, path, arena, .limited(16 << 20)) catch return false;
    var lines = std.mem.splitScalar(u8, text, '\n');
    while (lines.next()) |line| if (std.mem.eql(u8, line, root)) return true;
    return false;
}

pub const RememberError = error{ TrustWrite, OutOfMemory };

/// Adds `root` to the list of trusted folders (the file made mode 0600).
pub fn remember(arena: std.mem.Allocator, io: std.Io, list_path: ?[:0]const u8, root: []const u8) RememberError!void {
    const path = list_path orelse return error.TrustWrite;
    // A path with a newline cannot be one line of the list.
    if (std.mem.indexOfScalar(u8, root, '\n') != null) return error.TrustWrite;
    if (isTrusted(arena, io, path, root)) return;
    if (std.fs.path.dirname(path)) |dir| std.Io.Dir.cwd().createDirPath(io, dir) catch return error.TrustWrite;
    const fd = c.open(path, .{ .ACCMODE = .WRONLY, .CREAT = true, .APPEND = true, .CLOEXEC = true }, @as(c.mode_t, 0o600));
    if (fd < 0) return error.TrustWrite;
    defer _ = c.close(fd);
    const line = try std.mem.concat(arena, u8, &.{ root, "\n" });
    var done: usize = 0;
    while (done < line.len) {
        const n = c.write(fd, line[done..].ptr, line.len - done);
        if (n <= 0) return error.TrustWrite;
        done += @intCast(n);
    }
}

/// What trusting `p` would load, one item a line, for the question and the refusal.
pub fn describe(w: *std.Io.Writer, p: Project) std.Io.Writer.Error!void {
    for (p.extensions) |f| try w.print("  {s}  (a Lua extension: runs as code, as you)\n", .{f});
    for (p.context_files) |f| try w.print("  {s}  (added to the system prompt)\n", .{f});
    if (p.settings) |f| try w.print("  {s}  (its permissions: tool calls it allows run without asking)\n", .{f});
}

test "find: the nearest folder holding .git or .panto, else the working directory" {
    const io = std.testing.io;
    var tmp = std.testing.tmpDir(.{});
    defer tmp.cleanup();
    var arena: std.heap.ArenaAllocator = .init(std.testing.allocator);
    defer arena.deinit();
    const a = arena.allocator();
    try tmp.dir.createDirPath(io, "home/repo/.git");
    try tmp.dir.createDirPath(io, "home/repo/sub/.panto/extensions");
    try tmp.dir.createDirPath(io, "home/plain/deep");
    try tmp.dir.writeFile(io, .{ .sub_path = "home/repo/AGENTS.md", .data = "x" });
    try tmp.dir.writeFile(io, .{ .sub_path = "home/AGENTS.md", .data = "x" });
    try tmp.dir.writeFile(io, .{ .sub_path = "home/repo/sub/.panto/extensions/a.lua", .data = "" });
    const base = try tmp.dir.realPathFileAlloc(io, ".", a);
    const home = try std.fs.path.join(a, &.{ base, "home" });

    const sub = try find(a, io, try std.fs.path.join(a, &.{ home, "repo/sub" }), home, true);
    try std.testing.expectEqualStrings(try std.fs.path.join(a, &.{ home, "repo/sub" }), sub.root);
    try std.testing.expectEqual(@as(usize, 1), sub.extensions.len);
    try std.testing.expectEqual(@as(usize, 0), sub.context_files.len);

    try tmp.dir.deleteTree(io, "home/repo/sub/.panto");
    const up = try find(a, io, try std.fs.path.join(a, &.{ home, "repo/sub" }), home, true);
    try std.testing.expectEqualStrings(try std.fs.path.join(a, &.{ home, "repo" }), up.root);
    // The repository's AGENTS.md, not the one in $HOME above it.
    try std.testing.expectEqual(@as(usize, 1), up.context_files.len);
    try std.testing.expect(up.bringsNothing() == false);

    const plain = try find(a, io, try std.fs.path.join(a, &.{ home, "plain/deep" }), home, true);
    try std.testing.expectEqualStrings(try std.fs.path.join(a, &.{ home, "plain/deep" }), plain.root);
    try std.testing.expect(plain.bringsNothing());
}

test "remember, then isTrusted" {
    const io = std.testing.io;
    var tmp = std.testing.tmpDir(.{});
    defer tmp.cleanup();
    var arena: std.heap.ArenaAllocator = .init(std.testing.allocator);
    defer arena.deinit();
    const a = arena.allocator();
    const base = try tmp.dir.realPathFileAlloc(io, ".", a);
    const list = try listPath(a, base, null);
    try std.testing.expect(!isTrusted(a, io, list, "/p/q"));
    try remember(a, io, list, "/p/q");
    try remember(a, io, list, "/p/q");
    try std.testing.expect(isTrusted(a, io, list, "/p/q"));
    try std.testing.expect(!isTrusted(a, io, list, "/p"));
    try std.testing.expectError(error.TrustWrite, remember(a, io, list, "/a\nb"));
    const text = try std.Io.Dir.cwd().readFileAlloc(io, list.?, a, .limited(1024));
    try std.testing.expectEqualStrings("/p/q\n", text);
}
