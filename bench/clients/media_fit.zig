//! `media_fit IN OUT`: fits the image in file IN with libpanto's media pipeline (media.fit)
//! and writes what would be sent to OUT; prints
//! `RESULT <seconds> <width> <height> <bytes> <media_type>`, the seconds from before reading IN
//! to after writing OUT (bench/images.py; Pillow's consumer prints the same).
const std = @import("std");
const media = @import("media");

const FILE = opaque {};
extern "c" fn fopen(path: [*:0]const u8, mode: [*:0]const u8) ?*FILE;
extern "c" fn fread(ptr: [*]u8, size: usize, n: usize, f: *FILE) usize;
extern "c" fn fwrite(ptr: [*]const u8, size: usize, n: usize, f: *FILE) usize;
extern "c" fn fseek(f: *FILE, offset: c_long, whence: c_int) c_int;
extern "c" fn ftell(f: *FILE) c_long;
extern "c" fn fclose(f: *FILE) c_int;

fn now() f64 {
    var ts: std.c.timespec = undefined;
    _ = std.c.clock_gettime(.MONOTONIC, &ts);
    return @as(f64, @floatFromInt(ts.sec)) + @as(f64, @floatFromInt(ts.nsec)) / 1e9;
}

pub fn main(init: std.process.Init.Minimal) !void {
    const gpa = std.heap.c_allocator;
    var args = init.args.iterate();
    _ = args.next();
    const in_path = args.next() orelse return error.Usage;
    const out_path = args.next() orelse return error.Usage;

    const start = now();
    const in = fopen(in_path, "rb") orelse return error.CannotOpen;
    _ = fseek(in, 0, 2);
    const len: usize = @intCast(ftell(in));
    _ = fseek(in, 0, 0);
    const bytes = try gpa.alloc(u8, len);
    defer gpa.free(bytes);
    if (fread(bytes.ptr, 1, len, in) != len) return error.CannotRead;
    _ = fclose(in);

    const outcome = try media.fit(gpa, .{ .bytes = bytes });
    defer outcome.deinit(gpa);
    const f = switch (outcome) {
        .fitted => |f| f,
        .dropped => |note| {
            std.debug.print("{s}\n", .{note});
            return error.Dropped;
        },
    };
    const out = fopen(out_path, "wb") orelse return error.CannotOpen;
    if (fwrite(f.data.ptr, 1, f.data.len, out) != f.data.len) return error.CannotWrite;
    _ = fclose(out);
    const seconds = now() - start;

    var buf: [256]u8 = undefined;
    const line = try std.fmt.bufPrint(&buf, "RESULT {d:.4} {d} {d} {d} {s}\n", .{ seconds, f.width, f.height, f.data.len, f.media_type });
    _ = std.c.write(1, line.ptr, line.len);
}
