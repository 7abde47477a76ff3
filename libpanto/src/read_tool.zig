//! The native `read` tool: reads a UTF-8 text file under a configured root directory, by lines,
//! with a byte cap, and says when it stopped early; an image or a PDF (known by its bytes) is
//! returned whole as an attachment, which the tool round fits like any media. Paths inside the
//! root, relative or absolute, are read; paths that leave it are refused (path_rule.zig), and
//! so is anything but a regular file.
const std = @import("std");
const Allocator = std.mem.Allocator;
const Problem = @import("schema.zig").Problem;
const open_beneath = @import("open_beneath.zig");
const path_rule = @import("path_rule.zig");
const media = @import("media.zig");

pub const name = "read";
pub const capability = "fs.read";
pub const description = "Read a UTF-8 text file under the agent's root directory. Returns the lines from " ++
    "`offset` (0-based, default 0), at most `limit` of them (default 2000), and says when the output was truncated. " ++
    "An image (PNG, JPEG, GIF, WEBP, BMP) or a PDF is returned whole as an attachment.";
pub const schema =
    \\{"type":"object","properties":{"path":{"type":"string","description":"File path, relative to the root directory or absolute inside it"},"offset":{"type":"integer","minimum":0,"description":"First line to read, 0-based"},"limit":{"type":"integer","minimum":1,"description":"Most lines to read"}},"required":["path"],"additionalProperties":false}
;
pub const default_max_bytes: usize = 64 * 1024;
const default_limit: u64 = 2000;
/// Larger files are refused rather than read whole.
const max_file_bytes: usize = 64 * 1024 * 1024;
/// Larger images and PDFs are refused: more than any provider takes, even once fitted.
pub const max_media_bytes: usize = 32 * 1024 * 1024;

pub const Config = struct {
    root: []const u8,
    max_bytes: usize = default_max_bytes,
    /// false: a path outside the root is read too (relative ones from the root), for a host
    /// whose approval rules ask before such a call (approval.zig's `outside` match).
    confined: bool = true,
};

pub const Result = struct {
    content: []u8,
    is_error: bool,
    /// An image or a PDF: the file's bytes (then `content` is empty), and its name.
    attachment: ?[]u8 = null,
    /// The file's base name (borrowed from the input).
    name: []const u8 = "",

    pub fn deinit(r: Result, gpa: Allocator) void {
        gpa.free(r.content);
        if (r.attachment) |a| gpa.free(a);
    }
};

pub const Input = struct {
    path: []const u8,
    offset: u64,
    limit: u64,
};

/// The input's values, or null with what is wrong in `problem`. Beyond `schema`, which calls
/// 1e20, 1.0 and -0 integers as JSON Schema does, a line number must fit an i64.
pub fn readInput(input: std.json.Value, problem: *Problem) ?Input {
    const path = if (input == .object) input.object.get("path") else null;
    if (path == null or path.? != .string) {
        problem.set("property \"path\" must be a string", .{});
        return null;
    }
    return .{
        .path = path.?.string,
        .offset = lineCount(input.object, "offset", 0, 0, problem) orelse return null,
        .limit = lineCount(input.object, "limit", 1, default_limit, problem) orelse return null,
    };
}

fn lineCount(obj: std.json.ObjectMap, comptime key: []const u8, min: u64, default: u64, problem: *Problem) ?u64 {
    const value = obj.get(key) orelse return default;
    const whole: ?i64 = switch (value) {
        .integer => |i| i,
        .float => |f| wholeFromFloat(f),
        .number_string => |text| std.fmt.parseInt(i64, text, 10) catch
            wholeFromFloat(std.fmt.parseFloat(f64, text) catch std.math.nan(f64)),
        else => null,
    };
    if (whole) |n| if (n >= min) return @intCast(n);
    problem.set("property \"" ++ key ++ "\" must be a whole number from {d} to {d}", .{ min, std.math.maxInt(i64) });
    return null;
}

