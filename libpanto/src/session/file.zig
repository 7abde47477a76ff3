//! A session's file, open for appending and locked: entries are appended with one write(2)
//! each, then fsync'ed, and a write that fails is cut back off, so the file only ever holds
//! whole entries (or, after a crash mid-write, one torn last line, which the next opening
//! cuts off).
const std = @import("std");
const c = std.c;

pub const OpenError = error{ Locked, NotFound, Exists, Unwritable };

pub const How = enum {
    /// The file must exist.
    existing,
    /// The file must not exist: it is made.
    new,
    /// Opened if it exists, else made.
    either,
};

pub const File = struct {
    fd: c.fd_t,
    /// The file's length as far as this writer knows: where the next entry goes, and where
    /// a failed write is cut back to.
    size: u64,
    /// fsync after each entry (the "fsync" session option).
    sync: bool = true,
    /// A failed write could not be cut back off: no more entries may follow it.
    broken: bool = false,

    /// Opens `path` for appending and takes its exclusive lock (flock: held while the
    /// descriptor lives, released by the kernel when the process dies). `created` tells
    /// whether this call made the file.
    pub fn open(path: [:0]const u8, how: How, created: *bool) OpenError!File {
        const fd = try openFd(path, how, created);
        errdefer _ = c.close(fd);
        while (c.flock(fd, c.LOCK.EX | c.LOCK.NB) != 0) switch (c.errno(-1)) {
            .INTR => continue,
            .AGAIN => return error.Locked, // (EWOULDBLOCK)
            else => return error.Unwritable,
        };
        const end = c.lseek(fd, 0, c.SEEK.END);
        if (end < 0) return error.Unwritable;
        return .{ .fd = fd, .size = @intCast(end) };
    }

    pub fn close(f: *File) void {
        _ = c.close(f.fd); // (closing releases the lock)
        f.fd = -1;
    }

    /// Appends `bytes` (one entry, ending in "\n") with one write, then fsyncs. On failure the
    /// file is cut back to where it was, so that a later entry does not follow half of this
    /// one.
    pub fn append(f: *File, bytes: []const u8) error{SessionWrite}!void {
        if (f.broken) return error.SessionWrite;
        const written = while (true) {
            const n = c.write(f.fd, bytes.ptr, bytes.len);
            if (n >= 0) break @as(usize, @intCast(n));
            if (c.errno(n) != .INTR) break 0;
        };
        if (written == bytes.len and (!f.sync or fsyncRetrying(f.fd))) {
            f.size += bytes.len;
            return;
        }
        if (written > 0) f.cutBack();
        return error.SessionWrite;
    }

    /// Cuts the file to `len` bytes (a torn last line found by the loader).
    pub fn cut(f: *File, len: u64) error{SessionWrite}!void {
        if (c.ftruncate(f.fd, @intCast(len)) != 0) return error.SessionWrite;
        f.size = len;
        if (f.sync and !fsyncRetrying(f.fd)) return error.SessionWrite;
    }

    fn cutBack(f: *File) void {
        if (c.ftruncate(f.fd, @intCast(f.size)) != 0) f.broken = true;
    }

    /// Reads up to `buf.len` bytes at `offset`; fewer only at the end of the file.
    pub fn readAt(f: *const File, buf: []u8, offset: u64) error{Unreadable}!usize {
        return preadAll(f.fd, buf, offset);
    }
};

pub fn preadAll(fd: c.fd_t, buf: []u8, offset: u64) error{Unreadable}!usize {
    var got: usize = 0;
    while (got < buf.len) {
        const n = c.pread(fd, buf[got..].ptr, buf.len - got, @intCast(offset + got));
        if (n == 0) break;
        if (n < 0) {
            if (c.errno(n) == .INTR) continue;
            return error.Unreadable;
        }
        got += @intCast(n);
    }
    return got;
}

fn fsyncRetrying(fd: c.fd_t) bool {
    while (c.fsync(fd) != 0) if (c.errno(-1) != .INTR) return false;
    return true;
}

const rw_flags: c.O = .{ .ACCMODE = .RDWR, .APPEND = true, .CLOEXEC = true };

fn openFd(path: [:0]const u8, how: How, created: *bool) OpenError!c.fd_t {
    created.* = false;
    var tries: u8 = 0;
    while (tries < 8) : (tries += 1) {
        if (how != .new) {
            const fd = c.open(path, rw_flags);
            if (fd >= 0) return checkRegular(fd);
            switch (c.errno(fd)) {
                .INTR => continue,
                .NOENT => if (how == .existing) return error.NotFound,
                else => return error.Unwritable,
            }
        }
        var make = rw_flags;
        make.CREAT = true;
        make.EXCL = true;
        const fd = c.open(path, make, @as(c.mode_t, 0o600));
        if (fd >= 0) {
            created.* = true;
            return fd;
        }
        switch (c.errno(fd)) {
            .INTR => continue,
            .EXIST => if (how == .new) return error.Exists, // else: made meanwhile, open it
            else => return error.Unwritable,
        }
    }
    return error.Unwritable;
}

/// A session file is a regular file (not a FIFO that would block, not a directory).
fn checkRegular(fd: c.fd_t) OpenError!c.fd_t {
    var st: std.os.linux.Statx = undefined;
    const rc = std.os.linux.statx(fd, "", std.os.linux.AT.EMPTY_PATH, .{ .TYPE = true }, &st);
    if (std.os.linux.errno(rc) != .SUCCESS or (st.mode & std.os.linux.S.IFMT) != std.os.linux.S.IFREG) {
        _ = c.close(fd);
        return error.Unwritable;
    }
    return fd;
}
