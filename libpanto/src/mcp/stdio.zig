//! The stdio transport of MCP: a server is a command spawned in its own process group, with a
//! minimal environment; panto writes lines to its stdin and reads lines from its stdout, each
//! under a deadline, and drains its stderr meanwhile (its tail is kept for error messages).
//! Closing is graceful (stdin closed, then SIGTERM, then SIGKILL, each after a short grace) and
//! ends the whole group, so a server's own children do not outlive it.
//!
//! stdin is a socket pair, not a pipe: a write to a server that died is then an EPIPE from
//! `send(MSG_NOSIGNAL)` instead of a SIGPIPE that would end the host program (libuv gives
//! children socket pairs for the same reason). panto's ends are non-blocking, so a server that
//! stops reading cannot block a write past its deadline.
const std = @import("std");
const c = std.c;
const Allocator = std.mem.Allocator;
const log_mod = @import("../log.zig");

pub const EnvVar = struct { name: []const u8, value: []const u8 };

pub const Options = struct {
    /// The command and its arguments; a command without a `/` is looked up in PATH.
    argv: []const []const u8,
    /// Added to the minimal environment (PATH and HOME of this process).
    env: []const EnvVar = &.{},
    cwd: ?[]const u8 = null,
    /// A line longer than this is refused (`LineTooLong`): a server cannot make panto hold an
    /// unbounded result.
    max_line_bytes: usize = 16 * 1024 * 1024,
    /// Where each line the server writes to stderr goes (`MCP server "NAME" stderr: ...`),
    /// when the log is on (PANTO_LOG=debug); it must outlive the process.
    log: ?*const log_mod.Sink = null,
    /// The server's name in those lines.
    name: []const u8 = "",
    /// At close: how long the server has to exit once its stdin is closed, and again after
    /// SIGTERM, before SIGKILL. Short: a freed agent waits for it, and servers that read their
    /// stdin exit at once.
    grace_ms: u32 = default_grace_ms,
};

pub const default_grace_ms = 500;

pub const SpawnError = error{ Spawn, OutOfMemory };

pub const IoError = error{
    /// The server's stdout ended or its stdin is closed: it exited, crashed or closed them.
    ServerExited,
    /// Nothing came (or could be written) before the deadline.
    Timeout,
    LineTooLong,
    /// `cancel_fd` became readable: the turn the wait is for was canceled.
    Canceled,
};

pub const stderr_tail_bytes = 4096;