/// `f` as an i64 when it is a whole number in range (2^63 is the first double beyond).
fn wholeFromFloat(f: f64) ?i64 {
    return if (@floor(f) == f and f >= -0x1p63 and f < 0x1p63) @intFromFloat(f) else null;
}

/// Runs the tool on an input already checked against `schema`. The content is owned by the
/// caller. Only OutOfMemory is an error; every other failure is an error result for the model.
pub fn run(gpa: Allocator, config: Config, input_value: std.json.Value) Allocator.Error!Result {
    var problem: Problem = .{};
    // The caller checked the input with readInput: a failure here is a result all the same.
    const input = readInput(input_value, &problem) orelse return failure(gpa, "{s}", .{problem.message()});
    const path = input.path;
    const offset = input.offset;
    const limit = input.limit;

    const file = readUnderRoot(gpa, config.root, path, config.confined) catch |err| return switch (err) {
        error.OutOfMemory => error.OutOfMemory,
        error.OutsideRoot => .{ .content = try path_rule.refusal(gpa, path, "root directory"), .is_error = true },
        error.NotFound => failure(gpa, "no such file: \"{s}\"", .{path}),
        error.IsDirectory => failure(gpa, "\"{s}\" is a directory", .{path}),
        error.NotRegularFile => failure(gpa, "\"{s}\" is not a regular file", .{path}),
        error.NoRoot => failure(gpa, "the root directory cannot be opened", .{}),
        error.TooLarge => failure(gpa, "\"{s}\" is larger than {d} bytes", .{ path, max_file_bytes }),
        error.Unreadable => failure(gpa, "cannot read \"{s}\"", .{path}),
    };
    var keep_file = false;
    defer if (!keep_file) gpa.free(file);
    if (media.detect(file[0..@min(file.len, 16)])) |format| attachment: {
        // "BM" begins text as well as bitmaps; a bitmap's pixels are not UTF-8 text.
        if (format == .bmp and std.unicode.utf8ValidateSlice(file)) break :attachment;
        if (file.len > max_media_bytes) return failure(gpa, "\"{s}\" is a {s} file larger than {d} bytes", .{ path, @tagName(format), max_media_bytes });
        keep_file = true;
        errdefer keep_file = false;
        return .{ .content = try gpa.dupe(u8, ""), .is_error = false, .attachment = file, .name = std.fs.path.basename(path) };
    }
    if (!std.unicode.utf8ValidateSlice(file)) return failure(gpa, "\"{s}\" is not a UTF-8 text file", .{path});

    const total = countLines(file);
    var out: std.ArrayList(u8) = .empty;
    errdefer out.deinit(gpa);
    var lines = std.mem.splitScalar(u8, file, '\n');
    var index: u64 = 0;
    var shown: u64 = 0;
    var cut_by_bytes = false;
    while (lines.next()) |line| : (index += 1) {
        if (index >= total) break;
        if (index < offset) continue;
        if (shown == limit) break;
        if (out.items.len + line.len + 1 > config.max_bytes) {
            cut_by_bytes = true;
            break;
        }
        try out.appendSlice(gpa, line);
        try out.append(gpa, '\n');
        shown += 1;
    }
    const end = offset + shown;
    if (offset > 0 or end < total or cut_by_bytes) {
        if (shown == 0 and offset >= total) {
            try out.print(gpa, "[offset {d} is past the end: the file has {d} lines]", .{ offset, total });
        } else if (end < total) {
            try out.print(gpa, "[truncated: showing lines {d}-{d} of {d}; use offset to read more]", .{ offset + 1, end, total });
        } else {
            try out.print(gpa, "[showing lines {d}-{d} of {d}]", .{ offset + 1, end, total });
        }
    }
    return .{ .content = try out.toOwnedSlice(gpa), .is_error = false };
}

fn failure(gpa: Allocator, comptime fmt: []const u8, args: anytype) Allocator.Error!Result {
    return .{ .content = try std.fmt.allocPrint(gpa, fmt, args), .is_error = true };
}

