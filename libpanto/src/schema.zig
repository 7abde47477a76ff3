//! Checks a tool's input against its JSON Schema, so a call with bad input gets an error result
//! telling the model what was wrong instead of running the tool. The subset tools use: type
//! (one or a list), properties, required, additionalProperties: false, items, enum, minimum,
//! maximum, allOf, anyOf and oneOf (both read as "at least one"), and local "$ref"s
//! ("#/$defs/X", "#/definitions/X", any "#/..." pointer or "#"), which Pydantic's schemas
//! are made of. Unknown keywords are ignored, as JSON Schema says, and so is a "$ref" that
//! cannot be followed (another document's, one that names nothing, or a loop of "$ref"s
//! that never reaches a value's schema: see max_hops and max_entries).
//!
//! A problem names where it is by the full path from the root: `property "request.passengers[2].name"`.
const std = @import("std");
const Value = std.json.Value;
const utf8 = @import("utf8.zig");

/// What was wrong, for the model to read.
pub const Problem = struct {
    buffer: [256]u8 = undefined,
    len: usize = 0,

    pub fn message(p: *const Problem) []const u8 {
        return p.buffer[0..p.len];
    }

    pub fn set(p: *Problem, comptime fmt: []const u8, args: anytype) void {
        // A message that does not fit (a model's long property name) is cut at a whole
        // character: it goes to the model, and to the bindings, as UTF-8.
        const written = std.fmt.bufPrint(&p.buffer, fmt, args) catch p.buffer[0..utf8.wholePrefix(&p.buffer)];
        p.len = written.len;
    }
};

/// Returns true when `value` matches `schema`; otherwise fills `problem`.
pub fn validate(value: Value, schema: Value, problem: *Problem) bool {
    return validateNamed(value, schema, "input", problem);
}

/// As `validate`, the value named `root` in the problem ("the answer must be an object").
pub fn validateNamed(value: Value, schema: Value, root: []const u8, problem: *Problem) bool {
    var budget: usize = max_entries;
    const at: At = .{ .root_schema = schema, .root_name = root, .path = "", .budget = &budget };
    return check(value, schema, at, 0, problem);
}

/// How many schemas may be entered ("$ref", allOf, anyOf, oneOf) without going one level
/// down the value: more is a loop of "$ref"s (`"A": {"$ref": "#/$defs/A"}`), given up.
const max_hops = 16;

/// How many such schemas one check enters in all: alternatives that lead back to themselves
/// (`{"anyOf": [{"$ref": "#"}, {"$ref": "#"}]}`) would take exponential time; past this
/// many, the rest is not followed.
const max_entries = 1 << 20;

/// Where a check is: the whole schema (what "$ref"s point into) and the value's path.
const At = struct {
    root_schema: Value,
    root_name: []const u8,
    /// "" for the root value, then "city", "request.passengers[2].name", or "[0].name" under
    /// a root array.
    path: []const u8,
    /// Schemas that may still be entered (max_entries).
    budget: *usize,

    /// The value's name in a problem: `input`, `property "a.b[1]"`, `the answer[0]`.
    fn subject(at: At, buf: []u8) []const u8 {
        if (at.path.len == 0) return at.root_name;
        if (at.path[0] == '[') return std.fmt.bufPrint(buf, "{s}{s}", .{ at.root_name, at.path }) catch at.root_name;
        return std.fmt.bufPrint(buf, "property \"{s}\"", .{at.path}) catch "a property";
    }

    /// The path of property `name` of this value, written in `buf`; the parent's path when it
    /// does not fit.
    fn property(at: At, name: []const u8, buf: []u8) []const u8 {
        if (at.path.len == 0) return name;
        return std.fmt.bufPrint(buf, "{s}.{s}", .{ at.path, name }) catch at.path;
    }

    fn down(at: At, path: []const u8) At {
        return .{ .root_schema = at.root_schema, .root_name = at.root_name, .path = path, .budget = at.budget };
    }

    /// Whether one more schema may be entered without going down the value.
    fn enter(at: At, hops: usize) bool {
        if (hops >= max_hops or at.budget.* == 0) return false;
        at.budget.* -= 1;
        return true;
    }
};

