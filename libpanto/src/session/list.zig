//! The sessions of a directory, newest first (panto_session_list).
const std = @import("std");
const Allocator = std.mem.Allocator;
const linux = std.os.linux;
const Conversation = @import("../conversation.zig").Conversation;
const Diagnostic = @import("../config.zig").Diagnostic;
const clock = @import("clock.zig");
const entry = @import("entry.zig");
const id = @import("id.zig");
const replay = @import("replay.zig");

/// One session of a directory. Strings owned by the list's arena.
pub const Listed = struct {
    id: []const u8,
    path: []const u8,
    /// RFC 3339, UTC, milliseconds: from the header, and the file's last change.
    created: []const u8,
    updated: []const u8,
    message_count: usize,
    /// The first text of the first user message (not a compaction summary); "" if none.
    first_user_text: []const u8,
    cwd: []const u8,
    parent: ?entry.Parent,
    updated_ns: i128,
    /// The name its user gave it last (a name entry); null: none.
    name: ?[]const u8 = null,
    /// The configuration the session recorded last (provider, model, thinking, ...): what a
    /// resume may go on with.
    config: entry.ConfigRecord = .{},
};

pub const Error = error{ OutOfMemory, SessionWrite };

/// The sessions in `dir` (files ID.jsonl whose first line is a session header), newest first
/// (by last change, then creation, then id). A missing directory has none; a file that is not a session
/// (or cannot be read) is left out; a session another agent holds is listed as it is on
/// disk. Strings live in `arena`. Replays every session: the counts are those of a resume.
pub fn list(gpa: Allocator, arena: Allocator, dir: []const u8, diag: *Diagnostic) Error![]Listed {
    const dir_z = try arena.dupeZ(u8, dir);
    const d = std.c.opendir(dir_z) orelse switch (std.c.errno(-1)) {
        .NOENT => return &.{},
        else => {
            diag.fail("the session directory {s} could not be read", .{dir}) catch {};
            return error.SessionWrite;
        },
    };
    defer _ = std.c.closedir(d);
    var found: std.ArrayList(Listed) = .empty;
    while (std.c.readdir(d)) |ent| {
        const name = std.mem.sliceTo(@as([*:0]const u8, @ptrCast(&ent.name)), 0);
        if (!std.mem.endsWith(u8, name, ".jsonl")) continue;
        const session_id = name[0 .. name.len - ".jsonl".len];
        if (!id.isValid(session_id)) continue;
        const path = try std.fmt.allocPrintSentinel(arena, "{s}/{s}", .{ dir, name }, 0);
        if (try readOne(gpa, arena, path, session_id)) |l| try found.append(arena, l);
    }
    std.mem.sort(Listed, found.items, {}, newerFirst);
    return found.items;
}

fn newerFirst(_: void, a: Listed, b: Listed) bool {
    if (a.updated_ns != b.updated_ns) return a.updated_ns > b.updated_ns;
    // Last writes within one tick of the file system's clock: the session created later
    // (the header's milliseconds) was most likely written later too. An id says nothing of
    // time (its suffix is random), so it only orders sessions created in the same ms.
    switch (std.mem.order(u8, a.created, b.created)) {
        .gt => return true,
        .lt => return false,
        .eq => return std.mem.order(u8, a.id, b.id) == .gt,
    }
}