/// Lines in the file; a final newline ends the last line rather than starting another.
fn countLines(bytes: []const u8) u64 {
    if (bytes.len == 0) return 0;
    const newlines = std.mem.count(u8, bytes, "\n");
    return if (bytes[bytes.len - 1] == '\n') newlines else newlines + 1;
}

const ReadError = error{ OutOfMemory, OutsideRoot, NotFound, IsDirectory, NotRegularFile, TooLarge, Unreadable, NoRoot };

/// Reads root/path: a regular file beneath the root (see open_beneath.zig for how symlinks
/// are treated), opened from a handle of the root so that nothing can move it out between a
/// check and the open.
fn readUnderRoot(gpa: Allocator, root: []const u8, path: []const u8, confined: bool) ReadError![]u8 {
    // An absolute path inside the root is made relative; `..` that climbs out is refused even
    // when the target does not exist, and so is the root itself (unless not `confined`).
    var beneath = true;
    const rel = path_rule.relative(gpa, root, path) catch |err| switch (err) {
        error.OutsideRoot => if (confined) return err else blk: {
            beneath = false;
            break :blk path;
        },
        error.OutOfMemory, error.NoRoot => |e| return e,
    };

    const root_z = try gpa.dupeZ(u8, root);
    defer gpa.free(root_z);
    const root_fd = std.c.open(root_z, .{ .ACCMODE = .RDONLY, .DIRECTORY = true, .CLOEXEC = true });
    if (root_fd < 0) return error.NoRoot;
    defer _ = std.c.close(root_fd);
    // Not confined: a path that leads out (by its words, or through a symlink) is opened as it is.
    const fd = if (!beneath) try open_beneath.openRegularAnywhere(root_fd, rel) else open_beneath.openRegular(gpa, root_fd, rel) catch |err| switch (err) {
        error.OutsideRoot => if (confined) return err else try open_beneath.openRegularAnywhere(root_fd, rel),
        else => return err,
    };
    defer _ = std.c.close(fd);

    var data: std.ArrayList(u8) = .empty;
    errdefer data.deinit(gpa);
    var chunk: [16 * 1024]u8 = undefined;
    while (true) {
        const n = std.c.read(fd, &chunk, chunk.len);
        if (n < 0) {
            if (std.c.errno(n) == .INTR) continue;
            return error.Unreadable;
        }
        if (n == 0) break;
        if (data.items.len + @as(usize, @intCast(n)) > max_file_bytes) return error.TooLarge;
        try data.appendSlice(gpa, chunk[0..@intCast(n)]);
    }
    return data.toOwnedSlice(gpa);
}

