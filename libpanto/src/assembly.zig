//! The assistant message being assembled from a provider's stream, and the queue of events
//! it produces. Both providers' decoders drive it, so both speak one event vocabulary.
//! Buffers are kept between messages: a warmed-up assembly allocates nothing per event.
const std = @import("std");
const Allocator = std.mem.Allocator;
const ev = @import("event.zig");
const Conversation = @import("conversation.zig");
const ReasoningDetails = @import("reasoning_details.zig").Details;

pub const Block = struct {
    /// The provider's own index for the block (Anthropic `index`, or a decoder's choice).
    provider_index: u32,
    /// Its place in the message, the index its events carry (kept, not computed from its
    /// address: a division for every delta).
    index: u32 = 0,
    kind: ev.BlockKind,
    text: std.ArrayList(u8) = .empty,
    /// tool_call blocks: the call's id and the tool's name (thinking: the name an
    /// OpenAI-compatible server gave its reasoning, see conversation.Block.name).
    id: std.ArrayList(u8) = .empty,
    name: std.ArrayList(u8) = .empty,
    /// thinking blocks, and text and tool_call blocks of a provider that signs them
    /// (Gemini): the provider's signature.
    signature: std.ArrayList(u8) = .empty,
    /// A server block: its JSON object as the provider started it;
    /// `name` is its type, `text` what its deltas streamed (a server_tool_use's input), the
    /// decoder fills it in when the block stops (providers/anthropic/decode.zig).
    json: std.ArrayList(u8) = .empty,
    /// text blocks: their citations, a JSON array of the citation objects as received (given
    /// where the block starts, or one by one in citations_delta), or empty for none.
    citations: std.ArrayList(u8) = .empty,
    open: bool = true,

    /// Whether this is a block panto keeps as the provider sent it (conversation `server_block`).
    pub fn isServer(b: *const Block) bool {
        return b.kind == .server_block;
    }
};

/// A block that started while a block that may still grow was open (an OpenAI tool call
/// stays open until the message's finish: servers interleave the arguments of parallel
/// calls). Its pieces wait here, and it is streamed whole after the open blocks complete, so
/// that blocks never interleave in the events.
pub const Held = struct {
    provider_index: u32,
    kind: ev.BlockKind,
    /// tool_call blocks: the call's id and the tool's name, from the first piece that gave them
    /// (thinking: its wire name).
    id: std.ArrayList(u8) = .empty,
    name: std.ArrayList(u8) = .empty,
    /// The non-empty fragments, joined, and where each ends: one ContentDelta each.
    text: std.ArrayList(u8) = .empty,
    ends: std.ArrayList(usize) = .empty,

    fn deinit(h: *Held, gpa: Allocator) void {
        h.id.deinit(gpa);
        h.name.deinit(gpa);
        h.text.deinit(gpa);
        h.ends.deinit(gpa);
    }
};

/// The provider and model a message was asked of.
pub const Origin = struct { provider: []const u8, model: []const u8 };

