//! The caller's PantoPart arrays (a user turn's, a tool result's) checked and read as the
//! core's content parts. The bytes are borrowed for the call.
const std = @import("std");
const panto = @import("panto");
const abi = @import("abi.zig");

const Part = panto.content.Part;

/// What is wrong with the caller's parts, said once for every call that takes them.
pub const Problem = struct {
    buffer: [160]u8 = undefined,
    len: usize = 0,

    fn set(p: *Problem, comptime fmt: []const u8, args: anytype) error{Invalid} {
        const written: []const u8 = std.fmt.bufPrint(&p.buffer, fmt, args) catch &p.buffer;
        p.len = written.len;
        return error.Invalid;
    }

    pub fn message(p: *const Problem) []const u8 {
        return p.buffer[0..p.len];
    }
};

/// The parts `ptr[0..count]` as the core's, in memory of `gpa` (free with `gpa.free`), or
/// error.Invalid with the reason in `problem` (`what` names the array: "input.parts").
pub fn read(gpa: std.mem.Allocator, ptr: ?[*]const abi.Part, count: usize, comptime what: []const u8, problem: *Problem) error{ Invalid, OutOfMemory }![]Part {
    if (count == 0) return &.{};
    const given = ptr orelse return problem.set(what ++ " is NULL but its count is {d}", .{count});
    const out = try gpa.alloc(Part, count);
    errdefer gpa.free(out);
    for (given[0..count], out, 0..) |p, *o, i| {
        if (p.reserved0 != 0) return problem.set(what ++ "[{d}].reserved0 is not 0", .{i});
        o.* = switch (p.kind) {
            @intFromEnum(abi.PartKind.text) => .{ .text = p.text.bytes() orelse
                return problem.set(what ++ "[{d}].text.ptr is NULL but its len is not 0", .{i}) },
            @intFromEnum(abi.PartKind.media) => .{ .media = .{
                .bytes = if (p.data) |d| @as([*]const u8, @ptrCast(d))[0..p.data_len] else if (p.data_len == 0) "" else
                    return problem.set(what ++ "[{d}].data is NULL but data_len is not 0", .{i}),
                .hint = p.media_type.bytes() orelse
                    return problem.set(what ++ "[{d}].media_type.ptr is NULL but its len is not 0", .{i}),
                .name = p.name.bytes() orelse
                    return problem.set(what ++ "[{d}].name.ptr is NULL but its len is not 0", .{i}),
            } },
            else => return problem.set(what ++ "[{d}].kind is {d}: not PANTO_PART_TEXT or PANTO_PART_MEDIA", .{ i, p.kind }),
        };
    }
    return out;
}

test "parts are read, and each wrong one is named" {
    const gpa = std.testing.allocator;
    var problem: Problem = .{};
    const good = [_]abi.Part{
        .{ .kind = 1, .text = .from("hi") },
        .{ .kind = 2, .data = "%PDF-1", .data_len = 6, .name = .from("a.pdf") },
    };
    const parts = try read(gpa, &good, good.len, "input.parts", &problem);
    defer gpa.free(parts);
    try std.testing.expectEqualStrings("hi", parts[0].text);
    try std.testing.expectEqualStrings("%PDF-1", parts[1].media.bytes);
    try std.testing.expectEqualStrings("a.pdf", parts[1].media.name);

    const cases = [_]struct { abi.Part, []const u8 }{
        .{ .{ .kind = 3 }, "input.parts[0].kind is 3: not PANTO_PART_TEXT or PANTO_PART_MEDIA" },
        .{ .{ .kind = 1, .reserved0 = 1 }, "input.parts[0].reserved0 is not 0" },
        .{ .{ .kind = 2, .data_len = 4 }, "input.parts[0].data is NULL but data_len is not 0" },
        .{ .{ .kind = 1, .text = .{ .len = 2 } }, "input.parts[0].text.ptr is NULL but its len is not 0" },
    };
    for (cases) |case| {
        try std.testing.expectError(error.Invalid, read(gpa, &.{case[0]}, 1, "input.parts", &problem));
        try std.testing.expectEqualStrings(case[1], problem.message());
    }
    try std.testing.expectError(error.Invalid, read(gpa, null, 2, "result.parts", &problem));
    try std.testing.expectEqualStrings("result.parts is NULL but its count is 2", problem.message());
    try std.testing.expectEqual(@as(usize, 0), (try read(gpa, null, 0, "input.parts", &problem)).len);
}
