//! The entry points of the libFuzzer build (`zig build fuzz`, linked by run.py with clang's
//! -fsanitize=fuzzer): `panto_fuzz_NAME` runs target NAME on one input, and entry.c makes it
//! the binary's LLVMFuzzerTestOneInput.
//!
//! Zig's -ffuzz instruments the code as clang's -fsanitize-coverage=inline-8bit-counters,
//! pc-table does, but emits no module constructor to announce the counters (Zig's own fuzzer
//! finds them by their section): LLVMFuzzerInitialize announces them to libFuzzer instead.
const std = @import("std");
const targets = @import("targets.zig");
const sandbox = @import("sandbox.zig");
const GuardAllocator = @import("guard_allocator.zig").GuardAllocator;

extern const __start___sancov_cntrs: u8;
extern const __stop___sancov_cntrs: u8;
extern const __start___sancov_pcs1: usize;
extern const __stop___sancov_pcs1: usize;
extern fn __sanitizer_cov_8bit_counters_init(start: [*]u8, stop: [*]u8) void;
extern fn __sanitizer_cov_pcs_init(start: [*]const usize, stop: [*]const usize) void;
extern fn mkdtemp(template: [*:0]u8) ?[*:0]u8;

/// The read tool's root: $PANTO_FUZZ_ROOT, or a new folder in /tmp.
var root: []const u8 = "";
/// $PANTO_FUZZ_STRICT=1: check the order of events too (context.zig).
var strict = false;
var root_template = "/tmp/panto-fuzz-XXXXXX".*;

export fn LLVMFuzzerInitialize(argc: *c_int, argv: *[*][*:0]u8) c_int {
    _ = argc;
    _ = argv;
    announceCoverage();
    strict = if (std.c.getenv("PANTO_FUZZ_STRICT")) |s| std.mem.eql(u8, std.mem.span(s), "1") else false;
    root = if (std.c.getenv("PANTO_FUZZ_ROOT")) |r| std.mem.span(r) else std.mem.span(mkdtemp(&root_template) orelse @panic("mkdtemp failed"));
    sandbox.prepare(root) catch |err| std.debug.panic("cannot prepare the read tool's root {s}: {t}", .{ root, err });
    return 0;
}

/// Hands libFuzzer the counters and, as it wants them, a table of (pc, flags) pairs: Zig's
/// table holds one pc per counter.
fn announceCoverage() void {
    const counters: [*]u8 = @constCast(@ptrCast(&__start___sancov_cntrs));
    const counters_end: [*]u8 = @constCast(@ptrCast(&__stop___sancov_cntrs));
    const pcs: [*]const usize = @ptrCast(&__start___sancov_pcs1);
    const n = (@intFromPtr(&__stop___sancov_pcs1) - @intFromPtr(pcs)) / @sizeOf(usize);
    const table = std.heap.c_allocator.alloc(usize, 2 * n) catch @panic("out of memory");
    for (0..n) |i| {
        table[2 * i] = pcs[i];
        table[2 * i + 1] = 0;
    }
    __sanitizer_cov_8bit_counters_init(counters, counters_end);
    __sanitizer_cov_pcs_init(table.ptr, table.ptr + table.len);
}

fn runOne(comptime name: []const u8, data: ?[*]const u8, size: usize) c_int {
    const target = comptime targets.byName(name).?;
    var guard: GuardAllocator = .init(std.heap.c_allocator);
    const input: []const u8 = if (data) |d| d[0..size] else "";
    target.run(.{ .gpa = guard.allocator(), .root = root, .strict = strict }, input) catch |err|
        std.debug.panic("target {s} failed: {t}", .{ name, err });
    guard.expectNoLeaks();
    return 0;
}

comptime {
    for (targets.all) |t| {
        const Entry = struct {
            fn entry(data: ?[*]const u8, size: usize) callconv(.c) c_int {
                return runOne(t.name, data, size);
            }
        };
        @export(&Entry.entry, .{ .name = "panto_fuzz_" ++ t.name });
    }
}
