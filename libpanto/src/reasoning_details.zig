//! OpenRouter's `reasoning_details`: its reasoning in a form each model behind it can take
//! back (Anthropic's signed thinking, Gemini's and OpenAI's encrypted reasoning, summaries),
//! streamed as pieces in each delta beside the `reasoning` text. The pieces are assembled as
//! its clients assemble them: by `index` (and type), `reasoning.text`'s text and signature
//! joined, `reasoning.summary`'s summary joined, `reasoning.encrypted`'s data kept whole (the
//! last given), `id` and `format` as first given. The result is the JSON array OpenRouter
//! takes back on the assistant message ("preserving reasoning blocks"), kept with the message
//! (conversation.Message.reasoning_details) and sent back with its tool calls to the same
//! model (providers/openai/request.zig).
const std = @import("std");
const Allocator = std.mem.Allocator;

/// One element of a delta's `reasoning_details`, as the general decoding reads it (strings
/// decoded; null when absent or null).
pub const Piece = struct {
    type: ?[]const u8 = null,
    text: ?[]const u8 = null,
    signature: ?[]const u8 = null,
    summary: ?[]const u8 = null,
    data: ?[]const u8 = null,
    id: ?[]const u8 = null,
    format: ?[]const u8 = null,
    index: ?u32 = null,
};

/// A member of an element: its bytes, and whether any piece gave it (given as "" is given).
const Member = struct {
    bytes: std.ArrayList(u8) = .empty,
    given: bool = false,

    fn join(m: *Member, gpa: Allocator, value: ?[]const u8) Allocator.Error!void {
        const v = value orelse return;
        try m.bytes.appendSlice(gpa, v);
        m.given = true;
    }

    fn replace(m: *Member, gpa: Allocator, value: ?[]const u8) Allocator.Error!void {
        const v = value orelse return;
        if (m.given and v.len == 0) return; // an empty piece does not undo one given
        m.bytes.clearRetainingCapacity();
        try m.join(gpa, v);
    }

    fn first(m: *Member, gpa: Allocator, value: ?[]const u8) Allocator.Error!void {
        if (m.given and m.bytes.items.len > 0) return;
        try m.replace(gpa, value);
    }

    fn clear(m: *Member) void {
        m.bytes.clearRetainingCapacity();
        m.given = false;
    }
};

const Element = struct {
    index: ?u32 = null,
    type: std.ArrayList(u8) = .empty,
    /// In the order written (OpenRouter's own): summary, text, signature, data, id, format.
    members: [6]Member = [_]Member{.{}} ** 6,

    const names = [_][]const u8{ "summary", "text", "signature", "data", "id", "format" };
};

/// The elements of one message, assembled. Buffers are kept across messages (reset).
pub const Details = struct {
    elements: std.ArrayList(Element) = .empty,
    /// Only the first `count` elements are in use.
    count: usize = 0,
    /// What `json` wrote last.
    written: std.ArrayList(u8) = .empty,

    pub fn deinit(d: *Details, gpa: Allocator) void {
        for (d.elements.items) |*e| {
            e.type.deinit(gpa);
            for (&e.members) |*m| m.bytes.deinit(gpa);
        }
        d.elements.deinit(gpa);
        d.written.deinit(gpa);
    }

    pub fn reset(d: *Details) void {
        d.count = 0;
        d.written.clearRetainingCapacity();
    }

    /// Adds a delta's piece: to the element of its index and type, or as a new element. A
    /// piece without a type is no element OpenRouter would take back: it is left out.
    pub fn add(d: *Details, gpa: Allocator, piece: Piece) Allocator.Error!void {
        const kind = piece.type orelse return;
        const e = d.find(piece.index, kind) orelse try d.start(gpa, piece.index, kind);
        try e.members[0].join(gpa, piece.summary);
        try e.members[1].join(gpa, piece.text);
        try e.members[2].join(gpa, piece.signature);
        try e.members[3].replace(gpa, piece.data);
        try e.members[4].first(gpa, piece.id);
        try e.members[5].first(gpa, piece.format);
    }

    fn find(d: *Details, index: ?u32, kind: []const u8) ?*Element {
        const i = index orelse return null; // without an index, each piece is its own
        for (d.elements.items[0..d.count]) |*e| {
            if (e.index != null and e.index.? == i and std.mem.eql(u8, e.type.items, kind)) return e;
        }
        return null;
    }

    fn start(d: *Details, gpa: Allocator, index: ?u32, kind: []const u8) Allocator.Error!*Element {
        if (d.count == d.elements.items.len) try d.elements.append(gpa, .{});
        const e = &d.elements.items[d.count];
        d.count += 1;
        e.index = index;
        e.type.clearRetainingCapacity();
        try e.type.appendSlice(gpa, kind);
        for (&e.members) |*m| m.clear();
        return e;
    }

    /// The elements as a compact JSON array, in the order they started, or "" for none. The
    /// bytes are the Details' own until the next call or reset.
    pub fn json(d: *Details, gpa: Allocator) Allocator.Error![]const u8 {
        d.written.clearRetainingCapacity();
        if (d.count == 0) return "";
        var out: std.Io.Writer.Allocating = .fromArrayList(gpa, &d.written);
        defer d.written = out.toArrayList();
        write(d.elements.items[0..d.count], &out.writer) catch return error.OutOfMemory;
        return out.written();
    }

    fn write(elements: []const Element, w: *std.Io.Writer) std.Io.Writer.Error!void {
        var s: std.json.Stringify = .{ .writer = w };
        try s.beginArray();
        for (elements) |e| {
            try s.beginObject();
            try s.objectField("type");
            try s.write(e.type.items);
            for (e.members, Element.names) |m, name| if (m.given) {
                try s.objectField(name);
                try s.write(m.bytes.items);
            };
            if (e.index) |i| {
                try s.objectField("index");
                try s.write(i);
            }
            try s.endObject();
        }
        try s.endArray();
    }
};