test "read: lines, offset and limit, truncation note, escapes refused" {
    const gpa = std.testing.allocator;
    var tmp = std.testing.tmpDir(.{});
    defer tmp.cleanup();
    var dir_buf: [std.c.PATH_MAX]u8 = undefined;
    const root = try tmpPath(&tmp, &dir_buf);
    try writeFile(gpa, root, "notes.txt", "one\ntwo\nthree\nfour\n");

    var arena: std.heap.ArenaAllocator = .init(gpa);
    defer arena.deinit();
    const a = arena.allocator();
    const cases = [_]struct { []const u8, []const u8, bool }{
        .{ "{\"path\":\"notes.txt\"}", "one\ntwo\nthree\nfour\n", false },
        .{ "{\"path\":\"notes.txt\",\"offset\":1,\"limit\":2}", "two\nthree\n[truncated: showing lines 2-3 of 4; use offset to read more]", false },
        .{ "{\"path\":\"notes.txt\",\"offset\":3}", "four\n[showing lines 4-4 of 4]", false },
        .{ "{\"path\":\"notes.txt\",\"offset\":9}", "[offset 9 is past the end: the file has 4 lines]", false },
        .{ "{\"path\":\"../x\"}", "path \"../x\" is outside the root directory: only paths inside it may be used", true },
        .{ "{\"path\":\"/etc/passwd\"}", "path \"/etc/passwd\" is outside the root directory: only paths inside it may be used", true },
        .{ "{\"path\":\"missing.txt\"}", "no such file: \"missing.txt\"", true },
        .{ "{\"path\":\".\"}", "path \".\" is outside the root directory: only paths inside it may be used", true },
        // Whole numbers in any notation; beyond an i64 they are refused, not cut or crashed on.
        .{ "{\"path\":\"notes.txt\",\"offset\":1.0,\"limit\":2e0}", "two\nthree\n[truncated: showing lines 2-3 of 4; use offset to read more]", false },
        .{ "{\"path\":\"notes.txt\",\"offset\":-0,\"limit\":1}", "one\n[truncated: showing lines 1-1 of 4; use offset to read more]", false },
        .{ "{\"path\":\"notes.txt\",\"offset\":1e20}", "property \"offset\" must be a whole number from 0 to 9223372036854775807", true },
        .{ "{\"path\":\"notes.txt\",\"limit\":1e20}", "property \"limit\" must be a whole number from 1 to 9223372036854775807", true },
        .{ "{\"path\":\"notes.txt\",\"offset\":99999999999999999999}", "property \"offset\" must be a whole number from 0 to 9223372036854775807", true },
        .{ "{\"path\":\"notes.txt\",\"limit\":0.5}", "property \"limit\" must be a whole number from 1 to 9223372036854775807", true },
        .{ "{\"offset\":1}", "property \"path\" must be a string", true },
    };
    // Numbers parsed or left as text (as the tool round leaves them) read the same.
    for ([_]bool{ true, false }) |parse_numbers| for (cases) |case| {
        const input = try std.json.parseFromSliceLeaky(std.json.Value, a, case[0], .{ .parse_numbers = parse_numbers });
        const result = try run(gpa, .{ .root = root }, input);
        defer gpa.free(result.content);
        try std.testing.expectEqualStrings(case[1], result.content);
        try std.testing.expectEqual(case[2], result.is_error);
    };
    // An absolute path inside the root is read as the relative one.
    var real_buf: [std.c.PATH_MAX]u8 = undefined;
    const real_z = try gpa.dupeZ(u8, root);
    defer gpa.free(real_z);
    const real = std.mem.sliceTo(std.c.realpath(real_z, &real_buf).?, 0);
    const absolute = try std.fmt.allocPrint(a, "{{\"path\":\"{s}/notes.txt\",\"limit\":1}}", .{real});
    const abs_result = try run(gpa, .{ .root = root }, try std.json.parseFromSliceLeaky(std.json.Value, a, absolute, .{}));
    defer gpa.free(abs_result.content);
    try std.testing.expectEqualStrings("one\n[truncated: showing lines 1-1 of 4; use offset to read more]", abs_result.content);
    // The byte cap stops at a whole line and says so.
    const input = try std.json.parseFromSliceLeaky(std.json.Value, a, "{\"path\":\"notes.txt\"}", .{});
    const capped = try run(gpa, .{ .root = root, .max_bytes = 9 }, input);
    defer gpa.free(capped.content);
    try std.testing.expectEqualStrings("one\ntwo\n[truncated: showing lines 1-2 of 4; use offset to read more]", capped.content);
}

