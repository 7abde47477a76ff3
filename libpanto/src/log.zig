//! The debug log (panto.h, PANTO_LOG): where an agent's log lines go and how much is written.
//! The config key `log` wins over the environment's PANTO_LOG (read when the agent is made):
//! "debug" writes a line per request (method and URL, then its status and time to the
//! response head), per retry decision and per connection (connection_log.zig); "body" adds
//! each request's JSON body. Lines start with "panto: " and go to stderr or to the file named
//! (appended to), each in one write. Never an API key: request headers are never written, and
//! the agent's key is masked wherever it would appear (a URL, a body's extra member).
const std = @import("std");
const config = @import("config.zig");

pub const Level = config.Log.Level;

pub const Sink = struct {
    level: Level = .off,
    /// stderr unless a file was named (then owned).
    fd: std.c.fd_t = 2,
    owned: bool = false,
    /// Masked in every line (the agent's API key; borrowed, lives as long as the agent's
    /// configuration).
    secret: []const u8 = "",

    /// The sink of a configuration: its `log` key, else PANTO_LOG. A file that cannot be
    /// opened leaves the lines on stderr (the log must never fail a turn).
    pub fn open(setting: ?config.Log, secret: ?[]const u8) Sink {
        var s: Sink = .{ .secret = secret orelse "" };
        const wanted = setting orelse return s.withLevel(fromEnvironment());
        s.level = wanted.level;
        if (wanted.level == .off) return s;
        if (wanted.file) |path| {
            var buf: [std.c.PATH_MAX]u8 = undefined;
            if (path.len < buf.len) {
                @memcpy(buf[0..path.len], path);
                buf[path.len] = 0;
                const fd = std.c.open(@ptrCast(&buf), .{ .ACCMODE = .WRONLY, .APPEND = true, .CREAT = true, .CLOEXEC = true }, @as(std.c.mode_t, 0o644));
                if (fd >= 0) {
                    s.fd = fd;
                    s.owned = true;
                }
            }
        }
        return s;
    }

    fn withLevel(s: Sink, level: Level) Sink {
        var out = s;
        out.level = level;
        return out;
    }

    pub fn close(s: *Sink) void {
        if (s.owned) _ = std.c.close(s.fd);
        s.owned = false;
        s.level = .off;
    }

    pub inline fn on(s: *const Sink) bool {
        return s.level != .off;
    }

    pub inline fn bodies(s: *const Sink) bool {
        return s.level == .body;
    }

    /// Writes "panto: " and the formatted text as one line (cut at 16 KiB; `body` is not).
    pub fn print(s: *const Sink, comptime fmt: []const u8, args: anytype) void {
        if (!s.on()) return;
        // Never inlined: inlined, its 16 KiB line became part of the caller's frame, probed
        // page by page, so resident in the stack of every thread or fiber that called it, log
        // on or off (transport.open: a 20.4 KB frame, live while a stream waits for its answer).
        @call(.never_inline, printLine, .{ s, fmt, args });
    }

    fn printLine(s: *const Sink, comptime fmt: []const u8, args: anytype) void {
        var buf: [16 * 1024]u8 = undefined;
        var w: std.Io.Writer = .fixed(&buf);
        w.writeAll("panto: ") catch {};
        w.print(fmt, args) catch {};
        s.writeLine(w.buffered());
    }

    /// At level body: "panto: body " and `json` as one line.
    pub fn body(s: *const Sink, gpa: std.mem.Allocator, json: []const u8) void {
        if (!s.bodies()) return;
        var line: std.ArrayList(u8) = .empty;
        defer line.deinit(gpa);
        line.appendSlice(gpa, "panto: body ") catch return;
        line.appendSlice(gpa, json) catch return;
        s.writeLine(line.items);
    }

    /// Masks the secret in `text` (in place), adds the newline and writes it all at once.
    fn writeLine(s: *const Sink, text: []u8) void {
        mask(text, s.secret);
        var nl = [_]u8{'\n'};
        var parts = [_]std.posix.iovec_const{
            .{ .base = text.ptr, .len = text.len },
            .{ .base = &nl, .len = 1 },
        };
        _ = std.c.writev(s.fd, &parts, parts.len);
    }
};

/// PANTO_LOG's level: "debug" or "body"; anything else is off.
pub fn fromEnvironment() Level {
    const value = std.c.getenv("PANTO_LOG") orelse return .off;
    return std.meta.stringToEnum(Level, std.mem.span(value)) orelse .off;
}

/// Overwrites each occurrence of `secret` (4 bytes or more) in `text` with '*'.
pub fn mask(text: []u8, secret: []const u8) void {
    if (secret.len < 4) return;
    var i: usize = 0;
    while (std.mem.indexOfPos(u8, text, i, secret)) |at| {
        @memset(text[at .. at + secret.len], '*');
        i = at + secret.len;
    }
}

test "the config wins over the environment; a secret never reaches a line" {
    var text = "key sk-ant-123456 and sk-ant-123456!".*;
    mask(&text, "sk-ant-123456");
    try std.testing.expectEqualStrings("key ************* and *************!", &text);
    const off = Sink.open(.{ .level = .off }, null);
    try std.testing.expect(!off.on());
    const debug = Sink.open(.{ .level = .debug }, "k");
    try std.testing.expect(debug.on() and !debug.bodies());
}

test "a log file gets the lines, appended" {
    var tmp = std.testing.tmpDir(.{});
    defer tmp.cleanup();
    var path_buf: [std.c.PATH_MAX]u8 = undefined;
    const path = try std.fmt.bufPrint(&path_buf, ".zig-cache/tmp/{s}/panto.log", .{tmp.sub_path});
    var sink = Sink.open(.{ .level = .body, .file = path }, "secret-key");
    defer sink.close();
    try std.testing.expect(sink.owned);
    sink.print("POST {s}", .{"http://h/v1/messages?k=secret-key"});
    sink.body(std.testing.allocator, "{\"a\":1}");
    var read_buf: [256]u8 = undefined;
    const got = try tmp.dir.readFile(std.testing.io, "panto.log", &read_buf);
    try std.testing.expectEqualStrings("panto: POST http://h/v1/messages?k=**********\npanto: body {\"a\":1}\n", got);
}