test "pieces are merged by index and type: text and signature joined, encrypted data whole" {
    const gpa = std.testing.allocator;
    var d: Details = .{};
    defer d.deinit(gpa);
    const f = "anthropic-claude-v1";
    try d.add(gpa, .{ .type = "reasoning.text", .text = "", .signature = "", .format = f, .index = 0 });
    try d.add(gpa, .{ .type = "reasoning.text", .text = "The \"user\"", .format = f, .index = 0 });
    try d.add(gpa, .{ .type = "reasoning.text", .text = " asks.", .format = f, .index = 0 });
    try d.add(gpa, .{ .type = "reasoning.text", .signature = "Eq0K", .format = f, .index = 0 });
    try d.add(gpa, .{ .type = "reasoning.summary", .summary = "Sum", .index = 1 });
    try d.add(gpa, .{ .type = "reasoning.summary", .summary = "med.", .index = 1 });
    try d.add(gpa, .{ .type = "reasoning.encrypted", .data = "", .id = "rs_1", .format = "openai-responses-v1", .index = 2 });
    try d.add(gpa, .{ .type = "reasoning.encrypted", .data = "gAAAA==", .id = "rs_2", .index = 2 });
    try d.add(gpa, .{ .text = "no type: left out" });
    try std.testing.expectEqualStrings(
        "[{\"type\":\"reasoning.text\",\"text\":\"The \\\"user\\\" asks.\",\"signature\":\"Eq0K\",\"format\":\"anthropic-claude-v1\",\"index\":0}," ++
            "{\"type\":\"reasoning.summary\",\"summary\":\"Summed.\",\"index\":1}," ++
            "{\"type\":\"reasoning.encrypted\",\"data\":\"gAAAA==\",\"id\":\"rs_1\",\"format\":\"openai-responses-v1\",\"index\":2}]",
        try d.json(gpa),
    );
    d.reset();
    try std.testing.expectEqualStrings("", try d.json(gpa));
    // Buffers kept: the next message starts clean.
    try d.add(gpa, .{ .type = "reasoning.encrypted", .data = "x", .index = 0 });
    try std.testing.expectEqualStrings("[{\"type\":\"reasoning.encrypted\",\"data\":\"x\",\"index\":0}]", try d.json(gpa));
}

test "an element of another type at the same index, or without an index, is its own" {
    const gpa = std.testing.allocator;
    var d: Details = .{};
    defer d.deinit(gpa);
    try d.add(gpa, .{ .type = "reasoning.text", .text = "a", .index = 0 });
    try d.add(gpa, .{ .type = "reasoning.encrypted", .data = "E", .index = 0 });
    try d.add(gpa, .{ .type = "reasoning.summary", .summary = "s" });
    try d.add(gpa, .{ .type = "reasoning.summary", .summary = "t" });
    try std.testing.expectEqualStrings(
        "[{\"type\":\"reasoning.text\",\"text\":\"a\",\"index\":0},{\"type\":\"reasoning.encrypted\",\"data\":\"E\",\"index\":0}," ++
            "{\"type\":\"reasoning.summary\",\"summary\":\"s\"},{\"type\":\"reasoning.summary\",\"summary\":\"t\"}]",
        try d.json(gpa),
    );
}
