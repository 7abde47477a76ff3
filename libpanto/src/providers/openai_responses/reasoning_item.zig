//! A reasoning item as panto keeps it: in the conversation's thinking block, its summary as
//! the block's text and `<item id> <encrypted_content>` as its signature. With `store: false`
//! the API keeps nothing: the item goes back whole, in place, on every later request to the
//! same provider and model (request.zig), or the model loses its reasoning between tool calls.
//! Kept as two strings, not as the JSON received, so that a signature from an imported
//! conversation is always written back as strings, never as raw JSON.
const std = @import("std");

pub const Parts = struct { id: []const u8, encrypted_content: []const u8 };

/// The signature for an item (the caller joins: id, a space, encrypted_content).
pub fn split(signature: []const u8) Parts {
    const at = std.mem.lastIndexOfScalar(u8, signature, ' ') orelse return .{ .id = "", .encrypted_content = signature };
    return .{ .id = signature[0..at], .encrypted_content = signature[at + 1 ..] };
}

/// `{"type":"reasoning","id":..,"summary":[..],"encrypted_content":..}`, the summary the
/// thinking text as one part (the API reads the encrypted content; the summary is what the
/// user saw).
pub fn write(s: *std.json.Stringify, text: []const u8, signature: []const u8) std.Io.Writer.Error!void {
    const parts = split(signature);
    try s.beginObject();
    try s.objectField("type");
    try s.write("reasoning");
    if (parts.id.len > 0) {
        try s.objectField("id");
        try s.write(parts.id);
    }
    try s.objectField("summary");
    try s.beginArray();
    if (text.len > 0) {
        try s.beginObject();
        try s.objectField("type");
        try s.write("summary_text");
        try s.objectField("text");
        try s.write(text);
        try s.endObject();
    }
    try s.endArray();
    try s.objectField("encrypted_content");
    try s.write(parts.encrypted_content);
    try s.endObject();
}

test "a signature splits at its last space: the item id, then the encrypted content" {
    const p = split("rs_1 gAAA=");
    try std.testing.expectEqualStrings("rs_1", p.id);
    try std.testing.expectEqualStrings("gAAA=", p.encrypted_content);
    const bare = split("gAAA=");
    try std.testing.expectEqualStrings("", bare.id);
    try std.testing.expectEqualStrings("gAAA=", bare.encrypted_content);
}
