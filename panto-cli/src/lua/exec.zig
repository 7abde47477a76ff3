//! The children of ext.exec: a command started by posix_spawn in a process group of its own,
//! its output (stdout and stderr, one pipe) collected up to a cap (its start or its end), the
//! whole of it saved to a private file once it passes the cap when asked, a timeout, and a
//! kill of the whole group on timeout or cancel. The host's thread alone touches them: it polls their pipes and pidfds
//! (Children.wait) while the handlers that started them are suspended, or, outside a handler,
//! in place. Another thread's cancel only sets a flag and wakes the poll (Host.cancelAsync).
const std = @import("std");
const linux = std.os.linux;

pub const Options = struct {
    argv: []const []const u8,
    cwd: ?[]const u8 = null,
    /// Seconds from the start; infinity: none.
    timeout: f64 = std.math.inf(f64),
    max_output: usize = default_max_output,
    /// Keep the last max_output bytes rather than the first (where a build says what failed).
    keep_tail: bool = false,
    /// Once the output passes max_output, write the whole of it to a new file (mode 0600) in
    /// $TMPDIR (else /tmp), so that nothing cut is lost.
    save_output: bool = false,
    /// The id of the tool call whose progress shows the output's last line while it runs
    /// (ext.exec's `progress`; tool_runner.zig reports it).
    progress_id: ?[]const u8 = null,
};

pub const default_max_output: usize = 1 << 20;

