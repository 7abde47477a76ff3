//! `session_bench make DIR ID MESSAGES BYTES`: writes a session of MESSAGES messages (user and
//! assistant in turn, about BYTES of text each) through the session store, fsync off.
//! `session_bench load DIR ID`: opens (resumes) it with an agent; prints
//! `RESULT load <seconds> <messages> <file bytes>` (bench/sessions.py runs it through
//! build/bench/spawn for its peak RSS).
//! `session_bench append DIR ID COUNT`: appends COUNT messages to a new session with fsync and
//! COUNT without; prints `RESULT append <fsync median µs> <no-fsync median µs> <line bytes>`.
const std = @import("std");
const panto = @import("panto");

fn now() f64 {
    var ts: std.c.timespec = undefined;
    _ = std.c.clock_gettime(.MONOTONIC, &ts);
    return @as(f64, @floatFromInt(ts.sec)) + @as(f64, @floatFromInt(ts.nsec)) / 1e9;
}

fn agent(gpa: std.mem.Allocator, dir: []const u8, id: []const u8, mode: panto.config.Session.Mode, fsync: bool) !*panto.Agent {
    var diag: panto.config.Diagnostic = .{};
    return panto.Agent.initWithDiagnostic(gpa, .{ .provider = .anthropic, .model = "claude-bench", .api_key = "k", .base_url = "http://127.0.0.1:9", .session = .{ .dir = dir, .id = id, .mode = mode, .fsync = fsync } }, &diag) catch |err| {
        std.debug.print("session_bench: {s}: {s}\n", .{ @errorName(err), diag.message() });
        return err;
    };
}

/// About `bytes` of prose-like text (words, spaces, a quote and a newline now and then, so
/// that JSON escapes occur as in real messages), different for each `seed`.
fn text(gpa: std.mem.Allocator, bytes: usize, seed: u64) ![]u8 {
    var out: std.ArrayList(u8) = .empty;
    var prng = std.Random.DefaultPrng.init(seed);
    const r = prng.random();
    const words = [_][]const u8{ "the", "session", "file", "holds", "every", "message", "\"quoted\"", "agent", "turn", "line\n", "tool", "result", "é", "zig" };
    while (out.items.len < bytes) {
        try out.appendSlice(gpa, words[r.uintLessThan(usize, words.len)]);
        try out.append(gpa, ' ');
    }
    return out.toOwnedSlice(gpa);
}

pub fn main(init: std.process.Init.Minimal) !void {
    const gpa = std.heap.c_allocator;
    var args = init.args.iterate();
    _ = args.next();
    const cmd = args.next() orelse return error.Usage;
    const dir = args.next() orelse return error.Usage;
    const id = args.next() orelse return error.Usage;
    var out_buf: [256]u8 = undefined;
    if (std.mem.eql(u8, cmd, "make")) {
        const messages = try std.fmt.parseInt(usize, args.next() orelse return error.Usage, 10);
        const bytes = try std.fmt.parseInt(usize, args.next() orelse return error.Usage, 10);
        const a = try agent(gpa, dir, id, .create, false);
        defer a.deinit();
        for (0..messages) |i| {
            const t = try text(gpa, bytes, i);
            defer gpa.free(t);
            if (i % 2 == 0) {
                try a.conversation.appendUserText(t);
            } else {
                try a.conversation.appendMessage(.assistant, &.{.{ .kind = .text, .text = t }}, .{ .stop_reason = .end_turn, .provider = "anthropic", .model = "claude-bench", .usage = .{ .input_tokens = 1000 + i, .output_tokens = 500 } });
            }
        }
    } else if (std.mem.eql(u8, cmd, "load")) {
        const start = now();
        const a = try agent(gpa, dir, id, .@"resume", true);
        const seconds = now() - start;
        defer a.deinit();
        const info = a.sessionInfo().?;
        const size = a.session.?.journal.file.size;
        const out = try std.fmt.bufPrint(&out_buf, "RESULT load {d:.4} {d} {d} {d}\n", .{ seconds, a.conversation.messages.items.len, size, info.torn_bytes });
        _ = std.c.write(1, out.ptr, out.len);
    } else if (std.mem.eql(u8, cmd, "append")) {
        const count = try std.fmt.parseInt(usize, args.next() orelse return error.Usage, 10);
        const t = try text(gpa, 1000, 7);
        defer gpa.free(t);
        var medians: [2]f64 = undefined;
        var line_bytes: u64 = 0;
        for ([_]bool{ true, false }, 0..) |fsync, k| {
            var name_buf: [160]u8 = undefined;
            const name = try std.fmt.bufPrint(&name_buf, "{s}-{s}", .{ id, if (fsync) "fsync" else "nofsync" });
            const a = try agent(gpa, dir, name, .create, fsync);
            defer a.deinit();
            const times = try gpa.alloc(f64, count);
            defer gpa.free(times);
            for (times, 0..) |*elapsed, i| {
                const before = a.session.?.journal.file.size;
                const t0 = now();
                if (i % 2 == 0) {
                    try a.conversation.appendUserText(t);
                } else {
                    try a.conversation.appendMessage(.assistant, &.{.{ .kind = .text, .text = t }}, .{ .stop_reason = .end_turn, .provider = "anthropic", .model = "claude-bench" });
                }
                elapsed.* = now() - t0;
                line_bytes = a.session.?.journal.file.size - before;
            }
            std.mem.sort(f64, times, {}, std.sort.asc(f64));
            medians[k] = times[count / 2] * 1e6;
        }
        const out = try std.fmt.bufPrint(&out_buf, "RESULT append {d:.1} {d:.1} {d}\n", .{ medians[0], medians[1], line_bytes });
        _ = std.c.write(1, out.ptr, out.len);
    } else return error.Usage;
}