pub const Process = struct {
    gpa: Allocator,
    /// Spawning and reaping go through std's Io; the lines do not (they are plain fds, so the
    /// stepped path can wait on them).
    threaded: std.Io.Threaded,
    child: std.process.Child,
    /// panto's end of the server's stdin (a socket), or -1 once closed.
    stdin_fd: c.fd_t,
    max_line_bytes: usize,
    /// Bytes read from stdout: `pending[start..]` are not handed out yet.
    pending: std.ArrayList(u8) = .empty,
    start: usize = 0,
    stdout_ended: bool = false,
    /// The last bytes the server wrote to stderr.
    stderr_tail: [stderr_tail_bytes]u8 = undefined,
    stderr_len: usize = 0,
    log: ?*const log_mod.Sink,
    name: []const u8,
    /// The stderr line being written, not logged yet (a longer line is logged in pieces).
    stderr_line: [512]u8 = undefined,
    stderr_line_len: usize = 0,
    /// Readable once the wait should end (a turn's cancel, watchdog.zig's wake fd); never
    /// read here, so every wait on it sees it. -1: none.
    cancel_fd: c.fd_t = -1,
    grace_ms: u32,

    /// Starts the server. The process is pinned (its Io points into it): free it with `close`.
    pub fn spawn(gpa: Allocator, options: Options) SpawnError!*Process {
        const p = try gpa.create(Process);
        errdefer gpa.destroy(p);
        var arena_state: std.heap.ArenaAllocator = .init(gpa);
        defer arena_state.deinit();
        const arena = arena_state.allocator();

        var env: std.process.Environ.Map = .init(arena);
        for ([_][:0]const u8{ "PATH", "HOME" }) |name| {
            if (c.getenv(name)) |value| try env.put(name, std.mem.span(value));
        }
        for (options.env) |v| try env.put(v.name, v.value);

        if (options.argv.len == 0) return error.Spawn;
        const argv = try arena.dupe([]const u8, options.argv);
        argv[0] = try findProgram(arena, argv[0]) orelse return error.Spawn;

        var pair: [2]c.fd_t = undefined;
        if (c.socketpair(c.AF.UNIX, c.SOCK.STREAM | c.SOCK.CLOEXEC, 0, &pair) != 0) return error.Spawn;
        // The child's end is duplicated into it as fd 0; the parent's copy goes once spawned.
        defer _ = c.close(pair[1]);
        errdefer _ = c.close(pair[0]);

        p.* = .{
            .gpa = gpa,
            .threaded = .init_single_threaded,
            .child = undefined,
            .stdin_fd = pair[0],
            .max_line_bytes = options.max_line_bytes,
            .log = options.log,
            .name = try gpa.dupe(u8, options.name),
            .grace_ms = options.grace_ms,
        };
        errdefer gpa.free(p.name);
        // Spawning allocates (argv, environment) before fork: it needs a real allocator, and
        // not Threaded.init, which would install signal handlers in the host program.
        p.threaded.allocator = gpa;
        p.child = std.process.spawn(p.threaded.io(), .{
            .argv = argv,
            .cwd = if (options.cwd) |dir| .{ .path = dir } else .inherit,
            .environ_map = &env,
            .stdin = .{ .file = .{ .handle = pair[1], .flags = .{ .nonblocking = false } } },
            .stdout = .pipe,
            .stderr = .pipe,
            .pgid = 0,
        }) catch |err| switch (err) {
            error.OutOfMemory => return error.OutOfMemory,
            else => return error.Spawn,
        };
        setNonBlocking(p.stdin_fd);
        setNonBlocking(p.child.stdout.?.handle);
        setNonBlocking(p.child.stderr.?.handle);
        return p;
    }

    /// Ends the server and its process group, reaps it and frees everything. Gracefully, as
    /// the spec's shutdown for stdio says: its stdin closed, `grace_ms` for it to exit, then
    /// SIGTERM to the group, `grace_ms` again, then SIGKILL; what is left of the group (its
    /// own children) gets SIGKILL too, and the server is reaped (no zombie).
    pub fn close(p: *Process) void {
        const gpa = p.gpa;
        p.closeStdin();
        if (p.child.id) |group| {
            if (!p.exitsWithin(group, p.grace_ms)) {
                _ = c.kill(-group, c.SIG.TERM);
                _ = p.exitsWithin(group, p.grace_ms);
            }
            // Before the reap: the group's id cannot name another group while it is a zombie.
            _ = c.kill(-group, c.SIG.KILL);
        }
        _ = p.child.wait(p.threaded.io()) catch {};
        if (p.stderr_line_len > 0) p.logStderrLine();
        p.pending.deinit(gpa);
        gpa.free(p.name);
        gpa.destroy(p);
    }

    /// Whether the server exits (or has exited) within `ms`, without reaping it: a pidfd polled
    /// (readable once it is a zombie), its stderr drained meanwhile (a server may log on its
    /// way out, and a full stderr pipe would block its exit). Without pidfd_open (Linux < 5.3),
    /// not waited for: the signals come at once.
    fn exitsWithin(p: *Process, pid_: c.pid_t, ms: u32) bool {
        if (ms == 0) return false;
        const rc = std.os.linux.pidfd_open(pid_, 0);
        if (std.os.linux.errno(rc) != .SUCCESS) return false;
        const pidfd: c.fd_t = @intCast(rc);
        defer _ = c.close(pidfd);
        const deadline = deadlineIn(ms);
        while (true) {
            const err_fd: c.fd_t = if (p.child.stderr) |f| f.handle else -1;
            var fds = [2]c.pollfd{
                .{ .fd = pidfd, .events = c.POLL.IN, .revents = 0 },
                .{ .fd = err_fd, .events = c.POLL.IN, .revents = 0 },
            };
            const left = deadline - now();
            if (left <= 0) return false;
            const n = c.poll(&fds, 2, @intCast(@divFloor(left + std.time.ns_per_ms - 1, std.time.ns_per_ms)));
            if (n < 0) continue;
            if (fds[0].revents != 0) return true;
            if (fds[1].revents != 0) p.drainStderr();
        }
    }

    /// Ends the server's process group now (it is reaped by `close`).
    pub fn kill(p: *Process) void {
        p.closeStdin();
        if (p.child.id) |group| _ = c.kill(-group, c.SIG.KILL);
    }

    /// Closes the server's stdin (the spec's first step of a shutdown).
    pub fn closeStdin(p: *Process) void {
        if (p.stdin_fd < 0) return;
        _ = c.close(p.stdin_fd);
        p.stdin_fd = -1;
    }

    /// The process group's id (the server's pid).
    pub fn pid(p: *const Process) c.pid_t {
        return p.child.id.?;
    }

    /// What the server wrote to stderr last (at most 4 KiB), for an error message.
    pub fn stderrTail(p: *const Process) []const u8 {
        return p.stderr_tail[0..p.stderr_len];
    }

    /// Whether the server closed its stdout (it exited) while no request waited: a poll that
    /// does not wait and reads nothing, so a message it wrote before is still there to read.
    pub fn ended(p: *Process) bool {
        if (p.stdout_ended) return true;
        var fds = [1]c.pollfd{.{ .fd = p.child.stdout.?.handle, .events = c.POLL.IN, .revents = 0 }};
        if (c.poll(&fds, 1, 0) <= 0) return false;
        if (fds[0].revents & c.POLL.HUP == 0) return false;
        p.drainStderr(); // what it wrote last, for the status
        return true;
    }

    /// Whether a line, or the end of stdout, can be read now: a whole line is buffered, or
    /// stdout is readable (a poll that does not wait; what is readable is read in).
    pub fn hasInput(p: *Process) IoError!bool {
        while (true) {
            if (p.stdout_ended) return true;
            if (std.mem.indexOfScalar(u8, p.pending.items[p.start..], '\n') != null) return true;
            var fds = [1]c.pollfd{.{ .fd = p.child.stdout.?.handle, .events = c.POLL.IN, .revents = 0 }};
            if (c.poll(&fds, 1, 0) <= 0) return false;
            try p.readStdout();
        }
    }

    /// Writes `line` and a newline, before `deadline_ns` (CLOCK_MONOTONIC; null: no limit).
    pub fn writeLine(p: *Process, line: []const u8, deadline_ns: ?i64) IoError!void {
        try p.writeAll(line, deadline_ns);
        try p.writeAll("\n", deadline_ns);
    }

    fn writeAll(p: *Process, bytes: []const u8, deadline_ns: ?i64) IoError!void {
        var rest = bytes;
        while (rest.len > 0) {
            if (p.stdin_fd < 0) return error.ServerExited;
            const rc = c.send(p.stdin_fd, rest.ptr, rest.len, c.MSG.NOSIGNAL | c.MSG.DONTWAIT);
            if (rc >= 0) {
                rest = rest[@intCast(rc)..];
                continue;
            }
            switch (c.errno(rc)) {
                .INTR => continue,
                .AGAIN => try p.wait(p.stdin_fd, c.POLL.OUT, deadline_ns),
                else => return error.ServerExited,
            }
        }
    }

    /// The next line the server wrote (without its newline, nor a `\r` before it), read
    /// before `deadline_ns`; valid until the next call. Empty lines are skipped.
    pub fn readLine(p: *Process, deadline_ns: ?i64) IoError![]const u8 {
        while (true) {
            const unread = p.pending.items[p.start..];
            if (std.mem.indexOfScalar(u8, unread, '\n')) |end| {
                p.start += end + 1;
                const line = std.mem.trimEnd(u8, unread[0..end], "\r");
                if (line.len == 0) continue;
                if (line.len > p.max_line_bytes) return error.LineTooLong;
                return line;
            }
            if (unread.len > p.max_line_bytes) return error.LineTooLong;
            if (p.stdout_ended) {
                // What it wrote to stderr before its stdout ended is there to read.
                p.drainStderr();
                return error.ServerExited;
            }
            // Keep what is unread at the buffer's start, so it grows only for long lines.
            if (p.start > 0) {
                std.mem.copyForwards(u8, p.pending.items, unread);
                p.pending.shrinkRetainingCapacity(unread.len);
                p.start = 0;
            }
            try p.wait(p.child.stdout.?.handle, c.POLL.IN, deadline_ns);
            try p.readStdout();
        }
    }

    fn readStdout(p: *Process) IoError!void {
        const fd = p.child.stdout.?.handle;
        p.pending.ensureUnusedCapacity(p.gpa, 64 * 1024) catch return error.LineTooLong;
        const free = p.pending.unusedCapacitySlice();
        const rc = c.read(fd, free.ptr, free.len);
        if (rc > 0) {
            p.pending.items.len += @intCast(rc);
        } else if (rc == 0) {
            p.stdout_ended = true;
        } else switch (c.errno(rc)) {
            .INTR, .AGAIN => {},
            else => p.stdout_ended = true,
        }
    }

    /// Waits until `fd` is ready for `events`, draining stderr meanwhile.
    fn wait(p: *Process, fd: c.fd_t, events: i16, deadline_ns: ?i64) IoError!void {
        while (true) {
            const err_fd: c.fd_t = if (p.child.stderr) |f| f.handle else -1;
            var fds = [3]c.pollfd{
                .{ .fd = fd, .events = events, .revents = 0 },
                .{ .fd = err_fd, .events = c.POLL.IN, .revents = 0 },
                .{ .fd = p.cancel_fd, .events = c.POLL.IN, .revents = 0 },
            };
            const timeout: c_int = if (deadline_ns) |d| blk: {
                const left = d - now();
                if (left <= 0) return error.Timeout;
                break :blk @intCast(@min(std.math.maxInt(c_int), @divFloor(left + std.time.ns_per_ms - 1, std.time.ns_per_ms)));
            } else -1;
            const rc = c.poll(&fds, 3, timeout);
            if (rc < 0) continue; // interrupted: wait for the rest
            if (fds[2].revents != 0) return error.Canceled;
            if (fds[1].revents != 0) p.drainStderr();
            // Readable, writable, or its end closed (HUP/ERR): the read or write tells which.
            if (fds[0].revents != 0) return;
        }
    }

    fn drainStderr(p: *Process) void {
        const file = p.child.stderr orelse return;
        var buf: [4096]u8 = undefined;
        const rc = c.read(file.handle, &buf, buf.len);
        if (rc > 0) return p.keepStderr(buf[0..@intCast(rc)]);
        if (rc < 0 and (c.errno(rc) == .INTR or c.errno(rc) == .AGAIN)) return;
        // Its stderr ended: stop watching it (the fd is closed when the child is reaped).
        _ = c.close(file.handle);
        p.child.stderr = null;
    }

    fn keepStderr(p: *Process, bytes: []const u8) void {
        if (p.log) |log| if (log.on()) for (bytes) |byte| {
            if (byte == '\n') {
                p.logStderrLine();
                continue;
            }
            if (p.stderr_line_len == p.stderr_line.len) p.logStderrLine();
            p.stderr_line[p.stderr_line_len] = byte;
            p.stderr_line_len += 1;
        };
        if (bytes.len >= stderr_tail_bytes) {
            @memcpy(&p.stderr_tail, bytes[bytes.len - stderr_tail_bytes ..]);
            p.stderr_len = stderr_tail_bytes;
            return;
        }
        const keep = @min(p.stderr_len, stderr_tail_bytes - bytes.len);
        std.mem.copyForwards(u8, p.stderr_tail[0..keep], p.stderr_tail[p.stderr_len - keep .. p.stderr_len]);
        @memcpy(p.stderr_tail[keep..][0..bytes.len], bytes);
        p.stderr_len = keep + bytes.len;
    }

    fn logStderrLine(p: *Process) void {
        defer p.stderr_line_len = 0;
        const log = p.log orelse return;
        log.print("MCP server \"{s}\" stderr: {s}", .{ p.name, std.mem.trimEnd(u8, p.stderr_line[0..p.stderr_line_len], "\r") });
    }
};

