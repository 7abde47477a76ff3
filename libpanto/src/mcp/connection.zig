//! The client's seam over its two transports (docs/design/mcp.md, decision 1): "send a
//! message", "next message before a deadline", and an end. stdio.zig is a process's lines,
//! http.zig a Streamable HTTP session's POSTs and their answers.
const std = @import("std");
const stdio = @import("stdio.zig");
const http = @import("http.zig");

pub const IoError = http.IoError;

pub const Connection = union(enum) {
    stdio: *stdio.Process,
    http: *http.Session,

    pub fn writeLine(conn: Connection, line: []const u8, deadline_ns: i64) IoError!void {
        return switch (conn) {
            .stdio => |p| p.writeLine(line, deadline_ns),
            .http => |s| s.writeLine(line, deadline_ns),
        };
    }

    pub fn readLine(conn: Connection, deadline_ns: i64) IoError![]const u8 {
        return switch (conn) {
            .stdio => |p| p.readLine(deadline_ns),
            .http => |s| s.readLine(deadline_ns),
        };
    }

    /// Ends a server that broke the protocol: its process, or the answer being read.
    pub fn kill(conn: Connection) void {
        switch (conn) {
            .stdio => |p| p.kill(),
            .http => |s| s.kill(),
        }
    }

    pub fn close(conn: Connection) void {
        switch (conn) {
            .stdio => |p| p.close(),
            .http => |s| s.close(),
        }
    }

    /// What the server said last about a failure: a process's stderr tail, an HTTP
    /// exchange's problem.
    pub fn stderrTail(conn: Connection) []const u8 {
        return switch (conn) {
            .stdio => |p| p.stderrTail(),
            .http => |s| s.problemText(),
        };
    }

    /// A stdio server that exited while no request waited (an HTTP session cannot tell).
    pub fn ended(conn: Connection) bool {
        return switch (conn) {
            .stdio => |p| p.ended(),
            .http => false,
        };
    }

    pub fn cancelFd(conn: Connection) std.c.fd_t {
        return switch (conn) {
            .stdio => |p| p.cancel_fd,
            .http => |s| s.cancel_fd,
        };
    }

    /// Readable once the wait should end (a turn's cancel); -1: none.
    pub fn setCancelFd(conn: Connection, fd: std.c.fd_t) void {
        switch (conn) {
            .stdio => |p| p.cancel_fd = fd,
            .http => |s| s.cancel_fd = fd,
        }
    }
};
