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
//!   A recursive schema, which they refuse too, is a config error (`recursiveRef`,
//!   request_options.zig): no bound to unroll it to would be the caller's.
//! - OpenAI's strict mode (a strict structured output or tool): the value keywords it refuses
//!   (uniqueItems, which Pydantic writes for a set, minProperties, ...) are moved into the
//!   description the same way, and "oneOf" is written "anyOf"; the keywords that shape the
//!   answer and that it refuses (allOf, not, patternProperties, ...) make the schema not strict
//!   instead (strict_schema.zig).
//! - Both: a "$ref" with sibling keywords (Pydantic's `{"$ref": ..., "description": ...}` for a
//!   described field, a root `{"$defs": ..., "$ref": ...}`), which they refuse, is unravelled:
//!   the referenced schema written in its place under the siblings, as the openai SDK's
//!   `to_strict_json_schema` does; a "$ref" already being unravelled (a loop) is written bare.
const std = @import("std");
const Value = std.json.Value;
const ObjectMap = std.json.ObjectMap;
const Stringify = std.json.Stringify;
const Error = std.Io.Writer.Error;
const schema_mod = @import("schema.zig");

/// `strict_tool`: a tool sent with OpenAI's `strict: true` (the Responses API's default when
/// the schema allows it, strict_schema.zig), whose objects must be closed as an output's.
/// `strict_output`: a structured output sent with OpenAI's `strict: true`.
pub const Use = enum { tool, strict_tool, output, strict_output };

const Rules = struct {
    root: Value,
    close: bool,
    anthropic_output: bool,
    openai_strict: bool,
    /// The "$ref"s being unravelled, innermost first.
    unravelling: ?*const Frame = null,

    fn constrained(r: Rules) bool {
        return r.anthropic_output or r.openai_strict;
    }
};

/// A "$ref" being followed, on the call stack.
const Frame = struct {
    ref: []const u8,
    up: ?*const Frame,

    fn holds(chain: ?*const Frame, ref: []const u8) bool {
        var f = chain;
        while (f) |frame| : (f = frame.up) if (eql(frame.ref, ref)) return true;
        return false;
    }

    fn depth(chain: ?*const Frame) usize {
        var n: usize = 0;
        var f = chain;
        while (f) |frame| : (f = frame.up) n += 1;
        return n;
    }
};

/// How many "$ref"s may be unravelled inside one another (past it, written bare): a bound on
/// the request's size for a schema whose definitions all refer to one another.
const max_unravel = 8;

/// Whose rules the API a schema goes to follows (its writer, in the provider's folder, says):
/// Anthropic's structured outputs, OpenAI's strict mode (Chat Completions and Responses), or
/// neither beyond the rules for every provider (Gemini, Bedrock).
pub const Dialect = enum { plain, anthropic, openai };

/// Writes `schema` (already checked not to nest too deeply: json_depth) in `dialect`.
pub fn write(s: *Stringify, schema: Value, dialect: Dialect, use: Use) Error!void {
    try writeSchema(s, schema, .{
        .root = schema,
        .close = use != .tool,
        .anthropic_output = dialect == .anthropic and (use == .output or use == .strict_output),
        .openai_strict = dialect == .openai and (use == .strict_tool or use == .strict_output),
    });
}

// Keywords whose value is a map of names to schemas, one schema, or a list of schemas.
const schema_maps = [_][]const u8{ "properties", "patternProperties", "$defs", "definitions", "dependentSchemas" };
const schema_one = [_][]const u8{ "items", "additionalProperties", "not", "contains", "propertyNames", "if", "then", "else" };
const schema_lists = [_][]const u8{ "anyOf", "allOf", "oneOf", "prefixItems" };

/// A schema object, or one whose "$ref" has sibling keywords, unravelled: the referenced
/// schema's keywords under the schema's own, which win; "$ref" itself left out.
const Node = struct {
    own: ObjectMap,
    base: ?ObjectMap = null,

    const Entry = struct { key: []const u8, value: Value };

    fn get(n: Node, k: []const u8) ?Value {
        const b = n.base orelse return n.own.get(k);
        if (eql(k, "$ref")) return null;
        return n.own.get(k) orelse b.get(k);
    }

    fn contains(n: Node, k: []const u8) bool {
        return n.get(k) != null;
    }

    const Iterator = struct {
        node: Node,
        i: usize = 0,

        fn next(it: *Iterator) ?Entry {
            const own = it.node.own;
            while (it.i < own.count()) {
                const i = it.i;
                it.i += 1;
                if (it.node.base != null and eql(own.keys()[i], "$ref")) continue;
                return .{ .key = own.keys()[i], .value = own.values()[i] };
            }
            const b = it.node.base orelse return null;
            while (it.i - own.count() < b.count()) {
                const i = it.i - own.count();
                it.i += 1;
                if (own.contains(b.keys()[i])) continue;
                return .{ .key = b.keys()[i], .value = b.values()[i] };
            }
            return null;
        }
    };

    fn iterator(n: Node) Iterator {
        return .{ .node = n };
    }
};

