//! Project context: the user's global context file (the config folder's AGENTS.md, always
//! loaded: it is the user's own), then the CLAUDE.md and AGENTS.md files from the working
//! directory upward (to $HOME when the directory is under it, else to /), outermost first, as
//! one section of the system prompt with a heading naming each file. In one folder CLAUDE.md
//! goes first and AGENTS.md after it: the later text wins a conflict, as a deeper folder's
//! does. The files inside a project folder not trusted (trust.zig) are left out.
const std = @import("std");

pub const file_name = "AGENTS.md";
/// The names read in each folder, in the order they are added (the last wins a conflict).
pub const file_names = [_][]const u8{ "CLAUDE.md", file_name };
/// A larger file is cut here (with a note saying so): the context is for instructions, not data.
pub const max_file_bytes = 256 * 1024;

/// The section to add to the system prompt, "" when no file was found. A file that cannot
/// be read is named in `warn` and left out, as are those in `untrusted` or beneath it.
/// `global` is the user's global context file (null: none).
pub fn collect(arena: std.mem.Allocator, io: std.Io, cwd: []const u8, home: ?[]const u8, untrusted: ?[]const u8, global: ?[]const u8, warn: *std.Io.Writer) error{OutOfMemory}![]const u8 {
    var dirs: std.ArrayList([]const u8) = .empty;
    var dir: []const u8 = cwd;
    const stop: []const u8 = if (home) |h| (if (isUnder(cwd, h)) std.mem.trimEnd(u8, h, "/") else "/") else "/";
    while (true) {
        try dirs.append(arena, dir);
        if (std.mem.eql(u8, dir, stop) or std.mem.eql(u8, dir, "/")) break;
        dir = std.fs.path.dirname(dir) orelse break;
    }
    var out: std.Io.Writer.Allocating = .init(arena);
    if (global) |path| try add(arena, io, &out, path, warn);
    var i = dirs.items.len;
    while (i > 0) {
        i -= 1;
        if (untrusted) |u| if (isUnder(dirs.items[i], u)) continue;
        for (file_names) |name| try add(arena, io, &out, try std.fs.path.join(arena, &.{ dirs.items[i], name }), warn);
    }
    return out.written();
}

/// The file at `path`, under its heading, when it exists.
fn add(arena: std.mem.Allocator, io: std.Io, out: *std.Io.Writer.Allocating, path: []const u8, warn: *std.Io.Writer) error{OutOfMemory}!void {
    const text = std.Io.Dir.cwd().readFileAlloc(io, path, arena, .limited(max_file_bytes + 1)) catch |err| switch (err) {
        error.FileNotFound, error.IsDir, error.NotDir => return,
        error.StreamTooLong => try readPrefix(arena, io, path),
        error.OutOfMemory => return error.OutOfMemory,
        else => {
            warn.print("panto: {s} left out of the project context: {s}\n", .{ path, @errorName(err) }) catch {};
            return;
        },
    };
    const w = &out.writer;
    if (out.written().len == 0) w.writeAll("# Project context\n\nInstructions from context files (AGENTS.md, CLAUDE.md), outermost first.\n") catch return error.OutOfMemory;
    w.print("\n## {s}\n\n{s}", .{ path, std.mem.trimEnd(u8, text[0..@min(text.len, max_file_bytes)], "\n") }) catch return error.OutOfMemory;
    if (text.len > max_file_bytes) w.print("\n[... cut at {d} bytes]", .{max_file_bytes}) catch return error.OutOfMemory;
    w.writeAll("\n") catch return error.OutOfMemory;
}

fn readPrefix(arena: std.mem.Allocator, io: std.Io, path: []const u8) error{OutOfMemory}![]const u8 {
    const buf = try arena.alloc(u8, max_file_bytes + 1);
    const got = std.Io.Dir.cwd().readFile(io, path, buf) catch return "";
    return got;
}

/// `dir` is `home` or beneath it.
fn isUnder(dir: []const u8, home: []const u8) bool {
    const h = std.mem.trimEnd(u8, home, "/");
    if (h.len == 0) return false;
    if (!std.mem.startsWith(u8, dir, h)) return false;
    return dir.len == h.len or dir[h.len] == '/';
}

test "isUnder" {
    try std.testing.expect(isUnder("/home/u/p", "/home/u"));
    try std.testing.expect(isUnder("/home/u", "/home/u/"));
    try std.testing.expect(!isUnder("/home/uv", "/home/u"));
    try std.testing.expect(!isUnder("/tmp", "/home/u"));
}