pub const Assembly = struct {
    gpa: Allocator,
    id: std.ArrayList(u8) = .empty,
    model: std.ArrayList(u8) = .empty,
    provider_stop_reason: std.ArrayList(u8) = .empty,
    /// The container Anthropic's code execution ran in (message_delta's container.id), or "".
    container: std.ArrayList(u8) = .empty,
    /// OpenRouter's reasoning_details of the message, as its deltas gave them.
    reasoning_details: ReasoningDetails = .{},
    usage: ev.Usage = .{},
    /// The usage reported when the message's content began (Anthropic's message_start; OpenAI
    /// reports usage only at the end): what a canceled message keeps. The later usage may come
    /// from events read ahead that the user never saw, so it would differ with how a binding
    /// reads.
    content_usage: ev.Usage = .{},
    /// A normalized stop reason the provider's own value does not say (an OpenAI refusal
    /// ends with "stop").
    stop_override: ?ev.StopReason = null,
    started: bool = false,
    /// Blocks in the order they started; only the first `block_count` are in use.
    blocks: std.ArrayList(Block) = .empty,
    block_count: usize = 0,
    queue: std.ArrayList(ev.Event) = .empty,
    queue_head: usize = 0,
    /// Blocks held (see Held), in the order they started; only the first `held_count` are
    /// in use, and those before `held_released` were streamed already (their text stays:
    /// queued events point into it).
    held: std.ArrayList(Held) = .empty,
    held_count: usize = 0,
    held_released: usize = 0,

    pub fn init(gpa: Allocator) Assembly {
        return .{ .gpa = gpa };
    }

    pub fn deinit(a: *Assembly) void {
        a.id.deinit(a.gpa);
        a.model.deinit(a.gpa);
        a.provider_stop_reason.deinit(a.gpa);
        a.container.deinit(a.gpa);
        a.reasoning_details.deinit(a.gpa);
        for (a.blocks.items) |*b| {
            b.text.deinit(a.gpa);
            b.id.deinit(a.gpa);
            b.name.deinit(a.gpa);
            b.signature.deinit(a.gpa);
            b.json.deinit(a.gpa);
            b.citations.deinit(a.gpa);
        }
        a.blocks.deinit(a.gpa);
        a.queue.deinit(a.gpa);
        for (a.held.items) |*h| h.deinit(a.gpa);
        a.held.deinit(a.gpa);
    }

    /// Forgets the message, keeping the buffers' capacity.
    pub fn reset(a: *Assembly) void {
        a.id.clearRetainingCapacity();
        a.model.clearRetainingCapacity();
        a.provider_stop_reason.clearRetainingCapacity();
        a.container.clearRetainingCapacity();
        a.reasoning_details.reset();
        a.usage = .{};
        a.content_usage = .{};
        a.stop_override = null;
        a.started = false;
        a.block_count = 0;
        a.queue.clearRetainingCapacity();
        a.queue_head = 0;
        a.held_count = 0;
        a.held_released = 0;
    }

    /// The next queued event, if any.
    pub inline fn pop(a: *Assembly) ?ev.Event {
        if (a.queue_head == a.queue.items.len) return null;
        const e = a.queue.items[a.queue_head];
        a.queue_head += 1;
        if (a.queue_head == a.queue.items.len) {
            // Not clearRetainingCapacity: its memset (safe builds) would cost a call per event.
            a.queue.items.len = 0;
            a.queue_head = 0;
        }
        return e;
    }

    /// The next queued event, left in the queue.
    pub fn peek(a: *const Assembly) ?ev.Event {
        if (a.queue_head == a.queue.items.len) return null;
        return a.queue.items[a.queue_head];
    }

    pub fn push(a: *Assembly, e: ev.Event) Allocator.Error!void {
        // The queue has room nearly always: no call to grow it.
        if (a.queue.items.len < a.queue.capacity) return a.queue.appendAssumeCapacity(e);
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
        if (a.block_count == 0) a.content_usage = a.usage;
        b.provider_index = provider_index;
        b.index = @intCast(a.block_count);
        b.kind = kind;
        b.open = true;
        b.text.clearRetainingCapacity();
        b.id.clearRetainingCapacity();
        b.name.clearRetainingCapacity();
        b.signature.clearRetainingCapacity();
        b.json.clearRetainingCapacity();
        b.citations.clearRetainingCapacity();
        a.block_count += 1;
        try a.push(.{ .block_start = .{ .index = a.indexOf(b), .kind = kind } });
        return b;
    }

    /// Starts a tool_call block and announces the tool the model named.
    pub fn startToolBlock(a: *Assembly, provider_index: u32, id: []const u8, name: []const u8) Allocator.Error!*Block {
        const b = try a.startBlock(provider_index, .tool_call);
        try b.id.appendSlice(a.gpa, id);
        try b.name.appendSlice(a.gpa, name);
        try a.push(.{ .tool_details = .{ .index = a.indexOf(b), .id = b.id.items, .name = b.name.items } });
        return b;
    }

    /// Starts a server block (see Block.json): `json` is the block as the provider started it.
    pub fn startServerBlock(a: *Assembly, provider_index: u32, type_name: []const u8, json: []const u8) Allocator.Error!*Block {
        const b = try a.startBlock(provider_index, .server_block);
        try b.name.appendSlice(a.gpa, type_name);
        try b.json.appendSlice(a.gpa, json);
        return b;
    }

    /// Adds a citation (a JSON object's bytes as received) to a text block's citations.
    pub fn appendCitation(a: *Assembly, b: *Block, citation: []const u8) Allocator.Error!void {
        const list = &b.citations;
        if (list.items.len == 0) {
            try list.append(a.gpa, '[');
        } else {
            list.items.len -= 1; // the closing ']'
            try list.append(a.gpa, ',');
        }
        try list.appendSlice(a.gpa, citation);
        try list.append(a.gpa, ']');
    }

    /// The blocks of the message so far, in order.
    pub fn blocksSoFar(a: *Assembly) []Block {
        return a.blocks.items[0..a.block_count];
    }

    /// The open block with this provider index, if any. (Inline: a call costs more than the
    /// search through a message's one or few blocks, done for every delta.)
    pub inline fn findOpen(a: *Assembly, provider_index: u32) ?*Block {
        for (a.blocks.items[0..a.block_count]) |*b| {
            if (b.open and b.provider_index == provider_index) return b;
        }
        return null;
    }

    /// Adds a fragment to a block. `fragment` must stay valid until the event is popped.
    pub fn appendDelta(a: *Assembly, b: *Block, fragment: []const u8) Allocator.Error!void {
        if (fragment.len == 0) return;
        try a.push(try a.delta(b, fragment));
    }

    /// Adds a non-empty fragment to a block and returns its event, not queued: for a decoder
    /// that hands it out at once (the caller sees that nothing is queued before it).
    pub inline fn delta(a: *Assembly, b: *Block, fragment: []const u8) Allocator.Error!ev.Event {
        const text = &b.text;
        if (text.capacity - text.items.len >= fragment.len) {
            copyShort(text.items.ptr[text.items.len..][0..fragment.len], fragment); // no call to grow it
            text.items.len += fragment.len;
        } else try text.appendSlice(a.gpa, fragment);
        return .{ .content_delta = .{ .index = a.indexOf(b), .kind = b.kind, .text = fragment } };
    }

    pub fn completeBlock(a: *Assembly, b: *Block) Allocator.Error!void {
        if (!b.open) return;
        b.open = false;
        // A tool that takes no arguments streams no input at all: its input is `{}`.
        if (b.kind == .tool_call and std.mem.trim(u8, b.text.items, " \t\r\n").len == 0) {
            b.text.clearRetainingCapacity();
            try b.text.appendSlice(a.gpa, "{}");
        }
        // A server block's event gives the block itself: its JSON (complete now) and its type.
        if (b.kind == .server_block) return a.push(.{ .block_complete = .{ .index = a.indexOf(b), .kind = b.kind, .text = b.json.items, .name = b.name.items } });
        try a.push(.{ .block_complete = .{ .index = a.indexOf(b), .kind = b.kind, .text = b.text.items, .citations = b.citations.items } });
    }

    /// Completes the open blocks, then streams the held ones, each whole.
    pub fn completeOpenBlocks(a: *Assembly) Allocator.Error!void {
        for (a.blocks.items[0..a.block_count]) |*b| try a.completeBlock(b);
        try a.releaseHeld();
    }

    /// The held block with this provider index, not yet streamed, if any.
    pub fn findHeld(a: *Assembly, provider_index: u32) ?*Held {
        for (a.held.items[a.held_released..a.held_count]) |*h| {
            if (h.provider_index == provider_index) return h;
        }
        return null;
    }

    /// Holds a new block (see Held) until the open blocks complete.
    pub fn hold(a: *Assembly, provider_index: u32, kind: ev.BlockKind) Allocator.Error!*Held {
        if (a.held_count == a.held.items.len) try a.held.append(a.gpa, .{ .provider_index = 0, .kind = .none });
        const h = &a.held.items[a.held_count];
        h.provider_index = provider_index;
        h.kind = kind;
        h.id.clearRetainingCapacity();
        h.name.clearRetainingCapacity();
        h.text.clearRetainingCapacity();
        h.ends.clearRetainingCapacity();
        a.held_count += 1;
        return h;
    }

    /// Adds a piece to a held block: a fragment (the empty one adds nothing), and for a tool
    /// call its id and name if they were not given yet.
    pub fn holdPiece(a: *Assembly, h: *Held, id: []const u8, name: []const u8, fragment: []const u8) Allocator.Error!void {
        if (h.id.items.len == 0) try h.id.appendSlice(a.gpa, id);
        if (h.name.items.len == 0) try h.name.appendSlice(a.gpa, name);
        if (fragment.len == 0) return;
        try h.text.appendSlice(a.gpa, fragment);
        try h.ends.append(a.gpa, h.text.items.len);
    }

    /// Streams the held blocks in the order they started, each as it would have streamed had
    /// its pieces come after the open blocks ended: start (and tool details), one delta per
    /// fragment, complete.
    fn releaseHeld(a: *Assembly) Allocator.Error!void {
        while (a.held_released < a.held_count) {
            // (held blocks do not move meanwhile: nothing is held while they are released)
            const h = &a.held.items[a.held_released];
            a.held_released += 1;
            const b = if (h.kind == .tool_call)
                try a.startToolBlock(h.provider_index, h.id.items, h.name.items)
            else
                try a.startBlock(h.provider_index, h.kind);
            if (h.kind == .thinking) try b.name.appendSlice(a.gpa, h.name.items);
            try b.text.appendSlice(a.gpa, h.text.items);
            var start: usize = 0;
            for (h.ends.items) |end| {
                // The fragment stays in the held block until the message is reset.
                try a.push(.{ .content_delta = .{ .index = b.index, .kind = b.kind, .text = h.text.items[start..end] } });
                start = end;
            }
            try a.completeBlock(b);
        }
    }

    pub fn setStopReason(a: *Assembly, raw: []const u8) Allocator.Error!void {
        a.provider_stop_reason.clearRetainingCapacity();
        try a.provider_stop_reason.appendSlice(a.gpa, raw);
    }

    /// Ends the message: the stream turns this into the end of the message or of the turn.
    pub fn completeMessage(a: *Assembly) Allocator.Error!void {
        try a.completeOpenBlocks();
        const raw = a.provider_stop_reason.items;
        try a.push(.{ .message_end = .{
            .stop_reason = a.stop_override orelse if (raw.len == 0) .none else ev.StopReason.fromProvider(raw),
            .provider_stop_reason = raw,
            .usage = a.usage,
        } });
    }

    /// Appends the assembled message to the conversation. `inputs` holds each tool call's
    /// normalized input, in block order; `meta` the message's stop reason, usage, and the
    /// provider and model that wrote it (a provider switch renders it by them).
    pub fn commit(a: *Assembly, conversation: *Conversation.Conversation, inputs: []const []const u8, meta: Conversation.Meta) Conversation.AppendError!void {
        var list: std.ArrayList(Conversation.Block) = .empty;
        defer list.deinit(a.gpa);
        var next_input: usize = 0;
        for (a.blocks.items[0..a.block_count]) |b| {
            const block: Conversation.Block = switch (b.kind) {
                .text, .none => .{ .kind = .text, .text = b.text.items, .signature = b.signature.items, .citations = b.citations.items },
                .server_block => .{ .kind = .server_block, .text = b.json.items, .name = b.name.items },
                .thinking => .{ .kind = .thinking, .text = b.text.items, .signature = b.signature.items, .name = b.name.items },
                .redacted_thinking => .{ .kind = .redacted_thinking, .text = b.text.items },
                .tool_call => blk: {
                    const input = inputs[next_input];
                    next_input += 1;
                    break :blk .{ .kind = .tool_call, .text = input, .id = b.id.items, .name = b.name.items, .signature = b.signature.items };
                },
            };
            try list.append(a.gpa, block);
        }
        // The providers refuse an assistant message without content: an empty answer is not kept.
        if (list.items.len == 0) return;
        var with = meta;
        if (with.container.len == 0) with.container = a.container.items;
        if (with.reasoning_details.len == 0) with.reasoning_details = try a.reasoning_details.json(a.gpa);
        try conversation.appendMessage(.assistant, list.items, with);
    }

    /// Keeps what arrived of a message that was canceled: its text and thinking (tool calls
    /// whose input may be cut are left out), with the stop reason `aborted` and the usage
    /// reported when its content began. `origin`: the provider and model that wrote it.
    pub fn commitPartial(a: *Assembly, conversation: *Conversation.Conversation, origin: Origin) Conversation.AppendError!void {
        var list: std.ArrayList(Conversation.Block) = .empty;
        defer list.deinit(a.gpa);
        for (a.blocks.items[0..a.block_count]) |b| switch (b.kind) {
            // A server block is left out, as a tool call is: a server tool's call without its
            // result is refused when sent back.
            .server_block => {},
            // Without its citations: they may point into a server block left out here.
            .text, .none => if (b.text.items.len > 0) try list.append(a.gpa, .{ .kind = .text, .text = b.text.items, .signature = b.signature.items }),
            // Unsigned thinking cannot be sent back: keep only finished blocks.
            .thinking => if (!b.open) try list.append(a.gpa, .{ .kind = .thinking, .text = b.text.items, .signature = b.signature.items, .name = b.name.items }),
            .redacted_thinking => try list.append(a.gpa, .{ .kind = .redacted_thinking, .text = b.text.items }),
            .tool_call => {},
        };
        if (list.items.len == 0) return; // nothing arrived: no (invalid) empty message
        try conversation.appendMessage(.assistant, list.items, .{ .stop_reason = .aborted, .provider = origin.provider, .model = origin.model, .usage = a.content_usage });
    }

    /// Takes back events of this message the user did not see, given latest first: decoded
    /// but never handed out (still queued), or delivered but given back unseen (a batch
    /// reader's unread tail, see Stream.unread), so that `commitPartial` keeps only what the
    /// user saw: their text leaves their blocks, blocks they started go, blocks they completed
    /// are open again. Only before committing a canceled message: decoding cannot go on after.
    pub fn forget(a: *Assembly, unseen: []const ev.Event) void {
        var i = unseen.len;
        while (i > 0) {
            i -= 1;
            switch (unseen[i]) {
                .content_delta => |d| if (d.index < a.block_count) {
                    const b = &a.blocks.items[d.index];
                    b.text.shrinkRetainingCapacity(b.text.items.len -| d.text.len);
                },
                .block_start => |s| a.block_count = @min(a.block_count, s.index),
                .block_complete => |c| if (c.index < a.block_count) {
                    a.blocks.items[c.index].open = true;
                },
                else => {}, // tool details: tool calls are not kept in a partial message
            }
        }
    }

    fn indexOf(_: *const Assembly, b: *const Block) u32 {
        return b.index; // (blocks never move within the message)
    }
};

