//! `zig build test` replays the kept fuzz inputs through their targets, as the fuzzer ran
//! them (a leak or a panic fails the test): tests/fuzz/seeds/NAME, tests/fuzz/regressions/NAME
//! and the seed folders targets.json lists. tests/fuzz/pending/ (crashes not fixed yet) is not
//! read. Every recorded stream is also replayed cut short at many points.
const std = @import("std");
const Allocator = std.mem.Allocator;
const targets = @import("targets.zig");
const sandbox = @import("sandbox.zig");
const GuardAllocator = @import("guard_allocator.zig").GuardAllocator;
const repo = @import("fuzz_paths").repo;

const io = std.testing.io;

test "every kept input runs clean through its target" {
    const gpa = std.testing.allocator;
    var tmp = std.testing.tmpDir(.{});
    defer tmp.cleanup();
    const root = try prepare(&tmp);

    var config = try std.json.parseFromSlice(std.json.Value, gpa, @embedFile("targets.json"), .{});
    defer config.deinit();
    var inputs: usize = 0;
    for (targets.all) |target| {
        const seeds = config.value.object.get(target.name).?.object.get("seeds").?.array.items;
        var dirs: std.ArrayList([]const u8) = .empty;
        defer {
            for (dirs.items) |d| gpa.free(d);
            dirs.deinit(gpa);
        }
        try dirs.append(gpa, try std.fmt.allocPrint(gpa, "tests/fuzz/seeds/{s}", .{target.name}));
        try dirs.append(gpa, try std.fmt.allocPrint(gpa, "tests/fuzz/regressions/{s}", .{target.name}));
        for (seeds) |s| try dirs.append(gpa, try gpa.dupe(u8, s.string));
        for (dirs.items) |dir| inputs += try replayFolder(gpa, target, root, dir);
    }
    try std.testing.expect(inputs > 0);
}

test "every recorded stream, cut short, runs clean through its provider" {
    const gpa = std.testing.allocator;
    var tmp = std.testing.tmpDir(.{});
    defer tmp.cleanup();
    const root = try prepare(&tmp);

    for ([_][]const u8{ "anthropic", "openai" }) |name| {
        const dir_path = try std.fmt.allocPrint(gpa, "tests/fixtures/recorded/{s}", .{name});
        defer gpa.free(dir_path);
        const files = try listFiles(gpa, dir_path);
        defer freeList(gpa, files);
        try std.testing.expect(files.len > 0);
        const target = targets.byName(name).?;
        for (files) |path| {
            const bytes = try readFile(gpa, path);
            defer gpa.free(bytes);
            for (0..bytes.len) |cut| {
                if (!isCutPoint(bytes, cut)) continue;
                setCurrent(path, cut);
                // (The library's allocator: a thousand turns through the testing allocator
                // take minutes. The guard still finds leaks.)
                try runClean(std.heap.c_allocator, target, root, bytes[0..cut]);
            }
        }
    }
}

/// Where a stream is cut: around every line end (an event cut between its lines, or just
/// before its blank line), and every 97th byte (inside a line, a JSON token, a UTF-8
/// sequence). Every byte would take minutes; the fuzzer cuts everywhere (its inputs start as
/// prefixes of the seeds and grow).
fn isCutPoint(bytes: []const u8, cut: usize) bool {
    if (cut % 97 == 0) return true;
    return bytes[cut] == '\n' or (cut > 0 and bytes[cut - 1] == '\n');
}

/// Runs every file of `dir_path` (relative to the repository; missing: none) through
/// `target`; returns how many.
fn replayFolder(gpa: Allocator, target: targets.Target, root: []const u8, dir_path: []const u8) !usize {
    const files = try listFiles(gpa, dir_path);
    defer freeList(gpa, files);
    for (files) |path| {
        const bytes = try readFile(gpa, path);
        defer gpa.free(bytes);
        setCurrent(path, null);
        try runClean(std.testing.allocator, target, root, bytes);
    }
    return files.len;
}

fn runClean(backing: Allocator, target: targets.Target, root: []const u8, input: []const u8) !void {
    var guard: GuardAllocator = .init(backing);
    try target.run(.{ .gpa = guard.allocator(), .root = root }, input);
    guard.expectNoLeaks();
}

/// The files of a folder of the repository (not README.md, not dot files), sorted, as
/// absolute paths.
fn listFiles(gpa: Allocator, dir_path: []const u8) ![][]u8 {
    var list: std.ArrayList([]u8) = .empty;
    errdefer freeList(gpa, list.items);
    const abs = try std.fs.path.join(gpa, &.{ repo, dir_path });
    defer gpa.free(abs);
    var dir = std.Io.Dir.openDirAbsolute(io, abs, .{ .iterate = true }) catch |err| switch (err) {
        error.FileNotFound => return list.toOwnedSlice(gpa),
        else => |e| return e,
    };
    defer dir.close(io);
    var it = dir.iterate();
    while (try it.next(io)) |entry| {
        if (entry.kind != .file or entry.name[0] == '.' or std.mem.eql(u8, entry.name, "README.md")) continue;
        try list.append(gpa, try std.fs.path.join(gpa, &.{ abs, entry.name }));
    }
    std.mem.sort([]u8, list.items, {}, struct {
        fn lessThan(_: void, a: []u8, b: []u8) bool {
            return std.mem.lessThan(u8, a, b);
        }
    }.lessThan);
    return list.toOwnedSlice(gpa);
}

fn freeList(gpa: Allocator, list: []const []u8) void {
    for (list) |p| gpa.free(p);
    gpa.free(list);
}

fn readFile(gpa: Allocator, path: []const u8) ![]u8 {
    return std.Io.Dir.cwd().readFileAlloc(io, path, gpa, .limited(16 * 1024 * 1024));
}

/// Fills the read tool's root in `tmp` and returns its path; names the input of a crash.
fn prepare(tmp: *std.testing.TmpDir) ![]const u8 {
    const S = struct {
        var buf: [std.c.PATH_MAX]u8 = undefined;
    };
    const root = try std.fmt.bufPrint(&S.buf, ".zig-cache/tmp/{s}", .{tmp.sub_path});
    try sandbox.prepare(root);
    watchAborts();
    return root;
}

// Which input a crash came from: an abort (a panic) prints it.
var current_buf: [std.c.PATH_MAX + 32]u8 = undefined;
var current_len: usize = 0;

fn setCurrent(path: []const u8, cut: ?usize) void {
    const text = if (cut) |n|
        std.fmt.bufPrint(&current_buf, "\nwhile replaying {s} cut to {d} bytes\n", .{ path, n })
    else
        std.fmt.bufPrint(&current_buf, "\nwhile replaying {s}\n", .{path});
    current_len = if (text) |t| t.len else |_| 0;
}

fn watchAborts() void {
    const act: std.posix.Sigaction = .{
        .handler = .{ .handler = onAbort },
        .mask = std.posix.sigemptyset(),
        .flags = std.posix.SA.RESETHAND,
    };
    std.posix.sigaction(.ABRT, &act, null);
}

fn onAbort(_: std.posix.SIG) callconv(.c) void {
    _ = std.c.write(2, &current_buf, current_len);
}
