//! The assistant message being assembled from a provider's stream, and the queue of events
//! it produces. Both providers' decoders drive it, so both speak one event vocabulary.
//! Buffers are kept between messages: a warmed-up assembly allocates nothing per event.
const std = @import("std");
const Allocator = std.mem.Allocator;
const ev = @import("event.zig");
const Conversation = @import("conversation.zig");

pub const Block = struct {
    /// The provider's own index for the block (Anthropic `index`, or a decoder's choice).
    provider_index: u32,
    kind: ev.BlockKind,
    text: std.ArrayList(u8) = .empty,
    open: bool = true,
};

pub const Assembly = struct {
    gpa: Allocator,
    id: std.ArrayList(u8) = .empty,
    model: std.ArrayList(u8) = .empty,
    provider_stop_reason: std.ArrayList(u8) = .empty,
    usage: ev.Usage = .{},
    started: bool = false,
    /// Blocks in the order they started; only the first `block_count` are in use.
    blocks: std.ArrayList(Block) = .empty,
    block_count: usize = 0,
    queue: std.ArrayList(ev.Event) = .empty,
    queue_head: usize = 0,

    pub fn init(gpa: Allocator) Assembly {
        return .{ .gpa = gpa };
    }

    pub fn deinit(a: *Assembly) void {
        a.id.deinit(a.gpa);
        a.model.deinit(a.gpa);
        a.provider_stop_reason.deinit(a.gpa);
        for (a.blocks.items) |*b| b.text.deinit(a.gpa);
        a.blocks.deinit(a.gpa);
        a.queue.deinit(a.gpa);
    }

    /// Forgets the message, keeping the buffers' capacity.
    pub fn reset(a: *Assembly) void {
        a.id.clearRetainingCapacity();
        a.model.clearRetainingCapacity();
        a.provider_stop_reason.clearRetainingCapacity();
        a.usage = .{};
        a.started = false;
        a.block_count = 0;
        a.queue.clearRetainingCapacity();
        a.queue_head = 0;
    }

    /// The next queued event, if any.
    pub fn pop(a: *Assembly) ?ev.Event {
        if (a.queue_head == a.queue.items.len) return null;
        const e = a.queue.items[a.queue_head];
        a.queue_head += 1;
        if (a.queue_head == a.queue.items.len) {
            a.queue.clearRetainingCapacity();
            a.queue_head = 0;
        }
        return e;
    }

    fn push(a: *Assembly, e: ev.Event) Allocator.Error!void {
        try a.queue.append(a.gpa, e);
    }

    pub fn startMessage(a: *Assembly, id: []const u8, model: []const u8) Allocator.Error!void {
        a.started = true;
        try a.id.appendSlice(a.gpa, id);
        try a.model.appendSlice(a.gpa, model);
        try a.push(.{ .message_start = .{ .id = a.id.items, .model = a.model.items } });
    }

    pub fn startBlock(a: *Assembly, provider_index: u32, kind: ev.BlockKind) Allocator.Error!*Block {
        if (a.block_count == a.blocks.items.len) try a.blocks.append(a.gpa, .{ .provider_index = 0, .kind = .none });
        const b = &a.blocks.items[a.block_count];
        b.provider_index = provider_index;
        b.kind = kind;
        b.open = true;
        b.text.clearRetainingCapacity();
        a.block_count += 1;
        try a.push(.{ .block_start = .{ .index = a.indexOf(b), .kind = kind } });
        return b;
    }

    /// The open block with this provider index, if any.
    pub fn findOpen(a: *Assembly, provider_index: u32) ?*Block {
        for (a.blocks.items[0..a.block_count]) |*b| {
            if (b.open and b.provider_index == provider_index) return b;
        }
        return null;
    }

    /// Adds a fragment to a block. `fragment` must stay valid until the event is popped.
    pub fn appendDelta(a: *Assembly, b: *Block, fragment: []const u8) Allocator.Error!void {
        if (fragment.len == 0) return;
        try b.text.appendSlice(a.gpa, fragment);
        try a.push(.{ .content_delta = .{ .index = a.indexOf(b), .kind = b.kind, .text = fragment } });
    }

    pub fn completeBlock(a: *Assembly, b: *Block) Allocator.Error!void {
        if (!b.open) return;
        b.open = false;
        try a.push(.{ .block_complete = .{ .index = a.indexOf(b), .kind = b.kind, .text = b.text.items } });
    }

    pub fn completeOpenBlocks(a: *Assembly) Allocator.Error!void {
        for (a.blocks.items[0..a.block_count]) |*b| try a.completeBlock(b);
    }

    pub fn setStopReason(a: *Assembly, raw: []const u8) Allocator.Error!void {
        a.provider_stop_reason.clearRetainingCapacity();
        try a.provider_stop_reason.appendSlice(a.gpa, raw);
    }

    pub fn completeMessage(a: *Assembly) Allocator.Error!void {
        try a.completeOpenBlocks();
        const raw = a.provider_stop_reason.items;
        try a.push(.{ .message_complete = .{
            .stop_reason = if (raw.len == 0) .none else ev.StopReason.fromProvider(raw),
            .provider_stop_reason = raw,
            .usage = a.usage,
        } });
    }

    /// Appends the assembled message to the conversation (text and thinking blocks).
    pub fn commit(a: *Assembly, conversation: *Conversation.Conversation) Allocator.Error!void {
        var blocks: [64]Conversation.Block = undefined;
        var list: std.ArrayList(Conversation.Block) = .initBuffer(&blocks);
        var heap: std.ArrayList(Conversation.Block) = .empty;
        defer heap.deinit(a.gpa);
        for (a.blocks.items[0..a.block_count]) |b| {
            const block: Conversation.Block = .{ .kind = b.kind, .text = b.text.items };
            if (list.items.len < blocks.len) list.appendAssumeCapacity(block) else try heap.append(a.gpa, block);
        }
        if (heap.items.len > 0) {
            try heap.insertSlice(a.gpa, 0, list.items);
            return conversation.appendCopy(.assistant, heap.items);
        }
        try conversation.appendCopy(.assistant, list.items);
    }

    fn indexOf(a: *const Assembly, b: *const Block) u32 {
        return @intCast(b - a.blocks.items.ptr);
    }
};