fn writeSchema(s: *Stringify, v: Value, r: Rules) Error!void {
    if (v != .object) return s.write(v); // (true, false: schemas too)
    const o = v.object;
    if (!r.constrained() or !refHasSiblings(o)) return writeNode(s, .{ .own = o }, r);
    const ref = o.get("$ref").?.string;
    const target = schema_mod.resolve(r.root, ref) orelse return writeNode(s, .{ .own = o }, r);
    if (target != .object or target.object.contains("$ref")) return writeNode(s, .{ .own = o }, r);
    if (Frame.holds(r.unravelling, ref) or Frame.depth(r.unravelling) >= max_unravel) return writeBareRef(s, o, r);
    const frame: Frame = .{ .ref = ref, .up = r.unravelling };
    var inner = r;
    inner.unravelling = &frame;
    return writeNode(s, .{ .own = o, .base = target.object }, inner);
}

/// Whether `o` has a "$ref" (a string) with a keyword beside it that is written ("title" is not).
fn refHasSiblings(o: ObjectMap) bool {
    const ref = o.get("$ref") orelse return false;
    if (ref != .string) return false;
    for (o.keys()) |k| if (!eql(k, "$ref") and !eql(k, "title")) return true;
    return false;
}

/// `{"$ref": ...}` alone, with the definitions beside it (a root's).
fn writeBareRef(s: *Stringify, o: ObjectMap, r: Rules) Error!void {
    try s.beginObject();
    var it = o.iterator();
    while (it.next()) |e| {
        const k = e.key_ptr.*;
        if (!eql(k, "$ref") and !eql(k, "$defs") and !eql(k, "definitions")) continue;
        try s.objectField(k);
        try writeKeyword(s, k, e.value_ptr.*, r);
    }
    try s.endObject();
}

fn writeNode(s: *Stringify, n: Node, r: Rules) Error!void {
    const is_object = n.contains("properties") or isType(n, "object");
    try s.beginObject();
    var moved = false;
    var it = n.iterator();
    while (it.next()) |e| {
        const k = e.key;
        if (eql(k, "title")) continue;
        if (r.constrained()) {
            if (eql(k, "description")) continue; // (last, with what was moved into it)
            if (refused(n, k, e.value, r)) {
                moved = true;
                continue;
            }
        }
        if (r.anthropic_output and eql(k, "additionalProperties") and is_object) continue; // (closed below)
        try s.objectField(if (r.constrained() and eql(k, "oneOf")) "anyOf" else k);
        try writeKeyword(s, k, e.value, r);
    }
    if (is_object and (r.anthropic_output or (r.close and !n.contains("additionalProperties")))) {
        try s.objectField("additionalProperties");
        try s.write(false);
    }
    if (r.constrained()) try writeDescription(s, n, moved, r);
    try s.endObject();
}

