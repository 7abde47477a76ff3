//! The conversation an agent keeps across turns, in a provider-neutral shape. Each provider
//! module renders it into its own request format.
const std = @import("std");
const Allocator = std.mem.Allocator;
const BlockKind = @import("event.zig").BlockKind;

pub const Role = enum { user, assistant };

pub const Block = struct {
    kind: BlockKind,
    text: []const u8,
};

pub const Message = struct {
    role: Role,
    blocks: []Block,
};

pub const Conversation = struct {
    gpa: Allocator,
    messages: std.ArrayList(Message) = .empty,

    pub fn init(gpa: Allocator) Conversation {
        return .{ .gpa = gpa };
    }

    pub fn deinit(c: *Conversation) void {
        for (c.messages.items) |m| freeMessage(c.gpa, m);
        c.messages.deinit(c.gpa);
    }

    pub fn appendUserText(c: *Conversation, text: []const u8) Allocator.Error!void {
        const blocks = try c.gpa.alloc(Block, 1);
        errdefer c.gpa.free(blocks);
        blocks[0] = .{ .kind = .text, .text = try c.gpa.dupe(u8, text) };
        errdefer c.gpa.free(blocks[0].text);
        try c.messages.append(c.gpa, .{ .role = .user, .blocks = blocks });
    }

    /// Removes the last message (a user message whose turn could not even start).
    pub fn dropLast(c: *Conversation) void {
        const m = c.messages.pop() orelse return;
        freeMessage(c.gpa, m);
    }

    /// Appends a message, copying the blocks' text.
    pub fn appendCopy(c: *Conversation, role: Role, blocks: []const Block) Allocator.Error!void {
        const owned = try c.gpa.alloc(Block, blocks.len);
        var filled: usize = 0;
        errdefer {
            for (owned[0..filled]) |b| c.gpa.free(b.text);
            c.gpa.free(owned);
        }
        for (blocks, 0..) |b, i| {
            owned[i] = .{ .kind = b.kind, .text = try c.gpa.dupe(u8, b.text) };
            filled += 1;
        }
        try c.messages.append(c.gpa, .{ .role = role, .blocks = owned });
    }

    /// Writes the conversation as `[{"role": ..., "content": [{"type": ..., "text": ...}]}]`.
    pub fn writeJson(c: *const Conversation, w: *std.Io.Writer) std.Io.Writer.Error!void {
        var s: std.json.Stringify = .{ .writer = w };
        try s.beginArray();
        for (c.messages.items) |m| {
            try s.beginObject();
            try s.objectField("role");
            try s.write(@tagName(m.role));
            try s.objectField("content");
            try s.beginArray();
            for (m.blocks) |b| {
                try s.beginObject();
                try s.objectField("type");
                try s.write(@tagName(b.kind));
                try s.objectField("text");
                try s.write(b.text);
                try s.endObject();
            }
            try s.endArray();
            try s.endObject();
        }
        try s.endArray();
    }
};

fn freeMessage(gpa: Allocator, m: Message) void {
    for (m.blocks) |b| gpa.free(b.text);
    gpa.free(m.blocks);
}
