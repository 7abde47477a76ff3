//! Checks a tool's input against its JSON Schema, so a call with bad input gets an error result
//! telling the model what was wrong instead of running the tool. The subset tools use: type
//! (one or a list), properties, required, additionalProperties: false, items, enum, minimum,
//! maximum. Unknown keywords are ignored, as JSON Schema says.
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
    return check(value, schema, "input", problem);
}

/// As `validate`, the value named `root` in the problem ("the answer must be an object").
pub fn validateNamed(value: Value, schema: Value, root: []const u8, problem: *Problem) bool {
    return check(value, schema, root, problem);
}

fn check(value: Value, schema: Value, where: []const u8, problem: *Problem) bool {
    if (schema != .object) return true;
    const s = schema.object;
    if (s.get("type")) |t| {
        if (!typeMatches(value, t)) {
            problem.set("{s} must be {s}, not {s}", .{ where, typeText(t), kindOf(value) });
            return false;
        }
    }
    if (s.get("enum")) |e| if (e == .array) {
        for (e.array.items) |allowed| {
            if (jsonEqual(allowed, value)) break;
        } else {
            problem.set("{s} must be one of the values the schema lists", .{where});
            return false;
        }
    };
    if (number(value)) |n| {
        if (s.get("minimum")) |m| if (number(m)) |min| if (n < min) {
            problem.set("{s} must be at least {d}", .{ where, min });
            return false;
        };
        if (s.get("maximum")) |m| if (number(m)) |max| if (n > max) {
            problem.set("{s} must be at most {d}", .{ where, max });
            return false;
        };
    }
    switch (value) {
        .object => |obj| {
            if (s.get("required")) |r| if (r == .array) for (r.array.items) |name| {
                if (name == .string and !obj.contains(name.string)) {
                    problem.set("missing required property \"{s}\"", .{name.string});
                    return false;
                }
            };
            const props: ?std.json.ObjectMap = if (s.get("properties")) |p| (if (p == .object) p.object else null) else null;
            var it = obj.iterator();
            while (it.next()) |entry| {
                const sub = if (props) |p| p.get(entry.key_ptr.*) else null;
                if (sub) |sub_schema| {
                    var buf: [96]u8 = undefined;
                    const sub_where = std.fmt.bufPrint(&buf, "property \"{s}\"", .{entry.key_ptr.*}) catch "a property";
                    if (!check(entry.value_ptr.*, sub_schema, sub_where, problem)) return false;
                } else if (s.get("additionalProperties")) |ap| if (ap == .bool and !ap.bool) {
                    problem.set("unexpected property \"{s}\"", .{entry.key_ptr.*});
                    return false;
                };
            }
        },
        .array => |arr| if (s.get("items")) |items| for (arr.items, 0..) |item, i| {
            var buf: [96]u8 = undefined;
            const sub_where = std.fmt.bufPrint(&buf, "{s}[{d}]", .{ where, i }) catch "an item";
            if (!check(item, items, sub_where, problem)) return false;
        },
        else => {},
    }
    return true;
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
    try expectProblem(schema, "{\"city\":\"x\",\"tags\":[1]}", "property \"tags\"[0] must be a string, not a number");
    try expectProblem(schema, "{\"city\":\"x\",\"extra\":1}", "unexpected property \"extra\"");
    try expectProblem(schema, "[]", "input must be an object, not an array");
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
