//! Sessions: a conversation kept on disk as it happens, one append-only JSONL file per session
//! (DIR/ID.jsonl; the format is in entry.zig, the rules in panto.h, "Sessions"). A `Session`
//! is the open, locked file of one agent; `list` reads a directory's sessions.
const std = @import("std");
const Allocator = std.mem.Allocator;
const config_mod = @import("../config.zig");
const Diagnostic = config_mod.Diagnostic;
const conversation = @import("../conversation.zig");
const Conversation = conversation.Conversation;
const utf8 = @import("../utf8.zig");
const clock = @import("clock.zig");
const dir_mod = @import("dir.zig");
const file_mod = @import("file.zig");
pub const entry = @import("entry.zig");
pub const id = @import("id.zig");
pub const replay = @import("replay.zig");
pub const Journal = @import("journal.zig").Journal;
pub const default_dir = @import("dir.zig").default;
pub const list = @import("list.zig").list;
pub const Listed = @import("list.zig").Listed;
pub const writeListJson = @import("list.zig").writeListJson;

/// How a session fails. SessionLocked: another agent (of any process) has it open;
/// NoSuchSession: mode "resume" and no such file; SessionExists: mode "create" (or a fork)
/// and the id is taken; SessionCorrupt: the file is not a session (a line in its middle is
/// not an entry, or its version is unknown); SessionWrite: a file or directory could not be
/// made, opened or written. The detail is in the Diagnostic.
pub const Error = error{ OutOfMemory, SessionWrite, SessionCorrupt, SessionExists, SessionLocked, NoSuchSession };

