//! Whether a JSON Schema meets OpenAI's strict structured-output rules, which decides the
//! default of response_format's "strict": true when the schema allows it, false otherwise
//! (a strict request with a schema that breaks the rules is refused by the provider with a
//! 400). One rule for every binding: a Python dataclass with a defaulted field, a Go struct
//! with an omitempty field and a hand-written schema with an optional property all become
//! non-strict here, not in each binding.
//!
//! The rules checked (https://platform.openai.com/docs/guides/structured-outputs): every
//! object schema is closed ("additionalProperties": false, or none: the request closes it,
//! provider_schema.zig) and lists each of its properties in "required"; no schema is empty
//! (`{}` accepts anything, which strict mode cannot say); no schema uses a keyword strict mode
//! refuses that shapes the answer (`shaping_refused`: allOf, not, patternProperties, a tuple's
//! prefixItems, ...; those that only bound a value are moved into the description instead,
//! provider_schema.zig).
//! Subschemas are those of "properties", "items", "anyOf", "oneOf" (sent as "anyOf"), "$defs"
//! and "definitions".
const std = @import("std");
const Value = std.json.Value;

/// True when `schema` (already checked not to nest too deeply: json_depth) meets the rules.
pub fn meetsStrictRules(schema: Value) bool {
    if (schema != .object) return false;
    const o = schema.object;
    if (o.count() == 0) return false;
    for (shaping_refused) |k| if (o.contains(k)) return false;
    const props: ?std.json.ObjectMap = if (o.get("properties")) |p| (if (p == .object) p.object else return false) else null;
    const is_object = if (o.get("type")) |t| t == .string and std.mem.eql(u8, t.string, "object") else false;
    if (is_object or props != null) {
        const closed = if (o.get("additionalProperties")) |a| a == .bool and !a.bool else true;
        if (!closed or !requiresEvery(o.get("required"), props)) return false;
    }
    if (props) |p| for (p.values()) |sub| if (!meetsStrictRules(sub)) return false;
    if (o.get("items")) |items| if (!meetsStrictRules(items)) return false;
    for ([_][]const u8{ "anyOf", "oneOf" }) |key| if (o.get(key)) |any| {
        if (any != .array) return false;
        for (any.array.items) |sub| if (!meetsStrictRules(sub)) return false;
    };
    for ([_][]const u8{ "$defs", "definitions" }) |key| if (o.get(key)) |defs| {
        if (defs != .object) return false;
        for (defs.object.values()) |sub| if (!meetsStrictRules(sub)) return false;
    };
    return true;
}

/// The keywords strict mode refuses that say what the answer may be, not only bound a value
/// (https://platform.openai.com/docs/guides/structured-outputs, "Supported schemas").
const shaping_refused = [_][]const u8{ "allOf", "not", "if", "then", "else", "dependentRequired", "dependentSchemas", "patternProperties", "propertyNames", "unevaluatedProperties", "unevaluatedItems", "contains", "prefixItems" };

/// "required" names exactly the properties (each once).
fn requiresEvery(required: ?Value, props: ?std.json.ObjectMap) bool {
    const names: []const Value = if (required) |r| (if (r == .array) r.array.items else return false) else &.{};
    const want = if (props) |p| p.count() else 0;
    if (names.len != want) return false;
    for (names, 0..) |n, i| {
        if (n != .string) return false;
        if (props == null or !props.?.contains(n.string)) return false;
        for (names[0..i]) |earlier| if (std.mem.eql(u8, earlier.string, n.string)) return false;
    }
    return true;
}

fn check(expected: bool, text: []const u8) !void {
    const parsed = try std.json.parseFromSlice(Value, std.testing.allocator, text, .{});
    defer parsed.deinit();
    std.testing.expectEqual(expected, meetsStrictRules(parsed.value)) catch |err| {
        std.debug.print("schema: {s}\n", .{text});
        return err;
    };
}

test "a closed object whose properties are all required is strict, nested ones too" {
    try check(true,
        \\{"type":"object","properties":{"city":{"type":"string"},"temp":{"type":"integer"}},
        \\ "required":["city","temp"],"additionalProperties":false}
    );
    try check(true,
        \\{"type":"object","additionalProperties":false,"required":["days"],"properties":{"days":
        \\ {"type":"array","items":{"type":"object","properties":{"d":{"anyOf":[{"type":"string"},{"type":"null"}]}},
        \\ "required":["d"],"additionalProperties":false}}}}
    );
    try check(true,
        \\{"type":"object","properties":{"p":{"$ref":"#/$defs/P"}},"required":["p"],"additionalProperties":false,
        \\ "$defs":{"P":{"type":"object","properties":{},"required":[],"additionalProperties":false}}}
    );
    try check(true,
        \\{"type":"object","properties":{},"additionalProperties":false}
    );
    // Without "additionalProperties": the request closes the object (provider_schema.zig).
    try check(true,
        \\{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}
    );
    try check(true,
        \\{"type":"object"}
    );
}

test "an optional property, an object left open or an empty schema is not strict" {
    try check(false,
        \\{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"string"}},"required":["a"],"additionalProperties":false}
    );
    try check(false,
        \\{"type":"object","properties":{"a":{"type":"string"}},"required":["a"],"additionalProperties":true}
    );
    try check(false,
        \\{"type":"object","properties":{"any":{}},"required":["any"],"additionalProperties":false}
    );
    try check(false, // deep inside an array
        \\{"type":"object","properties":{"l":{"type":"array","items":{"type":"object","properties":{"x":{"type":"string"}}}}},
        \\ "required":["l"],"additionalProperties":false}
    );
    try check(false, // inside $defs
        \\{"type":"object","properties":{},"additionalProperties":false,"$defs":{"P":{"type":"object","properties":{"x":{"type":"string"}}}}}
    );
    try check(false, // a name required twice, one property left out
        \\{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"string"}},"required":["a","a"],"additionalProperties":false}
    );
    try check(false, // a name required that is not a property
        \\{"type":"object","properties":{"a":{"type":"string"}},"required":["z"],"additionalProperties":false}
    );
    try check(false, // malformed shapes: not strict, never a crash
        \\{"type":"object","properties":[],"required":"a","additionalProperties":false}
    );
    try check(false,
        \\{"anyOf":{"type":"string"}}
    );
    try check(false, "true");
}

test "a keyword strict mode refuses that shapes the answer makes a schema not strict, one that bounds a value does not" {
    try check(false, // allOf, even of one schema
        \\{"type":"object","properties":{"p":{"allOf":[{"$ref":"#/$defs/P"}]}},"required":["p"],"additionalProperties":false,
        \\ "$defs":{"P":{"type":"object","properties":{},"additionalProperties":false}}}
    );
    try check(false, // a tuple
        \\{"type":"object","properties":{"t":{"type":"array","prefixItems":[{"type":"integer"},{"type":"string"}]}},"required":["t"]}
    );
    try check(false, // deep inside a oneOf
        \\{"type":"object","properties":{"u":{"oneOf":[{"type":"string"},{"type":"object","properties":{"x":{"type":"string"}}}]}},"required":["u"]}
    );
    try check(true, // a set's uniqueItems and a string's bounds (provider_schema.zig moves the first)
        \\{"type":"object","properties":{"tags":{"type":"array","items":{"type":"string","minLength":1},"uniqueItems":true}},"required":["tags"]}
    );
}