pub const Child = struct {
    pid: linux.pid_t,
    /// Readable once the process exits; -1 on kernels without pidfd_open (then polled).
    pidfd: i32,
    /// The read end of the output pipe, non-blocking; -1 once closed.
    out_fd: i32,
    /// What is kept of the output; with keep_tail, its end is (see kept).
    output: std.ArrayList(u8) = .empty,
    /// Every byte the command wrote, kept or not, and the newlines among them.
    output_bytes: u64 = 0,
    output_lines: u64 = 0,
    max_output: usize,
    keep_tail: bool = false,
    save_output: bool = false,
    /// The file that holds the whole output (save_output, once past the cap), and its path;
    /// made once (a file made later would miss the start).
    save_fd: i32 = -1,
    save_path: ?[:0]u8 = null,
    save_tried: bool = false,
    deadline: f64,
    /// The raw wait status, once reaped.
    status: ?u32 = null,
    timed_out: bool = false,
    canceled: bool = false,
    /// The registry reference of the coroutine that waits for it (a tool handler), or none.
    waiter: c_int,
    /// Options.progress_id (owned), and the output_bytes its progress last showed.
    progress_id: ?[]u8 = null,
    reported_bytes: u64 = 0,
    reported_at: f64 = -1,

    /// The last `n` lines of the output kept, up to its last text (its end may be a line
    /// still written).
    pub fn lastLines(ch: *const Child, n: usize) []const u8 {
        const out = std.mem.trimEnd(u8, ch.kept(), " \t\r\n");
        var start = out.len;
        var i: usize = 0;
        while (i < n and start > 0) : (i += 1) start = if (std.mem.lastIndexOfScalar(u8, out[0 .. start - 1], '\n')) |nl| nl + 1 else 0;
        return out[start..];
    }

    pub fn done(ch: *const Child) bool {
        return ch.status != null and ch.out_fd < 0;
    }

    pub fn exitCode(ch: *const Child) ?u8 {
        const s = ch.status orelse return null;
        return if (s & 0x7f == 0) @truncate(s >> 8) else null;
    }

    pub fn signal(ch: *const Child) ?u8 {
        const s = ch.status orelse return null;
        return if (s & 0x7f != 0 and s & 0x7f != 0x7f) @truncate(s & 0x7f) else null;
    }

    /// The output kept: its first max_output bytes, or with keep_tail its last.
    pub fn kept(ch: *const Child) []const u8 {
        const items = ch.output.items;
        return if (ch.keep_tail) items[items.len - @min(items.len, ch.max_output) ..] else items;
    }

    pub fn truncated(ch: *const Child) bool {
        return ch.output_bytes > ch.kept().len;
    }

    /// Kills the process group (and the process, in case it left its group).
    fn killGroup(ch: *Child) void {
        if (ch.status != null) return;
        _ = linux.kill(-ch.pid, .KILL);
        _ = linux.kill(ch.pid, .KILL);
    }

    /// Reads what the pipe holds now; closes it at its end.
    fn drain(ch: *Child, gpa: std.mem.Allocator) void {
        var buf: [16384]u8 = undefined;
        while (ch.out_fd >= 0) {
            const rc = linux.read(ch.out_fd, &buf, buf.len);
            switch (linux.errno(rc)) {
                .SUCCESS => {
                    if (rc == 0) return ch.closeOutput();
                    ch.keep(gpa, buf[0..rc]);
                },
                .INTR => {},
                .AGAIN => return,
                else => return ch.closeOutput(),
            }
        }
    }

    fn keep(ch: *Child, gpa: std.mem.Allocator, bytes: []const u8) void {
        // Past the cap for the first time: the file starts with all that came before, which
        // is all kept (nothing was cut yet).
        if (ch.save_output and !ch.save_tried and ch.output_bytes + bytes.len > ch.max_output) {
            ch.startSaving(gpa);
            ch.save(ch.output.items);
        }
        ch.save(bytes);
        ch.output_bytes += bytes.len;
        ch.output_lines += std.mem.count(u8, bytes, "\n");
        if (!ch.keep_tail) {
            const room = ch.max_output -| ch.output.items.len;
            ch.output.appendSlice(gpa, bytes[0..@min(bytes.len, room)]) catch {
                ch.max_output = ch.output.items.len; // out of memory: keep what fits
            };
            return;
        }
        // The end: up to twice the cap is held, then the older half dropped (one move per
        // cap's worth of output rather than per read).
        if (bytes.len >= ch.max_output) {
            ch.output.clearRetainingCapacity();
            ch.output.appendSlice(gpa, bytes[bytes.len - ch.max_output ..]) catch {};
            return;
        }
        if (ch.output.items.len + bytes.len > 2 * ch.max_output) {
            const drop = ch.output.items.len - ch.max_output;
            ch.output.replaceRangeAssumeCapacity(0, drop, &.{});
        }
        ch.output.appendSlice(gpa, bytes) catch {};
    }

    /// Creates the output file: $TMPDIR/panto-output-XXXXXX.log, mode 0600 (mkostemps).
    fn startSaving(ch: *Child, gpa: std.mem.Allocator) void {
        ch.save_tried = true;
        const dir = if (std.c.getenv("TMPDIR")) |d| std.mem.span(d) else "";
        const path = std.fmt.allocPrintSentinel(gpa, "{s}/panto-output-XXXXXX.log", .{if (dir.len > 0) dir else "/tmp"}, 0) catch return;
        const fd = mkostemps(path.ptr, 4, @bitCast(linux.O{ .CLOEXEC = true }));
        if (fd < 0) return gpa.free(path);
        ch.save_fd = fd;
        ch.save_path = path;
    }

    /// Appends to the output file; a failed write (a full disk) drops the file, which would
    /// not hold the whole output.
    fn save(ch: *Child, bytes: []const u8) void {
        if (ch.save_fd < 0) return;
        var rest = bytes;
        while (rest.len > 0) {
            const rc = linux.write(ch.save_fd, rest.ptr, rest.len);
            switch (linux.errno(rc)) {
                .SUCCESS => rest = rest[rc..],
                .INTR => {},
                else => {
                    _ = linux.close(ch.save_fd);
                    ch.save_fd = -1;
                    if (ch.save_path) |path| _ = linux.unlink(path.ptr);
                    return;
                },
            }
        }
    }

    /// The path of the file holding the whole output, when it was saved whole.
    pub fn savedPath(ch: *const Child) ?[]const u8 {
        return if (ch.save_fd >= 0) ch.save_path else null;
    }

    fn closeOutput(ch: *Child) void {
        if (ch.out_fd >= 0) _ = linux.close(ch.out_fd);
        ch.out_fd = -1;
    }

    /// Reaps the process if it exited. Once it has, the output is what the pipe holds now:
    /// background processes it left behind may keep the pipe open, and are not waited for.
    fn reap(ch: *Child, gpa: std.mem.Allocator) void {
        if (ch.status != null) return;
        var status: u32 = 0;
        const rc = linux.waitpid(ch.pid, &status, linux.W.NOHANG);
        if (linux.errno(rc) != .SUCCESS or rc == 0) return;
        ch.status = status;
        ch.drain(gpa);
        ch.closeOutput();
        if (ch.pidfd >= 0) _ = linux.close(ch.pidfd);
        ch.pidfd = -1;
    }

    pub fn destroy(ch: *Child, gpa: std.mem.Allocator) void {
        if (ch.status == null) {
            ch.killGroup();
            var status: u32 = 0;
            _ = linux.waitpid(ch.pid, &status, 0); // SIGKILL: at once
        }
        ch.closeOutput();
        if (ch.pidfd >= 0) _ = linux.close(ch.pidfd);
        if (ch.save_fd >= 0) _ = linux.close(ch.save_fd);
        if (ch.save_path) |path| gpa.free(path);
        if (ch.progress_id) |id| gpa.free(id);
        ch.output.deinit(gpa);
        gpa.destroy(ch);
    }
};