/// CLOCK_MONOTONIC in nanoseconds: the clock of every deadline here.
pub fn now() i64 {
    var ts: c.timespec = undefined;
    _ = c.clock_gettime(.MONOTONIC, &ts);
    return @as(i64, ts.sec) * std.time.ns_per_s + ts.nsec;
}

/// A deadline `ms` from now.
pub fn deadlineIn(ms: u64) i64 {
    return now() + @as(i64, @intCast(ms)) * std.time.ns_per_ms;
}

fn setNonBlocking(fd: c.fd_t) void {
    const flags = c.fcntl(fd, c.F.GETFL);
    if (flags >= 0) _ = c.fcntl(fd, c.F.SETFL, flags | @as(c_int, @bitCast(c.O{ .NONBLOCK = true })));
}

/// `name` itself when it holds a `/`, else the first executable `PATH` entry of that name
/// (looked up here, in this process's PATH: std's spawn would use a default PATH in a library).
/// The program `name` runs: a path (with a "/") when it is executable, else the first
/// executable file of that name in $PATH; null for none. A path is checked too: std's spawn
/// returns exec's error without reaping the child it forked, so a command that cannot run
/// would leave a zombie and two pipes behind for every start of the server.
fn findProgram(arena: Allocator, name: []const u8) Allocator.Error!?[]const u8 {
    if (std.mem.indexOfScalar(u8, name, '/') != null) {
        const path = try arena.dupeZ(u8, name);
        return if (c.access(path, c.X_OK) == 0) path else null;
    }
    const path = std.mem.span(c.getenv("PATH") orelse return null);
    var dirs = std.mem.tokenizeScalar(u8, path, ':');
    while (dirs.next()) |dir| {
        const full = try std.fmt.allocPrintSentinel(arena, "{s}/{s}", .{ dir, name }, 0);
        if (c.access(full, c.X_OK) == 0) return full;
    }
    return null;
}

