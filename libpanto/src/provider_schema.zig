//! A JSON Schema as a provider takes it, written where a schema goes into a request (a tool's
//! input schema, a json_schema response_format). One rule in the core, so that a binding sends
//! the schema its types make (Pydantic's, a Go struct's, a hand-written one) as it is; the
//! conversation, the tool registry and the checker (schema.zig) keep the schema as given.
//!
//! For every provider and use:
//! - "title" keywords are left out: names for people that no provider checks (Pydantic puts
//!   one on every model and field). A property named "title" is a name, not a keyword: kept.
//! - "$ref" and "$defs" / "definitions" are kept: Anthropic (tool input schemas, structured
//!   outputs) and OpenAI (function parameters, strict structured outputs) both take local
//!   references, so nothing is inlined.
//! For a structured output, whose answer the provider constrains to the schema:
//! - an object schema without "additionalProperties" is closed (`false`): Anthropic's
//!   structured outputs require it, and OpenAI's strict mode (strict_schema.zig decides on the
//!   closed form). Anthropic's are closed whatever they said, as its SDK does.
//! - Anthropic: the keywords its structured outputs refuse (numeric bounds, string lengths,
//!   array bounds other than minItems 0 or 1, a string format it does not know, ...) are moved
//!   into the schema's description, "{minimum: 1, maximum: 10}", and "oneOf" is written
//!   "anyOf", as its SDK does (anthropic-sdk-python, lib/_parse/_transform.py): the model may
//!   still follow them, and the answer is checked against the whole schema (schema.zig).
const std = @import("std");
const Value = std.json.Value;
const Stringify = std.json.Stringify;
const Error = std.Io.Writer.Error;
const Provider = @import("providers.zig").Provider;

/// `strict_tool`: a tool sent with OpenAI's `strict: true` (the Responses API's default when
/// the schema allows it, strict_schema.zig), whose objects must be closed as an output's.
pub const Use = enum { tool, strict_tool, output };

const Rules = struct {
    close: bool,
    anthropic_output: bool,
};

/// Writes `schema` (already checked not to nest too deeply: json_depth) for `provider`.
pub fn write(s: *Stringify, schema: Value, provider: Provider, use: Use) Error!void {
    try writeSchema(s, schema, .{ .close = use != .tool, .anthropic_output = use == .output and provider == .anthropic });
}

// Keywords whose value is a map of names to schemas, one schema, or a list of schemas.
const schema_maps = [_][]const u8{ "properties", "patternProperties", "$defs", "definitions", "dependentSchemas" };
const schema_one = [_][]const u8{ "items", "additionalProperties", "not", "contains", "propertyNames", "if", "then", "else" };
const schema_lists = [_][]const u8{ "anyOf", "allOf", "oneOf", "prefixItems" };

fn writeSchema(s: *Stringify, v: Value, r: Rules) Error!void {
    if (v != .object) return s.write(v); // (true, false: schemas too)
    const o = v.object;
    const is_object = o.contains("properties") or isType(o, "object");
    try s.beginObject();
    var moved = false;
    var it = o.iterator();
    while (it.next()) |e| {
        const k = e.key_ptr.*;
        if (eql(k, "title")) continue;
        if (r.anthropic_output) {
            if (eql(k, "description")) continue; // (last, with what was moved into it)
            if (eql(k, "additionalProperties") and is_object) continue; // (closed below)
            if (!anthropicTakes(o, k, e.value_ptr.*)) {
                moved = true;
                continue;
            }
        }
        try s.objectField(if (r.anthropic_output and eql(k, "oneOf")) "anyOf" else k);
        try writeKeyword(s, k, e.value_ptr.*, r);
    }
    if (is_object and (r.anthropic_output or (r.close and !o.contains("additionalProperties")))) {
        try s.objectField("additionalProperties");
        try s.write(false);
    }
    if (r.anthropic_output) try writeDescription(s, o, moved);
    try s.endObject();
}

