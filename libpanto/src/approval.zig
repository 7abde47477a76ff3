//! Which tool calls wait for a person's yes (issue 36, docs/design/approvals-and-steering.md):
//! a tool's declaration (`"approval": "always"`) and the agent's `approval_rules`, an ordered
//! list evaluated on the call's name and JSON input, the first match winning. The core
//! decides from this data alone: it never calls back into the host.
const std = @import("std");
const Allocator = std.mem.Allocator;
const Diagnostic = @import("config.zig").Diagnostic;
const path_rule = @import("path_rule.zig");

/// What happens to a call: it waits for an answer (`ask`), runs (`allow`) or is answered at
/// once with an error result (`deny`).
pub const Decision = enum { ask, allow, deny };

/// A tool declaration's default for its calls when no rule matches.
pub const ToolApproval = enum { never, always };

/// How a rule looks at the string its `path` points to. No regular expressions: `glob` knows
/// `*` (any run of characters, `/` too) and `?` (one character). `outside` takes the pattern
/// for a directory and the string for a file path: it matches a path that leads out of the
/// directory (path_rule.check: relative to it or absolute, by `..` or through a symlink in
/// what exists of it), so that a file tool's call elsewhere than its root can ask.
pub const Match = enum { prefix, contains, glob, outside };

pub const Rule = struct {
    /// A tool's name, or "*" for every tool.
    tool: []const u8 = "*",
    /// The input the rule looks at, or null: the rule matches every call of `tool`.
    input: ?Input = null,
    decision: Decision,
    /// For `deny`: said to the model in the call's error result.
    reason: ?[]const u8 = null,

    pub const Input = struct {
        /// A JSON pointer (RFC 6901) into the call's input: "/command", "/paths/0".
        path: []const u8,
        match: Match,
        pattern: []const u8,
    };
};

/// A call's decision, and the reason of the rule that made it (a deny's).
pub const Verdict = struct { decision: Decision, reason: ?[]const u8 = null };

/// The decision for a call of a tool declared with `declared`, whose input is `input`:
/// the first rule that matches, else `ask` for a tool that says "always", else `allow`.
pub fn decide(rules: []const Rule, declared: ToolApproval, name: []const u8, input: std.json.Value) Verdict {
    for (rules) |r| if (ruleMatches(r, name, input)) return .{ .decision = r.decision, .reason = r.reason };
    return .{ .decision = if (declared == .always) .ask else .allow };
}

fn ruleMatches(r: Rule, name: []const u8, input: std.json.Value) bool {
    if (!std.mem.eql(u8, r.tool, "*") and !std.mem.eql(u8, r.tool, name)) return false;
    const want = r.input orelse return true;
    // Only a string is matched: a number, an object or a missing member is not one.
    const value = pointTo(input, want.path) orelse return false;
    if (value != .string) return false;
    const text = value.string;
    return switch (want.match) {
        .prefix => std.mem.startsWith(u8, text, want.pattern),
        .contains => std.mem.indexOf(u8, text, want.pattern) != null,
        .glob => glob(want.pattern, text),
        .outside => outside(want.pattern, text),
    };
}

/// `path` leads out of the directory `root` (or is the root itself, or empty). A root that
/// cannot be opened leaves every path outside: the rule errs toward asking.
fn outside(root: []const u8, path: []const u8) bool {
    var buf: [4 * std.c.PATH_MAX]u8 = undefined;
    var fba: std.heap.FixedBufferAllocator = .init(&buf);
    _ = path_rule.check(fba.allocator(), root, path) catch return true;
    return false;
}

/// The value `pointer` names in `root` (RFC 6901: "" is the whole, "~1" a "/", "~0" a "~").
fn pointTo(root: std.json.Value, pointer: []const u8) ?std.json.Value {
    if (pointer.len == 0) return root;
    if (pointer[0] != '/') return null;
    var value = root;
    var tokens = std.mem.splitScalar(u8, pointer[1..], '/');
    var buf: [256]u8 = undefined;
    while (tokens.next()) |raw| {
        const token = unescape(raw, &buf) orelse return null;
        switch (value) {
            .object => |o| value = o.get(token) orelse return null,
            .array => |a| {
                // Digits only, no leading zero (RFC 6901's array index).
                if (token.len == 0 or (token.len > 1 and token[0] == '0')) return null;
                const i = std.fmt.parseInt(usize, token, 10) catch return null;
                if (i >= a.items.len) return null;
                value = a.items[i];
            },
            else => return null,
        }
    }
    return value;
}

