//! A message as one JSON object, for session entries. A thin stand-in until the export
//! format's own writer and parser (conversation_json.zig) arrive: it writes what
//! Conversation.writeJson writes for one message and reads it back.
const std = @import("std");
const Allocator = std.mem.Allocator;
const conversation = @import("../conversation.zig");
const Message = conversation.Message;
const Block = conversation.Block;

pub fn write(w: *std.Io.Writer, m: *const Message) std.Io.Writer.Error!void {
    var one: conversation.Conversation = .{ .gpa = undefined };
    one.messages.items = @constCast(m)[0..1];
    // writeJson writes "[" M "]": drop the brackets.
    var tmp: std.Io.Writer.Allocating = .init(std.heap.page_allocator);
    defer tmp.deinit();
    one.writeJson(&tmp.writer) catch return error.WriteFailed;
    const text = tmp.written();
    try w.writeAll(text[1 .. text.len - 1]);
}

pub const ParseError = error{ OutOfMemory, Invalid };

/// Reads one message object (as `write` writes it); strings owned by `gpa`.
pub fn parse(gpa: Allocator, text: []const u8) ParseError!Message {
    var arena: std.heap.ArenaAllocator = .init(gpa);
    defer arena.deinit();
    const v = std.json.parseFromSliceLeaky(std.json.Value, arena.allocator(), text, .{}) catch |err| switch (err) {
        error.OutOfMemory => return error.OutOfMemory,
        else => return error.Invalid,
    };
    if (v != .object) return error.Invalid;
    const role_v = v.object.get("role") orelse return error.Invalid;
    if (role_v != .string) return error.Invalid;
    const role = std.meta.stringToEnum(conversation.Role, role_v.string) orelse return error.Invalid;
    const content = v.object.get("content") orelse return error.Invalid;
    if (content != .array) return error.Invalid;
    var blocks: std.ArrayList(Block) = .empty;
    defer blocks.deinit(arena.allocator());
    for (content.array.items) |b| try blocks.append(arena.allocator(), try parseBlock(arena.allocator(), b));
    var stop: @import("../event.zig").StopReason = .none;
    if (v.object.get("stop_reason")) |s| {
        if (s != .string) return error.Invalid;
        stop = std.meta.stringToEnum(@TypeOf(stop), s.string) orelse return error.Invalid;
    }
    return .{ .role = role, .blocks = try conversation.copyBlocks(gpa, blocks.items), .stop_reason = stop, .provider = try gpa.dupe(u8, ""), .model = try gpa.dupe(u8, "") };
}

fn parseBlock(arena: Allocator, v: std.json.Value) ParseError!Block {
    if (v != .object) return error.Invalid;
    const kind = std.meta.stringToEnum(conversation.BlockKind, try str(v, "type")) orelse return error.Invalid;
    return switch (kind) {
        .text, .thinking, .redacted_thinking => .{ .kind = kind, .text = try str(v, "text"), .signature = optStr(v, "signature") },
        .tool_call => .{ .kind = kind, .id = try str(v, "id"), .name = try str(v, "name"), .text = blk: {
            var out: std.Io.Writer.Allocating = .init(arena);
            std.json.Stringify.value(v.object.get("input") orelse return error.Invalid, .{}, &out.writer) catch return error.OutOfMemory;
            break :blk out.written();
        } },
        .tool_result => blk: {
            const c = v.object.get("content") orelse return error.Invalid;
            const is_error = if (v.object.get("is_error")) |e| e == .bool and e.bool else false;
            if (c == .string) break :blk .{ .kind = kind, .id = try str(v, "id"), .text = c.string, .is_error = is_error };
            if (c != .array) return error.Invalid;
            const parts = try arena.alloc(Block, c.array.items.len);
            for (c.array.items, parts) |p, *o| o.* = try parseBlock(arena, p);
            break :blk .{ .kind = kind, .id = try str(v, "id"), .text = "", .parts = parts, .is_error = is_error };
        },
        .image, .document => .{ .kind = kind, .media_type = try str(v, "media_type"), .text = try str(v, "data"), .name = optStr(v, "name") },
    };
}

fn str(v: std.json.Value, key: []const u8) ParseError![]const u8 {
    const s = v.object.get(key) orelse return error.Invalid;
    return if (s == .string) s.string else error.Invalid;
}

fn optStr(v: std.json.Value, key: []const u8) []const u8 {
    const s = v.object.get(key) orelse return "";
    return if (s == .string) s.string else "";
}
