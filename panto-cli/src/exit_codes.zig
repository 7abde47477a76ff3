//! The command's exit codes, one per family of failure (docs/cli.md, "Exit codes"), and the
//! stable name of each turn error (the C ABI's panto_status_name words, as --json prints them).
const std = @import("std");
const panto = @import("panto");

pub const ok: u8 = 0;
/// panto itself failed: out of memory, a session file that cannot be written during a turn,
/// a tool host that broke.
pub const internal: u8 = 1;
/// A bad option or value, a refused config file, a session that cannot be opened.
pub const usage: u8 = 2;
pub const auth: u8 = 3;
pub const rate_limit: u8 = 4;
pub const connection: u8 = 5;
pub const rejected: u8 = 6;
pub const tools: u8 = 7;
/// 128 + SIGINT, as shells report a process killed by it.
pub const canceled: u8 = 130;

/// The exit code of a turn that failed with `err`.
pub fn ofError(err: anyerror) u8 {
    return switch (err) {
        error.Authentication, error.PermissionDenied => auth,
        error.RateLimit, error.Overloaded => rate_limit,
        error.Connection, error.Timeout, error.Protocol => connection,
        error.InvalidRequest, error.NotFound, error.Server => rejected,
        error.ToolLoop, error.Capability, error.Output => tools,
        error.Canceled => canceled,
        error.Config, error.InvalidConfig => usage,
        else => internal,
    };
}

/// The stable lower-case name of `err` (panto_status_name's), e.g. "rate_limit".
pub fn name(err: anyerror) []const u8 {
    return switch (err) {
        error.Authentication => "authentication",
        error.PermissionDenied => "permission",
        error.NotFound => "not_found",
        error.InvalidRequest => "invalid_request",
        error.RateLimit => "rate_limit",
        error.Overloaded => "overloaded",
        error.Server => "server",
        error.Timeout => "timeout",
        error.Connection => "connection",
        error.Protocol => "protocol",
        error.Canceled => "canceled",
        error.ToolLoop => "tool_loop",
        error.Capability => "capability",
        error.OutOfMemory => "out_of_memory",
        error.SessionWrite => "session",
        error.Config, error.InvalidConfig => "config",
        error.Output => "output",
        else => "internal",
    };
}

test "every turn error has a family and a name" {
    inline for (@typeInfo(panto.TurnError).error_set.?) |e| {
        const err = @field(anyerror, e.name);
        try std.testing.expect(!std.mem.eql(u8, name(err), "internal"));
        _ = ofError(err);
    }
    try std.testing.expectEqual(rate_limit, ofError(error.Overloaded));
    try std.testing.expectEqual(canceled, ofError(error.Canceled));
    try std.testing.expectEqualStrings("permission", name(error.PermissionDenied));
}