pub const SpawnError = error{ CannotStart, OutOfMemory };

// glibc's posix_spawn: unlike std.process.spawn it sets the child's signal mask, so that a
// command does not inherit the SIGINT print mode blocks in every thread. The opaque types
// are given more room than glibc's (336 and 80 bytes on x86_64 and aarch64).
const SpawnAttr = extern struct { bytes: [512]u8 align(16) = undefined };
const FileActions = extern struct { bytes: [256]u8 align(16) = undefined };
/// glibc's sigset_t (1024 bits), empty.
const GlibcSigset = extern struct { bits: [128]u8 align(8) = @splat(0) };
const POSIX_SPAWN_SETPGROUP: c_short = 0x02;
const POSIX_SPAWN_SETSIGMASK: c_short = 0x08;
extern "c" fn posix_spawnattr_init(attr: *SpawnAttr) c_int;
extern "c" fn posix_spawnattr_destroy(attr: *SpawnAttr) c_int;
extern "c" fn posix_spawnattr_setflags(attr: *SpawnAttr, flags: c_short) c_int;
extern "c" fn posix_spawnattr_setpgroup(attr: *SpawnAttr, pgroup: linux.pid_t) c_int;
extern "c" fn posix_spawnattr_setsigmask(attr: *SpawnAttr, mask: *const GlibcSigset) c_int;
extern "c" fn posix_spawn_file_actions_init(fa: *FileActions) c_int;
extern "c" fn posix_spawn_file_actions_destroy(fa: *FileActions) c_int;
extern "c" fn posix_spawn_file_actions_adddup2(fa: *FileActions, fd: c_int, new_fd: c_int) c_int;
extern "c" fn posix_spawn_file_actions_addopen(fa: *FileActions, fd: c_int, path: [*:0]const u8, flags: c_int, mode: linux.mode_t) c_int;
extern "c" fn posix_spawn_file_actions_addchdir_np(fa: *FileActions, path: [*:0]const u8) c_int;
extern "c" fn mkostemps(template: [*:0]u8, suffix_len: c_int, flags: c_int) c_int;
extern "c" fn posix_spawnp(pid: *linux.pid_t, file: [*:0]const u8, fa: *const FileActions, attr: *const SpawnAttr, argv: [*:null]const ?[*:0]const u8, envp: [*:null]const ?[*:0]const u8) c_int;

