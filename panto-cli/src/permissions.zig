//! Permissions (docs/cli.md, "Approvals"): the `permissions` of the config file and of a
//! trusted project's `.panto/config.json`, `{"allow": [...], "ask": [...], "deny": [...]}`,
//! each entry `TOOL` or `TOOL(PATTERN)` (`bash(git status*)`, `write(src/**)`), made into the
//! core's `approval_rules`, with the path rule of every file tool: a path outside the working
//! directory asks (the core's `outside` match). The core decides; nothing here runs per call.
const std = @import("std");
const panto = @import("panto");

/// Where an entry's pattern looks in the call's input: bash's command, any other tool's path.
pub fn pointerOf(tool: []const u8) []const u8 {
    return if (std.mem.eql(u8, tool, "bash")) "/command" else "/path";
}

/// The tools whose `path` is a file the path rule covers.
pub const file_tools = [_][]const u8{ "read", "write", "edit" };

/// One settings file's `permissions` object and its file's name (for a message).
pub const Source = struct { file: []const u8, value: std.json.Value };

const decisions = [_][]const u8{ "deny", "ask", "allow" };

/// The approval rules, in the order the core tries them: every `deny` (the project's, then
/// the user's), a file tool's path outside `cwd` asks, every `ask`, every `allow`, then the
/// config's own `approval_rules` (`given`). A deny wins over everything, an outside path
/// asks whatever an `allow` says (only --yolo runs it unasked). A malformed entry: the
/// message in `problem.*`, error.Invalid.
pub fn compose(arena: std.mem.Allocator, sources: []const Source, cwd: []const u8, given: ?std.json.Value, problem: *[]const u8) error{ Invalid, OutOfMemory }!std.json.Array {
    var rules = std.json.Array.init(arena);
    for (sources) |s| if (s.value != .object) {
        problem.* = try std.fmt.allocPrint(arena, "{s}: permissions must be an object: {{\"allow\": [...], \"ask\": [...], \"deny\": [...]}}", .{s.file});
        return error.Invalid;
    } else {
        var it = s.value.object.iterator();
        while (it.next()) |e| for (decisions) |d| {
            if (std.mem.eql(u8, d, e.key_ptr.*)) break;
        } else {
            problem.* = try std.fmt.allocPrint(arena, "{s}: permissions: unknown key \"{s}\" (allow, ask or deny)", .{ s.file, e.key_ptr.* });
            return error.Invalid;
        };
    };
    for (decisions) |decision| {
        if (std.mem.eql(u8, decision, "ask")) for (file_tools) |tool| try rules.append(try outsideRule(arena, tool, cwd));
        for (sources) |s| {
            const list = s.value.object.get(decision) orelse continue;
            if (list != .array) {
                problem.* = try std.fmt.allocPrint(arena, "{s}: permissions.{s} must be an array of \"TOOL\" or \"TOOL(PATTERN)\"", .{ s.file, decision });
                return error.Invalid;
            }
            for (list.array.items, 0..) |item, i| {
                const r = if (item == .string) try rule(arena, item.string, decision) else null;
                try rules.append(r orelse {
                    problem.* = try std.fmt.allocPrint(arena, "{s}: permissions.{s}[{d}] must be \"TOOL\" or \"TOOL(PATTERN)\", as \"bash(git status*)\" or \"write(src/**)\"", .{ s.file, decision, i });
                    return error.Invalid;
                });
            }
        }
    }
    if (given) |g| if (g == .array) try rules.appendSlice(g.array.items) else try rules.append(g); // (the core refuses a non-array)
    return rules;
}

/// An entry's parts: `TOOL` or `TOOL(PATTERN)`, or null when it is neither (a tool's name is
/// letters, digits, `_`, `-`, `.`, or `*`; a pattern is not empty).
pub const Entry = struct {
    tool: []const u8,
    pattern: ?[]const u8,

    pub fn parse(entry: []const u8) ?Entry {
        const open = std.mem.indexOfScalar(u8, entry, '(');
        const tool = std.mem.trim(u8, if (open) |o| entry[0..o] else entry, " ");
        if (tool.len == 0) return null;
        for (tool) |ch| if (!(std.ascii.isAlphanumeric(ch) or ch == '_' or ch == '-' or ch == '.' or ch == '*')) return null;
        const o = open orelse return .{ .tool = tool, .pattern = null };
        if (entry[entry.len - 1] != ')' or entry.len - 1 == o + 1) return null;
        var pattern = entry[o + 1 .. entry.len - 1];
        // The calls' paths are relative to the working directory: `./src/**` is `src/**`.
        if (!std.mem.eql(u8, pointerOf(tool), "/command") and std.mem.startsWith(u8, pattern, "./")) pattern = pattern[2..];
        return .{ .tool = tool, .pattern = pattern };
    }
};

/// `TOOL` or `TOOL(PATTERN)` as an approval rule, or null when it is neither.
pub fn rule(arena: std.mem.Allocator, entry: []const u8, decision: []const u8) error{OutOfMemory}!?std.json.Value {
    const e = Entry.parse(entry) orelse return null;
    var r: std.json.ObjectMap = .empty;
    try r.put(arena, "tool", .{ .string = e.tool });
    if (e.pattern) |pattern| {
        var input: std.json.ObjectMap = .empty;
        try input.put(arena, "path", .{ .string = pointerOf(e.tool) });
        try input.put(arena, "glob", .{ .string = pattern });
        try r.put(arena, "input", .{ .object = input });
    }
    try r.put(arena, "decision", .{ .string = decision });
    return .{ .object = r };
}

