//! The question before a call that asks (an ApprovalRequest's call, turn.Answer): the tool's
//! name and a one-line summary of its input (the command for bash, the path for a write),
//! then one key: y allow once, p allow calls like it (a rule: `bash(git status*)`) and a
//! allow the tool for the rest of the run, n deny, r deny with a reason typed on one line (the
//! model gets it), v the whole input, Esc or Ctrl-C deny and cancel the turn. A file tool's
//! path outside the working directory is said to be so (why it asks). The keys are read from the terminal itself: the caller has stopped the
//! watcher thread, and keys typed before the question do not answer it.
const std = @import("std");
const panto = @import("panto");
const turn = @import("../turn.zig");
const keys = @import("keys.zig");
const Renderer = @import("render.zig").Renderer;
const style = @import("render.zig");
const summary = @import("summary.zig");
const width = @import("width.zig");
const permissions = @import("../permissions.zig");

const Writer = std.Io.Writer;
const stdin_fd: std.c.fd_t = 0;
/// The columns a member's name may take in the whole input's view.
const max_key_cols = 40;

pub const choices = "[a] allow {s} for this session  [n] deny  [r] deny with a reason  [v] view input  [Esc] deny and cancel";

/// The prompt's state across questions: the keys read and not used yet, the reason typed.
pub const Asker = struct {
    gpa: std.mem.Allocator,
    /// Bytes read after the answer's key: given back (`leftover`) for the next prompt.
    pending: [64]u8 = undefined,
    pending_len: usize = 0,
    key_bytes: [4]u8 = undefined,
    reason: std.ArrayList(u8) = .empty,
    /// The call's "allow this rule" entry (permissions.ruleFor).
    rule_buf: [256]u8 = undefined,

    pub fn deinit(a: *Asker) void {
        a.reason.deinit(a.gpa);
    }

    /// What was read after the answer (typed ahead), taken out.
    pub fn leftover(a: *Asker) []const u8 {
        defer a.pending_len = 0;
        return a.pending[0..a.pending_len];
    }

    /// Asks about `call` on the terminal. A `deny` reason lives until the next ask.
    pub fn ask(a: *Asker, r: *Renderer, call: *const panto.event.ApprovalCall) Writer.Error!turn.Answer {
        const name = call.name.slice();
        const input = call.input.slice();
        try r.freshLine();
        try r.out.print("{s}{s}? {s} wants to run:{s} ", .{ style.bold, style.cyan, name, style.reset });
        var buf: [512]u8 = undefined;
        try r.clipped(summary.ofInput(&buf, input), r.cols -| (width.of(name) + 19));
        if (outsideWorkingDirectory(a.gpa, name, input)) try r.out.print("\n{s}  the path is outside the working directory{s}", .{ style.bold, style.reset });
        const rule = a.ruleOf(name, input);
        try r.out.writeAll("\n");
        try showChoices(r, name, rule);
        try r.out.flush();
        while (true) {
            const key = a.readKey() orelse return .cancel; // the terminal went away
            switch (key) {
                .char => |ch| switch (ch[0]) {
                    'y', 'Y' => return said(r, "allowed once", .allow_once),
                    'p', 'P' => if (rule) |entry| return said(r, "allowed for this session: calls like it", .{ .allow_rule = entry }),
                    'a', 'A' => return said(r, "allowed for this session", .allow_tool),
                    'n', 'N' => return said(r, "denied", .{ .deny = "" }),
                    'r', 'R' => {
                        try r.out.writeAll("reason: ");
                        try r.out.flush();
                        if (!try a.readLine(r.out, false)) return said(r, "denied, the turn canceled", .cancel);
                        return said(r, "denied", .{ .deny = a.reason.items });
                    },
                    'v', 'V' => {
                        try a.showInput(r, input);
                        try showChoices(r, name, rule);
                        try r.out.flush();
                    },
                    else => {},
                },
                // No default answer: a stray Enter must not run a command.
                .escape => return said(r, "denied, the turn canceled", .cancel),
                .ctrl => |c| if (c == 'c') return said(r, "denied, the turn canceled", .cancel),
                else => {},
            }
        }
    }

    /// The entry "allow this rule" would allow (in `rule_buf`), or null.
    fn ruleOf(a: *Asker, name: []const u8, input: []const u8) ?[]const u8 {
        const parsed = std.json.parseFromSlice(std.json.Value, a.gpa, input, .{}) catch return null;
        defer parsed.deinit();
        return permissions.ruleFor(&a.rule_buf, name, parsed.value);
    }

    /// The whole input: each member on its own line, a string as its text (a file's content
    /// with its lines, not `\n` escapes), anything else as JSON; not an object: as it is.
    fn showInput(a: *Asker, r: *Renderer, input: []const u8) Writer.Error!void {
        const parsed = std.json.parseFromSlice(std.json.Value, a.gpa, input, .{}) catch return r.textLine(input);
        defer parsed.deinit();
        if (parsed.value != .object) return r.textLine(input);
        var it = parsed.value.object.iterator();
        while (it.next()) |member| {
            // The model's key, clipped: its control characters never reach the terminal.
            try r.out.writeAll(style.bold);
            try r.clipped(member.key_ptr.*, max_key_cols);
            try r.out.print(":{s} ", .{style.reset});
            r.col = @min(width.of(member.key_ptr.*), max_key_cols) + 2;
            switch (member.value_ptr.*) {
                .string => |text| try r.textLine(text),
                else => |v| {
                    var buf: std.Io.Writer.Allocating = .init(a.gpa);
                    defer buf.deinit();
                    std.json.Stringify.value(v, .{}, &buf.writer) catch return r.textLine(input);
                    try r.textLine(buf.written());
                },
            }
        }
    }

    /// One line typed after "reason: " (or an extension's input), echoed, with Backspace, kept
    /// in `reason`; false for Esc or Ctrl-C, or the terminal gone. `erase_hint`: what follows
    /// the cursor (a placeholder) is erased at the first key.
    pub fn readLine(a: *Asker, out: *Writer, erase_hint: bool) Writer.Error!bool {
        const line = &a.reason;
        line.clearRetainingCapacity();
        var hint = erase_hint;
        while (true) {
            const key = a.readKey() orelse return false;
            if (hint) {
                hint = false;
                try out.writeAll("\x1b[K");
            }
            switch (key) {
                .enter => {
                    try out.writeAll("\n");
                    return true;
                },
                .escape => return false,
                .ctrl => |c| if (c == 'c') return false,
                .backspace => if (line.items.len > 0) {
                    // The last UTF-8 character: back to its first byte.
                    var i = line.items.len - 1;
                    while (i > 0 and line.items[i] & 0xc0 == 0x80) i -= 1;
                    line.shrinkRetainingCapacity(i);
                    try out.writeAll("\x08 \x08");
                },
                .char => |ch| if (ch[0] >= 0x20) {
                    line.appendSlice(a.gpa, ch) catch continue;
                    try out.writeAll(ch);
                },
                else => {},
            }
            try out.flush();
        }
    }

    /// One key from the terminal; null when it is closed. A lone ESC waits a moment for the
    /// rest of a sequence (an arrow key is no Escape).
    pub fn readKey(a: *Asker) ?keys.Key {
        while (true) {
            if (a.pending_len > 0) {
                const lone_escape = a.pending_len == 1 and a.pending[0] == 0x1b;
                if (!lone_escape or !moreWithin(50)) if (keys.decode(a.pending[0..a.pending_len])) |d| {
                    const key = a.keep(d.key);
                    std.mem.copyForwards(u8, a.pending[0 .. a.pending_len - d.len], a.pending[d.len..a.pending_len]);
                    a.pending_len -= d.len;
                    return key;
                };
            }
            if (a.pending_len == a.pending.len) a.pending_len = 0; // too long to be one key
            const n = std.c.read(stdin_fd, a.pending[a.pending_len..].ptr, a.pending.len - a.pending_len);
            if (n == 0) return null;
            if (n < 0) {
                if (std.c.errno(n) == .INTR) continue;
                return null;
            }
            a.pending_len += @intCast(n);
        }
    }

    /// A key whose text borrows from `pending`, its text moved out first.
    fn keep(a: *Asker, key: keys.Key) keys.Key {
        return switch (key) {
            .char => |ch| blk: {
                @memcpy(a.key_bytes[0..ch.len], ch);
                break :blk .{ .char = a.key_bytes[0..ch.len] };
            },
            else => key,
        };
    }
};