/// `hops`: schemas entered since the value last went a level down (see max_hops).
fn check(value: Value, schema: Value, at: At, hops: usize, problem: *Problem) bool {
    if (schema != .object) return true;
    const s = schema.object;
    var name_buf: [160]u8 = undefined;
    if (s.get("$ref")) |r| if (r == .string) if (resolve(at.root_schema, r.string)) |target| if (at.enter(hops)) {
        if (!check(value, target, at, hops + 1, problem)) return false;
    };
    if (s.get("allOf")) |all| if (all == .array) for (all.array.items) |sub| {
        if (at.enter(hops) and !check(value, sub, at, hops + 1, problem)) return false;
    };
    for ([_][]const u8{ "anyOf", "oneOf" }) |key| if (s.get(key)) |any| if (any == .array and any.array.items.len > 0 and at.enter(hops)) {
        if (!checkAny(value, any.array.items, at, hops + 1, problem)) return false;
    };
    if (s.get("type")) |t| {
        if (!typeMatches(value, t)) {
            problem.set("{s} must be {s}, not {s}", .{ at.subject(&name_buf), typeText(t), kindOf(value) });
            return false;
        }
    }
    if (s.get("enum")) |e| if (e == .array) {
        for (e.array.items) |allowed| {
            if (jsonEqual(allowed, value)) break;
        } else {
            problem.set("{s} must be one of the values the schema lists", .{at.subject(&name_buf)});
            return false;
        }
    };
    if (s.get("const")) |c| if (!jsonEqual(c, value) and (c != .object and c != .array)) {
        problem.set("{s} must be the value the schema gives", .{at.subject(&name_buf)});
        return false;
    };
    if (number(value)) |n| {
        if (s.get("minimum")) |m| if (number(m)) |min| if (n < min) {
            problem.set("{s} must be at least {d}", .{ at.subject(&name_buf), min });
            return false;
        };
        if (s.get("maximum")) |m| if (number(m)) |max| if (n > max) {
            problem.set("{s} must be at most {d}", .{ at.subject(&name_buf), max });
            return false;
        };
    }
    switch (value) {
        .object => |obj| {
            if (s.get("required")) |r| if (r == .array) for (r.array.items) |name| {
                if (name == .string and !obj.contains(name.string)) {
                    problem.set("missing required property \"{s}\"", .{at.property(name.string, &name_buf)});
                    return false;
                }
            };
            const props: ?std.json.ObjectMap = if (s.get("properties")) |p| (if (p == .object) p.object else null) else null;
            var it = obj.iterator();
            while (it.next()) |entry| {
                const sub = if (props) |p| p.get(entry.key_ptr.*) else null;
                if (sub) |sub_schema| {
                    if (!check(entry.value_ptr.*, sub_schema, at.down(at.property(entry.key_ptr.*, &name_buf)), 0, problem)) return false;
                } else if (s.get("additionalProperties")) |ap| if (ap == .bool and !ap.bool) {
                    problem.set("unexpected property \"{s}\"", .{at.property(entry.key_ptr.*, &name_buf)});
                    return false;
                };
            }
        },
        .array => |arr| if (s.get("items")) |items| for (arr.items, 0..) |item, i| {
            const item_path = std.fmt.bufPrint(&name_buf, "{s}[{d}]", .{ at.path, i }) catch at.path;
            if (!check(item, items, at.down(item_path), 0, problem)) return false;
        },
        else => {},
    }
    return true;
}

/// anyOf/oneOf: the value matches at least one of `alternatives`. When none does, the problem
/// is the one alternative's whose type the value has (an object missing a property of
/// `Passenger | null` is told about the property), or a general one.
fn checkAny(value: Value, alternatives: []const Value, at: At, hops: usize, problem: *Problem) bool {
    var closest: ?Problem = null;
    var typed_alike: usize = 0;
    for (alternatives) |alt| {
        var why: Problem = .{};
        if (check(value, alt, at, hops, &why)) return true;
        if (typeOf(at.root_schema, alt)) |t| if (!typeMatches(value, t)) continue;
        typed_alike += 1;
        closest = why;
    }
    if (typed_alike == 1) {
        problem.* = closest.?;
    } else {
        var name_buf: [160]u8 = undefined;
        problem.set("{s} matches none of the schemas it may have", .{at.subject(&name_buf)});
    }
    return false;
}

