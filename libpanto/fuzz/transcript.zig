//! What the user of a turn saw, written down so that two runs of the same bytes (read whole,
//! or a few bytes at a time) can be compared: they must see the same events and failure.
const std = @import("std");
const Allocator = std.mem.Allocator;
const ev = @import("../src/event.zig");
const errors = @import("../src/errors.zig");

pub const Transcript = struct {
    gpa: Allocator,
    bytes: std.ArrayList(u8) = .empty,

    pub fn init(gpa: Allocator) Transcript {
        return .{ .gpa = gpa };
    }

    pub fn deinit(t: *Transcript) void {
        t.bytes.deinit(t.gpa);
    }

    pub fn event(t: *Transcript, e: ev.Event) Allocator.Error!void {
        const l = &t.bytes;
        const gpa = t.gpa;
        switch (e) {
            .message_start => |s| try l.print(gpa, "message_start {s} {s}\n", .{ s.id, s.model }),
            .block_start => |s| try l.print(gpa, "block_start {d} {t}\n", .{ s.index, s.kind }),
            .content_delta => |d| try l.print(gpa, "content_delta {d} {t} {s}\n", .{ d.index, d.kind, d.text }),
            .block_complete => |c| try l.print(gpa, "block_complete {d} {t} {s}\n", .{ c.index, c.kind, c.text }),
            .message_end => |m| try l.print(gpa, "message_end {t} {s} {any}\n", .{ m.stop_reason, m.provider_stop_reason, m.usage }),
            .tool_details => |d| try l.print(gpa, "tool_details {d} {s} {s}\n", .{ d.index, d.id, d.name }),
            .tool_call_start => |s| try l.print(gpa, "tool_call_start {s} {s} {s} {}\n", .{ s.id, s.name, s.input, s.awaiting_result }),
            .tool_result => |r| try l.print(gpa, "tool_result {s} {s} {s} {}\n", .{ r.id, r.name, r.content, r.is_error }),
            .provider_retry => |r| try l.print(gpa, "provider_retry {d} {d} {d} {s}\n", .{ r.attempt, r.delay_ms, r.http_status, r.reason }),
            .compaction_start => |c| try l.print(gpa, "compaction_start {d} {s}\n", .{ c.tokens_before, c.reason }),
            .compaction_end => |c| try l.print(gpa, "compaction_end {d} {d} {d} {s}\n", .{ c.tokens_before, c.tokens_after, c.message_count, c.summary }),
            .tool_progress => |p| try l.print(gpa, "tool_progress {s} {s} {s} {?d}\n", .{ p.id, p.name, p.text, p.fraction }),
            .approval_request => |a| for (a.calls) |c| try l.print(gpa, "approval_request {s} {s} {s}\n", .{ c.id.slice(), c.name.slice(), c.input.slice() }),
            .message_complete => |m| try l.print(gpa, "message_complete {t} {s} {any}\n", .{ m.stop_reason, m.provider_stop_reason, m.usage }),
            .user_message => |u| try l.print(gpa, "user_message {t} {s}\n", .{ u.source, u.text }),
        }
    }

    pub fn failure(t: *Transcript, err: anyerror, detail: *const errors.Detail) Allocator.Error!void {
        try t.bytes.print(t.gpa, "error {t} {d} {s} {s}\n", .{ err, detail.http_status, detail.error_type.items, detail.message.items });
    }

    /// Panics, showing both, unless `other` saw the same as `t`.
    pub fn expectSame(t: *const Transcript, other: *const Transcript, what: []const u8) void {
        if (std.mem.eql(u8, t.bytes.items, other.bytes.items)) return;
        std.debug.panic("{s}: the transcripts differ\n--- one:\n{s}--- other:\n{s}", .{ what, t.bytes.items, other.bytes.items });
    }
};