/// A pointer's token with "~1" and "~0" decoded into `buf`; null when it is malformed or long.
fn unescape(raw: []const u8, buf: []u8) ?[]const u8 {
    var n: usize = 0;
    var i: usize = 0;
    while (i < raw.len) : (i += 1) {
        if (n == buf.len) return null;
        var c = raw[i];
        if (c == '~') {
            i += 1;
            if (i == raw.len) return null;
            c = switch (raw[i]) {
                '0' => '~',
                '1' => '/',
                else => return null,
            };
        }
        buf[n] = c;
        n += 1;
    }
    return buf[0..n];
}

/// Whether `text` matches `pattern`, `*` any run of bytes and `?` one byte (iterative, with
/// one point to come back to: linear in practice, never exponential).
pub fn glob(pattern: []const u8, text: []const u8) bool {
    var p: usize = 0;
    var t: usize = 0;
    var star: ?usize = null;
    var star_t: usize = 0;
    while (t < text.len) {
        if (p < pattern.len and (pattern[p] == '?' or pattern[p] == text[t])) {
            p += 1;
            t += 1;
        } else if (p < pattern.len and pattern[p] == '*') {
            star = p;
            star_t = t;
            p += 1;
        } else if (star) |s| {
            p = s + 1;
            star_t += 1;
            t = star_t;
        } else return false;
    }
    while (p < pattern.len and pattern[p] == '*') p += 1;
    return p == pattern.len;
}

/// Parses the config's `approval_rules` (a JSON array of rule objects); strings stay in `value`.
pub fn parseRules(arena: Allocator, value: std.json.Value, diag: *Diagnostic) error{ InvalidConfig, OutOfMemory }![]const Rule {
    if (value != .array) return diag.fail("approval_rules must be an array of rules", .{});
    const rules = try arena.alloc(Rule, value.array.items.len);
    for (value.array.items, rules, 0..) |item, *r, i| r.* = try parseRule(item, i, diag);
    return rules;
}

fn parseRule(v: std.json.Value, i: usize, diag: *Diagnostic) error{InvalidConfig}!Rule {
    if (v != .object) return diag.fail("approval_rules[{d}] must be an object", .{i});
    var it = v.object.iterator();
    while (it.next()) |entry| {
        const known = [_][]const u8{ "tool", "input", "decision", "reason" };
        for (known) |k| {
            if (std.mem.eql(u8, k, entry.key_ptr.*)) break;
        } else return diag.fail("approval_rules[{d}]: unknown key \"{s}\"", .{ i, entry.key_ptr.* });
    }
    var r: Rule = .{ .decision = .ask };
    if (v.object.get("tool")) |t| {
        if (t != .string or t.string.len == 0) return diag.fail("approval_rules[{d}].tool must be a tool's name or \"*\"", .{i});
        r.tool = t.string;
    }
    const d = v.object.get("decision") orelse return diag.fail("approval_rules[{d}] needs \"decision\": \"ask\", \"allow\" or \"deny\"", .{i});
    r.decision = if (d == .string) std.meta.stringToEnum(Decision, d.string) orelse
        return diag.fail("approval_rules[{d}].decision must be \"ask\", \"allow\" or \"deny\"", .{i}) else return diag.fail("approval_rules[{d}].decision must be \"ask\", \"allow\" or \"deny\"", .{i});
    if (v.object.get("reason")) |reason| {
        if (reason != .string) return diag.fail("approval_rules[{d}].reason must be a string", .{i});
        r.reason = reason.string;
    }
    if (v.object.get("input")) |input| r.input = try parseInput(input, i, diag);
    return r;
}