test "lines go both ways; the end of the server is ServerExited, its stderr kept" {
    const gpa = std.testing.allocator;
    const script =
        \\while IFS= read -r line; do
        \\  if [ "$line" = "bye" ]; then echo "gone" >&2; exit 0; fi
        \\  printf '%s\r\n\n' "$line"
        \\done
    ;
    const p = try Process.spawn(gpa, .{ .argv = &.{ "sh", "-c", script } });
    defer p.close();
    try p.writeLine("hello", deadlineIn(10_000));
    try std.testing.expectEqualStrings("hello", try p.readLine(deadlineIn(10_000)));
    try p.writeLine("bye", deadlineIn(10_000));
    try std.testing.expectError(error.ServerExited, p.readLine(deadlineIn(10_000)));
    try std.testing.expectEqualStrings("gone\n", p.stderrTail());
}

test "a command that is not an executable file is refused before any process is made" {
    const gpa = std.testing.allocator;
    var tmp = std.testing.tmpDir(.{});
    defer tmp.cleanup();
    try tmp.dir.writeFile(std.testing.io, .{ .sub_path = "not-executable", .data = "#!/bin/sh\nexit 0\n" });
    var buf: [std.c.PATH_MAX]u8 = undefined;
    const plain = try std.fmt.bufPrint(&buf, ".zig-cache/tmp/{s}/not-executable", .{tmp.sub_path});
    for ([_][]const u8{ "/nonexistent/server", plain, "./no-such-server" }) |command| {
        try std.testing.expectError(error.Spawn, Process.spawn(gpa, .{ .argv = &.{command} }));
    }
}

