//! While a turn runs on the main thread, a thread reads the terminal: Ctrl-C or Esc cancels
//! the turn (App.cancelTurn, safe from any thread); anything else goes to the sink when there
//! is one (a turn's prompt: turn_input.zig), else is kept for the next prompt (a command). A
//! pipe wakes the thread when the turn is over; join hands the kept bytes back.
const std = @import("std");
const c = std.c;
const App = @import("../app.zig").App;

pub const Watcher = struct {
    app: *App,
    fd: c.fd_t,
    wake: [2]c.fd_t = .{ -1, -1 },
    thread: ?std.Thread = null,
    typed: [4096]u8 = undefined,
    typed_len: usize = 0,
    sink: ?Sink = null,

    /// Takes what is typed, on the watcher's thread.
    pub const Sink = struct {
        ctx: *anyopaque,
        bytes: *const fn (ctx: *anyopaque, bytes: []const u8) void,
    };

    /// Starts watching `fd`. When no thread or pipe can be had, the turn runs without it
    /// (Ctrl-C then waits for the turn's end, and is taken as typed).
    pub fn start(app: *App, fd: c.fd_t) Watcher {
        var w: Watcher = .{ .app = app, .fd = fd };
        if (c.pipe(&w.wake) != 0) w.wake = .{ -1, -1 };
        return w;
    }

    /// Runs the thread: separate from `start` because the thread needs the Watcher's final
    /// address.
    pub fn spawn(w: *Watcher) void {
        if (w.wake[0] < 0) return;
        w.thread = std.Thread.spawn(.{}, watch, .{w}) catch null;
    }

    fn watch(w: *Watcher) void {
        while (true) {
            var fds = [_]c.pollfd{
                .{ .fd = w.fd, .events = c.POLL.IN, .revents = 0 },
                .{ .fd = w.wake[0], .events = c.POLL.IN, .revents = 0 },
            };
            if (c.poll(&fds, fds.len, -1) < 0) {
                if (c.errno(-1) == .INTR) continue;
                return;
            }
            if (fds[1].revents != 0) return;
            if (fds[0].revents & c.POLL.IN == 0) return; // hung up
            var buf: [256]u8 = undefined;
            const n = c.read(w.fd, &buf, buf.len);
            if (n <= 0) return;
            const read = buf[0..@intCast(n)];
            var from: usize = 0; // the bytes not yet given to the sink
            for (read, 0..) |b, i| {
                if (b == 0x03 or (b == 0x1b and i + 1 == read.len and !w.moreWithin(escape_wait_ms))) {
                    if (w.sink) |s| s.bytes(s.ctx, read[from..i]);
                    from = i + 1;
                    w.app.cancelTurn();
                } else if (w.sink == null and w.typed_len < w.typed.len) {
                    w.typed[w.typed_len] = b;
                    w.typed_len += 1;
                }
            }
            if (w.sink) |s| if (from < read.len) s.bytes(s.ctx, read[from..]);
        }
    }

    /// An ESC that ends a read is the Escape key unless more follows at once: a key's escape
    /// sequence (an arrow: ESC [ D) is written whole, and a read may cut it.
    const escape_wait_ms = 50;

    fn moreWithin(w: *const Watcher, ms: c_int) bool {
        var fds = [_]c.pollfd{.{ .fd = w.fd, .events = c.POLL.IN, .revents = 0 }};
        return c.poll(&fds, 1, ms) > 0;
    }

    /// Stops the thread; what was typed meanwhile (valid until the Watcher goes).
    pub fn stop(w: *Watcher) []const u8 {
        if (w.thread) |t| {
            _ = c.write(w.wake[1], "x", 1);
            t.join();
            w.thread = null;
        }
        for (&w.wake) |*fd| if (fd.* >= 0) {
            _ = c.close(fd.*);
            fd.* = -1;
        };
        return w.typed[0..w.typed_len];
    }
};