/// Starts `options.argv` (the program found on PATH) in a process group of its own, with no
/// signal blocked, stdin from /dev/null, stdout and stderr into one pipe. `why` names the
/// failure.
pub fn spawn(gpa: std.mem.Allocator, options: Options, now: f64, why: *[]const u8) SpawnError!*Child {
    var arena_state: std.heap.ArenaAllocator = .init(gpa);
    defer arena_state.deinit();
    const arena = arena_state.allocator();
    const argv = try arena.allocSentinel(?[*:0]const u8, options.argv.len, null);
    for (options.argv, 0..) |arg, i| argv[i] = try arena.dupeZ(u8, arg);
    const cwd: ?[:0]const u8 = if (options.cwd) |d| try arena.dupeZ(u8, d) else null;
    const ch = try gpa.create(Child);
    errdefer gpa.destroy(ch);
    const progress_id = if (options.progress_id) |id| try gpa.dupe(u8, id) else null;
    errdefer if (progress_id) |id| gpa.free(id);

    var fds: [2]i32 = undefined;
    if (linux.errno(linux.pipe2(&fds, .{ .CLOEXEC = true })) != .SUCCESS) {
        why.* = "no pipe";
        return error.CannotStart;
    }
    var attr: SpawnAttr = .{};
    var fa: FileActions = .{};
    const empty: GlibcSigset = .{};
    var rc = posix_spawnattr_init(&attr);
    if (rc == 0) rc = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK);
    if (rc == 0) rc = posix_spawnattr_setpgroup(&attr, 0);
    if (rc == 0) rc = posix_spawnattr_setsigmask(&attr, &empty);
    if (rc == 0) rc = posix_spawn_file_actions_init(&fa);
    if (rc == 0) rc = posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", @bitCast(linux.O{ .ACCMODE = .RDONLY }), 0);
    if (rc == 0) rc = posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
    if (rc == 0) rc = posix_spawn_file_actions_adddup2(&fa, fds[1], 2);
    if (rc == 0) if (cwd) |d| {
        rc = posix_spawn_file_actions_addchdir_np(&fa, d.ptr);
    };
    var pid: linux.pid_t = 0;
    if (rc == 0) rc = posix_spawnp(&pid, argv[0].?, &fa, &attr, argv.ptr, @ptrCast(std.c.environ));
    _ = posix_spawn_file_actions_destroy(&fa);
    _ = posix_spawnattr_destroy(&attr);
    _ = linux.close(fds[1]);
    if (rc != 0) {
        _ = linux.close(fds[0]);
        why.* = errnoName(rc);
        return error.CannotStart;
    }
    _ = linux.fcntl(fds[0], linux.F.SETFL, @as(u32, @bitCast(linux.O{ .NONBLOCK = true })));
    const pidfd_rc = linux.pidfd_open(pid, 0);
    ch.* = .{
        .pid = pid,
        .pidfd = if (linux.errno(pidfd_rc) == .SUCCESS) @intCast(pidfd_rc) else -1,
        .out_fd = fds[0],
        .max_output = options.max_output,
        .keep_tail = options.keep_tail,
        .save_output = options.save_output,
        .deadline = now + options.timeout,
        .waiter = 0,
        .progress_id = progress_id,
    };
    return ch;
}

fn errnoName(rc: c_int) []const u8 {
    const e: linux.E = @enumFromInt(rc);
    return switch (e) {
        .NOENT => "FileNotFound",
        .ACCES => "AccessDenied",
        .NOEXEC => "InvalidExe",
        .NOTDIR => "NotDir",
        .NOMEM => "SystemResources",
        else => @tagName(e),
    };
}