test "a line longer than the limit is refused" {
    const gpa = std.testing.allocator;
    const p = try Process.spawn(gpa, .{
        .argv = &.{ "sh", "-c", "head -c 3000 /dev/zero | tr '\\0' x; echo; exec sleep 1000" },
        .max_line_bytes = 1000,
    });
    defer p.close();
    try std.testing.expectError(error.LineTooLong, p.readLine(deadlineIn(10_000)));
}

test "a server that says nothing runs out its deadline; its environment is minimal" {
    const gpa = std.testing.allocator;
    const p = try Process.spawn(gpa, .{
        .argv = &.{ "sh", "-c", "env | sort | tr '\\n' ' '; echo; exec sleep 1000" },
        .env = &.{.{ .name = "PANTO_MCP_TEST", .value = "given" }},
    });
    defer p.close();
    const env = try p.readLine(deadlineIn(10_000));
    try std.testing.expect(std.mem.indexOf(u8, env, "PANTO_MCP_TEST=given") != null);
    try std.testing.expect(std.mem.indexOf(u8, env, "PATH=") != null);
    // Only what was named: the tests' own variables are not passed.
    var names = std.mem.tokenizeScalar(u8, env, ' ');
    while (names.next()) |pair| {
        const name = pair[0 .. std.mem.indexOfScalar(u8, pair, '=') orelse pair.len];
        const allowed = [_][]const u8{ "PATH", "HOME", "PANTO_MCP_TEST", "PWD", "SHLVL", "_", "OLDPWD" };
        for (allowed) |a| {
            if (std.mem.eql(u8, a, name)) break;
        } else return error.TestUnexpectedResult;
    }
    try std.testing.expectError(error.Timeout, p.readLine(now()));
}

test "a server that exits between requests is seen as ended, its last message still readable" {
    const gpa = std.testing.allocator;
    const p = try Process.spawn(gpa, .{ .argv = &.{ "sh", "-c", "read -r line; echo last; echo bye >&2" } });
    defer p.close();
    try std.testing.expect(!p.ended());
    try p.writeLine("go", deadlineIn(10_000));
    // Its stdout's end comes once it exits: wait for it without a timed assertion.
    var fds = [1]c.pollfd{.{ .fd = p.child.stdout.?.handle, .events = 0, .revents = 0 }};
    while (true) {
        _ = c.poll(&fds, 1, -1);
        if (fds[0].revents & c.POLL.HUP != 0) break;
    }
    try std.testing.expect(p.ended());
    try std.testing.expectEqualStrings("last", try p.readLine(deadlineIn(10_000)));
    try std.testing.expectError(error.ServerExited, p.readLine(deadlineIn(10_000)));
}

