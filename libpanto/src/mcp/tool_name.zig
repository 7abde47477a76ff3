//! The name an MCP tool is offered under: `SERVER__TOOL`, within the providers' tool-name rule
//! (1 to 64 of [A-Za-z0-9_-]; the server's name begins with a letter, as Gemini wants). One
//! rule for every language (docs/design/mcp.md, decision 2). Always prefixed, so a tool keeps
//! its name when another server is added, and two servers' tools of one name never clash.
const std = @import("std");

pub const max_len = 64;
/// A name too long or clashing is cut here, then given `_` and 8 hex digits of a hash.
const cut_len = max_len - 9;

/// The offered name of `tool` on `server` (a valid server name, server_config.zig) in `buf`.
/// `taken` says whether a name is already offered: a clash gets the hashed form.
pub fn make(buf: *[max_len]u8, server: []const u8, tool: []const u8, taken: anytype) []const u8 {
    var full: [2 * max_len + 256]u8 = undefined;
    var len: usize = 0;
    for ([_][]const u8{ server, "__", tool }) |piece| for (piece) |c| {
        if (len == full.len) break;
        // Bytes the providers refuse ('.', '/', ' ', UTF-8...) become '_'.
        full[len] = if (std.ascii.isAlphanumeric(c) or c == '_' or c == '-') c else '_';
        len += 1;
    };
    if (len <= max_len and !taken.has(full[0..len])) {
        @memcpy(buf[0..len], full[0..len]);
        return buf[0..len];
    }
    // The hash is of the server's and the tool's own names, so it is the same at every start.
    var h: std.hash.Wyhash = .init(0);
    h.update(server);
    h.update("/");
    h.update(tool);
    const n = @min(len, cut_len);
    @memcpy(buf[0..n], full[0..n]);
    const tail = std.fmt.bufPrint(buf[n..], "_{x:0>8}", .{@as(u32, @truncate(h.final()))}) catch unreachable;
    return buf[0 .. n + tail.len];
}

const NoneTaken = struct {
    fn has(_: NoneTaken, _: []const u8) bool {
        return false;
    }
};

test "mcp: tool names are prefixed, mapped to the providers' bytes, and cut with a hash when long or clashing" {
    var buf: [max_len]u8 = undefined;
    try std.testing.expectEqualStrings("files__read_file", make(&buf, "files", "read_file", NoneTaken{}));
    try std.testing.expectEqualStrings("gh__repo_list-all", make(&buf, "gh", "repo.list-all", NoneTaken{}));
    const long = make(&buf, "srv", "x" ** 100, NoneTaken{});
    try std.testing.expectEqual(@as(usize, 64), long.len);
    try std.testing.expect(std.mem.startsWith(u8, long, "srv__xxx"));
    try std.testing.expect(@import("../tools.zig").validName(long));
    var again: [max_len]u8 = undefined;
    try std.testing.expectEqualStrings(long, make(&again, "srv", "x" ** 100, NoneTaken{}));

    // "a.b" and "a/b" both map to "s__a_b": the second is given the hashed form.
    const Taken = struct {
        fn has(_: @This(), name: []const u8) bool {
            return std.mem.eql(u8, name, "s__a_b");
        }
    };
    const second = make(&buf, "s", "a/b", Taken{});
    try std.testing.expect(std.mem.startsWith(u8, second, "s__a_b_"));
    try std.testing.expectEqual(@as(usize, "s__a_b_".len + 8), second.len);
}