fn outsideRule(arena: std.mem.Allocator, tool: []const u8, cwd: []const u8) error{OutOfMemory}!std.json.Value {
    var input: std.json.ObjectMap = .empty;
    try input.put(arena, "path", .{ .string = "/path" });
    try input.put(arena, "outside", .{ .string = cwd });
    var r: std.json.ObjectMap = .empty;
    try r.put(arena, "tool", .{ .string = tool });
    try r.put(arena, "input", .{ .object = input });
    try r.put(arena, "decision", .{ .string = "ask" });
    return .{ .object = r };
}

/// "Allow this rule" for a call (the approval prompt's `p`): the entry a user would write to
/// allow calls like it, or null when there is none better than the tool. bash: the command's
/// first word, and its second when it is a subcommand (`git status*`, `ls*`); a file tool:
/// the path's folder (`src/*`).
pub fn ruleFor(buf: []u8, tool: []const u8, input: std.json.Value) ?[]const u8 {
    if (input != .object) return null;
    const v = input.object.get(if (std.mem.eql(u8, tool, "bash")) "command" else "path") orelse return null;
    if (v != .string) return null;
    const text = std.mem.trim(u8, v.string, " \t");
    if (std.mem.eql(u8, tool, "bash")) {
        var words = std.mem.tokenizeAny(u8, text, " \t");
        const first = words.next() orelse return null;
        if (!plainWord(first)) return null;
        const second = words.next();
        const end = if (second != null and plainWord(second.?) and std.ascii.isAlphabetic(second.?[0]))
            @intFromPtr(second.?.ptr) + second.?.len - @intFromPtr(text.ptr)
        else
            first.len;
        return std.fmt.bufPrint(buf, "bash({s}*)", .{text[0..end]}) catch null;
    }
    const dir = std.fs.path.dirname(text) orelse return null;
    if (dir.len == 0 or std.mem.indexOfAny(u8, dir, "*?()") != null) return null;
    return std.fmt.bufPrint(buf, "{s}({s}/*)", .{ tool, dir }) catch null;
}

/// Whether the entry `TOOL(PATTERN)` (or `TOOL`) matches a call of `name` with `input`, as
/// the core's rule made of it by `rule` would (approval.glob on the pointed string).
pub fn matches(entry: []const u8, name: []const u8, input: std.json.Value) bool {
    const e = Entry.parse(entry) orelse return false;
    if (!std.mem.eql(u8, e.tool, "*") and !std.mem.eql(u8, e.tool, name)) return false;
    const pattern = e.pattern orelse return true;
    if (input != .object) return false;
    const v = input.object.get(pointerOf(e.tool)[1..]) orelse return false;
    return v == .string and panto.approval.glob(pattern, v.string);
}

/// A word that is a command's name or subcommand, not an operator, option or quoting.
fn plainWord(w: []const u8) bool {
    if (w.len == 0 or w[0] == '-') return false;
    for (w) |ch| if (!(std.ascii.isAlphanumeric(ch) or ch == '_' or ch == '-' or ch == '.' or ch == '/')) return false;
    return true;
}

test "entries become rules; malformed ones are refused" {
    var arena: std.heap.ArenaAllocator = .init(std.testing.allocator);
    defer arena.deinit();
    const a = arena.allocator();
    const cases = [_]struct { []const u8, ?[]const u8 }{
        .{ "bash(git status*)", "{\"tool\":\"bash\",\"input\":{\"path\":\"/command\",\"glob\":\"git status*\"},\"decision\":\"allow\"}" },
        .{ "write(./src/**)", "{\"tool\":\"write\",\"input\":{\"path\":\"/path\",\"glob\":\"src/**\"},\"decision\":\"allow\"}" },
        .{ "edit", "{\"tool\":\"edit\",\"decision\":\"allow\"}" },
        .{ "bash(git", null },
        .{ "bash()", null },
        .{ "(x)", null },
        .{ "ba sh", null },
    };
    for (cases) |c| {
        const got = try rule(a, c[0], "allow");
        if (c[1]) |want| {
            try std.testing.expectEqualStrings(want, try std.json.Stringify.valueAlloc(a, got.?, .{}));
        } else try std.testing.expect(got == null);
    }
}

test "ruleFor: the command's name and subcommand, or the path's folder" {
    var arena: std.heap.ArenaAllocator = .init(std.testing.allocator);
    defer arena.deinit();
    const a = arena.allocator();
    var buf: [256]u8 = undefined;
    const cases = [_]struct { []const u8, []const u8, ?[]const u8 }{
        .{ "bash", "{\"command\":\"git status --short\"}", "bash(git status*)" },
        .{ "bash", "{\"command\":\"ls -la\"}", "bash(ls*)" },
        .{ "bash", "{\"command\":\"npm run build\"}", "bash(npm run*)" },
        .{ "bash", "{\"command\":\"FOO=1 make\"}", null },
        .{ "write", "{\"path\":\"src/a/b.zig\"}", "write(src/a/*)" },
        .{ "edit", "{\"path\":\"notes.txt\"}", null },
    };
    for (cases) |c| {
        const input = try std.json.parseFromSliceLeaky(std.json.Value, a, c[1], .{});
        const got = ruleFor(&buf, c[0], input);
        if (c[2]) |want| {
            try std.testing.expectEqualStrings(want, got.?);
            try std.testing.expect(matches(got.?, c[0], input));
        } else try std.testing.expect(got == null);
    }
}