/// A schema's "type", or that of the schema its "$ref" names.
fn typeOf(root: Value, schema: Value) ?Value {
    if (schema != .object) return null;
    if (schema.object.get("type")) |t| return t;
    const ref = schema.object.get("$ref") orelse return null;
    if (ref != .string) return null;
    const target = resolve(root, ref.string) orelse return null;
    return if (target == .object) target.object.get("type") else null;
}

/// The schema a local "$ref" names ("#", "#/$defs/X", any "#/a/b/0" pointer with ~0 and ~1
/// escapes), or null when it is another document's or names nothing.
pub fn resolve(root: Value, ref: []const u8) ?Value {
    if (ref.len == 0 or ref[0] != '#') return null;
    if (ref.len == 1) return root;
    if (ref[1] != '/') return null;
    var node = root;
    var segments = std.mem.splitScalar(u8, ref[2..], '/');
    while (segments.next()) |segment| {
        node = switch (node) {
            .object => |o| blk: {
                var it = o.iterator();
                while (it.next()) |entry| if (pointerSegmentIs(segment, entry.key_ptr.*)) break :blk entry.value_ptr.*;
                return null;
            },
            .array => |a| blk: {
                const i = std.fmt.parseInt(usize, segment, 10) catch return null;
                break :blk if (i < a.items.len) a.items[i] else return null;
            },
            else => return null,
        };
    }
    return node;
}

/// Whether a JSON Pointer segment (with "~1" for "/" and "~0" for "~") names `key`.
fn pointerSegmentIs(segment: []const u8, key: []const u8) bool {
    var i: usize = 0;
    var k: usize = 0;
    while (i < segment.len) : (k += 1) {
        var ch = segment[i];
        i += 1;
        if (ch == '~' and i < segment.len) {
            ch = switch (segment[i]) {
                '0' => '~',
                '1' => '/',
                else => return false,
            };
            i += 1;
        }
        if (k >= key.len or key[k] != ch) return false;
    }
    return k == key.len;
}

fn typeMatches(value: Value, t: Value) bool {
    return switch (t) {
        .string => |name| isType(value, name),
        .array => |names| for (names.items) |n| {
            if (n == .string and isType(value, n.string)) break true;
        } else false,
        else => true,
    };
}

fn isType(value: Value, name: []const u8) bool {
    const eql = std.mem.eql;
    if (eql(u8, name, "string")) return value == .string;
    if (eql(u8, name, "boolean")) return value == .bool;
    if (eql(u8, name, "object")) return value == .object;
    if (eql(u8, name, "array")) return value == .array;
    if (eql(u8, name, "null")) return value == .null;
    if (eql(u8, name, "number")) return number(value) != null;
    // A whole number in any notation (1e20, 1.0, -0, digits beyond 64 bits), as JSON Schema
    // says: whoever uses it checks that it fits (read_tool.readInput does).
    if (eql(u8, name, "integer")) return if (number(value)) |n| @floor(n) == n else false;
    return true; // a type this subset does not know: accept
}

/// The value as a double. std.json leaves integers beyond 64 bits and floats beyond a double's
/// range (1e400: infinity here) as text.
fn number(value: Value) ?f64 {
    return switch (value) {
        .integer => |i| @floatFromInt(i),
        .float => |f| f,
        .number_string => |s| std.fmt.parseFloat(f64, s) catch null,
        else => null,
    };
}

fn typeText(t: Value) []const u8 {
    return switch (t) {
        .string => |s| if (std.mem.eql(u8, s, "object") or std.mem.eql(u8, s, "array") or std.mem.eql(u8, s, "integer")) switch (s[0]) {
            'o' => "an object",
            'a' => "an array",
            else => "an integer",
        } else switch (s[0]) {
            's' => "a string",
            'b' => "a boolean",
            'n' => if (std.mem.eql(u8, s, "null")) "null" else "a number",
            else => s,
        },
        else => "of the allowed types",
    };
}

fn kindOf(value: Value) []const u8 {
    return switch (value) {
        .null => "null",
        .bool => "a boolean",
        .integer, .float, .number_string => "a number",
        .string => "a string",
        .array => "an array",
        .object => "an object",
    };
}