fn writeKeyword(s: *Stringify, k: []const u8, v: Value, r: Rules) Error!void {
    if (oneOf(k, &schema_maps) and v == .object) {
        // A definition is not inside the schema that holds it: no "$ref" is being unravelled.
        var inner = r;
        if (eql(k, "$defs") or eql(k, "definitions")) inner.unravelling = null;
        try s.beginObject();
        var it = v.object.iterator();
        while (it.next()) |e| {
            try s.objectField(e.key_ptr.*);
            try writeSchema(s, e.value_ptr.*, inner);
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

/// Whether keyword `k` of `n` is one the provider's constrained decoding refuses, to be moved
/// into the description.
fn refused(n: Node, k: []const u8, v: Value, r: Rules) bool {
    if (r.anthropic_output) return !anthropicTakes(n, k, v);
    if (r.openai_strict) return oneOf(k, &openai_strict_moved);
    return false;
}

/// The keywords OpenAI's strict mode refuses that only bound a value (the others make a
/// schema not strict: strict_schema.zig). "discriminator" is Pydantic's (OpenAPI's) note on a
/// tagged union.
const openai_strict_moved = [_][]const u8{ "uniqueItems", "minProperties", "maxProperties", "minContains", "maxContains", "discriminator" };

const anthropic_formats = [_][]const u8{ "date-time", "time", "date", "duration", "email", "hostname", "uri", "ipv4", "ipv6", "uuid" };
const anthropic_keywords = [_][]const u8{ "$ref", "$defs", "definitions", "type", "enum", "const", "anyOf", "oneOf", "allOf", "properties", "required", "items", "additionalProperties" };

/// Whether Anthropic's structured outputs take keyword `k` of schema `n`.
fn anthropicTakes(n: Node, k: []const u8, v: Value) bool {
    if (oneOf(k, &anthropic_keywords)) return true;
    if (eql(k, "format")) return isType(n, "string") and v == .string and oneOf(v.string, &anthropic_formats);
    if (eql(k, "minItems")) return v == .integer and (v.integer == 0 or v.integer == 1);
    return false;
}

/// The schema's description, then the keywords the provider refuses, each with its JSON
/// value: `{minimum: 1, maximum: 10}`.
fn writeDescription(s: *Stringify, n: Node, moved: bool, r: Rules) Error!void {
    const own: ?[]const u8 = if (n.get("description")) |d| (if (d == .string) d.string else null) else null;
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
        var it = n.iterator();
        while (it.next()) |e| {
            const k = e.key;
            if (eql(k, "title") or eql(k, "description") or !refused(n, k, e.value, r)) continue;
            if (!first) try w.writeAll(", ");
            first = false;
            try Stringify.encodeJsonStringChars(k, .{}, w);
            try w.writeAll(": ");
            try writeValueText(w, e.value);
        }
        try w.writeByte('}');
    }
    try w.writeByte('"');
    s.endWriteRaw();
}

/// The first "$ref" of `schema` that leads back into a schema it is inside (a tree's
/// `{"$ref": "#/$defs/Node"}` within Node), or null. Definitions are read where a "$ref"
/// leads, not on their own. A schema too large to walk within a bound is taken as not
/// recursive (the provider then says).
pub fn recursiveRef(schema: Value) ?[]const u8 {
    var budget: usize = max_visits;
    return findLoop(schema, schema, null, &budget);
}

const max_visits = 1 << 16;

fn findLoop(root: Value, v: Value, chain: ?*const Frame, budget: *usize) ?[]const u8 {
    if (v != .object or budget.* == 0) return null;
    budget.* -= 1;
    const o = v.object;
    if (o.get("$ref")) |ref| if (ref == .string) {
        if (Frame.holds(chain, ref.string)) return ref.string;
        if (schema_mod.resolve(root, ref.string)) |target| {
            const frame: Frame = .{ .ref = ref.string, .up = chain };
            if (findLoop(root, target, &frame, budget)) |found| return found;
        }
    };
    var it = o.iterator();
    while (it.next()) |e| {
        const k = e.key_ptr.*;
        const sub = e.value_ptr.*;
        if (eql(k, "$defs") or eql(k, "definitions")) continue;
        if (oneOf(k, &schema_maps) and sub == .object) {
            for (sub.object.values()) |x| if (findLoop(root, x, chain, budget)) |found| return found;
        } else if (oneOf(k, &schema_one)) {
            if (findLoop(root, sub, chain, budget)) |found| return found;
        } else if (oneOf(k, &schema_lists) and sub == .array) {
            for (sub.array.items) |x| if (findLoop(root, x, chain, budget)) |found| return found;
        }
    }
    return null;
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

fn isType(n: Node, name: []const u8) bool {
    const t = n.get("type") orelse return false;
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

fn render(schema: []const u8, dialect: Dialect, use: Use) ![]u8 {
    const gpa = std.testing.allocator;
    const parsed = try std.json.parseFromSlice(Value, gpa, schema, .{});
    defer parsed.deinit();
    var out: std.Io.Writer.Allocating = .init(gpa);
    defer out.deinit();
    var s: Stringify = .{ .writer = &out.writer };
    try write(&s, parsed.value, dialect, use);
    return out.toOwnedSlice();
}

fn expectRendered(want: []const u8, schema: []const u8, dialect: Dialect, use: Use) !void {
    const got = try render(schema, dialect, use);
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

// Pydantic's schema of `class P(BaseModel): name: str = Field(min_length=1)` under
// `class T(BaseModel): p: P = Field(description="The passenger."); tags: set[str]`.
const described =
    \\{"$defs":{"P":{"properties":{"name":{"minLength":1,"title":"Name","type":"string"}},"required":["name"],"title":"P","type":"object"}},"properties":{"p":{"$ref":"#/$defs/P","description":"The passenger."},"tags":{"items":{"type":"string"},"title":"Tags","type":"array","uniqueItems":true}},"required":["p","tags"],"title":"T","type":"object"}
;

test "OpenAI's strict mode: a $ref with siblings unravelled, uniqueItems moved into the description, the bounds it takes kept" {
    const strict =
        \\{"$defs":{"P":{"properties":{"name":{"minLength":1,"type":"string"}},"required":["name"],"type":"object","additionalProperties":false}},"properties":{"p":{"properties":{"name":{"minLength":1,"type":"string"}},"required":["name"],"type":"object","additionalProperties":false,"description":"The passenger."},"tags":{"items":{"type":"string"},"type":"array","description":"{uniqueItems: true}"}},"required":["p","tags"],"type":"object","additionalProperties":false}
    ;
    try expectRendered(strict, described, .openai, .strict_output);
    try expectRendered(strict, described, .openai, .strict_tool);
    // Not strict: sent as it is but for the titles (and the output's objects closed).
    try expectRendered(
        \\{"$defs":{"P":{"properties":{"name":{"minLength":1,"type":"string"}},"required":["name"],"type":"object"}},"properties":{"p":{"$ref":"#/$defs/P","description":"The passenger."},"tags":{"items":{"type":"string"},"type":"array","uniqueItems":true}},"required":["p","tags"],"type":"object"}
    , described, .openai, .tool);
}

test "a root $ref beside its $defs is unravelled; a loop of $refs is written bare" {
    // Pydantic's `class Node(BaseModel): value: int; next: Node | None = Field(description="Next.")`
    // (made strict by hand: every property required).
    const node =
        \\{"$defs":{"Node":{"properties":{"value":{"type":"integer"},"next":{"anyOf":[{"$ref":"#/$defs/Node","description":"Next."},{"type":"null"}]}},"required":["value","next"],"type":"object"}},"$ref":"#/$defs/Node"}
    ;
    try expectRendered(
        \\{"$defs":{"Node":{"properties":{"value":{"type":"integer"},"next":{"anyOf":[{"properties":{"value":{"type":"integer"},"next":{"anyOf":[{"$ref":"#/$defs/Node"},{"type":"null"}]}},"required":["value","next"],"type":"object","additionalProperties":false,"description":"Next."},{"type":"null"}]}},"required":["value","next"],"type":"object","additionalProperties":false}},"properties":{"value":{"type":"integer"},"next":{"anyOf":[{"$ref":"#/$defs/Node"},{"type":"null"}]}},"required":["value","next"],"type":"object","additionalProperties":false}
    , node, .openai, .strict_output);
}

test "a recursive schema is found, through $defs, a root $ref or #" {
    const cases = [_]struct { ?[]const u8, []const u8 }{
        .{ "#/$defs/Node", "{\"$defs\":{\"Node\":{\"type\":\"object\",\"properties\":{\"kids\":{\"type\":\"array\",\"items\":{\"$ref\":\"#/$defs/Node\"}}}}},\"$ref\":\"#/$defs/Node\"}" },
        .{ "#", "{\"type\":\"object\",\"properties\":{\"kids\":{\"type\":\"array\",\"items\":{\"$ref\":\"#\"}}}}" },
        .{ "#/$defs/A", "{\"type\":\"object\",\"properties\":{\"a\":{\"$ref\":\"#/$defs/A\"}},\"$defs\":{\"A\":{\"anyOf\":[{\"$ref\":\"#/$defs/B\"},{\"type\":\"null\"}]},\"B\":{\"type\":\"object\",\"properties\":{\"a\":{\"$ref\":\"#/$defs/A\"}}}}}" },
        // Not recursive: a definition used twice, one nothing uses, one that names nothing.
        .{ null, pydantic },
        .{ null, "{\"type\":\"object\",\"properties\":{\"a\":{\"$ref\":\"#/$defs/P\"},\"b\":{\"type\":\"array\",\"items\":{\"$ref\":\"#/$defs/P\"}}},\"$defs\":{\"P\":{\"type\":\"string\"}}}" },
        .{ null, "{\"type\":\"object\",\"$defs\":{\"Unused\":{\"type\":\"object\",\"properties\":{\"u\":{\"$ref\":\"#/$defs/Unused\"}}}}}" },
        .{ null, "{\"type\":\"object\",\"properties\":{\"a\":{\"$ref\":\"#/$defs/Missing\"}}}" },
    };
    for (cases) |c| {
        const parsed = try std.json.parseFromSlice(Value, std.testing.allocator, c[1], .{});
        defer parsed.deinit();
        const got = recursiveRef(parsed.value);
        if (c[0]) |want| try std.testing.expectEqualStrings(want, got orelse "(none)") else try std.testing.expectEqual(null, got);
    }
}
