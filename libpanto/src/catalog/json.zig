//! A model as panto knows it, as JSON (panto_model_info, panto_agent_model_info): its name,
//! then the keys of the config's `model_info` (override.zig), so a program reads what the
//! catalog says in the words it would use to correct it. An unknown limit, price or tier is
//! left out, never written as zero; the abilities are all written.
const std = @import("std");
const model = @import("model.zig");
const catalog = @import("catalog.zig");

/// What panto knows of a provider's model (the catalog's entry with `override` over it), or
/// `null` when it knows nothing of it.
pub fn writeResolved(w: *std.Io.Writer, provider: []const u8, name: []const u8, override: ?catalog.Override) std.Io.Writer.Error!void {
    const m = catalog.resolve(provider, name, override) orelse return w.writeAll("null");
    const listed = if (catalog.familyOf(provider)) |f| catalog.lookup(f, name) != null else false;
    try write(w, m, if (listed) catalog.source else null);
}

/// `source`: the catalog's source ("litellm 1.110.2") when the catalog knows the model, null
/// when only the config's model_info does.
pub fn write(w: *std.Io.Writer, m: model.Model, source: ?[]const u8) std.Io.Writer.Error!void {
    var s: std.json.Stringify = .{ .writer = w };
    try s.beginObject();
    try s.objectField("name");
    try s.write(m.name);
    if (m.max_input) |n| {
        try s.objectField("max_input_tokens");
        try s.write(n);
    }
    if (m.max_output) |n| {
        try s.objectField("max_output_tokens");
        try s.write(n);
    }
    try s.objectField("price");
    try writeKnown(&s, m.price);
    if (m.long) |tier| {
        try s.objectField("long_context");
        try s.beginObject();
        try s.objectField("above");
        try s.write(tier.above);
        try writeKnownFields(&s, tier);
        try s.endObject();
    }
    try s.objectField("abilities");
    try s.write(m.can);
    try s.objectField("catalog");
    try s.write(source);
    try s.endObject();
}

/// An object of the struct's known (non-null) optional fields.
fn writeKnown(s: *std.json.Stringify, v: anytype) std.Io.Writer.Error!void {
    try s.beginObject();
    try writeKnownFields(s, v);
    try s.endObject();
}

fn writeKnownFields(s: *std.json.Stringify, v: anytype) std.Io.Writer.Error!void {
    inline for (@typeInfo(@TypeOf(v)).@"struct".fields) |f| {
        if (@typeInfo(f.type) == .optional) if (@field(v, f.name)) |x| {
            try s.objectField(f.name);
            try s.write(x);
        };
    }
}

const testing = std.testing;

test "a model with a tier, unknown prices left out" {
    var out: std.Io.Writer.Allocating = .init(testing.allocator);
    defer out.deinit();
    try write(&out.writer, .{
        .family = .anthropic,
        .name = "m",
        .max_input = 200000,
        .price = .{ .input = 3, .output = 15, .cache_read = 0.3 },
        .long = .{ .above = 200000, .input = 6 },
        .can = .{ .tools = true, .images = true },
    }, "litellm 1.110.2");
    try testing.expectEqualStrings(
        \\{"name":"m","max_input_tokens":200000,"price":{"input":3,"output":15,"cache_read":0.3},"long_context":{"above":200000,"input":6},"abilities":{"tools":true,"images":true,"pdfs":false,"thinking":false,"structured_output":false,"caching":false},"catalog":"litellm 1.110.2"}
    , out.written());
}

test "a model only the config knows" {
    var out: std.Io.Writer.Allocating = .init(testing.allocator);
    defer out.deinit();
    try write(&out.writer, .{ .family = .openai, .name = "mine" }, null);
    try testing.expectEqualStrings(
        \\{"name":"mine","price":{},"abilities":{"tools":false,"images":false,"pdfs":false,"thinking":false,"structured_output":false,"caching":false},"catalog":null}
    , out.written());
}

test "resolved: a dated name finds its alias, an unknown one is null" {
    var out: std.Io.Writer.Allocating = .init(testing.allocator);
    defer out.deinit();
    try writeResolved(&out.writer, "anthropic", "claude-sonnet-4-5-20250929", null);
    try testing.expect(std.mem.startsWith(u8, out.written(), "{\"name\":\"claude-sonnet-4-5"));
    try testing.expect(std.mem.endsWith(u8, out.written(), "\"catalog\":\"" ++ catalog.source ++ "\"}"));
    out.clearRetainingCapacity();
    try writeResolved(&out.writer, "anthropic", "no-such-model", null);
    try testing.expectEqualStrings("null", out.written());
    out.clearRetainingCapacity();
    try writeResolved(&out.writer, "openai", "my-finetune", .{ .max_output = 100 });
    try testing.expectEqualStrings(
        \\{"name":"my-finetune","max_output_tokens":100,"price":{},"abilities":{"tools":false,"images":false,"pdfs":false,"thinking":false,"structured_output":false,"caching":false},"catalog":null}
    , out.written());
}