fn jsonEqual(a: Value, b: Value) bool {
    if (number(a)) |x| if (number(b)) |y| return x == y;
    return switch (a) {
        .null => b == .null,
        .bool => |x| b == .bool and b.bool == x,
        .string => |x| b == .string and std.mem.eql(u8, x, b.string),
        else => false,
    };
}

fn expectProblem(schema_json: []const u8, input_json: []const u8, want: ?[]const u8) !void {
    var arena: std.heap.ArenaAllocator = .init(std.testing.allocator);
    defer arena.deinit();
    const schema = try std.json.parseFromSliceLeaky(Value, arena.allocator(), schema_json, .{});
    // Numbers parsed, or left as text (as the tool round leaves them): the same answer.
    for ([_]bool{ true, false }) |parse_numbers| {
        const input = try std.json.parseFromSliceLeaky(Value, arena.allocator(), input_json, .{ .parse_numbers = parse_numbers });
        var problem: Problem = .{};
        const ok = validate(input, schema, &problem);
        if (want) |w| {
            try std.testing.expect(!ok);
            try std.testing.expectEqualStrings(w, problem.message());
        } else try std.testing.expect(ok);
    }
}

test "inputs against a schema" {
    const schema =
        \\{"type":"object","properties":{"city":{"type":"string"},"days":{"type":"integer","minimum":1},
        \\ "unit":{"enum":["c","f"]},"tags":{"type":"array","items":{"type":"string"}}},
        \\ "required":["city"],"additionalProperties":false}
    ;
    try expectProblem(schema, "{\"city\":\"Paris\",\"days\":2,\"unit\":\"c\",\"tags\":[\"a\"]}", null);
    try expectProblem(schema, "{}", "missing required property \"city\"");
    try expectProblem(schema, "{\"city\":3}", "property \"city\" must be a string, not a number");
    try expectProblem(schema, "{\"city\":\"x\",\"days\":0}", "property \"days\" must be at least 1");
    try expectProblem(schema, "{\"city\":\"x\",\"days\":1.5}", "property \"days\" must be an integer, not a number");
    try expectProblem(schema, "{\"city\":\"x\",\"unit\":\"k\"}", "property \"unit\" must be one of the values the schema lists");
    try expectProblem(schema, "{\"city\":\"x\",\"tags\":[1]}", "property \"tags[0]\" must be a string, not a number");
    try expectProblem(schema, "{\"city\":\"x\",\"extra\":1}", "unexpected property \"extra\"");
    try expectProblem(schema, "[]", "input must be an object, not an array");
}

test "local $refs are followed and a nested problem names its full path" {
    const schema =
        \\{"type":"object","properties":{"request":{"$ref":"#/$defs/Request"}},"required":["request"],
        \\ "$defs":{"Request":{"type":"object","properties":{"passengers":{"type":"array","items":{"$ref":"#/definitions/Passenger"}},
        \\   "lead":{"anyOf":[{"$ref":"#/$defs/Request/$defs/Lead"},{"type":"null"}]}},
        \\   "required":["passengers"],"additionalProperties":false,
        \\   "$defs":{"Lead":{"type":"object","properties":{"a/b~":{"type":"integer"}},"required":["a/b~"]}}}},
        \\ "definitions":{"Passenger":{"type":"object","properties":{"name":{"type":"string"},"age":{"type":"integer","minimum":0}},
        \\   "required":["name"]}}}
    ;
    try expectProblem(schema, "{\"request\":{\"passengers\":[{\"name\":\"A\"},{\"name\":\"B\",\"age\":3}],\"lead\":null}}", null);
    try expectProblem(schema, "{\"request\":{\"passengers\":[{\"name\":\"A\"},{\"name\":\"B\"},{\"age\":3}]}}", "missing required property \"request.passengers[2].name\"");
    try expectProblem(schema, "{\"request\":{\"passengers\":[{\"name\":\"A\",\"age\":-1}]}}", "property \"request.passengers[0].age\" must be at least 0");
    try expectProblem(schema, "{\"request\":{\"passengers\":[{\"name\":7}]}}", "property \"request.passengers[0].name\" must be a string, not a number");
    try expectProblem(schema, "{\"request\":{\"passengers\":[],\"x\":1}}", "unexpected property \"request.x\"");
    try expectProblem(schema, "{\"request\":[]}", "property \"request\" must be an object, not an array");
    // anyOf: the one alternative of the value's type tells what is wrong; a JSON Pointer's
    // escapes (~1 for "/", ~0 for "~") are read.
    try expectProblem(schema, "{\"request\":{\"passengers\":[],\"lead\":{\"a/b~\":2}}}", null);
    try expectProblem(schema, "{\"request\":{\"passengers\":[],\"lead\":{}}}", "missing required property \"request.lead.a/b~\"");
    try expectProblem(schema, "{\"request\":{\"passengers\":[],\"lead\":3}}", "property \"request.lead\" matches none of the schemas it may have");
}