fn readOne(gpa: Allocator, arena: Allocator, path: [:0]const u8, session_id: []const u8) Allocator.Error!?Listed {
    const fd = std.c.open(path, .{ .ACCMODE = .RDONLY, .NONBLOCK = true, .CLOEXEC = true });
    if (fd < 0) return null;
    defer _ = std.c.close(fd);
    var st: linux.Statx = undefined;
    if (linux.errno(linux.statx(fd, "", linux.AT.EMPTY_PATH, .{ .TYPE = true, .MTIME = true }, &st)) != .SUCCESS) return null;
    if ((st.mode & linux.S.IFMT) != linux.S.IFREG) return null;
    var conv: Conversation = .init(gpa);
    defer conv.deinit();
    var diag: Diagnostic = .{};
    var loaded = replay.load(gpa, fd, &conv, &diag) catch |err| switch (err) {
        error.OutOfMemory => return error.OutOfMemory,
        error.SessionCorrupt => return null,
    };
    defer loaded.deinit();
    const h = loaded.header orelse return null;
    const updated_ms = st.mtime.sec * 1000 + @divTrunc(@as(i64, st.mtime.nsec), std.time.ns_per_ms);
    var updated_text: [24]u8 = undefined;
    var updated = clock.rfc3339(&updated_text, updated_ms);
    // The file's mtime comes from the kernel's coarse clock and may lag the header's created
    // time by a tick: a session is never listed as updated before it was created. (Both are
    // fixed-width RFC 3339 UTC, so text order is time order.)
    if (std.mem.order(u8, updated, h.created) == .lt) updated = h.created;
    return .{
        .id = try arena.dupe(u8, session_id),
        .path = path,
        .created = try arena.dupe(u8, h.created),
        .updated = try arena.dupe(u8, updated),
        .message_count = conv.messages.items.len,
        .first_user_text = try arena.dupe(u8, firstUserText(&conv) orelse loaded.first_user_text),
        .cwd = try arena.dupe(u8, h.cwd),
        .parent = if (h.parent) |p| .{ .id = try arena.dupe(u8, p.id), .message_count = p.message_count } else null,
        .updated_ns = @as(i128, st.mtime.sec) * std.time.ns_per_s + st.mtime.nsec,
        .config = try dupeConfig(arena, loaded.config),
        .name = if (loaded.name) |n| try arena.dupe(u8, n) else null,
    };
}

fn dupeConfig(arena: Allocator, r: entry.ConfigRecord) Allocator.Error!entry.ConfigRecord {
    return .{
        .provider = if (r.provider) |v| try arena.dupe(u8, v) else null,
        .model = if (r.model) |v| try arena.dupe(u8, v) else null,
        .system = if (r.system) |v| (if (v) |text| try arena.dupe(u8, text) else @as(?[]const u8, null)) else null,
        .thinking = if (r.thinking) |v| try arena.dupe(u8, v) else null,
        .max_tokens = r.max_tokens,
    };
}

/// The first text of the conversation's first user message that is not a compaction's
/// summary: what the session is about now (after edits), as a list shows it. null: none (all
/// of it compacted, or no text), and the list falls back on the first ever written.
fn firstUserText(conv: *const Conversation) ?[]const u8 {
    for (conv.messages.items) |m| {
        if (m.role != .user or m.compaction != null) continue;
        for (m.blocks) |b| if (b.kind == .text) return b.text;
    }
    return null;
}

/// The list as panto.h's JSON array: [{"id", "path", "created", "updated", "message_count",
/// "first_user_text", "cwd", "parent": null | {"id", "message_count"}, "name": null | N}...].
pub fn writeListJson(w: *std.Io.Writer, sessions: []const Listed) std.Io.Writer.Error!void {
    var s: std.json.Stringify = .{ .writer = w };
    try s.beginArray();
    for (sessions) |l| {
        try s.beginObject();
        inline for (.{ "id", "path", "created", "updated" }) |name| {
            try s.objectField(name);
            try s.write(@field(l, name));
        }
        try s.objectField("message_count");
        try s.write(l.message_count);
        try s.objectField("first_user_text");
        try s.write(l.first_user_text);
        try s.objectField("cwd");
        try s.write(l.cwd);
        try s.objectField("parent");
        if (l.parent) |p| {
            try s.beginObject();
            try s.objectField("id");
            try s.write(p.id);
            try s.objectField("message_count");
            try s.write(p.message_count);
            try s.endObject();
        } else try s.write(null);
        try s.objectField("name");
        try s.write(l.name);
        try s.endObject();
    }
    try s.endArray();
}
