//! `panto sessions [--all] [--json]`: the sessions kept, newest first, so that one can be found
//! and resumed by its id (or a prefix of it) with --session. The listing itself is the core's
//! (panto.session.list, the same as the C ABI's); this file only chooses and lays it out.
const std = @import("std");
const panto = @import("panto");
const args_mod = @import("args.zig");
const sessions = @import("sessions.zig");

/// The longest first prompt shown on a line, in codepoints.
const prompt_width = 60;

/// Writes the list to `out`; a note to `note` when there is none. error.SessionWrite (the
/// directory cannot be read) has its words in `diag`.
pub fn run(gpa: std.mem.Allocator, arena: std.mem.Allocator, command: args_mod.SessionsCommand, place: sessions.Place, cwd: []const u8, home: ?[]const u8, out: *std.Io.Writer, note: *std.Io.Writer, diag: *panto.config.Diagnostic) !void {
    const dir = try sessions.sessionDir(arena, place, diag);
    const listed = try panto.session.list(gpa, arena, dir, diag);
    var shown: std.ArrayList(panto.session.Listed) = .empty;
    for (listed) |l| if (command.all or std.mem.eql(u8, l.cwd, cwd)) try shown.append(arena, l);
    if (command.json) {
        try panto.session.writeListJson(out, shown.items);
        try out.writeByte('\n');
        return;
    }
    if (shown.items.len == 0) {
        if (command.all)
            try note.print("panto: no session kept yet (sessions: {s})\n", .{dir})
        else
            try note.print("panto: no session kept for {s}; panto sessions --all lists every folder's\n", .{cwd});
        return;
    }
    var id_width: usize = "ID".len;
    for (shown.items) |l| id_width = @max(id_width, l.id.len);
    try pad(out, "ID", id_width);
    try out.writeAll("  UPDATED (UTC)     MSGS  ");
    if (command.all) try out.writeAll("FOLDER  ");
    try out.writeAll("FIRST PROMPT\n");
    for (shown.items) |l| {
        try pad(out, l.id, id_width);
        try out.writeAll("  ");
        try writeMinutes(out, l.updated);
        try out.print("  {d:>4}  ", .{l.message_count});
        if (command.all) try out.print("{s}  ", .{try homeShort(arena, l.cwd, home)});
        if (l.name) |n| try out.print("[{s}] ", .{n});
        try writePrompt(out, l.first_user_text);
        try out.writeByte('\n');
    }
}

fn pad(out: *std.Io.Writer, text: []const u8, width: usize) !void {
    try out.writeAll(text);
    try out.splatByteAll(' ', width - text.len);
}

/// "2026-12-06T14:35:12.123Z" as "2026-12-06 14:35" (a time not in that form is shown as
/// it is).
pub fn writeMinutes(out: *std.Io.Writer, rfc3339: []const u8) !void {
    if (rfc3339.len < 16 or rfc3339[10] != 'T') return out.writeAll(rfc3339);
    try out.print("{s} {s}", .{ rfc3339[0..10], rfc3339[11..16] });
}

/// The folder with the home directory as "~".
fn homeShort(arena: std.mem.Allocator, path: []const u8, home: ?[]const u8) ![]const u8 {
    const h = home orelse return path;
    if (h.len == 0 or !std.mem.startsWith(u8, path, h)) return path;
    const rest = path[h.len..];
    if (rest.len == 0) return "~";
    if (rest[0] != '/') return path;
    return std.fmt.allocPrint(arena, "~{s}", .{rest});
}

/// The prompt's first line, control characters as spaces, cut at `prompt_width` codepoints
/// with "…" (a line of the list stays one line of the terminal's).
pub fn writePrompt(out: *std.Io.Writer, text: []const u8) !void {
    const line = std.mem.trim(u8, text[0 .. std.mem.indexOfScalar(u8, text, '\n') orelse text.len], " \t\r");
    var it = (std.unicode.Utf8View.init(line) catch return out.writeAll("(not UTF-8)")).iterator();
    var n: usize = 0;
    while (it.nextCodepointSlice()) |cp| : (n += 1) {
        if (n == prompt_width) return out.writeAll("…");
        try out.writeAll(if (cp.len == 1 and (cp[0] < 0x20 or cp[0] == 0x7f)) " " else cp);
    }
    if (n == 0) try out.writeAll("(no prompt)");
}

test "a prompt is one line, cut with an ellipsis" {
    var buf: [512]u8 = undefined;
    var w: std.Io.Writer = .fixed(&buf);
    try writePrompt(&w, "fix the build\nthen the tests");
    try std.testing.expectEqualStrings("fix the build", w.buffered());
    w = .fixed(&buf);
    try writePrompt(&w, "é" ** 61);
    try std.testing.expectEqualStrings("é" ** 60 ++ "…", w.buffered());
    w = .fixed(&buf);
    try writePrompt(&w, "a\tb");
    try std.testing.expectEqualStrings("a b", w.buffered());
}

test "the home folder is ~" {
    var arena: std.heap.ArenaAllocator = .init(std.testing.allocator);
    defer arena.deinit();
    const a = arena.allocator();
    try std.testing.expectEqualStrings("~/src/x", try homeShort(a, "/home/u/src/x", "/home/u"));
    try std.testing.expectEqualStrings("~", try homeShort(a, "/home/u", "/home/u"));
    try std.testing.expectEqualStrings("/home/uv/x", try homeShort(a, "/home/uv/x", "/home/u"));
    try std.testing.expectEqualStrings("/x", try homeShort(a, "/x", null));
    var buf: [32]u8 = undefined;
    var w: std.Io.Writer = .fixed(&buf);
    try writeMinutes(&w, "2026-12-06T14:35:12.123Z");
    try std.testing.expectEqualStrings("2026-12-06 14:35", w.buffered());
}