fn writeKeyword(s: *Stringify, k: []const u8, v: Value, r: Rules) Error!void {
    if (oneOf(k, &schema_maps) and v == .object) {
        try s.beginObject();
        var it = v.object.iterator();
        while (it.next()) |e| {
            try s.objectField(e.key_ptr.*);
            try writeSchema(s, e.value_ptr.*, r);
        }
        return s.endObject();
    }
    if (oneOf(k, &schema_one)) return writeSchema(s, v, r);
    if (oneOf(k, &schema_lists) and v == .array) {
        try s.beginArray();
        for (v.array.items) |sub| try writeSchema(s, sub, r);
        return s.endArray();
    }
    try s.write(v);
}

const anthropic_formats = [_][]const u8{ "date-time", "time", "date", "duration", "email", "hostname", "uri", "ipv4", "ipv6", "uuid" };
const anthropic_keywords = [_][]const u8{ "$ref", "$defs", "definitions", "type", "enum", "const", "anyOf", "oneOf", "allOf", "properties", "required", "items", "additionalProperties" };

/// Whether Anthropic's structured outputs take keyword `k` of schema `o`.
fn anthropicTakes(o: std.json.ObjectMap, k: []const u8, v: Value) bool {
    if (oneOf(k, &anthropic_keywords)) return true;
    if (eql(k, "format")) return isType(o, "string") and v == .string and oneOf(v.string, &anthropic_formats);
    if (eql(k, "minItems")) return v == .integer and (v.integer == 0 or v.integer == 1);
    return false;
}

/// The schema's description, then the keywords Anthropic does not take, each with its JSON
/// value: `{minimum: 1, maximum: 10}`.
fn writeDescription(s: *Stringify, o: std.json.ObjectMap, moved: bool) Error!void {
    const own: ?[]const u8 = if (o.get("description")) |d| (if (d == .string) d.string else null) else null;
    if (own == null and !moved) return;
    try s.objectField("description");
    try s.beginWriteRaw();
    const w = s.writer;
    try w.writeByte('"');
    if (own) |d| try Stringify.encodeJsonStringChars(d, .{}, w);
    if (moved) {
        if (own != null) try w.writeAll("\\n\\n");
        try w.writeByte('{');
        var first = true;
        var it = o.iterator();
        while (it.next()) |e| {
            const k = e.key_ptr.*;
            if (eql(k, "title") or eql(k, "description") or anthropicTakes(o, k, e.value_ptr.*)) continue;
            if (!first) try w.writeAll(", ");
            first = false;
            try Stringify.encodeJsonStringChars(k, .{}, w);
            try w.writeAll(": ");
            try writeValueText(w, e.value_ptr.*);
        }
        try w.writeByte('}');
    }
    try w.writeByte('"');
    s.endWriteRaw();
}

/// A value's compact JSON, escaped into the string being written. A keyword's value is small
/// (a bound, a pattern); one longer than the buffer is cut, ending with "...".
fn writeValueText(w: *std.Io.Writer, v: Value) Error!void {
    var buf: [1024]u8 = undefined;
    var fixed: std.Io.Writer = .fixed(&buf);
    var inner: Stringify = .{ .writer = &fixed };
    const whole = if (inner.write(v)) true else |_| false;
    try Stringify.encodeJsonStringChars(fixed.buffered(), .{}, w);
    if (!whole) try w.writeAll("...");
}

fn isType(o: std.json.ObjectMap, name: []const u8) bool {
    const t = o.get("type") orelse return false;
    return t == .string and eql(t.string, name);
}

fn oneOf(k: []const u8, list: []const []const u8) bool {
    for (list) |x| if (eql(k, x)) return true;
    return false;
}

fn eql(a: []const u8, b: []const u8) bool {
    return std.mem.eql(u8, a, b);
}

// ---- Tests --------------------------------------------------------------------------------