test "read: an image or a PDF comes whole as an attachment (by its bytes), text as text; larger than the media cap is refused" {
    const gpa = std.testing.allocator;
    var tmp = std.testing.tmpDir(.{});
    defer tmp.cleanup();
    var dir_buf: [std.c.PATH_MAX]u8 = undefined;
    const root = try tmpPath(&tmp, &dir_buf);
    const png = "\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR" ++ "\x00" ** 20;
    const pdf = "%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n";
    try writeFile(gpa, root, "shot.txt", png); // the name says text: the bytes win
    try std.testing.expectEqual(@as(c_int, 0), std.c.mkdirat(tmp.dir.handle, "docs", 0o755));
    try writeFile(gpa, root, "docs/report.pdf", pdf);
    try writeFile(gpa, root, "cars.txt", "BMW and more\n"); // "BM" begins bitmaps, and text

    var arena: std.heap.ArenaAllocator = .init(gpa);
    defer arena.deinit();
    const cases = [_]struct { []const u8, []const u8, []const u8 }{
        .{ "{\"path\":\"shot.txt\"}", png, "shot.txt" },
        .{ "{\"path\":\"docs/report.pdf\",\"offset\":3}", pdf, "report.pdf" },
    };
    for (cases) |case| {
        const input = try std.json.parseFromSliceLeaky(std.json.Value, arena.allocator(), case[0], .{});
        const result = try run(gpa, .{ .root = root, .max_bytes = 4 }, input);
        defer result.deinit(gpa);
        try std.testing.expectEqualStrings(case[1], result.attachment orelse return error.TestExpectedAttachment);
        try std.testing.expectEqualStrings(case[2], result.name);
        try std.testing.expectEqualStrings("", result.content);
        try std.testing.expect(!result.is_error);
    }
    const text_input = try std.json.parseFromSliceLeaky(std.json.Value, arena.allocator(), "{\"path\":\"cars.txt\"}", .{});
    const text = try run(gpa, .{ .root = root }, text_input);
    defer text.deinit(gpa);
    try std.testing.expectEqual(null, text.attachment);
    try std.testing.expectEqualStrings("BMW and more\n", text.content);

    // Over the media cap: an error result, not a 40 MiB attachment.
    const big = try gpa.alloc(u8, max_media_bytes + 1);
    defer gpa.free(big);
    @memset(big, 0);
    @memcpy(big[0..5], "%PDF-");
    try writeFile(gpa, root, "big.pdf", big);
    const big_input = try std.json.parseFromSliceLeaky(std.json.Value, arena.allocator(), "{\"path\":\"big.pdf\"}", .{});
    const refused = try run(gpa, .{ .root = root }, big_input);
    defer refused.deinit(gpa);
    try std.testing.expect(refused.is_error and refused.attachment == null);
    try std.testing.expectEqualStrings("\"big.pdf\" is a pdf file larger than 33554432 bytes", refused.content);
}

test "read: a FIFO is refused at once, as are directories; nothing waits for a writer" {
    if (@import("builtin").os.tag != .linux) return error.SkipZigTest;
    const gpa = std.testing.allocator;
    var tmp = std.testing.tmpDir(.{});
    defer tmp.cleanup();
    var dir_buf: [std.c.PATH_MAX]u8 = undefined;
    const root = try tmpPath(&tmp, &dir_buf);
    const linux = std.os.linux;
    try std.testing.expectEqual(.SUCCESS, linux.errno(linux.mknodat(tmp.dir.handle, "fifo", linux.S.IFIFO | 0o644, 0)));
    try std.testing.expectEqual(@as(c_int, 0), std.c.mkdirat(tmp.dir.handle, "sub", 0o755));

    // Opening a FIFO to read waits for a writer. So that a read tool that does fails this
    // test instead of hanging it, a writer comes by after a deadline.
    var rescuer: FifoRescuer = .{ .dir = tmp.dir.handle };
    const thread = try std.Thread.spawn(.{}, FifoRescuer.watch, .{&rescuer});
    defer {
        rescuer.done.store(true, .release);
        thread.join();
    }
    var arena: std.heap.ArenaAllocator = .init(gpa);
    defer arena.deinit();
    const cases = [_]struct { []const u8, []const u8 }{
        .{ "{\"path\":\"fifo\"}", "\"fifo\" is not a regular file" },
        .{ "{\"path\":\"sub\"}", "\"sub\" is a directory" },
    };
    for (cases) |case| {
        const input = try std.json.parseFromSliceLeaky(std.json.Value, arena.allocator(), case[0], .{});
        const result = try run(gpa, .{ .root = root }, input);
        defer gpa.free(result.content);
        try std.testing.expectEqualStrings(case[1], result.content);
        try std.testing.expect(result.is_error);
    }
}

