//! Stable lower-case names of the ABI's enum values, shared by every binding so that all four
//! languages print the same words.
const std = @import("std");
const panto = @import("panto");
const abi = @import("abi.zig");

/// The tag name of `value` in `Enum` as a static C string, or "unknown".
fn nameOf(comptime Enum: type, value: c_int) [*:0]const u8 {
    inline for (std.meta.fields(Enum)) |f| {
        if (f.value == value) return f.name;
    }
    return "unknown";
}

pub fn status(value: c_int) [*:0]const u8 {
    return nameOf(abi.Status, value);
}

pub fn eventKind(value: c_int) [*:0]const u8 {
    return nameOf(abi.EventKind, value);
}

pub fn blockKind(value: c_int) [*:0]const u8 {
    return nameOf(panto.BlockKind, value);
}

pub fn stopReason(value: c_int) [*:0]const u8 {
    return nameOf(panto.StopReason, value);
}

pub fn partKind(value: c_int) [*:0]const u8 {
    return nameOf(panto.event.PartKind, value);
}

test "names" {
    try std.testing.expectEqualStrings("authentication", std.mem.span(status(-10)));
    try std.testing.expectEqualStrings("done", std.mem.span(status(2)));
    try std.testing.expectEqualStrings("unknown", std.mem.span(status(-999)));
    try std.testing.expectEqualStrings("content_delta", std.mem.span(eventKind(3)));
    try std.testing.expectEqualStrings("tool_call", std.mem.span(blockKind(3)));
    try std.testing.expectEqualStrings("end_turn", std.mem.span(stopReason(1)));
    try std.testing.expectEqualStrings("media", std.mem.span(partKind(2)));
    try std.testing.expectEqualStrings("document", std.mem.span(partKind(4)));
    try std.testing.expectEqualStrings("unknown", std.mem.span(partKind(0)));
}
