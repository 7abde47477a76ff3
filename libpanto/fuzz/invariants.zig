//! What panto promises about a turn whatever the bytes it received, checked on every fuzzed
//! turn; a broken promise panics, which the fuzzer reports as a crash with its input.
//! The event order rules are those of tests/conformance/README.md ("What a turn with tools
//! looks like"); strings are UTF-8 (include/panto.h).
const std = @import("std");
const Allocator = std.mem.Allocator;
const ev = @import("../src/event.zig");
const errors = @import("../src/errors.zig");

/// Follows a turn's events and panics at the first one out of order.
pub const EventRules = struct {
    /// Check the order too, not only what every event holds.
    strict: bool,
    state: enum { before_message, in_message, in_block, after_message, complete } = .before_message,
    /// The blocks of the current message completed so far: the open block's index.
    blocks: u32 = 0,
    open_kind: ev.BlockKind = .none,
    /// The last event was a tool_call block's block_start: its tool_details comes next.
    details_due: bool = false,

    pub fn see(r: *EventRules, e: ev.Event) void {
        expectStrings(e);
        if (e == .tool_call_start and !isJsonObject(e.tool_call_start.input)) broken(e, "a tool input that is not a JSON object");
        if (!r.strict) return;
        if (r.details_due and e != .tool_details) broken(e, "a tool_call block_start not followed by its tool_details");
        switch (e) {
            .message_start => {
                if (r.state != .before_message) broken(e, "message_start inside a message");
                r.state = .in_message;
                r.blocks = 0;
            },
            .block_start => |s| {
                if (r.state != .in_message) broken(e, "block_start while a block is open, or outside a message");
                if (s.index != r.blocks) broken(e, "block indexes do not count from 0 in order");
                r.state = .in_block;
                r.open_kind = s.kind;
                r.details_due = s.kind == .tool_call;
            },
            .tool_details => |d| {
                if (!r.details_due or d.index != r.blocks) broken(e, "tool_details not right after its block_start");
                r.details_due = false;
            },
            .content_delta => |d| {
                if (r.state != .in_block or d.index != r.blocks or d.kind != r.open_kind) broken(e, "content_delta of a block that is not the open one");
                if (d.text.len == 0) broken(e, "an empty content_delta");
            },
            .block_complete => |c| {
                if (r.state != .in_block or c.index != r.blocks or c.kind != r.open_kind) broken(e, "block_complete of a block that is not the open one");
                r.state = .in_message;
                r.blocks += 1;
            },
            .message_end => {
                if (r.state != .in_message) broken(e, "message_end while a block is open, or outside a message");
                r.state = .after_message;
            },
            .tool_call_start => |s| {
                _ = s;
                if (r.state != .after_message) broken(e, "tool_call_start before its message ended");
            },
            .tool_result => if (r.state != .after_message) broken(e, "tool_result before its message ended"),
            .tool_progress => if (r.state != .after_message) broken(e, "tool_progress before its message ended"),
            .approval_request => if (r.state != .after_message) broken(e, "approval_request before its message ended"),
            .provider_retry => {
                if (r.state == .complete) broken(e, "provider_retry after message_complete");
                r.state = .before_message;
            },
            // Compaction comes before a request, so before its message_start.
            .compaction_start, .compaction_end => if (r.state != .before_message and r.state != .after_message) broken(e, "compaction inside a message"),
            .message_complete => {
                if (r.state != .after_message) broken(e, "message_complete before the message ended");
                r.state = .complete;
            },
            // A steer after a round's results, or a follow-up's turn after a message_complete.
            .user_message => {
                if (r.state != .after_message and r.state != .complete) broken(e, "user_message inside a message");
                r.state = .before_message;
            },
        }
    }

    /// The stream said it is done (null).
    pub fn expectDone(r: *const EventRules) void {
        if (r.strict and r.state != .complete) std.debug.panic("event order broken, the turn ended without message_complete: state {t}", .{r.state});
    }

    fn broken(e: ev.Event, rule: []const u8) noreturn {
        std.debug.panic("event order broken, {s}: {any}", .{ rule, e });
    }
};

fn expectStrings(e: ev.Event) void {
    const strings: []const []const u8 = switch (e) {
        .message_start => |s| &.{ s.id, s.model },
        .content_delta => |d| &.{d.text},
        .block_complete => |c| &.{ c.text, c.name },
        .message_end, .message_complete => |m| &.{m.provider_stop_reason},
        .tool_details => |d| &.{ d.id, d.name },
        .tool_call_start => |s| &.{ s.id, s.name, s.input },
        .tool_result => |r| &.{ r.id, r.name, r.content },
        .provider_retry => |r| &.{r.reason},
        .compaction_start => |c| &.{c.reason},
        .compaction_end => |c| &.{c.summary},
        .tool_progress => |p| &.{ p.id, p.name, p.text },
        .block_start => &.{},
        .approval_request => &.{},
        .user_message => |u| &.{u.text},
    };
    if (e == .approval_request) for (e.approval_request.calls) |c| {
        for ([_][]const u8{ c.id.slice(), c.name.slice(), c.input.slice() }) |s|
            if (!std.unicode.utf8ValidateSlice(s)) std.debug.panic("an event string is not UTF-8: {any}", .{e});
    };
    for (strings) |s| if (!std.unicode.utf8ValidateSlice(s)) std.debug.panic("an event string is not UTF-8: {any}", .{e});
}

fn isJsonObject(text: []const u8) bool {
    var buf: [64 * 1024]u8 = undefined;
    var fba: std.heap.FixedBufferAllocator = .init(&buf);
    const trimmed = std.mem.trimStart(u8, text, " \t\r\n");
    if (trimmed.len == 0 or trimmed[0] != '{') return false;
    return std.json.validate(fba.allocator(), text) catch true; // out of scratch memory: a deep object, assumed fine
}

/// A failure's detail: UTF-8, a message, and never the API key.
pub fn expectFailureDetail(err: anyerror, d: *const errors.Detail, api_key: []const u8) void {
    if (!std.unicode.utf8ValidateSlice(d.error_type.items) or !std.unicode.utf8ValidateSlice(d.message.items))
        std.debug.panic("the detail of a failure is not UTF-8: {t} {s} {s}", .{ err, d.error_type.items, d.message.items });
    if (d.message.items.len == 0) std.debug.panic("a failure has no message: {t}", .{err});
    if (std.mem.indexOf(u8, d.message.items, api_key) != null) std.debug.panic("the detail of a failure shows the API key: {t}", .{err});
}

/// Panics unless `bytes` is one JSON value.
pub fn expectJson(gpa: Allocator, bytes: []const u8, what: []const u8) Allocator.Error!void {
    if (!try std.json.validate(gpa, bytes)) std.debug.panic("{s} is not JSON: {s}", .{ what, bytes[0..@min(bytes.len, 2000)] });
}