const FifoRescuer = struct {
    dir: std.c.fd_t,
    done: std.atomic.Value(bool) = .init(false),

    /// After 10 s, opens the FIFO to write and closes it, which ends a reader's wait.
    fn watch(r: *FifoRescuer) void {
        var waited_ms: u32 = 0;
        while (!r.done.load(.acquire)) : (waited_ms += 10) {
            if (waited_ms == 10_000) {
                const fd = std.c.openat(r.dir, "fifo", .{ .ACCMODE = .WRONLY, .NONBLOCK = true, .CLOEXEC = true });
                if (fd >= 0) _ = std.c.close(fd);
            }
            const ts: std.c.timespec = .{ .sec = 0, .nsec = 10 * std.time.ns_per_ms };
            _ = std.c.nanosleep(&ts, null);
        }
    }
};

test "read: not confined, a path outside the root is read (by .., absolute, through a symlink)" {
    const gpa = std.testing.allocator;
    var tmp = std.testing.tmpDir(.{});
    defer tmp.cleanup();
    var dir_buf: [std.c.PATH_MAX]u8 = undefined;
    const top = try tmpPath(&tmp, &dir_buf);
    if (std.c.mkdirat(tmp.dir.handle, "root", 0o755) != 0) return error.Setup;
    try writeFile(gpa, top, "out.txt", "outside\n");
    if (std.c.symlinkat("../out.txt", tmp.dir.handle, "root/link") != 0) return error.Setup;
    var root_buf: [std.c.PATH_MAX]u8 = undefined;
    const root = try std.fmt.bufPrint(&root_buf, "{s}/root", .{top});
    var real_buf: [std.c.PATH_MAX]u8 = undefined;
    const top_z = try gpa.dupeZ(u8, top);
    defer gpa.free(top_z);
    const real_top = std.mem.sliceTo(std.c.realpath(top_z, &real_buf).?, 0);

    var arena: std.heap.ArenaAllocator = .init(gpa);
    defer arena.deinit();
    const a = arena.allocator();
    const absolute = try std.fmt.allocPrint(a, "{{\"path\":\"{s}/out.txt\"}}", .{real_top});
    for ([_][]const u8{ "{\"path\":\"../out.txt\"}", absolute, "{\"path\":\"link\"}" }) |text| {
        const input = try std.json.parseFromSliceLeaky(std.json.Value, a, text, .{});
        const confined = try run(gpa, .{ .root = root }, input);
        defer gpa.free(confined.content);
        try std.testing.expect(confined.is_error);
        const free = try run(gpa, .{ .root = root, .confined = false }, input);
        defer gpa.free(free.content);
        try std.testing.expectEqualStrings("outside\n", free.content);
    }
    // Still only a regular file.
    const dir = try run(gpa, .{ .root = root, .confined = false }, try std.json.parseFromSliceLeaky(std.json.Value, a, "{\"path\":\"..\"}", .{}));
    defer gpa.free(dir.content);
    try std.testing.expect(dir.is_error);
}

fn tmpPath(tmp: *std.testing.TmpDir, buf: *[std.c.PATH_MAX]u8) ![]const u8 {
    const rel = try std.fmt.bufPrintZ(buf, ".zig-cache/tmp/{s}", .{tmp.sub_path});
    return rel;
}

fn writeFile(gpa: Allocator, dir: []const u8, file: []const u8, bytes: []const u8) !void {
    const path = try std.fmt.allocPrintSentinel(gpa, "{s}/{s}", .{ dir, file }, 0);
    defer gpa.free(path);
    const fd = std.c.open(path, .{ .ACCMODE = .WRONLY, .CREAT = true, .TRUNC = true }, @as(std.c.mode_t, 0o644));
    if (fd < 0) return error.CannotWrite;
    defer _ = std.c.close(fd);
    if (std.c.write(fd, bytes.ptr, bytes.len) != @as(isize, @intCast(bytes.len))) return error.CannotWrite;
}