fn render(schema: []const u8, provider: Provider, use: Use) ![]u8 {
    const gpa = std.testing.allocator;
    const parsed = try std.json.parseFromSlice(Value, gpa, schema, .{});
    defer parsed.deinit();
    var out: std.Io.Writer.Allocating = .init(gpa);
    defer out.deinit();
    var s: Stringify = .{ .writer = &out.writer };
    try write(&s, parsed.value, provider, use);
    return out.toOwnedSlice();
}

fn expectRendered(want: []const u8, schema: []const u8, provider: Provider, use: Use) !void {
    const got = try render(schema, provider, use);
    defer std.testing.allocator.free(got);
    try std.testing.expectEqualStrings(want, got);
}

// Pydantic's schema of `class P(BaseModel): name: str; age: int = Field(ge=0)` under
// `class T(BaseModel): p: P; title: str`.
const pydantic =
    \\{"$defs":{"P":{"properties":{"name":{"title":"Name","type":"string"},"age":{"minimum":0,"title":"Age","type":"integer"}},"required":["name","age"],"title":"P","type":"object"}},"properties":{"p":{"$ref":"#/$defs/P"},"title":{"title":"Title","type":"string"}},"required":["p","title"],"title":"T","type":"object"}
;

test "a tool's schema: titles left out, refs and a property named title kept, objects as they were" {
    const want =
        \\{"$defs":{"P":{"properties":{"name":{"type":"string"},"age":{"minimum":0,"type":"integer"}},"required":["name","age"],"type":"object"}},"properties":{"p":{"$ref":"#/$defs/P"},"title":{"type":"string"}},"required":["p","title"],"type":"object"}
    ;
    try expectRendered(want, pydantic, .anthropic, .tool);
    try expectRendered(want, pydantic, .openai, .tool);
}

test "OpenAI's structured output: open objects closed, bounds kept" {
    try expectRendered(
        \\{"$defs":{"P":{"properties":{"name":{"type":"string"},"age":{"minimum":0,"type":"integer"}},"required":["name","age"],"type":"object","additionalProperties":false}},"properties":{"p":{"$ref":"#/$defs/P"},"title":{"type":"string"}},"required":["p","title"],"type":"object","additionalProperties":false}
    , pydantic, .openai, .output);
    // An object the schema left open on purpose stays open (and the schema is not strict).
    try expectRendered(
        \\{"type":"object","additionalProperties":true}
    , "{\"type\":\"object\",\"additionalProperties\":true}", .openai, .output);
}

test "Anthropic's structured output: objects closed, refused keywords moved into the description, oneOf as anyOf" {
    try expectRendered(
        \\{"$defs":{"P":{"properties":{"name":{"type":"string"},"age":{"type":"integer","description":"{minimum: 0}"}},"required":["name","age"],"type":"object","additionalProperties":false}},"properties":{"p":{"$ref":"#/$defs/P"},"title":{"type":"string"}},"required":["p","title"],"type":"object","additionalProperties":false}
    , pydantic, .anthropic, .output);
    try expectRendered(
        \\{"type":"object","properties":{"tags":{"type":"array","items":{"type":"string","format":"email"},"description":"Tags.\n\n{maxItems: 3, uniqueItems: true}"},"code":{"type":"string","description":"{pattern: \"^[A-Z]+$\", format: \"iso-4217\"}"},"v":{"anyOf":[{"type":"string"},{"type":"null"}]}},"additionalProperties":false}
    ,
        \\{"type":"object","properties":{"tags":{"type":"array","items":{"type":"string","format":"email"},"maxItems":3,"uniqueItems":true,"description":"Tags."},
        \\ "code":{"type":"string","pattern":"^[A-Z]+$","format":"iso-4217"},"v":{"oneOf":[{"type":"string"},{"type":"null"}]}},"additionalProperties":true}
    , .anthropic, .output);
}