/// The running children of a host, and the eventfd another thread writes to wake their poll.
pub const Children = struct {
    list: std.ArrayList(*Child) = .empty,
    wake_fd: i32,
    /// Set from any thread (cancelAsync); the host's thread kills the children when it sees it.
    canceled: std.atomic.Value(bool) = .init(false),

    /// Without pidfds, how often an exit is looked for (milliseconds).
    const reap_poll_ms = 20;

    pub fn init() Children {
        const rc = linux.eventfd(0, linux.EFD.CLOEXEC | linux.EFD.NONBLOCK);
        return .{ .wake_fd = if (linux.errno(rc) == .SUCCESS) @intCast(rc) else -1 };
    }

    pub fn deinit(cs: *Children, gpa: std.mem.Allocator) void {
        for (cs.list.items) |ch| ch.destroy(gpa);
        cs.list.deinit(gpa);
        if (cs.wake_fd >= 0) _ = linux.close(cs.wake_fd);
    }

    /// From any thread: the children are to be killed; the poll wakes.
    pub fn cancelAsync(cs: *Children) void {
        cs.canceled.store(true, .release);
        if (cs.wake_fd >= 0) {
            const one: u64 = 1;
            _ = linux.write(cs.wake_fd, std.mem.asBytes(&one), 8);
        }
    }

    pub fn clearCancel(cs: *Children) void {
        cs.canceled.store(false, .release);
        if (cs.wake_fd >= 0) {
            var n: u64 = 0;
            _ = linux.read(cs.wake_fd, std.mem.asBytes(&n), 8);
        }
    }

    pub fn isCanceled(cs: *const Children) bool {
        return cs.canceled.load(.acquire);
    }

    pub fn remove(cs: *Children, ch: *Child) void {
        for (cs.list.items, 0..) |x, i| if (x == ch) {
            _ = cs.list.swapRemove(i);
            return;
        };
    }

    /// Kills every child not done (a cancel).
    pub fn killAll(cs: *Children) void {
        for (cs.list.items) |ch| if (ch.status == null) {
            ch.canceled = true;
            ch.killGroup();
        };
    }

    /// Waits until a child has more output or ended, a deadline passed, the cancel came, or
    /// `until` (monotonic seconds) passed; then reads, reaps and kills what is due. Calls
    /// `on_done(ctx, child)` for each child that finished in this call.
    pub fn wait(cs: *Children, gpa: std.mem.Allocator, now: *const fn () f64, until: f64, ctx: anytype, comptime on_done: fn (@TypeOf(ctx), *Child) void) void {
        var fds: [129]linux.pollfd = undefined;
        var n: usize = 0;
        if (cs.wake_fd >= 0) {
            fds[n] = .{ .fd = cs.wake_fd, .events = linux.POLL.IN, .revents = 0 };
            n += 1;
        }
        var deadline = until;
        var need_reap_poll = false;
        for (cs.list.items) |ch| {
            if (ch.done()) continue;
            if (ch.status == null) deadline = @min(deadline, ch.deadline);
            if (n + 2 > fds.len) { // more children than the poll takes: looked at often
                need_reap_poll = true;
                continue;
            }
            if (ch.out_fd >= 0) {
                fds[n] = .{ .fd = ch.out_fd, .events = linux.POLL.IN, .revents = 0 };
                n += 1;
            }
            if (ch.pidfd >= 0) {
                fds[n] = .{ .fd = ch.pidfd, .events = linux.POLL.IN, .revents = 0 };
                n += 1;
            } else if (ch.status == null) need_reap_poll = true;
        }
        var timeout_ms: i32 = -1;
        if (deadline != std.math.inf(f64)) {
            const ms = @ceil((deadline - now()) * 1000);
            timeout_ms = if (ms <= 0) 0 else if (ms > 3_600_000) 3_600_000 else @intFromFloat(ms);
        }
        if (need_reap_poll and (timeout_ms < 0 or timeout_ms > reap_poll_ms)) timeout_ms = reap_poll_ms;
        if (!cs.isCanceled()) _ = linux.poll(&fds, n, timeout_ms);
        if (cs.isCanceled()) cs.killAll();
        const t = now();
        var i: usize = 0;
        while (i < cs.list.items.len) : (i += 1) {
            const ch = cs.list.items[i];
            if (ch.done()) continue;
            ch.drain(gpa);
            if (ch.status == null and t >= ch.deadline) {
                ch.timed_out = true;
                ch.killGroup();
            }
            ch.reap(gpa);
            if (ch.done()) on_done(ctx, ch);
        }
    }
};
