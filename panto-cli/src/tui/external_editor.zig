//! Ctrl-G: the prompt's text in the user's editor ($VISUAL, else $EDITOR, else vi), taken back
//! when it exits. The text goes through a private file ($TMPDIR/panto-prompt-XXXXXX.md, mode
//! 0600, removed after); the terminal is given back as it was while the editor runs.
const std = @import("std");
const linux = std.os.linux;
const terminal = @import("terminal.zig");

extern "c" fn mkostemps(template: [*:0]u8, suffix_len: c_int, flags: c_int) c_int;

pub const Outcome = union(enum) {
    /// The file's text once the editor exited (owned), its last newlines dropped.
    edited: []u8,
    /// The editor failed (exit status, signal) or could not start: the text stays as it was.
    failed: []const u8,
};

/// Runs the editor on `text`, the terminal out of raw mode meanwhile (`raw` entered again after).
pub fn edit(gpa: std.mem.Allocator, io: std.Io, raw: *terminal.Raw, text: []const u8) std.mem.Allocator.Error!Outcome {
    const dir = if (std.c.getenv("TMPDIR")) |d| std.mem.span(d) else "";
    const path = try std.fmt.allocPrintSentinel(gpa, "{s}/panto-prompt-XXXXXX.md", .{if (dir.len > 0) dir else "/tmp"}, 0);
    defer gpa.free(path);
    const fd = mkostemps(path.ptr, 3, @bitCast(linux.O{ .CLOEXEC = true }));
    if (fd < 0) return .{ .failed = "the file for the editor could not be made" };
    defer _ = linux.unlink(path.ptr);
    {
        defer _ = linux.close(fd);
        var rest = text;
        while (rest.len > 0) {
            const rc = linux.write(fd, rest.ptr, rest.len);
            switch (linux.errno(rc)) {
                .SUCCESS => rest = rest[rc..],
                .INTR => {},
                else => return .{ .failed = "the file for the editor could not be written" },
            }
        }
    }
    raw.restore();
    defer raw.* = terminal.Raw.enter(raw.fd) catch raw.*;
    // The shell splits an EDITOR with arguments ("code --wait") as the user's shell would.
    var child = std.process.spawn(io, .{
        .argv = &.{ "/bin/sh", "-c", "${VISUAL:-${EDITOR:-vi}} \"$1\"", "sh", path },
    }) catch return .{ .failed = "the editor could not be started" };
    const term = child.wait(io) catch return .{ .failed = "the editor could not be waited for" };
    switch (term) {
        .exited => |status| if (status != 0) return .{ .failed = "the editor exited with an error: the text is as it was" },
        else => return .{ .failed = "the editor was killed: the text is as it was" },
    }
    const edited = std.Io.Dir.cwd().readFileAlloc(io, path, gpa, .limited(64 << 20)) catch
        return .{ .failed = "the editor's file could not be read back" };
    defer gpa.free(edited);
    // An editor ends its file with a newline, which the prompt does not want sent.
    return .{ .edited = try gpa.dupe(u8, std.mem.trimEnd(u8, edited, "\r\n")) };
}