pub const Session = struct {
    gpa: Allocator,
    journal: Journal,
    /// Owned: the directory, the id, the file's path.
    dir: []u8,
    id: []u8,
    path: [:0]u8,
    /// The session existed (it had a header) when it was opened.
    resumed: bool,
    /// The bytes of a torn last line cut off the file when it was opened.
    torn_bytes: u64,
    /// What the file says of the session, and the configuration it recorded last (to write
    /// only what changes).
    loaded: replay.Loaded,

    /// Opens the session `options` names (making its directory, and a new id when none is
    /// given) and replays it onto `conv`, which must be empty and have no journal. The caller
    /// then sets `conv.journal = &session.journal`.
    pub fn open(gpa: Allocator, options: config_mod.Session, conv: *Conversation, diag: *Diagnostic) Error!*Session {
        const dir = if (options.dir) |d| try gpa.dupe(u8, d) else (try dir_mod.default(gpa)) orelse
            return fail(diag, error.SessionWrite, "no session directory: set session.dir, or HOME", .{});
        errdefer gpa.free(dir);
        dir_mod.makePath(dir) catch return fail(diag, error.SessionWrite, "the session directory {s} could not be made", .{dir});
        var made: [id.made_len]u8 = undefined;
        const name = options.id orelse id.make(&made, clock.nowMs());
        if (!id.isValid(name)) return fail(diag, error.SessionWrite, "session id \"{s}\" is not 1 to 128 of A-Z a-z 0-9 . _ - (not starting with \".\")", .{name});
        const how: file_mod.How = switch (options.mode) {
            .open => .either,
            .@"resume" => .existing,
            .create => .new,
        };
        return openFile(gpa, dir, name, how, options.fsync, null, conv, diag);
    }

    fn openFile(gpa: Allocator, dir: []u8, name: []const u8, how: file_mod.How, sync: bool, parent: ?entry.Parent, conv: *Conversation, diag: *Diagnostic) Error!*Session {
        std.debug.assert(conv.journal == null and conv.messages.items.len == 0);
        const s = try gpa.create(Session);
        errdefer gpa.destroy(s);
        const owned_id = try gpa.dupe(u8, name);
        errdefer gpa.free(owned_id);
        const path = try std.fmt.allocPrintSentinel(gpa, "{s}/{s}.jsonl", .{ dir, name }, 0);
        errdefer gpa.free(path);
        var created = false;
        var f = file_mod.File.open(path, how, &created) catch |err| return switch (err) {
            error.Locked => fail(diag, error.SessionLocked, "session {s} is open in another agent", .{name}),
            error.NotFound => fail(diag, error.NoSuchSession, "no session {s} in {s}", .{ name, dir }),
            error.Exists => fail(diag, error.SessionExists, "session {s} already exists in {s}", .{ name, dir }),
            error.Unwritable => fail(diag, error.SessionWrite, "the session file {s} could not be opened for writing", .{path}),
        };
        f.sync = sync;
        errdefer {
            if (created) _ = std.c.unlink(path);
            f.close();
        }
        var loaded = if (created) replay.Loaded{ .arena = .init(gpa) } else try replay.load(gpa, f.fd, conv, diag);
        errdefer {
            loaded.deinit();
            for (conv.messages.items) |m| conversation.freeMessage(gpa, m);
            conv.messages.clearRetainingCapacity();
        }
        if (loaded.torn_bytes > 0) f.cut(loaded.good_len) catch return fail(diag, error.SessionWrite, "the torn last line of {s} could not be cut off", .{path});
        s.* = .{
            .gpa = gpa,
            .journal = .init(gpa, f),
            .dir = dir,
            .id = owned_id,
            .path = path,
            .resumed = loaded.header != null,
            .torn_bytes = loaded.torn_bytes,
            .loaded = loaded,
        };
        if (loaded.header == null) {
            // New (or only a torn header): the header first.
            errdefer s.journal.line.deinit();
            try s.writeHeader(parent, diag);
        }
        return s;
    }

    fn writeHeader(s: *Session, parent: ?entry.Parent, diag: *Diagnostic) Error!void {
        var created: [24]u8 = undefined;
        var cwd_buf: [std.c.PATH_MAX]u8 = undefined;
        const raw_cwd: []const u8 = if (std.c.getcwd(&cwd_buf, cwd_buf.len)) |p| std.mem.span(@as([*:0]u8, @ptrCast(p))) else "";
        // A directory name need not be UTF-8; the file is (its bytes mended: U+FFFD).
        var mended: std.ArrayList(u8) = .empty;
        defer mended.deinit(s.gpa);
        const cwd = try utf8.valid(s.gpa, &mended, raw_cwd);
        s.journal.line.clearRetainingCapacity();
        entry.header(&s.journal.line.writer, .{ .id = s.id, .created = clock.rfc3339(&created, clock.nowMs()), .cwd = cwd, .parent = parent }) catch return error.OutOfMemory;
        s.journal.raw(s.journal.line.written()) catch |err| return switch (err) {
            error.OutOfMemory => error.OutOfMemory,
            error.SessionWrite => fail(diag, error.SessionWrite, "the session file {s} could not be written", .{s.path}),
        };
    }

    /// Closes the file (letting go of its lock).
    pub fn close(s: *Session) void {
        const gpa = s.gpa;
        s.journal.deinit();
        s.loaded.deinit();
        gpa.free(s.dir);
        gpa.free(s.id);
        gpa.free(s.path);
        gpa.destroy(s);
    }

    /// Records the keys of `config` a session keeps (entry.ConfigRecord) whose values differ
    /// from those it recorded last. Nothing else of the configuration is ever written.
    pub fn recordConfig(s: *Session, config: config_mod.Config) Journal.Error!void {
        const last = s.loaded.config;
        var r: entry.ConfigRecord = .{};
        const provider = @tagName(config.provider);
        const thinking = @tagName(config.thinking);
        if (!eqlOpt(last.provider, provider)) r.provider = provider;
        if (!eqlOpt(last.model, config.model)) r.model = config.model;
        if (last.system == null or !eqlOptOpt(last.system.?, config.system)) r.system = config.system;
        if (!eqlOpt(last.thinking, thinking)) r.thinking = thinking;
        if (last.max_tokens != config.max_tokens) r.max_tokens = config.max_tokens;
        if (r.isEmpty()) return;
        try s.journal.config(r);
        // Remember what is recorded now (copies: the agent's strings may change).
        const arena = s.loaded.arena.allocator();
        const rec = &s.loaded.config;
        if (r.provider) |v| rec.provider = try arena.dupe(u8, v);
        if (r.model) |v| rec.model = try arena.dupe(u8, v);
        if (r.system) |v| rec.system = if (v) |text| try arena.dupe(u8, text) else @as(?[]const u8, null);
        if (r.thinking) |v| rec.thinking = try arena.dupe(u8, v);
        if (r.max_tokens) |v| rec.max_tokens = v;
    }

    /// Names the session (an entry; the last name holds). Its text is the caller's to check.
    pub fn setName(s: *Session, text: []const u8) Journal.Error!void {
        try s.journal.name(text);
        s.loaded.name = try s.loaded.arena.allocator().dupe(u8, text);
    }

    /// Makes a new session in the same directory (`new_id`, or a new id when null) whose
    /// header names this one as its parent at `message_count`, holding `conv`'s first
    /// `message_count` messages (one entry, written at once: on failure no file is left).
    /// The caller checks message_count against the conversation first. This session and its
    /// file are left unchanged.
    pub fn fork(s: *Session, conv: *const Conversation, message_count: usize, new_id: ?[]const u8, diag: *Diagnostic) Error!*Session {
        const gpa = s.gpa;
        var made: [id.made_len]u8 = undefined;
        const name = new_id orelse id.make(&made, clock.nowMs());
        if (!id.isValid(name)) return fail(diag, error.SessionWrite, "session id \"{s}\" is not 1 to 128 of A-Z a-z 0-9 . _ - (not starting with \".\")", .{name});
        const dir = try gpa.dupe(u8, s.dir);
        var empty: Conversation = .init(gpa);
        const child = openFile(gpa, dir, name, .new, s.journal.file.sync, .{ .id = s.id, .message_count = message_count }, &empty, diag) catch |err| {
            gpa.free(dir);
            return err;
        };
        errdefer {
            _ = std.c.unlink(child.path);
            child.close();
        }
        if (message_count > 0) child.journal.replace(conv.messages.items[0..message_count]) catch |err| return switch (err) {
            error.OutOfMemory => error.OutOfMemory,
            error.SessionWrite => fail(diag, error.SessionWrite, "the session file {s} could not be written", .{child.path}),
        };
        return child;
    }
};

fn eqlOpt(a: ?[]const u8, b: []const u8) bool {
    return if (a) |x| std.mem.eql(u8, x, b) else false;
}

fn eqlOptOpt(a: ?[]const u8, b: ?[]const u8) bool {
    if (a == null or b == null) return a == null and b == null;
    return std.mem.eql(u8, a.?, b.?);
}

fn fail(diag: *Diagnostic, err: Error, comptime fmt: []const u8, args: anytype) Error {
    diag.fail(fmt, args) catch {};
    return err;
}
