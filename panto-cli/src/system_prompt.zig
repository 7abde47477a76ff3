//! The default system prompt, sent when neither --system nor the config file's "system" gives
//! one: where the agent works (the working directory, the OS, the date) and the tools it is
//! offered, with how to use them. The project's AGENTS.md files are added after it, as after a
//! given one. /session shows the prompt sent.
const std = @import("std");

pub const Place = struct {
    cwd: []const u8,
    /// uname's sysname, release and machine: "Linux 6.8.0 x86_64".
    os: []const u8,
    /// Seconds since the epoch (UTC).
    now_s: i64,
};

/// How to use the tools panto bundles; a tool of an extension's is named, its description
/// (sent with it) says the rest.
const guides = [_]struct { []const u8, []const u8 }{
    .{ "read", "read a file before you change or talk about it; read a large one a part at a time (offset, limit)" },
    .{ "edit", "change part of a file by replacing one exact, unique text with another; read the file first" },
    .{ "write", "create a file, or replace the whole of a small one" },
    .{ "bash", "run commands (build, test, search with grep or find, git); a long output keeps its end" },
};

/// The prompt for `tools` (the names offered, in order), in `arena`.
pub fn build(arena: std.mem.Allocator, place: Place, tools: []const []const u8) std.mem.Allocator.Error![]const u8 {
    var out: std.Io.Writer.Allocating = .init(arena);
    const w = &out.writer;
    write(w, place, tools) catch return error.OutOfMemory;
    return out.written();
}

fn write(w: *std.Io.Writer, place: Place, tools: []const []const u8) std.Io.Writer.Error!void {
    try w.writeAll("You are panto, a coding agent working in a terminal on the user's machine. " ++
        "Do what the user asks with the tools below, then say briefly what you did. " ++
        "Be concise; do not invent file contents or command output: look.\n\n");
    try w.print("Working directory: {s}\nOS: {s}\nDate: ", .{ place.cwd, place.os });
    try date(w, place.now_s);
    try w.writeAll("\n\n");
    if (tools.len == 0) {
        return w.writeAll("No tools are offered in this run: answer from the conversation alone, and say " ++
            "what the user could run or check.");
    }
    try w.writeAll("Tools (paths are relative to the working directory; a path outside it asks the user first):\n");
    for (tools) |name| {
        try w.print("- {s}", .{name});
        for (guides) |g| if (std.mem.eql(u8, g[0], name)) try w.print(": {s}", .{g[1]});
        try w.writeAll("\n");
    }
    try w.writeAll("Call tools that do not depend on each other in one message: they run together. " ++
        "A tool's error result says what went wrong; fix the call rather than repeat it.");
}

/// YYYY-MM-DD (UTC).
fn date(w: *std.Io.Writer, now_s: i64) std.Io.Writer.Error!void {
    const secs: std.time.epoch.EpochSeconds = .{ .secs = @intCast(@max(now_s, 0)) };
    const yd = secs.getEpochDay().calculateYearDay();
    const md = yd.calculateMonthDay();
    try w.print("{d}-{d:0>2}-{d:0>2} (UTC)", .{ yd.year, @intFromEnum(md.month), md.day_index + 1 });
}

/// "Linux 6.8.0-45-generic x86_64", from uname.
pub fn osName(arena: std.mem.Allocator) std.mem.Allocator.Error![]const u8 {
    const u = std.posix.uname();
    return std.fmt.allocPrint(arena, "{s} {s} {s}", .{
        std.mem.sliceTo(&u.sysname, 0), std.mem.sliceTo(&u.release, 0), std.mem.sliceTo(&u.machine, 0),
    });
}

test "the place, the date, each tool offered with how to use it" {
    var arena: std.heap.ArenaAllocator = .init(std.testing.allocator);
    defer arena.deinit();
    const text = try build(arena.allocator(), .{ .cwd = "/home/me/repo", .os = "Linux 6.8 x86_64", .now_s = 1_796_515_200 }, &.{ "read", "bash", "dice" });
    try std.testing.expect(std.mem.indexOf(u8, text, "Working directory: /home/me/repo\nOS: Linux 6.8 x86_64\nDate: 2026-12-06 (UTC)\n") != null);
    try std.testing.expect(std.mem.indexOf(u8, text, "- read: read a file before") != null);
    try std.testing.expect(std.mem.indexOf(u8, text, "- bash: run commands") != null);
    try std.testing.expect(std.mem.indexOf(u8, text, "- dice\n") != null);
    try std.testing.expect(std.mem.indexOf(u8, text, "- write") == null);
}

test "no tools: the prompt says so" {
    var arena: std.heap.ArenaAllocator = .init(std.testing.allocator);
    defer arena.deinit();
    const text = try build(arena.allocator(), .{ .cwd = "/", .os = "Linux", .now_s = 0 }, &.{});
    try std.testing.expect(std.mem.indexOf(u8, text, "Date: 1970-01-01 (UTC)") != null);
    try std.testing.expect(std.mem.indexOf(u8, text, "No tools are offered") != null);
}
