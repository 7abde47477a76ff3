//! Names the user gives (tools, capabilities, session ids) checked against those that exist:
//! a name no one has is a usage error that names it and the valid ones, or the nearest one,
//! never a silent drop.
const std = @import("std");
const panto = @import("panto");
const Settings = @import("settings.zig").Settings;

/// The candidate nearest to `name` when it is near enough to be a typo of it (an edit
/// distance of at most a third of its length, at least 2: "exce" is "exec"), else null.
pub fn nearest(name: []const u8, candidates: []const []const u8) ?[]const u8 {
    var best: ?[]const u8 = null;
    var best_distance: usize = @max(2, name.len / 3) + 1;
    for (candidates) |c| {
        const d = distance(name, c);
        if (d < best_distance) {
            best = c;
            best_distance = d;
        }
    }
    return best;
}

/// The Levenshtein distance of two short names (longer ones count as far apart).
fn distance(a: []const u8, b: []const u8) usize {
    const max = 64;
    if (a.len > max or b.len > max) return std.math.maxInt(usize);
    var row: [max + 1]usize = undefined;
    for (0..b.len + 1) |j| row[j] = j;
    for (a, 1..) |ca, i| {
        var diagonal = row[0];
        row[0] = i;
        for (b, 1..) |cb, j| {
            const above = row[j];
            row[j] = @min(@min(row[j] + 1, row[j - 1] + 1), diagonal + @intFromBool(ca != cb));
            diagonal = above;
        }
    }
    return row[b.len];
}

pub const Kind = struct { one: []const u8, many: []const u8 };
pub const tool: Kind = .{ .one = "tool", .many = "tools" };
pub const capability: Kind = .{ .one = "capability", .many = "capabilities" };

/// `WHERE: unknown KIND "name" (did you mean "x"?); the KINDS: a, b, c` for a name no one has.
pub fn unknown(arena: std.mem.Allocator, where: []const u8, kind: Kind, name: []const u8, candidates: []const []const u8) error{OutOfMemory}![]const u8 {
    const list = try std.mem.join(arena, ", ", candidates);
    if (nearest(name, candidates)) |near|
        return std.fmt.allocPrint(arena, "{s}: unknown {s} \"{s}\" (did you mean \"{s}\"?); the {s}: {s}", .{ where, kind.one, name, near, kind.many, list });
    return std.fmt.allocPrint(arena, "{s}: unknown {s} \"{s}\"; the {s}: {s}", .{ where, kind.one, name, kind.many, list });
}

/// Checks the tools and capabilities the settings name against those that exist: the native
/// read tool and the extensions' `tools` (registered, offered or not). A tool named must
/// exist and have its capabilities granted; a capability granted must be one some tool
/// needs. The problem as a line for "panto: ...", or null.
pub fn checkSettings(arena: std.mem.Allocator, s: *const Settings, tools: []const panto.tools.Tool) error{OutOfMemory}!?[]const u8 {
    var tool_names: std.ArrayList([]const u8) = .empty;
    var caps: std.ArrayList([]const u8) = .empty;
    try caps.append(arena, native_read.capability);
    if (s.native_read) try tool_names.append(arena, native_read.name);
    for (tools) |t| {
        if (!contains(tool_names.items, t.name)) try tool_names.append(arena, t.name);
        for (t.capabilities) |c| if (!contains(caps.items, c)) try caps.append(arena, c);
    }
    for ([_]struct { []const u8, []const []const u8 }{ .{ "--allow", s.allow_flag }, .{ "allow", s.allow_file } }) |given| {
        const where = if (given[0][0] == '-') given[0] else try std.fmt.allocPrint(arena, "{s}: allow", .{s.config_path});
        for (given[1]) |c| if (!contains(caps.items, c)) return try unknown(arena, where, capability, c, caps.items);
    }
    for (s.offered orelse &.{}) |name| {
        if (!contains(tool_names.items, name)) return try unknown(arena, s.offered_by, tool, name, tool_names.items);
        const needs: []const []const u8 = for (tools) |t| {
            if (std.mem.eql(u8, t.name, name)) break t.capabilities;
        } else &.{native_read.capability};
        for (needs) |c| if (!contains(s.granted, c))
            return try std.fmt.allocPrint(arena, "{s}: {s} needs the capability {s}: grant it with --allow {s}", .{ s.offered_by, name, c, c });
    }
    return null;
}

/// The core's native read tool (libpanto/src/read_tool.zig), which the registry of the
/// extensions does not hold.
const native_read = .{ .name = "read", .capability = "fs.read" };

fn contains(list: []const []const u8, name: []const u8) bool {
    for (list) |n| if (std.mem.eql(u8, n, name)) return true;
    return false;
}

test "nearest: a typo, not a stranger" {
    const tools = [_][]const u8{ "read", "write", "edit", "bash" };
    try std.testing.expectEqualStrings("bash", nearest("bsh", &tools).?);
    try std.testing.expectEqualStrings("write", nearest("wrte", &tools).?);
    try std.testing.expect(nearest("nope", &tools) == null);
    const caps = [_][]const u8{ "fs.read", "fs.write", "exec" };
    try std.testing.expectEqualStrings("fs.write", nearest("fs.wrte", &caps).?);
    try std.testing.expectEqualStrings("exec", nearest("exce", &caps).?);
}

test "unknown names the name, the nearest and the valid ones" {
    var arena: std.heap.ArenaAllocator = .init(std.testing.allocator);
    defer arena.deinit();
    const caps = [_][]const u8{ "fs.read", "fs.write", "exec" };
    try std.testing.expectEqualStrings(
        "--allow: unknown capability \"nope\"; the capabilities: fs.read, fs.write, exec",
        try unknown(arena.allocator(), "--allow", capability, "nope", &caps),
    );
}