/// The keys, on a dim line: "[p] allow RULE" when the call has one.
fn showChoices(r: *Renderer, name: []const u8, rule: ?[]const u8) Writer.Error!void {
    try r.out.print("{s}[y] allow once  ", .{style.dim});
    if (rule) |entry| {
        try r.out.writeAll("[p] allow ");
        try r.clipped(entry, 60);
        try r.out.writeAll("  ");
    }
    try r.out.print(choices ++ "{s}\n", .{ name, style.reset });
}

/// A read, write or edit whose `path` leads out of the working directory (the core asked
/// because of it: permissions.zig's `outside` rules).
fn outsideWorkingDirectory(gpa: std.mem.Allocator, name: []const u8, input: []const u8) bool {
    for (permissions.file_tools) |t| {
        if (std.mem.eql(u8, t, name)) break;
    } else return false;
    const parsed = std.json.parseFromSlice(std.json.Value, gpa, input, .{}) catch return false;
    defer parsed.deinit();
    const path = if (parsed.value == .object) parsed.value.object.get("path") else null;
    if (path == null or path.? != .string) return false;
    _ = panto.path_rule.check(gpa, ".", path.?.string) catch |err| return err != error.OutOfMemory;
    return false;
}

/// The answer, said on its own dim line.
fn said(r: *Renderer, what: []const u8, answer: turn.Answer) turn.Answer {
    r.out.print("{s}  {s}{s}\n", .{ style.dim, what, style.reset }) catch {};
    r.out.flush() catch {};
    return answer;
}

fn moreWithin(ms: c_int) bool {
    var fds = [_]std.c.pollfd{.{ .fd = stdin_fd, .events = std.c.POLL.IN, .revents = 0 }};
    return std.c.poll(&fds, 1, ms) > 0;
}