test "a $ref that cannot be followed is ignored; a loop of them ends" {
    try expectProblem("{\"$ref\":\"#/$defs/Missing\"}", "1", null);
    try expectProblem("{\"$ref\":\"https://example.com/s.json\"}", "1", null);
    try expectProblem("{\"$ref\":\"#/$defs/A\",\"$defs\":{\"A\":{\"$ref\":\"#/$defs/B\"},\"B\":{\"allOf\":[{\"$ref\":\"#/$defs/A\"}]}}}", "{}", null);
    // Alternatives that lead back to the root, at every level of a deep value: the check
    // ends (within max_entries), and what it reached is checked.
    const forks = "{\"anyOf\":[{\"$ref\":\"#\"},{\"$ref\":\"#\"},{\"type\":\"array\",\"items\":{\"$ref\":\"#\"}}]}";
    try expectProblem(forks, "[" ** 100 ++ "]" ** 100, null);
    // "#": the root, recursively, as deep as the value goes.
    const tree = "{\"type\":\"object\",\"properties\":{\"kids\":{\"type\":\"array\",\"items\":{\"$ref\":\"#\"}},\"n\":{\"type\":\"integer\"}}}";
    try expectProblem(tree, "{\"kids\":[{\"kids\":[{\"n\":1}]}]}", null);
    try expectProblem(tree, "{\"kids\":[{\"kids\":[{\"n\":\"x\"}]}]}", "property \"kids[0].kids[0].n\" must be an integer, not a string");
    // A root array: its items are named after the root.
    try expectProblem("{\"type\":\"array\",\"items\":{\"type\":\"object\",\"required\":[\"a\"],\"properties\":{\"a\":{\"const\":1}}}}", "[{\"a\":1},{\"a\":2}]", "input[1].a must be the value the schema gives");
}

test "numbers in every notation: integers are whole numbers, bounds compare as doubles" {
    const schema =
        \\{"type":"object","properties":{"n":{"type":"integer","minimum":0,"maximum":1e30},"x":{"type":"number"}}}
    ;
    for ([_][]const u8{ "1e20", "1.0", "-0", "123456789012345678901234567890", "1E2" }) |n| {
        var buf: [64]u8 = undefined;
        try expectProblem(schema, try std.fmt.bufPrint(&buf, "{{\"n\":{s}}}", .{n}), null);
    }
    try expectProblem(schema, "{\"n\":1.5}", "property \"n\" must be an integer, not a number");
    try expectProblem(schema, "{\"n\":-1e20}", "property \"n\" must be at least 0");
    try expectProblem(schema, "{\"n\":1e400}", "property \"n\" must be at most 1000000000000000000000000000000");
    try expectProblem(schema, "{\"n\":12345678901234567890123456789012345}", "property \"n\" must be at most 1000000000000000000000000000000");
    try expectProblem(schema, "{\"x\":1e400}", null);
    try expectProblem(schema, "{\"x\":99999999999999999999}", null);
}

test "a problem too long for its buffer is cut at a whole character" {
    const key = "\u{e9}" ** 300; // 600 bytes of 2-byte characters
    for ([_][]const u8{ "", "x" }) |shift| { // the cut falls after a lead byte, then not
        var problem: Problem = .{};
        problem.set("unexpected property \"{s}{s}\"", .{ shift, key });
        try std.testing.expect(std.unicode.utf8ValidateSlice(problem.message()));
        try std.testing.expect(problem.message().len >= problem.buffer.len - 3);
    }
}
