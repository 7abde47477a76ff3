//! The conversation an agent keeps across turns, in a provider-neutral shape. Each provider
//! module renders it into its own request format.
const std = @import("std");
const Allocator = std.mem.Allocator;

pub const Role = enum { user, assistant };

pub const BlockKind = enum { text, thinking, redacted_thinking, tool_call, tool_result };
const StopReason = @import("event.zig").StopReason;

pub const Block = struct {
    kind: BlockKind,
    /// text / thinking: the text; tool_call: the input JSON object; tool_result: the content.
    text: []const u8,
    /// tool_call and tool_result: the call's id.
    id: []const u8 = "",
    /// tool_call: the tool's name.
    name: []const u8 = "",
    /// tool_result: the tool failed.
    is_error: bool = false,
    /// thinking: the provider's signature, sent back with the block.
    signature: []const u8 = "",
};

pub const Message = struct {
    role: Role,
    blocks: []Block,
    /// Assistant messages: why the message ended (`aborted` for a canceled turn).
    stop_reason: StopReason = .none,
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
        try c.appendCopy(.user, &.{.{ .kind = .text, .text = text }});
    }

    /// Removes the last message (a user message whose turn could not even start).
    pub fn dropLast(c: *Conversation) void {
        const m = c.messages.pop() orelse return;
        freeMessage(c.gpa, m);
    }

    /// Appends a message, copying the blocks' strings.
    pub fn appendCopy(c: *Conversation, role: Role, blocks: []const Block) Allocator.Error!void {
        return c.appendMessage(role, blocks, .none);
    }

    pub fn appendMessage(c: *Conversation, role: Role, blocks: []const Block, stop_reason: StopReason) Allocator.Error!void {
        const owned = try c.gpa.alloc(Block, blocks.len);
        var filled: usize = 0;
        errdefer {
            for (owned[0..filled]) |b| freeBlock(c.gpa, b);
            c.gpa.free(owned);
        }
        for (blocks, 0..) |b, i| {
            owned[i] = try copyBlock(c.gpa, b);
            filled += 1;
        }
        try c.messages.append(c.gpa, .{ .role = role, .blocks = owned, .stop_reason = stop_reason });
    }

    /// Writes the conversation as `[{"role": ..., "content": [blocks]}]` (see panto.h).
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
                switch (b.kind) {
                    .text, .thinking, .redacted_thinking => {
                        try s.objectField("text");
                        try s.write(b.text);
                        if (b.signature.len > 0) {
                            try s.objectField("signature");
                            try s.write(b.signature);
                        }
                    },
                    .tool_call => {
                        try s.objectField("id");
                        try s.write(b.id);
                        try s.objectField("name");
                        try s.write(b.name);
                        try s.objectField("input");
                        try writeRawJson(&s, b.text);
                    },
                    .tool_result => {
                        try s.objectField("id");
                        try s.write(b.id);
                        try s.objectField("content");
                        try s.write(b.text);
                        try s.objectField("is_error");
                        try s.write(b.is_error);
                    },
                }
                try s.endObject();
            }
            try s.endArray();
            if (m.stop_reason != .none) {
                try s.objectField("stop_reason");
                try s.write(@tagName(m.stop_reason));
            }
            try s.endObject();
        }
        try s.endArray();
    }
};

/// Writes text that is already a JSON value (a tool input) as a value.
pub fn writeRawJson(s: *std.json.Stringify, json: []const u8) std.Io.Writer.Error!void {
    try s.beginWriteRaw();
    try s.writer.writeAll(json);
    s.endWriteRaw();
}

fn copyBlock(gpa: Allocator, b: Block) Allocator.Error!Block {
    const text = try gpa.dupe(u8, b.text);
    errdefer gpa.free(text);
    const id = try gpa.dupe(u8, b.id);
    errdefer gpa.free(id);
    const name = try gpa.dupe(u8, b.name);
    errdefer gpa.free(name);
    return .{ .kind = b.kind, .text = text, .id = id, .name = name, .is_error = b.is_error, .signature = try gpa.dupe(u8, b.signature) };
}

fn freeBlock(gpa: Allocator, b: Block) void {
    gpa.free(b.text);
    gpa.free(b.id);
    gpa.free(b.name);
    gpa.free(b.signature);
}

fn freeMessage(gpa: Allocator, m: Message) void {
    for (m.blocks) |b| freeBlock(gpa, b);
    gpa.free(m.blocks);
}
