//! Loading a session: the file is read in chunks and each line is replayed onto a
//! conversation as it comes, its messages parsed straight from the line's text (never a JSON
//! tree of the whole file), so memory stays near the conversation's own size.
//!
//! A last line that does not end in "\n", or does not parse, is torn (a crash mid-write: its
//! write never returned): it is not replayed, and its bytes are counted. Any other line that
//! is not an entry makes the file corrupt.
const std = @import("std");
const Allocator = std.mem.Allocator;
const conversation = @import("../conversation.zig");
const Conversation = conversation.Conversation;
const Message = conversation.Message;
const entry = @import("entry.zig");
const conversation_json = @import("../conversation_json.zig");
const file = @import("file.zig");
const Diagnostic = @import("../config.zig").Diagnostic;
const pending_round = @import("../turn/pending_round.zig");

pub const Error = error{ OutOfMemory, SessionCorrupt };

/// What a file held beside its conversation. Strings live in `arena`.
pub const Loaded = struct {
    arena: std.heap.ArenaAllocator,
    /// null: the file has no header yet (empty, or its first line torn).
    header: ?entry.Header = null,
    /// The length of the whole entries: where a torn line starts.
    good_len: u64 = 0,
    torn_bytes: u64 = 0,
    /// The last value of each configuration key recorded.
    config: entry.ConfigRecord = .{},
    /// The first text of the first user message appended that is not a compaction summary.
    first_user_text: []const u8 = "",
    /// The last name entry's name; null: never named.
    name: ?[]const u8 = null,
    /// The last `pending_round` entry's fields, when no entry changed the messages after it
    /// (turn/pending_round.zig makes the round of it).
    pending_round: ?pending_round.Recorded = null,

    pub fn deinit(l: *Loaded) void {
        l.arena.deinit();
    }
};

const chunk_size = 1 << 20;

/// Replays the file `fd` onto `conv` (which must have no journal: replaying records
/// nothing). On error `conv` may hold part of the file; `diag` says which line failed.
pub fn load(gpa: Allocator, fd: std.c.fd_t, conv: *Conversation, diag: *Diagnostic) Error!Loaded {
    var loaded: Loaded = .{ .arena = .init(gpa) };
    errdefer loaded.deinit();
    var buf: std.ArrayList(u8) = .empty;
    defer buf.deinit(gpa);
    var offset: u64 = 0; // of buf[0] in the file
    var line_number: usize = 0;
    var eof = false;
    var start: usize = 0; // of the next line in buf
    while (true) {
        if (std.mem.indexOfScalarPos(u8, buf.items, start, '\n')) |nl| {
            line_number += 1;
            const line = buf.items[start..nl];
            const line_start = offset + start;
            start = nl + 1;
            const is_last = eof and start == buf.items.len;
            replayLine(gpa, &loaded, conv, line, line_number, diag) catch |err| switch (err) {
                error.OutOfMemory => return error.OutOfMemory,
                // A whole first line that is no header: not a session (never cut).
                error.NotAnEntry => if (line_number > 1 and (is_last or try restIsEmpty(fd, offset + start))) {
                    loaded.torn_bytes = try fileEnd(fd) - line_start;
                    return loaded;
                } else return failLine(diag, line_number),
                error.SessionCorrupt => return error.SessionCorrupt,
            };
            loaded.good_len = offset + start;
            continue;
        }
        if (eof) {
            // What is left has no "\n": a torn last line (or nothing). A torn first line is
            // the start of a header, or the file is not a session.
            const rest = buf.items[start..];
            if (line_number == 0 and rest.len > 0 and !isHeaderStart(rest)) return failLine(diag, 1);
            loaded.torn_bytes = rest.len;
            return loaded;
        }
        // Keep the unfinished line, read more after it.
        const rest = buf.items.len - start;
        std.mem.copyForwards(u8, buf.items[0..rest], buf.items[start..]);
        offset += start;
        buf.shrinkRetainingCapacity(rest);
        start = 0;
        try buf.ensureUnusedCapacity(gpa, chunk_size);
        const room = buf.unusedCapacitySlice();
        const n = file.preadAll(fd, room, offset + rest) catch return failRead(diag);
        buf.items.len += n;
        if (n < room.len) eof = true;
    }
}

