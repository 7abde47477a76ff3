//! Which session a run keeps its conversation in: a new one (the default), the newest of
//! this directory (--continue), an existing one named by its id or a unique prefix of it
//! (--session ID), a new one under a given id (--new-session ID), or none (--no-session, or
//! the config file's "session": false). The core's session store does the rest.
const std = @import("std");
const panto = @import("panto");
const names = @import("names.zig");

pub const Choice = union(enum) {
    none,
    new,
    /// --session ID: the session of that id, or the one whose id it is a unique prefix of.
    named: []const u8,
    /// --new-session ID: started under that id (refused when it is taken).
    create: []const u8,
    /// --continue: the newest session whose recorded working directory is this one.
    newest,
};

/// Where sessions go ("session" of the config file): null dir is the core's default
/// ($XDG_DATA_HOME/panto/sessions). No fsync by default: a line written survives the
/// command's crash (it is in the kernel's cache) but not the machine's, and the first byte of
/// an answer comes without waiting for the disk (bench/startup.py: some 20 ms saved).
pub const Place = struct { dir: ?[]const u8 = null, fsync: bool = false };

pub const Error = error{ NoSessionToContinue, NoSuchSession, AmbiguousSession, SessionWrite, OutOfMemory };

/// What a run's session is: the agent config's "session" object (null: none), and for a
/// session resumed, the configuration it recorded last (provider, model, thinking: what the
/// run goes on with unless a flag says otherwise).
pub const Resolved = struct {
    value: ?std.json.Value,
    recorded: panto.session.entry.ConfigRecord = .{},
};

/// The session `choice` names. For `newest`, the session directory is listed
/// (error.NoSessionToContinue when nothing was kept in `cwd`); for `named`, it is listed to
/// find the session (by id or a unique prefix of one: error.NoSuchSession, error.AmbiguousSession)
/// and what it recorded.
pub fn resolve(gpa: std.mem.Allocator, arena: std.mem.Allocator, choice: Choice, place: Place, cwd: []const u8, diag: *panto.config.Diagnostic) Error!Resolved {
    var obj: std.json.ObjectMap = .empty;
    if (place.dir) |d| try obj.put(arena, "dir", .{ .string = d });
    try obj.put(arena, "fsync", .{ .bool = place.fsync });
    var recorded: panto.session.entry.ConfigRecord = .{};
    switch (choice) {
        .none => return .{ .value = null },
        .new => try obj.put(arena, "mode", .{ .string = "create" }),
        .named => |given| {
            const found = try match(gpa, arena, given, place, diag);
            if (found) |l| recorded = l.config;
            // An id the core refuses (found is null) goes to it for its words.
            try obj.put(arena, "id", .{ .string = if (found) |l| l.id else given });
            try obj.put(arena, "mode", .{ .string = "resume" });
        },
        .create => |id| {
            try obj.put(arena, "id", .{ .string = id });
            try obj.put(arena, "mode", .{ .string = "create" });
        },
        .newest => {
            const dir = try sessionDir(arena, place, diag);
            const listed = try panto.session.list(gpa, arena, dir, diag);
            const found = newestIn(listed, cwd) orelse {
                diag.fail("no session to continue in {s} (sessions: {s})", .{ cwd, dir }) catch {};
                return error.NoSessionToContinue;
            };
            recorded = found.config;
            try obj.put(arena, "id", .{ .string = found.id });
            try obj.put(arena, "mode", .{ .string = "resume" });
        },
    }
    return .{ .value = .{ .object = obj }, .recorded = recorded };
}

pub fn sessionDir(arena: std.mem.Allocator, place: Place, diag: *panto.config.Diagnostic) Error![]const u8 {
    return place.dir orelse (try panto.session.default_dir(arena)) orelse {
        diag.fail("no session directory: set HOME, or \"session\": {{\"dir\": ...}} in the config file", .{}) catch {};
        return error.SessionWrite;
    };
}

/// The session `given` names: its id, or a unique prefix of one. null for an id the core
/// refuses (its diagnostic says why).
fn match(gpa: std.mem.Allocator, arena: std.mem.Allocator, given: []const u8, place: Place, diag: *panto.config.Diagnostic) Error!?*const panto.session.Listed {
    if (!panto.session.id.isValid(given)) return null;
    const dir = try sessionDir(arena, place, diag);
    const listed = try panto.session.list(gpa, arena, dir, diag);
    var prefixed: std.ArrayList(*const panto.session.Listed) = .empty;
    for (listed) |*l| {
        if (std.mem.eql(u8, l.id, given)) return l;
        if (std.mem.startsWith(u8, l.id, given)) try prefixed.append(arena, l);
    }
    if (prefixed.items.len == 1) return prefixed.items[0];
    if (prefixed.items.len > 1) {
        const ids = try arena.alloc([]const u8, prefixed.items.len);
        for (prefixed.items, ids) |l, *i| i.* = l.id;
        std.mem.sort([]const u8, ids, {}, lessThan);
        diag.fail("session \"{s}\" is ambiguous: {s}", .{ given, try std.mem.join(arena, ", ", ids) }) catch {};
        return error.AmbiguousSession;
    }
    const ids = try arena.alloc([]const u8, listed.len);
    for (listed, ids) |l, *i| i.* = l.id;
    if (names.nearest(given, ids)) |near| {
        diag.fail("no session \"{s}\" in {s} (did you mean \"{s}\"?); --new-session {s} starts one under that id", .{ given, dir, near, given }) catch {};
    } else diag.fail("no session \"{s}\" in {s}; --new-session {s} starts one under that id", .{ given, dir, given }) catch {};
    return error.NoSuchSession;
}

fn lessThan(_: void, a: []const u8, b: []const u8) bool {
    return std.mem.order(u8, a, b) == .lt;
}

/// The first (newest) session of `listed` started in `cwd`.
fn newestIn(listed: []const panto.session.Listed, cwd: []const u8) ?*const panto.session.Listed {
    for (listed) |*l| if (std.mem.eql(u8, l.cwd, cwd)) return l;
    return null;
}

test "newestIn takes the first of the directory" {
    const l = [_]panto.session.Listed{
        .{ .id = "b", .path = "", .created = "", .updated = "", .message_count = 0, .first_user_text = "", .cwd = "/x", .parent = null, .updated_ns = 2 },
        .{ .id = "a", .path = "", .created = "", .updated = "", .message_count = 0, .first_user_text = "", .cwd = "/w", .parent = null, .updated_ns = 1 },
    };
    try std.testing.expectEqualStrings("a", newestIn(&l, "/w").?.id);
    try std.testing.expect(newestIn(&l, "/z") == null);
}
