//! The terminal: raw input mode and its size. Output processing (OPOST) stays on, so the
//! streamed answer's "\n" still returns the carriage; only the input side is raw: no echo, no
//! line buffering, and Ctrl-C, Ctrl-Z, Ctrl-S arrive as bytes instead of signals.
const std = @import("std");
const c = std.c;

pub const Error = error{NotATerminal};

pub const Raw = struct {
    fd: c.fd_t,
    saved: c.termios,

    /// Puts `fd` (stdin) in raw input mode; `restore` undoes it.
    pub fn enter(fd: c.fd_t) Error!Raw {
        var saved: c.termios = undefined;
        if (c.tcgetattr(fd, &saved) != 0) return error.NotATerminal;
        var raw = saved;
        raw.iflag.ICRNL = false;
        raw.iflag.IXON = false;
        raw.iflag.BRKINT = false;
        raw.iflag.INPCK = false;
        raw.iflag.ISTRIP = false;
        raw.lflag.ECHO = false;
        raw.lflag.ICANON = false;
        raw.lflag.ISIG = false;
        raw.lflag.IEXTEN = false;
        raw.cc[@intFromEnum(c.V.MIN)] = 1;
        raw.cc[@intFromEnum(c.V.TIME)] = 0;
        if (c.tcsetattr(fd, .FLUSH, &raw) != 0) return error.NotATerminal;
        return .{ .fd = fd, .saved = saved };
    }

    pub fn restore(r: *const Raw) void {
        _ = c.tcsetattr(r.fd, .FLUSH, &r.saved);
    }
};

/// What the terminal is told when the prompt goes: bracketed paste off, colors reset.
pub const leave_sequence = "\x1b[?2004l\x1b[0m";

var signal_raw: ?Raw = null;

/// SIGTERM and SIGHUP: the terminal is put back as it was (tcsetattr is async-signal-safe),
/// then the process dies of the signal as it would have.
pub fn restoreOnSignals(r: Raw) void {
    signal_raw = r;
    const act: std.posix.Sigaction = .{
        .handler = .{ .handler = onSignal },
        .mask = std.posix.sigemptyset(),
        .flags = std.posix.SA.RESETHAND,
    };
    std.posix.sigaction(.TERM, &act, null);
    std.posix.sigaction(.HUP, &act, null);
}

fn onSignal(sig: std.posix.SIG) callconv(.c) void {
    if (signal_raw) |r| r.restore();
    _ = c.write(1, leave_sequence, leave_sequence.len);
    _ = c.raise(sig); // the default action again (RESETHAND): delivered once this returns
}

/// Ctrl-Z: the terminal as it was, the process stopped as a shell's job; raw again when the
/// shell continues it (fg).
pub fn suspendJob(r: *Raw) void {
    r.restore();
    _ = c.raise(.TSTP);
    r.* = Raw.enter(r.fd) catch return;
}

pub fn isTerminal(fd: c.fd_t) bool {
    return c.isatty(fd) == 1;
}

/// Columns and rows of the terminal on `fd`; 80x24 when it does not say (not a tty, or 0).
pub const Size = struct { cols: u16 = 80, rows: u16 = 24 };

pub fn size(fd: c.fd_t) Size {
    var ws: std.posix.winsize = .{ .row = 0, .col = 0, .xpixel = 0, .ypixel = 0 };
    if (c.ioctl(fd, c.T.IOCGWINSZ, @intFromPtr(&ws)) != 0) return .{};
    return .{
        .cols = if (ws.col == 0) 80 else ws.col,
        .rows = if (ws.row == 0) 24 else ws.row,
    };
}

test "a pipe is no terminal: raw mode refused, the size defaults" {
    var fds: [2]c.fd_t = undefined;
    try std.testing.expectEqual(@as(c_int, 0), c.pipe(&fds));
    defer _ = c.close(fds[0]);
    defer _ = c.close(fds[1]);
    try std.testing.expectError(error.NotATerminal, Raw.enter(fds[0]));
    try std.testing.expect(!isTerminal(fds[0]));
    try std.testing.expectEqual(Size{}, size(fds[0]));
}