fn parseInput(v: std.json.Value, i: usize, diag: *Diagnostic) error{InvalidConfig}!Rule.Input {
    const shape = "approval_rules[{d}].input must be {{\"path\": a JSON pointer, and one of \"prefix\", \"contains\", \"glob\" or \"outside\": a string}}";
    if (v != .object) return diag.fail(shape, .{i});
    const path = v.object.get("path") orelse return diag.fail(shape, .{i});
    if (path != .string or (path.string.len > 0 and path.string[0] != '/'))
        return diag.fail("approval_rules[{d}].input.path must be a JSON pointer (\"/command\")", .{i});
    var found: ?Rule.Input = null;
    var it = v.object.iterator();
    while (it.next()) |entry| {
        const key = entry.key_ptr.*;
        if (std.mem.eql(u8, key, "path")) continue;
        const match = std.meta.stringToEnum(Match, key) orelse
            return diag.fail("approval_rules[{d}].input: unknown key \"{s}\"", .{ i, key });
        if (found != null) return diag.fail(shape, .{i});
        if (entry.value_ptr.* != .string) return diag.fail(shape, .{i});
        found = .{ .path = path.string, .match = match, .pattern = entry.value_ptr.string };
    }
    return found orelse diag.fail(shape, .{i});
}

/// Copies `rules` and their strings into `arena` (the agent keeps its own).
pub fn dupeRules(arena: Allocator, rules: []const Rule) Allocator.Error![]const Rule {
    const out = try arena.alloc(Rule, rules.len);
    for (rules, out) |r, *o| {
        o.* = .{ .tool = try arena.dupe(u8, r.tool), .decision = r.decision };
        if (r.reason) |reason| o.reason = try arena.dupe(u8, reason);
        if (r.input) |in| o.input = .{ .path = try arena.dupe(u8, in.path), .match = in.match, .pattern = try arena.dupe(u8, in.pattern) };
    }
    return out;
}

fn parsedRules(arena: Allocator, json: []const u8) ![]const Rule {
    var diag: Diagnostic = .{};
    const v = try std.json.parseFromSliceLeaky(std.json.Value, arena, json, .{});
    return parseRules(arena, v, &diag);
}

test "rules: the first match wins, by tool and by a pointer's prefix, contains or glob" {
    var arena: std.heap.ArenaAllocator = .init(std.testing.allocator);
    defer arena.deinit();
    const a = arena.allocator();
    const rules = try parsedRules(a,
        \\[{"tool":"bash","input":{"path":"/command","prefix":"rm "},"decision":"deny","reason":"no rm"},
        \\ {"tool":"bash","input":{"path":"/command","glob":"git * --force*"},"decision":"ask"},
        \\ {"tool":"bash","input":{"path":"/command","contains":"sudo"},"decision":"ask"},
        \\ {"tool":"bash","decision":"allow"},
        \\ {"tool":"*","input":{"path":"/a~1b/0","prefix":"x"},"decision":"ask"}]
    );
    const cases = [_]struct { []const u8, []const u8, ToolApproval, Decision }{
        .{ "bash", "{\"command\":\"rm -rf /\"}", .never, .deny },
        .{ "bash", "{\"command\":\"git push --force-with-lease\"}", .never, .ask },
        .{ "bash", "{\"command\":\"ls; sudo ls\"}", .never, .ask },
        .{ "bash", "{\"command\":\"ls\"}", .always, .allow }, // a rule wins over the declaration
        .{ "bash", "{\"command\":42}", .never, .allow }, // not a string: the input rules pass
        .{ "edit", "{\"a/b\":[\"xy\"]}", .never, .ask },
        .{ "edit", "{\"a/b\":[\"yx\"]}", .never, .allow },
        .{ "edit", "{\"a/b\":[]}", .always, .ask }, // no rule: the declaration
    };
    for (cases) |c| {
        const input = try std.json.parseFromSliceLeaky(std.json.Value, a, c[1], .{});
        try std.testing.expectEqual(c[3], decide(rules, c[2], c[0], input).decision);
    }
    const input = try std.json.parseFromSliceLeaky(std.json.Value, a, "{\"command\":\"rm x\"}", .{});
    try std.testing.expectEqualStrings("no rm", decide(rules, .never, "bash", input).reason.?);
}