/// Whether `text` begins as panto writes a header (or is the beginning of that).
fn isHeaderStart(text: []const u8) bool {
    const start = "{\"type\":\"session\",";
    const n = @min(text.len, start.len);
    return std.mem.eql(u8, text[0..n], start[0..n]);
}

/// Whether nothing follows offset `at` in the file.
fn restIsEmpty(fd: std.c.fd_t, at: u64) Error!bool {
    var one: [1]u8 = undefined;
    return (file.preadAll(fd, &one, at) catch return error.SessionCorrupt) == 0;
}

fn fileEnd(fd: std.c.fd_t) Error!u64 {
    const end = std.c.lseek(fd, 0, std.c.SEEK.END);
    return if (end < 0) error.SessionCorrupt else @intCast(end);
}

fn failLine(diag: *Diagnostic, line_number: usize) error{SessionCorrupt} {
    diag.fail("line {d} is not a session entry", .{line_number}) catch {};
    return error.SessionCorrupt;
}

fn failRead(diag: *Diagnostic) error{SessionCorrupt} {
    diag.fail("the session file could not be read", .{}) catch {};
    return error.SessionCorrupt;
}

const LineError = error{ OutOfMemory, NotAnEntry, SessionCorrupt };

/// The top-level fields of an entry, as raw JSON text.
const Fields = struct {
    type: []const u8 = "",
    raw: [9]?[]const u8 = @splat(null),

    const names = [_][]const u8{ "message", "message_count", "messages", "summary_message", "first_kept", "config", "name", "calls", "results" };

    fn get(f: *const Fields, comptime name: []const u8) ?[]const u8 {
        inline for (names, 0..) |n, i| if (comptime std.mem.eql(u8, n, name)) return f.raw[i];
        @compileError("no field " ++ name);
    }
};

fn replayLine(gpa: Allocator, loaded: *Loaded, conv: *Conversation, line: []const u8, line_number: usize, diag: *Diagnostic) LineError!void {
    // Most lines are messages, as panto writes them: their message is parsed at once. (The
    // scanner below keeps its nesting on the heap: deep nesting costs no stack; the message
    // parser bounds it.)
    const message_start = "{\"type\":\"message\",\"message\":";
    if (line_number > 1 and std.mem.startsWith(u8, line, message_start) and std.mem.endsWith(u8, line, "}")) {
        if (parseMessage(gpa, line[message_start.len .. line.len - 1])) |m| {
            return appendReplayed(gpa, loaded, conv, m);
        } else |err| if (err == error.OutOfMemory) return error.OutOfMemory;
        // (else: another shape of the same entry, or not an entry: the general way says)
    }
    const fields = try scanFields(gpa, line);
    const t = fields.type;
    if (line_number == 1) {
        if (!std.mem.eql(u8, t, "session")) return error.NotAnEntry;
        return readHeader(loaded, line, diag);
    }
    // An entry that changes the messages ends the round a pending_round entry described.
    for ([_][]const u8{ "message", "truncate", "replace", "compaction" }) |changes| {
        if (std.mem.eql(u8, t, changes)) loaded.pending_round = null;
    }
    if (std.mem.eql(u8, t, "message")) {
        const m = try parseMessage(gpa, fields.get("message") orelse return error.NotAnEntry);
        try appendReplayed(gpa, loaded, conv, m);
    } else if (std.mem.eql(u8, t, "truncate")) {
        const k = try count(fields.get("message_count"));
        if (k > conv.messages.items.len) return corrupt(diag, line_number, "truncates to more messages than there are");
        while (conv.messages.items.len > k) conversation.freeMessage(gpa, conv.messages.pop().?);
        conv.stale_usage_before = @min(conv.stale_usage_before, k);
    } else if (std.mem.eql(u8, t, "replace")) {
        var list = try parseMessageArray(gpa, fields.get("messages") orelse return error.NotAnEntry);
        for (list.items) |*m| noteFirstUserText(loaded, m) catch {};
        for (conv.messages.items) |m| conversation.freeMessage(gpa, m);
        conv.messages.deinit(gpa);
        conv.messages = list;
        list = .empty;
        conv.stale_usage_before = 0;
    } else if (std.mem.eql(u8, t, "compaction")) {
        const k = try count(fields.get("first_kept"));
        if (k > conv.messages.items.len) return corrupt(diag, line_number, "keeps messages past the end");
        const summary = try parseMessage(gpa, fields.get("summary_message") orelse return error.NotAnEntry);
        // [summary] + live[k..]
        if (k == 0) {
            conv.messages.insert(gpa, 0, summary) catch {
                conversation.freeMessage(gpa, summary);
                return error.OutOfMemory;
            };
        } else {
            for (conv.messages.items[0..k]) |m| conversation.freeMessage(gpa, m);
            conv.messages.replaceRangeAssumeCapacity(0, k, &.{summary});
        }
        // As Conversation.replacePrefix: the usage kept from before describes the old context.
        conv.stale_usage_before = conv.messages.items.len;
    } else if (std.mem.eql(u8, t, "config")) {
        try readConfig(loaded, fields.get("config") orelse return error.NotAnEntry);
    } else if (std.mem.eql(u8, t, "name")) {
        loaded.name = std.json.parseFromSliceLeaky([]const u8, loaded.arena.allocator(), fields.get("name") orelse return error.NotAnEntry, .{ .allocate = .alloc_always }) catch |err| switch (err) {
            error.OutOfMemory => return error.OutOfMemory,
            else => return error.NotAnEntry,
        };
    } else if (std.mem.eql(u8, t, "pending_round")) {
        const arena = loaded.arena.allocator();
        const calls = fields.get("calls") orelse return error.NotAnEntry;
        loaded.pending_round = .{
            .calls = try arena.dupe(u8, calls),
            .results = if (fields.get("results")) |r| try arena.dupe(u8, r) else null,
        };
    } else if (std.mem.eql(u8, t, "session")) {
        return corrupt(diag, line_number, "is a second header");
    } else return error.NotAnEntry;
}

