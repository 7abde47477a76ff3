//! Tool-call ids as a provider receives them. A conversation keeps each id as its provider made
//! it; another provider (a switch mid-conversation, an imported conversation) may not accept it
//! (Anthropic and OpenAI: 1 to 40 of [a-zA-Z0-9_-]). Such an id is sent as "call_" and the first
//! 32 hex digits of its SHA-256: the same for the call and its result, and in every request.
const std = @import("std");

pub const max_len = 40;

/// Room for a rewritten id: "call_" and 32 hex digits.
pub const Buffer = [5 + 32]u8;

/// The id to send for `id`: itself when every provider accepts it, else its rewrite in `buf`.
pub fn forWire(id: []const u8, buf: *Buffer) []const u8 {
    if (accepted(id)) return id;
    var digest: [32]u8 = undefined;
    std.crypto.hash.sha2.Sha256.hash(id, &digest, .{});
    buf[0..5].* = "call_".*;
    buf[5..].* = std.fmt.bytesToHex(digest[0..16], .lower);
    return buf;
}

fn accepted(id: []const u8) bool {
    if (id.len == 0 or id.len > max_len) return false;
    for (id) |c| if (!(std.ascii.isAlphanumeric(c) or c == '_' or c == '-')) return false;
    return true;
}

test "ids the providers accept go as they are; others as call_ and 32 hex digits of their SHA-256" {
    var buf: Buffer = undefined;
    try std.testing.expectEqualStrings("toolu_01ABC-x", forWire("toolu_01ABC-x", &buf));
    try std.testing.expectEqualStrings("a" ** 40, forWire("a" ** 40, &buf));
    // sha256("a/b:c") = 3b07f80ca173745ac6521f355208224fbace... (sha256sum).
    try std.testing.expectEqualStrings("call_3b07f80ca173745ac6521f355208224f", forWire("a/b:c", &buf));
    const long = forWire("a" ** 41, &buf);
    try std.testing.expectEqual(@as(usize, 37), long.len);
    try std.testing.expect(std.mem.startsWith(u8, long, "call_"));
    try std.testing.expectEqual(@as(usize, 37), forWire("", &buf).len);
}