test "outside: a path that leaves the directory, by `..`, an absolute path or a symlink" {
    var tmp = std.testing.tmpDir(.{});
    defer tmp.cleanup();
    if (std.c.mkdirat(tmp.dir.handle, "root", 0o755) != 0) return error.Setup;
    if (std.c.symlinkat("..", tmp.dir.handle, "root/up") != 0) return error.Setup;
    var buf: [std.c.PATH_MAX]u8 = undefined;
    const root = try std.fmt.bufPrint(&buf, ".zig-cache/tmp/{s}/root", .{tmp.sub_path});
    var arena: std.heap.ArenaAllocator = .init(std.testing.allocator);
    defer arena.deinit();
    const a = arena.allocator();
    const rule_json = try std.fmt.allocPrint(a, "[{{\"tool\":\"write\",\"input\":{{\"path\":\"/path\",\"outside\":\"{s}\"}},\"decision\":\"ask\"}}]", .{root});
    const rules = try parsedRules(a, rule_json);
    const cases = [_]struct { []const u8, Decision }{
        .{ "{\"path\":\"notes.txt\"}", .allow },
        .{ "{\"path\":\"sub/new.txt\"}", .allow },
        .{ "{\"path\":\"../x.txt\"}", .ask },
        .{ "{\"path\":\"/etc/hosts\"}", .ask },
        .{ "{\"path\":\"up/x.txt\"}", .ask }, // through the symlink
        .{ "{\"path\":\"\"}", .ask },
        .{ "{\"content\":\"no path\"}", .allow }, // no string there: the rule passes
    };
    for (cases) |c| {
        const input = try std.json.parseFromSliceLeaky(std.json.Value, a, c[0], .{});
        std.testing.expectEqual(c[1], decide(rules, .never, "write", input).decision) catch |err| {
            std.debug.print("{s}\n", .{c[0]});
            return err;
        };
    }
}

test "glob: * spans anything, ? one byte, the rest literally" {
    try std.testing.expect(glob("*.txt", "a/b.txt"));
    try std.testing.expect(glob("a?c", "abc"));
    try std.testing.expect(!glob("a?c", "ac"));
    try std.testing.expect(glob("*", ""));
    try std.testing.expect(glob("a*b*c", "axxbyyc"));
    try std.testing.expect(!glob("a*b*c", "axxbyy"));
    try std.testing.expect(!glob("abc", "abcd"));
}

test "rules are refused with a reason when malformed" {
    var arena: std.heap.ArenaAllocator = .init(std.testing.allocator);
    defer arena.deinit();
    const a = arena.allocator();
    const cases = [_]struct { []const u8, []const u8 }{
        .{ "{}", "approval_rules must be an array of rules" },
        .{ "[{\"tool\":\"x\"}]", "approval_rules[0] needs \"decision\"" },
        .{ "[{\"decision\":\"maybe\"}]", "approval_rules[0].decision must be" },
        .{ "[{\"decision\":\"ask\",\"when\":1}]", "approval_rules[0]: unknown key \"when\"" },
        .{ "[{\"decision\":\"ask\",\"input\":{\"path\":\"command\",\"prefix\":\"rm\"}}]", "must be a JSON pointer" },
        .{ "[{\"decision\":\"ask\",\"input\":{\"path\":\"/c\",\"regex\":\"rm\"}}]", "unknown key \"regex\"" },
        .{ "[{\"decision\":\"ask\",\"input\":{\"path\":\"/c\"}}]", "one of \"prefix\"" },
        .{ "[{\"decision\":\"ask\",\"input\":{\"path\":\"/c\",\"prefix\":\"a\",\"glob\":\"b\"}}]", "one of \"prefix\"" },
    };
    for (cases) |c| {
        var diag: Diagnostic = .{};
        const v = try std.json.parseFromSliceLeaky(std.json.Value, a, c[0], .{});
        try std.testing.expectError(error.InvalidConfig, parseRules(a, v, &diag));
        try std.testing.expect(std.mem.indexOf(u8, diag.message(), c[1]) != null);
    }
}