fn appendReplayed(gpa: Allocator, loaded: *Loaded, conv: *Conversation, m: Message) LineError!void {
    loaded.pending_round = null;
    noteFirstUserText(loaded, &m) catch {};
    conv.messages.append(gpa, m) catch {
        conversation.freeMessage(gpa, m);
        return error.OutOfMemory;
    };
}

fn corrupt(diag: *Diagnostic, line_number: usize, comptime what: []const u8) error{SessionCorrupt} {
    diag.fail("line {d} " ++ what, .{line_number}) catch {};
    return error.SessionCorrupt;
}

/// Finds "type" and the raw text of the fields an entry may have.
fn scanFields(gpa: Allocator, line: []const u8) LineError!Fields {
    var f: Fields = .{};
    var scanner = std.json.Scanner.initCompleteInput(gpa, line);
    defer scanner.deinit();
    var key_buf: [64]u8 = undefined;
    if ((scanner.next() catch return error.NotAnEntry) != .object_begin) return error.NotAnEntry;
    while (true) {
        var fba = std.heap.FixedBufferAllocator.init(&key_buf);
        // (a key with escapes longer than the buffer is none of ours)
        const key = switch (scanner.nextAlloc(fba.allocator(), .alloc_if_needed) catch return error.NotAnEntry) {
            .object_end => break,
            .string, .allocated_string => |s| s,
            else => return error.NotAnEntry,
        };
        _ = scanner.peekNextTokenType() catch return error.NotAnEntry;
        const value_start = scanner.cursor;
        scanner.skipValue() catch |err| switch (err) {
            error.OutOfMemory => return error.OutOfMemory,
            else => return error.NotAnEntry,
        };
        const raw = line[value_start..scanner.cursor];
        if (std.mem.eql(u8, key, "type")) {
            // Entry types are plain words: a string with escapes is none of them.
            if (raw.len < 2 or raw[0] != '"' or std.mem.indexOfScalar(u8, raw, '\\') != null) return error.NotAnEntry;
            f.type = raw[1 .. raw.len - 1];
        } else inline for (Fields.names, 0..) |n, i| {
            if (std.mem.eql(u8, key, n)) f.raw[i] = raw;
        }
    }
    if ((scanner.next() catch return error.NotAnEntry) != .end_of_document) return error.NotAnEntry;
    if (f.type.len == 0) return error.NotAnEntry;
    return f;
}

