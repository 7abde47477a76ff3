//! The prompt's history: the lines entered, newest last, kept across runs in a file
//! ($XDG_STATE_HOME/panto/history, else ~/.local/state/panto/history), one entry a line
//! ("\n" and "\\" escaped, so a pasted multi-line prompt stays one entry), at most `cap`.
const std = @import("std");
const Allocator = std.mem.Allocator;
const c = std.c;

pub const WriteError = error{HistoryWrite};

pub const History = struct {
    gpa: Allocator,
    io: std.Io,
    entries: std.ArrayList([]u8) = .empty,
    /// 0: no history at all (config history_size 0).
    cap: usize,
    /// The file, or null for a history kept in memory only.
    path: ?[:0]const u8,

    pub fn init(gpa: Allocator, io: std.Io, path: ?[:0]const u8, cap: usize) History {
        return .{ .gpa = gpa, .io = io, .path = path, .cap = cap };
    }

    pub fn deinit(h: *History) void {
        for (h.entries.items) |e| h.gpa.free(e);
        h.entries.deinit(h.gpa);
    }

    /// Reads the file (a missing one is an empty history). A file grown past twice the cap
    /// is rewritten with the newest `cap` entries.
    pub fn load(h: *History) (Allocator.Error || WriteError)!void {
        const path = h.path orelse return;
        if (h.cap == 0) return;
        const data = readAll(h.gpa, path) catch |err| switch (err) {
            error.OutOfMemory => return error.OutOfMemory,
            error.Unreadable => return,
        };
        defer h.gpa.free(data);
        var lines: usize = 0;
        var it = std.mem.splitScalar(u8, data, '\n');
        while (it.next()) |line| {
            if (line.len == 0) continue;
            lines += 1;
            try h.remember(try unescape(h.gpa, line));
        }
        if (lines > 2 * h.cap) try h.rewrite();
    }

    pub fn len(h: *const History) usize {
        return h.entries.items.len;
    }

    /// Entry `i`, 0 the oldest.
    pub fn get(h: *const History, i: usize) []const u8 {
        return h.entries.items[i];
    }

    /// Adds a line entered (not an empty one, nor a repeat of the newest) and appends it to
    /// the file. On HistoryWrite the entry is kept in memory all the same.
    pub fn add(h: *History, line: []const u8) (Allocator.Error || WriteError)!void {
        if (h.cap == 0 or std.mem.trim(u8, line, " \t\n").len == 0) return;
        if (h.len() > 0 and std.mem.eql(u8, h.get(h.len() - 1), line)) return;
        try h.remember(try h.gpa.dupe(u8, line));
        const path = h.path orelse return;
        if (std.fs.path.dirname(path)) |dir| std.Io.Dir.cwd().createDirPath(h.io, dir) catch return error.HistoryWrite;
        const fd = c.open(path, .{ .ACCMODE = .WRONLY, .CREAT = true, .APPEND = true, .CLOEXEC = true }, @as(c.mode_t, 0o600));
        if (fd < 0) return error.HistoryWrite;
        defer _ = c.close(fd);
        var buf: std.ArrayList(u8) = .empty;
        defer buf.deinit(h.gpa);
        try escape(h.gpa, &buf, line);
        try buf.append(h.gpa, '\n');
        try writeAll(fd, buf.items);
    }

    fn remember(h: *History, owned: []u8) Allocator.Error!void {
        errdefer h.gpa.free(owned);
        if (h.entries.items.len == h.cap) {
            h.gpa.free(h.entries.orderedRemove(0));
        }
        try h.entries.append(h.gpa, owned);
    }

    fn rewrite(h: *History) (Allocator.Error || WriteError)!void {
        const path = h.path.?;
        var buf: std.ArrayList(u8) = .empty;
        defer buf.deinit(h.gpa);
        for (h.entries.items) |e| {
            try escape(h.gpa, &buf, e);
            try buf.append(h.gpa, '\n');
        }
        const tmp = try std.fmt.allocPrintSentinel(h.gpa, "{s}.tmp", .{path}, 0);
        defer h.gpa.free(tmp);
        const fd = c.open(tmp, .{ .ACCMODE = .WRONLY, .CREAT = true, .TRUNC = true, .CLOEXEC = true }, @as(c.mode_t, 0o600));
        if (fd < 0) return error.HistoryWrite;
        writeAll(fd, buf.items) catch |err| {
            _ = c.close(fd);
            return err;
        };
        _ = c.close(fd);
        if (c.rename(tmp, path) != 0) return error.HistoryWrite;
    }
};

/// The history file's path from the environment, or null without a HOME.
pub fn defaultPath(gpa: Allocator) Allocator.Error!?[:0]u8 {
    if (env("XDG_STATE_HOME")) |state| if (state.len > 0 and state[0] == '/')
        return try std.fmt.allocPrintSentinel(gpa, "{s}/panto/history", .{std.mem.trimEnd(u8, state, "/")}, 0);
    const home = env("HOME") orelse return null;
    if (home.len == 0) return null;
    return try std.fmt.allocPrintSentinel(gpa, "{s}/.local/state/panto/history", .{std.mem.trimEnd(u8, home, "/")}, 0);
}

fn env(name: [*:0]const u8) ?[]const u8 {
    return std.mem.span(c.getenv(name) orelse return null);
}