/// `@memcpy`, inlined for the few bytes of a token (two overlapping loads and stores, the
/// way memcpy does short copies): a call to memcpy costs more than such a copy.
inline fn copyShort(dest: []u8, source: []const u8) void {
    const n = source.len;
    if (n >= 8 and n <= 16) {
        const head = std.mem.readInt(u64, source[0..8], .little);
        const tail = std.mem.readInt(u64, source[n - 8 ..][0..8], .little);
        std.mem.writeInt(u64, dest[0..8], head, .little);
        std.mem.writeInt(u64, dest[n - 8 ..][0..8], tail, .little);
    } else if (n >= 4 and n < 8) {
        const head = std.mem.readInt(u32, source[0..4], .little);
        const tail = std.mem.readInt(u32, source[n - 4 ..][0..4], .little);
        std.mem.writeInt(u32, dest[0..4], head, .little);
        std.mem.writeInt(u32, dest[n - 4 ..][0..4], tail, .little);
    } else if (n > 0 and n < 4) {
        dest[0] = source[0];
        dest[n / 2] = source[n / 2];
        dest[n - 1] = source[n - 1];
    } else @memcpy(dest, source);
}

test "copyShort copies every length, in place of @memcpy" {
    var source: [40]u8 = undefined;
    for (&source, 0..) |*c, i| c.* = @intCast(i + 1);
    for (0..source.len + 1) |n| {
        var dest: [42]u8 = @splat(0);
        copyShort(dest[1..][0..n], source[0..n]);
        try std.testing.expectEqualSlices(u8, source[0..n], dest[1..][0..n]);
        try std.testing.expectEqual(@as(u8, 0), dest[0]); // nothing outside
        try std.testing.expectEqual(@as(u8, 0), dest[n + 1]);
    }
}