fn parseMessage(gpa: Allocator, raw: []const u8) LineError!Message {
    var diag: conversation_json.Diagnostic = .{};
    return conversation_json.parseMessageJson(gpa, raw, &diag) catch |err| switch (err) {
        error.OutOfMemory => error.OutOfMemory,
        error.InvalidConversation => error.NotAnEntry,
    };
}

/// The messages of a JSON array, owned by `gpa`.
fn parseMessageArray(gpa: Allocator, raw: []const u8) LineError!std.ArrayList(Message) {
    var list: std.ArrayList(Message) = .empty;
    errdefer {
        for (list.items) |m| conversation.freeMessage(gpa, m);
        list.deinit(gpa);
    }
    var scanner = std.json.Scanner.initCompleteInput(gpa, raw);
    defer scanner.deinit();
    if ((scanner.next() catch return error.NotAnEntry) != .array_begin) return error.NotAnEntry;
    while (true) {
        const t = scanner.peekNextTokenType() catch return error.NotAnEntry;
        if (t == .array_end) break;
        const start = scanner.cursor;
        scanner.skipValue() catch |err| switch (err) {
            error.OutOfMemory => return error.OutOfMemory,
            else => return error.NotAnEntry,
        };
        const m = try parseMessage(gpa, raw[start..scanner.cursor]);
        list.append(gpa, m) catch {
            conversation.freeMessage(gpa, m);
            return error.OutOfMemory;
        };
    }
    return list;
}

fn count(raw: ?[]const u8) LineError!usize {
    return std.fmt.parseInt(usize, raw orelse return error.NotAnEntry, 10) catch error.NotAnEntry;
}

fn readHeader(loaded: *Loaded, line: []const u8, diag: *Diagnostic) LineError!void {
    const arena = loaded.arena.allocator();
    const H = struct {
        type: []const u8,
        version: i64,
        id: []const u8,
        created: []const u8,
        cwd: []const u8,
        parent: ?struct { id: []const u8, message_count: u64 } = null,
    };
    const h = std.json.parseFromSliceLeaky(H, arena, line, .{ .ignore_unknown_fields = true, .allocate = .alloc_always }) catch |err| switch (err) {
        error.OutOfMemory => return error.OutOfMemory,
        else => return error.NotAnEntry,
    };
    if (h.version != entry.format_version) {
        diag.fail("the session file's version is {d}; this panto reads version {d}", .{ h.version, entry.format_version }) catch {};
        return error.SessionCorrupt;
    }
    loaded.header = .{ .id = h.id, .created = h.created, .cwd = h.cwd, .parent = if (h.parent) |p| .{ .id = p.id, .message_count = p.message_count } else null };
}

fn readConfig(loaded: *Loaded, raw: []const u8) LineError!void {
    const arena = loaded.arena.allocator();
    const C = struct {
        provider: ?[]const u8 = null,
        model: ?[]const u8 = null,
        system: ?[]const u8 = null,
        thinking: ?[]const u8 = null,
        max_tokens: ?u32 = null,
    };
    const value = std.json.parseFromSliceLeaky(std.json.Value, arena, raw, .{}) catch |err| switch (err) {
        error.OutOfMemory => return error.OutOfMemory,
        else => return error.NotAnEntry,
    };
    const c = std.json.parseFromValueLeaky(C, arena, value, .{ .ignore_unknown_fields = true }) catch |err| switch (err) {
        error.OutOfMemory => return error.OutOfMemory,
        else => return error.NotAnEntry,
    };
    const r = &loaded.config;
    if (c.provider) |v| r.provider = v;
    if (c.model) |v| r.model = v;
    if (value.object.contains("system")) r.system = c.system;
    if (c.thinking) |v| r.thinking = v;
    if (c.max_tokens) |v| r.max_tokens = v;
}

fn noteFirstUserText(loaded: *Loaded, m: *const Message) Allocator.Error!void {
    if (loaded.first_user_text.len > 0 or m.role != .user or m.compaction != null) return;
    for (m.blocks) |b| if (b.kind == .text) {
        loaded.first_user_text = try loaded.arena.allocator().dupe(u8, b.text);
        return;
    };
}