fn escape(gpa: Allocator, out: *std.ArrayList(u8), line: []const u8) Allocator.Error!void {
    for (line) |b| switch (b) {
        '\\' => try out.appendSlice(gpa, "\\\\"),
        '\n' => try out.appendSlice(gpa, "\\n"),
        else => try out.append(gpa, b),
    };
}

fn unescape(gpa: Allocator, line: []const u8) Allocator.Error![]u8 {
    var out: std.ArrayList(u8) = try .initCapacity(gpa, line.len);
    var i: usize = 0;
    while (i < line.len) : (i += 1) {
        if (line[i] == '\\' and i + 1 < line.len) {
            i += 1;
            out.appendAssumeCapacity(if (line[i] == 'n') '\n' else line[i]);
        } else out.appendAssumeCapacity(line[i]);
    }
    return out.toOwnedSlice(gpa);
}

fn readAll(gpa: Allocator, path: [:0]const u8) error{ OutOfMemory, Unreadable }![]u8 {
    const fd = c.open(path, .{ .ACCMODE = .RDONLY, .CLOEXEC = true });
    if (fd < 0) return error.Unreadable;
    defer _ = c.close(fd);
    var out: std.ArrayList(u8) = .empty;
    errdefer out.deinit(gpa);
    while (true) {
        try out.ensureUnusedCapacity(gpa, 4096);
        const n = c.read(fd, out.unusedCapacitySlice().ptr, out.unusedCapacitySlice().len);
        if (n < 0) return error.Unreadable;
        if (n == 0) return out.toOwnedSlice(gpa);
        out.items.len += @intCast(n);
    }
}

fn writeAll(fd: c.fd_t, bytes: []const u8) WriteError!void {
    var rest = bytes;
    while (rest.len > 0) {
        const n = c.write(fd, rest.ptr, rest.len);
        if (n <= 0) return error.HistoryWrite;
        rest = rest[@intCast(n)..];
    }
}

fn tmpPath(tmp: *std.testing.TmpDir, buf: []u8, name: []const u8) ![:0]const u8 {
    var dir_buf: [std.c.PATH_MAX]u8 = undefined;
    const n = try tmp.dir.realPath(std.testing.io, &dir_buf);
    return std.fmt.bufPrintZ(buf, "{s}/{s}", .{ dir_buf[0..n], name });
}

test "entries persist across runs, escaped newlines included; blanks and repeats are not kept" {
    var tmp = std.testing.tmpDir(.{});
    defer tmp.cleanup();
    var buf: [std.c.PATH_MAX]u8 = undefined;
    const path = try tmpPath(&tmp, &buf, "state/panto/history");
    {
        var h = History.init(std.testing.allocator, std.testing.io, path, 10);
        defer h.deinit();
        try h.load();
        try h.add("first");
        try h.add("first");
        try h.add("   ");
        try h.add("two\nlines \\ here");
    }
    var h = History.init(std.testing.allocator, std.testing.io, path, 10);
    defer h.deinit();
    try h.load();
    try std.testing.expectEqual(@as(usize, 2), h.len());
    try std.testing.expectEqualStrings("first", h.get(0));
    try std.testing.expectEqualStrings("two\nlines \\ here", h.get(1));
}

test "the cap keeps the newest entries, and a file past twice the cap is rewritten" {
    var tmp = std.testing.tmpDir(.{});
    defer tmp.cleanup();
    var buf: [std.c.PATH_MAX]u8 = undefined;
    const path = try tmpPath(&tmp, &buf, "history");
    {
        var h = History.init(std.testing.allocator, std.testing.io, path, 100);
        defer h.deinit();
        for (0..7) |i| {
            var line: [8]u8 = undefined;
            try h.add(try std.fmt.bufPrint(&line, "l{d}", .{i}));
        }
    }
    var h = History.init(std.testing.allocator, std.testing.io, path, 3);
    defer h.deinit();
    try h.load();
    try std.testing.expectEqual(@as(usize, 3), h.len());
    try std.testing.expectEqualStrings("l4", h.get(0));
    try std.testing.expectEqualStrings("l6", h.get(2));
    const data = try readAll(std.testing.allocator, path);
    defer std.testing.allocator.free(data);
    try std.testing.expectEqualStrings("l4\nl5\nl6\n", data);
}

test "an unwritable history file: HistoryWrite, the entry kept in memory" {
    var tmp = std.testing.tmpDir(.{});
    defer tmp.cleanup();
    var buf: [std.c.PATH_MAX]u8 = undefined;
    // A directory where the file should be.
    try tmp.dir.createDir(std.testing.io, "history", .default_dir);
    const path = try tmpPath(&tmp, &buf, "history");
    var h = History.init(std.testing.allocator, std.testing.io, path, 5);
    defer h.deinit();
    try h.load(); // unreadable: an empty history
    try std.testing.expectError(error.HistoryWrite, h.add("kept"));
    try std.testing.expectEqual(@as(usize, 1), h.len());
    try std.testing.expectEqualStrings("kept", h.get(0));
}

test "a cap of 0 keeps no history, in memory or on disk" {
    var tmp = std.testing.tmpDir(.{});
    defer tmp.cleanup();
    var buf: [std.c.PATH_MAX]u8 = undefined;
    const path = try tmpPath(&tmp, &buf, "history");
    var h = History.init(std.testing.allocator, std.testing.io, path, 0);
    defer h.deinit();
    try h.add("secret");
    try std.testing.expectEqual(@as(usize, 0), h.len());
    try std.testing.expectError(error.Unreadable, readAll(std.testing.allocator, path));
}
