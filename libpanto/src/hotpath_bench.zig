//! The core's per-event work without the network: an SSE body from a file goes through the
//! SSE parser, the provider's decoder and the assembly, 64 KiB at a time as from a socket.
//! For profiling the hot path in isolation (bench/profile.sh measures the whole library).
//!
//!     zig build hotpath -Doptimize=ReleaseSafe
//!     zig-out/bin/hotpath anthropic|openai BODY.sse
//!
//! Prints the events decoded and the CPU nanoseconds each took.
const std = @import("std");
const sse = @import("sse.zig");
const anthropic = @import("providers/anthropic/decode.zig");
const anthropic_hot = @import("providers/anthropic/hot.zig");
const openai = @import("providers/openai/decode.zig");
const Assembly = @import("assembly.zig").Assembly;
const errors = @import("errors.zig");

pub fn main(init: std.process.Init) !void {
    const gpa = std.heap.c_allocator;
    const args = try init.minimal.args.toSlice(init.arena.allocator());
    if (args.len != 3) {
        std.debug.print("usage: hotpath anthropic|openai BODY.sse\n", .{});
        std.process.exit(2);
    }
    const is_openai = std.mem.eql(u8, args[1], "openai");
    const body = try std.Io.Dir.cwd().readFileAlloc(init.io, args[2], gpa, .unlimited);
    defer gpa.free(body);

    var buffer: [64 * 1024]u8 = undefined;
    var source: std.testing.Reader = .init(&buffer, &.{.{ .buffer = body }});
    var parser = sse.Parser.init(gpa);
    defer parser.deinit();
    var arena: std.heap.ArenaAllocator = .init(gpa);
    defer arena.deinit();
    var assembly = Assembly.init(gpa);
    defer assembly.deinit();
    var detail: errors.Detail = .{};
    defer detail.deinit(gpa);
    var a_dec: anthropic.Decoder = .{};
    var o_dec: openai.Decoder = .{};

    var deltas: usize = 0;
    var text_bytes: usize = 0;
    const start = nowNs();
    while (true) {
        _ = arena.reset(.retain_capacity);
        // As Stream.readEvent: a hot Anthropic delta straight from the buffer, else the parser.
        if (!is_openai and parser.atEventStart()) {
            if (try anthropic_hot.hotEvent(arena.allocator(), source.interface.buffered())) |hot| {
                source.interface.toss(hot.len);
                if (try anthropic_hot.hotDeltaEvent(&assembly, &detail, hot.delta)) |e| {
                    deltas += 1;
                    text_bytes += e.content_delta.text.len;
                }
                continue;
            }
        }
        const event = try parser.next(&source.interface) orelse break;
        if (is_openai) {
            try o_dec.handle(&assembly, arena.allocator(), event, &detail);
        } else {
            try a_dec.handle(&assembly, arena.allocator(), event, &detail);
        }
        count(&assembly, &deltas, &text_bytes);
    }
    const ns = nowNs() - start;
    std.debug.print("{d} deltas, {d} text bytes, {d:.1} ns a delta\n", .{ deltas, text_bytes, @as(f64, @floatFromInt(ns)) / @as(f64, @floatFromInt(@max(deltas, 1))) });
}

fn count(assembly: *Assembly, deltas: *usize, text_bytes: *usize) void {
    while (assembly.pop()) |e| switch (e) {
        .content_delta => |d| {
            deltas.* += 1;
            text_bytes.* += d.text.len;
        },
        else => {},
    };
}

fn nowNs() u64 {
    var ts: std.c.timespec = undefined;
    _ = std.c.clock_gettime(.THREAD_CPUTIME_ID, &ts);
    return @as(u64, @intCast(ts.sec)) * std.time.ns_per_s + @as(u64, @intCast(ts.nsec));
}
