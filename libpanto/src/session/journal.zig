//! What a conversation records its changes through (Conversation.journal): each change
//! becomes one entry appended to the session's file, durably, before the call that made it
//! returns.
const std = @import("std");
const Allocator = std.mem.Allocator;
const Message = @import("../conversation.zig").Message;
const entry = @import("entry.zig");
const File = @import("file.zig").File;

pub const Journal = struct {
    pub const Error = error{ SessionWrite, OutOfMemory };

    gpa: Allocator,
    file: File,
    /// The entry being written (kept between entries: appending allocates nothing mostly).
    line: std.Io.Writer.Allocating,

    pub fn init(gpa: Allocator, file: File) Journal {
        return .{ .gpa = gpa, .file = file, .line = .init(gpa) };
    }

    pub fn deinit(j: *Journal) void {
        j.line.deinit();
        j.file.close();
    }

    /// A message appended.
    pub fn message(j: *Journal, m: *const Message) Error!void {
        j.line.clearRetainingCapacity();
        entry.message(&j.line.writer, m) catch return error.OutOfMemory;
        return j.flush();
    }

    /// The conversation cut to its first `message_count` messages.
    pub fn truncate(j: *Journal, message_count: usize) Error!void {
        j.line.clearRetainingCapacity();
        entry.truncate(&j.line.writer, message_count) catch return error.OutOfMemory;
        return j.flush();
    }

    /// The conversation replaced (an import).
    pub fn replace(j: *Journal, messages: []const Message) Error!void {
        j.line.clearRetainingCapacity();
        entry.replace(&j.line.writer, messages) catch return error.OutOfMemory;
        return j.flush();
    }

    /// The conversation compacted: it becomes [summary_message] + messages[first_kept..].
    pub fn compaction(j: *Journal, c: entry.Compaction) Error!void {
        j.line.clearRetainingCapacity();
        entry.compaction(&j.line.writer, c) catch return error.OutOfMemory;
        return j.flush();
    }

    /// Configuration keys set (only those a session records: see entry.ConfigRecord).
    pub fn config(j: *Journal, r: entry.ConfigRecord) Error!void {
        if (r.isEmpty()) return;
        j.line.clearRetainingCapacity();
        entry.config(&j.line.writer, r) catch return error.OutOfMemory;
        return j.flush();
    }

    /// The session named (entry.named).
    pub fn name(j: *Journal, text: []const u8) Error!void {
        j.line.clearRetainingCapacity();
        entry.named(&j.line.writer, text) catch return error.OutOfMemory;
        return j.flush();
    }

    /// The round the conversation's last message began, waiting for a person (entry
    /// `pending_round`), written only when it differs from `last`, the text this journal
    /// wrote for it last (kept by the caller, updated here).
    pub fn pendingRound(j: *Journal, calls: []const entry.PendingCall, results: []const @import("../conversation.zig").Block, last: *std.ArrayList(u8)) Error!void {
        j.line.clearRetainingCapacity();
        entry.pendingRound(&j.line.writer, calls, results) catch return error.OutOfMemory;
        if (std.mem.eql(u8, j.line.written(), last.items)) return;
        try last.ensureTotalCapacity(j.gpa, j.line.written().len);
        try j.file.append(j.line.written());
        last.clearRetainingCapacity();
        last.appendSliceAssumeCapacity(j.line.written());
    }

    /// Writes the raw entry `text` (a header).
    pub fn raw(j: *Journal, text: []const u8) Error!void {
        return j.file.append(text);
    }

    fn flush(j: *Journal) Error!void {
        defer if (j.line.writer.buffer.len > 1 << 20) { // (a large entry: give its memory back)
            j.line.deinit();
            j.line = .init(j.gpa);
        };
        try j.file.append(j.line.written());
    }
};
