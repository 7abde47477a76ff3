//! /tree: the fork tree a session belongs to. Every session made by /fork or /new names its
//! parent in its header (the core's `parent`); the tree is drawn from the root those links
//! lead up to, a row per session (id, last change, message count, name, first prompt), the
//! children oldest first, the current session marked. In interactive mode the rows are a
//! picker (tui/session_picker.zig): Enter on a row resumes that session.
const std = @import("std");
const panto = @import("panto");
const session_list = @import("session_list.zig");
const Row = @import("tui/session_picker.zig").Row;

const Listed = panto.session.Listed;
const Writer = std.Io.Writer;

/// Writes the tree holding `current` (an id of `sessions`; one not listed is a tree of one
/// row, its id alone).
pub fn write(gpa: std.mem.Allocator, out: *Writer, sessions: []const Listed, current: []const u8) !void {
    var arena: std.heap.ArenaAllocator = .init(gpa);
    defer arena.deinit();
    const tree = try rows(arena.allocator(), sessions, current);
    for (tree.rows) |r| try out.print("{s}\n", .{r.text});
}

/// The tree's rows, a session each, from the root down; `current` is the index of the
/// current session's row (the /tree navigator selects it first).
pub const Tree = struct { rows: []const Row, current: usize };

/// The tree holding `current`, as rows (their text in `arena`).
pub fn rows(arena: std.mem.Allocator, sessions: []const Listed, current: []const u8) error{OutOfMemory}!Tree {
    var list: std.ArrayList(Row) = .empty;
    // The root: parents followed up while they are listed (a loop is cut where it closes).
    var root = find(sessions, current) orelse {
        try list.append(arena, .{ .id = current, .text = try std.fmt.allocPrint(arena, "{s}  (this session)", .{current}) });
        return .{ .rows = list.items, .current = 0 };
    };
    var steps: usize = 0;
    while (root.parent) |p| : (steps += 1) {
        if (steps > sessions.len) break;
        root = find(sessions, p.id) orelse break;
    }
    var prefix: std.ArrayList(u8) = .empty;
    try node(arena, &list, sessions, root, current, &prefix, "", 0);
    var at: usize = 0;
    for (list.items, 0..) |r, i| if (std.mem.eql(u8, r.id, current)) {
        at = i;
    };
    return .{ .rows = list.items, .current = at };
}

fn find(sessions: []const Listed, id: []const u8) ?*const Listed {
    for (sessions) |*s| if (std.mem.eql(u8, s.id, id)) return s;
    return null;
}

/// One row, then its children under it ("├─ ", "└─ "; "│  " or "   " before their rows).
fn node(arena: std.mem.Allocator, list: *std.ArrayList(Row), sessions: []const Listed, s: *const Listed, current: []const u8, prefix: *std.ArrayList(u8), branch: []const u8, depth: usize) error{OutOfMemory}!void {
    var text: Writer.Allocating = .init(arena);
    rowText(&text.writer, s, current, prefix.items, branch) catch return error.OutOfMemory;
    try list.append(arena, .{ .id = s.id, .text = text.written() });
    if (depth > sessions.len) return; // (a parent loop: drawn once)

    var children: std.ArrayList(*const Listed) = .empty;
    for (sessions) |*c| if (c.parent) |p| if (std.mem.eql(u8, p.id, s.id) and c != s) try children.append(arena, c);
    std.mem.sort(*const Listed, children.items, {}, olderFirst);
    const kept = prefix.items.len;
    defer prefix.shrinkRetainingCapacity(kept);
    if (depth > 0) try prefix.appendSlice(arena, if (std.mem.eql(u8, branch, "└─ ")) "   " else "│  ");
    for (children.items, 0..) |c, i| {
        const last = i + 1 == children.items.len;
        try node(arena, list, sessions, c, current, prefix, if (last) "└─ " else "├─ ", depth + 1);
    }
}

fn rowText(out: *Writer, s: *const Listed, current: []const u8, prefix: []const u8, branch: []const u8) Writer.Error!void {
    try out.print("{s}{s}{s}  ", .{ prefix, branch, s.id });
    try session_list.writeMinutes(out, s.updated);
    try out.print("  {d} message{s}", .{ s.message_count, if (s.message_count == 1) "" else "s" });
    if (s.parent) |p| if (p.message_count != 0) try out.print(" (from {d})", .{p.message_count});
    try out.writeAll("  ");
    if (s.name) |n| try out.print("[{s}] ", .{n});
    try session_list.writePrompt(out, s.first_user_text);
    if (std.mem.eql(u8, s.id, current)) try out.writeAll("  ← this session");
}

fn olderFirst(_: void, a: *const Listed, b: *const Listed) bool {
    return std.mem.order(u8, a.created, b.created) == .lt;
}

fn listed(id: []const u8, parent: ?[]const u8, created: []const u8, text: []const u8) Listed {
    return .{
        .id = id,
        .path = "",
        .created = created,
        .updated = "2026-12-06T10:00:00.000Z",
        .message_count = 2,
        .first_user_text = text,
        .cwd = "/p",
        .parent = if (parent) |p| .{ .id = p, .message_count = 2 } else null,
        .updated_ns = 0,
    };
}

test "the tree from the root, children oldest first, the current session marked" {
    const sessions = [_]Listed{
        listed("c", "a", "2026-12-06T09:03:00.000Z", "third"),
        listed("b", "a", "2026-12-06T09:02:00.000Z", "second"),
        listed("d", "b", "2026-12-06T09:04:00.000Z", "fourth"),
        listed("a", null, "2026-12-06T09:01:00.000Z", "first"),
        listed("x", null, "2026-12-06T09:05:00.000Z", "another tree"),
    };
    var out: Writer.Allocating = .init(std.testing.allocator);
    defer out.deinit();
    try write(std.testing.allocator, &out.writer, &sessions, "d");
    try std.testing.expectEqualStrings(
        \\a  2026-12-06 10:00  2 messages  first
        \\├─ b  2026-12-06 10:00  2 messages (from 2)  second
        \\│  └─ d  2026-12-06 10:00  2 messages (from 2)  fourth  ← this session
        \\└─ c  2026-12-06 10:00  2 messages (from 2)  third
        \\
    , out.written());
    var arena: std.heap.ArenaAllocator = .init(std.testing.allocator);
    defer arena.deinit();
    const tree = try rows(arena.allocator(), &sessions, "d");
    try std.testing.expectEqual(@as(usize, 2), tree.current);
    try std.testing.expectEqualStrings("d", tree.rows[tree.current].id);
}

test "a parent no longer listed: the tree starts at the oldest one that is; a loop ends" {
    var sessions = [_]Listed{
        listed("b", "gone", "2026-12-06T09:02:00.000Z", "second"),
        listed("c", "b", "2026-12-06T09:03:00.000Z", "third"),
    };
    var out: Writer.Allocating = .init(std.testing.allocator);
    defer out.deinit();
    try write(std.testing.allocator, &out.writer, &sessions, "b");
    try std.testing.expect(std.mem.startsWith(u8, out.written(), "b  "));
    try std.testing.expect(std.mem.indexOf(u8, out.written(), "└─ c") != null);
    // b and c each other's parent: drawn, and the drawing ends.
    sessions[0].parent = .{ .id = "c", .message_count = 1 };
    out.clearRetainingCapacity();
    try write(std.testing.allocator, &out.writer, &sessions, "c");
    try std.testing.expect(out.written().len > 0);
}