test "each line the server writes to stderr goes to the debug log, a last unfinished one at close" {
    const gpa = std.testing.allocator;
    var fds: [2]c.fd_t = undefined;
    try std.testing.expectEqual(@as(c_int, 0), c.pipe(&fds));
    defer _ = c.close(fds[0]);
    var log: log_mod.Sink = .{ .level = .debug, .fd = fds[1] };
    const p = try Process.spawn(gpa, .{ .argv = &.{ "sh", "-c", "echo one >&2; printf 'two\\r\\nthree' >&2" }, .log = &log, .name = "srv" });
    // Its stdout ends when it exits; its stderr is drained then.
    try std.testing.expectError(error.ServerExited, p.readLine(deadlineIn(10_000)));
    p.close();
    _ = c.close(fds[1]);
    var buf: [512]u8 = undefined;
    var len: usize = 0;
    while (true) {
        const n = c.read(fds[0], buf[len..].ptr, buf.len - len);
        if (n <= 0) break;
        len += @intCast(n);
    }
    try std.testing.expectEqualStrings(
        "panto: MCP server \"srv\" stderr: one\npanto: MCP server \"srv\" stderr: two\npanto: MCP server \"srv\" stderr: three\n",
        buf[0..len],
    );
}

test "a command that does not exist cannot be spawned" {
    try std.testing.expectError(error.Spawn, Process.spawn(std.testing.allocator, .{ .argv = &.{"panto-no-such-command-here"} }));
}

/// A python3 server for the shutdown tests: it writes "ready" once its SIGTERM handler is set,
/// notes in `marker` each signal and its stdin's end, and exits on that end unless `stay`.
fn shutdownServer(gpa: Allocator, marker: []const u8, stay: bool, grace_ms: u32) !*Process {
    const script =
        \\import signal, sys, time
        \\marker, stay = sys.argv[1], sys.argv[2] == "stay"
        \\def note(what):
        \\    with open(marker, "a") as f: f.write(what + "\n")
        \\signal.signal(signal.SIGTERM, lambda *a: note("TERM"))
        \\print("ready", flush=True)
        \\sys.stdin.read()
        \\note("EOF")
        \\while stay: time.sleep(0.01)
    ;
    return Process.spawn(gpa, .{ .argv = &.{ "python3", "-c", script, marker, if (stay) "stay" else "go" }, .grace_ms = grace_ms });
}

fn markerPath(buf: []u8, tmp: *const std.testing.TmpDir) ![]const u8 {
    return std.fmt.bufPrint(buf, ".zig-cache/tmp/{s}/marker", .{tmp.sub_path});
}

/// Starts a shutdown server, closes it once it is ready, checks it was reaped (not even a
/// zombie left) and returns what it noted (owned).
fn closeNoted(gpa: Allocator, stay: bool, grace_ms: u32) ![]u8 {
    var tmp = std.testing.tmpDir(.{});
    defer tmp.cleanup();
    var buf: [256]u8 = undefined;
    const marker = try markerPath(&buf, &tmp);
    const p = try shutdownServer(gpa, marker, stay, grace_ms);
    try std.testing.expectEqualStrings("ready", try p.readLine(deadlineIn(30_000)));
    const pid_ = p.pid();
    p.close();
    try std.testing.expectEqual(std.os.linux.E.SRCH, std.os.linux.errno(std.os.linux.kill(pid_, @enumFromInt(0))));
    return tmp.dir.readFileAlloc(std.testing.io, "marker", gpa, .limited(1024));
}

test "close: a server that exits once its stdin is closed gets no signal, and is reaped" {
    const gpa = std.testing.allocator;
    // A long grace: this server exits on its own well before it (close returns then).
    const noted = try closeNoted(gpa, false, 60_000);
    defer gpa.free(noted);
    try std.testing.expectEqualStrings("EOF\n", noted);
}

test "close: a server that ignores its stdin's end and SIGTERM is killed, after SIGTERM, and reaped" {
    const gpa = std.testing.allocator;
    const noted = try closeNoted(gpa, true, 50);
    defer gpa.free(noted);
    // SIGTERM came (the handler noted it) and did not end it: SIGKILL did.
    try std.testing.expect(std.mem.indexOf(u8, noted, "TERM\n") != null);
}
